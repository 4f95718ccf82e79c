#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "accessreview.h"
#include "buf.h"
#include "http.h"
#include "kubeconfig.h"
#include "tap.h"
#include "testserver.h"

/*
 * The HTTP layer: what can be checked without a server, then kinf_http_get
 * against a tiny HTTP/1.1 server in a thread of this test, on a loopback
 * socket, answering each request with the next of a script of raw
 * responses and keeping the request heads. (TLS, credentials and hostile
 * servers are test/cli: auth.bats, badinput.bats against
 * test/fixtures/badservers.)
 */

static void test_retry_after(void) {
	static const struct {
		const char *value;
		long want;
	} cases[] = {
		{ "0", 0 }, { "1", 1 }, { "60", 60 }, { "61", 61 }, { "+5", 5 },
		{ "1000000000", 1000000000L },
		/* negative: no wait, as time.Duration(-5 s) sleeps not at all */
		{ "-5", 0 }, { "-99999999999999999999", 0 },
		/* too large for a long: more than any cap */
		{ "9223372036854775807", LONG_MAX }, { "9223372036854775808", LONG_MAX },
		{ "99999999999999999999999999999999999999", LONG_MAX },
		/* not strconv.Atoi's syntax: not a retry */
		{ "", -1 }, { "+", -1 }, { "-", -1 }, { "1.5", -1 }, { "1 2", -1 },
		{ "soon", -1 }, { "0x10", -1 }, { "5s", -1 }, { "1\x1b[2J", -1 },
		{ "Wed, 21 Oct 2099 07:28:00 GMT", -1 }, { "99999999999999999999x", -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		is_int(kinf_http_parse_retry_after(cases[i].value, strlen(cases[i].value)),
				cases[i].want, "Retry-After case %zu", i + 1);
	}
	is_int(kinf_http_parse_retry_after("12", 1), 1, "Retry-After: only len bytes read");
}

/* A client of s, with opts (may be NULL); userinfo goes before the host. */
static struct kinf_http *client(const struct server *s, const char *userinfo,
		const struct kinf_http_opts *opts, struct kinf_rest_config *config) {
	char url[128];
	snprintf(url, sizeof(url), "http://%s127.0.0.1:%d", userinfo ? userinfo : "", s->port);
	memset(config, 0, sizeof(*config));
	config->server = strdup(url);
	return kinf_http_new(config, NULL, opts);
}

static void client_free(struct kinf_http *http, struct kinf_rest_config *config) {
	kinf_http_free(http);
	free(config->server);
}

/* GET path from a server answering with script: rc, response, error, heads. */
struct got {
	int rc;
	struct kinf_http_response resp;
	struct kinf_error err;
	struct kinf_strv heads;
	double seconds;
};

static void get(const char *const *script, const struct kinf_http_request *req,
		const struct kinf_http_opts *opts, const char *userinfo, struct got *g) {
	struct server s;
	struct kinf_rest_config config;
	struct timespec t0, t1;

	memset(g, 0, sizeof(*g));
	server_start(&s, script);
	struct kinf_http *http = client(&s, userinfo, opts, &config);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	g->rc = kinf_http_get(http, req, &g->resp, &g->err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	g->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	client_free(http, &config);
	pthread_mutex_lock(&s.lock);
	g->heads = s.heads;
	memset(&s.heads, 0, sizeof(s.heads));
	pthread_mutex_unlock(&s.lock);
	server_stop(&s);
}

static void got_release(struct got *g) {
	kinf_http_response_release(&g->resp);
	kinf_strv_release(&g->heads);
}


static void test_ok(void) {
	static const char *const script[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n"
		"\r\n{\"kind\":\"List\"}",
		NULL,
	};
	struct kinf_http_request req = { .path = "/api/v1/pods?limit=2" };
	struct got g;

	get(script, &req, NULL, NULL, &g);
	is_int(g.rc, 0, "200: ok (%s)", g.err.message);
	is_int(g.resp.status, 200, "200: the status");
	is_str(g.resp.content_type, "application/json", "200: the Content-Type");
	ok(g.resp.body.len == 15 && memcmp(g.resp.body.data, "{\"kind\":\"List\"}", 15) == 0,
			"200: the body collected");
	is_int(g.resp.retry_after_s, -1, "200: no Retry-After");
	is_int(g.heads.n, 1, "200: one request");
	const char *h = g.heads.n ? g.heads.v[0] : "";
	ok(strncmp(h, "GET /api/v1/pods?limit=2 HTTP/1.1\r\n", 35) == 0,
			"the request line: GET and the path as given");
	ok(strstr(h, "\r\nAccept: application/json\r\n") != NULL, "Accept: application/json by default");
	ok(strstr(h, "\r\nUser-Agent: kinf/") != NULL, "User-Agent: kinf/VERSION");
	ok(strstr(h, "\r\nAccept-Encoding: gzip\r\n") != NULL, "gzip accepted");
	ok(strstr(h, "Authorization") == NULL, "no credentials, no Authorization header");
	got_release(&g);
}

static int collect(const char *data, size_t len, void *userdata) {
	return kinf_buf_append(userdata, data, len) < 0 ? -KINF_ENOMEM : 0;
}

static int refuse(const char *data, size_t len, void *userdata) {
	(void)data;
	(void)len;
	(void)userdata;
	return -KINF_EJSON;
}

static void test_body(void) {
	static const char *const script[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json;as=Table;v=v1;g=meta.k8s.io\r\n"
		"Transfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4\r\n\":1}\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
		NULL,
	};
	struct kinf_buf body = {0};
	struct kinf_http_request req = {
		.path = "/api/v1/pods", .on_body = collect, .userdata = &body,
		.accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
	};
	struct got g;

	get(script, &req, NULL, NULL, &g);
	is_int(g.rc, 0, "on_body: ok (%s)", g.err.message);
	ok(body.len == 7 && memcmp(body.data, "{\"a\":1}", 7) == 0,
			"on_body: the chunked body, whole, in order");
	is_int(g.resp.body.len, 0, "on_body: nothing collected besides");
	ok(g.heads.n == 1 && strstr(g.heads.v[0], "\r\nAccept: application/json;as=Table;v=v1;"
			"g=meta.k8s.io,application/json\r\n") != NULL, "the Accept header as asked");
	got_release(&g);

	req.on_body = refuse;
	get(script + 1, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EJSON, "on_body's error ends the request with it");
	got_release(&g);

	struct kinf_http_opts opts = { .max_body = 8 };
	struct kinf_http_request small = { .path = "/version" };
	get(script + 2, &small, &opts, NULL, &g);
	is_int(g.rc, -KINF_ETOOBIG, "a collected body over max_body (%s)", g.err.message);
	got_release(&g);
	kinf_buf_release(&body);
}

/* Status bodies and codes into errors, as kubectl shows them. */
static void test_status(void) {
	static const char status404[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		"\"status\":\"Failure\",\"message\":\"pods \\\"x\\\" not found\","
		"\"reason\":\"NotFound\",\"details\":{\"causes\":[{\"reason\":\"FieldValueInvalid\"}]},"
		"\"code\":404}";
	char r404[512];
	snprintf(r404, sizeof(r404), "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
			"Content-Length: %zu\r\n\r\n%s", strlen(status404), status404);
	const char *const s404[] = { r404, NULL };
	static const char *const s410[] = {
		"HTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n", NULL,
	};
	static const char *const s401[] = {
		"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n", NULL,
	};
	static const char *const s500[] = {
		"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 12\r\n\r\noops\x1b[2J\nbad",
		NULL,
	};
	static const char *const s302[] = {
		"HTTP/1.1 302 Found\r\nLocation: http://elsewhere.invalid/\r\nContent-Length: 0\r\n\r\n",
		NULL,
	};
	struct kinf_http_request req = { .path = "/api/v1/namespaces/default/pods/x" };
	struct got g;

	get(s404, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "404: -KINF_EHTTP");
	is_int(g.err.http_status, 404, "404: the status kept");
	is_str(g.err.message, "pods \"x\" not found", "404: the Status message");
	is_str(g.err.reason, "NotFound", "404: the Status reason");
	is_str(g.err.cause, "FieldValueInvalid", "404: the first cause");
	ok(g.resp.body.len == strlen(status404), "404: the error body kept in the response");
	got_release(&g);

	get(s410, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EGONE, "410: -KINF_EGONE");
	is_str(g.err.message, "the server responded with status 410 Gone", "410: said without a body");
	got_release(&g);

	get(s401, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EAUTH, "401: -KINF_EAUTH");
	is_int(g.heads.n, 1, "401 without credentials to refresh: not retried");
	got_release(&g);

	get(s500, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "500: -KINF_EHTTP");
	is_str(g.err.message, "the server responded with status 500 Internal Server Error: "
			"oops [2J bad", "500: a body that is not JSON shown on one line, "
			"control characters blanked");
	got_release(&g);

	get(s302, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "302: not followed, an error");
	is_int(g.heads.n, 1, "302: one request");
	got_release(&g);

	/* A 200 whose body is a Status saying Failure: an error, as client-go's. */
	char r200[512];
	snprintf(r200, sizeof(r200), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			"Content-Length: %zu\r\n\r\n%s", strlen(status404), status404);
	const char *const s200[] = { r200, NULL };
	get(s200, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "200 with a Status saying Failure: -KINF_EHTTP");
	is_int(g.err.http_status, 404, "200 with a Status: the Status's code");
	is_str(g.err.message, "pods \"x\" not found", "200 with a Status: its message");
	got_release(&g);
}

/* 429 and 503 with Retry-After: waited for (at least a second), within bounds. */
static void test_retry_after_server(void) {
	static const char *const again[] = {
		"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		NULL,
	};
	static const char *const too_long[] = {
		"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 120\r\nContent-Length: 0\r\n\r\n",
		NULL,
	};
	static const char *const no_header[] = {
		"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n", NULL,
	};
	static const char *const a_date[] = {
		"HTTP/1.1 503 Service Unavailable\r\nRetry-After: Wed, 21 Oct 2099 07:28:00 GMT\r\n"
		"Content-Length: 0\r\n\r\n", NULL,
	};
	static const char *const past_timeout[] = {
		"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n",
		NULL,
	};
	struct kinf_http_request req = { .path = "/api/v1/pods" };
	struct got g;

	get(again, &req, NULL, NULL, &g);
	is_int(g.rc, 0, "429 with Retry-After: 0, then 200: ok (%s)", g.err.message);
	is_int(g.heads.n, 2, "asked twice");
	ok(g.seconds >= 0.95, "after waiting at least a second (%.2f s)", g.seconds);
	got_release(&g);

	get(too_long, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "503 with Retry-After: 120 is an error");
	is_int(g.heads.n, 1, "not retried");
	is_int(g.resp.retry_after_s, 120, "the response says 120 s");
	ok(strstr(g.err.message, "the server asked to retry after 120 s, longer than the 60 s "
			"kinf waits") != NULL, "the error says why (%s)", g.err.message);
	got_release(&g);

	get(no_header, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "429 without Retry-After is an error");
	is_int(g.heads.n, 1, "not retried");
	got_release(&g);

	get(a_date, &req, NULL, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "503 with an HTTP-date Retry-After is an error");
	is_int(g.heads.n, 1, "not retried (client-go reads seconds only)");
	got_release(&g);

	struct kinf_http_opts opts = { .request_timeout_ms = 2000 };
	get(past_timeout, &req, &opts, NULL, &g);
	is_int(g.rc, -KINF_EHTTP, "429 asking for 5 s within a 2 s --request-timeout is an error");
	is_int(g.heads.n, 1, "not retried");
	ok(strstr(g.err.message, "past the 2000 ms of --request-timeout") != NULL,
			"the error says why (%s)", g.err.message);
	got_release(&g);
}

/* Headers kinf builds are checked before anything is sent. */
static void test_header_checks(void) {
	static const char *const script[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", NULL,
	};
	struct kinf_http_request req = {
		.path = "/api/v1/pods", .accept = "application/json\r\nX-Injected: 1",
	};
	struct got g;

	get(script, &req, NULL, NULL, &g);
	ok(g.rc < 0, "an Accept value with CR LF is refused");
	ok(strstr(g.err.message, "the Accept header") != NULL, "naming the header (%s)",
			g.err.message);
	is_int(g.heads.n, 0, "and nothing is sent");
	got_release(&g);

	req.accept = NULL;
	get(script, &req, NULL, "user:s3cret@", &g);
	is_int(g.rc, -KINF_EAUTH, "user:password@ over plain http is refused");
	is_int(g.heads.n, 0, "nothing is sent");
	ok(strstr(g.err.message, "over plain http") != NULL && !strstr(g.err.message, "s3cret"),
			"the error says why, without the password (%s)", g.err.message);
	got_release(&g);
}

/*
 * A stalled body (headers, then nothing): a watch (the request says so,
 * not its path) may idle, so only silence ends it; anything else is
 * stalled below 1 KiB/s. The messages tell the two minimum speeds apart.
 */
static void test_watch_idle(void) {
	static const char *const script[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", NULL,
	};
	struct kinf_http_opts opts = { .low_speed_time_s = 1 };
	struct kinf_http_request req = { .path = "/api/v1/pods?watch=1" };
	struct got g;

	get(script, &req, &opts, NULL, &g);
	is_int(g.rc, -KINF_ETIMEDOUT, "not a watch (watch=1 in the path notwithstanding): stalled");
	ok(strstr(g.err.message, "less than 1024 bytes/s for 1 s (--idle-timeout)") != NULL,
			"at the minimum speed of a request (%s)", g.err.message);
	got_release(&g);

	req.path = "/api/v1/pods";
	req.watch = true;
	get(script, &req, &opts, NULL, &g);
	is_int(g.rc, -KINF_ETIMEDOUT, "a watch that stays silent: stalled");
	ok(strstr(g.err.message, "sent nothing for 1 s (--idle-timeout)") != NULL,
			"at the minimum speed of a watch (%s)", g.err.message);
	got_release(&g);
}

/* One access review against a server answering with resp; the request head in head. */
static int review(const char *resp, const char *namespace, bool *allowed,
		struct kinf_buf *head, struct kinf_error *err) {
	const char *script[] = { resp, NULL };
	struct server s;
	struct kinf_rest_config config;
	server_start(&s, script);
	struct kinf_http *http = client(&s, NULL, NULL, &config);
	int rc = kinf_access_review(http, "list", "apps", "deployments", namespace, allowed, err);
	client_free(http, &config);
	pthread_mutex_lock(&s.lock);
	if (s.heads.n) {
		must(kinf_buf_append_str(head, s.heads.v[0]));
	}
	pthread_mutex_unlock(&s.lock);
	server_stop(&s);
	return rc;
}

/* kinf_access_review: a JSON POST, as kubectl auth can-i sends it, and status.allowed. */
static void test_access_review(void) {
	static const char want[] = "{\"kind\":\"SelfSubjectAccessReview\","
		"\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":{\"resourceAttributes\":"
		"{\"verb\":\"list\",\"namespace\":\"team-a\",\"group\":\"apps\","
		"\"resource\":\"deployments\"}}}";
	static const char yes[] = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
		"Content-Length: 31\r\n\r\n{\"status\":{\"allowed\":true}}\n   ";
	static const char no[] = "HTTP/1.1 201 Created\r\nContent-Length: 28\r\n\r\n"
		"{\"status\":{\"allowed\":false}}";
	static const char none[] = "HTTP/1.1 201 Created\r\nContent-Length: 13\r\n\r\n"
		"{\"status\":{}}";
	static const char denied[] = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
	struct kinf_buf head = {0};
	struct kinf_error err = {0};
	bool allowed = false;
	char len[64];

	is_int(review(yes, "team-a", &allowed, &head, &err), 0, "review: 201 (%s)", err.message);
	ok(allowed, "review: status.allowed true");
	ok(head.data && strncmp(head.data, "POST /apis/authorization.k8s.io/v1/"
			"selfsubjectaccessreviews HTTP/1.1\r\n", 66) == 0,
			"review: POST to selfsubjectaccessreviews");
	ok(head.data && strstr(head.data, "\r\nContent-Type: application/json\r\n") != NULL,
			"review: a JSON body");
	snprintf(len, sizeof(len), "\r\nContent-Length: %zu\r\n", strlen(want));
	ok(head.data && strstr(head.data, len) != NULL, "review: the body's length (%zu)",
			strlen(want));
	kinf_buf_reset(&head);
	allowed = true;
	is_int(review(no, NULL, &allowed, &head, &err), 0, "review: denied is an answer");
	ok(!allowed, "review: status.allowed false");
	is_int(review(none, NULL, &allowed, &head, &err), -KINF_EJSON,
			"review: no status.allowed is an error (%s)", err.message);
	is_int(review(denied, NULL, &allowed, &head, &err), -KINF_EHTTP,
			"review: a refused review is the request's error");
	kinf_buf_release(&head);
}

int main(void) {
	/* The loopback server, never a proxy from the environment. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	test_retry_after();
	test_ok();
	test_body();
	test_status();
	test_retry_after_server();
	test_header_checks();
	test_watch_idle();
	test_access_review();
	return tap_done();
}
