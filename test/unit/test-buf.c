/*
 * src/buf.c: appends, the put family for builders, and the failure that
 * sticks (forced by asking for more room than can be).
 */
#include <stdint.h>
#include <stdlib.h>

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
	is_int(kinf_buf_error(&b), 0, "puts: no failure");
	is_str(b.data, "ab42x%20y%2Fz-!okxy", "puts append as the appends do");
	char *s = kinf_buf_take(&b);
	is_str(s, "ab42x%20y%2Fz-!okxy", "take hands the data over");
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

int main(void) {
	test_appends();
	test_failure_sticks();
	return tap_done();
}
