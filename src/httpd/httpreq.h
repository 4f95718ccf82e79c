#ifndef KINF_HTTPREQ_H
#define KINF_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/*
 * The request side of kinf's read-only Kubernetes API server: an HTTP/1.x
 * request head parser with hard limits, the Kubernetes query parameters
 * (ListOptions as the apiserver decodes them), the Accept header's media
 * types with their as/v/g parameters, and the apiserver's path router
 * (AS endpoints/request/requestinfo.go). Pure functions, no I/O: httpd.c
 * feeds them bytes, the fuzz harness feeds them anything.
 */

/* Limits on a request head and body; 0 in a field means its default. */
struct kinf_httpreq_limits {
	size_t max_line;	/* request line, default 16 KiB (414 past it) */
	size_t max_head;	/* request line plus headers, default 64 KiB (431) */
	size_t max_headers;	/* header fields, default 100 (431) */
	size_t max_body;	/* Content-Length, default 1 MiB (413) */
};

#define KINF_HTTPREQ_MAX_LINE 16384
#define KINF_HTTPREQ_MAX_HEAD 65536
#define KINF_HTTPREQ_MAX_HEADERS 100
#define KINF_HTTPREQ_MAX_BODY 1048576

struct kinf_httpreq_header {
	const char *name;	/* as sent; compare case-insensitively */
	const char *value;	/* surrounding spaces and tabs removed */
};

/* One query parameter, percent- and '+'-decoded. */
struct kinf_httpreq_param {
	const char *name;
	const char *value;	/* "" for "?watch" with no '=' */
	bool bad;		/* a malformed %XX escape or a NUL (name/value are raw) */
};

/*
 * A parsed request head. Everything points into storage the struct owns;
 * read-only for callers; free with kinf_httpreq_free().
 */
struct kinf_httpreq {
	const char *method;	/* "GET" */
	const char *target;	/* the raw request-target, "/api/v1/pods?limit=5" */
	const char *path;	/* percent-decoded path, "/api/v1/pods" */
	const char *query;	/* raw query without '?', "" when none */
	int minor;		/* HTTP/1.minor: 0 or 1 */
	struct kinf_httpreq_header *headers;
	size_t n_headers;
	struct kinf_httpreq_param *params;
	size_t n_params;
	long long content_length;	/* -1 when absent */
	bool chunked;		/* Transfer-Encoding: chunked */
	bool keep_alive;	/* the client lets the connection stay open */
	bool expect_continue;	/* Expect: 100-continue */
	char *storage_;		/* private */
};

/*
 * Parse one request head at the start of data[0..len). Returns 1 with
 * *ret_req (caller frees) and *ret_headlen (bytes of the head, the body
 * starts there) when the head is complete; 0 when more bytes are needed and
 * none of the limits is passed yet; or a negative KINF_E* with
 * reterr->http_status set to the status to answer (400, 413, 414, 431, 501,
 * 505) and a message. A NULL limits means the defaults.
 */
KINF_MUST_CHECK int kinf_httpreq_parse(const char *data, size_t len, const struct kinf_httpreq_limits *limits,
	struct kinf_httpreq **ret_req, size_t *ret_headlen, struct kinf_error *reterr);

void kinf_httpreq_free(struct kinf_httpreq *req);

/* The value of the first header named name (any case), or NULL. Borrowed. */
const char *kinf_httpreq_header(const struct kinf_httpreq *req, const char *name);

/* The first query parameter named name (exact case, as Go's url.Values), or NULL. */
const struct kinf_httpreq_param *kinf_httpreq_param(const struct kinf_httpreq *req,
	const char *name);

/*
 * The bearer token of an "Authorization: Bearer T" header exactly as the
 * apiserver's bearertoken authenticator reads it: the value trimmed of
 * white space (Go's strings.TrimSpace), "bearer" in any case, one space,
 * then the token up to the next space (what follows it is ignored);
 * NULL when there is none or it is empty ("Bearer  T", two spaces, has
 * an empty token). Borrowed, not NUL-terminated: *ret_len is its length.
 */
const char *kinf_httpreq_bearer(const struct kinf_httpreq *req, size_t *ret_len);

/*
 * True for "Bearer", an empty token and more ("Bearer  T"): the
 * apiserver ignores the header and warns "the provided Authorization
 * header contains extra space before the bearer token, and is ignored".
 */
bool kinf_httpreq_bearer_spaced(const struct kinf_httpreq *req);

/* Compare a and b in time that depends only on their lengths. */
bool kinf_httpreq_token_equal(const char *a, size_t alen, const char *b, size_t blen);

/*
 * The query parameters of a Kubernetes read (metav1.ListOptions,
 * GetOptions, Table's includeObject), decoded as the apiserver's parameter
 * codec does: the first value of a repeated name counts; a boolean is false
 * only for "0" or "false" (any case), so "?watch" and "?watch=" are true.
 * Strings are borrowed from the request; NULL when absent.
 */
struct kinf_apiquery {
	const char *label_selector;
	const char *field_selector;
	bool has_limit;
	long long limit;
	const char *continue_token;
	const char *resource_version;
	const char *resource_version_match;
	bool watch;
	bool allow_watch_bookmarks;
	int send_initial_events;	/* -1 absent, else 0 or 1 (a *bool) */
	bool has_timeout_seconds;
	long long timeout_seconds;
	const char *include_object;	/* Table: "None", "Metadata", "Object" */
	bool pretty;
	/* Parameters of none of the names kinf knows, in request order. */
	const char *unknown[8];
	size_t n_unknown;		/* may exceed 8; only 8 are kept */
};

/*
 * Decode req's parameters into *ret. Returns 0, or -KINF_EINVAL with
 * reterr->http_status 400 and the apiserver's BadRequest message (a
 * malformed integer: `strconv.ParseInt: parsing "x": invalid syntax`) or
 * "invalid query parameter encoding: NAME" for a bad %XX escape. Unknown
 * names are not an error: the caller decides (the apiserver ignores them).
 */
KINF_MUST_CHECK int kinf_apiquery_parse(const struct kinf_httpreq *req, struct kinf_apiquery *ret,
	struct kinf_error *reterr);

/* What an Accept header asks for, best kind first in the client's order. */
enum kinf_accept_kind {
	KINF_ACCEPT_NONE = 0,		/* nothing kinf can write (e.g. only protobuf) */
	KINF_ACCEPT_JSON,		/* application/json, application/(any), (any)/(any) */
	KINF_ACCEPT_TABLE,		/* as=Table;g=meta.k8s.io;v=v1 or v1beta1 */
	KINF_ACCEPT_DISCOVERY,		/* as=APIGroupDiscoveryList;g=apidiscovery.k8s.io */
	KINF_ACCEPT_YAML,		/* application/yaml */
};

/* One media range of an Accept header, fields cut to their sizes. */
struct kinf_accept_range {
	char type[64];			/* "application/json", lower case */
	char as[64];			/* "Table", "" when absent */
	char version[32];		/* v= */
	char group[64];			/* g= */
	double q;			/* 1 when absent */
	enum kinf_accept_kind kind;
};

struct kinf_accept {
	struct kinf_accept_range ranges[16];
	size_t n;			/* ranges past 16 are ignored */
};

/*
 * Parse an Accept header (NULL or "" means application/json, as for a
 * client that sends none). Ranges with q=0 are dropped; malformed ranges
 * are skipped as the apiserver's negotiation skips them. Never fails.
 */
void kinf_accept_parse(const char *header, struct kinf_accept *ret);

/*
 * The first range of kind kind (NULL if none): e.g. KINF_ACCEPT_TABLE
 * for `kubectl get`, whose ->version is "v1" or "v1beta1". Ranges come in
 * the client's order, which is its preference (kubectl lists Table first).
 */
const struct kinf_accept_range *kinf_accept_find(const struct kinf_accept *acc,
	enum kinf_accept_kind kind);

/* What a request path names. */
enum kinf_apipath_kind {
	KINF_APIPATH_UNKNOWN = 0,	/* answer "404 page not found" */
	KINF_APIPATH_ROOT,		/* "/": the list of paths */
	KINF_APIPATH_API,		/* "/api": APIVersions */
	KINF_APIPATH_APIS,		/* "/apis": APIGroupList */
	KINF_APIPATH_GROUP,		/* "/apis/GROUP": APIGroup */
	KINF_APIPATH_GROUP_VERSION,	/* "/api/v1", "/apis/G/V": APIResourceList */
	KINF_APIPATH_RESOURCE,		/* a collection or an object */
	KINF_APIPATH_VERSION,		/* "/version" */
	KINF_APIPATH_HEALTHZ,		/* "/healthz[/CHECK]" */
	KINF_APIPATH_READYZ,		/* "/readyz[/CHECK]" */
	KINF_APIPATH_LIVEZ,		/* "/livez[/CHECK]" */
	KINF_APIPATH_METRICS,		/* "/metrics" */
	KINF_APIPATH_OPENAPI,		/* "/openapi/..." (rest: "v2", "v3/apis/apps/v1") */
};

/*
 * A routed path: the parts of the apiserver's RequestInfo kinf dispatches
 * on. Strings point into the struct (NULL when absent); group is "" for
 * the core group. For /api/v1/namespaces/NS (no resource after it) the
 * resource is "namespaces" and name NS, with namespace NS too, as the
 * apiserver has it; /api/v1/namespaces/NS/status is that object's status.
 */
struct kinf_apipath {
	enum kinf_apipath_kind kind;
	const char *group;
	const char *version;
	const char *namespace_;
	const char *resource;
	const char *name;
	const char *subresource;
	const char *rest;		/* HEALTHZ/READYZ/LIVEZ check, OPENAPI rest */
	bool watch_prefix;		/* the deprecated /api/v1/watch/... form */
	char *storage_;			/* private */
};

/*
 * Route a decoded path (kinf_httpreq.path). Returns 0 and fills *ret
 * (release with kinf_apipath_release), with kind KINF_APIPATH_UNKNOWN for
 * paths the apiserver would not route (empty segments, more than
 * resource/name/subresource); -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_apipath_parse(const char *path, struct kinf_apipath *ret);
void kinf_apipath_release(struct kinf_apipath *p);

/*
 * The apiserver's verb for a request (RequestInfo.Verb): "get", "list",
 * "watch", "create", "update", "patch", "delete", "deletecollection",
 * or the method in lower case for the rest. watch is the query's watch.
 */
const char *kinf_apipath_verb(const struct kinf_apipath *p, const char *method, bool watch);

/* True for the verbs a read-only cache refuses (anything not get/list/watch). */
bool kinf_apipath_verb_is_write(const char *verb);

#endif
