#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "informerset.h"

/* One member: its informer, its pump thread and its hand-over slot. */
struct member {
	struct kinf_informerset *set;
	size_t i;
	struct kinf_informer *inf;
	pthread_t pump;
	bool pump_running;
	/* guarded by set->lock */
	bool full;			/* ev holds an event not yet taken */
	bool held;			/* taken; the caller has not asked again yet */
	bool over;			/* the pump ended (over, stopped or failed) */
	bool failed;
	bool left;			/* removed: its pump stops waiting */
	struct kinf_informerset_event ev;
};

struct kinf_informerset {
	bool want_deltas;
	bool direct;			/* one member: popped in the caller's thread */
	bool direct_over;
	bool growing;			/* members may come and go after start */
	bool started;
	size_t held;			/* the member of the last event, or SIZE_MAX */
	struct member **v;
	size_t n;
	atomic_bool stopping;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a slot filled, taken, or a pump ended */
	/* the filled slots' members in arrival order: a ring of n */
	size_t *ring;
	size_t head, len;
	size_t over, failed;
};

void kinf_informerset_event_release(struct kinf_informerset_event *ev) {
	kinf_informer_batch_release(&ev->batch);
	kinf_deltas_free(ev->deltas);
	ev->deltas = NULL;
}

struct kinf_informerset *kinf_informerset_new(bool want_deltas) {
	struct kinf_informerset *set = calloc(1, sizeof(*set));
	if (!set) {
		return NULL;
	}
	set->want_deltas = want_deltas;
	set->held = SIZE_MAX;
	atomic_init(&set->stopping, false);
	pthread_mutex_init(&set->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&set->cond, &attr);
	pthread_condattr_destroy(&attr);
	return set;
}

/* Start m's informer and pump. */
static int start_member(struct member *m, struct kinf_error *reterr);

int kinf_informerset_add(struct kinf_informerset *set,
		const struct kinf_informer_opts *opts, size_t *ret_member,
		struct kinf_error *reterr) {
	struct member *m = calloc(1, sizeof(*m));
	if (!m) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	int rc = kinf_informer_new(opts, &m->inf, reterr);
	if (rc < 0) {
		free(m);
		return rc;
	}
	/* Pumps read the ring (and hand over into it) under the lock. */
	pthread_mutex_lock(&set->lock);
	struct member **v = realloc(set->v, (set->n + 1) * sizeof(*v));
	if (v) {
		set->v = v;
	}
	size_t *ring = v ? malloc((set->n + 1) * sizeof(*ring)) : NULL;
	if (!ring) {
		pthread_mutex_unlock(&set->lock);
		kinf_informer_free(m->inf);
		free(m);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	/* The ring grows by one: its entries in order, from the start. */
	for (size_t k = 0; k < set->len; k++) {
		ring[k] = set->ring[(set->head + k) % set->n];
	}
	free(set->ring);
	set->ring = ring;
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

void kinf_informerset_allow_growth(struct kinf_informerset *set) {
	set->growing = true;
}

int kinf_informerset_start_member(struct kinf_informerset *set, size_t i,
		struct kinf_error *reterr) {
	if (i >= set->n || !set->started || set->v[i]->pump_running) {
		return kinf_error_set(reterr, KINF_EINVAL, "not a member added after start");
	}
	return start_member(set->v[i], reterr);
}

void kinf_informerset_remove(struct kinf_informerset *set, size_t i) {
	if (i >= set->n || set->direct) {
		return;
	}
	struct member *m = set->v[i];
	/* A pump waiting in next() wakes with 0; one waiting to hand over, below. */
	kinf_informer_stop(m->inf);
	pthread_mutex_lock(&set->lock);
	m->left = true;
	if (!m->pump_running && !m->over) {
		m->over = true;		/* never started: nothing will end it */
		set->over++;
	}
	pthread_cond_broadcast(&set->cond);
	pthread_mutex_unlock(&set->lock);
}

size_t kinf_informerset_len(const struct kinf_informerset *set) {
	return set->n;
}

struct kinf_informer *kinf_informerset_get(struct kinf_informerset *set, size_t i) {
	return i < set->n ? set->v[i]->inf : NULL;
}

/*
 * Hand ev over and wait until the caller took it and asked for the next
 * one (or the set stops): the member pops again only then, so its indexer
 * and sync state are those of the event being handled, as with one
 * informer.
 */
static bool hand_over(struct member *m, struct kinf_informerset_event *ev) {
	struct kinf_informerset *set = m->set;
	pthread_mutex_lock(&set->lock);
	m->ev = *ev;
	m->full = true;
	set->ring[(set->head + set->len) % set->n] = m->i;
	set->len++;
	pthread_cond_broadcast(&set->cond);
	while ((m->full || m->held) && !atomic_load(&set->stopping) && !m->left) {
		pthread_cond_wait(&set->cond, &set->lock);
	}
	pthread_mutex_unlock(&set->lock);
	return !atomic_load(&set->stopping);
}

static void *pump(void *userdata) {
	struct member *m = userdata;
	struct kinf_informerset *set = m->set;
	bool failed = false;

	for (;;) {
		struct kinf_informerset_event ev = { .member = m->i };
		int rc = kinf_informer_next(m->inf, -1, &ev.batch,
				set->want_deltas ? &ev.deltas : NULL, &ev.err);
		if (rc == 1) {
			if (!hand_over(m, &ev)) {
				break;
			}
			continue;
		}
		if (rc < 0 && !atomic_load(&set->stopping)) {
			/*
			 * Failed for good (its source has stopped by itself):
			 * reported once, then this member is over.
			 */
			ev.rc = rc;
			failed = true;
			hand_over(m, &ev);
		}
		break;
	}
	pthread_mutex_lock(&set->lock);
	m->over = true;
	m->failed = failed;
	set->over++;
	if (failed) {
		set->failed++;
	}
	pthread_cond_broadcast(&set->cond);
	pthread_mutex_unlock(&set->lock);
	return NULL;
}

static int start_member(struct member *m, struct kinf_error *reterr) {
	int rc = kinf_informer_start(m->inf, reterr);
	if (rc == 0 && pthread_create(&m->pump, NULL, pump, m) != 0) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "cannot start a thread");
	}
	m->pump_running = rc == 0;
	if (rc < 0) {
		/* It never ran: over, so that the set does not wait for it. */
		pthread_mutex_lock(&m->set->lock);
		m->over = true;
		m->set->over++;
		pthread_mutex_unlock(&m->set->lock);
	}
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

int kinf_informerset_next(struct kinf_informerset *set, int wait_ms,
		struct kinf_informerset_event *ret) {
	struct timespec until;
	int rc = 1;

	if (set->direct) {
		return next_direct(set, wait_ms, ret);
	}
	if (wait_ms > 0) {
		kinf_clock_deadline(&until, wait_ms);
	}
	pthread_mutex_lock(&set->lock);
	if (set->held != SIZE_MAX) {
		/* The caller is done with the last event: its member may pop. */
		set->v[set->held]->held = false;
		set->held = SIZE_MAX;
		pthread_cond_broadcast(&set->cond);
	}
	while (set->len == 0) {
		if (set->over == set->n || atomic_load(&set->stopping)) {
			rc = 0;
			break;
		}
		if (wait_ms == 0 || (wait_ms > 0 && pthread_cond_timedwait(&set->cond,
				&set->lock, &until) != 0 && set->len == 0)) {
			rc = -KINF_ETIMEDOUT;
			break;
		}
		if (wait_ms < 0) {
			pthread_cond_wait(&set->cond, &set->lock);
		}
	}
	if (rc == 1) {
		struct member *m = set->v[set->ring[set->head]];
		set->head = (set->head + 1) % set->n;
		set->len--;
		*ret = m->ev;
		memset(&m->ev, 0, sizeof(m->ev));
		m->full = false;
		m->held = true;
		set->held = m->i;
	}
	pthread_mutex_unlock(&set->lock);
	return rc;
}

bool kinf_informerset_has_synced(struct kinf_informerset *set) {
	for (size_t i = 0; i < set->n; i++) {
		struct member *m = set->v[i];
		pthread_mutex_lock(&set->lock);
		bool failed = m->failed || m->left;
		pthread_mutex_unlock(&set->lock);
		if (!failed && !kinf_informer_has_synced(m->inf)) {
			return false;
		}
	}
	return true;
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
	pthread_cond_broadcast(&set->cond);
	pthread_mutex_unlock(&set->lock);
	for (size_t i = 0; i < set->n; i++) {
		kinf_informer_stop(set->v[i]->inf);
	}
	for (size_t i = 0; i < set->n; i++) {
		struct member *m = set->v[i];
		if (m->pump_running) {
			pthread_join(m->pump, NULL);
			m->pump_running = false;
		}
	}
	/* Events handed over and never taken. */
	pthread_mutex_lock(&set->lock);
	for (size_t i = 0; i < set->n; i++) {
		struct member *m = set->v[i];
		if (m->full) {
			kinf_informerset_event_release(&m->ev);
			m->full = false;
		}
	}
	set->len = 0;
	pthread_mutex_unlock(&set->lock);
}

void kinf_informerset_free(struct kinf_informerset *set) {
	if (!set) {
		return;
	}
	kinf_informerset_stop(set);
	for (size_t i = 0; i < set->n; i++) {
		kinf_informer_free(set->v[i]->inf);
		free(set->v[i]);
	}
	free(set->v);
	free(set->ring);
	pthread_cond_destroy(&set->cond);
	pthread_mutex_destroy(&set->lock);
	free(set);
}
