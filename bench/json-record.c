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

static void make_pod(struct kinf_buf *b, int i) {
	kinf_buf_printf(b,
		"{\"metadata\":{\"name\":\"web-%d-7d9f8c\",\"generateName\":\"web-%d-\","
		"\"namespace\":\"ns-%d\",\"uid\":\"%08x-1b2c-4d5e-8f90-a1b2c3d4e5f6\","
		"\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-11-01T10:00:00Z\","
		"\"labels\":{\"app\":\"web-%d\",\"pod-template-hash\":\"7d9f8c\",\"tier\":\"front\"},"
		"\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		"\"name\":\"web-%d-7d9f8c\",\"uid\":\"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\","
		"\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":[",
		i, i, i % 10, i, 1000 + i, i % 50, i % 50);
	for (int m = 0; m < 2; m++) {
		kinf_buf_printf(b, "%s{\"manager\":\"%s\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
			"\"time\":\"2026-11-01T10:00:0%dZ\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
			"\"f:metadata\":{\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{},"
			"\"f:pod-template-hash\":{},\"f:tier\":{}},\"f:ownerReferences\":{\".\":{},"
			"\"k:{\\\"uid\\\":\\\"0b1c2d3e\\\"}\":{}}},\"f:spec\":{\"f:containers\":{"
			"\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:env\":{},\"f:image\":{},"
			"\"f:imagePullPolicy\":{},\"f:name\":{},\"f:ports\":{},\"f:resources\":{}}},"
			"\"f:dnsPolicy\":{},\"f:restartPolicy\":{},\"f:schedulerName\":{}}}}",
			m ? "," : "", m ? "kubelet" : "kube-controller-manager", m);
	}
	kinf_buf_append_str(b, "]},\"spec\":{\"volumes\":[{\"name\":\"kube-api-access\","
		"\"projected\":{\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,"
		"\"path\":\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":"
		"[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}}],\"defaultMode\":420}}],\"containers\":[");
	for (int c = 0; c < 2; c++) {
		kinf_buf_printf(b, "%s{\"name\":\"%s\",\"image\":\"registry.example.com/%s:1.%d\","
			"\"ports\":[{\"containerPort\":%d,\"protocol\":\"TCP\"}],\"env\":[",
			c ? "," : "", c ? "sidecar" : "web", c ? "proxy" : "web", i % 7, 8080 + c);
		for (int e = 0; e < 6; e++) {
			kinf_buf_printf(b, "%s{\"name\":\"VAR_%d\",\"value\":\"value-%d-%d \\u003cescaped\\u003e\"}",
				e ? "," : "", e, i, e);
		}
		kinf_buf_append_str(b, "],\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},"
			"\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}},\"volumeMounts\":[{\"name\":"
			"\"kube-api-access\",\"readOnly\":true,\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],"
			"\"terminationMessagePath\":\"/dev/termination-log\",\"imagePullPolicy\":\"IfNotPresent\"}");
	}
	kinf_buf_printf(b, "],\"restartPolicy\":\"Always\",\"nodeName\":\"node-%d\","
		"\"serviceAccountName\":\"default\",\"schedulerName\":\"default-scheduler\"},"
		"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
		"\"lastTransitionTime\":\"2026-11-01T10:00:05Z\"}],\"hostIP\":\"10.0.0.%d\",\"podIP\":"
		"\"10.244.%d.%d\",\"startTime\":\"2026-11-01T10:00:00Z\",\"containerStatuses\":[{\"name\":"
		"\"web\",\"ready\":true,\"restartCount\":%d,\"image\":\"web:1\",\"imageID\":\"sha256:abc\","
		"\"started\":true,\"state\":{\"running\":{\"startedAt\":\"2026-11-01T10:00:04Z\"}}}]}}",
		i % 20, i % 250, i % 250, i % 200, i % 3);
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	struct kinf_buf all = {0};
	size_t *offs = calloc((size_t)n + 1, sizeof(*offs));
	for (int i = 0; i < n; i++) {
		offs[i] = all.len;
		make_pod(&all, i);
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
