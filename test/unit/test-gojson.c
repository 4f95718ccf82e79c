/* gojson: JSON text as Go's json.MarshalIndent writes it (kubectl's -o jsonpath-as-json). */
#include <jansson.h>
#include <string.h>

#include "buf.h"
#include "gojson.h"
#include "tap.h"

static void is_go(const char *json, const char *want) {
	json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
	struct kinf_buf out = {0};
	ok(v != NULL, "parse %s", json);
	is_int(kinf_gojson_append_indent(&out, v, "    "), 0, "append %s", json);
	is_str(out.data ? out.data : "", want, "%s", json);
	kinf_buf_release(&out);
	json_decref(v);
}

int main(void) {
	is_go("[]", "[]");
	is_go("{}", "{}");
	is_go("[[],{}]", "[\n    [],\n    {}\n]");
	is_go("{\"b\":1,\"a\":[true,false,null]}",
		"{\n    \"a\": [\n        true,\n        false,\n        null\n    ],\n    \"b\": 1\n}");
	/* HTML-safe, as encoding/json: <, >, & and U+2028/9 escaped */
	is_go("\"<a&b>\"", "\"\\u003ca\\u0026b\\u003e\"");
	is_go("\"\\u2028\\u2029\"", "\"\\u2028\\u2029\"");
	is_go("\"tab\\tnl\\ncr\\r\\u0001\\\"\\\\/\"", "\"tab\\tnl\\ncr\\r\\u0001\\\"\\\\/\"");
	is_go("\"é ✓\"", "\"é ✓\"");
	is_go("[1.5,1e6,-0.0,1e21,1e-7,123456789012]",
		"[\n    1.5,\n    1000000,\n    -0,\n    1e+21,\n    1e-7,\n    123456789012\n]");
	return tap_done();
}
