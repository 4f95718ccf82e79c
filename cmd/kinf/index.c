#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "http.h"
#include "indexfuncs.h"
#include "json.h"
#include "kindcols.h"
#include "list.h"
#include "selector.h"
#include "session.h"
#include "table.h"
#include "toyaml.h"
#include "urlquery.h"

static const char index_usage[] =
	"Usage: kinf index RESOURCE[,RESOURCE...] --by INDEX[=VALUE]... [OPTIONS]\n"
	"       kinf index RESOURCE[,RESOURCE...] --values INDEX [OPTIONS]\n"
	"\n"
	"Sync an informer's cache and answer questions from its indexes, in\n"
	"time proportional to the answer. Several resources, namespaces (-n a,b)\n"
	"and contexts (--context a,b) run an informer each and the answer covers\n"
	"them all: a table per type, as kubectl get. Several --by are ANDed. Without\n"
	"--watch, --by on a label, node, namespace or phase is also sent to the\n"
	"server as a selector, so only the objects the answer needs are listed.\n"
	"Indexes: namespace, node (spec.nodeName), owner (KIND/NAME of an\n"
	"ownerReference), phase (status.phase), any label key (or label:KEY),\n"
	"field:PATH (spec.containers[*].image), or a name from --index. With\n"
	"--server naming a kinf serve (unix:PATH, unix:, tcp:HOST:PORT) or\n"
	"KINF_SERVER, serve answers from its own indexes instead.\n"
	"\n"
	"Examples:\n"
	"  kinf index pods --by app=web\n"
	"  kinf index pods -A --by node=node-1 --by phase=Running -o name\n"
	"  kinf index pods -A --by owner=ReplicaSet/web-7d9f --keys\n"
	"  kinf index pods -A --values node\n"
	"  kinf index pods --index sa=spec.serviceAccountName --by sa=default\n"
	"  kinf index pods --by app=web --watch\n"
	"  kinf index pods -A --values node --server unix:\n"
	"  kinf index pods,deploy -A --by app=web\n"
	"\n"
	"Index options:\n"
	"      --by INDEX[=VALUE]         objects whose INDEX has VALUE (no VALUE: any value)\n"
	"      --index NAME=PATH          define a named index over a field path\n"
	"      --keys                     print the matching keys only\n"
	"      --values INDEX             print INDEX's values with their counts,\n"
	"                                 highest first (equal counts by value)\n"
	"      --no-pushdown              list every object, filter only in kinf\n"
	"      --watch                    keep running; print + (starts matching),\n"
	"                                 - (stops matching or deleted), ~ (a match changed)\n"
	CLI_TABLE_USAGE
	"\n";

enum {
	OPT_BY = OPT_CMD_FIRST,
	OPT_INDEX,
	OPT_KEYS,
	OPT_VALUES,
	OPT_IWATCH,
	OPT_NO_PUSHDOWN,
};

static const struct option index_options[] = {
	CLI_COMMON_OPTIONS,
	SESSION_OPTIONS,
	CLI_TABLE_OPTIONS,
	{ "by", required_argument, NULL, OPT_BY },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "keys", no_argument, NULL, OPT_KEYS },
	{ "values", required_argument, NULL, OPT_VALUES },
	{ "watch", no_argument, NULL, OPT_IWATCH },
	{ "no-pushdown", no_argument, NULL, OPT_NO_PUSHDOWN },
	{ NULL, 0, NULL, 0 },
};

struct criterion {
	struct kinf_index_spec spec;
	char *value;		/* NULL: any value (label presence) */
	size_t count;
};

struct query {
	struct cli cli;
	struct session_opts so;
	struct session *session;
	struct criterion *by;
	size_t n_by;
	struct kinf_strv custom_names;
	struct kinf_strv custom_paths;
	const char *values_index;
	bool keys;
	bool watch;
	bool no_pushdown;
	bool help;			/* -h: print the usage, nothing else */
	struct kinf_strv by_args;	/* --by as given */
	const char *types;		/* RESOURCE[,RESOURCE...] */
	const struct kinf_kindcols *kindcols;	/* the current table's kind's columns */
	struct kinf_buf line;
};

/* 1, 0, or -KINF_ENOMEM (kinf_index_spec_match). */
static int matches(struct query *q, const struct kinf_object *obj) {
	if (!obj) {
		return 0;
	}
	for (size_t i = 0; i < q->n_by; i++) {
		int m = kinf_index_spec_match(&q->by[i].spec, q->by[i].value, obj);
		if (m <= 0) {
			return m;
		}
	}
	return 1;
}

static void append_req(struct kinf_buf *b, const char *fmt, const char *x, const char *y) {
	if (b->len) {
		kinf_buf_putc(b, ',');
	}
	kinf_buf_putf(b, fmt, x, y);
}

/*
 * The --by criteria the server can filter on, as selectors: a label (key=value,
 * or the key alone for presence) as a labelSelector; node, phase and
 * namespace as the fieldSelectors the apiserver supports for the kind (pods:
 * spec.nodeName, status.phase; namespaces: status.phase; every namespaced
 * kind: metadata.namespace). The server then returns a superset of the
 * answer (kinf still applies every criterion to what it lists), so the
 * answer is the same. A value a selector cannot carry is not sent.
 */
static void pushdown(const struct kinf_resource *res, struct kinf_buf *labels,
		struct kinf_buf *fields, void *userdata) {
	struct query *q = userdata;
	bool core = !res->group[0];
	bool pods = core && strcmp(res->resource, "pods") == 0;
	bool namespaces = core && strcmp(res->resource, "namespaces") == 0;

	for (size_t i = 0; i < q->n_by; i++) {
		const char *name = q->by[i].spec.index_name, *v = q->by[i].value;
		const char *field = NULL;
		if (strncmp(name, "label:", 6) == 0) {
			struct kinf_buf req = {0};
			struct kinf_selector *sel = NULL;
			kinf_buf_putf(&req, v ? "%s=%s" : "%s", name + 6, v);
			if (!kinf_buf_error(&req) && req.data && !strpbrk(req.data, " ,()!<>") &&
					kinf_label_selector_parse(req.data, &sel, NULL) == 0) {
				append_req(labels, "%s%s", req.data, "");
			}
			kinf_selector_free(sel);
			kinf_buf_release(&req);
			continue;
		}
		if (!v || !v[0] || strpbrk(v, "\\,=!")) {
			continue;
		}
		if (strcmp(name, "node") == 0 && pods) {
			field = "spec.nodeName";
		} else if (strcmp(name, "phase") == 0 && (pods || namespaces)) {
			field = "status.phase";
		} else if (strcmp(name, "namespace") == 0 && res->namespaced) {
			field = "metadata.namespace";
		}
		if (field) {
			append_req(fields, "%s=%s", field, v);
		}
	}
}

static int cmp_count(const void *a, const void *b) {
	const struct criterion *x = a, *y = b;
	return x->count < y->count ? -1 : x->count > y->count;
}

/* Keys of objects matching every criterion: the smallest set, filtered. */
static int matching_keys(struct query *q, struct kinf_strv *ret, struct kinf_error *err) {
	struct kinf_indexer *idx = session_indexer(q->session);
	int rc;

	for (size_t i = 0; i < q->n_by; i++) {
		struct criterion *c = &q->by[i];
		if (c->value) {
			rc = kinf_indexer_index_count(idx, c->spec.index_name, c->value, &c->count, err);
		} else {
			/* Presence: the sum of every value's count. */
			struct kinf_index_value *vals = NULL;
			size_t n = 0;
			rc = kinf_indexer_values(idx, c->spec.index_name, &vals, &n, err);
			c->count = 0;
			for (size_t j = 0; j < n; j++) {
				c->count += vals[j].count;
			}
			kinf_index_values_free(vals, n);
		}
		if (rc < 0) {
			return rc;
		}
	}
	qsort(q->by, q->n_by, sizeof(*q->by), cmp_count);
	struct criterion *first = &q->by[0];
	struct kinf_strv candidates = {0};
	if (first->value) {
		rc = kinf_indexer_index_keys(idx, first->spec.index_name, first->value,
				&candidates, err);
	} else {
		struct kinf_index_value *vals = NULL;
		size_t n = 0;
		rc = kinf_indexer_values(idx, first->spec.index_name, &vals, &n, err);
		for (size_t j = 0; rc == 0 && j < n; j++) {
			struct kinf_strv some = {0};
			rc = kinf_indexer_index_keys(idx, first->spec.index_name, vals[j].value,
					&some, err);
			for (size_t k = 0; rc == 0 && k < some.n; k++) {
				rc = kinf_strv_push_take(&candidates, some.v[k]);
				some.v[k] = NULL;
			}
			some.n = 0;
			kinf_strv_release(&some);
		}
		kinf_index_values_free(vals, n);
		kinf_strv_sort_unique(&candidates);
	}
	for (size_t i = 0; rc == 0 && i < candidates.n; i++) {
		if (q->n_by == 1) {
			rc = kinf_strv_push_str(ret, candidates.v[i]);
			continue;
		}
		struct kinf_object *obj = kinf_indexer_get(idx, candidates.v[i]);
		int m = matches(q, obj);
		rc = m < 0 ? m : m ? kinf_strv_push_str(ret, candidates.v[i]) : 0;
		kinf_object_unref(obj);
	}
	kinf_strv_release(&candidates);
	return rc;
}

/* One match: an object of an informer. */
struct match {
	size_t informer;
	char *key;
	size_t type_rank;	/* the first informer of its type */
	size_t context;		/* its place in --context */
};

/* Types in the order given, then contexts, then namespace/name (as -A sorts). */
static int cmp_match(const void *a, const void *b) {
	const struct match *x = a, *y = b;
	if (x->type_rank != y->type_rank) {
		return x->type_rank < y->type_rank ? -1 : 1;
	}
	if (x->context != y->context) {
		return x->context < y->context ? -1 : 1;
	}
	return strcmp(x->key, y->key);
}

/*
 * The cells of obj's row in a table of its type: CONTEXT (several
 * contexts), NAMESPACE (-A, several namespaces or --from), the kind's
 * columns with kind/name in NAME when there are several types, and its
 * wide columns for -o wide, as list -o wide prints them.
 */
static int object_row(struct query *q, struct kinf_object *obj, struct kinf_strv *cells,
		struct kinf_error *reterr) {
	bool several_types = session_several_types(q->session);
	int rc = 0;

	if (session_context(q->session)) {
		rc |= kinf_strv_push_str(cells, session_context(q->session));
	}
	if (cli_namespace_column(&q->cli) || q->so.from) {
		rc |= kinf_strv_push_str(cells, kinf_object_namespace(obj));
	}
	size_t name_at = cells->n;
	int data = kinf_kindcols_cells(q->kindcols, obj, q->cli.format == KINF_OUTPUT_WIDE, NULL,
			cells, reterr);
	if (data < 0 && data != -KINF_ENOMEM) {
		return data;	/* the object's data: reterr names it */
	}
	rc |= data;
	if (several_types && rc == 0 && cells->n > name_at) {
		struct kinf_buf ref = {0};
		session_put_ref(q->session, kinf_object_name(obj), &ref);
		char *name = kinf_buf_take(&ref);
		if (!name) {
			rc = -KINF_ENOMEM;
		} else {
			free(cells->v[name_at]);
			cells->v[name_at] = name;
		}
	}
	/* -L and --show-labels, last */
	rc |= kinf_kindcols_append_labels(&q->cli.label_columns, obj, cells);
	return rc < 0 ? -KINF_ENOMEM : 0;
}

/* A table for the current informer's type, with its header. */
static struct kinf_table *type_table(struct query *q, struct kinf_object *first) {
	struct kinf_strv headers = {0};
	const struct kinf_resource *res = session_resource(q->session);

	int rc = 0;
	if (session_context(q->session)) {
		rc |= kinf_strv_push_str(&headers, "CONTEXT");
	}
	if (cli_namespace_column(&q->cli) || q->so.from) {
		rc |= kinf_strv_push_str(&headers, "NAMESPACE");
	}
	q->kindcols = res ? session_kindcols(q->session) :
		first ? kinf_kindcols_for_object(first) : kinf_kindcols_for("", "");
	rc |= kinf_kindcols_headers(q->kindcols, q->cli.format == KINF_OUTPUT_WIDE, &headers);
	rc |= kinf_kindcols_append_labels(&q->cli.label_columns, NULL, &headers);
	/* NULL (out of memory) when a title is missing, as when the table is. */
	struct kinf_table *table = rc == 0 ? kinf_table_new(headers.n) : NULL;
	if (table && !q->cli.no_headers) {
		kinf_table_put_row(table, (const char *const *)headers.v);
	}
	kinf_strv_release(&headers);
	return table;
}

/*
 * The matches as kubectl get prints several types: a table per type. 0,
 * 1 when an object could not be shown (the error line names it), or
 * -KINF_ENOMEM.
 */
static int print_tables(struct query *q, const struct match *v, size_t n) {
	bool *done = calloc(n + 1, sizeof(*done));
	bool printed = false;
	int rc = done ? 0 : -KINF_ENOMEM;
	int skipped = 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (done[i]) {
			continue;
		}
		/* Every match of this type, in informer order (contexts, namespaces). */
		session_select(q->session, v[i].informer);
		const char *type = session_resource_name(q->session);
		struct kinf_table *table = NULL;
		for (size_t j = i; rc == 0 && j < n; j++) {
			session_select(q->session, v[j].informer);
			const char *t = session_resource_name(q->session);
			if (done[j] || (type && t && strcmp(type, t) != 0)) {
				continue;
			}
			done[j] = true;
			struct kinf_object *cached = kinf_indexer_get(session_indexer(q->session),
					v[j].key);
			/* Typed: list items lack the kind the columns come from. */
			struct kinf_object *obj = cached ? session_typed(q->session, cached) : NULL;
			kinf_object_unref(cached);
			struct kinf_strv cells = {0};
			struct kinf_error err = {0};
			if (obj && !table && !(table = type_table(q, obj))) {
				rc = -KINF_ENOMEM;
			}
			if (cached && !obj) {
				rc = -KINF_ENOMEM;	/* session_typed() */
			}
			if (obj && rc == 0 && (rc = object_row(q, obj, &cells, &err)) == 0) {
				rc = kinf_table_add_row(table, (const char *const *)cells.v);
			} else if (obj && rc < 0 && rc != -KINF_ENOMEM) {
				cli_report(&q->cli, rc, &err, NULL);
				skipped = 1;
				rc = 0;
			}
			kinf_strv_release(&cells);
			kinf_object_unref(obj);
		}
		if (table && rc == 0) {
			if (printed) {
				putchar('\n');
			}
			rc = kinf_table_print(table, stdout);
			printed = true;
		}
		kinf_table_free(table);
	}
	free(done);
	if (rc == 0 && !printed) {
		fprintf(stderr, "No resources found\n");
	}
	return rc < 0 ? rc : skipped;
}

/* One match as -o json, yaml or name print it. 0 or what failed. */
static int print_object(struct query *q, struct kinf_object *obj, bool first,
		struct kinf_error *reterr) {
	struct kinf_object *typed = session_printed(q->session, obj);
	struct kinf_object *o = typed;
	size_t len;
	int rc = 0;

	if (!typed) {
		return -KINF_ENOMEM;
	}
	const char *json = kinf_object_json(o, &len);
	if (q->cli.format == KINF_OUTPUT_JSON) {
		fwrite(json, 1, len, stdout);
		fputc('\n', stdout);
	} else if (q->cli.format == KINF_OUTPUT_YAML) {
		if (!first) {
			fputs("---\n", stdout);
		}
		rc = kinf_toyaml_write(stdout, json, len, reterr);
	} else if (session_resource(q->session)) {
		cli_print_name(session_resource(q->session), o, stdout);
	} else {
		cli_printf_safe(stdout, "%s", kinf_object_key(o));
	}
	kinf_object_unref(typed);
	return rc;
}

/* The matches as the cache had them: each typed when the template reaches it. */
struct held_matches {
	struct query *q;
	struct kinf_object **objs;
	size_t *informers;
};

static struct kinf_object *typed_match(void *userdata, size_t i) {
	struct held_matches *h = userdata;
	session_select(h->q->session, h->informers[i]);
	return session_typed(h->q->session, h->objs[i]);
}

/* -o jsonpath or custom-columns over every match, as one List. */
static int print_templated(struct query *q, const struct match *v, size_t n) {
	struct held_matches h = { q, calloc(n + 1, sizeof(*h.objs)),
		calloc(n + 1, sizeof(*h.informers)) };
	size_t k = 0;
	for (size_t i = 0; h.objs && h.informers && i < n; i++) {
		session_select(q->session, v[i].informer);
		if ((h.objs[k] = kinf_indexer_get(session_indexer(q->session), v[i].key))) {
			h.informers[k++] = v[i].informer;
		}
	}
	struct cli_objects objs = { k, typed_match, &h };
	int status = h.objs && h.informers ? cli_print_templated(&q->cli, &objs, false, stdout) :
		cli_error(&q->cli, -KINF_ENOMEM, NULL, NULL);
	for (size_t i = 0; i < k; i++) {
		kinf_object_unref(h.objs[i]);
	}
	free(h.objs);
	free(h.informers);
	return status;
}

/*
 * --keys: each key on a line, or a JSON string; with several informers
 * each names its resource (and context), in columns or as watch's JSON
 * lines do. 0 or what failed.
 */
static int print_keys(struct query *q, const struct match *v, size_t n) {
	bool several = session_n_informers(q->session) > 1;
	struct kinf_table *t = NULL;

	if (several && q->cli.format != KINF_OUTPUT_JSON) {
		bool ctx = session_context(q->session) != NULL;
		const char *h[] = { "CONTEXT", "RESOURCE", "KEY" };
		t = kinf_table_new(ctx ? 3 : 2);
		if (!t) {
			return -KINF_ENOMEM;
		}
		if (!q->cli.no_headers) {
			kinf_table_put_row(t, ctx ? h : h + 1);
		}
	}
	for (size_t i = 0; i < n; i++) {
		session_select(q->session, v[i].informer);
		const char *key = v[i].key;
		if (t) {
			const char *row[] = { session_context(q->session),
				session_resource_name(q->session), key };
			kinf_table_put_row(t, session_context(q->session) ? row : row + 1);
			continue;
		}
		kinf_buf_reset(&q->line);
		if (several) {
			kinf_buf_puts(&q->line, "{\"key\":");
			kinf_json_put_quoted(&q->line, key, strlen(key));
			session_put_source(q->session, &q->line);
			kinf_buf_puts(&q->line, "}\n");
		} else if (q->cli.format == KINF_OUTPUT_JSON) {
			kinf_json_put_quoted(&q->line, key, strlen(key));
			kinf_buf_putc(&q->line, '\n');
		} else {
			cli_printf_safe(stdout, "%s", key);
			continue;
		}
		cli_emit(stdout, &q->line);
	}
	int rc = t ? kinf_table_print(t, stdout) : 0;
	kinf_table_free(t);
	return rc;
}

/* Add vals to the sum: each value once, its counts added up. */
static int add_values(struct kinf_index_value **sum, size_t *n_sum,
		const struct kinf_index_value *vals, size_t n) {
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < *n_sum && strcmp((*sum)[j].value, vals[i].value) != 0) {
			j++;
		}
		if (j == *n_sum) {
			struct kinf_index_value *v = realloc(*sum, (*n_sum + 1) * sizeof(*v));
			if (!v) {
				return -KINF_ENOMEM;
			}
			*sum = v;
			v[j] = (struct kinf_index_value){ .value = strdup(vals[i].value) };
			if (!v[j].value) {
				return -KINF_ENOMEM;
			}
			(*n_sum)++;
		}
		(*sum)[j].count += vals[i].count;
	}
	return 0;
}

/* Highest count first, equal counts by value (as kinf_indexer_values). */
static int cmp_value(const void *a, const void *b) {
	const struct kinf_index_value *x = a, *y = b;
	if (x->count != y->count) {
		return x->count > y->count ? -1 : 1;
	}
	return strcmp(x->value, y->value);
}

/* --values: a VALUE COUNT table, or a JSON line for each. 0 or what failed. */
static int print_values(struct query *q, const struct kinf_index_value *vals, size_t n) {
	if (n == 0 && q->cli.format != KINF_OUTPUT_JSON) {
		/* An empty table is not a header alone, as the --by tables */
		fprintf(stderr, "No resources found\n");
		return 0;
	}
	struct kinf_table *t = q->cli.format == KINF_OUTPUT_JSON ? NULL : kinf_table_new(2);
	if (q->cli.format != KINF_OUTPUT_JSON && !t) {
		return -KINF_ENOMEM;
	}
	if (t && !q->cli.no_headers) {
		const char *h[] = { "VALUE", "COUNT" };
		kinf_table_put_row(t, h);
	}
	for (size_t i = 0; i < n; i++) {
		if (t) {
			char count[32];
			snprintf(count, sizeof(count), "%zu", vals[i].count);
			const char *row[] = { vals[i].value[0] ? vals[i].value : "\"\"", count };
			kinf_table_put_row(t, row);
		} else {
			kinf_buf_reset(&q->line);
			kinf_buf_puts(&q->line, "{\"value\":");
			kinf_json_put_quoted(&q->line, vals[i].value, strlen(vals[i].value));
			kinf_buf_putf(&q->line, ",\"count\":%zu}\n", vals[i].count);
			cli_emit(stdout, &q->line);
		}
	}
	int rc = t ? kinf_table_print(t, stdout) : 0;
	kinf_table_free(t);
	return rc;
}

/* --values INDEX: its values over every informer, with their counts. */
static int answer_values(struct query *q) {
	struct kinf_index_spec spec;
	struct kinf_index_value *sum = NULL;
	struct kinf_error err = {0};
	size_t n = 0;
	int rc = kinf_index_spec_resolve(q->values_index, &q->custom_names, &q->custom_paths,
			&spec, &err);
	bool have_spec = rc == 0;

	for (size_t m = 0; rc == 0 && m < session_n_informers(q->session); m++) {
		struct kinf_index_value *vals = NULL;
		size_t n_vals = 0;
		if (!session_select(q->session, m)) {
			continue;
		}
		rc = kinf_indexer_values(session_indexer(q->session), spec.index_name, &vals,
				&n_vals, &err);
		if (rc == 0 && (rc = add_values(&sum, &n, vals, n_vals)) < 0) {
			kinf_error_fill(&err, KINF_ENOMEM, "out of memory");
		}
		kinf_index_values_free(vals, n_vals);
	}
	if (have_spec) {
		kinf_index_spec_release(&spec);
	}
	if (rc < 0) {
		kinf_index_values_free(sum, n);
		return cli_error(&q->cli, rc, &err, NULL);
	}
	if (n > 1) {
		qsort(sum, n, sizeof(*sum), cmp_value);	/* (not with NULL, n 0: UB) */
	}
	rc = print_values(q, sum, n);
	kinf_index_values_free(sum, n);
	return rc < 0 ? cli_print_failed(&q->cli, rc, NULL) : EXIT_OK;
}

/* The matches of every informer, in informer order. */
static int all_matches(struct query *q, struct match **ret, size_t *ret_n) {
	struct kinf_error err = {0};
	struct match *v = NULL;
	size_t n = 0;
	int rc = 0;

	for (size_t m = 0; rc == 0 && m < session_n_informers(q->session); m++) {
		struct kinf_strv keys = {0};
		if (!session_select(q->session, m)) {
			continue;
		}
		rc = matching_keys(q, &keys, &err);
		struct match *nv = rc == 0 ? realloc(v, (n + keys.n + 1) * sizeof(*nv)) : NULL;
		if (rc == 0 && !nv) {
			rc = kinf_error_set(&err, KINF_ENOMEM, "out of memory");
		}
		if (nv) {
			v = nv;
		}
		size_t rank = m;
		const char *type = session_resource_name(q->session);
		for (size_t j = 0; type && j < m; j++) {
			if (session_select(q->session, j) && session_resource_name(q->session) &&
					strcmp(session_resource_name(q->session), type) == 0) {
				rank = j;
				break;
			}
		}
		session_select(q->session, m);
		for (size_t i = 0; rc == 0 && i < keys.n; i++) {
			v[n++] = (struct match){ .informer = m, .key = keys.v[i], .type_rank = rank,
				.context = session_context_index(q->session) };
			keys.v[i] = NULL;
		}
		kinf_strv_release(&keys);
	}
	if (v) {
		qsort(v, n, sizeof(*v), cmp_match);
	}
	*ret = v;
	*ret_n = n;
	return rc < 0 ? cli_error(&q->cli, rc, &err, NULL) : EXIT_OK;
}

/*
 * --sort-by: the matches in the field's order, stably (each type's table
 * keeps it; json, yaml, name and templates print in it).
 */
static json_t *match_object(const void *elem, void *userdata, struct kinf_error *reterr) {
	const struct match *m = elem;
	struct query *q = userdata;
	session_select(q->session, m->informer);
	struct kinf_object *obj = kinf_indexer_get(session_indexer(q->session), m->key);
	json_t *o = obj ? kinf_object_tree(obj, reterr) : NULL;
	kinf_object_unref(obj);
	return o;
}

static int sort_matches(struct query *q, struct match *v, size_t n) {
	return cli_sort_by_field(&q->cli, v, n, sizeof(*v), match_object, q);
}

/* The answer from the synced caches, in the format asked for. */
static int answer(struct query *q) {
	struct match *v = NULL;
	size_t n = 0;
	int status;

	if (q->values_index) {
		return answer_values(q);
	}
	status = all_matches(q, &v, &n);
	if (status == EXIT_OK) {
		status = sort_matches(q, v, n);
	}
	if (status != EXIT_OK) {
		;
	} else if (q->keys) {
		int rc = print_keys(q, v, n);
		status = rc < 0 ? cli_print_failed(&q->cli, rc, NULL) : EXIT_OK;
	} else if (q->cli.templated) {
		status = print_templated(q, v, n);
	} else if (q->cli.format == KINF_OUTPUT_TABLE || q->cli.format == KINF_OUTPUT_WIDE) {
		int printed = print_tables(q, v, n);
		if (printed < 0) {
			status = cli_print_failed(&q->cli, printed, NULL);
		} else if (printed > 0) {
			status = EXIT_ERROR;
		}
	} else {
		for (size_t i = 0; status == EXIT_OK && i < n; i++) {
			struct kinf_error err = {0};
			session_select(q->session, v[i].informer);
			struct kinf_object *obj = kinf_indexer_get(session_indexer(q->session), v[i].key);
			int rc = obj ? print_object(q, obj, i == 0, &err) : 0;
			if (rc < 0) {
				status = cli_print_failed(&q->cli, rc, &err);
			}
			kinf_object_unref(obj);
		}
	}
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
	}
	free(v);
	return status;
}

/*
 * An index as kinf serve's index path names it: built-ins, label:KEY and
 * field:PATH as they are, a --index NAME by its field:PATH (names are the
 * client's own).
 */
static int wire_name(const struct kinf_index_spec *spec, const char *value,
		struct kinf_buf *out) {
	kinf_buf_reset(out);
	if (spec->arg && !strchr(spec->index_name, ':')) {
		kinf_buf_putf(out, "field:%s", spec->arg);
	} else {
		kinf_buf_puts(out, spec->index_name);
	}
	if (value) {
		kinf_buf_putf(out, "=%s", value);
	}
	return kinf_buf_error(out);
}

/* --values from kinf serve's answer: {"items":[{"value":V,"count":N},...]}. */
static int serve_values(struct query *q, const char *path) {
	struct kinf_http_request req = { .path = path };
	struct kinf_http_response resp = {0};
	struct kinf_error err = {0};
	struct kinf_index_value *vals = NULL;
	size_t n = 0;
	int status = EXIT_OK;

	int rc = kinf_http_get(q->cli.http, &req, &resp, &err);
	if (rc < 0) {
		status = cli_error(&q->cli, rc, &err, "kinf serve's index");
		goto out;
	}
	json_t *root = json_loadb(resp.body.data ? resp.body.data : "", resp.body.len, 0, NULL);
	json_t *items = json_object_get(root, "items");
	vals = calloc(json_array_size(items) + 1, sizeof(*vals));
	for (size_t i = 0; vals && i < json_array_size(items); i++) {
		json_t *it = json_array_get(items, i);
		const char *v = json_string_value(json_object_get(it, "value"));
		json_t *c = json_object_get(it, "count");
		if (!v || !json_is_integer(c) || json_integer_value(c) < 0 ||
				!(vals[n].value = strdup(v))) {
			break;
		}
		vals[n++].count = (size_t)json_integer_value(c);
	}
	if (!json_is_array(items) || !vals || n != json_array_size(items)) {
		fprintf(stderr, "kinf: kinf serve's index: not an IndexValueList\n");
		status = EXIT_ERROR;
	} else {
		print_values(q, vals, n);
	}
	json_decref(root);
out:
	kinf_index_values_free(vals, n);
	kinf_http_response_release(&resp);
	return status;
}

/*
 * With --server naming a kinf serve, ask its index path (src/serveindex.c)
 * instead of listing everything into a cache of our own: O(answer). --by
 * brings back the matching objects, which the session's informer loads
 * as its list, so answer() prints them exactly as it does in direct
 * mode; --values brings back the counts.
 */
static int ask_serve(struct query *q) {
	struct session_member_info mi;
	struct kinf_buf base = {0}, path = {0}, one = {0};
	struct kinf_urlquery uq;
	struct kinf_error err = {0};
	int status = EXIT_OK;

	session_member_info(q->session, 0, &mi);
	char *coll = kinf_resource_path(mi.res, mi.namespace);
	kinf_buf_putf(&base, "/kinf/v1/index%s", coll ? coll : "");
	free(coll);
	bool oom = kinf_buf_error(&base) != 0;
	kinf_urlquery_start(&uq, &path, base.data ? base.data : "");
	for (size_t i = 0; i < q->n_by; i++) {
		oom |= wire_name(&q->by[i].spec, q->by[i].value, &one) < 0;
		kinf_urlquery_add(&uq, "by", one.data);
	}
	if (q->values_index) {
		struct kinf_index_spec spec;
		if (kinf_index_spec_resolve(q->values_index, &q->custom_names, &q->custom_paths,
				&spec, &err) == 0) {
			oom |= wire_name(&spec, NULL, &one) < 0;
			kinf_urlquery_add(&uq, "values", one.data);
		}
		kinf_index_spec_release(&spec);
	}
	kinf_urlquery_add(&uq, "labelSelector", q->cli.label_selector);
	kinf_urlquery_add(&uq, "fieldSelector", q->cli.field_selector);
	if (oom || !base.data || kinf_urlquery_finish(&uq) < 0) {
		status = cli_error(&q->cli, -KINF_ENOMEM, NULL, NULL);
		goto out;
	}
	if (q->values_index) {
		status = serve_values(q, path.data);
		goto out;
	}
	struct kinf_list_opts lo = { .path = path.data, .limits = q->cli.limits };
	struct kinf_list_result res = {0};
	int rc = kinf_list(q->cli.http, &lo, &res, &err);
	if (rc == 0) {
		rc = session_load(q->session, &res.items, &err);
	}
	kinf_list_result_release(&res);
	status = rc < 0 ? cli_error(&q->cli, rc, &err, "kinf serve's index") : answer(q);
out:
	kinf_buf_release(&base);
	kinf_buf_release(&path);
	kinf_buf_release(&one);
	return status;
}

/*
 * Membership view: how each event changes the answer. With several
 * informers a line names the resource (and context); JSON lines always
 * do, as watch's.
 */
static void print_change(struct query *q, char mark, const char *key,
		struct kinf_object *obj, bool initial) {
	if (q->cli.format == KINF_OUTPUT_JSON) {
		const char *type = mark == '+' ? "MATCHED" : mark == '-' ? "UNMATCHED" : "CHANGED";
		kinf_buf_reset(&q->line);
		kinf_buf_putf(&q->line, "{\"type\":\"%s\",\"key\":", type);
		kinf_json_put_quoted(&q->line, key, strlen(key));
		session_put_source(q->session, &q->line);
		if (obj) {
			const char *rv = kinf_object_resource_version(obj);
			kinf_buf_puts(&q->line, ",\"resourceVersion\":");
			kinf_json_put_quoted(&q->line, rv, strlen(rv));
		}
		if (initial) {
			kinf_buf_puts(&q->line, ",\"initial\":true");
		}
		if (obj) {
			struct kinf_object *typed = session_printed(q->session, obj);
			size_t len;
			if (typed) {
				const char *json = kinf_object_json(typed, &len);
				kinf_buf_puts(&q->line, ",\"object\":");
				kinf_buf_put(&q->line, json, len);
			} else {
				kinf_buf_fail(&q->line, -KINF_ENOMEM);	/* never the object untyped */
			}
			kinf_object_unref(typed);
		}
		kinf_buf_puts(&q->line, "}\n");
		cli_emit(stdout, &q->line);
	} else if (session_n_informers(q->session) > 1) {
		const char *ctx = session_context(q->session);
		cli_printf_safe(stdout, "%c %s%s%s %s", mark, ctx ? ctx : "", ctx ? " " : "",
				session_resource_name(q->session), key);
	} else {
		cli_printf_safe(stdout, "%c %s", mark, key);
	}
	session_count(q->session);
}

/* 0, or -KINF_ENOMEM when whether it matches could not be told. */
static int watch_event(struct query *q, const struct kinf_informer_event *ev) {
	int now = ev->type != KINF_INFORMER_DELETE ? matches(q, ev->obj) : 0;
	int before = ev->type == KINF_INFORMER_UPDATE ? matches(q, ev->old) :
		ev->type == KINF_INFORMER_DELETE ? matches(q, ev->obj) : 0;
	if (now < 0 || before < 0) {
		return -KINF_ENOMEM;
	}
	if (!before && now) {
		print_change(q, '+', ev->key, ev->obj, ev->initial);
	} else if (before && !now) {
		print_change(q, '-', ev->key, ev->obj, false);
	} else if (before && now && !ev->is_sync) {
		print_change(q, '~', ev->key, ev->obj, false);
	}
	return 0;
}

/* One option of index's own: 1 handled, 0 not one, or -status. */
static int index_option(struct query *q, int opt, const char *arg) {
	struct kinf_error err = {0};

	switch (opt) {
	case OPT_BY:
		q->so.keep_managed_fields |= strstr(arg, "managedFields") != NULL;
		return kinf_strv_push_str(&q->by_args, arg) < 0 ?
			-cli_error(&q->cli, -KINF_ENOMEM, NULL, NULL) : 1;
	case OPT_INDEX:
		q->so.keep_managed_fields |= strstr(arg, "managedFields") != NULL;
		int rc = kinf_index_define(arg, &q->custom_names, &q->custom_paths, &err);
		if (rc < 0) {
			return -cli_option_error(&q->cli, rc, &err, NULL);
		}
		return 1;
	case OPT_KEYS: q->keys = true; return 1;
	case OPT_VALUES: q->values_index = arg; return 1;
	case OPT_IWATCH: q->watch = true; return 1;
	case OPT_NO_PUSHDOWN: q->no_pushdown = true; return 1;
	}
	int r = session_option(&q->cli, &q->so, opt, arg);
	if (r == 0) {
		r = cli_table_option(&q->cli, opt, arg);
	}
	return r == 0 ? cli_common_option(&q->cli, opt, arg) : r;
}

/* The options into q, and the resource types. */
static int index_parse(struct query *q, int argc, char **argv) {
	int opt;

	optind = 0;
	while ((opt = cli_getopt(argc, argv, ":" CLI_COMMON_SHORT CLI_TABLE_SHORT,
			index_options)) != -1) {
		if (opt == 'h') {
			q->help = true;
			return EXIT_OK;
		}
		int r = index_option(q, opt, optarg);
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&q->cli, index_options);
		}
	}
	if (argc - optind > 1 || (optind < argc && strchr(argv[optind], '/'))) {
		return cli_usage_error(&q->cli, "index takes resource types (pods or pods,deploy), "
				"not names");
	}
	q->types = optind < argc ? argv[optind] : NULL;
	return cli_check_table_options(&q->cli);
}

/* The session's prepare: each informer's indexer gets the indexes read. */
static int install_indexes(struct kinf_indexer *idx, void *userdata) {
	struct query *q = userdata;
	struct kinf_error err = {0};
	int rc = 0;

	for (size_t i = 0; i < q->n_by && rc == 0; i++) {
		rc = kinf_index_spec_install(&q->by[i].spec, idx, &err);
	}
	if (q->values_index && rc == 0) {
		struct kinf_index_spec spec;
		rc = kinf_index_spec_resolve(q->values_index, &q->custom_names,
				&q->custom_paths, &spec, &err);
		if (rc == 0) {
			rc = kinf_index_spec_install(&spec, idx, &err);
			kinf_index_spec_release(&spec);
		}
	}
	if (rc < 0) {
		cli_report(&q->cli, rc, &err, NULL);
	}
	return rc;
}

/* The --by criteria and --values resolved; how the options go together. */
static int index_check(struct query *q) {
	struct kinf_error err = {0};

	if (!q->by_args.n && !q->values_index) {
		return cli_usage_error(&q->cli, "index needs --by INDEX=VALUE or --values INDEX");
	}
	if (q->values_index && (q->by_args.n || q->keys || q->watch)) {
		return cli_usage_error(&q->cli, "--values cannot be combined with --by, "
				"--keys or --watch");
	}
	if (!(q->by = calloc(q->by_args.n + 1, sizeof(*q->by)))) {
		return cli_error(&q->cli, -KINF_ENOMEM, NULL, NULL);
	}
	for (size_t i = 0; i < q->by_args.n; i++) {
		char *arg = q->by_args.v[i];
		char *eq = strchr(arg, '=');
		/* field:PATH may hold '[' but never '=' before the value. */
		if (eq) {
			*eq = '\0';
		}
		if (!arg[0]) {
			return cli_usage_error(&q->cli, "--by needs an index name before '='");
		}
		int rc = kinf_index_spec_resolve(arg, &q->custom_names, &q->custom_paths,
				&q->by[i].spec, &err);
		if (rc < 0) {
			return cli_option_error(&q->cli, rc, &err, "--by");
		}
		q->by[i].value = eq ? strdup(eq + 1) : NULL;
		q->n_by++;
		if (eq && !q->by[i].value) {
			return cli_error(&q->cli, -KINF_ENOMEM, NULL, NULL);
		}
	}
	if (q->values_index) {
		struct kinf_index_spec spec;
		int rc = kinf_index_spec_resolve(q->values_index, &q->custom_names,
				&q->custom_paths, &spec, &err);
		if (rc < 0) {
			return cli_option_error(&q->cli, rc, &err, "--values");
		}
		kinf_index_spec_release(&spec);
	}
	if (!q->watch) {
		q->so.exit_after_sync = true;
		if (!q->no_pushdown && q->n_by) {
			q->so.pushdown = pushdown;
			q->so.pushdown_data = q;
		}
	}
	q->so.tables_per_type = true;
	q->so.prepare = install_indexes;
	q->so.prepare_data = q;
	return EXIT_OK;
}

/* Sync (printing changes with --watch), then answer from the caches. */
static int index_run(struct query *q) {
	struct session_target t = { .types = q->types };
	int status = session_new_targets(&q->cli, &q->so, &t, q->types ? 1 : 0, &q->session);
	if (status != EXIT_OK) {
		q->session = NULL;
		return status;
	}
	if (q->cli.serve && !q->watch) {
		/* kinf serve answers from its indexes: one informer's worth. */
		status = session_n_informers(q->session) > 1 ?
			cli_usage_error(&q->cli, "index through kinf serve (--server) takes one "
					"resource type in one namespace and context") : ask_serve(q);
		status = session_end(q->session, status);
		q->session = NULL;
		return status;
	}
	status = session_start(q->session);
	while (status == EXIT_OK) {
		struct kinf_informer_batch batch;
		int r = session_next(q->session, &batch, NULL);
		if (r <= 0) {
			status = -r;
			break;
		}
		for (size_t i = 0; status == EXIT_OK && q->watch && i < batch.n; i++) {
			if (watch_event(q, &batch.v[i]) < 0) {
				status = cli_error(&q->cli, -KINF_ENOMEM, NULL, NULL);
			}
		}
		kinf_informer_batch_release(&batch);
		if (q->watch && ferror(stdout)) {
			break;
		}
		fflush(stdout);
	}
	if (status == EXIT_OK && !q->watch) {
		status = answer(q);
	}
	status = session_end(q->session, status);
	q->session = NULL;
	return status;
}

static int run_index(int argc, char **argv) {
	struct query q = {0};

	cli_init(&q.cli, &cmd_index);
	int status = index_parse(&q, argc, argv);
	if (status == EXIT_OK && q.help) {
		cli_print_help(&cmd_index);
	} else if (status == EXIT_OK && (status = index_check(&q)) == EXIT_OK) {
		status = index_run(&q);
	}
	for (size_t i = 0; i < q.n_by; i++) {
		kinf_index_spec_release(&q.by[i].spec);
		free(q.by[i].value);
	}
	free(q.by);
	kinf_strv_release(&q.by_args);
	kinf_strv_release(&q.custom_names);
	kinf_strv_release(&q.custom_paths);
	kinf_buf_release(&q.line);
	return status;
}

const struct cmd cmd_index = {
	.name = "index",
	.summary = "answer questions from the informer's indexes",
	.usage = index_usage,
	.run = run_index,
	.options = index_options,
	.more_usage = session_usage,
	.formats = CLI_FORMATS_ALL,
};
