#include <string.h>

#include "buf.h"
#include "header.h"
#include "tap.h"

/*
 * Warning header values (kinf_header_warnings) as apimachinery's
 * ParseWarningHeaders reads them (its http_test.go cases where they
 * apply): code, agent, quoted text with escapes, an optional date, commas
 * between warnings; a malformed warning ends the value.
 */

/* What the parser passed on: "CODE:TEXT|CODE:TEXT|". */
static void collect(int code, const char *text, size_t len, void *userdata) {
	struct kinf_buf *b = userdata;
	must(kinf_buf_printf(b, "%d:", code));
	must(kinf_buf_append(b, text, len));
	must(kinf_buf_append_char(b, '|'));
	ok(text[len] == '\0', "  text NUL-terminated");
}

static void check(const char *value, int want_n, const char *want) {
	struct kinf_buf b = {0};
	int n = kinf_header_warnings(value, strlen(value), collect, &b);
	is_int(n, want_n, "[%s]: %d warnings", value, want_n);
	is_str(b.data ? b.data : "", want, "[%s]: %s", value, want);
	kinf_buf_release(&b);
}

int main(void) {
	check("", 0, "");
	check("   ", 0, "");
	check("299 - \"deprecated\"", 1, "299:deprecated|");
	check("  299 - \"trimmed\"  ", 1, "299:trimmed|");
	check("299 kube-apiserver \"a \\\"quoted\\\" \\\\ word\"", 1,
		"299:a \"quoted\" \\ word|");
	check("299 - \"with date\" \"Wed, 27 Nov 2026 03:00:00 GMT\"", 1, "299:with date|");
	check("299 - \"one\", 199 agent \"two\" \"date\" , 299 - \"three\"", 3,
		"299:one|199:two|299:three|");
	check("299 - \"\"", 1, "299:|");
	check("299 - \"\\x\"", 1, "299:x|");
	/* Malformed: the ones before count, the rest is skipped. */
	check("299 - \"ok\", garbage, 299 - \"skipped\"", 1, "299:ok|");
	check("299 - \"not ok\" trailing", 0, "");
	check("299 - \"ok\", 299 - \"not ok\" \"unterminated date", 1, "299:ok|");
	check("299 - \"ok\", 299 - \"not ok\" \"date\" trailing", 1, "299:ok|");
	check("29 - \"two digits\"", 0, "");
	check("2999 - \"four digits\"", 0, "");
	check("29x - \"not a number\"", 0, "");
	check("299  \"empty agent\"", 0, "");
	check("299 -", 0, "");
	check("299 - ", 0, "");
	check("299 - unquoted", 0, "");
	check("299 - \"unterminated", 0, "");
	check("299 - \"ends in a backslash\\", 0, "");
	check("299 a\x01b \"agent with a control character\"", 0, "");
	/* Text is passed on as it is (escaped where it is printed), unlike client-go. */
	check("299 - \"esc \x1b[2J and \xff\"", 1, "299:esc \x1b[2J and \xff|");
	/* A NUL inside the value is a byte of the text. */
	struct kinf_buf b = {0};
	static const char nul[] = "299 - \"a\0b\"";
	is_int(kinf_header_warnings(nul, sizeof(nul) - 1, collect, &b), 1, "a NUL in the text");
	ok(b.len == 8 && memcmp(b.data, "299:a\0b|", 8) == 0, "  kept, with its length");
	kinf_buf_release(&b);
	return tap_done();
}
