/*
 * Unit tests for kinf serve's library (src/serve*.c) without an upstream:
 * a source fed by hand with kinf_serve_publish(), answered over a unix
 * socket. A request before the sync waits for it; lists, selectors
 * answered from the index, paging, get and 404, Tables, discovery,
 * watches from a resourceVersion (410 once it left the window), the
 * upstream state in /readyz and the Warning header, /metrics.
 */
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "httpd.h"
#include "informer.h"
#include "kindcols.h"
#include "object.h"
#include "serve.h"
#include "serverespond.h"
#include "tap.h"

static char sock_path[100];
static char logged[4096];

static void log_cb(const char *line, void *userdata) {
	(void)userdata;
	strncat(logged, line, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
}

static struct kinf_object *pod(const char *ns, const char *name, const char *rv,
		const char *app, const char *node, const char *phase) {
	char json[1024];
	struct kinf_object *obj = NULL;
	snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
			"\"resourceVersion\":\"%s\",\"labels\":{\"app\":\"%s\"},"
			"\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},"
			"\"spec\":{\"nodeName\":\"%s\"},\"status\":{\"phase\":\"%s\"}}",
			name, ns, rv, app, node, phase);
	must(kinf_object_parse(json, strlen(json), NULL, &obj, NULL));
	return obj;
}

/* A pod of about 100 KB (an annotation), for queues that fill. */
static struct kinf_object *big_pod(const char *name, const char *rv) {
	struct kinf_buf b = {0};
	struct kinf_object *obj = NULL;
	must(kinf_buf_printf(&b, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"big\","
			"\"resourceVersion\":\"%s\",\"annotations\":{\"x\":\"", name, rv));
	for (int i = 0; i < 100000; i++) {
		must(kinf_buf_append_char(&b, 'a'));
	}
	must(kinf_buf_append_str(&b, "\"}}}"));
	must(kinf_object_parse(b.data, b.len, NULL, &obj, NULL));
	kinf_buf_release(&b);
	return obj;
}

static int connect_sock(void) {
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_req(const char *target, const char *extra) {
	char req[2048];
	int fd = connect_sock();
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n",
			target, extra ? extra : "");
	if (fd >= 0 && write(fd, req, strlen(req)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read until close (or timeout_ms of silence) into a new string. */
static char *read_all(int fd, int timeout_ms) {
	struct kinf_buf b = {0};
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	char chunk[8192];
	ssize_t n;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		must(kinf_buf_append(&b, chunk, (size_t)n));
	}
	close(fd);
	must(kinf_buf_append_str(&b, ""));
	return kinf_buf_take(&b);
}

static char *get(const char *target, const char *extra) {
	int fd = send_req(target, extra);
	return fd < 0 ? strdup("") : read_all(fd, 3000);
}

static void sleep_ms(long ms) {
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int count(const char *s, const char *what) {
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) {
		n++;
	}
	return n;
}

/* GET target (extra header lines) and check every substring (NULL-terminated) is in the answer. */
static void expect(const char *target, const char *extra, const char *name, ...) {
	char *s = get(target, extra);
	bool all = true;
	va_list ap;
	va_start(ap, name);
	for (const char *w; (w = va_arg(ap, const char *));) {
		all = all && strstr(s, w);
	}
	va_end(ap);
	ok(all, "%s", name);
	free(s);
}

static void *run(void *arg) {
	must(kinf_serve_run(arg, NULL));
	return NULL;
}

static void publish(struct kinf_serve *srv, enum kinf_informer_event_type type,
		struct kinf_object *obj, struct kinf_object *old, bool initial) {
	struct kinf_informer_event ev = {
		.type = type, .key = (char *)kinf_object_key(obj), .obj = obj, .old = old,
		.initial = initial,
	};
	struct kinf_informer_batch batch = { .v = &ev, .n = 1, .in_initial_list = initial };
	must(kinf_serve_publish(srv, 0, &batch));
	kinf_object_unref(obj);
	kinf_object_unref(old);
}

/* A buffer whose builder ran out of memory half way: "{\"half\":" and then a failed append. */
static void half_built(struct kinf_buf *b) {
	kinf_buf_puts(b, "{\"half\":");
	if (kinf_buf_reserve(b, SIZE_MAX) == 0) {
		abort();	/* cannot happen: more than half the address space */
	}
}

/*
 * The send points given what a builder that failed half way left: the
 * answer is a 500 Status, the stream ends; never the half.
 */
static void failed_handler(struct kinf_httpd_req *req, void *userdata) {
	struct serve_request r = {
		.srv = userdata, .req = req, .head = kinf_httpd_req_head(req),
		.start_us = kinf_clock_now_us(),
	};
	struct kinf_buf b = {0};
	half_built(&b);
	if (strcmp(r.head->path, "/body") == 0) {
		serve_respond_buf(&r, 200, "application/json", &b);
	} else if (strcmp(r.head->path, "/status") == 0) {
		struct kinf_apistatus_body st = { .code = 404 };
		half_built(&st.json);
		serve_respond_status(&r, &st);
		kinf_apistatus_body_release(&st);
	} else {
		struct kinf_buf good = {0};
		kinf_buf_puts(&good, "{\"type\":\"ADDED\"}\n");
		must(kinf_httpd_stream_start(req, 200, "application/json", NULL));
		int rc = serve_stream_write_buf(req, &good);
		if (rc == 0) {
			rc = serve_stream_write_buf(req, &b);
		}
		if (rc == -KINF_ENOMEM) {
			kinf_httpd_stream_end(req);
		} else {
			kinf_httpd_req_abort(req);
		}
		kinf_buf_release(&good);
	}
	kinf_buf_release(&b);
}

static void *run_httpd(void *arg) {
	must(kinf_httpd_run(arg, NULL));
	return NULL;
}

static void test_failed_builders(const char *dir) {
	struct kinf_serve *srv = NULL;
	struct kinf_serve_opts o = { .version = "test" };
	struct kinf_serve_source src = { .upstream = "https://up:6443", .group = "",
		.version = "v1", .resource = "pods", .kind = "Pod", .namespaced = true };
	char addr[160];
	pthread_t th;

	must(kinf_serve_new(&o, &srv, NULL));
	must(kinf_serve_add_source(srv, &src, NULL, NULL));
	struct kinf_httpd_opts ho = { .handler = failed_handler, .userdata = srv };
	struct kinf_httpd *h = kinf_httpd_new(&ho);
	snprintf(sock_path, sizeof(sock_path), "%s/f.sock", dir);
	snprintf(addr, sizeof(addr), "unix:%s", sock_path);
	is_int(kinf_httpd_listen(h, addr, NULL), 0, "a server whose builders fail");
	pthread_create(&th, NULL, run_httpd, h);
	char *s = get("/body", NULL);
	ok(strstr(s, "HTTP/1.1 500 Internal Server Error\r\n") &&
		strstr(s, "\"message\":\"Internal error occurred: out of memory\"") &&
		!strstr(s, "half"), "a body whose append failed: a 500 Status, not the half");
	free(s);
	s = get("/status", NULL);
	ok(strstr(s, "HTTP/1.1 500 Internal Server Error\r\n") &&
		strstr(s, "out of memory") && !strstr(s, "half"),
		"a Status whose append failed: the 500 instead");
	free(s);
	s = get("/stream", NULL);
	ok(strstr(s, "200 OK") && strstr(s, "{\"type\":\"ADDED\"}\n") && !strstr(s, "half") &&
		strstr(s, "\r\n0\r\n\r\n"), "a stream chunk whose append failed: not sent, "
		"the stream ends");
	free(s);
	kinf_httpd_stop(h);
	pthread_join(th, NULL);
	kinf_httpd_free(h);
	kinf_serve_free(srv);
	unlink(sock_path);
}

/*
 * A watcher of namespace big that will not read (a small receive buffer),
 * or -1; its connection closes when its stream ends.
 */
static int paused_watcher(void) {
	int fd = connect_sock();
	int small = 4096;
	const char *req = "GET /api/v1/namespaces/big/pods?watch=1 HTTP/1.1\r\nHost: x\r\n"
		"Connection: close\r\n\r\n";
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (fd >= 0 && write(fd, req, strlen(req)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* n pods of 100 KB named b0... at resourceVersions first..., delay_ms apart. */
static void publish_big(struct kinf_serve *srv, int n, int first, long delay_ms) {
	for (int i = 0; i < n; i++) {
		char name[16], rv[16];
		snprintf(name, sizeof(name), "b%d", i);
		snprintf(rv, sizeof(rv), "%d", first + i);
		publish(srv, KINF_INFORMER_ADD, big_pod(name, rv), NULL, false);
		sleep_ms(delay_ms);
	}
}

/* Read fd slowly (64 KB every 50 ms) until it closes, is silent for 4 s, or 10 s pass. */
static char *read_slowly(int fd) {
	struct kinf_buf b = {0};
	char chunk[65536];
	ssize_t n;
	long long t0 = kinf_clock_now_ms();
	struct timeval tv = { .tv_sec = 4 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (kinf_clock_now_ms() - t0 < 10000 && (n = read(fd, chunk, sizeof(chunk))) > 0) {
		must(kinf_buf_append(&b, chunk, (size_t)n));
		sleep_ms(50);
	}
	close(fd);
	must(kinf_buf_append_str(&b, ""));
	return kinf_buf_take(&b);
}

/* Wait up to 5 s until /metrics holds what (a wait-for, not a sleep). */
static bool metrics_show(const char *what) {
	long long t0 = kinf_clock_now_ms();
	do {
		char *s = get("/metrics", NULL);
		bool there = strstr(s, what) != NULL;
		free(s);
		if (there) {
			return true;
		}
		sleep_ms(20);
	} while (kinf_clock_now_ms() - t0 < 5000);
	return false;
}

/* Watch client client's unsent events in a /metrics answer, or -1. */
static int unsent_of(const char *metrics, int client) {
	char what[160];
	snprintf(what, sizeof(what), "kinf_serve_watch_unsent_events{context=\"\","
			"resource=\"pods\",client=\"%d\"} ", client);
	const char *u = strstr(metrics, what);
	return u ? atoi(u + strlen(what)) : -1;
}

/* A server of pods on unix socket name in dir, with o, running in *th. */
static struct kinf_serve *slow_server(const char *dir, const char *name,
		const struct kinf_serve_opts *o, pthread_t *th) {
	struct kinf_serve *srv = NULL;
	struct kinf_serve_source src = { .upstream = "https://up:6443", .group = "",
		.version = "v1", .resource = "pods", .kind = "Pod", .namespaced = true };
	char addr[160];

	must(kinf_serve_new(o, &srv, NULL));
	must(kinf_serve_add_source(srv, &src, NULL, NULL));
	snprintf(sock_path, sizeof(sock_path), "%s/%s", dir, name);
	snprintf(addr, sizeof(addr), "unix:%s", sock_path);
	is_int(kinf_serve_listen(srv, addr, NULL), 0, "a server with max_lag 4, grace %ld ms",
			o->lag_grace_ms);
	pthread_create(th, NULL, run, srv);
	publish(srv, KINF_INFORMER_ADD, pod("a", "p1", "10", "web", "n1", "Running"), NULL, true);
	must(kinf_serve_synced(srv, 0));
	return srv;
}

static void slow_server_free(struct kinf_serve *srv, pthread_t th) {
	kinf_serve_stop(srv);
	pthread_join(th, NULL);
	kinf_serve_free(srv);
	unlink(sock_path);
}

/*
 * Slow watch clients, as the apiserver's cacheWatcher treats them: past
 * max_lag unsent events a client that reads (slower than the burst) goes
 * on and gets every event; one that reads nothing for the grace period
 * is ended with a 410. Neither depends on the machine's speed: the
 * reader's server has a grace of 30 s, which no reader of this test waits
 * out, and the paused one's a grace of 100 ms with no reader to race.
 */
static void test_slow_clients(const char *dir) {
	struct kinf_serve_opts o = { .window = 100, .max_lag = 4, .lag_grace_ms = 30000,
		.bookmark_ms = 100, .version = "test", .log = log_cb };
	pthread_t th;

	logged[0] = '\0';
	struct kinf_serve *srv = slow_server(dir, "g.sock", &o, &th);
	int reader = send_req("/api/v1/namespaces/big/pods?watch=1&timeoutSeconds=3", NULL);
	int paused = paused_watcher();
	ok(reader >= 0 && paused >= 0, "a watcher that will not read, one that reads slowly");
	ok(metrics_show("kinf_serve_watch_queued_bytes{context=\"\",resource=\"pods\","
		"client=\"2\"} "), "  both watching");
	/* 20 events of 100 KB at once: 2 MB, read at about 1.3 MB/s. */
	publish_big(srv, 20, 11, 0);
	/* Until the paused one is past max_lag (up to 5 s). */
	char *s = get("/metrics", NULL);
	for (long long t0 = kinf_clock_now_ms(); unsent_of(s, 2) <= 4 &&
			kinf_clock_now_ms() - t0 < 5000;) {
		free(s);
		sleep_ms(20);
		s = get("/metrics", NULL);
	}
	ok(unsent_of(s, 2) > 4 &&
		strstr(s, "kinf_serve_watch_queued_bytes{context=\"\",resource=\"pods\",client=\"1\"} ") &&
		strstr(s, "# TYPE kinf_informer_queue_length gauge\nkinf_informer_queue_length{") &&
		strstr(s, "# TYPE kinf_serve_handover_events gauge\nkinf_serve_handover_events{"),
		"/metrics: each client's unsent events (the paused one's past max_lag) and queued "
		"bytes; the informers' queue lengths");
	free(s);
	s = read_slowly(reader);
	ok(count(s, "{\"type\":\"ADDED\"") == 20 && !strstr(s, "\"type\":\"ERROR\"") &&
		strstr(s, "\r\n0\r\n\r\n"), "the slow reader, 16 events past max_lag, "
		"got all 20 and its stream's clean end (%d)", count(s, "{\"type\":\"ADDED\""));
	free(s);
	ok(!strstr(logged, "watch client of pods ended: "), "  nobody ended within the grace");
	close(paused);

	/* Bookmarks (every 100 ms here) never go back past a watch's resourceVersion. */
	s = get("/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=100&timeoutSeconds=1",
			NULL);
	ok(strstr(s, "200 OK") && !strstr(s, "BOOKMARK"),
		"a watch from 100, ahead of the cache (30): no bookmark at 30");
	free(s);
	s = get("/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=30&timeoutSeconds=1",
			NULL);
	ok(strstr(s, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
		"\"metadata\":{\"resourceVersion\":\"30\""), "  one from 30: bookmarks at 30");
	free(s);
	slow_server_free(srv, th);

	/* A grace of 100 ms: the paused watcher, past max_lag, reads nothing. */
	o.lag_grace_ms = 100;
	logged[0] = '\0';
	srv = slow_server(dir, "g2.sock", &o, &th);
	paused = paused_watcher();
	ok(paused >= 0 && metrics_show("kinf_serve_watch_queued_bytes{context=\"\","
		"resource=\"pods\",client=\"1\"} "), "a watcher that will not read");
	publish_big(srv, 20, 11, 0);
	/* Read only once it was ended: reading is progress. */
	ok(metrics_show("kinf_serve_evicted_clients_total{context=\"\",resource=\"pods\"} 1"),
		"  evicted (/metrics)");
	s = read_all(paused, 5000);
	ok(strstr(s, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\"") &&
		strstr(s, "events behind, read nothing for 100 ms (kinf serve --max-lag 4)\","
			"\"reason\":\"Expired\",\"code\":410}}") &&
		strstr(s, "\r\n0\r\n\r\n"), "the paused one: ended with an ERROR 410 after its grace");
	free(s);
	ok(count(logged, "watch client of pods ended: ") == 1 &&
		strstr(logged, "read nothing for 100 ms"), "  one eviction, logged");
	slow_server_free(srv, th);
}

/* One request on a kept connection fd and its answer, read to its Content-Length. */
static char *ask(int fd, const char *target) {
	char req[1024];
	struct kinf_buf b = {0};
	char chunk[8192];
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target);
	if (write(fd, req, strlen(req)) < 0) {
		return strdup("");
	}
	struct timeval tv = { .tv_sec = 3 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	size_t want = SIZE_MAX;
	while (b.len < want) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n <= 0) {
			break;
		}
		must(kinf_buf_append(&b, chunk, (size_t)n));	/* NUL-terminated */
		const char *end = strstr(b.data, "\r\n\r\n"), *cl = strstr(b.data, "Content-Length: ");
		if (end && cl && cl < end) {
			want = (size_t)(end + 4 - b.data) + strtoul(cl + 16, NULL, 10);
		}
	}
	must(kinf_buf_append_str(&b, ""));
	return kinf_buf_take(&b);
}

/* The continue token of a List answer (a new string), or NULL. */
static char *token_of(const char *s) {
	const char *t = strstr(s, "\"continue\":\"");
	if (!t) {
		return NULL;
	}
	t += 12;
	return strndup(t, strcspn(t, "\""));
}

static struct kinf_serve *start(const char *dir, const char *name, struct kinf_serve_opts *o,
		pthread_t *th) {
	struct kinf_serve *srv = NULL;
	struct kinf_serve_source src = { .upstream = "https://up:6443", .group = "",
		.version = "v1", .resource = "pods", .kind = "Pod", .namespaced = true };
	char addr[160];
	o->version = "test";
	must(kinf_serve_new(o, &srv, NULL));
	must(kinf_serve_add_source(srv, &src, NULL, NULL));
	snprintf(sock_path, sizeof(sock_path), "%s/%s", dir, name);
	snprintf(addr, sizeof(addr), "unix:%s", sock_path);
	must(kinf_serve_listen(srv, addr, NULL));
	pthread_create(th, NULL, run, srv);
	return srv;
}

static void stop(struct kinf_serve *srv, pthread_t th) {
	kinf_serve_stop(srv);
	pthread_join(th, NULL);
	kinf_serve_free(srv);
	unlink(sock_path);
}

/* An object of json, published to source as part of the initial list. */
static void publish_json(struct kinf_serve *srv, size_t source, const char *json) {
	struct kinf_object *obj = NULL;
	must(kinf_object_parse(json, strlen(json), NULL, &obj, NULL));
	struct kinf_informer_event ev = {
		.type = KINF_INFORMER_ADD, .key = (char *)kinf_object_key(obj), .obj = obj,
		.initial = true,
	};
	struct kinf_informer_batch batch = { .v = &ev, .n = 1, .in_initial_list = true };
	must(kinf_serve_publish(srv, source, &batch));
	kinf_object_unref(obj);
}

/*
 * Tables of a custom resource carry its CRD's columns (the source's), and
 * FlowSchemas come in the order the apiserver prints them, page by page.
 */
static void test_table_columns(const char *dir) {
	static const char crd[] = "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{"
		"\"group\":\"example.com\",\"names\":{\"kind\":\"Widget\"},\"versions\":[{"
		"\"name\":\"v1\",\"additionalPrinterColumns\":[{\"name\":\"Color\","
		"\"type\":\"string\",\"jsonPath\":\".spec.color\"},{\"name\":\"Size\","
		"\"type\":\"integer\",\"jsonPath\":\".spec.size\",\"priority\":1}]}]}}";
	static const char table[] = "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n";
	struct kinf_kindcols *cols = NULL;
	struct kinf_serve *srv = NULL;
	struct kinf_serve_opts o = { .version = "test" };
	struct kinf_serve_source widgets = { .upstream = "https://up:6443", .group = "example.com",
		.version = "v1", .resource = "widgets", .kind = "Widget", .namespaced = true };
	struct kinf_serve_source flows = { .upstream = "https://up:6443",
		.group = "flowcontrol.apiserver.k8s.io", .version = "v1beta3",
		.resource = "flowschemas", .kind = "FlowSchema" };
	char addr[160];
	pthread_t th;

	is_int(kinf_kindcols_from_crd(crd, sizeof(crd) - 1, "v1", &cols, NULL), 0,
			"a printer from a CRD");
	widgets.columns = cols;
	must(kinf_serve_new(&o, &srv, NULL));
	must(kinf_serve_add_source(srv, &widgets, NULL, NULL));
	kinf_kindcols_unref(cols);	/* the server keeps its own */
	must(kinf_serve_add_source(srv, &flows, NULL, NULL));
	snprintf(sock_path, sizeof(sock_path), "%s/t.sock", dir);
	snprintf(addr, sizeof(addr), "unix:%s", sock_path);
	must(kinf_serve_listen(srv, addr, NULL));
	pthread_create(&th, NULL, run, srv);
	publish_json(srv, 0, "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"a\","
			"\"resourceVersion\":\"5\"},\"spec\":{\"color\":\"blue\",\"size\":3}}");
	static const char *const fs[][2] = { { "a", "500" }, { "b", "100" }, { "c", "1" } };
	for (size_t i = 0; i < 3; i++) {
		char json[256];
		snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":"
				"\"%zu\"},\"spec\":{\"matchingPrecedence\":%s}}", fs[i][0], 6 + i, fs[i][1]);
		publish_json(srv, 1, json);
	}
	must(kinf_serve_synced(srv, 0));
	must(kinf_serve_synced(srv, 1));

	expect("/apis/example.com/v1/widgets", table, "a custom resource's Table has its CRD's columns",
		"{\"name\":\"Color\",\"type\":\"string\",\"format\":\"\",\"description\":"
		"\"Custom resource definition column (in JSONPath format): .spec.color\",\"priority\":0}",
		"{\"name\":\"Size\",\"type\":\"integer\"", "{\"cells\":[\"w1\",\"blue\",3]", NULL);
	char *s = get("/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas", table);
	char *c = strstr(s, "[\"c\""), *b = strstr(s, "[\"b\""), *a = strstr(s, "[\"a\"");
	ok(a && b && c && c < b && b < a, "FlowSchemas by matchingPrecedence, as the apiserver");
	free(s);
	s = get("/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas?limit=2", table);
	b = strstr(s, "[\"b\"");
	a = strstr(s, "[\"a\"");
	ok(a && b && b < a && !strstr(s, "[\"c\""), "  each page in that order (a, b sorted)");
	free(s);
	stop(srv, th);
}

/*
 * The global budget: past max_inflight requests being answered, a
 * request gets the apiserver's 429 with Retry-After; probes never do.
 */
static void test_admission(const char *dir) {
	struct kinf_serve_opts o = { .max_inflight = 2 };
	pthread_t th;
	struct kinf_serve *srv = start(dir, "a.sock", &o, &th);

	/* Two lists wait for the sync: both in flight. */
	int w1 = send_req("/api/v1/pods", NULL), w2 = send_req("/api/v1/pods", NULL);
	sleep_ms(200);
	char *s = get("/api/v1/pods", NULL);
	ok(strstr(s, "HTTP/1.1 429 Too Many Requests\r\n") && strstr(s, "Retry-After: 1\r\n") &&
		strstr(s, "\r\n\r\nToo many requests, please try again later.\n"),
		"a third request past max_inflight 2: the apiserver's 429 with Retry-After");
	free(s);
	s = get("/readyz", NULL);
	ok(strstr(s, "500 Internal Server Error") && strstr(s, "informer-sync"),
		"  a probe is answered all the same (not ready yet)");
	free(s);
	publish(srv, KINF_INFORMER_ADD, pod("a", "p1", "10", "web", "n1", "Running"), NULL, true);
	must(kinf_serve_synced(srv, 0));
	char *a = read_all(w1, 3000), *b = read_all(w2, 3000);
	ok(strstr(a, "200 OK") && strstr(b, "200 OK"), "  the two held are answered after the sync");
	free(a);
	free(b);
	s = get("/metrics", NULL);
	ok(strstr(s, "\nkinf_serve_requests_refused_total{reason=\"inflight\"} 1\n") &&
		strstr(s, "\nkinf_serve_requests_inflight 1\n"),
		"  then served again; the 429 counted in /metrics");
	free(s);
	stop(srv, th);
}

/*
 * Continue tokens: one client's burst of paged lists expires only its own
 * oldest tokens, never another client's.
 */
static void test_pagination_budget(const char *dir) {
	struct kinf_serve_opts o = {0};
	pthread_t th;
	struct kinf_serve *srv = start(dir, "p.sock", &o, &th);
	publish(srv, KINF_INFORMER_ADD, pod("a", "p1", "10", "web", "n1", "Running"), NULL, true);
	publish(srv, KINF_INFORMER_ADD, pod("a", "p2", "11", "web", "n1", "Running"), NULL, true);
	publish(srv, KINF_INFORMER_ADD, pod("a", "p3", "12", "web", "n1", "Running"), NULL, true);
	must(kinf_serve_synced(srv, 0));

	int a = connect_sock(), b = connect_sock();
	char *s = ask(a, "/api/v1/pods?limit=1");
	char *ta = token_of(s), *tb_first = NULL, *tb_last = NULL;
	ok(ta != NULL, "client A: a first page and its token");
	free(s);
	/* Client B: 40 paged lists, each of another moment (an event between them). */
	for (int i = 0; i < 40; i++) {
		char name[16], rv[16];
		snprintf(name, sizeof(name), "q%d", i);
		snprintf(rv, sizeof(rv), "%d", 20 + i);
		publish(srv, KINF_INFORMER_ADD, pod("b", name, rv, "db", "n2", "Running"), NULL,
				false);
		sleep_ms(5);
		s = ask(b, "/api/v1/pods?limit=1");
		if (i == 0) {
			tb_first = token_of(s);
		} else {
			free(tb_last);
			tb_last = token_of(s);
		}
		free(s);
	}
	char target[512];
	snprintf(target, sizeof(target), "/api/v1/pods?limit=1&continue=%s", ta ? ta : "x");
	s = ask(a, target);
	ok(strstr(s, "200 OK") && strstr(s, "\"name\":\"p2\"") && strstr(s, "\"resourceVersion\":\"12\""),
		"client A's next page after B's burst of 40: its snapshot is still there");
	free(s);
	snprintf(target, sizeof(target), "/api/v1/pods?limit=1&continue=%s", tb_first ? tb_first : "x");
	s = ask(b, target);
	ok(strstr(s, "410 Gone"), "  B's first token: replaced by its own later ones");
	free(s);
	snprintf(target, sizeof(target), "/api/v1/pods?limit=1&continue=%s", tb_last ? tb_last : "x");
	s = ask(b, target);
	ok(strstr(s, "200 OK") && strstr(s, "\"name\":\"p2\""), "  B's last one is good");
	free(s);
	s = ask(a, "/metrics");
	ok(strstr(s, "\nkinf_serve_continue_snapshots 5\n"), "  A's one and B's four are kept");
	free(s);
	free(ta);
	free(tb_first);
	free(tb_last);
	close(a);
	close(b);
	stop(srv, th);
}

/*
 * A watch client that takes nothing of its stream for the write timeout
 * is ended with its 410 and counted as evicted; what was queued for it
 * and not begun is dropped so that the 410 comes next.
 */
static void test_write_timeout(const char *dir) {
	struct kinf_serve_opts o = { .write_timeout_ms = 800, .log = log_cb };
	pthread_t th;
	struct kinf_serve *srv = start(dir, "w.sock", &o, &th);
	logged[0] = '\0';
	publish(srv, KINF_INFORMER_ADD, pod("a", "p1", "10", "web", "n1", "Running"), NULL, true);
	must(kinf_serve_synced(srv, 0));
	int paused = paused_watcher();
	sleep_ms(200);
	/* 8 events of 100 KB: far fewer than max_lag (1000), more than its queue's budget. */
	publish_big(srv, 8, 11, 0);
	/* It reads once it was ended: within the connection's last write timeout. */
	char *s = NULL;
	for (int i = 0; i < 100 && (!s || !strstr(s, "kinf_serve_evicted_clients_total{"
			"context=\"\",resource=\"pods\"} 1")); i++) {
		free(s);
		sleep_ms(50);
		s = get("/metrics", NULL);
	}
	free(s);
	s = read_all(paused, 1000);
	int got = count(s, "{\"type\":\"ADDED\"");
	ok(strstr(s, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: the "
		"client read nothing of its stream for 800 ms (kinf serve's write timeout)\","
		"\"reason\":\"Expired\",\"code\":410}}\n\r\n0\r\n\r\n") && got < 8,
		"ended by the write timeout with its 410, the events queued before it dropped "
		"(%d of 8 came)", got);
	free(s);
	s = get("/metrics", NULL);
	ok(strstr(s, "kinf_serve_evicted_clients_total{context=\"\",resource=\"pods\"} 1") &&
		strstr(logged, "watch client of pods ended: "), "  counted as evicted, logged");
	free(s);
	stop(srv, th);
}

int main(void) {
	struct kinf_serve *srv = NULL;
	struct kinf_error err = {0};
	char dir[] = "/tmp/test-serve.XXXXXX";
	char addr[160];
	static const char *const po[] = { "po", NULL };
	pthread_t th;
	char *s;

	if (!mkdtemp(dir)) {
		return 1;
	}
	test_failed_builders(dir);
	test_slow_clients(dir);
	test_admission(dir);
	test_pagination_budget(dir);
	test_write_timeout(dir);
	test_table_columns(dir);
	snprintf(sock_path, sizeof(sock_path), "%s/s.sock", dir);
	snprintf(addr, sizeof(addr), "unix:%s", sock_path);
	struct kinf_serve_opts o = { .token = "t0k", .window = 4, .max_lag = 4,
		.version = "test", .log = log_cb };
	is_int(kinf_serve_new(&o, &srv, &err), 0, "a server");
	struct kinf_serve_source src = { .context = "ctx", .upstream = "https://up:6443",
		.group = "", .version = "v1", .resource = "pods", .singular = "pod",
		.kind = "Pod", .namespaced = true, .short_names = po };
	is_int(kinf_serve_add_source(srv, &src, NULL, &err), 0, "a source");
	is_int(kinf_serve_listen(srv, addr, &err), 0, "listening on a unix socket");
	pthread_create(&th, NULL, run, srv);

	s = get("/readyz", NULL);
	ok(strstr(s, "500 Internal Server Error") &&
		strstr(s, "[-]informer-sync failed: pods of context \"ctx\" (https://up:6443): "
			"initial list not done"), "not ready before the sync, saying why");
	free(s);
	int early = send_req("/api/v1/pods", NULL);

	publish(srv, KINF_INFORMER_ADD, pod("a", "p1", "10", "web", "n1", "Running"), NULL, true);
	publish(srv, KINF_INFORMER_ADD, pod("a", "p2", "11", "web", "n2", "Pending"), NULL, true);
	publish(srv, KINF_INFORMER_ADD, pod("b", "p3", "12", "db", "n1", "Running"), NULL, true);
	must(kinf_serve_synced(srv, 0));

	s = read_all(early, 3000);
	ok(strstr(s, "200 OK") && count(s, "\"name\":\"p") == 3,
		"a list sent before the sync is answered after it, whole");
	ok(strstr(s, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
			"{\"resourceVersion\":\"12\"},\"items\":[{\"metadata\":{\"name\":\"p1\""),
		"  PodList, the newest resourceVersion, items by key");
	free(s);
	s = get("/readyz", NULL);
	ok(strstr(s, "\r\n\r\nok"), "ready after the sync");
	free(s);

	s = get("/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", NULL);
	ok(count(s, "\"name\":\"p") == 2 && strstr(s, "p1") && strstr(s, "p3"),
		"spec.nodeName from the index");
	free(s);
	s = get("/api/v1/namespaces/a/pods?fieldSelector=status.phase!%3DRunning&labelSelector=app%3Dweb", NULL);
	ok(count(s, "\"name\":\"p") == 1 && strstr(s, "\"name\":\"p2\""),
		"namespace, a != field and a label together");
	free(s);
	s = get("/api/v1/pods?fieldSelector=spec.foo%3Dx", NULL);
	ok(strstr(s, "400 Bad Request") && strstr(s, "field label not supported: spec.foo"),
		"a field the apiserver does not offer for pods: 400");
	free(s);

	s = get("/api/v1/pods?limit=2", NULL);
	char *tok = strstr(s, "\"continue\":\"");
	ok(tok && count(s, "\"name\":\"p") == 2 && strstr(s, "\"remainingItemCount\":1"),
		"limit 2: two items, a continue token, one remaining");
	if (tok) {
		char target[512], *end;
		tok += 12;
		end = strchr(tok, '"');
		snprintf(target, sizeof(target), "/api/v1/pods?limit=2&continue=%.*s",
				(int)(end - tok), tok);
		/* A change after the first page is not in the snapshot's next page. */
		publish(srv, KINF_INFORMER_ADD, pod("c", "p4", "13", "web", "n3", "Running"), NULL,
				false);
		char *m = get("/metrics", NULL);
		ok(m && strstr(m, "\nkinf_serve_continue_snapshots 1\n") &&
			strstr(m, "\nkinf_serve_continue_snapshot_objects 3\n"),
			"  one snapshot of three objects while a continue may come");
		free(m);
		char *s2 = get(target, NULL);
		ok(count(s2, "\"name\":\"p") == 1 && strstr(s2, "\"name\":\"p3\"") &&
			!strstr(s2, "\"continue\"") && strstr(s2, "\"resourceVersion\":\"12\""),
			"  the next page from the snapshot, at its resourceVersion");
		free(s2);
		m = get("/metrics", NULL);
		ok(m && strstr(m, "\nkinf_serve_continue_snapshots 0\n") &&
			strstr(m, "\nkinf_serve_continue_snapshot_objects 0\n"),
			"  its last page served, the snapshot is dropped");
		free(m);
		s2 = get(target, NULL);
		ok(s2 && strstr(s2, "410 Gone") && strstr(s2, "\"reason\":\"Expired\""),
			"  the same last page again: 410 Expired, as a compacted continue");
		free(s2);
	}
	free(s);

	expect("/api/v1/namespaces/a/pods/p1", NULL, "get: the typed object",
		"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\"", NULL);
	expect("/api/v1/namespaces/a/pods/nope", NULL, "get: 404 Status", "404 Not Found",
		"\"message\":\"pods \\\"nope\\\" not found\"", NULL);
	expect("/api/v1/namespaces/a/pods",
		"Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json\r\n",
		"a Table with kinf's pod columns", "\"kind\":\"Table\"",
		"{\"cells\":[\"p1\",\"0/0\",\"Running\",\"0\",",
		"\"object\":{\"kind\":\"PartialObjectMetadata\"", NULL);
	expect("/api", "Accept: application/json;g=apidiscovery.k8s.io;v=v2beta1;"
		"as=APIGroupDiscoveryList,application/json\r\n", "aggregated discovery as asked for",
		"Content-Type: application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
		"\"shortNames\":[\"po\"]", NULL);
	expect("/clusters/ctx/api/v1/namespaces/a/pods/p2", NULL,
		"the context's prefix routes to it", "\"name\":\"p2\"", NULL);
	expect("/clusters/other/api/v1/pods", NULL, "an unknown context: 404",
		"404 page not found", NULL);

	/* Watches: from rv 12 (p4 at 13 is in the window). */
	int w1 = send_req("/api/v1/pods?watch=1&resourceVersion=12", NULL);
	int w2 = send_req("/api/v1/pods?watch=1&resourceVersion=12&labelSelector=app%3Dweb", NULL);
	sleep_ms(200);
	publish(srv, KINF_INFORMER_UPDATE, pod("a", "p1", "14", "db", "n1", "Running"),
			pod("a", "p1", "10", "web", "n1", "Running"), false);
	publish(srv, KINF_INFORMER_DELETE, pod("a", "p2", "15", "web", "n2", "Pending"), NULL, false);
	s = read_all(w1, 500);
	ok(strstr(s, "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p4\"") &&
		strstr(s, "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\"") &&
		strstr(s, "{\"type\":\"DELETED\""), "a watch from 12: ADDED p4, MODIFIED p1, DELETED p2");
	free(s);
	s = read_all(w2, 500);
	ok(strstr(s, "\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"a\",\"resourceVersion\":\"10\""),
		"  with app=web, p1 leaving the selector is DELETED with its old state");
	free(s);
	/* Three more events push 13 out of the window of 4. */
	publish(srv, KINF_INFORMER_ADD, pod("c", "p5", "16", "web", "n3", "Running"), NULL, false);
	publish(srv, KINF_INFORMER_ADD, pod("c", "p6", "17", "web", "n3", "Running"), NULL, false);
	publish(srv, KINF_INFORMER_ADD, pod("c", "p7", "18", "web", "n3", "Running"), NULL, false);
	sleep_ms(100);
	s = get("/api/v1/pods?watch=1&resourceVersion=12", NULL);
	ok(strstr(s, "\"type\":\"ERROR\"") && strstr(s, "too old resource version: 12 (14)") &&
		strstr(s, "\"code\":410"), "a watch from before the window: ERROR 410");
	free(s);

	s = get("/api/v1/watch/namespaces/a/pods/p1?timeoutSeconds=1", NULL);
	ok(count(s, "\"type\":\"ADDED\"") == 1 && strstr(s, "\"name\":\"p1\""),
		"a watch of one object: that object only");
	free(s);

	/* A watch from ahead of the cache starts once the cache passes it. */
	int w4 = send_req("/api/v1/pods?watch=1&resourceVersion=19", NULL);
	sleep_ms(200);
	publish(srv, KINF_INFORMER_ADD, pod("d", "q1", "19", "web", "n3", "Running"), NULL, false);
	publish(srv, KINF_INFORMER_ADD, pod("d", "q2", "20", "web", "n3", "Running"), NULL, false);
	s = read_all(w4, 500);
	ok(!strstr(s, "\"name\":\"q1\"") && strstr(s, "\"name\":\"q2\""),
		"a watch from 19 gets 20, not 19");
	free(s);

	/* A delete a relist found: its last state is older than the cache. */
	int w3 = send_req("/api/v1/pods?watch=1&resourceVersion=20", NULL);
	sleep_ms(200);
	publish(srv, KINF_INFORMER_DELETE, pod("c", "p5", "16", "web", "n3", "Running"), NULL, false);
	s = read_all(w3, 500);
	ok(strstr(s, "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
		"\"metadata\":{\"name\":\"p5\",\"namespace\":\"c\",\"resourceVersion\":\"20\""),
		"a tombstone's DELETED carries the newest resourceVersion, not its last state's");
	free(s);

	/*
	 * A watcher that stops reading: past its queue's budget it falls
	 * behind; once its next event leaves the window (4), it is ended with a 410.
	 */
	int slow = paused_watcher();
	ok(slow >= 0, "a watcher that will not read");
	sleep_ms(200);
	publish_big(srv, 12, 21, 20);
	/* Read only once it was ended: reading is progress. */
	ok(metrics_show("kinf_serve_evicted_clients_total{context=\"ctx\",resource=\"pods\"} 1"),
		"  evicted (/metrics)");
	s = read_all(slow, 5000);
	ok(strstr(s, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\"") &&
		strstr(s, "(kinf serve --max-lag 4)\",\"reason\":\"Expired\",\"code\":410}}") &&
		strstr(s, "\r\n0\r\n\r\n"), "  ended with an ERROR 410 event and the last chunk");
	free(s);
	ok(strstr(logged, "watch client of pods ended: "), "  and a log line");
	expect("/metrics", NULL, "  counted in /metrics",
		"kinf_serve_evicted_clients_total{context=\"ctx\",resource=\"pods\"} 1", NULL);

	must(kinf_serve_upstream(srv, 0, false, "connection refused"));
	sleep_ms(100);
	s = get("/api/v1/namespaces/a/pods/p1", NULL);
	ok(strstr(s, "Warning: 299 - \"kinf serve: upstream context \\\"ctx\\\" (https://up:6443) "
		"unreachable since 20") && strstr(s, "Z (connection refused): answering from the cache\"") &&
		strstr(s, "\"name\":\"p1\""), "upstream away: the cache answers, with a Warning");
	free(s);
	s = get("/readyz", NULL);
	ok(strstr(s, "[-]upstream failed: upstream context \"ctx\" (https://up:6443) unreachable for 0s: "
		"connection refused"), "  /readyz says why");
	free(s);
	must(kinf_serve_upstream(srv, 0, true, NULL));
	sleep_ms(100);
	s = get("/readyz", NULL);
	ok(strstr(s, "\r\n\r\nok"), "  back: ready");
	free(s);
	ok(count(logged, "unreachable: connection refused; answering from the cache") == 1 &&
		count(logged, "is back after") == 1, "one log line per change");

	s = get("/metrics", NULL);
	ok(strstr(s, "kinf_serve_objects{context=\"ctx\",resource=\"pods\"} 19") &&
		strstr(s, "kinf_serve_resource_version{context=\"ctx\",resource=\"pods\"} 32") &&
		strstr(s, "kinf_serve_window_events{context=\"ctx\",resource=\"pods\"} 4"),
		"/metrics: objects, resourceVersion, window");
	free(s);
	int fd = connect_sock();
	const char *del = "DELETE /api/v1/namespaces/a/pods/p1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	ok(fd >= 0 && write(fd, del, strlen(del)) > 0, "a DELETE");
	s = read_all(fd, 3000);
	ok(strstr(s, "405 Method Not Allowed") && strstr(s, "kinf serve is a read-only cache of "
		"context \\\"ctx\\\" (https://up:6443)"), "  405 naming the upstream");
	free(s);

	/*
	 * A list from a resourceVersion the cache has not reached waits for it
	 * (the apiserver's watch cache waits up to 3 s), answered once it is.
	 */
	int ahead = send_req("/api/v1/pods?resourceVersion=33", NULL);
	struct pollfd pfd = { .fd = ahead, .events = POLLIN };
	ok(poll(&pfd, 1, 300) == 0, "a list from 33, ahead of the cache (32): no answer yet");
	publish(srv, KINF_INFORMER_ADD, pod("d", "q3", "33", "web", "n3", "Running"), NULL, false);
	s = read_all(ahead, 3000);
	ok(strstr(s, "200 OK") && strstr(s, "\"metadata\":{\"resourceVersion\":\"33\"}") &&
		strstr(s, "\"name\":\"q3\""), "  answered at 33 once the cache got there");
	free(s);
	long long t0 = kinf_clock_now_ms();
	int never = send_req("/api/v1/pods?resourceVersion=40", NULL);
	/* Meanwhile the loop answers others. */
	expect("/readyz", NULL, "  the loop answers others meanwhile", "\r\n\r\nok", NULL);
	s = read_all(never, 6000);
	long long waited = kinf_clock_now_ms() - t0;
	ok(waited >= 2900, "a list from 40, not reached: answered after its 3 s wait (%lld ms)",
		waited);
	ok(strstr(s, "504 Gateway Timeout") && strstr(s, "Retry-After: 1\r\n") &&
		strstr(s, "\"message\":\"Timeout: Too large resource version: 40, current: 33\"") &&
		strstr(s, "\"reason\":\"ResourceVersionTooLarge\""),
		"  504 with the ResourceVersionTooLarge cause and Retry-After");
	free(s);
	ahead = send_req("/api/v1/pods?resourceVersion=50", NULL);
	sleep_ms(100);
	close(ahead);	/* a client that gives up while waiting: forgotten (ASan: no leak) */

	/*
	 * Initial events from a version the cache has not reached wait for it
	 * likewise, then an ERROR event with the 504 (a plain watch from there
	 * starts at once: "a watch from 19 gets 20" above).
	 */
#define SIE "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&" \
	"allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion="
	ahead = send_req(SIE "34", NULL);
	pfd.fd = ahead;
	ok(poll(&pfd, 1, 300) == 0, "initial events from 34, ahead of the cache (33): no answer yet");
	publish(srv, KINF_INFORMER_ADD, pod("d", "q4", "34", "web", "n3", "Running"), NULL, false);
	s = read_all(ahead, 3000);
	ok(strstr(s, "200 OK") && count(s, "{\"type\":\"ADDED\"") == 21 &&
		strstr(s, "\"name\":\"q4\"") && strstr(s, "{\"type\":\"BOOKMARK\",\"object\":"
			"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"34\","
			"\"creationTimestamp\":null,\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"),
		"  the 21 objects once the cache got there, then the end bookmark at 34");
	free(s);
	t0 = kinf_clock_now_ms();
	/* (get() would give up after 3 s of silence: the server's own wait) */
	s = read_all(send_req(SIE "40", NULL), 6000);
	waited = kinf_clock_now_ms() - t0;
	ok(waited >= 2900 && strstr(s, "200 OK") &&
		strstr(s, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\"") &&
		strstr(s, "\"message\":\"Timeout: Too large resource version: 40, current: 34\"") &&
		strstr(s, "\"code\":504}}\n") && !strstr(s, "ADDED"),
		"  from 40, not reached: after its 3 s wait (%lld ms) an ERROR event with the 504",
		waited);
	free(s);
#undef SIE

	/*
	 * A pod holding a number beyond float64's range (no API server sends
	 * one): its JSON as it came; no Table cells for it, so a 500 naming
	 * it and the field, never "out of memory".
	 */
	static const char huge[] = "{\"metadata\":{\"name\":\"h\",\"namespace\":\"h\","
		"\"resourceVersion\":\"35\"},\"spec\":{\"x\":[12345678901234567890,1e400]}}";
	struct kinf_object *hobj = NULL;
	is_int(kinf_object_parse(huge, strlen(huge), NULL, &hobj, NULL), 0, "a pod holding 1e400");
	publish(srv, KINF_INFORMER_ADD, hobj, NULL, false);
	expect("/api/v1/namespaces/h/pods", NULL, "  its list: the literals as they came",
		"\"x\":[12345678901234567890,1e400]", NULL);
#define TABLE "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json\r\n"
	expect("/api/v1/namespaces/h/pods", TABLE, "  its Table: a 500 naming it and the field",
		"500 Internal Server Error", "\"message\":\"Internal error occurred: object "
		"\\\"h/h\\\": field .spec.x[1]: number 1e400 is beyond float64's range\"", NULL);
	expect("/api/v1/namespaces/h/pods/h", TABLE, "  its Table row: the same",
		"500 Internal Server Error", "field .spec.x[1]: number 1e400", NULL);
#undef TABLE

	kinf_serve_stop(srv);
	pthread_join(th, NULL);
	kinf_serve_free(srv);
	rmdir(dir);
	return tap_done();
}
