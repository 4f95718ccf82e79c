/*
 * The unit-level allocation-failure sweep (issue 24; SQLite's malloc
 * tests): each scenario below drives a few core modules (object, selector,
 * jsonpath, custom-columns, DeltaFIFO, indexer and index functions,
 * jsondiff, table, condition) to one answer as a string. It runs once to
 * count its allocations, then once for every N with the Nth failing
 * (kinf_allocfail_arm): each run must give the reference answer (the
 * failure was recovered) or -KINF_ENOMEM, never another answer; leaks and
 * bad accesses are the sanitizer's (the build is ASan + UBSan). Built only
 * with -Dalloc-fail=true. TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocfail.h"
#include "buf.h"
#include "condition.h"
#include "customcolumns.h"
#include "deltafifo.h"
#include "indexer.h"
#include "indexfuncs.h"
#include "jsondiff.h"
#include "jsonnum.h"
#include "jsonpath.h"
#include "object.h"
#include "selector.h"
#include "table.h"
#include "tap.h"

static const char *const pods[] = {
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\","
	"\"namespace\":\"default\",\"resourceVersion\":\"11\",\"labels\":{\"app\":\"web\","
	"\"tier\":\"front\"}},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\","
	"\"image\":\"nginx:1\"},{\"name\":\"d\",\"image\":\"envoy:2\"}]},\"status\":{"
	"\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db-0\","
	"\"namespace\":\"default\",\"resourceVersion\":\"12\",\"labels\":{\"app\":\"db\"}},"
	"\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"name\":\"c\",\"image\":\"pg:16\"}]},"
	"\"status\":{\"phase\":\"Pending\"}}",
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-2\","
	"\"namespace\":\"other\",\"resourceVersion\":\"13\",\"labels\":{\"app\":\"web\"}},"
	"\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1\"}]},"
	"\"status\":{\"phase\":\"Running\"}}",
};
#define N_PODS (sizeof(pods) / sizeof(*pods))

/* The pods parsed; 0 or the failure (what was parsed is released). */
static int parse_pods(struct kinf_object **v) {
	for (size_t i = 0; i < N_PODS; i++) {
		int rc = kinf_object_parse(pods[i], strlen(pods[i]), NULL, &v[i], NULL);
		if (rc < 0) {
			while (i-- > 0) {
				kinf_object_unref(v[i]);
			}
			return rc;
		}
	}
	return 0;
}

static void unref_pods(struct kinf_object **v) {
	for (size_t i = 0; i < N_PODS; i++) {
		kinf_object_unref(v[i]);
	}
}

/* Label and field selectors over the pods: "1 0 1"-like. */
static int selectors(struct kinf_buf *out) {
	struct kinf_object *v[N_PODS];
	struct kinf_selector *labels = NULL, *fields = NULL;
	int rc = parse_pods(v);
	if (rc < 0) {
		return rc;
	}
	rc = kinf_label_selector_parse("app in (web,db),tier!=back", &labels, NULL);
	if (rc == 0) {
		rc = kinf_field_selector_parse("spec.nodeName=n1,status.phase!=Pending", &fields, NULL);
	}
	for (size_t i = 0; rc == 0 && i < N_PODS; i++) {
		int l = kinf_selector_match(labels, v[i]);
		int f = l < 0 ? l : kinf_selector_match(fields, v[i]);
		rc = f < 0 ? f : kinf_buf_printf(out, "%d%d ", l, f);
	}
	kinf_selector_free(labels);
	kinf_selector_free(fields);
	unref_pods(v);
	return rc;
}

/* A jsonpath template and custom columns over a List of the pods. */
static int templates(struct kinf_buf *out) {
	struct kinf_error err = {0};
	struct kinf_jsonpath *jp = NULL;
	struct kinf_customcolumns *cc = NULL;
	struct kinf_buf list = {0};
	kinf_buf_puts(&list, "{\"kind\":\"List\",\"items\":[");
	for (size_t i = 0; i < N_PODS; i++) {
		kinf_buf_putf(&list, "%s%s", i ? "," : "", pods[i]);
	}
	kinf_buf_puts(&list, "]}");
	int rc = kinf_buf_error(&list);
	json_t *data = rc == 0 ? kinf_jsonnum_load(list.data, list.len, 0, &err) : NULL;
	if (rc == 0 && !data) {
		rc = -err.code;
	}
	if (rc == 0) {
		rc = kinf_jsonpath_parse("{range .items[*]}{.metadata.name} "
				"{.spec.containers[*].image}{\"\\n\"}{end}", &jp, &err);
	}
	if (rc == 0) {
		rc = kinf_jsonpath_execute(jp, data, out, &err);
	}
	if (rc == 0) {
		rc = kinf_customcolumns_parse("NAME:.metadata.name,IMAGES:.spec.containers[*].image,"
				"X:.missing", &cc, &err);
	}
	json_t *items = json_object_get(data, "items");
	for (size_t i = 0; rc == 0 && i < json_array_size(items); i++) {
		struct kinf_strv cells = {0};
		rc = kinf_customcolumns_cells(cc, json_array_get(items, i), &cells);
		for (size_t j = 0; rc == 0 && j < cells.n; j++) {
			rc = kinf_buf_printf(out, "%s|", cells.v[j]);
		}
		kinf_strv_release(&cells);
	}
	kinf_customcolumns_free(cc);
	kinf_jsonpath_free(jp);
	json_decref(data);
	kinf_buf_release(&list);
	return rc;
}

static int show(const struct kinf_deltas *d, bool initial, void *userdata) {
	struct kinf_buf *out = userdata;
	kinf_buf_putf(out, "%s%s:", d->key, initial ? "*" : "");
	for (size_t i = 0; i < d->n; i++) {
		kinf_buf_putf(out, "%s ", kinf_delta_type_name(d->v[i].type));
	}
	return kinf_buf_error(out);
}

/* A DeltaFIFO over a known indexer: a replace, an update, a relist, pops. */
static int fifo(struct kinf_buf *out) {
	struct kinf_object *v[N_PODS];
	int rc = parse_pods(v);
	if (rc < 0) {
		return rc;
	}
	struct kinf_indexer *known = kinf_indexer_new();
	struct kinf_deltafifo *f = known ? kinf_deltafifo_new(known, false) : NULL;
	rc = f ? kinf_deltafifo_replace(f, v, N_PODS) : -KINF_ENOMEM;
	if (rc == 0) {
		rc = kinf_deltafifo_update(f, v[0]);
	}
	while (rc == 0) {
		struct kinf_deltas *d = NULL;
		rc = kinf_deltafifo_pop(f, 0, show, out, &d);
		if (rc == 0) {
			for (size_t i = 0; rc == 0 && i < d->n; i++) {
				rc = kinf_indexer_update(known, d->v[i].obj);
			}
		}
		kinf_deltas_free(d);
	}
	if (rc == -KINF_ETIMEDOUT) {
		/* Drained; a relist without db-0 leaves its tombstone. */
		struct kinf_object *two[] = { v[0], v[2] };
		rc = kinf_deltafifo_replace(f, two, 2);
		while (rc == 0) {
			rc = kinf_deltafifo_pop(f, 0, show, out, NULL);
		}
		rc = rc == -KINF_ETIMEDOUT ? 0 : rc;
	}
	kinf_deltafifo_free(f);
	kinf_indexer_free(known);
	unref_pods(v);
	return rc;
}

/* Index functions installed on an indexer, their values counted. */
static int indexes(struct kinf_buf *out) {
	struct kinf_object *v[N_PODS];
	struct kinf_index_spec spec[3];
	const char *names[] = { "app", "node", "field:spec.containers[*].image" };
	size_t n_spec = 0;
	int rc = parse_pods(v);
	if (rc < 0) {
		return rc;
	}
	struct kinf_indexer *idx = kinf_indexer_new();
	rc = idx ? 0 : -KINF_ENOMEM;
	for (size_t i = 0; rc == 0 && i < 3; i++) {
		rc = kinf_index_spec_resolve(names[i], NULL, NULL, &spec[i], NULL);
		if (rc == 0) {
			n_spec++;
			rc = kinf_index_spec_install(&spec[i], idx, NULL);
		}
	}
	for (size_t i = 0; rc == 0 && i < N_PODS; i++) {
		rc = kinf_indexer_add(idx, v[i]);
	}
	for (size_t i = 0; rc == 0 && i < n_spec; i++) {
		struct kinf_index_value *vals = NULL;
		size_t n = 0;
		rc = kinf_indexer_values(idx, spec[i].index_name, &vals, &n, NULL);
		for (size_t j = 0; rc == 0 && j < n; j++) {
			rc = kinf_buf_printf(out, "%s=%zu ", vals[j].value, vals[j].count);
		}
		kinf_index_values_free(vals, n);
		for (size_t j = 0; rc == 0 && j < N_PODS; j++) {
			int m = kinf_index_spec_match(&spec[i], "web", v[j]);
			rc = m < 0 ? m : kinf_buf_printf(out, "%d", m);
		}
	}
	for (size_t i = 0; i < n_spec; i++) {
		kinf_index_spec_release(&spec[i]);
	}
	kinf_indexer_free(idx);
	unref_pods(v);
	return rc;
}

/* watch --diff's lines and JSON between two pods. */
static int diff(struct kinf_buf *out) {
	int rc = kinf_jsondiff_append(pods[0], strlen(pods[0]), pods[2], strlen(pods[2]),
			false, false, "  ", out);
	if (rc == 0) {
		rc = kinf_jsondiff_append(pods[0], strlen(pods[0]), pods[1], strlen(pods[1]),
				true, true, "", out);
	}
	return rc;
}

/* A table built row by row (the sticky put) and printed. */
static int table(struct kinf_buf *out) {
	struct kinf_object *v[N_PODS];
	int rc = parse_pods(v);
	if (rc < 0) {
		return rc;
	}
	struct kinf_table *t = kinf_table_new(3);
	char *text = NULL;
	size_t len = 0;
	FILE *f = t ? open_memstream(&text, &len) : NULL;
	rc = f ? 0 : -KINF_ENOMEM;
	if (rc == 0) {
		const char *h[] = { "NAME", "NAMESPACE", "PHASE" };
		kinf_table_put_row(t, h);
		for (size_t i = 0; i < N_PODS; i++) {
			const char *row[] = { kinf_object_name(v[i]), kinf_object_namespace(v[i]),
				i == 1 ? "Pending" : "Running" };
			kinf_table_put_row(t, row);
		}
		rc = kinf_table_print(t, f);
	}
	if (f) {
		fclose(f);
	}
	if (rc == 0) {
		rc = kinf_buf_append(out, text, len);
	}
	free(text);
	kinf_table_free(t);
	unref_pods(v);
	return rc;
}

/* watch --for conditions over the pods. */
static int conditions(struct kinf_buf *out) {
	static const char *const specs[] = {
		"condition=Ready", "jsonpath={.status.phase}=Running", "delete",
	};
	struct kinf_object *v[N_PODS];
	int rc = parse_pods(v);
	if (rc < 0) {
		return rc;
	}
	for (size_t i = 0; rc == 0 && i < sizeof(specs) / sizeof(*specs); i++) {
		struct kinf_condition c = {0};
		rc = kinf_condition_parse(specs[i], &c, NULL);
		for (size_t j = 0; rc == 0 && j < N_PODS; j++) {
			enum kinf_condition_state st = kinf_condition_eval(&c, v[j], NULL);
			rc = st == KINF_COND_ERROR ? -KINF_ENOMEM : kinf_buf_printf(out, "%d", (int)st);
		}
		kinf_condition_release(&c);
	}
	unref_pods(v);
	return rc;
}

static const struct {
	const char *name;
	int (*run)(struct kinf_buf *out);
} scenarios[] = {
	{ "selectors", selectors },
	{ "templates", templates },
	{ "fifo", fifo },
	{ "indexes", indexes },
	{ "diff", diff },
	{ "table", table },
	{ "conditions", conditions },
};

int main(void) {
	for (size_t s = 0; s < sizeof(scenarios) / sizeof(*scenarios); s++) {
		struct kinf_buf ref = {0};
		kinf_allocfail_arm(0);
		int rc = scenarios[s].run(&ref);
		unsigned long total = kinf_allocfail_count();
		if (!ok(rc == 0 && !kinf_buf_error(&ref) && ref.len, "%s: the reference (%lu allocations)",
				scenarios[s].name, total)) {
			kinf_buf_release(&ref);
			continue;
		}
		unsigned long wrong = 0, failed = 0;
		for (unsigned long n = 1; n <= total; n++) {
			struct kinf_buf got = {0};
			kinf_allocfail_arm(n);
			rc = scenarios[s].run(&got);
			bool fired = kinf_allocfail_fired();
			kinf_allocfail_arm(0);
			if (rc == 0 && kinf_buf_error(&got)) {
				rc = kinf_buf_error(&got);
			}
			if (rc == -KINF_ENOMEM && fired) {
				failed++;
			} else if (rc != 0 || got.len != ref.len || memcmp(got.data, ref.data, ref.len)) {
				if (wrong++ < 3) {
					printf("# %s: N=%lu: rc %d, \"%.*s\"\n", scenarios[s].name, n, rc,
							(int)(got.len < 200 ? got.len : 200), got.data ? got.data : "");
				}
			}
			kinf_buf_release(&got);
		}
		ok(wrong == 0, "%s: every N of %lu gives the answer or out of memory (%lu did)",
				scenarios[s].name, total, failed);
		kinf_buf_release(&ref);
	}
	return tap_done();
}
