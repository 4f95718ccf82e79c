/*
 * Unit tests for the Indexer (src/indexer.c). Most cases are tables: a
 * sequence of operations on a fresh indexer, each checked against the
 * expected key lists, index values or error, written as strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "indexer.h"
#include "object.h"
#include "tap.h"

/*
 * An object from "ns/name@rv k=v,k2=v2" (no "ns/": cluster-scoped; labels
 * optional). Values must not need JSON escaping.
 */
static struct kinf_object *mkobj(const char *spec) {
	struct kinf_buf json = {0};
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	char *copy = strdup(spec);
	char *labels = strchr(copy, ' ');
	char *rv, *name, *ns = NULL;

	if (labels) {
		*labels++ = '\0';
	}
	rv = strchr(copy, '@');
	if (rv) {
		*rv++ = '\0';
	}
	name = strchr(copy, '/');
	if (name) {
		*name++ = '\0';
		ns = copy;
	} else {
		name = copy;
	}
	must(kinf_buf_printf(&json, "{\"metadata\":{\"name\":\"%s\"", name));
	if (ns) {
		must(kinf_buf_printf(&json, ",\"namespace\":\"%s\"", ns));
	}
	if (rv) {
		must(kinf_buf_printf(&json, ",\"resourceVersion\":\"%s\"", rv));
	}
	if (labels && *labels) {
		const char *sep = "";
		must(kinf_buf_append_str(&json, ",\"labels\":{"));
		for (char *kv = strtok(labels, ","); kv; kv = strtok(NULL, ",")) {
			char *v = strchr(kv, '=');
			if (v) {
				*v++ = '\0';
			}
			must(kinf_buf_printf(&json, "%s\"%s\":\"%s\"", sep, kv, v ? v : ""));
			sep = ",";
		}
		must(kinf_buf_append_char(&json, '}'));
	}
	must(kinf_buf_append_str(&json, "}}"));
	if (kinf_object_parse(json.data, json.len, NULL, &obj, &err) < 0) {
		printf("# cannot parse %s: %s\n", json.data, err.message);
		abort();
	}
	kinf_buf_release(&json);
	free(copy);
	return obj;
}

/* Index functions used by the tables. */

/* "app": the app label, no value when absent. */
static int index_app(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	(void)userdata;
	const char *v = kinf_object_label(obj, "app");
	return v ? kinf_strv_push_str(ret, v) : 0;
}

/* "labels": every "k=v", each twice (duplicates must be harmless). */
static int index_labels(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	(void)userdata;
	size_t n;
	const struct kinf_label *l = kinf_object_labels(obj, &n);
	for (size_t i = 0; i < n; i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s=%s", l[i].key, l[i].value);
		for (int rep = 0; rep < 2; rep++) {
			int r = kinf_strv_push_str(ret, buf);
			if (r < 0) {
				return r;
			}
		}
	}
	return 0;
}

/* "strict": the app label, but an error for objects labelled bad. */
static int index_strict(const struct kinf_object *obj, struct kinf_strv *ret,
		void *userdata) {
	if (kinf_object_label(obj, "bad")) {
		return -KINF_EINVAL;
	}
	return index_app(obj, ret, userdata);
}

static int freed_userdata;
static void free_counter(void *p) {
	freed_userdata++;
	free(p);
}

static int add_named_index(struct kinf_indexer *idx, const char *name) {
	kinf_index_func fn = strcmp(name, "app") == 0 ? index_app :
		strcmp(name, "labels") == 0 ? index_labels :
		strcmp(name, "strict") == 0 ? index_strict : index_app;
	return kinf_indexer_add_index(idx, name, fn, malloc(1), free_counter);
}

/* Renderings of query results, compared as strings. */

static void show_objects(struct kinf_buf *out, const struct kinf_object_list *l) {
	for (size_t i = 0; i < l->n; i++) {
		must(kinf_buf_printf(out, "%s%s@%s", i ? " " : "",
				kinf_object_key(l->v[i]),
				kinf_object_resource_version(l->v[i])));
	}
}

static void show_keys(struct kinf_buf *out, const struct kinf_strv *sv) {
	for (size_t i = 0; i < sv->n; i++) {
		must(kinf_buf_printf(out, "%s%s", i ? " " : "", sv->v[i]));
	}
}

enum iop_kind {
	I_END,
	I_ADD,		/* a: object spec */
	I_DEL,		/* a: key */
	I_REPLACE,	/* a: object specs separated by ';' */
	I_ADD_INDEX,	/* a: index name; want: "0" or error name */
	I_LIST,		/* want: every object "key@rv", sorted */
	I_KEYS,		/* a: index, b: value; want: IndexKeys */
	I_BY_INDEX,	/* a: index, b: value; want: ByIndex "key@rv" */
	I_INDEX,	/* a: index, b: object spec; want: Index "key@rv" */
	I_VALUES,	/* a: index; want: "value:count ..." */
	I_COUNT,	/* a: index, b: value; want: count */
	I_GET,		/* a: key; want: "key@rv" or "(null)" */
};

struct iop {
	enum iop_kind kind;
	const char *a;
	const char *b;
	const char *want;
};

struct icase {
	const char *name;
	struct iop ops[24];
};

static const char *err_name(int r) {
	switch (r) {
	case 0:
		return "0";
	case -KINF_EEXISTS:
		return "EEXISTS";
	case -KINF_ENOTFOUND:
		return "ENOTFOUND";
	case -KINF_EINVAL:
		return "EINVAL";
	}
	return "other";
}

static const struct icase icases[] = {
	{ "namespace index, cluster-scoped objects under \"\"", {
		{ I_ADD, "ns1/b@1", NULL, "0" },
		{ I_ADD, "ns2/c@1", NULL, "0" },
		{ I_ADD, "ns1/a@1", NULL, "0" },
		{ I_ADD, "node1@1", NULL, "0" },
		{ I_KEYS, "namespace", "ns1", "ns1/a ns1/b" },
		{ I_BY_INDEX, "namespace", "ns1", "ns1/a@1 ns1/b@1" },
		{ I_KEYS, "namespace", "", "node1" },
		{ I_KEYS, "namespace", "ns3", "" },
		{ I_VALUES, "namespace", NULL, "ns1:2 :1 ns2:1" },
		{ I_COUNT, "namespace", "ns1", "2" },
		{ I_COUNT, "namespace", "none", "0" },
		{ I_LIST, NULL, NULL, "node1@1 ns1/a@1 ns1/b@1 ns2/c@1" },
		{ I_END },
	} },
	{ "add of an existing key updates in place", {
		{ I_ADD, "ns/a@1", NULL, "0" },
		{ I_ADD, "ns/a@2", NULL, "0" },
		{ I_LIST, NULL, NULL, "ns/a@2" },
		{ I_BY_INDEX, "namespace", "ns", "ns/a@2" },
		{ I_GET, "ns/a", NULL, "ns/a@2" },
		{ I_GET, "ns/zz", NULL, "(null)" },
		{ I_END },
	} },
	{ "update moves a key between values and drops the empty set", {
		{ I_ADD_INDEX, "app", NULL, "0" },
		{ I_ADD, "ns/a@1 app=web", NULL, "0" },
		{ I_ADD, "ns/b@1 app=web", NULL, "0" },
		{ I_VALUES, "app", NULL, "web:2" },
		{ I_ADD, "ns/a@2 app=db", NULL, "0" },
		{ I_KEYS, "app", "web", "ns/b" },
		{ I_KEYS, "app", "db", "ns/a" },
		{ I_ADD, "ns/b@2 app=db", NULL, "0" },
		{ I_VALUES, "app", NULL, "db:2" },
		{ I_KEYS, "app", "web", "" },
		{ I_ADD, "ns/b@3", NULL, "0" },
		{ I_VALUES, "app", NULL, "db:1" },
		{ I_ADD, "ns/a@3 app=db", NULL, "0" },
		{ I_BY_INDEX, "app", "db", "ns/a@3" },
		{ I_END },
	} },
	{ "delete removes every value; deleting an absent key is fine", {
		{ I_ADD_INDEX, "labels", NULL, "0" },
		{ I_ADD, "ns/a@1 app=web,tier=fe", NULL, "0" },
		{ I_ADD, "ns/b@1 app=web", NULL, "0" },
		{ I_VALUES, "labels", NULL, "app=web:2 tier=fe:1" },
		{ I_DEL, "ns/a", NULL, "0" },
		{ I_VALUES, "labels", NULL, "app=web:1" },
		{ I_VALUES, "namespace", NULL, "ns:1" },
		{ I_DEL, "ns/a", NULL, "0" },
		{ I_DEL, "ns/b", NULL, "0" },
		{ I_VALUES, "labels", NULL, "" },
		{ I_VALUES, "namespace", NULL, "" },
		{ I_LIST, NULL, NULL, "" },
		{ I_END },
	} },
	{ "multi-valued index: partial overlap on update", {
		{ I_ADD_INDEX, "labels", NULL, "0" },
		{ I_ADD, "ns/a@1 app=web,tier=fe,x=1", NULL, "0" },
		{ I_ADD, "ns/a@2 app=web,tier=be", NULL, "0" },
		{ I_VALUES, "labels", NULL, "app=web:1 tier=be:1" },
		{ I_ADD, "ns/c@1 tier=be", NULL, "0" },
		{ I_KEYS, "labels", "tier=be", "ns/a ns/c" },
		{ I_INDEX, "labels", "q/x app=web,tier=be", "ns/a@2 ns/c@1" },
		{ I_INDEX, "labels", "q/x app=web", "ns/a@2" },
		{ I_INDEX, "labels", "q/x", "" },
		{ I_END },
	} },
	{ "add_index on a populated indexer indexes existing objects", {
		{ I_ADD, "ns/c@1 app=db", NULL, "0" },
		{ I_ADD, "ns/a@1 app=web", NULL, "0" },
		{ I_ADD, "ns/b@1 app=web", NULL, "0" },
		{ I_ADD, "ns/d@1", NULL, "0" },
		{ I_ADD_INDEX, "app", NULL, "0" },
		{ I_VALUES, "app", NULL, "web:2 db:1" },
		{ I_BY_INDEX, "app", "web", "ns/a@1 ns/b@1" },
		{ I_ADD_INDEX, "app", NULL, "EEXISTS" },
		{ I_ADD_INDEX, "namespace", NULL, "EEXISTS" },
		{ I_VALUES, "app", NULL, "web:2 db:1" },
		{ I_END },
	} },
	{ "unknown index", {
		{ I_ADD, "ns/a@1", NULL, "0" },
		{ I_KEYS, "nope", "x", "ENOTFOUND" },
		{ I_BY_INDEX, "nope", "x", "ENOTFOUND" },
		{ I_INDEX, "nope", "ns/a", "ENOTFOUND" },
		{ I_VALUES, "nope", NULL, "ENOTFOUND" },
		{ I_COUNT, "nope", "x", "ENOTFOUND" },
		{ I_END },
	} },
	{ "replace rebuilds every index", {
		{ I_ADD_INDEX, "app", NULL, "0" },
		{ I_ADD, "ns/a@1 app=web", NULL, "0" },
		{ I_ADD, "ns/b@1 app=web", NULL, "0" },
		{ I_REPLACE, "other/c@5 app=db;ns/b@6 app=db;ns/z@7", NULL, "0" },
		{ I_LIST, NULL, NULL, "ns/b@6 ns/z@7 other/c@5" },
		{ I_VALUES, "app", NULL, "db:2" },
		{ I_VALUES, "namespace", NULL, "ns:2 other:1" },
		{ I_GET, "ns/a", NULL, "(null)" },
		{ I_REPLACE, "ns/b@8;ns/b@9 app=x", NULL, "0" },
		{ I_LIST, NULL, NULL, "ns/b@9" },
		{ I_VALUES, "app", NULL, "x:1" },
		{ I_REPLACE, "", NULL, "0" },
		{ I_LIST, NULL, NULL, "" },
		{ I_VALUES, "app", NULL, "" },
		{ I_VALUES, "namespace", NULL, "" },
		{ I_END },
	} },
	{ "an index function error fails the add and changes nothing", {
		{ I_ADD_INDEX, "strict", NULL, "0" },
		{ I_ADD_INDEX, "labels", NULL, "0" },
		{ I_ADD, "ns/a@1 app=web", NULL, "0" },
		{ I_ADD, "ns/a@2 app=db,bad=1", NULL, "EINVAL" },
		{ I_ADD, "ns/b@1 bad=1", NULL, "EINVAL" },
		{ I_LIST, NULL, NULL, "ns/a@1" },
		{ I_VALUES, "strict", NULL, "web:1" },
		{ I_VALUES, "labels", NULL, "app=web:1" },
		{ I_REPLACE, "ns/c@1;ns/d@1 bad=1", NULL, "EINVAL" },
		{ I_LIST, NULL, NULL, "ns/a@1" },
		{ I_VALUES, "namespace", NULL, "ns:1" },
		{ I_END },
	} },
	{ "add_index failing on existing objects leaves no index", {
		{ I_ADD, "ns/a@1 app=web", NULL, "0" },
		{ I_ADD, "ns/b@1 bad=1", NULL, "0" },
		{ I_ADD_INDEX, "strict", NULL, "EINVAL" },
		{ I_VALUES, "strict", NULL, "ENOTFOUND" },
		{ I_DEL, "ns/b", NULL, "0" },
		{ I_ADD_INDEX, "strict", NULL, "0" },
		{ I_VALUES, "strict", NULL, "web:1" },
		{ I_END },
	} },
	{ "sorted outputs and values ordered by count then value", {
		{ I_ADD_INDEX, "app", NULL, "0" },
		{ I_ADD, "z/9@1 app=b", NULL, "0" },
		{ I_ADD, "z/10@1 app=b", NULL, "0" },
		{ I_ADD, "a/x@1 app=c", NULL, "0" },
		{ I_ADD, "m/q@1 app=a", NULL, "0" },
		{ I_ADD, "m/p@1 app=c", NULL, "0" },
		{ I_ADD, "b/b@1 app=d", NULL, "0" },
		{ I_LIST, NULL, NULL, "a/x@1 b/b@1 m/p@1 m/q@1 z/10@1 z/9@1" },
		{ I_VALUES, "app", NULL, "b:2 c:2 a:1 d:1" },
		{ I_KEYS, "app", "c", "a/x m/p" },
		{ I_VALUES, "namespace", NULL, "m:2 z:2 a:1 b:1" },
		{ I_END },
	} },
};

static void run_icase(const struct icase *c) {
	struct kinf_indexer *idx = kinf_indexer_new();
	struct kinf_buf got = {0};
	int failures_before = tap_failed;

	if (!idx) {
		ok(0, "%s: kinf_indexer_new", c->name);
		return;
	}
	for (size_t i = 0; c->ops[i].kind != I_END; i++) {
		const struct iop *op = &c->ops[i];
		struct kinf_error err = {0};
		struct kinf_object_list list = {0};
		struct kinf_strv sv = {0};
		struct kinf_index_value *vals = NULL;
		size_t nvals = 0, count = 0;
		struct kinf_object *obj = NULL;
		int r = 0;

		kinf_buf_reset(&got);
		must(kinf_buf_append_str(&got, ""));
		switch (op->kind) {
		case I_END:
			break;
		case I_ADD:
			obj = mkobj(op->a);
			r = kinf_indexer_update(idx, obj);
			must(kinf_buf_append_str(&got, err_name(r)));
			break;
		case I_DEL:
			r = kinf_indexer_delete(idx, op->a);
			must(kinf_buf_append_str(&got, err_name(r)));
			break;
		case I_REPLACE: {
			struct kinf_object *objs[16];
			size_t n = 0;
			char *specs = strdup(op->a), *save = NULL;
			for (char *s = strtok_r(specs, ";", &save); s;
					s = strtok_r(NULL, ";", &save)) {
				objs[n++] = mkobj(s);
			}
			r = kinf_indexer_replace(idx, objs, n);
			for (size_t k = 0; k < n; k++) {
				kinf_object_unref(objs[k]);
			}
			free(specs);
			must(kinf_buf_append_str(&got, err_name(r)));
			break;
		}
		case I_ADD_INDEX:
			r = add_named_index(idx, op->a);
			must(kinf_buf_append_str(&got, err_name(r)));
			break;
		case I_LIST:
			r = kinf_indexer_list(idx, &list);
			show_objects(&got, &list);
			break;
		case I_KEYS:
			r = kinf_indexer_index_keys(idx, op->a, op->b, &sv, &err);
			show_keys(&got, &sv);
			break;
		case I_BY_INDEX:
			r = kinf_indexer_by_index(idx, op->a, op->b, &list, &err);
			show_objects(&got, &list);
			break;
		case I_INDEX:
			obj = mkobj(op->b);
			r = kinf_indexer_index(idx, op->a, obj, &list, &err);
			show_objects(&got, &list);
			break;
		case I_VALUES:
			r = kinf_indexer_values(idx, op->a, &vals, &nvals, &err);
			for (size_t k = 0; r == 0 && k < nvals; k++) {
				must(kinf_buf_printf(&got, "%s%s:%zu", k ? " " : "",
						vals[k].value, vals[k].count));
			}
			kinf_index_values_free(vals, nvals);
			break;
		case I_COUNT:
			r = kinf_indexer_index_count(idx, op->a, op->b, &count, &err);
			if (r == 0) {
				must(kinf_buf_printf(&got, "%zu", count));
			}
			break;
		case I_GET:
			obj = kinf_indexer_get(idx, op->a);
			if (obj) {
				must(kinf_buf_printf(&got, "%s@%s", kinf_object_key(obj),
						kinf_object_resource_version(obj)));
			} else {
				must(kinf_buf_append_str(&got, "(null)"));
			}
			break;
		}
		if (r < 0 && op->kind >= I_LIST) {
			kinf_buf_reset(&got);
			must(kinf_buf_append_str(&got, err_name(r)));
			if (r == -KINF_ENOTFOUND) {
				char want[128];
				snprintf(want, sizeof(want),
						"index with name %s does not exist", op->a);
				is_str(err.message, want, "%s: op %zu error message",
						c->name, i);
			}
		}
		is_str(got.data, op->want, "%s: op %zu", c->name, i);
		kinf_object_list_release(&list);
		kinf_strv_release(&sv);
		kinf_object_unref(obj);
	}
	freed_userdata = 0;
	kinf_indexer_free(idx);
	kinf_buf_release(&got);
	if (tap_failed != failures_before) {
		printf("# case failed: %s\n", c->name);
	}
}

/* The userdata of added indexes is freed with the indexer and on failure. */
static void test_userdata(void) {
	struct kinf_indexer *idx = kinf_indexer_new();

	freed_userdata = 0;
	is_int(add_named_index(idx, "app"), 0, "add app index");
	is_int(freed_userdata, 0, "userdata kept while the index lives");
	is_int(add_named_index(idx, "app"), -KINF_EEXISTS, "conflict");
	is_int(freed_userdata, 1, "userdata of the refused index freed");
	ok(kinf_indexer_has_index(idx, "app"), "has_index app");
	ok(kinf_indexer_has_index(idx, KINF_INDEX_NAMESPACE), "has namespace");
	ok(!kinf_indexer_has_index(idx, "nope"), "no index nope");
	kinf_indexer_free(idx);
	is_int(freed_userdata, 2, "userdata freed with the indexer");
	kinf_indexer_free(NULL);
}

/* A bucket growing past the small-array form and shrinking back. */
static void test_big_bucket(void) {
	struct kinf_indexer *idx = kinf_indexer_new();
	struct kinf_strv keys = {0};
	struct kinf_error err = {0};
	size_t count = 99;
	char spec[64];
	int bad = 0;

	add_named_index(idx, "app");
	for (int i = 0; i < 200; i++) {
		snprintf(spec, sizeof(spec), "ns/p%03d@1 app=%s", i,
				i % 2 ? "odd" : "even");
		struct kinf_object *o = mkobj(spec);
		bad += kinf_indexer_add(idx, o) != 0;
		kinf_object_unref(o);
	}
	is_int(bad, 0, "200 adds");
	must(kinf_indexer_index_count(idx, "app", "odd", &count, &err));
	is_int(count, 100, "100 odd");
	/* Move all but three odd ones to even, one at a time. */
	for (int i = 1; i < 200 - 6; i += 2) {
		snprintf(spec, sizeof(spec), "ns/p%03d@2 app=even", i);
		struct kinf_object *o = mkobj(spec);
		bad += kinf_indexer_update(idx, o) != 0;
		kinf_object_unref(o);
	}
	is_int(bad, 0, "97 updates");
	must(kinf_indexer_index_keys(idx, "app", "odd", &keys, &err));
	is_int(keys.n, 3, "3 odd left");
	if (keys.n == 3) {
		is_str(keys.v[0], "ns/p195", "odd sorted 0");
		is_str(keys.v[2], "ns/p199", "odd sorted 2");
	}
	kinf_strv_release(&keys);
	must(kinf_indexer_index_count(idx, "app", "even", &count, &err));
	is_int(count, 197, "197 even");
	for (int i = 0; i < 200; i++) {
		snprintf(spec, sizeof(spec), "ns/p%03d", i);
		if (i != 42) {
			must(kinf_indexer_delete(idx, spec));
		}
	}
	must(kinf_indexer_index_keys(idx, "app", "even", &keys, &err));
	is_int(keys.n, 1, "one even left after deletes");
	if (keys.n == 1) {
		is_str(keys.v[0], "ns/p042", "the survivor");
	}
	kinf_strv_release(&keys);
	must(kinf_indexer_index_count(idx, "app", "odd", &count, &err));
	is_int(count, 0, "odd bucket gone");
	is_int(kinf_indexer_len(idx), 1, "len 1");
	kinf_indexer_free(idx);
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * 100,000 pods in 10 namespaces: add, update half to another app value,
 * delete all. Checks the counts at each step and that nothing is left.
 */
static void test_scale(void) {
	enum { N = 100000, NS = 10, APPS = 50 };
	struct kinf_indexer *idx = kinf_indexer_new();
	struct kinf_index_value *vals = NULL;
	struct kinf_error err = {0};
	size_t nvals = 0, count = 0;
	char spec[96];
	int bad = 0;
	double t0 = now_s();

	add_named_index(idx, "app");
	for (int i = 0; i < N; i++) {
		snprintf(spec, sizeof(spec), "ns%d/pod-%06d@1 app=a%d",
				i % NS, i, i % APPS);
		struct kinf_object *o = mkobj(spec);
		bad += kinf_indexer_add(idx, o) != 0;
		kinf_object_unref(o);
	}
	double t1 = now_s();
	is_int(bad, 0, "100k adds");
	is_int(kinf_indexer_len(idx), N, "len 100k");
	must(kinf_indexer_values(idx, "namespace", &vals, &nvals, &err));
	is_int(nvals, NS, "10 namespaces");
	bad = 0;
	for (size_t k = 0; k < nvals; k++) {
		bad += vals[k].count != N / NS;
	}
	is_int(bad, 0, "10000 pods per namespace");
	kinf_index_values_free(vals, nvals);

	/* Even pods move to app "moved"; odd pods get a new RV only. */
	for (int i = 0; i < N; i++) {
		if (i % 2 == 0) {
			snprintf(spec, sizeof(spec), "ns%d/pod-%06d@2 app=moved",
					i % NS, i);
		} else {
			snprintf(spec, sizeof(spec), "ns%d/pod-%06d@2 app=a%d",
					i % NS, i, i % APPS);
		}
		struct kinf_object *o = mkobj(spec);
		bad += kinf_indexer_update(idx, o) != 0;
		kinf_object_unref(o);
	}
	double t2 = now_s();
	is_int(bad, 0, "100k updates");
	must(kinf_indexer_index_count(idx, "app", "moved", &count, &err));
	is_int(count, N / 2, "50k moved");
	must(kinf_indexer_values(idx, "app", &vals, &nvals, &err));
	is_int(nvals, 1 + APPS / 2, "even app values emptied and dropped");
	if (nvals > 1) {
		is_str(vals[0].value, "moved", "biggest value first");
		is_int(vals[1].count, N / APPS, "odd app values keep their pods");
	}
	kinf_index_values_free(vals, nvals);
	struct kinf_object *o = kinf_indexer_get(idx, "ns7/pod-012347");
	is_str(o ? kinf_object_resource_version(o) : NULL, "2", "get after update");
	kinf_object_unref(o);

	for (int i = 0; i < N; i++) {
		snprintf(spec, sizeof(spec), "ns%d/pod-%06d", i % NS, i);
		bad += kinf_indexer_delete(idx, spec) != 0;
	}
	double t3 = now_s();
	is_int(bad, 0, "100k deletes");
	is_int(kinf_indexer_len(idx), 0, "empty");
	must(kinf_indexer_values(idx, "namespace", &vals, &nvals, &err));
	is_int(nvals, 0, "no namespace values left");
	kinf_index_values_free(vals, nvals);
	must(kinf_indexer_values(idx, "app", &vals, &nvals, &err));
	is_int(nvals, 0, "no app values left");
	kinf_index_values_free(vals, nvals);
	printf("# 100k: add %.3fs, update %.3fs, delete %.3fs (incl. parsing)\n",
			t1 - t0, t2 - t1, t3 - t2);
	kinf_indexer_free(idx);
}

int main(void) {
	for (size_t i = 0; i < sizeof(icases) / sizeof(icases[0]); i++) {
		run_icase(&icases[i]);
	}
	test_userdata();
	test_big_bucket();
	test_scale();
	return tap_done();
}
