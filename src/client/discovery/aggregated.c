#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "discovery.h"
#include "discovery_int.h"
#include "err.h"
#include "log.h"

/* ---- aggregated discovery (apidiscovery.k8s.io/v2 and v2beta1) ---- */

static int parse_agg_resource(struct pctx *c, struct version *v, json_t *obj,
		const char *where) {
	const char *name, *singular, *scope, *kind = "";
	json_t *rk, *subs;
	char **short_names = NULL, **verbs = NULL, **categories = NULL;
	int rc;

	if (!json_is_object(obj)) {
		return disc_type_error(c, where, "object");
	}
	if ((rc = disc_member_str(c, obj, where, "resource", &name)) < 0) {
		return rc;
	}
	if ((rc = disc_check_nonempty(c, where, "resource", name)) < 0) {
		return rc;
	}
	if ((rc = disc_member(c, obj, where, "responseKind", J_OBJECT, &rk)) < 0 ||
			(rc = disc_member_str(c, obj, where, "scope", &scope)) < 0 ||
			(rc = disc_member_str(c, obj, where, "singularResource",
				&singular)) < 0 ||
			(rc = disc_member(c, obj, where, "subresources", J_ARRAY,
				&subs)) < 0) {
		return rc;
	}
	if (rk) {
		char at[256];
		disc_at_path(at, sizeof(at), "%s.responseKind", where);
		if ((rc = disc_member_str(c, rk, at, "kind", &kind)) < 0) {
			return rc;
		}
	}
	if ((rc = disc_member_strv(c, obj, where, "verbs", &verbs)) < 0) {
		return rc;
	}
	if ((rc = disc_member_strv(c, obj, where, "shortNames", &short_names)) < 0) {
		disc_strv_free(verbs);
		return rc;
	}
	if ((rc = disc_member_strv(c, obj, where, "categories", &categories)) < 0) {
		disc_strv_free(verbs);
		disc_strv_free(short_names);
		return rc;
	}
	if (!*kind) {
		kinf_log(3, "discovery: %s: resource %s has no responseKind, skipped",
				c->doc, name);
	}
	return disc_add_resource(v, name, singular, kind,
			strcmp(scope, "Namespaced") == 0, short_names, verbs, categories);
}

static int parse_agg_version(struct pctx *c, struct kinf_discovery *d,
		struct group *g, json_t *obj, const char *where) {
	const char *name, *freshness;
	json_t *resources, *e;
	struct version *v;
	size_t i;
	int rc;

	if (!json_is_object(obj)) {
		return disc_type_error(c, where, "object");
	}
	if ((rc = disc_member_str(c, obj, where, "version", &name)) < 0 ||
			(rc = disc_member_str(c, obj, where, "freshness", &freshness)) < 0 ||
			(rc = disc_member(c, obj, where, "resources", J_ARRAY,
				&resources)) < 0) {
		return rc;
	}
	if ((rc = disc_check_nonempty(c, where, "version", name)) < 0) {
		return rc;
	}
	if (strcmp(freshness, "Stale") == 0) {
		/* client-go leaves stale group versions out and reports them. */
		kinf_log(1, "discovery: %s%s%s is stale, skipped", g->name,
				*g->name ? "/" : "", name);
		d->partial = true;
		return 0;
	}
	if (disc_find_version(g, name)) {
		return 0;
	}
	if (!(v = disc_add_version(g, name))) {
		return -KINF_ENOMEM;
	}
	json_array_foreach(resources, i, e) {
		char at[256];
		disc_at_path(at, sizeof(at), "%s.resources[%zu]", where, i);
		if ((rc = parse_agg_resource(c, v, e, at)) < 0) {
			return rc;
		}
	}
	return 0;
}

static int parse_agg_group(struct pctx *c, struct kinf_discovery *d,
		json_t *obj, const char *where) {
	const char *name = "";
	json_t *meta, *versions, *e;
	struct group *g;
	size_t i;
	int rc;

	if (!json_is_object(obj)) {
		return disc_type_error(c, where, "object");
	}
	if ((rc = disc_member(c, obj, where, "metadata", J_OBJECT, &meta)) < 0 ||
			(rc = disc_member(c, obj, where, "versions", J_ARRAY,
				&versions)) < 0) {
		return rc;
	}
	if (meta) {
		char at[256];
		disc_at_path(at, sizeof(at), "%s.metadata", where);
		if ((rc = disc_member_str(c, meta, at, "name", &name)) < 0) {
			return rc;
		}
	}
	if (disc_find_group(d, name)) {
		kinf_log(2, "discovery: %s: group \"%s\" listed twice", c->doc, name);
		return 0;
	}
	if (!(g = disc_add_group(d, name))) {
		return -KINF_ENOMEM;
	}
	json_array_foreach(versions, i, e) {
		char at[256];
		disc_at_path(at, sizeof(at), "%s.versions[%zu]", where, i);
		if ((rc = parse_agg_version(c, d, g, e, at)) < 0) {
			return rc;
		}
	}
	if (g->n_versions == 0) {
		disc_pop_group(d);
	}
	return 0;
}

/* Walk an APIGroupDiscoveryList already loaded. */
int disc_parse_agg_list(struct pctx *c, struct kinf_discovery *d,
		json_t *root) {
	json_t *items, *e;
	size_t i;
	int rc;

	if ((rc = disc_list_member(c, root, "APIGroupDiscoveryList", "items",
			&items)) < 0) {
		return rc;
	}
	json_array_foreach(items, i, e) {
		char at[64];
		disc_at_path(at, sizeof(at), "items[%zu]", i);
		if ((rc = parse_agg_group(c, d, e, at)) < 0) {
			return rc;
		}
	}
	return 0;
}

int disc_parse_aggregated(struct kinf_discovery *d, const char *doc,
		const char *data, size_t len, struct kinf_error *reterr) {
	struct pctx c = { doc, reterr };
	json_t *root = disc_load_json(&c, data, len);
	int rc;

	if (!root) {
		return -KINF_EJSON;
	}
	rc = disc_parse_agg_list(&c, d, root);
	json_decref(root);
	return rc;
}


int kinf_discovery_from_aggregated(const char *api_json, size_t api_len,
		const char *apis_json, size_t apis_len,
		struct kinf_discovery **ret, struct kinf_error *reterr) {
	struct kinf_discovery *d = calloc(1, sizeof(*d));
	int rc;

	if (!d) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (api_json &&
			(rc = disc_parse_aggregated(d, "/api", api_json, api_len, reterr)) < 0) {
		goto fail;
	}
	if (apis_json &&
			(rc = disc_parse_aggregated(d, "/apis", apis_json, apis_len,
				reterr)) < 0) {
		goto fail;
	}
	if ((rc = disc_finish(d)) < 0) {
		kinf_error_fill(reterr, rc, "out of memory");
		goto fail;
	}
	*ret = d;
	return 0;
fail:
	kinf_discovery_free(d);
	return rc;
}
