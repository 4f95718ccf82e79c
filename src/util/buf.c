#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"

int kinf_buf_reserve(struct kinf_buf *buf, size_t extra) {
	size_t need, cap;
	char *data;

	if (buf->err) {
		return buf->err;
	}
	if (extra > SIZE_MAX / 2 - buf->len) {
		return buf->err = -KINF_ENOMEM;
	}
	need = buf->len + extra + 1;
	if (need <= buf->cap) {
		return 0;
	}
	cap = buf->cap ? buf->cap : 64;
	while (cap < need) {
		cap *= 2;
	}
	data = realloc(buf->data, cap);
	if (!data) {
		return buf->err = -KINF_ENOMEM;
	}
	buf->data = data;
	buf->cap = cap;
	return 0;
}

/* The appenders' one body: the puts ignore its result, the appends return it. */
static int append(struct kinf_buf *buf, const void *data, size_t len) {
	int r = kinf_buf_reserve(buf, len);
	if (r < 0) {
		return r;
	}
	if (len) {
		memcpy(buf->data + buf->len, data, len);
	}
	buf->len += len;
	buf->data[buf->len] = '\0';
	return 0;
}

int kinf_buf_append(struct kinf_buf *buf, const void *data, size_t len) {
	return append(buf, data, len);
}

int kinf_buf_append_str(struct kinf_buf *buf, const char *str) {
	return kinf_buf_append(buf, str, strlen(str));
}

int kinf_buf_append_char(struct kinf_buf *buf, char c) {
	return kinf_buf_append(buf, &c, 1);
}

static int vprintf_to(struct kinf_buf *buf, const char *fmt, va_list ap) {
	va_list ap2;
	int n, r;

	if (buf->err) {
		return buf->err;
	}
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		return buf->err = -KINF_EINVAL;
	}
	r = kinf_buf_reserve(buf, (size_t)n);
	if (r < 0) {
		return r;
	}
	vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
	buf->len += (size_t)n;
	return 0;
}

int kinf_buf_vprintf(struct kinf_buf *buf, const char *fmt, va_list ap) {
	return vprintf_to(buf, fmt, ap);
}

int kinf_buf_printf(struct kinf_buf *buf, const char *fmt, ...) {
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vprintf_to(buf, fmt, ap);
	va_end(ap);
	return r;
}

static int urlenc(struct kinf_buf *buf, const char *str) {
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
		int r;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
				*p == '_' || *p == '~') {
			r = kinf_buf_append_char(buf, (char)*p);
		} else {
			char esc[3] = { '%', hex[*p >> 4], hex[*p & 15] };
			r = kinf_buf_append(buf, esc, 3);
		}
		if (r < 0) {
			return r;
		}
	}
	return 0;
}

int kinf_buf_append_urlenc(struct kinf_buf *buf, const char *str) {
	return urlenc(buf, str);
}

int kinf_buf_append_utf8(struct kinf_buf *buf, unsigned long cp) {
	char u[4];
	size_t n;

	if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) {
		return -KINF_EINVAL;
	}
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return kinf_buf_append(buf, u, n);
}

void kinf_buf_put(struct kinf_buf *buf, const void *data, size_t len) {
	(void)append(buf, data, len);	/* a failure sticks in buf->err */
}

void kinf_buf_puts(struct kinf_buf *buf, const char *str) {
	(void)append(buf, str, strlen(str));
}

void kinf_buf_putc(struct kinf_buf *buf, char c) {
	(void)append(buf, &c, 1);
}

void kinf_buf_putf(struct kinf_buf *buf, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	(void)vprintf_to(buf, fmt, ap);
	va_end(ap);
}

void kinf_buf_put_urlenc(struct kinf_buf *buf, const char *str) {
	(void)urlenc(buf, str);
}

void kinf_buf_fail(struct kinf_buf *buf, int err) {
	if (!buf->err) {
		buf->err = err;
	}
}

int kinf_buf_error(const struct kinf_buf *buf) {
	return buf->err;
}

void kinf_buf_reset(struct kinf_buf *buf) {
	buf->err = 0;
	buf->len = 0;
	if (buf->data) {
		buf->data[0] = '\0';
	}
}

void kinf_buf_release(struct kinf_buf *buf) {
	buf->err = 0;
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
}

char *kinf_buf_take(struct kinf_buf *buf) {
	char *data = buf->data;
	if (buf->err) {
		kinf_buf_release(buf);
		return NULL;
	}
	if (!data) {
		data = strdup("");
	}
	buf->data = NULL;
	buf->len = buf->cap = 0;
	return data;
}

static int push_take(struct kinf_strv *sv, char *s) {
	if (sv->err) {
		free(s);
		return sv->err;
	}
	if (!s) {
		return sv->err = -KINF_ENOMEM;
	}
	if (sv->n + 1 >= sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 8;
		char **v = realloc(sv->v, cap * sizeof(*v));
		if (!v) {
			free(s);
			return sv->err = -KINF_ENOMEM;
		}
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return 0;
}

int kinf_strv_push_take(struct kinf_strv *sv, char *s) {
	return push_take(sv, s);
}

int kinf_strv_push(struct kinf_strv *sv, const char *s, size_t len) {
	char *copy = sv->err ? NULL : malloc(len + 1);
	if (copy) {
		memcpy(copy, s, len);
		copy[len] = '\0';
	}
	return push_take(sv, copy);	/* NULL: the failure, recorded */
}

void kinf_strv_put(struct kinf_strv *sv, const char *s, size_t len) {
	char *copy = sv->err ? NULL : strndup(s, len);
	(void)push_take(sv, copy);	/* a failure sticks in sv->err */
}

void kinf_strv_put_str(struct kinf_strv *sv, const char *s) {
	char *copy = sv->err ? NULL : strdup(s);
	(void)push_take(sv, copy);
}

void kinf_strv_put_take(struct kinf_strv *sv, char *s) {
	(void)push_take(sv, s);
}

void kinf_strv_fail(struct kinf_strv *sv, int err) {
	if (!sv->err) {
		sv->err = err;
	}
}

int kinf_strv_error(const struct kinf_strv *sv) {
	return sv->err;
}

int kinf_strv_push_str(struct kinf_strv *sv, const char *s) {
	return kinf_strv_push(sv, s, strlen(s));
}

bool kinf_strv_contains(const struct kinf_strv *sv, const char *s) {
	for (size_t i = 0; i < sv->n; i++) {
		if (strcmp(sv->v[i], s) == 0) {
			return true;
		}
	}
	return false;
}

static int cmp_str(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool kinf_strv_sorted_contains(const struct kinf_strv *sv, const char *s) {
	return sv->n && bsearch(&s, sv->v, sv->n, sizeof(*sv->v), cmp_str) != NULL;
}

void kinf_strv_sort(struct kinf_strv *sv) {
	if (sv->n > 1) {
		qsort(sv->v, sv->n, sizeof(*sv->v), cmp_str);
	}
}

void kinf_strv_sort_unique(struct kinf_strv *sv) {
	size_t out = 0;
	kinf_strv_sort(sv);
	for (size_t i = 0; i < sv->n; i++) {
		if (out > 0 && strcmp(sv->v[out - 1], sv->v[i]) == 0) {
			free(sv->v[i]);
			continue;
		}
		sv->v[out++] = sv->v[i];
	}
	sv->n = out;
	if (sv->v) {
		sv->v[out] = NULL;
	}
}

void kinf_strv_reset(struct kinf_strv *sv) {
	sv->err = 0;
	for (size_t i = 0; i < sv->n; i++) {
		free(sv->v[i]);
	}
	sv->n = 0;
	if (sv->v) {
		sv->v[0] = NULL;
	}
}

void kinf_strv_release(struct kinf_strv *sv) {
	kinf_strv_reset(sv);
	free(sv->v);
	sv->v = NULL;
	sv->cap = 0;
}

void kinf_explicit_bzero(void *p, size_t len) {
	if (!len) {
		return;
	}
	memset(p, 0, len);
	/*
	 * The barrier tells the compiler the zeroed memory is read, so the
	 * memset is kept (as OpenSSL's OPENSSL_cleanse and glibc's
	 * explicit_bzero do); a volatile byte loop did the same 20 times slower,
	 * and curl's buffers are zeroed on every free.
	 */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

void kinf_free_secret(char *s) {
	if (s) {
		kinf_explicit_bzero(s, strlen(s));
		free(s);
	}
}
