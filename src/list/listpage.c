/*
 * Page parsing (listpage.h): the splitter's members and elements of one
 * page, into the list's result.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apistatus.h"
#include "json.h"
#include "jsonnum.h"
#include "listpage.h"
#include "listsplit.h"
#include "log.h"
#include "urlquery.h"

size_t kinf_listpage_max_items(const struct kinf_list_opts *opts) {
	return opts->limits.max_list_items ? opts->limits.max_list_items :
		KINF_LIST_DEFAULT_MAX_ITEMS;
}

/* One more item or row in the list: within --max-list-items? */
static int count_item(struct kinf_listpage *ps) {
	size_t max = kinf_listpage_max_items(ps->opts);
	if (ps->n_items >= max) {
		kinf_error_clear(ps->reterr);
		return kinf_error_set(ps->reterr, KINF_ETOOBIG, "the list holds more than "
				"%zu items (--max-list-items)", max);
	}
	ps->n_items++;
	return 0;
}

/* A member of a Status that says what went wrong. */
static bool is_status_member(const char *key, size_t len) {
	static const char *const names[] = { "status", "message", "reason", "code", "details" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		if (strlen(names[i]) == len && memcmp(names[i], key, len) == 0) {
			return true;
		}
	}
	return false;
}

static int on_member(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct kinf_listpage *ps = userdata;
	struct kinf_list_result *res = ps->result;
	json_error_t jerr = {0};

	if (key_len == 8 && memcmp(key, "metadata", 8) == 0) {
		struct kinf_error err = {0};
		json_t *md = kinf_jsonnum_load(value, len, 0, &err);
		if (!json_is_object(md)) {
			json_decref(md);
			return kinf_error_set(ps->reterr, md ? KINF_EJSON : err.code, "list metadata: %s",
					md ? "not an object" : err.message);
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
		bool lost = (cont && cont[0] && !ps->cont) || (rv && !ps->rv);
		json_decref(md);	/* (cont and rv were its) */
		if (lost) {
			/* Without its token the list would end at this page. */
			return kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
		}
	} else if ((key_len == 4 && memcmp(key, "kind", 4) == 0) ||
			(key_len == 10 && memcmp(key, "apiVersion", 10) == 0)) {
		json_t *v = json_loadb(value, len, JSON_DECODE_ANY, &jerr);
		char **slot = key_len == 4 ? &res->kind : &res->api_version;
		if (!v) {
			int rc = kinf_jsonnum_load_error(value, len, JSON_DECODE_ANY, &jerr, ps->reterr);
			if (rc == -KINF_EJSON) {
				kinf_error_fill(ps->reterr, KINF_EJSON, "list %.*s: %s",
						(int)key_len, key, jerr.text);
			}
			return rc;
		}
		if (json_is_string(v)) {
			free(*slot);
			*slot = strdup(json_string_value(v));
			ps->is_status |= key_len == 4 && strcmp(json_string_value(v), "Status") == 0;
		}
		bool lost = json_is_string(v) && !*slot;
		json_decref(v);
		if (lost) {
			return kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
		}
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
		if (!res->columns_json) {
			return kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
		}
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
	} else if (is_status_member(key, key_len)) {
		kinf_buf_putf(&ps->status_members, ",\"%.*s\":", (int)key_len, key);
		kinf_buf_put(&ps->status_members, value, len);
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
		size_t *ret_cells_len, const char **ret_obj, size_t *ret_obj_len,
		struct kinf_error *reterr) {
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
	*ret_obj = NULL;
	*ret_obj_len = 0;
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
			const char *obj_start = r.p;	/* at its '{' (peeked) */
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
			if (rc == 0) {
				*ret_obj = obj_start;
				*ret_obj_len = (size_t)(r.p - obj_start);
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
 * object was printed (or whatever the caller did) from the first list;
 * unless the caller forgets that (on_restart) and takes them all again.
 */
static int take_item(struct kinf_listpage *ps, struct kinf_object *obj) {
	const struct kinf_list_opts *opts = ps->opts;
	int rc;

	if ((rc = count_item(ps)) < 0) {
		kinf_object_unref(obj);
		return rc;
	}
	if (!opts->on_item) {
		if (kinf_object_list_push_take(&ps->items, obj) < 0) {
			return kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
		}
		return 0;
	}
	const char *key = kinf_object_key(obj);
	if (opts->on_restart) {
		/* Every item of a list that starts over comes again. */
	} else if (ps->restarted) {
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

/* Append a row (its strings owned by the page from now on). */
static int push_row(struct kinf_listpage *ps, const struct kinf_list_row *tr) {
	if (ps->rows.n == ps->rows.cap) {
		size_t cap = ps->rows.cap ? ps->rows.cap * 2 : 16;
		struct kinf_list_row *v = realloc(ps->rows.v, cap * sizeof(*v));
		if (!v) {
			return -KINF_ENOMEM;
		}
		ps->rows.v = v;
		ps->rows.cap = cap;
	}
	ps->rows.v[ps->rows.n++] = *tr;
	return 0;
}

static int on_element(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct kinf_listpage *ps = userdata;
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
	struct kinf_list_row tr = {0};
	const char *cells, *object;
	size_t cells_len, object_len;
	if ((rc = count_item(ps)) < 0) {
		return rc;
	}
	rc = row_key(value, len, ps->opts->limits.max_depth, &ns, &name, &cells,
			&cells_len, &object, &object_len, ps->reterr);
	/*
	 * A name no server allows, as kinf_object_parse() refuses it for
	 * items (this row is counted in n_items already).
	 */
	const char *why = NULL;
	bool bad_ns = false;
	if (rc == 0 && ((ns.len && (bad_ns = (why = kinf_object_name_problem(ns.data,
			ns.len)) != NULL)) ||
			(why = kinf_object_name_problem(name.data ? name.data : "", name.len)))) {
		rc = kinf_error_set(ps->reterr, KINF_EJSON, "table row %zu: object %s: "
				"metadata.%s %s", ps->n_items,
				kinf_object_key_quoted(&row, ns.len ? ns.data : NULL, ns.len,
					name.data, name.len),
				bad_ns ? "namespace" : "name", why);
		kinf_buf_release(&k);
		kinf_buf_release(&row);
	}
	if (rc == 0) {
		bool key_ok = (!ns.len || kinf_buf_printf(&k, "%s/", ns.data) == 0) &&
			kinf_buf_append_str(&k, name.data ? name.data : "") == 0;
		tr.key = key_ok ? kinf_buf_take(&k) : NULL;
		kinf_buf_release(&k);
		bool ok = kinf_buf_append_str(&row, "{") == 0 && (!cells ||
				(kinf_buf_append_str(&row, "\"cells\":") == 0 &&
				 kinf_buf_append(&row, cells, cells_len) == 0)) &&
			(!ps->opts->row_objects || !object ||
			 (kinf_buf_append_str(&row, cells ? ",\"object\":" : "\"object\":") == 0 &&
			  kinf_buf_append(&row, object, object_len) == 0)) &&
			kinf_buf_append_str(&row, "}") == 0;
		tr.len = row.len;
		tr.json = ok ? kinf_buf_take(&row) : NULL;
		kinf_buf_release(&row);
		if (!tr.key || !tr.json || push_row(ps, &tr) < 0) {
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
	struct kinf_listpage *ps = userdata;
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

static const struct kinf_listsplit_ops page_ops = {
	.member = on_member,
	.element = on_element,
	.element_prefix = on_element_prefix,
};

static int cmp_obj(const void *a, const void *b) {
	return strcmp(kinf_object_key(*(struct kinf_object *const *)a),
			kinf_object_key(*(struct kinf_object *const *)b));
}

static int cmp_row(const void *a, const void *b) {
	return strcmp(((const struct kinf_list_row *)a)->key,
			((const struct kinf_list_row *)b)->key);
}

void kinf_listpage_drop(struct kinf_listpage *ps) {
	kinf_object_list_reset(&ps->items);
	for (size_t i = 0; i < ps->rows.n; i++) {
		free(ps->rows.v[i].key);
		free(ps->rows.v[i].json);
	}
	ps->rows.n = 0;
}

#define TABLE_ACCEPT "application/json;as=Table;v=v1;g=meta.k8s.io," \
	"application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

/* The request path of a page: the first (cont NULL) or a continued one. */
int kinf_listpage_path(const struct kinf_list_opts *opts, long limit,
		const char *cont, struct kinf_buf *path) {
	struct kinf_urlquery q;

	kinf_urlquery_start(&q, path, opts->path);
	kinf_urlquery_add(&q, "labelSelector", opts->label_selector);
	kinf_urlquery_add(&q, "fieldSelector", opts->field_selector);
	if (opts->table && opts->full_objects) {
		kinf_urlquery_add(&q, "includeObject", "Object");	/* kubectl's, with --sort-by */
	}
	if (limit > 0) {
		kinf_urlquery_add_long(&q, "limit", limit);
	}
	if (cont) {
		kinf_urlquery_add(&q, "continue", cont);
	} else {
		/*
		 * As client-go's pager: the resourceVersion only on the first
		 * page; the continue token carries it after that.
		 */
		kinf_urlquery_add(&q, "resourceVersion", opts->resource_version);
		kinf_urlquery_add(&q, "resourceVersionMatch", opts->resource_version_match);
	}
	return kinf_urlquery_finish(&q);
}

const char *kinf_listpage_accept(const struct kinf_list_opts *opts) {
	return opts->table ? TABLE_ACCEPT : "application/json";
}

int kinf_listpage_begin(struct kinf_listpage *ps) {
	ps->splitter = kinf_listsplit_new(&page_ops, ps, ps->opts->limits.max_bytes);
	ps->md_seen = false;
	ps->is_status = false;
	kinf_buf_reset(&ps->status_members);
	if (!ps->splitter) {
		return kinf_error_set(ps->reterr, KINF_ENOMEM, "out of memory");
	}
	return 0;
}

int kinf_listpage_done(struct kinf_listpage *ps) {
	const struct kinf_list_opts *opts = ps->opts;
	struct kinf_list_result *ret = ps->result;

	if (ps->is_status) {
		struct kinf_buf body = {0};
		kinf_buf_puts(&body, "{\"kind\":\"Status\"");
		kinf_buf_put(&body, ps->status_members.data, ps->status_members.len);
		kinf_buf_puts(&body, "}");
		int rc = kinf_buf_error(&body) ? kinf_error_set(ps->reterr, KINF_ENOMEM,
				"out of memory") :
			kinf_apistatus_check_success(body.data, body.len, ps->reterr);
		kinf_buf_release(&body);
		if (rc < 0) {
			return rc;
		}
	}

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
	return 0;
}

void kinf_listpage_finish(struct kinf_listpage *ps) {
	struct kinf_list_result *ret = ps->result;

	ret->items = ps->items;
	ps->items = (struct kinf_object_list){0};
	if (ret->items.n > 1) {
		qsort(ret->items.v, ret->items.n, sizeof(*ret->items.v), cmp_obj);
	}
	ret->n_rows = ps->rows.n;
	ret->rows = ps->rows.v;
	ps->rows.v = NULL;
	ps->rows.n = ps->rows.cap = 0;
	if (ret->n_rows > 1) {
		qsort(ret->rows, ret->n_rows, sizeof(*ret->rows), cmp_row);
	}
	ret->n_items = ps->n_items;
}

void kinf_listpage_release(struct kinf_listpage *ps) {
	kinf_listsplit_free(ps->splitter);
	ps->splitter = NULL;
	kinf_listpage_drop(ps);
	kinf_object_list_release(&ps->items);
	free(ps->rows.v);
	ps->rows.v = NULL;
	ps->rows.cap = 0;
	kinf_strv_release(&ps->handed);
	kinf_buf_release(&ps->status_members);
	free(ps->cont);
	ps->cont = NULL;
	free(ps->rv);
	ps->rv = NULL;
}
