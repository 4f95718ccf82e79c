#ifndef KINF_INFORMERSET_H
#define KINF_INFORMERSET_H

#include <stdbool.h>
#include <stddef.h>

#include "deltafifo.h"
#include "err.h"
#include "informer.h"

/*
 * A set of informers (client-go's SharedInformerFactory, as a program uses
 * it: one informer per resource and namespace, and per cluster), their
 * events merged into one stream in the order they were popped.
 *
 * Threads: each member gets a pump thread that calls kinf_informer_next()
 * on it (the informer's "caller" thread in informer.h's map: it applies the
 * deltas to that member's indexer) and hands the result over through a slot
 * of its own; it pops again only once the caller took it and called
 * kinf_informerset_next() again, so while the caller handles an event its
 * informer's indexer and sync state are those of that event (as with one
 * informer), and a slow reader holds the deltas back in the members'
 * DeltaFIFOs (where they coalesce), not in an unbounded queue. The caller
 * takes the filled slots oldest first. The set's lock guards the slots and
 * the arrival queue; it is a leaf (no informer call is made under it). A
 * set of one member has no pump: next() pops in the caller's thread,
 * unless it may grow (kinf_informerset_allow_growth): then members are
 * added, started and removed after start, from the caller's thread (the
 * arrays and the ring change under the set's lock).
 */
struct kinf_informerset;

struct kinf_informerset_event {
	size_t member;			/* index from kinf_informerset_add() */
	/*
	 * A member that failed for good (its informer's error before the
	 * first sync, e.g. 403 in one namespace): rc < 0 and err; it is
	 * reported once and leaves the set, the others go on. Otherwise
	 * rc == 0 and batch (and deltas, when asked for) hold one pop.
	 */
	int rc;
	struct kinf_error err;
	struct kinf_informer_batch batch;
	struct kinf_deltas *deltas;	/* caller frees; NULL unless want_deltas */
};

/* Release what an event holds (not the struct itself). */
void kinf_informerset_event_release(struct kinf_informerset_event *ev);

/*
 * A new, empty set. want_deltas: events carry the raw deltas too. Returns
 * NULL when out of memory.
 */
struct kinf_informerset *kinf_informerset_new(bool want_deltas);

/*
 * Add an informer built from opts (see kinf_informer_new). Its index (0,
 * 1, ...) is written to *ret_member when not NULL. After start (a set
 * made with kinf_informerset_allow_growth()), from the caller's thread;
 * kinf_informerset_start_member() then starts it. Returns 0 or the
 * informer's error.
 */
int kinf_informerset_add(struct kinf_informerset *set,
		const struct kinf_informer_opts *opts, size_t *ret_member,
		struct kinf_error *reterr);

/*
 * Before start: the set may gain members after start (add) and lose some
 * (remove), so even one member gets a pump.
 */
void kinf_informerset_allow_growth(struct kinf_informerset *set);

/*
 * Start member i, added after the set started, and its pump. 0, or
 * -KINF_ENOMEM with reterr (the member is then over).
 */
int kinf_informerset_start_member(struct kinf_informerset *set, size_t i,
		struct kinf_error *reterr);

/*
 * Member i leaves: its informer stops and its pump ends (an event it
 * handed over before may still come). It counts as over, not failed; its
 * indexer stays readable. Caller's thread.
 */
void kinf_informerset_remove(struct kinf_informerset *set, size_t i);

size_t kinf_informerset_len(const struct kinf_informerset *set);
/* Member i's informer (borrowed; for its indexer, typed JSON, stats). */
struct kinf_informer *kinf_informerset_get(struct kinf_informerset *set, size_t i);

/*
 * Start every informer and its pump. On failure the ones started are
 * stopped. 0 or -KINF_ENOMEM with reterr.
 */
int kinf_informerset_start(struct kinf_informerset *set, struct kinf_error *reterr);

/*
 * The next event of any member, in arrival order, waiting up to wait_ms
 * (-1: until something happens). Returns 1 with *ret filled (release it),
 * 0 when every member is over (ended, stopped, or failed and reported),
 * or -KINF_ETIMEDOUT.
 */
int kinf_informerset_next(struct kinf_informerset *set, int wait_ms,
		struct kinf_informerset_event *ret);

/* True once every member that has not failed or left has synced. */
bool kinf_informerset_has_synced(struct kinf_informerset *set);

/* How many members failed for good so far. */
size_t kinf_informerset_failed(struct kinf_informerset *set);

/*
 * Stop every informer and pump; a next() blocked in another thread returns
 * 0. Indexers stay readable. Free calls it too.
 */
void kinf_informerset_stop(struct kinf_informerset *set);

/* Stop and free the set and its informers. NULL is fine. */
void kinf_informerset_free(struct kinf_informerset *set);

#endif
