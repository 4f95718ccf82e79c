#ifndef KINF_SERVESTREAM_H
#define KINF_SERVESTREAM_H

/*
 * servestream.c, a leaf of serve/: snapshots shared by moment, work made
 * in slices between other clients' (large lists, a watch's initial
 * events), admission (the global 429 budget), and a list answered in
 * slices.
 */
#include "servefilter.h"
#include "serveint.h"

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

/* /metrics: what the connection and request budgets did. */
void serve_limit_metrics(struct kinf_serve *srv, const struct kinf_httpd_stats *hs,
		struct kinf_buf *b);

/*
 * Answer r with the list of snap's objects [from, end) that f matches
 * (f is taken, snap referenced): in one response when it fits in one
 * slice, else as a chunked stream made in slices as the client reads.
 */
void serve_list_stream(struct serve_request *r, struct serve_snap *snap, size_t from, size_t end,
		struct serve_filter *f, const struct serve_list_spec *spec);

#endif
