#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "buf.h"
#include "discovery.h"
#include "editdist.h"
#include "err.h"
#include "http.h"
#include "log.h"
#include "discovery_int.h"

void disc_strv_free(char **v) {
	if (!v) {
		return;
	}
	for (char **p = v; *p; p++) {
		free(*p);
	}
	free(v);
}

static void res_release(struct res *r) {
	free(r->name);
	free(r->singular);
	free(r->kind);
	disc_strv_free(r->short_names);
	disc_strv_free(r->verbs);
	disc_strv_free(r->categories);
}

static void version_release(struct version *v) {
	for (size_t i = 0; i < v->n_res; i++) {
		res_release(&v->res[i]);
	}
	free(v->res);
	free(v->name);
}

static void group_release(struct group *g) {
	for (size_t i = 0; i < g->n_versions; i++) {
		version_release(&g->versions[i]);
	}
	free(g->versions);
	free(g->name);
}

void kinf_discovery_free(struct kinf_discovery *disc) {
	if (!disc) {
		return;
	}
	for (size_t i = 0; i < disc->n_groups; i++) {
		group_release(&disc->groups[i]);
	}
	free(disc->groups);
	free(disc->flat);
	kinf_discovery_free(disc->replaced);
	free(disc);
}

struct group *disc_find_group(const struct kinf_discovery *d, const char *name) {
	for (size_t i = 0; i < d->n_groups; i++) {
		if (strcmp(d->groups[i].name, name) == 0) {
			return &d->groups[i];
		}
	}
	return NULL;
}

struct version *disc_find_version(struct group *g, const char *name) {
	for (size_t i = 0; i < g->n_versions; i++) {
		if (strcmp(g->versions[i].name, name) == 0) {
			return &g->versions[i];
		}
	}
	return NULL;
}

struct group *disc_add_group(struct kinf_discovery *d, const char *name) {
	struct group *groups, *g;

	groups = kinf_grow(d->groups, &d->cap_groups, d->n_groups, sizeof(*groups));
	if (!groups) {
		return NULL;
	}
	d->groups = groups;
	g = &groups[d->n_groups];
	memset(g, 0, sizeof(*g));
	if (!(g->name = strdup(name))) {
		return NULL;
	}
	d->n_groups++;
	return g;
}

/* Drop the last group added (it turned out to have no versions). */
void disc_pop_group(struct kinf_discovery *d) {
	group_release(&d->groups[--d->n_groups]);
}

void disc_remove_group(struct kinf_discovery *d, size_t i) {
	group_release(&d->groups[i]);
	memmove(&d->groups[i], &d->groups[i + 1],
			(d->n_groups - i - 1) * sizeof(d->groups[0]));
	d->n_groups--;
}

struct version *disc_add_version(struct group *g, const char *name) {
	struct version *versions, *v;

	versions = kinf_grow(g->versions, &g->cap_versions, g->n_versions,
			sizeof(*versions));
	if (!versions) {
		return NULL;
	}
	g->versions = versions;
	v = &versions[g->n_versions];
	memset(v, 0, sizeof(*v));
	if (!(v->name = strdup(name))) {
		return NULL;
	}
	g->n_versions++;
	return v;
}

void disc_remove_version(struct group *g, size_t i) {
	version_release(&g->versions[i]);
	memmove(&g->versions[i], &g->versions[i + 1],
			(g->n_versions - i - 1) * sizeof(g->versions[0]));
	g->n_versions--;
}

/* ---- JSON helpers: absent and null read as "not there", wrong types fail */

/* Where in a document, for error messages (truncated when very deep). */
void disc_at_path(char *out, size_t size, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}

int disc_type_error(struct pctx *c, const char *where, const char *what) {
	return kinf_error_set(c->reterr, KINF_EJSON, "%s: %s: %s expected",
			c->doc, where, what);
}

int disc_member(struct pctx *c, json_t *obj, const char *where,
		const char *key, enum jtype type, json_t **ret) {
	static const char *const names[] = {
		[J_OBJECT] = "object", [J_ARRAY] = "array",
		[J_STRING] = "string", [J_BOOL] = "boolean",
	};
	json_t *v = json_object_get(obj, key);
	bool okay;

	*ret = NULL;
	if (!v || json_is_null(v)) {
		return 0;
	}
	switch (type) {
	case J_OBJECT:
		okay = json_is_object(v);
		break;
	case J_ARRAY:
		okay = json_is_array(v);
		break;
	case J_STRING:
		okay = json_is_string(v);
		break;
	default:
		okay = json_is_boolean(v);
		break;
	}
	if (!okay) {
		char at[256];
		disc_at_path(at, sizeof(at), "%s%s%s", where, *where ? "." : "", key);
		return disc_type_error(c, at, names[type]);
	}
	*ret = v;
	return 0;
}

/* A string member, "" when absent or null. */
int disc_member_str(struct pctx *c, json_t *obj, const char *where,
		const char *key, const char **ret) {
	json_t *v;
	int rc = disc_member(c, obj, where, key, J_STRING, &v);

	*ret = v ? json_string_value(v) : "";
	return rc;
}

/* -KINF_EJSON, "WHERE.KEY: non-empty string expected", when value is "". */
int disc_check_nonempty(struct pctx *c, const char *where, const char *key,
		const char *value) {
	char at[256];

	if (*value) {
		return 0;
	}
	disc_at_path(at, sizeof(at), "%s.%s", where, key);
	return disc_type_error(c, at, "non-empty string");
}

/* An array of strings as a NULL-terminated vector (empty when absent). */
int disc_member_strv(struct pctx *c, json_t *obj, const char *where,
		const char *key, char ***ret) {
	json_t *arr, *e;
	size_t i, n;
	char **v;
	int rc = disc_member(c, obj, where, key, J_ARRAY, &arr);

	if (rc < 0) {
		return rc;
	}
	n = arr ? json_array_size(arr) : 0;
	if (!(v = calloc(n + 1, sizeof(*v)))) {
		return -KINF_ENOMEM;
	}
	json_array_foreach(arr, i, e) {
		if (!json_is_string(e)) {
			char at[256];
			disc_at_path(at, sizeof(at), "%s.%s[%zu]", where, key, i);
			disc_strv_free(v);
			return disc_type_error(c, at, "string");
		}
		if (!(v[i] = strdup(json_string_value(e)))) {
			disc_strv_free(v);
			return -KINF_ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

/* Check an optional "kind" names the document type we expect. */
int disc_check_kind(struct pctx *c, json_t *root, const char *kind) {
	const char *got;
	int rc = disc_member_str(c, root, "", "kind", &got);

	if (rc < 0) {
		return rc;
	}
	if (*got && strcmp(got, kind) != 0) {
		return kinf_error_set(c->reterr, KINF_EJSON,
				"%s: kind %s, expected %s", c->doc, got, kind);
	}
	return 0;
}

json_t *disc_load_json(struct pctx *c, const char *data, size_t len) {
	json_error_t jerr;
	json_t *root;

	if (!data) {
		data = "";
		len = 0;
	}
	root = json_loadb(data, len, JSON_FLAGS, &jerr);
	if (!root) {
		kinf_error_set(c->reterr, KINF_EJSON, "%s: line %d, column %d: %s",
				c->doc, jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		disc_type_error(c, "document", "object");
		json_decref(root);
		return NULL;
	}
	return root;
}

/*
 * The array member key of a document whose (optional) kind must be kind,
 * into *ret (NULL when absent or null): the list each discovery document is.
 */
int disc_list_member(struct pctx *c, json_t *root, const char *kind,
		const char *key, json_t **ret) {
	int rc = disc_check_kind(c, root, kind);
	return rc < 0 ? rc : disc_member(c, root, "", key, J_ARRAY, ret);
}

/*
 * load_json, then list_member: the document, which the caller frees, or
 * NULL with c->reterr set (KINF_EJSON).
 */
json_t *disc_load_list(struct pctx *c, const char *data, size_t len,
		const char *kind, const char *key, json_t **ret) {
	json_t *root = disc_load_json(c, data, len);

	if (root && disc_list_member(c, root, kind, key, ret) < 0) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/*
 * Append one resource to v. name, kind and the rest come from either
 * format; subresources ("pods/status") and resources without a kind are
 * skipped, as client-go's NewDiscoveryRESTMapper and convertAPIResource do.
 */
int disc_add_resource(struct version *v, const char *name,
		const char *singular, const char *kind, bool namespaced,
		char **short_names, char **verbs, char **categories) {
	struct res *arr, *r;
	int rc = -KINF_ENOMEM;

	if (strchr(name, '/') || !*kind) {
		rc = 0;
		goto out;
	}
	for (size_t i = 0; i < v->n_res; i++) {
		if (strcmp(v->res[i].name, name) == 0) {
			rc = 0;
			goto out;
		}
	}
	if (!(arr = kinf_grow(v->res, &v->cap_res, v->n_res, sizeof(*arr)))) {
		goto out;
	}
	v->res = arr;
	r = &arr[v->n_res];
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	r->kind = strdup(kind);
	/* Servers that list no singular: guess it from the kind, as client-go. */
	r->singular = strdup(*singular ? singular : kind);
	if (!r->name || !r->kind || !r->singular) {
		res_release(r);
		goto out;
	}
	if (!*singular) {
		for (char *p = r->singular; *p; p++) {
			*p = (char)tolower((unsigned char)*p);
		}
	}
	r->namespaced = namespaced;
	r->short_names = short_names;
	r->verbs = verbs;
	r->categories = categories;
	short_names = verbs = categories = NULL;
	v->n_res++;
	rc = 0;
out:
	disc_strv_free(short_names);
	disc_strv_free(verbs);
	disc_strv_free(categories);
	return rc;
}

/* ---- walking the model ---- */

static bool walk_group_matches(const struct walk *w, const char *name) {
	if (!w->group) {
		return true;
	}
	return w->prefix ? strncmp(name, w->group, strlen(w->group)) == 0 :
		strcmp(name, w->group) == 0;
}

/* The next resource of the walk, or NULL at its end. */
struct res *disc_walk_next(struct walk *w) {
	for (; w->i < w->d->n_groups; w->i++, w->j = 0) {
		struct group *g = &w->d->groups[w->i];
		if (!walk_group_matches(w, g->name)) {
			continue;
		}
		for (; w->j < g->n_versions; w->j++, w->k = 0) {
			struct version *v = &g->versions[w->j];
			if (w->version && strcmp(v->name, w->version) != 0) {
				continue;
			}
			if (w->k < v->n_res) {
				w->g = g;
				w->v = v;
				return &v->res[w->k++];
			}
		}
	}
	return NULL;
}

/* ---- building the finished model ---- */

/*
 * Put core first (PriorityRESTMapper: "/v1 is special"), point the public
 * structs at the strings, and list each resource once per group in its
 * preferred version for _count/_at (as ServerPreferredResources does).
 */
int disc_finish(struct kinf_discovery *d) {
	size_t total = 0, n = 0, first = 0;
	const struct group *group = NULL;
	struct walk w;
	struct res *r;

	for (size_t i = 1; i < d->n_groups; i++) {
		if (d->groups[i].name[0] == '\0') {
			struct group core = d->groups[i];
			memmove(&d->groups[1], &d->groups[0], i * sizeof(core));
			d->groups[0] = core;
			break;
		}
	}
	w = (struct walk){ .d = d };
	while ((r = disc_walk_next(&w))) {
		r->pub.group = w.g->name;
		r->pub.version = w.v->name;
		r->pub.resource = r->name;
		r->pub.singular = r->singular;
		r->pub.kind = r->kind;
		r->pub.namespaced = r->namespaced;
		r->pub.short_names = (const char *const *)r->short_names;
		r->pub.verbs = (const char *const *)r->verbs;
		r->pub.categories = (const char *const *)r->categories;
		total++;
	}
	free(d->flat);
	d->flat = NULL;
	d->n_flat = 0;
	if (total == 0) {
		return 0;
	}
	if (!(d->flat = calloc(total, sizeof(*d->flat)))) {
		return -KINF_ENOMEM;
	}
	/* Once per group: a later version's resource of the same name is left out. */
	w = (struct walk){ .d = d };
	while ((r = disc_walk_next(&w))) {
		bool seen = false;
		if (w.g != group) {
			group = w.g;
			first = n;
		}
		for (size_t m = first; m < n && !seen; m++) {
			seen = strcmp(d->flat[m]->resource, r->name) == 0;
		}
		if (!seen) {
			d->flat[n++] = &r->pub;
		}
	}
	d->n_flat = n;
	return 0;
}

/* ---- fetching ---- */

/*
 * Whether a Content-Type names an aggregated discovery document, as
 * client-go's ContentTypeIsGVK: application/json with g, v and as
 * parameters (in any order, names case-insensitive, values maybe quoted).
 */
bool kinf_discovery_is_aggregated(const char *content_type) {
	char g[64] = "", v[64] = "", as[64] = "";
	const char *p = content_type, *end;

	if (!p) {
		return false;
	}
	while (*p == ' ' || *p == '\t') {
		p++;
	}
	end = p + strcspn(p, ";");
	while (end > p && (end[-1] == ' ' || end[-1] == '\t')) {
		end--;
	}
	if ((size_t)(end - p) != strlen("application/json") ||
			strncasecmp(p, "application/json", (size_t)(end - p)) != 0) {
		return false;
	}
	p += strcspn(p, ";");
	while (*p == ';') {
		const char *key, *val;
		size_t klen, vlen;
		char *dst = NULL;

		p++;
		while (*p == ' ' || *p == '\t') {
			p++;
		}
		key = p;
		klen = strcspn(p, "=;");
		if (p[klen] != '=') {
			p += klen;
			continue;
		}
		val = p + klen + 1;
		while (klen && (key[klen - 1] == ' ' || key[klen - 1] == '\t')) {
			klen--;
		}
		while (*val == ' ' || *val == '\t') {
			val++;
		}
		if (*val == '"') {
			val++;
			vlen = strcspn(val, "\"");
			p = val + vlen + (val[vlen] == '"');
		} else {
			vlen = strcspn(val, "; \t");
			p = val + vlen;
		}
		p += strcspn(p, ";");
		if (klen == 1 && strncasecmp(key, "g", 1) == 0) {
			dst = g;
		} else if (klen == 1 && strncasecmp(key, "v", 1) == 0) {
			dst = v;
		} else if (klen == 2 && strncasecmp(key, "as", 2) == 0) {
			dst = as;
		}
		if (dst && vlen < 64) {
			memcpy(dst, val, vlen);
			dst[vlen] = '\0';
		}
	}
	return strcmp(g, "apidiscovery.k8s.io") == 0 &&
			(strcmp(v, "v2") == 0 || strcmp(v, "v2beta1") == 0) &&
			strcmp(as, "APIGroupDiscoveryList") == 0;
}

struct fetcher {
	kinf_discovery_fetch_func fn;
	void *userdata;
};

/*
 * GET path. 0 with the body in resp; 1 when the server said 404 or 406
 * (no such document); else the error.
 */
static int get(struct fetcher *f, const char *path, const char *accept,
		struct kinf_http_response *resp, struct kinf_error *reterr) {
	int rc;

	memset(resp, 0, sizeof(*resp));
	kinf_log(3, "discovery: GET %s", path);
	rc = f->fn(path, accept, resp, reterr, f->userdata);
	if (rc == -KINF_EHTTP && (resp->status == 404 || resp->status == 406)) {
		kinf_error_clear(reterr);
		return 1;
	}
	return rc;
}

/*
 * Fetch the APIResourceList of every version of g (legacy discovery).
 * A group version the server cannot serve (an HTTP error, e.g. 503 from
 * an unavailable aggregated API) is left out and marks the result
 * partial, as client-go's ErrGroupDiscoveryFailed.
 */
static int fetch_versions(struct fetcher *f, struct kinf_discovery *d,
		struct group *g, struct kinf_error *reterr) {
	struct kinf_buf path = {0};
	struct kinf_http_response resp;
	int rc = 0;

	for (size_t i = 0; i < g->n_versions; ) {
		struct version *v = &g->versions[i];
		struct kinf_error err = {0};

		kinf_buf_reset(&path);
		if (g->name[0]) {
			rc = kinf_buf_printf(&path, "/apis/%s/%s", g->name, v->name);
		} else {
			rc = kinf_buf_printf(&path, "/api/%s", v->name);
		}
		if (rc < 0) {
			kinf_error_set(reterr, rc, "out of memory");
			break;
		}
		rc = get(f, path.data, LEGACY_ACCEPT, &resp, &err);
		if (rc == 1 || rc == -KINF_EHTTP) {
			kinf_log(1, "discovery: couldn't get resource list for %s%s%s: %s",
					g->name, g->name[0] ? "/" : "", v->name,
					rc == 1 ? "not found" : err.message);
			kinf_http_response_release(&resp);
			d->partial = true;
			disc_remove_version(g, i);
			rc = 0;
			continue;
		}
		if (rc == 0) {
			rc = disc_parse_resource_list(v, path.data, resp.body.data,
					resp.body.len, &err);
		}
		kinf_http_response_release(&resp);
		if (rc < 0) {
			if (reterr) {
				*reterr = err;
			}
			break;
		}
		i++;
	}
	kinf_buf_release(&path);
	return rc;
}

static int fetch_all(struct fetcher *f, struct kinf_discovery *d,
		struct kinf_error *reterr) {
	static const char *const docs[] = { "/api", "/apis" };
	struct kinf_http_response resp;
	int rc = 0;

	for (size_t i = 0; i < 2 && rc >= 0; i++) {
		size_t first = d->n_groups;
		rc = get(f, docs[i], KINF_DISCOVERY_ACCEPT, &resp, reterr);
		if (rc == 1) {
			/* client-go: 404 or 406 means no groups there. */
			kinf_log(2, "discovery: %s not served", docs[i]);
			rc = 0;
		} else if (rc == 0 && kinf_discovery_is_aggregated(resp.content_type)) {
			rc = disc_parse_aggregated(d, docs[i], resp.body.data, resp.body.len,
					reterr);
		} else if (rc == 0) {
			kinf_log(2, "discovery: %s is not aggregated (%s)", docs[i],
					resp.content_type ? resp.content_type : "no type");
			if (i == 0) {
				rc = disc_parse_api_versions(d, resp.body.data, resp.body.len,
						reterr);
			} else {
				rc = disc_parse_group_list(d, resp.body.data, resp.body.len,
						reterr);
			}
			for (size_t j = first; j < d->n_groups && rc == 0; ) {
				rc = fetch_versions(f, d, &d->groups[j], reterr);
				if (rc == 0 && d->groups[j].n_versions == 0) {
					disc_remove_group(d, j);
				} else {
					j++;
				}
			}
		}
		kinf_http_response_release(&resp);
	}
	return rc;
}

int disc_http_fetch(const char *path, const char *accept,
		struct kinf_http_response *ret_resp, struct kinf_error *reterr,
		void *userdata) {
	struct kinf_http_request req = {
		.path = path,
		.accept = accept,
	};

	return kinf_http_get(userdata, &req, ret_resp, reterr);
}

int kinf_discovery_load_with(kinf_discovery_fetch_func fetch, void *userdata,
		const char *server, const struct kinf_discovery_opts *opts,
		struct kinf_discovery **ret, struct kinf_error *reterr) {
	static const struct kinf_discovery_opts defaults = {0};
	struct fetcher f = { fetch, userdata };
	struct kinf_discovery *d = NULL;
	char *dir;
	long ttl;
	int rc;

	if (!opts) {
		opts = &defaults;
	}
	ttl = opts->ttl_s > 0 ? opts->ttl_s : DEFAULT_TTL_S;
	dir = server ? kinf_discovery_cache_dir(server, opts) : NULL;
	if (dir && !opts->refresh && disc_cache_read(dir, server, ttl, &d) == 0) {
		*ret = d;
		free(dir);
		return 0;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = fetch_all(&f, d, reterr)) < 0) {
		goto out;
	}
	if ((rc = disc_finish(d)) < 0) {
		kinf_error_set(reterr, rc, "out of memory");
		goto out;
	}
	if (dir && !d->partial) {
		disc_cache_write(dir, server, d);
	}
	*ret = d;
	d = NULL;
out:
	kinf_discovery_free(d);
	free(dir);
	return rc;
}

int kinf_discovery_load(struct kinf_http *http,
		const struct kinf_discovery_opts *opts,
		struct kinf_discovery **ret, struct kinf_error *reterr) {
	return kinf_discovery_load_with(disc_http_fetch, http, kinf_http_server(http),
			opts, ret, reterr);
}
