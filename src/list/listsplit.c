/*
 * The list splitter (listsplit.h). One pass over each piece: a small state
 * machine for depth 0 and 1 (expect), bracket depth and string state below
 * that. A value or element that began in an earlier piece is gathered in
 * s->value; one that begins and ends in the same piece is handed over
 * where it lies.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jsonlex.h"
#include "listsplit.h"
#include "object.h"

enum expect {
	EXPECT_OPEN, EXPECT_FIRST_KEY, EXPECT_KEY, EXPECT_COLON, EXPECT_VALUE,
	EXPECT_COMMA, EXPECT_END,
};

struct kinf_listsplit {
	const struct kinf_listsplit_ops *ops;
	void *userdata;
	size_t max_element;
	int error;
	unsigned depth;		/* brackets open, outside strings */
	bool in_string;
	bool escape;
	enum expect expect;	/* at depth 1 (and 0) */
	bool key_active;	/* collecting a depth-1 key */
	struct kinf_buf key;
	bool split;		/* inside a split array (depth >= 2) */
	bool capture;		/* collecting a member value or an element */
	bool need_sep;		/* an element was parsed in place: ',' or ']' next */
	struct kinf_buf value;
	struct kinf_buf chunk;	/* input gathered for element_prefix */
};

/*
 * With ops->element_prefix, pieces are gathered up to this size and each
 * element is parsed where it lies: only elements cut by a chunk's end (and
 * ones that fail) are scanned for their end first and copied.
 */
#define CHUNK_BYTES ((size_t)256 << 10)

static bool is_split_key(const struct kinf_buf *key) {
	return (key->len == 5 && memcmp(key->data, "items", 5) == 0) ||
		(key->len == 4 && memcmp(key->data, "rows", 4) == 0);
}

struct kinf_listsplit *kinf_listsplit_new(
		const struct kinf_listsplit_ops *ops, void *userdata,
		size_t max_element) {
	struct kinf_listsplit *s = calloc(1, sizeof(*s));
	if (s) {
		s->ops = ops;
		s->userdata = userdata;
		s->max_element = max_element ? max_element : KINF_OBJECT_DEFAULT_MAX_BYTES;
	}
	return s;
}

void kinf_listsplit_free(struct kinf_listsplit *s) {
	if (s) {
		kinf_buf_release(&s->key);
		kinf_buf_release(&s->value);
		kinf_buf_release(&s->chunk);
		free(s);
	}
}

static int split_fail(struct kinf_listsplit *s, int code, const char *msg,
		struct kinf_error *reterr) {
	s->error = -code;
	return kinf_error_set(reterr, code, "%s", msg);
}

static size_t trim_len(const char *p, size_t n) {
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\n' ||
			p[n - 1] == '\r' || p[n - 1] == '\t')) {
		n--;
	}
	return n;
}

/*
 * End of a captured member value or element: hand it over. The bytes are
 * p[0..n) when the capture began in this piece (no copy), else the
 * buffered start plus p[0..n).
 */
static int emit(struct kinf_listsplit *s, bool element, const char *p,
		size_t n, struct kinf_error *reterr) {
	int rc;

	s->capture = false;
	if (s->value.len) {
		if (kinf_buf_append(&s->value, p, n) < 0) {
			return split_fail(s, KINF_ENOMEM, "out of memory", reterr);
		}
		p = s->value.data;
		n = s->value.len;
	}
	n = trim_len(p, n);
	if (n == 0) {
		return split_fail(s, KINF_EJSON, "empty value in list", reterr);
	}
	if (element) {
		rc = s->ops->element(s->key.data, s->key.len, p, n, s->userdata);
	} else {
		rc = s->ops->member ? s->ops->member(s->key.data, s->key.len,
				p, n, s->userdata) : 0;
	}
	kinf_buf_reset(&s->value);
	if (rc < 0) {
		s->error = rc;
	}
	return rc;
}

/*
 * Fast paths. Inside a string only '"' and '\\' matter (eight bytes at a
 * time: kinf_jsonlex_string_body_end); inside a captured value below its top
 * level only brackets and quotes do. The object parser validates every
 * byte of what is captured.
 */
static const bool structural[256] = {
	['"'] = true, ['{'] = true, ['}'] = true, ['['] = true, [']'] = true,
};

static int scan(struct kinf_listsplit *s, const char *data, size_t len,
		struct kinf_error *reterr) {
	size_t span_start = 0;	/* start of the capture within this piece */
	int rc;

	for (size_t i = 0; i < len; i++) {
		if (s->in_string) {
			if (!s->escape && !s->key_active) {
				i = kinf_jsonlex_string_body_end(data, i, len);
				if (i == len) {
					break;
				}
			}
			char c = data[i];
			if (s->escape) {
				s->escape = false;
			} else if (c == '\\') {
				s->escape = true;
			} else if (c == '"') {
				s->in_string = false;
				if (s->key_active) {
					s->key_active = false;
					s->expect = EXPECT_COLON;
				}
			} else if (s->key_active) {
				if (kinf_buf_append_char(&s->key, c) < 0) {
					return split_fail(s, KINF_ENOMEM, "out of memory", reterr);
				}
			}
			continue;
		}
		if (s->capture && s->depth > (s->split ? 2u : 1u)) {
			/* Inside the captured value: only brackets and quotes. */
			while (i < len && !structural[(unsigned char)data[i]]) {
				i++;
			}
			if (i == len) {
				break;
			}
		}
		char c = data[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
			continue;
		}
		/* A capture ends at ',' or the closing bracket of its container. */
		if (s->capture && ((s->depth == 1 && (c == ',' || c == '}')) ||
				(s->depth == 2 && s->split && (c == ',' || c == ']')))) {
			if ((rc = emit(s, s->depth == 2, data + span_start, i - span_start,
					reterr)) < 0) {
				return rc;
			}
			if (s->depth == 1) {
				s->expect = EXPECT_COMMA;
			}
		}
		if (s->depth == 0) {
			if (s->expect == EXPECT_OPEN && c == '{') {
				s->depth = 1;
				s->expect = EXPECT_FIRST_KEY;
				continue;
			}
			return split_fail(s, KINF_EJSON, s->expect == EXPECT_OPEN ?
					"list response is not a JSON object" :
					"unexpected data after the list", reterr);
		}
		if (s->depth == 1) {
			if (s->capture) {
				/*
				 * The rest of a scalar member value ("foo": 3, true,
				 * null): its end is the ',' or '}' above; the
				 * member's validation judges the letters and digits.
				 */
				if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
						(c >= '0' && c <= '9') || c == '.' || c == '+' ||
						c == '-') {
					continue;
				}
				return split_fail(s, KINF_EJSON, "malformed list object", reterr);
			}
			switch (c) {
			case '"':
				if (s->expect == EXPECT_KEY || s->expect == EXPECT_FIRST_KEY) {
					s->in_string = true;
					s->key_active = true;
					kinf_buf_reset(&s->key);
					continue;
				}
				break;
			case ':':
				if (s->expect == EXPECT_COLON) {
					s->expect = EXPECT_VALUE;
					continue;
				}
				return split_fail(s, KINF_EJSON, "unexpected ':' in list", reterr);
			case ',':
				if (s->expect == EXPECT_COMMA) {
					s->expect = EXPECT_KEY;
					continue;
				}
				return split_fail(s, KINF_EJSON, "unexpected ',' in list", reterr);
			case '}':
				/* Not after a ',': JSON has no trailing commas. */
				if (s->expect == EXPECT_COMMA || s->expect == EXPECT_FIRST_KEY) {
					s->depth = 0;
					s->expect = EXPECT_END;
					continue;
				}
				return split_fail(s, KINF_EJSON, "unexpected '}' in list", reterr);
			default:
				break;
			}
			if (s->expect != EXPECT_VALUE) {
				return split_fail(s, KINF_EJSON, "malformed list object", reterr);
			}
			if (c == '[' && is_split_key(&s->key)) {
				s->depth = 2;
				s->split = true;
				s->expect = EXPECT_COMMA;
				continue;
			}
			/* Start capturing a whole member value. */
			s->capture = true;
			s->expect = EXPECT_COMMA;
			span_start = i;
		} else if (s->depth == 2 && s->split) {
			if (c == ']') {
				s->depth = 1;
				s->split = false;
				s->need_sep = false;
				continue;
			}
			if (c == ',') {
				s->need_sep = false;
				continue;
			}
			if (s->need_sep) {
				return split_fail(s, KINF_EJSON, "',' or ']' expected after a list item",
						reterr);
			}
			if (!s->capture && s->ops->element_prefix && c == '{') {
				size_t used = 0;
				rc = s->ops->element_prefix(s->key.data, s->key.len, data + i,
						len - i, &used, s->userdata);
				if (rc == 0) {
					i += used - 1;
					s->need_sep = true;
					continue;
				}
				if (rc > 0) {
					/* Taken, and the list stops (reterr says why). */
					s->error = -rc;
					return -rc;
				}
				/* Cut short or malformed: scan it, then element() says which. */
			}
			if (!s->capture) {
				s->capture = true;
				span_start = i;
			}
		}
		switch (c) {
		case '"':
			s->in_string = true;
			break;
		case '{':
		case '[':
			if (++s->depth > 1000) {
				return split_fail(s, KINF_EJSON,
						"a list item is nested more than 1000 levels deep", reterr);
			}
			break;
		case '}':
		case ']':
			if (s->depth <= 1 + (s->split ? 1u : 0u)) {
				return split_fail(s, KINF_EJSON, "unbalanced brackets in list", reterr);
			}
			s->depth--;
			break;
		default:
			break;
		}
	}
	if (s->capture) {
		if (s->value.len + (len - span_start) > s->max_element) {
			s->error = -KINF_ETOOBIG;
			return kinf_error_set(reterr, KINF_ETOOBIG, "a list item exceeds the "
					"limit of %zu bytes (--max-object-size)", s->max_element);
		}
		if (kinf_buf_append(&s->value, data + span_start, len - span_start) < 0) {
			return split_fail(s, KINF_ENOMEM, "out of memory", reterr);
		}
	}
	return 0;
}

int kinf_listsplit_feed(struct kinf_listsplit *s, const char *data,
		size_t len, struct kinf_error *reterr) {
	int rc;

	if (s->error) {
		return s->error;
	}
	if (!s->ops->element_prefix) {
		return scan(s, data, len, reterr);
	}
	if (kinf_buf_append(&s->chunk, data, len) < 0) {
		return split_fail(s, KINF_ENOMEM, "out of memory", reterr);
	}
	if (s->chunk.len < CHUNK_BYTES) {
		return 0;
	}
	rc = scan(s, s->chunk.data, s->chunk.len, reterr);
	kinf_buf_reset(&s->chunk);
	return rc;
}

int kinf_listsplit_feed_block(struct kinf_listsplit *s, const char *data,
		size_t len, struct kinf_error *reterr) {
	int rc;

	if (s->error) {
		return s->error;
	}
	if (s->chunk.len) {
		rc = scan(s, s->chunk.data, s->chunk.len, reterr);
		kinf_buf_reset(&s->chunk);
		if (rc < 0) {
			return rc;
		}
	}
	return scan(s, data, len, reterr);
}

int kinf_listsplit_finish(struct kinf_listsplit *s,
		struct kinf_error *reterr) {
	if (s->error) {
		return s->error;
	}
	if (s->chunk.len) {
		int rc = scan(s, s->chunk.data, s->chunk.len, reterr);
		kinf_buf_reset(&s->chunk);
		if (rc < 0) {
			return rc;
		}
	}
	if (s->expect != EXPECT_END) {
		return split_fail(s, KINF_EJSON, "truncated list response", reterr);
	}
	return 0;
}
