#ifndef KINF_SERVEINT_H
#define KINF_SERVEINT_H

/*
 * Private to serve/: the structures the loop thread owns, shared by its
 * files (the map of which file does what is serve.h's). Types only: each
 * file's functions are declared in its own header. Nothing here is
 * touched off the loop thread except where a comment says so.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "httpd.h"
#include "httpreq.h"
#include "indexer.h"
#include "informer.h"
#include "selector.h"
#include "serve.h"

struct serve_coll;
struct serve_continue;
struct serve_pending;
struct serve_proxy;
struct serve_rvwait;
struct serve_snap;
struct serve_task;
struct serve_upwarn;
struct serve_watch;
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

/* True when f selects nothing beyond what its bucket holds: no selector, no namespace. */
static inline bool serve_filter_empty(const struct serve_filter *f) {
	return !f->namespace && !f->labels && !f->fields;
}

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
	/* Reads from a resourceVersion not reached yet (servecoll.c). */
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

struct kinf_serve {
	struct kinf_serve_opts opts;
	/*
	 * Routes a request (the router's serve_handle): the leaves answer a
	 * request they held (until a sync, until a resourceVersion) through
	 * it, so that nothing below the router calls up into it.
	 */
	void (*dispatch)(struct kinf_httpd_req *req, void *srv);
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

#endif
