#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "tap.h"

/*
 * What of the HTTP layer can be checked without a server (the rest is
 * test/cli: badinput.bats against test/fixtures/badservers).
 */

static void test_retry_after(void) {
	static const struct {
		const char *value;
		long want;
	} cases[] = {
		{ "0", 0 }, { "1", 1 }, { "60", 60 }, { "61", 61 }, { "+5", 5 },
		{ "1000000000", 1000000000L },
		/* negative: no wait, as time.Duration(-5 s) sleeps not at all */
		{ "-5", 0 }, { "-99999999999999999999", 0 },
		/* too large for a long: more than any cap */
		{ "9223372036854775807", LONG_MAX }, { "9223372036854775808", LONG_MAX },
		{ "99999999999999999999999999999999999999", LONG_MAX },
		/* not strconv.Atoi's syntax: not a retry */
		{ "", -1 }, { "+", -1 }, { "-", -1 }, { "1.5", -1 }, { "1 2", -1 },
		{ "soon", -1 }, { "0x10", -1 }, { "5s", -1 }, { "1\x1b[2J", -1 },
		{ "Wed, 21 Oct 2099 07:28:00 GMT", -1 }, { "99999999999999999999x", -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		is_int(kinf_http_parse_retry_after(cases[i].value, strlen(cases[i].value)),
				cases[i].want, "Retry-After case %zu", i + 1);
	}
	is_int(kinf_http_parse_retry_after("12", 1), 1, "Retry-After: only len bytes read");
}

int main(void) {
	test_retry_after();
	return tap_done();
}
