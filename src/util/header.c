#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"

#include "header.h"
#include "trim.h"

ptrdiff_t kinf_header_value_bad_byte(const char *value, size_t len) {
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			return (ptrdiff_t)i;
		}
	}
	return -1;
}

int kinf_header_value_check(const char *value, size_t len, const char *what, int code,
		struct kinf_error *reterr) {
	ptrdiff_t at = kinf_header_value_bad_byte(value, len);
	char other[32];
	const char *name;

	if (at < 0) {
		return 0;
	}
	switch ((unsigned char)value[at]) {
	case '\r':
		name = "a carriage return";
		break;
	case '\n':
		name = "a line feed";
		break;
	case '\0':
		name = "a NUL byte";
		break;
	default:
		snprintf(other, sizeof(other), "the control character 0x%02x",
				(unsigned char)value[at]);
		name = other;
		break;
	}
	return kinf_error_set(reterr, code, "%s holds %s (byte %td), which an HTTP header "
			"cannot carry", what, name, at + 1);
}

/* White space between the warnings of a value and before a date (ASCII only). */
static bool is_space(char c) {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The agent: at least one byte, no control character (UTF-8 is not checked). */
static bool agent_ok(const char *a, size_t len) {
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)a[i];
		if (c < 0x20 || c == 0x7f) {
			return false;
		}
	}
	return len > 0;
}

int kinf_header_warnings(const char *value, size_t len, kinf_header_warning_func fn,
		void *userdata) {
	struct kinf_buf text = {0};
	int n = 0;
	size_t start;
	size_t trimmed = kinf_trim_space(value, len, &start);
	const char *p = value + start, *end = p + trimmed;

	while (p < end) {
		/* strings.SplitN(header, " ", 3): code, agent, the rest */
		const char *sp1 = memchr(p, ' ', (size_t)(end - p));
		const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1)) : NULL;
		if (!sp2 || sp1 - p != 3 || !agent_ok(sp1 + 1, (size_t)(sp2 - sp1 - 1))) {
			break;
		}
		int code = 0;
		for (const char *d = p; d < sp1; d++) {
			if (*d < '0' || *d > '9') {
				code = -1;
				break;
			}
			code = code * 10 + (*d - '0');
		}
		const char *q = sp2 + 1;
		if (code < 0 || q == end || *q != '"') {
			break;
		}
		/* The quoted text: a backslash escapes the byte after it. */
		bool closed = false;
		kinf_buf_reset(&text);
		for (q++; q < end; q++) {
			if (*q == '\\' && q + 1 < end) {
				q++;
			} else if (*q == '\\') {
				break;
			} else if (*q == '"') {
				closed = true;
				q++;
				break;
			}
			if (kinf_buf_append_char(&text, *q) < 0) {
				kinf_buf_release(&text);
				return -KINF_ENOMEM;
			}
		}
		if (!closed) {
			break;
		}
		if (kinf_buf_append(&text, "", 0) < 0) {	/* "" has data too */
			kinf_buf_release(&text);
			return -KINF_ENOMEM;
		}
		while (q < end && is_space(*q)) {
			q++;
		}
		if (q < end && *q == '"') {
			/* A date: up to the next quote, no escapes. */
			const char *close = memchr(q + 1, '"', (size_t)(end - q - 1));
			if (!close) {
				break;
			}
			for (q = close + 1; q < end && is_space(*q); q++) {
			}
		}
		/* Only a warning followed by nothing or a comma is one. */
		if (q < end && *q != ',') {
			break;
		}
		fn(code, text.data, text.len, userdata);
		n++;
		for (p = q < end ? q + 1 : q; p < end && is_space(*p); p++) {
		}
	}
	kinf_buf_release(&text);
	return n;
}
