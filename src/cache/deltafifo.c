/*
 * The DeltaFIFO, after client-go's tools/cache/delta_fifo.go.
 *
 * items maps a key to its deltas (struct kinf_deltas, oldest first) through
 * an open-addressing hash table; queue is a ring buffer of the same
 * kinf_deltas pointers in FIFO order. A key is in the queue iff it is in
 * items and has at least one delta, so the queue has no duplicates and Pop
 * hands out the kinf_deltas record itself without copying.
 *
 * Lock order. The FIFO has one mutex plus a condition variable on
 * CLOCK_MONOTONIC for Pop. Three paths reach the known-objects indexer while
 * holding the FIFO mutex: the Pop callback (the informer updates the indexer
 * there, atomically with the pop, as client-go's PopProcessFunc does), and
 * Replace, Resync and Delete, which read the indexer. The indexer's rwlock
 * is therefore always taken after the FIFO mutex, and the indexer never
 * calls into the FIFO, so there is no cycle. A Pop callback must not call
 * into the FIFO (the mutex is not recursive).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "clock.h"
#include "deltafifo.h"
#include "hashtab.h"
#include "indexer.h"
#include "object.h"

#define RING_MIN_CAP 16

struct kinf_deltafifo {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kinf_indexer *known;	/* borrowed, may be NULL */
	bool emit_replaced;
	bool closed;
	/* Set by the first Replace, or by Add/Update/Delete before it. */
	bool populated;
	/* Items of the first Replace not popped yet. */
	size_t initial_count;
	/* An empty first Replace synced with nothing to pop: end one wait. */
	bool sync_wake;
	/* kinf_deltafifo_batch_begin depth; a wake-up owed at its end. */
	unsigned batch;
	bool wake_owed;
	/*
	 * Pop after busy work waits a millisecond at a time (lazy_waiter)
	 * rather than to be woken for every item: see wake_consumer().
	 */
	bool consumer_busy;
	bool lazy_waiter;
	/* Deltas queued since memory was last given back; when that was. */
	size_t since_trim;

	struct kinf_hashtab items;	/* key -> struct kinf_deltas */

	struct kinf_deltas **ring;	/* queue */
	size_t rcap;
	size_t head;
	size_t rlen;
};

/*
 * Wake Pop, unless it is in a short wait of its own after busy work and
 * fewer than WAKE_BATCH items are ready: then it comes within a
 * millisecond anyway. A wake-up per watch event cost the producer, the
 * reflector and the busiest thread, a fifth of its time under a blast.
 */
#define WAKE_BATCH 32

static void wake_consumer(struct kinf_deltafifo *fifo) {
	if (fifo->lazy_waiter && fifo->rlen < WAKE_BATCH) {
		return;
	}
	pthread_cond_broadcast(&fifo->cond);
}

const char *kinf_delta_type_name(enum kinf_delta_type type) {
	switch (type) {
	case KINF_DELTA_ADDED:
		return "Added";
	case KINF_DELTA_UPDATED:
		return "Updated";
	case KINF_DELTA_DELETED:
		return "Deleted";
	case KINF_DELTA_REPLACED:
		return "Replaced";
	case KINF_DELTA_SYNC:
		return "Sync";
	}
	return "Unknown";
}

void kinf_deltas_free(struct kinf_deltas *deltas) {
	if (!deltas) {
		return;
	}
	for (size_t i = 0; i < deltas->n; i++) {
		kinf_object_unref(deltas->v[i].obj);
	}
	free(deltas->v);
	free(deltas->key);
	free(deltas);
}

static bool match_deltas_key(const void *value, const void *key) {
	return strcmp(((const struct kinf_deltas *)value)->key, key) == 0;
}

/* The slot of key in items, or NULL. */
static struct kinf_hashtab_slot *map_find(const struct kinf_deltafifo *fifo,
		const char *key, uint64_t hash) {
	return kinf_hashtab_find(&fifo->items, hash, match_deltas_key, key);
}

/* Room for one more key in items and in the queue. */
static int reserve_one(struct kinf_deltafifo *fifo) {
	int r = kinf_hashtab_reserve(&fifo->items, 1);
	if (r < 0) {
		return r;
	}
	if (fifo->rlen == fifo->rcap) {
		size_t rcap = fifo->rcap ? fifo->rcap * 2 : RING_MIN_CAP;
		struct kinf_deltas **ring = malloc(rcap * sizeof(*ring));
		if (!ring) {
			return -KINF_ENOMEM;
		}
		for (size_t i = 0; i < fifo->rlen; i++) {
			ring[i] = fifo->ring[(fifo->head + i) % fifo->rcap];
		}
		free(fifo->ring);
		fifo->ring = ring;
		fifo->rcap = rcap;
		fifo->head = 0;
	}
	return 0;
}

/*
 * client-go's dedupDeltas: only the last two deltas are compared, and the
 * only duplicate is two deletions (isDeletionDup). The newer one is kept if
 * the older is a DeletedFinalStateUnknown tombstone, else the older.
 */
static void dedup_deltas(struct kinf_deltas *d) {
	if (d->n < 2) {
		return;
	}
	struct kinf_delta *a = &d->v[d->n - 1];	/* newer */
	struct kinf_delta *b = &d->v[d->n - 2];	/* older */
	if (a->type != KINF_DELTA_DELETED || b->type != KINF_DELTA_DELETED) {
		return;
	}
	if (b->final_state_unknown) {
		kinf_object_unref(b->obj);
		*b = *a;
	} else {
		kinf_object_unref(a->obj);
	}
	d->n--;
}

/*
 * queueActionLocked: append a delta for key (obj may be NULL only for a
 * tombstone), dedup, queue the key if new and wake Pop. Takes its own
 * reference to obj. Nothing changes on -KINF_ENOMEM.
 */
static int queue_action(struct kinf_deltafifo *fifo, enum kinf_delta_type type,
		struct kinf_object *obj, bool final_state_unknown, const char *key) {
	uint64_t hash = kinf_hashtab_hash_str(key);
	struct kinf_hashtab_slot *s = map_find(fifo, key, hash);
	struct kinf_deltas *d;
	int r;

	if (s) {
		d = s->value;
	} else {
		r = reserve_one(fifo);
		if (r < 0) {
			return r;
		}
		d = calloc(1, sizeof(*d));
		if (!d || !(d->key = strdup(key))) {
			free(d);
			return -KINF_ENOMEM;
		}
	}
	/* Capacity is the next power of two: grow when n is 0 or 2^k. */
	if ((d->n & (d->n - 1)) == 0) {
		size_t cap = d->n ? d->n * 2 : 1;
		struct kinf_delta *v = realloc(d->v, cap * sizeof(*v));
		if (!v) {
			if (!s) {
				kinf_deltas_free(d);
			}
			return -KINF_ENOMEM;
		}
		d->v = v;
	}
	if (!s) {
		kinf_hashtab_insert(&fifo->items, hash, d);
		fifo->ring[(fifo->head + fifo->rlen) % fifo->rcap] = d;
		fifo->rlen++;
	}
	fifo->since_trim++;
	d->v[d->n++] = (struct kinf_delta){
		.type = type,
		.obj = obj ? kinf_object_ref(obj) : NULL,
		.final_state_unknown = final_state_unknown,
	};
	dedup_deltas(d);
	if (fifo->batch) {
		fifo->wake_owed = true;
	} else {
		wake_consumer(fifo);
	}
	return 0;
}

void kinf_deltafifo_batch_begin(struct kinf_deltafifo *fifo) {
	pthread_mutex_lock(&fifo->lock);
	fifo->batch++;
	pthread_mutex_unlock(&fifo->lock);
}

void kinf_deltafifo_batch_end(struct kinf_deltafifo *fifo) {
	pthread_mutex_lock(&fifo->lock);
	if (fifo->batch > 0 && --fifo->batch == 0 && fifo->wake_owed) {
		fifo->wake_owed = false;
		wake_consumer(fifo);
	}
	pthread_mutex_unlock(&fifo->lock);
}

static bool queued(const struct kinf_deltafifo *fifo, const char *key) {
	struct kinf_hashtab_slot *s = map_find(fifo, key, kinf_hashtab_hash_str(key));
	return s && ((struct kinf_deltas *)s->value)->n > 0;
}

struct kinf_deltafifo *kinf_deltafifo_new(struct kinf_indexer *known,
		bool emit_replaced) {
	struct kinf_deltafifo *fifo = calloc(1, sizeof(*fifo));

	if (!fifo) {
		return NULL;
	}
	fifo->known = known;
	fifo->emit_replaced = emit_replaced;
	if (pthread_mutex_init(&fifo->lock, NULL) != 0) {
		free(fifo);
		return NULL;
	}
	if (kinf_clock_cond_init(&fifo->cond) != 0) {
		goto fail_mutex;
	}
	return fifo;

fail_mutex:
	pthread_mutex_destroy(&fifo->lock);
	free(fifo);
	return NULL;
}

void kinf_deltafifo_free(struct kinf_deltafifo *fifo) {
	if (!fifo) {
		return;
	}
	for (size_t i = 0; i < fifo->rlen; i++) {
		kinf_deltas_free(fifo->ring[(fifo->head + i) % fifo->rcap]);
	}
	free(fifo->ring);
	kinf_hashtab_release(&fifo->items);
	pthread_cond_destroy(&fifo->cond);
	pthread_mutex_destroy(&fifo->lock);
	free(fifo);
}

int kinf_deltafifo_add(struct kinf_deltafifo *fifo, struct kinf_object *obj) {
	pthread_mutex_lock(&fifo->lock);
	fifo->populated = true;
	int r = queue_action(fifo, KINF_DELTA_ADDED, obj, false,
			kinf_object_key(obj));
	pthread_mutex_unlock(&fifo->lock);
	return r;
}

int kinf_deltafifo_update(struct kinf_deltafifo *fifo,
		struct kinf_object *obj) {
	pthread_mutex_lock(&fifo->lock);
	fifo->populated = true;
	int r = queue_action(fifo, KINF_DELTA_UPDATED, obj, false,
			kinf_object_key(obj));
	pthread_mutex_unlock(&fifo->lock);
	return r;
}

int kinf_deltafifo_delete(struct kinf_deltafifo *fifo,
		struct kinf_object *obj) {
	const char *key = kinf_object_key(obj);
	int r = 0;

	pthread_mutex_lock(&fifo->lock);
	fifo->populated = true;
	bool known = false;
	if (fifo->known) {
		struct kinf_object *k = kinf_indexer_get(fifo->known, key);
		known = k != NULL;
		kinf_object_unref(k);
	}
	/*
	 * Neither queued nor known: presumably deleted by a relist already;
	 * don't report the same deletion twice.
	 */
	if (known || queued(fifo, key)) {
		r = queue_action(fifo, KINF_DELTA_DELETED, obj, false, key);
	}
	pthread_mutex_unlock(&fifo->lock);
	return r;
}

/* Replace's "listed" keys: a set of borrowed key strings. */
static bool match_str(const void *value, const void *key) {
	return strcmp(value, key) == 0;
}

static void keyset_add(struct kinf_hashtab *ks, const char *key) {
	uint64_t h = kinf_hashtab_hash_str(key);
	if (!kinf_hashtab_find(ks, h, match_str, key)) {
		kinf_hashtab_insert(ks, h, (void *)key);
	}
}

static bool keyset_has(const struct kinf_hashtab *ks, const char *key) {
	return kinf_hashtab_find(ks, kinf_hashtab_hash_str(key), match_str, key) != NULL;
}

int kinf_deltafifo_replace(struct kinf_deltafifo *fifo,
		struct kinf_object *const *objs, size_t n) {
	enum kinf_delta_type action = fifo->emit_replaced ?
		KINF_DELTA_REPLACED : KINF_DELTA_SYNC;
	struct kinf_object_list known = {0};
	struct kinf_hashtab listed = {0};
	size_t queued_deletions = 0;
	int r;

	pthread_mutex_lock(&fifo->lock);
	/* room for every key, so that keyset_add cannot fail */
	r = kinf_hashtab_reserve(&listed, n);
	if (r < 0) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *key = kinf_object_key(objs[i]);
		keyset_add(&listed, key);
		r = queue_action(fifo, action, objs[i], false, key);
		if (r < 0) {
			goto out;
		}
	}

	/*
	 * Queued keys not listed: a missed watch deletion. The tombstone
	 * carries the newest queued object (unwrapped if it is a tombstone
	 * already). Walk the queue, not the map, for a stable order; these
	 * keys are queued already, so the walk does not change the ring.
	 */
	for (size_t i = 0; i < fifo->rlen; i++) {
		struct kinf_deltas *d = fifo->ring[(fifo->head + i) % fifo->rcap];
		if (keyset_has(&listed, d->key)) {
			continue;
		}
		struct kinf_object *last = d->v[d->n - 1].obj;
		queued_deletions++;
		r = queue_action(fifo, KINF_DELTA_DELETED, last, true, d->key);
		if (r < 0) {
			goto out;
		}
	}

	/* Known keys neither listed nor queued: tombstone of the known object. */
	if (fifo->known) {
		r = kinf_indexer_list(fifo->known, &known);
		if (r < 0) {
			goto out;
		}
		for (size_t i = 0; i < known.n; i++) {
			const char *key = kinf_object_key(known.v[i]);
			if (keyset_has(&listed, key) || queued(fifo, key)) {
				continue;
			}
			queued_deletions++;
			r = queue_action(fifo, KINF_DELTA_DELETED, known.v[i],
					true, key);
			if (r < 0) {
				goto out;
			}
		}
	}

	if (!fifo->populated) {
		fifo->populated = true;
		fifo->initial_count = listed.n + queued_deletions;
		if (fifo->initial_count == 0) {
			fifo->sync_wake = true;
			pthread_cond_broadcast(&fifo->cond);
		}
	}
out:
	pthread_mutex_unlock(&fifo->lock);
	kinf_object_list_release(&known);
	kinf_hashtab_release(&listed);
	return r;
}

int kinf_deltafifo_resync(struct kinf_deltafifo *fifo) {
	struct kinf_object_list known = {0};
	int r = 0;

	pthread_mutex_lock(&fifo->lock);
	if (!fifo->known) {
		goto out;
	}
	r = kinf_indexer_list(fifo->known, &known);
	if (r < 0) {
		goto out;
	}
	for (size_t i = 0; i < known.n; i++) {
		const char *key = kinf_object_key(known.v[i]);
		/*
		 * A key with queued deltas is skipped: the known object is older
		 * than what is queued, and syncing it would resurrect a stale
		 * value.
		 */
		if (queued(fifo, key)) {
			continue;
		}
		r = queue_action(fifo, KINF_DELTA_SYNC, known.v[i], false, key);
		if (r < 0) {
			goto out;
		}
	}
out:
	pthread_mutex_unlock(&fifo->lock);
	kinf_object_list_release(&known);
	return r;
}

/*
 * A burst of deltas (objects queued faster than they were popped, every
 * version alive at once) leaves the allocator with free memory it keeps:
 * after 1,000,000 updates of 10,000 pods the cache's RSS ended up 4-19%
 * above where it started. When Pop finds the queue empty and is about to
 * wait, everything popped has been released; if enough was queued since
 * last time, at most once a second, hand the free pages back to the
 * kernel (glibc's malloc_trim). Called without the FIFO's lock.
 */
#define TRIM_AFTER_DELTAS 1024
#define TRIM_EVERY_MS 1000

/*
 * The allocator is the process's: with several FIFOs (a set of informers)
 * still at most once a second in all, or each would trim every arena
 * once a second and the pages it gave back fault in again.
 */
static _Atomic long long last_trim_ms;

static bool trim_due(struct kinf_deltafifo *fifo) {
#ifdef __GLIBC__
	if (fifo->since_trim < TRIM_AFTER_DELTAS) {
		return false;
	}
	long long now = kinf_clock_now_ms();
	long long last = atomic_load_explicit(&last_trim_ms, memory_order_relaxed);
	if (now - last < TRIM_EVERY_MS || !atomic_compare_exchange_strong(&last_trim_ms,
			&last, now)) {
		return false;
	}
	fifo->since_trim = 0;
	return true;
#else
	(void)fifo;
	return false;
#endif
}

static void give_memory_back(void) {
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

int kinf_deltafifo_pop(struct kinf_deltafifo *fifo, int timeout_ms,
		kinf_pop_func process, void *userdata, struct kinf_deltas **ret) {
	struct timespec deadline;
	int r = 0;

	if (timeout_ms > 0) {
		kinf_clock_deadline(&deadline, timeout_ms);
	}
	pthread_mutex_lock(&fifo->lock);
	while (fifo->rlen == 0) {
		if (fifo->closed) {
			pthread_mutex_unlock(&fifo->lock);
			return -KINF_ECLOSED;
		}
		if (fifo->sync_wake) {
			fifo->sync_wake = false;
			pthread_mutex_unlock(&fifo->lock);
			return -KINF_ETIMEDOUT;
		}
		if (trim_due(fifo)) {
			pthread_mutex_unlock(&fifo->lock);
			give_memory_back();
			pthread_mutex_lock(&fifo->lock);
			continue;
		}
		if (fifo->consumer_busy && timeout_ms != 0) {
			/* Just busy: a short wait, producers need not wake us. */
			struct timespec soon;
			kinf_clock_deadline(&soon, 1);
			if (timeout_ms > 0 && (deadline.tv_sec < soon.tv_sec ||
					(deadline.tv_sec == soon.tv_sec &&
					 deadline.tv_nsec < soon.tv_nsec))) {
				soon = deadline;
			}
			fifo->lazy_waiter = true;
			int w = pthread_cond_timedwait(&fifo->cond, &fifo->lock, &soon);
			fifo->lazy_waiter = false;
			if (w == ETIMEDOUT && fifo->rlen == 0) {
				fifo->consumer_busy = false;	/* idle: wait to be woken */
			}
			continue;
		}
		if (timeout_ms < 0) {
			pthread_cond_wait(&fifo->cond, &fifo->lock);
		} else if (timeout_ms == 0 ||
				pthread_cond_timedwait(&fifo->cond, &fifo->lock,
					&deadline) == ETIMEDOUT) {
			if (fifo->rlen > 0) {
				break;
			}
			pthread_mutex_unlock(&fifo->lock);
			return fifo->closed ? -KINF_ECLOSED : -KINF_ETIMEDOUT;
		}
	}

	fifo->consumer_busy = true;
	/* Decided before the count drops, as client-go does. */
	bool is_in_initial_list = !(fifo->populated && fifo->initial_count == 0);
	struct kinf_deltas *d = fifo->ring[fifo->head];
	fifo->head = (fifo->head + 1) % fifo->rcap;
	fifo->rlen--;
	if (fifo->initial_count > 0) {
		fifo->initial_count--;
	}
	kinf_hashtab_remove(&fifo->items, map_find(fifo, d->key, kinf_hashtab_hash_str(d->key)));
	if (process) {
		r = process(d, is_in_initial_list, userdata);
	}
	pthread_mutex_unlock(&fifo->lock);

	if (r == 0 && ret) {
		*ret = d;
	} else {
		kinf_deltas_free(d);
	}
	return r;
}

void kinf_deltafifo_close(struct kinf_deltafifo *fifo) {
	pthread_mutex_lock(&fifo->lock);
	fifo->closed = true;
	pthread_cond_broadcast(&fifo->cond);
	pthread_mutex_unlock(&fifo->lock);
}

bool kinf_deltafifo_has_synced(struct kinf_deltafifo *fifo) {
	pthread_mutex_lock(&fifo->lock);
	bool synced = fifo->populated && fifo->initial_count == 0;
	pthread_mutex_unlock(&fifo->lock);
	return synced;
}

size_t kinf_deltafifo_len(struct kinf_deltafifo *fifo) {
	pthread_mutex_lock(&fifo->lock);
	size_t n = fifo->rlen;
	pthread_mutex_unlock(&fifo->lock);
	return n;
}
