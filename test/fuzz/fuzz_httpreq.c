/*
 * kinf serve's request parser (src/httpreq.c): the HTTP head with its
 * limits, the Kubernetes query parameters, the Accept header and the API
 * path router, then Status bodies naming what was parsed (src/apistatus.c).
 * Input: one flags byte, then the bytes a client sends. Flags: bit 0 tight
 * limits (line 64, head 256, 4 headers, body 16), else the defaults; bits
 * 1-3 choose a cut point for the prefix check below.
 *
 * Properties checked besides memory safety: a failure carries an HTTP
 * status httpd can answer and a message; a parsed head says the same when
 * parsed alone (it is self-contained) and no shorter prefix of the input
 * completes a head (heads are not accepted early); parsed values respect
 * the limits; the decoded path starts with '/'; the router's parts are
 * non-empty; every Status body kinf writes is valid JSON, whatever bytes
 * the names and messages in it hold.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apistatus.h"
#include "buf.h"
#include "fuzz.h"
#include "httpreq.h"
#include "json.h"

static bool known_status(int s) {
	return s == 400 || s == 413 || s == 414 || s == 417 || s == 431 || s == 500 ||
		s == 501 || s == 505;
}

/* A made Status: JSON ending in a newline, sent with code, its own "code". */
static void check_status(struct kinf_apistatus_body *b, int code) {
	struct kinf_buf *j = &b->json;
	char tail[24];
	FUZZ_CHECK(b->code == code && b->retry_after_seconds == 0);
	FUZZ_CHECK(j->len && j->data[j->len - 1] == '\n');
	FUZZ_CHECK(kinf_json_validate(j->data, j->len - 1, 16, NULL) == 0);
	snprintf(tail, sizeof(tail), ",\"code\":%d}\n", code);
	FUZZ_CHECK(j->len > strlen(tail) && strcmp(j->data + j->len - strlen(tail), tail) == 0);
}

static void check_route(const struct kinf_httpreq *req) {
	struct kinf_apipath p;
	if (kinf_apipath_parse(req->path, &p) < 0) {
		return;
	}
	if (p.kind == KINF_APIPATH_RESOURCE) {
		FUZZ_CHECK(p.group && p.version && *p.version && p.resource && *p.resource);
		FUZZ_CHECK(!p.name || *p.name);
		FUZZ_CHECK(!p.subresource || (*p.subresource && p.name));
		FUZZ_CHECK(!p.namespace_ || *p.namespace_);
	}
	if (p.kind == KINF_APIPATH_GROUP_VERSION) {
		FUZZ_CHECK(p.group && p.version && *p.version);
	}
	const char *verb = kinf_apipath_verb(&p, req->method, false);
	FUZZ_CHECK(verb && *verb);
	struct kinf_apistatus_body b = {0};
	FUZZ_CHECK((kinf_apistatus_not_found(&b, p.group ? p.group : "",
		p.resource ? p.resource : "pods", p.name ? p.name : req->path), kinf_buf_error(&b.json)) == 0);
	check_status(&b, 404);
	FUZZ_CHECK((kinf_apistatus_bad_request(&b, req->target), kinf_buf_error(&b.json)) == 0);
	check_status(&b, 400);
	FUZZ_CHECK((kinf_apistatus_forbidden(&b, p.group, p.resource, p.name, req->query), kinf_buf_error(&b.json)) == 0);
	check_status(&b, 403);
	kinf_apistatus_body_release(&b);
	kinf_apipath_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	struct kinf_httpreq_limits tight = { .max_line = 64, .max_head = 256, .max_headers = 4,
		.max_body = 16 };
	const struct kinf_httpreq_limits *lim = flags & 1 ? &tight : NULL;
	size_t max_headers = flags & 1 ? 4 : KINF_HTTPREQ_MAX_HEADERS;
	long long max_body = flags & 1 ? 16 : KINF_HTTPREQ_MAX_BODY;
	const char *s = (const char *)in.p;
	struct kinf_httpreq *req = NULL;
	struct kinf_error err = {0};
	size_t hl = 0;

	int rc = kinf_httpreq_parse(s, in.n, lim, &req, &hl, &err);
	FUZZ_CHECK(rc <= 1);
	if (rc < 0) {
		FUZZ_CHECK(known_status(err.http_status) && err.message[0]);
		FUZZ_CHECK(err.code == -rc);
	}
	/* A prefix completes a head only when the whole input has that head. */
	size_t cut = (in.n * ((flags >> 1) & 7u)) / 8;
	if (rc == 1 && cut >= hl) {
		cut = hl - 1;
	}
	if (cut < in.n) {
		struct kinf_httpreq *r2 = NULL;
		size_t hl2 = 0;
		int rc2 = kinf_httpreq_parse(s, cut, lim, &r2, &hl2, NULL);
		if (rc2 == 1) {
			FUZZ_CHECK(rc == 1 && hl2 == hl);
			kinf_httpreq_free(r2);
		}
	}
	if (rc != 1) {
		return 0;
	}
	FUZZ_CHECK(hl > 0 && hl <= in.n);
	{
		struct kinf_httpreq *r3 = NULL;
		size_t hl3 = 0;
		FUZZ_CHECK(kinf_httpreq_parse(s, hl, lim, &r3, &hl3, NULL) == 1 && hl3 == hl);
		FUZZ_CHECK(strcmp(r3->target, req->target) == 0 && r3->n_headers == req->n_headers);
		kinf_httpreq_free(r3);
	}
	FUZZ_CHECK(req->method && *req->method && req->target[0] == '/');
	FUZZ_CHECK(req->path[0] == '/');
	FUZZ_CHECK(req->n_headers <= max_headers);
	FUZZ_CHECK(req->content_length <= max_body);
	FUZZ_CHECK(!(req->chunked && req->content_length >= 0));
	for (size_t i = 0; i < req->n_headers; i++) {
		FUZZ_CHECK(*req->headers[i].name && !strchr(req->headers[i].name, ':'));
	}
	for (size_t i = 0; i < req->n_params; i++) {
		FUZZ_CHECK(req->params[i].name && req->params[i].value);
	}

	struct kinf_apiquery q;
	struct kinf_error qerr = {0};
	int qrc = kinf_apiquery_parse(req, &q, &qerr);
	if (qrc < 0) {
		FUZZ_CHECK(qrc == -KINF_EINVAL && qerr.http_status == 400 && qerr.message[0]);
		struct kinf_apistatus_body b = {0};
		FUZZ_CHECK((kinf_apistatus_bad_request(&b, qerr.message), kinf_buf_error(&b.json)) == 0);
		check_status(&b, 400);
		kinf_apistatus_body_release(&b);
	} else {
		FUZZ_CHECK(q.send_initial_events >= -1 && q.send_initial_events <= 1);
		FUZZ_CHECK(q.n_unknown <= req->n_params);
	}

	struct kinf_accept acc;
	kinf_accept_parse(kinf_httpreq_header(req, "Accept"), &acc);
	FUZZ_CHECK(acc.n <= sizeof(acc.ranges) / sizeof(acc.ranges[0]));
	for (size_t i = 0; i < acc.n; i++) {
		FUZZ_CHECK(acc.ranges[i].q > 0 && acc.ranges[i].q <= 1);
		FUZZ_CHECK(memchr(acc.ranges[i].type, '\0', sizeof(acc.ranges[i].type)));
	}
	size_t tl = 0;
	const char *tok = kinf_httpreq_bearer(req, &tl);
	if (tok) {
		FUZZ_CHECK(tl > 0 && kinf_httpreq_token_equal(tok, tl, tok, tl));
	}
	check_route(req);
	kinf_httpreq_free(req);
	return 0;
}
