/*
 * kinf's columns for a kind against the Tables a real kube-apiserver
 * (v1.28.7) printed for the same objects (test/fixtures/kindcols, made by
 * its capture.py): the column definitions, every row's cells and
 * conditions byte for byte, the same cells as kubectl prints them with and
 * without -o wide; a custom resource's columns from its CRD; and by hand
 * what that server could not show (sidecar containers), HumanDuration's
 * forms and bad CRDs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "http.h"
#include "json.h"
#include "kindcols.h"
#include "kubeconfig.h"
#include "list.h"
#include "object.h"
#include "rfc3339.h"
#include "table.h"
#include "tap.h"
#include "testserver.h"

#define FIXTURE "../fixtures/kindcols/tables.jsonl"

static struct kinf_object *parse(const char *json, size_t len) {
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	if (kinf_object_parse(json, len, NULL, &obj, &err) < 0) {
		printf("# parse failed: %s\n", err.message);
	}
	return obj;
}

/* The raw bytes of member key of the object at json (len bytes); false when it has none. */
static bool member(const char *json, size_t len, const char *key, const char **ret,
		size_t *ret_len) {
	struct kinf_json_reader rd;
	struct kinf_json_span k;
	kinf_json_reader_init(&rd, json, len, 0);
	if (kinf_json_object_begin(&rd) < 0) {
		return false;
	}
	while (kinf_json_member(&rd, &k) == 1) {
		if (kinf_json_span_eq(&k, key)) {
			return kinf_json_skip_span(&rd, ret, ret_len) == 0;
		}
		if (kinf_json_skip(&rd) < 0) {
			return false;
		}
	}
	return false;
}

/* A string member, copied (NULL when it has none). */
static char *member_str(const char *json, size_t len, const char *key) {
	const char *v;
	size_t n;
	if (!member(json, len, key, &v, &n) || n < 2 || v[0] != '"') {
		return NULL;
	}
	return strndup(v + 1, n - 2);
}

/* The elements of the array at json, as spans. */
struct spans {
	const char **v;
	size_t *len;
	size_t n;
};

static void elements(const char *json, size_t len, struct spans *ret) {
	struct kinf_json_reader rd;
	memset(ret, 0, sizeof(*ret));
	kinf_json_reader_init(&rd, json, len, 0);
	if (kinf_json_array_begin(&rd) < 0) {
		return;
	}
	while (kinf_json_element(&rd) == 1) {
		ret->v = realloc(ret->v, (ret->n + 1) * sizeof(*ret->v));
		ret->len = realloc(ret->len, (ret->n + 1) * sizeof(*ret->len));
		if (!ret->v || !ret->len || kinf_json_skip_span(&rd, &ret->v[ret->n],
				&ret->len[ret->n]) < 0) {
			printf("Bail out! cannot read the fixture's rows\n");
			exit(1);
		}
		ret->n++;
	}
}

static void spans_release(struct spans *s) {
	free(s->v);
	free(s->len);
}

/* One captured Table: a line of the fixture. */
struct capture {
	char *group, *version, *resource;
	struct timespec now;
	const char *columns, *rows;
	size_t columns_len, rows_len;
};

static int read_fixture(char **ret_text, struct capture **ret, size_t *ret_n) {
	FILE *f = fopen(FIXTURE, "r");
	struct kinf_buf text = {0};
	char chunk[65536];
	size_t n;
	if (!f) {
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		must(kinf_buf_append(&text, chunk, n));
	}
	fclose(f);
	struct capture *caps = NULL;
	size_t n_caps = 0;
	for (char *line = text.data, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl) {
			break;
		}
		size_t len = (size_t)(nl - line);
		const char *table;
		size_t table_len;
		char *now;
		caps = realloc(caps, (n_caps + 1) * sizeof(*caps));
		struct capture *c = &caps[n_caps++];
		memset(c, 0, sizeof(*c));
		c->group = member_str(line, len, "group");
		c->version = member_str(line, len, "version");
		c->resource = member_str(line, len, "resource");
		now = member_str(line, len, "now");
		if (!now || kinf_rfc3339_parse(now, &c->now) < 0 ||
				!member(line, len, "table", &table, &table_len) ||
				!member(table, table_len, "columnDefinitions", &c->columns,
					&c->columns_len) ||
				!member(table, table_len, "rows", &c->rows, &c->rows_len)) {
			printf("Bail out! line %zu of %s is not a capture\n", n_caps, FIXTURE);
			exit(1);
		}
		free(now);
	}
	*ret_text = kinf_buf_take(&text);
	*ret = caps;
	*ret_n = n_caps;
	return 0;
}

/* The printer of a custom resource's CRD, from the capture of the CRDs. */
static struct kinf_kindcols *crd_printer(const struct capture *caps, size_t n,
		const char *group, const char *version) {
	for (size_t i = 0; i < n; i++) {
		struct spans rows;
		if (strcmp(caps[i].resource, "customresourcedefinitions") != 0) {
			continue;
		}
		elements(caps[i].rows, caps[i].rows_len, &rows);
		for (size_t r = 0; r < rows.n; r++) {
			const char *obj, *spec;
			size_t obj_len, spec_len;
			char *g = NULL;
			struct kinf_kindcols *k = NULL;
			struct kinf_error err = {0};
			if (member(rows.v[r], rows.len[r], "object", &obj, &obj_len) &&
					member(obj, obj_len, "spec", &spec, &spec_len) &&
					(g = member_str(spec, spec_len, "group")) &&
					strcmp(g, group) == 0 &&
					kinf_kindcols_from_crd(obj, obj_len, version, &k,
						&err) < 0) {
				printf("# %s\n", err.message);
			}
			free(g);
			if (k) {
				spans_release(&rows);
				return k;
			}
		}
		spans_release(&rows);
	}
	return NULL;
}

/* A table rendered the way kubectl renders one (kinf_table_print_server), as text. */
static char *render_server(const struct capture *c, const struct spans *rows, bool wide) {
	struct kinf_list_row *lr = calloc(rows->n + 1, sizeof(*lr));
	char *cols = strndup(c->columns, c->columns_len), *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	for (size_t r = 0; r < rows->n; r++) {
		const char *cells;
		size_t len;
		struct kinf_buf b = {0};
		member(rows->v[r], rows->len[r], "cells", &cells, &len);
		kinf_buf_puts(&b, "{\"cells\":");
		kinf_buf_put(&b, cells, len);
		kinf_buf_putc(&b, '}');
		lr[r].key = (char *)"ns/name";
		lr[r].len = b.len;
		lr[r].json = kinf_buf_take(&b);
	}
	struct kinf_table_server_opts o = { .wide = wide };
	struct kinf_error err = {0};
	if (kinf_table_print_server(out, cols, lr, rows->n, &o, &err) < 0) {
		printf("# %s\n", err.message);
	}
	fclose(out);
	for (size_t r = 0; r < rows->n; r++) {
		free(lr[r].json);
	}
	free(lr);
	free(cols);
	return text;
}

/* The same table from kinf_kindcols_headers() and kinf_kindcols_cells(). */
static char *render_local(const struct kinf_kindcols *k, const struct capture *c,
		struct kinf_object **objs, size_t n, bool wide) {
	struct kinf_strv cells = {0};
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	must(kinf_kindcols_headers(k, wide, &cells));
	struct kinf_table *t = kinf_table_new(cells.n);
	must(kinf_table_add_row(t, (const char *const *)cells.v));
	for (size_t r = 0; r < n; r++) {
		kinf_strv_reset(&cells);
		if (objs[r]) {
			must(kinf_kindcols_cells(k, objs[r], wide, &c->now, &cells, NULL));
			must(kinf_table_add_row(t, (const char *const *)cells.v));
		}
	}
	/* kubectl prints no header above no rows: neither does print_server */
	if (n) {
		must(kinf_table_print(t, out));
	}
	fclose(out);
	kinf_table_free(t);
	kinf_strv_release(&cells);
	return text;
}

static void check_capture(const struct capture *caps, size_t n_caps, const struct capture *c,
		size_t *n_kinds) {
	struct spans rows;
	const char *kind = NULL;
	struct kinf_kindcols *own = NULL;
	const struct kinf_kindcols *k;
	elements(c->rows, c->rows_len, &rows);
	struct kinf_object **objs = calloc(rows.n + 1, sizeof(*objs));
	for (size_t r = 0; r < rows.n; r++) {
		const char *obj;
		size_t len;
		if (member(rows.v[r], rows.len[r], "object", &obj, &len)) {
			objs[r] = parse(obj, len);
		}
	}
	if (rows.n == 0 || !objs[0]) {
		ok(0, "%s/%s: the capture has rows with objects", c->group, c->resource);
		goto out;
	}
	kind = kinf_object_kind(objs[0]);
	if (kinf_kindcols_is_builtin(c->group, kind)) {
		k = kinf_kindcols_for(c->group, kind);
		(*n_kinds)++;
	} else {
		k = own = crd_printer(caps, n_caps, c->group, c->version);
		if (!ok(k, "%s %s/%s: a printer from its CRD", kind, c->group, c->version)) {
			goto out;
		}
	}

	struct kinf_buf got = {0};
	must(kinf_kindcols_columns_json(k, &got));
	bool same = got.len == c->columns_len && memcmp(got.data, c->columns, got.len) == 0;
	if (!ok(same, "%s %s: columnDefinitions as the apiserver's", kind, c->version)) {
		printf("#   got:  %s\n#   want: %.*s\n", got.data, (int)c->columns_len, c->columns);
	}
	for (size_t r = 0; r < rows.n; r++) {
		const char *cells, *conds;
		size_t cells_len, conds_len;
		struct kinf_buf want = {0};
		struct kinf_error err = {0};
		member(rows.v[r], rows.len[r], "cells", &cells, &cells_len);
		kinf_buf_puts(&want, "\"cells\":");
		kinf_buf_put(&want, cells, cells_len);
		if (member(rows.v[r], rows.len[r], "conditions", &conds, &conds_len)) {
			kinf_buf_puts(&want, ",\"conditions\":");
			kinf_buf_put(&want, conds, conds_len);
		}
		kinf_buf_reset(&got);
		int rc = objs[r] ? kinf_kindcols_row_json(k, objs[r], &c->now, &got, &err) : -1;
		is_str(rc == 0 ? got.data : err.message, want.data, "%s %s \"%s\": the row",
				kind, c->version, objs[r] ? kinf_object_name(objs[r]) : "?");
		kinf_buf_release(&want);
	}
	kinf_buf_release(&got);
	for (int wide = 0; wide <= 1; wide++) {
		char *server = render_server(c, &rows, wide);
		char *local = render_local(k, c, objs, rows.n, wide);
		if (!ok(server && local && strcmp(server, local) == 0,
				"%s %s%s: printed as kubectl prints the apiserver's Table", kind,
				c->version, wide ? " -o wide" : "")) {
			printf("# kubectl:\n%s# kinf:\n%s", server, local);
		}
		free(server);
		free(local);
	}
out:
	for (size_t r = 0; r < rows.n; r++) {
		kinf_object_unref(objs[r]);
	}
	free(objs);
	kinf_kindcols_unref(own);
	spans_release(&rows);
}

static void test_fixtures(void) {
	struct capture *caps = NULL;
	size_t n = 0, n_kinds = 0;
	char *text = NULL;
	if (read_fixture(&text, &caps, &n) < 0) {
		ok(0, "%s can be read", FIXTURE);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		check_capture(caps, n, &caps[i], &n_kinds);
	}
	/* Not vacuous: the kinds the brief lists are all in the capture. */
	ok(n_kinds >= 47, "%zu built-in kinds captured", n_kinds);
	for (size_t i = 0; i < n; i++) {
		free(caps[i].group);
		free(caps[i].version);
		free(caps[i].resource);
	}
	free(caps);
	free(text);
}

/* The cells of kind (in group) for json, joined with '|', as kubectl prints them. */
static char *text_cells(const char *group, const char *kind, const char *json, bool wide) {
	const struct kinf_kindcols *k = kinf_kindcols_for(group, kind);
	struct kinf_object *obj = json ? parse(json, strlen(json)) : NULL;
	struct kinf_strv sv = {0};
	struct kinf_buf b = {0};
	struct timespec now = { .tv_sec = 1767225600 };	/* 2026-01-01T00:00:00Z */
	int rc = obj ? kinf_kindcols_cells(k, obj, wide, &now, &sv, NULL) :
		json ? -1 : kinf_kindcols_headers(k, wide, &sv);
	for (size_t i = 0; rc == 0 && i < sv.n; i++) {
		must(kinf_buf_printf(&b, "%s%s", i ? "|" : "", sv.v[i]));
	}
	kinf_strv_release(&sv);
	kinf_object_unref(obj);
	return rc < 0 ? NULL : b.data ? kinf_buf_take(&b) : strdup("");
}

static void test_human_duration(void) {
	static const struct {
		long long s;
		const char *want;
	} cases[] = {
		/* apimachinery duration_test.go TestHumanDuration, and the edges */
		{ 1, "1s" }, { 70, "70s" }, { 190, "3m10s" }, { 70 * 60, "70m" },
		{ 47 * 3600, "47h" }, { 49 * 3600, "2d1h" }, { (8 * 24 + 2) * 3600LL, "8d" },
		{ 367 * 24 * 3600LL, "367d" }, { (365 * 2 * 24 + 25) * 3600LL, "2y1d" },
		{ (365 * 8 * 24 + 2) * 3600LL, "8y" },
		{ 0, "0s" }, { 119, "119s" }, { 120, "2m" }, { 150, "2m30s" },
		{ 3 * 3600, "3h" }, { 3 * 3600 + 5 * 60, "3h5m" }, { 7 * 24 * 3600, "7d" },
		{ -1, "0s" }, { -2, "<invalid>" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char buf[32];
		kinf_kindcols_human_duration(cases[i].s, buf, sizeof(buf));
		is_str(buf, cases[i].want, "%llds", cases[i].s);
	}
}

static void test_headers(void) {
	static const struct {
		const char *group, *kind;
		bool wide;
		const char *want;
	} cases[] = {
		{ "", "Pod", false, "NAME|READY|STATUS|RESTARTS|AGE" },
		{ "", "Pod", true, "NAME|READY|STATUS|RESTARTS|AGE|IP|NODE|NOMINATED NODE|"
			"READINESS GATES" },
		{ "", "Event", false, "LAST SEEN|TYPE|REASON|OBJECT|MESSAGE" },
		{ "", "Event", true, "LAST SEEN|TYPE|REASON|OBJECT|SUBOBJECT|SOURCE|MESSAGE|"
			"FIRST SEEN|COUNT|NAME" },
		{ "", "Service", false, "NAME|TYPE|CLUSTER-IP|EXTERNAL-IP|PORT(S)|AGE" },
		{ "rbac.authorization.k8s.io", "ClusterRole", false, "NAME|CREATED AT" },
		{ "example.com", "Widget", true, "NAME|AGE" },
		{ NULL, NULL, false, "NAME|AGE" },
		{ "apps", "Pod", false, "NAME|AGE" },	/* the group is part of the kind */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *s = text_cells(cases[i].group, cases[i].kind, NULL, cases[i].wide);
		is_str(s, cases[i].want, "%s/%s%s headers", cases[i].group ? cases[i].group : "-",
				cases[i].kind ? cases[i].kind : "-", cases[i].wide ? " wide" : "");
		free(s);
	}
	ok(kinf_kindcols_is_builtin("events.k8s.io", "Event") &&
			!kinf_kindcols_is_builtin("example.com", "Widget"),
			"built-in kinds are told from custom resources");
}

/* What a 1.28 server (SidecarContainers off) cannot store: restartable init containers. */
static void test_sidecars(void) {
	static const char started[] = "{\"metadata\":{\"name\":\"p\"},\"spec\":{"
		"\"initContainers\":[{\"name\":\"proxy\",\"restartPolicy\":\"Always\"},"
		"{\"name\":\"setup\"}],"
		"\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Running\","
		"\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\"}],"
		"\"initContainerStatuses\":[{\"name\":\"proxy\",\"started\":true,\"ready\":true,"
		"\"restartCount\":3,\"state\":{\"running\":{}},\"lastState\":{\"terminated\":"
		"{\"exitCode\":1,\"finishedAt\":\"2025-12-31T23:00:00Z\"}}},"
		"{\"name\":\"setup\",\"state\":{\"terminated\":{\"exitCode\":0}}}],"
		"\"containerStatuses\":[{\"name\":\"a\",\"ready\":true,\"restartCount\":1,"
		"\"state\":{\"running\":{}}}]}}";
	char *s = text_cells("", "Pod", started, false);
	is_str(s, "p|2/2|Running|4 (60m ago)|<unknown>",
			"a started sidecar counts as a container, its restarts with the pod's");
	free(s);

	static const char starting[] = "{\"metadata\":{\"name\":\"p\"},\"spec\":{"
		"\"initContainers\":[{\"name\":\"proxy\",\"restartPolicy\":\"Always\"},"
		"{\"name\":\"setup\"}],"
		"\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Pending\","
		"\"initContainerStatuses\":[{\"name\":\"proxy\",\"started\":false,"
		"\"restartCount\":2,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}},"
		"{\"name\":\"setup\",\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]}}";
	s = text_cells("", "Pod", starting, false);
	is_str(s, "p|0/2|Init:CrashLoopBackOff|2|<unknown>",
			"a sidecar that has not started holds the pod in Init");
	free(s);
}

static void test_crd_errors(void) {
	static const char crd[] = "{\"metadata\":{\"name\":\"things.example.com\"},\"spec\":{"
		"\"group\":\"example.com\",\"names\":{\"kind\":\"Thing\"},\"versions\":["
		"{\"name\":\"v1\",\"additionalPrinterColumns\":["
		"{\"name\":\"Bad\",\"type\":\"string\","
		"\"jsonPath\":\".spec[\"}]},{\"name\":\"v2\"}]}}";
	struct kinf_kindcols *k = NULL;
	struct kinf_error err = {0};
	int rc = kinf_kindcols_from_crd(crd, sizeof(crd) - 1, "v1", &k, &err);
	is_int(rc, -KINF_EINVAL, "a jsonPath that does not parse is refused");
	is_str(err.message, "unrecognized column definition \".spec[\"", "... and named");
	rc = kinf_kindcols_from_crd(crd, sizeof(crd) - 1, "v9", &k, &err);
	is_str(rc < 0 ? err.message : "", "version v9 not found in CustomResourceDefinition "
			"things.example.com", "a version the CRD does not have");
	rc = kinf_kindcols_from_crd("{", 1, "v1", &k, &err);
	is_int(rc, -KINF_EJSON, "a CRD that is not JSON");
	rc = kinf_kindcols_from_crd(crd, sizeof(crd) - 1, "v2", &k, &err);
	const struct kinf_kindcols_column *cols = NULL;
	size_t n = rc == 0 ? kinf_kindcols_columns(k, &cols) : 0;
	ok(n == 2 && strcmp(cols[1].name, "Age") == 0 && strcmp(cols[1].type, "date") == 0,
			"a version without printer columns has Name and Age");
	ok(kinf_kindcols_ref(k) == k && !kinf_kindcols_unref(k), "references");
	kinf_kindcols_unref(k);
}

/* The cells, joined with '|'. */
static char *joined(const struct kinf_strv *sv) {
	struct kinf_buf b = {0};
	for (size_t i = 0; i < sv->n; i++) {
		must(kinf_buf_printf(&b, "%s%s", i ? "|" : "", sv->v[i]));
	}
	return b.data ? kinf_buf_take(&b) : strdup("");
}

/* -L and --show-labels: kubectl's decorateTable columns. */
static void test_labels(void) {
	static const char *const keys[] = { "app", "app.kubernetes.io/name", "none" };
	struct kinf_label_columns lc = { .keys = keys, .n_keys = 3, .show_labels = true };
	struct kinf_strv sv = {0};
	is_int(kinf_kindcols_append_labels(&lc, NULL, &sv), 0, "label headers");
	char *s = joined(&sv);
	is_str(s, "APP|NAME|NONE|LABELS", "each key's last segment, upper-cased; LABELS last");
	free(s);
	kinf_strv_release(&sv);
	static const char a[] = "{\"metadata\":{\"name\":\"a\",\"labels\":"
		"{\"tier\":\"db\",\"app.kubernetes.io/name\":\"x\",\"app\":\"web\"}}}";
	struct kinf_object *obj = parse(a, sizeof(a) - 1);
	is_int(kinf_kindcols_append_labels(&lc, obj, &sv), 0, "label cells");
	s = joined(&sv);
	is_str(s, "web|x||app=web,app.kubernetes.io/name=x,tier=db",
			"values, empty for a missing key; labels sorted, k=v joined by ','");
	free(s);
	kinf_strv_release(&sv);
	kinf_object_unref(obj);
	static const char b[] = "{\"metadata\":{\"name\":\"b\"}}";
	obj = parse(b, sizeof(b) - 1);
	lc.n_keys = 0;
	is_int(kinf_kindcols_append_labels(&lc, obj, &sv), 0, "no labels");
	s = joined(&sv);
	is_str(s, "<none>", "<none> without labels");
	free(s);
	kinf_strv_release(&sv);
	kinf_object_unref(obj);
}

/*
 * Numbers past int64 (a custom resource's, or anywhere in a Pod) never
 * lose a row; one beyond float64 fails with the object and the field.
 */
static void test_numbers(void) {
	char *s = text_cells("example.com", "Widget", "{\"kind\":\"Widget\",\"metadata\":"
			"{\"name\":\"w\"},\"spec\":{\"big\":12345678901234567890,"
			"\"e\":100000000000000000000,\"huge\":1e400}}", false);
	is_str(s, "w|<unknown>", "a custom resource: NAME and AGE from the record, whatever its numbers");
	free(s);
	s = text_cells("apps", "Deployment", "{\"kind\":\"Deployment\",\"metadata\":"
			"{\"name\":\"d\",\"annotations\":{}},\"spec\":{\"replicas\":3,"
			"\"x\":-99999999999999999999},\"status\":{\"readyReplicas\":2,"
			"\"updatedReplicas\":3,\"availableReplicas\":2}}", false);
	is_str(s, "d|2/3|3|2|<unknown>", "a Deployment with a number past int64 elsewhere");
	free(s);

	static const char pod[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
		"\"namespace\":\"ns\"},\"spec\":{\"x\":[1e400]}}";
	struct kinf_object *obj = parse(pod, sizeof(pod) - 1);
	struct kinf_strv sv = {0};
	struct kinf_buf b = {0};
	struct kinf_error err = {0};
	const struct kinf_kindcols *k = kinf_kindcols_for("", "Pod");
	is_int(kinf_kindcols_cells(k, obj, false, NULL, &sv, &err), -KINF_ETOOBIG,
			"a Pod with a number beyond float64 has no columns");
	is_str(err.message, "object \"ns/p\": field .spec.x[0]: number 1e400 is beyond "
			"float64's range", "the error names the object and the field");
	kinf_error_clear(&err);
	is_int(kinf_kindcols_row_json(k, obj, NULL, &b, &err), -KINF_ETOOBIG,
			"nor a Table row");
	kinf_buf_release(&b);
	kinf_strv_release(&sv);
	kinf_object_unref(obj);
}

/* An HTTP/1.1 answer of status with body (JSON). */
static char *answer(const char *status, const char *body) {
	struct kinf_buf b = {0};
	must(kinf_buf_printf(&b, "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
			"Content-Length: %zu\r\n\r\n%s", status, strlen(body), body));
	return kinf_buf_take(&b);
}

/* kinf_kindcols_fetch_crd: the GET it makes, and a CRD it may not read. */
static void test_fetch_crd(void) {
	char *ok_answer = answer("200 OK", "{\"metadata\":{\"name\":\"widgets.example.com\"},"
		"\"spec\":{\"group\":\"example.com\",\"versions\":[{\"name\":\"v1\","
		"\"additionalPrinterColumns\":[{\"name\":\"Color\",\"jsonPath\":\".spec.c\"}]}]}}");
	char *forbidden = answer("403 Forbidden", "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		"\"status\":\"Failure\",\"message\":\"nope\",\"reason\":\"Forbidden\",\"code\":403}");
	const char *const script[] = { ok_answer, forbidden, NULL };
	struct server s;
	struct kinf_rest_config config = {0};
	char url[64];
	server_start(&s, script);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	config.server = url;
	struct kinf_http *http = kinf_http_new(&config, NULL, NULL);
	struct kinf_kindcols *k = NULL;
	struct kinf_error err = {0};
	const struct kinf_kindcols_column *cols = NULL;
	int rc = kinf_kindcols_fetch_crd(http, "example.com", "widgets", "v1", &k, &err);
	ok(rc == 0 && kinf_kindcols_columns(k, &cols) == 2 && strcmp(cols[1].name, "Color") == 0,
			"a CRD read: its printer columns");
	kinf_kindcols_unref(k);
	rc = kinf_kindcols_fetch_crd(http, "example.com", "widgets", "v1", &k, &err);
	ok(rc < 0 && strstr(err.message, "nope"), "a CRD it may not read: the server's error");
	kinf_http_free(http);
	pthread_mutex_lock(&s.lock);
	ok(s.heads.n == 2 && strncmp(s.heads.v[0], "GET /apis/apiextensions.k8s.io/v1/"
			"customresourcedefinitions/widgets.example.com HTTP/1.1\r\n", 80) == 0,
			"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/RESOURCE.GROUP");
	pthread_mutex_unlock(&s.lock);
	server_stop(&s);
	free(ok_answer);
	free(forbidden);
}

int main(void) {
	test_fixtures();
	test_human_duration();
	test_headers();
	test_sidecars();
	test_crd_errors();
	test_labels();
	test_numbers();
	test_fetch_crd();
	return tap_done();
}
