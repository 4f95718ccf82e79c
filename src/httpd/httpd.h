#ifndef KINF_HTTPD_H
#define KINF_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

#include "apistatus.h"
#include "err.h"
#include "httpreq.h"

struct kinf_tls;

/*
 * The HTTP/1.1 server under `kinf serve`: listeners on unix:PATH and
 * tcp:HOST:PORT, keep-alive, bounded request parsing (httpreq.h), plain
 * and chunked (streaming) responses, a bearer token on TCP listeners,
 * TLS on them when opts.tls is set (kubectl and client-go send a token
 * only over https).
 *
 * Design: one thread runs a poll(2) loop over every socket; all sockets
 * are non-blocking and nothing in the loop blocks. Chosen over a thread
 * per connection for the "100 watch clients, RSS <= 1 MB each" and
 * "a slow client never slows others":
 *   - an idle or watching connection costs its struct, an empty input
 *     buffer and its queued output, no stack (a thread's stack and its
 *     guard pages are tens to hundreds of KB of RSS once touched);
 *   - each connection has its own bounded output queue, so a producer
 *     fanning an event out to 100 watchers appends to 100 queues and never
 *     waits on a socket: a client that stops reading only fills its own
 *     queue, which kinf_httpd_stream_write() reports as too far behind
 *     (-KINF_ETOOBIG) so the caller can end it, as the apiserver ends a
 *     watcher whose buffer is full;
 *   - the queue can hold references to shared bytes (write_ref), so one
 *     cached event is not copied per client;
 *   - deadlines (header, body, idle, write) live in the loop: a slowloris
 *     client holds one struct until its deadline, never a worker;
 *   - what one client may hold is bounded: its input (a head and a body),
 *     its queue (a client behind by opts.read_pause bytes is not read
 *     from, so pipelining cannot grow it), and, before it authenticates,
 *     its very connection: the budgets of unauthenticated connections
 *     (per peer, in total) and of the unix sockets make room by dropping
 *     the idlest, so a flood never locks the others out (counted in
 *     kinf_httpd_stats for /metrics). The file descriptors the process
 *     may open bound them all (RLIMIT_NOFILE, read at kinf_httpd_new());
 *   - the global budget is the caller's (opts.admit), from the numbers
 *     kept here: requests in flight, bytes queued in all.
 * The handler runs on the loop thread and must not block; it answers at
 * once or later (keep the request, answer from a kinf_httpd_post()
 * callback). Other threads reach the loop only through kinf_httpd_post()
 * and kinf_httpd_stop(). Requests on one connection are answered in order
 * (a pipelined request waits until the one before is answered).
 */

struct kinf_httpd;
/* A request being answered: valid until its response is complete. */
struct kinf_httpd_req;

/*
 * Called on the loop thread once a request head (and its body, if it had
 * a Content-Length) is in, authenticated. The handler answers with
 * kinf_httpd_respond*() or starts a stream, now or later.
 */
typedef void (*kinf_httpd_handler)(struct kinf_httpd_req *req, void *userdata);

struct kinf_httpd_opts {
	kinf_httpd_handler handler;
	void *userdata;
	/*
	 * When set, called (loop thread, with userdata) before the handler,
	 * once per authenticated request, the request already counted in
	 * kinf_httpd_stats' inflight: false after it answered req itself
	 * (a 429 past a budget), which the handler then never sees.
	 */
	bool (*admit)(struct kinf_httpd_req *req, void *userdata);
	/* Required of every request on a TCP listener (Authorization: Bearer)... */
	const char *token;
	/*
	 * ...but a GET or HEAD without a bearer token of one of these paths
	 * (exact, NULL-terminated; not copied: a static array), as
	 * kube-apiserver's system:public-info-viewer role lets anyone read
	 * /healthz, /livez, /readyz and /version (a wrong token is still
	 * 401: authentication comes first there too). NULL: none.
	 */
	const char *const *public_paths;
	/*
	 * When set, TCP listeners speak TLS with this certificate (tls.h; the
	 * server takes its own reference). Unix sockets stay plain.
	 */
	struct kinf_tls *tls;
	struct kinf_httpreq_limits limits;	/* 0 fields: httpreq.h defaults */
	/*
	 * Connections (0: the default). A TCP connection is unauthenticated
	 * from its accept until a request of it carries the token (a TLS
	 * handshake, a request head still coming, anonymous health probes).
	 * Past a budget below, an unauthenticated connection (of that peer,
	 * for the per-peer one) is dropped to make room: the idlest of those
	 * that never sent a byte, else the idlest. A flood of connections
	 * that never finish a handshake cannot lock others out, nor push out
	 * a client halfway through its own. Unix sockets have a budget of
	 * their own.
	 */
	size_t max_conns;		/* TCP, default 4096; past it the idlest unauthenticated or
					 * kept-alive one goes, else the new one is closed */
	size_t max_unauth;		/* unauthenticated TCP, default 1024 */
	size_t max_unauth_per_peer;	/* of one IP address, default 256 */
	size_t max_unix_conns;		/* default 1024; past it: 429 and close */
	size_t max_queue;		/* per-connection output bytes, default 1 MiB */
	/*
	 * A connection with this many bytes queued is behind: its next
	 * request is not read until the queue falls under it (pipelining
	 * cannot grow the queue). Default 256 KiB.
	 */
	size_t read_pause;
	int header_timeout_ms;		/* first byte to end of head (and body), default 10 s */
	int idle_timeout_ms;		/* keep-alive between requests, default 90 s */
	int write_timeout_ms;		/* queued output making no progress, default 30 s */
	int shutdown_grace_ms;		/* flushing queues at stop, default 1 s */
	int handshake_timeout_ms;	/* accept to end of the TLS handshake, default 10 s */
};

/* A new server with no listeners (opts copied, token included); NULL for out of memory. */
struct kinf_httpd *kinf_httpd_new(const struct kinf_httpd_opts *opts);

/*
 * Free the server: closes listeners (unlinking the unix sockets it made)
 * and connections; on-close callbacks of unanswered requests run first.
 * Not while kinf_httpd_run() runs. NULL is fine.
 */
void kinf_httpd_free(struct kinf_httpd *srv);

/*
 * Listen on addr: "unix:PATH" (PATH's directory is made 0700 when
 * missing and refused, -KINF_EIO, when it is a symlink, someone else's
 * but root's, or writable by others without the sticky bit; a stale
 * socket is replaced, a live one is -KINF_EXISTS; the socket is made
 * 0600) or "tcp:HOST:PORT" (HOST a name, an IPv4 address
 * or [IPv6]; port 0 picks a free one; needs opts.token; TLS when
 * opts.tls is set, whose certificate should name HOST: pass it in
 * kinf_tls_opts.names). Returns 0,
 * -KINF_EINVAL (bad address, no token), -KINF_EEXISTS (in use), -KINF_EIO.
 */
KINF_MUST_CHECK int kinf_httpd_listen(struct kinf_httpd *srv, const char *addr, struct kinf_error *reterr);

/* The bound address of listener i (in order of listening), "tcp:127.0.0.1:43121"; NULL past the end. Borrowed. */
const char *kinf_httpd_address(const struct kinf_httpd *srv, size_t i);
/* The bound TCP port of listener i, 0 for a unix one. */
int kinf_httpd_port(const struct kinf_httpd *srv, size_t i);
/*
 * The URL a client reaches TCP listener i at, for a kubeconfig's server:
 * "https://127.0.0.1:43121" ("http://" without TLS, "[::1]" for IPv6): the
 * bound address, loopback for a wildcard bind (0.0.0.0, ::), which the
 * certificate names; NULL for a unix listener or past the end. Borrowed.
 */
const char *kinf_httpd_url(const struct kinf_httpd *srv, size_t i);

/*
 * Serve until kinf_httpd_stop(): then stop accepting, end streams with
 * their last chunk, flush queues for up to shutdown_grace_ms, close
 * everything (on-close callbacks run) and return 0; -KINF_IO when poll
 * fails.
 */
KINF_MUST_CHECK int kinf_httpd_run(struct kinf_httpd *srv, struct kinf_error *reterr);

/* Make kinf_httpd_run() return. Any thread, async-signal-safe. */
void kinf_httpd_stop(struct kinf_httpd *srv);

/*
 * Run fn(arg) on the loop thread soon (in posting order): before the
 * next poll, and between two connections' writes, so that what is posted
 * does not pile up while the loop writes to many clients. Any thread.
 * 0 or -KINF_ENOMEM; after stop, fn still runs once, from
 * kinf_httpd_run()'s shutdown or kinf_httpd_free().
 */
KINF_MUST_CHECK int kinf_httpd_post(struct kinf_httpd *srv, void (*fn)(void *arg), void *arg);

/* A timer on the loop thread (watch timeoutSeconds, bookmarks, a wait for a resourceVersion). */
struct kinf_httpd_timer;

/*
 * Run fn(arg) on the loop thread once, after ms milliseconds. Loop thread
 * only (a handler, a posted function, another timer). The handle is valid
 * until fn starts or the timer is cancelled. NULL for out of memory.
 * Timers still pending at stop are dropped without running.
 */
struct kinf_httpd_timer *kinf_httpd_timer_add(struct kinf_httpd *srv, long long ms,
	void (*fn)(void *arg), void *arg);

/* Cancel a pending timer (loop thread only); NULL is fine. */
void kinf_httpd_timer_cancel(struct kinf_httpd *srv, struct kinf_httpd_timer *t);

/* Counters, read on the loop thread (e.g. for /metrics). */
struct kinf_httpd_stats {
	unsigned long long connections;		/* accepted in total */
	unsigned long long requests;		/* handed to the handler */
	unsigned long long rejected;		/* answered by httpd: 4xx/5xx before the handler */
	unsigned long long timeouts;		/* closed on a deadline */
	unsigned long long open;		/* connections now */
	unsigned long long streams;		/* streams now */
	unsigned long long tls_failures;	/* TLS handshakes failed or timed out */
	unsigned long long unauth;		/* unauthenticated TCP connections now */
	unsigned long long unix_open;		/* unix socket connections now */
	/* Connections dropped to make room, by the budget that was full. */
	unsigned long long dropped_unauth_peer;	/* max_unauth_per_peer */
	unsigned long long dropped_unauth;	/* max_unauth, or max_conns */
	unsigned long long dropped_idle;	/* max_conns: an idle kept-alive one */
	unsigned long long refused;		/* max_conns or max_unix_conns with none to drop */
	unsigned long long inflight;		/* requests being answered, not long-running */
	unsigned long long queued_bytes;	/* output copied into queues, all connections */
};
void kinf_httpd_stats(const struct kinf_httpd *srv, struct kinf_httpd_stats *ret);

/* The request's parsed head (route it with kinf_apipath_parse). Borrowed from req. */
const struct kinf_httpreq *kinf_httpd_req_head(const struct kinf_httpd_req *req);
/* The request body (Content-Length bytes, NUL-terminated) or NULL. */
const char *kinf_httpd_req_body(const struct kinf_httpd_req *req, size_t *ret_len);
/* True when the request came on a unix socket listener. */
bool kinf_httpd_req_is_unix(const struct kinf_httpd_req *req);
/* The id of req's connection: unique for the server's life, never 0. */
unsigned long long kinf_httpd_req_conn_id(const struct kinf_httpd_req *req);

/*
 * Mark req long-running (a watch past its initial events) or not:
 * long-running requests are not counted in kinf_httpd_stats' inflight,
 * as the apiserver's max-requests-inflight leaves watches out.
 */
void kinf_httpd_req_long_running(struct kinf_httpd_req *req, bool on);

/*
 * Called at most once, on the loop thread, when the connection goes away
 * (client closed, deadline, server stop) before req's response is
 * complete; req is invalid after it returns. Not called once the response
 * is complete (kinf_httpd_respond, kinf_httpd_stream_end).
 */
void kinf_httpd_req_on_close(struct kinf_httpd_req *req, void (*fn)(struct kinf_httpd_req *req,
	void *arg), void *arg);

/*
 * Answer req with status, a Content-Type (NULL for none), extra header
 * lines (NULL, or "Name: value\r\n"... each ending in CRLF), and body.
 * The response is queued whole (never refused for the queue limit) and
 * req is invalid afterwards. For HEAD the body is left out. 0, or
 * -KINF_ENOMEM (the connection is closed and req is invalid all the same).
 * The respond family and kinf_httpd_stream_cut() handle their own
 * failure (the connection goes): the result is there to be counted, and
 * no caller has anything left to do, so they are not KINF_MUST_CHECK.
 */
int kinf_httpd_respond(struct kinf_httpd_req *req, int status, const char *content_type,
	const char *extra_headers, const void *body, size_t len);

/* Answer with a Status body (apistatus.h), adding Retry-After when it asks for it. */
int kinf_httpd_respond_status(struct kinf_httpd_req *req, const struct kinf_apistatus *st);

/*
 * Answer with a Status made by kinf_apistatus_* (its code, its Retry-After).
 * When making it failed, the connection is closed and -KINF_ENOMEM returned.
 */
int kinf_httpd_respond_status_body(struct kinf_httpd_req *req,
	const struct kinf_apistatus_body *st);

/*
 * Start a chunked response: status line and headers are queued at once
 * (the client sees them before the first event, as a watch needs). req
 * stays valid until kinf_httpd_stream_end() or its on-close callback.
 */
KINF_MUST_CHECK int kinf_httpd_stream_start(struct kinf_httpd_req *req, int status, const char *content_type,
	const char *extra_headers);

/*
 * Queue one chunk (copied; len 0 is ignored). -KINF_ETOOBIG when it would
 * take the connection's queue past max_queue bytes (a chunk bigger than
 * max_queue still goes to a client whose queue is empty): the client is
 * too far behind and nothing was queued; the caller ends the stream.
 * -KINF_ECLOSED when req is not streaming; -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_httpd_stream_write(struct kinf_httpd_req *req, const void *data, size_t len);

/*
 * Queue one chunk without copying: data stays valid until release(arg)
 * runs (on the loop thread, once the bytes are written or dropped); on
 * every error release(arg) has already run. Same queue limit as above.
 */
KINF_MUST_CHECK int kinf_httpd_stream_write_ref(struct kinf_httpd_req *req, const void *data, size_t len,
	void (*release)(void *arg), void *arg);

/*
 * Queue one chunk of len bytes at data, taken (malloc'd; freed once
 * written or dropped, and on every error). Same queue limit as above;
 * counted in kinf_httpd_stats' queued_bytes as a copy is.
 */
KINF_MUST_CHECK int kinf_httpd_stream_write_take(struct kinf_httpd_req *req, char *data, size_t len);

/* Bytes queued for req's connection and not yet written. */
size_t kinf_httpd_stream_queued(const struct kinf_httpd_req *req);

/*
 * Call fn once (on the loop thread), after a write has left fewer than
 * below bytes queued for req's stream: a producer that stopped at its
 * budget goes on as soon as the client has read, not on a timer. One
 * shot (set it again to be called again); cleared when the request ends.
 */
void kinf_httpd_stream_on_drain(struct kinf_httpd_req *req, size_t below,
	void (*fn)(struct kinf_httpd_req *req, void *arg), void *arg);

/*
 * End the stream with its last (zero-length) chunk; the connection goes
 * back to keep-alive once it is written (or is closed when write_timeout
 * passes first). req is invalid afterwards.
 */
void kinf_httpd_stream_end(struct kinf_httpd_req *req);

/*
 * End the stream early: the chunks queued and not begun are dropped (a
 * chunk partly written is finished, so the framing holds), last (len
 * bytes, may be 0) is queued as one chunk whatever the queue's limit,
 * then the last chunk; as kinf_httpd_stream_end() afterwards. For a
 * client too far behind, whose end must not wait behind what it has
 * not read. -KINF_ECLOSED when req is not streaming (req is then
 * untouched), -KINF_ENOMEM (the connection is closed; req invalid).
 */
int kinf_httpd_stream_cut(struct kinf_httpd_req *req, const void *last, size_t len);

/*
 * req's stream is one document written in pieces (a large list), not a
 * sequence of them (a watch): at stop its connection is closed rather
 * than the stream ended with its last chunk, so the client sees it cut
 * short.
 */
void kinf_httpd_stream_whole(struct kinf_httpd_req *req);

/*
 * Call fn once (on the loop thread) when req's stream made no write
 * progress for write_timeout_ms, instead of closing the connection: fn
 * may end it (kinf_httpd_stream_cut), and the connection then has
 * another write_timeout_ms to take what is left before it is closed.
 * NULL fn: closed at once, the default. Cleared when the request ends.
 */
void kinf_httpd_stream_on_stall(struct kinf_httpd_req *req,
	void (*fn)(struct kinf_httpd_req *req, void *arg), void *arg);

/* Close req's connection now, dropping what is queued; req is invalid afterwards. */
void kinf_httpd_req_abort(struct kinf_httpd_req *req);

#endif
