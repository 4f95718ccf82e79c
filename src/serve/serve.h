#ifndef KINF_SERVE_H
#define KINF_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "informer.h"

struct kinf_http;
struct kinf_kindcols;

/*
 * `kinf serve`: informers' caches spoken as a read-only subset of the
 * Kubernetes API (discovery, get, list, watch, Tables, health, metrics),
 * over httpd.h's poll loop. See ../shared/research/apiserver-serving.md
 * for the apiserver behaviour followed here.
 *
 * Threads: the loop thread runs kinf_serve_run() and owns everything the
 * answers read: per collection (a resource type of one upstream context)
 * a store of its own (an indexer fed only on the loop thread, so a list,
 * its resourceVersion and the event window always agree), the window of
 * recent events, and the watch clients. The informers' thread (the one
 * that calls kinf_informerset_next()) hands events over with
 * kinf_serve_publish(), which builds each event's wire bytes there and
 * posts them to the loop thread; kinf_serve_synced() and
 * kinf_serve_upstream() go the same way, so they apply in order with the
 * events. Any thread may call kinf_serve_stop().
 *
 * What the caches do not hold goes upstream (serveproxy.c): /version,
 * /openapi/v2 and /openapi/v3 always, namespaces whenever namespaced types
 * are served (kubectl words its NotFound after asking for the namespace),
 * and with opts.pass_through every other read. A worker thread per
 * forwarded request runs it on a clone of the context's client and posts
 * the answer to the loop thread as it arrives (the client's reading paces
 * the upstream's); kinf_serve_run() returns once they are all done.
 *
 * Files (src/serve/), each with a header of its own over serveint.h's
 * types, in three tiers that depend one way, down (test/layers/check
 * fails on a cycle):
 * - leaves, which call no other serve/ file but leaves below them:
 *   servewarn.c (the upstream's Warnings, passed on), serverespond.c
 *   (answers and their Warning headers, shared Statuses, counters),
 *   serveoptions.c (ListOptions' validation), servefilter.c (selectors;
 *   typed JSON, List items and heads, Table columns and rows),
 *   servecoll.c (events, the window, requests held until a sync or a
 *   resourceVersion, routed again through srv->dispatch), servestream.c
 *   (snapshots, work in slices, admission, lists in slices);
 * - handlers, which call leaves only: servelist.c (get and list,
 *   continue tokens), servewatch.c (watch clients), serveindex.c (kinf's
 *   index path), servedisc.c (discovery), serveproxy.c (requests
 *   forwarded to the upstream);
 * - the top: serveroute.c (the router: serve_handle), servehealth.c
 *   (health and metrics), serve.c (this header's functions: sources,
 *   collections, the hand-over from the informers' thread).
 * kubeconfig_write.c (the kubeconfig that points a client at the
 * server) stands apart.
 *
 * No client can starve the others (issue 25): a list, a Table or a
 * watch's initial events are made in slices of at most 64 KiB and 1 ms,
 * round robin, at most 4 ms of them per loop round, and only while the
 * client has less than 256 KiB queued; snapshots are shared by every
 * request of one moment; each connection keeps at most 4 continue tokens
 * (its own oldest goes); past 400 requests in flight or 64 MiB queued a
 * request gets 429 with Retry-After. httpd.h bounds connections.
 */
struct kinf_serve;

struct kinf_tls;

struct kinf_serve_opts {
	/* Bearer token every TCP listener requires (copied). */
	const char *token;
	/* TLS for the TCP listeners (tls.h; the server takes its own reference), or NULL. */
	struct kinf_tls *tls;
	/* Events kept per collection for watches from a resourceVersion; 0: 10000. */
	size_t window;
	/*
	 * Events a watch client may have unsent (after its cursor in the
	 * window) and go on as it pleases; past them it must read some of
	 * what is queued for it within every lag_grace_ms or it is ended with
	 * a 410 Expired Status, as the apiserver ends a watcher whose full
	 * buffer takes no event within its timeout. One whose next event
	 * left the window is ended at once. 0: 1000 (the apiserver's largest
	 * watcher buffer); at most the window.
	 */
	size_t max_lag;
	long lag_grace_ms;		/* 0: 2 s */
	/*
	 * The global budget (serve_admit): requests being answered at once
	 * (watches past their initial events not counted; 0: 400, the
	 * apiserver's --max-requests-inflight) and bytes of answers queued
	 * (0: 64 MiB); past either a request gets 429 with Retry-After.
	 */
	size_t max_inflight;
	size_t max_queued_bytes;
	/*
	 * A client that takes no byte of what is queued for it for this long
	 * is dropped; a watch client is first ended with a 410 Expired
	 * Status, what was queued before it dropped. 0: 30 s.
	 */
	long write_timeout_ms;
	long bookmark_ms;		/* between BOOKMARK events; 0: 60 s */
	/* kinf's version: /metrics, the log, a header on /version (the upstream's). */
	const char *version;
	/*
	 * Forward every read (GET: get, list, watch, read subresources such
	 * as pods/log, discovery) the caches do not answer to the upstream,
	 * with the upstream client's credentials, streamed as it answers.
	 * Off: those are answered 404, naming the option.
	 */
	bool pass_through;
	/*
	 * One line for each upstream state change and each evicted client,
	 * on the loop thread (NULL: none). line has no newline.
	 */
	void (*log)(const char *line, void *userdata);
	void *log_data;
};

/* One informer's collection: a resource type in a namespace (or all) of a context. */
struct kinf_serve_source {
	const char *context;		/* upstream context name, NULL for none */
	const char *upstream;		/* its server URL, for messages */
	const char *group;		/* "" for core */
	const char *version;
	const char *resource;		/* plural */
	const char *singular;
	const char *kind;
	bool namespaced;
	const char *const *short_names;	/* NULL-terminated or NULL */
	const char *const *categories;	/* NULL-terminated or NULL: "all" (kubectl get all) */
	const char *namespace;		/* NULL: all namespaces (or cluster-scoped) */
	struct kinf_informer *informer;	/* borrowed, for /metrics; may be NULL */
	/*
	 * The columns of its Tables (kindcols.h; serve takes a reference):
	 * a custom resource's from its CRD. NULL: kinf_kindcols_for(group,
	 * kind), a built-in kind's, or Name and Age. The first source of a
	 * type decides.
	 */
	const struct kinf_kindcols *columns;
	/*
	 * Its context's client (borrowed; it must outlive kinf_serve_run(),
	 * which ends the requests on its clones): what is forwarded upstream
	 * goes through clones of it. NULL: those reads are answered 503.
	 */
	struct kinf_http *http;
};

/* A new server (opts copied). 0, -KINF_ENOMEM or -KINF_EINVAL with reterr. */
KINF_MUST_CHECK int kinf_serve_new(const struct kinf_serve_opts *opts, struct kinf_serve **ret,
		struct kinf_error *reterr);

/* Free it (not while kinf_serve_run() runs). NULL is fine. */
void kinf_serve_free(struct kinf_serve *srv);

/*
 * Add an informer's source before kinf_serve_run(); its id (0, 1, ... in
 * order) goes to *ret_id. Sources of one context and type share a
 * collection (-n a,b). 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_serve_add_source(struct kinf_serve *srv, const struct kinf_serve_source *src,
		size_t *ret_id, struct kinf_error *reterr);

/* Listen on "unix:PATH" or "tcp:HOST:PORT" (kinf_httpd_listen). */
KINF_MUST_CHECK int kinf_serve_listen(struct kinf_serve *srv, const char *addr, struct kinf_error *reterr);

/* Listener i's bound address ("tcp:127.0.0.1:41234"), NULL past the end. Borrowed. */
const char *kinf_serve_address(const struct kinf_serve *srv, size_t i);

/* The URL a client reaches TCP listener i at ("https://127.0.0.1:41234"), NULL for others. Borrowed. */
const char *kinf_serve_url(const struct kinf_serve *srv, size_t i);

/*
 * The URL prefix of context i's API ("" for the first, "/clusters/NAME").
 * Caller frees; NULL for out of memory.
 */
char *kinf_serve_context_prefix(const struct kinf_serve *srv, size_t i);
/* How many upstream contexts; the name of i (NULL for none). */
size_t kinf_serve_n_contexts(const struct kinf_serve *srv);
const char *kinf_serve_context_name(const struct kinf_serve *srv, size_t i);

/*
 * Serve until kinf_serve_stop(); watch streams end cleanly, forwarded
 * requests are ended and their threads joined before it returns. 0 or
 * -KINF_EIO.
 */
KINF_MUST_CHECK int kinf_serve_run(struct kinf_serve *srv, struct kinf_error *reterr);

/* Make kinf_serve_run() return. Any thread, async-signal-safe. */
void kinf_serve_stop(struct kinf_serve *srv);

/*
 * Hand source's popped batch over (the informers' thread): objects are
 * referenced, the batch stays the caller's. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_serve_publish(struct kinf_serve *srv, size_t source,
		const struct kinf_informer_batch *batch);

/* source's initial list is all published. 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_serve_synced(struct kinf_serve *srv, size_t source);

/*
 * source's informer failed for good (why: "403 Forbidden: ..."): what it
 * would have cached is answered 503 with why, /readyz fails, the rest is
 * served with a Warning. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_serve_failed(struct kinf_serve *srv, size_t source, const char *why);

/*
 * source's upstream went away (up false, why says how: "connection
 * refused") or came back. Logged once per change. Any thread.
 */
KINF_MUST_CHECK int kinf_serve_upstream(struct kinf_serve *srv, size_t source, bool up, const char *why);

/*
 * A code-299 warning text (len bytes, unescaped) the upstream sent with a
 * list or watch response of source's informer: the answers from that
 * collection carry it (each text once) for as long as the upstream keeps
 * sending it, and the log says it once. Any thread. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_serve_upstream_warning(struct kinf_serve *srv, size_t source, const char *text,
		size_t len);

#endif
