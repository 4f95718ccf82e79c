#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "http.h"
#include "indexfuncs.h"
#include "json.h"
#include "list.h"
#include "selector.h"
#include "session.h"
#include "urlquery.h"

static const char index_usage[] =
	"Usage: kinf index RESOURCE --by INDEX[=VALUE]... [OPTIONS]\n"
	"       kinf index RESOURCE --values INDEX [OPTIONS]\n"
	"\n"
	"Sync an informer's cache and answer questions from its indexes, in\n"
	"time proportional to the answer. Several --by are ANDed. Without\n"
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
	struct kinf_buf line;
};

static bool matches(struct query *q, const struct kinf_object *obj) {
	if (!obj) {
		return false;
	}
	for (size_t i = 0; i < q->n_by; i++) {
		if (!kinf_index_spec_matches(&q->by[i].spec, q->by[i].value, obj)) {
			return false;
		}
	}
	return true;
}

static void append_req(struct kinf_buf *b, const char *fmt, const char *x, const char *y) {
	if (b->len) {
		kinf_buf_append_char(b, ',');
	}
	kinf_buf_printf(b, fmt, x, y);
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
			kinf_buf_printf(&req, v ? "%s=%s" : "%s", name + 6, v);
			if (req.data && !strpbrk(req.data, " ,()!<>") &&
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
		if (obj && matches(q, obj)) {
			rc = kinf_strv_push_str(ret, candidates.v[i]);
		}
		kinf_object_unref(obj);
	}
	kinf_strv_release(&candidates);
	return rc;
}

static void print_object(struct query *q, struct kinf_object *obj, bool first,
		struct kinf_table *table) {
	struct kinf_object *typed = session_printed(q->session, obj);
	struct kinf_object *o = typed ? typed : obj;
	size_t len;
	const char *json = kinf_object_json(o, &len);

	switch (q->cli.format) {
	case KINF_OUTPUT_JSON:
		fwrite(json, 1, len, stdout);
		fputc('\n', stdout);
		break;
	case KINF_OUTPUT_YAML:
		if (!first) {
			fputs("---\n", stdout);
		}
		kinf_output_yaml(stdout, json, len, NULL);
		break;
	case KINF_OUTPUT_NAME:
		if (session_resource(q->session)) {
			cli_print_name(session_resource(q->session), o, stdout);
		} else {
			cli_printf_safe(stdout, "%s", kinf_object_key(o));
		}
		break;
	default: {
		struct kinf_strv cells = {0};
		if (q->cli.all_namespaces || q->so.from) {
			kinf_strv_push_str(&cells, kinf_object_namespace(o));
		}
		kinf_output_object_columns(kinf_object_kind(o), o, &cells);
		if (q->cli.format == KINF_OUTPUT_WIDE) {
			kinf_strv_push_str(&cells, kinf_object_node_name(o)[0] ?
					kinf_object_node_name(o) : "<none>");
		}
		kinf_table_add_row(table, (const char *const *)cells.v);
		kinf_strv_release(&cells);
		break;
	}
	}
	kinf_object_unref(typed);
}

/* --values: a VALUE COUNT table, or a JSON line for each. */
static void print_values(struct query *q, const struct kinf_index_value *vals, size_t n) {
	struct kinf_table *t = q->cli.format == KINF_OUTPUT_JSON ? NULL : kinf_table_new(2);
	if (t && !q->cli.no_headers) {
		const char *h[] = { "VALUE", "COUNT" };
		kinf_table_add_row(t, h);
	}
	for (size_t i = 0; i < n; i++) {
		if (t) {
			char count[32];
			snprintf(count, sizeof(count), "%zu", vals[i].count);
			const char *row[] = { vals[i].value[0] ? vals[i].value : "\"\"", count };
			kinf_table_add_row(t, row);
		} else {
			kinf_buf_reset(&q->line);
			kinf_buf_append_str(&q->line, "{\"value\":");
			kinf_json_quote(&q->line, vals[i].value, strlen(vals[i].value));
			kinf_buf_printf(&q->line, ",\"count\":%zu}\n", vals[i].count);
			fwrite(q->line.data, 1, q->line.len, stdout);
		}
	}
	if (t) {
		kinf_table_print(t, stdout);
		kinf_table_free(t);
	}
}

static int answer(struct query *q) {
	struct kinf_indexer *idx = session_indexer(q->session);
	struct kinf_error err = {0};
	int rc;

	if (q->values_index) {
		struct kinf_index_spec spec;
		struct kinf_index_value *vals = NULL;
		size_t n = 0;
		rc = kinf_index_spec_resolve(q->values_index, &q->custom_names, &q->custom_paths,
				&spec, &err);
		if (rc == 0) {
			rc = kinf_indexer_values(idx, spec.index_name, &vals, &n, &err);
		}
		kinf_index_spec_release(&spec);
		if (rc < 0) {
			return cli_error(&q->cli, rc, &err, NULL);
		}
		print_values(q, vals, n);
		kinf_index_values_free(vals, n);
		return EXIT_OK;
	}

	struct kinf_strv keys = {0};
	rc = matching_keys(q, &keys, &err);
	if (rc < 0) {
		kinf_strv_release(&keys);
		return cli_error(&q->cli, rc, &err, NULL);
	}
	if (q->keys) {
		for (size_t i = 0; i < keys.n; i++) {
			if (q->cli.format == KINF_OUTPUT_JSON) {
				kinf_buf_reset(&q->line);
				kinf_json_quote(&q->line, keys.v[i], strlen(keys.v[i]));
				kinf_buf_append_char(&q->line, '\n');
				fwrite(q->line.data, 1, q->line.len, stdout);
			} else {
				cli_printf_safe(stdout, "%s", keys.v[i]);
			}
		}
		kinf_strv_release(&keys);
		return EXIT_OK;
	}
	if (q->cli.format == KINF_OUTPUT_JSONPATH || q->cli.format == KINF_OUTPUT_CUSTOM_COLUMNS) {
		struct kinf_object **typed = calloc(keys.n + 1, sizeof(*typed));
		size_t n = 0;
		for (size_t i = 0; typed && i < keys.n; i++) {
			struct kinf_object *obj = kinf_indexer_get(idx, keys.v[i]);
			if (obj && (typed[n] = session_typed(q->session, obj))) {
				n++;
			}
			kinf_object_unref(obj);
		}
		int status = typed ? cli_print_templated(&q->cli, typed, n, false, stdout) : EXIT_ERROR;
		for (size_t i = 0; i < n; i++) {
			kinf_object_unref(typed[i]);
		}
		free(typed);
		kinf_strv_release(&keys);
		return status;
	}
	struct kinf_table *table = NULL;
	if (q->cli.format == KINF_OUTPUT_TABLE || q->cli.format == KINF_OUTPUT_WIDE) {
		struct kinf_strv headers = {0};
		const struct kinf_resource *res = session_resource(q->session);
		struct kinf_object *first = keys.n ? kinf_indexer_get(idx, keys.v[0]) : NULL;
		const char *kind = res ? res->kind : first ? kinf_object_kind(first) : NULL;
		if (q->cli.all_namespaces || q->so.from) {
			kinf_strv_push_str(&headers, "NAMESPACE");
		}
		kinf_output_object_columns(kind, NULL, &headers);
		kinf_object_unref(first);
		if (q->cli.format == KINF_OUTPUT_WIDE) {
			kinf_strv_push_str(&headers, "NODE");
		}
		table = kinf_table_new(headers.n);
		if (table && !q->cli.no_headers) {
			kinf_table_add_row(table, (const char *const *)headers.v);
		}
		kinf_strv_release(&headers);
	}
	for (size_t i = 0; i < keys.n; i++) {
		struct kinf_object *obj = kinf_indexer_get(idx, keys.v[i]);
		if (obj) {
			print_object(q, obj, i == 0, table);
		}
		kinf_object_unref(obj);
	}
	if (table) {
		if (keys.n == 0) {
			fprintf(stderr, "No resources found\n");
		} else {
			kinf_table_print(table, stdout);
		}
		kinf_table_free(table);
	}
	kinf_strv_release(&keys);
	return EXIT_OK;
}

/*
 * An index as kinf serve's index path names it: built-ins, label:KEY and
 * field:PATH as they are, a --index NAME by its field:PATH (names are the
 * client's own).
 */
static void wire_name(const struct kinf_index_spec *spec, const char *value,
		struct kinf_buf *out) {
	kinf_buf_reset(out);
	if (spec->arg && !strchr(spec->index_name, ':')) {
		kinf_buf_printf(out, "field:%s", spec->arg);
	} else {
		kinf_buf_append_str(out, spec->index_name);
	}
	if (value) {
		kinf_buf_printf(out, "=%s", value);
	}
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
 * brings back the matching objects, which go into the session's indexer,
 * so answer() prints them exactly as it does in direct mode; --values
 * brings back the counts.
 */
static int ask_serve(struct query *q) {
	struct session_member_info mi;
	struct kinf_buf base = {0}, path = {0}, one = {0};
	struct kinf_urlquery uq;
	struct kinf_error err = {0};
	int status = EXIT_OK;

	session_member_info(q->session, 0, &mi);
	char *coll = kinf_resource_path(mi.res, mi.namespace);
	kinf_buf_printf(&base, "/kinf/v1/index%s", coll ? coll : "");
	free(coll);
	kinf_urlquery_start(&uq, &path, base.data ? base.data : "");
	for (size_t i = 0; i < q->n_by; i++) {
		wire_name(&q->by[i].spec, q->by[i].value, &one);
		kinf_urlquery_add(&uq, "by", one.data);
	}
	if (q->values_index) {
		struct kinf_index_spec spec;
		if (kinf_index_spec_resolve(q->values_index, &q->custom_names, &q->custom_paths,
				&spec, &err) == 0) {
			wire_name(&spec, NULL, &one);
			kinf_urlquery_add(&uq, "values", one.data);
		}
		kinf_index_spec_release(&spec);
	}
	kinf_urlquery_add(&uq, "labelSelector", q->cli.label_selector);
	kinf_urlquery_add(&uq, "fieldSelector", q->cli.field_selector);
	if (!base.data || !one.data || kinf_urlquery_finish(&uq) < 0) {
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
	struct kinf_indexer *idx = session_indexer(q->session);
	for (size_t i = 0; rc == 0 && i < res.items.n; i++) {
		rc = kinf_indexer_add(idx, res.items.v[i]);
	}
	kinf_list_result_release(&res);
	status = rc < 0 ? cli_error(&q->cli, rc, &err, "kinf serve's index") : answer(q);
out:
	kinf_buf_release(&base);
	kinf_buf_release(&path);
	kinf_buf_release(&one);
	return status;
}

/* Membership view: how each event changes the answer. */
static void print_change(struct query *q, char mark, const char *key,
		struct kinf_object *obj, bool initial) {
	if (q->cli.format == KINF_OUTPUT_JSON) {
		const char *type = mark == '+' ? "MATCHED" : mark == '-' ? "UNMATCHED" : "CHANGED";
		kinf_buf_reset(&q->line);
		kinf_buf_printf(&q->line, "{\"type\":\"%s\",\"key\":", type);
		kinf_json_quote(&q->line, key, strlen(key));
		if (obj) {
			const char *rv = kinf_object_resource_version(obj);
			kinf_buf_append_str(&q->line, ",\"resourceVersion\":");
			kinf_json_quote(&q->line, rv, strlen(rv));
		}
		if (initial) {
			kinf_buf_append_str(&q->line, ",\"initial\":true");
		}
		if (obj) {
			struct kinf_object *typed = session_printed(q->session, obj);
			size_t len;
			const char *json = kinf_object_json(typed ? typed : obj, &len);
			kinf_buf_append_str(&q->line, ",\"object\":");
			kinf_buf_append(&q->line, json, len);
			kinf_object_unref(typed);
		}
		kinf_buf_append_str(&q->line, "}\n");
		fwrite(q->line.data, 1, q->line.len, stdout);
	} else {
		cli_printf_safe(stdout, "%c %s", mark, key);
	}
	session_count(q->session);
}

static void watch_event(struct query *q, const struct kinf_informer_event *ev) {
	bool now = ev->type != KINF_INFORMER_DELETE && matches(q, ev->obj);
	bool before = ev->type == KINF_INFORMER_UPDATE ? matches(q, ev->old) :
		ev->type == KINF_INFORMER_DELETE ? matches(q, ev->obj) : false;
	if (!before && now) {
		print_change(q, '+', ev->key, ev->obj, ev->initial);
	} else if (before && !now) {
		print_change(q, '-', ev->key, ev->type == KINF_INFORMER_DELETE ? ev->obj : ev->obj, false);
	} else if (before && now && !ev->is_sync) {
		print_change(q, '~', ev->key, ev->obj, false);
	}
}

static int run_index(int argc, char **argv) {
	struct query q = {0};
	struct kinf_strv by_args = {0};
	struct kinf_error err = {0};
	int opt, status = EXIT_OK;

	cli_init(&q.cli, &cmd_index);
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":" CLI_COMMON_SHORT, index_options, NULL)) != -1) {
		int r;
		switch (opt) {
		case 'h':
			cli_print_help(&cmd_index);
			kinf_strv_release(&by_args);
			return EXIT_OK;
		case OPT_BY:
			kinf_strv_push_str(&by_args, optarg);
			q.so.keep_managed_fields |= strstr(optarg, "managedFields") != NULL;
			continue;
		case OPT_INDEX:
			q.so.keep_managed_fields |= strstr(optarg, "managedFields") != NULL;
			if (kinf_index_define(optarg, &q.custom_names, &q.custom_paths, &err) < 0) {
				status = cli_usage_error(&q.cli, "%s", err.message);
				goto out;
			}
			continue;
		case OPT_KEYS: q.keys = true; continue;
		case OPT_VALUES: q.values_index = optarg; continue;
		case OPT_IWATCH: q.watch = true; continue;
		case OPT_NO_PUSHDOWN: q.no_pushdown = true; continue;
		}
		r = session_option(&q.cli, &q.so, opt, optarg);
		if (r == 0) {
			r = cli_common_option(&q.cli, opt, optarg);
		}
		if (r < 0) {
			status = -r;
			goto out;
		}
		if (r == 0) {
			status = cli_bad_option(&q.cli, argc, argv, index_options);
			goto out;
		}
	}
	int n_pos = argc - optind;
	if (n_pos > 1) {
		status = cli_usage_error(&q.cli, "index takes one resource type");
		goto out;
	}
	if (!by_args.n && !q.values_index) {
		status = cli_usage_error(&q.cli, "index needs --by INDEX=VALUE or --values INDEX");
		goto out;
	}
	if (q.values_index && (by_args.n || q.keys || q.watch)) {
		status = cli_usage_error(&q.cli, "--values cannot be combined with --by, --keys or --watch");
		goto out;
	}
	q.by = calloc(by_args.n + 1, sizeof(*q.by));
	for (size_t i = 0; i < by_args.n; i++) {
		char *eq = strchr(by_args.v[i], '=');
		/* field:PATH may hold '[' but never '=' before the value. */
		if (eq) {
			*eq = '\0';
		}
		if (!by_args.v[i][0]) {
			status = cli_usage_error(&q.cli, "--by needs an index name before '='");
			goto out;
		}
		if (kinf_index_spec_resolve(by_args.v[i], &q.custom_names, &q.custom_paths,
				&q.by[i].spec, &err) < 0) {
			status = cli_usage_error(&q.cli, "--by: %s", err.message);
			goto out;
		}
		q.by[i].value = eq ? strdup(eq + 1) : NULL;
		q.n_by++;
	}
	if (q.values_index) {
		struct kinf_index_spec spec;
		if (kinf_index_spec_resolve(q.values_index, &q.custom_names, &q.custom_paths,
				&spec, &err) < 0) {
			status = cli_usage_error(&q.cli, "--values: %s", err.message);
			goto out;
		}
		kinf_index_spec_release(&spec);
	}
	if (!q.watch) {
		q.so.exit_after_sync = true;
		if (!q.no_pushdown && q.n_by) {
			q.so.pushdown = pushdown;
			q.so.pushdown_data = &q;
		}
	}
	q.so.one_informer = true;
	status = session_new(&q.cli, &q.so, n_pos > 0 ? argv[optind] : NULL, NULL, &q.session);
	if (status != EXIT_OK) {
		q.session = NULL;
		goto out;
	}
	struct kinf_indexer *idx = session_indexer(q.session);
	for (size_t i = 0; i < q.n_by && status == EXIT_OK; i++) {
		if (kinf_index_spec_install(&q.by[i].spec, idx, &err) < 0) {
			status = cli_error(&q.cli, -KINF_EINVAL, &err, NULL);
		}
	}
	if (q.values_index && status == EXIT_OK) {
		struct kinf_index_spec spec;
		kinf_index_spec_resolve(q.values_index, &q.custom_names, &q.custom_paths, &spec, &err);
		if (kinf_index_spec_install(&spec, idx, &err) < 0) {
			status = cli_error(&q.cli, -KINF_EINVAL, &err, NULL);
		}
		kinf_index_spec_release(&spec);
	}
	if (status == EXIT_OK && q.cli.serve && !q.watch) {
		status = ask_serve(&q);
		goto out;
	}
	if (status == EXIT_OK) {
		status = session_start(q.session);
	}
	while (status == EXIT_OK) {
		struct kinf_informer_batch batch;
		int r = session_next(q.session, &batch, NULL);
		if (r <= 0) {
			status = -r;
			break;
		}
		if (q.watch) {
			for (size_t i = 0; i < batch.n; i++) {
				watch_event(&q, &batch.v[i]);
			}
			if (ferror(stdout)) {
				kinf_informer_batch_release(&batch);
				break;
			}
			fflush(stdout);
		}
		kinf_informer_batch_release(&batch);
	}
	if (status == EXIT_OK && !q.watch) {
		status = answer(&q);
	}
out:
	status = session_end(q.session, status);
	for (size_t i = 0; i < q.n_by; i++) {
		kinf_index_spec_release(&q.by[i].spec);
		free(q.by[i].value);
	}
	free(q.by);
	kinf_strv_release(&by_args);
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
};
