#ifndef KINF_BYTEPIPE_H
#define KINF_BYTEPIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/*
 * A byte stream handed from the thread that receives it to a thread of its
 * own that consumes it, in order: the receiver's writes return as soon as
 * the bytes are copied, so receiving (the socket, TLS) and consuming (the
 * watch decoder) run on two cores instead of taking turns on one.
 *
 * The consumer is called with each run of new bytes, as soon as there is
 * one: a piece of a stream that trickles is not held back for a full
 * block. It may be called with pieces split anywhere.
 *
 * Once the consumer fails (returns < 0) it is not called again, every
 * later write returns its code and on_fail (if set) is called once from
 * the consumer's thread, so the receiver can stop its transfer.
 *
 * A stream may carry marks (kinf_bytepipe_mark: a list's page ends): a
 * mark reaches opts.mark once every byte written before it was consumed,
 * and before any byte written after it. With whole_blocks, the consumer
 * is given whole blocks only (BLOCK_BYTES, or the bytes before a mark or
 * the end), for a consumer that parses what it is given in place.
 */

struct kinf_bytepipe;

/* The size of the pipe's blocks (a whole-block consumer's runs). */
#define KINF_BYTEPIPE_BLOCK_BYTES ((size_t)256 << 10)

/* Consume len bytes (len > 0): 0, or < 0 with err filled to stop. */
typedef int (*kinf_bytepipe_consume_func)(const char *data, size_t len,
		void *userdata, struct kinf_error *err);

struct kinf_bytepipe_opts {
	kinf_bytepipe_consume_func consume;
	void *userdata;
	void (*on_fail)(void *userdata);	/* optional: the consumer failed */
	size_t max_ahead;	/* bytes queued before a write waits; 0: 8 MiB */
	/* Optional: a mark's bytes, in the stream's order; fails as consume. */
	kinf_bytepipe_consume_func mark;
	bool whole_blocks;	/* consume whole blocks only (see above) */
	/*
	 * Consumed blocks kept for reuse rather than freed; 0: 2. A stream
	 * that runs far ahead for long (a large list) keeps its lead's worth
	 * (max_ahead / KINF_BYTEPIPE_BLOCK_BYTES): fresh blocks cost page
	 * faults, and a watch that went quiet should give its memory back.
	 */
	unsigned max_spare;
};

/* Start the consumer's thread: NULL when memory or a thread is short. */
struct kinf_bytepipe *kinf_bytepipe_start(const struct kinf_bytepipe_opts *opts);

/*
 * Queue a copy of len bytes, waiting while max_ahead bytes are queued.
 * 0, or the consumer's failure code (nothing more is consumed), or
 * -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_bytepipe_write(struct kinf_bytepipe *p, const char *data, size_t len);

/*
 * End the stream: with drain, wait until the consumer has taken every byte
 * written (a stream that ended, or broke after what came); without, drop
 * what it has not started on (the receiver was stopped). Joins the thread
 * and frees p. Returns 0 or the consumer's failure code, its message in
 * err.
 */
KINF_MUST_CHECK int kinf_bytepipe_finish(struct kinf_bytepipe *p, bool drain, struct kinf_error *err);

/*
 * Queue a mark of len bytes (copied; len may be 0), for opts.mark. 0, the
 * consumer's failure code, or -KINF_ENOMEM. Never waits for room.
 */
KINF_MUST_CHECK int kinf_bytepipe_mark(struct kinf_bytepipe *p, const char *data, size_t len);

/* The consumer's failure code, or 0: for a receiver polling between reads. */
KINF_MUST_CHECK int kinf_bytepipe_failed(struct kinf_bytepipe *p);

/* Bytes the consumer has been given so far (for tests and logs). */
size_t kinf_bytepipe_consumed(struct kinf_bytepipe *p);

#endif
