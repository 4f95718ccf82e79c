#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "indexfuncs.h"
#include "json.h"
#include "kindcols.h"
#include "servecoll.h"
#include "servefilter.h"
#include "servelist.h"
#include "serveoptions.h"
#include "serverespond.h"
#include "servestream.h"

/*
 * servelist.c: get and list from a collection's store: the media type
 * (JSON or a Table), the resourceVersion rules of a cache, limit and
 * continue over a snapshot. What a read selects and how its objects are
 * written is servefilter.c's.
 */

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
		serve_bad_request(&b, &msg);
		serve_respond_status(r, &b);
		kinf_apistatus_body_release(&b);
		kinf_buf_release(&msg);
		return NULL;
	}
	return inc;
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
		serve_bad_request(&b, &msg);
		serve_respond_status(r, &b);
		kinf_apistatus_body_release(&b);
		kinf_buf_release(&msg);
		return false;
	}
	if (n > c->rv && !serve_rv_wait(r, c, n, serve_respond_too_large)) {
		serve_respond_too_large(r, rv, c->rv);
		return false;
	}
	if (n > c->rv) {
		return false;	/* answered once the cache reaches n, or in 3 s */
	}
	if (match && strcmp(match, "Exact") == 0 && n != c->rv) {
		serve_respond_expired(r, "The resourceVersion for the provided list is too old.");
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
			serve_bad_request(&st, &msg);
			kinf_buf_release(&msg);
			serve_respond_status(r, &st);
			goto out;
		}
		k = continue_find(r->srv, c, id);
		if (!k) {
			serve_respond_expired(r, "The provided continue parameter is too old to display a consistent "
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
