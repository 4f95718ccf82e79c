#ifndef KINF_WATCHSTREAM_H
#define KINF_WATCHSTREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "object.h"

/*
 * Decoder for watch streams: JSON values one after another, either
 * newline-delimited as the API server sends them or concatenated and
 * pretty-printed as `kubectl get -w -o json --output-watch-events` prints
 * them. Fed in arbitrary pieces (chunk boundaries anywhere). A recorded
 * stream may also hold whole Lists (`kubectl get -o json`).
 */
enum kinf_watch_event_type {
	KINF_WATCH_ADDED,
	KINF_WATCH_MODIFIED,
	KINF_WATCH_DELETED,
	KINF_WATCH_BOOKMARK,
	KINF_WATCH_ERROR,
	KINF_WATCH_LIST,	/* a whole List: items and its resourceVersion */
};

struct kinf_watch_event {
	enum kinf_watch_event_type type;
	struct kinf_object *obj;	/* ADDED, MODIFIED, DELETED (borrowed for the call) */
	const char *resource_version;	/* obj's, the bookmark's or the list's */
	bool initial_events_end;	/* BOOKMARK with k8s.io/initial-events-end */
	struct kinf_error status;	/* ERROR: the Status object as an error */
	struct kinf_object_list items;	/* LIST (borrowed for the call) */
	struct kinf_buf rv_storage;	/* backs resource_version for BOOKMARK/LIST */
};

/* Called per event; a negative return stops the decoder with that error. */
typedef int (*kinf_watch_event_func)(const struct kinf_watch_event *ev,
		void *userdata);

struct kinf_watch_decoder;

struct kinf_watch_decoder *kinf_watch_decoder_new(kinf_watch_event_func fn,
		void *userdata, const struct kinf_object_limits *limits);
void kinf_watch_decoder_free(struct kinf_watch_decoder *d);
/*
 * Line mode, for streams from an API server: every event is one line, so a
 * line that ends inside a value is a malformed event (an error at once)
 * rather than a value continued on the next line.
 */
void kinf_watch_decoder_set_line_mode(struct kinf_watch_decoder *d, bool on);
/*
 * Feed bytes. Malformed values are -KINF_EJSON with "event N: line L,
 * column C: ..." in reterr; the decoder is unusable afterwards.
 */
KINF_MUST_CHECK int kinf_watch_decoder_feed(struct kinf_watch_decoder *d, const char *data,
		size_t len, struct kinf_error *reterr);
/* True when a value has started but not ended (a truncated stream). */
bool kinf_watch_decoder_partial(const struct kinf_watch_decoder *d);
/* Forget a partial value (before reusing the decoder on a new stream). */
void kinf_watch_decoder_reset(struct kinf_watch_decoder *d);
/* Events decoded so far. */
unsigned long kinf_watch_decoder_count(const struct kinf_watch_decoder *d);

/* Decode one complete value as an event (used by the decoder; for tests). */
KINF_MUST_CHECK int kinf_watch_event_decode(const char *json, size_t len,
		const struct kinf_object_limits *limits, struct kinf_watch_event *ret,
		struct kinf_error *reterr);
/* Release what kinf_watch_event_decode() put in ev (also after it failed). */
void kinf_watch_event_release(struct kinf_watch_event *ev);

#endif
