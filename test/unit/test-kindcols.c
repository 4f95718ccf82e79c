/*
 * kinf's own columns for a kind, as kubectl's printers compute them (Pod
 * status and restarts, Deployment replicas, Node roles, ConfigMap data,
 * the -o wide columns), and HumanDuration's forms of an age.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "kindcols.h"
#include "object.h"
#include "tap.h"

static struct kinf_object *parse(const char *json) {
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	if (kinf_object_parse(json, strlen(json), NULL, &obj, &err) < 0) {
		printf("# parse failed: %s\n", err.message);
	}
	return obj;
}

/* RFC 3339 (UTC) of seconds_ago seconds before now. */
static void ago(long long seconds_ago, char *buf, size_t size) {
	time_t t = time(NULL) - (time_t)seconds_ago;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The cells, joined with '|'. */
static char *joined(const struct kinf_strv *sv) {
	struct kinf_buf b = {0};
	for (size_t i = 0; i < sv->n; i++) {
		must(kinf_buf_printf(&b, "%s%s", i ? "|" : "", sv->v[i]));
	}
	return b.data ? kinf_buf_take(&b) : strdup("");
}

/* kinf_kindcols_append (wide: and _append_wide) of kind for json, joined. */
static char *columns(const char *kind, const char *json, bool wide) {
	struct kinf_object *obj = json ? parse(json) : NULL;
	struct kinf_strv sv = {0};
	int rc = 0;
	if (json && !obj) {
		return NULL;
	}
	if (!wide) {
		rc = kinf_kindcols_append(kind, obj, &sv, NULL);
	} else {
		rc = kinf_kindcols_append_wide(kind, obj, &sv, NULL);
	}
	char *s = rc == 0 ? joined(&sv) : NULL;
	kinf_strv_release(&sv);
	kinf_object_unref(obj);
	return s;
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
		const char *kind;
		bool wide;
		const char *want;
	} cases[] = {
		{ "Pod", false, "NAME|READY|STATUS|RESTARTS|AGE" },
		{ "Deployment", false, "NAME|READY|UP-TO-DATE|AVAILABLE|AGE" },
		{ "Node", false, "NAME|STATUS|ROLES|AGE|VERSION" },
		{ "Namespace", false, "NAME|STATUS|AGE" },
		{ "ConfigMap", false, "NAME|DATA|AGE" },
		{ "Widget", false, "NAME|AGE" },
		{ NULL, false, "NAME|AGE" },
		{ "Pod", true, "IP|NODE|NOMINATED NODE|READINESS GATES" },
		{ "Deployment", true, "CONTAINERS|IMAGES|SELECTOR" },
		{ "Node", true, "INTERNAL-IP|EXTERNAL-IP|OS-IMAGE|KERNEL-VERSION|CONTAINER-RUNTIME" },
		{ "ConfigMap", true, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *s = columns(cases[i].kind, NULL, cases[i].wide);
		is_str(s, cases[i].want, "%s%s headers", cases[i].kind ? cases[i].kind : "(none)",
				cases[i].wide ? " wide" : "");
		free(s);
	}
}

static void test_pods(void) {
	char created[32], finished[32], json[2048];
	ago(3 * 3600 + 10, created, sizeof(created));
	ago(19 * 86400 + 5 * 3600, finished, sizeof(finished));

	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\","
		"\"namespace\":\"default\",\"creationTimestamp\":\"%s\"},"
		"\"spec\":{\"nodeName\":\"node-a\",\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]},"
		"\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.2.3\",\"containerStatuses\":["
		"{\"name\":\"a\",\"ready\":true,\"restartCount\":2,\"state\":{\"running\":{}},"
		"\"lastState\":{\"terminated\":{\"exitCode\":1,\"finishedAt\":\"%s\"}}},"
		"{\"name\":\"b\",\"ready\":false,\"restartCount\":1,"
		"\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}}]}}", created, finished);
	char *s = columns("Pod", json, false);
	is_str(s, "web-1|1/2|CrashLoopBackOff|3 (19d ago)|3h",
			"a waiting container's reason, restarts with the last one's age");
	free(s);
	s = columns("Pod", json, true);
	is_str(s, "10.1.2.3|node-a|<none>|<none>", "pod -o wide");
	free(s);

	static const char init_failed[] = "{\"metadata\":{\"name\":\"p\"},"
		"\"spec\":{\"containers\":[{\"name\":\"a\"}],\"initContainers\":[{\"name\":\"i\"}]},"
		"\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i\","
		"\"restartCount\":4,\"state\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]}}";
	s = columns("Pod", init_failed, false);
	is_str(s, "p|0/1|Init:Error|4|<unknown>", "a failed init container; no timestamp");
	free(s);

	static const char init_waiting[] = "{\"metadata\":{\"name\":\"p\"},"
		"\"spec\":{\"containers\":[{\"name\":\"a\"}],"
		"\"initContainers\":[{\"name\":\"i\"},{\"name\":\"j\"}]},"
		"\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":["
		"{\"name\":\"i\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
		"{\"name\":\"j\",\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]}}";
	s = columns("Pod", init_waiting, false);
	is_str(s, "p|0/1|Init:1/2|0|<unknown>", "the second of two init containers running");
	free(s);

	static const char deleting[] = "{\"metadata\":{\"name\":\"p\","
		"\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},"
		"\"spec\":{\"containers\":[{\"name\":\"a\"}]},"
		"\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"a\","
		"\"ready\":true,\"state\":{\"running\":{}}}]}}";
	s = columns("Pod", deleting, false);
	is_str(s, "p|1/1|Terminating|0|<unknown>", "a pod being deleted");
	free(s);

	static const char gates[] = "{\"metadata\":{\"name\":\"p\"},"
		"\"spec\":{\"readinessGates\":[{\"conditionType\":\"x/ready\"},"
		"{\"conditionType\":\"y/ready\"}]},\"status\":{\"conditions\":["
		"{\"type\":\"x/ready\",\"status\":\"True\"},{\"type\":\"y/ready\",\"status\":\"False\"}]}}";
	s = columns("Pod", gates, true);
	is_str(s, "<none>|<none>|<none>|1/2", "readiness gates: those met of all");
	free(s);
}

static void test_other_kinds(void) {
	char created[32], json[2048];
	ago(400 * 86400LL, created, sizeof(created));

	snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
		"\"creationTimestamp\":\"%s\"},\"spec\":{\"replicas\":3,"
		"\"selector\":{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":["
		"{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"b\",\"a\"]},"
		"{\"key\":\"canary\",\"operator\":\"DoesNotExist\"}]},"
		"\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx:1\"},"
		"{\"name\":\"proxy\",\"image\":\"envoy:2\"}]}}},"
		"\"status\":{\"readyReplicas\":2,\"updatedReplicas\":3,\"availableReplicas\":2}}",
		created);
	char *s = columns("Deployment", json, false);
	is_str(s, "web|2/3|3|2|400d", "deployment replicas");
	free(s);
	s = columns("Deployment", json, true);
	is_str(s, "app,proxy|nginx:1,envoy:2|app=web,!canary,tier in (a,b)",
			"deployment -o wide: the selector as FormatLabelSelector writes it, by key");
	free(s);

	static const char prefixed[] = "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"selector\":{"
		"\"matchLabels\":{\"app.kubernetes.io/name\":\"x\",\"app\":\"web\"}}}}";
	s = columns("Deployment", prefixed, true);
	is_str(s, "||app=web,app.kubernetes.io/name=x", "a key before the longer keys it starts");
	free(s);

	static const char node[] = "{\"metadata\":{\"name\":\"n1\",\"labels\":{"
		"\"node-role.kubernetes.io/control-plane\":\"\",\"kubernetes.io/os\":\"linux\"}},"
		"\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"
		"{\"type\":\"Ready\",\"status\":\"True\"}],\"addresses\":["
		"{\"type\":\"Hostname\",\"address\":\"n1\"},{\"type\":\"InternalIP\",\"address\":\"10.0.0.5\"}],"
		"\"nodeInfo\":{\"kubeletVersion\":\"v1.30.0\",\"osImage\":\"Debian 12\","
		"\"kernelVersion\":\"6.1.0\",\"containerRuntimeVersion\":\"containerd://1.7\"}}}";
	s = columns("Node", node, false);
	is_str(s, "n1|Ready|control-plane|<unknown>|v1.30.0", "node status and roles");
	free(s);
	s = columns("Node", node, true);
	is_str(s, "10.0.0.5|<none>|Debian 12|6.1.0|containerd://1.7", "node -o wide");
	free(s);

	static const char cm[] = "{\"metadata\":{\"name\":\"cfg\"},\"data\":{\"a\":\"1\",\"b\":\"2\"},"
		"\"binaryData\":{\"c\":\"AA==\"}}";
	s = columns("ConfigMap", cm, false);
	is_str(s, "cfg|3|<unknown>", "configmap DATA counts data and binaryData");
	free(s);

	static const char ns[] = "{\"metadata\":{\"name\":\"prod\"},\"status\":{\"phase\":\"Active\"}}";
	s = columns("Namespace", ns, false);
	is_str(s, "prod|Active|<unknown>", "namespace phase");
	free(s);
	s = columns("Widget", ns, false);
	is_str(s, "prod|<unknown>", "another kind: NAME and AGE");
	free(s);
}

/* -L and --show-labels: printers' decorateTable columns. */
static void test_labels(void) {
	static const char *const keys[] = { "app", "app.kubernetes.io/name", "none" };
	struct kinf_label_columns lc = { .keys = keys, .n_keys = 3, .show_labels = true };
	struct kinf_strv sv = {0};
	is_int(kinf_kindcols_append_labels(&lc, NULL, &sv), 0, "label headers");
	char *s = joined(&sv);
	is_str(s, "APP|NAME|NONE|LABELS", "each key's last segment, upper-cased; LABELS last");
	free(s);
	kinf_strv_release(&sv);
	struct kinf_object *obj = parse("{\"metadata\":{\"name\":\"a\",\"labels\":"
			"{\"tier\":\"db\",\"app.kubernetes.io/name\":\"x\",\"app\":\"web\"}}}");
	is_int(kinf_kindcols_append_labels(&lc, obj, &sv), 0, "label cells");
	s = joined(&sv);
	is_str(s, "web|x||app=web,app.kubernetes.io/name=x,tier=db",
			"values, empty for a missing key; labels sorted, k=v joined by ','");
	free(s);
	kinf_strv_release(&sv);
	kinf_object_unref(obj);
	obj = parse("{\"metadata\":{\"name\":\"b\"}}");
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
	char *s = columns("Widget", "{\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"},"
			"\"spec\":{\"big\":12345678901234567890,\"e\":100000000000000000000,"
			"\"huge\":1e400}}", false);
	is_str(s, "w|<unknown>", "a custom resource: NAME and AGE from the record, whatever its numbers");
	free(s);
	s = columns("Deployment", "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\","
			"\"annotations\":{}},\"spec\":{\"replicas\":3,\"x\":-99999999999999999999},"
			"\"status\":{\"readyReplicas\":2,\"updatedReplicas\":3,\"availableReplicas\":2}}",
			false);
	is_str(s, "d|2/3|3|2|<unknown>", "a Deployment with a number past int64 elsewhere");
	free(s);

	struct kinf_object *obj = parse("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
			"\"namespace\":\"ns\"},\"spec\":{\"x\":[1e400]}}");
	struct kinf_strv sv = {0};
	struct kinf_error err = {0};
	is_int(kinf_kindcols_append("Pod", obj, &sv, &err), -KINF_ETOOBIG,
			"a Pod with a number beyond float64 has no columns");
	is_str(err.message, "object \"ns/p\": field .spec.x[0]: number 1e400 is beyond "
			"float64's range", "the error names the object and the field");
	kinf_strv_release(&sv);
	kinf_error_clear(&err);
	is_int(kinf_kindcols_append_wide("Pod", obj, &sv, &err), -KINF_ETOOBIG,
			"nor wide ones");
	kinf_strv_release(&sv);
	kinf_object_unref(obj);
}

int main(void) {
	test_labels();
	test_human_duration();
	test_headers();
	test_pods();
	test_other_kinds();
	test_numbers();
	return tap_done();
}
