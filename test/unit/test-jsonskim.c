/*
 * Unit tests for the skim under kinf_json_skip (src/jsonskim.c): it must
 * take the JSON API servers send (so the fast path is not silently lost),
 * refuse every malformed value the careful validator refuses, one case per
 * rule, and kinf_json_skip must answer the same with it on and off for
 * 100,000 mutations of a pod from the test API server.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "jsonskim.h"
#include "tap.h"

/* A pod as test/fakeapi serves it: managedFields, escaped keys. */
static const char pod_json[] =
	"{\"metadata\":{\"name\":\"web-xgw7hl2br6-vtxrw\",\"generateName\":\"web-xgw7hl2br6-\",\"nam"
	"espace\":\"default\",\"uid\":\"221468e5-8c93-447a-8d7b-e03fa1fa8df8\",\"resourceVersion\""
	":\"1128\",\"creationTimestamp\":\"2026-11-17T20:23:38Z\",\"labels\":{\"app\":\"web\",\"pod-te"
	"mplate-hash\":\"xgw7hl2br6\",\"tier\":\"frontend\"},\"annotations\":{\"kubectl.kubernetes."
	"io/restartedAt\":\"2024-11-02T10:08:00Z\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v"
	"1\",\"kind\":\"ReplicaSet\",\"name\":\"web-xgw7hl2br6\",\"uid\":\"5e4d0c25-0947-4a92-80df-61"
	"7ba95b3b44\",\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":[{\"man"
	"ager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2"
	"026-11-17T20:23:38Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:genera"
	"teName\":{},\"f:labels\":{\".\":{},\"f:app\":{},\"f:pod-template-hash\":{},\"f:tier\":{}},\""
	"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"5e4d0c25-0947-4a92-80df-617ba95b3b44\\\"}"
	"\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:env\":{\"k:{\\\"n"
	"ame\\\":\\\"APP_NAME\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"APP_TIER\\\""
	"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"LOG_LEVEL\\\"}\":{\".\":{},\"f:nam"
	"e\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"POD_NAMESPACE\\\"}\":{\".\":{},\"f:name\":{},\"f:valu"
	"e\":{}},\"k:{\\\"name\\\":\\\"WEB_SETTING_0\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\""
	"name\\\":\\\"WEB_SETTING_1\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"WEB_"
	"SETTING_2\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}}},\"f:image\":{},\"f:imagePullPolicy"
	"\":{},\"f:name\":{},\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{},\"f:memory\":"
	"{}},\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:terminationMessagePath\":{"
	"},\"f:terminationMessagePolicy\":{},\"f:volumeMounts\":{},\"f:ports\":{\".\":{},\"k:{\\\"co"
	"ntainerPort\\\":5000,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:name\":"
	"{},\"f:protocol\":{}}}},\"k:{\\\"name\\\":\\\"log-shipper\\\"}\":{\".\":{},\"f:env\":{\"k:{\\\"name"
	"\\\":\\\"SHIP_TO\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}},\"k:{\\\"name\\\":\\\"BATCH_SIZE\\\"}\""
	":{\".\":{},\"f:name\":{},\"f:value\":{}}},\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\""
	":{},\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}},\"f:reques"
	"ts\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:terminationMessagePath\":{},\"f:terminat"
	"ionMessagePolicy\":{},\"f:volumeMounts\":{},\"f:ports\":{\".\":{},\"k:{\\\"containerPort\\\""
	":9090,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:name\":{},\"f:protoco"
	"l\":{}}}}},\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},\"f:restartPolicy\":{},\"f:sch"
	"edulerName\":{},\"f:securityContext\":{},\"f:serviceAccount\":{},\"f:serviceAccountNam"
	"e\":{},\"f:terminationGracePeriodSeconds\":{},\"f:volumes\":{\".\":{},\"k:{\\\"name\\\":\\\"co"
	"nfig\\\"}\":{\".\":{},\"f:configMap\":{\".\":{},\"f:name\":{}},\"f:name\":{}},\"k:{\\\"name\\\":\\\""
	"varlog\\\"}\":{\".\":{},\"f:emptyDir\":{},\"f:name\":{}}}}}},{\"manager\":\"kubelet\",\"operat"
	"ion\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-17T20:23:48Z\",\"fieldsType\":\"Fiel"
	"dsV1\",\"fieldsV1\":{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"ContainersReady\\\"}\""
	":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{"
	"}},\"k:{\\\"type\\\":\\\"Initialized\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransition"
	"Time\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"PodReadyToStartContainers\\\"}\""
	":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{"
	"}},\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":"
	"{},\"f:status\":{},\"f:type\":{}}},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs"
	"\":{},\"f:phase\":{},\"f:podIP\":{},\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"10.244.50.3\\\"}\":{"
	"\".\":{},\"f:ip\":{}}},\"f:startTime\":{}}},\"subresource\":\"status\"}]},\"spec\":{\"volumes"
	"\":[{\"name\":\"config\",\"configMap\":{\"name\":\"web-config\",\"defaultMode\":420}},{\"name\""
	":\"varlog\",\"emptyDir\":{}},{\"name\":\"kube-api-access-ltgq5\",\"projected\":{\"sources\":"
	"[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":"
	"{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},{\"downwa"
	"rdAPI\":{\"items\":[{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\""
	"metadata.namespace\"}}]}}],\"defaultMode\":420}}],\"containers\":[{\"name\":\"web\",\"imag"
	"e\":\"ghcr.io/example/web:v2.12.4\",\"ports\":[{\"name\":\"http\",\"containerPort\":5000,\"p"
	"rotocol\":\"TCP\"}],\"env\":[{\"name\":\"APP_NAME\",\"value\":\"web\"},{\"name\":\"APP_TIER\",\"va"
	"lue\":\"frontend\"},{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},{\"name\":\"POD_NAMESPACE\",\"va"
	"lue\":\"default\"},{\"name\":\"WEB_SETTING_0\",\"value\":\"value-qlsl88p26t7n-50916\"},{\"na"
	"me\":\"WEB_SETTING_1\",\"value\":\"value-s8ftpgrgbh9l-48203\"},{\"name\":\"WEB_SETTING_2\","
	"\"value\":\"value-gx8mrlvm6r5l-56820\"}],\"resources\":{\"limits\":{\"cpu\":\"200m\",\"memory"
	"\":\"1024Mi\"},\"requests\":{\"cpu\":\"100m\",\"memory\":\"512Mi\"}},\"volumeMounts\":[{\"name\":"
	"\"config\",\"mountPath\":\"/etc/web\",\"readOnly\":true},{\"name\":\"kube-api-access-ltgq5\""
	",\"readOnly\":true,\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\""
	"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\""
	",\"imagePullPolicy\":\"IfNotPresent\"},{\"name\":\"log-shipper\",\"image\":\"registry.examp"
	"le.com/log-shipper:0.0.1\",\"ports\":[{\"name\":\"metrics\",\"containerPort\":9090,\"proto"
	"col\":\"TCP\"}],\"env\":[{\"name\":\"SHIP_TO\",\"value\":\"http://logs.default.svc:9200\"},{\""
	"name\":\"BATCH_SIZE\",\"value\":\"256\"}],\"resources\":{\"limits\":{\"cpu\":\"20m\",\"memory\":\""
	"64Mi\"},\"requests\":{\"cpu\":\"10m\",\"memory\":\"32Mi\"}},\"volumeMounts\":[{\"name\":\"varlog"
	"\",\"mountPath\":\"/var/log/app\"},{\"name\":\"kube-api-access-ltgq5\",\"readOnly\":true,\"m"
	"ountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"terminationMessageP"
	"ath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":"
	"\"IfNotPresent\"}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dn"
	"sPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"web\",\"serviceAccount\":\"web\",\"nodeN"
	"ame\":\"node-50\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\",\"tolerat"
	"ions\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExe"
	"cute\",\"tolerationSeconds\":300},{\"key\":\"node.kubernetes.io/unreachable\",\"operator"
	"\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,\"enableSe"
	"rviceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"},\"status\":{\"phase\":\"R"
	"unning\",\"conditions\":[{\"type\":\"PodReadyToStartContainers\",\"status\":\"True\",\"lastP"
	"robeTime\":null,\"lastTransitionTime\":\"2026-11-17T20:23:48Z\"},{\"type\":\"Initialized"
	"\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-17T20:23:48"
	"Z\"},{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2"
	"026-11-17T20:23:48Z\"},{\"type\":\"ContainersReady\",\"status\":\"True\",\"lastProbeTime\":"
	"null,\"lastTransitionTime\":\"2026-11-17T20:23:48Z\"},{\"type\":\"PodScheduled\",\"status"
	"\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-17T20:23:48Z\"}],\"hos"
	"tIP\":\"10.0.0.52\",\"hostIPs\":[{\"ip\":\"10.0.0.52\"}],\"podIP\":\"10.244.50.3\",\"podIPs\":["
	"{\"ip\":\"10.244.50.3\"}],\"startTime\":\"2026-11-17T20:23:48Z\",\"containerStatuses\":[{\""
	"name\":\"web\",\"state\":{\"running\":{\"startedAt\":\"2026-11-17T20:23:48Z\"}},\"lastState\""
	":{},\"ready\":true,\"restartCount\":0,\"image\":\"ghcr.io/example/web:v2.12.4\",\"imageID"
	"\":\"ghcr.io/example/web@sha256:87b7abb6f1e09e06455bf49689f0f4a1401b0277051dcf528b"
	"c3d38a46453b16\",\"containerID\":\"containerd://6f42bff6e5b0fcb2370bc2ff3d96bfb12cd6"
	"6a721c205729822ee60d999f975c\",\"started\":true},{\"name\":\"log-shipper\",\"state\":{\"ru"
	"nning\":{\"startedAt\":\"2026-11-17T20:23:48Z\"}},\"lastState\":{},\"ready\":true,\"restar"
	"tCount\":0,\"image\":\"registry.example.com/log-shipper:0.0.1\",\"imageID\":\"registry.e"
	"xample.com/log-shipper@sha256:6f42bff6e5b0fcb2370bc2ff3d96bfb12cd66a721c20572982"
	"2ee60d999f975c\",\"containerID\":\"containerd://87b7abb6f1e09e06455bf49689f0f4a1401b"
	"0277051dcf528bc3d38a46453b16\",\"started\":true}],\"qosClass\":\"Burstable\"}}";

struct outcome {
	int rc;
	size_t end;
	size_t error_at;
	const char *msg;
};

static struct outcome skip_with(const char *json, size_t len, unsigned max_depth, bool skim) {
	struct kinf_json_reader r;
	kinf_jsonskim_enable(skim);
	kinf_json_reader_init(&r, json, len, max_depth);
	struct outcome o = { .rc = kinf_json_skip(&r), .end = (size_t)(r.p - json) };
	o.error_at = r.error ? (size_t)(r.error_at - json) : 0;
	o.msg = r.error ? r.error_msg : "";
	kinf_jsonskim_enable(true);
	return o;
}

/* Taken by the skim, whole, and by the validator with the same end. */
static void takes(const char *json, unsigned max_depth) {
	size_t len = strlen(json);
	const char *end = kinf_jsonskim(json, json + len, max_depth);
	struct outcome slow = skip_with(json, len, max_depth, false);
	ok(end == json + len && slow.rc == 0 && slow.end == len, "takes %.60s", json);
}

/* Refused by the skim, and an error for the validator. */
static void refuses(const char *json, unsigned max_depth) {
	size_t len = strlen(json);
	const char *end = kinf_jsonskim(json, json + len, max_depth);
	struct outcome slow = skip_with(json, len, max_depth, false);
	ok(end == NULL && slow.rc < 0, "refuses %.60s (%s)", json, slow.msg);
}

/* Left to the validator, which takes it (white space, UTF-8, surrogates). */
static void leaves(const char *json, unsigned max_depth) {
	size_t len = strlen(json);
	const char *end = kinf_jsonskim(json, json + len, max_depth);
	struct outcome slow = skip_with(json, len, max_depth, false);
	ok(end == NULL && slow.rc == 0, "leaves %.60s to the validator", json);
}

static uint64_t next_rand(uint64_t *s) {
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(void) {
	if (!kinf_jsonskim_available()) {
		skip("no AVX2 on this CPU", "the skim");
		return tap_done();
	}
	ok(kinf_jsonskim_enabled(), "on by default");
	takes(pod_json, 512);
	takes("{}", 1);
	takes("[]", 1);
	takes("{\"a\":[1,-0.5e+10,2E-3,0,true,false,null,\"s\",{},[]],\"b\":{\"c\":[[],[{}]]}}", 512);
	takes("{\"k:{\\\"name\\\":\\\"api\\\"}\":{\".\":{}},\"e\":\"\\\\\\\"\\/\\b\\f\\n\\r\\t\"}", 512);
	takes("{\"a\":\"\\u003chtml\\u003e \\u0026 \\u00e9\",\"b\":\"\x7f\"}", 512);
	/* 64-byte blocks: a string, an escape and a number across the edges. */
	takes("{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1}", 512);
	takes("{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\\"b\":\"c\\\\\"}", 512);
	takes("{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":12345678901234567890}", 512);
	takes("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 512);

	refuses("{\"a\":1,}", 512);
	refuses("[1,2,]", 512);
	refuses("[,1]", 512);
	refuses("{,\"a\":1}", 512);
	refuses("{\"a\":1,{}}", 512);		/* a container where a key goes */
	refuses("{\"a\":1,[]}", 512);
	refuses("{\"a\":1,2}", 512);
	refuses("{\"a\"}", 512);
	refuses("{\"a\":1,\"b\"}", 512);
	refuses("{\"a\":\"b\":\"c\"}", 512);
	refuses("{\"a\"::1}", 512);
	refuses("{\"a\":}", 512);
	refuses("[\"a\":1]", 512);
	refuses("{1:2}", 512);
	refuses("{\"a\":1\"b\":2}", 512);
	refuses("[\"a\"\"b\"]", 512);
	refuses("[{}{}]", 512);
	refuses("[1}", 512);
	refuses("{\"a\":1]", 512);
	refuses("{\"a\":01}", 512);
	refuses("{\"a\":1.}", 512);
	refuses("{\"a\":-}", 512);
	refuses("{\"a\":1e}", 512);
	refuses("{\"a\":tru}", 512);
	refuses("{\"a\":truex}", 512);
	refuses("{\"a\":nul}", 512);
	refuses("{\"a\":\"\\x\"}", 512);
	refuses("{\"a\":\"\\u12g4\"}", 512);
	refuses("{\"a\":\"\x01\"}", 512);
	refuses("{\"a\":\"b}", 512);
	refuses("{\"a\":[1,2}", 512);
	refuses("{\"a\":\\\"b\"}", 512);
	refuses("{\"a\":{\"b\":{}}}", 2);	/* deeper than the reader allows */

	leaves("{ \"a\":1}", 512);
	leaves("{\"a\":1 }", 512);
	leaves("{\"a\":\"\xc3\xa9\"}", 512);
	leaves("{\"a\":\"\\ud83d\\ude00\"}", 512);
	/* 64 levels on the bit stack, and an empty one more when the reader allows. */
	takes("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 512);
	refuses("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 64);
	leaves("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 512);

	/* Mutations: a byte changed, inserted or deleted, up to three times. */
	static const char alphabet[] = "{}[]:,\"\\ 0123456789.-+eEtrufalsn\x01\x7f\xc3\xa9u";
	size_t len = strlen(pod_json);
	char *buf = malloc(len + 8);
	uint64_t seed = 0x2545f4914f6cdd1dull;
	unsigned differ = 0, fast_taken = 0;
	for (int n = 0; n < 100000; n++) {
		size_t blen = len;
		memcpy(buf, pod_json, len);
		int k = 1 + (int)(next_rand(&seed) % 3);
		for (int j = 0; j < k; j++) {
			size_t at = (size_t)(next_rand(&seed) % blen);
			char c = alphabet[next_rand(&seed) % (sizeof(alphabet) - 1)];
			switch (next_rand(&seed) % 3) {
			case 0:
				buf[at] = c;
				break;
			case 1:
				memmove(buf + at + 1, buf + at, blen - at);
				buf[at] = c;
				blen++;
				break;
			default:
				memmove(buf + at, buf + at + 1, blen - at - 1);
				blen--;
				break;
			}
		}
		struct outcome slow = skip_with(buf, blen, 512, false);
		struct outcome fast = skip_with(buf, blen, 512, true);
		fast_taken += kinf_jsonskim(buf, buf + blen, 512) != NULL;
		if (slow.rc != fast.rc || slow.end != fast.end || slow.error_at != fast.error_at ||
				strcmp(slow.msg, fast.msg) != 0) {
			if (differ++ < 3) {
				printf("# mutation %d: slow %d at %zu (%s), fast %d at %zu (%s)\n", n,
						slow.rc, slow.error_at, slow.msg, fast.rc, fast.error_at, fast.msg);
			}
		}
	}
	free(buf);
	is_int(differ, 0, "100,000 mutated pods: the same answer with and without the skim");
	ok(fast_taken > 10000, "the skim took %u of them", fast_taken);
	return tap_done();
}
