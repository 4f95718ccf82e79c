/*
 * The watch stream decoder (src/watchstream.c) fed arbitrary bytes at
 * arbitrary chunk boundaries. Input: one flags byte (bit 0 line mode,
 * bit 1 small limits, bit 2 one-byte chunks), eight bytes seeding the
 * chunk sizes, then the stream.
 *
 * Properties checked besides memory safety: the stream decoded whole and
 * decoded in chunks gives the same events and the same outcome (chunk
 * boundaries must not matter), unless a size limit ended one of them (the
 * partial-value bound is checked per feed, so it may trip in one only).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "object.h"
#include "watchstream.h"

struct trace {
	uint64_t hash;
	unsigned long events;
	size_t items;
};

static void mix(struct trace *t, const char *s) {
	for (; *s; s++) {
		t->hash = (t->hash ^ (unsigned char)*s) * 0x100000001b3ull;
	}
	t->hash = (t->hash ^ 0xff) * 0x100000001b3ull;
}

static int on_event(const struct kinf_watch_event *ev, void *userdata) {
	struct trace *t = userdata;
	char type[2] = { (char)('A' + ev->type), 0 };

	t->events++;
	mix(t, type);
	FUZZ_CHECK(ev->resource_version || ev->type == KINF_WATCH_ERROR);
	if (ev->resource_version) {
		mix(t, ev->resource_version);
	}
	switch (ev->type) {
	case KINF_WATCH_ADDED:
	case KINF_WATCH_MODIFIED:
	case KINF_WATCH_DELETED:
		FUZZ_CHECK(ev->obj != NULL);
		mix(t, kinf_object_key(ev->obj));
		mix(t, kinf_object_json(ev->obj, NULL));
		break;
	case KINF_WATCH_LIST:
		for (size_t i = 0; i < ev->items.n; i++) {
			mix(t, kinf_object_key(ev->items.v[i]));
		}
		t->items += ev->items.n;
		break;
	case KINF_WATCH_ERROR:
		FUZZ_CHECK(ev->status.code != 0);
		FUZZ_CHECK(memchr(ev->status.message, '\0', sizeof(ev->status.message)));
		mix(t, ev->status.message);
		break;
	case KINF_WATCH_BOOKMARK:
		mix(t, ev->initial_events_end ? "end" : "-");
		break;
	}
	return 0;
}

static int run(const uint8_t *data, size_t len, bool line_mode,
		const struct kinf_object_limits *limits, uint64_t seed, int chunking,
		struct trace *t, bool *ret_partial) {
	struct kinf_error err = {0};
	struct kinf_watch_decoder *d = kinf_watch_decoder_new(on_event, t, limits);
	int rc = 0;

	FUZZ_CHECK(d != NULL);
	kinf_watch_decoder_set_line_mode(d, line_mode);
	size_t off = 0;
	while (off < len) {
		size_t n = len - off;
		if (chunking == 1) {
			n = 1;
		} else if (chunking == 2) {
			size_t c = 1 + (size_t)(fuzz_rand(&seed) % 64);
			n = c < n ? c : n;
		}
		rc = kinf_watch_decoder_feed(d, (const char *)data + off, n, &err);
		if (rc < 0) {
			FUZZ_CHECK(err.code == -rc);
			FUZZ_CHECK(memchr(err.message, '\0', sizeof(err.message)));
			/* Once failed, the decoder keeps failing the same way. */
			FUZZ_CHECK(kinf_watch_decoder_feed(d, "{}", 2, NULL) == rc);
			break;
		}
		off += n;
	}
	FUZZ_CHECK(kinf_watch_decoder_count(d) >= t->events);
	*ret_partial = kinf_watch_decoder_partial(d);
	kinf_watch_decoder_reset(d);
	FUZZ_CHECK(!kinf_watch_decoder_partial(d));
	kinf_watch_decoder_free(d);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	uint64_t seed = 0;
	for (int i = 0; i < 8; i++) {
		seed = seed << 8 | fuzz_byte(&in);
	}
	bool line_mode = flags & 1;
	struct kinf_object_limits limits = {0};
	if (flags & 2) {
		limits.max_bytes = 256;
		limits.max_depth = 8;
	}

	struct trace whole = { .hash = 0xcbf29ce484222325ull };
	struct trace chunked = { .hash = 0xcbf29ce484222325ull };
	bool partial_whole, partial_chunked;
	int rc_whole = run(in.p, in.n, line_mode, &limits, seed, 0, &whole, &partial_whole);
	int rc_chunked = run(in.p, in.n, line_mode, &limits, seed,
			flags & 4 ? 1 : 2, &chunked, &partial_chunked);
	if (rc_whole == -KINF_ETOOBIG || rc_chunked == -KINF_ETOOBIG) {
		return 0;
	}
	FUZZ_CHECK(rc_whole == rc_chunked);
	FUZZ_CHECK(whole.events == chunked.events);
	FUZZ_CHECK(whole.items == chunked.items);
	FUZZ_CHECK(whole.hash == chunked.hash);
	if (rc_whole == 0) {
		FUZZ_CHECK(partial_whole == partial_chunked);
	}
	return 0;
}
