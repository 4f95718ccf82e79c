/*
 * Unit tests for the byte pipe (src/bytepipe.c): bytes arrive in order and
 * whole however they are cut, with a consumer slower and faster than the
 * writer, across block boundaries and with the writer held back by
 * max_ahead; a failing consumer stops the stream, is told once, and its code
 * and message come back from every later write and from finish; finish
 * without drain drops what is queued; marks come in the stream's order,
 * and whole_blocks hands over full blocks or what a mark or the end cuts.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "bytepipe.h"
#include "tap.h"

struct sink {
	struct kinf_buf got;
	unsigned calls;
	long delay_ns;		/* per call: a slow consumer */
	size_t fail_after;	/* fail once this many bytes came; 0 never */
	atomic_int failed_told;
};

static void nap(long ns) {
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
}

static int consume(const char *data, size_t len, void *userdata, struct kinf_error *err) {
	struct sink *s = userdata;
	s->calls++;
	if (s->delay_ns) {
		nap(s->delay_ns);
	}
	if (kinf_buf_append(&s->got, data, len) < 0) {
		return kinf_error_set(err, KINF_ENOMEM, "out of memory");
	}
	if (s->fail_after && s->got.len >= s->fail_after) {
		return kinf_error_set(err, KINF_EJSON, "bad byte at %zu", s->fail_after);
	}
	return 0;
}

static void on_fail(void *userdata) {
	struct sink *s = userdata;
	atomic_fetch_add(&s->failed_told, 1);
}

/* A stream of n bytes that shows any reordering or loss. */
static char *pattern(size_t n) {
	char *p = malloc(n);
	unsigned x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (char)(x >> 16);
	}
	return p;
}

/* Write data in random pieces of 1..max_piece bytes. */
static int write_pieces(struct kinf_bytepipe *p, const char *data, size_t n,
		size_t max_piece, unsigned seed) {
	size_t off = 0;
	while (off < n) {
		size_t piece = 1 + (size_t)rand_r(&seed) % max_piece;
		if (piece > n - off) {
			piece = n - off;
		}
		int rc = kinf_bytepipe_write(p, data + off, piece);
		if (rc < 0) {
			return rc;
		}
		off += piece;
	}
	return 0;
}

static void test_in_order(const char *what, size_t n, size_t max_piece,
		long delay_ns, size_t max_ahead) {
	struct sink s = { .delay_ns = delay_ns };
	struct kinf_bytepipe_opts opts = {
		.consume = consume, .userdata = &s, .on_fail = on_fail, .max_ahead = max_ahead,
	};
	char *data = pattern(n);
	struct kinf_bytepipe *p = kinf_bytepipe_start(&opts);
	ok(p != NULL, "%s: started", what);
	int wrc = write_pieces(p, data, n, max_piece, 7);
	struct kinf_error err = {0};
	int rc = kinf_bytepipe_finish(p, true, &err);
	is_int(wrc, 0, "%s: every write taken", what);
	is_int(rc, 0, "%s: finish reports no failure", what);
	is_int(s.got.len, n, "%s: every byte consumed", what);
	ok(s.got.len == n && memcmp(s.got.data, data, n) == 0, "%s: in order, unchanged", what);
	is_int(atomic_load(&s.failed_told), 0, "%s: on_fail not called", what);
	kinf_buf_release(&s.got);
	free(data);
}

static void test_failure(void) {
	size_t n = 3 << 20;
	struct sink s = { .fail_after = 1 << 20 };
	struct kinf_bytepipe_opts opts = { .consume = consume, .userdata = &s, .on_fail = on_fail };
	char *data = pattern(n);
	struct kinf_bytepipe *p = kinf_bytepipe_start(&opts);
	int wrc = write_pieces(p, data, n, 16 << 10, 3);
	/* The writer may have finished before the consumer got there. */
	while (kinf_bytepipe_failed(p) == 0) {
		nap(100000);
	}
	is_int(kinf_bytepipe_failed(p), -KINF_EJSON, "failure: seen by the receiver's poll");
	is_int(kinf_bytepipe_write(p, "x", 1), -KINF_EJSON, "failure: a later write returns the code");
	ok(wrc == 0 || wrc == -KINF_EJSON, "failure: writes return 0 or the code (%d)", wrc);
	struct kinf_error err = {0};
	int rc = kinf_bytepipe_finish(p, true, &err);
	is_int(rc, -KINF_EJSON, "failure: finish returns the consumer's code");
	is_str(err.message, "bad byte at 1048576", "failure: and its message");
	ok(s.got.len >= s.fail_after && s.got.len < n, "failure: nothing consumed after (%zu bytes)",
			s.got.len);
	is_int(atomic_load(&s.failed_told), 1, "failure: on_fail called once");
	kinf_buf_release(&s.got);
	free(data);
}

static void test_drop(void) {
	size_t n = 4 << 20;
	struct sink s = { .delay_ns = 20000000 };	/* 20 ms a call: far behind */
	struct kinf_bytepipe_opts opts = { .consume = consume, .userdata = &s };
	char *data = pattern(n);
	struct kinf_bytepipe *p = kinf_bytepipe_start(&opts);
	int wrc = write_pieces(p, data, n, 256 << 10, 5);
	int rc = kinf_bytepipe_finish(p, false, NULL);
	is_int(wrc, 0, "drop: writes taken (within max_ahead)");
	is_int(rc, 0, "drop: no failure");
	ok(s.got.len < n, "drop: queued bytes not consumed (%zu of %zu)", s.got.len, n);
	ok(s.got.len == 0 || memcmp(s.got.data, data, s.got.len) == 0, "drop: what was consumed is in order");
	kinf_buf_release(&s.got);
	free(data);
}

/*
 * Marks: the stream as the consumer sees it, "<mark>" between the bytes,
 * and the size of each run it was given (whole_blocks: 256 KiB runs, or
 * the bytes before a mark or the end).
 */
struct marked {
	struct kinf_buf seen;
	size_t runs, partial_runs;	/* runs of less than a block */
	size_t fail_at_mark;		/* fail at this mark (1-based); 0 never */
	size_t marks;
};

static int marked_bytes(const char *data, size_t len, void *userdata, struct kinf_error *err) {
	struct marked *m = userdata;
	(void)err;
	m->runs++;
	if (len < ((size_t)256 << 10)) {
		m->partial_runs++;
	}
	return kinf_buf_append(&m->seen, data, len) < 0 ? -KINF_ENOMEM : 0;
}

static int marked_mark(const char *data, size_t len, void *userdata, struct kinf_error *err) {
	struct marked *m = userdata;
	m->marks++;
	must(kinf_buf_printf(&m->seen, "<%.*s>", (int)len, data));
	if (m->fail_at_mark == m->marks) {
		return kinf_error_set(err, KINF_EJSON, "mark %zu refused", m->marks);
	}
	return 0;
}

static void test_marks(void) {
	struct marked m = {0};
	struct kinf_bytepipe_opts opts = {
		.consume = marked_bytes, .mark = marked_mark, .userdata = &m,
		.whole_blocks = true,
	};
	size_t n = (600 << 10) + 7;
	char *data = pattern(n);
	struct kinf_buf want = {0};

	/* Three "pages": 600 KiB + 7 in pieces, an empty one, then 10 bytes. */
	struct kinf_bytepipe *p = kinf_bytepipe_start(&opts);
	int wrc = write_pieces(p, data, n, 16 << 10, 11);
	wrc |= kinf_bytepipe_mark(p, "end 1", 5);
	wrc |= kinf_bytepipe_mark(p, "", 0);
	wrc |= kinf_bytepipe_write(p, "0123456789", 10);
	wrc |= kinf_bytepipe_mark(p, "end 3", 5);
	int rc = kinf_bytepipe_finish(p, true, NULL);
	must(kinf_buf_append(&want, data, n));
	must(kinf_buf_append_str(&want, "<end 1><>0123456789<end 3>"));
	is_int(wrc | rc, 0, "marks: written and drained");
	ok(m.seen.len == want.len && memcmp(m.seen.data, want.data, want.len) == 0,
			"marks: each after every byte before it and before every byte after it");
	is_int(m.runs, 4, "whole blocks: two full blocks, the rest before each mark");
	is_int(m.partial_runs, 2, "whole blocks: only runs cut by a mark are short");
	kinf_buf_release(&m.seen);

	/* A mark the consumer refuses fails the pipe as a run of bytes would. */
	memset(&m, 0, sizeof(m));
	m.fail_at_mark = 1;
	opts.on_fail = NULL;
	p = kinf_bytepipe_start(&opts);
	must(kinf_bytepipe_write(p, "abc", 3));
	must(kinf_bytepipe_mark(p, "x", 1));
	while (kinf_bytepipe_failed(p) == 0) {
		nap(100000);
	}
	is_int(kinf_bytepipe_mark(p, "y", 1), -KINF_EJSON, "a refused mark: later marks return the code");
	is_int(kinf_bytepipe_write(p, "d", 1), -KINF_EJSON, "and later writes");
	struct kinf_error err = {0};
	rc = kinf_bytepipe_finish(p, true, &err);
	is_int(rc, -KINF_EJSON, "and finish");
	is_str(err.message, "mark 1 refused", "with the consumer's message");
	is_str(m.seen.data, "abc<x>", "nothing after the refused mark");
	kinf_buf_release(&m.seen);
	kinf_buf_release(&want);
	free(data);
}

int main(void) {
	test_in_order("small pieces, fast consumer", 1 << 20, 100, 0, 0);
	test_in_order("pieces across blocks", 5 << 20, 300 << 10, 0, 0);
	test_in_order("slow consumer, writer held back", 2 << 20, 16 << 10, 200000, 64 << 10);
	test_in_order("one byte at a time", 4096, 1, 0, 0);
	test_failure();
	test_drop();
	test_marks();
	return tap_done();
}
