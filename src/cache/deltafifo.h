#ifndef KINF_DELTAFIFO_H
#define KINF_DELTAFIFO_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct kinf_object;
struct kinf_indexer;

/*
 * client-go's DeltaFIFO (tools/cache/delta_fifo.go): for each key the
 * deltas oldest to newest, and a queue of keys without duplicates. Thread
 * safe; Pop blocks. knownObjects is the informer's indexer; Delete, Replace
 * and Resync read it while holding the FIFO's lock (lock order: FIFO, then
 * indexer).
 */
struct kinf_deltafifo;

enum kinf_delta_type {
	KINF_DELTA_ADDED,
	KINF_DELTA_UPDATED,
	KINF_DELTA_DELETED,
	KINF_DELTA_REPLACED,
	KINF_DELTA_SYNC,
};

/* "Added", "Updated", "Deleted", "Replaced", "Sync". */
const char *kinf_delta_type_name(enum kinf_delta_type type);

struct kinf_delta {
	enum kinf_delta_type type;
	/*
	 * The object (one reference owned by the delta). For a
	 * DeletedFinalStateUnknown tombstone it is the last state known, which
	 * may be NULL when the known object could not be found.
	 */
	struct kinf_object *obj;
	bool final_state_unknown;	/* obj is wrapped in a tombstone */
};

/* What one Pop hands out: all queued deltas of one key, oldest first. */
struct kinf_deltas {
	char *key;
	struct kinf_delta *v;
	size_t n;
};

/* Free a popped kinf_deltas: its key, array and object references. NULL ok. */
void kinf_deltas_free(struct kinf_deltas *deltas);

/*
 * A new FIFO. known may be NULL (then Delete of an unqueued key is dropped
 * and Resync does nothing); it is borrowed and must outlive the FIFO.
 * emit_replaced: Replace queues Replaced instead of Sync.
 */
struct kinf_deltafifo *kinf_deltafifo_new(struct kinf_indexer *known,
		bool emit_replaced);
/* Free the FIFO and everything still queued. No Pop may be running. NULL ok. */
void kinf_deltafifo_free(struct kinf_deltafifo *fifo);

/* Queue Added / Updated / Deleted for obj (the FIFO takes its own ref). */
KINF_MUST_CHECK int kinf_deltafifo_add(struct kinf_deltafifo *fifo, struct kinf_object *obj);
KINF_MUST_CHECK int kinf_deltafifo_update(struct kinf_deltafifo *fifo, struct kinf_object *obj);
/*
 * Queue Deleted. Dropped (returns 0) when the key is neither queued nor
 * known, as client-go does: it was deleted by a relist already.
 */
KINF_MUST_CHECK int kinf_deltafifo_delete(struct kinf_deltafifo *fifo, struct kinf_object *obj);
/*
 * Replace with a full list: Sync (or Replaced) for each listed object,
 * Deleted with a DeletedFinalStateUnknown tombstone for each queued or known
 * key that is not listed. The first call fixes the initial population.
 */
KINF_MUST_CHECK int kinf_deltafifo_replace(struct kinf_deltafifo *fifo,
		struct kinf_object *const *objs, size_t n);
/* Queue Sync for every known key that has nothing queued. */
KINF_MUST_CHECK int kinf_deltafifo_resync(struct kinf_deltafifo *fifo);

/*
 * Called by Pop with the FIFO's lock held, so the consumer can update the
 * indexer atomically with the pop (client-go's PopProcessFunc). It must not
 * call into the FIFO. deltas is borrowed for the call. Return 0 or a
 * negative KINF_E*, which Pop returns.
 */
typedef int (*kinf_pop_func)(const struct kinf_deltas *deltas,
		bool is_in_initial_list, void *userdata);

/*
 * Wait up to timeout_ms (-1: forever) for a key, remove it with all its
 * deltas and call process under the lock; then hand the deltas to the caller
 * in *ret (caller frees with kinf_deltas_free) when ret is not NULL.
 * Returns 0, -KINF_ETIMEDOUT (also at once when the first Replace was empty,
 * so that a caller waiting for the sync sees it), -KINF_ECLOSED (closed and
 * empty), or what
 * process returned. *ret is written only on 0; when process fails the
 * deltas are freed, and the key is out of the queue either way.
 */
KINF_MUST_CHECK int kinf_deltafifo_pop(struct kinf_deltafifo *fifo, int timeout_ms,
		kinf_pop_func process, void *userdata, struct kinf_deltas **ret);

/*
 * Batch the wake-ups of Pop: between batch_begin and batch_end, queued
 * deltas do not wake a waiting Pop; batch_end wakes it once if anything was
 * queued meanwhile. A producer brackets what it queues from one buffer of
 * input, never a blocking wait. Batches may nest.
 */
void kinf_deltafifo_batch_begin(struct kinf_deltafifo *fifo);
void kinf_deltafifo_batch_end(struct kinf_deltafifo *fifo);

/* Wake every Pop; after the queue drains Pop returns -KINF_ECLOSED. */
void kinf_deltafifo_close(struct kinf_deltafifo *fifo);
/* populated && every item of the first Replace has been popped. */
bool kinf_deltafifo_has_synced(struct kinf_deltafifo *fifo);
/* Number of queued keys. */
size_t kinf_deltafifo_len(struct kinf_deltafifo *fifo);

#endif
