#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kindcols.h"
#include "serverespond.h"
#include "servestream.h"

/*
 * What keeps one heavy client from taking serve away from the others:
 * snapshots shared by generation, work in slices between other clients'
 * (round robin, a bounded time per loop round), lists written as the
 * client reads them (a bounded queue per client), and admission (the
 * apiserver's 429 past a global budget).
 */

/* ---- snapshots ---- */

struct serve_snap *serve_snap_ref(struct serve_snap *s) {
	s->refs++;
	return s;
}

void serve_snap_unref(struct serve_snap *s) {
	if (!s || --s->refs) {
		return;
	}
	kinf_object_list_release(&s->objs);
	free(s->idx_name);
	free(s->idx_value);
	free(s);
}

void serve_coll_changed(struct serve_coll *c) {
	c->gen++;
	for (size_t i = 0; i < sizeof(c->snap_cache) / sizeof(c->snap_cache[0]); i++) {
		serve_snap_unref(c->snap_cache[i]);
		c->snap_cache[i] = NULL;
	}
}

static bool str_eq(const char *a, const char *b) {
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

struct serve_snap *serve_snap_wrap(struct serve_coll *c, struct kinf_object_list *objs) {
	struct serve_snap *s = calloc(1, sizeof(*s));
	if (!s) {
		return NULL;
	}
	s->refs = 1;
	s->coll = c;
	s->gen = c->gen;
	s->rv = c->rv;
	s->objs = *objs;
	memset(objs, 0, sizeof(*objs));
	return s;
}

struct serve_snap *serve_snap_take(struct serve_coll *c, const struct serve_filter *f) {
	int b = serve_filter_bucket(c, f);
	const char *name = b >= 0 ? f->idx[b].name : NULL, *value = b >= 0 ? f->idx[b].value : NULL;
	size_t n_cache = sizeof(c->snap_cache) / sizeof(c->snap_cache[0]), slot = 0;

	for (size_t i = 0; i < n_cache; i++) {
		struct serve_snap *s = c->snap_cache[i];
		if (s && s->gen == c->gen && str_eq(s->idx_name, name) &&
				str_eq(s->idx_value, value)) {
			return serve_snap_ref(s);
		}
		if (!s) {
			slot = i;
		}
	}
	struct kinf_object_list objs = {0};
	int rc = b >= 0 ? kinf_indexer_by_index(c->store, name, value, &objs, NULL) :
		kinf_indexer_list(c->store, &objs);
	struct serve_snap *s = rc == 0 ? serve_snap_wrap(c, &objs) : NULL;
	if (s && name && (!(s->idx_name = strdup(name)) || !(s->idx_value = strdup(value)))) {
		serve_snap_unref(s);
		s = NULL;
	}
	kinf_object_list_release(&objs);
	if (!s) {
		return NULL;
	}
	/* Kept for the next request of this generation (a full cache: the first goes). */
	serve_snap_unref(c->snap_cache[slot]);
	c->snap_cache[slot] = serve_snap_ref(s);
	return s;
}

/* ---- slices ---- */

static void run_slices(void *arg) {
	struct kinf_serve *srv = arg;
	long long t0 = kinf_clock_now_us();
	srv->slice_timer = NULL;
	/* Those woken meanwhile wait for the next round: no task runs twice in one. */
	struct serve_task *last = srv->ready_tail;
	while (srv->ready_head && kinf_clock_now_us() - t0 < SERVE_SLICE_ROUND_US) {
		struct serve_task *t = srv->ready_head;
		bool end = t == last;
		serve_task_cancel(srv, t);
		if (t->run(t)) {
			serve_task_wake(srv, t);
		}
		if (end) {
			break;
		}
	}
	if (srv->ready_head && !srv->slice_timer) {
		/* 0 ms: after this round's reads and writes, not before them. */
		srv->slice_timer = kinf_httpd_timer_add(srv->httpd, 0, run_slices, srv);
	}
}

void serve_task_wake(struct kinf_serve *srv, struct serve_task *t) {
	if (t->queued) {
		return;
	}
	t->queued = true;
	t->next = NULL;
	t->prev = srv->ready_tail;
	if (srv->ready_tail) {
		srv->ready_tail->next = t;
	} else {
		srv->ready_head = t;
	}
	srv->ready_tail = t;
	if (!srv->slice_timer) {
		srv->slice_timer = kinf_httpd_timer_add(srv->httpd, 0, run_slices, srv);
	}
}

void serve_task_cancel(struct kinf_serve *srv, struct serve_task *t) {
	if (!t->queued) {
		return;
	}
	if (t->prev) {
		t->prev->next = t->next;
	} else {
		srv->ready_head = t->next;
	}
	if (t->next) {
		t->next->prev = t->prev;
	} else {
		srv->ready_tail = t->prev;
	}
	t->next = t->prev = NULL;
	t->queued = false;
}

void serve_task_drained(struct kinf_httpd_req *req, void *arg) {
	struct serve_task *t = arg;
	(void)req;
	serve_task_wake(t->srv, t);
}

/* ---- admission ---- */

bool serve_admit_req(struct kinf_httpd_req *req, void *userdata) {
	struct kinf_serve *srv = userdata;
	static const char *const exempt[] = { "/healthz", "/livez", "/readyz", NULL };
	const struct kinf_httpreq *head = kinf_httpd_req_head(req);
	struct kinf_httpd_stats hs;
	for (size_t i = 0; exempt[i]; i++) {
		size_t n = strlen(exempt[i]);
		/* As the apiserver's "probes" flow schema (exempt): the paths and their checks. */
		if (strncmp(head->path, exempt[i], n) == 0 && (!head->path[n] || head->path[n] == '/')) {
			return true;
		}
	}
	kinf_httpd_stats(srv->httpd, &hs);
	/* inflight counts this request too. */
	bool busy = hs.inflight > srv->opts.max_inflight;
	if (!busy && hs.queued_bytes <= srv->opts.max_queued_bytes) {
		return true;
	}
	if (busy) {
		srv->refused_inflight++;
	} else {
		srv->refused_memory++;
	}
	serve_count(srv, 429, kinf_clock_now_us());
	kinf_httpd_respond(req, 429, "text/plain; charset=utf-8",
		"Retry-After: 1\r\nX-Content-Type-Options: nosniff\r\n",
		KINF_APISTATUS_TOO_MANY, strlen(KINF_APISTATUS_TOO_MANY));
	return false;
}

/* ---- lists in slices ---- */

struct list_stream {
	struct serve_task task;		/* first: the task is the stream */
	struct kinf_serve *srv;
	struct serve_coll *coll;
	struct kinf_httpd_req *req;
	struct serve_snap *snap;
	struct serve_filter filter;
	bool table;
	const char *include;
	/*
	 * A Table whose kind prints its rows in an order of its own
	 * (kinf_kindcols_sort_rows): the page's matching objects in that
	 * order (borrowed from the snapshot), pos and end index them.
	 */
	const struct kinf_object **rows;
	size_t pos, end;		/* the next candidate; one past the last of the page */
	size_t written;			/* items written: a comma before the next */
	struct kinf_error err;		/* a row without cells (a number beyond float64) */
};

static void list_stream_free(struct list_stream *ls) {
	serve_task_cancel(ls->srv, &ls->task);
	ls->srv->list_streams--;
	serve_filter_release(&ls->filter);
	serve_snap_unref(ls->snap);
	free(ls->rows);
	free(ls);
}

static void list_stream_closed(struct kinf_httpd_req *req, void *arg) {
	(void)req;
	list_stream_free(arg);
}

/*
 * The next items into out, up to SERVE_SLICE_BYTES (and SERVE_SLICE_US
 * unless first), then the list's end after the last. 1 when the list is
 * complete, 0 when more is left, or a negative KINF_E*.
 */
static int list_slice(struct list_stream *ls, struct kinf_buf *out, bool first) {
	long long t0 = kinf_clock_now_us();
	/* The first (in the handler) may take longer, so a small list is one answer. */
	long long limit = first ? 4 * SERVE_SLICE_US : SERVE_SLICE_US;
	size_t start = ls->pos;
	int rc = 0;
	while (rc == 0 && ls->pos < ls->end && out->len < SERVE_SLICE_BYTES) {
		const struct kinf_object *obj = ls->rows ? ls->rows[ls->pos++] :
			ls->snap->objs.v[ls->pos++];
		rc = ls->rows ? 1 : serve_filter_match(&ls->filter, obj);
		if (rc > 0) {
			rc = 0;
			if (ls->written++) {
				kinf_buf_putc(out, ',');
			}
			if (ls->table) {
				rc = serve_table_row(ls->coll, obj, ls->include, out, &ls->err);
			} else {
				rc = serve_append_item(obj, out);
			}
		}
		if (rc < 0) {
			break;
		}
		if (kinf_clock_now_us() - t0 >= limit && (!first || ls->pos - start >= 64)) {
			break;
		}
	}
	if (rc == 0 && ls->pos == ls->end) {
		kinf_buf_puts(out, "]}\n");
	}
	rc = rc < 0 ? rc : kinf_buf_error(out);
	return rc < 0 ? rc : ls->pos == ls->end;
}

static bool list_stream_run(struct serve_task *t) {
	struct list_stream *ls = (struct list_stream *)t;
	struct kinf_buf b = {0};
	int done = list_slice(ls, &b, false);
	if (done < 0) {
		/* Never a list with a hole in it: the connection goes. */
		kinf_buf_release(&b);
		kinf_httpd_req_on_close(ls->req, NULL, NULL);
		kinf_httpd_req_abort(ls->req);
		list_stream_free(ls);
		return false;
	}
	size_t len = b.len;
	int rc = kinf_httpd_stream_write_take(ls->req, kinf_buf_take(&b), len);
	if (rc < 0) {
		kinf_httpd_req_on_close(ls->req, NULL, NULL);
		kinf_httpd_req_abort(ls->req);
		list_stream_free(ls);
		return false;
	}
	if (done) {
		kinf_httpd_req_on_close(ls->req, NULL, NULL);
		kinf_httpd_stream_end(ls->req);
		list_stream_free(ls);
		return false;
	}
	if (kinf_httpd_stream_queued(ls->req) < SERVE_STREAM_BUDGET) {
		return true;
	}
	kinf_httpd_stream_on_drain(ls->req, SERVE_STREAM_BUDGET / 2, serve_task_drained, &ls->task);
	return false;
}

/* The page's rows in the order their kind prints them, when it has one of its own. */
static int sort_rows(struct list_stream *ls) {
	if (!kinf_kindcols_sorts_rows(ls->coll->columns)) {
		return 0;
	}
	size_t n = 0;
	ls->rows = calloc(ls->end - ls->pos + 1, sizeof(*ls->rows));
	if (!ls->rows) {
		return -KINF_ENOMEM;
	}
	for (size_t i = ls->pos; i < ls->end; i++) {
		int m = serve_filter_match(&ls->filter, ls->snap->objs.v[i]);
		if (m < 0) {
			return m;	/* never a table with a match left out */
		}
		if (m) {
			ls->rows[n++] = ls->snap->objs.v[i];
		}
	}
	ls->pos = 0;
	ls->end = n;
	return kinf_kindcols_sort_rows(ls->coll->columns, ls->rows, n);
}

void serve_list_stream(struct serve_request *r, struct serve_snap *snap, size_t from, size_t end,
		struct serve_filter *f, const struct serve_list_spec *spec) {
	struct list_stream *ls = calloc(1, sizeof(*ls));
	struct kinf_buf b = {0}, h = {0};
	if (!ls) {
		serve_filter_release(f);
		serve_respond_oom(r);
		return;
	}
	ls->task.run = list_stream_run;
	ls->task.srv = r->srv;
	ls->srv = r->srv;
	ls->coll = snap->coll;
	ls->req = r->req;
	ls->snap = serve_snap_ref(snap);
	ls->filter = *f;
	memset(f, 0, sizeof(*f));
	ls->table = spec->table;
	ls->include = spec->include;
	ls->pos = from;
	ls->end = end;
	r->srv->list_streams++;
	int rc = ls->table ? sort_rows(ls) : 0;
	rc = rc < 0 ? rc : serve_list_head(&b, ls->coll, spec);
	int done = rc < 0 ? rc : list_slice(ls, &b, true);
	if (done < 0 && done != -KINF_ENOMEM && ls->err.code) {
		/* An object without cells: say which, as the apiserver's table convertor fails. */
		struct kinf_apistatus_body st = {0};
		kinf_apistatus_internal(&st, ls->err.message);
		serve_respond_status(r, &st);
		kinf_apistatus_body_release(&st);
		kinf_buf_release(&b);
		list_stream_free(ls);
		return;
	}
	if (done < 0) {
		kinf_buf_release(&b);
		list_stream_free(ls);
		serve_respond_oom(r);
		return;
	}
	if (done) {
		/* All of it in one slice: one answer with its length, as before. */
		serve_respond_buf(r, 200, "application/json", &b);
		kinf_buf_release(&b);
		list_stream_free(ls);
		return;
	}
	bool head_only = strcmp(r->head->method, "HEAD") == 0;
	rc = serve_warning_headers(r, &h);
	if (rc == 0) {
		rc = kinf_httpd_stream_start(r->req, 200, "application/json",
				h.len ? h.data : NULL);
	}
	kinf_buf_release(&h);
	if (rc < 0) {
		kinf_buf_release(&b);
		list_stream_free(ls);
		kinf_httpd_req_abort(r->req);
		return;
	}
	serve_count(r->srv, 200, r->start_us);
	if (head_only) {
		/* The headers a GET would have, no body. */
		kinf_buf_release(&b);
		kinf_httpd_stream_end(r->req);
		list_stream_free(ls);
		return;
	}
	size_t len = b.len;
	if (kinf_httpd_stream_write_take(r->req, kinf_buf_take(&b), len) < 0) {
		list_stream_free(ls);
		kinf_httpd_req_abort(r->req);
		return;
	}
	kinf_httpd_req_on_close(r->req, list_stream_closed, ls);
	kinf_httpd_stream_whole(r->req);
	serve_task_wake(r->srv, &ls->task);
}

/* ---- what the bounds did, for /metrics ---- */

void serve_limit_metrics(struct kinf_serve *srv, const struct kinf_httpd_stats *hs,
		struct kinf_buf *b) {
	/* A metric's lines: a name with a HELP starts one, a label adds a series to it. */
	const struct {
		const char *name, *type, *help, *label;
		unsigned long long value;
	} m[] = {
		{ "kinf_serve_unauthenticated_connections", "gauge", "TCP connections that have not "
			"sent the token yet (TLS handshakes included).", NULL, hs->unauth },
		{ "kinf_serve_unix_connections", "gauge", "Connections on the unix sockets.", NULL,
			hs->unix_open },
		{ "kinf_serve_connections_dropped_total", "counter", "Connections dropped to make "
			"room for a new one, by the budget that was full.",
			"reason=\"unauthenticated_peer\"", hs->dropped_unauth_peer },
		{ "kinf_serve_connections_dropped_total", NULL, NULL, "reason=\"unauthenticated\"",
			hs->dropped_unauth },
		{ "kinf_serve_connections_dropped_total", NULL, NULL, "reason=\"idle\"",
			hs->dropped_idle },
		{ "kinf_serve_connections_refused_total", "counter", "Connections closed at once: "
			"every one open was busy.", NULL, hs->refused },
		{ "kinf_serve_requests_inflight", "gauge", "Requests being answered (watches past "
			"their initial events not counted).", NULL, hs->inflight },
		{ "kinf_serve_queued_bytes", "gauge", "Bytes of answers queued for clients (shared "
			"watch events not counted).", NULL, hs->queued_bytes },
		{ "kinf_serve_requests_refused_total", "counter", "Requests answered 429, by the "
			"budget that was full.", "reason=\"inflight\"", srv->refused_inflight },
		{ "kinf_serve_requests_refused_total", NULL, NULL, "reason=\"memory\"",
			srv->refused_memory },
		{ "kinf_serve_list_streams", "gauge", "Lists being written in slices as their "
			"clients read.", NULL, srv->list_streams },
		{ "kinf_serve_unpaged_lists_total", "counter", "Lists answered whole (limit "
			"ignored): the continue tokens' budget was full.", NULL, srv->unpaged },
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (m[i].help) {
			serve_metric_head(b, m[i].name, m[i].type, m[i].help);
		}
		kinf_buf_putf(b, "%s%s%s%s %llu\n", m[i].name, m[i].label ? "{" : "",
				m[i].label ? m[i].label : "", m[i].label ? "}" : "", m[i].value);
	}
}
