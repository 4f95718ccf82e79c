#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gofloat.h"
#include "gojson.h"

/* A string, escaped as encoding/json's encodeState.string (HTML-safe). */
static void put_string(struct kinf_buf *out, const char *s, size_t len) {
	static const char hex[] = "0123456789abcdef";
	kinf_buf_put(out, "\"", 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			kinf_buf_put(out, esc, 2);
		} else if (c == '\n') {
			kinf_buf_puts(out, "\\n");
		} else if (c == '\r') {
			kinf_buf_puts(out, "\\r");
		} else if (c == '\t') {
			kinf_buf_puts(out, "\\t");
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			kinf_buf_put(out, esc, 6);
		} else if (c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
				((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
			/* U+2028 and U+2029, which JavaScript takes for line ends */
			kinf_buf_puts(out, (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
			i += 2;
		} else {
			kinf_buf_put(out, s + i, 1);
		}
	}
	kinf_buf_put(out, "\"", 1);
}

/* indent NULL: json.Marshal's compact form, no line breaks. */
static void newline(struct kinf_buf *out, const char *indent, int depth) {
	if (!indent) {
		return;
	}
	kinf_buf_put(out, "\n", 1);
	for (int i = 0; i < depth; i++) {
		kinf_buf_puts(out, indent);
	}
}

static int cmp_keys(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_value(struct kinf_buf *out, json_t *v, const char *indent, int depth) {
	char num[KINF_GOFLOAT_SIZE > 32 ? KINF_GOFLOAT_SIZE : 32];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		const char **keys = n ? malloc(n * sizeof(*keys)) : NULL;
		const char *k;
		json_t *e;
		if (n && !keys) {
			kinf_buf_fail(out, -KINF_ENOMEM);
			return;
		}
		json_object_foreach(v, k, e) {
			keys[i++] = k;
		}
		if (n > 1) {
			qsort(keys, n, sizeof(*keys), cmp_keys);
		}
		kinf_buf_put(out, "{", 1);
		for (i = 0; i < n; i++) {
			kinf_buf_puts(out, i ? "," : "");
			newline(out, indent, depth + 1);
			put_string(out, keys[i], strlen(keys[i]));
			kinf_buf_puts(out, indent ? ": " : ":");
			put_value(out, json_object_get(v, keys[i]), indent, depth + 1);
		}
		if (n) {
			newline(out, indent, depth);
		}
		kinf_buf_put(out, "}", 1);
		free(keys);
		return;
	}
	case JSON_ARRAY:
		kinf_buf_put(out, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			kinf_buf_puts(out, i ? "," : "");
			newline(out, indent, depth + 1);
			put_value(out, json_array_get(v, i), indent, depth + 1);
		}
		if (json_array_size(v)) {
			newline(out, indent, depth);
		}
		kinf_buf_put(out, "]", 1);
		return;
	case JSON_STRING:
		put_string(out, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		kinf_buf_puts(out, num);
		return;
	case JSON_REAL:
		kinf_buf_puts(out, kinf_gofloat_format_json(json_real_value(v), num));
		return;
	case JSON_TRUE:
		kinf_buf_puts(out, "true");
		return;
	case JSON_FALSE:
		kinf_buf_puts(out, "false");
		return;
	default:
		kinf_buf_puts(out, "null");
		return;
	}
}

int kinf_gojson_append(struct kinf_buf *out, json_t *v) {
	return kinf_gojson_append_at(out, v, NULL, 0);
}

int kinf_gojson_append_indent(struct kinf_buf *out, json_t *v, const char *indent) {
	return kinf_gojson_append_at(out, v, indent, 0);
}

int kinf_gojson_append_at(struct kinf_buf *out, json_t *v, const char *indent, int depth) {
	put_value(out, v, indent, depth);
	return kinf_buf_error(out) ? -KINF_ENOMEM : 0;
}
