/*
 * Terminal escaping (src/termsafe.c), which every table, -o name line,
 * --diff line, version line and "kinf: ..." message goes through. Input:
 * the bytes to escape, as a server could send them.
 *
 * Properties checked besides memory safety: the output is valid UTF-8
 * (whatever the input) and holds no C0 control, no DEL, no C1 control
 * (U+0080-U+009F) and no bidi control (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069); text that needs no escaping is copied
 * unchanged and kinf_termsafe_needed() says which; escaping twice changes
 * nothing more; kinf_termsafe_fput() and kinf_termsafe_dup() write what
 * kinf_termsafe_put() appends.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fuzz.h"
#include "termsafe.h"

/*
 * The checker's own UTF-8 decoder (not termsafe's): the code point at p,
 * its length in *ret_len, or -1 for a sequence that is not well-formed.
 */
static long decode(const unsigned char *p, size_t n, size_t *ret_len) {
	static const long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 :
		(p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
	long cp;

	if (len == 0 || len > n) {
		return -1;
	}
	cp = len == 1 ? p[0] : p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			return -1;
		}
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		return -1;
	}
	*ret_len = len;
	return cp;
}

static void check_safe(const char *s, size_t n) {
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		size_t len = 0;
		long cp = decode(p + i, n - i, &len);
		FUZZ_CHECK(cp >= 0);
		FUZZ_CHECK(cp >= 0x20 && cp != 0x7f);
		FUZZ_CHECK(!(cp >= 0x80 && cp <= 0x9f));
		FUZZ_CHECK(cp != 0x061c && cp != 0x200e && cp != 0x200f);
		FUZZ_CHECK(!(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069));
		i += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const char *in = (const char *)data;
	struct kinf_buf out = {0}, again = {0};

	kinf_termsafe_put(&out, in, size);
	FUZZ_CHECK(kinf_buf_error(&out) == 0);
	FUZZ_CHECK(out.data && strlen(out.data) == out.len);
	check_safe(out.data, out.len);
	bool same = out.len == size && memcmp(out.data, in, size) == 0;
	FUZZ_CHECK(kinf_termsafe_needed(in, size) == !same);
	FUZZ_CHECK(!kinf_termsafe_needed(out.data, out.len));
	kinf_termsafe_put(&again, out.data, out.len);
	FUZZ_CHECK(kinf_buf_error(&again) == 0);
	FUZZ_CHECK(again.len == out.len && memcmp(again.data, out.data, out.len) == 0);

	char *mem = NULL;
	size_t mem_len = 0;
	FILE *f = open_memstream(&mem, &mem_len);
	FUZZ_CHECK(f);
	kinf_termsafe_fput(f, in, size);
	FUZZ_CHECK(fclose(f) == 0);
	FUZZ_CHECK(mem_len == out.len && memcmp(mem, out.data, out.len) == 0);
	free(mem);

	/* A C string stops at its NUL: the escaped prefix. */
	char *s = malloc(size + 1);
	FUZZ_CHECK(s);
	memcpy(s, in, size);
	s[size] = '\0';
	char *dup = kinf_termsafe_dup(s);
	struct kinf_buf prefix = {0};
	kinf_termsafe_put(&prefix, s, strlen(s));
	FUZZ_CHECK(dup && kinf_buf_error(&prefix) == 0);
	FUZZ_CHECK(strcmp(dup, prefix.data) == 0);
	free(dup);
	free(s);
	kinf_buf_release(&prefix);
	kinf_buf_release(&again);
	kinf_buf_release(&out);
	return 0;
}
