#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "servefilter.h"
#include "tap.h"

/* What serve_append_item writes for json (parsed, so compact). */
static char *item(const char *json) {
	struct kinf_object_limits limits = { .max_bytes = 1 << 20, .max_depth = 100 };
	struct kinf_object *obj = NULL;
	struct kinf_buf out = {0};
	if (kinf_object_parse(json, strlen(json), &limits, &obj, NULL) < 0 ||
			serve_append_item(obj, &out) < 0) {
		kinf_object_unref(obj);
		kinf_buf_release(&out);
		return strdup("(error)");
	}
	kinf_object_unref(obj);
	return out.data ? kinf_buf_take(&out) : strdup("");
}

static void check(const char *json, const char *want, const char *what) {
	char *got = item(json);
	is_str(got, want, what);
	free(got);
}

int main(void) {
	check("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}",
			"{\"metadata\":{\"name\":\"a\"}}",
			"a watch event's object: kind and apiVersion in front are cut");
	check("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"a\"}}",
			"{\"metadata\":{\"name\":\"a\"}}", "the other order too");
	check("{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},\"spec\":{}}",
			"{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},\"spec\":{}}",
			"a list item without them: unchanged");
	check("{\"metadata\":{\"name\":\"a\"},\"kind\":\"Pod\",\"spec\":{\"kind\":\"x\"},"
			"\"apiVersion\":\"v1\"}",
			"{\"metadata\":{\"name\":\"a\"},\"spec\":{\"kind\":\"x\"}}",
			"elsewhere: the top-level members only, nested ones stay");
	check("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}", "{\"metadata\":{\"name\":\"a\"}}",
			"kind alone");
	check("{\"metadata\":{\"name\":\"a\"},\"apiVersion\":\"v1\",\"kind\":\"Pod\"}",
			"{\"metadata\":{\"name\":\"a\"}}", "at the end: no separator left over");
	check("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"k\\\"ind\"}}",
			"{\"metadata\":{\"name\":\"k\\\"ind\"}}", "escapes after them are kept as sent");
	return tap_done();
}
