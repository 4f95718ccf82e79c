/*
 * Unit tests for kinf serve's HTTP layer: the request parser and its
 * limits, the Kubernetes query parameters, Accept headers and the path
 * router (src/httpreq.c); Status bodies compared with the apiserver's
 * (src/apistatus.c, examples from the research notes); and the server
 * (src/httpd.c) over a unix socket and TCP loopback: token check,
 * keep-alive and pipelining, limits answered on the wire, a slowloris
 * client timed out while others are served, chunked streams, a reader
 * that stops reading detected as too far behind while a second stream
 * keeps its pace, on-close on disconnect, and a clean shutdown. Then
 * the same server over TLS (src/tls.c): libcurl with the CA and the token
 * (200, keep-alive, a body of megabytes), without the token (401), with
 * another CA (refused), pipelining through an OpenSSL client, a client
 * that never says hello dropped at the handshake deadline while others
 * are served, plain HTTP answered as Go answers it, the unix socket still
 * plain and tokenless; and kubectl itself through a kubeconfig from
 * kinf_kubeconfig_write(), proving it sends the token over this TLS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "apistatus.h"
#include "buf.h"
#include "httpd.h"
#include "httpreq.h"
#include "kubeconfig_write.h"
#include "tls.h"
#include "tap.h"

/* ---- parser ---- */

static int parse(const char *s, struct kinf_httpreq **req, size_t *hl, struct kinf_error *err,
		const struct kinf_httpreq_limits *lim) {
	kinf_error_clear(err);
	return kinf_httpreq_parse(s, strlen(s), lim, req, hl, err);
}

static void test_parser(void) {
	struct kinf_httpreq *req = NULL;
	struct kinf_error err;
	size_t hl = 0;
	const char *get = "GET /api/v1/namespaces/default/pods?labelSelector=app%3Dweb%2Ctier+in+(a)"
		"&watch&limit=5&x%zz=1 HTTP/1.1\r\nHost: h\r\nAccept:  application/json \r\n"
		"Authorization: Bearer s3cret\r\n\r\nGET / HTTP/1.1\r\n";

	is_int(parse(get, &req, &hl, &err, NULL), 1, "a complete head parses");
	is_str(req->method, "GET", "method");
	is_str(req->path, "/api/v1/namespaces/default/pods", "path");
	ok(strncmp(req->target, "/api/v1/namespaces/default/pods?labelSelector=app%3D", 51) == 0,
		"raw target kept");
	is_int(req->n_params, 4, "four parameters");
	is_str(req->params[0].name, "labelSelector", "param name");
	is_str(req->params[0].value, "app=web,tier in (a)", "param value percent- and plus-decoded");
	is_str(req->params[1].value, "", "?watch has an empty value");
	ok(req->params[3].bad, "a bad escape is marked");
	is_str(kinf_httpreq_header(req, "accept"), "application/json", "header found in any case, trimmed");
	ok(req->keep_alive && req->minor == 1, "HTTP/1.1 keeps alive");
	is_int(hl, strstr(get, "\r\n\r\n") + 4 - get, "head length stops before the pipelined request");
	size_t tl = 0;
	const char *tok = kinf_httpreq_bearer(req, &tl);
	ok(tok && tl == 6 && strncmp(tok, "s3cret", 6) == 0, "bearer token");
	struct kinf_apiquery q;
	is_int(kinf_apiquery_parse(req, &q, &err), -KINF_EINVAL, "a bad escape is a 400");
	is_str(err.message, "invalid query parameter encoding: x%zz", "  naming the parameter");
	kinf_httpreq_free(req);

	is_int(parse("GET /a HTTP/1.1\r\nHost: h\r\n", &req, &hl, &err, NULL), 0, "incomplete: 0");
	is_int(parse("GET /a HT", &req, &hl, &err, NULL), 0, "incomplete request line: 0");
	is_int(parse("\r\n\r\nGET /a HTTP/1.0\n\n", &req, &hl, &err, NULL), 1,
		"leading empty lines and bare LF accepted");
	ok(!req->keep_alive, "HTTP/1.0 closes by default");
	is_int(hl, 21, "  head length counts the skipped lines");
	kinf_httpreq_free(req);
	is_int(parse("GET /a HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &req, &hl, &err, NULL), 1, "1.0 keep-alive");
	ok(req->keep_alive, "  kept alive");
	kinf_httpreq_free(req);
	is_int(parse("GET /a HTTP/1.1\r\nHost: h\r\nConnection: foo, close\r\n\r\n", &req, &hl, &err, NULL), 1, "close");
	ok(!req->keep_alive, "  Connection: close in a list");
	kinf_httpreq_free(req);

	struct kinf_httpreq_limits lim = { .max_line = 32, .max_head = 128, .max_headers = 3,
		.max_body = 100 };
	static const struct {
		const char *req;
		int status;
		const char *what;
	} bad[] = {
		{ "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 414, "request line past the limit, unfinished" },
		{ "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\n\r\n", 414, "request line past the limit" },
		{ "GET / HTTP/1.1\r\nHost: h\r\na: 1\r\nb: 2\r\nc: 3\r\n\r\n", 431, "too many headers" },
		{ "GET / HTTP/1.1\r\nHost: h\r\na: 1\r\nb: 2\r\nc: 3\r\n", 431, "too many headers, unfinished" },
		{ "GET / HTTP/1.1\r\nHost: hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh"
			"hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh", 431, "head too large" },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 101\r\n\r\n", 413, "body too large" },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", 400, "bad Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "two Content-Lengths" },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "CL and TE" },
		{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "unknown TE" },
		{ "GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0" },
		{ "GET / FOO/1.1\r\n\r\n", 400, "not HTTP" },
		{ "GET / HTTP/1.1\r\n\r\n", 400, "no Host" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Hosts" },
		{ "GET / HTTP/1.1\r\nHost: h\r\n x\r\n\r\n", 400, "obs-fold" },
		{ "GET / HTTP/1.1\r\nHost: h\rx: y\r\n\r\n", 400, "bare CR" },
		{ "GET / HTTP/1.1\r\nHo st: h\r\n\r\n", 400, "space in a name" },
		{ "GET / HTTP/1.1\r\nHost: h\x01\r\n\r\n", 400, "control byte in a value" },
		{ "GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bad escape in the path" },
		{ "GET /a%00 HTTP/1.1\r\nHost: h\r\n\r\n", 400, "NUL escape in the path" },
		{ "GET http://x/ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "absolute form" },
		{ "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "two spaces" },
		{ "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bad method" },
		{ "GET / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n", 417, "unknown Expect" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].req, &req, &hl, &err, &lim);
		ok(rc < 0 && err.http_status == bad[i].status && err.message[0], "%d: %s (%d %s)",
			bad[i].status, bad[i].what, err.http_status, err.message);
	}
	is_int(kinf_httpreq_parse("GET / HTTP/1.1\r\nHost: h\0\r\n\r\n", 28, NULL, &req, &hl, &err),
		-KINF_EINVAL, "a NUL byte in the head");
	is_int(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n", &req, &hl, &err, &lim), 1,
		"a body at the limit");
	is_int(req->content_length, 100, "  its length");
	kinf_httpreq_free(req);

	is_int(parse("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: bearer  t t\r\n\r\n", &req, &hl, &err, NULL), 1, "two-word token");
	ok(!kinf_httpreq_bearer(req, &tl), "  is no token");
	kinf_httpreq_free(req);
	is_int(parse("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Basic dTpw\r\n\r\n", &req, &hl, &err, NULL), 1, "basic auth");
	ok(!kinf_httpreq_bearer(req, &tl), "  is no bearer token");
	kinf_httpreq_free(req);
	/* The apiserver's bearertoken authenticator: TrimSpace, SplitN(" ", 3). */
	static const struct {
		const char *value, *token;
		bool spaced;
	} bearers[] = {
		{ "Bearer abc", "abc", false },
		{ "bEaReR abc", "abc", false },
		{ "Bearer abc def", "abc", false },
		{ "Bearer abc\xc2\xa0", "abc", false },	/* U+00A0 trimmed */
		{ "Bearer  abc", NULL, true },
		{ "Bearer \tabc", "\tabc", false },
		{ "Bearer\tabc", NULL, false },
		{ "Bearer", NULL, false },
		{ "Bearerabc", NULL, false },
	};
	for (size_t i = 0; i < sizeof(bearers) / sizeof(bearers[0]); i++) {
		char head[128];
		snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: %s\r\n\r\n",
			bearers[i].value);
		is_int(parse(head, &req, &hl, &err, NULL), 1, "Authorization: %s", bearers[i].value);
		tl = 0;
		const char *t = kinf_httpreq_bearer(req, &tl);
		ok(bearers[i].token ? t && tl == strlen(bearers[i].token) &&
			strncmp(t, bearers[i].token, tl) == 0 : !t, "  token %s",
			bearers[i].token ? bearers[i].token : "none");
		ok(kinf_httpreq_bearer_spaced(req) == bearers[i].spaced, "  %s",
			bearers[i].spaced ? "the extra space warned of" : "nothing to warn of");
		kinf_httpreq_free(req);
	}
	ok(kinf_httpreq_token_equal("abc", 3, "abc", 3), "equal tokens");
	ok(!kinf_httpreq_token_equal("abc", 3, "abd", 3), "different tokens");
	ok(!kinf_httpreq_token_equal("abc", 3, "abcd", 4), "a prefix is not the token");
	ok(!kinf_httpreq_token_equal("", 0, "a", 1), "empty is not the token");
}

static void test_query(void) {
	struct kinf_httpreq *req = NULL;
	struct kinf_error err;
	size_t hl;
	struct kinf_apiquery q;

	parse("GET /api/v1/pods?watch=&allowWatchBookmarks=FALSE&sendInitialEvents=0&limit=500&"
		"continue=abc&resourceVersion=12&resourceVersionMatch=NotOlderThan&fieldSelector="
		"spec.nodeName%3Dn1&timeoutSeconds=-3&limit=7&foo=1&includeObject=Object&pretty"
		"&timeout=32s HTTP/1.1\r\nHost: h\r\n\r\n", &req, &hl, &err, NULL);
	is_int(kinf_apiquery_parse(req, &q, &err), 0, "ListOptions parse");
	ok(q.watch, "watch= is true");
	ok(!q.allow_watch_bookmarks, "FALSE is false");
	is_int(q.send_initial_events, 0, "sendInitialEvents=0");
	ok(q.has_limit && q.limit == 500, "the first limit counts");
	is_str(q.continue_token, "abc", "continue");
	is_str(q.resource_version, "12", "resourceVersion");
	is_str(q.resource_version_match, "NotOlderThan", "resourceVersionMatch");
	is_str(q.field_selector, "spec.nodeName=n1", "fieldSelector decoded");
	ok(!q.label_selector, "no labelSelector");
	ok(q.has_timeout_seconds && q.timeout_seconds == -3, "timeoutSeconds");
	is_str(q.include_object, "Object", "includeObject");
	ok(q.pretty, "pretty");
	is_int(q.n_unknown, 1, "one unknown parameter");
	is_str(q.unknown[0], "foo", "  named");
	kinf_httpreq_free(req);

	static const struct {
		const char *query;
		const char *msg;
	} bad[] = {
		{ "limit=abc", "strconv.ParseInt: parsing \"abc\": invalid syntax" },
		{ "limit=", "strconv.ParseInt: parsing \"\": invalid syntax" },
		{ "limit=1.5", "strconv.ParseInt: parsing \"1.5\": invalid syntax" },
		{ "timeoutSeconds=99999999999999999999",
			"strconv.ParseInt: parsing \"99999999999999999999\": value out of range" },
		{ "limit=9223372036854775808",
			"strconv.ParseInt: parsing \"9223372036854775808\": value out of range" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[256];
		snprintf(line, sizeof(line), "GET /api/v1/pods?%s HTTP/1.1\r\nHost: h\r\n\r\n", bad[i].query);
		parse(line, &req, &hl, &err, NULL);
		int rc = kinf_apiquery_parse(req, &q, &err);
		ok(rc == -KINF_EINVAL && err.http_status == 400, "%s is a 400", bad[i].query);
		is_str(err.message, bad[i].msg, "  with strconv's message");
		kinf_httpreq_free(req);
	}
	parse("GET /api/v1/pods?limit=-9223372036854775808&watch=1&sendInitialEvents HTTP/1.1\r\n"
		"Host: h\r\n\r\n", &req, &hl, &err, NULL);
	is_int(kinf_apiquery_parse(req, &q, &err), 0, "the smallest int64");
	ok(q.limit == (-9223372036854775807LL - 1) && q.watch && q.send_initial_events == 1,
		"  and bools");
	kinf_httpreq_free(req);
	parse("GET /api/v1/pods HTTP/1.1\r\nHost: h\r\n\r\n", &req, &hl, &err, NULL);
	must(kinf_apiquery_parse(req, &q, &err));
	ok(!q.watch && !q.has_limit && q.send_initial_events == -1 && !q.resource_version,
		"no parameters: all absent");
	kinf_httpreq_free(req);
}

static void test_accept(void) {
	struct kinf_accept a;
	const struct kinf_accept_range *r;

	kinf_accept_parse("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;"
		"v=v1beta1;g=meta.k8s.io,application/json", &a);
	is_int(a.n, 3, "kubectl get: three ranges");
	r = kinf_accept_find(&a, KINF_ACCEPT_TABLE);
	ok(r && strcmp(r->version, "v1") == 0 && r == &a.ranges[0], "Table v1 first");
	ok(a.ranges[1].kind == KINF_ACCEPT_TABLE && a.ranges[2].kind == KINF_ACCEPT_JSON,
		"then Table v1beta1, then JSON");

	kinf_accept_parse("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
		"application/json", &a);
	r = kinf_accept_find(&a, KINF_ACCEPT_DISCOVERY);
	ok(r && strcmp(r->version, "v2beta1") == 0, "client-go 1.28 discovery, v2beta1");
	kinf_accept_parse("application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io", &a);
	r = kinf_accept_find(&a, KINF_ACCEPT_DISCOVERY);
	ok(r && strcmp(r->version, "v2") == 0 && strcmp(r->as, "APIGroupDiscoveryList") == 0,
		"discovery v2 with parameters in any order");
	kinf_accept_parse("application/json ; as=Table ; v=v1 ; g=meta.k8s.io ; q=0.9", &a);
	ok(a.n == 1 && a.ranges[0].kind == KINF_ACCEPT_TABLE && a.ranges[0].q > 0.89,
		"spaces and q");
	kinf_accept_parse("application/json;as=Table;v=v2;g=meta.k8s.io", &a);
	ok(a.n == 1 && a.ranges[0].kind == KINF_ACCEPT_NONE, "Table v2 is not served");
	kinf_accept_parse("application/vnd.kubernetes.protobuf", &a);
	ok(!kinf_accept_find(&a, KINF_ACCEPT_JSON) && a.ranges[0].kind == KINF_ACCEPT_NONE,
		"protobuf only: nothing kinf writes");
	kinf_accept_parse("application/json;q=0, */*", &a);
	ok(a.n == 1 && a.ranges[0].kind == KINF_ACCEPT_JSON, "q=0 dropped, */* is JSON");
	kinf_accept_parse(NULL, &a);
	ok(a.n == 1 && a.ranges[0].kind == KINF_ACCEPT_JSON, "no Accept: JSON");
	kinf_accept_parse("application/yaml, garbage, application/json;q=2", &a);
	ok(a.n == 1 && a.ranges[0].kind == KINF_ACCEPT_YAML, "yaml kept, malformed ranges skipped");
}

static void test_router(void) {
	static const struct {
		const char *path;
		enum kinf_apipath_kind kind;
		const char *group, *version, *ns, *resource, *name, *sub, *rest;
		bool watch;
	} t[] = {
		{ "/", KINF_APIPATH_ROOT, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/api", KINF_APIPATH_API, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/apis", KINF_APIPATH_APIS, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/api/v1", KINF_APIPATH_GROUP_VERSION, "", "v1", NULL, NULL, NULL, NULL, NULL, false },
		{ "/apis/apps", KINF_APIPATH_GROUP, "apps", NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/apis/apps/v1", KINF_APIPATH_GROUP_VERSION, "apps", "v1", NULL, NULL, NULL, NULL, NULL, false },
		{ "/api/v1/pods", KINF_APIPATH_RESOURCE, "", "v1", NULL, "pods", NULL, NULL, NULL, false },
		{ "/api/v1/namespaces/default/pods", KINF_APIPATH_RESOURCE, "", "v1", "default", "pods", NULL, NULL, NULL, false },
		{ "/api/v1/namespaces/default/pods/web-1", KINF_APIPATH_RESOURCE, "", "v1", "default", "pods", "web-1", NULL, NULL, false },
		{ "/api/v1/namespaces/default/pods/web-1/status", KINF_APIPATH_RESOURCE, "", "v1", "default", "pods", "web-1", "status", NULL, false },
		{ "/api/v1/namespaces/default/pods/web-1/status/x", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/api/v1/namespaces", KINF_APIPATH_RESOURCE, "", "v1", NULL, "namespaces", NULL, NULL, NULL, false },
		{ "/api/v1/namespaces/kube-system", KINF_APIPATH_RESOURCE, "", "v1", "kube-system", "namespaces", "kube-system", NULL, NULL, false },
		{ "/api/v1/namespaces/kube-system/status", KINF_APIPATH_RESOURCE, "", "v1", "kube-system", "namespaces", "kube-system", "status", NULL, false },
		{ "/api/v1/namespaces/kube-system/finalize", KINF_APIPATH_RESOURCE, "", "v1", "kube-system", "namespaces", "kube-system", "finalize", NULL, false },
		{ "/api/v1/nodes/n1", KINF_APIPATH_RESOURCE, "", "v1", NULL, "nodes", "n1", NULL, NULL, false },
		{ "/apis/apps/v1/namespaces/ns/deployments/web", KINF_APIPATH_RESOURCE, "apps", "v1", "ns", "deployments", "web", NULL, NULL, false },
		{ "/apis/rbac.authorization.k8s.io/v1/clusterroles", KINF_APIPATH_RESOURCE, "rbac.authorization.k8s.io", "v1", NULL, "clusterroles", NULL, NULL, NULL, false },
		{ "/api/v1/watch/namespaces/ns/pods", KINF_APIPATH_RESOURCE, "", "v1", "ns", "pods", NULL, NULL, NULL, true },
		{ "/api/v1/watch", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/api/v1//pods", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/api/v1/pods/", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/apix", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/version", KINF_APIPATH_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/healthz", KINF_APIPATH_HEALTHZ, NULL, NULL, NULL, NULL, NULL, NULL, "", false },
		{ "/readyz", KINF_APIPATH_READYZ, NULL, NULL, NULL, NULL, NULL, NULL, "", false },
		{ "/readyz/informer-sync", KINF_APIPATH_READYZ, NULL, NULL, NULL, NULL, NULL, NULL, "informer-sync", false },
		{ "/livez", KINF_APIPATH_LIVEZ, NULL, NULL, NULL, NULL, NULL, NULL, "", false },
		{ "/livez/", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/metrics", KINF_APIPATH_METRICS, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/openapi/v2", KINF_APIPATH_OPENAPI, NULL, NULL, NULL, NULL, NULL, NULL, "v2", false },
		{ "/openapi/v3/apis/apps/v1", KINF_APIPATH_OPENAPI, NULL, NULL, NULL, NULL, NULL, NULL, "v3/apis/apps/v1", false },
		{ "/openapi", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
		{ "/metrics/x", KINF_APIPATH_UNKNOWN, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct kinf_apipath p;
		int rc = kinf_apipath_parse(t[i].path, &p);
#define SAME(a, b) ((a) == NULL ? (b) == NULL : (b) != NULL && strcmp((a), (b)) == 0)
		bool good = rc == 0 && p.kind == t[i].kind && SAME(t[i].group, p.group) &&
			SAME(t[i].version, p.version) && SAME(t[i].ns, p.namespace_) &&
			SAME(t[i].resource, p.resource) && SAME(t[i].name, p.name) &&
			SAME(t[i].sub, p.subresource) && SAME(t[i].rest, p.rest) &&
			p.watch_prefix == t[i].watch;
#undef SAME
		if (!ok(good, "route %s", t[i].path)) {
			printf("#   kind %d group %s version %s ns %s resource %s name %s sub %s rest %s\n",
				p.kind, p.group ? p.group : "-", p.version ? p.version : "-",
				p.namespace_ ? p.namespace_ : "-", p.resource ? p.resource : "-",
				p.name ? p.name : "-", p.subresource ? p.subresource : "-",
				p.rest ? p.rest : "-");
		}
		kinf_apipath_release(&p);
	}
	struct kinf_apipath p;
	must(kinf_apipath_parse("/api/v1/namespaces/ns/pods", &p));
	is_str(kinf_apipath_verb(&p, "GET", false), "list", "GET collection: list");
	is_str(kinf_apipath_verb(&p, "GET", true), "watch", "GET ?watch: watch");
	is_str(kinf_apipath_verb(&p, "POST", false), "create", "POST: create");
	is_str(kinf_apipath_verb(&p, "DELETE", false), "deletecollection", "DELETE collection");
	ok(kinf_apipath_verb_is_write("deletecollection") && !kinf_apipath_verb_is_write("watch"),
		"writes and reads");
	kinf_apipath_release(&p);
	must(kinf_apipath_parse("/api/v1/namespaces/ns/pods/a", &p));
	is_str(kinf_apipath_verb(&p, "GET", false), "get", "GET object: get");
	is_str(kinf_apipath_verb(&p, "PATCH", false), "patch", "PATCH: patch");
	is_str(kinf_apipath_verb(&p, "DELETE", false), "delete", "DELETE object: delete");
	kinf_apipath_release(&p);
	must(kinf_apipath_parse("/api/v1/watch/pods", &p));
	is_str(kinf_apipath_verb(&p, "GET", false), "watch", "/watch/ prefix: watch");
	kinf_apipath_release(&p);
}

/* ---- Status bodies ---- */

#define STATUS_HEAD "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","

static void check_body(int rc, struct kinf_buf *b, const char *want, const char *what) {
	is_int(rc, 0, "%s: formatted", what);
	is_str(b->data, want, "%s", what);
	kinf_buf_reset(b);
}

/* A made Status: its body, and the code and Retry-After it is sent with. */
static void check_status(int rc, struct kinf_apistatus_body *sb, int code, int retry_after,
		const char *want, const char *what) {
	is_int(sb->code, code, "%s: sent as %d", what, code);
	is_int(sb->retry_after_seconds, retry_after, "%s: Retry-After %d", what, retry_after);
	check_body(rc, &sb->json, want, what);
}

static void test_status(void) {
	struct kinf_buf b = {0};
	struct kinf_apistatus_body sb = {0};

	/* Research notes section 1, the 410 of a too-old resourceVersion. */
	check_status((kinf_apistatus_expired(&sb, "too old resource version: 5 (41)"), kinf_buf_error(&sb.json)), &sb, 410, 0,
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		"\"message\":\"too old resource version: 5 (41)\",\"reason\":\"Expired\",\"code\":410}\n",
		"410 Expired as in the research notes");
	/* Section 6: NotFound, details with the plural resource as kind. */
	check_status((kinf_apistatus_not_found(&sb, "", "pods", "foo"), kinf_buf_error(&sb.json)), &sb, 404, 0,
		STATUS_HEAD "\"message\":\"pods \\\"foo\\\" not found\",\"reason\":\"NotFound\","
		"\"details\":{\"name\":\"foo\",\"kind\":\"pods\"},\"code\":404}\n",
		"404 NotFound, core group");
	check_status((kinf_apistatus_not_found(&sb, "apps", "deployments", "web"), kinf_buf_error(&sb.json)), &sb, 404, 0,
		STATUS_HEAD "\"message\":\"deployments.apps \\\"web\\\" not found\",\"reason\":\"NotFound\","
		"\"details\":{\"name\":\"web\",\"group\":\"apps\",\"kind\":\"deployments\"},\"code\":404}\n",
		"404 NotFound with a group");
	/* Section 5: 405 with details {}, kinf's read-only note after the message. */
	check_status((kinf_apistatus_read_only(&sb, NULL), kinf_buf_error(&sb.json)), &sb, 405, 0,
		STATUS_HEAD "\"message\":\"the server does not allow this method on the requested "
		"resource: kinf serve is a read-only cache\",\"reason\":\"MethodNotAllowed\","
		"\"details\":{},\"code\":405}\n", "405 MethodNotAllowed, read-only");
	check_status((kinf_apistatus_read_only(&sb, "kind-prod"), kinf_buf_error(&sb.json)), &sb, 405, 0,
		STATUS_HEAD "\"message\":\"the server does not allow this method on the requested "
		"resource: kinf serve is a read-only cache of kind-prod\",\"reason\":\"MethodNotAllowed\","
		"\"details\":{},\"code\":405}\n", "405 naming the upstream");
	check_status((kinf_apistatus_bad_request(&sb, "unable to parse requirement: <nil>: Invalid value: "
		"\"a b\": name part must consist of alphanumeric characters"), kinf_buf_error(&sb.json)), &sb, 400, 0,
		STATUS_HEAD "\"message\":\"unable to parse requirement: \\u003cnil\\u003e: Invalid value: "
		"\\\"a b\\\": name part must consist of alphanumeric characters\",\"reason\":\"BadRequest\","
		"\"code\":400}\n", "400 BadRequest, < > escaped as Go does");
	check_status((kinf_apistatus_unauthorized(&sb), kinf_buf_error(&sb.json)), &sb, 401, 0,
		STATUS_HEAD "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n",
		"401 Unauthorized");
	check_status((kinf_apistatus_forbidden(&sb, "", "pods", NULL, "User \"u\" cannot list resource "
		"\"pods\" in API group \"\" at the cluster scope"), kinf_buf_error(&sb.json)), &sb, 403, 0,
		STATUS_HEAD "\"message\":\"pods is forbidden: User \\\"u\\\" cannot list resource "
		"\\\"pods\\\" in API group \\\"\\\" at the cluster scope\",\"reason\":\"Forbidden\","
		"\"details\":{\"kind\":\"pods\"},\"code\":403}\n", "403 Forbidden");
	check_status((kinf_apistatus_too_large(&sb, 3145728), kinf_buf_error(&sb.json)), &sb, 413, 0,
		STATUS_HEAD "\"message\":\"Request entity too large: limit is 3145728\","
		"\"reason\":\"RequestEntityTooLarge\",\"code\":413}\n", "413 RequestEntityTooLarge");
	check_status((kinf_apistatus_too_many_requests(&sb, "too many watchers", 1), kinf_buf_error(&sb.json)), &sb, 429, 1,
		STATUS_HEAD "\"message\":\"too many watchers\",\"reason\":\"TooManyRequests\","
		"\"details\":{\"retryAfterSeconds\":1},\"code\":429}\n", "429 TooManyRequests");
	check_status((kinf_apistatus_internal(&sb, "boom & bust"), kinf_buf_error(&sb.json)), &sb, 500, 0,
		STATUS_HEAD "\"message\":\"Internal error occurred: boom \\u0026 bust\","
		"\"reason\":\"InternalError\",\"details\":{\"causes\":[{\"message\":\"boom \\u0026 bust\"}]},"
		"\"code\":500}\n", "500 InternalError with its cause");
	check_status((kinf_apistatus_unavailable(&sb, "upstream unreachable"), kinf_buf_error(&sb.json)), &sb, 503, 0,
		STATUS_HEAD "\"message\":\"upstream unreachable\",\"reason\":\"ServiceUnavailable\","
		"\"code\":503}\n", "503 ServiceUnavailable");
	/* Section 1: the 504 of a resourceVersion the cache has not reached. */
	struct kinf_apistatus st = { .code = 504, .reason = "Timeout",
		.message = "Timeout: Too large resource version: 9, current: 7",
		.causes = { { .reason = "ResourceVersionTooLarge", .message = "Too large resource version" } },
		.n_causes = 1, .retry_after_seconds = 1 };
	check_status(kinf_apistatus_make(&sb, &st), &sb, 504, 1,
		STATUS_HEAD "\"message\":\"Timeout: Too large resource version: 9, current: 7\","
		"\"reason\":\"Timeout\",\"details\":{\"causes\":[{\"reason\":\"ResourceVersionTooLarge\","
		"\"message\":\"Too large resource version\"}],\"retryAfterSeconds\":1},\"code\":504}\n",
		"504 as in the research notes");
	/* Section 1: 422 Invalid for ListOptions. */
	struct kinf_apistatus inv = { .code = 422, .reason = "Invalid",
		.message = "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
			"resourceVersionMatch is forbidden unless resourceVersion is provided",
		.group = "meta.k8s.io", .kind = "ListOptions",
		.causes = { { .reason = "FieldValueForbidden", .message = "Forbidden: resourceVersionMatch "
			"is forbidden unless resourceVersion is provided", .field = "resourceVersionMatch" } },
		.n_causes = 1 };
	check_body(kinf_apistatus_format(&inv, &b), &b,
		STATUS_HEAD "\"message\":\"ListOptions.meta.k8s.io \\\"\\\" is invalid: resourceVersionMatch: "
		"Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided\","
		"\"reason\":\"Invalid\",\"details\":{\"group\":\"meta.k8s.io\",\"kind\":\"ListOptions\","
		"\"causes\":[{\"reason\":\"FieldValueForbidden\",\"message\":\"Forbidden: "
		"resourceVersionMatch is forbidden unless resourceVersion is provided\","
		"\"field\":\"resourceVersionMatch\"}]},\"code\":422}\n", "422 Invalid");
	check_body(kinf_apistatus_quote(&b, "a\tb\x01\xe2\x80\xa8\xff\xc3\xa9\"\\"), &b,
		"\"a\\tb\\u0001\\u2028\\ufffd\xc3\xa9\\\"\\\\\"", "Go's string escapes");
	kinf_buf_release(&b);
	kinf_apistatus_body_release(&sb);
}

/* ---- the server ---- */

static struct kinf_httpd *srv;
static pthread_t loop_thread;
static char sockdir[64], sockpath[128];
static int tcp_port;

/* State the handler and tests share (touched on the loop thread, read after a sync). */
static struct kinf_httpd_req *streams[4];
static int closed_calls[4];
static int write_rc[4];
static size_t writes_done[4];
static int released;

static void on_stream_close(struct kinf_httpd_req *req, void *arg) {
	int i = (int)(long)arg;
	closed_calls[i]++;
	streams[i] = NULL;
}

static void handler(struct kinf_httpd_req *req, void *userdata) {
	const struct kinf_httpreq *h = kinf_httpd_req_head(req);
	struct kinf_buf body = {0};
	if (strncmp(h->path, "/stream/", 8) == 0) {
		int i = h->path[8] - '0';
		streams[i] = req;
		kinf_httpd_req_on_close(req, on_stream_close, (void *)(long)i);
		must(kinf_httpd_stream_start(req, 200, "application/json", NULL));
		return;
	}
	if (strncmp(h->path, "/hold/", 6) == 0) {
		/* Answered later, from the test through kinf_httpd_post. */
		int i = h->path[6] - '0';
		streams[i] = req;
		kinf_httpd_req_on_close(req, on_stream_close, (void *)(long)i);
		return;
	}
	if (strcmp(h->path, "/notfound") == 0) {
		struct kinf_apistatus_body st = {0};
		kinf_apistatus_not_found(&st, "", "pods", "foo");
		kinf_httpd_respond_status_body(req, &st);
		kinf_apistatus_body_release(&st);
		return;
	}
	if (strncmp(h->path, "/big/", 5) == 0) {
		/* N MiB of a pattern the client checks. */
		size_t n = (size_t)atoi(h->path + 5) << 20;
		char *big = malloc(n);
		for (size_t i = 0; big && i < n; i++) {
			big[i] = (char)('a' + (i * 7 + i / 1000) % 26);
		}
		kinf_httpd_respond(req, 200, "application/octet-stream", NULL, big, big ? n : 0);
		free(big);
		return;
	}
	if (strcmp(h->path, "/busy") == 0) {
		struct kinf_apistatus st = { .code = 429, .reason = "TooManyRequests", .message = "x",
			.retry_after_seconds = 2 };
		kinf_httpd_respond_status(req, &st);
		return;
	}
	size_t bl = 0;
	kinf_httpd_req_body(req, &bl);
	must(kinf_buf_printf(&body, "%s %s %zu %s", h->method, h->path, bl,
		kinf_httpd_req_is_unix(req) ? "unix" : "tcp"));
	kinf_httpd_respond(req, 200, "text/plain", "X-Test: 1\r\n", body.data, body.len);
	kinf_buf_release(&body);
}

static void *loop_main(void *arg) {
	must(kinf_httpd_run(arg, NULL));
	return NULL;
}

/* Run fn(arg) on the loop thread and wait for it. */
struct sync {
	void (*fn)(void *);
	void *arg;
	int fd;
};

static void sync_tramp(void *p) {
	struct sync *s = p;
	if (s->fn) {
		s->fn(s->arg);
	}
	char b = 1;
	ssize_t w = write(s->fd, &b, 1);
	(void)w;
}

static void on_loop(void (*fn)(void *), void *arg) {
	int p[2];
	if (pipe(p) < 0) {
		abort();
	}
	struct sync s = { fn, arg, p[1] };
	must(kinf_httpd_post(srv, sync_tramp, &s));
	char b;
	ssize_t r = read(p[0], &b, 1);
	(void)r;
	close(p[0]);
	close(p[1]);
}

static void nap_ms(long ms) {
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int connect_unix(void) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (strlen(sockpath) >= sizeof(sa.sun_path)) {
		abort();
	}
	memcpy(sa.sun_path, sockpath, strlen(sockpath) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_tcp(int port) {
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void send_str(int fd, const char *s) {
	size_t n = strlen(s);
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0) {
			return;
		}
		s += w;
		n -= (size_t)w;
	}
}

/* Read whatever arrives within ms (until EOF); returns bytes, -1 on EOF with nothing. */
static ssize_t read_some(int fd, struct kinf_buf *b, int ms) {
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, ms) <= 0) {
		return 0;
	}
	char tmp[65536];
	ssize_t n = read(fd, tmp, sizeof(tmp));
	if (n > 0) {
		must(kinf_buf_append(b, tmp, (size_t)n));
	}
	return n == 0 ? -1 : n;
}

/* Read until b contains needle (or EOF/5 s). */
static bool read_until(int fd, struct kinf_buf *b, const char *needle) {
	for (int i = 0; i < 500; i++) {
		if (b->data && strstr(b->data, needle)) {
			return true;
		}
		if (read_some(fd, b, 10) < 0) {
			return b->data && strstr(b->data, needle);
		}
	}
	return false;
}

/* Wait for EOF from the server for up to ms; true when it came. */
static bool wait_eof(int fd, int ms) {
	struct kinf_buf b = {0};
	bool eof = false;
	for (int t = 0; t < ms; t += 10) {
		if (read_some(fd, &b, 10) < 0) {
			eof = true;
			break;
		}
	}
	kinf_buf_release(&b);
	return eof;
}

/* One request, one response read to its Content-Length; returns the whole response text. */
static char *roundtrip(int fd, const char *req) {
	struct kinf_buf b = {0};
	send_str(fd, req);
	if (!read_until(fd, &b, "\r\n\r\n")) {
		return kinf_buf_take(&b);
	}
	const char *cl = strstr(b.data, "Content-Length: ");
	size_t head = (size_t)(strstr(b.data, "\r\n\r\n") + 4 - b.data);
	size_t want = head + (cl ? strtoul(cl + 16, NULL, 10) : 0);
	for (int i = 0; i < 500 && b.len < want; i++) {
		if (read_some(fd, &b, 10) < 0) {
			break;
		}
	}
	return kinf_buf_take(&b);
}

static int count_str(const char *s, const char *what) {
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what)) {
		n++;
	}
	return n;
}

static bool starts(const char *s, const char *prefix) {
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *body_of(const char *resp) {
	const char *p = resp ? strstr(resp, "\r\n\r\n") : NULL;
	return p ? p + 4 : "";
}

static void start_server(void) {
	struct kinf_httpd_opts o = {
		.handler = handler,
		.token = "tok-123",
		.limits = { .max_head = 4096, .max_headers = 20, .max_body = 1000 },
		.max_queue = 64 * 1024,
		.header_timeout_ms = 400,
		.write_timeout_ms = 5000,
	};
	struct kinf_error err = {0};
	snprintf(sockdir, sizeof(sockdir), "/tmp/kinf-httpd-XXXXXX");
	if (!mkdtemp(sockdir)) {
		abort();
	}
	snprintf(sockpath, sizeof(sockpath), "%s/sub/serve.sock", sockdir);
	srv = kinf_httpd_new(&o);
	ok(srv != NULL, "server made");

	struct kinf_httpd_opts o2 = o;
	o2.token = NULL;
	struct kinf_httpd *notoken = kinf_httpd_new(&o2);
	is_int(kinf_httpd_listen(notoken, "tcp:127.0.0.1:0", &err), -KINF_EINVAL,
		"a TCP listener without a token is refused");
	is_str(err.message, "tcp:127.0.0.1:0: a TCP listener needs a token", "  saying so");
	is_int(kinf_httpd_listen(notoken, "udp:x", &err), -KINF_EINVAL, "an unknown scheme");
	is_int(kinf_httpd_listen(notoken, "unix:", &err), -KINF_EINVAL, "an empty path");
	kinf_httpd_free(notoken);

	is_int(kinf_httpd_listen(srv, "tcp:127.0.0.1:99999", &err), -KINF_EINVAL, "port out of range");
	is_int(kinf_httpd_listen(srv, "tcp:127.0.0.1", &err), -KINF_EINVAL, "no port");
	is_int(kinf_httpd_listen(srv, sockpath, &err), -KINF_EINVAL, "a path without unix:");
	is_int(kinf_httpd_port(srv, 0), 0, "no listener yet");

	char addr[160];
	snprintf(addr, sizeof(addr), "unix:%s", sockpath);
	is_int(kinf_httpd_listen(srv, addr, &err), 0, "listen on %s (%s)", addr, err.message);
	struct stat st;
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/sub", sockdir);
	ok(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700, "its missing directory made 0700");
	ok(stat(sockpath, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600,
		"the socket is 0600");
	is_str(kinf_httpd_address(srv, 0), addr, "the unix address reported");
	is_int(kinf_httpd_listen(srv, addr, &err), -KINF_EEXISTS, "a live socket is not replaced");
	is_int(kinf_httpd_listen(srv, "tcp:127.0.0.1:0", &err), 0, "listen on tcp port 0");
	tcp_port = kinf_httpd_port(srv, 1);
	char want[64];
	snprintf(want, sizeof(want), "tcp:127.0.0.1:%d", tcp_port);
	ok(tcp_port > 0, "a free port was bound (%d)", tcp_port);
	is_str(kinf_httpd_address(srv, 1), want, "the bound TCP address reported");
	ok(kinf_httpd_address(srv, 2) == NULL, "no third listener");
	pthread_create(&loop_thread, NULL, loop_main, srv);
}

/* Listen on DIR/s.sock (under sockdir) with a server of its own; the result, the message in err. */
static int listen_in(const char *dir, struct kinf_error *err) {
	struct kinf_httpd_opts o = { .handler = NULL };
	struct kinf_httpd *h = kinf_httpd_new(&o);
	char addr[200];
	snprintf(addr, sizeof(addr), "unix:%s/%s/s.sock", sockdir, dir);
	int rc = kinf_httpd_listen(h, addr, err);
	kinf_httpd_free(h);	/* unlinks the socket it made */
	return rc;
}

/*
 * The socket's directory: whoever may write to it can put a socket of
 * their own in its place, so one another user made first (as /tmp/kinf-UID
 * could be), a symlink or one open to writes is refused.
 */
static void test_socket_dir(void) {
	struct kinf_error err = {0};
	char path[200], msg[400];

	snprintf(path, sizeof(path), "%s/open", sockdir);
	mkdir(path, 0700);
	chmod(path, 0777);
	is_int(listen_in("open", &err), -KINF_EIO, "a directory anyone may write to: refused");
	snprintf(msg, sizeof(msg), "'%s': the socket's directory is writable by others (mode 0777); "
		"use a directory of mode 0700 of your own", path);
	is_str(err.message, msg, "  saying why");
	chmod(path, 01777);
	is_int(listen_in("open", &err), 0, "sticky as /tmp is: no one else can replace the socket");
	chmod(path, 0755);
	is_int(listen_in("open", &err), 0, "one of mine that others may only read: fine");

	char target[200];
	snprintf(target, sizeof(target), "%s/open", sockdir);
	snprintf(path, sizeof(path), "%s/link", sockdir);
	if (symlink(target, path) < 0) {
		abort();
	}
	is_int(listen_in("link", &err), -KINF_EIO, "a symlink for the directory: refused");
	ok(strstr(err.message, "the socket's directory is a symbolic link"), "  saying so (%s)",
		err.message);

	snprintf(path, sizeof(path), "%s/theirs", sockdir);
	mkdir(path, 0700);
	if (geteuid() != 0) {
		skip("chown needs root", "a directory another user made first: refused");
		skip("chown needs root", "  naming its owner");
	} else if (chown(path, 65534, 65534) == 0) {
		is_int(listen_in("theirs", &err), -KINF_EIO,
			"a directory another user made first: refused");
		snprintf(msg, sizeof(msg), "'%s': the socket's directory belongs to uid 65534, not "
			"to you (uid 0); use a directory of mode 0700 of your own", path);
		is_str(err.message, msg, "  naming its owner");
	}
	snprintf(path, sizeof(path), "%s/theirs", sockdir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/link", sockdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/open", sockdir);
	rmdir(path);
}

static void test_auth_and_keepalive(void) {
	int fd = connect_tcp(tcp_port);
	char *r = roundtrip(fd, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	ok(r && starts(r, "HTTP/1.1 401 Unauthorized\r\n"), "TCP without a token: 401");
	is_str(body_of(r), STATUS_HEAD "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\","
		"\"code\":401}\n", "  with the apiserver's Status");
	free(r);
	r = roundtrip(fd, "GET /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-124\r\n\r\n");
	ok(r && strstr(r, " 401 "), "a wrong token: 401, on the same connection");
	free(r);
	r = roundtrip(fd, "GET /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-12\r\n\r\n");
	ok(r && strstr(r, " 401 "), "a prefix of the token: 401");
	free(r);
	r = roundtrip(fd, "GET /x?a=1 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-123\r\n\r\n");
	ok(r && starts(r, "HTTP/1.1 200 OK\r\n") && strstr(r, "X-Test: 1\r\n") &&
		strstr(r, "Content-Type: text/plain\r\n"), "the right token: 200 with the handler's headers");
	is_str(body_of(r), "GET /x 0 tcp", "  and its body");
	free(r);
	r = roundtrip(fd, "POST /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-123\r\n"
		"Content-Length: 5\r\n\r\nhello");
	is_str(body_of(r), "POST /x 5 tcp", "a body is read and handed over");
	free(r);
	struct kinf_buf hb = {0};
	send_str(fd, "HEAD /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-123\r\n\r\n");
	read_until(fd, &hb, "\r\n\r\n");
	read_some(fd, &hb, 100);
	ok(hb.data && strstr(hb.data, "Content-Length: 13\r\n") && !*body_of(hb.data),
		"HEAD: the length, no body");
	kinf_buf_release(&hb);
	close(fd);

	fd = connect_unix();
	ok(fd >= 0, "connect to the unix socket");
	r = roundtrip(fd, "GET /u HTTP/1.1\r\nHost: h\r\n\r\n");
	is_str(body_of(r), "GET /u 0 unix", "the unix socket needs no token");
	free(r);
	/* Two pipelined requests in one write: both answered, in order. */
	struct kinf_buf b = {0};
	send_str(fd, "GET /p1 HTTP/1.1\r\nHost: h\r\n\r\nGET /p2 HTTP/1.1\r\nHost: h\r\n\r\n");
	ok(read_until(fd, &b, "GET /p2 0 unix"), "pipelined requests both answered");
	ok(b.data && strstr(b.data, "GET /p1 0 unix") < strstr(b.data, "GET /p2 0 unix"), "  in order");
	kinf_buf_release(&b);
	r = roundtrip(fd, "GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
	ok(r && strstr(r, "Connection: close\r\n"), "Connection: close is answered with close");
	ok(wait_eof(fd, 2000), "  and the server closes");
	free(r);
	close(fd);

	/* Bodies httpd does not read: answered, then the connection closes. */
	fd = connect_unix();
	r = roundtrip(fd, "POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
		"Content-Length: 5\r\n\r\n");
	ok(r && !strstr(r, "100 Continue") && strstr(r, "Connection: close\r\n"),
		"Expect: 100-continue: answered without reading the body, closing");
	is_str(body_of(r), "POST /e 0 unix", "  the handler sees no body");
	ok(wait_eof(fd, 2000), "  closed");
	free(r);
	close(fd);
	fd = connect_unix();
	r = roundtrip(fd, "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
		"5\r\nhello\r\n0\r\n\r\n");
	ok(r && strstr(r, "Connection: close\r\n"), "a chunked request body: answered, closing");
	is_str(body_of(r), "POST /c 0 unix", "  the handler sees no body");
	ok(wait_eof(fd, 2000), "  closed");
	free(r);
	close(fd);

	fd = connect_unix();
	r = roundtrip(fd, "GET /old HTTP/1.0\r\n\r\n");
	is_str(body_of(r), "GET /old 0 unix", "HTTP/1.0");
	ok(wait_eof(fd, 2000), "  closed after the response");
	free(r);
	close(fd);

	fd = connect_unix();
	r = roundtrip(fd, "GET /notfound HTTP/1.1\r\nHost: h\r\n\r\n");
	ok(r && starts(r, "HTTP/1.1 404 Not Found\r\n") &&
		strstr(r, "Content-Type: application/json\r\n"), "a Status answer: 404, JSON");
	free(r);
	r = roundtrip(fd, "GET /busy HTTP/1.1\r\nHost: h\r\n\r\n");
	ok(r && strstr(r, " 429 Too Many Requests\r\n") && strstr(r, "Retry-After: 2\r\n") &&
		strstr(body_of(r), "\"retryAfterSeconds\":2"), "429 Status with Retry-After");
	free(r);
	close(fd);
}

static void test_limits_on_the_wire(void) {
	int fd = connect_unix();
	struct kinf_buf big = {0};
	must(kinf_buf_append_str(&big, "GET / HTTP/1.1\r\nHost: h\r\n"));
	for (int i = 0; i < 30; i++) {
		must(kinf_buf_printf(&big, "X-%d: %d\r\n", i, i));
	}
	must(kinf_buf_append_str(&big, "\r\n"));
	char *r = roundtrip(fd, big.data);
	ok(r && starts(r, "HTTP/1.1 431 Request Header Fields Too Large\r\n"),
		"too many headers: 431");
	ok(r && strstr(r, "Connection: close\r\n") && strcmp(body_of(r), "431 Request Header Fields Too Large") == 0,
		"  plain text as Go's server, then close");
	ok(wait_eof(fd, 2000), "  closed");
	free(r);
	close(fd);
	kinf_buf_release(&big);

	/* A head past max_head (4 KiB) in one write: answered at once, not at its deadline. */
	fd = connect_unix();
	must(kinf_buf_append_str(&big, "GET / HTTP/1.1\r\nHost: h\r\nX-Big: "));
	for (int i = 0; i < 6000; i++) {
		must(kinf_buf_append_char(&big, 'a'));
	}
	must(kinf_buf_append_str(&big, "\r\n\r\n"));
	struct timespec h0, h1;
	clock_gettime(CLOCK_MONOTONIC, &h0);
	r = roundtrip(fd, big.data);
	clock_gettime(CLOCK_MONOTONIC, &h1);
	long ms = (h1.tv_sec - h0.tv_sec) * 1000 + (h1.tv_nsec - h0.tv_nsec) / 1000000;
	ok(r && starts(r, "HTTP/1.1 431 Request Header Fields Too Large\r\n") && ms < 300,
		"a head past the limit: 431 at once (%ld ms; the header timeout is 400)", ms);
	free(r);
	close(fd);
	kinf_buf_release(&big);

	fd = connect_unix();
	r = roundtrip(fd, "PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1001\r\n\r\n");
	ok(r && starts(r, "HTTP/1.1 413 Request Entity Too Large\r\n"), "a body too large: 413");
	is_str(body_of(r), STATUS_HEAD "\"message\":\"Request entity too large: limit is 1000\","
		"\"reason\":\"RequestEntityTooLarge\",\"code\":413}\n", "  the apiserver's Status");
	ok(wait_eof(fd, 2000), "  closed");
	free(r);
	close(fd);

	fd = connect_unix();
	r = roundtrip(fd, "GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n");
	ok(r && starts(r, "HTTP/1.1 400 Bad Request\r\n"), "a malformed request: 400");
	free(r);
	close(fd);

	/* Slowloris: a head trickling in is cut at the header deadline, and
	 * another client is answered meanwhile. */
	long t0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	int slow = connect_unix();
	send_str(slow, "GET / HTTP/1.1\r\n");
	bool cut = false;
	for (int i = 0; i < 30 && !cut; i++) {
		send_str(slow, "X");
		if (i == 2) {
			int other = connect_unix();
			r = roundtrip(other, "GET /other HTTP/1.1\r\nHost: h\r\n\r\n");
			is_str(body_of(r), "GET /other 0 unix", "another client is served while one trickles");
			free(r);
			close(other);
		}
		cut = wait_eof(slow, 100);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long el = ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - t0;
	ok(cut && el >= 350 && el < 2000, "a slowloris head is cut at the 400 ms deadline (%ld ms)", el);
	close(slow);

	fd = connect_unix();
	send_str(fd, "GET /partial HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\n");
	struct kinf_buf b = {0};
	ok(read_until(fd, &b, "GET /partial 0 unix"), "a request answered while the next trickles");
	ok(wait_eof(fd, 2000), "  and the unfinished next one times out");
	kinf_buf_release(&b);
	close(fd);

	struct kinf_httpd_stats st;
	on_loop(NULL, NULL);
	kinf_httpd_stats(srv, &st);
	ok(st.timeouts >= 2 && st.rejected >= 3, "stats count timeouts and rejections (%llu, %llu)",
		st.timeouts, st.rejected);
}

/* Stream helpers, run on the loop thread. */
struct wr {
	int i;
	const char *data;
	size_t len;
	bool ref;
};

static void release_cb(void *arg) {
	(void)arg;
	released++;
}

static void do_write(void *p) {
	struct wr *w = p;
	if (!streams[w->i]) {
		write_rc[w->i] = -KINF_ECLOSED;
		return;
	}
	write_rc[w->i] = w->ref ? kinf_httpd_stream_write_ref(streams[w->i], w->data, w->len,
		release_cb, NULL) : kinf_httpd_stream_write(streams[w->i], w->data, w->len);
	if (write_rc[w->i] == 0) {
		writes_done[w->i]++;
	}
}

static int drained;

static void on_drained(struct kinf_httpd_req *req, void *arg) {
	(void)req;
	(void)arg;
	drained++;
}

static void do_on_drain(void *p) {
	int i = (int)(long)p;
	if (streams[i]) {
		kinf_httpd_stream_on_drain(streams[i], 1024, on_drained, NULL);
	}
}

static void do_end(void *p) {
	int i = (int)(long)p;
	if (streams[i]) {
		kinf_httpd_stream_end(streams[i]);
		streams[i] = NULL;
	}
}

static void do_answer(void *p) {
	int i = (int)(long)p;
	if (streams[i]) {
		kinf_httpd_respond(streams[i], 200, "text/plain", NULL, "late", 4);
		streams[i] = NULL;
	}
}

static double cpu_seconds(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long mono_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long fired_at[4];
static struct kinf_httpd_timer *timer_b;
static int rearm_count;

static void on_timer(void *arg) {
	fired_at[(long)arg] = mono_ms();
	if ((long)arg == 0) {
		kinf_httpd_timer_cancel(srv, timer_b);	/* b is due later: cancelled */
	}
}

static void rearm(void *arg) {
	/* Re-adding itself at 0 ms: the loop must still get round to the rest. */
	if (++rearm_count < 50) {
		kinf_httpd_timer_add(srv, 0, rearm, arg);
	}
}

static void add_timers(void *arg) {
	long long *t0 = arg;
	*t0 = mono_ms();
	kinf_httpd_timer_add(srv, 150, on_timer, (void *)0L);
	timer_b = kinf_httpd_timer_add(srv, 300, on_timer, (void *)1L);
	kinf_httpd_timer_add(srv, 50, on_timer, (void *)2L);
	struct kinf_httpd_timer *c = kinf_httpd_timer_add(srv, 10, on_timer, (void *)3L);
	kinf_httpd_timer_cancel(srv, c);
	kinf_httpd_timer_add(srv, 0, rearm, NULL);
}

static void test_timers(void) {
	long long t0 = 0;
	on_loop(add_timers, &t0);
	/* A request meanwhile is answered: timers do not hold the loop. */
	int fd = connect_unix();
	char *r = roundtrip(fd, "GET /t HTTP/1.1\r\nHost: h\r\n\r\n");
	is_str(body_of(r), "GET /t 0 unix", "a request is answered while timers are pending");
	free(r);
	close(fd);
	nap_ms(500);
	on_loop(NULL, NULL);
	ok(fired_at[2] && fired_at[2] - t0 >= 50 && fired_at[2] - t0 < 300,
		"a 50 ms timer fires after %lld ms", fired_at[2] - t0);
	ok(fired_at[0] && fired_at[0] - t0 >= 150 && fired_at[0] >= fired_at[2],
		"a 150 ms timer fires after %lld ms, in order", fired_at[0] - t0);
	ok(!fired_at[1], "a timer cancelled by another timer does not fire");
	ok(!fired_at[3], "a cancelled timer does not fire");
	is_int(rearm_count, 50, "a timer re-adding itself at 0 ms runs once per round");
}

static void test_held(void) {
	/* A request answered later, its client half-closed meanwhile: the
	 * loop waits without spinning and the answer still arrives. */
	int fd = connect_unix();
	send_str(fd, "GET /hold/1 HTTP/1.1\r\nHost: h\r\n\r\n");
	for (int i = 0; i < 200 && !streams[1]; i++) {
		on_loop(NULL, NULL);
		nap_ms(5);
	}
	shutdown(fd, SHUT_WR);
	double c0 = cpu_seconds();
	nap_ms(300);
	double used = cpu_seconds() - c0;
	ok(used < 0.1, "a held request with a half-closed client: no busy loop (%.3f s CPU)", used);
	on_loop(do_answer, (void *)1L);
	struct kinf_buf b = {0};
	ok(read_until(fd, &b, "late") && strstr(b.data, "Connection: close\r\n"),
		"  the late answer reaches it, with Connection: close");
	ok(wait_eof(fd, 2000), "  then the server closes");
	is_int(closed_calls[1], 0, "  on-close not called: it was answered");
	kinf_buf_release(&b);
	close(fd);

	/* The same, but the client closes fully: on-close runs, no spin. */
	fd = connect_unix();
	send_str(fd, "GET /hold/1 HTTP/1.1\r\nHost: h\r\n\r\n");
	for (int i = 0; i < 200 && !streams[1]; i++) {
		on_loop(NULL, NULL);
		nap_ms(5);
	}
	close(fd);
	c0 = cpu_seconds();
	for (int i = 0; i < 200 && !closed_calls[1]; i++) {
		on_loop(NULL, NULL);
		nap_ms(5);
	}
	is_int(closed_calls[1], 1, "a held request whose client closes: on-close once");
	closed_calls[1] = 0;
}

static void test_streams(void) {
	int fd = connect_unix();
	struct kinf_buf b = {0};
	send_str(fd, "GET /stream/0 HTTP/1.1\r\nHost: h\r\n\r\n");
	ok(read_until(fd, &b, "\r\n\r\n"), "stream headers arrive before any event");
	ok(strstr(b.data, "Transfer-Encoding: chunked\r\n") && !strstr(b.data, "Content-Length"),
		"  chunked, no length");
	kinf_buf_reset(&b);
	struct wr w1 = { 0, "{\"type\":\"ADDED\"}\n", 17, false };
	struct wr w2 = { 0, "{\"type\":\"MODIFIED\"}\n", 20, true };
	on_loop(do_write, &w1);
	on_loop(do_write, &w2);
	ok(read_until(fd, &b, "14\r\n{\"type\":\"MODIFIED\"}\n\r\n"), "two chunks");
	is_str(b.data, "11\r\n{\"type\":\"ADDED\"}\n\r\n14\r\n{\"type\":\"MODIFIED\"}\n\r\n",
		"  framed exactly");
	on_loop(NULL, NULL);
	is_int(released, 1, "the shared bytes released once written");
	kinf_buf_reset(&b);
	on_loop(do_on_drain, (void *)0L);
	on_loop(NULL, NULL);
	is_int(drained, 0, "on-drain waits for a write");
	on_loop(do_write, &w1);
	ok(read_until(fd, &b, "{\"type\":\"ADDED\"}\n\r\n"), "a chunk after on-drain was set");
	on_loop(NULL, NULL);
	is_int(drained, 1, "  on-drain ran once it was written");
	kinf_buf_reset(&b);
	on_loop(do_write, &w1);
	ok(read_until(fd, &b, "{\"type\":\"ADDED\"}\n\r\n"), "another chunk");
	on_loop(NULL, NULL);
	is_int(drained, 1, "  on-drain is one shot");
	kinf_buf_reset(&b);
	on_loop(do_end, (void *)0L);
	ok(read_until(fd, &b, "0\r\n\r\n"), "the last chunk ends the stream");
	is_int(closed_calls[0], 0, "  on-close not called after an end");
	char *r = roundtrip(fd, "GET /after HTTP/1.1\r\nHost: h\r\n\r\n");
	is_str(body_of(r), "GET /after 0 unix", "the connection is kept alive after the stream");
	free(r);
	close(fd);
	kinf_buf_release(&b);

	/* A client that goes away: on-close runs. */
	fd = connect_unix();
	send_str(fd, "GET /stream/1 HTTP/1.1\r\nHost: h\r\n\r\n");
	b = (struct kinf_buf){0};
	read_until(fd, &b, "\r\n\r\n");
	kinf_buf_release(&b);
	close(fd);
	for (int i = 0; i < 200 && !closed_calls[1]; i++) {
		on_loop(NULL, NULL);
		nap_ms(5);
	}
	is_int(closed_calls[1], 1, "a stream whose client closes: on-close once");

	/* One client stops reading, one keeps up: the slow one is detected as
	 * too far behind by its own queue; the fast one gets everything. */
	int slowfd = connect_unix();
	int rcv = 4096;
	setsockopt(slowfd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	int fastfd = connect_unix();
	send_str(slowfd, "GET /stream/2 HTTP/1.1\r\nHost: h\r\n\r\n");
	send_str(fastfd, "GET /stream/3 HTTP/1.1\r\nHost: h\r\n\r\n");
	b = (struct kinf_buf){0};
	read_until(fastfd, &b, "\r\n\r\n");
	kinf_buf_reset(&b);
	for (int i = 0; i < 100 && (!streams[2] || !streams[3]); i++) {
		on_loop(NULL, NULL);
		nap_ms(5);
	}
	static char event[8192];
	memset(event, 'e', sizeof(event));
	struct wr ws = { 2, event, sizeof(event), true };
	struct wr wf = { 3, event, sizeof(event), false };
	int n = 0, toobig_at = -1;
	size_t total = 0;
	for (n = 0; n < 400; n++) {
		on_loop(do_write, &ws);
		if (write_rc[2] == -KINF_ETOOBIG && toobig_at < 0) {
			toobig_at = n;
		}
		on_loop(do_write, &wf);
		do {
		} while (read_some(fastfd, &b, 0) > 0);
		total = b.len;
		if (toobig_at >= 0 && n >= toobig_at + 20) {
			break;
		}
	}
	ok(toobig_at > 0, "the reader that stopped is too far behind after %d events", toobig_at);
	size_t q = 0;
	on_loop(NULL, NULL);
	ok(toobig_at > 0 && write_rc[3] == 0 && writes_done[3] == (size_t)n + 1,
		"the fast reader's writes all succeeded meanwhile (%zu)", writes_done[3]);
	/* Drain the fast stream: every byte of every event arrived. */
	size_t want = writes_done[3] * (sizeof(event) + 8);	/* "2000\r\n" data "\r\n" */
	for (int i = 0; i < 500 && total < want; i++) {
		ssize_t got = read_some(fastfd, &b, 10);
		if (got < 0) {
			break;
		}
		total = b.len;
	}
	is_int(total, want, "the fast reader received every byte of every event");
	bool framed = total == want;
	for (size_t off = 0; framed && off < total; off += sizeof(event) + 8) {
		framed = memcmp(b.data + off, "2000\r\n", 6) == 0 &&
			memcmp(b.data + off + 6, event, sizeof(event)) == 0 &&
			memcmp(b.data + off + 6 + sizeof(event), "\r\n", 2) == 0;
	}
	ok(framed, "  each one framed as a chunk, however the writes were cut");
	kinf_buf_release(&b);
	on_loop(NULL, NULL);
	if (streams[2]) {
		q = kinf_httpd_stream_queued(streams[2]);
	}
	ok(q > 0 && q <= 64 * 1024 + sizeof(event) + 64, "the slow queue stays bounded (%zu bytes)", q);
	on_loop(do_end, (void *)3L);
	close(fastfd);
	/* The slow stream is left open for the shutdown test. */

	/* Shutdown with stream 2 still open: its client gets the end of the
	 * stream once it reads, on-close runs, the unix socket goes away. */
	int idle = connect_unix();
	kinf_httpd_stop(srv);
	b = (struct kinf_buf){0};
	bool ended = false;
	for (int i = 0; i < 300 && !ended; i++) {
		ssize_t got = read_some(slowfd, &b, 10);
		ended = got < 0 || (b.len >= 5 && memcmp(b.data + b.len - 5, "0\r\n\r\n", 5) == 0);
	}
	ok(ended, "at stop the slow stream is flushed or closed");
	/* What the slow reader got was written in pieces as its socket
	 * drained: still whole chunks, then the last one. */
	const char *body = b.data ? strstr(b.data, "\r\n\r\n") : NULL;
	size_t nchunks = 0;
	bool whole = body != NULL;
	if (body) {
		const char *p = body + 4, *end = b.data + b.len;
		while (whole && end - p >= (ptrdiff_t)(sizeof(event) + 8) &&
				memcmp(p, "2000\r\n", 6) == 0) {
			whole = memcmp(p + 6, event, sizeof(event)) == 0 &&
				memcmp(p + 6 + sizeof(event), "\r\n", 2) == 0;
			p += sizeof(event) + 8;
			nchunks++;
		}
		whole = whole && end - p == 5 && memcmp(p, "0\r\n\r\n", 5) == 0;
	}
	ok(whole && nchunks == writes_done[2], "  as %zu whole chunks of %zu queued, and the last chunk",
		nchunks, writes_done[2]);
	pthread_join(loop_thread, NULL);
	is_int(closed_calls[2], 1, "  its on-close ran");
	ok(wait_eof(idle, 1000), "an idle connection is closed at stop");
	kinf_buf_release(&b);
	close(slowfd);
	close(idle);
	kinf_httpd_free(srv);
	struct stat st;
	ok(stat(sockpath, &st) < 0 && errno == ENOENT, "the unix socket is removed");
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/sub", sockdir);
	rmdir(dir);
	rmdir(sockdir);
}

/* A new srv listening on s.sock in a new sockdir; the listen's result. */
static int new_server_unix(const struct kinf_httpd_opts *o) {
	srv = kinf_httpd_new(o);
	snprintf(sockdir, sizeof(sockdir), "/tmp/kinf-httpd-XXXXXX");
	if (!mkdtemp(sockdir)) {
		abort();
	}
	snprintf(sockpath, sizeof(sockpath), "%s/s.sock", sockdir);
	char addr[160];
	snprintf(addr, sizeof(addr), "unix:%s", sockpath);
	return kinf_httpd_listen(srv, addr, NULL);
}

static void test_max_conns(void) {
	struct kinf_httpd_opts o = { .handler = handler, .max_unix_conns = 2, .token = "t" };
	new_server_unix(&o);
	pthread_create(&loop_thread, NULL, loop_main, srv);
	int a = connect_unix(), b = connect_unix();
	char *r = roundtrip(a, "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n");
	free(r);
	r = roundtrip(b, "GET /2 HTTP/1.1\r\nHost: h\r\n\r\n");
	free(r);
	int c = connect_unix();
	struct kinf_buf buf = {0};
	ok(read_until(c, &buf, "please try again later.\n"), "past max_conns: 429");
	ok(buf.data && starts(buf.data, "HTTP/1.1 429 Too Many Requests\r\n") &&
		strstr(buf.data, "Retry-After: 1\r\n"), "  with Retry-After as the apiserver's max-in-flight");
	kinf_buf_release(&buf);
	close(a);
	close(b);
	close(c);
	kinf_httpd_stop(srv);
	pthread_join(loop_thread, NULL);
	kinf_httpd_free(srv);
	rmdir(sockdir);
}

/* A TCP connection to port from source address src ("127.0.0.2": another peer). */
static int connect_tcp_from(const char *src, int port) {
	struct sockaddr_in from = { .sin_family = AF_INET };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	inet_pton(AF_INET, src, &from.sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0 ||
			connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct kinf_httpd_stats stats_now(void) {
	struct kinf_httpd_stats st;
	on_loop(NULL, NULL);
	kinf_httpd_stats(srv, &st);
	return st;
}

/* A new connection from src, once the server has it (accepted in order). */
static int accepted_from(const char *src, int port) {
	unsigned long long n = stats_now().connections;
	int fd = connect_tcp_from(src, port);
	for (int i = 0; i < 200 && stats_now().connections == n; i++) {
		nap_ms(5);
	}
	return fd;
}

/* True when fd is still open: no EOF within 50 ms. */
static bool still_open(int fd) {
	return !wait_eof(fd, 50);
}

/*
 * Connections before authentication: per peer and in total, the idlest
 * unauthenticated connection goes to make room for a new one; past
 * max_conns an idle kept-alive one; the unix socket has a budget of its
 * own. A flood of connections that never say anything locks no one out.
 */
static void test_unauth_budgets(void) {
	struct kinf_httpd_opts o = { .handler = handler, .token = "t", .max_conns = 6,
		.max_unauth = 5, .max_unauth_per_peer = 3, .max_unix_conns = 2 };
	new_server_unix(&o);
	must(kinf_httpd_listen(srv, "tcp:127.0.0.1:0", NULL));
	int port = kinf_httpd_port(srv, 1);
	pthread_create(&loop_thread, NULL, loop_main, srv);

	int a1 = accepted_from("127.0.0.1", port), a2 = accepted_from("127.0.0.1", port);
	int a3 = accepted_from("127.0.0.1", port), a4 = accepted_from("127.0.0.1", port);
	ok(wait_eof(a1, 1000) && still_open(a2) && still_open(a3) && still_open(a4),
		"a peer's 4th unauthenticated connection drops its idlest (max 3 per peer)");
	is_int(stats_now().dropped_unauth_peer, 1, "  counted");
	send_str(a2, "GET / HTTP/1.1\r\n");	/* half a request: no longer the idlest */
	nap_ms(100);
	int b1 = accepted_from("127.0.0.2", port), b2 = accepted_from("127.0.0.2", port);
	int b3 = accepted_from("127.0.0.2", port);
	ok(wait_eof(a3, 1000) && still_open(a2) && still_open(a4) && still_open(b1),
		"another peer's: past 5 in all, the idlest of all goes (a3, not a2 that spoke)");
	is_int(stats_now().dropped_unauth, 1, "  counted");
	int c = accepted_from("127.0.0.1", port);
	ok(wait_eof(a4, 1000), "one more: the next idlest (a4) goes");
	char *r = roundtrip(c, "GET /c HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\n\r\n");
	ok(starts(r, "HTTP/1.1 200 OK\r\n") && strcmp(body_of(r), "GET /c 0 tcp") == 0,
		"the newcomer is served");
	free(r);
	ok(stats_now().unauth == 4, "  and authenticated: off the unauthenticated list (%llu left)",
		stats_now().unauth);
	int d = accepted_from("127.0.0.1", port);
	r = roundtrip(d, "GET /d HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\n\r\n");
	free(r);
	/* Six TCP connections now (max_conns): a2 b1 b2 b3 c d. */
	int e = accepted_from("127.0.0.3", port);
	ok(wait_eof(b1, 1000) && still_open(a2) && still_open(b2) && still_open(c) && still_open(d),
		"past max_conns: an unauthenticated one goes, not the authenticated; of those, the "
		"idlest that never spoke (b1), not a2 halfway through its request");
	close(a2);
	close(b2);
	close(b3);
	close(e);
	nap_ms(100);
	int more[4];
	for (int k = 0; k < 4; k++) {
		more[k] = accepted_from("127.0.0.1", port);
		r = roundtrip(more[k], "GET /k HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\n\r\n");
		free(r);
	}
	int f = more[0], g = more[1], h = more[2], i = more[3];
	/* Six authenticated, kept alive, idle: c d f g h i; c has been idle the longest. */
	int j = accepted_from("127.0.0.1", port);
	ok(wait_eof(c, 1000) && still_open(d) && still_open(i),
		"all authenticated: the one idle the longest goes");
	is_int(stats_now().dropped_idle, 1, "  counted");
	/* The unix socket's own budget: served while TCP is full. */
	int u = connect_unix();
	r = roundtrip(u, "GET /u HTTP/1.1\r\nHost: h\r\n\r\n");
	ok(starts(r, "HTTP/1.1 200 OK\r\n") && strcmp(body_of(r), "GET /u 0 unix") == 0,
		"the unix socket is served while TCP is full");
	free(r);
	int fds[] = { d, f, g, h, i, j, u };
	for (size_t k = 0; k < sizeof(fds) / sizeof(fds[0]); k++) {
		close(fds[k]);
	}
	close(a1);
	close(b1);
	close(a3);
	close(a4);
	close(c);
	kinf_httpd_stop(srv);
	pthread_join(loop_thread, NULL);
	kinf_httpd_free(srv);
	rmdir(sockdir);
}

static void write_chunks(void *arg) {
	struct kinf_httpd_req *req = streams[2];
	char chunk[30000];
	memset(chunk, 'x', sizeof(chunk));
	(void)arg;
	for (int i = 0; i < 3; i++) {
		write_rc[2] |= kinf_httpd_stream_write(req, chunk, sizeof(chunk));
	}
	write_rc[2] |= kinf_httpd_stream_cut(req, "END\n", 4);
}

static void on_stalled(struct kinf_httpd_req *req, void *arg) {
	(void)arg;
	closed_calls[3] += 10;
	kinf_httpd_stream_cut(req, "STALLED\n", 8);
}

static void fill_and_watch_stall(void *arg) {
	struct kinf_httpd_req *req = streams[3];
	char chunk[60000];
	memset(chunk, 'y', sizeof(chunk));
	(void)arg;
	kinf_httpd_req_on_close(req, NULL, NULL);
	kinf_httpd_stream_on_stall(req, on_stalled, NULL);
	while (kinf_httpd_stream_write(req, chunk, sizeof(chunk)) == 0) {
	}
}

/*
 * Pipelined requests of a client that reads nothing wait once its queue
 * is behind; a stream cut drops what was not begun and ends well framed;
 * a stalled stream's owner is called instead of the connection closed.
 */
static void test_behind(void) {
	struct kinf_httpd_opts o = { .handler = handler, .token = "t", .write_timeout_ms = 500 };
	new_server_unix(&o);
	pthread_create(&loop_thread, NULL, loop_main, srv);

	unsigned long long before = stats_now().requests;
	int p = connect_unix();
	int small = 4096;
	setsockopt(p, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	for (int i = 0; i < 20; i++) {
		send_str(p, "GET /big/1 HTTP/1.1\r\nHost: h\r\n\r\n");
	}
	nap_ms(300);
	unsigned long long taken = stats_now().requests - before;
	ok(taken <= 3, "20 pipelined requests for 1 MiB each, none read: %llu taken up", taken);
	struct kinf_buf b = {0};
	/* 20 answers of 1 MiB and a head each: read until all of that is in (or 10 s). */
	for (int i = 0; i < 1000 && b.len < 20 * ((1u << 20) + 100); i++) {
		if (read_some(p, &b, 10) < 0) {
			break;
		}
	}
	ok(count_str(b.data, "HTTP/1.1 200 OK") == 20 && b.len > 20 * (1u << 20),
		"  all 20 answered as the client reads");
	kinf_buf_release(&b);
	close(p);

	int s = connect_unix();
	send_str(s, "GET /stream/2 HTTP/1.1\r\nHost: h\r\n\r\n");
	must(read_until(s, &b, "\r\n\r\n") ? 0 : -1);
	kinf_buf_reset(&b);
	write_rc[2] = 0;
	on_loop(write_chunks, NULL);
	for (int i = 0; i < 100 && !(b.data && strstr(b.data, "0\r\n\r\n")); i++) {
		read_some(s, &b, 20);
	}
	ok(write_rc[2] == 0 && b.data && strcmp(b.data, "4\r\nEND\n\r\n0\r\n\r\n") == 0,
		"a cut stream: the chunks not begun dropped, its last words, the last chunk");
	kinf_buf_release(&b);
	close(s);

	int t = connect_unix();
	setsockopt(t, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	send_str(t, "GET /stream/3 HTTP/1.1\r\nHost: h\r\n\r\n");
	for (int i = 0; i < 200 && !streams[3]; i++) {
		nap_ms(5);
	}
	closed_calls[3] = 0;
	on_loop(fill_and_watch_stall, NULL);
	nap_ms(800);	/* past the write timeout (500 ms): its owner is called */
	for (int i = 0; i < 500 && !(b.data && strstr(b.data, "0\r\n\r\n")); i++) {
		if (read_some(t, &b, 20) < 0) {
			break;
		}
	}
	ok(closed_calls[3] == 10 && b.data && strstr(b.data, "8\r\nSTALLED\n\r\n0\r\n\r\n"),
		"a stalled stream: its owner ended it, and the client read that end");
	kinf_buf_release(&b);
	close(t);
	kinf_httpd_stop(srv);
	pthread_join(loop_thread, NULL);
	kinf_httpd_free(srv);
	rmdir(sockdir);
}

/* ---- over TLS ---- */

static struct kinf_tls *tls, *other_tls;
static char tls_url[80];

static size_t curl_sink(char *data, size_t size, size_t n, void *arg) {
	return kinf_buf_append(arg, data, size * n) == 0 ? size * n : 0;
}

/* A curl handle for path on the TLS listener, trusting t's CA, with token (or none). */
static CURL *tls_curl(CURL *h, struct kinf_tls *t, const char *token, const char *path,
		struct kinf_buf *body, struct curl_slist **hdrs) {
	char url[160], auth[128];
	size_t ca_len = 0;
	const char *ca = kinf_tls_ca_pem(t, &ca_len);
	struct curl_blob blob = { .data = (void *)ca, .len = ca_len, .flags = CURL_BLOB_COPY };
	if (!h) {
		h = curl_easy_init();
	}
	snprintf(url, sizeof(url), "%s%s", tls_url, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	curl_slist_free_all(*hdrs);
	*hdrs = NULL;
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		*hdrs = curl_slist_append(NULL, auth);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
	return h;
}

/*
 * An OpenSSL client on the TLS listener (blocking for the handshake), trusting
 * our CA, with a receive buffer of rcvbuf bytes (0: the default); NULL if
 * it fails.
 */
static SSL *ssl_connect(SSL_CTX **ret_ctx, int *ret_fd, int rcvbuf) {
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	size_t ca_len = 0;
	const char *ca = kinf_tls_ca_pem(tls, &ca_len);
	BIO *b = BIO_new_mem_buf(ca, (int)ca_len);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x);
	X509_free(x);
	BIO_free(b);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)tcp_port) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (rcvbuf) {
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		abort();
	}
	SSL *ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set1_host(ssl, "127.0.0.1");
	if (SSL_connect(ssl) != 1) {
		SSL_free(ssl);
		SSL_CTX_free(ctx);
		close(fd);
		return NULL;
	}
	*ret_ctx = ctx;
	*ret_fd = fd;
	return ssl;
}

static void start_tls_server(void) {
	struct kinf_error err = {0};
	const char *names[] = { "127.0.0.1" };
	struct kinf_tls_opts to = { .names = names, .n_names = 1 };
	is_int(kinf_tls_new(&to, &tls, &err), 0, "TLS: a CA and certificate (%s)", err.message);
	must(kinf_tls_new(NULL, &other_tls, &err));
	struct kinf_httpd_opts o = {
		.handler = handler,
		.token = "tok-tls",
		.tls = tls,
		.max_queue = 64 * 1024,
		.header_timeout_ms = 2000,
		.handshake_timeout_ms = 2500,	/* valgrind's handshakes take over 1 s */
	};
	is_int(new_server_unix(&o), 0, "TLS server: a unix socket too");
	is_int(kinf_httpd_listen(srv, "tcp:127.0.0.1:0", &err), 0, "  and a TCP port");
	tcp_port = kinf_httpd_port(srv, 1);
	snprintf(tls_url, sizeof(tls_url), "https://127.0.0.1:%d", tcp_port);
	is_str(kinf_httpd_url(srv, 1), tls_url, "  its URL is https");
	ok(kinf_httpd_url(srv, 0) == NULL && kinf_httpd_url(srv, 2) == NULL,
		"  no URL for the unix socket or past the end");
	char wild_url[64];
	is_int(kinf_httpd_listen(srv, "tcp:0.0.0.0:0", &err), 0, "  and a wildcard TCP port");
	snprintf(wild_url, sizeof(wild_url), "https://127.0.0.1:%d", kinf_httpd_port(srv, 2));
	is_str(kinf_httpd_url(srv, 2), wild_url,
		"  a wildcard listener's URL is loopback, where its certificate holds");
	pthread_create(&loop_thread, NULL, loop_main, srv);
}

static void test_tls_requests(void) {
	struct kinf_buf body = {0};
	struct curl_slist *hdrs = NULL;
	long code = 0, version = 0, conns = -1;

	CURL *h = tls_curl(NULL, tls, "tok-tls", "/x", &body, &hdrs);
	CURLcode cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
	ok(cc == CURLE_OK && code == 200, "curl with the CA and the token: 200 (%s)",
		curl_easy_strerror(cc));
	is_str(body.data, "GET /x 0 tcp", "  the handler's answer");
	ok(version == CURL_HTTP_VERSION_1_1, "  over HTTP/1.1 (ALPN; curl offered h2 too)");

	kinf_buf_reset(&body);
	tls_curl(h, tls, "tok-tls", "/big/4", &body, &hdrs);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &conns);
	bool same = cc == CURLE_OK && body.len == (size_t)4 << 20;
	for (size_t i = 0; same && i < body.len; i++) {
		same = body.data[i] == (char)('a' + (i * 7 + i / 1000) % 26);
	}
	ok(same, "a 4 MiB body arrives whole through TLS records (%zu bytes)", body.len);
	is_int(conns, 0, "  on the same connection (keep-alive)");

	kinf_buf_reset(&body);
	tls_curl(h, tls, NULL, "/x", &body, &hdrs);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	ok(cc == CURLE_OK && code == 401, "no token: 401");
	is_str(body.data, STATUS_HEAD "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\","
		"\"code\":401}\n", "  with the apiserver's Status");
	kinf_buf_reset(&body);
	tls_curl(h, tls, "tok-tl", "/x", &body, &hdrs);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	ok(cc == CURLE_OK && code == 401, "a wrong token: 401");
	curl_easy_cleanup(h);

	kinf_buf_reset(&body);
	h = tls_curl(NULL, other_tls, "tok-tls", "/x", &body, &hdrs);
	cc = curl_easy_perform(h);
	ok(cc == CURLE_PEER_FAILED_VERIFICATION && !body.len, "another CA: verification fails (%s)",
		curl_easy_strerror(cc));
	curl_easy_cleanup(h);

	kinf_buf_reset(&body);
	h = curl_easy_init();
	char url[80];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", tcp_port);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	ok(cc == CURLE_OK && code == 400, "plain HTTP to the TLS port: 400 (%s)", curl_easy_strerror(cc));
	is_str(body.data, "Client sent an HTTP request to an HTTPS server.\n", "  Go's words");
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	kinf_buf_release(&body);

	/* Two requests in one TLS record, answered in order. */
	SSL_CTX *ctx = NULL;
	int fd = -1;
	SSL *ssl = ssl_connect(&ctx, &fd, 0);
	ok(ssl != NULL, "an OpenSSL client connects, verifying 127.0.0.1");
	if (ssl) {
		const char *two = "GET /p1 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-tls\r\n\r\n"
			"GET /p2 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-tls\r\n"
			"Connection: close\r\n\r\n";
		SSL_write(ssl, two, (int)strlen(two));
		struct kinf_buf got = {0};
		char tmp[4096];
		int n;
		while ((n = SSL_read(ssl, tmp, sizeof(tmp))) > 0) {
			must(kinf_buf_append(&got, tmp, (size_t)n));
		}
		const char *p1 = got.data ? strstr(got.data, "GET /p1 0 tcp") : NULL;
		const char *p2 = got.data ? strstr(got.data, "GET /p2 0 tcp") : NULL;
		ok(p1 && p2 && p1 < p2, "pipelined over TLS: both answered, in order");
		ok(SSL_get_error(ssl, n) == SSL_ERROR_ZERO_RETURN, "  then close_notify");
		kinf_buf_release(&got);
		SSL_free(ssl);
		SSL_CTX_free(ctx);
		close(fd);
	}
	ERR_clear_error();

	/* The unix socket: plain, no token. */
	fd = connect_unix();
	char *r = roundtrip(fd, "GET /u HTTP/1.1\r\nHost: h\r\n\r\n");
	is_str(body_of(r), "GET /u 0 unix", "the unix socket stays plain and tokenless");
	free(r);
	close(fd);
}

/* Read what a non-blocking TLS client has (whole records) into b; false at its end. */
static bool ssl_drain(SSL *ssl, struct kinf_buf *b) {
	char tmp[65536];
	int n;
	while ((n = SSL_read(ssl, tmp, sizeof(tmp))) > 0) {
		must(kinf_buf_append(b, tmp, (size_t)n));
	}
	int e = SSL_get_error(ssl, n);
	ERR_clear_error();
	return e == SSL_ERROR_WANT_READ;
}

static void do_abort(void *p) {
	int i = (int)(long)p;
	if (streams[i]) {
		kinf_httpd_req_abort(streams[i]);
		streams[i] = NULL;
	}
}

/*
 * Watch streams over TLS: one client stops reading and is found too far
 * behind by its own queue (its socket full, OpenSSL's write waiting), the
 * other gets every event whole, in records written as its socket drains.
 */
static void test_tls_streams(void) {
	SSL_CTX *sctx = NULL, *fctx = NULL;
	int sfd = -1, ffd = -1;
	SSL *slow = ssl_connect(&sctx, &sfd, 4096), *fast = ssl_connect(&fctx, &ffd, 0);
	if (!ok(slow && fast, "two TLS watch clients")) {
		return;
	}
	for (int i = 0; i < 2; i++) {
		streams[i] = NULL;
		write_rc[i] = 0;
		writes_done[i] = 0;
		closed_calls[i] = 0;
	}
	const char *auth = " HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok-tls\r\n\r\n";
	char req[160];
	snprintf(req, sizeof(req), "GET /stream/0%s", auth);
	SSL_write(slow, req, (int)strlen(req));
	snprintf(req, sizeof(req), "GET /stream/1%s", auth);
	SSL_write(fast, req, (int)strlen(req));
	for (int i = 0; i < 400 && (!streams[0] || !streams[1]); i++) {
		on_loop(NULL, NULL);
		nap_ms(5);
	}
	fcntl(ffd, F_SETFL, fcntl(ffd, F_GETFL) | O_NONBLOCK);
	struct kinf_buf b = {0};
	static char event[8192];
	memset(event, 'w', sizeof(event));
	struct wr ws = { 0, event, sizeof(event), true };
	struct wr wf = { 1, event, sizeof(event), false };
	int n, toobig_at = -1;
	for (n = 0; n < 600; n++) {
		on_loop(do_write, &ws);
		if (write_rc[0] == -KINF_ETOOBIG && toobig_at < 0) {
			toobig_at = n;
		}
		on_loop(do_write, &wf);
		ssl_drain(fast, &b);
		if (toobig_at >= 0 && n >= toobig_at + 20) {
			break;
		}
	}
	ok(toobig_at > 0, "over TLS the reader that stopped is too far behind after %d events",
		toobig_at);
	ok(write_rc[1] == 0 && writes_done[1] == (size_t)n + 1,
		"  the other's writes all succeeded (%zu of %d)", writes_done[1], n + 1);
	on_loop(do_abort, (void *)0L);
	on_loop(do_end, (void *)1L);
	size_t want = (size_t)(n + 1) * (sizeof(event) + 8) + 5;
	const char *body = NULL;
	for (int i = 0; i < 500; i++) {
		bool open = ssl_drain(fast, &b);
		body = b.data ? strstr(b.data, "\r\n\r\n") : NULL;
		if (!open || (body && (size_t)(b.data + b.len - body - 4) >= want)) {
			break;
		}
		nap_ms(10);
	}
	bool whole = body && (size_t)(b.data + b.len - body - 4) == want;
	for (const char *p = body ? body + 4 : NULL; whole && p < b.data + b.len - 5;
			p += sizeof(event) + 8) {
		whole = memcmp(p, "2000\r\n", 6) == 0 && memcmp(p + 6, event, sizeof(event)) == 0 &&
			memcmp(p + 6 + sizeof(event), "\r\n", 2) == 0;
	}
	ok(whole && memcmp(b.data + b.len - 5, "0\r\n\r\n", 5) == 0,
		"  and received every event whole, then the last chunk");
	/* The slow one, aborted as a caller ends a watcher too far behind. */
	fcntl(sfd, F_SETFL, fcntl(sfd, F_GETFL) | O_NONBLOCK);
	kinf_buf_reset(&b);
	bool open = true;
	for (int i = 0; i < 500 && open; i++) {
		open = ssl_drain(slow, &b);
		if (open) {
			nap_ms(10);
		}
	}
	ok(!open && closed_calls[0] == 0, "the aborted slow stream's connection is closed (%zu bytes read)",
		b.len);
	kinf_buf_release(&b);
	SSL_free(slow);
	SSL_free(fast);
	SSL_CTX_free(sctx);
	SSL_CTX_free(fctx);
	close(sfd);
	close(ffd);
	ERR_clear_error();
}

static void test_tls_handshake_timeout(void) {
	struct kinf_httpd_stats st0, st;
	on_loop(NULL, NULL);
	kinf_httpd_stats(srv, &st0);
	/* One says nothing, one sends half a ClientHello, one garbage. */
	int mute = connect_tcp(tcp_port), half = connect_tcp(tcp_port), junk = connect_tcp(tcp_port);
	ssize_t w = send(half, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11, 0);
	w += send(junk, "\x17\x03\x03\x00\x05hello", 10, 0);	/* application data first */
	ok(w == 21, "three clients that will not finish a handshake");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct kinf_buf body = {0};
	struct curl_slist *hdrs = NULL;
	CURL *h = tls_curl(NULL, tls, "tok-tls", "/while", &body, &hdrs);
	CURLcode cc = curl_easy_perform(h);
	ok(cc == CURLE_OK && body.data && strcmp(body.data, "GET /while 0 tcp") == 0,
		"others are served while handshakes hang");
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	kinf_buf_release(&body);
	ok(wait_eof(junk, 200), "a client sending data before its hello is closed at once");
	bool m = wait_eof(mute, 6000), hf = wait_eof(half, 6000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long el = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ok(m && hf && el >= 2400 && el < 6000,
		"a silent client and a half hello are dropped at the 2.5 s handshake deadline (%ld ms)", el);
	close(mute);
	close(half);
	close(junk);
	on_loop(NULL, NULL);
	kinf_httpd_stats(srv, &st);
	ok(st.tls_failures - st0.tls_failures == 3 && st.timeouts - st0.timeouts == 2,
		"  counted: %llu TLS failures, %llu timeouts", st.tls_failures - st0.tls_failures,
		st.timeouts - st0.timeouts);
}

/* kubectl reads the kubeconfig kinf writes and sends the token over this TLS. */
static void test_kubectl(void) {
	if (access("/usr/bin/kubectl", X_OK) != 0) {
		skip("no /usr/bin/kubectl", "kubectl get --raw through TLS");
		return;
	}
	struct kinf_error err = {0};
	char path[160], cmd[512];
	size_t ca_len = 0;
	const char *ca = kinf_tls_ca_pem(tls, &ca_len);
	snprintf(path, sizeof(path), "%s/kubeconfig", sockdir);
	const struct kinf_kubeconfig_entry e[] = {
		{ "up-a", kinf_httpd_url(srv, 1), NULL }, { "up-b", kinf_httpd_url(srv, 1), "ns" },
	};
	struct kinf_kubeconfig_write_opts o = { .entries = e, .n_entries = 2, .token = "tok-tls",
		.ca_pem = ca, .ca_pem_len = ca_len };
	is_int(kinf_kubeconfig_write(path, &o, &err), 0, "kubeconfig written (%s)", err.message);
	static const struct {
		const char *ctx, *path, *want;
	} runs[] = {
		{ "up-a", "/version", "GET /version 0 tcp" },
		{ "up-b", "/api/v1/pods?limit=1", "GET /api/v1/pods 0 tcp" },
	};
	for (size_t i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "HOME=%s /usr/bin/kubectl --kubeconfig %s --context %s "
			"--request-timeout 10s get --raw '%s' 2>&1", sockdir, path, runs[i].ctx,
			runs[i].path);
		FILE *f = popen(cmd, "r");
		char out[512] = "";
		size_t n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
		out[n] = '\0';
		int status = f ? pclose(f) : -1;
		ok(status == 0 && strcmp(out, runs[i].want) == 0,
			"kubectl --context %s get --raw %s: authorized over TLS (%s)", runs[i].ctx,
			runs[i].path, out);
	}
	/* The same kubeconfig with another token: the server says no. */
	o.token = "tok-wrong";
	must(kinf_kubeconfig_write(path, &o, &err));
	snprintf(cmd, sizeof(cmd), "HOME=%s /usr/bin/kubectl --kubeconfig %s --request-timeout 10s "
		"get --raw /version 2>&1", sockdir, path);
	FILE *f = popen(cmd, "r");
	char out[512] = "";
	size_t n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	int status = f ? pclose(f) : -1;
	ok(status != 0 && strstr(out, "Unauthorized"), "a wrong token: kubectl says %s", out);
	unlink(path);
	/* kubectl's HOME: its cache, if it made one. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/.kube'", sockdir);
	if (system(cmd) != 0) {
		ok(false, "clean %s/.kube", sockdir);
	}
}

static void stop_tls_server(void) {
	kinf_httpd_stop(srv);
	pthread_join(loop_thread, NULL);
	kinf_httpd_free(srv);
	kinf_tls_unref(tls);
	kinf_tls_unref(other_tls);
	rmdir(sockdir);
}

int main(void) {
	test_parser();
	test_query();
	test_accept();
	test_router();
	test_status();
	start_server();
	test_socket_dir();
	test_auth_and_keepalive();
	test_limits_on_the_wire();
	test_timers();
	test_held();
	test_streams();
	test_max_conns();
	test_unauth_budgets();
	test_behind();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	start_tls_server();
	test_tls_requests();
	test_tls_streams();
	test_tls_handshake_timeout();
	test_kubectl();
	stop_tls_server();
	curl_global_cleanup();
	return tap_done();
}
