#ifndef KINF_BUF_H
#define KINF_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"

/*
 * A growable byte buffer, always NUL-terminated when data is not NULL.
 * Initialise with {0}; release with kinf_buf_release().
 *
 * The first append that fails sticks: every later append fails (or, for
 * the kinf_buf_put* family, does nothing) until kinf_buf_reset() or
 * kinf_buf_release(), and kinf_buf_error() says so. Code that checks each
 * append uses kinf_buf_append*; code that builds a whole document (a
 * response, a line) uses kinf_buf_put* and checks kinf_buf_error() once,
 * before it uses what it built.
 */
struct kinf_buf {
	char *data;
	size_t len;
	size_t cap;
	int err;	/* the first failure (-KINF_ENOMEM), or 0 */
};

/* Ensure room for extra more bytes (plus the NUL). 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_buf_reserve(struct kinf_buf *buf, size_t extra);
KINF_MUST_CHECK int kinf_buf_append(struct kinf_buf *buf, const void *data, size_t len);
KINF_MUST_CHECK int kinf_buf_append_str(struct kinf_buf *buf, const char *str);
KINF_MUST_CHECK int kinf_buf_append_char(struct kinf_buf *buf, char c);
KINF_MUST_CHECK int kinf_buf_printf(struct kinf_buf *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
KINF_MUST_CHECK int kinf_buf_vprintf(struct kinf_buf *buf, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Append str percent-encoded for a URL query value (RFC 3986 unreserved kept). */
KINF_MUST_CHECK int kinf_buf_append_urlenc(struct kinf_buf *buf, const char *str);
/*
 * Append code point cp in UTF-8 (one to four bytes). 0, -KINF_ENOMEM, or
 * -KINF_EINVAL for a surrogate or a value above U+10FFFF (nothing appended).
 */
KINF_MUST_CHECK int kinf_buf_append_utf8(struct kinf_buf *buf, unsigned long cp);

/* The kinf_buf_append* family for builders: no result, see above. */
void kinf_buf_put(struct kinf_buf *buf, const void *data, size_t len);
void kinf_buf_puts(struct kinf_buf *buf, const char *str);
void kinf_buf_putc(struct kinf_buf *buf, char c);
void kinf_buf_putf(struct kinf_buf *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kinf_buf_put_urlenc(struct kinf_buf *buf, const char *str);
/* Mark buf failed (err < 0): something that went into it could not be made. */
void kinf_buf_fail(struct kinf_buf *buf, int err);
/* 0, or the failure that made buf unusable. */
KINF_MUST_CHECK int kinf_buf_error(const struct kinf_buf *buf);

/* Forget the contents (and a failure), keep the allocation. */
void kinf_buf_reset(struct kinf_buf *buf);
/* Free the allocation; buf is empty and reusable afterwards. */
void kinf_buf_release(struct kinf_buf *buf);
/*
 * Hand the data to the caller (who frees it); buf is empty afterwards.
 * NULL when memory ran out, now or in an earlier append.
 */
KINF_MUST_CHECK char *kinf_buf_take(struct kinf_buf *buf);

/*
 * A growable vector of owned strings. Initialise with {0}. As with
 * kinf_buf, the first failed push sticks (later pushes fail, the put
 * family does nothing) until reset or release; kinf_strv_error() says so.
 */
struct kinf_strv {
	char **v;
	size_t n;
	size_t cap;
	int err;	/* the first failure, or 0 */
};

/* Append a copy of the first len bytes of s. 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_strv_push(struct kinf_strv *sv, const char *s, size_t len);
KINF_MUST_CHECK int kinf_strv_push_str(struct kinf_strv *sv, const char *s);
/* Append s without copying: the vector owns it from now on. */
KINF_MUST_CHECK int kinf_strv_push_take(struct kinf_strv *sv, char *s);
/* kinf_strv_push* for builders: no result, see above. */
void kinf_strv_put(struct kinf_strv *sv, const char *s, size_t len);
void kinf_strv_put_str(struct kinf_strv *sv, const char *s);
void kinf_strv_put_take(struct kinf_strv *sv, char *s);
/* Mark sv failed (err < 0), as kinf_buf_fail. */
void kinf_strv_fail(struct kinf_strv *sv, int err);
/* 0, or the failure that made sv incomplete. */
KINF_MUST_CHECK int kinf_strv_error(const struct kinf_strv *sv);
bool kinf_strv_contains(const struct kinf_strv *sv, const char *s);
void kinf_strv_sort(struct kinf_strv *sv);
/* kinf_strv_contains for a sorted vector: a binary search. */
bool kinf_strv_sorted_contains(const struct kinf_strv *sv, const char *s);
/* Sort and drop duplicates. */
void kinf_strv_sort_unique(struct kinf_strv *sv);
void kinf_strv_reset(struct kinf_strv *sv);
void kinf_strv_release(struct kinf_strv *sv);

/*
 * An array v of n elements of size bytes, cap allocated, with room for
 * one more: v itself, v moved (cap doubled, 8 at first), or NULL when out
 * of memory or the size would overflow (v and cap unchanged, v still the
 * caller's). The one growable array; inline, since parsers call it per
 * element.
 */
KINF_MUST_CHECK static inline void *kinf_grow(void *v, size_t *cap, size_t n, size_t size) {
	if (n < *cap) {
		return v;
	}
	if (*cap > SIZE_MAX / 2 / size) {
		return NULL;
	}
	size_t want = *cap ? *cap * 2 : 8;
	void *nv = realloc(v, want * size);
	if (nv) {
		*cap = want;
	}
	return nv;
}

/* Overwrite len bytes with zeros in a way the compiler keeps (secrets). */
void kinf_explicit_bzero(void *p, size_t len);
/* Zero and free a NUL-terminated secret; NULL is fine. */
void kinf_free_secret(char *s);

#endif
