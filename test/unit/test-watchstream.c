#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tap.h"
#include "watchstream.h"

/* Each event becomes one line "TYPE key rv [end] [code]" in a log. */
static int record(const struct kinf_watch_event *ev, void *userdata) {
	struct kinf_buf *log = userdata;
	static const char *const names[] = { "ADDED", "MODIFIED", "DELETED",
		"BOOKMARK", "ERROR", "LIST" };
	must(kinf_buf_printf(log, "%s", names[ev->type]));
	if (ev->obj) {
		must(kinf_buf_printf(log, " %s", kinf_object_key(ev->obj)));
	}
	if (ev->type == KINF_WATCH_LIST) {
		must(kinf_buf_printf(log, " %zu", ev->items.n));
	}
	if (ev->resource_version) {
		must(kinf_buf_printf(log, " %s", ev->resource_version));
	}
	if (ev->initial_events_end) {
		must(kinf_buf_printf(log, " end"));
	}
	if (ev->type == KINF_WATCH_ERROR) {
		must(kinf_buf_printf(log, " %d %s", ev->status.http_status, ev->status.reason));
	}
	must(kinf_buf_append_char(log, '\n'));
	return 0;
}

static const char stream[] =
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"
	"{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"10\"}}}\n"
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\","
	"\"resourceVersion\":\"11\",\"annotations\":{\"x\":\"}]\\\"{\"}}}}\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"
	"{\"resourceVersion\":\"12\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n"
	"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\","
	"\"resourceVersion\":\"13\"}}}\n"
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	"\"status\":\"Failure\",\"message\":\"too old resource version: 1 (5)\","
	"\"reason\":\"Expired\",\"code\":410}}\n";

static const char want[] =
	"ADDED ns/a 10\nMODIFIED ns/a 11\nBOOKMARK 12 end\nDELETED ns/a 13\nERROR 410 Expired\n";

static void test_every_split(void) {
	size_t len = strlen(stream);
	int bad = 0;
	/* Feed in two pieces split at every offset, then byte by byte. */
	for (size_t cut = 0; cut <= len; cut++) {
		struct kinf_buf log = {0};
		struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
		int rc = kinf_watch_decoder_feed(d, stream, cut, NULL);
		if (rc == 0) {
			rc = kinf_watch_decoder_feed(d, stream + cut, len - cut, NULL);
		}
		if (rc != 0 || !log.data || strcmp(log.data, want) != 0 ||
				kinf_watch_decoder_partial(d)) {
			bad++;
		}
		kinf_watch_decoder_free(d);
		kinf_buf_release(&log);
	}
	ok(bad == 0, "every two-piece split decodes the same events (%d bad)", bad);

	struct kinf_buf log = {0};
	struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
	int rc = 0;
	for (size_t i = 0; i < len && rc == 0; i++) {
		rc = kinf_watch_decoder_feed(d, stream + i, 1, NULL);
	}
	is_str(log.data, want, "byte-by-byte feeding");
	is_int(kinf_watch_decoder_count(d), 5, "five events counted");
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);
}

static void test_pretty_and_lists(void) {
	const char *recorded =
		"{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    {\"metadata\": {\"name\": \"b\","
		" \"resourceVersion\": \"3\"}},\n    {\"metadata\": {\"name\": \"a\","
		" \"resourceVersion\": \"2\"}}\n  ],\n  \"kind\": \"List\",\n"
		"  \"metadata\": {\"resourceVersion\": \"7\"}\n}\n"
		"{\n    \"type\": \"ADDED\",\n    \"object\": {\n        \"metadata\": {\n"
		"            \"name\": \"c\", \"resourceVersion\": \"8\"\n        }\n    }\n}"
		"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"9\"}}}";
	struct kinf_buf log = {0};
	struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
	int rc = kinf_watch_decoder_feed(d, recorded, strlen(recorded), NULL);
	ok(rc == 0, "recorded stream with a List and pretty events decodes");
	is_str(log.data, "LIST 2 7\nADDED c 8\nDELETED c 9\n", "list, then concatenated events");
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);

	/* Only a bookmark ends the initial events, not a List that says so. */
	const char *list = "{\"kind\":\"List\",\"items\":[],\"metadata\":{\"annotations\":"
		"{\"k8s.io/initial-events-end\":\"true\"},\"resourceVersion\":\"7\"}}\n";
	log = (struct kinf_buf){0};
	d = kinf_watch_decoder_new(record, &log, NULL);
	rc = kinf_watch_decoder_feed(d, list, strlen(list), NULL);
	ok(rc == 0, "a List with annotations in its metadata decodes");
	is_str(log.data, "LIST 0 7\n", "  its resourceVersion, not the bookmark's annotation");
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);
}

static void test_errors(void) {
	static const struct {
		const char *input;
		const char *what;
		int rc;
	} cases[] = {
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}\n", "missing brace then EOF", 0 },
		{ "garbage\n", "not JSON", -KINF_EJSON },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}} x}\n", "bad JSON inside", -KINF_EJSON },
		{ "{\"type\":\"NOPE\",\"object\":{}}\n", "unknown type", -KINF_EJSON },
		{ "{\"type\":\"ADDED\"}\n", "no object", -KINF_EJSON },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}\n", "object without name", -KINF_EJSON },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\"}}}\n", "invalid UTF-8", -KINF_EJSON },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct kinf_buf log = {0};
		struct kinf_error err = {0};
		struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
		int rc = kinf_watch_decoder_feed(d, cases[i].input, strlen(cases[i].input), &err);
		if (cases[i].rc == 0) {
			ok(rc == 0 && kinf_watch_decoder_partial(d) && log.len == 0,
				"%s: left partial, no event", cases[i].what);
		} else {
			ok(rc == cases[i].rc && err.message[0], "%s: %s", cases[i].what, err.message);
			ok(kinf_watch_decoder_feed(d, "{}", 2, NULL) == rc, "%s: decoder stays failed", cases[i].what);
		}
		kinf_watch_decoder_free(d);
		kinf_buf_release(&log);
	}
	struct kinf_object_limits lim = { .max_bytes = 100 };
	struct kinf_buf big = {0};
	must(kinf_buf_append_str(&big, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\""));
	for (int i = 0; i < 10000; i++) {
		must(kinf_buf_append_char(&big, 'x'));
	}
	struct kinf_error err = {0};
	struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, NULL, &lim);
	ok(kinf_watch_decoder_feed(d, big.data, big.len, &err) == -KINF_ETOOBIG,
		"an event over the size limit is refused while it streams in: %s", err.message);
	kinf_watch_decoder_free(d);
	kinf_buf_release(&big);
}

static void test_line_mode(void) {
	const char *bad = "{\"type\":\"ADDED\",\"object\":{this is not JSON\n"
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n";
	struct kinf_error err = {0};
	struct kinf_buf log = {0};
	struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
	kinf_watch_decoder_set_line_mode(d, true);
	ok(kinf_watch_decoder_feed(d, bad, strlen(bad), &err) == -KINF_EJSON &&
		strstr(err.message, "the line ends inside a JSON value"),
		"line mode: a cut-short line is an error at once: %s", err.message);
	kinf_watch_decoder_free(d);
	d = kinf_watch_decoder_new(record, &log, NULL);
	ok(kinf_watch_decoder_feed(d, bad, strlen(bad), &err) == -KINF_EJSON ||
		kinf_watch_decoder_partial(d), "without line mode the value runs on");
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);
}

/* Feed s in pieces of the given sizes (0 ends the list), then the rest. */
static int feed_pieces(struct kinf_watch_decoder *d, const char *s, const size_t *sizes,
		struct kinf_error *err) {
	size_t len = strlen(s), off = 0;
	int rc = 0;
	for (; *sizes && off < len && rc == 0; sizes++) {
		size_t n = *sizes < len - off ? *sizes : len - off;
		rc = kinf_watch_decoder_feed(d, s + off, n, err);
		off += n;
	}
	if (rc == 0 && off < len) {
		rc = kinf_watch_decoder_feed(d, s + off, len - off, err);
	}
	return rc;
}

/*
 * Line mode (an API server's stream) and values without a newline between
 * or after them, as client-go's JSON stream decoder reads them: each is
 * handed over when its closing brace arrives, whatever the white space
 * (space, tab, CR) between them and wherever the chunks end.
 */
static void test_line_mode_back_to_back(void) {
	static const char ev_a[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
		"{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"10\"}}}";
	static const char ev_b[] = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":"
		"{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"11\","
		"\"annotations\":{\"x\":\"}]\\\"{\"}}}}";
	static const char ev_bm[] = "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":"
		"{\"resourceVersion\":\"12\"}}}";
	static const char ev_err[] = "{\"object\":{\"kind\":\"Status\",\"code\":410,"
		"\"reason\":\"Expired\",\"message\":\"too old\"},\"type\":\"ERROR\"}";
	static const char *const seps[] = { "", " ", "\t", "\r", " \r\t " };
	const char *want_all = "ADDED ns/a 10\nMODIFIED ns/a 11\nBOOKMARK 12\nERROR 410 Expired\n";

	for (size_t k = 0; k < sizeof(seps) / sizeof(*seps); k++) {
		struct kinf_buf in = {0};
		must(kinf_buf_printf(&in, "%s%s%s%s%s%s%s", ev_a, seps[k], ev_b, seps[k], ev_bm,
				seps[k], ev_err));
		size_t len = in.len;
		int bad = 0;
		for (size_t cut = 0; cut <= len; cut++) {
			struct kinf_buf log = {0};
			struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
			kinf_watch_decoder_set_line_mode(d, true);
			size_t sizes[] = { cut, 0 };
			int rc = feed_pieces(d, in.data, cut ? sizes : sizes + 1, NULL);
			/* No newline came: every event is in all the same. */
			if (rc != 0 || !log.data || strcmp(log.data, want_all) != 0 ||
					kinf_watch_decoder_partial(d)) {
				bad++;
			}
			kinf_watch_decoder_free(d);
			kinf_buf_release(&log);
		}
		ok(bad == 0, "line mode, separator %zu: back-to-back events without a newline, "
				"every two-piece split (%d bad)", k, bad);

		struct kinf_buf log = {0};
		struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
		kinf_watch_decoder_set_line_mode(d, true);
		int rc = 0;
		for (size_t i = 0; i < len && rc == 0; i++) {
			rc = kinf_watch_decoder_feed(d, in.data + i, 1, NULL);
		}
		is_str(log.data, want_all, "line mode, separator %zu: byte by byte", k);
		kinf_watch_decoder_free(d);
		kinf_buf_release(&log);
		kinf_buf_release(&in);
	}

	/* Each event is handed over when it is complete, not at the next newline. */
	struct kinf_buf log = {0};
	struct kinf_watch_decoder *d = kinf_watch_decoder_new(record, &log, NULL);
	kinf_watch_decoder_set_line_mode(d, true);
	size_t half = strlen(ev_a) / 2;
	must(kinf_watch_decoder_feed(d, ev_a, half, NULL));
	ok(log.len == 0 && kinf_watch_decoder_partial(d), "half an event: nothing yet, partial");
	must(kinf_watch_decoder_feed(d, ev_a + half, strlen(ev_a) - half, NULL));
	is_str(log.data, "ADDED ns/a 10\n", "its second half: the event, before any newline");
	ok(!kinf_watch_decoder_partial(d), "and nothing is partial");
	must(kinf_watch_decoder_feed(d, "\n", 1, NULL));
	is_str(log.data, "ADDED ns/a 10\n", "the newline after it adds nothing");
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);

	/* A bad value after good ones: the good ones first, then the line's verdict. */
	struct kinf_error err = {0};
	d = kinf_watch_decoder_new(record, &log, NULL);
	kinf_watch_decoder_set_line_mode(d, true);
	int rc = kinf_watch_decoder_feed(d, ev_a, strlen(ev_a), &err);
	rc = rc ? rc : kinf_watch_decoder_feed(d, "{\"type\":\"ADDED\",\"object\":{x}}", 30, &err);
	ok(rc == -KINF_EJSON && strncmp(err.message, "event 2: ", 9) == 0,
		"a malformed second value is event 2's error: %s", err.message);
	is_str(log.data, "ADDED ns/a 10\n", "after the first event");
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);

	/* Not a value: left for the newline, which gives the scanner's verdict. */
	d = kinf_watch_decoder_new(record, &log, NULL);
	kinf_watch_decoder_set_line_mode(d, true);
	rc = kinf_watch_decoder_feed(d, ev_a, strlen(ev_a), &err);
	rc = rc ? rc : kinf_watch_decoder_feed(d, " nope", 5, &err);
	ok(rc == 0 && kinf_watch_decoder_partial(d), "text after an event waits for its line's end");
	rc = kinf_watch_decoder_feed(d, "\n", 1, &err);
	ok(rc == -KINF_EJSON && strstr(err.message, "a JSON object expected, found 'n'"),
		"then fails: %s", err.message);
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);

	/* White space without end does not pile up. */
	d = kinf_watch_decoder_new(record, &log, &(struct kinf_object_limits){ .max_bytes = 100 });
	kinf_watch_decoder_set_line_mode(d, true);
	char spaces[1000];
	memset(spaces, ' ', sizeof(spaces));
	rc = 0;
	for (int i = 0; i < 100 && rc == 0; i++) {
		rc = kinf_watch_decoder_feed(d, spaces, sizeof(spaces), &err);
	}
	rc = rc ? rc : kinf_watch_decoder_feed(d, ev_a, strlen(ev_a), &err);
	ok(rc == 0 && log.data && strcmp(log.data, "ADDED ns/a 10\n") == 0,
		"100,000 spaces, then an event, within a 100-byte limit");
	kinf_watch_decoder_free(d);
	kinf_buf_release(&log);
}

int main(void) {
	test_line_mode_back_to_back();
	test_line_mode();
	test_every_split();
	test_pretty_and_lists();
	test_errors();
	return tap_done();
}
