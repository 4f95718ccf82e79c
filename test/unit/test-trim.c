#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "trim.h"

/*
 * Go's strings.TrimSpace, case by case: what each input trims to (the
 * expected values are Go's), NULs and bytes that are not UTF-8 kept.
 */
static const struct {
	const char *in;
	size_t len;		/* 0: strlen(in) */
	const char *want;
	size_t want_len;	/* 0: strlen(want) */
	const char *what;
} cases[] = {
	{ "", 0, "", 0, "empty" },
	{ " \t\r\n\v\f", 0, "", 0, "only ASCII white space" },
	{ "  tok en \n", 0, "tok en", 0, "both ends, inner space kept" },
	{ "token", 0, "token", 0, "nothing to trim" },
	{ "\xc2\xa0token\xc2\x85", 0, "token", 0, "U+00A0 and U+0085" },
	{ "\xe3\x80\x80tok\xe2\x80\x8a\xe2\x80\xa9", 0, "tok", 0,
		"U+3000, U+200A, U+2029" },
	{ "\xe2\x80\x8btok", 0, "\xe2\x80\x8btok", 0, "U+200B (zero width) is not a space" },
	{ "\xa0tok\xc2", 0, "\xa0tok\xc2", 0, "bytes that are not UTF-8 stay" },
	{ "\0tok\0", 5, "\0tok\0", 5, "NULs at both ends stay (a later check refuses them)" },
	{ " \0 ", 3, "\0", 1, "a NUL inside white space" },
	{ "\n\xc2\xa0 \xe1\x9a\x80x\xe2\x81\x9f\r\n", 0, "x", 0, "mixed, several layers" },
};

int main(void) {
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in);
		size_t want_len = cases[i].want_len ? cases[i].want_len : strlen(cases[i].want);
		size_t start = 99, n = kinf_trim_space(cases[i].in, len, &start);
		ok(n == want_len && start + n <= len &&
				memcmp(cases[i].in + start, cases[i].want, n) == 0,
				"%s (%zu bytes from %zu)", cases[i].what, n, start);
		size_t dup_len = 99;
		char *dup = kinf_trim_space_dup(cases[i].in, len, &dup_len);
		ok(dup && dup_len == want_len && memcmp(dup, cases[i].want, want_len) == 0 &&
				dup[want_len] == '\0', "  the copy, NUL-terminated");
		free(dup);
	}
	return tap_done();
}
