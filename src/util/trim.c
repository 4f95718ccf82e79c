#include <stdlib.h>
#include <string.h>

#include "trim.h"

/* The UTF-8 encodings of the white space above U+007F (unicode.White_Space). */
static const char *const wide_spaces[] = {
	"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80",
	"\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84",
	"\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89",
	"\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f",
	"\xe3\x80\x80",
};

static int ascii_space(unsigned char c) {
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/*
 * The length of the white space s (len bytes) starts with (at_end: ends
 * with), 0 for none. Matching the encoding's bytes is what Go's decoding
 * of the first (last) rune comes to: a space's encoding is a whole rune
 * wherever it stands.
 */
static size_t space_at(const char *s, size_t len, int at_end) {
	unsigned char c = (unsigned char)(at_end ? s[len - 1] : s[0]);
	if (c < 0x80) {
		return ascii_space(c) ? 1 : 0;
	}
	for (size_t i = 0; i < sizeof(wide_spaces) / sizeof(wide_spaces[0]); i++) {
		size_t n = strlen(wide_spaces[i]);
		if (n <= len && memcmp(at_end ? s + len - n : s, wide_spaces[i], n) == 0) {
			return n;
		}
	}
	return 0;
}

size_t kinf_trim_space(const char *s, size_t len, size_t *ret_start) {
	size_t start = 0, n;
	while (len > 0 && (n = space_at(s + start, len, 0)) > 0) {
		start += n;
		len -= n;
	}
	while (len > 0 && (n = space_at(s + start, len, 1)) > 0) {
		len -= n;
	}
	*ret_start = start;
	return len;
}

char *kinf_trim_space_dup(const char *s, size_t len, size_t *ret_len) {
	size_t start;
	size_t n = kinf_trim_space(s, len, &start);
	char *out = malloc(n + 1);
	if (out) {
		memcpy(out, s + start, n);
		out[n] = '\0';
		if (ret_len) {
			*ret_len = n;
		}
	}
	return out;
}
