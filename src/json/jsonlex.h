#ifndef KINF_JSONLEX_H
#define KINF_JSONLEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * JSON's lexical pieces shared by the readers over it: the pull reader
 * (json.c), its AVX2 fast path (jsonskim.c) and the stream splitters
 * (listsplit.c, watchstream.c). Header-only, so that none of them calls
 * into another for a token.
 */

/*
 * The end of the JSON number at p, or NULL with *ret_bad at the byte where
 * the grammar breaks (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?).
 */
static inline const char *kinf_jsonlex_number_end(const char *p, const char *end,
		const char **ret_bad) {
	*ret_bad = p;
	if (p < end && *p == '-') {
		p++;
	}
	if (p >= end) {
		*ret_bad = p;
		return NULL;
	}
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		while (p < end && *p >= '0' && *p <= '9') {
			p++;
		}
	} else {
		*ret_bad = p;
		return NULL;
	}
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9') {
			*ret_bad = p;
			return NULL;
		}
		while (p < end && *p >= '0' && *p <= '9') {
			p++;
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-')) {
			p++;
		}
		if (p >= end || *p < '0' || *p > '9') {
			*ret_bad = p;
			return NULL;
		}
		while (p < end && *p >= '0' && *p <= '9') {
			p++;
		}
	}
	return p;
}

/*
 * The first '"' or '\\' in data[i..len), eight bytes at a time; len when
 * there is none. For scanners that find the end of a string in a stream.
 */
#define KINF_JSONLEX_ONES UINT64_C(0x0101010101010101)
#define KINF_JSONLEX_HIGHS UINT64_C(0x8080808080808080)

static inline size_t kinf_jsonlex_string_body_end(const char *data, size_t i, size_t len) {
	while (len - i >= 8) {
		uint64_t x;
		memcpy(&x, data + i, sizeof(x));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		x = __builtin_bswap64(x);
#endif
		uint64_t q = x ^ (KINF_JSONLEX_ONES * '"');
		uint64_t b = x ^ (KINF_JSONLEX_ONES * '\\');
		uint64_t m = (((q - KINF_JSONLEX_ONES) & ~q) | ((b - KINF_JSONLEX_ONES) & ~b)) &
			KINF_JSONLEX_HIGHS;
		if (m) {
			return i + (__builtin_ctzll(m) >> 3);
		}
		i += 8;
	}
	while (i < len && data[i] != '"' && data[i] != '\\') {
		i++;
	}
	return i;
}

#endif
