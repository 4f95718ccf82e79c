#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "termsafe.h"

int main(void) {
	static const struct {
		const char *in;
		size_t len;	/* 0: strlen(in) */
		const char *want;
	} cases[] = {
		{ "web-7d9f-x2x", 0, "web-7d9f-x2x" },
		{ "", 0, "" },
		{ "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb3", 0,
			"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb3" },
		{ "a\\b", 0, "a\\b" },
		/* kubectl's two (cli-runtime printers.EscapeTerminal) */
		{ "\x1b]0;pwned\x07", 0, "^[]0;pwned^G" },
		{ "\x1b[2J", 0, "^[[2J" },
		{ "a\rb", 0, "a\\rb" },
		{ "a\nb\tc", 0, "a\\nb\\tc" },
		{ "\x01\x08\x1f\x7f", 0, "^A^H^_^?" },
		{ "a\0b", 3, "a^@b" },
		/* C1 controls as UTF-8 (U+0085 NEL, U+009B CSI) */
		{ "x\xc2\x85y\xc2\x9b", 0, "x\\u0085y\\u009b" },
		{ "\xc2\xa0", 0, "\xc2\xa0" },
		/* bidi controls */
		{ "a\xe2\x80\xae" "b", 0, "a\\u202eb" },
		{ "\xe2\x80\xaa\xe2\x80\xad\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 0,
			"\\u202a\\u202d\\u2066\\u2069\\u200e\\u200f\\u061c" },
		{ "\xe2\x80\x8b", 0, "\xe2\x80\x8b" },	/* zero width space: not a control */
		/* not UTF-8: each byte shown */
		{ "a\xff", 0, "a\\xff" },
		{ "\x9b", 0, "\\x9b" },
		{ "\xc0\xaf", 0, "\\xc0\\xaf" },		/* overlong '/' */
		{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80" },	/* a surrogate */
		{ "\xe2\x80", 0, "\\xe2\\x80" },		/* cut short */
		{ "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80" },	/* above U+10FFFF */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in);
		struct kinf_buf b = {0};
		kinf_termsafe_put(&b, cases[i].in, len);
		ok(kinf_buf_error(&b) == 0, "case %zu escapes", i);
		is_str(b.data, cases[i].want, "case %zu: %s", i, cases[i].want);
		ok(kinf_termsafe_needed(cases[i].in, len) == (strcmp(cases[i].in, cases[i].want) != 0 ||
				len != strlen(cases[i].in)), "case %zu: needed() agrees", i);
		kinf_buf_release(&b);
	}
	char *d = kinf_termsafe_dup("ns\x1b[31m/x");
	is_str(d, "ns^[[31m/x", "dup escapes a C string");
	free(d);

	/* The stream writer: the same text, nothing allocated. */
	char *mem = NULL;
	size_t mem_len = 0;
	FILE *f = open_memstream(&mem, &mem_len);
	kinf_termsafe_fput(f, "a\x1b\tb", 4);
	kinf_termsafe_fput(f, "/plain", 6);
	ok(f && fclose(f) == 0, "fput: the stream is fine");
	is_str(mem, "a^[\\tb/plain", "fput writes what put appends");
	free(mem);

	return tap_done();
}
