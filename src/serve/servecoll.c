#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "servecoll.h"

/*
 * servecoll.c: what a collection holds besides its store: its events
 * (made on the informers' thread, shared by every watch client's queue),
 * the window of the recent ones, and the requests waiting for it (before
 * its sync; for a resourceVersion it has not reached). A waiting request
 * is routed again through srv->dispatch: this file knows no handler and
 * not the router.
 */

/* ---- events ---- */

struct serve_event *serve_event_ref(struct serve_event *ev) {
	atomic_fetch_add(&ev->refs, 1);
	return ev;
}

void serve_event_unref(struct serve_event *ev) {
	if (!ev || atomic_fetch_sub(&ev->refs, 1) != 1) {
		return;
	}
	kinf_object_unref(ev->obj);
	kinf_object_unref(ev->old);
	kinf_buf_release(&ev->line);
	kinf_buf_release(&ev->added);
	kinf_buf_release(&ev->deleted);
	for (int i = 0; i < 3; i++) {
		kinf_buf_release(&ev->table_head[i]);
		kinf_buf_release(&ev->table_row[i]);
	}
	free(ev);
}

void serve_event_release(void *arg) {
	serve_event_unref(arg);
}

bool serve_parse_rv(const char *s, unsigned long long *ret) {
	unsigned long long v = 0;
	if (!s || !*s || strlen(s) > 19) {
		return false;
	}
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9') {
			return false;
		}
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	*ret = v;
	return true;
}

/* ---- the window ---- */

unsigned long long serve_coll_oldest_seq(const struct serve_coll *c) {
	return c->n ? c->ring[c->head]->seq : c->next_seq;
}

void serve_window_push(struct serve_coll *c, struct serve_event *ev) {
	ev->seq = c->next_seq++;
	if (c->n == c->cap) {
		struct serve_event *old = c->ring[c->head];
		c->window_rv = old->rv > c->window_rv ? old->rv : c->window_rv;
		serve_event_unref(old);
		c->head = (c->head + 1) % c->cap;
		c->n--;
	}
	c->ring[(c->head + c->n) % c->cap] = ev;
	c->n++;
}

struct serve_event *serve_coll_event_at(struct serve_coll *c, unsigned long long seq) {
	unsigned long long oldest = serve_coll_oldest_seq(c);
	if (seq < oldest || seq >= c->next_seq) {
		return NULL;
	}
	return c->ring[(c->head + (size_t)(seq - oldest)) % c->cap];
}

/* ---- requests held until the sync ---- */

static void pending_closed(struct kinf_httpd_req *req, void *arg) {
	struct serve_pending *p = arg;
	(void)req;
	if (p->prev) {
		p->prev->next = p->next;
	} else {
		p->coll->pending = p->next;
	}
	if (p->next) {
		p->next->prev = p->prev;
	}
	free(p);
}

bool serve_coll_hold(struct serve_coll *c, struct kinf_httpd_req *req) {
	struct serve_pending *p = calloc(1, sizeof(*p));
	if (!p) {
		return false;
	}
	p->req = req;
	p->coll = c;
	p->next = c->pending;
	if (p->next) {
		p->next->prev = p;
	}
	c->pending = p;
	kinf_httpd_req_on_close(req, pending_closed, p);
	return true;
}

void serve_coll_release_pending(struct serve_coll *c) {
	struct serve_pending *p = c->pending;
	c->pending = NULL;
	while (p) {
		struct serve_pending *next = p->next;
		kinf_httpd_req_on_close(p->req, NULL, NULL);
		c->srv->dispatch(p->req, c->srv);
		free(p);
		p = next;
	}
}

/* ---- reads from a resourceVersion ahead of the cache ---- */

/*
 * How long a read from a resourceVersion the cache has not reached waits
 * for it: the apiserver's watch cache waits as long (waitUntilFreshAndBlock,
 * blockTimeout 3 s) before its 504 "Too large resource version".
 */
#define RV_WAIT_MS 3000

struct serve_rvwait {
	struct serve_rvwait *next, *prev;
	struct serve_coll *coll;
	struct kinf_httpd_req *req;
	unsigned long long rv;
	serve_rv_timeout_fn *timeout;	/* what answers when the wait is over */
	struct kinf_httpd_timer *timer;
};

static void rvwait_unlink(struct serve_rvwait *w) {
	if (w->prev) {
		w->prev->next = w->next;
	} else {
		w->coll->rv_waits = w->next;
	}
	if (w->next) {
		w->next->prev = w->prev;
	}
	kinf_httpd_timer_cancel(w->coll->srv->httpd, w->timer);
	free(w);
}

static void rvwait_closed(struct kinf_httpd_req *req, void *arg) {
	(void)req;
	rvwait_unlink(arg);
}

/* The wait is over: 504 (by its timeout), as the apiserver answers after its 3 s. */
static void rvwait_timeout(void *arg) {
	struct serve_rvwait *w = arg;
	struct serve_coll *c = w->coll;
	struct serve_request r = {
		.srv = c->srv, .req = w->req, .head = kinf_httpd_req_head(w->req),
		.ctx = c->ctx, .start_us = kinf_clock_now_us(),
	};
	char rv[24];
	w->timer = NULL;
	snprintf(rv, sizeof(rv), "%llu", w->rv);
	serve_rv_timeout_fn *timeout = w->timeout;
	kinf_httpd_req_on_close(w->req, NULL, NULL);
	rvwait_unlink(w);
	timeout(&r, rv, c->rv);
}

void serve_coll_rv_advanced(struct serve_coll *c) {
	for (struct serve_rvwait *w = c->rv_waits, *next; w; w = next) {
		next = w->next;
		if (w->rv <= c->rv) {
			/* Routed again: now check_rv lets it through. */
			struct kinf_httpd_req *req = w->req;
			kinf_httpd_req_on_close(req, NULL, NULL);
			rvwait_unlink(w);
			c->srv->dispatch(req, c->srv);
		}
	}
}

bool serve_rv_wait(struct serve_request *r, struct serve_coll *c, unsigned long long rv,
		serve_rv_timeout_fn *timeout) {
	struct serve_rvwait *w = calloc(1, sizeof(*w));
	if (!w) {
		return false;
	}
	w->coll = c;
	w->req = r->req;
	w->rv = rv;
	w->timeout = timeout;
	w->timer = kinf_httpd_timer_add(c->srv->httpd, RV_WAIT_MS, rvwait_timeout, w);
	if (!w->timer) {
		free(w);
		return false;
	}
	w->next = c->rv_waits;
	if (w->next) {
		w->next->prev = w;
	}
	c->rv_waits = w;
	kinf_httpd_req_on_close(r->req, rvwait_closed, w);
	return true;
}

/* ---- what a context's collections cover ---- */

bool serve_forwards_namespaces(const struct kinf_serve *srv, size_t ctx) {
	bool namespaced = false;
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx != ctx) {
			continue;
		}
		if (!c->group[0] && strcmp(c->resource, "namespaces") == 0) {
			return false;	/* cached: answered from there */
		}
		namespaced |= c->namespaced;
	}
	return namespaced;
}
