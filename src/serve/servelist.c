#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "indexfuncs.h"
#include "json.h"
#include "kindcols.h"
#include "serveint.h"

/*
 * Get and list from a collection's store: selectors (field names checked
 * as the apiserver checks them per kind; an equality on an indexed field
 * starts from the index), the resourceVersion rules of a cache, limit and
 * continue over a snapshot, and Tables with kinf's columns for the kind.
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

/*
 * A 400 Status with msg into out; nothing when building msg failed (an
 * empty Status is answered as the 500 "out of memory").
 */
static void bad_request(struct kinf_apistatus_body *out, const struct kinf_buf *msg) {
	if (!kinf_buf_error(msg)) {
		kinf_apistatus_bad_request(out, msg->data ? msg->data : "");
	}
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
		bad_request(ret_status, &msg);
		kinf_buf_release(&msg);
		return false;
	}
	if (strcmp(field, "metadata.name") == 0 || strcmp(field, "metadata.namespace") == 0) {
		return true;
	}
	kinf_buf_putf(&msg, "\"%s\" is not a known field selector: only \"metadata.name\", "
			"\"metadata.namespace\"", field);
	bad_request(ret_status, &msg);
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
		bad_request(ret_status, &msg);
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

/* ---- typed JSON and Tables ---- */

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

/* ---- media types and options ---- */

enum answer { ANSWER_JSON, ANSWER_TABLE, ANSWER_NONE };

/* What the client prefers of what kinf writes; table_version "v1" or "v1beta1". */
static enum answer negotiate(const struct kinf_accept *acc, const char **table_version) {
	*table_version = "v1";
	if (acc->n == 0) {
		return ANSWER_JSON;
	}
	for (size_t i = 0; i < acc->n; i++) {
		const struct kinf_accept_range *ar = &acc->ranges[i];
		if (ar->kind == KINF_ACCEPT_TABLE) {
			*table_version = strcmp(ar->version, "v1beta1") == 0 ? "v1beta1" : "v1";
			return ANSWER_TABLE;
		}
		if (ar->kind == KINF_ACCEPT_JSON || ar->kind == KINF_ACCEPT_YAML) {
			return ANSWER_JSON;
		}
	}
	return ANSWER_NONE;
}

static void respond_not_acceptable(struct serve_request *r) {
	struct kinf_apistatus_body b = {0};
	struct kinf_apistatus st = { .code = 406, .reason = "NotAcceptable",
		.message = "only the following media types are accepted: application/json, "
			"application/json;as=Table;v=v1;g=meta.k8s.io" };
	kinf_apistatus_put(&b, &st);
	serve_respond_status(r, &b);
	kinf_apistatus_body_release(&b);
}

/* includeObject's value, or NULL after answering 400. */
static const char *include_object(struct serve_request *r) {
	const char *inc = r->query.include_object;
	if (!inc || !inc[0]) {
		return "Metadata";
	}
	if (strcmp(inc, "None") && strcmp(inc, "Metadata") && strcmp(inc, "Object")) {
		struct kinf_apistatus_body b = {0};
		struct kinf_buf msg = {0};
		kinf_buf_putf(&msg, "includeObject: Unsupported value: \"%s\": supported values: "
				"\"None\", \"Metadata\", \"Object\"", inc);
		bad_request(&b, &msg);
		serve_respond_status(r, &b);
		kinf_apistatus_body_release(&b);
		kinf_buf_release(&msg);
		return NULL;
	}
	return inc;
}

/* One field.Error of ListOptions' validation. */
struct option_error {
	const char *field;
	const char *type;		/* "Forbidden", "Unsupported value" */
	const char *reason;		/* its cause: "FieldValueForbidden", ... */
	char body[200];			/* ErrorBody(): "Forbidden: ..." */
};

/* The 422 of errors (apimachinery's NewInvalid for ListOptions), aggregated. */
static void respond_invalid(struct serve_request *r, const struct option_error *e, size_t n) {
	struct kinf_apistatus_body b = {0};
	struct kinf_buf msg = {0};
	struct kinf_apistatus st = { .code = 422, .reason = "Invalid", .details = true,
		.kind = "ListOptions", .group = "meta.k8s.io" };
	kinf_buf_puts(&msg, "ListOptions.meta.k8s.io \"\" is invalid: ");
	if (n > 1) {
		kinf_buf_putc(&msg, '[');
	}
	for (size_t i = 0; i < n; i++) {
		kinf_buf_putf(&msg, "%s%s: %s", i ? ", " : "", e[i].field, e[i].body);
		if (i < sizeof(st.causes) / sizeof(st.causes[0])) {
			st.causes[st.n_causes++] = (struct kinf_apistatus_cause){ .reason = e[i].reason,
				.message = e[i].body, .field = e[i].field };
		}
	}
	if (n > 1) {
		kinf_buf_putc(&msg, ']');
	}
	st.message = msg.data;
	if (!kinf_buf_error(&msg)) {
		kinf_apistatus_put(&b, &st);
	}
	serve_respond_status(r, &b);
	kinf_apistatus_body_release(&b);
	kinf_buf_release(&msg);
}

static void forbidden(struct option_error *e, size_t *n, const char *field, const char *detail) {
	e[*n] = (struct option_error){ .field = field, .type = "Forbidden",
		.reason = "FieldValueForbidden" };
	snprintf(e[*n].body, sizeof(e[*n].body), "Forbidden: %s", detail);
	(*n)++;
}

static void unsupported(struct option_error *e, size_t *n, const char *field, const char *value,
		const char *supported) {
	e[*n] = (struct option_error){ .field = field, .type = "Unsupported value",
		.reason = "FieldValueNotSupported" };
	snprintf(e[*n].body, sizeof(e[*n].body), "Unsupported value: \"%.80s\": supported values: %s",
			value, supported);
	(*n)++;
}

bool serve_validate_list_options(struct serve_request *r, bool watch) {
	const struct kinf_apiquery *q = &r->query;
	const char *match = q->resource_version_match ? q->resource_version_match : "";
	const char *rv = q->resource_version ? q->resource_version : "";
	bool cont = q->continue_token && q->continue_token[0];
	struct option_error e[6];
	size_t n = 0;

	/* AM apis/meta/internalversion/validation: ValidateListOptions. */
	if (watch) {
		/* validateWatchOptions, as with the WatchList gate on: serve streams initial events. */
		if (q->send_initial_events >= 0 && strcmp(match, "NotOlderThan") != 0) {
			forbidden(e, &n, "resourceVersionMatch", "sendInitialEvents requires setting "
					"resourceVersionMatch to NotOlderThan");
		}
		if (match[0]) {
			if (q->send_initial_events < 0) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"for watch unless sendInitialEvents is provided");
			}
			if (strcmp(match, "NotOlderThan") != 0) {
				unsupported(e, &n, "resourceVersionMatch", match, "\"NotOlderThan\"");
			}
			if (cont) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"when continue is provided");
			}
		}
		/* Later apiservers' rule: the initial events' end is a bookmark. */
		if (n == 0 && q->send_initial_events == 1 && !q->allow_watch_bookmarks) {
			forbidden(e, &n, "allowWatchBookmarks", "sendInitialEvents requires setting "
					"allowWatchBookmarks to true");
		}
	} else {
		if (match[0]) {
			if (!rv[0]) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"unless resourceVersion is provided");
			}
			if (cont) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"when continue is provided");
			}
			if (strcmp(match, "Exact") != 0 && strcmp(match, "NotOlderThan") != 0) {
				unsupported(e, &n, "resourceVersionMatch", match,
						"\"Exact\", \"NotOlderThan\", \"\"");
			}
			if (strcmp(match, "Exact") == 0 && strcmp(rv, "0") == 0) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch \"exact\" is "
						"forbidden for resourceVersion \"0\"");
			}
		}
		if (q->send_initial_events >= 0) {
			forbidden(e, &n, "sendInitialEvents", "sendInitialEvents is forbidden for list");
		}
	}
	if (n) {
		respond_invalid(r, e, n);
		return false;
	}
	return true;
}

static void expired(struct serve_request *r, const char *message) {
	struct kinf_apistatus_body b = {0};
	kinf_apistatus_expired(&b, message);
	serve_respond_status(r, &b);
	kinf_apistatus_body_release(&b);
}

void serve_too_large_status(struct kinf_apistatus_body *out, const char *rv,
		unsigned long long current) {
	struct kinf_buf msg = {0};
	kinf_buf_putf(&msg, "Timeout: Too large resource version: %s, current: %llu", rv, current);
	struct kinf_apistatus st = { .code = 504, .reason = "Timeout", .message = msg.data,
		.details = true, .n_causes = 1, .retry_after_seconds = 1,
		.causes = { { .reason = "ResourceVersionTooLarge",
			.message = "Too large resource version" } } };
	if (!kinf_buf_error(&msg)) {
		kinf_apistatus_put(out, &st);
	}
	kinf_buf_release(&msg);
}

/* 504 for a resourceVersion the cache has not reached (client-go retries it). */
static void too_large(struct serve_request *r, const char *rv, unsigned long long current) {
	struct kinf_apistatus_body b = {0};
	serve_too_large_status(&b, rv, current);
	serve_respond_status(r, &b);
	kinf_apistatus_body_release(&b);
}

/* ---- a read from a resourceVersion ahead of the cache ---- */

/*
 * How long a read from a resourceVersion the cache has not reached waits
 * for it: the apiserver's watch cache waits as long (waitUntilFreshAndBlock,
 * blockTimeout 3 s) before its 504 "Too large resource version".
 */
#define RV_WAIT_MS 3000

struct serve_rvwait {
	struct serve_rvwait *next, *prev;
	struct serve_coll *coll;
	struct kinf_httpd_req *req;
	unsigned long long rv;
	bool watch;			/* answered in its stream (an ERROR event) */
	struct kinf_httpd_timer *timer;
};

static void rvwait_unlink(struct serve_rvwait *w) {
	if (w->prev) {
		w->prev->next = w->next;
	} else {
		w->coll->rv_waits = w->next;
	}
	if (w->next) {
		w->next->prev = w->prev;
	}
	kinf_httpd_timer_cancel(w->coll->srv->httpd, w->timer);
	free(w);
}

static void rvwait_closed(struct kinf_httpd_req *req, void *arg) {
	(void)req;
	rvwait_unlink(arg);
}

static void too_large(struct serve_request *r, const char *rv, unsigned long long current);

/* The wait is over: 504, as the apiserver answers after its 3 s. */
static void rvwait_timeout(void *arg) {
	struct serve_rvwait *w = arg;
	struct serve_coll *c = w->coll;
	struct serve_request r = {
		.srv = c->srv, .req = w->req, .head = kinf_httpd_req_head(w->req),
		.ctx = c->ctx, .start_us = kinf_clock_now_us(),
	};
	char rv[24];
	w->timer = NULL;
	snprintf(rv, sizeof(rv), "%llu", w->rv);
	bool watch = w->watch;
	kinf_httpd_req_on_close(w->req, NULL, NULL);
	rvwait_unlink(w);
	if (watch) {
		serve_watch_too_large(&r, rv, c->rv);
	} else {
		too_large(&r, rv, c->rv);
	}
}

void serve_coll_rv_advanced(struct serve_coll *c) {
	for (struct serve_rvwait *w = c->rv_waits, *next; w; w = next) {
		next = w->next;
		if (w->rv <= c->rv) {
			/* Routed again: now check_rv lets it through. */
			struct kinf_httpd_req *req = w->req;
			kinf_httpd_req_on_close(req, NULL, NULL);
			rvwait_unlink(w);
			serve_handle(req, c->srv);
		}
	}
}

bool serve_rv_wait(struct serve_request *r, struct serve_coll *c, unsigned long long rv,
		bool watch) {
	struct serve_rvwait *w = calloc(1, sizeof(*w));
	if (!w) {
		return false;
	}
	w->coll = c;
	w->req = r->req;
	w->rv = rv;
	w->watch = watch;
	w->timer = kinf_httpd_timer_add(c->srv->httpd, RV_WAIT_MS, rvwait_timeout, w);
	if (!w->timer) {
		free(w);
		return false;
	}
	w->next = c->rv_waits;
	if (w->next) {
		w->next->prev = w;
	}
	c->rv_waits = w;
	kinf_httpd_req_on_close(r->req, rvwait_closed, w);
	return true;
}

/*
 * The apiserver's resourceVersion rules as a cache answers them: "", "0"
 * and N up to the cache's are the current state; Exact at another RV is
 * 410; N ahead of the cache waits up to 3 s for it, then is 504 with
 * Retry-After. Returns false after answering (or while waiting).
 */
static bool check_rv(struct serve_request *r, struct serve_coll *c) {
	const char *rv = r->query.resource_version;
	const char *match = r->query.resource_version_match;
	unsigned long long n;

	if (!rv || !rv[0] || strcmp(rv, "0") == 0) {
		return true;
	}
	if (r->query.continue_token && r->query.continue_token[0]) {
		struct kinf_apistatus_body b = {0};
		kinf_apistatus_bad_request(&b, "specifying resource version is not allowed when "
				"using continue");
		serve_respond_status(r, &b);
		kinf_apistatus_body_release(&b);
		return false;
	}
	if (!serve_parse_rv(rv, &n)) {
		struct kinf_apistatus_body b = {0};
		struct kinf_buf msg = {0};
		kinf_buf_putf(&msg, "invalid resource version: %s", rv);
		bad_request(&b, &msg);
		serve_respond_status(r, &b);
		kinf_apistatus_body_release(&b);
		kinf_buf_release(&msg);
		return false;
	}
	if (n > c->rv && !serve_rv_wait(r, c, n, false)) {
		too_large(r, rv, c->rv);
		return false;
	}
	if (n > c->rv) {
		return false;	/* answered once the cache reaches n, or in 3 s */
	}
	if (match && strcmp(match, "Exact") == 0 && n != c->rv) {
		expired(r, "The resourceVersion for the provided list is too old.");
		return false;
	}
	return true;
}

/* ---- continue tokens ---- */

static void continue_drop(struct kinf_serve *srv, struct serve_continue **pp) {
	struct serve_continue *k = *pp;
	*pp = k->next;
	if (--k->snap->conts == 0) {
		srv->cont_refs -= k->snap->objs.n;
	}
	serve_snap_unref(k->snap);
	free(k);
	srv->n_conts--;
}

/* Drop the tokens past their time. */
static void continue_expire(struct kinf_serve *srv) {
	long long now = kinf_clock_now_ms();
	for (struct serve_continue **pp = &srv->conts; *pp;) {
		if (now - (*pp)->created_ms > SERVE_CONTINUE_TTL_MS) {
			continue_drop(srv, pp);
		} else {
			pp = &(*pp)->next;
		}
	}
}

static struct serve_continue *continue_find(struct kinf_serve *srv, struct serve_coll *c,
		unsigned long long id) {
	continue_expire(srv);
	for (struct serve_continue *k = srv->conts; k; k = k->next) {
		if (k->id == id && k->snap->coll == c) {
			return k;
		}
	}
	return NULL;
}

/*
 * A token for snap, made by connection owner: its own oldest goes when
 * it has SERVE_CONTINUE_PER_CLIENT already; NULL when the global budget
 * is full (or out of memory), and the list is then not paged.
 */
static struct serve_continue *continue_new(struct kinf_serve *srv, struct serve_snap *snap,
		unsigned long long owner) {
	struct serve_continue **oldest = NULL;
	size_t mine = 0;
	continue_expire(srv);
	/* Newest first: the last of owner's is its oldest. */
	for (struct serve_continue **pp = &srv->conts; *pp; pp = &(*pp)->next) {
		if ((*pp)->owner == owner) {
			mine++;
			oldest = pp;
		}
	}
	if (mine >= SERVE_CONTINUE_PER_CLIENT) {
		continue_drop(srv, oldest);
	}
	if (srv->n_conts >= SERVE_CONTINUE_MAX ||
			(!snap->conts && srv->cont_refs + snap->objs.n > SERVE_CONTINUE_REFS)) {
		return NULL;
	}
	struct serve_continue *k = calloc(1, sizeof(*k));
	if (!k) {
		return NULL;
	}
	k->id = ++srv->next_cont;
	k->owner = owner;
	k->snap = serve_snap_ref(snap);
	k->created_ms = kinf_clock_now_ms();
	if (snap->conts++ == 0) {
		srv->cont_refs += snap->objs.n;
	}
	k->next = srv->conts;
	srv->conts = k;
	srv->n_conts++;
	return k;
}

size_t serve_snapshots_live(struct kinf_serve *srv, size_t *ret_objects) {
	continue_expire(srv);
	*ret_objects = srv->cont_refs;
	return srv->n_conts;
}

void serve_snapshots_release(struct kinf_serve *srv) {
	while (srv->conts) {
		continue_drop(srv, &srv->conts);
	}
}

/* "k1.ID.RV.HEXKEY": opaque to clients as the apiserver's base64 tokens are. */
static void make_token(const struct serve_continue *k, const char *key, struct kinf_buf *out) {
	kinf_buf_putf(out, "k1.%llu.%llu.", k->id, k->snap->rv);
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		kinf_buf_putf(out, "%02x", *p);
	}
}

static bool parse_token(const char *t, unsigned long long *id, unsigned long long *rv,
		struct kinf_buf *key) {
	char *end;
	if (strncmp(t, "k1.", 3) != 0) {
		return false;
	}
	*id = strtoull(t + 3, &end, 10);
	if (*end != '.') {
		return false;
	}
	*rv = strtoull(end + 1, &end, 10);
	if (*end != '.') {
		return false;
	}
	for (const char *p = end + 1; *p; p += 2) {
		unsigned v;
		if (!p[1] || sscanf(p, "%2x", &v) != 1 || !strchr("0123456789abcdef", p[0]) ||
				!strchr("0123456789abcdef", p[1])) {
			return false;
		}
		kinf_buf_putc(key, (char)v);
	}
	return key->len > 0;
}

/* First index in objs whose key sorts after key. */
static size_t after_key(const struct kinf_object_list *objs, const char *key) {
	size_t lo = 0, hi = objs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(kinf_object_key(objs->v[mid]), key) <= 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

/* ---- answers ---- */

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

/*
 * The page of snap from `from` holding at most limit objects f matches
 * (0: no limit): its end into *ret_end, the index of its last match into
 * *ret_last, and whether any match follows it (1, 0, or -KINF_ENOMEM).
 */
static int page_end(const struct serve_snap *snap, const struct serve_filter *f, size_t from,
		long long limit, size_t *ret_end, size_t *ret_last) {
	size_t n = snap->objs.n, i = from, sent = 0;
	*ret_last = SIZE_MAX;
	if (!limit) {
		*ret_end = n;
		return false;
	}
	if (serve_filter_empty(f)) {
		*ret_end = (unsigned long long)limit < n - from ? from + (size_t)limit : n;
		*ret_last = *ret_end > from ? *ret_end - 1 : SIZE_MAX;
		return *ret_end < n;
	}
	for (; i < n && (long long)sent < limit; i++) {
		int m = serve_filter_match(f, snap->objs.v[i]);
		if (m < 0) {
			return m;
		}
		if (m) {
			sent++;
			*ret_last = i;
		}
	}
	*ret_end = i;
	for (; i < n; i++) {
		int m = serve_filter_match(f, snap->objs.v[i]);
		if (m != 0) {
			return m;
		}
	}
	return 0;
}

void serve_list(struct serve_request *r, struct serve_coll *c) {
	struct serve_filter f;
	struct kinf_buf tok = {0}, key = {0};
	struct kinf_apistatus_body st = {0};
	struct serve_list_spec spec = { .include = "Metadata", .remaining = -1 };
	const char *ns = c->namespaced ? r->path.namespace_ : NULL;
	struct serve_snap *snap = NULL;
	struct serve_continue *k = NULL;
	size_t from = 0, end, last;
	char rv[24];

	enum answer a = negotiate(&r->accept, &spec.table_version);
	if (a == ANSWER_NONE) {
		respond_not_acceptable(r);
		return;
	}
	spec.table = a == ANSWER_TABLE;
	if (spec.table && !(spec.include = include_object(r))) {
		return;
	}
	if (!serve_validate_list_options(r, false) || !check_rv(r, c)) {
		return;
	}
	if (serve_filter_init(c, ns, r->query.label_selector, r->query.field_selector, &f, &st) < 0) {
		serve_respond_status(r, &st);
		kinf_apistatus_body_release(&st);
		return;
	}
	c->lists++;
	const char *cont = r->query.continue_token;
	if (cont && cont[0]) {
		unsigned long long id, srv_rv;
		bool parsed = parse_token(cont, &id, &srv_rv, &key);
		if (kinf_buf_error(&key)) {
			serve_respond_oom(r);
			goto out;
		}
		if (!parsed) {
			struct kinf_buf msg = {0};
			kinf_buf_putf(&msg, "invalid continue token: %s", cont);
			bad_request(&st, &msg);
			kinf_buf_release(&msg);
			serve_respond_status(r, &st);
			goto out;
		}
		k = continue_find(r->srv, c, id);
		if (!k) {
			expired(r, "The provided continue parameter is too old to display a consistent "
					"list result. You can start a new list without the continue "
					"parameter.");
			goto out;
		}
		snap = serve_snap_ref(k->snap);
		from = after_key(&snap->objs, key.data);
	} else if (!(snap = serve_snap_take(c, &f))) {
		serve_respond_oom(r);
		goto out;
	}
	long long limit = r->query.has_limit && r->query.limit > 0 ? r->query.limit : 0;
	int more = page_end(snap, &f, from, limit, &end, &last);
	if (more > 0 && !k && !(k = continue_new(r->srv, snap, kinf_httpd_req_conn_id(r->req)))) {
		/* No room for another token: the whole list, unpaged, rather than expire one. */
		r->srv->unpaged++;
		more = page_end(snap, &f, from, 0, &end, &last);
	}
	if (more < 0) {
		serve_respond_oom(r);	/* never a page with a match left out */
		goto out;
	}
	if (more) {
		make_token(k, kinf_object_key(snap->objs.v[last]), &tok);
		if (serve_filter_empty(&f)) {
			spec.remaining = (long long)(snap->objs.n - end);
		}
	} else if (k) {
		/*
		 * The last page of a token: nothing can continue it, so it stops
		 * pinning the objects the cache has since replaced (else they
		 * live on for SERVE_CONTINUE_TTL_MS). A retry of this very page
		 * then gets the 410 a compacted continue gets.
		 */
		for (struct serve_continue **pp = &r->srv->conts; *pp; pp = &(*pp)->next) {
			if (*pp == k) {
				continue_drop(r->srv, pp);
				break;
			}
		}
	}
	if (kinf_buf_error(&tok)) {
		serve_respond_oom(r);
		goto out;
	}
	snprintf(rv, sizeof(rv), "%llu", snap->rv);
	spec.rv = rv;
	spec.cont = tok.data;
	serve_list_stream(r, snap, from, end, &f, &spec);	/* takes f */
out:
	serve_snap_unref(snap);
	serve_filter_release(&f);
	kinf_apistatus_body_release(&st);
	kinf_buf_release(&tok);
	kinf_buf_release(&key);
}

void serve_get(struct serve_request *r, struct serve_coll *c) {
	struct kinf_buf key = {0}, b = {0};
	struct kinf_apistatus_body st = {0};
	const char *table_version;
	enum answer a = negotiate(&r->accept, &table_version);
	const char *include = "Metadata";

	if (a == ANSWER_NONE) {
		respond_not_acceptable(r);
		return;
	}
	if (a == ANSWER_TABLE && !(include = include_object(r))) {
		return;
	}
	c->gets++;
	if (c->namespaced && r->path.namespace_) {
		kinf_buf_putf(&key, "%s/", r->path.namespace_);
	}
	kinf_buf_puts(&key, r->path.name);
	if (kinf_buf_error(&key)) {
		kinf_buf_release(&key);
		serve_respond_oom(r);
		return;
	}
	struct kinf_object *obj = c->namespaced && !r->path.namespace_ ? NULL :
		kinf_indexer_get(c->store, key.data);
	if (!obj) {
		kinf_apistatus_not_found(&st, c->group, c->resource, r->path.name);
		serve_respond_status(r, &st);
	} else if (a == ANSWER_TABLE) {
		struct kinf_error err = {0};
		struct serve_list_spec spec = { .table = true, .table_version = table_version,
			.rv = kinf_object_resource_version(obj), .remaining = -1 };
		int rc = serve_list_head(&b, c, &spec);
		rc = rc < 0 ? rc : serve_table_row(c, obj, include, &b, &err);
		kinf_buf_puts(&b, "]}\n");
		if (rc < 0 && rc != -KINF_ENOMEM) {
			kinf_apistatus_internal(&st, err.message);
			serve_respond_status(r, &st);
		} else if (rc < 0) {
			serve_respond_oom(r);
		} else {
			serve_respond_buf(r, 200, "application/json", &b);
		}
	} else if (serve_append_typed(c, obj, &b) < 0) {
		serve_respond_oom(r);
	} else {
		kinf_buf_putc(&b, '\n');
		serve_respond_buf(r, 200, "application/json", &b);
	}
	kinf_object_unref(obj);
	kinf_buf_release(&key);
	kinf_buf_release(&b);
	kinf_apistatus_body_release(&st);
}
