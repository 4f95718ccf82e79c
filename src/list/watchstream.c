#include <stdlib.h>
#include <string.h>

#include "apistatus.h"
#include "json.h"
#include "jsonlex.h"
#include "watchstream.h"

struct kinf_watch_decoder {
	kinf_watch_event_func fn;
	void *userdata;
	struct kinf_object_limits limits;
	size_t max_value;
	int error;
	unsigned depth;
	bool in_string;
	bool escape;
	bool in_value;
	bool line_mode;
	struct kinf_buf value;
	struct kinf_buf line;	/* line mode: the partial last line */
	bool scanning;		/* line mode: the scanner has the rest of this line */
	/* line mode: values in the partial line found by their brackets */
	size_t track_pos;	/* line bytes looked at */
	size_t track_start;	/* where the open value starts */
	unsigned track_depth;
	bool track_string, track_escape;
	bool track_off;		/* not a value: left to the line's end */
	unsigned long count;
};

struct kinf_watch_decoder *kinf_watch_decoder_new(kinf_watch_event_func fn,
		void *userdata, const struct kinf_object_limits *limits) {
	struct kinf_watch_decoder *d = calloc(1, sizeof(*d));
	if (!d) {
		return NULL;
	}
	d->fn = fn;
	d->userdata = userdata;
	if (limits) {
		d->limits = *limits;
	}
	/* An event wraps an object: allow a little more than the object limit. */
	d->max_value = (d->limits.max_bytes ? d->limits.max_bytes :
			KINF_OBJECT_DEFAULT_MAX_BYTES) + 4096;
	return d;
}

void kinf_watch_decoder_free(struct kinf_watch_decoder *d) {
	if (d) {
		kinf_buf_release(&d->value);
		kinf_buf_release(&d->line);
		free(d);
	}
}

void kinf_watch_decoder_set_line_mode(struct kinf_watch_decoder *d, bool on) {
	d->line_mode = on;
}

bool kinf_watch_decoder_partial(const struct kinf_watch_decoder *d) {
	if (d->in_value) {
		return true;
	}
	for (size_t i = 0; i < d->line.len; i++) {
		char c = d->line.data[i];
		if (c != ' ' && c != '\r' && c != '\t') {
			return true;
		}
	}
	return false;
}

unsigned long kinf_watch_decoder_count(const struct kinf_watch_decoder *d) {
	return d->count;
}

static void track_reset(struct kinf_watch_decoder *d) {
	d->track_pos = d->track_start = 0;
	d->track_depth = 0;
	d->track_string = d->track_escape = d->track_off = false;
}

void kinf_watch_decoder_reset(struct kinf_watch_decoder *d) {
	track_reset(d);
	d->error = 0;
	d->depth = 0;
	d->in_string = d->escape = d->in_value = d->scanning = false;
	kinf_buf_reset(&d->value);
	kinf_buf_reset(&d->line);
}

void kinf_watch_event_release(struct kinf_watch_event *ev) {
	ev->obj = kinf_object_unref(ev->obj);
	kinf_object_list_release(&ev->items);
	kinf_buf_release(&ev->rv_storage);
}

static const struct {
	const char *name;
	enum kinf_watch_event_type type;
} event_types[] = {
	{ "ADDED", KINF_WATCH_ADDED }, { "MODIFIED", KINF_WATCH_MODIFIED },
	{ "DELETED", KINF_WATCH_DELETED }, { "BOOKMARK", KINF_WATCH_BOOKMARK },
	{ "ERROR", KINF_WATCH_ERROR },
};

/*
 * Read the metadata object at r: its resourceVersion into rv and, when
 * initial_end is not NULL, whether the annotation
 * k8s.io/initial-events-end is "true" (a bookmark's).
 */
static int read_metadata(struct kinf_json_reader *r, struct kinf_buf *rv,
		bool *initial_end) {
	struct kinf_json_span k, a;
	int rc;

	if ((rc = kinf_json_object_begin(r)) < 0) {
		return rc;
	}
	while ((rc = kinf_json_member(r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "resourceVersion")) {
			kinf_buf_reset(rv);
			rc = kinf_json_string(r, rv);
		} else if (initial_end && kinf_json_span_eq(&k, "annotations") &&
				kinf_json_peek(r) == KINF_JSON_OBJECT) {
			rc = kinf_json_object_begin(r);
			while (rc == 0 && (rc = kinf_json_member(r, &a)) > 0) {
				if (kinf_json_span_eq(&a, "k8s.io/initial-events-end") &&
						kinf_json_peek(r) == KINF_JSON_STRING) {
					struct kinf_json_span v;
					rc = kinf_json_string_span(r, &v);
					*initial_end = rc == 0 && kinf_json_span_eq(&v, "true");
				} else {
					rc = kinf_json_skip(r);
				}
				if (rc > 0) {
					rc = 0;
				}
			}
		} else {
			rc = kinf_json_skip(r);
		}
		if (rc < 0) {
			return rc;
		}
	}
	return rc;
}

/* A bookmark's object has no name: read its resourceVersion and annotation. */
static int decode_bookmark(const char *json, size_t len,
		struct kinf_watch_event *ev, struct kinf_buf *rv,
		struct kinf_error *reterr) {
	struct kinf_json_reader r;
	struct kinf_json_span k;
	int rc;

	kinf_json_reader_init(&r, json, len, 64);
	if ((rc = kinf_json_object_begin(&r)) < 0) {
		goto bad;
	}
	while ((rc = kinf_json_member(&r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "metadata")) {
			rc = read_metadata(&r, rv, &ev->initial_events_end);
		} else {
			rc = kinf_json_skip(&r);
		}
		if (rc < 0) {
			goto bad;
		}
	}
	if (rc < 0 || (rc = kinf_json_end(&r)) < 0) {
		goto bad;
	}
	return 0;
bad:
	if (rc == -KINF_ENOMEM) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	kinf_json_reader_error(&r, reterr);
	kinf_error_prefix(reterr, "bookmark");
	return -KINF_EJSON;
}

static int decode_list(const char *json, size_t len,
		const struct kinf_object_limits *limits, struct kinf_watch_event *ev,
		struct kinf_buf *rv, struct kinf_error *reterr) {
	struct kinf_json_reader r;
	struct kinf_json_span k;
	struct kinf_object_list objs = {0};
	int rc;

	kinf_json_reader_init(&r, json, len, 0);
	if ((rc = kinf_json_object_begin(&r)) < 0) {
		goto bad;
	}
	while ((rc = kinf_json_member(&r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "items") && kinf_json_peek(&r) == KINF_JSON_ARRAY) {
			if ((rc = kinf_json_array_begin(&r)) < 0) {
				goto bad;
			}
			while ((rc = kinf_json_element(&r)) > 0) {
				const char *s;
				size_t n;
				struct kinf_object *obj;
				if ((rc = kinf_json_skip_span(&r, &s, &n)) < 0) {
					goto bad;
				}
				rc = kinf_object_parse(s, n, limits, &obj, reterr);
				if (rc < 0) {
					kinf_error_prefix(reterr, "list item %zu", objs.n + 1);
					goto out;
				}
				if (kinf_object_list_push_take(&objs, obj) < 0) {
					rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
					goto out;
				}
			}
		} else if (kinf_json_span_eq(&k, "metadata") &&
				kinf_json_peek(&r) == KINF_JSON_OBJECT) {
			rc = read_metadata(&r, rv, NULL);
		} else {
			rc = kinf_json_skip(&r);
		}
		if (rc < 0) {
			goto bad;
		}
	}
	if (rc < 0 || (rc = kinf_json_end(&r)) < 0) {
		goto bad;
	}
	ev->items = objs;
	return 0;
bad:
	if (rc == -KINF_ENOMEM) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	kinf_json_reader_error(&r, reterr);
	rc = -KINF_EJSON;
out:
	kinf_object_list_release(&objs);
	return rc;
}

int kinf_watch_event_decode(const char *json, size_t len,
		const struct kinf_object_limits *limits, struct kinf_watch_event *ev,
		struct kinf_error *reterr) {
	struct kinf_json_reader r;
	struct kinf_json_span k, type = {0};
	const char *obj_s = NULL;
	size_t obj_n = 0;
	bool is_list = false, has_type = false;
	int rc;

	memset(ev, 0, sizeof(*ev));
	kinf_json_reader_init(&r, json, len, limits && limits->max_depth ?
			limits->max_depth : KINF_OBJECT_DEFAULT_MAX_DEPTH);
	if ((rc = kinf_json_object_begin(&r)) < 0) {
		goto bad;
	}
	while ((rc = kinf_json_member(&r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "type") && kinf_json_peek(&r) == KINF_JSON_STRING) {
			rc = kinf_json_string_span(&r, &type);
			has_type = true;
		} else if (kinf_json_span_eq(&k, "object")) {
			rc = kinf_json_skip_span(&r, &obj_s, &obj_n);
		} else if (kinf_json_span_eq(&k, "items")) {
			is_list = true;
			rc = kinf_json_skip(&r);
		} else {
			rc = kinf_json_skip(&r);
		}
		if (rc < 0) {
			goto bad;
		}
	}
	if (rc < 0 || (rc = kinf_json_end(&r)) < 0) {
		goto bad;
	}
	if (!has_type && is_list) {
		ev->type = KINF_WATCH_LIST;
		rc = decode_list(json, len, limits, ev, &ev->rv_storage, reterr);
		if (rc == 0) {
			ev->resource_version = ev->rv_storage.data ? ev->rv_storage.data : "";
		}
		return rc;
	}
	if (!has_type || !obj_s) {
		return kinf_error_set(reterr, KINF_EJSON,
				"not a watch event: \"type\" and \"object\" expected");
	}
	size_t i;
	for (i = 0; i < sizeof(event_types) / sizeof(*event_types); i++) {
		if (kinf_json_span_eq(&type, event_types[i].name)) {
			break;
		}
	}
	if (i == sizeof(event_types) / sizeof(*event_types)) {
		return kinf_error_set(reterr, KINF_EJSON, "unknown watch event type \"%.*s\"",
				(int)(type.len > 32 ? 32 : type.len), type.s);
	}
	ev->type = event_types[i].type;
	switch (ev->type) {
	case KINF_WATCH_ERROR:
		kinf_apistatus_to_error(0, obj_s, obj_n, &ev->status);
		if (!ev->status.http_status) {
			ev->status.code = KINF_EHTTP;
		}
		return 0;
	case KINF_WATCH_BOOKMARK:
		rc = decode_bookmark(obj_s, obj_n, ev, &ev->rv_storage, reterr);
		ev->resource_version = ev->rv_storage.data ? ev->rv_storage.data : "";
		return rc;
	default:
		rc = kinf_object_parse(obj_s, obj_n, limits, &ev->obj, reterr);
		if (rc < 0) {
			kinf_error_prefix(reterr, "%s event object", event_types[i].name);
			return rc;
		}
		ev->resource_version = kinf_object_resource_version(ev->obj);
		return 0;
	}
bad:
	kinf_json_reader_error(&r, reterr);
	return -KINF_EJSON;
}

/*
 * The fast path for one event at the start of json[0..len) (what an API
 * server sends: "type" first, then an ADDED, MODIFIED or DELETED object):
 * the object is parsed where it lies, so its bytes are validated once, and
 * *ret_used says where the event ended. Anything else (another type, the
 * type after the object, repeated members, errors) returns <0 without a
 * message and with ev released: the caller then takes the exact path.
 */
static int decode_fast(const char *json, size_t len,
		const struct kinf_object_limits *limits, struct kinf_watch_event *ev,
		size_t *ret_used) {
	unsigned max_depth = limits && limits->max_depth ? limits->max_depth :
		KINF_OBJECT_DEFAULT_MAX_DEPTH;
	struct kinf_object_limits inner = limits ? *limits : (struct kinf_object_limits){0};
	/* The object is one level down in the event. */
	inner.max_depth = max_depth - 1;
	struct kinf_json_reader r;
	struct kinf_json_span k, type;
	size_t i = sizeof(event_types) / sizeof(*event_types);
	int rc;

	memset(ev, 0, sizeof(*ev));
	if (max_depth < 2) {
		return -KINF_EINVAL;
	}
	kinf_json_reader_init(&r, json, len, max_depth);
	if ((rc = kinf_json_object_begin(&r)) < 0) {
		return rc;
	}
	while ((rc = kinf_json_member(&r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "type")) {
			if (i != sizeof(event_types) / sizeof(*event_types) ||
					kinf_json_string_span(&r, &type) < 0) {
				goto slow;
			}
			for (i = 0; i < sizeof(event_types) / sizeof(*event_types); i++) {
				if (kinf_json_span_eq(&type, event_types[i].name)) {
					break;
				}
			}
			if (i == sizeof(event_types) / sizeof(*event_types) ||
					event_types[i].type > KINF_WATCH_DELETED) {
				goto slow;
			}
		} else if (kinf_json_span_eq(&k, "object")) {
			size_t used;
			if (i == sizeof(event_types) / sizeof(*event_types) || ev->obj ||
					kinf_json_peek(&r) != KINF_JSON_OBJECT ||
					kinf_object_parse_prefix(r.p, (size_t)(r.end - r.p), &inner,
						&ev->obj, &used, NULL) < 0) {
				goto slow;
			}
			r.p += used;
		} else if (kinf_json_span_eq(&k, "items") || kinf_json_skip(&r) < 0) {
			goto slow;
		}
	}
	if (rc < 0 || !ev->obj) {
		goto slow;
	}
	ev->type = event_types[i].type;
	ev->resource_version = kinf_object_resource_version(ev->obj);
	*ret_used = (size_t)(r.p - json);
	return 0;
slow:
	kinf_watch_event_release(ev);
	return -KINF_EJSON;
}

static int dispatch(struct kinf_watch_decoder *d, struct kinf_error *reterr) {
	struct kinf_watch_event ev;
	int rc = kinf_watch_event_decode(d->value.data, d->value.len, &d->limits,
			&ev, reterr);
	d->count++;
	if (rc < 0) {
		kinf_watch_event_release(&ev);
		kinf_error_prefix(reterr, "event %lu", d->count);
		return rc;
	}
	rc = d->fn(&ev, d->userdata);
	kinf_watch_event_release(&ev);
	return rc;
}

/* The byte scanner: values found by their brackets, copied, then decoded. */
static int scan(struct kinf_watch_decoder *d, const char *data, size_t len,
		struct kinf_error *reterr) {
	size_t start = 0;
	int rc;

	for (size_t i = 0; i < len; i++) {
		char c = data[i];
		if (!d->in_value) {
			if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
				continue;
			}
			if (c != '{') {
				d->error = kinf_error_set(reterr, KINF_EJSON,
						"event %lu: a JSON object expected, found '%c'",
						d->count + 1, c >= 0x20 && c < 0x7f ? c : '?');
				return d->error;
			}
			d->in_value = true;
			d->depth = 0;
			start = i;
		}
		if (c == '\n' && d->line_mode) {
			/* JSON strings cannot hold a raw newline: the event is cut short. */
			d->error = kinf_error_set(reterr, KINF_EJSON,
					"event %lu: the line ends inside a JSON value", d->count + 1);
			return d->error;
		}
		if (d->in_string) {
			if (d->escape) {
				d->escape = false;
			} else if (c == '\\') {
				d->escape = true;
			} else if (c == '"') {
				d->in_string = false;
			}
			continue;
		}
		if (c == '"') {
			d->in_string = true;
		} else if (c == '{' || c == '[') {
			d->depth++;
		} else if ((c == '}' || c == ']') && --d->depth == 0) {
			if (kinf_buf_append(&d->value, data + start, i + 1 - start) < 0) {
				d->error = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
				return d->error;
			}
			d->in_value = false;
			rc = dispatch(d, reterr);
			kinf_buf_reset(&d->value);
			if (rc < 0) {
				d->error = rc;
				return rc;
			}
		}
	}
	if (d->in_value) {
		if (d->value.len + (len - start) > d->max_value) {
			d->error = kinf_error_set(reterr, KINF_ETOOBIG,
					"event %lu exceeds the object size limit (--max-object-size)",
					d->count + 1);
			return d->error;
		}
		if (kinf_buf_append(&d->value, data + start, len - start) < 0) {
			d->error = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			return d->error;
		}
	}
	return 0;
}

/*
 * One complete line in line mode, p[0..n) with p[n] its newline: events parsed
 * where they lie. At the first one the fast path does not take, the rest
 * of the line goes through the scanner, which gives the exact message of
 * an error (a line ending inside a value among them).
 */
static int decode_line(struct kinf_watch_decoder *d, const char *p, size_t n,
		struct kinf_error *reterr) {
	const char *end = p + n;
	int rc;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\r' || *p == '\t')) {
			p++;
		}
		if (p == end) {
			return 0;
		}
		struct kinf_watch_event ev;
		size_t used;
		if (*p != '{' || decode_fast(p, (size_t)(end - p), &d->limits, &ev, &used) < 0) {
			break;
		}
		d->count++;
		rc = d->fn(&ev, d->userdata);
		kinf_watch_event_release(&ev);
		if (rc < 0) {
			return d->error = rc;
		}
		p += used;
	}
	/* With the newline: a value it cuts is that error, not an oversize one. */
	return scan(d, p, (size_t)(end - p) + 1, reterr);
}

/*
 * Hand over the complete events at the start of the partial line (a stream
 * may pause, or end, right after an event without its newline; or carry
 * several events on a line), as the scanner did at each closing brace.
 * When the fast path does not take the next one, the rest of the line goes
 * to the scanner, whose verdicts and limits are exact.
 */
static int drain(struct kinf_watch_decoder *d, struct kinf_error *reterr) {
	const char *p = d->line.data, *end = p + d->line.len;
	int rc = 0;

	while (rc == 0) {
		while (p < end && (*p == ' ' || *p == '\r' || *p == '\t')) {
			p++;
		}
		struct kinf_watch_event ev;
		size_t used;
		if (p == end || *p != '{' ||
				decode_fast(p, (size_t)(end - p), &d->limits, &ev, &used) < 0) {
			break;
		}
		d->count++;
		rc = d->fn(&ev, d->userdata);
		kinf_watch_event_release(&ev);
		if (rc < 0) {
			d->error = rc;
		}
		p += used;
	}
	if (rc < 0) {
		return rc;
	}
	if (p < end) {
		struct kinf_buf line = d->line;
		d->line = (struct kinf_buf){0};
		d->scanning = true;
		track_reset(d);
		rc = scan(d, p, (size_t)(end - p), reterr);
		kinf_buf_release(&line);
		return rc;
	}
	kinf_buf_reset(&d->line);
	return 0;
}

/* One complete value p[0..n) of a partial line: where it lies, else copied. */
static int decode_value(struct kinf_watch_decoder *d, const char *p, size_t n,
		struct kinf_error *reterr) {
	struct kinf_watch_event ev;
	size_t used;
	int rc;

	if (decode_fast(p, n, &d->limits, &ev, &used) == 0) {
		if (used == n) {
			d->count++;
			rc = d->fn(&ev, d->userdata);
			kinf_watch_event_release(&ev);
			return rc < 0 ? (d->error = rc) : 0;
		}
		kinf_watch_event_release(&ev);
	}
	/* The exact path, with its messages (the scanner's, at a closing brace). */
	if (kinf_buf_append(&d->value, p, n) < 0) {
		return d->error = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	rc = dispatch(d, reterr);
	kinf_buf_reset(&d->value);
	return rc < 0 ? (d->error = rc) : 0;
}

/*
 * Line mode, the partial last line: hand over each value in it as soon as
 * its closing bracket arrives, as client-go's JSON stream decoder does
 * (values back to back, or a stream that pauses after an event without its
 * newline), so that chunk boundaries do not decide when, or whether, an
 * event is seen. Brackets are counted as the scanner counts them, from
 * where the last call stopped; consumed values (and the white space between
 * them) leave the line. Anything but a value is left for the line's end,
 * where decode_line() gives its verdict.
 */
static int track(struct kinf_watch_decoder *d, struct kinf_error *reterr) {
	const char *p = d->line.data;
	size_t n = d->line.len, i = d->track_pos, done = 0;
	int rc;

	if (d->track_off) {
		return 0;
	}
	for (; i < n; i++) {
		if (d->track_string) {
			if (!d->track_escape) {
				i = kinf_jsonlex_string_body_end(p, i, n);
				if (i == n) {
					break;
				}
			}
			if (d->track_escape) {
				d->track_escape = false;
			} else if (p[i] == '\\') {
				d->track_escape = true;
			} else {
				d->track_string = false;	/* the closing '"' */
			}
			continue;
		}
		char c = p[i];
		if (d->track_depth == 0) {
			if (c == ' ' || c == '\r' || c == '\t') {
				done = i + 1;
				continue;
			}
			if (c != '{') {
				d->track_off = true;
				break;
			}
			d->track_start = i;
		}
		if (c == '"') {
			d->track_string = true;
		} else if (c == '{' || c == '[') {
			d->track_depth++;
		} else if ((c == '}' || c == ']') && --d->track_depth == 0) {
			rc = decode_value(d, p + d->track_start, i + 1 - d->track_start, reterr);
			if (rc < 0) {
				return rc;
			}
			done = i + 1;
		}
	}
	d->track_pos = i < n ? i : n;
	if (done) {
		memmove(d->line.data, p + done, n - done);
		d->line.len = n - done;
		d->track_pos -= done;
		if (d->track_depth) {
			d->track_start -= done;
		}
	}
	return 0;
}

/* Line mode: lines found with memchr, the partial last one kept. */
static int feed_lines(struct kinf_watch_decoder *d, const char *data,
		size_t len, struct kinf_error *reterr) {
	int rc;

	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		if (d->scanning) {
			/* The rest of a line the fast path gave up on. */
			size_t n = nl ? (size_t)(nl - data) + 1 : len;
			if ((rc = scan(d, data, n, reterr)) < 0) {
				return rc;
			}
			d->scanning = !nl;
			data += n;
			len -= n;
			continue;
		}
		if (!nl) {
			if (kinf_buf_append(&d->line, data, len) < 0) {
				d->error = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
				return d->error;
			}
			/* Complete values go now; what is left waits for the newline. */
			if ((rc = track(d, reterr)) < 0) {
				return rc;
			}
			if (d->line.len > d->max_value && (rc = drain(d, reterr)) < 0) {
				return rc;
			}
			if (d->line.len > d->max_value) {
				d->error = kinf_error_set(reterr, KINF_ETOOBIG,
						"event %lu exceeds the object size limit (--max-object-size)",
						d->count + 1);
				return d->error;
			}
			return 0;
		}
		size_t n = (size_t)(nl - data);
		if (d->line.len) {
			struct kinf_buf line = d->line;
			d->line = (struct kinf_buf){0};
			rc = kinf_buf_append(&line, data, n + 1);
			if (rc == 0) {
				rc = decode_line(d, line.data, line.len - 1, reterr);
			} else {
				d->error = rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			}
			/* Keep the allocation for the next partial line. */
			kinf_buf_reset(&line);
			kinf_buf_release(&d->line);
			d->line = line;
		} else {
			rc = decode_line(d, data, n, reterr);
		}
		track_reset(d);
		if (rc < 0) {
			return rc;
		}
		data += n + 1;
		len -= n + 1;
	}
	return 0;
}

int kinf_watch_decoder_feed(struct kinf_watch_decoder *d, const char *data,
		size_t len, struct kinf_error *reterr) {
	if (d->error) {
		return d->error;
	}
	if (d->line_mode) {
		return feed_lines(d, data, len, reterr);
	}
	return scan(d, data, len, reterr);
}
