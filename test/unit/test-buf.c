/*
 * src/buf.c: appends, the put family for builders, the failure that
 * sticks (forced by asking for more room than can be), and the UTF-8
 * encoder behind the \u escapes of JSON strings and JSONPath literals.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "tap.h"

static void test_appends(void) {
	struct kinf_buf b = {0};

	is_int(kinf_buf_append_str(&b, "a"), 0, "append_str");
	is_int(kinf_buf_append_char(&b, 'b'), 0, "append_char");
	is_int(kinf_buf_printf(&b, "%d", 42), 0, "printf");
	is_int(kinf_buf_append_urlenc(&b, "x y/z"), 0, "append_urlenc");
	is_str(b.data, "ab42x%20y%2Fz", "in order, NUL-terminated");
	kinf_buf_puts(&b, "-");
	kinf_buf_putc(&b, '!');
	kinf_buf_putf(&b, "%s", "ok");
	kinf_buf_put(&b, "xyz", 2);
	kinf_buf_put_urlenc(&b, "/");
	is_int(kinf_buf_error(&b), 0, "puts: no failure");
	is_str(b.data, "ab42x%20y%2Fz-!okxy%2F", "puts append as the appends do");
	char *s = kinf_buf_take(&b);
	is_str(s, "ab42x%20y%2Fz-!okxy%2F", "take hands the data over");
	ok(b.data == NULL && b.len == 0, "and leaves the buffer empty");
	free(s);
	s = kinf_buf_take(&b);
	is_str(s, "", "take of an empty buffer: an empty string");
	free(s);
}

static void test_failure_sticks(void) {
	struct kinf_buf b = {0};

	kinf_buf_puts(&b, "head ");
	is_int(kinf_buf_reserve(&b, SIZE_MAX), -KINF_ENOMEM, "more room than can be: ENOMEM");
	is_int(kinf_buf_error(&b), -KINF_ENOMEM, "the failure is kept");
	kinf_buf_puts(&b, "lost");
	kinf_buf_putf(&b, "%d", 1);
	is_str(b.data, "head ", "puts after a failure do nothing: no hole in the middle");
	is_int(kinf_buf_append_str(&b, "x"), -KINF_ENOMEM, "appends after a failure fail too");
	is_int(kinf_buf_printf(&b, "x"), -KINF_ENOMEM, "printf after a failure fails too");
	ok(kinf_buf_take(&b) == NULL, "take of a failed buffer: NULL, as out of memory");
	is_int(kinf_buf_error(&b), 0, "and the buffer is usable again");
	must(kinf_buf_append_str(&b, "x"));
	is_int(kinf_buf_reserve(&b, SIZE_MAX), -KINF_ENOMEM, "fail again");
	kinf_buf_reset(&b);
	is_int(kinf_buf_error(&b), 0, "reset forgets the failure");
	is_int(kinf_buf_append_str(&b, "y"), 0, "appends work after reset");
	is_str(b.data, "y", "and hold only what came after");
	kinf_buf_release(&b);
}

/*
 * Each length at both of its ends; the code points it refuses (surrogates,
 * past U+10FFFF) leave the buffer alone.
 */
static void test_utf8(void) {
	static const struct {
		unsigned long cp;
		const char *want;
	} cases[] = {
		{ 0x0, "\x00" }, { 0x41, "A" }, { 0x7f, "\x7f" },
		{ 0x80, "\xc2\x80" }, { 0xe9, "\xc3\xa9" }, { 0x7ff, "\xdf\xbf" },
		{ 0x800, "\xe0\xa0\x80" }, { 0x20ac, "\xe2\x82\xac" },
		{ 0xd7ff, "\xed\x9f\xbf" }, { 0xe000, "\xee\x80\x80" },
		{ 0xffff, "\xef\xbf\xbf" }, { 0x10000, "\xf0\x90\x80\x80" },
		{ 0x1f600, "\xf0\x9f\x98\x80" }, { 0x10ffff, "\xf4\x8f\xbf\xbf" },
	};
	static const unsigned long bad[] = { 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x110000,
		0xffffffffUL };
	struct kinf_buf b = {0};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		size_t n = cases[i].cp ? strlen(cases[i].want) : 1;
		kinf_buf_reset(&b);
		int rc = kinf_buf_append_utf8(&b, cases[i].cp);
		ok(rc == 0 && b.len == n && memcmp(b.data, cases[i].want, n) == 0,
			"U+%04lX is %zu byte(s)", cases[i].cp, n);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		kinf_buf_reset(&b);
		must(kinf_buf_append_str(&b, "x"));
		int rc = kinf_buf_append_utf8(&b, bad[i]);
		ok(rc == -KINF_EINVAL && b.len == 1 && strcmp(b.data, "x") == 0,
			"U+%04lX refused, nothing appended", bad[i]);
	}
	kinf_buf_release(&b);
}

static void test_strv_failure_sticks(void) {
	struct kinf_strv sv = {0};

	kinf_strv_put_str(&sv, "a");
	is_int(kinf_strv_push_take(&sv, NULL), -KINF_ENOMEM, "a push of NULL (a failed copy): ENOMEM");
	is_int(kinf_strv_error(&sv), -KINF_ENOMEM, "kept");
	kinf_strv_put_str(&sv, "b");
	is_int(kinf_strv_push_str(&sv, "c"), -KINF_ENOMEM, "later pushes fail");
	is_int(sv.n, 1, "and add nothing: no hole in the middle");
	kinf_strv_reset(&sv);
	is_int(kinf_strv_error(&sv), 0, "reset forgets the failure");
	kinf_strv_put_str(&sv, "d");
	is_str(sv.n == 1 ? sv.v[0] : NULL, "d", "puts work after reset");
	kinf_strv_release(&sv);
}

/* kinf_grow: room for one more, doubling; an overflowing size fails and leaves v alone. */
static void test_grow(void) {
	int *v = NULL;
	size_t cap = 0, n = 0, moves = 0;
	for (int i = 0; i < 100; i++) {
		int *nv = kinf_grow(v, &cap, n, sizeof(*v));
		if (!nv) {
			break;
		}
		moves += nv != v || n == 0;
		v = nv;
		v[n++] = i;
	}
	ok(n == 100 && cap == 128 && v[99] == 99, "100 elements: capacity 8, 16, ..., 128");
	ok(moves <= 5, "  grown five times at most (%zu)", moves);
	size_t huge = SIZE_MAX / 2;
	ok(kinf_grow(v, &huge, huge, 16) == NULL && huge == SIZE_MAX / 2,
		"a size that would overflow: NULL, capacity unchanged");
	ok(kinf_grow(v, &cap, 3, sizeof(*v)) == v && cap == 128, "room left: v itself");
	free(v);
}

int main(void) {
	test_grow();
	test_strv_failure_sticks();
	test_appends();
	test_failure_sticks();
	test_utf8();
	return tap_done();
}
