#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "json.h"
#include "log.h"
#include "pager.h"

/* Splitter ------------------------------------------------------------- */

enum expect {
	EXPECT_OPEN, EXPECT_FIRST_KEY, EXPECT_KEY, EXPECT_COLON, EXPECT_VALUE,
	EXPECT_COMMA, EXPECT_END,
};

struct kinf_list_splitter {
	const struct kinf_list_splitter_ops *ops;
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

struct kinf_list_splitter *kinf_list_splitter_new(
		const struct kinf_list_splitter_ops *ops, void *userdata,
		size_t max_element) {
	struct kinf_list_splitter *s = calloc(1, sizeof(*s));
	if (s) {
		s->ops = ops;
		s->userdata = userdata;
		s->max_element = max_element ? max_element : KINF_OBJECT_DEFAULT_MAX_BYTES;
	}
	return s;
}

void kinf_list_splitter_free(struct kinf_list_splitter *s) {
	if (s) {
		kinf_buf_release(&s->key);
		kinf_buf_release(&s->value);
		kinf_buf_release(&s->chunk);
		free(s);
	}
}

static int split_fail(struct kinf_list_splitter *s, int code, const char *msg,
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
static int emit(struct kinf_list_splitter *s, bool element, const char *p,
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
 * time: kinf_json_string_body_end); inside a captured value below its top
 * level only brackets and quotes do. The object parser validates every
 * byte of what is captured.
 */
static const bool structural[256] = {
	['"'] = true, ['{'] = true, ['}'] = true, ['['] = true, [']'] = true,
};

static int scan(struct kinf_list_splitter *s, const char *data, size_t len,
		struct kinf_error *reterr) {
	size_t span_start = 0;	/* start of the capture within this piece */
	int rc;

	for (size_t i = 0; i < len; i++) {
		if (s->in_string) {
			if (!s->escape && !s->key_active) {
				i = kinf_json_string_body_end(data, i, len);
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

int kinf_list_splitter_feed(struct kinf_list_splitter *s, const char *data,
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

/* Feed a block the caller gathered already (no second copy). */
static int splitter_feed_block(struct kinf_list_splitter *s, const char *data,
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

int kinf_list_splitter_finish(struct kinf_list_splitter *s,
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

/* Pager ---------------------------------------------------------------- */

struct page_state {
	const struct kinf_list_opts *opts;
	struct kinf_list_result *result;
	struct kinf_buf items;		/* struct kinf_object * array */
	struct kinf_buf rows;		/* struct kinf_table_row array */
	size_t n_items;			/* items or rows of this list so far */
	struct kinf_strv handed;	/* keys given to on_item (sorted once restarted) */
	bool restarted;			/* a full list after an expired continue */
	char *cont;			/* this page's metadata.continue */
	char *rv;
	struct kinf_error *reterr;
	struct kinf_list_splitter *splitter;
	bool md_seen;			/* this page's metadata member was read */
	int parse_rc;
};

static size_t max_list_items(const struct kinf_list_opts *opts) {
	return opts->limits.max_list_items ? opts->limits.max_list_items :
		KINF_LIST_DEFAULT_MAX_ITEMS;
}

/* One more item or row in the list: within --max-list-items? */
static int count_item(struct page_state *ps) {
	size_t max = max_list_items(ps->opts);
	if (ps->n_items >= max) {
		kinf_error_clear(ps->reterr);
		return kinf_error_set(ps->reterr, KINF_ETOOBIG, "the list holds more than "
				"%zu items (--max-list-items)", max);
	}
	ps->n_items++;
	return 0;
}

static void free_rows(struct kinf_table_row *rows, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(rows[i].key);
		free(rows[i].json);
	}
	free(rows);
}

static int on_member(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct page_state *ps = userdata;
	struct kinf_list_result *res = ps->result;
	json_error_t jerr;

	if (key_len == 8 && memcmp(key, "metadata", 8) == 0) {
		json_t *md = json_loadb(value, len, 0, &jerr);
		if (!json_is_object(md)) {
			json_decref(md);
			return kinf_error_set(ps->reterr, KINF_EJSON, "list metadata: %s", jerr.text);
		}
		const char *cont = json_string_value(json_object_get(md, "continue"));
		const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
		free(ps->cont);
		free(ps->rv);
		ps->md_seen = true;
		if (cont && cont[0] && ps->restarted) {
			/*
			 * The full list after an expired token is the answer, as
			 * in client-go's pager: a continue token in it is not
			 * followed (a server that gives one again would loop).
			 */
			kinf_log(1, "list: the full list has a continue token; not following it");
			cont = NULL;
		}
		ps->cont = cont && cont[0] ? strdup(cont) : NULL;
		ps->rv = rv ? strdup(rv) : NULL;
		json_decref(md);
	} else if ((key_len == 4 && memcmp(key, "kind", 4) == 0) ||
			(key_len == 10 && memcmp(key, "apiVersion", 10) == 0)) {
		json_t *v = json_loadb(value, len, JSON_DECODE_ANY, &jerr);
		char **slot = key_len == 4 ? &res->kind : &res->api_version;
		if (!v) {
			return kinf_error_set(ps->reterr, KINF_EJSON, "list %.*s: %s",
					(int)key_len, key, jerr.text);
		}
		if (json_is_string(v)) {
			free(*slot);
			*slot = strdup(json_string_value(v));
		}
		json_decref(v);
	} else if ((key_len == 5 && memcmp(key, "items", 5) == 0) ||
			(key_len == 4 && memcmp(key, "rows", 4) == 0)) {
		/* Not split, so not an array: null (an empty Go slice) or wrong. */
		if (len != 4 || memcmp(value, "null", 4) != 0) {
			return kinf_error_set(ps->reterr, KINF_EJSON,
					"list response: \"%.*s\" is not an array", (int)key_len, key);
		}
	} else if (key_len == 17 && memcmp(key, "columnDefinitions", 17) == 0) {
		if (kinf_json_validate(value, len, 0, ps->reterr) < 0) {
			return -KINF_EJSON;
		}
		free(res->columns_json);
		res->columns_json = strndup(value, len);
	} else if (kinf_json_validate(value, len, ps->opts->limits.max_depth,
			ps->reterr) < 0) {
		/* Another member (client-go ignores it): well-formed is all it must be. */
		char name[65];
		size_t n = 0;
		for (; n < key_len && n + 1 < sizeof(name); n++) {
			/* Printable ASCII only: the key itself is not validated. */
			name[n] = key[n] > 0x20 && key[n] < 0x7f ? key[n] : '?';
		}
		name[n] = '\0';
		kinf_error_prefix(ps->reterr, "list member \"%s\"", name);
		return -KINF_EJSON;
	}
	return 0;
}

/*
 * True when s[0..n) holds a \\u0000 escape: a "u0000" after an odd run of
 * backslashes (an even run is escaped backslashes followed by text).
 */
static bool has_nul_escape(const char *s, size_t n) {
	const char *p = s, *end = s + n;
	while ((p = memchr(p, 'u', (size_t)(end - p))) != NULL) {
		if (end - p >= 5 && memcmp(p, "u0000", 5) == 0) {
			size_t run = 0;
			while (p - run > s && p[-1 - (ptrdiff_t)run] == '\\') {
				run++;
			}
			if (run % 2 == 1) {
				return true;
			}
		}
		p++;
	}
	return false;
}

/* Read a string member into out (once: a repeated one is an error). */
static int row_string(struct kinf_json_reader *r, struct kinf_buf *out, bool *seen) {
	struct kinf_json_span v;
	if (*seen) {
		return -KINF_EEXISTS;
	}
	*seen = true;
	if (kinf_json_peek(r) != KINF_JSON_STRING) {
		return kinf_json_skip(r);	/* not a string: absent, as before */
	}
	if (kinf_json_string_span(r, &v) < 0) {
		return r->error;
	}
	kinf_buf_reset(out);
	return kinf_json_span_decode(&v, out) < 0 || kinf_buf_append(out, "", 0) < 0 ?
		-KINF_ENOMEM : 0;
}

/*
 * A Table row's object.metadata.namespace and .name, the row validated
 * strictly on the way (syntax, UTF-8, escapes, depth) with the pull reader
 * rather than a jansson tree of its managedFields. As before, NUL escapes
 * are refused (the row is later printed from a jansson parse, which
 * refuses them), but one in the name or namespace is left for the caller
 * to report with the object's name; repeated members on the key's path
 * are refused.
 */
static int row_key(const char *row, size_t len, unsigned max_depth,
		struct kinf_buf *ns, struct kinf_buf *name, const char **ret_cells,
		size_t *ret_cells_len, struct kinf_error *reterr) {
	struct kinf_json_reader r;
	struct kinf_json_span k;
	bool seen_obj = false, seen_md = false, seen_ns = false, seen_name = false;
	int rc;

	bool nul = has_nul_escape(row, len);
	kinf_json_reader_init(&r, row, len, max_depth);
	if ((rc = kinf_json_object_begin(&r)) < 0) {
		goto bad;
	}
	*ret_cells = NULL;
	*ret_cells_len = 0;
	while ((rc = kinf_json_member(&r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "cells")) {
			/* The last, as jansson would keep it. */
			rc = kinf_json_skip_span(&r, ret_cells, ret_cells_len);
		} else if (!kinf_json_span_eq(&k, "object") || kinf_json_peek(&r) != KINF_JSON_OBJECT) {
			rc = kinf_json_skip(&r);
		} else if (seen_obj) {
			rc = -KINF_EEXISTS;
		} else {
			seen_obj = true;
			rc = kinf_json_object_begin(&r);
			while (rc >= 0 && (rc = kinf_json_member(&r, &k)) > 0) {
				if (!kinf_json_span_eq(&k, "metadata") ||
						kinf_json_peek(&r) != KINF_JSON_OBJECT) {
					rc = kinf_json_skip(&r);
					continue;
				}
				if (seen_md) {
					rc = -KINF_EEXISTS;
					break;
				}
				seen_md = true;
				rc = kinf_json_object_begin(&r);
				while (rc >= 0 && (rc = kinf_json_member(&r, &k)) > 0) {
					if (kinf_json_span_eq(&k, "namespace")) {
						rc = row_string(&r, ns, &seen_ns);
					} else if (kinf_json_span_eq(&k, "name")) {
						rc = row_string(&r, name, &seen_name);
					} else {
						rc = kinf_json_skip(&r);
					}
				}
			}
		}
		if (rc < 0) {
			break;
		}
	}
	if (rc == -KINF_EEXISTS) {
		return kinf_error_set(reterr, KINF_EJSON,
				"table row: a repeated member on the path to metadata.name");
	}
	if (rc == -KINF_ENOMEM) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (rc == 0 && (rc = kinf_json_end(&r)) == 0) {
		if (nul && !memchr(ns->data ? ns->data : "", '\0', ns->len) &&
				!memchr(name->data ? name->data : "", '\0', name->len)) {
			return kinf_error_set(reterr, KINF_EJSON,
					"table row: \\u0000 is not allowed in a string");
		}
		return 0;
	}
bad:
	kinf_json_reader_error(&r, reterr);
	kinf_error_prefix(reterr, "table row");
	return -KINF_EJSON;
}

/*
 * A parsed item: kept for the result, or handed to on_item. After a
 * restart, an item whose key was handed over before is dropped: its
 * object was printed (or whatever the caller did) from the first list.
 */
static int take_item(struct page_state *ps, struct kinf_object *obj) {
	const struct kinf_list_opts *opts = ps->opts;
	int rc;

	if ((rc = count_item(ps)) < 0) {
		kinf_object_unref(obj);
		return rc;
	}
	if (!opts->on_item) {
		if (kinf_buf_append(&ps->items, &obj, sizeof(obj)) < 0) {
			kinf_object_unref(obj);
			return kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
		}
		return 0;
	}
	const char *key = kinf_object_key(obj);
	if (ps->restarted) {
		if (kinf_strv_sorted_contains(&ps->handed, key)) {
			kinf_object_unref(obj);
			return 0;
		}
	} else if (kinf_strv_push_str(&ps->handed, key) < 0) {
		kinf_object_unref(obj);
		return kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
	}
	return opts->on_item(obj, opts->userdata, ps->reterr);
}

static int on_element(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct page_state *ps = userdata;
	int rc;

	if (key_len == 5) {	/* items */
		struct kinf_object *obj = NULL;
		rc = kinf_object_parse(value, len, &ps->opts->limits, &obj, ps->reterr);
		if (rc < 0) {
			kinf_error_prefix(ps->reterr, "list item %zu", ps->n_items + 1);
			return rc;
		}
		return take_item(ps, obj);
	}
	/*
	 * A Table row: its key comes from the row's object metadata, and only
	 * its cells are kept (the object, managedFields and all, was 95% of a
	 * pod's row: 400 MB for 100,000 pods).
	 */
	struct kinf_buf ns = {0}, name = {0}, k = {0}, row = {0};
	struct kinf_table_row tr = {0};
	const char *cells;
	size_t cells_len;
	if ((rc = count_item(ps)) < 0) {
		return rc;
	}
	rc = row_key(value, len, ps->opts->limits.max_depth, &ns, &name, &cells,
			&cells_len, ps->reterr);
	/*
	 * A name no server allows, as kinf_object_parse() refuses it for
	 * items (this row is counted in n_items already).
	 */
	const char *why = NULL;
	bool bad_ns = false;
	if (rc == 0 && ((ns.len && (bad_ns = (why = kinf_object_name_problem(ns.data,
			ns.len)) != NULL)) ||
			(why = kinf_object_name_problem(name.data ? name.data : "", name.len)))) {
		/* The key JSON-quoted: a NUL shows as \u0000. */
		if (ns.len) {
			kinf_buf_append(&k, ns.data, ns.len);
			kinf_buf_append_char(&k, '/');
		}
		kinf_buf_append(&k, name.data ? name.data : "", name.len);
		kinf_json_quote(&row, k.data ? k.data : "", k.len);
		rc = kinf_error_set(ps->reterr, KINF_EJSON, "table row %zu: object %s: "
				"metadata.%s %s", ps->n_items, row.data ? row.data : "\"\"",
				bad_ns ? "namespace" : "name", why);
		kinf_buf_release(&k);
		kinf_buf_release(&row);
	}
	if (rc == 0) {
		if (ns.len) {
			kinf_buf_printf(&k, "%s/", ns.data);
		}
		kinf_buf_append_str(&k, name.data ? name.data : "");
		tr.key = kinf_buf_take(&k);
		bool ok = kinf_buf_append_str(&row, "{") == 0 && (!cells ||
				(kinf_buf_append_str(&row, "\"cells\":") == 0 &&
				 kinf_buf_append(&row, cells, cells_len) == 0)) &&
			kinf_buf_append_str(&row, "}") == 0;
		tr.len = row.len;
		tr.json = ok ? kinf_buf_take(&row) : NULL;
		kinf_buf_release(&row);
		if (!tr.key || !tr.json || kinf_buf_append(&ps->rows, &tr, sizeof(tr)) < 0) {
			free(tr.key);
			free(tr.json);
			rc = -KINF_ENOMEM;
		}
	}
	kinf_buf_release(&ns);
	kinf_buf_release(&name);
	return rc;
}

/* A list item parsed where it lies in the chunk (see the splitter). */
static int on_element_prefix(const char *key, size_t key_len, const char *data,
		size_t avail, size_t *ret_used, void *userdata) {
	struct page_state *ps = userdata;
	struct kinf_object *obj = NULL;
	int rc;

	if (key_len != 5) {
		return -KINF_EINVAL;	/* Table rows take the scanning path */
	}
	rc = kinf_object_parse_prefix(data, avail, &ps->opts->limits, &obj, ret_used, NULL);
	if (rc < 0) {
		return rc;
	}
	rc = take_item(ps, obj);
	/* The bytes were taken: an error now stops the list, it is no retry. */
	return rc < 0 ? -rc : 0;
}

static const struct kinf_list_splitter_ops page_ops = {
	.member = on_member,
	.element = on_element,
	.element_prefix = on_element_prefix,
};

static int cmp_obj(const void *a, const void *b) {
	return strcmp(kinf_object_key(*(struct kinf_object *const *)a),
			kinf_object_key(*(struct kinf_object *const *)b));
}

static int cmp_row(const void *a, const void *b) {
	return strcmp(((const struct kinf_table_row *)a)->key,
			((const struct kinf_table_row *)b)->key);
}

static void drop_collected(struct page_state *ps) {
	struct kinf_object **objs = (struct kinf_object **)(void *)ps->items.data;
	for (size_t i = 0; i < ps->items.len / sizeof(*objs); i++) {
		kinf_object_unref(objs[i]);
	}
	kinf_buf_reset(&ps->items);
	struct kinf_table_row *rows = (struct kinf_table_row *)(void *)ps->rows.data;
	for (size_t i = 0; i < ps->rows.len / sizeof(*rows); i++) {
		free(rows[i].key);
		free(rows[i].json);
	}
	kinf_buf_reset(&ps->rows);
}

#define TABLE_ACCEPT "application/json;as=Table;v=v1;g=meta.k8s.io," \
	"application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

/* The request path of a page: the first (cont NULL) or a continued one. */
static int page_path(const struct kinf_list_opts *opts, long limit,
		const char *cont, struct kinf_buf *path) {
	char sep = strchr(opts->path, '?') ? '&' : '?';
	int rc;

	kinf_buf_reset(path);
	rc = kinf_buf_append_str(path, opts->path);
#define PARAM(name, value) do { \
		if (rc == 0) { \
			rc = kinf_buf_printf(path, "%c%s=", sep, name); \
			sep = '&'; \
		} \
		if (rc == 0) { \
			rc = kinf_buf_append_urlenc(path, value); \
		} \
	} while (0)
	if (opts->label_selector && opts->label_selector[0]) {
		PARAM("labelSelector", opts->label_selector);
	}
	if (opts->field_selector && opts->field_selector[0]) {
		PARAM("fieldSelector", opts->field_selector);
	}
	if (limit > 0) {
		char n[32];
		snprintf(n, sizeof(n), "%ld", limit);
		PARAM("limit", n);
	}
	if (cont) {
		PARAM("continue", cont);
	} else {
		/*
		 * As client-go's pager: the resourceVersion only on the first
		 * page; the continue token carries it after that.
		 */
		if (opts->resource_version && opts->resource_version[0]) {
			PARAM("resourceVersion", opts->resource_version);
		}
		if (opts->resource_version_match && opts->resource_version_match[0]) {
			PARAM("resourceVersionMatch", opts->resource_version_match);
		}
	}
#undef PARAM
	return rc;
}

/*
 * The pager parses each page while libcurl delivers it. A list that proves
 * large (SWITCH_BYTES in this call) moves its parsing to a second thread:
 * the caller's thread keeps running the requests and hands the bytes over
 * in 256 KiB blocks. It reads the next page's continue token from the start
 * of each page (where an API server puts a List's metadata) and asks for
 * that page as soon as the current one is in, so the server builds and
 * sends page N+1 while page N is parsed; before, the two took turns, each
 * idle while the other worked. When the token comes after the items
 * (custom resources) it waits for the parser's. Small lists (the usual
 * 'kinf list -n ns') start no thread.
 *
 * The next page is asked for on a second connection as soon as the current
 * page's token is read, not when the page is in: the server finds and
 * starts sending page N+1 while page N still arrives, instead of the
 * transfer standing still for its time to first byte after every page
 * (a third of the list's time against the test server; an API server
 * reading each page from etcd takes longer). The two connections are two
 * lanes taking turns: the caller's thread and a lane thread, each asking
 * for every other page; a lane whose page is not the one being received
 * waits (in its body callback) for its turn, so the bytes reach the parser
 * in order and the requests go out in the order a sequential pager makes
 * them. A page's failure is handled when its turn comes, as if asked for
 * then.
 */
#define SWITCH_BYTES ((size_t)2 << 20)
#define BLOCK_BYTES ((size_t)256 << 10)
#define AHEAD_BYTES ((size_t)8 << 20)	/* the receiver's lead, at most */
#define HEAD_BYTES ((size_t)64 << 10)	/* where the metadata is looked for */

enum block_kind { BLOCK_DATA, BLOCK_PAGE_END, BLOCK_ERROR };

struct block {
	struct block *next;
	enum block_kind kind;
	bool token_known;		/* PAGE_END: the receiver read the token */
	char *token;			/* and asked for the next page with it */
	size_t len;
	char data[];
};

struct lister;

/* A connection the pages come through; see above. */
struct lane {
	struct lister *ls;
	struct kinf_http *http;
	unsigned page;			/* the page it asks for (the receiver's count) */
	char *cont;			/* with this continue token; owned */
	bool has_job;			/* under lock: page and cont given, not yet run */
	bool in_turn;			/* its page is the one being received */
	bool gave_next;			/* it gave page + 1 to the other lane */
	struct kinf_error err;
};

struct lister {
	const struct kinf_list_opts *opts;
	long limit;			/* the pages' (0 once a full list replaces them) */
	struct page_state *ps;
	struct kinf_list_result *ret;
	/* the receiver (the caller's thread) */
	size_t inline_bytes;		/* parsed in this thread */
	bool threaded;			/* the parser thread runs */
	pthread_t thread;
	struct block *cur;
	struct kinf_buf head_buf;
	int head_state;			/* 0 looking, 1 found, -1 not at the start */
	char *head_token;
	/* shared, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct block *head, *tail, *spare;
	size_t queued;			/* bytes of data blocks in the queue */
	atomic_bool stop;		/* the parser failed or finished */
	bool receiver_gone;		/* no last block will come (out of memory) */
	bool parser_done;
	int parse_rc;
	struct kinf_error parse_err;
	unsigned published;		/* pages the parser finished */
	char *published_token;		/* the last one's continue token */
	/* the lanes: the receiving state above belongs to the lane in turn */
	struct lane lanes[2];		/* 0: the caller's thread and http */
	pthread_cond_t lane_cond;	/* turns and jobs (not cond: its wakeups are many) */
	pthread_t lane_thread;		/* runs lanes[1] */
	bool lane_thread_started;
	unsigned turn;			/* under lock: the page being received */
	atomic_bool lanes_over;		/* the last page ended, or a page failed */
	int lanes_rc;			/* under lock: that failure, */
	unsigned failed_page;		/* the page, */
	struct kinf_error lanes_err;	/* and why */
	/* under lock (when threaded): the continue tokens asked with so far */
	struct seen_token *tokens;	/* open addressing, a power of two */
	size_t n_tokens, tokens_cap;
};

/*
 * A continue token by two independent 64-bit hashes (a hostile server's
 * tokens may be megabytes each; a legitimate one never comes back), and
 * the page it was asked for.
 */
struct seen_token {
	uint64_t h1, h2;
	unsigned page;
};

static void hash_token(const char *t, uint64_t *h1, uint64_t *h2) {
	uint64_t a = UINT64_C(0xcbf29ce484222325), b = UINT64_C(0x9e3779b97f4a7c15);
	for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
		a = (a ^ *p) * UINT64_C(0x100000001b3);
		b = (b + *p) * UINT64_C(0xff51afd7ed558ccd);
		b ^= b >> 29;
	}
	*h1 = a | 1;	/* never 0: 0 is an empty slot */
	*h2 = b;
}

/*
 * Page `page` is to be asked for with token: refuse a token asked with
 * before (the server's pages go round in a circle, or stand still) and a
 * page past --max-list-items (pages without end). Under ls->lock when
 * the lanes run. 0, or <0 with err set.
 */
static int note_token(struct lister *ls, const char *token, unsigned page,
		struct kinf_error *err) {
	size_t max = max_list_items(ls->opts);
	uint64_t h1, h2;

	if (page > max) {
		kinf_error_clear(err);
		return kinf_error_set(err, KINF_ETOOBIG, "the list runs to more than %zu "
				"pages (--max-list-items)", max);
	}
	if (2 * (ls->n_tokens + 1) > ls->tokens_cap) {
		size_t cap = ls->tokens_cap ? 2 * ls->tokens_cap : 64;
		struct seen_token *t = calloc(cap, sizeof(*t));
		if (!t) {
			return kinf_error_set(err, KINF_ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < ls->tokens_cap; i++) {
			if (ls->tokens[i].h1) {
				size_t j = ls->tokens[i].h1 & (cap - 1);
				while (t[j].h1) {
					j = (j + 1) & (cap - 1);
				}
				t[j] = ls->tokens[i];
			}
		}
		free(ls->tokens);
		ls->tokens = t;
		ls->tokens_cap = cap;
	}
	hash_token(token, &h1, &h2);
	size_t j = h1 & (ls->tokens_cap - 1);
	for (; ls->tokens[j].h1; j = (j + 1) & (ls->tokens_cap - 1)) {
		if (ls->tokens[j].h1 == h1 && ls->tokens[j].h2 == h2) {
			kinf_error_clear(err);
			return kinf_error_set(err, KINF_EHTTP, "list page %u repeats the "
					"continue token that asked for page %u: the server's "
					"pages go round in a circle", page - 1, ls->tokens[j].page);
		}
	}
	ls->tokens[j] = (struct seen_token){ h1, h2, page };
	ls->n_tokens++;
	return 0;
}

static void block_free(struct block *b) {
	if (b) {
		free(b->token);
		free(b);
	}
}

static struct block *block_new(enum block_kind kind, size_t cap) {
	struct block *b = malloc(sizeof(*b) + cap);
	if (b) {
		memset(b, 0, sizeof(*b));
		b->kind = kind;
	}
	return b;
}

/* Append b to the queue and wake the parser; under ls->lock. */
static void pipe_append_locked(struct lister *ls, struct block *b) {
	b->next = NULL;
	if (ls->tail) {
		ls->tail->next = b;
	} else {
		ls->head = b;
	}
	ls->tail = b;
	if (b->kind == BLOCK_DATA) {
		ls->queued += b->len;
	}
	pthread_cond_broadcast(&ls->cond);
}

/* Queue b; waits while the receiver is too far ahead. */
static void pipe_push(struct lister *ls, struct block *b) {
	pthread_mutex_lock(&ls->lock);
	while (b->kind == BLOCK_DATA && ls->queued >= AHEAD_BYTES && !atomic_load(&ls->stop)) {
		pthread_cond_wait(&ls->cond, &ls->lock);
	}
	if (atomic_load(&ls->stop)) {
		pthread_mutex_unlock(&ls->lock);
		block_free(b);
		return;
	}
	pipe_append_locked(ls, b);
	pthread_mutex_unlock(&ls->lock);
}

/* The next block, or NULL when none will come. */
static struct block *pipe_pop(struct lister *ls) {
	pthread_mutex_lock(&ls->lock);
	while (!ls->head && !ls->receiver_gone) {
		pthread_cond_wait(&ls->cond, &ls->lock);
	}
	struct block *b = ls->head;
	if (!b) {
		pthread_mutex_unlock(&ls->lock);
		return NULL;
	}
	ls->head = b->next;
	if (!ls->head) {
		ls->tail = NULL;
	}
	if (b->kind == BLOCK_DATA) {
		ls->queued -= b->len;
	}
	pthread_cond_broadcast(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
	return b;
}

/*
 * A data block: a consumed one again when there is one. Fresh 256 KiB
 * blocks each cost page faults (and an mmap and munmap while glibc's
 * threshold is below their size).
 */
static struct block *data_block(struct lister *ls) {
	pthread_mutex_lock(&ls->lock);
	struct block *b = ls->spare;
	if (b) {
		ls->spare = b->next;
	}
	pthread_mutex_unlock(&ls->lock);
	if (b) {
		b->len = 0;
		return b;
	}
	return block_new(BLOCK_DATA, BLOCK_BYTES);
}

static void data_block_done(struct lister *ls, struct block *b) {
	pthread_mutex_lock(&ls->lock);
	b->next = ls->spare;
	ls->spare = b;
	pthread_mutex_unlock(&ls->lock);
}

/*
 * The continue token in the start of a page: 1 found (*ret, NULL for the
 * last page), 0 more bytes needed, -1 not there (metadata after the items,
 * or not within HEAD_BYTES). The parser reads the page again in full.
 */
static int head_token(const char *p, size_t n, char **ret) {
	struct kinf_json_reader r;
	struct kinf_json_span k, v;
	bool seen_md = false;
	char *token = NULL;
	int rc;

	kinf_json_reader_init(&r, p, n, 64);
	if (kinf_json_object_begin(&r) < 0) {
		goto incomplete;
	}
	while ((rc = kinf_json_member(&r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "items") || kinf_json_span_eq(&k, "rows")) {
			if (!seen_md) {
				free(token);
				return -1;
			}
			*ret = token;
			return 1;
		}
		if (!kinf_json_span_eq(&k, "metadata") || kinf_json_peek(&r) != KINF_JSON_OBJECT) {
			if (kinf_json_skip(&r) < 0) {
				goto incomplete;
			}
			continue;
		}
		seen_md = true;
		free(token);
		token = NULL;
		if (kinf_json_object_begin(&r) < 0) {
			goto incomplete;
		}
		while ((rc = kinf_json_member(&r, &k)) > 0) {
			if (kinf_json_span_eq(&k, "continue") && kinf_json_peek(&r) == KINF_JSON_STRING) {
				struct kinf_buf b = {0};
				if (kinf_json_string_span(&r, &v) < 0 ||
						kinf_json_span_decode(&v, &b) < 0) {
					kinf_buf_release(&b);
					goto incomplete;
				}
				free(token);
				token = b.len ? kinf_buf_take(&b) : NULL;
				kinf_buf_release(&b);
			} else if (kinf_json_skip(&r) < 0) {
				goto incomplete;
			}
		}
		if (rc < 0) {
			goto incomplete;
		}
	}
incomplete:
	free(token);
	/* Cut short by the end of what arrived so far, or malformed: the parser says which. */
	return n < HEAD_BYTES ? 0 : -1;
}

/* One page done (in whichever thread parses): count it, note its RV. */
static void page_done(struct page_state *ps, struct kinf_list_result *ret) {
	const struct kinf_list_opts *opts = ps->opts;
	ret->pages++;
	if (opts->on_page) {
		opts->on_page(ret->pages, ps->n_items, opts->userdata);
	}
	kinf_log(2, "list: page %u, %zu items so far, resourceVersion %s%s",
			ret->pages, ps->n_items,
			ps->rv ? ps->rv : "", ps->cont ? ", more" : "");
	free(ret->resource_version);
	ret->resource_version = ps->rv;
	ps->rv = NULL;
}

/* The parser thread: blocks in, pages out, until the last page or an error. */
static void *parser_main(void *userdata) {
	struct lister *ls = userdata;
	struct page_state *ps = ls->ps;
	int rc = 0;

	for (;;) {
		if (!ps->splitter) {
			ps->splitter = kinf_list_splitter_new(&page_ops, ps, ls->opts->limits.max_bytes);
			ps->md_seen = false;
			if (!ps->splitter) {
				rc = kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
				break;
			}
		}
		struct block *b;
		while ((b = pipe_pop(ls)) && b->kind == BLOCK_DATA) {
			rc = splitter_feed_block(ps->splitter, b->data, b->len, ps->reterr);
			data_block_done(ls, b);
			if (rc < 0) {
				break;
			}
		}
		if (rc == 0 && !b) {
			rc = kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
		}
		if (rc < 0 || b->kind == BLOCK_ERROR) {
			/* Failed here, or the receiver did (and knows why). */
			block_free(rc < 0 ? NULL : b);
			break;
		}
		rc = kinf_list_splitter_finish(ps->splitter, ps->reterr);
		if (rc == 0 && b->token_known && (!b->token != !ps->cont ||
				(b->token && strcmp(b->token, ps->cont) != 0))) {
			rc = kinf_error_set(ps->reterr, KINF_EJSON, "list page %u: two "
					"different continue tokens in its metadata", ls->ret->pages + 1);
		}
		block_free(b);
		kinf_list_splitter_free(ps->splitter);
		ps->splitter = NULL;
		if (rc < 0) {
			break;
		}
		page_done(ps, ls->ret);
		bool more = ps->cont != NULL;
		pthread_mutex_lock(&ls->lock);
		free(ls->published_token);
		ls->published_token = ps->cont;
		ps->cont = NULL;
		ls->published = ls->ret->pages;
		pthread_cond_broadcast(&ls->cond);
		pthread_mutex_unlock(&ls->lock);
		if (!more) {
			break;
		}
	}
	pthread_mutex_lock(&ls->lock);
	ls->parse_rc = rc;
	ls->parser_done = true;
	if (rc < 0) {
		atomic_store(&ls->stop, true);
	}
	pthread_cond_broadcast(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
	if (rc < 0) {
		/* The receiving lanes may wait for data. */
		kinf_http_interrupt(ls->lanes[0].http);
		kinf_http_interrupt(ls->lanes[1].http);
	}
	return NULL;
}

static void *lane_main(void *userdata);
static void give_next(struct lister *ls, struct lane *l, const char *token);

/*
 * Lane 0 (this thread) has the turn; lane 1 waits in its thread for pages.
 * The lanes' jobs and flags are clear (finish_lanes clears them).
 */
static void start_lanes(struct lister *ls) {
	struct lane *l0 = &ls->lanes[0];

	atomic_store(&ls->lanes_over, false);
	ls->lanes_rc = 0;
	ls->failed_page = 0;
	kinf_error_clear(&ls->lanes_err);
	ls->turn = l0->page;
	l0->in_turn = true;
	/* Without a second connection the pages simply come one by one. */
	if (ls->lanes[1].http &&
			pthread_create(&ls->lane_thread, NULL, lane_main, &ls->lanes[1]) == 0) {
		ls->lane_thread_started = true;
	}
	if (ls->head_state == 1 && ls->head_token) {
		give_next(ls, l0, ls->head_token);
	}
}

/*
 * Hand the parsing of the rest of this list to a new thread, in the middle
 * of the current page. The splitter (and whatever it gathered) goes along.
 * On failure the caller's thread simply goes on parsing.
 */
static void start_parser(struct lister *ls) {
	struct page_state *ps = ls->ps;

	ls->head = ls->tail = ls->spare = ls->cur = NULL;
	ls->queued = 0;
	ls->parser_done = false;
	ls->receiver_gone = false;
	ls->parse_rc = 0;
	kinf_error_clear(&ls->parse_err);
	ls->published = ls->ret->pages;
	ls->published_token = NULL;
	atomic_store(&ls->stop, false);
	/* The splitter has read this page so far: its metadata, if it came first. */
	ls->head_state = ps->md_seen ? 1 : -1;
	ls->head_token = ps->md_seen && ps->cont ? strdup(ps->cont) : NULL;
	if (ps->md_seen && ps->cont && !ls->head_token) {
		ls->head_state = -1;
	}
	ps->reterr = &ls->parse_err;
	if (!ls->lanes[1].http) {
		ls->lanes[1].http = kinf_http_clone(ls->lanes[0].http);
	}
	if (pthread_create(&ls->thread, NULL, parser_main, ls) != 0) {
		ps->reterr = NULL;	/* restored by the caller */
		free(ls->head_token);
		ls->head_token = NULL;
		return;
	}
	ls->threaded = true;
	start_lanes(ls);
}

/* Wait until l's page is the one being received: false when the list is over. */
static bool wait_turn(struct lister *ls, struct lane *l) {
	if (l->in_turn) {
		return true;
	}
	pthread_mutex_lock(&ls->lock);
	while (ls->turn != l->page && !atomic_load(&ls->lanes_over)) {
		pthread_cond_wait(&ls->lane_cond, &ls->lock);
	}
	l->in_turn = !atomic_load(&ls->lanes_over);
	pthread_mutex_unlock(&ls->lock);
	return l->in_turn;
}

/* The page after l's has this token: the other lane asks for it now. */
static void give_next(struct lister *ls, struct lane *l, const char *token) {
	struct lane *o = &ls->lanes[l == &ls->lanes[0]];
	char *cont;

	if (!ls->lane_thread_started || !(cont = strdup(token))) {
		return;		/* l asks for it when its page is in */
	}
	pthread_mutex_lock(&ls->lock);
	struct kinf_error err = {0};
	/* A token refused here is refused with its error when l's page ends. */
	if (!o->has_job && !atomic_load(&ls->lanes_over) &&
			note_token(ls, token, l->page + 1, &err) == 0) {
		o->page = l->page + 1;
		free(o->cont);
		o->cont = cont;
		cont = NULL;
		o->has_job = true;
		l->gave_next = true;
		pthread_cond_broadcast(&ls->lane_cond);
	}
	pthread_mutex_unlock(&ls->lock);
	free(cont);
}

/* Between waits for data: a lane stops when the list is over. */
static int lane_aborted(void *userdata) {
	struct lane *l = userdata;
	struct lister *ls = l->ls;

	if (ls->threaded && (atomic_load(&ls->lanes_over) || atomic_load(&ls->stop))) {
		return -KINF_ECANCELED;
	}
	return 0;
}

static int lister_body(const char *data, size_t len, void *userdata) {
	struct lane *lane = userdata;
	struct lister *ls = lane->ls;

	if (!ls->threaded) {
		int rc = kinf_list_splitter_feed(ls->ps->splitter, data, len, ls->ps->reterr);
		if (rc < 0) {
			return rc;
		}
		ls->inline_bytes += len;
		if (ls->inline_bytes >= SWITCH_BYTES) {
			struct kinf_error *reterr = ls->ps->reterr;
			start_parser(ls);
			if (!ls->threaded) {
				ls->ps->reterr = reterr;
				ls->inline_bytes = 0;	/* try again later */
			}
		}
		return 0;
	}
	if (!wait_turn(ls, lane) || atomic_load(&ls->stop)) {
		return -KINF_ECANCELED;
	}
	if (ls->head_state == 0 && ls->ps->restarted) {
		ls->head_state = -1;	/* its token is not followed: see on_member */
	}
	if (ls->head_state == 0) {
		size_t take = len < HEAD_BYTES - ls->head_buf.len ? len : HEAD_BYTES - ls->head_buf.len;
		if (kinf_buf_append(&ls->head_buf, data, take) < 0) {
			return -KINF_ENOMEM;
		}
		ls->head_state = head_token(ls->head_buf.data, ls->head_buf.len, &ls->head_token);
		if (ls->head_state == 1 && ls->head_token) {
			give_next(ls, lane, ls->head_token);
		}
	}
	while (len > 0) {
		if (!ls->cur && !(ls->cur = data_block(ls))) {
			return -KINF_ENOMEM;
		}
		size_t n = BLOCK_BYTES - ls->cur->len;
		if (n > len) {
			n = len;
		}
		memcpy(ls->cur->data + ls->cur->len, data, n);
		ls->cur->len += n;
		data += n;
		len -= n;
		if (ls->cur->len == BLOCK_BYTES) {
			pipe_push(ls, ls->cur);
			ls->cur = NULL;
		}
	}
	return 0;
}

/*
 * Stop the lanes, wait for the parser and tear the pipeline down. Returns
 * the parser's error if it failed (into reterr), else rc, or when rc is 0
 * the failure of a page the lanes asked for.
 */
static void finish_lanes(struct lister *ls);

static int stop_parser(struct lister *ls, int rc, struct kinf_error *reterr) {
	finish_lanes(ls);
	if (rc == 0 && ls->lanes_rc < 0) {
		rc = ls->lanes_rc;
		if (reterr) {
			*reterr = ls->lanes_err;
		}
	}
	pthread_join(ls->thread, NULL);
	ls->threaded = false;
	if (ls->parse_rc < 0) {
		rc = ls->parse_rc;
		if (reterr) {
			*reterr = ls->parse_err;
		}
	}
	ls->ps->reterr = reterr;
	while (ls->head) {
		struct block *b = ls->head;
		ls->head = b->next;
		block_free(b);
	}
	ls->tail = NULL;
	block_free(ls->cur);
	ls->cur = NULL;
	while (ls->spare) {
		struct block *b = ls->spare;
		ls->spare = b->next;
		block_free(b);
	}
	free(ls->published_token);
	ls->published_token = NULL;
	free(ls->head_token);
	ls->head_token = NULL;
	if (ls->ps->splitter) {
		kinf_list_splitter_free(ls->ps->splitter);
		ls->ps->splitter = NULL;
	}
	return rc;
}

/* Tell the parser this page ended (or failed) and no more comes. */
static void push_end(struct lister *ls, enum block_kind kind) {
	if (ls->cur) {
		pipe_push(ls, ls->cur);
		ls->cur = NULL;
	}
	struct block *b = block_new(kind, 0);
	if (!b) {
		/* Out of memory: the parser ends without its last block. */
		pthread_mutex_lock(&ls->lock);
		atomic_store(&ls->stop, true);
		ls->receiver_gone = true;
		pthread_cond_broadcast(&ls->cond);
		pthread_mutex_unlock(&ls->lock);
		return;
	}
	if (kind == BLOCK_PAGE_END && ls->head_state == 1) {
		b->token_known = true;
		b->token = ls->head_token ? strdup(ls->head_token) : NULL;
	}
	/* Not pipe_push: the last block must arrive even after a stop. */
	pthread_mutex_lock(&ls->lock);
	pipe_append_locked(ls, b);
	pthread_mutex_unlock(&ls->lock);
}

/*
 * l's request for its page is over (rc, why in err). In its turn: end the
 * page for the parser, settle who asks for the next one (the other lane
 * already does, or l now, or nobody: the list is over), pass the turn on.
 */
static void lane_page_end(struct lister *ls, struct lane *l, int rc,
		const struct kinf_error *err) {
	char *next = NULL;
	bool over = true;

	if (!wait_turn(ls, l)) {
		return;		/* another page failed or was the last */
	}
	push_end(ls, rc < 0 ? BLOCK_ERROR : BLOCK_PAGE_END);
	if (rc == 0 && !l->gave_next) {
		if (ls->head_state == 1) {
			next = ls->head_token;
			ls->head_token = NULL;
		} else {
			/* The token was not at the start: the parser has it at the end. */
			pthread_mutex_lock(&ls->lock);
			while (ls->published < l->page && !ls->parser_done) {
				pthread_cond_wait(&ls->cond, &ls->lock);
			}
			if (ls->published >= l->page && ls->published_token &&
					!(next = strdup(ls->published_token))) {
				rc = -KINF_ENOMEM;
				err = NULL;
			}
			pthread_mutex_unlock(&ls->lock);
		}
	}
	kinf_buf_reset(&ls->head_buf);
	ls->head_state = 0;
	free(ls->head_token);
	ls->head_token = NULL;

	struct kinf_error token_err = {0};
	pthread_mutex_lock(&ls->lock);
	if (rc == 0 && next && (rc = note_token(ls, next, l->page + 1, &token_err)) < 0) {
		err = &token_err;
		/* The parser, done with this page, waits for the next: none comes. */
		pthread_mutex_unlock(&ls->lock);
		push_end(ls, BLOCK_ERROR);
		pthread_mutex_lock(&ls->lock);
	}
	if (rc < 0) {
		ls->lanes_rc = rc;
		ls->failed_page = l->page;
		if (err) {
			ls->lanes_err = *err;
		} else {
			kinf_error_set(&ls->lanes_err, KINF_ENOMEM, "out of memory");
		}
	} else if (atomic_load(&ls->stop)) {
		/* The parser stopped first: its error is the one. */
	} else if (l->gave_next) {
		over = false;
	} else if (next) {
		free(l->cont);
		l->cont = next;
		next = NULL;
		l->page++;
		l->has_job = true;
		over = false;
	}
	if (over) {
		atomic_store(&ls->lanes_over, true);
	}
	ls->turn++;
	l->in_turn = false;
	l->gave_next = false;
	pthread_cond_broadcast(&ls->lane_cond);
	pthread_mutex_unlock(&ls->lock);
	free(next);
	if (over) {
		/* The other lane may wait for a page nobody wants any more. */
		kinf_http_interrupt(ls->lanes[l == &ls->lanes[0]].http);
	}
}

/* Ask for the pages given to l, one by one, until the list is over. */
static void lane_loop(struct lister *ls, struct lane *l) {
	struct kinf_buf path = {0};

	for (;;) {
		pthread_mutex_lock(&ls->lock);
		while (!l->has_job && !atomic_load(&ls->lanes_over)) {
			pthread_cond_wait(&ls->lane_cond, &ls->lock);
		}
		bool run = l->has_job && !atomic_load(&ls->lanes_over);
		l->has_job = false;
		pthread_mutex_unlock(&ls->lock);
		if (!run) {
			break;
		}
		int rc = page_path(ls->opts, ls->limit, l->cont, &path);
		if (rc < 0) {
			rc = kinf_error_set(&l->err, KINF_ENOMEM, "out of memory");
		} else {
			struct kinf_http_request req = {
				.path = path.data,
				.accept = ls->opts->table ? TABLE_ACCEPT : "application/json",
				.on_body = lister_body,
				.aborted = lane_aborted,
				.userdata = l,
			};
			rc = kinf_http_get(l->http, &req, NULL, &l->err);
		}
		lane_page_end(ls, l, rc, &l->err);
	}
	kinf_buf_release(&path);
}

static void *lane_main(void *userdata) {
	struct lane *l = userdata;
	lane_loop(l->ls, l);
	return NULL;
}

/* The list is over (or given up): stop lane 1 and clear both lanes' jobs. */
static void finish_lanes(struct lister *ls) {
	pthread_mutex_lock(&ls->lock);
	atomic_store(&ls->lanes_over, true);
	pthread_cond_broadcast(&ls->lane_cond);
	pthread_mutex_unlock(&ls->lock);
	if (ls->lane_thread_started) {
		kinf_http_interrupt(ls->lanes[1].http);
		pthread_join(ls->lane_thread, NULL);
		ls->lane_thread_started = false;
	}
	for (int i = 0; i < 2; i++) {
		struct lane *l = &ls->lanes[i];
		free(l->cont);
		l->cont = NULL;
		l->has_job = l->in_turn = l->gave_next = false;
	}
}

int kinf_list(struct kinf_http *http, const struct kinf_list_opts *opts,
		struct kinf_list_result *ret, struct kinf_error *reterr) {
	struct page_state ps = { .opts = opts, .result = ret, .reterr = reterr };
	struct lister ls = { .opts = opts, .limit = opts->limit, .ps = &ps, .ret = ret };
	ls.lanes[0].ls = ls.lanes[1].ls = &ls;
	ls.lanes[0].http = http;
	struct kinf_buf path = {0};
	char *cont = NULL;
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	atomic_init(&ls.stop, false);
	atomic_init(&ls.lanes_over, false);
	pthread_mutex_init(&ls.lock, NULL);
	pthread_cond_init(&ls.cond, NULL);
	pthread_cond_init(&ls.lane_cond, NULL);
	for (;;) {
		rc = page_path(opts, ls.limit, cont, &path);
		if (rc < 0) {
			goto out;
		}
		ls.lanes[0].page = ret->pages + 1;
		ps.splitter = kinf_list_splitter_new(&page_ops, &ps, opts->limits.max_bytes);
		ps.md_seen = false;
		if (!ps.splitter) {
			rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			goto out;
		}
		struct kinf_http_request req = {
			.path = path.data,
			.accept = opts->table ? TABLE_ACCEPT : "application/json",
			.on_body = lister_body,
			.aborted = lane_aborted,
			.userdata = &ls.lanes[0],
		};
		rc = kinf_http_get(http, &req, NULL, reterr);
		if (ls.threaded) {
			/*
			 * The parser has this page (it started during it): the
			 * lanes ask for the rest, this thread being lane 0.
			 */
			lane_page_end(&ls, &ls.lanes[0], rc, reterr);
			lane_loop(&ls, &ls.lanes[0]);
			rc = stop_parser(&ls, 0, reterr);
			if (rc == -KINF_EGONE && ls.failed_page > 1 && !ps.restarted) {
				goto expired;
			}
			if (rc < 0) {
				goto out;
			}
			break;
		}
		if (rc == 0) {
			rc = kinf_list_splitter_finish(ps.splitter, reterr);
		}
		kinf_list_splitter_free(ps.splitter);
		ps.splitter = NULL;
		/* Once only: a 410 on the full list is the server's last word. */
		if (rc == -KINF_EGONE && cont && !ps.restarted) {
			goto expired;
		}
		if (rc < 0) {
			goto out;
		}
		page_done(&ps, ret);
		free(cont);
		cont = ps.cont;
		ps.cont = NULL;
		if (!cont) {
			break;
		}
		if ((rc = note_token(&ls, cont, ret->pages + 1, reterr)) < 0) {
			goto out;
		}
		continue;
expired:
		/*
		 * The continue token expired: like the pager's FullListIfExpired,
		 * list everything in one request at the original resourceVersion.
		 */
		kinf_log(1, "list: continue token expired after %u pages; "
				"relisting without paging", ret->pages);
		drop_collected(&ps);
		ps.n_items = 0;
		kinf_strv_sort(&ps.handed);
		ps.restarted = true;
		free(cont);
		cont = NULL;
		ls.limit = 0;
		ls.inline_bytes = 0;
		ret->fell_back_to_full_list = true;
	}
	ret->items.n = ps.items.len / sizeof(struct kinf_object *);
	ret->items.v = (struct kinf_object **)(void *)kinf_buf_take(&ps.items);
	qsort(ret->items.v, ret->items.n, sizeof(*ret->items.v), cmp_obj);
	ret->n_rows = ps.rows.len / sizeof(struct kinf_table_row);
	ret->rows = (struct kinf_table_row *)(void *)kinf_buf_take(&ps.rows);
	qsort(ret->rows, ret->n_rows, sizeof(*ret->rows), cmp_row);
	ret->n_items = ps.n_items;
	if (!ret->resource_version) {
		ret->resource_version = strdup("");
	}
	rc = 0;
out:
	if (ls.threaded) {
		push_end(&ls, BLOCK_ERROR);
		stop_parser(&ls, rc, NULL);
	}
	kinf_buf_release(&ls.head_buf);
	free(ls.tokens);
	kinf_http_free(ls.lanes[1].http);
	pthread_cond_destroy(&ls.cond);
	pthread_cond_destroy(&ls.lane_cond);
	pthread_mutex_destroy(&ls.lock);
	drop_collected(&ps);
	kinf_buf_release(&ps.items);
	kinf_buf_release(&ps.rows);
	kinf_strv_release(&ps.handed);
	free(ps.cont);
	free(ps.rv);
	free(cont);
	kinf_buf_release(&path);
	if (rc < 0) {
		kinf_list_result_release(ret);
	}
	return rc;
}

void kinf_list_result_release(struct kinf_list_result *result) {
	if (!result) {
		return;
	}
	kinf_object_list_release(&result->items);
	free_rows(result->rows, result->n_rows);
	free(result->columns_json);
	free(result->resource_version);
	free(result->kind);
	free(result->api_version);
	memset(result, 0, sizeof(*result));
}
