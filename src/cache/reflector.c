#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bytepipe.h"
#include "clock.h"
#include "deltafifo.h"
#include "http.h"
#include "indexer.h"
#include "list.h"
#include "log.h"
#include "reflector.h"
#include "urlquery.h"
#include "watchstream.h"

/* reflector.go: defaultBackoffInit, defaultBackoffMax, defaultBackoffReset. */
#define BACKOFF_INIT_MS 800
#define BACKOFF_MAX_MS 30000
#define BACKOFF_RESET_MS 120000
/* defaultMinWatchTimeout; the maximum is twice it. */
#define MIN_WATCH_TIMEOUT_S 300

struct kinf_reflector {
	struct kinf_reflector_opts opts;
	struct kinf_deltafifo *fifo;
	pthread_t thread;
	pthread_t resync_thread;
	bool running;
	bool resync_running;
	atomic_bool stop;
	atomic_bool stopped_by_itself;
	pthread_mutex_t lock;		/* guards everything below and wakes sleeps */
	pthread_cond_t wake;
	char *last_sync_rv;		/* "" until the first list */
	size_t rv_cap;			/* its allocation */
	bool rv_unavailable;		/* relist at "" (isLastSyncResourceVersionUnavailable) */
	bool paginated_result;		/* an RV=0 list came back paginated */
	bool synced;			/* the first list (or initial events) is in */
	struct kinf_reflector_stats stats;
	/* backoff manager */
	long backoff_ms;
	long long last_backoff_ms;	/* kinf_clock_now_ms() */
	unsigned rand_state;
};

static bool canceled(void *userdata) {
	struct kinf_reflector *r = userdata;
	return atomic_load(&r->stop);
}

/* Store rv as last_sync_rv; the caller holds r->lock. */
static void set_rv_locked(struct kinf_reflector *r, const char *rv) {
	if (!rv || !rv[0] || strcmp(r->last_sync_rv, rv) == 0) {
		return;
	}
	/* In place when it fits: every watch event brings a new one. */
	size_t n = strlen(rv) + 1;
	if (n > r->rv_cap) {
		char *copy = realloc(r->last_sync_rv, n);
		if (!copy) {
			return;
		}
		r->last_sync_rv = copy;
		r->rv_cap = n;
	}
	memcpy(r->last_sync_rv, rv, n);
}

static void set_rv(struct kinf_reflector *r, const char *rv) {
	pthread_mutex_lock(&r->lock);
	set_rv_locked(r, rv);
	pthread_mutex_unlock(&r->lock);
}

static char *get_rv(struct kinf_reflector *r) {
	pthread_mutex_lock(&r->lock);
	char *rv = strdup(r->last_sync_rv);
	pthread_mutex_unlock(&r->lock);
	return rv;
}

#define STAT_INC(r, field) do { \
		pthread_mutex_lock(&(r)->lock); \
		(r)->stats.field++; \
		pthread_mutex_unlock(&(r)->lock); \
	} while (0)

/* Sleep up to ms, waking early when stopped. Returns false when stopped. */
static bool sleep_ms(struct kinf_reflector *r, long ms) {
	struct timespec until;
	kinf_clock_deadline(&until, ms);
	pthread_mutex_lock(&r->lock);
	while (!atomic_load(&r->stop)) {
		if (pthread_cond_timedwait(&r->wake, &r->lock, &until) == ETIMEDOUT) {
			break;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return !atomic_load(&r->stop);
}

/*
 * client-go's exponential backoff manager with jitter 1.0: each delay is
 * d + rand * d, d doubling from 800 ms to 30 s, back to 800 ms when no
 * backoff was needed for 2 minutes (or as the options say).
 */
static bool backoff(struct kinf_reflector *r, const char *why) {
	long init = r->opts.backoff_init_ms > 0 ? r->opts.backoff_init_ms : BACKOFF_INIT_MS;
	long max = r->opts.backoff_max_ms > 0 ? r->opts.backoff_max_ms : BACKOFF_MAX_MS;
	long reset = r->opts.backoff_reset_ms > 0 ? r->opts.backoff_reset_ms : BACKOFF_RESET_MS;
	long long now = kinf_clock_now_ms();
	long long since = now - r->last_backoff_ms;
	if (r->backoff_ms == 0 || since > reset) {
		r->backoff_ms = init;
	} else {
		r->backoff_ms *= 2;
		if (r->backoff_ms > max) {
			r->backoff_ms = max;
		}
	}
	r->last_backoff_ms = now;
	double jitter = (double)rand_r(&r->rand_state) / RAND_MAX;
	long wait = r->backoff_ms + (long)(jitter * (double)r->backoff_ms);
	STAT_INC(r, backoffs);
	kinf_log(1, "%s; retrying in %ld ms", why, wait);
	return sleep_ms(r, wait);
}

static bool is_too_large_rv(const struct kinf_error *err) {
	return strcmp(err->cause, "ResourceVersionTooLarge") == 0 ||
		strstr(err->message, "Too large resource version") != NULL;
}

static bool is_expired(int rc, const struct kinf_error *err) {
	return rc == -KINF_EGONE || err->http_status == 410 ||
		strcmp(err->reason, "Expired") == 0 || strcmp(err->reason, "Gone") == 0;
}

/* List phase ----------------------------------------------------------- */

static void list_page(unsigned pages, size_t items, void *userdata) {
	struct kinf_reflector *r = userdata;
	STAT_INC(r, pages);
	if (r->opts.on_list_page) {
		r->opts.on_list_page(pages, items, r->opts.userdata);
	}
}

/* relistResourceVersion(): "" when unavailable, "0" first, else the last. */
static char *relist_rv(struct kinf_reflector *r) {
	pthread_mutex_lock(&r->lock);
	const char *rv = r->rv_unavailable ? "" :
		r->last_sync_rv[0] ? r->last_sync_rv : "0";
	char *copy = strdup(rv);
	pthread_mutex_unlock(&r->lock);
	return copy;
}

static int do_list(struct kinf_reflector *r, struct kinf_error *err) {
	struct kinf_list_result res;
	char *rv = relist_rv(r);
	int rc;

	if (!rv) {
		return -KINF_ENOMEM;
	}
	for (;;) {
		/*
		 * Page size as the reflector picks it: paging for "" and "0"
		 * (and after a paginated RV=0 answer); none at a specific RV so
		 * the watch cache can serve it, unless asked for (page_always).
		 */
		long limit = r->opts.page_size;
		if (rv[0] && strcmp(rv, "0") != 0 && !r->paginated_result &&
				!r->opts.page_always) {
			limit = 0;
		}
		struct kinf_list_opts lo = {
			.path = r->opts.path,
			.label_selector = r->opts.label_selector,
			.field_selector = r->opts.field_selector,
			.resource_version = rv,
			.limit = limit,
			.limits = r->opts.limits,
			.on_page = list_page,
			.userdata = r,
		};
		kinf_log(1, "list %s (resourceVersion=\"%s\", limit=%ld)", r->opts.path, rv, limit);
		kinf_error_clear(err);
		rc = kinf_list(r->opts.http, &lo, &res, err);
		if (rc < 0 && rv[0] && (is_expired(rc, err) || is_too_large_rv(err))) {
			/* The RV is gone or too new: relist at "" (a consistent read). */
			STAT_INC(r, expired);
			kinf_log(1, "list at resourceVersion %s failed (%s); relisting at \"\"",
					rv, err->message);
			pthread_mutex_lock(&r->lock);
			r->rv_unavailable = true;
			pthread_mutex_unlock(&r->lock);
			free(rv);
			rv = strdup("");
			if (!rv) {
				return -KINF_ENOMEM;
			}
			continue;
		}
		break;
	}
	if (rc < 0) {
		free(rv);
		return rc;
	}
	if (strcmp(rv, "0") == 0 && res.pages > 1) {
		r->paginated_result = true;
	}
	free(rv);
	kinf_log(1, "listed %zu items in %u pages at resourceVersion %s%s", res.items.n,
			res.pages, res.resource_version,
			res.fell_back_to_full_list ? " (continue token expired: full list)" : "");
	rc = kinf_deltafifo_replace(r->fifo, res.items.v, res.items.n);
	if (rc == 0) {
		pthread_mutex_lock(&r->lock);
		r->rv_unavailable = false;
		if (r->stats.lists++ > 0) {
			r->stats.relists++;
		}
		r->stats.items_listed += res.items.n;
		r->synced = true;
		pthread_mutex_unlock(&r->lock);
		set_rv(r, res.resource_version);
	}
	kinf_list_result_release(&res);
	return rc;
}

/* Watch phase ---------------------------------------------------------- */

struct watch_state {
	struct kinf_reflector *r;
	struct kinf_watch_decoder *decoder;
	struct kinf_error status;	/* from an ERROR event */
	bool got_error_event;
	unsigned long events;		/* ADDED, MODIFIED, DELETED */
	unsigned long items;		/* every event, bookmarks too (client-go's eventCount) */
	/* streaming initial list */
	struct kinf_indexer *initial;	/* temporary store, or NULL once done */
	struct kinf_error *err;		/* the caller's */
	struct kinf_error *event_err;	/* where the piece being decoded fails */
	/* decoding in a second thread once the stream is busy */
	size_t received;
	bool pipe_refused;		/* no thread to be had: decode here */
	struct kinf_bytepipe *pipe;
};

static int on_event(const struct kinf_watch_event *ev, void *userdata) {
	struct watch_state *ws = userdata;
	struct kinf_reflector *r = ws->r;
	int rc = 0;

	ws->items++;
	switch (ev->type) {
	case KINF_WATCH_ADDED:
	case KINF_WATCH_MODIFIED:
	case KINF_WATCH_DELETED:
		ws->events++;
		if (ws->initial) {
			STAT_INC(r, events);
			/* Initial events go into a temporary store until the bookmark. */
			rc = ev->type == KINF_WATCH_DELETED ?
				kinf_indexer_delete(ws->initial, kinf_object_key(ev->obj)) :
				kinf_indexer_add(ws->initial, ev->obj);
			size_t max = r->opts.limits.max_list_items ?
				r->opts.limits.max_list_items : KINF_LIST_DEFAULT_MAX_ITEMS;
			if (rc == 0 && ev->type == KINF_WATCH_ADDED &&
					kinf_indexer_len(ws->initial) > max) {
				/* As a list's bound: the initial events are one. */
				kinf_error_clear(ws->event_err);
				return kinf_error_set(ws->event_err, KINF_ETOOBIG, "the initial "
						"events hold more than %zu objects (--max-list-items)", max);
			}
			return rc;
		}
		rc = ev->type == KINF_WATCH_ADDED ? kinf_deltafifo_add(r->fifo, ev->obj) :
			ev->type == KINF_WATCH_MODIFIED ? kinf_deltafifo_update(r->fifo, ev->obj) :
			kinf_deltafifo_delete(r->fifo, ev->obj);
		/* One lock for the counter and the resourceVersion. */
		pthread_mutex_lock(&r->lock);
		r->stats.events++;
		if (rc == 0) {
			set_rv_locked(r, ev->resource_version);
		}
		pthread_mutex_unlock(&r->lock);
		return rc;
	case KINF_WATCH_BOOKMARK:
		STAT_INC(r, bookmarks);
		if (ws->initial && ev->initial_events_end) {
			struct kinf_object_list list = {0};
			rc = kinf_indexer_list(ws->initial, &list);
			if (rc == 0) {
				rc = kinf_deltafifo_replace(r->fifo, list.v, list.n);
			}
			kinf_log(1, "initial events ended at resourceVersion %s: %zu objects",
					ev->resource_version, list.n);
			kinf_object_list_release(&list);
			kinf_indexer_free(ws->initial);
			ws->initial = NULL;
			if (rc == 0) {
				pthread_mutex_lock(&r->lock);
				r->rv_unavailable = false;
				if (r->stats.lists++ > 0) {
					r->stats.relists++;
				}
				r->synced = true;
				pthread_mutex_unlock(&r->lock);
			}
		} else if (!ws->initial) {
			kinf_log(3, "bookmark at resourceVersion %s", ev->resource_version);
		}
		if (rc == 0 && !ws->initial) {
			set_rv(r, ev->resource_version);
		}
		return rc;
	case KINF_WATCH_ERROR:
		ws->status = ev->status;
		ws->got_error_event = true;
		return ev->status.http_status == 410 ? -KINF_EGONE : -KINF_EHTTP;
	case KINF_WATCH_LIST:
		return kinf_error_set(ws->event_err, KINF_EJSON, "a List in a watch stream");
	}
	return 0;
}

/* Decode a piece of the stream, here (err the caller's) or in the pipe's thread. */
static int decode_piece(const char *data, size_t len, void *userdata,
		struct kinf_error *err) {
	struct watch_state *ws = userdata;
	ws->event_err = err;
	/*
	 * The events of one piece wake a waiting Pop once, at the end: a
	 * consumer that keeps up was otherwise woken (a futex call and a
	 * context switch on each side) for every event.
	 */
	kinf_deltafifo_batch_begin(ws->r->fifo);
	int rc = kinf_watch_decoder_feed(ws->decoder, data, len, err);
	kinf_deltafifo_batch_end(ws->r->fifo);
	return rc;
}

static void wake_receiver(void *userdata) {
	struct watch_state *ws = userdata;
	kinf_http_interrupt(ws->r->opts.http);
}

static int pipe_failed(void *userdata) {
	struct watch_state *ws = userdata;
	return ws->pipe ? kinf_bytepipe_failed(ws->pipe) : 0;
}

/*
 * A stream that has brought PIPE_AFTER_BYTES is busy (a sync by watch-list,
 * a burst of events): from then on this thread only receives (the socket,
 * TLS) and a second one decodes, validates and queues, in order, instead
 * of one thread doing both in turn (watch throughput 1.3x). A quiet watch
 * never gets there and costs no thread.
 */
#define PIPE_AFTER_BYTES ((size_t)1 << 20)

static int on_watch_body(const char *data, size_t len, void *userdata) {
	struct watch_state *ws = userdata;

	if (ws->pipe) {
		return kinf_bytepipe_write(ws->pipe, data, len);
	}
	ws->received += len;
	if (ws->received > PIPE_AFTER_BYTES && !ws->pipe_refused) {
		struct kinf_bytepipe_opts opts = {
			.consume = decode_piece,
			.userdata = ws,
			.on_fail = wake_receiver,
		};
		/* From now on only the pipe's thread decodes. */
		ws->pipe = kinf_bytepipe_start(&opts);
		if (ws->pipe) {
			return kinf_bytepipe_write(ws->pipe, data, len);
		}
		ws->pipe_refused = true;
	}
	return decode_piece(data, len, ws, ws->err);
}

/*
 * The transfer ended: let the decoding thread finish what arrived (or drop
 * it when stopping). Its failure came first in the stream, so it wins over
 * whatever ended the transfer, as when one thread did both.
 */
static int pipe_finish(struct watch_state *ws, int rc, struct kinf_error *err) {
	if (!ws->pipe) {
		return rc;
	}
	bool stopping = atomic_load(&ws->r->stop);
	struct kinf_error pipe_err = {0};
	int pipe_rc = kinf_bytepipe_finish(ws->pipe, !stopping, &pipe_err);
	ws->pipe = NULL;
	if (pipe_rc < 0 && !stopping) {
		*err = pipe_err;
		return pipe_rc;
	}
	return rc;
}

enum watch_outcome {
	WATCH_CLOSED,		/* closed normally: re-watch */
	WATCH_REWATCH_BACKOFF,	/* 429, refused, broken stream: back off, re-watch */
	WATCH_RELIST,		/* 410 or another error: back to the list */
	WATCH_FALLBACK,		/* streaming list refused: list instead */
	WATCH_STOP,
};

static long watch_timeout(struct kinf_reflector *r) {
	if (r->opts.watch_timeout_s > 0) {
		return r->opts.watch_timeout_s;
	}
	double f = (double)rand_r(&r->rand_state) / ((double)RAND_MAX + 1);
	return MIN_WATCH_TIMEOUT_S + (long)(f * MIN_WATCH_TIMEOUT_S);
}

/*
 * One watch request. With initial set, it is a streaming list
 * (sendInitialEvents) whose first events fill a temporary store.
 */
static enum watch_outcome watch_once(struct kinf_reflector *r, bool initial,
		int *ret_rc, struct kinf_error *err) {
	struct watch_state ws = { .r = r, .err = err };
	struct kinf_buf path = {0};
	char *rv = NULL;
	enum watch_outcome outcome;
	int rc;

	if (initial) {
		pthread_mutex_lock(&r->lock);
		rv = strdup(r->rv_unavailable ? "" : r->last_sync_rv);
		pthread_mutex_unlock(&r->lock);
		ws.initial = kinf_indexer_new();
	} else {
		rv = get_rv(r);
	}
	ws.decoder = kinf_watch_decoder_new(on_event, &ws, &r->opts.limits);
	if (ws.decoder) {
		kinf_watch_decoder_set_line_mode(ws.decoder, true);
	}
	if (!rv || !ws.decoder || (initial && !ws.initial)) {
		*ret_rc = -KINF_ENOMEM;
		outcome = WATCH_STOP;
		goto out;
	}
	long timeout = watch_timeout(r);
	struct kinf_urlquery q;
	kinf_urlquery_start(&q, &path, r->opts.path);
	kinf_urlquery_add(&q, "watch", "1");
	kinf_urlquery_add(&q, "allowWatchBookmarks", "true");
	kinf_urlquery_add_long(&q, "timeoutSeconds", timeout);
	kinf_urlquery_add(&q, "resourceVersion", rv);
	if (initial) {
		kinf_urlquery_add(&q, "sendInitialEvents", "true");
		kinf_urlquery_add(&q, "resourceVersionMatch", "NotOlderThan");
	}
	kinf_urlquery_add(&q, "labelSelector", r->opts.label_selector);
	kinf_urlquery_add(&q, "fieldSelector", r->opts.field_selector);
	if (kinf_urlquery_finish(&q) < 0) {
		*ret_rc = -KINF_ENOMEM;
		outcome = WATCH_STOP;
		goto out;
	}
	STAT_INC(r, watches);
	kinf_log(1, "%s %s from resourceVersion \"%s\" (timeout %ld s)",
			initial ? "watch-list" : "watch", r->opts.path, rv, timeout);
	struct kinf_http_request req = {
		.path = path.data,
		.on_body = on_watch_body,
		.aborted = pipe_failed,
		.userdata = &ws,
		.watch = true,
		/* Our own deadline a little after the server's. */
		.timeout_ms = (timeout + 30) * 1000,
	};
	kinf_error_clear(err);
	long long started = kinf_clock_now_ms();
	rc = kinf_http_get(r->opts.http, &req, NULL, err);
	rc = pipe_finish(&ws, rc, err);
	*ret_rc = rc;
	if (atomic_load(&r->stop)) {
		outcome = WATCH_STOP;
		goto out;
	}
	if (ws.got_error_event) {
		*err = ws.status;
		rc = *ret_rc = ws.status.http_status == 410 ? -KINF_EGONE : -KINF_EHTTP;
	}
	if (rc == 0) {
		if (kinf_watch_decoder_partial(ws.decoder)) {
			/* Closed in the middle of an event: the stream broke. */
			kinf_error_fill(err, KINF_ECONNECT, "watch stream ended in the middle of an event");
			*ret_rc = -KINF_ECONNECT;
			outcome = initial && ws.initial ? WATCH_FALLBACK : WATCH_REWATCH_BACKOFF;
		} else if (initial && ws.initial) {
			/* Closed before the initial events ended: try again from a list. */
			kinf_error_fill(err, KINF_ECONNECT, "watch closed before the initial events ended");
			outcome = WATCH_FALLBACK;
		} else if (ws.items == 0 && kinf_clock_now_ms() - started < 1000) {
			/*
			 * client-go's "very short watch": a stream that ends within
			 * a second with nothing in it (a server shutting down, a
			 * proxy) is an error. Re-watching at once would spin; relist
			 * after a backoff instead.
			 */
			kinf_error_fill(err, KINF_ECONNECT, "very short watch: the watch ended after "
					"less than a second and no items received");
			*ret_rc = -KINF_ECONNECT;
			outcome = WATCH_RELIST;
		} else {
			kinf_log(1, "watch closed after %ld s with %lu events; re-watching",
					(long)((kinf_clock_now_ms() - started) / 1000), ws.events);
			outcome = WATCH_CLOSED;
		}
		goto out;
	}
	if (is_expired(rc, err) || is_too_large_rv(err)) {
		STAT_INC(r, expired);
		kinf_log(1, "watch: %s; relisting", err->message);
		if (initial) {
			pthread_mutex_lock(&r->lock);
			r->rv_unavailable = true;
			pthread_mutex_unlock(&r->lock);
		}
		outcome = WATCH_RELIST;
		goto out;
	}
	if (initial && ws.initial) {
		/* Refused (an old server, the WatchList gate off) or broken: list. */
		outcome = WATCH_FALLBACK;
		goto out;
	}
	if (rc == -KINF_ETIMEDOUT && !err->http_status) {
		/*
		 * Nothing arrived for --idle-timeout (no events, no bookmarks):
		 * the connection may be dead. Open a new watch from the last RV.
		 */
		kinf_log(1, "watch idle: %s; re-watching", err->message);
		outcome = WATCH_CLOSED;
		goto out;
	}
	if (err->http_status == 429 || rc == -KINF_ECONNECT || rc == -KINF_ETIMEDOUT ||
			rc == -KINF_EJSON || err->http_status == 500 || err->http_status == 503) {
		/*
		 * isWatchErrorRetriable (refused, 429) and stream breakage
		 * (unexpected EOF, undecodable event: InternalError): keep
		 * the cache, back off, watch again from the last RV.
		 */
		outcome = WATCH_REWATCH_BACKOFF;
		goto out;
	}
	outcome = WATCH_RELIST;
out:
	kinf_indexer_free(ws.initial);
	kinf_watch_decoder_free(ws.decoder);
	kinf_buf_release(&path);
	free(rv);
	return outcome;
}

/* One ListAndWatch: returns when a relist is due (0) or on failure (<0). */
static int list_and_watch(struct kinf_reflector *r, struct kinf_error *err) {
	int rc = 0;
	bool listed = false;

	if (r->opts.watch_list) {
		enum watch_outcome o = watch_once(r, true, &rc, err);
		if (o == WATCH_STOP) {
			return rc;
		}
		if (o == WATCH_FALLBACK) {
			STAT_INC(r, watch_list_fallbacks);
			kinf_log(1, "streaming list failed (%s); falling back to a regular list",
					err->message[0] ? err->message : kinf_strerror(rc));
		} else if (o == WATCH_RELIST) {
			return is_expired(rc, err) ? 0 : rc;
		} else {
			listed = true;	/* initial events are in; keep watching */
			if (o == WATCH_REWATCH_BACKOFF && !backoff(r, "watch failed")) {
				return 0;
			}
		}
	}
	if (!listed) {
		if ((rc = do_list(r, err)) < 0) {
			return rc;
		}
	}
	while (!atomic_load(&r->stop)) {
		enum watch_outcome o = watch_once(r, false, &rc, err);
		switch (o) {
		case WATCH_STOP:
			return 0;
		case WATCH_CLOSED:
			continue;
		case WATCH_REWATCH_BACKOFF:
			STAT_INC(r, errors);
			if (r->opts.on_error && r->opts.on_error(rc, err, true, r->opts.userdata)) {
				atomic_store(&r->stopped_by_itself, true);
				atomic_store(&r->stop, true);
				return rc;
			}
			if (!backoff(r, err->message[0] ? err->message : "watch failed")) {
				return 0;
			}
			continue;
		case WATCH_RELIST:
		case WATCH_FALLBACK:
			/* An expired watch is not an error: relist (at the last RV). */
			return is_expired(rc, err) ? 0 : (rc < 0 ? rc : -KINF_EHTTP);
		}
	}
	return 0;
}

static void *run(void *userdata) {
	struct kinf_reflector *r = userdata;
	struct kinf_error err;

	while (!atomic_load(&r->stop)) {
		kinf_error_clear(&err);
		int rc = list_and_watch(r, &err);
		if (atomic_load(&r->stop)) {
			break;
		}
		if (rc < 0) {
			STAT_INC(r, errors);
			pthread_mutex_lock(&r->lock);
			bool synced = r->synced;
			pthread_mutex_unlock(&r->lock);
			if (r->opts.on_error && r->opts.on_error(rc, &err, synced, r->opts.userdata)) {
				atomic_store(&r->stopped_by_itself, true);
				atomic_store(&r->stop, true);
				break;
			}
		}
		/* Run() waits one backoff delay after every ListAndWatch. */
		if (!backoff(r, rc < 0 ? (err.message[0] ? err.message : kinf_strerror(rc)) :
				"relist due")) {
			break;
		}
	}
	return NULL;
}

static void *run_resync(void *userdata) {
	struct kinf_reflector *r = userdata;
	while (sleep_ms(r, r->opts.resync_ms)) {
		kinf_log(1, "resync");
		STAT_INC(r, resyncs);
		/*
		 * Never dropped: a resync memory ran out in is tried again soon
		 * (the keys it did queue have deltas now, and Resync skips those).
		 */
		while (kinf_deltafifo_resync(r->fifo) < 0) {
			STAT_INC(r, errors);
			kinf_log(1, "resync: out of memory; trying again");
			if (!sleep_ms(r, r->opts.resync_ms < 1000 ? r->opts.resync_ms : 1000)) {
				return NULL;
			}
		}
	}
	return NULL;
}

struct kinf_reflector *kinf_reflector_new(const struct kinf_reflector_opts *opts,
		struct kinf_deltafifo *fifo) {
	struct kinf_reflector *r = calloc(1, sizeof(*r));
	if (!r) {
		return NULL;
	}
	r->last_sync_rv = strdup("");
	if (!r->last_sync_rv || kinf_clock_cond_init(&r->wake) != 0) {
		free(r->last_sync_rv);
		free(r);
		return NULL;
	}
	r->opts = *opts;
	r->fifo = fifo;
	r->rv_cap = 1;
	r->rand_state = (unsigned)time(NULL) ^ (unsigned)getpid();
	pthread_mutex_init(&r->lock, NULL);
	atomic_init(&r->stop, false);
	atomic_init(&r->stopped_by_itself, false);
	kinf_http_set_cancel(opts->http, canceled, r);
	return r;
}

int kinf_reflector_start(struct kinf_reflector *r) {
	if (pthread_create(&r->thread, NULL, run, r) != 0) {
		return -KINF_ENOMEM;
	}
	r->running = true;
	if (r->opts.resync_ms > 0) {
		if (pthread_create(&r->resync_thread, NULL, run_resync, r) != 0) {
			kinf_reflector_stop(r);
			return -KINF_ENOMEM;
		}
		r->resync_running = true;
	}
	return 0;
}

void kinf_reflector_stop(struct kinf_reflector *r) {
	pthread_mutex_lock(&r->lock);
	atomic_store(&r->stop, true);
	pthread_cond_broadcast(&r->wake);
	pthread_mutex_unlock(&r->lock);
	/* A watch waiting for data notices at once, not at curl's next tick. */
	kinf_http_interrupt(r->opts.http);
	if (r->running) {
		pthread_join(r->thread, NULL);
		r->running = false;
	}
	if (r->resync_running) {
		pthread_join(r->resync_thread, NULL);
		r->resync_running = false;
	}
}

void kinf_reflector_free(struct kinf_reflector *r) {
	if (!r) {
		return;
	}
	kinf_reflector_stop(r);
	kinf_http_set_cancel(r->opts.http, NULL, NULL);
	pthread_cond_destroy(&r->wake);
	pthread_mutex_destroy(&r->lock);
	free(r->last_sync_rv);
	free(r);
}

bool kinf_reflector_stopped(struct kinf_reflector *r) {
	return atomic_load(&r->stopped_by_itself);
}

void kinf_reflector_get_stats(struct kinf_reflector *r,
		struct kinf_reflector_stats *ret) {
	pthread_mutex_lock(&r->lock);
	*ret = r->stats;
	pthread_mutex_unlock(&r->lock);
}

char *kinf_reflector_last_sync_rv(struct kinf_reflector *r) {
	return get_rv(r);
}
