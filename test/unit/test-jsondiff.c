/*
 * watch --diff's changes between two versions of an object: paths in
 * JSONPath form, keys sorted, arrays compared element by element when
 * their lengths match, managedFields and resourceVersion skipped unless
 * all, text escaped for the terminal, and the JSON form.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsondiff.h"
#include "tap.h"

static char *diff(const char *old, const char *new, bool all, bool as_json, int *ret_rc) {
	struct kinf_buf out = {0};
	*ret_rc = kinf_jsondiff_append(old, strlen(old), new, strlen(new), all, as_json,
			"  ", &out);
	return out.data ? kinf_buf_take(&out) : strdup("");
}

static const char old_obj[] = "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\","
	"\"managedFields\":[{\"manager\":\"x\"}],\"labels\":{\"app\":\"web\",\"k8s.io/x\":\"1\"}},"
	"\"spec\":{\"replicas\":1,\"ports\":[80,443],\"args\":[\"a\"]},\"status\":{\"ready\":true}}";
static const char new_obj[] = "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\","
	"\"managedFields\":[{\"manager\":\"y\"}],\"labels\":{\"app\":\"web\",\"k8s.io/x\":\"2\"}},"
	"\"spec\":{\"replicas\":3,\"ports\":[80,8443],\"args\":[\"a\",\"b\"]},\"status\":{}}";

int main(void) {
	int rc;
	char *s = diff(old_obj, new_obj, false, false, &rc);
	is_str(s, "  .metadata.labels['k8s.io/x']: \"1\" \xe2\x86\x92 \"2\"\n"
			"  .spec.args: [\"a\"] \xe2\x86\x92 [\"a\",\"b\"]\n"
			"  .spec.ports[1]: 443 \xe2\x86\x92 8443\n"
			"  .spec.replicas: 1 \xe2\x86\x92 3\n"
			"  .status.ready: true \xe2\x86\x92 <none>\n",
			"keys sorted, brackets for keys with dots, arrays of one length by element");
	ok(rc == 0, "returns 0");
	free(s);

	s = diff(old_obj, new_obj, true, false, &rc);
	ok(strstr(s, "  .metadata.managedFields[0].manager: \"x\" \xe2\x86\x92 \"y\"\n") &&
			strstr(s, "  .metadata.resourceVersion: \"1\" \xe2\x86\x92 \"2\"\n"),
			"all: managedFields and resourceVersion too");
	free(s);

	s = diff("{\"a\":1,\"b\":{\"c\":null}}", "{\"b\":{\"c\":null},\"d\":[]}", false, true, &rc);
	is_str(s, "[{\"path\":\".a\",\"old\":1},{\"path\":\".d\",\"new\":[]}]",
			"JSON: a removed field without new, an added one without old");
	free(s);

	s = diff("{\"a\":1}", "{\"a\":1}", false, true, &rc);
	is_str(s, "[]", "JSON: no changes, an empty array");
	free(s);
	s = diff("{\"a\":1}", "{\"a\":1}", false, false, &rc);
	is_str(s, "", "text: no changes, nothing");
	free(s);

	s = diff("{\"n\":\"x\"}", "{\"n\":\"\\u001b[2Jy\"}", false, false, &rc);
	ok(!strchr(s, '\033'), "an ESC in a value is escaped: %s", s);
	free(s);

	s = diff("{\"a\":1}", "[1]", false, false, &rc);
	is_str(s, "  .: {\"a\":1} \xe2\x86\x92 [1]\n", "the root is '.'");
	free(s);

	s = diff("{\"a\":12345678901234567890,\"b\":1.0,\"c\":\"x\\u003c\",\"d\":-0,"
			"\"e\":[1e20]}",
			"{\"a\":12345678901234567891,\"b\":1,\"c\":\"x<\",\"d\":0,"
			"\"e\":[100000000000000000000]}", false, false, &rc);
	is_str(s, "  .a: 12345678901234567890 \xe2\x86\x92 12345678901234567891\n",
			"numbers by exact value (one float64 apart is a change, 1.0 is 1), "
			"strings by their text");
	free(s);
	s = diff("{\"a\":100000000000000000000,\"b\":[1.50,2]}",
			"{\"a\":1e+21,\"b\":[1.50,2,3]}", false, true, &rc);
	is_str(s, "[{\"path\":\".a\",\"old\":100000000000000000000,\"new\":1e+21},"
			"{\"path\":\".b\",\"old\":[1.50,2],\"new\":[1.50,2,3]}]",
			"JSON: the literals as written");
	free(s);
	s = diff("{\"a\":1,\"a\":2}", "{\"a\":2}", false, false, &rc);
	is_str(s, "", "a key twice: the last one counts");
	free(s);

	s = diff("{", "{}", false, false, &rc);
	ok(rc == -KINF_EJSON, "bad JSON: -KINF_EJSON");
	free(s);
	return tap_done();
}
