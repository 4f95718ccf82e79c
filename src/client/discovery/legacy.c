#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "discovery.h"
#include "discovery_int.h"
#include "err.h"

/* ---- legacy discovery (APIVersions, APIGroupList, APIResourceList) ---- */

/* /api: APIVersions. Adds the core group with its versions, no resources. */
int disc_parse_api_versions(struct kinf_discovery *d, const char *data,
		size_t len, struct kinf_error *reterr) {
	struct pctx c = { "/api", reterr };
	json_t *versions, *e, *root = disc_load_list(&c, data, len, "APIVersions",
			"versions", &versions);
	struct group *g = NULL;
	size_t i;
	int rc = 0;

	if (!root) {
		return -KINF_EJSON;
	}
	json_array_foreach(versions, i, e) {
		const char *name = json_string_value(e);
		if (!name || !*name) {
			char at[64];
			disc_at_path(at, sizeof(at), "versions[%zu]", i);
			rc = disc_type_error(&c, at, "non-empty string");
			goto out;
		}
		if (!g && !(g = disc_find_group(d, ""))) {
			if (!(g = disc_add_group(d, ""))) {
				rc = -KINF_ENOMEM;
				goto out;
			}
		}
		if (!disc_find_version(g, name) && !disc_add_version(g, name)) {
			rc = -KINF_ENOMEM;
			goto out;
		}
	}
out:
	json_decref(root);
	return rc;
}

/*
 * /apis: APIGroupList. Adds each group with the preferred version first,
 * then the others in the order listed (client-go's resource priority).
 */
int disc_parse_group_list(struct kinf_discovery *d, const char *data,
		size_t len, struct kinf_error *reterr) {
	struct pctx c = { "/apis", reterr };
	json_t *groups, *e, *root = disc_load_list(&c, data, len, "APIGroupList",
			"groups", &groups);
	size_t i;
	int rc = 0;

	if (!root) {
		return -KINF_EJSON;
	}
	json_array_foreach(groups, i, e) {
		const char *name, *preferred = "";
		json_t *versions, *pv, *ve;
		struct group *g;
		char at[64];
		size_t j;

		disc_at_path(at, sizeof(at), "groups[%zu]", i);
		if (!json_is_object(e)) {
			rc = disc_type_error(&c, at, "object");
			goto out;
		}
		if ((rc = disc_member_str(&c, e, at, "name", &name)) < 0 ||
				(rc = disc_member(&c, e, at, "versions", J_ARRAY,
					&versions)) < 0 ||
				(rc = disc_member(&c, e, at, "preferredVersion", J_OBJECT,
					&pv)) < 0) {
			goto out;
		}
		if ((rc = disc_check_nonempty(&c, at, "name", name)) < 0) {
			goto out;
		}
		if (pv) {
			char pat[96];
			disc_at_path(pat, sizeof(pat), "%s.preferredVersion", at);
			if ((rc = disc_member_str(&c, pv, pat, "version", &preferred)) < 0) {
				goto out;
			}
		}
		if (disc_find_group(d, name)) {
			continue;
		}
		if (!(g = disc_add_group(d, name))) {
			rc = -KINF_ENOMEM;
			goto out;
		}
		/* Two passes: the preferred version, then the rest in order. */
		for (int pass = 0; pass < 2; pass++) {
			json_array_foreach(versions, j, ve) {
				char vat[96];
				const char *vname;
				disc_at_path(vat, sizeof(vat), "%s.versions[%zu]", at, j);
				if (!json_is_object(ve)) {
					rc = disc_type_error(&c, vat, "object");
					goto out;
				}
				if ((rc = disc_member_str(&c, ve, vat, "version", &vname)) < 0) {
					goto out;
				}
				if (!*vname) {
					rc = disc_type_error(&c, vat, "version");
					goto out;
				}
				if ((pass == 0) != (strcmp(vname, preferred) == 0) ||
						disc_find_version(g, vname)) {
					continue;
				}
				if (!disc_add_version(g, vname)) {
					rc = -KINF_ENOMEM;
					goto out;
				}
			}
		}
		if (g->n_versions == 0) {
			disc_pop_group(d);
		}
	}
out:
	json_decref(root);
	return rc;
}

/* /api/V or /apis/G/V: APIResourceList, into v. */
int disc_parse_resource_list(struct version *v, const char *doc,
		const char *data, size_t len, struct kinf_error *reterr) {
	struct pctx c = { doc, reterr };
	json_t *resources, *e, *root = disc_load_list(&c, data, len,
			"APIResourceList", "resources", &resources);
	size_t i;
	int rc = 0;

	if (!root) {
		return -KINF_EJSON;
	}
	json_array_foreach(resources, i, e) {
		const char *name, *singular, *kind;
		char **short_names = NULL, **verbs = NULL, **categories = NULL;
		json_t *ns;
		char at[64];

		disc_at_path(at, sizeof(at), "resources[%zu]", i);
		if (!json_is_object(e)) {
			rc = disc_type_error(&c, at, "object");
			goto out;
		}
		if ((rc = disc_member_str(&c, e, at, "name", &name)) < 0 ||
				(rc = disc_member_str(&c, e, at, "singularName",
					&singular)) < 0 ||
				(rc = disc_member_str(&c, e, at, "kind", &kind)) < 0 ||
				(rc = disc_member(&c, e, at, "namespaced", J_BOOL, &ns)) < 0) {
			goto out;
		}
		if ((rc = disc_check_nonempty(&c, at, "name", name)) < 0) {
			goto out;
		}
		if ((rc = disc_member_strv(&c, e, at, "verbs", &verbs)) < 0) {
			goto out;
		}
		if ((rc = disc_member_strv(&c, e, at, "shortNames", &short_names)) < 0) {
			disc_strv_free(verbs);
			goto out;
		}
		if ((rc = disc_member_strv(&c, e, at, "categories", &categories)) < 0) {
			disc_strv_free(verbs);
			disc_strv_free(short_names);
			goto out;
		}
		rc = disc_add_resource(v, name, singular, kind, ns && json_is_true(ns),
				short_names, verbs, categories);
		if (rc < 0) {
			goto out;
		}
	}
out:
	json_decref(root);
	return rc;
}
