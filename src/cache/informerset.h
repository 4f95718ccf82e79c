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
 * events merged into one stream in the order they were handed over.
 *
 * Threads: each member gets a pump thread that calls kinf_informer_next()
 * on it (the informer's "caller" thread in informer.h's map: it applies the
 * deltas to that member's indexer) and hands the pops over to the set's
 * queue, several in one lock hold: what its FIFO had ready, up to
 * HAND_OVER_MAX (16, informerset.c). So one member's events keep their
 * order, and those of two members come in the order their pumps handed
 * them over (an event of another member popped while a pump gathered its
 * batch comes before or after the whole batch). The caller takes them
 * oldest first; next() moves up to TAKE_MAX (64) out of the queue at once.
 *
 * A pump reads ahead of the caller: it stops popping while
 * KINF_INFORMERSET_READ_AHEAD of its pops wait in the queue, and goes on
 * once the caller took half of them. So while the caller handles an
 * event, its informer's indexer may already hold the changes of later
 * pops (as a client-go handler's store may be ahead of the notification
 * it handles); the sync state the set reports is the caller's: a member
 * has synced once the caller took the pop that completed its initial
 * list. What bounds the memory: the set holds at most READ_AHEAD +
 * TAKE_MAX pops of each member (each a key's notifications, old and new
 * objects, and its deltas); beyond that, a caller slower than the watch
 * streams leaves the deltas in the members' DeltaFIFOs, and nothing
 * bounds those: a DeltaFIFO keeps every Updated delta of a key (only two
 * deletions in a row are merged, as client-go's dedupDeltas does), so
 * under a sustained burst they grow by one delta per event until the
 * caller catches up.
 *
 * Each pump sleeps on a condition variable of its own, woken only for
 * room, stop or removal; the caller on the set's. The set's lock guards
 * the queue and the members' counts; it is a leaf (no informer call is
 * made under it). A set of one member has no pump: next() pops in the
 * caller's thread, unless it may grow (kinf_informerset_allow_growth):
 * then members are added, started and removed after start, from the
 * caller's thread (the arrays and the queue change under the set's lock).
 */
struct kinf_informerset;

/* Pops a member's pump hands over before it waits for the caller. */
#define KINF_INFORMERSET_READ_AHEAD 32

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
KINF_MUST_CHECK int kinf_informerset_add(struct kinf_informerset *set,
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
KINF_MUST_CHECK int kinf_informerset_start_member(struct kinf_informerset *set, size_t i,
		struct kinf_error *reterr);

/*
 * Member i leaves: its informer stops and its pump ends (waited for). Its
 * pops that next() has not returned yet (it read ahead) still come out of
 * next(), before anything else and in their order (the member's indexer
 * holds their changes). With tombstones, what it still holds then comes
 * out too: a DELETED event of unknown final state (a
 * DeletedFinalStateUnknown tombstone, as a relist that finds nothing
 * makes) for each object in its indexer and each key still queued, and
 * its indexer ends empty. It counts as over, not failed; its indexer
 * stays readable. A set that may grow, caller's thread; a member that
 * left already is left alone. 0, or -KINF_ENOMEM: before anything
 * happened (the member stays), or some of its tombstones are missing.
 */
KINF_MUST_CHECK int kinf_informerset_remove(struct kinf_informerset *set, size_t i, bool tombstones);

/*
 * Members that follow namespaces as they come and go (-A --accessible: a
 * type watched namespace by namespace where the cluster-wide list is
 * forbidden). A follower is a member over namespaces whose pops the set
 * reads itself (next() never returns them, only its failure): for each
 * namespace added it calls joined, which may add members in it
 * (kinf_informerset_add_in) and start them; when a namespace is deleted
 * each member in it leaves with tombstones (kinf_informerset_remove), and
 * left is called with its index and what remove returned. Both run in
 * next(), in the caller's thread, and may call the set (not next()).
 */
struct kinf_informerset_follow {
	void (*joined)(struct kinf_informerset *set, size_t follower, const char *namespace,
			void *userdata);
	void (*left)(struct kinf_informerset *set, size_t member, int rc, void *userdata);
	void *userdata;
};

/* kinf_informerset_add() of a follower (opts: an informer over namespaces). */
KINF_MUST_CHECK int kinf_informerset_follow(struct kinf_informerset *set,
		const struct kinf_informer_opts *opts, const struct kinf_informerset_follow *follow,
		size_t *ret_member, struct kinf_error *reterr);

/*
 * kinf_informerset_add() of a member in namespace (copied) of follower:
 * it leaves when the follower sees the namespace go. -KINF_EINVAL when
 * follower is not one.
 */
KINF_MUST_CHECK int kinf_informerset_add_in(struct kinf_informerset *set,
		const struct kinf_informer_opts *opts, size_t follower, const char *namespace,
		size_t *ret_member, struct kinf_error *reterr);

size_t kinf_informerset_len(const struct kinf_informerset *set);
/* Member i's informer (borrowed; for its indexer, typed JSON, stats). */
struct kinf_informer *kinf_informerset_get(struct kinf_informerset *set, size_t i);

/*
 * Start every informer and its pump. On failure the ones started are
 * stopped. 0 or -KINF_ENOMEM with reterr.
 */
KINF_MUST_CHECK int kinf_informerset_start(struct kinf_informerset *set, struct kinf_error *reterr);

/*
 * The next event of any member, in arrival order, waiting up to wait_ms
 * (-1: until something happens). Returns 1 with *ret filled (release it),
 * 0 when every member is over (ended, stopped, or failed and reported),
 * or -KINF_ETIMEDOUT.
 */
KINF_MUST_CHECK int kinf_informerset_next(struct kinf_informerset *set, int wait_ms,
		struct kinf_informerset_event *ret);

/*
 * True once every member that has not failed or left has synced and the
 * caller took (next) every pop up to its sync. Caller's thread.
 */
bool kinf_informerset_has_synced(struct kinf_informerset *set);
/*
 * The same for member i alone: its informer synced and the caller took
 * every pop up to that (its pump may have popped further ahead: the
 * informer's own has_synced says nothing of what the caller holds).
 */
bool kinf_informerset_member_synced(struct kinf_informerset *set, size_t i);

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
