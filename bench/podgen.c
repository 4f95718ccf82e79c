/* Synthetic pods shaped like a real API server's, for the benchmarks. */
#include <stdio.h>

#include "podgen.h"

void bench_make_pod(struct kinf_buf *b, int i) {
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

