#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "servecoll.h"
#include "servefilter.h"
#include "serveoptions.h"
#include "serverespond.h"
#include "servestream.h"
#include "servewatch.h"

/*
 * servewatch.c: the watch clients (the window of recent events they read
 * from is servecoll.c's). Each client is a
 * cursor into its collection's event stream (a seq number) plus, at the
 * start, a snapshot for its initial ADDED events; a pump writes to the
 * client while its connection's queue is under a budget, by reference to
 * the event's shared bytes (no copy per client), and goes on once the
 * client has read half of it.
 *
 * Slow clients, as the apiserver's cacheWatcher treats them: what a
 * client has not been sent (its unsent events: the window's events after
 * its cursor, its bounded buffer) may grow past max_lag for a while, as a
 * burst outruns a client that reads; from then on it must make progress
 * (read some of what is queued for it) within every grace period, or it
 * is ended with a 410 Expired Status (client-go's reflector relists on
 * it), as the apiserver ends a watcher whose full buffer does not take an
 * event within its (budgeted) timeout. A client whose next event left the
 * window is ended at once: that event cannot be sent any more.
 */

#define QUEUE_BUDGET (256u << 10)	/* bytes queued per client before the pump pauses */
#define DEFAULT_LAG_GRACE_MS 2000

struct serve_watch {
	struct serve_task task;		/* first: the initial events, in slices */
	struct serve_watch *next, *prev;
	struct serve_coll *coll;
	struct kinf_httpd_req *req;
	struct serve_filter filter;
	bool filtered;			/* any selector or namespace */
	bool table;
	const char *include;		/* Table includeObject */
	bool columns_sent;
	bool bookmarks;
	bool end_bookmark;		/* sendInitialEvents: the initial-events-end bookmark is due */
	unsigned long long initial_rv;
	struct serve_snap *initial;	/* the state its initial events come from, NULL once sent */
	size_t initial_pos;
	unsigned long long next_seq;
	unsigned long long after_rv;	/* a watch from N: only events newer than N */
	unsigned long long id;		/* for /metrics */
	bool waiting;			/* stopped at its budget until the client reads */
	/*
	 * While more than max_lag events are unsent: the grace timer, and
	 * where the client was when it started (its progress is measured
	 * against that).
	 */
	struct kinf_httpd_timer *grace_timer;
	unsigned long long mark_seq;
	size_t mark_pos, mark_queued;
	struct kinf_httpd_timer *bookmark_timer, *deadline_timer;
};

static void pump(struct serve_watch *w);
static void evict(struct serve_watch *w, const char *why, bool lag);
static void lag_check(struct serve_watch *w);

const struct serve_watch *serve_coll_next_watch(const struct serve_coll *c,
		const struct serve_watch *w) {
	return w ? w->next : c->watches;
}

unsigned long long serve_watch_unsent(const struct serve_watch *w) {
	return w->coll->next_seq - w->next_seq;
}

size_t serve_watch_queued(const struct serve_watch *w) {
	return kinf_httpd_stream_queued(w->req);
}

unsigned long long serve_watch_id(const struct serve_watch *w) {
	return w->id;
}

void serve_coll_push(struct serve_coll *c, struct serve_event *ev) {
	serve_window_push(c, ev);
	unsigned long long oldest = serve_coll_oldest_seq(c);
	for (struct serve_watch *w = c->watches, *next; w; w = next) {
		next = w->next;	/* the pump may end w */
		if (!w->waiting) {
			pump(w);
		} else if (w->next_seq < oldest) {
			evict(w, "its next event left the window", true);
		} else {
			lag_check(w);
		}
	}
}

/* ---- clients ---- */

static void noop_release(void *arg) {
	(void)arg;
}

static void watch_unlink(struct serve_watch *w) {
	struct serve_coll *c = w->coll;
	if (w->prev) {
		w->prev->next = w->next;
	} else {
		c->watches = w->next;
	}
	if (w->next) {
		w->next->prev = w->prev;
	}
	c->n_watches--;
	c->srv->watch_clients--;
	serve_task_cancel(c->srv, &w->task);
	kinf_httpd_timer_cancel(c->srv->httpd, w->grace_timer);
	kinf_httpd_timer_cancel(c->srv->httpd, w->bookmark_timer);
	kinf_httpd_timer_cancel(c->srv->httpd, w->deadline_timer);
	serve_filter_release(&w->filter);
	serve_snap_unref(w->initial);
	free(w);
}

static void on_close(struct kinf_httpd_req *req, void *arg) {
	(void)req;
	watch_unlink(arg);
}

/* End w's stream with its last chunk and forget it. */
static void watch_end(struct serve_watch *w) {
	kinf_httpd_req_on_close(w->req, NULL, NULL);
	kinf_httpd_stream_end(w->req);
	watch_unlink(w);
}

/*
 * The ERROR event of the Status st (kinf_apistatus_*) into line; nothing
 * when st or line could not be made (out of memory: no event, the stream
 * ends all the same).
 */
static void error_event(struct kinf_apistatus_body *st, struct kinf_buf *line) {
	if (kinf_buf_error(&st->json) || !st->json.len) {
		return;
	}
	if (st->json.data[st->json.len - 1] == '\n') {
		st->json.len--;
	}
	kinf_buf_puts(line, "{\"type\":\"ERROR\",\"object\":");
	kinf_buf_put(line, st->json.data, st->json.len);
	kinf_buf_puts(line, "}\n");
	if (kinf_buf_error(line)) {
		kinf_buf_release(line);
	}
}

/* An ERROR event of st on req's stream; best effort. */
static void write_error(struct kinf_httpd_req *req, struct kinf_apistatus_body *st) {
	struct kinf_buf line = {0};
	error_event(st, &line);
	/* Best effort: the stream ends either way (a failure closed it already). */
	if (line.len && kinf_httpd_stream_write(req, line.data, line.len) < 0) {
		kinf_log(2, "serve: an ERROR event could not be queued: the stream ends");
	}
	kinf_buf_release(&line);
}

/*
 * An ERROR event with a 410 Expired Status, then the end: what is queued
 * for w and not begun is dropped first, so the 410 comes next however
 * far behind w is.
 */
static void watch_expire(struct serve_watch *w, const char *message) {
	struct kinf_apistatus_body st = {0};
	struct kinf_buf line = {0};
	kinf_apistatus_expired(&st, message);
	error_event(&st, &line);
	kinf_apistatus_body_release(&st);
	kinf_httpd_req_on_close(w->req, NULL, NULL);
	/* -KINF_ENOMEM closed the connection: the end all the same. */
	(void)kinf_httpd_stream_cut(w->req, line.data, line.len);
	kinf_buf_release(&line);
	watch_unlink(w);
}

void serve_watch_too_large(struct serve_request *r, const char *rv, unsigned long long current) {
	struct kinf_apistatus_body st = {0};
	struct kinf_buf headers = {0};
	int rc = serve_warning_headers(r, &headers);
	if (rc == 0) {
		rc = kinf_httpd_stream_start(r->req, 200, "application/json",
				headers.len ? headers.data : NULL);
	}
	kinf_buf_release(&headers);
	if (rc < 0) {
		kinf_httpd_req_abort(r->req);
		return;
	}
	serve_count(r->srv, 200, r->start_us);
	serve_too_large_status(&st, rv, current);
	write_error(r->req, &st);
	kinf_apistatus_body_release(&st);
	kinf_httpd_stream_end(r->req);
}

/*
 * End w with a 410 and count it: it fell too far behind (lag: past
 * max_lag events) or stopped reading (why says how).
 */
static void evict(struct serve_watch *w, const char *why, bool lag) {
	struct serve_coll *c = w->coll;
	unsigned long long behind = serve_watch_unsent(w);
	char msg[300];
	c->evicted++;
	c->srv->evicted++;
	if (c->srv->opts.log) {
		char line[400];
		snprintf(line, sizeof(line), "watch client of %s%s%s ended: %llu events unsent, %s",
				c->resource, c->group[0] ? "." : "", c->group, behind, why);
		c->srv->opts.log(line, c->srv->opts.log_data);
	}
	if (lag) {
		snprintf(msg, sizeof(msg), "too old resource version: the client fell %llu events "
				"behind, %s (kinf serve --max-lag %zu)", behind, why,
				c->srv->opts.max_lag);
	} else {
		snprintf(msg, sizeof(msg), "too old resource version: the client %s", why);
	}
	watch_expire(w, msg);
}

/* httpd's write timeout: w took nothing of its queue for that long. */
static void stalled(struct kinf_httpd_req *req, void *arg) {
	struct serve_watch *w = arg;
	long ms = w->coll->srv->opts.write_timeout_ms > 0 ? w->coll->srv->opts.write_timeout_ms :
		30000;
	char why[120];
	(void)req;
	snprintf(why, sizeof(why), "read nothing of its stream for %ld %s (kinf serve's write "
			"timeout)", ms % 1000 ? ms : ms / 1000, ms % 1000 ? "ms" : "s");
	evict(w, why, false);
}

static long long lag_grace_ms(const struct serve_coll *c) {
	return c->srv->opts.lag_grace_ms > 0 ? c->srv->opts.lag_grace_ms : DEFAULT_LAG_GRACE_MS;
}

static void lag_mark(struct serve_watch *w) {
	w->mark_seq = w->next_seq;
	w->mark_pos = w->initial_pos;
	w->mark_queued = kinf_httpd_stream_queued(w->req);
}

/*
 * A grace period over: a client that read nothing of what was queued for
 * it meanwhile is ended; one that read some gets another period.
 */
static void lag_grace_over(void *arg) {
	struct serve_watch *w = arg;
	struct serve_coll *c = w->coll;
	w->grace_timer = NULL;
	if (serve_watch_unsent(w) <= c->srv->opts.max_lag) {
		return;
	}
	bool progress = w->next_seq > w->mark_seq || w->initial_pos > w->mark_pos ||
		kinf_httpd_stream_queued(w->req) < w->mark_queued;
	if (!progress) {
		char why[120];
		snprintf(why, sizeof(why), "read nothing for %lld ms", lag_grace_ms(c));
		evict(w, why, true);
		return;
	}
	lag_mark(w);
	w->grace_timer = kinf_httpd_timer_add(c->srv->httpd, lag_grace_ms(c), lag_grace_over, w);
}

/* Past max_lag unsent events: the grace period starts; back under it: it ends. */
static void lag_check(struct serve_watch *w) {
	struct serve_coll *c = w->coll;
	if (serve_watch_unsent(w) <= c->srv->opts.max_lag) {
		kinf_httpd_timer_cancel(c->srv->httpd, w->grace_timer);
		w->grace_timer = NULL;
	} else if (!w->grace_timer) {
		lag_mark(w);
		w->grace_timer = kinf_httpd_timer_add(c->srv->httpd, lag_grace_ms(c),
				lag_grace_over, w);
	}
}

static const char *const type_names[] = { "ADDED", "MODIFIED", "DELETED" };

/* The Table head of an event of type t at rv. */
static void table_head(struct kinf_buf *b, int t, const char *rv) {
	kinf_buf_putf(b, "{\"type\":\"%s\",\"object\":{\"kind\":\"Table\",\"apiVersion\":"
			"\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":", type_names[t]);
	kinf_apistatus_put_quoted(b, rv);
	kinf_buf_puts(b, "},");
}

/* Write the Table form of (t, obj): head, columns the first time, row. */
static int write_table(struct serve_watch *w, struct serve_event *ev, int variant, int t,
		const struct kinf_object *obj) {
	struct serve_coll *c = w->coll;
	int rc;
	if (strcmp(w->include, "Metadata") == 0 && ev) {
		if (!ev->table_head[variant].len) {
			table_head(&ev->table_head[variant], t, kinf_object_resource_version(obj));
			kinf_buf_puts(&ev->table_row[variant], "\"rows\":[");
			rc = serve_table_row(c, obj, "Metadata", &ev->table_row[variant], NULL);
			kinf_buf_puts(&ev->table_row[variant], "]}}\n");
			rc = rc < 0 ? rc : kinf_buf_error(&ev->table_head[variant]);
			rc = rc < 0 ? rc : kinf_buf_error(&ev->table_row[variant]);
			if (rc < 0) {
				/* Made again for the next client rather than kept half made. */
				kinf_buf_release(&ev->table_head[variant]);
				kinf_buf_release(&ev->table_row[variant]);
				return rc;
			}
		}
		rc = kinf_httpd_stream_write_ref(w->req, ev->table_head[variant].data,
				ev->table_head[variant].len, serve_event_release, serve_event_ref(ev));
	} else {
		struct kinf_buf h = {0};
		table_head(&h, t, kinf_object_resource_version(obj));
		rc = serve_stream_write_buf(w->req, &h);
		kinf_buf_release(&h);
	}
	if (rc == 0 && !w->columns_sent) {
		struct kinf_buf cols = {0};
		kinf_buf_puts(&cols, "\"columnDefinitions\":");
		rc = serve_table_columns(c, &cols);
		kinf_buf_putc(&cols, ',');
		rc = rc < 0 ? rc : serve_stream_write_buf(w->req, &cols);
		kinf_buf_release(&cols);
		w->columns_sent = true;
	} else if (rc == 0) {
		static const char none[] = "\"columnDefinitions\":null,";
		rc = kinf_httpd_stream_write_ref(w->req, none, sizeof(none) - 1, noop_release, NULL);
	}
	if (rc == 0 && strcmp(w->include, "Metadata") == 0 && ev) {
		rc = kinf_httpd_stream_write_ref(w->req, ev->table_row[variant].data,
				ev->table_row[variant].len, serve_event_release, serve_event_ref(ev));
	} else if (rc == 0) {
		struct kinf_buf row = {0};
		kinf_buf_puts(&row, "\"rows\":[");
		rc = serve_table_row(c, obj, w->include, &row, NULL);
		kinf_buf_puts(&row, "]}}\n");
		rc = rc < 0 ? rc : serve_stream_write_buf(w->req, &row);
		kinf_buf_release(&row);
	}
	return rc;
}

/*
 * Write ev as w sees it through its selectors: an update entering them is
 * ADDED, one leaving them DELETED (with the previous state), as the
 * apiserver's cacheWatcher converts them. 0, or the stream's error.
 */
static int write_event(struct serve_watch *w, struct serve_event *ev) {
	int variant = 0, t = (int)ev->type;
	const struct kinf_object *obj = ev->obj;
	if (ev->rv <= w->after_rv) {
		return 0;	/* from a version ahead of the cache: not until it is passed */
	}
	if (w->filtered) {
		int now = serve_filter_match(&w->filter, ev->obj);
		int before = ev->type == SERVE_MODIFIED && ev->old ?
			serve_filter_match(&w->filter, ev->old) : now;
		if (now < 0 || before < 0) {
			return -KINF_ENOMEM;	/* an event missed: the stream ends */
		}
		if (!now && !before) {
			return 0;
		}
		if (ev->type == SERVE_MODIFIED && now && !before) {
			variant = 1;
			t = SERVE_ADDED;
		} else if (ev->type == SERVE_MODIFIED && !now && before) {
			variant = 2;
			t = SERVE_DELETED;
			obj = ev->old;
		}
	}
	if (w->table) {
		return write_table(w, ev, variant, t, obj);
	}
	struct kinf_buf *line = &ev->line;
	if (variant) {
		line = variant == 1 ? &ev->added : &ev->deleted;
		if (!line->len) {
			kinf_buf_putf(line, "{\"type\":\"%s\",\"object\":", type_names[t]);
			int rc = serve_append_typed(w->coll, obj, line);
			kinf_buf_puts(line, "}\n");
			rc = rc < 0 ? rc : kinf_buf_error(line);
			if (rc < 0) {
				kinf_buf_release(line);	/* made again for the next client */
				return rc;
			}
		}
	}
	return kinf_httpd_stream_write_ref(w->req, line->data, line->len, serve_event_release,
			serve_event_ref(ev));
}

/* A synthetic ADDED event for an object of the initial state (bytes of its own). */
static int write_initial(struct serve_watch *w, const struct kinf_object *obj) {
	if (w->table) {
		return write_table(w, NULL, 0, SERVE_ADDED, obj);
	}
	struct kinf_buf line = {0};
	kinf_buf_puts(&line, "{\"type\":\"ADDED\",\"object\":");
	int rc = serve_append_typed(w->coll, obj, &line);
	kinf_buf_puts(&line, "}\n");
	rc = rc < 0 ? rc : serve_stream_write_buf(w->req, &line);
	kinf_buf_release(&line);
	return rc;
}

static int write_bookmark(struct serve_watch *w, unsigned long long rv, bool initial_end) {
	struct serve_coll *c = w->coll;
	struct kinf_buf b = {0};
	kinf_buf_puts(&b, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":");
	kinf_apistatus_put_quoted(&b, c->kind);
	kinf_buf_puts(&b, ",\"apiVersion\":");
	kinf_apistatus_put_quoted(&b, c->api_version);
	kinf_buf_putf(&b, ",\"metadata\":{\"resourceVersion\":\"%llu\",\"creationTimestamp\":null",
			rv);
	if (initial_end) {
		kinf_buf_puts(&b, ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}");
	}
	kinf_buf_puts(&b, "}}}\n");
	int rc = serve_stream_write_buf(w->req, &b);
	kinf_buf_release(&b);
	return rc;
}

static void pump_drained(struct kinf_httpd_req *req, void *arg) {
	(void)req;
	pump(arg);
}

/*
 * One slice of w's initial events (a task: between other clients'
 * work), while its queue is under the budget; then, once all are
 * queued, w goes on as a live watch (long-running from then on).
 */
static bool initial_slice(struct serve_task *t) {
	struct serve_watch *w = (struct serve_watch *)t;
	long long t0 = kinf_clock_now_us();
	size_t q0 = kinf_httpd_stream_queued(w->req);
	int rc = 0;

	while (rc == 0 && w->initial_pos < w->initial->objs.n) {
		size_t q = kinf_httpd_stream_queued(w->req);
		if (q >= QUEUE_BUDGET) {
			w->waiting = true;
			kinf_httpd_stream_on_drain(w->req, QUEUE_BUDGET / 2, serve_task_drained, t);
			lag_check(w);
			return false;
		}
		if (q - (q < q0 ? q : q0) >= SERVE_SLICE_BYTES ||
				kinf_clock_now_us() - t0 >= SERVE_SLICE_US) {
			return true;	/* the next slice in the next round */
		}
		const struct kinf_object *obj = w->initial->objs.v[w->initial_pos++];
		rc = serve_filter_match(&w->filter, obj);
		if (rc > 0) {
			rc = write_initial(w, obj);
		}
	}
	if (rc < 0) {
		watch_end(w);	/* a broken stream */
		return false;
	}
	serve_snap_unref(w->initial);
	w->initial = NULL;
	w->initial_pos = 0;
	kinf_httpd_req_long_running(w->req, true);
	pump(w);	/* may end w */
	return false;
}

/*
 * Send w what it has not had yet while its queue is under the budget;
 * come back once the client has read half of it. Ends w when its next
 * event left the window or its stream failed; past max_lag unsent
 * events, its grace period runs (lag_check). Initial events go in
 * slices (initial_slice).
 */
static void pump(struct serve_watch *w) {
	struct serve_coll *c = w->coll;
	int rc = 0;

	w->waiting = false;
	if (w->initial) {
		serve_task_wake(c->srv, &w->task);
		return;
	}
	while (rc == 0 && kinf_httpd_stream_queued(w->req) < QUEUE_BUDGET) {
		if (w->end_bookmark) {
			w->end_bookmark = false;
			rc = write_bookmark(w, w->initial_rv, true);
			continue;
		}
		if (w->next_seq >= c->next_seq) {
			lag_check(w);	/* caught up: its grace period, if any, ends */
			return;
		}
		struct serve_event *ev = serve_coll_event_at(c, w->next_seq);
		if (!ev) {
			evict(w, "its next event left the window", true);
			return;
		}
		w->next_seq++;
		rc = write_event(w, ev);
	}
	if (rc < 0) {
		watch_end(w);	/* a broken stream, or one object past the queue */
		return;
	}
	w->waiting = true;
	kinf_httpd_stream_on_drain(w->req, QUEUE_BUDGET / 2, pump_drained, w);
	lag_check(w);
}

static void bookmark_tick(void *arg) {
	struct serve_watch *w = arg;
	struct serve_coll *c = w->coll;
	w->bookmark_timer = NULL;
	/* Only a client that has everything: the bookmark's RV covers what it saw. */
	if (!w->waiting && !w->initial && !w->end_bookmark &&
			w->next_seq == c->next_seq && c->rv_numeric && c->rv > w->after_rv) {
		if (write_bookmark(w, c->rv, false) < 0) {
			watch_end(w);
			return;
		}
	}
	w->bookmark_timer = kinf_httpd_timer_add(c->srv->httpd, c->srv->opts.bookmark_ms,
			bookmark_tick, w);
}

static void deadline(void *arg) {
	struct serve_watch *w = arg;
	w->deadline_timer = NULL;
	watch_end(w);	/* timeoutSeconds: a clean end, as the apiserver's */
}

/* The seq of the first window event newer than rv. */
static unsigned long long seq_after(struct serve_coll *c, unsigned long long rv) {
	unsigned long long seq = c->next_seq;
	while (seq > serve_coll_oldest_seq(c)) {
		struct serve_event *ev = serve_coll_event_at(c, seq - 1);
		if (ev->rv <= rv) {
			break;
		}
		seq--;
	}
	return seq;
}

void serve_watch(struct serve_request *r, struct serve_coll *c) {
	const struct kinf_apiquery *q = &r->query;
	const char *rv = q->resource_version;
	const char *ns = c->namespaced ? r->path.namespace_ : NULL;
	struct kinf_apistatus_body st = {0};
	struct kinf_buf headers = {0};
	unsigned long long n = 0;
	bool from_now = !rv || !rv[0] || strcmp(rv, "0") == 0;
	bool too_old = false;

	if (!serve_validate_list_options(r, true)) {
		return;
	}
	if (!from_now && !serve_parse_rv(rv, &n)) {
		struct kinf_buf msg = {0};
		kinf_buf_putf(&msg, "invalid resource version: %s", rv);
		if (!kinf_buf_error(&msg)) {
			kinf_apistatus_bad_request(&st, msg.data);	/* else the 500 below */
		}
		kinf_buf_release(&msg);
		serve_respond_status(r, &st);
		kinf_apistatus_body_release(&st);
		return;
	}
	/*
	 * Initial events from a version the cache has not reached: they wait
	 * for it, up to 3 s, then an ERROR event with the 504 (the apiserver's
	 * waitUntilWatchCacheFreshAndForceAllEvents). A plain watch from there
	 * starts now and waits for events newer than it, as the apiserver's.
	 */
	if (q->send_initial_events == 1 && !from_now && c->rv_numeric && n > c->rv) {
		if (!serve_rv_wait(r, c, n, serve_watch_too_large)) {
			serve_watch_too_large(r, rv, c->rv);
		}
		return;
	}
	struct serve_watch *w = calloc(1, sizeof(*w));
	if (!w) {
		kinf_apistatus_internal(&st, "out of memory");
		serve_respond_status(r, &st);
		kinf_apistatus_body_release(&st);
		return;
	}
	/* A watch of one object (watch/.../pods/NAME) is one of metadata.name=NAME. */
	struct kinf_buf fields = {0};
	if (r->path.name) {
		kinf_buf_putf(&fields, "metadata.name=%s%s%s", r->path.name,
				q->field_selector && q->field_selector[0] ? "," : "",
				q->field_selector ? q->field_selector : "");
	}
	int frc = kinf_buf_error(&fields);
	if (frc == 0) {
		frc = serve_filter_init(c, ns, q->label_selector,
				r->path.name ? fields.data : q->field_selector, &w->filter, &st);
	}
	kinf_buf_release(&fields);
	if (frc < 0) {
		serve_respond_status(r, &st);
		kinf_apistatus_body_release(&st);
		free(w);
		return;
	}
	w->task.run = initial_slice;
	w->task.srv = c->srv;
	w->coll = c;
	w->req = r->req;
	w->filtered = w->filter.namespace || w->filter.labels || w->filter.fields;
	w->bookmarks = q->allow_watch_bookmarks;
	w->include = "Metadata";
	for (size_t i = 0; i < r->accept.n; i++) {
		const struct kinf_accept_range *ar = &r->accept.ranges[i];
		if (ar->kind == KINF_ACCEPT_TABLE || ar->kind == KINF_ACCEPT_JSON) {
			w->table = ar->kind == KINF_ACCEPT_TABLE;
			break;
		}
	}
	if (w->table && q->include_object && q->include_object[0]) {
		if (strcmp(q->include_object, "None") == 0) {
			w->include = "None";
		} else if (strcmp(q->include_object, "Object") == 0) {
			w->include = "Object";
		}
	}
	/* Initial events: from "" or "0" unless sendInitialEvents=false; with it true always. */
	bool initial = q->send_initial_events == 1 || (from_now && q->send_initial_events != 0);
	if (initial) {
		if (!(w->initial = serve_snap_take(c, &w->filter))) {
			kinf_apistatus_internal(&st, "out of memory");
			serve_respond_status(r, &st);
			kinf_apistatus_body_release(&st);
			serve_filter_release(&w->filter);
			free(w);
			return;
		}
		w->next_seq = c->next_seq;
		w->end_bookmark = q->send_initial_events == 1;
		w->initial_rv = w->initial->rv;
	} else if (from_now) {
		w->next_seq = c->next_seq;
	} else if (!c->rv_numeric || n < c->window_rv) {
		too_old = true;
	} else {
		w->next_seq = seq_after(c, n);
		w->after_rv = n > c->rv ? n : 0;	/* ahead of the cache */
	}
	if (serve_warning_headers(r, &headers) < 0) {
		kinf_buf_release(&headers);
		serve_filter_release(&w->filter);
		serve_snap_unref(w->initial);
		free(w);
		serve_respond_oom(r);
		return;
	}
	int rc = kinf_httpd_stream_start(r->req, 200, "application/json",
			headers.len ? headers.data : NULL);
	kinf_buf_release(&headers);
	serve_count(r->srv, 200, r->start_us);
	w->next = c->watches;
	if (w->next) {
		w->next->prev = w;
	}
	c->watches = w;
	c->n_watches++;
	w->id = ++c->watch_total;
	c->srv->watch_clients++;
	if (rc < 0) {
		watch_unlink(w);
		kinf_httpd_req_abort(r->req);
		return;
	}
	kinf_httpd_req_on_close(r->req, on_close, w);
	kinf_httpd_stream_on_stall(r->req, stalled, w);
	if (!w->initial) {
		kinf_httpd_req_long_running(r->req, true);
	}
	if (too_old) {
		char msg[120];
		snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)", n, c->window_rv);
		watch_expire(w, msg);
		return;
	}
	long long timeout_s = q->has_timeout_seconds && q->timeout_seconds > 0 ?
		q->timeout_seconds : 1800 + rand() % 1800;
	w->deadline_timer = kinf_httpd_timer_add(c->srv->httpd, timeout_s * 1000, deadline, w);
	if (w->bookmarks) {
		w->bookmark_timer = kinf_httpd_timer_add(c->srv->httpd, c->srv->opts.bookmark_ms,
				bookmark_tick, w);
	}
	pump(w);
}

void serve_coll_end_watches(struct serve_coll *c) {
	while (c->watches) {
		watch_end(c->watches);
	}
}
