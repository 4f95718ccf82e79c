#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltafifo.h"
#include "log.h"
#include "replay.h"
#include "selector.h"
#include "watchstream.h"

struct replay_state {
	struct kinf_deltafifo *fifo;
	struct kinf_reflector_stats *stats;
	pthread_mutex_t *stats_lock;	/* or NULL */
	const struct kinf_selector *labels;
	const struct kinf_selector *fields;
};

/* 1, 0, or -KINF_ENOMEM (as kinf_selector_match). */
static int selected(const struct replay_state *rs, const struct kinf_object *obj) {
	int m = kinf_selector_match(rs->labels, obj);
	return m <= 0 ? m : kinf_selector_match(rs->fields, obj);
}

/* What an event adds to the counters, in one place for stats_lock. */
static void count(struct replay_state *rs, const struct kinf_watch_event *ev) {
	struct kinf_reflector_stats *st = rs->stats;
	if (rs->stats_lock) {
		pthread_mutex_lock(rs->stats_lock);
	}
	switch (ev->type) {
	case KINF_WATCH_LIST:
		st->lists++;
		st->items_listed += ev->items.n;
		break;
	case KINF_WATCH_ADDED:
	case KINF_WATCH_MODIFIED:
	case KINF_WATCH_DELETED:
		st->events++;
		break;
	case KINF_WATCH_BOOKMARK:
		st->bookmarks++;
		break;
	case KINF_WATCH_ERROR:
		st->expired += ev->status.http_status == 410;
		st->errors++;
		break;
	}
	if (rs->stats_lock) {
		pthread_mutex_unlock(rs->stats_lock);
	}
}

static int on_replay_event(const struct kinf_watch_event *ev, void *userdata) {
	struct replay_state *rs = userdata;
	count(rs, ev);
	switch (ev->type) {
	case KINF_WATCH_LIST: {
		struct kinf_object **kept = malloc((ev->items.n + 1) * sizeof(*kept));
		size_t n = 0;
		if (!kept) {
			return -KINF_ENOMEM;
		}
		int rc = 0;
		for (size_t i = 0; rc == 0 && i < ev->items.n; i++) {
			int m = selected(rs, ev->items.v[i]);
			if (m < 0) {
				rc = m;
			} else if (m) {
				kept[n++] = ev->items.v[i];
			}
		}
		if (rc == 0) {
			rc = kinf_deltafifo_replace(rs->fifo, kept, n);
		}
		free(kept);
		return rc;
	}
	case KINF_WATCH_ADDED: {
		int m = selected(rs, ev->obj);
		return m <= 0 ? m : kinf_deltafifo_add(rs->fifo, ev->obj);
	}
	case KINF_WATCH_MODIFIED: {
		/* An object that stops matching leaves the cache, as on the server. */
		int m = selected(rs, ev->obj);
		return m < 0 ? m : m ? kinf_deltafifo_update(rs->fifo, ev->obj) :
			kinf_deltafifo_delete(rs->fifo, ev->obj);
	}
	case KINF_WATCH_DELETED:
		return kinf_deltafifo_delete(rs->fifo, ev->obj);
	case KINF_WATCH_BOOKMARK:
		return 0;
	case KINF_WATCH_ERROR:
		/* A recorded stream that broke: the next List is the relist. */
		kinf_log(1, "recorded ERROR event: %s", ev->status.message);
		return 0;
	}
	return 0;
}

int kinf_replay_fd(int fd, struct kinf_deltafifo *fifo,
		const struct kinf_object_limits *limits,
		const struct kinf_selector *labels, const struct kinf_selector *fields,
		bool (*stop_requested)(void *userdata), void *userdata,
		struct kinf_reflector_stats *stats, pthread_mutex_t *stats_lock,
		struct kinf_error *reterr) {
	struct replay_state rs = { .fifo = fifo, .stats = stats, .stats_lock = stats_lock,
		.labels = labels, .fields = fields };
	struct kinf_watch_decoder *d = kinf_watch_decoder_new(on_replay_event, &rs, limits);
	char buf[65536];
	int rc = 0;

	if (!d) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	for (;;) {
		if (stop_requested) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int ready = poll(&p, 1, 200);
			if (stop_requested(userdata)) {
				rc = -KINF_ECANCELED;
				break;
			}
			if (ready == 0 || (ready < 0 && errno == EINTR)) {
				continue;
			}
		}
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			rc = kinf_error_set(reterr, KINF_EIO, "read: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			if (kinf_watch_decoder_partial(d)) {
				rc = kinf_error_set(reterr, KINF_EJSON,
						"event %lu: truncated at end of input",
						kinf_watch_decoder_count(d) + 1);
			}
			break;
		}
		if ((rc = kinf_watch_decoder_feed(d, buf, (size_t)n, reterr)) < 0) {
			break;
		}
	}
	kinf_watch_decoder_free(d);
	return rc;
}
