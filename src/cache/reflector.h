#ifndef KINF_REFLECTOR_H
#define KINF_REFLECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "object.h"

struct kinf_http;
struct kinf_deltafifo;

/*
 * client-go's Reflector (tools/cache/reflector.go) for one collection: list,
 * then watch from the list's resourceVersion with bookmarks; re-watch from
 * the last resourceVersion when a stream closes; relist after a 410 Gone
 * (HTTP or in-stream ERROR), at "" if that relist is expired too; backoff
 * 800 ms doubling to 30 s with jitter, reset after 2 minutes of health;
 * optional streaming initial list (sendInitialEvents) with fallback; a
 * resync timer. Everything it learns goes into the DeltaFIFO. It runs in
 * its own thread and owns the HTTP client while it runs.
 */
struct kinf_reflector;

struct kinf_reflector_opts {
	struct kinf_http *http;
	const char *path;		/* collection path, without query */
	const char *label_selector;	/* or NULL */
	const char *field_selector;	/* or NULL */
	long page_size;			/* 0: no paging */
	/*
	 * Page every list, one at a known resourceVersion too, as client-go's
	 * reflector with WatchListPageSize set (--chunk-size given); else
	 * such a list is asked for whole, so the watch cache can answer it.
	 */
	bool page_always;
	bool watch_list;		/* try sendInitialEvents first */
	long resync_ms;			/* 0: no resync */
	long watch_timeout_s;		/* 0: random in [300, 600) as client-go */
	/*
	 * The backoff between failed attempts (the backoff manager a
	 * client-go caller may give NewReflectorWithOptions): the first
	 * delay, the longest, and how long without one puts it back to the
	 * first; each delay gets up to as much again as jitter. 0: client-go's
	 * 800 ms, 30 s and 2 minutes.
	 */
	long backoff_init_ms;
	long backoff_max_ms;
	long backoff_reset_ms;
	struct kinf_object_limits limits;
	/*
	 * Called from the reflector thread after each failed ListAndWatch
	 * attempt, with synced telling whether the first list has completed.
	 * Return true to stop the reflector (a fatal error for the program).
	 */
	bool (*on_error)(int rc, const struct kinf_error *err, bool synced,
			void *userdata);
	/* List progress (pages, items so far), from the reflector thread. */
	void (*on_list_page)(unsigned pages, size_t items, void *userdata);
	void *userdata;
};

struct kinf_reflector_stats {
	unsigned long lists;		/* list phases completed */
	unsigned long relists;		/* lists after the first */
	unsigned long pages;
	unsigned long items_listed;
	unsigned long watches;		/* watch requests opened */
	unsigned long events;		/* ADDED/MODIFIED/DELETED received */
	unsigned long bookmarks;
	unsigned long expired;		/* 410 Gone seen */
	unsigned long errors;		/* failed attempts of any kind */
	unsigned long backoffs;
	unsigned long resyncs;
	unsigned long watch_list_fallbacks;
};

/* opts (and the strings in it) must outlive the reflector. */
struct kinf_reflector *kinf_reflector_new(const struct kinf_reflector_opts *opts,
		struct kinf_deltafifo *fifo);
/* Start the thread (and the resync thread). 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_reflector_start(struct kinf_reflector *r);
/* Ask the threads to stop, abort transfers and wait for them. */
void kinf_reflector_stop(struct kinf_reflector *r);
/* Stop (if running) and free. NULL is fine. */
void kinf_reflector_free(struct kinf_reflector *r);
/* True once the reflector stopped by itself (on_error returned true). */
bool kinf_reflector_stopped(struct kinf_reflector *r);
/* A copy of the counters. */
void kinf_reflector_get_stats(struct kinf_reflector *r,
		struct kinf_reflector_stats *ret);
/* The last synced resourceVersion (caller frees). */
char *kinf_reflector_last_sync_rv(struct kinf_reflector *r);

#endif
