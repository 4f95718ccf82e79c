#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsondiff.h"
#include "termsafe.h"

struct diff_ctx {
	bool all;
	bool as_json;
	const char *indent;
	struct kinf_buf *out;
	json_t *changes;
	struct kinf_buf path;
};

static char *compact_value(json_t *v) {
	if (!v) {
		return strdup("<none>");
	}
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void add_change(struct diff_ctx *c, json_t *old, json_t *new) {
	const char *path = c->path.len ? c->path.data : ".";
	if (c->as_json) {
		json_t *ch = json_object();
		json_object_set_new(ch, "path", json_string(path));
		if (old) {
			json_object_set(ch, "old", old);
		}
		if (new) {
			json_object_set(ch, "new", new);
		}
		json_array_append_new(c->changes, ch);
		return;
	}
	/* The text form is for a terminal: keys and values escaped (termsafe.h). */
	char *o = compact_value(old), *n = compact_value(new);
	if (!o || !n) {
		kinf_buf_fail(c->out, -KINF_ENOMEM);
	}
	kinf_buf_puts(c->out, c->indent);
	kinf_termsafe_append(c->out, path, strlen(path));
	kinf_buf_puts(c->out, ": ");
	kinf_termsafe_append(c->out, o ? o : "", o ? strlen(o) : 0);
	kinf_buf_puts(c->out, " \xe2\x86\x92 ");
	kinf_termsafe_append(c->out, n ? n : "", n ? strlen(n) : 0);
	kinf_buf_putc(c->out, '\n');
	free(o);
	free(n);
}

static bool path_needs_brackets(const char *key) {
	for (const char *p = key; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9') || *p == '_' || *p == '-')) {
			return true;
		}
	}
	return !key[0];
}

static void diff_values(struct diff_ctx *c, json_t *old, json_t *new);

static void diff_member(struct diff_ctx *c, const char *key, json_t *old, json_t *new) {
	size_t saved = c->path.len;
	if (!c->all && saved == 9 && strcmp(c->path.data, ".metadata") == 0 &&
			(strcmp(key, "managedFields") == 0 || strcmp(key, "resourceVersion") == 0)) {
		return;
	}
	if (path_needs_brackets(key)) {
		kinf_buf_putf(&c->path, "['%s']", key);
	} else {
		kinf_buf_putf(&c->path, ".%s", key);
	}
	diff_values(c, old, new);
	c->path.len = saved;
	c->path.data[saved] = '\0';
}

static void diff_values(struct diff_ctx *c, json_t *old, json_t *new) {
	if (old && new && json_is_object(old) && json_is_object(new)) {
		const char *k;
		json_t *v;
		struct kinf_strv keys = {0};
		json_object_foreach(old, k, v) {
			kinf_strv_put_str(&keys, k);
		}
		json_object_foreach(new, k, v) {
			if (!json_object_get(old, k)) {
				kinf_strv_put_str(&keys, k);
			}
		}
		if (kinf_strv_error(&keys)) {
			kinf_buf_fail(c->out, kinf_strv_error(&keys));	/* a key is missing */
		}
		kinf_strv_sort(&keys);
		for (size_t i = 0; i < keys.n; i++) {
			diff_member(c, keys.v[i], json_object_get(old, keys.v[i]),
					json_object_get(new, keys.v[i]));
		}
		kinf_strv_release(&keys);
		return;
	}
	if (old && new && json_is_array(old) && json_is_array(new) &&
			json_array_size(old) == json_array_size(new)) {
		for (size_t i = 0; i < json_array_size(old); i++) {
			size_t saved = c->path.len;
			kinf_buf_putf(&c->path, "[%zu]", i);
			diff_values(c, json_array_get(old, i), json_array_get(new, i));
			c->path.len = saved;
			c->path.data[saved] = '\0';
		}
		return;
	}
	if (old && new && json_equal(old, new)) {
		return;
	}
	add_change(c, old, new);
}

int kinf_jsondiff_append(const char *old_json, size_t old_len, const char *new_json,
		size_t new_len, bool all, bool as_json, const char *indent,
		struct kinf_buf *out) {
	json_t *old = json_loadb(old_json, old_len, 0, NULL);
	json_t *new = json_loadb(new_json, new_len, 0, NULL);
	struct diff_ctx c = { .all = all, .as_json = as_json, .indent = indent, .out = out };
	int rc = 0;

	if (!old || !new) {
		rc = -KINF_EJSON;
		goto out;
	}
	kinf_buf_puts(&c.path, "");	/* path.data is set from here on */
	if (kinf_buf_error(&c.path)) {
		rc = -KINF_ENOMEM;
		goto out;
	}
	if (as_json) {
		c.changes = json_array();
	}
	diff_values(&c, old, new);
	if (as_json) {
		char *s = json_dumps(c.changes, JSON_COMPACT);
		if (!s || kinf_buf_append_str(out, s) < 0) {
			rc = -KINF_ENOMEM;
		}
		free(s);
		json_decref(c.changes);
	}
	if (rc == 0 && (kinf_buf_error(&c.path) || kinf_buf_error(out))) {
		rc = -KINF_ENOMEM;
	}
out:
	kinf_buf_release(&c.path);
	json_decref(old);
	json_decref(new);
	return rc;
}
