#ifndef KINF_DISCOVERY_H
#define KINF_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct kinf_http;
struct kinf_http_response;

/* The Accept header of the aggregated /api and /apis requests (client-go's). */
#define KINF_DISCOVERY_ACCEPT \
	"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," \
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," \
	"application/json"

/*
 * API discovery and resource-name resolution as kubectl does them:
 * aggregated discovery (/api and /apis with apidiscovery.k8s.io/v2) with a
 * fallback to the legacy per-group documents, cached on disk under
 * $XDG_CACHE_HOME/kinf/discovery/<server>/ with a TTL. Implemented in
 * src/discovery/ (its file map: discovery_int.h).
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
	const char *const *categories;	/* NULL-terminated: "all" for pods, services, ... */
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
KINF_MUST_CHECK int kinf_discovery_load(struct kinf_http *http,
		const struct kinf_discovery_opts *opts,
		struct kinf_discovery **ret, struct kinf_error *reterr);

/*
 * How kinf_discovery_load_with() GETs a path, as kinf_http_get() does:
 * accept is NULL for application/json; 0 with ret_resp's body and
 * content_type filled for a 2xx answer, else a negative KINF_E* with
 * ret_resp->status set for HTTP answers (-KINF_EHTTP). ret_resp is
 * released with kinf_http_response_release().
 */
typedef int (*kinf_discovery_fetch_func)(const char *path, const char *accept,
		struct kinf_http_response *ret_resp, struct kinf_error *reterr,
		void *userdata);

/*
 * kinf_discovery_load() with the requests going through fetch (tests, or
 * another transport); server ("https://host:port") names the cache
 * directory and is checked against the cache's contents.
 */
KINF_MUST_CHECK int kinf_discovery_load_with(kinf_discovery_fetch_func fetch, void *userdata,
		const char *server, const struct kinf_discovery_opts *opts,
		struct kinf_discovery **ret, struct kinf_error *reterr);

/*
 * Build discovery from documents in memory (for tests and fuzzing): the
 * aggregated /api and /apis documents (apidiscovery.k8s.io/v2
 * APIGroupDiscoveryList JSON). Either may be NULL.
 */
KINF_MUST_CHECK int kinf_discovery_from_aggregated(const char *api_json, size_t api_len,
		const char *apis_json, size_t apis_len,
		struct kinf_discovery **ret, struct kinf_error *reterr);

void kinf_discovery_free(struct kinf_discovery *disc);

/*
 * True when disc came from the disk cache: a name that does not resolve may
 * be a new CRD (kinf_discovery_resolve_deferred() loads again).
 */
bool kinf_discovery_from_cache(const struct kinf_discovery *disc);

/*
 * True when some group version could not be read (HTTP error on a legacy
 * /apis/G/V, or a Stale aggregated version); such results are not cached.
 */
bool kinf_discovery_partial(const struct kinf_discovery *disc);

/*
 * Resolve a name as kubectl does: plural, singular, short name, kind
 * (case-insensitive), "resource.group", "resource.version.group"; core/v1
 * first, then groups in discovery order, preferred versions first.
 * Subresources are not resources. Unknown names: -KINF_ENOTFOUND with
 * 'unknown resource type "podz"' and, when one is close (edit distance),
 * ', did you mean "pods"?'. A discovery with no groups at all (404 on
 * /api and /apis) resolves nothing: -KINF_EHTTP, "the server could not
 * find the requested resource", as kubectl says there.
 */
KINF_MUST_CHECK int kinf_discovery_resolve(const struct kinf_discovery *disc, const char *name,
		const struct kinf_resource **ret, struct kinf_error *reterr);

/*
 * Resolve name as client-go's DeferredDiscoveryRESTMapper does: in *disc,
 * and when it is not there and *disc came from the disk cache (a CRD
 * made since, say), in discovery loaded again from the server through
 * http (opts as kinf_discovery_load() had them; the cache is refreshed).
 * *disc is then the new discovery; the one it replaced lives on inside
 * it, so the resources resolved there stay valid until *disc is freed.
 * Errors as kinf_discovery_resolve(), or the reload's, prefixed
 * "discovery".
 */
KINF_MUST_CHECK int kinf_discovery_resolve_deferred(struct kinf_discovery **disc, struct kinf_http *http,
		const struct kinf_discovery_opts *opts, const char *name,
		const struct kinf_resource **ret, struct kinf_error *reterr);
/* The same with the requests through fetch, as kinf_discovery_load_with(). */
KINF_MUST_CHECK int kinf_discovery_resolve_deferred_with(struct kinf_discovery **disc,
		kinf_discovery_fetch_func fetch, void *userdata, const char *server,
		const struct kinf_discovery_opts *opts, const char *name,
		const struct kinf_resource **ret, struct kinf_error *reterr);

/* Every resource (preferred versions only), for completion. */
size_t kinf_discovery_count(const struct kinf_discovery *disc);
const struct kinf_resource *kinf_discovery_at(const struct kinf_discovery *disc,
		size_t i);

/*
 * The directory the cache for server lives in: DIR/discovery/HOST_PORT with
 * the scheme dropped and anything but [A-Za-z0-9._-] turned into '_'
 * ("127.0.0.1_6443"). NULL when caching is off or there is no home
 * directory (or out of memory). Caller frees.
 */
char *kinf_discovery_cache_dir(const char *server,
		const struct kinf_discovery_opts *opts);

/*
 * Whether a Content-Type names an aggregated discovery document
 * (application/json with g=apidiscovery.k8s.io, v=v2 or v2beta1,
 * as=APIGroupDiscoveryList), as client-go checks the answer.
 */
bool kinf_discovery_is_aggregated(const char *content_type);

/*
 * The API path prefix of a resource's collection: "/api/v1" or
 * "/apis/apps/v1", then "/namespaces/NS" when namespace is not NULL and the
 * resource is namespaced, then "/pods". Caller frees.
 */
char *kinf_resource_path(const struct kinf_resource *res, const char *namespace);

#endif
