#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "jsonnum.h"
#include "object.h"

/*
 * One allocation per object: the struct, then the label and owner arrays,
 * then the extracted strings, then the compact JSON. Offsets are gathered
 * into a scratch record first and turned into pointers once the final size
 * is known.
 */
struct kinf_object {
	atomic_uint refs;
	size_t json_len;
	const char *json;
	const char *key;
	const char *namespace;
	const char *name;
	const char *uid;
	const char *resource_version;
	const char *kind;
	const char *api_version;
	const char *creation_timestamp;
	const char *deletion_timestamp;
	const char *node_name;
	const char *phase;
	struct kinf_label *labels;
	size_t n_labels;
	struct kinf_owner_ref *owners;
	size_t n_owners;
};

enum field {
	F_KEY, F_NAMESPACE, F_NAME, F_UID, F_RV, F_KIND, F_API_VERSION,
	F_CREATED, F_DELETED, F_NODE, F_PHASE, F_COUNT
};

/* A label's key and value, an owner's kind and name: offsets into the arena. */
struct label_offs {
	size_t key, value;
};
struct owner_offs {
	size_t kind, name;
	bool controller;
};

struct scratch {
	struct kinf_buf arena;		/* NUL-separated strings */
	size_t field[F_COUNT];		/* offset + 1 into arena, 0 = absent */
	struct {
		struct label_offs *v;
		size_t n, cap;
	} labels;
	struct {
		struct owner_offs *v;
		size_t n, cap;
	} owners;
	size_t field_len[F_COUNT];	/* decoded length (a NUL would hide the rest) */
	const char *nul_in;		/* the first label or owner string with a NUL */
	bool has_metadata;
	bool has_name;
	bool metadata_only;		/* see kinf_object_limits */
	bool drop_managed_fields;	/* see kinf_object_limits */
	size_t cut_start, cut_end;	/* bytes of the input to leave out */
};

static int arena_add_span(struct scratch *s, const struct kinf_json_span *span,
		size_t *ret_off) {
	size_t off = s->arena.len;
	int rc = kinf_json_span_decode(span, &s->arena);
	if (rc == 0) {
		rc = kinf_buf_append_char(&s->arena, '\0');
	}
	if (rc == 0) {
		*ret_off = off;
	}
	return rc;
}

/* The same for a label or owner string: one holding \u0000 is noted. */
static int arena_add_meta(struct scratch *s, const struct kinf_json_span *span,
		size_t *ret_off, const char *what) {
	int rc = arena_add_span(s, span, ret_off);
	if (rc == 0 && !s->nul_in &&
			strlen(s->arena.data + *ret_off) != s->arena.len - *ret_off - 1) {
		s->nul_in = what;
	}
	return rc;
}

/*
 * Enter the object or array (type) at r: 1 when entered, 0 when it was
 * null (skipped: the API writes an empty map or list as null), or a
 * negative KINF_E* code.
 */
static int begin_or_null(struct kinf_json_reader *r, enum kinf_json_type type) {
	int rc;

	if (kinf_json_peek(r) == KINF_JSON_NULL) {
		return kinf_json_skip(r);
	}
	rc = type == KINF_JSON_OBJECT ? kinf_json_object_begin(r) :
		kinf_json_array_begin(r);
	return rc < 0 ? rc : 1;
}

static int read_string_field(struct kinf_json_reader *r, struct scratch *s,
		enum field f) {
	struct kinf_json_span span;
	size_t off = 0;
	int rc;

	if (kinf_json_peek(r) == KINF_JSON_NULL) {
		return kinf_json_skip(r);
	}
	if ((rc = kinf_json_string_span(r, &span)) < 0) {
		return rc;
	}
	if ((rc = arena_add_span(s, &span, &off)) < 0) {
		return rc;
	}
	s->field[f] = off + 1;
	s->field_len[f] = s->arena.len - off - 1;
	return 0;
}

static int read_labels(struct kinf_json_reader *r, struct scratch *s) {
	struct kinf_json_span k, v;
	int rc;

	if ((rc = begin_or_null(r, KINF_JSON_OBJECT)) <= 0) {
		return rc;
	}
	while ((rc = kinf_json_member(r, &k)) > 0) {
		struct label_offs offs;
		if ((rc = kinf_json_string_span(r, &v)) < 0 ||
				(rc = arena_add_meta(s, &k, &offs.key, "metadata.labels")) < 0 ||
				(rc = arena_add_meta(s, &v, &offs.value, "metadata.labels")) < 0) {
			return rc;
		}
		struct label_offs *lv = kinf_grow(s->labels.v, &s->labels.cap, s->labels.n,
				sizeof(*lv));
		if (!lv) {
			return -KINF_ENOMEM;
		}
		s->labels.v = lv;
		s->labels.v[s->labels.n++] = offs;
	}
	return rc;
}

static int read_owners(struct kinf_json_reader *r, struct scratch *s) {
	struct kinf_json_span k, v;
	int rc;

	if ((rc = begin_or_null(r, KINF_JSON_ARRAY)) <= 0) {
		return rc;
	}
	while ((rc = kinf_json_element(r)) > 0) {
		struct owner_offs rec = { SIZE_MAX, SIZE_MAX, false };
		if ((rc = kinf_json_object_begin(r)) < 0) {
			return rc;
		}
		while ((rc = kinf_json_member(r, &k)) > 0) {
			if (kinf_json_span_eq(&k, "kind") || kinf_json_span_eq(&k, "name")) {
				size_t *slot = kinf_json_span_eq(&k, "kind") ? &rec.kind : &rec.name;
				if ((rc = kinf_json_string_span(r, &v)) < 0 ||
						(rc = arena_add_meta(s, &v, slot,
							"metadata.ownerReferences")) < 0) {
					return rc;
				}
			} else if (kinf_json_span_eq(&k, "controller") &&
					kinf_json_peek(r) == KINF_JSON_TRUE) {
				rec.controller = true;
				rc = kinf_json_skip(r);
			} else {
				rc = kinf_json_skip(r);
			}
			if (rc < 0) {
				return rc;
			}
		}
		if (rc < 0) {
			return rc;
		}
		if (rec.kind != SIZE_MAX && rec.name != SIZE_MAX) {
			struct owner_offs *ov = kinf_grow(s->owners.v, &s->owners.cap,
					s->owners.n, sizeof(*ov));
			if (!ov) {
				return -KINF_ENOMEM;
			}
			s->owners.v = ov;
			s->owners.v[s->owners.n++] = rec;
		}
	}
	return rc;
}

/*
 * Skip the value of the member whose key starts at key (its quote) and
 * mark the member, with one comma next to it, as bytes to leave out.
 */
static int cut_member(struct kinf_json_reader *r, struct scratch *s, const char *key) {
	int rc = kinf_json_skip(r);
	if (rc < 0) {
		return rc;
	}
	const char *start = key, *end = r->p, *p = r->p;
	while (p < r->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
	}
	if (p < r->end && *p == ',') {
		end = p + 1;
	} else {
		for (p = key; p > r->start && (p[-1] == ' ' || p[-1] == '\t' ||
				p[-1] == '\n' || p[-1] == '\r'); p--) {
		}
		if (p > r->start && p[-1] == ',') {
			start = p - 1;
		}
	}
	s->cut_start = (size_t)(start - r->start);
	s->cut_end = (size_t)(end - r->start);
	return 0;
}

static int read_metadata(struct kinf_json_reader *r, struct scratch *s) {
	static const struct { const char *name; enum field f; } strings[] = {
		{ "name", F_NAME }, { "namespace", F_NAMESPACE }, { "uid", F_UID },
		{ "resourceVersion", F_RV }, { "creationTimestamp", F_CREATED },
		{ "deletionTimestamp", F_DELETED },
	};
	struct kinf_json_span k;
	int rc;

	if ((rc = kinf_json_object_begin(r)) < 0) {
		return rc;
	}
	s->has_metadata = true;
	while ((rc = kinf_json_member(r, &k)) > 0) {
		bool done = false;
		for (size_t i = 0; i < sizeof(strings) / sizeof(*strings); i++) {
			if (kinf_json_span_eq(&k, strings[i].name)) {
				rc = read_string_field(r, s, strings[i].f);
				done = true;
				break;
			}
		}
		if (!done) {
			if (kinf_json_span_eq(&k, "labels")) {
				rc = read_labels(r, s);
			} else if (kinf_json_span_eq(&k, "ownerReferences")) {
				rc = read_owners(r, s);
			} else if (s->drop_managed_fields &&
					kinf_json_span_eq(&k, "managedFields")) {
				rc = cut_member(r, s, k.s - 1);
			} else {
				rc = kinf_json_skip(r);
			}
		}
		if (rc < 0) {
			return rc;
		}
	}
	return rc;
}

/* Read member name of an object value into field f, skip everything else. */
static int read_nested_string(struct kinf_json_reader *r, struct scratch *s,
		const char *name, enum field f) {
	struct kinf_json_span k;
	int rc;

	if (kinf_json_peek(r) != KINF_JSON_OBJECT) {
		return kinf_json_skip(r);
	}
	if ((rc = kinf_json_object_begin(r)) < 0) {
		return rc;
	}
	while ((rc = kinf_json_member(r, &k)) > 0) {
		if (kinf_json_span_eq(&k, name) &&
				kinf_json_peek(r) == KINF_JSON_STRING) {
			rc = read_string_field(r, s, f);
		} else {
			rc = kinf_json_skip(r);
		}
		if (rc < 0) {
			return rc;
		}
	}
	return rc;
}

static int read_top(struct kinf_json_reader *r, struct scratch *s, bool prefix) {
	struct kinf_json_span k;
	int rc;

	if ((rc = kinf_json_object_begin(r)) < 0) {
		return rc;
	}
	while ((rc = kinf_json_member(r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "metadata")) {
			rc = read_metadata(r, s);
		} else if (kinf_json_span_eq(&k, "kind")) {
			rc = read_string_field(r, s, F_KIND);
		} else if (kinf_json_span_eq(&k, "apiVersion")) {
			rc = read_string_field(r, s, F_API_VERSION);
		} else if (s->metadata_only) {
			rc = kinf_json_skip(r);
		} else if (kinf_json_span_eq(&k, "spec")) {
			rc = read_nested_string(r, s, "nodeName", F_NODE);
		} else if (kinf_json_span_eq(&k, "status")) {
			rc = read_nested_string(r, s, "phase", F_PHASE);
		} else {
			rc = kinf_json_skip(r);
		}
		if (rc < 0) {
			return rc;
		}
	}
	if (rc < 0) {
		return rc;
	}
	return prefix ? 0 : kinf_json_end(r);
}

static int cmp_label(const void *a, const void *b) {
	return strcmp(((const struct kinf_label *)a)->key,
			((const struct kinf_label *)b)->key);
}

static const char empty[] = "";

const char *kinf_object_key_quoted(struct kinf_buf *buf, const char *ns, size_t ns_len,
		const char *name, size_t name_len) {
	struct kinf_buf key = {0};
	bool ok = (!ns_len || (kinf_buf_append(&key, ns, ns_len) == 0 &&
			kinf_buf_append_char(&key, '/') == 0)) &&
		kinf_buf_append(&key, name ? name : "", name_len) == 0 &&
		kinf_json_quote(buf, key.data ? key.data : "", key.len) == 0;
	kinf_buf_release(&key);
	return ok ? buf->data : "\"\"";
}

json_t *kinf_object_tree(const struct kinf_object *obj, struct kinf_error *reterr) {
	size_t len;
	const char *json = kinf_object_json(obj, &len);
	/* A NUL in a string (\u0000 outside metadata) is data too. */
	json_t *root = kinf_jsonnum_load(json, len, JSON_ALLOW_NUL, reterr);
	if (!root && reterr) {
		struct kinf_buf quoted = {0};
		const char *ns = kinf_object_namespace(obj), *name = kinf_object_name(obj);
		kinf_error_prefix(reterr, "object %s", kinf_object_key_quoted(&quoted, ns,
				strlen(ns), name, strlen(name)));
		kinf_buf_release(&quoted);
	}
	return root;
}

const char *kinf_object_name_problem(const char *s, size_t len) {
	if (memchr(s, '\0', len)) {
		return "may not contain \\u0000";
	}
	if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.')) {
		return len == 1 ? "may not be '.'" : "may not be '..'";
	}
	if (memchr(s, '/', len)) {
		return "may not contain '/'";
	}
	if (memchr(s, '%', len)) {
		return "may not contain '%'";
	}
	return NULL;
}

/*
 * What no API server sends (a name its validation refuses, a NUL in a
 * string of metadata) is a data error naming the object; a C string would
 * otherwise cut the value at the NUL and two objects could share a key.
 */
static int check_record(const struct scratch *s, struct kinf_error *reterr) {
	static const char *const names[F_COUNT] = {
		[F_NAMESPACE] = "metadata.namespace", [F_NAME] = "metadata.name",
		[F_UID] = "metadata.uid", [F_RV] = "metadata.resourceVersion",
		[F_KIND] = "kind", [F_API_VERSION] = "apiVersion",
		[F_CREATED] = "metadata.creationTimestamp",
		[F_DELETED] = "metadata.deletionTimestamp",
	};
	const char *field = NULL, *problem = NULL;

	for (int f = 0; f < F_COUNT && !problem; f++) {
		if (!s->field[f] || !names[f]) {
			continue;	/* spec.nodeName and status.phase are not metadata */
		}
		const char *v = s->arena.data + s->field[f] - 1;
		if (f == F_NAME || (f == F_NAMESPACE && s->field_len[f])) {
			problem = kinf_object_name_problem(v, s->field_len[f]);
		} else if (memchr(v, '\0', s->field_len[f])) {
			problem = "may not contain \\u0000";
		}
		field = names[f];
	}
	if (!problem && s->nul_in) {
		field = s->nul_in;
		problem = "may not contain \\u0000";
	}
	if (!problem) {
		return 0;
	}
	struct kinf_buf quoted = {0};
	bool has_ns = s->field[F_NAMESPACE] && s->field_len[F_NAMESPACE];
	kinf_error_fill(reterr, KINF_EJSON, "object %s: %s %s",
			kinf_object_key_quoted(&quoted,
				has_ns ? s->arena.data + s->field[F_NAMESPACE] - 1 : NULL,
				has_ns ? s->field_len[F_NAMESPACE] : 0,
				s->arena.data + s->field[F_NAME] - 1, s->field_len[F_NAME]),
			field, problem);
	kinf_buf_release(&quoted);
	return -KINF_EJSON;
}

/* The whole text (prefix false) or the object it starts with. */
static int parse(const char *json, size_t len, bool prefix,
		const struct kinf_object_limits *limits, struct kinf_object **ret,
		size_t *ret_used, struct kinf_error *reterr) {
	size_t max_bytes = limits && limits->max_bytes ? limits->max_bytes :
		KINF_OBJECT_DEFAULT_MAX_BYTES;
	unsigned max_depth = limits && limits->max_depth ? limits->max_depth :
		KINF_OBJECT_DEFAULT_MAX_DEPTH;
	struct scratch s = {
		.metadata_only = limits && limits->metadata_only,
		.drop_managed_fields = limits && limits->drop_managed_fields,
	};
	struct kinf_buf cut = {0};
	struct kinf_json_reader r;
	struct kinf_buf compact = {0};
	struct kinf_object *obj = NULL;
	int rc;

	if (len > max_bytes && !prefix) {
		return kinf_error_set(reterr, KINF_ETOOBIG,
				"object of %zu bytes exceeds the limit of %zu bytes (--max-object-size)",
				len, max_bytes);
	}
	kinf_json_reader_init(&r, json, len, max_depth);
	if (kinf_json_peek(&r) != KINF_JSON_OBJECT) {
		/* Valid JSON but no object; invalid JSON is read_top's to name. */
		if (kinf_json_skip(&r) == 0) {
			rc = kinf_error_set(reterr, KINF_EJSON, "object expected");
			goto out;
		}
	}
	rc = read_top(&r, &s, prefix);
	if (rc == -KINF_ENOMEM) {
		goto nomem;
	}
	if (rc < 0) {
		kinf_json_reader_error(&r, reterr);
		rc = -KINF_EJSON;
		goto out;
	}
	if (prefix) {
		len = (size_t)(r.p - json);
		if (len > max_bytes) {
			rc = kinf_error_set(reterr, KINF_ETOOBIG,
					"object of %zu bytes exceeds the limit of %zu bytes "
					"(--max-object-size)", len, max_bytes);
			goto out;
		}
	}
	if (!s.has_metadata || !s.field[F_NAME]) {
		rc = kinf_error_set(reterr, KINF_EJSON, "object has no metadata.name");
		goto out;
	}
	if ((rc = check_record(&s, reterr)) < 0) {
		goto out;
	}

	/* The key: "namespace/name" or "name". */
	size_t key_off = s.arena.len;
	if (s.field[F_NAMESPACE] && s.arena.data[s.field[F_NAMESPACE] - 1]) {
		/* The namespace lives in the arena: grow it before copying from it. */
		size_t ns_off = s.field[F_NAMESPACE] - 1;
		size_t ns_len = strlen(s.arena.data + ns_off);
		if (kinf_buf_reserve(&s.arena, ns_len + 1) < 0) {
			goto nomem;
		}
		memcpy(s.arena.data + s.arena.len, s.arena.data + ns_off, ns_len);
		s.arena.len += ns_len;
		if (kinf_buf_append_char(&s.arena, '/') < 0) {
			goto nomem;
		}
	}
	/* Re-read name after a possible realloc. */
	size_t name_off = s.field[F_NAME] - 1;
	size_t name_len = strlen(s.arena.data + name_off);
	if (kinf_buf_reserve(&s.arena, name_len + 1) < 0) {
		goto nomem;
	}
	memcpy(s.arena.data + s.arena.len, s.arena.data + name_off, name_len);
	s.arena.len += name_len;
	if (kinf_buf_append_char(&s.arena, '\0') < 0) {
		goto nomem;
	}
	s.field[F_KEY] = key_off + 1;

	/* API servers send compact JSON: then the bytes are copied as they are. */
	const char *bytes = json;
	size_t n_bytes = len;
	size_t gap = s.cut_end - s.cut_start;	/* managedFields left out */
	if (gap && r.spaced) {
		if (kinf_buf_append(&cut, json, s.cut_start) < 0 ||
				kinf_buf_append(&cut, json + s.cut_end, len - s.cut_end) < 0) {
			goto nomem;
		}
		bytes = cut.data;
		n_bytes = cut.len;
		gap = 0;
	} else if (gap) {
		n_bytes -= gap;
	}
	if (r.spaced) {
		if (kinf_json_compact(bytes, n_bytes, &compact) < 0) {
			goto nomem;
		}
		bytes = compact.data;
		n_bytes = compact.len;
	}

	size_t n_labels = s.labels.n;
	size_t n_owners = s.owners.n;
	size_t total = sizeof(*obj) + n_labels * sizeof(struct kinf_label) +
		n_owners * sizeof(struct kinf_owner_ref) + s.arena.len + n_bytes + 1;
	obj = malloc(total);
	if (!obj) {
		goto nomem;
	}
	char *p = (char *)(obj + 1);
	obj->labels = (struct kinf_label *)p;
	p += n_labels * sizeof(struct kinf_label);
	obj->owners = (struct kinf_owner_ref *)p;
	p += n_owners * sizeof(struct kinf_owner_ref);
	char *arena = p;
	memcpy(arena, s.arena.data, s.arena.len);
	p += s.arena.len;
	if (gap) {
		memcpy(p, bytes, s.cut_start);
		memcpy(p + s.cut_start, bytes + s.cut_end, n_bytes - s.cut_start);
	} else {
		memcpy(p, bytes, n_bytes);
	}
	p[n_bytes] = '\0';

	atomic_init(&obj->refs, 1);
	obj->json = p;
	obj->json_len = n_bytes;
	const char **fields[F_COUNT] = {
		[F_KEY] = &obj->key, [F_NAMESPACE] = &obj->namespace,
		[F_NAME] = &obj->name, [F_UID] = &obj->uid,
		[F_RV] = &obj->resource_version, [F_KIND] = &obj->kind,
		[F_API_VERSION] = &obj->api_version,
		[F_CREATED] = &obj->creation_timestamp,
		[F_DELETED] = &obj->deletion_timestamp,
		[F_NODE] = &obj->node_name, [F_PHASE] = &obj->phase,
	};
	for (int f = 0; f < F_COUNT; f++) {
		*fields[f] = s.field[f] ? arena + s.field[f] - 1 : empty;
	}
	for (size_t i = 0; i < n_labels; i++) {
		obj->labels[i].key = arena + s.labels.v[i].key;
		obj->labels[i].value = arena + s.labels.v[i].value;
	}
	obj->n_labels = n_labels;
	if (n_labels > 1) {
		qsort(obj->labels, n_labels, sizeof(*obj->labels), cmp_label);
	}
	for (size_t i = 0; i < n_owners; i++) {
		obj->owners[i].kind = arena + s.owners.v[i].kind;
		obj->owners[i].name = arena + s.owners.v[i].name;
		obj->owners[i].controller = s.owners.v[i].controller;
	}
	obj->n_owners = n_owners;
	*ret = obj;
	if (ret_used) {
		*ret_used = len;
	}
	rc = 0;
	goto out;
nomem:
	rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
out:
	kinf_buf_release(&s.arena);
	free(s.labels.v);
	free(s.owners.v);
	kinf_buf_release(&compact);
	kinf_buf_release(&cut);
	return rc;
}

int kinf_object_parse(const char *json, size_t len,
		const struct kinf_object_limits *limits,
		struct kinf_object **ret, struct kinf_error *reterr) {
	return parse(json, len, false, limits, ret, NULL, reterr);
}

int kinf_object_parse_prefix(const char *json, size_t len,
		const struct kinf_object_limits *limits, struct kinf_object **ret,
		size_t *ret_used, struct kinf_error *reterr) {
	return parse(json, len, true, limits, ret, ret_used, reterr);
}

int kinf_object_without_managed_fields(struct kinf_object *obj,
		struct kinf_object **ret) {
	const struct kinf_object_limits limits = {
		.max_bytes = SIZE_MAX, .max_depth = UINT32_MAX, .drop_managed_fields = true,
	};
	struct kinf_object *out = NULL;
	int rc;

	if (!strstr(obj->json, "\"managedFields\":")) {
		*ret = kinf_object_ref(obj);
		return 0;
	}
	rc = parse(obj->json, obj->json_len, false, &limits, &out, NULL, NULL);
	if (rc < 0) {
		return rc;
	}
	*ret = out;
	return 0;
}

struct kinf_object *kinf_object_ref(struct kinf_object *obj) {
	if (obj) {
		atomic_fetch_add_explicit(&obj->refs, 1, memory_order_relaxed);
	}
	return obj;
}

struct kinf_object *kinf_object_unref(struct kinf_object *obj) {
	if (obj && atomic_fetch_sub_explicit(&obj->refs, 1, memory_order_acq_rel) == 1) {
		free(obj);
	}
	return NULL;
}

const char *kinf_object_json(const struct kinf_object *obj, size_t *ret_len) {
	if (ret_len) {
		*ret_len = obj->json_len;
	}
	return obj->json;
}

const char *kinf_object_key(const struct kinf_object *obj) { return obj->key; }
const char *kinf_object_namespace(const struct kinf_object *obj) { return obj->namespace; }
const char *kinf_object_name(const struct kinf_object *obj) { return obj->name; }
const char *kinf_object_uid(const struct kinf_object *obj) { return obj->uid; }
const char *kinf_object_resource_version(const struct kinf_object *obj) { return obj->resource_version; }
const char *kinf_object_kind(const struct kinf_object *obj) { return obj->kind; }
const char *kinf_object_api_version(const struct kinf_object *obj) { return obj->api_version; }
const char *kinf_object_creation_timestamp(const struct kinf_object *obj) { return obj->creation_timestamp; }
const char *kinf_object_deletion_timestamp(const struct kinf_object *obj) { return obj->deletion_timestamp; }
const char *kinf_object_node_name(const struct kinf_object *obj) { return obj->node_name; }
const char *kinf_object_phase(const struct kinf_object *obj) { return obj->phase; }

const struct kinf_label *kinf_object_labels(const struct kinf_object *obj,
		size_t *ret_n) {
	*ret_n = obj->n_labels;
	return obj->labels;
}

const char *kinf_object_label(const struct kinf_object *obj, const char *key) {
	size_t lo = 0, hi = obj->n_labels;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(obj->labels[mid].key, key);
		if (c == 0) {
			return obj->labels[mid].value;
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return NULL;
}

const struct kinf_owner_ref *kinf_object_owners(const struct kinf_object *obj,
		size_t *ret_n) {
	*ret_n = obj->n_owners;
	return obj->owners;
}

/* A pointer into obj's block [old, old + n) moved to the same place in new. */
static const char *rebase(const char *p, const char *old, size_t n, char *new) {
	return p >= old && p < old + n ? new + (p - old) : p;
}

/* The members inserted after the opening '{' of obj's compact bytes. */
static int type_members(const struct kinf_object *obj, bool add_av, bool add_kind,
		const char *api_version, const char *kind, struct kinf_buf *ins) {
	if (add_av && (kinf_buf_append_str(ins, "\"apiVersion\":") < 0 ||
			kinf_json_quote(ins, api_version, strlen(api_version)) < 0 ||
			kinf_buf_append_char(ins, ',') < 0)) {
		return -KINF_ENOMEM;
	}
	if (add_kind && (kinf_buf_append_str(ins, "\"kind\":") < 0 ||
			kinf_json_quote(ins, kind, strlen(kind)) < 0 ||
			kinf_buf_append_char(ins, ',') < 0)) {
		return -KINF_ENOMEM;
	}
	if (ins->len && obj->json_len == 2) {
		ins->len--;	/* "{}": no comma before the '}' */
	}
	return 0;
}

int kinf_object_type_prefix(const struct kinf_object *obj, const char *api_version,
		const char *kind, struct kinf_buf *prefix, size_t *ret_skip) {
	bool add_av = !obj->api_version[0] && api_version && api_version[0];
	bool add_kind = !obj->kind[0] && kind && kind[0];

	kinf_buf_reset(prefix);
	*ret_skip = 0;
	if (!add_av && !add_kind) {
		return 0;
	}
	*ret_skip = 1;
	if (kinf_buf_append_char(prefix, '{') < 0) {
		return -KINF_ENOMEM;
	}
	return type_members(obj, add_av, add_kind, api_version, kind, prefix);
}

struct kinf_object *kinf_object_with_type(struct kinf_object *obj,
		const char *api_version, const char *kind) {
	bool add_av = !obj->api_version[0] && api_version && api_version[0];
	bool add_kind = !obj->kind[0] && kind && kind[0];
	struct kinf_buf ins = {0};
	struct kinf_object *typed = NULL;

	if (!add_av && !add_kind) {
		return kinf_object_ref(obj);
	}
	if (type_members(obj, add_av, add_kind, api_version, kind, &ins) < 0) {
		goto out;
	}
	/*
	 * No second parse: the record is copied and its pointers moved (the
	 * label and owner arrays and the strings all live in the block between
	 * the struct and the JSON), the two new strings go after it.
	 */
	const char *old = (const char *)(obj + 1);
	size_t head = (size_t)(obj->json - old);
	size_t av_len = add_av ? strlen(api_version) + 1 : 0;
	size_t kind_len = add_kind ? strlen(kind) + 1 : 0;
	size_t json_len = obj->json_len + ins.len;
	typed = malloc(sizeof(*typed) + head + av_len + kind_len + json_len + 1);
	if (!typed) {
		goto out;
	}
	/*
	 * Every field but the count, which other threads holding obj may be
	 * changing (a plain struct copy reads it non-atomically: a data race).
	 */
	_Static_assert(offsetof(struct kinf_object, refs) == 0, "refs comes first");
	memcpy(&typed->json_len, &obj->json_len,
			sizeof(*obj) - offsetof(struct kinf_object, json_len));
	atomic_init(&typed->refs, 1);
	char *block = (char *)(typed + 1);
	memcpy(block, old, head);
	typed->labels = (struct kinf_label *)(void *)(block + ((const char *)obj->labels - old));
	typed->owners = (struct kinf_owner_ref *)(void *)(block +
			((const char *)obj->owners - old));
	for (size_t i = 0; i < typed->n_labels; i++) {
		typed->labels[i].key = rebase(typed->labels[i].key, old, head, block);
		typed->labels[i].value = rebase(typed->labels[i].value, old, head, block);
	}
	for (size_t i = 0; i < typed->n_owners; i++) {
		typed->owners[i].kind = rebase(typed->owners[i].kind, old, head, block);
		typed->owners[i].name = rebase(typed->owners[i].name, old, head, block);
	}
	const char **fields[] = {
		&typed->key, &typed->namespace, &typed->name, &typed->uid,
		&typed->resource_version, &typed->kind, &typed->api_version,
		&typed->creation_timestamp, &typed->deletion_timestamp,
		&typed->node_name, &typed->phase,
	};
	for (size_t f = 0; f < sizeof(fields) / sizeof(*fields); f++) {
		*fields[f] = rebase(*fields[f], old, head, block);
	}
	char *q = block + head;
	if (add_av) {
		memcpy(q, api_version, av_len);
		typed->api_version = q;
		q += av_len;
	}
	if (add_kind) {
		memcpy(q, kind, kind_len);
		typed->kind = q;
		q += kind_len;
	}
	q[0] = '{';
	memcpy(q + 1, ins.data, ins.len);
	memcpy(q + 1 + ins.len, obj->json + 1, obj->json_len - 1);
	q[json_len] = '\0';
	typed->json = q;
	typed->json_len = json_len;
out:
	kinf_buf_release(&ins);
	return typed;
}

/* Field paths ---------------------------------------------------------- */

enum seg_kind { SEG_NAME, SEG_ALL, SEG_INDEX };

struct seg {
	enum seg_kind kind;
	const char *name;	/* not NUL-terminated */
	size_t len;
	size_t index;
};

#define MAX_SEGS 32

static int parse_path(const char *path, struct seg *segs, size_t *ret_n,
		struct kinf_error *reterr) {
	const char *p = path;
	size_t n = 0;

	if (*p == '.') {
		p++;	/* ".spec.x" as kubectl's field paths allow */
	}
	if (!*p) {
		return kinf_error_set(reterr, KINF_EINVAL, "empty field path");
	}
	while (*p) {
		if (n == MAX_SEGS) {
			return kinf_error_set(reterr, KINF_EINVAL,
					"field path \"%s\" has too many parts", path);
		}
		if (*p == '[') {
			const char *close;
			if (p[1] == '*' && p[2] == ']') {
				segs[n++] = (struct seg){ .kind = SEG_ALL };
				p += 3;
			} else if ((p[1] == '\'' || p[1] == '"') &&
					(close = strchr(p + 2, p[1])) && close[1] == ']' &&
					close > p + 2) {
				segs[n++] = (struct seg){ .kind = SEG_NAME, .name = p + 2,
					.len = (size_t)(close - p - 2) };
				p = close + 2;
			} else if (p[1] >= '0' && p[1] <= '9') {
				char *end;
				unsigned long v = strtoul(p + 1, &end, 10);
				if (*end != ']') {
					goto bad;
				}
				segs[n++] = (struct seg){ .kind = SEG_INDEX, .index = v };
				p = end + 1;
			} else {
				goto bad;
			}
		} else {
			const char *q = p;
			while (*q && *q != '.' && *q != '[') {
				if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
						(*q >= '0' && *q <= '9') || *q == '_' || *q == '-')) {
					goto bad;
				}
				q++;
			}
			if (q == p) {
				goto bad;
			}
			segs[n++] = (struct seg){ .kind = SEG_NAME, .name = p,
				.len = (size_t)(q - p) };
			p = q;
		}
		if (*p == '.') {
			p++;
			if (!*p || *p == '.' || *p == '[') {
				goto bad;
			}
		} else if (*p && *p != '[') {
			goto bad;
		}
	}
	*ret_n = n;
	return 0;
bad:
	return kinf_error_set(reterr, KINF_EINVAL,
			"invalid field path \"%s\" at \"%s\"", path, p);
}

int kinf_object_field_path_check(const char *path, struct kinf_error *reterr) {
	struct seg segs[MAX_SEGS];
	size_t n;
	return parse_path(path, segs, &n, reterr);
}

static bool span_eq_n(const struct kinf_json_span *k, const char *s, size_t n) {
	if (!k->escaped) {
		return k->len == n && memcmp(k->s, s, n) == 0;
	}
	struct kinf_buf b = {0};
	bool eq = kinf_json_span_decode(k, &b) == 0 && b.len == n &&
		memcmp(b.data, s, n) == 0;
	kinf_buf_release(&b);
	return eq;
}

static int eval(struct kinf_json_reader *r, const struct seg *segs, size_t n,
		struct kinf_strv *out) {
	struct kinf_buf b = {0};
	struct kinf_json_span k;
	int rc;

	if (n == 0) {
		enum kinf_json_type t = kinf_json_peek(r);
		bool is_null;
		if (t == KINF_JSON_OBJECT || t == KINF_JSON_ARRAY) {
			return kinf_json_skip(r);
		}
		rc = kinf_json_scalar(r, &b, &is_null);
		if (rc == 0 && !is_null) {
			rc = kinf_strv_push(out, b.data ? b.data : "", b.len);
		}
		kinf_buf_release(&b);
		return rc;
	}
	switch (segs[0].kind) {
	case SEG_NAME:
		if (kinf_json_peek(r) != KINF_JSON_OBJECT) {
			return kinf_json_skip(r);
		}
		if ((rc = kinf_json_object_begin(r)) < 0) {
			return rc;
		}
		while ((rc = kinf_json_member(r, &k)) > 0) {
			if (span_eq_n(&k, segs[0].name, segs[0].len)) {
				rc = eval(r, segs + 1, n - 1, out);
			} else {
				rc = kinf_json_skip(r);
			}
			if (rc < 0) {
				return rc;
			}
		}
		return rc;
	case SEG_ALL:
	case SEG_INDEX:
		if (kinf_json_peek(r) != KINF_JSON_ARRAY) {
			return kinf_json_skip(r);
		}
		if ((rc = kinf_json_array_begin(r)) < 0) {
			return rc;
		}
		for (size_t i = 0; (rc = kinf_json_element(r)) > 0; i++) {
			if (segs[0].kind == SEG_ALL || segs[0].index == i) {
				rc = eval(r, segs + 1, n - 1, out);
			} else {
				rc = kinf_json_skip(r);
			}
			if (rc < 0) {
				return rc;
			}
		}
		return rc;
	}
	return -KINF_EINVAL;
}

int kinf_object_field_values(const struct kinf_object *obj, const char *path,
		struct kinf_strv *ret_values, struct kinf_error *reterr) {
	struct seg segs[MAX_SEGS];
	struct kinf_json_reader r;
	size_t n;
	int rc = parse_path(path, segs, &n, reterr);
	if (rc < 0) {
		return rc;
	}
	kinf_json_reader_init(&r, obj->json, obj->json_len, 0);
	rc = eval(&r, segs, n, ret_values);
	if (rc < 0 && rc != -KINF_ENOMEM) {
		kinf_json_reader_error(&r, reterr);
	}
	return rc;
}

int kinf_object_list_reserve(struct kinf_object_list *list, size_t extra) {
	size_t cap = list->cap > list->n ? list->cap : list->n;
	if (extra <= cap - list->n) {
		return 0;
	}
	if (extra > SIZE_MAX / sizeof(*list->v) / 2 - list->n) {
		return -KINF_ENOMEM;
	}
	size_t want = cap ? cap * 2 : 16;
	if (want < list->n + extra) {
		want = list->n + extra;
	}
	struct kinf_object **v = realloc(list->v, want * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	list->v = v;
	list->cap = want;
	return 0;
}

int kinf_object_list_push_take(struct kinf_object_list *list, struct kinf_object *obj) {
	if (kinf_object_list_reserve(list, 1) < 0) {
		kinf_object_unref(obj);
		return -KINF_ENOMEM;
	}
	list->v[list->n++] = obj;
	return 0;
}

void kinf_object_list_reset(struct kinf_object_list *list) {
	for (size_t i = 0; i < list->n; i++) {
		kinf_object_unref(list->v[i]);
	}
	list->n = 0;
}

void kinf_object_list_release(struct kinf_object_list *list) {
	if (!list) {
		return;
	}
	kinf_object_list_reset(list);
	free(list->v);
	list->v = NULL;
	list->cap = 0;
}
