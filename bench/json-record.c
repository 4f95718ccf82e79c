/*
 * Micro-benchmark behind the JSON choice: parse N realistic pods (about
 * 6 KB each, managedFields, two containers, env, volumes, status) three
 * ways and print MB/s and memory kept per object, side by side:
 *   kinf-record  strict pull reader + compact bytes + extracted record (ours)
 *   jansson-tree json_loadb of each object, tree kept (the usual design)
 *   jansson-scan json_loadb, fields extracted, tree freed at once
 * Run: build/bench/json-record [N]
 */
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "podgen.h"
#include "object.h"

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t heap_in_use(void) {
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	struct kinf_buf all = {0};
	size_t *offs = calloc((size_t)n + 1, sizeof(*offs));
	for (int i = 0; i < n; i++) {
		offs[i] = all.len;
		bench_make_pod(&all, i);
	}
	offs[n] = all.len;
	double mb = (double)all.len / 1e6;
	printf("%d pods, %.1f MB of compact JSON (%.0f bytes a pod)\n\n", n, mb, (double)all.len / n);
	printf("%-14s %10s %12s %16s\n", "approach", "MB/s", "objects/s", "kept / JSON size");

	/* kinf record */
	struct kinf_object **objs = calloc((size_t)n, sizeof(*objs));
	size_t before = heap_in_use();
	double t0 = now();
	for (int i = 0; i < n; i++) {
		if (kinf_object_parse(all.data + offs[i], offs[i + 1] - offs[i], NULL, &objs[i], NULL) < 0) {
			fprintf(stderr, "parse failed at %d\n", i);
			return 1;
		}
	}
	double t = now() - t0;
	size_t kept = heap_in_use() - before;
	printf("%-14s %10.0f %12.0f %15.2fx\n", "kinf-record", mb / t, n / t, (double)kept / (double)all.len);
	for (int i = 0; i < n; i++) {
		kinf_object_unref(objs[i]);
	}

	/* jansson tree kept */
	json_t **trees = calloc((size_t)n, sizeof(*trees));
	before = heap_in_use();
	t0 = now();
	for (int i = 0; i < n; i++) {
		trees[i] = json_loadb(all.data + offs[i], offs[i + 1] - offs[i], 0, NULL);
	}
	t = now() - t0;
	kept = heap_in_use() - before;
	printf("%-14s %10.0f %12.0f %15.2fx\n", "jansson-tree", mb / t, n / t, (double)kept / (double)all.len);
	for (int i = 0; i < n; i++) {
		json_decref(trees[i]);
	}

	/* jansson, extract and free */
	t0 = now();
	size_t sink = 0;
	for (int i = 0; i < n; i++) {
		json_t *o = json_loadb(all.data + offs[i], offs[i + 1] - offs[i], 0, NULL);
		sink += strlen(json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
		json_decref(o);
	}
	t = now() - t0;
	printf("%-14s %10.0f %12.0f %16s\n", "jansson-scan", mb / t, n / t, "(bytes kept too)");
	free(trees);
	free(objs);
	free(offs);
	kinf_buf_release(&all);
	return sink == 0;
}
