#ifndef KINF_JSON_H
#define KINF_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "buf.h"
#include "err.h"

/*
 * A strict pull reader over one complete JSON text (RFC 8259): the caller
 * walks objects and arrays and skips what it does not need, and every byte
 * walked over is validated (syntax, UTF-8, escapes, depth). Nothing is
 * allocated. Used for the hot path (object records, watch events); general
 * documents (discovery, Tables, exec credentials) use jansson.
 */
enum kinf_json_type {
	KINF_JSON_INVALID = 0,
	KINF_JSON_OBJECT,
	KINF_JSON_ARRAY,
	KINF_JSON_STRING,
	KINF_JSON_NUMBER,
	KINF_JSON_TRUE,
	KINF_JSON_FALSE,
	KINF_JSON_NULL,
};

struct kinf_json_reader {
	const char *start;
	const char *p;
	const char *end;
	unsigned depth;
	unsigned max_depth;
	/* Set on the first error; every later call fails at once. */
	int error;
	/* White space was skipped outside strings (the text is not compact). */
	bool spaced;
	const char *error_at;
	const char *error_msg;
};

/* A raw string span (without quotes) as it stands in the input. */
struct kinf_json_span {
	const char *s;
	size_t len;
	bool escaped;	/* contains backslash escapes: decode before use */
};

void kinf_json_reader_init(struct kinf_json_reader *r, const char *data,
		size_t len, unsigned max_depth);
/* Type of the next value without consuming it (skips white space). */
enum kinf_json_type kinf_json_peek(struct kinf_json_reader *r);
/* Validate and skip one value. 0 or -KINF_EJSON. */
KINF_MUST_CHECK int kinf_json_skip(struct kinf_json_reader *r);
/* Skip one value and return its raw bytes. */
KINF_MUST_CHECK int kinf_json_skip_span(struct kinf_json_reader *r, const char **ret_start,
		size_t *ret_len);
/* Enter an object; then kinf_json_member() until it returns 0. */
KINF_MUST_CHECK int kinf_json_object_begin(struct kinf_json_reader *r);
/*
 * Read the next member's key and position r at its value, which the caller
 * must consume (read or skip). 1: a member, 0: end of object, <0: error.
 */
KINF_MUST_CHECK int kinf_json_member(struct kinf_json_reader *r, struct kinf_json_span *ret_key);
/* Enter an array; then kinf_json_element() until it returns 0. */
KINF_MUST_CHECK int kinf_json_array_begin(struct kinf_json_reader *r);
/* 1: positioned at the next element, 0: end of array, <0: error. */
KINF_MUST_CHECK int kinf_json_element(struct kinf_json_reader *r);
/* Read a string value as a raw span. -KINF_EJSON if not a string. */
KINF_MUST_CHECK int kinf_json_string_span(struct kinf_json_reader *r, struct kinf_json_span *ret);
/* Read a string value, decoded, appended to out. */
KINF_MUST_CHECK int kinf_json_string(struct kinf_json_reader *r, struct kinf_buf *out);
/* Read a scalar (string decoded; number/true/false raw text; null -> 0 + *ret_null). */
KINF_MUST_CHECK int kinf_json_scalar(struct kinf_json_reader *r, struct kinf_buf *out,
		bool *ret_null);
/* After a whole document: only white space may remain. */
KINF_MUST_CHECK int kinf_json_end(struct kinf_json_reader *r);

/* kinf_json_span_eq for a span with escapes: decoded, then compared. */
bool kinf_json_span_eq_decoded(const struct kinf_json_span *span, const char *lit,
		size_t lit_len);
/*
 * True when span equals the NUL-terminated literal (decoding escapes).
 * Inline: callers compare member names with literals, whose length the
 * compiler then knows (a strlen per member was 2% of parsing a list).
 */
static inline bool kinf_json_span_eq(const struct kinf_json_span *span, const char *lit) {
	size_t n = strlen(lit);
	if (!span->escaped) {
		return n == span->len && memcmp(span->s, lit, n) == 0;
	}
	return kinf_json_span_eq_decoded(span, lit, n);
}
/* Append span's decoded text to out. */
KINF_MUST_CHECK int kinf_json_span_decode(const struct kinf_json_span *span, struct kinf_buf *out);

/* "line 3, column 14: unexpected character" for the reader's error. */
void kinf_json_reader_error(const struct kinf_json_reader *r,
		struct kinf_error *reterr);

/*
 * Append data to out with white space outside strings removed. The input
 * must already be valid JSON.
 */
KINF_MUST_CHECK int kinf_json_compact(const char *data, size_t len, struct kinf_buf *out);

/* Append s as a JSON string literal (quoted, escaped) to out. */
KINF_MUST_CHECK int kinf_json_quote(struct kinf_buf *out, const char *s, size_t len);
/* kinf_json_quote for builders: a failure sticks in out (buf.h's put family). */
void kinf_json_put_quoted(struct kinf_buf *out, const char *s, size_t len);

/*
 * Append ".key" to a field path, or "['key']" when key holds anything but
 * letters, digits, '_' and '-' (or is empty): "spec.x", "['a.b/c']", the
 * paths error messages and watch --diff show.
 */
void kinf_json_path_append_key(struct kinf_buf *path, const char *key, size_t len);

/* Whether s[0..len) is valid UTF-8 (RFC 3629, as jansson's strings must be). */
bool kinf_json_utf8_valid(const char *s, size_t len);

/* Validate one complete JSON text. 0 or -KINF_EJSON with detail. */
KINF_MUST_CHECK int kinf_json_validate(const char *data, size_t len, unsigned max_depth,
		struct kinf_error *reterr);

#endif
