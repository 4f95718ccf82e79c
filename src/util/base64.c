#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base64.h"
#include "buf.h"
#include "err.h"

static const char std_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *kinf_base64_encode(const void *in, size_t len, enum kinf_base64_alphabet alphabet) {
	const unsigned char *p = in;
	const char *chars = alphabet == KINF_BASE64_URL_RAW ? url_chars : std_chars;
	bool pad = alphabet == KINF_BASE64_STD;

	size_t groups = len / 3 + (len % 3 != 0);
	if (groups > (SIZE_MAX - 1) / 4) {
		return NULL;
	}
	char *out = malloc(groups * 4 + 1), *o = out;
	if (!out) {
		return NULL;
	}
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < len) {
			v |= (unsigned)p[i + 1] << 8;
		}
		if (i + 2 < len) {
			v |= p[i + 2];
		}
		*o++ = chars[(v >> 18) & 63];
		*o++ = chars[(v >> 12) & 63];
		if (i + 1 < len) {
			*o++ = chars[(v >> 6) & 63];
		} else if (pad) {
			*o++ = '=';
		}
		if (i + 2 < len) {
			*o++ = chars[v & 63];
		} else if (pad) {
			*o++ = '=';
		}
	}
	*o = '\0';
	return out;
}

/* The value of a standard base64 digit, or -1. */
static int std_value(unsigned char c) {
	if (c >= 'A' && c <= 'Z') {
		return c - 'A';
	}
	if (c >= 'a' && c <= 'z') {
		return c - 'a' + 26;
	}
	if (c >= '0' && c <= '9') {
		return c - '0' + 52;
	}
	if (c == '+') {
		return 62;
	}
	if (c == '/') {
		return 63;
	}
	return -1;
}

int kinf_base64_decode(const char *in, size_t len, char **ret, size_t *ret_len) {
	char *out = malloc(len / 4 * 3 + 4);
	size_t n = 0, pad = 0;
	unsigned acc = 0;
	int bits = 0;

	if (!out) {
		return -KINF_ENOMEM;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;
		if (c == '\n' || c == '\r' || c == ' ' || c == '\t') {
			continue;
		}
		if (c == '=') {
			pad++;
			continue;
		}
		v = std_value(c);
		if (v < 0 || pad > 0) {
			goto bad;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	/* 6 leftover bits can't be a byte; padding must fit what is missing */
	if (bits >= 6 || pad > 2 || (pad > 0 && (bits / 2) != (int)pad)) {
		goto bad;
	}
	out[n] = '\0';
	*ret = out;
	*ret_len = n;
	return 0;
bad:
	kinf_explicit_bzero(out, n);
	free(out);
	return -KINF_EINVAL;
}
