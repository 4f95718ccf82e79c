/*
 * Unit tests for the informer's lifecycle (src/informer.c) over recorded
 * streams, without a network: new, start, next, stop, free; sync
 * detection with exit_after_sync; the deadline (timeout_ms); stop from
 * another thread while next() waits on a pipe that stays open; a decode
 * error at the end of a stream; typed JSON; forgetting every object on
 * leave (tombstones) and a cache loaded from a list.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "indexer.h"
#include "informer.h"
#include "object.h"
#include "tap.h"

#define LIST \
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"10\"}," \
	"\"items\":[" \
	"{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"5\"}}," \
	"{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"resourceVersion\":\"6\"}}]}\n"
#define EVENTS \
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"," \
	"\"resourceVersion\":\"11\"}}}\n" \
	"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\"," \
	"\"resourceVersion\":\"12\"}}}\n" \
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"," \
	"\"resourceVersion\":\"13\"}}}\n"

/* A regular file holding text, opened for reading (unlinked already). */
static int file_with(const char *text) {
	char path[] = "/tmp/test-informer-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		abort();
	}
	unlink(path);
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) {
		abort();
	}
	return fd;
}

static const char *type_name(enum kinf_informer_event_type t) {
	return t == KINF_INFORMER_ADD ? "add" : t == KINF_INFORMER_UPDATE ? "update" : "delete";
}

/* Pop everything until next() says over; each event as "type key", "; "-joined. */
static int drain(struct kinf_informer *inf, int wait_ms, struct kinf_buf *out,
		struct kinf_error *err) {
	for (;;) {
		struct kinf_informer_batch batch;
		int rc = kinf_informer_next(inf, wait_ms, &batch, NULL, err);
		if (rc <= 0) {
			return rc;
		}
		for (size_t i = 0; i < batch.n; i++) {
			must(kinf_buf_printf(out, "%s%s %s%s", out->len ? "; " : "",
					type_name(batch.v[i].type), batch.v[i].key,
					batch.v[i].initial ? " (initial)" : ""));
		}
		kinf_informer_batch_release(&batch);
	}
}

static void test_file_lifecycle(void) {
	struct kinf_informer_opts o = { .replay_fd = file_with(LIST EVENTS) };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && inf, "new over a recorded file");
	ok(!kinf_informer_has_synced(inf), "not synced before start");
	ok(kinf_informer_start(inf, &err) == 0, "start");
	is_int(drain(inf, 1000, &got, &err), 0, "next ends at the end of the stream");
	/* One pop per key, its deltas oldest first. */
	is_str(got.data, "add ns/a (initial); update ns/a; add ns/b (initial); "
			"delete ns/b; add ns/c", "events by key in order, initial list marked");
	ok(kinf_informer_has_synced(inf), "synced after the list was popped");
	is_int(kinf_indexer_len(kinf_informer_indexer(inf)), 2, "indexer holds a and c");
	struct kinf_informer_stats st;
	kinf_informer_get_stats(inf, &st);
	is_int(st.pops, 3, "three pops (keys)");
	is_int(st.source.lists, 1, "one list replayed");
	is_int(st.source.events, 3, "three events replayed");
	kinf_informer_stop(inf);
	struct kinf_informer_batch batch;
	is_int(kinf_informer_next(inf, 0, &batch, NULL, &err), 0, "next after stop: over");
	kinf_informer_free(inf);
	kinf_buf_release(&got);
	close(o.replay_fd);
}

struct stats_reader {
	struct kinf_informer *inf;
	atomic_bool stop;
	atomic_ulong reads;
	unsigned long last, last_events;
	bool monotonic;
};

static void *read_stats(void *arg) {
	struct stats_reader *sr = arg;
	while (!atomic_load(&sr->stop)) {
		struct kinf_informer_stats st;
		kinf_informer_get_stats(sr->inf, &st);
		sr->monotonic = sr->monotonic && st.pops >= sr->last &&
			st.source.events >= sr->last_events;
		sr->last = st.pops;
		sr->last_events = st.source.events;
		atomic_fetch_add(&sr->reads, 1);
	}
	return NULL;
}

/*
 * Stats read from another thread while next() pops and the replay thread
 * counts, as serve's /metrics reads them on its loop thread: no data race
 * (ThreadSanitizer reports one on a plain counter: meson setup
 * -Db_sanitize=thread).
 */
static void test_stats_from_another_thread(void) {
	struct kinf_informer_opts o = { .replay_fd = file_with(LIST EVENTS) };
	struct stats_reader sr = { .monotonic = true };
	struct kinf_error err = {0};
	struct kinf_buf got = {0};
	pthread_t th;

	ok(kinf_informer_new(&o, &sr.inf, &err) == 0 && kinf_informer_start(sr.inf, &err) == 0,
			"stats: new and start");
	atomic_init(&sr.stop, false);
	atomic_init(&sr.reads, 0);
	pthread_create(&th, NULL, read_stats, &sr);
	while (atomic_load(&sr.reads) == 0) {
		sched_yield();
	}
	is_int(drain(sr.inf, 1000, &got, &err), 0, "popped while another thread reads the stats");
	atomic_store(&sr.stop, true);
	pthread_join(th, NULL);
	struct kinf_informer_stats st;
	kinf_informer_get_stats(sr.inf, &st);
	ok(sr.monotonic && st.pops == 3, "the reader saw the pops and events grow (%lu reads)",
			atomic_load(&sr.reads));
	kinf_informer_free(sr.inf);
	kinf_buf_release(&got);
	close(o.replay_fd);
}

static void test_exit_after_sync(void) {
	struct kinf_informer_opts o = {
		.replay_fd = file_with(LIST EVENTS),
		.exit_after_sync = true,
	};
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"exit_after_sync: new and start");
	/*
	 * The whole file is queued before the first pop: the FIFO is never
	 * drained while events wait, so exit_after_sync ends only at the end.
	 * Sync is reached after the two initial keys.
	 */
	struct kinf_informer_batch batch;
	int n = 0;
	while (kinf_informer_next(inf, 1000, &batch, NULL, &err) == 1) {
		n++;
		if (n == 1) {
			ok(!kinf_informer_has_synced(inf), "not synced after one of two initial keys");
		}
		if (n == 2) {
			ok(kinf_informer_has_synced(inf), "synced after both initial keys");
		}
		kinf_informer_batch_release(&batch);
	}
	ok(n >= 2, "popped the initial list (%d pops)", n);
	kinf_informer_free(inf);
	kinf_buf_release(&got);
	close(o.replay_fd);
}

/* A pipe that stays open: the writer sends text and keeps its end. */
struct pipe_src {
	int rd, wr;
};

static void pipe_with(struct pipe_src *p, const char *text) {
	int fds[2];
	if (pipe(fds) != 0) {
		abort();
	}
	p->rd = fds[0];
	p->wr = fds[1];
	size_t len = strlen(text);
	if (write(p->wr, text, len) != (ssize_t)len) {
		abort();
	}
}

static void test_exit_after_sync_pipe(void) {
	struct pipe_src p;
	pipe_with(&p, LIST);
	struct kinf_informer_opts o = { .replay_fd = p.rd, .exit_after_sync = true };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"pipe: new and start (replay thread)");
	long long t0 = kinf_clock_now_ms();
	is_int(drain(inf, 1000, &got, &err), 0, "exit_after_sync ends with the pipe still open");
	ok(kinf_clock_now_ms() - t0 < 3000, "and at once (%lld ms)", kinf_clock_now_ms() - t0);
	is_str(got.data, "add ns/a (initial); add ns/b (initial)", "the initial list only");
	ok(kinf_informer_has_synced(inf), "synced");
	kinf_informer_free(inf);	/* the replay thread polls and stops */
	ok(1, "free with the pipe open returns");
	kinf_buf_release(&got);
	close(p.wr);
	close(p.rd);
}

/*
 * An empty initial list wakes no Pop: a next() waiting without a limit
 * must still see the sync and end.
 */
static void test_empty_list_sync(void) {
	struct pipe_src p;
	pipe_with(&p, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":"
			"{\"resourceVersion\":\"1\"},\"items\":[]}\n");
	struct kinf_informer_opts o = { .replay_fd = p.rd, .exit_after_sync = true };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"empty list: new and start");
	long long t0 = kinf_clock_now_ms();
	is_int(drain(inf, -1, &got, &err), 0, "next(-1) ends once the empty list synced");
	ok(kinf_clock_now_ms() - t0 < 2000, "soon (%lld ms)", kinf_clock_now_ms() - t0);
	ok(got.len == 0, "no events");
	kinf_informer_free(inf);
	kinf_buf_release(&got);
	close(p.wr);
	close(p.rd);
}

static void test_deadline(void) {
	struct pipe_src p;
	pipe_with(&p, LIST);
	struct kinf_informer_opts o = { .replay_fd = p.rd, .timeout_ms = 300 };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"deadline: new and start");
	long long t0 = kinf_clock_now_ms();
	/* wait_ms -1: only the deadline can end the wait once the list is popped. */
	int rc;
	struct kinf_informer_batch batch;
	while ((rc = kinf_informer_next(inf, -1, &batch, NULL, &err)) == 1) {
		kinf_informer_batch_release(&batch);
	}
	long long took = kinf_clock_now_ms() - t0;
	is_int(rc, 0, "next ends at the deadline");
	ok(took >= 250 && took < 2000, "after about 300 ms (%lld ms)", took);
	is_int(kinf_informer_next(inf, -1, &batch, NULL, &err), 0, "and stays over");
	kinf_informer_free(inf);
	kinf_buf_release(&got);
	close(p.wr);
	close(p.rd);
}

static void test_wait_timeout(void) {
	struct pipe_src p;
	pipe_with(&p, "");
	struct kinf_informer_opts o = { .replay_fd = p.rd };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_informer_batch batch;

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"wait: new and start");
	is_int(kinf_informer_next(inf, 50, &batch, NULL, &err), -KINF_ETIMEDOUT,
			"nothing within wait_ms: -KINF_ETIMEDOUT");
	/* Data written later arrives. */
	const char *ev = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\","
		"\"namespace\":\"ns\",\"resourceVersion\":\"1\"}}}\n";
	ok(write(p.wr, ev, strlen(ev)) == (ssize_t)strlen(ev), "write an event");
	int rc = kinf_informer_next(inf, 5000, &batch, NULL, &err);
	is_int(rc, 1, "the event arrives");
	if (rc == 1) {
		is_str(batch.v[0].key, "ns/x", "its key");
		kinf_informer_batch_release(&batch);
	}
	kinf_informer_free(inf);
	close(p.wr);
	close(p.rd);
}

struct stopper {
	struct kinf_informer *inf;
	int delay_ms;
};

static void *stop_later(void *userdata) {
	struct stopper *s = userdata;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = s->delay_ms * 1000000L };
	nanosleep(&ts, NULL);
	kinf_informer_stop(s->inf);
	return NULL;
}

static void test_stop_while_blocked(void) {
	struct pipe_src p;
	pipe_with(&p, LIST);
	struct kinf_informer_opts o = { .replay_fd = p.rd };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"stop: new and start");
	struct stopper s = { .inf = inf, .delay_ms = 200 };
	pthread_t t;
	pthread_create(&t, NULL, stop_later, &s);
	long long t0 = kinf_clock_now_ms();
	/* Blocks forever (wait -1, no deadline, pipe open) until stopped. */
	int rc = drain(inf, -1, &got, &err);
	long long took = kinf_clock_now_ms() - t0;
	pthread_join(t, NULL);
	is_int(rc, 0, "a blocked next returns 0 when another thread stops");
	ok(took >= 150 && took < 3000, "soon after the stop (%lld ms)", took);
	is_str(got.data, "add ns/a (initial); add ns/b (initial)", "what came before");
	is_int(kinf_indexer_len(kinf_informer_indexer(inf)), 2, "indexer still readable");
	kinf_informer_free(inf);
	kinf_buf_release(&got);
	close(p.wr);
	close(p.rd);
}

static void test_decode_error(void) {
	struct kinf_informer_opts o = {
		.replay_fd = file_with(LIST "{\"type\":\"ADDED\",\"object\":{\"metadata\":"),
	};
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"truncated stream: new and start");
	int rc = drain(inf, 1000, &got, &err);
	is_int(rc, -KINF_EJSON, "the decode error comes after the events before it");
	is_str(got.data, "add ns/a (initial); add ns/b (initial)", "the list was delivered");
	ok(strstr(err.message, "truncated") != NULL, "message: %s", err.message);
	kinf_informer_free(inf);
	kinf_buf_release(&got);
	close(o.replay_fd);
}

static void test_typed(void) {
	struct kinf_informer_opts o = {
		.replay_fd = file_with(LIST),
		.api_version = "v1",
		.kind = "Pod",
	};
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_informer_batch batch;

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"typed: new and start");
	if (kinf_informer_next(inf, 1000, &batch, NULL, &err) == 1) {
		struct kinf_buf b = {0};
		must(kinf_informer_append_typed(inf, batch.v[0].obj, &b));
		is_str(b.data, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
				"\"namespace\":\"ns\",\"resourceVersion\":\"5\"}}",
				"append_typed inserts apiVersion and kind");
		struct kinf_object *t = kinf_informer_typed(inf, batch.v[0].obj);
		size_t len;
		const char *json = kinf_object_json(t, &len);
		ok(len == b.len && memcmp(json, b.data, len) == 0, "typed gives the same bytes");
		kinf_object_unref(t);
		kinf_buf_release(&b);
		kinf_informer_batch_release(&batch);
	} else {
		ok(0, "no event");
	}
	kinf_informer_free(inf);
	close(o.replay_fd);
}

static void test_bad_opts(void) {
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_informer_opts o = { .reflector.http = (struct kinf_http *)&err };
	is_int(kinf_informer_new(&o, &inf, &err), -KINF_EINVAL, "a server without a path");
	ok(inf == NULL, "no informer");
	kinf_informer_free(NULL);
	ok(1, "free(NULL)");
}

/*
 * Forgetting on leave (a namespace of -A --accessible went away): after
 * stop, every object cached and every key still queued becomes a
 * DeletedFinalStateUnknown delete, as a relist that found nothing would
 * make it; the indexer ends empty.
 */
static void test_forget_all(void) {
	struct kinf_informer_opts o = { .replay_fd = file_with(LIST) };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_informer_batch batch;
	struct kinf_deltas *d = NULL;
	struct kinf_buf got = {0};

	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_start(inf, &err) == 0,
			"forget: new and start");
	ok(kinf_informer_next(inf, 1000, &batch, NULL, &err) == 1 && batch.n == 1,
			"one of the two listed objects popped, one still queued");
	kinf_informer_batch_release(&batch);
	kinf_informer_stop(inf);
	is_int(kinf_informer_forget_all(inf), 0, "stopped, then forget_all");
	int rc;
	while ((rc = kinf_informer_drain(inf, &batch, &d, &err)) == 1) {
		for (size_t i = 0; i < batch.n; i++) {
			must(kinf_buf_printf(&got, "%s%s %s%s", got.len ? "; " : "",
					type_name(batch.v[i].type), batch.v[i].key,
					batch.v[i].final_state_unknown ? " (unknown)" : ""));
		}
		ok(d && d->n >= 1 && d->v[d->n - 1].type == KINF_DELTA_DELETED &&
				d->v[d->n - 1].final_state_unknown, "  %s: its last delta a tombstone",
				d ? d->key : "?");
		kinf_informer_batch_release(&batch);
		kinf_deltas_free(d);
	}
	is_int(rc, 0, "drained");
	is_str(got.data, "add ns/b; delete ns/b (unknown); delete ns/a (unknown)",
			"the queued one added then deleted, then the cached one deleted, both "
			"of unknown final state (Replace's order)");
	is_int(kinf_indexer_len(kinf_informer_indexer(inf)), 0, "the indexer is empty");
	ok(kinf_informer_drain(inf, &batch, NULL, &err) == 0, "nothing more");
	kinf_informer_free(inf);
	kinf_buf_release(&got);
	close(o.replay_fd);
}

/* A cache filled from a list fetched elsewhere (kinf index from kinf serve). */
static void test_load(void) {
	struct kinf_informer_opts o = { .replay_fd = -1 };
	struct kinf_informer *inf = NULL;
	struct kinf_error err = {0};
	struct kinf_object *objs[2] = {0};
	const char *json[2] = {
		"{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"5\"}}",
		"{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"resourceVersion\":\"6\"}}",
	};
	for (int i = 0; i < 2; i++) {
		must(kinf_object_parse(json[i], strlen(json[i]), NULL, &objs[i], NULL));
	}
	ok(kinf_informer_new(&o, &inf, &err) == 0 && !kinf_informer_has_synced(inf),
			"load: a new informer, not synced");
	is_int(kinf_informer_load(inf, objs, 2, &err), 0, "load two objects");
	struct kinf_object *b = kinf_indexer_get(kinf_informer_indexer(inf), "ns/b");
	ok(kinf_indexer_len(kinf_informer_indexer(inf)) == 2 && b, "both in the indexer");
	ok(kinf_informer_has_synced(inf), "synced");
	kinf_object_unref(b);
	kinf_informer_free(inf);
	ok(kinf_informer_new(&o, &inf, &err) == 0 && kinf_informer_load(inf, NULL, 0, &err) == 0 &&
			kinf_informer_has_synced(inf), "an empty list: synced, empty");
	kinf_informer_free(inf);
	kinf_object_unref(objs[0]);
	kinf_object_unref(objs[1]);
}

int main(void) {
	test_file_lifecycle();
	test_exit_after_sync();
	test_stats_from_another_thread();
	test_exit_after_sync_pipe();
	test_empty_list_sync();
	test_deadline();
	test_wait_timeout();
	test_stop_while_blocked();
	test_decode_error();
	test_typed();
	test_bad_opts();
	test_forget_all();
	test_load();
	return tap_done();
}
