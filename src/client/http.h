#ifndef KINF_HTTP_H
#define KINF_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

struct kinf_rest_config;
struct kinf_auth;

/*
 * HTTP to the API server over libcurl: gzip accepted, User-Agent
 * kinf/VERSION, credentials from struct kinf_auth (never over plain http),
 * TLS material handed over in memory (*_BLOB). A client and its clones
 * share their connections (transport.h, a thread of its own): one TCP
 * connection for all their requests when the server speaks HTTP/2 (ALPN
 * h2), as client-go's informers share one; over HTTP/1.1 one per request
 * in flight, kept alive for the next. A client is used by one thread at a
 * time; clients in different threads may share their auth.
 */
struct kinf_http;

/* Bytes/s below which an ordinary (not watch) request counts as stalled. */
#define KINF_HTTP_MIN_SPEED 1024L
/* Default bound of a response body collected in memory (discovery, /version). */
#define KINF_HTTP_DEFAULT_MAX_BODY ((size_t)64 << 20)

struct kinf_http_opts {
	long connect_timeout_ms;	/* 0: 10 s */
	long request_timeout_ms;	/* 0: none (--request-timeout) */
	/*
	 * Abort a transfer that stays below its minimum speed this long (0:
	 * off): KINF_HTTP_MIN_SPEED for ordinary requests, 1 byte/s for
	 * watches (kinf_http_request.watch), which may idle between events.
	 */
	long low_speed_time_s;
	size_t max_error_body;		/* bytes of a non-2xx body kept; 0: 1 MiB */
	size_t max_body;		/* bytes of a 2xx body collected (no on_body); 0: 64 MiB */
	/* Polled during transfers; a true return aborts with -KINF_ECANCELED. */
	bool (*canceled)(void *userdata);
	void *canceled_userdata;
	/*
	 * Optional: called with the text of each code-299 warning with text in
	 * a response's Warning headers (kinf_header_warnings), the ones
	 * client-go's WarningWriter shows, as the headers arrive (before the
	 * body: a watch's at its start). text is len bytes, NUL-terminated,
	 * unescaped. Called on the thread that reads the response, possibly
	 * several clients' at once: it must be thread-safe and quick.
	 */
	void (*on_warning)(const char *text, size_t len, void *userdata);
	void *warning_userdata;
};

/*
 * config and auth are borrowed and must outlive the client. NULL when out
 * of memory or libcurl could not initialise. Safe from any thread.
 */
struct kinf_http *kinf_http_new(const struct kinf_rest_config *config,
		struct kinf_auth *auth, const struct kinf_http_opts *opts);
void kinf_http_free(struct kinf_http *http);

/*
 * Called with each piece of a 2xx response body as it arrives. Return 0 to
 * go on, or a negative KINF_E* to abort the transfer (the request returns it).
 */
typedef int (*kinf_http_body_func)(const char *data, size_t len, void *userdata);

struct kinf_http_request {
	const char *path;	/* "/api/v1/pods?limit=500", relative to the server */
	const char *accept;	/* NULL: application/json */
	kinf_http_body_func on_body;	/* NULL: collect into response->body */
	/*
	 * Optional, asked between waits for data (kinf_http_interrupt wakes the
	 * wait): a negative KINF_E* ends the transfer with it, as from on_body.
	 * For a body consumed in another thread that failed while no data comes.
	 */
	int (*aborted)(void *userdata);
	void *userdata;
	long timeout_ms;	/* overrides the client's request timeout; -1 none */
	/*
	 * A watch: the server may send nothing between events for a minute
	 * or more, so only a silence of low_speed_time_s counts as stalled.
	 */
	bool watch;
	/*
	 * A POST of this JSON body (body_len bytes, borrowed) instead of a
	 * GET: a review (SelfSubjectAccessReview) that changes nothing.
	 */
	const char *body;
	size_t body_len;
	/* Keep the response's header lines in response->headers. */
	bool keep_headers;
	/*
	 * A request relayed for someone else (kinf serve forwarding a read):
	 * a 429 or 5xx with Retry-After is returned as it came, not retried
	 * (whoever asked retries), and no silence counts as stalled
	 * (low_speed_time_s: a followed log may be quiet for long; whoever
	 * asked decides). A 401 still refreshes the credentials once.
	 */
	bool relay;
};

struct kinf_http_response {
	/*
	 * The status; with on_body, already set when on_body is first called
	 * (a relay reads it and headers there, before the body goes on).
	 */
	long status;
	char *content_type;	/* owned, or NULL */
	struct kinf_buf body;	/* when on_body was NULL, or the error body */
	long retry_after_s;	/* Retry-After seconds (LONG_MAX: more), else -1 */
	/*
	 * With kinf_http_request.keep_headers: the final response's header
	 * lines as received ("Name: value\r\n" each, no status line), values
	 * checked (header.h); lines past 64 KiB in all are dropped.
	 */
	struct kinf_buf headers;
};

/*
 * The value of the first header named name (any case) in resp->headers
 * (keep_headers), len bytes at the result (borrowed from resp); NULL when
 * there is none.
 */
const char *kinf_http_response_header(const struct kinf_http_response *resp, const char *name,
		size_t *ret_len);

/*
 * The longest Retry-After wait obeyed: a 429 or 5xx asking for more is not
 * retried (client-go would wait it out, and a hostile server says 10^9).
 */
#define KINF_HTTP_MAX_RETRY_AFTER_S 60

/*
 * A Retry-After value (len bytes, trimmed) as client-go reads it
 * (strconv.Atoi): seconds, 0 for a negative number, LONG_MAX for one too
 * large, -1 for anything else (an HTTP-date, garbage: not a retry).
 */
long kinf_http_parse_retry_after(const char *value, size_t len);

void kinf_http_response_release(struct kinf_http_response *resp);

/*
 * GET a path (or POST req->body). A non-2xx answer returns -KINF_EHTTP (or -KINF_EGONE for 410,
 * -KINF_EAUTH for 401) with reterr filled from the server's Status: code,
 * reason, first cause and the message ("pods is forbidden: User ..."). A 401
 * with exec or token-file credentials is retried once with fresh ones.
 * Transport errors: -KINF_ECONNECT, -KINF_ETLS, -KINF_ETIMEDOUT (request
 * timeout, or stalled below the minimum speed), -KINF_ECANCELED;
 * -KINF_ETOOBIG for a collected body over max_body. ret_resp (may be NULL)
 * gets status and headers always.
 */
KINF_MUST_CHECK int kinf_http_get(struct kinf_http *http, const struct kinf_http_request *req,
		struct kinf_http_response *ret_resp, struct kinf_error *reterr);

/*
 * Replace the cancel callback (opts.canceled) after creation, e.g. when a
 * reflector thread takes the client over.
 */
void kinf_http_set_cancel(struct kinf_http *http, bool (*canceled)(void *),
		void *userdata);

/*
 * Replace the warning callback (opts.on_warning; fn NULL: none) after
 * creation, e.g. for a clone whose warnings belong to one informer, or
 * to nobody but the client a relay answers (its Warning headers go on).
 */
void kinf_http_set_warning(struct kinf_http *http,
		void (*fn)(const char *text, size_t len, void *userdata), void *userdata);

/*
 * Wake the transfer another thread is running on http so that it checks
 * its cancel callback at once, not at libcurl's next progress call (up to
 * a second later on an idle watch). Safe from any thread, also when idle.
 */
void kinf_http_interrupt(struct kinf_http *http);

/* The server URL without a trailing slash, e.g. "https://127.0.0.1:6443". */
const char *kinf_http_server(const struct kinf_http *http);

/* Requests made so far (for --stats and tests), a clone's included. */
unsigned long kinf_http_request_count(const struct kinf_http *http);

/*
 * A second client to the same server with the same configuration,
 * credentials (shared: config and auth must outlive it too) and options,
 * for another thread: an informer of a set, or the list's next page asked
 * for while the current one arrives. Its requests share http's connections
 * (one HTTP/2 connection; their own over HTTP/1.1) and count in http's;
 * http must outlive it.
 */
struct kinf_http *kinf_http_clone(struct kinf_http *http);

#endif
