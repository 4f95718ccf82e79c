#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "buf.h"
#include "clock.h"
#include "indexer.h"
#include "informer.h"
#include "object.h"
#include "reflector.h"
#include "replay.h"

void kinf_informer_batch_release(struct kinf_informer_batch *batch) {
	for (size_t i = 0; i < batch->n; i++) {
		free(batch->v[i].key);
		kinf_object_unref(batch->v[i].obj);
		kinf_object_unref(batch->v[i].old);
	}
	free(batch->v);
	batch->v = NULL;
	batch->n = 0;
}

struct process_state {
	struct kinf_indexer *idx;
	struct kinf_informer_batch *batch;
};

static int push(struct kinf_informer_batch *b, const struct kinf_informer_event *ev) {
	struct kinf_informer_event *v = realloc(b->v, (b->n + 1) * sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	b->v = v;
	b->v[b->n] = *ev;
	b->v[b->n].key = strdup(ev->key);
	if (!b->v[b->n].key) {
		return -KINF_ENOMEM;
	}
	kinf_object_ref(ev->obj);
	kinf_object_ref(ev->old);
	b->n++;
	return 0;
}

/* Runs under the FIFO's lock, so the indexer changes with the pop. */
static int process(const struct kinf_deltas *deltas, bool is_in_initial_list,
		void *userdata) {
	struct process_state *ps = userdata;
	int rc = 0;

	ps->batch->in_initial_list = is_in_initial_list;
	for (size_t i = 0; i < deltas->n && rc == 0; i++) {
		const struct kinf_delta *d = &deltas->v[i];
		struct kinf_informer_event ev = {
			.key = deltas->key,
			.obj = d->obj,
			.delta_type = d->type,
		};
		if (d->type == KINF_DELTA_DELETED) {
			rc = kinf_indexer_delete(ps->idx, deltas->key);
			ev.type = KINF_INFORMER_DELETE;
			ev.final_state_unknown = d->final_state_unknown;
		} else {
			struct kinf_object *old = kinf_indexer_get(ps->idx, deltas->key);
			if (old) {
				rc = kinf_indexer_update(ps->idx, d->obj);
				ev.type = KINF_INFORMER_UPDATE;
				ev.old = old;
				/*
				 * sharedIndexInformer.OnUpdate: a resync is an update
				 * that did not change the resourceVersion, whatever
				 * the delta type. A relist without emit_replaced
				 * queues Sync deltas; those with a new version are
				 * changes the watch missed, for every handler.
				 */
				ev.is_sync = strcmp(kinf_object_resource_version(old),
						kinf_object_resource_version(d->obj)) == 0;
			} else {
				rc = kinf_indexer_add(ps->idx, d->obj);
				ev.type = KINF_INFORMER_ADD;
				ev.initial = is_in_initial_list;
			}
			if (rc == 0) {
				rc = push(ps->batch, &ev);
			}
			kinf_object_unref(old);
			continue;
		}
		if (rc == 0) {
			rc = push(ps->batch, &ev);
		}
	}
	return rc;
}

int kinf_informer_pop(struct kinf_deltafifo *fifo, struct kinf_indexer *idx,
		int timeout_ms, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas) {
	struct process_state ps = { .idx = idx, .batch = ret_batch };
	ret_batch->v = NULL;
	ret_batch->n = 0;
	ret_batch->in_initial_list = false;
	int rc = kinf_deltafifo_pop(fifo, timeout_ms, process, &ps, ret_deltas);
	if (rc < 0) {
		kinf_informer_batch_release(ret_batch);
	}
	return rc;
}

/* The informer --------------------------------------------------------- */

struct kinf_informer {
	struct kinf_informer_opts opts;	/* strings below are our copies */
	char *path;
	char *label_selector;
	char *field_selector;
	char *api_version;
	char *kind;
	struct kinf_indexer *idx;
	struct kinf_deltafifo *fifo;
	struct kinf_reflector *reflector;
	struct kinf_buf type_prefix;	/* kinf_informer_append_typed()'s */
	atomic_bool stopping;		/* stop() was called; ends the replay */
	long long deadline_ms;		/* 0: none */
	/* Read by kinf_informer_get_stats() from any thread (serve's /metrics). */
	atomic_ulong pops;
	/* replay */
	pthread_t replay_thread;
	bool replay_running;
	bool replay_whole;		/* a file, read whole by start() */
	int replay_rc;
	struct kinf_error replay_err;
	struct kinf_reflector_stats replay_stats;
	pthread_mutex_t replay_stats_lock;	/* not lock: join_replay holds that */
	/* guards the two below (written by the reflector thread) and the join */
	pthread_mutex_t lock;
	int fatal_rc;
	struct kinf_error fatal_err;
};

/*
 * Errors before the first sync stop the informer (someone asked for
 * something that does not work: 403, 404, a bad selector, an unreachable
 * server); after it the reflector retries forever, and so do the errors
 * that may pass by themselves (429, 410, 5xx) before it.
 */
static bool on_reflector_error(int rc, const struct kinf_error *err, bool synced,
		void *userdata) {
	struct kinf_informer *inf = userdata;
	if (!synced && err->http_status != 429 && err->http_status != 410 &&
			err->http_status < 500) {
		pthread_mutex_lock(&inf->lock);
		inf->fatal_rc = rc < 0 ? rc : -KINF_EHTTP;
		inf->fatal_err = *err;
		pthread_mutex_unlock(&inf->lock);
		return true;
	}
	if (inf->opts.on_retry) {
		inf->opts.on_retry(rc, err, inf->opts.userdata);
	}
	return false;
}

static void on_list_page(unsigned pages, size_t items, void *userdata) {
	struct kinf_informer *inf = userdata;
	if (inf->opts.on_list_page) {
		inf->opts.on_list_page(pages, items, inf->opts.userdata);
	}
}

/* strdup that keeps NULL; false when out of memory. */
static bool dup_opt(char **dst, const char *src) {
	*dst = src ? strdup(src) : NULL;
	return !src || *dst;
}

int kinf_informer_new(const struct kinf_informer_opts *opts,
		struct kinf_informer **ret, struct kinf_error *reterr) {
	struct kinf_informer *inf;

	if (opts->reflector.http && !opts->reflector.path) {
		return kinf_error_set(reterr, KINF_EINVAL, "informer: no collection path");
	}
	inf = calloc(1, sizeof(*inf));
	if (!inf) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	inf->opts = *opts;
	pthread_mutex_init(&inf->lock, NULL);
	pthread_mutex_init(&inf->replay_stats_lock, NULL);
	atomic_init(&inf->stopping, false);
	if (!dup_opt(&inf->path, opts->reflector.path) ||
			!dup_opt(&inf->label_selector, opts->reflector.label_selector) ||
			!dup_opt(&inf->field_selector, opts->reflector.field_selector) ||
			!dup_opt(&inf->api_version, opts->api_version) ||
			!dup_opt(&inf->kind, opts->kind)) {
		goto nomem;
	}
	inf->opts.reflector.path = inf->path;
	inf->opts.reflector.label_selector = inf->label_selector;
	inf->opts.reflector.field_selector = inf->field_selector;
	inf->opts.reflector.on_error = on_reflector_error;
	inf->opts.reflector.on_list_page = on_list_page;
	inf->opts.reflector.userdata = inf;
	inf->opts.api_version = inf->api_version;
	inf->opts.kind = inf->kind;
	inf->idx = kinf_indexer_new();
	inf->fifo = inf->idx ? kinf_deltafifo_new(inf->idx, opts->emit_replaced) : NULL;
	if (!inf->fifo) {
		goto nomem;
	}
	if (opts->reflector.http) {
		inf->reflector = kinf_reflector_new(&inf->opts.reflector, inf->fifo);
		if (!inf->reflector) {
			goto nomem;
		}
	}
	*ret = inf;
	return 0;
nomem:
	kinf_informer_free(inf);
	return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
}

struct kinf_indexer *kinf_informer_indexer(struct kinf_informer *inf) {
	return inf->idx;
}

static bool replay_canceled(void *userdata) {
	struct kinf_informer *inf = userdata;
	return atomic_load(&inf->stopping);
}

static void *replay(void *userdata) {
	struct kinf_informer *inf = userdata;
	inf->replay_rc = kinf_replay_fd(inf->opts.replay_fd, inf->fifo,
			&inf->opts.reflector.limits, inf->opts.labels, inf->opts.fields,
			replay_canceled, inf, &inf->replay_stats, &inf->replay_stats_lock,
			&inf->replay_err);
	if (inf->replay_rc == -KINF_ECANCELED) {
		inf->replay_rc = 0;
	}
	/* End of input: the FIFO drains, then Pop says closed. */
	kinf_deltafifo_close(inf->fifo);
	return NULL;
}

int kinf_informer_start(struct kinf_informer *inf, struct kinf_error *reterr) {
	if (inf->opts.timeout_ms > 0) {
		inf->deadline_ms = kinf_clock_now_ms() + inf->opts.timeout_ms;
	}
	if (inf->reflector) {
		if (kinf_reflector_start(inf->reflector) < 0) {
			return kinf_error_set(reterr, KINF_ENOMEM, "cannot start a thread");
		}
		return 0;
	}
	struct stat st;
	if (fstat(inf->opts.replay_fd, &st) == 0 && S_ISREG(st.st_mode)) {
		/*
		 * A file is read whole before the first Pop, so what the pops
		 * show does not depend on thread timing (golden tests). Pipes
		 * are read as they arrive.
		 */
		replay(inf);
		inf->replay_whole = true;
		return 0;
	}
	if (pthread_create(&inf->replay_thread, NULL, replay, inf) != 0) {
		return kinf_error_set(reterr, KINF_ENOMEM, "cannot start a thread");
	}
	inf->replay_running = true;
	return 0;
}

bool kinf_informer_has_synced(struct kinf_informer *inf) {
	return kinf_deltafifo_has_synced(inf->fifo);
}

/* From next() or stop(), which may run in two threads: join once. */
static void join_replay(struct kinf_informer *inf) {
	pthread_mutex_lock(&inf->lock);
	if (inf->replay_running) {
		pthread_join(inf->replay_thread, NULL);
		inf->replay_running = false;
	}
	pthread_mutex_unlock(&inf->lock);
}

/* How the replay ended (once joined): 0, or its error into reterr. */
static int replay_result(struct kinf_informer *inf, struct kinf_error *reterr) {
	if (inf->replay_rc < 0 && reterr) {
		*reterr = inf->replay_err;
		if (!reterr->message[0]) {
			kinf_error_fill(reterr, -inf->replay_rc, "%s", kinf_strerror(inf->replay_rc));
		}
	}
	return inf->replay_rc < 0 ? inf->replay_rc : 0;
}

/*
 * What ends a wait in Pop without waking it (a reflector that stopped by
 * itself, an empty initial list) is looked at every SLICE_MS.
 */
#define SLICE_MS 200

int kinf_informer_next(struct kinf_informer *inf, int wait_ms,
		struct kinf_informer_batch *ret_batch, struct kinf_deltas **ret_deltas,
		struct kinf_error *reterr) {
	long long end = wait_ms >= 0 ? kinf_clock_now_ms() + wait_ms : 0;

	for (;;) {
		if (atomic_load(&inf->stopping)) {
			return 0;
		}
		if (inf->opts.exit_after_sync && kinf_deltafifo_has_synced(inf->fifo) &&
				kinf_deltafifo_len(inf->fifo) == 0) {
			/*
			 * A recorded file is read whole before the first pop: when
			 * it broke, the answer would lack the rest of it.
			 */
			return inf->replay_whole ? replay_result(inf, reterr) : 0;
		}
		if (inf->reflector && kinf_reflector_stopped(inf->reflector)) {
			pthread_mutex_lock(&inf->lock);
			int rc = inf->fatal_rc;
			if (reterr) {
				*reterr = inf->fatal_err;
			}
			pthread_mutex_unlock(&inf->lock);
			return rc;
		}
		long long now = kinf_clock_now_ms();
		long long wait = SLICE_MS;
		if (inf->deadline_ms) {
			if (inf->deadline_ms <= now) {
				return 0;
			}
			if (inf->deadline_ms - now < wait) {
				wait = inf->deadline_ms - now;
			}
		}
		if (wait_ms >= 0 && end - now < wait) {
			wait = end > now ? end - now : 0;
		}
		int rc = kinf_informer_pop(inf->fifo, inf->idx, (int)wait, ret_batch,
				ret_deltas);
		if (rc == -KINF_ETIMEDOUT) {
			now = kinf_clock_now_ms();
			if (inf->deadline_ms && now >= inf->deadline_ms) {
				return 0;
			}
			if (wait_ms >= 0 && now >= end) {
				return rc;
			}
			continue;
		}
		if (rc == -KINF_ECLOSED) {
			if (atomic_load(&inf->stopping)) {
				return 0;
			}
			join_replay(inf);
			return replay_result(inf, reterr);
		}
		if (rc < 0) {
			return kinf_error_set(reterr, -rc, "informer: %s", kinf_strerror(rc));
		}
		atomic_fetch_add_explicit(&inf->pops, 1, memory_order_relaxed);
		return 1;
	}
}

int kinf_informer_forget_all(struct kinf_informer *inf) {
	return kinf_deltafifo_replace(inf->fifo, NULL, 0);
}

int kinf_informer_drain(struct kinf_informer *inf, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas, struct kinf_error *reterr) {
	int rc = kinf_informer_pop(inf->fifo, inf->idx, 0, ret_batch, ret_deltas);
	if (rc == -KINF_ETIMEDOUT || rc == -KINF_ECLOSED) {
		return 0;
	}
	if (rc < 0) {
		return kinf_error_set(reterr, -rc, "informer: %s", kinf_strerror(rc));
	}
	atomic_fetch_add_explicit(&inf->pops, 1, memory_order_relaxed);
	return 1;
}

int kinf_informer_load(struct kinf_informer *inf, struct kinf_object *const *objs,
		size_t n, struct kinf_error *reterr) {
	struct kinf_informer_batch batch = {0};
	int rc = kinf_deltafifo_replace(inf->fifo, objs, n);
	while (rc == 0 && (rc = kinf_informer_pop(inf->fifo, inf->idx, 0, &batch, NULL)) == 0) {
		kinf_informer_batch_release(&batch);
	}
	if (rc == -KINF_ETIMEDOUT) {
		return 0;
	}
	return kinf_error_set(reterr, -rc, "informer: %s", kinf_strerror(rc));
}

void kinf_informer_stop(struct kinf_informer *inf) {
	atomic_store(&inf->stopping, true);
	/* Wakes a next() waiting in Pop: it sees stopping and returns 0. */
	kinf_deltafifo_close(inf->fifo);
	if (inf->reflector) {
		kinf_reflector_stop(inf->reflector);
	}
	/* Input may still be open (stdin): the thread polls and stops. */
	join_replay(inf);
}

void kinf_informer_free(struct kinf_informer *inf) {
	if (!inf) {
		return;
	}
	if (inf->fifo) {
		kinf_informer_stop(inf);
	}
	kinf_reflector_free(inf->reflector);
	kinf_deltafifo_free(inf->fifo);
	kinf_indexer_free(inf->idx);
	pthread_mutex_destroy(&inf->lock);
	pthread_mutex_destroy(&inf->replay_stats_lock);
	free(inf->path);
	free(inf->label_selector);
	free(inf->field_selector);
	free(inf->api_version);
	free(inf->kind);
	kinf_buf_release(&inf->type_prefix);
	free(inf);
}

void kinf_informer_get_stats(struct kinf_informer *inf,
		struct kinf_informer_stats *ret) {
	pthread_mutex_lock(&inf->replay_stats_lock);
	ret->source = inf->replay_stats;
	pthread_mutex_unlock(&inf->replay_stats_lock);
	if (inf->reflector) {
		kinf_reflector_get_stats(inf->reflector, &ret->source);
	}
	ret->pops = atomic_load_explicit(&inf->pops, memory_order_relaxed);
	ret->cached = kinf_indexer_len(inf->idx);
	ret->queued = inf->fifo ? kinf_deltafifo_len(inf->fifo) : 0;
}

struct kinf_object *kinf_informer_typed(struct kinf_informer *inf,
		struct kinf_object *obj) {
	if (!inf->kind || !inf->api_version) {
		return kinf_object_ref(obj);
	}
	return kinf_object_with_type(obj, inf->api_version, inf->kind);
}

int kinf_informer_append_typed(struct kinf_informer *inf,
		const struct kinf_object *obj, struct kinf_buf *out) {
	size_t len, skip = 0;
	const char *json = kinf_object_json(obj, &len);

	if (inf->kind && inf->api_version && kinf_object_type_prefix(obj,
			inf->api_version, inf->kind, &inf->type_prefix, &skip) < 0) {
		return -KINF_ENOMEM;
	}
	if (skip && kinf_buf_append(out, inf->type_prefix.data, inf->type_prefix.len) < 0) {
		return -KINF_ENOMEM;
	}
	return kinf_buf_append(out, json + skip, len - skip);
}
