#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "indexfuncs.h"
#include "json.h"
#include "kindcols.h"
#include "servefilter.h"
#include "serverespond.h"

/*
 * servefilter.c: what a read selects and how its objects are written.
 * Selectors: field names checked as the apiserver checks them per kind;
 * an equality on an indexed field starts from the index. Encoders: an
 * object typed (apiVersion and kind) or as a List's item, the head of a
 * List or a Table, a Table's columns and rows with kinf's columns for the
 * kind.
 */

/* ---- selectors ---- */

/* The field labels the apiserver offers beyond metadata.name and metadata.namespace. */
static const struct {
	const char *group, *kind;
	const char *const fields[12];
	bool no_namespace;		/* metadata.namespace refused (cluster-scoped kinds) */
} field_labels[] = {
	{ "", "Pod", { "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
		"spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
		"status.podIPs", "status.nominatedNodeName", "spec.host", NULL }, false },
	{ "", "Node", { "spec.unschedulable", NULL }, true },
	{ "", "Namespace", { "status.phase", NULL }, true },
	{ "", "Secret", { "type", NULL }, false },
	{ "", "Event", { "involvedObject.kind", "involvedObject.namespace",
		"involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
		"involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
		"reportingComponent", "source", "type", NULL }, false },
	{ "", "ReplicationController", { "status.replicas", NULL }, false },
	{ "batch", "Job", { "status.successful", NULL }, false },
	{ "certificates.k8s.io", "CertificateSigningRequest", { "spec.signerName", NULL }, true },
};

/* The index an equality on field is answered from, or NULL. */
static const char *index_of(const struct serve_coll *c, const char *field) {
	if (strcmp(field, "metadata.namespace") == 0) {
		return KINF_INDEX_NAMESPACE;
	}
	if (!c->group[0] && strcmp(c->kind, "Pod") == 0) {
		if (strcmp(field, "spec.nodeName") == 0) {
			return "node";
		}
		if (strcmp(field, "status.phase") == 0) {
			return "phase";
		}
	}
	return NULL;
}

/* Check field against the kind's labels; a 400 Status in ret_status when refused. */
static bool field_allowed(const struct serve_coll *c, const char *field,
		struct kinf_apistatus_body *ret_status) {
	struct kinf_buf msg = {0};
	for (size_t i = 0; i < sizeof(field_labels) / sizeof(field_labels[0]); i++) {
		if (strcmp(field_labels[i].group, c->group) || strcmp(field_labels[i].kind, c->kind)) {
			continue;
		}
		if (strcmp(field, "metadata.name") == 0 ||
				(strcmp(field, "metadata.namespace") == 0 && !field_labels[i].no_namespace)) {
			return true;
		}
		for (size_t k = 0; field_labels[i].fields[k]; k++) {
			if (strcmp(field, field_labels[i].fields[k]) == 0) {
				return true;
			}
		}
		kinf_buf_putf(&msg, "field label not supported: %s", field);
		serve_bad_request(ret_status, &msg);
		kinf_buf_release(&msg);
		return false;
	}
	if (strcmp(field, "metadata.name") == 0 || strcmp(field, "metadata.namespace") == 0) {
		return true;
	}
	kinf_buf_putf(&msg, "\"%s\" is not a known field selector: only \"metadata.name\", "
			"\"metadata.namespace\"", field);
	serve_bad_request(ret_status, &msg);
	kinf_buf_release(&msg);
	return false;
}

void serve_filter_release(struct serve_filter *f) {
	kinf_selector_free(f->labels);
	kinf_selector_free(f->fields);
	free(f->namespace);
	for (size_t i = 0; i < f->n_idx; i++) {
		free(f->idx[i].name);
		free(f->idx[i].value);
	}
	memset(f, 0, sizeof(*f));
}

int serve_filter_match(const struct serve_filter *f, const struct kinf_object *obj) {
	if (f->namespace && strcmp(kinf_object_namespace(obj), f->namespace) != 0) {
		return 0;
	}
	int m = kinf_selector_match(f->labels, obj);
	return m <= 0 ? m : kinf_selector_match(f->fields, obj);
}

/* Remember that index name has value; 0 or -KINF_ENOMEM. */
static int add_idx(struct serve_filter *f, const char *name, const char *value, size_t vlen) {
	if (f->n_idx == sizeof(f->idx) / sizeof(f->idx[0])) {
		return 0;
	}
	f->idx[f->n_idx].name = strdup(name);
	f->idx[f->n_idx].value = strndup(value, vlen);
	f->n_idx++;
	return f->idx[f->n_idx - 1].name && f->idx[f->n_idx - 1].value ? 0 : -KINF_ENOMEM;
}

#define MAX_LABEL_INDEXES 8

/*
 * The first "key=value" or "key==value" term of a label selector, for an
 * index of that label (made on demand, up to MAX_LABEL_INDEXES per
 * collection): a selector on a label then costs its matches, not a scan.
 */
static int label_index(struct serve_coll *c, const char *text, struct serve_filter *f) {
	static const char keych[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"0123456789._-/";
	for (const char *p = text; *p;) {
		size_t klen = strspn(p, keych);
		const char *op = p + klen;
		size_t oplen = strncmp(op, "==", 2) == 0 ? 2 : (*op == '=' ? 1 : 0);
		const char *v = op + oplen;
		size_t vlen = strspn(v, keych);
		if (klen && oplen && (v[vlen] == ',' || !v[vlen]) && !memchr(v, '/', vlen)) {
			struct kinf_buf name = {0};
			struct kinf_index_spec spec = {0};
			int rc = kinf_buf_printf(&name, "label:%.*s", (int)klen, p);
			bool have = rc == 0 && kinf_indexer_has_index(c->store, name.data);
			if (rc == 0 && !have && c->n_label_indexes < MAX_LABEL_INDEXES &&
					kinf_index_spec_resolve(name.data, NULL, NULL, &spec, NULL) == 0 &&
					kinf_index_spec_install(&spec, c->store, NULL) == 0) {
				c->n_label_indexes++;
				have = true;
			}
			kinf_index_spec_release(&spec);
			if (have) {
				rc = add_idx(f, name.data, v, vlen);
			}
			kinf_buf_release(&name);
			return rc;
		}
		/* The next term: past a comma outside parentheses. */
		int depth = 0;
		while (*p && (depth || *p != ',')) {
			depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
			p++;
		}
		p += *p == ',';
	}
	return 0;
}

/* One term of a field selector, split as fields.ParseSelector splits it. */
struct field_term {
	const char *text;		/* the term as written (a pointer into the selector) */
	size_t len;
	char *field;			/* lhs */
	bool eq;			/* "=" or "==", else "!=" */
	char *value;			/* rhs, unescaped */
};

static int cmp_terms(const void *a, const void *b) {
	const struct field_term *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int d = memcmp(x->text, y->text, n);
	return d ? d : (x->len > y->len) - (x->len < y->len);
}

/*
 * fields.UnescapeValue: "\\", "\," and "\=" stand for themselves; any
 * other escape, a lone backslash at the end, or an unescaped ',' or '='
 * is an error (the apiserver's message into msg). NULL after an error
 * (msg set) or for out of memory (msg empty).
 */
static char *unescape_value(const char *s, size_t len, struct kinf_buf *msg) {
	struct kinf_buf v = {0};
	kinf_buf_puts(&v, "");
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\\') {
			if (i + 1 == len) {
				kinf_buf_puts(msg, "invalid field selector: invalid escape sequence: \\");
				goto fail;
			}
			unsigned char nx = (unsigned char)s[++i];
			if (nx != '\\' && nx != ',' && nx != '=') {
				/* The escape and the whole rune after it. */
				size_t rl = nx < 0x80 ? 1 : nx >= 0xf0 ? 4 : nx >= 0xe0 ? 3 : 2;
				rl = rl > len - i ? len - i : rl;
				kinf_buf_putf(msg, "invalid field selector: invalid escape sequence: \\%.*s",
						(int)rl, s + i);
				goto fail;
			}
			kinf_buf_putc(&v, (char)nx);
		} else if (ch == ',' || ch == '=') {
			/* Go prints the rune with %v: its number. */
			kinf_buf_putf(msg, "invalid field selector: unescaped character in value: %d", ch);
			goto fail;
		} else {
			kinf_buf_putc(&v, (char)ch);
		}
	}
	if (kinf_buf_error(&v)) {
		goto fail;
	}
	return kinf_buf_take(&v);
fail:
	kinf_buf_release(&v);
	return NULL;
}

/* fields.EscapeValue's inverse for kinf's parser: '\', ',', '=' and '!' get a backslash. */
static void escape_value(struct kinf_buf *out, const char *v) {
	for (const char *p = v; *p; p++) {
		if (*p == '\\' || *p == ',' || *p == '=' || *p == '!') {
			kinf_buf_putc(out, '\\');
		}
		kinf_buf_putc(out, *p);
	}
}

static void free_terms(struct field_term *t, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(t[i].field);
		free(t[i].value);
	}
	free(t);
}

/*
 * A field selector as the apiserver's list handler reads it: split into
 * terms on unescaped commas (fields.splitTerms), empty terms skipped, the
 * rest sorted and each split at its first operator ("!=", "==" or "=",
 * fields.splitTerm) with its value unescaped; then each field checked
 * against the kind's (ConvertFieldLabel, spec.host read as
 * spec.nodeName). Errors are 400s with the apiserver's messages. The
 * terms go into norm as kinf's parser reads them, and the first equality
 * on an indexed field into f.
 */
static int parse_fields(struct serve_coll *c, const char *text, struct serve_filter *f,
		struct kinf_buf *norm, struct kinf_apistatus_body *ret_status) {
	struct kinf_buf msg = {0};
	struct field_term *terms = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	for (const char *p = text, *start = text;; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p != ',' && *p) {
			continue;
		}
		if (p > start) {
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				struct field_term *v = realloc(terms, cap * sizeof(*v));
				if (!v) {
					free_terms(terms, n);
					return -KINF_ENOMEM;
				}
				terms = v;
			}
			terms[n++] = (struct field_term){ .text = start, .len = (size_t)(p - start) };
		}
		if (!*p) {
			break;
		}
		start = p + 1;
	}
	if (n > 1) {
		qsort(terms, n, sizeof(*terms), cmp_terms);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct field_term *t = &terms[i];
		size_t at = 0, op_len = 0;
		for (; at < t->len && !op_len; at++) {
			if (t->text[at] == '!' && at + 1 < t->len && t->text[at + 1] == '=') {
				op_len = 2;
			} else if (t->text[at] == '=') {
				op_len = at + 1 < t->len && t->text[at + 1] == '=' ? 2 : 1;
				t->eq = true;
			}
		}
		if (!op_len) {
			kinf_buf_putf(&msg, "invalid selector: '%s'; can't understand '%.*s'", text,
					(int)t->len, t->text);
			rc = -KINF_EINVAL;
			break;
		}
		at--;
		t->field = strndup(t->text, at);
		t->value = unescape_value(t->text + at + op_len, t->len - at - op_len, &msg);
		if (!t->field || !t->value) {
			rc = msg.len ? -KINF_EINVAL : -KINF_ENOMEM;
		}
	}
	/* Every term parsed; then each field is converted, in the same order. */
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct field_term *t = &terms[i];
		const char *field = t->field;
		if (!field[0] && !t->value[0]) {
			continue;	/* "=": the parse made it Everything, nothing to convert */
		}
		if (strcmp(field, "spec.host") == 0 && !c->group[0] && strcmp(c->kind, "Pod") == 0) {
			field = "spec.nodeName";
		}
		if (!field_allowed(c, field, ret_status)) {
			rc = -KINF_EINVAL;
			break;
		}
		const char *idx = t->eq ? index_of(c, field) : NULL;
		rc = idx ? add_idx(f, idx, t->value, strlen(t->value)) : 0;
		kinf_buf_putf(norm, "%s%s%s", norm->len ? "," : "", field, t->eq ? "=" : "!=");
		escape_value(norm, t->value);
		rc = rc < 0 ? rc : kinf_buf_error(norm);
	}
	if (rc == -KINF_EINVAL && msg.len) {
		serve_bad_request(ret_status, &msg);
	}
	kinf_buf_release(&msg);
	free_terms(terms, n);
	return rc;
}

int serve_filter_init(struct serve_coll *c, const char *namespace, const char *labels,
		const char *fields, struct serve_filter *ret, struct kinf_apistatus_body *ret_status) {
	struct kinf_error err = {0};
	struct kinf_buf norm = {0};
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	if (namespace && !(ret->namespace = strdup(namespace))) {
		return -KINF_ENOMEM;
	}
	if (labels && labels[0] && kinf_label_selector_parse(labels, &ret->labels, &err) < 0) {
		kinf_apistatus_bad_request(ret_status, err.message);
		rc = -KINF_EINVAL;
	}
	if (rc == 0 && fields && fields[0]) {
		rc = parse_fields(c, fields, ret, &norm, ret_status);
		if (rc == 0 && norm.len &&
				kinf_field_selector_parse(norm.data, &ret->fields, &err) < 0) {
			kinf_apistatus_bad_request(ret_status, err.message);
			rc = -KINF_EINVAL;
		}
	}
	if (rc == 0 && namespace) {
		rc = add_idx(ret, KINF_INDEX_NAMESPACE, namespace, strlen(namespace));
	}
	if (rc == 0 && ret->labels) {
		rc = label_index(c, labels, ret);
	}
	kinf_buf_release(&norm);
	if (rc < 0) {
		serve_filter_release(ret);
	}
	return rc;
}

int serve_filter_bucket(struct serve_coll *c, const struct serve_filter *f) {
	int best = -1;
	size_t best_n = SIZE_MAX;
	for (size_t i = 0; i < f->n_idx; i++) {
		size_t n;
		if (kinf_indexer_index_count(c->store, f->idx[i].name, f->idx[i].value, &n,
				NULL) == 0 && n < best_n) {
			best = (int)i;
			best_n = n;
		}
	}
	return best;
}

int serve_filter_candidates(struct serve_coll *c, const struct serve_filter *f,
		struct kinf_object_list *ret) {
	int best = serve_filter_bucket(c, f);
	if (best >= 0) {
		return kinf_indexer_by_index(c->store, f->idx[best].name, f->idx[best].value, ret,
				NULL);
	}
	return kinf_indexer_list(c->store, ret);
}

int serve_append_typed(const struct serve_coll *c, const struct kinf_object *obj,
		struct kinf_buf *out) {
	struct kinf_buf prefix = {0};
	size_t skip = 0, len;
	const char *json = kinf_object_json(obj, &len);
	if (!kinf_object_kind(obj)[0] && !kinf_object_api_version(obj)[0] && len >= 2) {
		/* A built-in type's list item: TypeMeta as Go writes it, kind first. */
		kinf_buf_puts(out, "{\"kind\":");
		kinf_apistatus_put_quoted(out, c->kind);
		kinf_buf_puts(out, ",\"apiVersion\":");
		kinf_apistatus_put_quoted(out, c->api_version);
		kinf_buf_put(out, len > 2 ? "," : "", len > 2);
		kinf_buf_put(out, json + 1, len - 1);
		return kinf_buf_error(out);
	}
	int rc = kinf_object_type_prefix(obj, c->api_version, c->kind, &prefix, &skip);
	if (rc == 0) {
		rc = kinf_buf_append(out, prefix.data ? prefix.data : "", prefix.len);
	}
	if (rc == 0) {
		rc = kinf_buf_append(out, json + skip, len - skip);
	}
	kinf_buf_release(&prefix);
	return rc;
}

int serve_table_columns(const struct serve_coll *c, struct kinf_buf *out) {
	return kinf_kindcols_columns_json(c->columns, out);
}

/* The raw bytes of obj's "metadata" object, or "{}" when it has none. */
static void metadata_span(const struct kinf_object *obj, const char **ret, size_t *ret_len) {
	struct kinf_json_reader rd;
	struct kinf_json_span key;
	size_t len;
	const char *json = kinf_object_json(obj, &len);
	*ret = "{}";
	*ret_len = 2;
	kinf_json_reader_init(&rd, json, len, 0);
	if (kinf_json_object_begin(&rd) < 0) {
		return;
	}
	while (kinf_json_member(&rd, &key) == 1) {
		if (kinf_json_span_eq(&key, "metadata")) {
			const char *span;
			size_t span_len;
			/* The cache's objects were read whole: this cannot fail, but says so. */
			if (kinf_json_skip_span(&rd, &span, &span_len) == 0) {
				*ret = span;
				*ret_len = span_len;
			}
			return;
		}
		if (kinf_json_skip(&rd) < 0) {
			return;
		}
	}
}

struct kinf_object *serve_with_rv(const struct kinf_object *obj, unsigned long long rv) {
	static const char key[] = "\"resourceVersion\":\"";
	const char *meta, *json, *end = NULL;
	size_t mlen, len, klen = sizeof(key) - 1;
	struct kinf_object *ret = NULL;

	json = kinf_object_json(obj, &len);
	metadata_span(obj, &meta, &mlen);
	/* In compact JSON, unescaped quotes around it can only be the key itself. */
	for (const char *p = meta; !end && p + klen <= meta + mlen; p++) {
		if (memcmp(p, key, klen) == 0) {
			end = p + klen;
		}
	}
	const char *close = end ? memchr(end, '"', (size_t)(json + len - end)) : NULL;
	if (!close) {
		return NULL;
	}
	struct kinf_buf b = {0};
	int rc = kinf_buf_append(&b, json, (size_t)(end - json));
	rc |= kinf_buf_printf(&b, "%llu", rv);
	rc |= kinf_buf_append(&b, close, (size_t)(json + len - close));
	if (rc == 0 && kinf_object_parse(b.data, b.len, NULL, &ret, NULL) < 0) {
		ret = NULL;	/* the caller keeps the object as it was */
	}
	kinf_buf_release(&b);
	return ret;
}

int serve_table_row(const struct serve_coll *c, const struct kinf_object *obj,
		const char *include, struct kinf_buf *out, struct kinf_error *reterr) {
	kinf_buf_putc(out, '{');
	int rc = kinf_kindcols_row_json(c->columns, obj, NULL, out, reterr);
	if (rc == 0 && strcmp(include, "Object") == 0) {
		kinf_buf_puts(out, ",\"object\":");
		rc = serve_append_typed(c, obj, out);
	} else if (rc == 0 && strcmp(include, "None") != 0) {
		const char *meta;
		size_t len;
		metadata_span(obj, &meta, &len);
		kinf_buf_puts(out, ",\"object\":{\"kind\":\"PartialObjectMetadata\","
				"\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
		kinf_buf_put(out, meta, len);
		kinf_buf_putc(out, '}');
	}
	kinf_buf_putc(out, '}');
	return rc < 0 ? rc : kinf_buf_error(out);
}

int serve_list_head(struct kinf_buf *b, const struct serve_coll *c,
		const struct serve_list_spec *spec) {
	if (spec->table) {
		kinf_buf_putf(b, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/%s\","
				"\"metadata\":{\"resourceVersion\":", spec->table_version);
	} else {
		kinf_buf_puts(b, "{\"kind\":");
		kinf_apistatus_put_quoted(b, c->list_kind);
		kinf_buf_puts(b, ",\"apiVersion\":");
		kinf_apistatus_put_quoted(b, c->api_version);
		kinf_buf_puts(b, ",\"metadata\":{\"resourceVersion\":");
	}
	kinf_apistatus_put_quoted(b, spec->rv);
	if (spec->cont && spec->cont[0]) {
		kinf_buf_puts(b, ",\"continue\":");
		kinf_apistatus_put_quoted(b, spec->cont);
	}
	if (spec->remaining >= 0) {
		kinf_buf_putf(b, ",\"remainingItemCount\":%lld", spec->remaining);
	}
	kinf_buf_puts(b, "},");
	if (spec->table) {
		kinf_buf_puts(b, "\"columnDefinitions\":");
		int rc = serve_table_columns(c, b);
		kinf_buf_puts(b, ",\"rows\":[");
		return rc;
	}
	kinf_buf_puts(b, "\"items\":[");
	return 0;
}

/* The compact "kind" then "apiVersion" members (or the other order) at p, or 0. */
static size_t type_members_len(const char *p, const char *end, const struct kinf_object *obj) {
	const char *kind = kinf_object_kind(obj), *av = kinf_object_api_version(obj);
	size_t n = 0;
	for (int i = 0; i < 2; i++) {
		bool k = strncmp(p + n, "\"kind\":\"", 8) == 0;
		bool a = !k && strncmp(p + n, "\"apiVersion\":\"", 14) == 0;
		const char *v = k ? kind : av;
		size_t off = n + (k ? 8 : 14), vlen = strlen(v);
		if ((!k && !a) || (size_t)(end - p) < off + vlen + 2 ||
				memcmp(p + off, v, vlen) != 0 || p[off + vlen] != '"' ||
				(p[off + vlen + 1] != ',' && p[off + vlen + 1] != '}')) {
			return 0;
		}
		n = off + vlen + 1 + (p[off + vlen + 1] == ',');
	}
	return n;
}

int serve_append_item(const struct kinf_object *obj, struct kinf_buf *out) {
	size_t len;
	const char *json = kinf_object_json(obj, &len);
	if (!kinf_object_kind(obj)[0] && !kinf_object_api_version(obj)[0]) {
		return kinf_buf_append(out, json, len);
	}
	/* As a watch event brought it: the two members lead (client-go's order or ours). */
	size_t skip = len > 1 ? type_members_len(json + 1, json + len, obj) : 0;
	if (skip) {
		int rc = kinf_buf_append_char(out, '{');
		return rc < 0 ? rc : kinf_buf_append(out, json + 1 + skip, len - 1 - skip);
	}
	/* Elsewhere: member by member. */
	struct kinf_json_reader r;
	struct kinf_json_span key;
	const char *sep = "{";
	int rc;
	kinf_json_reader_init(&r, json, len, UINT32_MAX);
	if ((rc = kinf_json_object_begin(&r)) < 0) {
		return rc;
	}
	while ((rc = kinf_json_member(&r, &key)) == 1) {
		const char *v;
		size_t vlen;
		const char *k = key.s - 1;	/* the key's opening quote */
		if ((rc = kinf_json_skip_span(&r, &v, &vlen)) < 0) {
			return rc;
		}
		if (kinf_json_span_eq(&key, "kind") || kinf_json_span_eq(&key, "apiVersion")) {
			continue;
		}
		kinf_buf_puts(out, sep);
		if ((rc = kinf_buf_append(out, k, (size_t)(v + vlen - k))) < 0) {
			return rc;
		}
		sep = ",";
	}
	if (rc < 0) {
		return rc;
	}
	return kinf_buf_append_str(out, sep[0] == '{' ? "{}" : "}");
}
