#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "discovery.h"
#include "discovery_int.h"
#include "jsonnum.h"
#include "err.h"

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
	disc_type_fail(c, where, what);
	return -KINF_EJSON;
}

void disc_type_fail(struct pctx *c, const char *where, const char *what) {
	kinf_error_fill(c->reterr, KINF_EJSON, "%s: %s: %s expected", c->doc, where, what);
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
	json_error_t jerr = {0};
	json_t *root;

	if (!data) {
		data = "";
		len = 0;
	}
	root = json_loadb(data, len, JSON_FLAGS, &jerr);
	if (!root) {
		if (kinf_jsonnum_load_error(data, len, JSON_FLAGS, &jerr, c->reterr) == -KINF_EJSON) {
			kinf_error_prefix(c->reterr, "%s", c->doc);
		}
		return NULL;
	}
	if (!json_is_object(root)) {
		disc_type_fail(c, "document", "object");
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

