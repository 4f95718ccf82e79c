/*
 * Indexer benchmark (issue 4): for N pods (default 100,000), how much of
 * the sync time building the indexes costs, and how query time grows with
 * the size of the answer.
 *   sync        parse every pod (the list's work) and add it to the store
 *               with only the built-in namespace index
 *   + indexes   the same with node, owner, phase and label:app indexes
 *   queries     ByIndex / IndexKeys for values with 1 to N/10 keys
 * Run: ninja -C build bench/index-bench && build/bench/index-bench [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "indexer.h"
#include "indexfuncs.h"
#include "object.h"
#include "podgen.h"

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double sync_run(const struct kinf_buf *all, const size_t *offs, int n,
		const char *const *extra, size_t n_extra, struct kinf_indexer **ret) {
	struct kinf_indexer *idx = kinf_indexer_new();
	for (size_t i = 0; i < n_extra; i++) {
		struct kinf_index_spec spec;
		kinf_index_spec_resolve(extra[i], NULL, NULL, &spec, NULL);
		kinf_index_spec_install(&spec, idx, NULL);
		kinf_index_spec_release(&spec);
	}
	double t0 = now();
	for (int i = 0; i < n; i++) {
		struct kinf_object *obj;
		if (kinf_object_parse(all->data + offs[i], offs[i + 1] - offs[i], NULL, &obj, NULL) < 0) {
			fprintf(stderr, "parse failed\n");
			exit(1);
		}
		kinf_indexer_add(idx, obj);
		kinf_object_unref(obj);
	}
	double t = now() - t0;
	*ret = idx;
	return t;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	enum { reps = 3 };
	struct kinf_buf all = {0};
	size_t *offs = calloc((size_t)n + 1, sizeof(*offs));
	static const char *const extra[] = { "node", "owner", "phase", "app" };

	for (int i = 0; i < n; i++) {
		offs[i] = all.len;
		bench_make_pod(&all, i);
	}
	offs[n] = all.len;
	printf("%d pods, %.1f MB compact JSON\n\n", n, (double)all.len / 1e6);

	double base[reps], with[reps];
	struct kinf_indexer *idx = NULL;
	for (int r = 0; r < reps; r++) {
		base[r] = sync_run(&all, offs, n, NULL, 0, &idx);
		kinf_indexer_free(idx);
		with[r] = sync_run(&all, offs, n, extra, 4, &idx);
		if (r + 1 < reps) {
			kinf_indexer_free(idx);
		}
	}
	qsort(base, reps, sizeof(double), cmp_double);
	qsort(with, reps, sizeof(double), cmp_double);
	double cost = with[reps / 2] - base[reps / 2];
	printf("sync (parse + store, namespace index)   median %.3f s  (min %.3f, max %.3f)\n",
			base[reps / 2], base[0], base[reps - 1]);
	printf("sync + node, owner, phase, app indexes  median %.3f s  (min %.3f, max %.3f)\n",
			with[reps / 2], with[0], with[reps - 1]);
	printf("index building: %.3f s = %.1f %% of the sync time (target < 15 %%)\n\n",
			cost, 100.0 * cost / with[reps / 2]);

	/* Queries: label:app has 50 values of N/50 keys; a per-object label
	 * value would have 1. Use node (N/20), app (N/50), and a namespace
	 * (N/10), plus owner (N/50) and a missing value (0). */
	static const struct { const char *index; const char *value; } queries[] = {
		{ "label:app", "nope" },
		{ "owner", "ReplicaSet/web-7-7d9f8c" },
		{ "label:app", "web-3" },
		{ "node", "node-4" },
		{ KINF_INDEX_NAMESPACE, "ns-2" },
	};
	printf("%-10s %-26s %8s %12s %14s\n", "index", "value", "keys", "query (us)", "us per key");
	for (size_t q = 0; q < sizeof(queries) / sizeof(*queries); q++) {
		double best = 1e9;
		size_t count = 0;
		for (int r = 0; r < 5; r++) {
			struct kinf_strv keys = {0};
			double t0 = now();
			kinf_indexer_index_keys(idx, queries[q].index, queries[q].value, &keys, NULL);
			double t = now() - t0;
			count = keys.n;
			kinf_strv_release(&keys);
			if (t < best) {
				best = t;
			}
		}
		char per[32] = "-";
		if (count) {
			snprintf(per, sizeof(per), "%.3f", best * 1e6 / (double)count);
		}
		printf("%-10s %-26s %8zu %12.1f %14s\n", queries[q].index, queries[q].value, count,
				best * 1e6, per);
	}
	kinf_indexer_free(idx);
	free(offs);
	kinf_buf_release(&all);
	return 0;
}
