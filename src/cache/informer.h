#ifndef KINF_INFORMER_H
#define KINF_INFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include "deltafifo.h"
#include "err.h"
#include "object.h"
#include "reflector.h"

struct kinf_buf;
struct kinf_http;
struct kinf_indexer;
struct kinf_informer_batch;
struct kinf_selector;

/*
 * client-go's sharedIndexInformer for one collection: an indexer, a
 * DeltaFIFO whose known objects are that indexer, and a source feeding the
 * FIFO, either a reflector listing and watching an API server or a recorded
 * stream (--from, replay.h); the caller pops with kinf_informer_next(),
 * which applies each key's deltas to the indexer and returns the handler
 * notifications (processDeltas).
 *
 * Threads, what each owns, and the lock order
 * -------------------------------------------
 * caller      the thread that calls new, start, next, stop, free. Owns the
 *             informer, and pops: kinf_informer_next() runs processDeltas
 *             under the FIFO's lock, writing the indexer. The typed-JSON
 *             helpers keep a scratch buffer: caller thread only. In a set
 *             (informerset.h) each member's pump thread is its caller for
 *             next(); stop() may come from another thread (it wakes next).
 * reflector   reflector.c's run(): list then watch, relist, backoff. Owns
 *             the HTTP client (struct kinf_http) from start to stop and
 *             the reflector's resourceVersion; writes the FIFO (Add,
 *             Update, Delete, Replace). Calls opts.on_retry and
 *             opts.on_list_page, and the informer's fatal-error capture
 *             (which takes the informer's lock).
 * resync      reflector.c's run_resync() when resync_ms > 0: calls
 *             kinf_deltafifo_resync() every period. Owns nothing.
 * watch decoder  a bytepipe.c thread started by a busy watch (1 MiB in):
 *             decodes the stream and writes the FIFO, in order; the
 *             reflector thread then only receives. Owns the decoder and,
 *             during a streaming initial list, its temporary store.
 * list lanes  list.c during a large list: a parser thread (the consumer
 *             of a bytepipe.c pipe) and a second
 *             lane thread with a clone of the HTTP client (a second
 *             request at once). They hand the items back to the reflector
 *             thread, which writes the FIFO; the parser thread calls
 *             opts.on_list_page for the pages it parses.
 * transport   transport.c's thread, one per HTTP client and its clones
 *             (all the informers of a context, their lanes) when their
 *             server speaks HTTP/2 or is not known yet: drives libcurl
 *             (sockets, TLS, the one HTTP/2 connection) for every request
 *             and queues each body for the thread that made the request,
 *             which consumes it in its own callbacks. Owns the libcurl
 *             multi handle and its connections. Over HTTP/1.1 there is
 *             none: each request runs in the thread that makes it.
 * replay      with a recorded stream that is not a regular file (a pipe):
 *             reads and decodes it, writes the FIFO and the replay stats,
 *             closes the FIFO at the end. A regular file is replayed by
 *             start, in the caller thread, before the first pop.
 *
 * Lock order (never the other way): the FIFO's lock, then the indexer's
 * rwlock (Pop's process, Delete, Replace and Resync read or write the
 * indexer under the FIFO's lock). The reflector's lock, the bytepipe's and
 * the lister's, the informer's own (fatal error; also held while joining
 * the replay thread, which never takes it), the auth's (auth.c) and
 * transport.c's (the transport's, each request's) are leaves: nothing
 * else is taken while one is held, and no callback
 * runs under one. Nothing in here calls out with a lock held.
 */
struct kinf_informer;

struct kinf_informer_opts {
	/*
	 * A server: the reflector lists and watches reflector.path through
	 * reflector.http (borrowed: it must outlive the informer, and nobody
	 * else may use it between start and stop), with the reflector's
	 * options as reflector.h has them; the strings are copied. Its
	 * on_error, on_list_page and userdata are the informer's own (set by
	 * kinf_informer_new): the caller's callbacks are on_retry and
	 * on_list_page below. reflector.limits bound a recorded stream's
	 * objects too.
	 */
	struct kinf_reflector_opts reflector;

	/*
	 * Or, with reflector.http NULL, a recorded stream read from
	 * replay_fd (borrowed, not closed), filtered by the borrowed
	 * selectors (NULL: none), which must outlive the informer.
	 */
	int replay_fd;
	const struct kinf_selector *labels;
	const struct kinf_selector *fields;

	bool emit_replaced;		/* Replaced deltas instead of Sync */
	long long timeout_ms;		/* next() ends this long after start; 0: never */
	bool exit_after_sync;		/* next() ends once synced and drained */

	/* The type of the objects, for the typed-JSON helpers; NULL: none. */
	const char *api_version;
	const char *kind;

	/*
	 * From the reflector thread: an error it retries (after the first
	 * sync, or one that may pass: 429, 410, 5xx, the network); and list
	 * progress, from it or the list parser thread. Both optional; they
	 * must not call into the informer.
	 */
	void (*on_retry)(int rc, const struct kinf_error *err, void *userdata);
	void (*on_list_page)(unsigned pages, size_t items, void *userdata);
	void *userdata;
};

struct kinf_informer_stats {
	struct kinf_reflector_stats source;	/* the reflector's or the replay's */
	unsigned long pops;			/* successful kinf_informer_next() */
	size_t cached;				/* objects in the indexer */
	size_t queued;				/* keys in its DeltaFIFO, not yet popped */
};

/*
 * A new informer, not started: the caller may add indexes to
 * kinf_informer_indexer() before kinf_informer_start(). Returns 0 and the
 * informer in *ret, or -KINF_ENOMEM / -KINF_EINVAL (no path) with reterr.
 */
KINF_MUST_CHECK int kinf_informer_new(const struct kinf_informer_opts *opts,
		struct kinf_informer **ret, struct kinf_error *reterr);

/* The informer's indexer (borrowed, lives as long as the informer). */
struct kinf_indexer *kinf_informer_indexer(struct kinf_informer *inf);

/*
 * Start the source: the reflector's threads, or the replay (a regular file
 * is read whole here, so what the pops show does not depend on thread
 * timing; a pipe gets a thread). Starts the timeout_ms clock. Returns 0 or
 * -KINF_ENOMEM (no thread) with reterr.
 */
KINF_MUST_CHECK int kinf_informer_start(struct kinf_informer *inf, struct kinf_error *reterr);

/*
 * Pop the next key's deltas, apply them to the indexer, and return the
 * notifications in ret_batch (release with kinf_informer_batch_release)
 * and, when ret_deltas is not NULL, the raw deltas (caller frees). Waits
 * up to wait_ms (-1: until something happens). Returns 1 with an event;
 * 0 when the informer is over (stopped, timeout_ms passed, the recorded
 * stream ended, or synced and drained with exit_after_sync);
 * -KINF_ETIMEDOUT when wait_ms passed with nothing; or another negative
 * KINF_E* with reterr: an error the reflector could not get past before
 * the first sync (403, 404, a bad selector; the source has stopped), the
 * recorded stream's decode error, or the indexer's.
 */
KINF_MUST_CHECK int kinf_informer_next(struct kinf_informer *inf, int wait_ms,
		struct kinf_informer_batch *ret_batch, struct kinf_deltas **ret_deltas,
		struct kinf_error *reterr);

/* True once the initial list (or recorded List) has been popped. */
bool kinf_informer_has_synced(struct kinf_informer *inf);

/*
 * Stop the source and wait for its threads; a next() blocked in another
 * thread returns 0 at once, and every later one returns 0. The indexer
 * stays readable. Call it from one thread at a time; free calls it too.
 */
void kinf_informer_stop(struct kinf_informer *inf);

/*
 * After stop: forget every object as a relist that finds none would
 * (client-go's DeltaFIFO.Replace with an empty list): each object the
 * indexer holds, and each key still queued, gets a Deleted delta with a
 * DeletedFinalStateUnknown tombstone, for kinf_informer_drain() to pop.
 * 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_informer_forget_all(struct kinf_informer *inf);

/*
 * After stop: pop what is still queued, without waiting, as next() does
 * (the indexer changes with each pop). 1 with an event, 0 when nothing
 * is left, or the indexer's error (-KINF_ENOMEM) with reterr.
 */
KINF_MUST_CHECK int kinf_informer_drain(struct kinf_informer *inf, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas, struct kinf_error *reterr);

/*
 * Instead of start: fill the cache from a list fetched elsewhere (kinf
 * index asks kinf serve's index path for the matching objects), as the
 * initial list of a reflector would (Replace, then every key popped into
 * the indexer, the notifications dropped). The informer has synced
 * then. 0 or -KINF_ENOMEM with reterr.
 */
KINF_MUST_CHECK int kinf_informer_load(struct kinf_informer *inf, struct kinf_object *const *objs,
		size_t n, struct kinf_error *reterr);

/* Stop (if running) and free everything. NULL is fine. */
void kinf_informer_free(struct kinf_informer *inf);

/* A copy of the counters (call after stop for final figures). */
void kinf_informer_get_stats(struct kinf_informer *inf,
		struct kinf_informer_stats *ret);

/*
 * obj with "apiVersion" and "kind" filled in from opts (list items lack
 * them): a new reference, obj's own when nothing is missing or the type is
 * unknown; NULL on out of memory.
 */
struct kinf_object *kinf_informer_typed(struct kinf_informer *inf,
		struct kinf_object *obj);

/*
 * The same bytes appended to out, without a copy of obj. Caller thread
 * only (it reuses a scratch buffer). 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_informer_append_typed(struct kinf_informer *inf,
		const struct kinf_object *obj, struct kinf_buf *out);

/*
 * The informer's processing loop (client-go controller.go processDeltas):
 * pop one key's deltas, apply them to the indexer oldest first, and turn
 * them into handler notifications. Sync, Replaced, Added and Updated become
 * an update when the key is cached, else an add; Deleted is a delete,
 * possibly of a DeletedFinalStateUnknown tombstone.
 */
enum kinf_informer_event_type {
	KINF_INFORMER_ADD,
	KINF_INFORMER_UPDATE,
	KINF_INFORMER_DELETE,
};

struct kinf_informer_event {
	enum kinf_informer_event_type type;
	char *key;
	struct kinf_object *obj;	/* new state; for a delete the last known, may be NULL */
	struct kinf_object *old;	/* updates only */
	bool initial;			/* isInInitialList */
	bool final_state_unknown;	/* delete of a tombstone */
	/*
	 * An update that did not change the resourceVersion (a resync, or a
	 * relist's Sync or Replaced delta for an unchanged object): client-go
	 * delivers it only to listeners that are syncing, which every one is
	 * until a resync tick's shouldResync says it is not due.
	 */
	bool is_sync;
	enum kinf_delta_type delta_type;
};

struct kinf_informer_batch {
	struct kinf_informer_event *v;
	size_t n;
	bool in_initial_list;	/* the pop was part of the initial population */
};

void kinf_informer_batch_release(struct kinf_informer_batch *batch);

/*
 * Pop one key (waiting up to timeout_ms, -1 forever), apply it to idx under
 * the FIFO's lock, and return the notifications in ret_batch and, when
 * ret_deltas is not NULL, the raw deltas (caller frees). Returns 0,
 * -KINF_ETIMEDOUT, -KINF_ECLOSED or an indexer error.
 */
KINF_MUST_CHECK int kinf_informer_pop(struct kinf_deltafifo *fifo, struct kinf_indexer *idx,
		int timeout_ms, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas);

#endif
