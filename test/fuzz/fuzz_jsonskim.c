/*
 * The 64-bytes-at-a-time skim under kinf_json_skip (src/jsonskim.c)
 * against the byte-at-a-time validator (src/json.c). Input: one byte for
 * the reader's depth limit (1-80, to cross the skim's 64 levels), then the
 * JSON.
 *
 * Properties: whatever the skim accepts, the validator accepts with the same
 * end; and kinf_json_skip gives the same answer (code, end, error position
 * and message) with the skim on and off.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "json.h"
#include "jsonskim.h"

struct outcome {
	int rc;
	const char *p;
	const char *error_at;
	const char *error_msg;
};

static struct outcome skip_with(const char *data, size_t len, unsigned max_depth, bool skim) {
	struct kinf_json_reader r;
	kinf_jsonskim_enable(skim);
	kinf_json_reader_init(&r, data, len, max_depth);
	struct outcome o = { .rc = kinf_json_skip(&r), .p = r.p };
	o.error_at = r.error ? r.error_at : NULL;
	o.error_msg = r.error ? r.error_msg : NULL;
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	unsigned max_depth = 1 + fuzz_byte(&in) % 80;
	/* A copy of its own, so that reads past the end are caught. */
	char *json = malloc(in.n ? in.n : 1);
	if (!json) {
		abort();
	}
	memcpy(json, in.p, in.n);

	bool was = kinf_jsonskim_enabled();
	const char *end = kinf_jsonskim_available() ?
		kinf_jsonskim(json, json + in.n, max_depth) : NULL;
	struct outcome slow = skip_with(json, in.n, max_depth, false);
	if (end) {
		FUZZ_CHECK(slow.rc == 0);
		FUZZ_CHECK(slow.p == end);
	}
	struct outcome fast = skip_with(json, in.n, max_depth, true);
	FUZZ_CHECK(fast.rc == slow.rc);
	FUZZ_CHECK(fast.p == slow.p);
	FUZZ_CHECK(fast.error_at == slow.error_at);
	FUZZ_CHECK(fast.error_msg == slow.error_msg);
	kinf_jsonskim_enable(was);
	free(json);
	return 0;
}
