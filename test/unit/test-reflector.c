/*
 * The reflector's state machine (src/reflector.c) against a scripted
 * HTTP server (testserver.h): which request follows which answer, with
 * which resourceVersion, and the deltas it queues. client-go's
 * tools/cache/reflector.go is the reference: list at "0" first; watch from
 * the list's resourceVersion; a closed stream is watched again from the
 * last resourceVersion a bookmark or event gave; a 410 relists at the last
 * synced resourceVersion, and a list that is 410 too at "" (a consistent
 * read); a 500 on the watch backs off and watches again without a relist;
 * the streaming list (WatchList) and its fallback to a list; resync; 429
 * with and without Retry-After; the backoff back to its first delay after
 * a healthy watch; a stream of bookmarks only; a stream closed at once; a
 * relist whose second page fails, which leaves the cache alone. Every
 * script ends with the server's 599, which on_error turns into a stop.
 * The backoff is shortened (20 ms, doubling up to 200 ms) so that the
 * scenarios take little time; its delays are read from the log.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "deltafifo.h"
#include "http.h"
#include "indexer.h"
#include "informer.h"
#include "kubeconfig.h"
#include "log.h"
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
#define LIST_CONT(rv, cont, items) \
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv "\"," \
	"\"continue\":\"" cont "\"},\"items\":[" items "]}"
#define EVENT(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
/* The bookmark that ends a streaming list's initial events. */
#define BOOKMARK_END(rv) \
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\"," \
	"\"metadata\":{\"resourceVersion\":\"" rv "\",\"annotations\":" \
	"{\"k8s.io/initial-events-end\":\"true\"}}}}\n"
#define BOOKMARK(rv) \
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\"," \
	"\"metadata\":{\"resourceVersion\":\"" rv "\"}}}\n"
#define STATUS(code, reason, message) \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\"," \
	"\"message\":\"" message "\",\"reason\":\"" reason "\",\"code\":" #code "}"

struct run {
	atomic_int errors_seen;
	int last_status;
	char first_error[512];		/* the first error's message */
};

/* Stop at the end of the script (599); go on after anything else. */
static bool on_error(int rc, const struct kinf_error *err, bool synced, void *userdata) {
	struct run *run = userdata;
	(void)rc;
	(void)synced;
	if (atomic_fetch_add(&run->errors_seen, 1) == 0) {
		snprintf(run->first_error, sizeof(run->first_error), "%s", err->message);
	}
	run->last_status = err->http_status;
	return err->http_status == 599;
}

/* What a reflector did with a script. */
struct outcome {
	struct kinf_strv heads;		/* the request lines, "GET /api/... HTTP/1.1" */
	struct kinf_buf deltas;		/* "Type key; ...", "(unknown)" for tombstones */
	struct kinf_reflector_stats st;
	struct run run;
	long waits[16];			/* the backoff delays, in ms, from the log */
	size_t n_waits;
	int retry_afters;		/* the HTTP layer's waits for a Retry-After */
	long long ms;			/* from start to stop */
};

/* The log, read for the backoff's delays (the reflector thread writes it). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct outcome *logging_to;

static void capture_log(int level, const char *msg, void *userdata) {
	(void)level;
	(void)userdata;
	const char *p = strstr(msg, "; retrying in ");
	pthread_mutex_lock(&log_lock);
	struct outcome *o = logging_to;
	if (o && p && strstr(p, " ms") && o->n_waits < sizeof(o->waits) / sizeof(o->waits[0])) {
		o->waits[o->n_waits++] = strtol(p + strlen("; retrying in "), NULL, 10);
	}
	if (o && strstr(msg, "(Retry-After, attempt ")) {
		o->retry_afters++;
	}
	pthread_mutex_unlock(&log_lock);
}

static void outcome_release(struct outcome *o) {
	kinf_strv_release(&o->heads);
	kinf_buf_release(&o->deltas);
}

static long long now_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The deltas of one pop appended to out, as outcome.deltas has them. */
static void print_deltas(struct kinf_buf *out, const struct kinf_deltas *d) {
	for (size_t i = 0; i < d->n; i++) {
		must(kinf_buf_printf(out, "%s%s %s%s", out->len ? "; " : "",
				kinf_delta_type_name(d->v[i].type), d->key,
				d->v[i].final_state_unknown ? " (unknown)" : ""));
	}
}

/* The server's request lines into o->heads; then it stops. */
static void take_heads(struct server *s, struct outcome *o) {
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->heads.n; i++) {
		const char *eol = strstr(s->heads.v[i], "\r\n");
		must(kinf_strv_push(&o->heads, s->heads.v[i],
				eol ? (size_t)(eol - s->heads.v[i]) : strlen(s->heads.v[i])));
	}
	pthread_mutex_unlock(&s->lock);
	server_stop(s);
}

/* A reflector for /api/v1/pods on the server at port, with what set adds. */
static struct kinf_reflector *reflector_for(int port, const struct kinf_reflector_opts *set,
		struct kinf_http **ret_http, struct kinf_deltafifo *fifo, struct run *run) {
	static char url[64];
	static struct kinf_rest_config config;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	config = (struct kinf_rest_config){ .server = url };
	struct kinf_reflector_opts opts = *set;
	opts.http = *ret_http = kinf_http_new(&config, NULL, NULL);
	opts.path = "/api/v1/pods";
	opts.watch_timeout_s = 5;
	opts.on_error = on_error;
	opts.userdata = run;
	if (!opts.backoff_init_ms) {
		opts.backoff_init_ms = 20;
		opts.backoff_max_ms = 200;
	}
	return kinf_reflector_new(&opts, fifo);
}

/*
 * Run a reflector for /api/v1/pods against script (responses, NULL-ended,
 * freed here), with the options set gives, until it stops by itself.
 */
static void run_script_with(char **script, const struct kinf_reflector_opts *set,
		struct outcome *o) {
	struct server s;
	struct kinf_http *http = NULL;

	memset(o, 0, sizeof(*o));
	pthread_mutex_lock(&log_lock);
	logging_to = o;
	pthread_mutex_unlock(&log_lock);
	server_start(&s, (const char *const *)script);
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(NULL, true);
	struct kinf_reflector *r = reflector_for(s.port, set, &http, fifo, &o->run);
	long long t0 = now_ms();
	ok(http && fifo && r && kinf_reflector_start(r) == 0, "reflector started");
	while (!kinf_reflector_stopped(r) && now_ms() - t0 < 20000) {
		struct timespec pause = { .tv_nsec = 10 * 1000000 };
		nanosleep(&pause, NULL);
	}
	o->ms = now_ms() - t0;
	ok(kinf_reflector_stopped(r), "the reflector stopped at the end of the script");
	kinf_reflector_get_stats(r, &o->st);
	kinf_reflector_free(r);
	struct kinf_deltas *d;
	while (kinf_deltafifo_pop(fifo, 0, NULL, NULL, &d) == 0) {
		print_deltas(&o->deltas, d);
		kinf_deltas_free(d);
	}
	kinf_deltafifo_free(fifo);
	kinf_http_free(http);
	take_heads(&s, o);
	pthread_mutex_lock(&log_lock);
	logging_to = NULL;
	pthread_mutex_unlock(&log_lock);
	for (size_t i = 0; script[i]; i++) {
		free(script[i]);
	}
}

static void run_script(char **script, struct outcome *o) {
	static const struct kinf_reflector_opts plain = {0};
	run_script_with(script, &plain, o);
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

/* A response without Content-Length: the body ends when the server closes. */
static char *respond_open(const char *body) {
	struct kinf_buf b = {0};
	must(kinf_buf_printf(&b, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n%s",
			body));
	return kinf_buf_take(&b);
}

/* A response with extra header lines (each ending in CR LF). */
static char *respond_with(const char *status, const char *headers, const char *body) {
	struct kinf_buf b = {0};
	must(kinf_buf_printf(&b, "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
			"Connection: close\r\n%sContent-Length: %zu\r\n\r\n%s",
			status, headers, strlen(body), body));
	return kinf_buf_take(&b);
}

/* DELAY ms before response (testserver.h). */
static char *delayed(long ms, char *response) {
	struct kinf_buf b = {0};
	must(kinf_buf_printf(&b, "DELAY %ld\n%s", ms, response));
	free(response);
	return kinf_buf_take(&b);
}

#define WATCH_LIST_LINE \
	"GET /api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=5&" \
	"sendInitialEvents=true&resourceVersionMatch=NotOlderThan HTTP/1.1"

/*
 * The streaming list (--watch-list, client-go's WatchList): one watch with
 * sendInitialEvents; its events up to the bookmark that ends them are the
 * list (Replaced), what follows is watched as usual.
 */
static void test_watch_list(void) {
	char *script[4] = {
		respond("200 OK", EVENT("ADDED", POD("a", "5")) BOOKMARK_END("10")
			EVENT("MODIFIED", POD("a", "11"))),
		respond("200 OK", EVENT("ADDED", POD("c", "12"))),
		NULL,
	};
	struct kinf_reflector_opts set = { .watch_list = true };
	struct outcome o;

	run_script_with(script, &set, &o);
	is_int(o.heads.n, 3, "watch-list: a streaming list, a watch, the end");
	is_request(&o.heads, 0, WATCH_LIST_LINE,
			"watch-list: sendInitialEvents, resourceVersionMatch=NotOlderThan, "
			"no resourceVersion");
	is_watch(&o.heads, 1, "11", "then a plain watch from the last event's resourceVersion");
	is_str(o.deltas.data, "Replaced ns/a; Updated ns/a; Added ns/c",
			"the initial events Replaced, the rest as they came");
	is_int(o.st.lists, 1, "the initial events count as the list");
	is_int(o.st.watch_list_fallbacks, 0, "no fallback");
	is_int(o.st.bookmarks, 1, "the bookmark that ended them");
	is_int(o.run.errors_seen, 1, "nothing but the script's end was an error");
	outcome_release(&o);
}

/*
 * A server that refuses the streaming list (422: the WatchList gate off),
 * and one that ignores it (a plain watch that ends with no bookmark to end
 * the initial events): a list instead, then watches as usual.
 */
static void test_watch_list_fallback(void) {
	char *refused[4] = {
		respond("422 Unprocessable Entity", STATUS(422, "Invalid",
			"sendInitialEvents is forbidden for watch unless the WatchList "
			"feature gate is enabled")),
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("200 OK", EVENT("MODIFIED", POD("a", "11"))),
		NULL,
	};
	struct kinf_reflector_opts set = { .watch_list = true };
	struct outcome o;

	run_script_with(refused, &set, &o);
	is_int(o.heads.n, 4, "fallback (422): watch-list, list, watch, the end");
	is_request(&o.heads, 0, WATCH_LIST_LINE, "fallback: the streaming list first");
	is_request(&o.heads, 1, "GET /api/v1/pods?resourceVersion=0 HTTP/1.1",
			"refused: a list at resourceVersion 0");
	is_watch(&o.heads, 2, "10", "then a plain watch from the list's");
	is_int(o.st.watch_list_fallbacks, 1, "one fallback counted");
	is_int(o.run.errors_seen, 1, "a refused streaming list is not an error");
	is_str(o.deltas.data, "Replaced ns/a; Updated ns/a", "the list's and the watch's deltas");
	outcome_release(&o);

	char *ignored[4] = {
		respond("200 OK", EVENT("ADDED", POD("a", "5"))),
		respond("200 OK", LIST("10", POD("a", "5"))),
		NULL,
	};
	run_script_with(ignored, &set, &o);
	is_request(&o.heads, 1, "GET /api/v1/pods?resourceVersion=0 HTTP/1.1",
			"fallback (ignored): the stream ended before the initial events did: a list");
	is_watch(&o.heads, 2, "10", "  then a watch");
	is_int(o.st.watch_list_fallbacks, 1, "  one fallback counted");
	is_str(o.deltas.data, "Replaced ns/a",
			"  what the ignored stream brought is not in the cache: the list is");
	outcome_release(&o);
}

/*
 * Resync: every period, a Sync delta for each object the indexer holds
 * that has nothing queued (client-go's resyncPeriod), while the watch
 * stays open and quiet.
 */
static void test_resync(void) {
	char *script[3] = {
		respond("200 OK", LIST("10", POD("a", "5") "," POD("b", "6"))),
		respond_open(BOOKMARK("10")),	/* held open: the server never closes it */
		NULL,
	};
	struct kinf_reflector_opts set = { .resync_ms = 50 };
	struct outcome o = {0};
	struct server s;
	struct kinf_http *http = NULL;
	struct kinf_indexer *idx = kinf_indexer_new();
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(idx, false);
	struct kinf_informer_batch batch;
	struct kinf_deltas *d;

	server_start(&s, (const char *const *)script);
	struct kinf_reflector *r = reflector_for(s.port, &set, &http, fifo, &o.run);
	ok(r && kinf_reflector_start(r) == 0, "resync: started, every 50 ms");
	/* Pop the list into the indexer, as an informer does. */
	int popped = 0;
	long long t0 = now_ms();
	while (popped < 2 && now_ms() - t0 < 5000) {
		if (kinf_informer_pop(fifo, idx, 100, &batch, &d) == 0) {
			print_deltas(&o.deltas, d);
			kinf_deltas_free(d);
			kinf_informer_batch_release(&batch);
			popped++;
		}
	}
	is_str(o.deltas.data, "Sync ns/a; Sync ns/b", "resync: the list's items (Sync: not "
			"emit_replaced)");
	/* Then, with nothing queued, each period brings a Sync per cached key. */
	kinf_buf_reset(&o.deltas);
	int syncs = 0, others = 0;
	t0 = now_ms();
	while (syncs < 4 && now_ms() - t0 < 5000) {
		if (kinf_informer_pop(fifo, idx, 100, &batch, &d) == 0) {
			for (size_t i = 0; i < d->n; i++) {
				syncs += d->v[i].type == KINF_DELTA_SYNC;
				others += d->v[i].type != KINF_DELTA_SYNC;
			}
			kinf_deltas_free(d);
			kinf_informer_batch_release(&batch);
		}
	}
	kinf_reflector_get_stats(r, &o.st);
	ok(syncs >= 4 && others == 0, "resync: Sync deltas for the cached keys, again and "
			"again (%d)", syncs);
	ok(o.st.resyncs >= 2 && o.st.lists == 1 && o.st.watches == 1,
			"resync: %lu resyncs, one list, one watch still open", o.st.resyncs);
	kinf_reflector_free(r);
	kinf_deltafifo_free(fifo);
	kinf_indexer_free(idx);
	kinf_http_free(http);
	take_heads(&s, &o);
	is_int(o.heads.n, 2, "resync: no request of its own");
	outcome_release(&o);
	for (size_t i = 0; script[i]; i++) {
		free(script[i]);
	}
}

/*
 * 429 with Retry-After is retried by the HTTP layer after the time it
 * names (client-go's rest client); 429 without it on a watch backs off
 * and watches again from the same resourceVersion, keeping the cache.
 */
static void test_429(void) {
	char *script[5] = {
		respond_with("429 Too Many Requests", "Retry-After: 1\r\n",
			STATUS(429, "TooManyRequests", "too many requests, please try again later")),
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("429 Too Many Requests",
			STATUS(429, "TooManyRequests", "too many requests")),
		respond("200 OK", EVENT("MODIFIED", POD("a", "11"))),
		NULL,
	};
	struct outcome o;

	run_script(script, &o);
	is_int(o.heads.n, 5, "429: list, list, watch, watch, the end");
	is_request(&o.heads, 0, "GET /api/v1/pods?resourceVersion=0 HTTP/1.1", "429: the list");
	is_request(&o.heads, 1, "GET /api/v1/pods?resourceVersion=0 HTTP/1.1",
			"429 with Retry-After: the same list again");
	is_int(o.retry_afters, 1, "  after the HTTP layer waited as told");
	ok(o.ms >= 900, "  a second at least (%lld ms)", o.ms);
	is_watch(&o.heads, 2, "10", "429: the watch");
	is_watch(&o.heads, 3, "10", "429 without Retry-After on a watch: the same watch again");
	is_int(o.st.lists, 1, "  no relist");
	is_int(o.st.backoffs, 1, "  after one backoff");
	is_int(o.run.errors_seen, 2, "  the watch's 429 and the script's end went to on_error");
	is_str(o.deltas.data, "Replaced ns/a; Updated ns/a", "429: deltas");
	outcome_release(&o);
}

/*
 * The backoff doubles while failures come close together, and starts over
 * from its first delay after a healthy watch that outlasted the reset
 * time (here 50 ms, doubling, reset after 1 s; the delays are jittered
 * by up to as much again). Only the healthy watch's 1.1 s must pass; the
 * failures before it have 0.9 s to spare, however loaded the machine.
 */
static void test_backoff_reset(void) {
	char *script[6] = {
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("500 Internal Server Error", STATUS(500, "InternalError", "etcd is away")),
		respond("500 Internal Server Error", STATUS(500, "InternalError", "etcd is away")),
		delayed(1100, respond("200 OK", EVENT("MODIFIED", POD("a", "11")))),
		respond("500 Internal Server Error", STATUS(500, "InternalError", "etcd is away")),
		NULL,
	};
	struct kinf_reflector_opts set = {
		.backoff_init_ms = 50, .backoff_max_ms = 1000, .backoff_reset_ms = 1000,
	};
	struct outcome o;

	run_script_with(script, &set, &o);
	is_int(o.n_waits, 3, "backoff: three delays");
	ok(o.waits[0] >= 50 && o.waits[0] <= 100, "backoff: the first within 50-100 ms (%ld)",
			o.waits[0]);
	ok(o.waits[1] >= 100 && o.waits[1] <= 200, "backoff: the next, at once, doubled: "
			"100-200 ms (%ld)", o.waits[1]);
	ok(o.waits[2] >= 50 && o.waits[2] <= 100, "backoff: after a healthy watch of 1.1 s, "
			"50-100 ms again (%ld)", o.waits[2]);
	is_watch(&o.heads, 4, "11", "backoff: each failed watch watched again, the last from "
			"the healthy one's resourceVersion");
	is_int(o.st.lists, 1, "backoff: no relist");
	outcome_release(&o);
}

/* A stream of bookmarks only: watched again from the last one, the cache untouched. */
static void test_bookmarks_only(void) {
	char *script[4] = {
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("200 OK", BOOKMARK("12") BOOKMARK("15")),
		respond("200 OK", BOOKMARK("20")),
		NULL,
	};
	struct outcome o;

	run_script(script, &o);
	is_int(o.heads.n, 4, "bookmarks only: list, two watches, the end");
	is_watch(&o.heads, 2, "15", "bookmarks only: watched again from the last bookmark");
	is_watch(&o.heads, 3, "20", "  and again");
	is_str(o.deltas.data, "Replaced ns/a", "  no delta but the list's");
	ok(o.st.bookmarks == 3 && o.st.events == 0 && o.st.lists == 1,
			"  three bookmarks, no event, one list");
	is_int(o.run.errors_seen, 1, "  not an error: a bookmark is an item (no very short watch)");
	outcome_release(&o);
}

/*
 * A watch closed at once with nothing in it is client-go's "very short
 * watch": an error; after a backoff, a relist at the last synced
 * resourceVersion rather than a watch that would spin.
 */
static void test_closed_at_once(void) {
	char *script[5] = {
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("200 OK", ""),
		respond("200 OK", LIST("10", POD("a", "5"))),
		respond("200 OK", EVENT("MODIFIED", POD("a", "11"))),
		NULL,
	};
	struct outcome o;

	run_script(script, &o);
	is_int(o.heads.n, 5, "closed at once: list, watch, list, watch, the end");
	is_watch(&o.heads, 1, "10", "closed at once: the watch");
	is_request(&o.heads, 2, "GET /api/v1/pods?resourceVersion=10 HTTP/1.1",
			"  then a relist at the last synced resourceVersion");
	is_watch(&o.heads, 3, "10", "  and a watch from it");
	is_str(o.run.first_error, "very short watch: the watch ended after less than a second "
			"and no items received", "  reported as client-go does");
	ok(o.st.relists == 1 && o.st.backoffs >= 1, "  one relist, after a backoff");
	outcome_release(&o);
}

/*
 * A relist whose second page fails (500): nothing of its first page
 * reaches the FIFO; after a backoff the whole relist again, then the
 * deletion it finds is a tombstone.
 */
static void test_relist_fails_midway(void) {
	char *script[9] = {
		respond("200 OK", LIST_CONT("10", "tok1", POD("a", "5"))),
		respond("200 OK", LIST("10", POD("b", "6"))),
		respond("200 OK", EVENT("ERROR", STATUS(410, "Expired",
				"too old resource version: 10 (20)"))),
		respond("200 OK", LIST_CONT("20", "tok2", POD("a", "5"))),
		respond("500 Internal Server Error", STATUS(500, "InternalError", "etcd is away")),
		respond("200 OK", LIST_CONT("21", "tok3", POD("a", "5"))),
		respond("200 OK", LIST("21", POD("c", "21"))),
		NULL,
	};
	struct kinf_reflector_opts set = { .page_size = 1, .page_always = true };
	struct outcome o;

	run_script_with(script, &set, &o);
	is_int(o.heads.n, 8, "relist midway: 2 pages, watch, 2 pages, 2 pages, the end");
	is_request(&o.heads, 0, "GET /api/v1/pods?limit=1&resourceVersion=0 HTTP/1.1",
			"relist midway: the first list, in pages of 1");
	is_request(&o.heads, 1, "GET /api/v1/pods?limit=1&continue=tok1 HTTP/1.1",
			"  its second page by the continue token");
	is_request(&o.heads, 3, "GET /api/v1/pods?limit=1&resourceVersion=10 HTTP/1.1",
			"  after the 410, a relist at the last synced resourceVersion");
	is_request(&o.heads, 4, "GET /api/v1/pods?limit=1&continue=tok2 HTTP/1.1",
			"  whose second page fails (500)");
	is_request(&o.heads, 5, "GET /api/v1/pods?limit=1&resourceVersion=10 HTTP/1.1",
			"  then the whole relist again, at the same resourceVersion");
	is_watch(&o.heads, 7, "21", "  and a watch from the new list's (the script's end)");
	is_str(o.deltas.data, "Replaced ns/a; Replaced ns/a; Replaced ns/b; "
			"Deleted ns/b (unknown); Replaced ns/c",
			"  the failed relist queued nothing; the one that worked Replaced, "
			"and b, gone, a tombstone");
	ok(o.st.lists == 2 && o.st.relists == 1, "  two lists completed (%lu), one a relist",
			o.st.lists);
	is_int(o.run.errors_seen, 2, "  the 500 and the script's end went to on_error");
	outcome_release(&o);
}

int main(void) {
	kinf_log_set(1, capture_log, NULL);
	test_list_watch_rewatch();
	test_expired_relists();
	test_watch_500_backs_off();
	test_watch_list();
	test_watch_list_fallback();
	test_resync();
	test_429();
	test_backoff_reset();
	test_bookmarks_only();
	test_closed_at_once();
	test_relist_fails_midway();
	return tap_done();
}
