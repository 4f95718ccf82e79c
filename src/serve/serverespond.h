#ifndef KINF_SERVERESPOND_H
#define KINF_SERVERESPOND_H

/*
 * serverespond.c, a leaf of serve/: answers (with the Warning headers
 * of the context and the collection), the Statuses several handlers
 * answer, the request counters.
 */
#include "apistatus.h"
#include "serveint.h"

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
/* The request latency histogram's bounds in seconds (srv->latency_buckets). */
#define SERVE_LATENCY_BOUNDS 15
extern const double serve_latency_bounds[SERVE_LATENCY_BOUNDS];
/* Count a finished request in the metrics; start_us: its kinf_clock_now_us() on arrival. */
void serve_count(struct kinf_serve *srv, int code, long long start_us);

/* 404 "404 page not found", as text (the apiserver's NotFound handler). */
void serve_respond_page_not_found(struct serve_request *r);
/* An answer of text/plain. */
void serve_respond_text(struct serve_request *r, int code, const char *text, size_t len);
/*
 * A 400 Status with msg into out; nothing when building msg failed (an
 * empty Status is answered as the 500 "out of memory").
 */
void serve_bad_request(struct kinf_apistatus_body *out, const struct kinf_buf *msg);
/* 410 Expired with message. */
void serve_respond_expired(struct serve_request *r, const char *message);
/* The 504 Status "Too large resource version: RV, current: N" into out. */
void serve_too_large_status(struct kinf_apistatus_body *out, const char *rv,
		unsigned long long current);
/* 504 for a resourceVersion the cache has not reached (client-go retries it). */
void serve_respond_too_large(struct serve_request *r, const char *rv,
		unsigned long long current);
/*
 * Queue b, built with the kinf_buf_put* family, as one chunk of req's
 * stream: nothing and -KINF_ENOMEM when an append to it failed (the
 * caller ends the stream: never an event with a hole in it), else as
 * kinf_httpd_stream_write().
 */
KINF_MUST_CHECK int serve_stream_write_buf(struct kinf_httpd_req *req, const struct kinf_buf *b);
/* `context "admin" (https://...)`, or the URL alone without a context name. */
void serve_describe_ctx(const struct serve_ctx *x, char *buf, size_t size);
/* "pods", "pods in namespace \"a\"", for messages. */
void serve_describe_source(const struct serve_source *s, struct kinf_buf *out);
/* A metric's # HELP and # TYPE lines. */
void serve_metric_head(struct kinf_buf *out, const char *name, const char *type,
		const char *help);

#endif
