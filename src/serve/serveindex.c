#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "indexfuncs.h"
#include "json.h"
#include "servefilter.h"
#include "serveindex.h"
#include "serverespond.h"
#include "servestream.h"

/*
 * kinf's own path beside the Kubernetes API, for `kinf index --server`:
 *
 *   GET [/clusters/NAME]/kinf/v1/index/api/v1/namespaces/NS/pods?by=node%3Dn1
 *
 * a collection path after /kinf/v1/index, answered from the collection's
 * store in time proportional to the answer:
 *   by=INDEX[=VALUE]	(repeatable, ANDed) the matching objects, as the
 *			collection's List sorted by key
 *   values=INDEX	INDEX's values with their counts, highest first
 *   labelSelector, fieldSelector	as for a list, ANDed
 * INDEX: namespace, node, owner, phase, label:KEY, field:PATH. An index
 * the store lacks is made on demand (at most MAX_QUERY_INDEXES per
 * collection; past that the candidates are scanned, with the same answer).
 */

#define MAX_QUERY_INDEXES 16
#define MAX_BY 16

struct crit {
	struct kinf_index_spec spec;
	char *value;		/* NULL: any value */
	bool indexed;		/* the store has the index */
};

/* Make spec's index in c's store if it may; whether the store has it. */
static bool ensure_index(struct serve_coll *c, const struct kinf_index_spec *spec) {
	if (kinf_indexer_has_index(c->store, spec->index_name)) {
		return true;
	}
	if (c->n_query_indexes >= MAX_QUERY_INDEXES ||
			kinf_index_spec_install(spec, c->store, NULL) < 0) {
		return false;
	}
	c->n_query_indexes++;
	return true;
}

static void bad_request(struct serve_request *r, const char *fmt, const char *arg,
		const char *detail) {
	struct kinf_buf msg = {0};
	struct kinf_apistatus_body st = {0};
	kinf_buf_putf(&msg, fmt, arg, detail ? detail : "");
	if (!kinf_buf_error(&msg)) {
		kinf_apistatus_bad_request(&st, msg.data);
	}
	serve_respond_status(r, &st);	/* the 500 "out of memory" when st is empty */
	kinf_buf_release(&msg);
	kinf_apistatus_body_release(&st);
}

/* Resolve INDEX (as --by and --values name them, without --index names). */
static int resolve(struct serve_request *r, const char *name, struct kinf_index_spec *ret) {
	struct kinf_error err = {0};
	if (kinf_index_spec_resolve(name, NULL, NULL, ret, &err) < 0) {
		bad_request(r, "index \"%s\": %s", name, err.message);
		return -KINF_EINVAL;
	}
	return 0;
}

/* 1, 0, or -KINF_ENOMEM. */
static int matches(const struct crit *by, size_t n, const struct serve_filter *f,
		const struct kinf_object *obj) {
	int m = serve_filter_match(f, obj);
	for (size_t i = 0; m > 0 && i < n; i++) {
		m = kinf_index_spec_match(&by[i].spec, by[i].value, obj);
	}
	return m;
}

/* The cache could not be read for r (rc < 0): out of memory, or a 500. */
static void respond_unread(struct serve_request *r, int rc) {
	struct kinf_apistatus_body st = {0};
	if (rc == -KINF_ENOMEM) {
		serve_respond_oom(r);
		return;
	}
	kinf_apistatus_internal(&st, "reading the cache failed");
	serve_respond_status(r, &st);
	kinf_apistatus_body_release(&st);
}

/*
 * The objects to check: the smallest index bucket among the criteria with
 * a value and the filter's equalities, else what the filter offers.
 */
static int candidates(struct serve_coll *c, const struct crit *by, size_t n,
		const struct serve_filter *f, struct kinf_object_list *ret) {
	size_t best = SIZE_MAX, best_n = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t count;
		if (by[i].value && by[i].indexed && kinf_indexer_index_count(c->store,
				by[i].spec.index_name, by[i].value, &count, NULL) == 0 &&
				count < best_n) {
			best = i;
			best_n = count;
		}
	}
	for (size_t i = 0; best != SIZE_MAX && i < f->n_idx; i++) {
		size_t count;
		if (kinf_indexer_index_count(c->store, f->idx[i].name, f->idx[i].value, &count,
				NULL) == 0 && count < best_n) {
			best = SIZE_MAX;	/* the filter's bucket is smaller */
		}
	}
	if (best != SIZE_MAX) {
		return kinf_indexer_by_index(c->store, by[best].spec.index_name, by[best].value,
				ret, NULL);
	}
	return serve_filter_candidates(c, f, ret);
}

static void answer_by(struct serve_request *r, struct serve_coll *c, const struct crit *by,
		size_t n, const struct serve_filter *f) {
	struct kinf_object_list objs = {0};
	struct serve_filter all = {0};
	char rv[24];
	int rc = candidates(c, by, n, f, &objs);
	if (rc < 0) {
		respond_unread(r, rc);
		return;
	}
	/* The matches alone (references), written as the client reads them. */
	size_t kept = 0;
	int m = 1;
	for (size_t i = 0; i < objs.n; i++) {
		if (m >= 0 && (m = matches(by, n, f, objs.v[i])) > 0) {
			objs.v[kept++] = objs.v[i];
		} else {
			kinf_object_unref(objs.v[i]);
		}
	}
	objs.n = kept;
	if (m < 0) {
		/* Never an answer with a match left out. */
		kinf_object_list_release(&objs);
		serve_respond_oom(r);
		return;
	}
	struct serve_snap *snap = serve_snap_wrap(c, &objs);
	if (!snap) {
		kinf_object_list_release(&objs);
		serve_respond_oom(r);
		return;
	}
	snprintf(rv, sizeof(rv), "%llu", c->rv);
	struct serve_list_spec spec = { .include = "Metadata", .rv = rv, .remaining = -1 };
	serve_list_stream(r, snap, 0, snap->objs.n, &all, &spec);
	serve_snap_unref(snap);
}

static int cmp_value(const void *a, const void *b) {
	const struct kinf_index_value *x = a, *y = b;
	if (x->count != y->count) {
		return x->count > y->count ? -1 : 1;
	}
	return strcmp(x->value, y->value);
}

/*
 * Count spec's values over the objects f selects, as kinf_indexer_values
 * does over a store holding only them: each object once per value.
 */
static int count_values(struct serve_coll *c, const struct kinf_index_spec *spec,
		const struct serve_filter *f, struct kinf_index_value **ret, size_t *ret_n) {
	struct kinf_object_list objs = {0};
	struct kinf_strv all = {0};
	struct kinf_index_value *v = NULL;
	size_t n = 0;
	int rc = serve_filter_candidates(c, f, &objs);

	for (size_t i = 0; rc == 0 && i < objs.n; i++) {
		struct kinf_strv one = {0};
		int m = serve_filter_match(f, objs.v[i]);
		if (m <= 0) {
			rc = m;
			continue;
		}
		rc = kinf_index_spec_values(spec, objs.v[i], &one);
		kinf_strv_sort_unique(&one);
		for (size_t j = 0; rc == 0 && j < one.n; j++) {
			rc = kinf_strv_push_str(&all, one.v[j]);
		}
		kinf_strv_release(&one);
	}
	/* Sorted, equal values are neighbours: one entry per run. */
	if (rc == 0 && all.n) {
		kinf_strv_sort(&all);
		v = calloc(all.n, sizeof(*v));
		rc = v ? 0 : -KINF_ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < all.n; i++) {
		if (n && strcmp(v[n - 1].value, all.v[i]) == 0) {
			v[n - 1].count++;
			continue;
		}
		if (!(v[n].value = strdup(all.v[i]))) {
			rc = -KINF_ENOMEM;
			break;
		}
		v[n++].count = 1;
	}
	if (rc == 0 && n) {
		qsort(v, n, sizeof(*v), cmp_value);
	}
	kinf_strv_release(&all);
	kinf_object_list_release(&objs);
	if (rc < 0) {
		kinf_index_values_free(v, n);
		return rc;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Whether f selects every object of c (no selector, no narrower namespace). */
static bool filter_is_all(const struct serve_coll *c, const struct serve_filter *f) {
	return !f->labels && !f->fields && (!f->namespace ||
			(c->namespaces.n == 1 && strcmp(c->namespaces.v[0], f->namespace) == 0));
}

static void answer_values(struct serve_request *r, struct serve_coll *c,
		const char *name, const struct serve_filter *f) {
	struct kinf_index_spec spec;
	struct kinf_index_value *vals = NULL;
	struct kinf_buf b = {0};
	size_t n = 0;
	int rc;

	if (resolve(r, name, &spec) < 0) {
		return;
	}
	/* Without a filter, the index's own counts: O(values). */
	if (filter_is_all(c, f) && ensure_index(c, &spec)) {
		rc = kinf_indexer_values(c->store, spec.index_name, &vals, &n, NULL);
	} else {
		rc = count_values(c, &spec, f, &vals, &n);
	}
	kinf_index_spec_release(&spec);
	if (rc < 0) {
		respond_unread(r, rc);
		return;
	}
	kinf_buf_putf(&b, "{\"kind\":\"IndexValueList\",\"apiVersion\":\"kinf.dev/v1\","
			"\"metadata\":{\"resourceVersion\":\"%llu\"},\"items\":[", c->rv);
	for (size_t i = 0; i < n; i++) {
		kinf_buf_puts(&b, i ? ",{\"value\":" : "{\"value\":");
		kinf_apistatus_put_quoted(&b, vals[i].value);
		kinf_buf_putf(&b, ",\"count\":%zu}", vals[i].count);
	}
	kinf_buf_puts(&b, "]}\n");
	serve_respond_buf(r, 200, "application/json", &b);
	kinf_index_values_free(vals, n);
	kinf_buf_release(&b);
}

void serve_index(struct serve_request *r, struct serve_coll *c) {
	const struct kinf_httpreq *h = r->head;
	struct crit by[MAX_BY];
	size_t n_by = 0;
	const char *values = NULL;
	struct serve_filter f;
	struct kinf_apistatus_body st = {0};
	bool filter = false;

	if (r->query.watch || r->path.name) {
		bad_request(r, "the kinf index path answers a collection (no %s%s)",
				r->query.watch ? "watch" : "name", NULL);
		return;
	}
	memset(by, 0, sizeof(by));
	for (size_t i = 0; i < h->n_params; i++) {
		const struct kinf_httpreq_param *p = &h->params[i];
		if (strcmp(p->name, "values") == 0) {
			values = p->value;
		} else if (strcmp(p->name, "by") == 0) {
			if (n_by == MAX_BY) {
				bad_request(r, "at most %s by parameters%s", "16", NULL);
				goto out;
			}
			char *name = strdup(p->value);
			char *eq = name ? strchr(name, '=') : NULL;
			if (eq) {
				*eq = '\0';
			}
			int rc = name ? resolve(r, name, &by[n_by].spec) : -KINF_ENOMEM;
			by[n_by].value = eq && rc == 0 ? strdup(eq + 1) : NULL;
			free(name);
			if (rc < 0) {
				if (rc == -KINF_ENOMEM) {
					kinf_apistatus_internal(&st, "out of memory");
					serve_respond_status(r, &st);
				}
				goto out;
			}
			by[n_by].indexed = ensure_index(c, &by[n_by].spec);
			n_by++;
		}
	}
	if (!values == !n_by) {
		bad_request(r, "the kinf index path takes %s%s", values ? "values or by, not both" :
				"by=INDEX[=VALUE] or values=INDEX", NULL);
		goto out;
	}
	if (serve_filter_init(c, c->namespaced ? r->path.namespace_ : NULL,
			r->query.label_selector, r->query.field_selector, &f, &st) < 0) {
		serve_respond_status(r, &st);
		goto out;
	}
	filter = true;
	c->lists++;
	if (values) {
		answer_values(r, c, values, &f);
	} else {
		answer_by(r, c, by, n_by, &f);
	}
out:
	if (filter) {
		serve_filter_release(&f);
	}
	for (size_t i = 0; i < n_by; i++) {
		kinf_index_spec_release(&by[i].spec);
		free(by[i].value);
	}
	kinf_apistatus_body_release(&st);
}
