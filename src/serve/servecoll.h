#ifndef KINF_SERVECOLL_H
#define KINF_SERVECOLL_H

/*
 * servecoll.c, a leaf of serve/: a collection's events (refcounted), its
 * window of recent ones, and the requests it holds: those that came
 * before its sync and the reads from a resourceVersion it has not
 * reached. A held request is routed again through srv->dispatch (the
 * router sets it), not by a call up into the router.
 */
#include "serveint.h"

struct serve_event *serve_event_ref(struct serve_event *ev);
void serve_event_unref(struct serve_event *ev);
/* The release callback of kinf_httpd_stream_write_ref for an event's bytes. */
void serve_event_release(void *arg);

/* Parse a resourceVersion; false when it is not a decimal number. */
bool serve_parse_rv(const char *s, unsigned long long *ret);

/*
 * Append ev (a reference taken) to c's window, the oldest event dropped
 * when it is full. The watch clients are not told (servewatch.c's
 * serve_coll_push() does both).
 */
void serve_window_push(struct serve_coll *c, struct serve_event *ev);
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
 * Hold req until c synced: answered then by srv->dispatch. false when
 * there is no memory to hold it with (answer now).
 */
bool serve_coll_hold(struct serve_coll *c, struct kinf_httpd_req *req);
/* Route the requests held until c synced again, through srv->dispatch. */
void serve_coll_release_pending(struct serve_coll *c);

/* What answers a read whose wait for a resourceVersion timed out (r as it came). */
typedef void serve_rv_timeout_fn(struct serve_request *r, const char *rv,
		unsigned long long current);
/*
 * Hold r until c's cache reaches rv (then it is routed again, through
 * srv->dispatch), for up to 3 s, as the apiserver's waitUntilFreshAndBlock;
 * then timeout answers (the 504 "Too large resource version"; for a watch
 * in its stream). false when there is no memory to wait with (answer now).
 */
bool serve_rv_wait(struct serve_request *r, struct serve_coll *c, unsigned long long rv,
		serve_rv_timeout_fn *timeout);
/* Answer the reads that waited for c->rv (call when it grew). */
void serve_coll_rv_advanced(struct serve_coll *c);
/* Whether ctx's namespace reads go upstream: namespaced types served, namespaces not. */
bool serve_forwards_namespaces(const struct kinf_serve *srv, size_t ctx);

#endif
