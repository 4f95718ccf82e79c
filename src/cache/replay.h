#ifndef KINF_REPLAY_H
#define KINF_REPLAY_H

#include <pthread.h>

#include <stdbool.h>

#include "err.h"
#include "object.h"
#include "reflector.h"

struct kinf_deltafifo;
struct kinf_selector;

/*
 * Feed a recorded stream (Lists and watch events, see watchstream.h) from
 * fd into fifo, as a reflector would (kinf watch --from): a List is a
 * Replace, events are Add/Update/Delete, bookmarks and ERROR events are
 * noted in stats. With selectors (NULL: none) objects are filtered as the
 * server would: an object that stops matching is deleted. Returns at end
 * of input, 0 or the first decode error, or -KINF_ECANCELED soon after
 * stop_requested (may be NULL) says so: fd is polled, so a pipe that stays
 * open does not block the caller's shutdown. stats is written under
 * stats_lock (NULL: no other thread reads it before this returns).
 */
KINF_MUST_CHECK int kinf_replay_fd(int fd, struct kinf_deltafifo *fifo,
		const struct kinf_object_limits *limits,
		const struct kinf_selector *labels, const struct kinf_selector *fields,
		bool (*stop_requested)(void *userdata), void *userdata,
		struct kinf_reflector_stats *stats, pthread_mutex_t *stats_lock,
		struct kinf_error *reterr);

#endif
