#ifndef KINF_INFORMER_H
#define KINF_INFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include "deltafifo.h"
#include "err.h"

struct kinf_indexer;
struct kinf_object;

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
int kinf_informer_pop(struct kinf_deltafifo *fifo, struct kinf_indexer *idx,
		int timeout_ms, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas);

#endif
