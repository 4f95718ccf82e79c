#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "informerset.h"

/*
 * How far a member's pump reads ahead of the reader: it hands over pops
 * until READ_AHEAD of them wait in the set, then sleeps until the reader
 * has taken them down to READ_AHEAD / 2, so a busy member costs one
 * wake-up per READ_AHEAD / 2 events, not two context switches per event.
 * This, with TAKE_MAX, is what bounds the memory the set itself holds:
 * at most READ_AHEAD + TAKE_MAX pops of each member (each a key's
 * notifications, with the old and new objects, and its deltas). What a
 * reader slower than the watch streams has not popped stays in the
 * members' DeltaFIFOs, which nothing bounds (see informerset.h).
 */
#define READ_AHEAD KINF_INFORMERSET_READ_AHEAD
/* A pump hands over at most this many pops (what its FIFO had ready) at once. */
#define HAND_OVER_MAX 16
/* The reader takes at most this many pops out of the set in one lock hold. */
#define TAKE_MAX 64
/*
 * Until its informer has synced, a pump with nothing to pop looks this
 * often whether it has (an empty initial list syncs without a pop).
 */
#define SYNC_POLL_MS 50

/* One pop in the set: handed over by a pump, not yet returned by next(). */
struct item {
	size_t member;
	int rc;				/* < 0: the member failed (its err) */
	struct kinf_informer_batch batch;
	struct kinf_deltas *deltas;
};

/* One member: its informer, its pump thread and what it has handed over. */
struct member {
	struct kinf_informerset *set;
	size_t i;
	struct kinf_informer *inf;
	pthread_t pump;
	pthread_cond_t room;		/* the pump's wait: room in the queue, or stop */
	/* guarded by set->lock */
	bool pump_running;
	bool waiting;			/* the pump waits on room */
	size_t queued;			/* its pops in the queue */
	size_t handed;			/* its pops handed over in all */
	size_t synced_at;		/* handed when its informer had synced; SIZE_MAX before */
	bool over;			/* the pump ended (over, stopped or failed) */
	bool failed;
	bool left;			/* removed: its pump stops */
	struct kinf_error err;		/* why it failed; written once, before its item */
	/* the caller's thread only */
	size_t taken;			/* its pops next() returned */
	/* a follower: its informer's namespaces come and go (its pops stay in here) */
	bool follower;
	struct kinf_informerset_follow follow;
	/* a member in a follower's namespace (follows: the follower's index + 1) */
	size_t follows;
	char *namespace;
};

/*
 * What next() hands out before anything else: the pops of members that
 * left (read ahead before they left), and the tombstones of a member that
 * forgot its objects (drain: popped from its informer one by one).
 */
struct pending {
	struct item it;
	bool drain;
};

struct kinf_informerset {
	bool want_deltas;
	bool direct;			/* one member: popped in the caller's thread */
	bool direct_over;
	bool growing;			/* members may come and go after start */
	bool started;
	struct member **v;
	size_t n;
	atomic_bool stopping;
	pthread_mutex_t lock;
	pthread_cond_t reader;		/* the reader's wait: a pop, a pump ended, stop */
	bool reader_waiting;		/* guarded by lock */
	/* guarded by lock: the pops handed over, in arrival order, a ring */
	struct item *q;
	size_t qcap, head, len;
	size_t over, failed;
	/* the caller's thread only: the pops taken out of the ring at once */
	struct item took[TAKE_MAX];
	size_t took_head, took_len;
	/* the caller's thread only: what left members still hand out, in order */
	struct pending *pending;
	size_t pending_head, n_pending, pending_cap;
};

void kinf_informerset_event_release(struct kinf_informerset_event *ev) {
	kinf_informer_batch_release(&ev->batch);
	kinf_deltas_free(ev->deltas);
	ev->deltas = NULL;
}

static void item_release(struct item *it) {
	kinf_informer_batch_release(&it->batch);
	kinf_deltas_free(it->deltas);
	it->deltas = NULL;
}

struct kinf_informerset *kinf_informerset_new(bool want_deltas) {
	struct kinf_informerset *set = calloc(1, sizeof(*set));
	if (!set) {
		return NULL;
	}
	if (kinf_clock_cond_init(&set->reader) != 0) {
		free(set);
		return NULL;
	}
	set->want_deltas = want_deltas;
	atomic_init(&set->stopping, false);
	pthread_mutex_init(&set->lock, NULL);
	return set;
}

/* Start m's informer and pump. */
static int start_member(struct member *m, struct kinf_error *reterr);

static void member_free(struct member *m) {
	kinf_informer_free(m->inf);
	pthread_cond_destroy(&m->room);
	free(m->namespace);
	free(m);
}

/* Add a member, set up as proto says (a follower, or a member in a namespace). */
static int add_member(struct kinf_informerset *set, const struct kinf_informer_opts *opts,
		const struct member *proto, size_t *ret_member, struct kinf_error *reterr) {
	struct member *m = calloc(1, sizeof(*m));
	if (!m) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	m->follower = proto->follower;
	m->follow = proto->follow;
	m->follows = proto->follows;
	if (proto->namespace && !(m->namespace = strdup(proto->namespace))) {
		free(m);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	int rc = kinf_informer_new(opts, &m->inf, reterr);
	if (rc < 0) {
		free(m->namespace);
		free(m);
		return rc;
	}
	m->synced_at = SIZE_MAX;
	pthread_cond_init(&m->room, NULL);
	/*
	 * Room in the ring for every pop a member may have in it (READ_AHEAD,
	 * and its failure), so that a pump never allocates. Pumps append
	 * under the lock.
	 */
	size_t cap = (set->n + 1) * (READ_AHEAD + 1);
	pthread_mutex_lock(&set->lock);
	struct member **v = realloc(set->v, (set->n + 1) * sizeof(*v));
	if (v) {
		set->v = v;
	}
	struct item *q = v ? malloc(cap * sizeof(*q)) : NULL;
	if (!q) {
		pthread_mutex_unlock(&set->lock);
		member_free(m);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	/* The ring grows: its entries in order, from the start. */
	for (size_t k = 0; k < set->len; k++) {
		q[k] = set->q[(set->head + k) % set->qcap];
	}
	free(set->q);
	set->q = q;
	set->qcap = cap;
	set->head = 0;
	m->set = set;
	m->i = set->n;
	set->v[set->n++] = m;
	pthread_mutex_unlock(&set->lock);
	if (ret_member) {
		*ret_member = m->i;
	}
	return 0;
}

int kinf_informerset_add(struct kinf_informerset *set,
		const struct kinf_informer_opts *opts, size_t *ret_member,
		struct kinf_error *reterr) {
	static const struct member plain = {0};
	return add_member(set, opts, &plain, ret_member, reterr);
}

int kinf_informerset_follow(struct kinf_informerset *set,
		const struct kinf_informer_opts *opts, const struct kinf_informerset_follow *follow,
		size_t *ret_member, struct kinf_error *reterr) {
	struct member proto = { .follower = true, .follow = *follow };
	return add_member(set, opts, &proto, ret_member, reterr);
}

int kinf_informerset_add_in(struct kinf_informerset *set,
		const struct kinf_informer_opts *opts, size_t follower, const char *namespace,
		size_t *ret_member, struct kinf_error *reterr) {
	if (follower >= set->n || !set->v[follower]->follower) {
		return kinf_error_set(reterr, KINF_EINVAL, "member %zu is not a follower",
				follower);
	}
	struct member proto = { .follows = follower + 1, .namespace = (char *)namespace };
	return add_member(set, opts, &proto, ret_member, reterr);
}

void kinf_informerset_allow_growth(struct kinf_informerset *set) {
	set->growing = true;
}

int kinf_informerset_start_member(struct kinf_informerset *set, size_t i,
		struct kinf_error *reterr) {
	bool running = true;
	if (i < set->n && set->started) {
		pthread_mutex_lock(&set->lock);
		running = set->v[i]->pump_running || set->v[i]->over;
		pthread_mutex_unlock(&set->lock);
	}
	if (running) {
		return kinf_error_set(reterr, KINF_EINVAL, "not a member added after start");
	}
	return start_member(set->v[i], reterr);
}

/*
 * Move the items of member i (of n, from v[head] in a ring of cap) to
 * out[*n_out...] in their order, keeping the others in theirs; returns how
 * many are kept.
 */
static size_t take_member(struct item *v, size_t head, size_t n, size_t cap, size_t i,
		struct item *out, size_t *n_out) {
	size_t kept = 0;
	for (size_t k = 0; k < n; k++) {
		struct item *it = &v[(head + k) % cap];
		if (it->member == i) {
			out[(*n_out)++] = *it;
		} else {
			v[(head + kept++) % cap] = *it;
		}
	}
	return kept;
}

/* An event made of it (its failure's err is m's). */
static void event_of(struct kinf_informerset_event *ret, const struct item *it,
		const struct member *m) {
	memset(ret, 0, sizeof(*ret));
	ret->member = it->member;
	ret->rc = it->rc;
	ret->batch = it->batch;
	ret->deltas = it->deltas;
	if (it->rc < 0) {
		/* Written before its item was queued, and never again. */
		ret->err = m->err;
	}
}

/* Wait for m's pump to end, if it runs (it was told to stop). */
static void join_pump(struct kinf_informerset *set, struct member *m) {
	pthread_mutex_lock(&set->lock);
	bool running = m->pump_running;
	m->pump_running = false;
	pthread_mutex_unlock(&set->lock);
	if (running) {
		pthread_join(m->pump, NULL);
	}
}

/* Room in set->pending for n more entries. 0 or -KINF_ENOMEM. */
static int pending_reserve(struct kinf_informerset *set, size_t n) {
	if (set->pending_head == set->n_pending) {
		set->pending_head = set->n_pending = 0;
	}
	size_t want = set->n_pending + n;
	if (want <= set->pending_cap) {
		return 0;
	}
	struct pending *v = realloc(set->pending, want * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	set->pending = v;
	set->pending_cap = want;
	return 0;
}

int kinf_informerset_remove(struct kinf_informerset *set, size_t i, bool tombstones) {
	if (i >= set->n || set->direct || set->v[i]->left) {
		return 0;
	}
	/* At most READ_AHEAD and a failure in the queue, TAKE_MAX taken; the drain. */
	if (pending_reserve(set, READ_AHEAD + 1 + TAKE_MAX + 1) < 0) {
		return -KINF_ENOMEM;	/* it stays */
	}
	struct member *m = set->v[i];
	/* A pump waiting in next() wakes with 0; one waiting for room, below. */
	kinf_informer_stop(m->inf);
	pthread_mutex_lock(&set->lock);
	m->left = true;
	if (!m->pump_running && !m->over) {
		m->over = true;		/* never started: nothing will end it */
		set->over++;
	}
	pthread_cond_signal(&m->room);
	pthread_mutex_unlock(&set->lock);
	/* Once it ended, every pop it made is in the queue. */
	join_pump(set, m);
	/*
	 * Its pops read ahead (taken out of the queue first, then those
	 * still in it) come out of next() before the rest: its indexer
	 * holds their changes, and the tombstones come after them.
	 */
	size_t n = 0;
	struct item left[READ_AHEAD + 1 + TAKE_MAX];
	set->took_len = take_member(set->took, set->took_head, set->took_len, TAKE_MAX, i,
			left, &n);
	pthread_mutex_lock(&set->lock);
	set->len = take_member(set->q, set->head, set->len, set->qcap, i, left, &n);
	m->queued = 0;
	if (set->reader_waiting) {
		pthread_cond_signal(&set->reader);
	}
	pthread_mutex_unlock(&set->lock);
	for (size_t k = 0; k < n; k++) {
		set->pending[set->n_pending++] = (struct pending){ .it = left[k] };
	}
	int rc = 0;
	if (tombstones) {
		rc = kinf_informer_forget_all(m->inf);
		set->pending[set->n_pending++] = (struct pending){
			.it = { .member = i }, .drain = true,
		};
	}
	return rc;
}

size_t kinf_informerset_len(const struct kinf_informerset *set) {
	return set->n;
}

struct kinf_informer *kinf_informerset_get(struct kinf_informerset *set, size_t i) {
	return i < set->n ? set->v[i]->inf : NULL;
}

/*
 * Under the set's lock: append m's k pops to the queue, then its failure
 * (fail_rc < 0, err), wake the reader if it waits, and note the sync
 * (synced_k: its informer had synced after the first synced_k of these
 * pops; SIZE_MAX: not yet). Unless the pump ends (end, the set stops, m
 * left), wait until m has room. Returns how many pops m may hand over
 * next, 0 when its pump is to end (it is then over).
 */
static size_t hand_over(struct member *m, struct item *got, size_t k, size_t synced_k,
		int fail_rc, const struct kinf_error *err, bool end) {
	struct kinf_informerset *set = m->set;
	size_t room = 0;

	pthread_mutex_lock(&set->lock);
	if (synced_k != SIZE_MAX) {
		m->synced_at = m->handed + synced_k;
	}
	for (size_t j = 0; j < k; j++) {
		set->q[(set->head + set->len++) % set->qcap] = got[j];
	}
	m->queued += k;
	m->handed += k;
	if (fail_rc < 0) {
		m->err = *err;
		set->q[(set->head + set->len++) % set->qcap] =
			(struct item){ .member = m->i, .rc = fail_rc };
	}
	if ((k || fail_rc < 0) && set->reader_waiting) {
		pthread_cond_signal(&set->reader);
	}
	if (!end) {
		while (m->queued >= READ_AHEAD && !atomic_load(&set->stopping) && !m->left) {
			m->waiting = true;
			pthread_cond_wait(&m->room, &set->lock);
		}
		m->waiting = false;
		if (!atomic_load(&set->stopping) && !m->left) {
			room = READ_AHEAD - m->queued;
		}
	}
	if (!room) {
		m->over = true;
		m->failed = fail_rc < 0;
		set->over++;
		set->failed += fail_rc < 0;
		if (set->reader_waiting) {
			pthread_cond_signal(&set->reader);
		}
	}
	pthread_mutex_unlock(&set->lock);
	return room;
}

/*
 * A member's pump: pop (waiting for the first, then what the FIFO has
 * ready, up to the room it has), hand the pops over in one lock hold,
 * again until the informer is over or fails.
 */
static void *pump(void *userdata) {
	struct member *m = userdata;
	struct kinf_informerset *set = m->set;
	struct item got[HAND_OVER_MAX];
	struct kinf_error err = {0};
	size_t room = READ_AHEAD;
	bool synced = false;

	while (room) {
		size_t k = 0, synced_k = SIZE_MAX;
		int rc = 1;
		while (rc == 1 && k < room && k < HAND_OVER_MAX) {
			int wait_ms = k ? 0 : synced ? -1 : SYNC_POLL_MS;
			got[k] = (struct item){ .member = m->i };
			rc = kinf_informer_next(m->inf, wait_ms, &got[k].batch,
					set->want_deltas ? &got[k].deltas : NULL, &err);
			k += rc == 1;
			/* Only this thread pops: synced by the pops so far. */
			if (!synced && kinf_informer_has_synced(m->inf)) {
				synced = true;
				synced_k = k;
			}
		}
		bool end = rc == 0 || (rc < 0 && rc != -KINF_ETIMEDOUT);
		if (k == 0 && !end && synced_k == SIZE_MAX) {
			continue;
		}
		/*
		 * Failed for good (its source has stopped by itself): reported
		 * once, then this member is over.
		 */
		int fail_rc = end && rc < 0 && !atomic_load(&set->stopping) ? rc : 0;
		room = hand_over(m, got, k, synced_k, fail_rc, &err, end);
	}
	return NULL;
}

static int start_member(struct member *m, struct kinf_error *reterr) {
	struct kinf_informerset *set = m->set;
	int rc = kinf_informer_start(m->inf, reterr);
	if (rc == 0 && pthread_create(&m->pump, NULL, pump, m) != 0) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "cannot start a thread");
	}
	pthread_mutex_lock(&set->lock);
	m->pump_running = rc == 0;
	if (rc < 0) {
		/* It never ran: over, so that the set does not wait for it. */
		m->over = true;
		set->over++;
	}
	pthread_mutex_unlock(&set->lock);
	return rc;
}

int kinf_informerset_start(struct kinf_informerset *set, struct kinf_error *reterr) {
	if (set->n == 1 && !set->growing) {
		/*
		 * No pump for one: next() pops in the caller's thread, without a
		 * hand-over between threads per event.
		 */
		set->direct = true;
		return kinf_informer_start(set->v[0]->inf, reterr);
	}
	set->started = true;
	for (size_t i = 0; i < set->n; i++) {
		int rc = start_member(set->v[i], reterr);
		if (rc < 0) {
			kinf_informerset_stop(set);
			return rc;
		}
	}
	return 0;
}

static int next_direct(struct kinf_informerset *set, int wait_ms,
		struct kinf_informerset_event *ret) {
	struct member *m = set->v[0];
	if (set->direct_over) {
		return 0;
	}
	memset(ret, 0, sizeof(*ret));
	int rc = kinf_informer_next(m->inf, wait_ms, &ret->batch,
			set->want_deltas ? &ret->deltas : NULL, &ret->err);
	if (rc == 1 || rc == -KINF_ETIMEDOUT) {
		return rc;
	}
	set->direct_over = true;
	if (rc < 0 && !atomic_load(&set->stopping)) {
		ret->rc = rc;
		pthread_mutex_lock(&set->lock);
		m->failed = true;
		set->failed++;
		pthread_mutex_unlock(&set->lock);
		return 1;
	}
	return 0;
}

/* Release the pops taken and not returned (the caller's thread). */
static void drop_taken(struct kinf_informerset *set) {
	for (; set->took_len; set->took_len--) {
		item_release(&set->took[set->took_head]);
		set->took_head = (set->took_head + 1) % TAKE_MAX;
	}
}

/*
 * Wait up to wait_ms for pops and move up to TAKE_MAX of them, oldest
 * first, out of the ring into set->took; wake each pump that now has
 * room enough. 1, 0 when every member is over or the set stops, or
 * -KINF_ETIMEDOUT.
 */
static int take(struct kinf_informerset *set, int wait_ms) {
	struct timespec until;
	int rc = 1;

	if (wait_ms > 0) {
		kinf_clock_deadline(&until, wait_ms);
	}
	pthread_mutex_lock(&set->lock);
	while (set->len == 0) {
		if (set->over == set->n || atomic_load(&set->stopping)) {
			rc = 0;
			break;
		}
		if (wait_ms == 0) {
			rc = -KINF_ETIMEDOUT;
			break;
		}
		set->reader_waiting = true;
		int w = wait_ms < 0 ? pthread_cond_wait(&set->reader, &set->lock) :
			pthread_cond_timedwait(&set->reader, &set->lock, &until);
		set->reader_waiting = false;
		if (w != 0 && set->len == 0) {
			rc = -KINF_ETIMEDOUT;
			break;
		}
	}
	set->took_head = 0;
	for (; rc == 1 && set->len && set->took_len < TAKE_MAX; set->len--) {
		struct item *it = &set->q[set->head];
		set->head = (set->head + 1) % set->qcap;
		set->took[set->took_len++] = *it;
		struct member *m = set->v[it->member];
		if (it->rc == 0 && --m->queued <= READ_AHEAD / 2 && m->waiting) {
			m->waiting = false;
			pthread_cond_signal(&m->room);
		}
	}
	pthread_mutex_unlock(&set->lock);
	return rc;
}

/*
 * The next of set->pending into ret: 1, or 0 when there is none left.
 * A drain entry hands out its member's tombstones one pop at a time.
 */
static int next_pending(struct kinf_informerset *set, struct kinf_informerset_event *ret) {
	while (set->pending_head < set->n_pending) {
		struct pending *p = &set->pending[set->pending_head];
		struct member *m = set->v[p->it.member];
		if (!p->drain) {
			set->pending_head++;
			event_of(ret, &p->it, m);
			return 1;
		}
		memset(ret, 0, sizeof(*ret));
		ret->member = p->it.member;
		int rc = kinf_informer_drain(m->inf, &ret->batch,
				set->want_deltas ? &ret->deltas : NULL, &ret->err);
		if (rc == 1) {
			return 1;
		}
		set->pending_head++;
		if (rc < 0) {
			ret->rc = rc;	/* the rest of its tombstones are lost: say so */
			return 1;
		}
	}
	return 0;
}

/*
 * A follower's pop: each namespace added calls its joined callback (which
 * may add members); each one deleted makes the members in it leave, with
 * tombstones, and calls left for each.
 */
static void follow(struct kinf_informerset *set, struct member *f,
		const struct kinf_informer_batch *batch) {
	for (size_t k = 0; k < batch->n; k++) {
		const struct kinf_informer_event *ev = &batch->v[k];
		if (ev->type == KINF_INFORMER_ADD && f->follow.joined) {
			f->follow.joined(set, f->i, ev->key, f->follow.userdata);
			continue;
		}
		if (ev->type != KINF_INFORMER_DELETE) {
			continue;
		}
		/* (joined may add members: set->v moves, set->n grows) */
		for (size_t j = 0; j < set->n; j++) {
			struct member *m = set->v[j];
			if (m->follows != f->i + 1 || m->left || strcmp(m->namespace, ev->key) != 0) {
				continue;
			}
			int rc = kinf_informerset_remove(set, j, true);
			if (f->follow.left) {
				f->follow.left(set, j, rc, f->follow.userdata);
			}
		}
	}
}

int kinf_informerset_next(struct kinf_informerset *set, int wait_ms,
		struct kinf_informerset_event *ret) {
	if (set->direct) {
		return next_direct(set, wait_ms, ret);
	}
	for (;;) {
		if (atomic_load(&set->stopping)) {
			drop_taken(set);
			return 0;
		}
		if (next_pending(set, ret)) {
			return 1;
		}
		if (set->took_len == 0) {
			int rc = take(set, wait_ms);
			if (rc <= 0) {
				return rc;
			}
		}
		struct item *it = &set->took[set->took_head];
		struct member *m = set->v[it->member];
		set->took_head = (set->took_head + 1) % TAKE_MAX;
		set->took_len--;
		event_of(ret, it, m);
		m->taken += it->rc == 0;
		if (!m->follower || ret->rc < 0) {
			return 1;
		}
		follow(set, m, &ret->batch);
		kinf_informerset_event_release(ret);
	}
}

/* Synced as the caller sees it: every pop up to the sync taken. */
static bool member_synced_locked(const struct member *m) {
	return m->synced_at != SIZE_MAX && m->taken >= m->synced_at;
}

bool kinf_informerset_has_synced(struct kinf_informerset *set) {
	if (set->direct) {
		struct member *m = set->v[0];
		pthread_mutex_lock(&set->lock);
		bool failed = m->failed;
		pthread_mutex_unlock(&set->lock);
		return failed || kinf_informer_has_synced(m->inf);
	}
	bool synced = true;
	pthread_mutex_lock(&set->lock);
	for (size_t i = 0; synced && i < set->n; i++) {
		struct member *m = set->v[i];
		synced = m->failed || m->left || member_synced_locked(m);
	}
	pthread_mutex_unlock(&set->lock);
	return synced;
}

bool kinf_informerset_member_synced(struct kinf_informerset *set, size_t i) {
	if (set->direct) {
		return kinf_informer_has_synced(set->v[0]->inf);
	}
	pthread_mutex_lock(&set->lock);
	bool synced = i < set->n && member_synced_locked(set->v[i]);
	pthread_mutex_unlock(&set->lock);
	return synced;
}

size_t kinf_informerset_failed(struct kinf_informerset *set) {
	pthread_mutex_lock(&set->lock);
	size_t n = set->failed;
	pthread_mutex_unlock(&set->lock);
	return n;
}

void kinf_informerset_stop(struct kinf_informerset *set) {
	if (set->direct) {
		atomic_store(&set->stopping, true);
		kinf_informer_stop(set->v[0]->inf);
		return;
	}
	pthread_mutex_lock(&set->lock);
	atomic_store(&set->stopping, true);
	pthread_cond_broadcast(&set->reader);
	for (size_t i = 0; i < set->n; i++) {
		pthread_cond_signal(&set->v[i]->room);
	}
	pthread_mutex_unlock(&set->lock);
	for (size_t i = 0; i < set->n; i++) {
		kinf_informer_stop(set->v[i]->inf);
	}
	for (size_t i = 0; i < set->n; i++) {
		join_pump(set, set->v[i]);
	}
	/* Pops handed over and never taken (those taken: next() or free). */
	pthread_mutex_lock(&set->lock);
	for (; set->len; set->len--) {
		item_release(&set->q[set->head]);
		set->head = (set->head + 1) % set->qcap;
	}
	pthread_mutex_unlock(&set->lock);
}

void kinf_informerset_free(struct kinf_informerset *set) {
	if (!set) {
		return;
	}
	kinf_informerset_stop(set);
	drop_taken(set);
	for (size_t k = set->pending_head; k < set->n_pending; k++) {
		item_release(&set->pending[k].it);
	}
	free(set->pending);
	for (size_t i = 0; i < set->n; i++) {
		member_free(set->v[i]);
	}
	free(set->v);
	free(set->q);
	pthread_cond_destroy(&set->reader);
	pthread_mutex_destroy(&set->lock);
	free(set);
}
