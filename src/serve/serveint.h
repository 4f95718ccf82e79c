#ifndef KINF_SERVEINT_H
#define KINF_SERVEINT_H

/*
 * Private to serve*.c: the structures the loop thread owns. Nothing here
 * is touched off the loop thread except where a comment says so.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "apistatus.h"
#include "buf.h"
#include "httpd.h"
#include "httpreq.h"
#include "indexer.h"
#include "informer.h"
#include "selector.h"
#include "serve.h"

struct serve_coll;
struct serve_proxy;
struct serve_upwarn;
struct kinf_http;
struct serve_request;

/* An upstream context: a URL prefix of its own (/clusters/NAME). */
struct serve_ctx {
	char *name;			/* NULL for none */
	char *upstream;			/* server URL */
	/* Down since (ms, monotonic) and why; 0 when up. */
	long long down_since;
	char down_since_utc[24];	/* the same moment, "2026-11-27T03:40:00Z" */
	char *down_why;
	unsigned long state_changes;
	/* The upstream's client (borrowed) and idle clones of it (srv->proxy_lock). */
	struct kinf_http *http;
	struct kinf_http *idle[4];
	size_t n_idle;
	/* The upstream's last /version answer, for while it is away (srv->proxy_lock). */
	struct kinf_buf version_body;
};

struct serve_source {
	struct serve_coll *coll;
	size_t ctx;
	char *namespace;		/* NULL: all */
	struct kinf_informer *informer;
	bool synced;
	bool up;
	char *why;			/* while down */
	long long down_since;
	char *failed;			/* why it failed for good, or NULL */
	/* Events kinf_serve_publish() posted, not applied yet (any thread). */
	atomic_ulong handover;
};

/*
 * One event as the window keeps it: immutable once made (on the
 * informers' thread), refcounted because every watch client's queue
 * holds it until its bytes are written. The wire forms other than the
 * plain line are made on the loop thread the first time a client needs
 * them.
 */
enum serve_ev_type { SERVE_ADDED, SERVE_MODIFIED, SERVE_DELETED };

struct serve_event {
	atomic_uint refs;
	enum serve_ev_type type;
	struct kinf_object *obj;	/* the new state; for a delete the last */
	struct kinf_object *old;	/* previous state of an update, or NULL */
	unsigned long long rv;
	unsigned long long seq;		/* position in its collection's stream */
	struct kinf_buf line;		/* {"type":...,"object":...}\n */
	/* Made lazily on the loop thread. */
	struct kinf_buf added;		/* ADDED with obj (an object entering a selector) */
	struct kinf_buf deleted;	/* DELETED with old (leaving it) */
	struct kinf_buf table_head[3];	/* {"type":T,"object":{"kind":"Table",...,"metadata":{...}}, */
	struct kinf_buf table_row[3];	/* "rows":[...]}}\n, per type: as sent, added, deleted */
};

struct serve_event *serve_event_ref(struct serve_event *ev);
void serve_event_unref(struct serve_event *ev);
/* The release callback of kinf_httpd_stream_write_ref for an event's bytes. */
void serve_event_release(void *arg);

/* Selectors and type of one request, as the list and the watch filter. */
struct serve_filter {
	char *namespace;		/* from the path (a copy), NULL: all */
	struct kinf_selector *labels;
	struct kinf_selector *fields;
	/*
	 * Equalities on indexed fields (the namespace, spec.nodeName, a
	 * label): the smallest of their index buckets is where a list starts.
	 */
	struct {
		char *name;		/* "namespace", "node", "phase", "label:app" */
		char *value;
	} idx[3];
	size_t n_idx;
};

void serve_filter_release(struct serve_filter *f);
/* 1, 0, or -KINF_ENOMEM when a field could not be read (kinf_selector_match). */
KINF_MUST_CHECK int serve_filter_match(const struct serve_filter *f, const struct kinf_object *obj);
/* The objects f may match, sorted by key: the smallest index bucket, or everything. */
KINF_MUST_CHECK int serve_filter_candidates(struct serve_coll *c, const struct serve_filter *f,
		struct kinf_object_list *ret);
/* The index bucket f's candidates come from (the smallest), or -1 for everything. */
KINF_MUST_CHECK int serve_filter_bucket(struct serve_coll *c, const struct serve_filter *f);
/* True when f selects nothing beyond what its bucket holds: no selector, no namespace. */
static inline bool serve_filter_empty(const struct serve_filter *f) {
	return !f->namespace && !f->labels && !f->fields;
}

/* ---- servestream.c: snapshots, slices, admission ---- */

/*
 * A snapshot: the objects of a collection (or of one index bucket)
 * sorted by key at one moment, its resourceVersion. Shared, refcounted
 * on the loop thread, by every list, watch and continue token that
 * starts from that moment: ten clients listing a quiet collection hold
 * one array of references, not ten.
 */
struct serve_snap {
	unsigned long refs;
	struct serve_coll *coll;
	unsigned long long gen;		/* the collection's generation when taken */
	unsigned long long rv;
	char *idx_name, *idx_value;	/* the bucket it holds; NULL: everything */
	struct kinf_object_list objs;
	unsigned long conts;		/* continue tokens holding it */
};

/*
 * The candidates of f (its smallest index bucket, or everything), sorted
 * by key, as a snapshot of now: the one taken earlier in this generation
 * when there is one. A new reference; NULL for out of memory.
 */
struct serve_snap *serve_snap_take(struct serve_coll *c, const struct serve_filter *f);
/* objs (taken, sorted by key) as a snapshot of c's now, not shared. NULL for out of memory. */
struct serve_snap *serve_snap_wrap(struct serve_coll *c, struct kinf_object_list *objs);
struct serve_snap *serve_snap_ref(struct serve_snap *s);
void serve_snap_unref(struct serve_snap *s);
/* The collection changed (an event applied): snapshots taken now are new ones. */
void serve_coll_changed(struct serve_coll *c);

/*
 * Work done in slices between other clients' (a large list, a watch's
 * initial events): a task's run() makes one slice and returns true to
 * be run again soon, false when it waits (for the client to read) or is
 * done. Tasks run round robin from a timer on the loop, at most
 * SERVE_SLICE_ROUND_US per loop round, so a health probe or a TLS
 * handshake waits for one round at most.
 */
struct serve_task {
	struct serve_task *next, *prev;
	struct kinf_serve *srv;
	bool queued;
	bool (*run)(struct serve_task *t);
};
#define SERVE_SLICE_ROUND_US 4000
/* One slice: at most this many bytes, and (past the first) this long. */
#define SERVE_SLICE_BYTES (64u << 10)
#define SERVE_SLICE_US 1000
/* Bytes a producer lets queue for its client before it waits for the client to read. */
#define SERVE_STREAM_BUDGET (256u << 10)
void serve_task_wake(struct kinf_serve *srv, struct serve_task *t);
void serve_task_cancel(struct kinf_serve *srv, struct serve_task *t);
/* The httpd on-drain callback that wakes the task arg. */
void serve_task_drained(struct kinf_httpd_req *req, void *arg);

/*
 * Admission (httpd's admit callback, once per request, before routing:
 * a request routed again after a wait is not counted twice): past max_inflight requests being answered
 * (watches past their initial events not counted) or max_queued_bytes of
 * answers queued, a request gets the apiserver's 429 "Too many requests,
 * please try again later." with Retry-After: 1; health probes never do
 * (the apiserver's "probes" flow schema is exempt). false after answering.
 */
bool serve_admit_req(struct kinf_httpd_req *req, void *userdata);

/* serve.c: a metric's # HELP and # TYPE lines. */
void serve_metric_head(struct kinf_buf *out, const char *name, const char *type,
		const char *help);
/* /metrics: what the connection and request budgets did. */
void serve_limit_metrics(struct kinf_serve *srv, const struct kinf_httpd_stats *hs,
		struct kinf_buf *b);

/* How a list is written: JSON items or Table rows (with includeObject). */
struct serve_list_spec {
	bool table;
	const char *table_version;	/* "v1" or "v1beta1" */
	const char *include;		/* Table includeObject: "None", "Metadata", "Object" */
	const char *rv;			/* metadata.resourceVersion */
	const char *cont;		/* metadata.continue, or NULL */
	long long remaining;		/* remainingItemCount, -1 for none */
};

/*
 * Answer r with the list of snap's objects [from, end) that f matches
 * (f is taken, snap referenced): in one response when it fits in one
 * slice, else as a chunked stream made in slices as the client reads.
 */
void serve_list_stream(struct serve_request *r, struct serve_snap *snap, size_t from, size_t end,
		struct serve_filter *f, const struct serve_list_spec *spec);

struct serve_watch;

/* A resource type of one context: the sources feeding it and what it serves. */
struct serve_coll {
	struct kinf_serve *srv;
	size_t ctx;
	char *group, *version, *resource, *singular, *kind;
	char *api_version;		/* "v1", "apps/v1" */
	char *list_kind;		/* "PodList" */
	bool namespaced;
	struct kinf_strv short_names;
	struct kinf_strv categories;
	struct kinf_strv namespaces;	/* served namespaces; empty: all */
	const struct kinf_kindcols *columns;	/* its Tables' (a reference) */
	size_t n_label_indexes;		/* made on demand for label selectors */
	size_t n_query_indexes;		/* made on demand by serveindex.c */
	size_t n_sources, n_synced, n_failed;
	bool synced;
	struct kinf_indexer *store;	/* loop thread only */
	unsigned long long rv;		/* newest resourceVersion seen */
	bool rv_numeric;		/* every one parsed as a number */
	/* The window: events with rv > window_rv are all in the ring. */
	struct serve_event **ring;
	size_t cap, head, n;		/* head: index of the oldest */
	unsigned long long next_seq;	/* seq of the next event */
	unsigned long long window_rv;
	struct serve_watch *watches;	/* doubly linked */
	size_t n_watches;
	/* Requests that came before the sync, answered once it is done. */
	struct serve_pending *pending;
	/* Reads from a resourceVersion not reached yet (servelist.c). */
	struct serve_rvwait *rv_waits;
	/*
	 * The upstream's Warnings on the sources' requests (servewarn.c):
	 * distinct texts, each with when it came last.
	 */
	struct serve_upwarn *upwarn;
	size_t n_upwarn;
	/* Bumped by every applied event; snapshots of one generation are shared. */
	unsigned long long gen;
	struct serve_snap *snap_cache[4];	/* this generation's, by bucket */
	/* Counters. */
	unsigned long long events, lists, gets, watch_total, evicted;
	unsigned long long bytes;	/* JSON bytes of the stored objects */
	long long last_event_ms;
};

/* The event at seq, or NULL when it left the window (or is not yet). */
struct serve_event *serve_coll_event_at(struct serve_coll *c, unsigned long long seq);
/* The seq of the oldest event in the window. */
unsigned long long serve_coll_oldest_seq(const struct serve_coll *c);

struct serve_pending {
	struct serve_pending *next, *prev;
	struct kinf_httpd_req *req;
	struct serve_coll *coll;
};

/*
 * A continue token's snapshot (servelist.c): kept for SERVE_CONTINUE_TTL_MS
 * or until its last page is served. Each client (connection) may keep
 * SERVE_CONTINUE_PER_CLIENT; its next one replaces its own oldest, never
 * another client's. Past SERVE_CONTINUE_MAX tokens or SERVE_CONTINUE_REFS
 * object references in all, a new list is not paged (limit is ignored,
 * as ListOptions allows) rather than any token expired.
 */
struct serve_continue {
	struct serve_continue *next;
	unsigned long long id;
	unsigned long long owner;	/* the connection that made it */
	struct serve_snap *snap;
	long long created_ms;
};

#define SERVE_CONTINUE_TTL_MS (5 * 60 * 1000)
#define SERVE_CONTINUE_PER_CLIENT 4
#define SERVE_CONTINUE_MAX 1024
#define SERVE_CONTINUE_REFS (4u << 20)

struct kinf_serve {
	struct kinf_serve_opts opts;
	struct serve_continue *conts;	/* newest first */
	size_t n_conts;
	size_t cont_refs;		/* objects of the snapshots they hold, each counted once */
	unsigned long long next_cont;
	/* Tasks ready for a slice (servestream.c), and the timer that runs them. */
	struct serve_task *ready_head, *ready_tail;
	struct kinf_httpd_timer *slice_timer;
	char *token;
	char *version;
	struct kinf_httpd *httpd;
	struct serve_ctx *ctxs;
	size_t n_ctxs;
	struct serve_source *sources;
	size_t n_sources;
	struct serve_coll **colls;
	size_t n_colls;
	atomic_bool stopping;
	/*
	 * A published event the cache could not take (-KINF_ENOMEM, loop
	 * thread): its answers would be wrong, so serve stops and
	 * kinf_serve_run() returns it.
	 */
	atomic_int lost;
	/* Counters for /metrics (loop thread). */
	unsigned long long requests;
	unsigned long long requests_by_code[6];	/* 1xx..5xx, index code/100 */
	unsigned long long watch_clients;	/* now */
	unsigned long long evicted;
	unsigned long long refused_inflight, refused_memory;	/* 429s of serve_admit */
	unsigned long long list_streams;	/* lists being written in slices now */
	unsigned long long unpaged;		/* limit ignored: the continue budget was full */
	unsigned long long latency_count;
	double latency_sum;
	unsigned long long latency_buckets[16];
	/* Requests forwarded upstream (serveproxy.c): proxy_lock guards these. */
	pthread_mutex_t proxy_lock;
	pthread_cond_t proxy_done;
	struct serve_proxy *proxies;	/* their workers, doubly linked */
	size_t n_proxies;
	unsigned long long forwarded;
};

/* One request being answered, as the handlers share it. */
struct serve_request {
	struct kinf_serve *srv;
	struct kinf_httpd_req *req;
	const struct kinf_httpreq *head;
	size_t ctx;
	const char *prefix;		/* "/clusters/NAME" or "" */
	struct kinf_apipath path;
	struct kinf_apiquery query;
	struct kinf_accept accept;
	long long start_us;		/* kinf_clock_now_us() when it came, for the latency histogram */
	/* One more Warning for this answer (a partial cluster-wide list), or empty. */
	struct kinf_buf warning;
	/* The collection answering, whose upstream Warnings go with it; or NULL. */
	struct serve_coll *coll;
	bool index;			/* under /kinf/v1/index: serveindex.c answers */
};

/*
 * Answer with a body (JSON unless content_type says otherwise), adding the
 * upstream Warning header while the context's upstream is away.
 */
void serve_respond(struct serve_request *r, int code, const char *content_type,
		const char *body, size_t len);
/*
 * serve_respond() with a body built by the kinf_buf_put* family: a 500
 * Status "out of memory" instead when an append to it failed, never an
 * answer with a hole in it.
 */
void serve_respond_buf(struct serve_request *r, int code, const char *content_type,
		const struct kinf_buf *body);
/*
 * Answer with a Status made by kinf_apistatus_*: the status line's code and
 * Retry-After are the Status's own. The 500 "out of memory" when making it
 * failed (or nothing was made).
 */
void serve_respond_status(struct serve_request *r, const struct kinf_apistatus_body *st);
/*
 * The 500 Status "out of memory", or, when even that cannot be built, the
 * connection closed.
 */
void serve_respond_oom(struct serve_request *r);
/*
 * The Warning header lines r's answer carries (its context's and its own),
 * into out. 0, or -KINF_ENOMEM when out (or a part of it) could not be built.
 */
KINF_MUST_CHECK int serve_warning_headers(const struct serve_request *r, struct kinf_buf *out);
/* Count a finished request in the metrics; start_us: its kinf_clock_now_us() on arrival. */
void serve_count(struct kinf_serve *srv, int code, long long start_us);

/* servedisc.c: /api, /apis, /apis/G, /api/v1, /apis/G/V for context r->ctx. */
void serve_discovery(struct serve_request *r);

/* servelist.c */
/*
 * Build the filter of a read: the path's namespace, labelSelector and
 * fieldSelector checked against the fields the apiserver offers for the
 * kind. 0, or -KINF_EINVAL with a 400/422 Status already in *ret_status.
 */
KINF_MUST_CHECK int serve_filter_init(struct serve_coll *c, const char *namespace, const char *labels,
		const char *fields, struct serve_filter *ret, struct kinf_apistatus_body *ret_status);
void serve_get(struct serve_request *r, struct serve_coll *c);
void serve_list(struct serve_request *r, struct serve_coll *c);
/*
 * The start of a List (or Table) as spec says, up to the items' (rows')
 * opening bracket. 0, or -KINF_ENOMEM when the Table's columns could
 * not be made.
 */
KINF_MUST_CHECK int serve_list_head(struct kinf_buf *b, const struct serve_coll *c,
		const struct serve_list_spec *spec);
/* The Table's columnDefinitions JSON array: c->columns' (kindcols.h). */
KINF_MUST_CHECK int serve_table_columns(const struct serve_coll *c, struct kinf_buf *out);
/*
 * One Table row {"cells":[...],"object":...} of obj (a finished pod's
 * "conditions" too); include is "None", "Metadata" or "Object". 0,
 * -KINF_ENOMEM, or the error of kinf_kindcols_row_json() with reterr
 * naming the object and the field (a number beyond float64's range: no
 * cells for it, as the apiserver's table convertor fails).
 */
KINF_MUST_CHECK int serve_table_row(const struct serve_coll *c, const struct kinf_object *obj,
		const char *include, struct kinf_buf *out, struct kinf_error *reterr);
/* obj with metadata.resourceVersion rv: a new object, NULL when it has none or out of memory. */
struct kinf_object *serve_with_rv(const struct kinf_object *obj, unsigned long long rv);
/* obj's JSON with apiVersion and kind of c. */
KINF_MUST_CHECK int serve_append_typed(const struct serve_coll *c, const struct kinf_object *obj,
		struct kinf_buf *out);
/*
 * ListOptions checked as the apiserver's ValidateListOptions checks them
 * (of a watch: validateWatchOptions, as with the WatchList gate on),
 * every error in one 422 Invalid `ListOptions.meta.k8s.io "" is invalid:
 * ...` with a cause each. false after answering.
 */
bool serve_validate_list_options(struct serve_request *r, bool watch);
/* Drop the continue tokens. */
void serve_snapshots_release(struct kinf_serve *srv);
/* Continue tokens not yet expired, and the objects their snapshots hold. */
size_t serve_snapshots_live(struct kinf_serve *srv, size_t *ret_objects);
/*
 * Hold r until c's cache reaches rv (then it is routed again), for up to
 * 3 s, as the apiserver's waitUntilFreshAndBlock; then a 504 "Too large
 * resource version", for a watch in its stream (serve_watch_too_large).
 * false when there is no memory to wait with (answer now).
 */
bool serve_rv_wait(struct serve_request *r, struct serve_coll *c, unsigned long long rv,
		bool watch);
/* The 504 Status "Too large resource version: RV, current: N" into out. */
void serve_too_large_status(struct kinf_apistatus_body *out, const char *rv,
		unsigned long long current);
/* Answer the reads that waited for c->rv (call when it grew). */
void serve_coll_rv_advanced(struct serve_coll *c);
/* Parse a resourceVersion; false when it is not a decimal number. */
bool serve_parse_rv(const char *s, unsigned long long *ret);

/* servewatch.c */
/* c's watch clients in turn: the first after NULL, then the next; NULL at the end. */
const struct serve_watch *serve_coll_next_watch(const struct serve_coll *c,
		const struct serve_watch *w);
/* A watch client's unsent events, bytes queued on its connection, and its id (/metrics). */
unsigned long long serve_watch_unsent(const struct serve_watch *w);
size_t serve_watch_queued(const struct serve_watch *w);
unsigned long long serve_watch_id(const struct serve_watch *w);
/*
 * Queue b, built with the kinf_buf_put* family, as one chunk of req's
 * stream: nothing and -KINF_ENOMEM when an append to it failed (the
 * caller ends the stream: never an event with a hole in it), else as
 * kinf_httpd_stream_write().
 */
KINF_MUST_CHECK int serve_stream_write_buf(struct kinf_httpd_req *req, const struct kinf_buf *b);
void serve_watch(struct serve_request *r, struct serve_coll *c);
/*
 * A watch the cache could not start in time: 200, an ERROR event with the
 * 504 Status, the end (the apiserver's errWatcher).
 */
void serve_watch_too_large(struct serve_request *r, const char *rv, unsigned long long current);
/* Append ev to the window and pass it to the watch clients. */
void serve_coll_push(struct serve_coll *c, struct serve_event *ev);
/* End every watch of c (stop) with its last chunk. */
void serve_coll_end_watches(struct serve_coll *c);

/*
 * serveindex.c: obj's JSON as a List's item, as the apiserver writes one:
 * without "kind" and "apiVersion" (objects from watch events carry them).
 * 0 or a negative KINF_E*.
 */
KINF_MUST_CHECK int serve_append_item(const struct kinf_object *obj, struct kinf_buf *out);
/* serveindex.c: the kinf index path's answer for c (synced, namespace served). */
void serve_index(struct serve_request *r, struct serve_coll *c);

/* servewarn.c */
struct serve_upwarn {
	char *text;
	size_t len;
	long long seen_ms;
};
/*
 * Append c's upstream Warnings (those still sent) as Warning header lines
 * to out, each text once: none already in seen (texts, appended to).
 */
void serve_coll_warnings(struct serve_coll *c, struct kinf_strv *seen, struct kinf_buf *out);
/* Free c's upstream Warnings. */
void serve_coll_warnings_release(struct serve_coll *c);
/* serve.c: one Warning header line of text, escaped as NewWarningHeader escapes it. */
void serve_warning_line(struct kinf_buf *out, const char *text, size_t len);

/* serveproxy.c */
enum {
	SERVE_FORWARD_COLLECT = 1,	/* the whole answer first (small ones serve rewrites) */
	SERVE_FORWARD_VERSION = 2,	/* /version: remembered; kinf's own in a header */
	SERVE_FORWARD_OPENAPI_INDEX = 4,	/* /openapi/v3: its URLs under the context's prefix */
};
/*
 * Forward r (a GET) to its context's upstream: the path after the
 * context's prefix, the query and Accept as they came; answered from the
 * worker's posts later (r's request is kept, r itself is not). flags:
 * SERVE_FORWARD_*.
 */
void serve_forward(struct serve_request *r, unsigned flags);
/* Whether ctx's namespace reads go upstream: namespaced types served, namespaces not. */
bool serve_forwards_namespaces(const struct kinf_serve *srv, size_t ctx);
/*
 * After the loop stopped: interrupt the forwarded requests, wait for
 * their workers and free the idle clients (the contexts' clients may go
 * after it).
 */
void serve_proxies_end(struct kinf_serve *srv);

/* serve.c: the httpd handler. */
void serve_handle(struct kinf_httpd_req *req, void *userdata);
/* serve.c: re-run the handler for requests held until c synced. */
void serve_coll_release_pending(struct serve_coll *c);

#endif
