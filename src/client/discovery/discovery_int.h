#ifndef KINF_DISCOVERY_INT_H
#define KINF_DISCOVERY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "discovery.h"
#include "err.h"
#include "http.h"

/*
 * Discovery as client-go's discovery and restmapper packages do it. The model
 * is groups in priority order (core first, then /apis in the order the server
 * listed them), each with its versions in preference order (the preferred one
 * first) and each version with its resources, subresources left out. The
 * disk cache is one file holding the whole model as an aggregated
 * APIGroupDiscoveryList, so the aggregated parser reads it back.
 *
 * Where each part lives (calls go down this list, never up):
 *   restmapper.c  resolution as kubectl's RESTMapper does it, and the
 *                 deferred one (a miss in the cache asks the server again)
 *   fetch.c       the requests (discovery_client.go): aggregated first,
 *                 the legacy documents as the fallback, the cache in front
 *   diskcache.c   the disk cache (cached/disk)
 *   aggregated.c  apidiscovery.k8s.io/v2 and v2beta1 documents
 *                 (aggregated_discovery.go), the cache's format too
 *   legacy.c      APIVersions, APIGroupList, APIResourceList
 *   model.c       the model: groups, versions, resources; the JSON readers
 *                 the parsers share; a walk in priority order; finishing
 */

#define CACHE_FILE "discovery.json"
#define CACHE_KIND "KinfDiscoveryCache"
#define CACHE_VERSION 1
#define DEFAULT_TTL_S (6L * 60 * 60)
#define MAX_CACHE_BYTES ((off_t)64 << 20)
#define JSON_FLAGS JSON_REJECT_DUPLICATES
#define LEGACY_ACCEPT "application/json"

struct res {
	struct kinf_resource pub;	/* filled in by disc_finish() */
	char *name;
	char *singular;
	char *kind;
	bool namespaced;
	char **short_names;		/* NULL-terminated, never NULL */
	char **verbs;			/* NULL-terminated, never NULL */
	char **categories;		/* NULL-terminated, never NULL */
};

struct version {
	char *name;
	struct res *res;
	size_t n_res;
	size_t cap_res;
};

struct group {
	char *name;			/* "" for core */
	struct version *versions;	/* [0] is the preferred version */
	size_t n_versions;
	size_t cap_versions;
};

struct kinf_discovery {
	struct group *groups;
	size_t n_groups;
	size_t cap_groups;
	const struct kinf_resource **flat;	/* preferred, for _count/_at */
	size_t n_flat;
	bool partial;		/* a group version could not be read */
	bool from_cache;
	/* What a refresh replaced: resources resolved there are still in use. */
	struct kinf_discovery *replaced;
};

/* Context for error messages while walking one document. */
struct pctx {
	const char *doc;	/* "/apis", "cache" */
	struct kinf_error *reterr;
};

enum jtype { J_OBJECT, J_ARRAY, J_STRING, J_BOOL };

/*
 * A walk over the resources in priority order: each group in turn, each of
 * its versions (the preferred one first), each version's resources. group
 * (exact, or a prefix of the group's name when prefix is set) and version
 * restrict it when not NULL. Start one as (struct walk){ .d = d, filters };
 * g and v are the group and version of the resource walk_next last returned.
 */
struct walk {
	const struct kinf_discovery *d;
	const char *group;
	const char *version;
	bool prefix;
	size_t i, j, k;
	struct group *g;
	struct version *v;
};

/* model.c */
void disc_strv_free(char **v);
struct group *disc_find_group(const struct kinf_discovery *d, const char *name);
struct version *disc_find_version(struct group *g, const char *name);
struct group *disc_add_group(struct kinf_discovery *d, const char *name);
/* Drop the last group added (it turned out to have no versions). */
void disc_pop_group(struct kinf_discovery *d);
void disc_remove_group(struct kinf_discovery *d, size_t i);
struct version *disc_add_version(struct group *g, const char *name);
void disc_remove_version(struct group *g, size_t i);
/*
 * JSON readers: absent and null read as "not there", wrong types fail
 * (-KINF_EJSON, with where in the document).
 */
/* Where in a document, for error messages (truncated when very deep). */
void disc_at_path(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
KINF_MUST_CHECK int disc_type_error(struct pctx *c, const char *where, const char *what);
/* The same as a statement (kinf_error_fill to its kinf_error_set). */
void disc_type_fail(struct pctx *c, const char *where, const char *what);
KINF_MUST_CHECK int disc_member(struct pctx *c, json_t *obj, const char *where,
		const char *key, enum jtype type, json_t **ret);
/* A string member, "" when absent or null. */
KINF_MUST_CHECK int disc_member_str(struct pctx *c, json_t *obj, const char *where,
		const char *key, const char **ret);
/* -KINF_EJSON, "WHERE.KEY: non-empty string expected", when value is "". */
KINF_MUST_CHECK int disc_check_nonempty(struct pctx *c, const char *where, const char *key,
		const char *value);
/* An array of strings as a NULL-terminated vector (empty when absent). */
KINF_MUST_CHECK int disc_member_strv(struct pctx *c, json_t *obj, const char *where,
		const char *key, char ***ret);
/* Check an optional "kind" names the document type we expect. */
KINF_MUST_CHECK int disc_check_kind(struct pctx *c, json_t *root, const char *kind);
json_t *disc_load_json(struct pctx *c, const char *data, size_t len);
/*
 * The array member key of a document whose (optional) kind must be kind,
 * into *ret (NULL when absent or null): the list each discovery document is.
 */
KINF_MUST_CHECK int disc_list_member(struct pctx *c, json_t *root, const char *kind,
		const char *key, json_t **ret);
/*
 * load_json, then list_member: the document, which the caller frees, or
 * NULL with c->reterr set (KINF_EJSON).
 */
json_t *disc_load_list(struct pctx *c, const char *data, size_t len,
		const char *kind, const char *key, json_t **ret);
/*
 * Append one resource to v. name, kind and the rest come from either
 * format; subresources ("pods/status") and resources without a kind are
 * skipped, as client-go's NewDiscoveryRESTMapper and convertAPIResource do.
 */
KINF_MUST_CHECK int disc_add_resource(struct version *v, const char *name,
		const char *singular, const char *kind, bool namespaced,
		char **short_names, char **verbs, char **categories);
/* The next resource of the walk, or NULL at its end. */
struct res *disc_walk_next(struct walk *w);
/*
 * Put core first (PriorityRESTMapper: "/v1 is special"), point the public
 * structs at the strings, and list each resource once per group in its
 * preferred version for _count/_at (as ServerPreferredResources does).
 */
KINF_MUST_CHECK int disc_finish(struct kinf_discovery *d);

/* aggregated.c */
/* Walk an APIGroupDiscoveryList already loaded. */
KINF_MUST_CHECK int disc_parse_agg_list(struct pctx *c, struct kinf_discovery *d, json_t *root);
/* An aggregated /api or /apis document (doc names it in errors) into d. */
KINF_MUST_CHECK int disc_parse_aggregated(struct kinf_discovery *d, const char *doc,
		const char *data, size_t len, struct kinf_error *reterr);

/* legacy.c */
/* /api: APIVersions. Adds the core group with its versions, no resources. */
KINF_MUST_CHECK int disc_parse_api_versions(struct kinf_discovery *d, const char *data,
		size_t len, struct kinf_error *reterr);
/*
 * /apis: APIGroupList. Adds each group with the preferred version first,
 * then the others in the order listed (client-go's resource priority).
 */
KINF_MUST_CHECK int disc_parse_group_list(struct kinf_discovery *d, const char *data,
		size_t len, struct kinf_error *reterr);
/* /api/V or /apis/G/V: APIResourceList, into v. */
KINF_MUST_CHECK int disc_parse_resource_list(struct version *v, const char *doc,
		const char *data, size_t len, struct kinf_error *reterr);

/* diskcache.c */
/*
 * Write the cache file atomically: a temporary file in the same directory
 * (mkstemp: mode 0600), then rename. Failures are logged, never fatal.
 */
void disc_cache_write(const char *dir, const char *server,
		const struct kinf_discovery *d);
/*
 * Read a fresh cache for server. 0 with *ret set, or 1 for a miss (absent,
 * stale, another server's, or unreadable: a corrupt file is only logged).
 */
KINF_MUST_CHECK int disc_cache_read(const char *dir, const char *server, long ttl_s,
		struct kinf_discovery **ret);

/* fetch.c */
/* kinf_discovery_fetch_func for a struct kinf_http (userdata). */
KINF_MUST_CHECK int disc_http_fetch(const char *path, const char *accept,
		struct kinf_http_response *ret_resp, struct kinf_error *reterr,
		void *userdata);

#endif
