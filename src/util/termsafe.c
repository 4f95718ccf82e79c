#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "termsafe.h"

/*
 * The UTF-8 sequence at s (at most n bytes): its length, with the code
 * point in *ret_cp, or 0 when it is not well-formed (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF).
 */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret_cp) {
	uint32_t cp;
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
		if (s[0] == 0xe0) {
			lo = 0xa0;
		} else if (s[0] == 0xed) {
			hi = 0x9f;
		}
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
		if (s[0] == 0xf0) {
			lo = 0x90;
		} else if (s[0] == 0xf4) {
			hi = 0x8f;
		}
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi) {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
		cp = cp << 6 | (s[i] & 0x3f);
	}
	*ret_cp = cp;
	return len;
}

static bool is_bidi(uint32_t cp) {
	return cp == 0x061c || cp == 0x200e || cp == 0x200f ||
		(cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * The escape for the character at s (its length in *ret_len), written
 * into esc (at least 8 bytes), or NULL when it is copied as it is.
 */
static const char *escape_at(const unsigned char *s, size_t n, size_t *ret_len,
		char esc[8]) {
	static const char hex[] = "0123456789abcdef";
	uint32_t cp;
	size_t len = utf8_decode(s, n, &cp);

	if (len == 0) {
		*ret_len = 1;
		esc[0] = '\\';
		esc[1] = 'x';
		esc[2] = hex[s[0] >> 4];
		esc[3] = hex[s[0] & 15];
		esc[4] = '\0';
		return esc;
	}
	*ret_len = len;
	if (cp == 0x1b) {
		return "^[";
	}
	if (cp == '\r') {
		return "\\r";
	}
	if (cp == '\n') {
		return "\\n";
	}
	if (cp == '\t') {
		return "\\t";
	}
	if (cp < 0x20 || cp == 0x7f) {
		esc[0] = '^';
		esc[1] = (char)(cp ^ 0x40);
		esc[2] = '\0';
		return esc;
	}
	if ((cp >= 0x80 && cp <= 0x9f) || is_bidi(cp)) {
		esc[0] = '\\';
		esc[1] = 'u';
		for (int i = 0; i < 4; i++) {
			esc[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
		}
		esc[6] = '\0';
		return esc;
	}
	return NULL;
}

/* Printable ASCII is by far the most common case: no decoding for it. */
static bool plain_ascii(unsigned char c) {
	return c >= 0x20 && c < 0x7f;
}

bool kinf_termsafe_needed(const char *s, size_t len) {
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char esc[8];

	while (p < end) {
		size_t n;
		if (plain_ascii(*p)) {
			p++;
			continue;
		}
		if (escape_at(p, (size_t)(end - p), &n, esc)) {
			return true;
		}
		p += n;
	}
	return false;
}

/*
 * Hand s[0..len) escaped to emit in pieces: runs copied as they are and
 * the escapes between them. The one walk behind the writers below.
 */
static void escape_to(const char *s, size_t len,
		void (*emit)(void *sink, const char *piece, size_t n), void *sink) {
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	const unsigned char *run = p;	/* start of bytes copied as they are */
	char esc[8];

	while (p < end) {
		size_t n;
		const char *e;
		if (plain_ascii(*p)) {
			p++;
			continue;
		}
		if (!(e = escape_at(p, (size_t)(end - p), &n, esc))) {
			p += n;
			continue;
		}
		emit(sink, (const char *)run, (size_t)(p - run));
		emit(sink, e, strlen(e));
		p += n;
		run = p;
	}
	/* Also when nothing is left: a buffer is then allocated, a string. */
	emit(sink, (const char *)run, (size_t)(p - run));
}

static void emit_buf(void *sink, const char *piece, size_t n) {
	kinf_buf_put(sink, piece, n);
}

static void emit_file(void *sink, const char *piece, size_t n) {
	if (n) {
		fwrite(piece, 1, n, sink);
	}
}

void kinf_termsafe_put(struct kinf_buf *out, const char *s, size_t len) {
	escape_to(s, len, emit_buf, out);
}

char *kinf_termsafe_dup(const char *s) {
	struct kinf_buf b = {0};
	kinf_termsafe_put(&b, s, strlen(s));
	return kinf_buf_take(&b);	/* NULL when a put failed */
}

void kinf_termsafe_fput(FILE *out, const char *s, size_t len) {
	if (!kinf_termsafe_needed(s, len)) {
		fwrite(s, 1, len, out);
		return;
	}
	escape_to(s, len, emit_file, out);
}
