/*
 * Label and field selector parsing (src/selector.c) and matching against
 * an object. Input: one flags byte (bit 0: field selector), the selector
 * text up to a NUL byte, then an object's JSON (used when it parses).
 *
 * Properties checked besides memory safety: a selector that parses also
 * parses with spaces around its commas, a failure always has a message,
 * and the empty selector matches everything.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fuzz.h"
#include "object.h"
#include "selector.h"

static const char default_object[] =
	"{\"metadata\":{\"name\":\"a\",\"namespace\":\"default\","
	"\"labels\":{\"app\":\"web\",\"tier\":\"1\",\"k8s.io/x\":\"y\"}},"
	"\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"image\":\"nginx\"}]},"
	"\"status\":{\"phase\":\"Running\"}}";

typedef int (*parse_func)(const char *, struct kinf_selector **, struct kinf_error *);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	char *text = fuzz_string(&in);
	parse_func parse = flags & 1 ? kinf_field_selector_parse : kinf_label_selector_parse;
	struct kinf_selector *sel = NULL;
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};

	if (kinf_object_parse((const char *)in.p, in.n, NULL, &obj, NULL) < 0) {
		FUZZ_CHECK(kinf_object_parse(default_object, sizeof(default_object) - 1,
				NULL, &obj, NULL) == 0);
	}
	int rc = parse(text, &sel, &err);
	if (rc < 0) {
		FUZZ_CHECK(rc == -KINF_EINVAL || rc == -KINF_ENOMEM);
		FUZZ_CHECK(err.code == -rc && err.message[0]);
		FUZZ_CHECK(memchr(err.message, '\0', sizeof(err.message)));
	} else {
		int m = kinf_selector_match(sel, obj);
		FUZZ_CHECK(m >= 0);
		if (!sel) {
			FUZZ_CHECK(m == 1);
		}
		/* Spaces after commas change nothing (apimachinery skips them). */
		if (!strchr(text, '(')) {
			struct kinf_buf spaced = {0};
			for (const char *p = text; *p; p++) {
				FUZZ_CHECK(kinf_buf_append_char(&spaced, *p) == 0);
				if (*p == ',') {
					FUZZ_CHECK(kinf_buf_append_char(&spaced, ' ') == 0);
				}
			}
			struct kinf_selector *sel2 = NULL;
			int rc2 = parse(spaced.data ? spaced.data : "", &sel2, NULL);
			if (rc2 == 0) {
				FUZZ_CHECK(kinf_selector_match(sel2, obj) == m);
			}
			kinf_selector_free(sel2);
			kinf_buf_release(&spaced);
		}
		kinf_selector_free(sel);
	}
	FUZZ_CHECK(kinf_selector_match(NULL, obj) == 1);
	kinf_object_unref(obj);
	free(text);
	return 0;
}
