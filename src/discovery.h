#ifndef KINF_DISCOVERY_H
#define KINF_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct kinf_http;

/*
 * API discovery and resource-name resolution as kubectl does them:
 * aggregated discovery (/api and /apis with apidiscovery.k8s.io/v2) with a
 * fallback to the legacy per-group documents, cached on disk under
 * $XDG_CACHE_HOME/kinf/discovery/<server>/ with a TTL.
 */
struct kinf_discovery;

/* One resolved resource. Strings are owned by the discovery that returned it. */
struct kinf_resource {
	const char *group;		/* "" for core */
	const char *version;		/* "v1" */
	const char *resource;		/* plural: "pods" */
	const char *singular;		/* "pod" */
	const char *kind;		/* "Pod" */
	bool namespaced;
	const char *const *short_names;	/* NULL-terminated */
	const char *const *verbs;	/* NULL-terminated */
};

struct kinf_discovery_opts {
	const char *cache_dir;	/* NULL: $XDG_CACHE_HOME/kinf or ~/.cache/kinf; "" disables */
	long ttl_s;		/* 0: 6 hours, as kubectl */
	bool refresh;		/* ignore the cache (--refresh) */
};

/*
 * Load discovery for the server http talks to: from the disk cache when
 * fresh, else from the server (aggregated first, legacy on 404/406 or a
 * non-aggregated answer). http is used only during this call.
 */
int kinf_discovery_load(struct kinf_http *http,
		const struct kinf_discovery_opts *opts,
		struct kinf_discovery **ret, struct kinf_error *reterr);

/*
 * Build discovery from documents in memory (for tests and fuzzing): the
 * aggregated /api and /apis documents (apidiscovery.k8s.io/v2
 * APIGroupDiscoveryList JSON). Either may be NULL.
 */
int kinf_discovery_from_aggregated(const char *api_json, size_t api_len,
		const char *apis_json, size_t apis_len,
		struct kinf_discovery **ret, struct kinf_error *reterr);

void kinf_discovery_free(struct kinf_discovery *disc);

/*
 * Resolve a name as kubectl does: plural, singular, short name, kind
 * (case-insensitive), "resource.group", "resource.version.group"; core/v1
 * first, then groups in discovery order, preferred versions first.
 * Subresources are not resources. Unknown names: -KINF_ENOTFOUND with
 * 'unknown resource type "podz"' and, when one is close (edit distance),
 * ', did you mean "pods"?'.
 */
int kinf_discovery_resolve(const struct kinf_discovery *disc, const char *name,
		const struct kinf_resource **ret, struct kinf_error *reterr);

/* Every resource (preferred versions only), for completion. */
size_t kinf_discovery_count(const struct kinf_discovery *disc);
const struct kinf_resource *kinf_discovery_at(const struct kinf_discovery *disc,
		size_t i);

/*
 * The API path prefix of a resource's collection: "/api/v1" or
 * "/apis/apps/v1", then "/namespaces/NS" when namespace is not NULL and the
 * resource is namespaced, then "/pods". Caller frees.
 */
char *kinf_resource_path(const struct kinf_resource *res, const char *namespace);

#endif
