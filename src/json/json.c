#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hex.h"
#include "json.h"
#include "jsonlex.h"
#include "jsonskim.h"

/*
 * The reader keeps one invariant: r->p points at the next unread byte, and
 * containers are tracked only by depth (the caller's walk mirrors the
 * nesting), so the reader needs no stack.
 */

/* Recognised by kinf_json_reader_error, which adds the limit. */
static const char too_deep[] = "nesting too deep";

static int fail(struct kinf_json_reader *r, const char *at, const char *msg) {
	if (!r->error) {
		r->error = -KINF_EJSON;
		r->error_at = at;
		r->error_msg = msg;
	}
	return r->error;
}

void kinf_json_reader_init(struct kinf_json_reader *r, const char *data,
		size_t len, unsigned max_depth) {
	memset(r, 0, sizeof(*r));
	r->start = r->p = data;
	r->end = data + len;
	r->max_depth = max_depth ? max_depth : 512;
}

static inline bool is_ws(char c) {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline void skip_ws(struct kinf_json_reader *r) {
	if (r->p < r->end && (unsigned char)*r->p <= ' ' && is_ws(*r->p)) {
		r->spaced = true;
		do {
			r->p++;
		} while (r->p < r->end && is_ws(*r->p));
	}
}

enum kinf_json_type kinf_json_peek(struct kinf_json_reader *r) {
	if (r->error) {
		return KINF_JSON_INVALID;
	}
	skip_ws(r);
	if (r->p >= r->end) {
		return KINF_JSON_INVALID;
	}
	switch (*r->p) {
	case '{': return KINF_JSON_OBJECT;
	case '[': return KINF_JSON_ARRAY;
	case '"': return KINF_JSON_STRING;
	case 't': return KINF_JSON_TRUE;
	case 'f': return KINF_JSON_FALSE;
	case 'n': return KINF_JSON_NULL;
	default:
		if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9')) {
			return KINF_JSON_NUMBER;
		}
		return KINF_JSON_INVALID;
	}
}

static int read_hex4(const char *p, const char *end, unsigned *ret) {
	unsigned v = 0;
	if (end - p < 4) {
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		int h = kinf_hex_value(p[i]);
		if (h < 0) {
			return -1;
		}
		v = v << 4 | (unsigned)h;
	}
	*ret = v;
	return 0;
}

/*
 * Length of the valid UTF-8 sequence at p (2-4 bytes, lead byte >= 0x80),
 * or 0 when it is invalid: overlong forms, surrogates and code points above
 * U+10FFFF are rejected (RFC 3629).
 */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
	unsigned c = p[0];
	size_t n = (size_t)(end - p);
	if (c >= 0xc2 && c <= 0xdf) {
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	}
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) {
			return 0;
		}
		if (c == 0xe0 && p[1] < 0xa0) {
			return 0;	/* overlong */
		}
		if (c == 0xed && p[1] >= 0xa0) {
			return 0;	/* surrogate */
		}
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
				(p[3] & 0xc0) != 0x80) {
			return 0;
		}
		if (c == 0xf0 && p[1] < 0x90) {
			return 0;
		}
		if (c == 0xf4 && p[1] >= 0x90) {
			return 0;
		}
		return 4;
	}
	return 0;
}

/*
 * Eight bytes at a time (SWAR): a mask with the high bit set in the first
 * byte of x that a string scan must look at ('"', '\\', a control character
 * or a non-ASCII byte) and possibly in later ones; 0 when there is none.
 * Borrows only run towards later bytes, so the lowest flag is exact.
 */
#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

static inline uint64_t special_bytes(uint64_t x) {
	uint64_t q = x ^ (ONES * '"');
	uint64_t b = x ^ (ONES * '\\');
	return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((x - ONES * 0x20) & ~x) | x) & HIGHS;
}

static inline uint64_t load64(const unsigned char *p) {
	uint64_t x;
	memcpy(&x, p, sizeof(x));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

/* Advance p over plain ASCII string bytes (no quote, backslash, control). */
static inline const unsigned char *skip_plain(const unsigned char *p,
		const unsigned char *end) {
#ifdef __SSE2__
	/*
	 * Sixteen bytes at a time: a signed compare with 0x20 catches control
	 * characters and non-ASCII bytes (negative as signed chars) at once.
	 */
	const __m128i quote = _mm_set1_epi8('"');
	const __m128i bslash = _mm_set1_epi8('\\');
	const __m128i space = _mm_set1_epi8(0x20);
	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
				_mm_cmpeq_epi8(x, bslash)), _mm_cmplt_epi8(x, space));
		unsigned bits = (unsigned)_mm_movemask_epi8(m);
		if (bits) {
			return p + __builtin_ctz(bits);
		}
		p += 16;
	}
#endif
	while (end - p >= 8) {
		uint64_t m = special_bytes(load64(p));
		if (m) {
			return p + (__builtin_ctzll(m) >> 3);
		}
		p += 8;
	}
	while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80) {
		p++;
	}
	return p;
}

/*
 * The end of the string at p (its opening quote) when it is plain ASCII
 * without escapes, the common case, inlined; NULL sends the caller to
 * scan_string() for the rest (escapes, UTF-8, errors).
 */
static inline const char *plain_string_end(const char *p, const char *end) {
	const unsigned char *q = skip_plain((const unsigned char *)p + 1,
			(const unsigned char *)end);
	return q < (const unsigned char *)end && *q == '"' ? (const char *)q + 1 : NULL;
}

/* Scan a string starting at the opening quote; validate; fill span. */
static int scan_string(struct kinf_json_reader *r, struct kinf_json_span *ret) {
	const unsigned char *p = (const unsigned char *)r->p + 1;
	const unsigned char *end = (const unsigned char *)r->end;
	bool escaped = false;

	if (r->p >= r->end || *r->p != '"') {
		return fail(r, r->p, "string expected");
	}
	for (;;) {
		/* Fast path: plain ASCII. */
		p = skip_plain(p, end);
		if (p >= end) {
			return fail(r, (const char *)p, "unterminated string");
		}
		if (*p == '"') {
			break;
		}
		if (*p < 0x20) {
			return fail(r, (const char *)p, "control character in string");
		}
		if (*p == '\\') {
			escaped = true;
			if (p + 1 >= end) {
				return fail(r, (const char *)p, "unterminated string");
			}
			switch (p[1]) {
			case '"': case '\\': case '/': case 'b': case 'f':
			case 'n': case 'r': case 't':
				p += 2;
				break;
			case 'u': {
				unsigned u;
				if (read_hex4((const char *)p + 2, (const char *)end, &u) < 0) {
					return fail(r, (const char *)p, "invalid \\u escape");
				}
				p += 6;
				if (u >= 0xdc00 && u <= 0xdfff) {
					return fail(r, (const char *)p - 6, "lone low surrogate in \\u escape");
				}
				if (u >= 0xd800 && u <= 0xdbff) {
					unsigned lo;
					if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
							read_hex4((const char *)p + 2, (const char *)end, &lo) < 0 ||
							lo < 0xdc00 || lo > 0xdfff) {
						return fail(r, (const char *)p - 6, "lone high surrogate in \\u escape");
					}
					p += 6;
				}
				break;
			}
			default:
				return fail(r, (const char *)p, "invalid escape in string");
			}
			continue;
		}
		size_t n = utf8_len(p, end);
		if (!n) {
			return fail(r, (const char *)p, "invalid UTF-8 in string");
		}
		p += n;
	}
	if (ret) {
		ret->s = r->p + 1;
		ret->len = (size_t)((const char *)p - (r->p + 1));
		ret->escaped = escaped;
	}
	r->p = (const char *)p + 1;
	return 0;
}

static int scan_number(struct kinf_json_reader *r) {
	const char *bad;
	const char *p = kinf_jsonlex_number_end(r->p, r->end, &bad);
	if (!p) {
		return fail(r, bad, "invalid number");
	}
	r->p = p;
	return 0;
}

static int scan_literal(struct kinf_json_reader *r, const char *lit, size_t n) {
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, lit, n) != 0) {
		return fail(r, r->p, "invalid literal");
	}
	r->p += n;
	return 0;
}

/* The recursive skip, for readers allowing more nesting than skip_iter. */
static int skip_recursive(struct kinf_json_reader *r) {
	int rc;
	switch (kinf_json_peek(r)) {
	case KINF_JSON_OBJECT:
		if ((rc = kinf_json_object_begin(r)) < 0) {
			return rc;
		}
		while ((rc = kinf_json_member(r, NULL)) > 0) {
			if ((rc = skip_recursive(r)) < 0) {
				return rc;
			}
		}
		return rc;
	case KINF_JSON_ARRAY:
		if ((rc = kinf_json_array_begin(r)) < 0) {
			return rc;
		}
		while ((rc = kinf_json_element(r)) > 0) {
			if ((rc = skip_recursive(r)) < 0) {
				return rc;
			}
		}
		return rc;
	case KINF_JSON_STRING:
		return scan_string(r, NULL);
	case KINF_JSON_NUMBER:
		return scan_number(r);
	case KINF_JSON_TRUE:
		return scan_literal(r, "true", 4);
	case KINF_JSON_FALSE:
		return scan_literal(r, "false", 5);
	case KINF_JSON_NULL:
		return scan_literal(r, "null", 4);
	default:
		if (r->error) {
			return r->error;
		}
		return fail(r, r->p, r->p >= r->end ? "unexpected end of input" :
				"unexpected character");
	}
}

#define SKIP_MAX_NEST 4096

/*
 * The same validation as skip_recursive without a call per value: one loop,
 * the closing bracket of each open container on a stack. Most bytes of an
 * object record (spec, status, managedFields) go through here. API servers
 * send compact JSON, so each step first tests for the byte it expects and
 * looks for white space only when that fails.
 */
static int skip_iter(struct kinf_json_reader *r) {
	char close[SKIP_MAX_NEST];
	unsigned d = 0;
	unsigned room = r->max_depth > r->depth ? r->max_depth - r->depth : 0;
	const char *msg;
	const char *p = r->p, *end = r->end, *q;

#define SKIP_WS() do { \
		if (p < end && (unsigned char)*p <= ' ' && is_ws(*p)) { \
			r->spaced = true; \
			do { \
				p++; \
			} while (p < end && is_ws(*p)); \
		} \
	} while (0)
/* Run a scanner of the reader from p; continue after what it read. */
#define SCAN(call) do { \
		r->p = p; \
		if ((call) < 0) { \
			return r->error; \
		} \
		p = r->p; \
	} while (0)
#define STRING() do { \
		if ((q = plain_string_end(p, end))) { \
			p = q; \
		} else { \
			SCAN(scan_string(r, NULL)); \
		} \
	} while (0)

	SKIP_WS();
	if (p >= end) {
		msg = "unexpected end of input";
		goto bad;
	}
value:
	switch (*p) {
	case '{':
		if (d >= room) {
			msg = too_deep;
			goto bad;
		}
		close[d++] = '}';
		p++;
		if (p < end && *p == '"') {
			goto key;
		}
		SKIP_WS();
		if (p >= end) {
			msg = "unexpected end of input in object";
			goto bad;
		}
		if (*p == '}') {
			p++;
			d--;
			goto after;
		}
		if (*p != '"') {
			msg = "object key expected";
			goto bad;
		}
		goto key;
	case '[':
		if (d >= room) {
			msg = too_deep;
			goto bad;
		}
		close[d++] = ']';
		p++;
		SKIP_WS();
		if (p >= end) {
			msg = "unexpected end of input in array";
			goto bad;
		}
		if (*p == ']') {
			p++;
			d--;
			goto after;
		}
		goto value;
	case '"':
		STRING();
		goto after;
	case 't':
		SCAN(scan_literal(r, "true", 4));
		goto after;
	case 'f':
		SCAN(scan_literal(r, "false", 5));
		goto after;
	case 'n':
		SCAN(scan_literal(r, "null", 4));
		goto after;
	default:
		if (*p == '-' || (*p >= '0' && *p <= '9')) {
			SCAN(scan_number(r));
			goto after;
		}
		msg = "unexpected character";
		goto bad;
	}
key:
	/* p is at the key's opening quote. */
	STRING();
	if (p < end && *p == ':') {
		p++;
	} else {
		SKIP_WS();
		if (p >= end || *p != ':') {
			msg = "':' expected";
			goto bad;
		}
		p++;
	}
	if (p < end && (unsigned char)*p > ' ') {
		goto value;
	}
	SKIP_WS();
	if (p >= end) {
		msg = "value expected";
		goto bad;
	}
	goto value;
after:
	if (d == 0) {
		r->p = p;
		return 0;
	}
	if (p < end && (unsigned char)*p <= ' ') {
		SKIP_WS();
	}
	if (p >= end) {
		msg = close[d - 1] == '}' ? "unexpected end of input in object" :
			"unexpected end of input in array";
		goto bad;
	}
	if (*p == ',') {
		p++;
		if (close[d - 1] == '}') {
			if (p < end && *p == '"') {
				goto key;
			}
			SKIP_WS();
			if (p >= end || *p != '"') {
				msg = "object key expected";
				goto bad;
			}
			goto key;
		}
		SKIP_WS();
		if (p >= end) {
			msg = "unexpected end of input";
			goto bad;
		}
		if (*p == ']') {
			msg = "trailing comma in array";
			goto bad;
		}
		goto value;
	}
	if (*p == close[d - 1]) {
		p++;
		d--;
		goto after;
	}
	msg = close[d - 1] == '}' ? "',' or '}' expected" : "',' or ']' expected";
	goto bad;
bad:
	return fail(r, p, msg);
#undef SKIP_WS
#undef SCAN
#undef STRING
}

int kinf_json_skip(struct kinf_json_reader *r) {
	if (r->error) {
		return r->error;
	}
	if (r->max_depth > SKIP_MAX_NEST) {
		return skip_recursive(r);
	}
	const char *q = kinf_jsonskim(r->p, r->end,
			r->max_depth > r->depth ? r->max_depth - r->depth : 0);
	if (q) {
		r->p = q;
		return 0;
	}
	return skip_iter(r);
}

int kinf_json_skip_span(struct kinf_json_reader *r, const char **ret_start,
		size_t *ret_len) {
	kinf_json_peek(r);
	const char *start = r->p;
	int rc = kinf_json_skip(r);
	if (rc < 0) {
		return rc;
	}
	*ret_start = start;
	*ret_len = (size_t)(r->p - start);
	return 0;
}

/*
 * Containers: after '{' or '[' the reader needs to know whether the next
 * member is the first one (no comma expected). That is encoded by leaving
 * r->p just after the opening bracket: kinf_json_member() checks whether the
 * previous non-blank byte is the bracket.
 */
static bool at_container_start(const struct kinf_json_reader *r) {
	const char *q = r->p;
	while (q > r->start && (q[-1] == ' ' || q[-1] == '\n' ||
			q[-1] == '\r' || q[-1] == '\t')) {
		q--;
	}
	return q > r->start && (q[-1] == '{' || q[-1] == '[');
}

int kinf_json_object_begin(struct kinf_json_reader *r) {
	if (kinf_json_peek(r) != KINF_JSON_OBJECT) {
		return fail(r, r->p, "object expected");
	}
	if (++r->depth > r->max_depth) {
		return fail(r, r->p, too_deep);
	}
	r->p++;
	return 0;
}

int kinf_json_member(struct kinf_json_reader *r, struct kinf_json_span *ret_key) {
	if (r->error) {
		return r->error;
	}
	bool first = at_container_start(r);
	skip_ws(r);
	if (r->p >= r->end) {
		return fail(r, r->p, "unexpected end of input in object");
	}
	if (*r->p == '}') {
		if (!first && r->p[-1] == ',') {
			return fail(r, r->p, "trailing comma in object");
		}
		r->p++;
		r->depth--;
		return 0;
	}
	if (!first) {
		if (*r->p != ',') {
			return fail(r, r->p, "',' or '}' expected");
		}
		r->p++;
		skip_ws(r);
	}
	if (r->p >= r->end || *r->p != '"') {
		return fail(r, r->p, "object key expected");
	}
	int rc = scan_string(r, ret_key);
	if (rc < 0) {
		return rc;
	}
	skip_ws(r);
	if (r->p >= r->end || *r->p != ':') {
		return fail(r, r->p, "':' expected");
	}
	r->p++;
	skip_ws(r);
	if (r->p >= r->end) {
		return fail(r, r->p, "value expected");
	}
	return 1;
}

int kinf_json_array_begin(struct kinf_json_reader *r) {
	if (kinf_json_peek(r) != KINF_JSON_ARRAY) {
		return fail(r, r->p, "array expected");
	}
	if (++r->depth > r->max_depth) {
		return fail(r, r->p, too_deep);
	}
	r->p++;
	return 0;
}

int kinf_json_element(struct kinf_json_reader *r) {
	if (r->error) {
		return r->error;
	}
	bool first = at_container_start(r);
	skip_ws(r);
	if (r->p >= r->end) {
		return fail(r, r->p, "unexpected end of input in array");
	}
	if (*r->p == ']') {
		if (!first && r->p[-1] == ',') {
			return fail(r, r->p, "trailing comma in array");
		}
		r->p++;
		r->depth--;
		return 0;
	}
	if (!first) {
		if (*r->p != ',') {
			return fail(r, r->p, "',' or ']' expected");
		}
		r->p++;
		skip_ws(r);
		if (r->p < r->end && *r->p == ']') {
			return fail(r, r->p, "trailing comma in array");
		}
	}
	return 1;
}

int kinf_json_string_span(struct kinf_json_reader *r, struct kinf_json_span *ret) {
	if (kinf_json_peek(r) != KINF_JSON_STRING) {
		return fail(r, r->p, "string expected");
	}
	return scan_string(r, ret);
}

int kinf_json_span_decode(const struct kinf_json_span *span, struct kinf_buf *out) {
	const char *p = span->s, *end = span->s + span->len;
	int rc;

	if (!span->escaped) {
		return kinf_buf_append(out, span->s, span->len);
	}
	while (p < end) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		if (!bs) {
			return kinf_buf_append(out, p, (size_t)(end - p));
		}
		if ((rc = kinf_buf_append(out, p, (size_t)(bs - p))) < 0) {
			return rc;
		}
		/* The span was validated when it was scanned. */
		char c = bs[1];
		unsigned u;
		p = bs + 2;
		switch (c) {
		case 'b': rc = kinf_buf_append_char(out, '\b'); break;
		case 'f': rc = kinf_buf_append_char(out, '\f'); break;
		case 'n': rc = kinf_buf_append_char(out, '\n'); break;
		case 'r': rc = kinf_buf_append_char(out, '\r'); break;
		case 't': rc = kinf_buf_append_char(out, '\t'); break;
		case 'u':
			read_hex4(p, end, &u);
			p += 4;
			if (u >= 0xd800 && u <= 0xdbff) {
				unsigned lo;
				read_hex4(p + 2, end, &lo);
				p += 6;
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			}
			rc = kinf_buf_append_utf8(out, u);
			break;
		default:
			rc = kinf_buf_append_char(out, c);
			break;
		}
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

bool kinf_json_span_eq_decoded(const struct kinf_json_span *span, const char *lit,
		size_t lit_len) {
	struct kinf_buf b = {0};
	bool eq = kinf_json_span_decode(span, &b) == 0 &&
		b.len == lit_len && memcmp(b.data, lit, b.len) == 0;
	kinf_buf_release(&b);
	return eq;
}

int kinf_json_string(struct kinf_json_reader *r, struct kinf_buf *out) {
	struct kinf_json_span span;
	int rc = kinf_json_string_span(r, &span);
	if (rc < 0) {
		return rc;
	}
	return kinf_json_span_decode(&span, out);
}

int kinf_json_scalar(struct kinf_json_reader *r, struct kinf_buf *out,
		bool *ret_null) {
	enum kinf_json_type t = kinf_json_peek(r);
	const char *start = r->p;
	int rc;

	if (ret_null) {
		*ret_null = false;
	}
	switch (t) {
	case KINF_JSON_STRING:
		return kinf_json_string(r, out);
	case KINF_JSON_NUMBER:
	case KINF_JSON_TRUE:
	case KINF_JSON_FALSE:
		if ((rc = kinf_json_skip(r)) < 0) {
			return rc;
		}
		return kinf_buf_append(out, start, (size_t)(r->p - start));
	case KINF_JSON_NULL:
		if (ret_null) {
			*ret_null = true;
		}
		return kinf_json_skip(r);
	default:
		return fail(r, r->p, "scalar expected");
	}
}

int kinf_json_end(struct kinf_json_reader *r) {
	if (r->error) {
		return r->error;
	}
	skip_ws(r);
	if (r->p != r->end) {
		return fail(r, r->p, "unexpected data after JSON value");
	}
	return 0;
}

void kinf_json_reader_error(const struct kinf_json_reader *r,
		struct kinf_error *reterr) {
	unsigned line = 1, col = 1;
	if (!reterr) {
		return;	/* the line and column take a pass over the text */
	}
	const char *at = r->error_at ? r->error_at : r->p;
	for (const char *q = r->start; q < at && q < r->end; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (r->error_msg == too_deep) {
		kinf_error_fill(reterr, KINF_EJSON, "line %u, column %u: nesting too deep "
				"(more than %u levels)", line, col, r->max_depth);
		return;
	}
	kinf_error_fill(reterr, KINF_EJSON, "line %u, column %u: %s", line, col,
			r->error_msg ? r->error_msg : "invalid JSON");
}

int kinf_json_compact(const char *data, size_t len, struct kinf_buf *out) {
	const char *p = data, *end = data + len;
	int rc = kinf_buf_reserve(out, len);
	if (rc < 0) {
		return rc;
	}
	while (p < end) {
		/* Copy a run up to the next quote or blank in one go. */
		const char *q = p;
		while (q < end && *q != '"' && *q != ' ' && *q != '\n' &&
				*q != '\r' && *q != '\t') {
			q++;
		}
		memcpy(out->data + out->len, p, (size_t)(q - p));
		out->len += (size_t)(q - p);
		p = q;
		if (p >= end) {
			break;
		}
		if (*p != '"') {
			p++;
			continue;
		}
		/* A string: copy through the closing quote. */
		q = p + 1;
		while (q < end && *q != '"') {
			q += *q == '\\' ? 2 : 1;
		}
		if (q < end) {
			q++;
		}
		if (q > end) {
			q = end;
		}
		memcpy(out->data + out->len, p, (size_t)(q - p));
		out->len += (size_t)(q - p);
		p = q;
	}
	out->data[out->len] = '\0';
	return 0;
}

void kinf_json_put_quoted(struct kinf_buf *out, const char *s, size_t len) {
	if (kinf_buf_error(out) == 0) {
		int rc = kinf_json_quote(out, s, len);
		if (rc < 0) {
			kinf_buf_fail(out, rc);
		}
	}
}

int kinf_json_quote(struct kinf_buf *out, const char *s, size_t len) {
	static const char hex[] = "0123456789abcdef";
	int rc = kinf_buf_append_char(out, '"');
	const char *run = s;
	for (size_t i = 0; i < len && rc == 0; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[7];
		if (c == '"') {
			esc = "\\\"";
		} else if (c == '\\') {
			esc = "\\\\";
		} else if (c == '\n') {
			esc = "\\n";
		} else if (c == '\r') {
			esc = "\\r";
		} else if (c == '\t') {
			esc = "\\t";
		} else if (c < 0x20) {
			u[0] = '\\'; u[1] = 'u'; u[2] = '0'; u[3] = '0';
			u[4] = hex[c >> 4]; u[5] = hex[c & 15]; u[6] = '\0';
			esc = u;
		}
		if (esc) {
			rc = kinf_buf_append(out, run, (size_t)(s + i - run));
			if (rc == 0) {
				rc = kinf_buf_append_str(out, esc);
			}
			run = s + i + 1;
		}
	}
	if (rc == 0) {
		rc = kinf_buf_append(out, run, (size_t)(s + len - run));
	}
	if (rc == 0) {
		rc = kinf_buf_append_char(out, '"');
	}
	return rc;
}

void kinf_json_path_append_key(struct kinf_buf *path, const char *key, size_t len) {
	bool plain = len > 0;
	for (size_t i = 0; plain && i < len; i++) {
		char c = key[i];
		plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_' || c == '-';
	}
	kinf_buf_puts(path, plain ? "." : "['");
	kinf_buf_put(path, key, len);
	if (!plain) {
		kinf_buf_puts(path, "']");
	}
}

bool kinf_json_utf8_valid(const char *s, size_t len) {
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	while (p < end) {
		size_t n = *p < 0x80 ? 1 : utf8_len(p, end);
		if (n == 0) {
			return false;
		}
		p += n;
	}
	return true;
}

int kinf_json_validate(const char *data, size_t len, unsigned max_depth,
		struct kinf_error *reterr) {
	struct kinf_json_reader r;
	kinf_json_reader_init(&r, data, len, max_depth);
	if (kinf_json_skip(&r) < 0 || kinf_json_end(&r) < 0) {
		kinf_json_reader_error(&r, reterr);
		return -KINF_EJSON;
	}
	return 0;
}
