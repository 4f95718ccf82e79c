#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "object.h"
#include "selector.h"

enum op { OP_EXISTS, OP_NOT_EXISTS, OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_GT, OP_LT };

struct requirement {
	char *key;
	enum op op;
	struct kinf_strv values;
	long long number;
};

struct kinf_selector {
	bool fields;
	struct requirement *v;
	size_t n;
};

void kinf_selector_free(struct kinf_selector *sel) {
	if (!sel) {
		return;
	}
	for (size_t i = 0; i < sel->n; i++) {
		free(sel->v[i].key);
		kinf_strv_release(&sel->v[i].values);
	}
	free(sel->v);
	free(sel);
}

static void skip_space(const char **p) {
	while (**p == ' ' || **p == '\t') {
		(*p)++;
	}
}

static bool is_value_char(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

static bool is_key_char(char c) {
	return is_value_char(c) || c == '/';
}

/* Label values: empty, or up to 63 of [A-Za-z0-9-_.] starting and ending alphanumeric. */
static bool valid_label_value(const char *v) {
	size_t n = strlen(v);
	if (n == 0) {
		return true;
	}
	if (n > 63) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (!is_value_char(v[i])) {
			return false;
		}
	}
	return !(v[0] == '-' || v[0] == '_' || v[0] == '.' ||
		v[n - 1] == '-' || v[n - 1] == '_' || v[n - 1] == '.');
}

static bool valid_label_key(const char *k) {
	const char *slash = strchr(k, '/');
	const char *name = slash ? slash + 1 : k;
	if (slash && (slash == k || slash - k > 253 || strchr(name, '/'))) {
		return false;
	}
	return name[0] && valid_label_value(name);
}

static int fail(struct kinf_error *reterr, const char *text, const char *at,
		const char *what) {
	return kinf_error_set(reterr, KINF_EINVAL,
			"invalid selector \"%s\": %s at position %d", text, what,
			(int)(at - text) + 1);
}

static char *take_word(const char **p, bool key) {
	const char *s = *p;
	while (**p && (key ? is_key_char(**p) : is_value_char(**p))) {
		(*p)++;
	}
	return strndup(s, (size_t)(*p - s));
}

static int push(struct kinf_selector *sel, struct requirement *r) {
	struct requirement *v = realloc(sel->v, (sel->n + 1) * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	sel->v = v;
	sel->v[sel->n++] = *r;
	return 0;
}

static int parse_labels(const char *text, struct kinf_selector *sel,
		struct kinf_error *reterr) {
	const char *p = text;
	for (;;) {
		struct requirement r = {0};
		skip_space(&p);
		if (!*p) {
			if (sel->n) {
				return fail(reterr, text, p, "requirement expected after ','");
			}
			return 0;
		}
		bool negate = false;
		if (*p == '!') {
			negate = true;
			p++;
			skip_space(&p);
		}
		const char *key_at = p;
		r.key = take_word(&p, true);
		if (!r.key || !r.key[0]) {
			free(r.key);
			return fail(reterr, text, key_at, "label key expected");
		}
		if (!valid_label_key(r.key)) {
			free(r.key);
			return fail(reterr, text, key_at, "invalid label key");
		}
		skip_space(&p);
		if (negate) {
			r.op = OP_NOT_EXISTS;
		} else if (!*p || *p == ',') {
			r.op = OP_EXISTS;
		} else if (p[0] == '=' && p[1] == '=') {
			r.op = OP_EQ;
			p += 2;
		} else if (p[0] == '!' && p[1] == '=') {
			r.op = OP_NE;
			p += 2;
		} else if (*p == '=') {
			r.op = OP_EQ;
			p++;
		} else if (*p == '>' || *p == '<') {
			r.op = *p == '>' ? OP_GT : OP_LT;
			p++;
		} else if (strncmp(p, "in", 2) == 0 && (p[2] == ' ' || p[2] == '(')) {
			r.op = OP_IN;
			p += 2;
		} else if (strncmp(p, "notin", 5) == 0 && (p[5] == ' ' || p[5] == '(')) {
			r.op = OP_NOTIN;
			p += 5;
		} else {
			free(r.key);
			return fail(reterr, text, p, "'=', '!=', 'in', 'notin' or ',' expected");
		}
		skip_space(&p);
		if (r.op == OP_EQ || r.op == OP_NE || r.op == OP_GT || r.op == OP_LT) {
			const char *v_at = p;
			char *v = take_word(&p, false);
			if (!v || !valid_label_value(v)) {
				free(v);
				free(r.key);
				return fail(reterr, text, v_at, "invalid label value");
			}
			if (r.op == OP_GT || r.op == OP_LT) {
				char *end;
				r.number = strtoll(v, &end, 10);
				if (!v[0] || *end) {
					free(v);
					free(r.key);
					return fail(reterr, text, v_at, "an integer expected");
				}
			}
			if (kinf_strv_push_take(&r.values, v) < 0) {
				free(r.key);
				return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			}
		} else if (r.op == OP_IN || r.op == OP_NOTIN) {
			if (*p != '(') {
				free(r.key);
				return fail(reterr, text, p, "'(' expected");
			}
			p++;
			for (;;) {
				skip_space(&p);
				const char *v_at = p;
				char *v = take_word(&p, false);
				if (!v || !valid_label_value(v)) {
					free(v);
					free(r.key);
					kinf_strv_release(&r.values);
					return fail(reterr, text, v_at, "invalid label value");
				}
				if (kinf_strv_push_take(&r.values, v) < 0) {
					free(r.key);
					kinf_strv_release(&r.values);
					return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
				}
				skip_space(&p);
				if (*p == ',') {
					p++;
					continue;
				}
				if (*p == ')') {
					if (r.values.n == 1 && !r.values.v[0][0]) {
						free(r.key);
						kinf_strv_release(&r.values);
						return fail(reterr, text, p,
								"for 'in' and 'notin' the set of values can't be empty");
					}
					p++;
					break;
				}
				free(r.key);
				kinf_strv_release(&r.values);
				return fail(reterr, text, p, "',' or ')' expected");
			}
		}
		if (push(sel, &r) < 0) {
			free(r.key);
			kinf_strv_release(&r.values);
			return -KINF_ENOMEM;
		}
		skip_space(&p);
		if (!*p) {
			return 0;
		}
		if (*p != ',') {
			return fail(reterr, text, p, "',' expected");
		}
		p++;
		skip_space(&p);
		if (!*p) {
			return fail(reterr, text, p, "requirement expected after ','");
		}
	}
}

/* fields.ParseSelector: backslash escapes ',', '=', '!' and '\' in values. */
static int parse_fields(const char *text, struct kinf_selector *sel,
		struct kinf_error *reterr) {
	const char *p = text;
	while (*p) {
		struct requirement r = {0};
		struct kinf_buf key = {0}, val = {0};
		const char *start = p;
		while (*p && *p != '=' && *p != '!' && *p != ',') {
			p++;
		}
		if (kinf_buf_append(&key, start, (size_t)(p - start)) < 0) {
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		if (p[0] == '!' && p[1] == '=') {
			r.op = OP_NE;
			p += 2;
		} else if (p[0] == '=' && p[1] == '=') {
			r.op = OP_EQ;
			p += 2;
		} else if (p[0] == '=') {
			r.op = OP_EQ;
			p++;
		} else {
			kinf_buf_release(&key);
			return fail(reterr, text, p, "'=', '==' or '!=' expected");
		}
		if (!key.len || kinf_object_field_path_check(key.data, NULL) < 0) {
			kinf_buf_release(&key);
			return fail(reterr, text, start, "invalid field path");
		}
		int rc = kinf_buf_append_str(&val, "");
		while (rc == 0 && *p && *p != ',') {
			if (*p == '\\' && (p[1] == ',' || p[1] == '=' || p[1] == '!' || p[1] == '\\')) {
				p++;
			} else if (*p == '=' || (*p == '!' && p[1] == '=')) {
				kinf_buf_release(&key);
				kinf_buf_release(&val);
				return fail(reterr, text, p, "unescaped operator in value");
			}
			rc = kinf_buf_append_char(&val, *p++);
		}
		r.key = kinf_buf_take(&key);
		if (rc < 0 || !r.key || kinf_strv_push_take(&r.values, kinf_buf_take(&val)) < 0 ||
				push(sel, &r) < 0) {
			kinf_buf_release(&val);
			free(r.key);
			kinf_strv_release(&r.values);
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		if (*p == ',') {
			p++;
			if (!*p) {
				return fail(reterr, text, p, "requirement expected after ','");
			}
		}
	}
	return 0;
}

static int parse(const char *text, bool fields, struct kinf_selector **ret,
		struct kinf_error *reterr) {
	struct kinf_selector *sel = calloc(1, sizeof(*sel));
	if (!sel) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	sel->fields = fields;
	int rc = text && text[0] ? (fields ? parse_fields(text, sel, reterr) :
			parse_labels(text, sel, reterr)) : 0;
	if (rc < 0) {
		kinf_selector_free(sel);
		return rc;
	}
	*ret = sel;
	return 0;
}

int kinf_label_selector_parse(const char *text, struct kinf_selector **ret,
		struct kinf_error *reterr) {
	return parse(text, false, ret, reterr);
}

int kinf_field_selector_parse(const char *text, struct kinf_selector **ret,
		struct kinf_error *reterr) {
	return parse(text, true, ret, reterr);
}

static bool field_matches(const struct requirement *r, const struct kinf_object *obj) {
	const char *want = r->values.v[0];
	bool eq;
	if (strcmp(r->key, "metadata.name") == 0) {
		eq = strcmp(kinf_object_name(obj), want) == 0;
	} else if (strcmp(r->key, "metadata.namespace") == 0) {
		eq = strcmp(kinf_object_namespace(obj), want) == 0;
	} else {
		struct kinf_strv vals = {0};
		kinf_object_field_values(obj, r->key, &vals, NULL);
		/* An absent field compares as "" (the server's field sets). */
		eq = vals.n ? kinf_strv_contains(&vals, want) : want[0] == '\0';
		kinf_strv_release(&vals);
	}
	return r->op == OP_EQ ? eq : !eq;
}

static bool label_matches(const struct requirement *r, const struct kinf_object *obj) {
	const char *v = kinf_object_label(obj, r->key);
	switch (r->op) {
	case OP_EXISTS: return v != NULL;
	case OP_NOT_EXISTS: return v == NULL;
	case OP_EQ:
	case OP_IN: return v && kinf_strv_contains(&r->values, v);
	case OP_NE:
	case OP_NOTIN: return !v || !kinf_strv_contains(&r->values, v);
	case OP_GT:
	case OP_LT: {
		if (!v) {
			return false;
		}
		char *end;
		long long n = strtoll(v, &end, 10);
		if (!v[0] || *end) {
			return false;
		}
		return r->op == OP_GT ? n > r->number : n < r->number;
	}
	}
	return false;
}

bool kinf_selector_matches(const struct kinf_selector *sel,
		const struct kinf_object *obj) {
	if (!sel) {
		return true;
	}
	for (size_t i = 0; i < sel->n; i++) {
		if (!(sel->fields ? field_matches(&sel->v[i], obj) : label_matches(&sel->v[i], obj))) {
			return false;
		}
	}
	return true;
}
