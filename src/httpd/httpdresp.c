#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "httpd_int.h"

/*
 * httpdresp.c: what the handler does with a request (httpd.h): whole
 * responses, streams (chunked), their budgets and callbacks, and the
 * answers httpd makes itself to a request it refuses.
 */

static const char *http_date(struct kinf_httpd *srv) {
	time_t t = time(NULL);
	if (t != srv->date_time) {
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(srv->date, sizeof(srv->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		srv->date_time = t;
	}
	return srv->date;
}

/* The status line and headers of a response, into head. */
static int response_head(struct conn *c, struct kinf_buf *head, int status,
		const char *content_type, const char *extra, long long content_length,
		bool chunked) {
	bool keep = !c->close_after;
	int rc = kinf_buf_printf(head, "HTTP/1.1 %d %s\r\nDate: %s\r\n", status,
		kinf_apistatus_status_text(status), http_date(c->srv));
	if (rc == 0 && content_type) {
		rc = kinf_buf_printf(head, "Content-Type: %s\r\n", content_type);
	}
	if (rc == 0 && content_length >= 0) {
		rc = kinf_buf_printf(head, "Content-Length: %lld\r\n", content_length);
	}
	if (rc == 0 && chunked) {
		rc = kinf_buf_append_str(head, "Transfer-Encoding: chunked\r\n");
	}
	if (rc == 0 && !keep) {
		rc = kinf_buf_append_str(head, "Connection: close\r\n");
	} else if (rc == 0 && c->req_active && c->req.head && c->req.head->minor == 0) {
		rc = kinf_buf_append_str(head, "Connection: keep-alive\r\n");
	}
	if (rc == 0 && extra) {
		rc = kinf_buf_append_str(head, extra);
	}
	return rc ? rc : kinf_buf_append_str(head, "\r\n");
}

/* The request is answered: back to reading the next one, or closing. */
static void request_done(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (c->state == C_STREAM) {
		srv->stats.streams--;
	}
	httpd_req_inactive(c);
	c->req.on_close = NULL;
	c->req.on_drain = NULL;
	c->req.on_stall = NULL;
	kinf_httpreq_free(c->req.head);
	c->req.head = NULL;
	free(c->req.body);
	c->req.body = NULL;
	c->req.body_len = 0;
	if (c->close_after || c->peer_eof || srv->stopping) {
		c->close_after = true;
		c->state = C_DONE;
		return;
	}
	c->state = C_HEAD;
	c->deadline = kinf_clock_now_ms() + (c->in.len > c->in_off ? srv->opts.header_timeout_ms :
		srv->opts.idle_timeout_ms);
	c->kick = true;
}

/* An error answered by httpd itself (no handler): plain text as Go's net/http, then close. */
void httpd_reject_plain(struct conn *c, int status, const char *detail, const char *extra) {
	struct kinf_buf head = {0}, body = {0};
	c->close_after = true;
	c->srv->stats.rejected++;
	int rc = kinf_buf_printf(&body, "%d %s%s%s", status, kinf_apistatus_status_text(status),
		detail ? ": " : "", detail ? detail : "");
	if (rc == 0) {
		rc = response_head(c, &head, status, "text/plain; charset=utf-8", extra,
			(long long)body.len, false);
	}
	if (rc == 0) {
		rc = httpd_queue_copy2(c, head.data, head.len, body.data, body.len);
	}
	kinf_buf_release(&head);
	kinf_buf_release(&body);
	c->state = C_DONE;
	if (rc < 0) {
		httpd_conn_kill(c);
	}
}

int httpd_respond_common(struct kinf_httpd_req *req, int status, const char *content_type,
		const char *extra, const void *body, size_t len) {
	struct conn *c = req->conn;
	struct kinf_buf head = {0};
	bool head_only = req->head && strcmp(req->head->method, "HEAD") == 0;
	int rc = response_head(c, &head, status, content_type, extra, (long long)len, false);
	if (rc == 0) {
		rc = httpd_queue_copy2(c, head.data, head.len, head_only ? NULL : body, head_only ? 0 : len);
	}
	kinf_buf_release(&head);
	if (rc < 0) {
		httpd_req_inactive(c);
		httpd_conn_kill(c);
		return rc;
	}
	request_done(c);
	return 0;
}

int kinf_httpd_respond(struct kinf_httpd_req *req, int status, const char *content_type,
		const char *extra_headers, const void *body, size_t len) {
	return httpd_respond_common(req, status, content_type, extra_headers, body, len);
}

int kinf_httpd_respond_status_body(struct kinf_httpd_req *req,
		const struct kinf_apistatus_body *st) {
	char extra[64] = "";
	if (kinf_buf_error(&st->json) || !st->json.len) {
		/* Never an answer without its body: the connection goes. */
		httpd_req_inactive(req->conn);
		httpd_conn_kill(req->conn);
		return -KINF_ENOMEM;
	}
	if (st->retry_after_seconds > 0) {
		snprintf(extra, sizeof(extra), "Retry-After: %d\r\n", st->retry_after_seconds);
	}
	return httpd_respond_common(req, st->code, "application/json", extra[0] ? extra : NULL,
		st->json.data, st->json.len);
}

int kinf_httpd_respond_status(struct kinf_httpd_req *req, const struct kinf_apistatus *st) {
	struct kinf_apistatus_body body = {0};
	/* A failure stays in body.json: the connection's end below. */
	int made = kinf_apistatus_make(&body, st);
	int rc = kinf_httpd_respond_status_body(req, &body);
	kinf_apistatus_body_release(&body);
	return made < 0 ? made : rc;
}

/* A Status answer from httpd itself, before the handler (401, 413), with extra headers. */
void httpd_reject_status(struct conn *c, const struct kinf_apistatus_body *st,
		const char *extra) {
	if (kinf_buf_error(&st->json) || !st->json.len) {
		httpd_reject_plain(c, 500, NULL, NULL);
		return;
	}
	c->srv->stats.rejected++;
	c->req_active = true;
	c->req.conn = c;
	c->req.on_close = NULL;
	c->req.on_drain = NULL;
	c->req.on_stall = NULL;
	httpd_respond_common(&c->req, st->code, "application/json", extra, st->json.data, st->json.len);
}

int kinf_httpd_stream_start(struct kinf_httpd_req *req, int status, const char *content_type,
		const char *extra_headers) {
	struct conn *c = req->conn;
	struct kinf_buf head = {0};
	req->chunked = req->head->minor >= 1;
	if (!req->chunked) {
		c->close_after = true;	/* HTTP/1.0: the end of the body is the close */
	}
	int rc = response_head(c, &head, status, content_type, extra_headers, -1, req->chunked);
	if (rc == 0) {
		rc = httpd_queue_copy2(c, head.data, head.len, NULL, 0);
	}
	kinf_buf_release(&head);
	if (rc < 0) {
		return rc;
	}
	c->qtail->keep = true;
	c->state = C_STREAM;
	c->srv->stats.streams++;
	return 0;
}

size_t kinf_httpd_stream_queued(const struct kinf_httpd_req *req) {
	return req->conn->queued;
}

static int stream_check(struct kinf_httpd_req *req, size_t len) {
	struct conn *c = req->conn;
	if (c->state != C_STREAM || c->dead) {
		return -KINF_ECLOSED;
	}
	/* An event bigger than the whole queue still goes to a client that
	 * has caught up; otherwise the queue's bound holds. */
	if (c->queued && (len > c->srv->opts.max_queue ||
			c->queued > c->srv->opts.max_queue - len)) {
		return -KINF_ETOOBIG;
	}
	return 0;
}

int kinf_httpd_stream_write(struct kinf_httpd_req *req, const void *data, size_t len) {
	int rc = stream_check(req, len);
	if (rc < 0 || !len) {
		return rc;
	}
	struct seg *sg = httpd_seg_new(data, len, true, req->chunked);
	if (!sg) {
		return -KINF_ENOMEM;
	}
	httpd_queue_push(req->conn, sg);
	return 0;
}

int kinf_httpd_stream_write_ref(struct kinf_httpd_req *req, const void *data, size_t len,
		void (*release)(void *arg), void *arg) {
	int rc = stream_check(req, len);
	struct seg *sg = rc < 0 || !len ? NULL : httpd_seg_new(data, len, false, req->chunked);
	if (!sg) {
		if (release) {
			release(arg);
		}
		return rc < 0 || !len ? rc : -KINF_ENOMEM;
	}
	sg->release = release;
	sg->arg = arg;
	httpd_queue_push(req->conn, sg);
	return 0;
}

int kinf_httpd_stream_write_take(struct kinf_httpd_req *req, char *data, size_t len) {
	int rc = stream_check(req, len);
	struct seg *sg = rc < 0 || !len ? NULL : httpd_seg_new(data, len, false, req->chunked);
	if (!sg) {
		free(data);
		return rc < 0 || !len ? rc : -KINF_ENOMEM;
	}
	sg->owned = true;
	httpd_queue_push(req->conn, sg);
	return 0;
}

void kinf_httpd_stream_end(struct kinf_httpd_req *req) {
	struct conn *c = req->conn;
	if (c->state != C_STREAM) {
		return;
	}
	/* A HEAD's answer has no body: not even the last chunk. */
	bool head_only = strcmp(req->head->method, "HEAD") == 0;
	if (req->chunked && !head_only && httpd_queue_copy2(c, "0\r\n\r\n", 5, NULL, 0) < 0) {
		c->close_after = true;
	}
	request_done(c);
}

int kinf_httpd_stream_cut(struct kinf_httpd_req *req, const void *last, size_t len) {
	struct conn *c = req->conn;
	if (c->state != C_STREAM || c->dead) {
		return -KINF_ECLOSED;
	}
	httpd_queue_drop_unbegun(c);
	struct seg *sg = len ? httpd_seg_new(last, len, true, req->chunked) : NULL;
	if (len && !sg) {
		kinf_httpd_req_abort(req);
		return -KINF_ENOMEM;
	}
	if (sg) {
		httpd_queue_push(c, sg);
	}
	kinf_httpd_stream_end(req);
	return 0;
}

void kinf_httpd_stream_whole(struct kinf_httpd_req *req) {
	req->whole = true;
}

void kinf_httpd_stream_on_stall(struct kinf_httpd_req *req,
		void (*fn)(struct kinf_httpd_req *req, void *arg), void *arg) {
	req->on_stall = fn;
	req->on_stall_arg = arg;
}

void kinf_httpd_req_abort(struct kinf_httpd_req *req) {
	struct conn *c = req->conn;
	if (c->state == C_STREAM) {
		c->srv->stats.streams--;
		c->state = C_DONE;
	}
	httpd_req_inactive(c);
	httpd_conn_kill(c);
}

unsigned long long kinf_httpd_req_conn_id(const struct kinf_httpd_req *req) {
	return req->conn->id;
}

void kinf_httpd_req_long_running(struct kinf_httpd_req *req, bool on) {
	struct kinf_httpd *srv = req->conn->srv;
	if (!req->counted || req->long_running == on) {
		return;
	}
	req->long_running = on;
	if (on) {
		srv->long_running++;
	} else {
		srv->long_running--;
	}
}

void kinf_httpd_req_on_close(struct kinf_httpd_req *req, void (*fn)(struct kinf_httpd_req *req,
		void *arg), void *arg) {
	req->on_close = fn;
	req->on_close_arg = arg;
}

void kinf_httpd_stream_on_drain(struct kinf_httpd_req *req, size_t below,
		void (*fn)(struct kinf_httpd_req *req, void *arg), void *arg) {
	req->on_drain = fn;
	req->on_drain_arg = arg;
	req->drain_below = below;
}

/* After a write: a streaming request's on-drain callback, once its queue fell under its mark. */
void httpd_conn_drained(struct conn *c) {
	struct kinf_httpd_req *req = &c->req;
	if (c->dead || c->state != C_STREAM || !req->on_drain || c->queued >= req->drain_below) {
		return;
	}
	void (*fn)(struct kinf_httpd_req *, void *) = req->on_drain;
	req->on_drain = NULL;
	fn(req, req->on_drain_arg);
}

const struct kinf_httpreq *kinf_httpd_req_head(const struct kinf_httpd_req *req) {
	return req->head;
}

const char *kinf_httpd_req_body(const struct kinf_httpd_req *req, size_t *ret_len) {
	if (ret_len) {
		*ret_len = req->body_len;
	}
	return req->body;
}

bool kinf_httpd_req_is_unix(const struct kinf_httpd_req *req) {
	return req->conn->is_unix;
}
