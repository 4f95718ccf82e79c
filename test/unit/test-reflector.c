/*
 * The reflector's state machine (src/reflector.c) against a scripted
 * HTTP server (testserver.h): which request follows which answer, with
 * which resourceVersion, and the deltas it queues. client-go's
 * tools/cache/reflector.go is the reference: list at "0" first; watch from
 * the list's resourceVersion; a closed stream is watched again from the
 * last resourceVersion a bookmark or event gave; a 410 relists at the last
 * synced resourceVersion, and a list that is 410 too at "" (a consistent
 * read); a 500 on the watch backs off and watches again without a relist.
 * Every script ends with the server's 599, which on_error turns into a
 * stop.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "deltafifo.h"
#include "http.h"
#include "kubeconfig.h"
#include "object.h"
#include "reflector.h"
#include "tap.h"
#include "testserver.h"

/* A response whose Content-Length is counted here. */
static char *respond(const char *status, const char *body) {
	struct kinf_buf b = {0};
	must(kinf_buf_printf(&b, "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
			"Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
			status, strlen(body), body));
	return kinf_buf_take(&b);
}

#define POD(name, rv) \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\"," \
	"\"namespace\":\"ns\",\"resourceVersion\":\"" rv "\"}}"
#define LIST(rv, items) \
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv "\"}," \
	"\"items\":[" items "]}"
#define EVENT(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
#define BOOKMARK(rv) \
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\"," \
	"\"metadata\":{\"resourceVersion\":\"" rv "\"}}}\n"
#define STATUS(code, reason, message) \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\"," \
	"\"message\":\"" message "\",\"reason\":\"" reason "\",\"code\":" #code "}"

struct run {
	atomic_int errors_seen;
	int last_status;
};

/* Stop at the end of the script (599); go on after anything else. */
static bool on_error(int rc, const struct kinf_error *err, bool synced, void *userdata) {
	struct run *run = userdata;
	(void)rc;
	(void)synced;
	atomic_fetch_add(&run->errors_seen, 1);
	run->last_status = err->http_status;
	return err->http_status == 599;
}

/* What a reflector did with a script. */
struct outcome {
	struct kinf_strv heads;		/* the request lines, "GET /api/... HTTP/1.1" */
	struct kinf_buf deltas;		/* "Type key; ...", "(unknown)" for tombstones */
	struct kinf_reflector_stats st;
	struct run run;
};

static void outcome_release(struct outcome *o) {
	kinf_strv_release(&o->heads);
	kinf_buf_release(&o->deltas);
}

/*
 * Run a reflector for /api/v1/pods against script (responses, NULL-ended,
 * freed here) until it stops by itself.
 */
static void run_script(char **script, struct outcome *o) {
	struct kinf_strv *heads = &o->heads;
	struct kinf_buf *deltas = &o->deltas;
	struct run *run = &o->run;
	struct server s;
	struct kinf_rest_config config = {0};
	char url[64];

	memset(o, 0, sizeof(*o));
	server_start(&s, (const char *const *)script);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	config.server = url;
	struct kinf_http *http = kinf_http_new(&config, NULL, NULL);
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(NULL, true);
	struct kinf_reflector_opts opts = {
		.http = http,
		.path = "/api/v1/pods",
		.watch_timeout_s = 5,
		.on_error = on_error,
		.userdata = run,
	};
	struct kinf_reflector *r = kinf_reflector_new(&opts, fifo);
	ok(http && fifo && r && kinf_reflector_start(r) == 0, "reflector started");
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct timespec pause = { .tv_nsec = 20 * 1000000 };
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!kinf_reflector_stopped(r) && t.tv_sec - t0.tv_sec < 20);
	ok(kinf_reflector_stopped(r), "the reflector stopped at the end of the script");
	kinf_reflector_get_stats(r, &o->st);
	kinf_reflector_free(r);
	struct kinf_deltas *d;
	while (kinf_deltafifo_pop(fifo, 0, NULL, NULL, &d) == 0) {
		for (size_t i = 0; i < d->n; i++) {
			must(kinf_buf_printf(deltas, "%s%s %s%s", deltas->len ? "; " : "",
					kinf_delta_type_name(d->v[i].type), d->key,
					d->v[i].final_state_unknown ? " (unknown)" : ""));
		}
		kinf_deltas_free(d);
	}
	kinf_deltafifo_free(fifo);
	kinf_http_free(http);
	pthread_mutex_lock(&s.lock);
	for (size_t i = 0; i < s.heads.n; i++) {
		const char *eol = strstr(s.heads.v[i], "\r\n");
		must(kinf_strv_push(heads, s.heads.v[i],
				eol ? (size_t)(eol - s.heads.v[i]) : strlen(s.heads.v[i])));
	}
	pthread_mutex_unlock(&s.lock);
	server_stop(&s);
	for (size_t i = 0; script[i]; i++) {
		free(script[i]);
	}
}

/* The request line of a watch from rv, as the reflector builds it. */
static char *watch_line(const char *rv) {
	struct kinf_buf b = {0};
	must(kinf_buf_printf(&b, "GET /api/v1/pods?watch=1&allowWatchBookmarks=true&"
			"timeoutSeconds=5%s%s HTTP/1.1", rv[0] ? "&resourceVersion=" : "", rv));
	return kinf_buf_take(&b);
}

static void is_request(const struct kinf_strv *heads, size_t i, const char *want,
		const char *what) {
	is_str(i < heads->n ? heads->v[i] : NULL, want, "%s", what);
}

static void is_watch(const struct kinf_strv *heads, size_t i, const char *rv,
		const char *what) {
	char *want = watch_line(rv);
	is_request(heads, i, want, what);
	free(want);
}

static void test_list_watch_rewatch(void) {
	char *script[5] = {
		respond("200 OK", LIST("10", POD("a", "5") "," POD("b", "6"))),
		respond("200 OK", EVENT("MODIFIED", POD("a", "11")) BOOKMARK("15")),
		respond("200 OK", EVENT("DELETED", POD("b", "16")) EVENT("ADDED", POD("c", "17"))),
		NULL,
	};
	struct outcome o;

	run_script(script, &o);
	is_int(o.heads.n, 4, "a list, two watches, then the end of the script");
	is_request(&o.heads, 0, "GET /api/v1/pods?resourceVersion=0 HTTP/1.1",
			"the first list at resourceVersion 0, from the watch cache");
	is_watch(&o.heads, 1, "10", "the watch from the list's resourceVersion");
	is_watch(&o.heads, 2, "15", "a closed stream is watched again from the bookmark's "
			"resourceVersion");
	is_watch(&o.heads, 3, "17", "and again from the last event's");
	is_str(o.deltas.data, "Replaced ns/a; Updated ns/a; Replaced ns/b; Deleted ns/b; "
			"Added ns/c", "the list's items Replaced, then each event, by key");
	is_int(o.st.lists, 1, "one list");
	is_int(o.st.relists, 0, "no relist");
	is_int(o.st.watches, 3, "three watches opened");
	is_int(o.st.events, 3, "three events");
	is_int(o.st.bookmarks, 1, "one bookmark");
	is_int(o.run.last_status, 599, "stopped by the script's end");
	outcome_release(&o);
}

static void test_expired_relists(void) {
	char *script[6] = {
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("200 OK", EVENT("ERROR", STATUS(410, "Expired",
				"too old resource version: 10 (20)"))),
		respond("410 Gone", STATUS(410, "Expired", "too old resource version: 10 (20)")),
		respond("200 OK", LIST("20", POD("d", "19"))),
		NULL,
	};
	struct outcome o;

	run_script(script, &o);
	is_int(o.heads.n, 5, "list, watch, two lists, watch");
	is_request(&o.heads, 0, "GET /api/v1/pods?resourceVersion=0 HTTP/1.1", "first list");
	is_watch(&o.heads, 1, "10", "watch from 10");
	is_request(&o.heads, 2, "GET /api/v1/pods?resourceVersion=10 HTTP/1.1",
			"after the in-stream 410, a relist at the last synced resourceVersion");
	is_request(&o.heads, 3, "GET /api/v1/pods HTTP/1.1",
			"that list 410 too: relist with no resourceVersion, a consistent read");
	is_watch(&o.heads, 4, "20", "then watch from the new list's resourceVersion");
	is_str(o.deltas.data, "Replaced ns/a; Deleted ns/a (unknown); Replaced ns/d",
			"an object the relist lacks is a DeletedFinalStateUnknown tombstone");
	is_int(o.st.lists, 2, "two lists completed");
	is_int(o.st.relists, 1, "one of them a relist");
	is_int(o.st.expired, 2, "two 410s seen (the stream's and the list's)");
	is_int(o.run.errors_seen, 1, "a 410 is not an error: only the script's end is");
	outcome_release(&o);
}

static void test_watch_500_backs_off(void) {
	char *script[5] = {
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("500 Internal Server Error", STATUS(500, "InternalError", "etcd is away")),
		respond("200 OK", EVENT("MODIFIED", POD("a", "12"))),
		NULL,
	};
	struct outcome o;

	run_script(script, &o);
	is_int(o.heads.n, 4, "list, watch, watch, watch");
	is_watch(&o.heads, 1, "10", "watch from 10");
	is_watch(&o.heads, 2, "10", "after a 500, the same watch again: no relist");
	is_watch(&o.heads, 3, "12", "then from the event's resourceVersion");
	is_int(o.st.lists, 1, "the cache was kept: one list");
	ok(o.st.backoffs >= 1, "backed off before watching again (%lu)", o.st.backoffs);
	is_int(o.run.errors_seen, 2, "the 500 and the script's end reported to on_error");
	is_str(o.deltas.data, "Replaced ns/a; Updated ns/a", "deltas");
	outcome_release(&o);
}

int main(void) {
	test_list_watch_rewatch();
	test_expired_relists();
	test_watch_500_backs_off();
	return tap_done();
}
