#include <string.h>

#include "condition.h"
#include "object.h"
#include "tap.h"

/*
 * --for rollout against kubectl's StatusViewers (pkg/polymorphichelpers/
 * rollout_status.go) for the kinds the test API server does not serve.
 */
static const struct {
	const char *kind;
	const char *json;
	enum kinf_condition_state want;
	const char *why;
} cases[] = {
	/* StatefulSet */
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":1,\"readyReplicas\":3}}",
		KINF_COND_NOT_MET, "spec update not observed yet" },
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":0},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"readyReplicas\":3}}",
		KINF_COND_NOT_MET, "spec update not observed yet" },
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":2,\"readyReplicas\":1}}",
		KINF_COND_NOT_MET, "2 pods not ready" },
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\","
		"\"rollingUpdate\":{\"partition\":1}}},"
		"\"status\":{\"observedGeneration\":2,\"readyReplicas\":3,\"updatedReplicas\":1}}",
		KINF_COND_NOT_MET, "partitioned roll out: 1 out of 2 new pods have been updated" },
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\","
		"\"rollingUpdate\":{\"partition\":1}}},"
		"\"status\":{\"observedGeneration\":2,\"readyReplicas\":3,\"updatedReplicas\":2,"
		"\"currentRevision\":\"s-1\",\"updateRevision\":\"s-2\"}}",
		KINF_COND_MET, "" },
	/* rollingUpdate present (the server defaults it): revisions not compared */
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\","
		"\"rollingUpdate\":{\"partition\":0}}},"
		"\"status\":{\"observedGeneration\":2,\"readyReplicas\":3,\"updatedReplicas\":3,"
		"\"currentRevision\":\"s-1\",\"updateRevision\":\"s-2\"}}",
		KINF_COND_MET, "" },
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":2,\"readyReplicas\":3,\"updatedReplicas\":2,"
		"\"currentRevision\":\"s-1\",\"updateRevision\":\"s-2\"}}",
		KINF_COND_NOT_MET, "rolling update: 2 pods at revision s-2" },
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":2,\"readyReplicas\":3,\"updatedReplicas\":3,"
		"\"currentRevision\":\"s-2\",\"updateRevision\":\"s-2\"}}",
		KINF_COND_MET, "" },
	{ "StatefulSet", "{\"metadata\":{\"name\":\"s\",\"generation\":2},"
		"\"spec\":{\"replicas\":3,\"updateStrategy\":{\"type\":\"OnDelete\"}},"
		"\"status\":{\"observedGeneration\":2,\"readyReplicas\":3}}",
		KINF_COND_FAILED,
		"rollout status is only available for the RollingUpdate update strategy, not OnDelete" },
	/* DaemonSet */
	{ "DaemonSet", "{\"metadata\":{\"name\":\"d\",\"generation\":3},"
		"\"spec\":{\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":2,\"desiredNumberScheduled\":2}}",
		KINF_COND_NOT_MET, "spec update not observed yet" },
	{ "DaemonSet", "{\"metadata\":{\"name\":\"d\",\"generation\":3},"
		"\"spec\":{\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":3,\"desiredNumberScheduled\":2,"
		"\"updatedNumberScheduled\":1,\"numberAvailable\":2}}",
		KINF_COND_NOT_MET, "1 out of 2 new pods have been updated" },
	{ "DaemonSet", "{\"metadata\":{\"name\":\"d\",\"generation\":3},"
		"\"spec\":{\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":3,\"desiredNumberScheduled\":2,"
		"\"updatedNumberScheduled\":2,\"numberAvailable\":1}}",
		KINF_COND_NOT_MET, "1 of 2 updated pods are available" },
	{ "DaemonSet", "{\"metadata\":{\"name\":\"d\",\"generation\":3},"
		"\"spec\":{\"updateStrategy\":{\"type\":\"RollingUpdate\"}},"
		"\"status\":{\"observedGeneration\":3,\"desiredNumberScheduled\":2,"
		"\"updatedNumberScheduled\":2,\"numberAvailable\":2}}",
		KINF_COND_MET, "" },
	{ "DaemonSet", "{\"metadata\":{\"name\":\"d\",\"generation\":3},"
		"\"spec\":{\"updateStrategy\":{\"type\":\"OnDelete\"}},"
		"\"status\":{\"observedGeneration\":3}}",
		KINF_COND_FAILED,
		"rollout status is only available for the RollingUpdate update strategy, not OnDelete" },
	/* Deployment: the deadline is checked only once the spec is observed */
	{ "Deployment", "{\"metadata\":{\"name\":\"w\",\"generation\":3},\"spec\":{\"replicas\":2},"
		"\"status\":{\"observedGeneration\":2,\"conditions\":[{\"type\":\"Progressing\","
		"\"reason\":\"ProgressDeadlineExceeded\"}]}}",
		KINF_COND_NOT_MET, "spec update not observed yet" },
	{ "Deployment", "{\"metadata\":{\"name\":\"w\",\"generation\":3},\"spec\":{\"replicas\":2},"
		"\"status\":{\"observedGeneration\":3,\"conditions\":[{\"type\":\"Progressing\","
		"\"reason\":\"ProgressDeadlineExceeded\"}]}}",
		KINF_COND_FAILED, "exceeded its progress deadline" },
	{ "Deployment", "{\"metadata\":{\"name\":\"w\"},\"spec\":{},"
		"\"status\":{\"replicas\":1,\"updatedReplicas\":1,\"availableReplicas\":1}}",
		KINF_COND_MET, "" },
};

/*
 * --for jsonpath= as kubectl wait takes it (processJSONPathInput): split at
 * each "=" outside "==", then RelaxedJSONPathExpression; the judge is
 * kubectl wait --for against the test API server.
 */
static const struct {
	const char *spec;
	const char *name;	/* NULL: refused */
	const char *value;	/* NULL: none; or the message's words when refused */
} jsonpath_cases[] = {
	{ "jsonpath={.metadata.name}=web", "{.metadata.name}", "web" },
	{ "jsonpath={metadata.name}=web", "{metadata.name}", "web" },
	{ "jsonpath=metadata.name=web", "metadata.name", "web" },
	{ "jsonpath={.status.phase}", "{.status.phase}", NULL },
	{ "jsonpath={.metadata.name}='web'", "{.metadata.name}", "web" },
	{ "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}=True",
		"{.status.conditions[?(@.type==\"Ready\")].status}", "True" },
	{ "jsonpath={..name}=web", "{..name}", "web" },
	/* an escaped brace, or any brace inside, is refused as kubectl refuses it */
	{ "jsonpath={.metadata.labels.a\\}b}=x", NULL, "unexpected path string" },
	{ "jsonpath={.metadata.labels.a\\{b}=x", NULL, "unexpected path string" },
	{ "jsonpath={.metadata.name} {.kind}=x", NULL, "unexpected path string" },
	{ "jsonpath={.metadata.labels.app}==web", NULL, "unexpected path string" },
	/* "=" inside the path splits it too */
	{ "jsonpath={.metadata.labels.a\\=b}=x", NULL, "jsonpath wait format must be" },
	{ "jsonpath={.metadata.name}=web=b", NULL, "jsonpath wait format must be" },
	{ "jsonpath={.metadata.name}=", NULL, "has to have a value after equal sign" },
	{ "jsonpath={.metadata.name}=\"\"", NULL, "has to have a value after equal sign" },
	{ "jsonpath=", NULL, "expression cannot be empty" },
	{ "jsonpath==x", NULL, "expression cannot be empty" },
	{ "jsonpath={.items[0}=x", NULL, "jsonpath \"{.items[0}\"" },
};

static void jsonpath_specs(void) {
	for (size_t i = 0; i < sizeof(jsonpath_cases) / sizeof(*jsonpath_cases); i++) {
		struct kinf_condition c;
		struct kinf_error err = {0};
		int rc = kinf_condition_parse(jsonpath_cases[i].spec, &c, &err);
		if (!jsonpath_cases[i].name) {
			ok(rc == -KINF_EINVAL && strstr(err.message, jsonpath_cases[i].value),
				"refused %s: %s", jsonpath_cases[i].spec, err.message);
			continue;
		}
		ok(rc == 0 && c.kind == KINF_COND_JSONPATH && strcmp(c.name, jsonpath_cases[i].name) == 0 &&
			(jsonpath_cases[i].value ? c.value && strcmp(c.value, jsonpath_cases[i].value) == 0 :
			 !c.value), "%s: %s", jsonpath_cases[i].spec, rc ? err.message : "parsed");
		if (rc == 0) {
			kinf_condition_release(&c);
		}
	}
	/* {metadata.name} reaches the name, as in kubectl wait */
	struct kinf_condition c;
	struct kinf_object *obj = NULL;
	const char *pod = "{\"metadata\":{\"name\":\"web\"}}";
	ok(kinf_condition_parse("jsonpath={metadata.name}=web", &c, NULL) == 0 &&
		kinf_object_parse(pod, strlen(pod), NULL, &obj, NULL) == 0 &&
		kinf_condition_eval(&c, obj, NULL) == KINF_COND_MET, "{metadata.name}=web is met");
	kinf_object_unref(obj);
	kinf_condition_release(&c);
}

int main(void) {
	struct kinf_condition c;
	struct kinf_error err = {0};

	jsonpath_specs();

	ok(kinf_condition_parse("rollout", &c, &err) == 0 && c.kind == KINF_COND_ROLLOUT,
		"--for rollout parses");
	ok(kinf_condition_bind(&c, "", "Pod", &err) == -KINF_EINVAL &&
		strstr(err.message, "Pod has no rollout status"), "no rollout for pods: %s", err.message);
	ok(kinf_condition_bind(&c, "", "StatefulSet", &err) == -KINF_EINVAL,
		"a StatefulSet outside apps has none");
	ok(kinf_condition_bind(&c, "extensions", "DaemonSet", &err) == 0, "extensions DaemonSet");
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct kinf_object *obj = NULL;
		struct kinf_buf why = {0};
		ok(kinf_condition_bind(&c, "apps", cases[i].kind, &err) == 0, "bind %s", cases[i].kind);
		if (kinf_object_parse(cases[i].json, strlen(cases[i].json), NULL, &obj, &err) < 0) {
			ok(0, "case %zu parses: %s", i, err.message);
			continue;
		}
		is_int(kinf_condition_eval(&c, obj, &why), cases[i].want, "%s case %zu", cases[i].kind, i);
		is_str(why.data ? why.data : "", cases[i].why, "%s case %zu: why", cases[i].kind, i);
		kinf_buf_release(&why);
		kinf_object_unref(obj);
	}
	kinf_condition_release(&c);
	return tap_done();
}
