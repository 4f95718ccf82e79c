#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "jsondiff.h"
#include "jsonnum.h"
#include "termsafe.h"

/*
 * Both documents are walked as text with the pull reader, never through a
 * tree of doubles: a number is its literal, printed as written and equal
 * to another when their decimal values are (kinf_jsonnum_cmp), so
 * 12345678901234567890 -> 12345678901234567891 is a change.
 */

/* A value's bytes in one of the documents; s NULL: the field is absent. */
struct span {
	const char *s;
	size_t len;
};

struct diff_ctx {
	bool all;
	bool as_json;
	const char *indent;
	struct kinf_buf *out;
	struct kinf_buf changes;	/* as_json: the array's elements so far */
	size_t n_changes;
	struct kinf_buf path;
	int err;			/* the first failure (out of memory) */
};

static void reader_at(struct kinf_json_reader *r, struct span v) {
	kinf_json_reader_init(r, v.s, v.len, 0);
}

/*
 * A string quoted as the diff has always shown strings (jansson's escapes:
 * \u001B, \b), whatever escapes the server used (\u003c is <).
 */
static void put_quoted(struct kinf_buf *out, const char *s, size_t len) {
	json_t *js = json_stringn(s ? s : "", len);
	char *q = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
	if (!q) {
		kinf_buf_fail(out, -KINF_ENOMEM);
	} else {
		kinf_buf_puts(out, q);
	}
	free(q);
	json_decref(js);
}

/* v as compact JSON: strings decoded and quoted again, numbers as written. */
static void put_compact(struct kinf_buf *out, struct kinf_json_reader *r) {
	struct kinf_json_span key;
	struct kinf_buf s = {0};
	const char *p;
	size_t len;
	bool first = true;

	switch (kinf_json_peek(r)) {
	case KINF_JSON_OBJECT:
		if (kinf_json_object_begin(r) < 0) {
			kinf_buf_fail(out, -KINF_EJSON);	/* checked when the diff began */
			break;
		}
		kinf_buf_putc(out, '{');
		while (kinf_json_member(r, &key) == 1) {
			kinf_buf_puts(out, first ? "" : ",");
			first = false;
			kinf_buf_reset(&s);
			if (kinf_json_span_decode(&key, &s) < 0) {
				kinf_buf_fail(out, -KINF_ENOMEM);
			}
			put_quoted(out, s.data, s.len);
			kinf_buf_putc(out, ':');
			put_compact(out, r);
		}
		kinf_buf_putc(out, '}');
		break;
	case KINF_JSON_ARRAY:
		if (kinf_json_array_begin(r) < 0) {
			kinf_buf_fail(out, -KINF_EJSON);
			break;
		}
		kinf_buf_putc(out, '[');
		while (kinf_json_element(r) == 1) {
			kinf_buf_puts(out, first ? "" : ",");
			first = false;
			put_compact(out, r);
		}
		kinf_buf_putc(out, ']');
		break;
	case KINF_JSON_STRING:
		if (kinf_json_string(r, &s) < 0) {
			kinf_buf_fail(out, -KINF_ENOMEM);
		}
		put_quoted(out, s.data, s.len);
		break;
	default:
		if (kinf_json_skip_span(r, &p, &len) == 0) {
			kinf_buf_put(out, p, len);
		}
		break;
	}
	kinf_buf_release(&s);
}

static void put_value(struct kinf_buf *out, struct span v) {
	struct kinf_json_reader r;
	if (!v.s) {
		kinf_buf_puts(out, "<none>");
		return;
	}
	reader_at(&r, v);
	put_compact(out, &r);
}

static void add_change(struct diff_ctx *c, struct span old, struct span new) {
	const char *path = c->path.len ? c->path.data : ".";
	if (c->as_json) {
		struct kinf_buf *b = &c->changes;
		kinf_buf_puts(b, c->n_changes++ ? ",{\"path\":" : "{\"path\":");
		put_quoted(b, path, strlen(path));
		if (old.s) {
			kinf_buf_puts(b, ",\"old\":");
			put_value(b, old);
		}
		if (new.s) {
			kinf_buf_puts(b, ",\"new\":");
			put_value(b, new);
		}
		kinf_buf_putc(b, '}');
		return;
	}
	/* The text form is for a terminal: keys and values escaped (termsafe.h). */
	struct kinf_buf o = {0}, n = {0};
	put_value(&o, old);
	put_value(&n, new);
	if (kinf_buf_error(&o) || kinf_buf_error(&n)) {
		kinf_buf_fail(c->out, -KINF_ENOMEM);
	}
	kinf_buf_puts(c->out, c->indent);
	kinf_termsafe_put(c->out, path, strlen(path));
	kinf_buf_puts(c->out, ": ");
	kinf_termsafe_put(c->out, o.data ? o.data : "", o.len);
	kinf_buf_puts(c->out, " \xe2\x86\x92 ");
	kinf_termsafe_put(c->out, n.data ? n.data : "", n.len);
	kinf_buf_putc(c->out, '\n');
	kinf_buf_release(&o);
	kinf_buf_release(&n);
}

/* An object's members, keys decoded, sorted; of a key written twice the last. */
struct member {
	const char *key;
	size_t key_len;
	struct span value;
	size_t order;
};

struct members {
	struct member *v;
	size_t n;
	struct kinf_buf keys;
};

static int cmp_key(const char *a, size_t alen, const char *b, size_t blen) {
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c ? c : (alen > blen) - (alen < blen);
}

static int cmp_members(const void *pa, const void *pb) {
	const struct member *a = pa, *b = pb;
	int c = cmp_key(a->key, a->key_len, b->key, b->key_len);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int members_read(struct span obj, struct members *m) {
	struct kinf_json_reader r;
	struct kinf_json_span key;
	size_t cap = 0, *at = NULL;
	int rc;

	reader_at(&r, obj);
	rc = kinf_json_object_begin(&r);
	while (rc == 0 && (rc = kinf_json_member(&r, &key)) == 1) {
		rc = 0;
		if (m->n == cap) {
			cap = cap ? cap * 2 : 16;
			struct member *v = realloc(m->v, cap * sizeof(*v));
			size_t *a = realloc(at, cap * sizeof(*a));
			m->v = v ? v : m->v;
			at = a ? a : at;
			if (!v || !a) {
				rc = -KINF_ENOMEM;
				break;
			}
		}
		struct member *e = &m->v[m->n];
		at[m->n] = m->keys.len;
		if (kinf_json_span_decode(&key, &m->keys) < 0 ||
				kinf_buf_append_char(&m->keys, '\0') < 0) {
			rc = -KINF_ENOMEM;
			break;
		}
		e->key_len = m->keys.len - at[m->n] - 1;
		e->order = m->n;
		rc = kinf_json_skip_span(&r, &e->value.s, &e->value.len);
		m->n++;
	}
	if (rc == 0) {
		size_t out = 0;
		for (size_t i = 0; i < m->n; i++) {
			m->v[i].key = m->keys.data + at[i];	/* the keys are all in: no more moves */
		}
		if (m->n > 1) {
			qsort(m->v, m->n, sizeof(*m->v), cmp_members);	/* v is NULL for {} */
		}
		for (size_t i = 0; i < m->n; i++) {
			if (i + 1 < m->n && cmp_key(m->v[i].key, m->v[i].key_len,
					m->v[i + 1].key, m->v[i + 1].key_len) == 0) {
				continue;
			}
			m->v[out++] = m->v[i];
		}
		m->n = out;
	}
	free(at);
	return rc;
}

static void members_release(struct members *m) {
	free(m->v);
	kinf_buf_release(&m->keys);
}

/* An array's elements. */
static int elements_read(struct span arr, struct span **ret, size_t *ret_n) {
	struct kinf_json_reader r;
	struct span *v = NULL;
	size_t n = 0, cap = 0;
	int rc;

	reader_at(&r, arr);
	rc = kinf_json_array_begin(&r);
	while (rc == 0 && (rc = kinf_json_element(&r)) == 1) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct span *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				rc = -KINF_ENOMEM;
				break;
			}
			v = nv;
		}
		rc = kinf_json_skip_span(&r, &v[n].s, &v[n].len);
		n++;
	}
	*ret = v;
	*ret_n = n;
	return rc;
}

static enum kinf_json_type type_of(struct span v) {
	struct kinf_json_reader r;
	reader_at(&r, v);
	return kinf_json_peek(&r);
}

/* Two scalars (or arrays of different lengths) alike: same type and value. */
static bool same_leaf(struct span a, struct span b, int *err) {
	enum kinf_json_type t = type_of(a);
	if (t != type_of(b)) {
		return false;
	}
	if (t == KINF_JSON_NUMBER) {
		return kinf_jsonnum_cmp(a.s, a.len, b.s, b.len) == 0;
	}
	if (t == KINF_JSON_STRING) {
		struct kinf_json_reader ra, rb;
		struct kinf_buf x = {0}, y = {0};
		reader_at(&ra, a);
		reader_at(&rb, b);
		if (kinf_json_string(&ra, &x) < 0 || kinf_json_string(&rb, &y) < 0) {
			*err = -KINF_ENOMEM;
		}
		bool same = x.len == y.len && (x.len == 0 || memcmp(x.data, y.data, x.len) == 0);
		kinf_buf_release(&x);
		kinf_buf_release(&y);
		return same;
	}
	if (t == KINF_JSON_OBJECT || t == KINF_JSON_ARRAY) {
		return false;	/* arrays of two lengths; objects are diffed by member */
	}
	return true;	/* true, false, null */
}

static void diff_values(struct diff_ctx *c, struct span old, struct span new);

static void path_truncate(struct kinf_buf *path, size_t len) {
	path->len = len;
	if (path->data) {
		path->data[len] = '\0';
	}
}

static void diff_member(struct diff_ctx *c, const struct member *m, struct span old,
		struct span new) {
	size_t saved = c->path.len;
	if (!c->all && saved == 9 && strcmp(c->path.data, ".metadata") == 0 &&
			(cmp_key(m->key, m->key_len, "managedFields", 13) == 0 ||
			 cmp_key(m->key, m->key_len, "resourceVersion", 15) == 0)) {
		return;
	}
	kinf_json_path_append_key(&c->path, m->key, m->key_len);
	diff_values(c, old, new);
	path_truncate(&c->path, saved);
}

static void diff_objects(struct diff_ctx *c, struct span old, struct span new) {
	struct members a = {0}, b = {0};
	int rc = members_read(old, &a);
	if (rc == 0) {
		rc = members_read(new, &b);
	}
	if (rc < 0) {
		c->err = c->err ? c->err : rc;
	}
	size_t i = 0, j = 0;
	while (rc == 0 && (i < a.n || j < b.n)) {
		static const struct span none = { NULL, 0 };
		int k = i == a.n ? 1 : j == b.n ? -1 :
			cmp_key(a.v[i].key, a.v[i].key_len, b.v[j].key, b.v[j].key_len);
		if (k < 0) {
			diff_member(c, &a.v[i], a.v[i].value, none);
			i++;
		} else if (k > 0) {
			diff_member(c, &b.v[j], none, b.v[j].value);
			j++;
		} else {
			diff_member(c, &a.v[i], a.v[i].value, b.v[j].value);
			i++;
			j++;
		}
	}
	members_release(&a);
	members_release(&b);
}

static void diff_values(struct diff_ctx *c, struct span old, struct span new) {
	if (!old.s || !new.s) {
		add_change(c, old, new);
		return;
	}
	enum kinf_json_type t = type_of(old);
	if (t == KINF_JSON_OBJECT && type_of(new) == KINF_JSON_OBJECT) {
		diff_objects(c, old, new);
		return;
	}
	if (t == KINF_JSON_ARRAY && type_of(new) == KINF_JSON_ARRAY) {
		struct span *a = NULL, *b = NULL;
		size_t na = 0, nb = 0;
		int rc = elements_read(old, &a, &na);
		if (rc == 0) {
			rc = elements_read(new, &b, &nb);
		}
		if (rc < 0) {
			c->err = c->err ? c->err : rc;
		} else if (na == nb) {
			for (size_t i = 0; i < na; i++) {
				size_t saved = c->path.len;
				kinf_buf_putf(&c->path, "[%zu]", i);
				diff_values(c, a[i], b[i]);
				path_truncate(&c->path, saved);
			}
		}
		free(a);
		free(b);
		if (rc < 0 || na == nb) {
			return;
		}
	}
	if (!same_leaf(old, new, &c->err)) {
		add_change(c, old, new);
	}
}

int kinf_jsondiff_append(const char *old_json, size_t old_len, const char *new_json,
		size_t new_len, bool all, bool as_json, const char *indent,
		struct kinf_buf *out) {
	struct diff_ctx c = { .all = all, .as_json = as_json, .indent = indent, .out = out };
	int rc = 0;

	if (kinf_json_validate(old_json, old_len, 0, NULL) < 0 ||
			kinf_json_validate(new_json, new_len, 0, NULL) < 0) {
		return -KINF_EJSON;
	}
	kinf_buf_puts(&c.path, "");	/* path.data is set from here on */
	if (kinf_buf_error(&c.path)) {
		rc = -KINF_ENOMEM;
		goto out;
	}
	diff_values(&c, (struct span){ old_json, old_len }, (struct span){ new_json, new_len });
	if (as_json) {
		kinf_buf_putc(out, '[');
		kinf_buf_put(out, c.changes.data ? c.changes.data : "", c.changes.len);
		kinf_buf_putc(out, ']');
	}
	if (c.err || kinf_buf_error(&c.path) || kinf_buf_error(&c.changes) ||
			kinf_buf_error(out)) {
		rc = -KINF_ENOMEM;
	}
out:
	kinf_buf_release(&c.path);
	kinf_buf_release(&c.changes);
	return rc;
}
