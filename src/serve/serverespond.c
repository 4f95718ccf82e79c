#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "serverespond.h"
#include "servewarn.h"

/*
 * serverespond.c: answers, as every handler makes them: the Warning
 * headers (the context's upstream away, a source failed, the upstream's
 * own), the Statuses several handlers answer, and the request counters.
 */
/* `context "admin" (https://...)`, or the URL alone without a context name. */
void serve_describe_ctx(const struct serve_ctx *x, char *buf, size_t size) {
	if (x->name) {
		snprintf(buf, size, "context \"%s\" (%s)", x->name, x->upstream);
	} else {
		snprintf(buf, size, "%s", x->upstream);
	}
}

/* "pods", "pods in namespace \"a\"", for messages. */
void serve_describe_source(const struct serve_source *s, struct kinf_buf *out) {
	const struct serve_coll *c = s->coll;
	kinf_buf_putf(out, "%s%s%s", c->resource, c->group[0] ? "." : "", c->group);
	if (s->namespace) {
		kinf_buf_putf(out, " in namespace \"%s\"", s->namespace);
	}
}

/* One Warning line of text, unless an earlier one of the answer said the same. */
static void warning_once(struct kinf_buf *out, struct kinf_strv *seen, const struct kinf_buf *text) {
	if (!text->len || kinf_strv_contains(seen, text->data)) {
		return;
	}
	if (kinf_strv_push_str(seen, text->data) < 0) {
		kinf_buf_fail(out, -KINF_ENOMEM);
	}
	serve_warning_line(out, text->data, text->len);
}

int serve_warning_headers(const struct serve_request *r, struct kinf_buf *out) {
	struct kinf_serve *srv = r->srv;
	size_t ctx = r->ctx;
	const struct serve_ctx *x = &srv->ctxs[ctx];
	struct kinf_buf text = {0};
	struct kinf_strv seen = {0};
	int rc = kinf_buf_error(&r->warning);
	warning_once(out, &seen, &r->warning);
	char desc[600];
	serve_describe_ctx(x, desc, sizeof(desc));
	if (x->down_since) {
		/* The same text for the whole outage: clients show each text once. */
		kinf_buf_putf(&text, "kinf serve: upstream %s unreachable since %s (%s): "
				"answering from the cache", desc, x->down_since_utc,
				x->down_why ? x->down_why : "");
		rc = rc ? rc : kinf_buf_error(&text);
		warning_once(out, &seen, &text);
	}
	for (size_t i = 0; i < srv->n_sources; i++) {
		const struct serve_source *s = &srv->sources[i];
		if (s->ctx == ctx && s->failed) {
			rc = rc ? rc : kinf_buf_error(&text);
			kinf_buf_reset(&text);
			kinf_buf_puts(&text, "kinf serve: ");
			serve_describe_source(s, &text);
			kinf_buf_putf(&text, " of %s failed: %s; not served", desc, s->failed);
			rc = rc ? rc : kinf_buf_error(&text);
			warning_once(out, &seen, &text);
		}
	}
	if (r->coll) {
		/* The upstream's own, as its answer would have carried them. */
		serve_coll_warnings(r->coll, &seen, out);
	}
	rc = rc ? rc : kinf_buf_error(&text);
	kinf_buf_release(&text);
	kinf_strv_release(&seen);
	return rc ? rc : kinf_buf_error(out);
}

const double serve_latency_bounds[SERVE_LATENCY_BOUNDS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	0.25, 0.5, 1, 2.5, 5,
};


void serve_count(struct kinf_serve *srv, int code, long long start_us) {
	double s = (double)(kinf_clock_now_us() - start_us) / 1e6;
	srv->requests++;
	if (code >= 100 && code < 600) {
		srv->requests_by_code[code / 100]++;
	}
	srv->latency_count++;
	srv->latency_sum += s;
	for (size_t i = 0; i < SERVE_LATENCY_BOUNDS; i++) {
		if (s <= serve_latency_bounds[i]) {
			srv->latency_buckets[i]++;
		}
	}
}

void serve_respond_oom(struct serve_request *r) {
	struct kinf_apistatus_body b = {0};
	serve_count(r->srv, 500, r->start_us);
	kinf_apistatus_internal(&b, "out of memory");
	if (kinf_buf_error(&b.json) < 0) {
		/* Not even that: the connection goes, never half an answer. */
		kinf_httpd_req_abort(r->req);
	} else {
		kinf_httpd_respond_status_body(r->req, &b);
	}
	kinf_apistatus_body_release(&b);
}

void serve_respond(struct serve_request *r, int code, const char *content_type,
		const char *body, size_t len) {
	struct kinf_buf h = {0};
	if (serve_warning_headers(r, &h) < 0) {
		kinf_buf_release(&h);
		serve_respond_oom(r);
		return;
	}
	serve_count(r->srv, code, r->start_us);
	kinf_httpd_respond(r->req, code, content_type ? content_type : "application/json",
			h.len ? h.data : NULL, body, len);
	kinf_buf_release(&h);
}

void serve_respond_buf(struct serve_request *r, int code, const char *content_type,
		const struct kinf_buf *body) {
	if (kinf_buf_error(body)) {
		serve_respond_oom(r);
		return;
	}
	serve_respond(r, code, content_type, body->data ? body->data : "", body->len);
}

void serve_respond_status(struct serve_request *r, const struct kinf_apistatus_body *st) {
	struct kinf_buf h = {0};
	if (kinf_buf_error(&st->json) || !st->json.len) {
		serve_respond_oom(r);
		return;
	}
	int rc = serve_warning_headers(r, &h);
	/* client-go retries a 429 or 5xx that says when. */
	if (st->retry_after_seconds > 0) {
		kinf_buf_putf(&h, "Retry-After: %d\r\n", st->retry_after_seconds);
	}
	if (rc < 0 || kinf_buf_error(&h)) {
		kinf_buf_release(&h);
		serve_respond_oom(r);
		return;
	}
	serve_count(r->srv, st->code, r->start_us);
	kinf_httpd_respond(r->req, st->code, "application/json", h.len ? h.data : NULL,
			st->json.data, st->json.len);
	kinf_buf_release(&h);
}

void serve_respond_text(struct serve_request *r, int code, const char *text, size_t len) {
	serve_respond(r, code, "text/plain; charset=utf-8", text, len);
}

void serve_respond_page_not_found(struct serve_request *r) {
	serve_respond_text(r, 404, KINF_APISTATUS_PAGE_NOT_FOUND,
			strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
}

void serve_metric_head(struct kinf_buf *out, const char *name, const char *type,
		const char *help) {
	kinf_buf_putf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int serve_stream_write_buf(struct kinf_httpd_req *req, const struct kinf_buf *b) {
	int rc = kinf_buf_error(b);
	return rc < 0 ? rc : kinf_httpd_stream_write(req, b->data, b->len);
}

/*
 * A 400 Status with msg into out; nothing when building msg failed (an
 * empty Status is answered as the 500 "out of memory").
 */
void serve_bad_request(struct kinf_apistatus_body *out, const struct kinf_buf *msg) {
	if (!kinf_buf_error(msg)) {
		kinf_apistatus_bad_request(out, msg->data ? msg->data : "");
	}
}

void serve_respond_expired(struct serve_request *r, const char *message) {
	struct kinf_apistatus_body b = {0};
	kinf_apistatus_expired(&b, message);
	serve_respond_status(r, &b);
	kinf_apistatus_body_release(&b);
}

void serve_too_large_status(struct kinf_apistatus_body *out, const char *rv,
		unsigned long long current) {
	struct kinf_buf msg = {0};
	kinf_buf_putf(&msg, "Timeout: Too large resource version: %s, current: %llu", rv, current);
	struct kinf_apistatus st = { .code = 504, .reason = "Timeout", .message = msg.data,
		.details = true, .n_causes = 1, .retry_after_seconds = 1,
		.causes = { { .reason = "ResourceVersionTooLarge",
			.message = "Too large resource version" } } };
	if (!kinf_buf_error(&msg)) {
		kinf_apistatus_put(out, &st);
	}
	kinf_buf_release(&msg);
}

/* 504 for a resourceVersion the cache has not reached (client-go retries it). */
void serve_respond_too_large(struct serve_request *r, const char *rv,
		unsigned long long current) {
	struct kinf_apistatus_body b = {0};
	serve_too_large_status(&b, rv, current);
	serve_respond_status(r, &b);
	kinf_apistatus_body_release(&b);
}
