#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "http.h"
#include "serveproxy.h"
#include "serverespond.h"

/*
 * serveproxy.c: reads the caches do not answer, forwarded to the upstream
 * with the credentials of serve's client for the context (serve.h says
 * which). A forwarded request is relayed as the upstream answers it: its
 * status, its headers (hop-by-hop ones aside) and its body, streamed (a
 * watch stays a watch, a followed log stays open), or collected first
 * where serve rewrites it (the /openapi/v3 index under a /clusters/NAME
 * prefix) or remembers it (/version, answered from memory while the
 * upstream is away).
 *
 * Threads: each forwarded request runs kinf_http_get() on a worker
 * thread of its own, with a client cloned from the context's (kept for
 * the next when done, up to MAX_IDLE a context). The worker posts the
 * head, each piece of the body and the end to the loop thread
 * (kinf_httpd_post), which writes them to the client's connection. The
 * worker does not read more from the upstream while MAX_IN_FLIGHT bytes
 * are posted and not yet written: a client that stops reading stops the
 * upstream transfer, never piles it up here. When the client goes away
 * (or the server stops) the worker's transfer is interrupted.
 *
 * A proxy is shared by the loop (its request), the worker and the posts
 * and chunks in flight, each holding a reference. Locks: srv->proxy_lock
 * (the list of workers, the idle clients, the remembered /version), then
 * a proxy's own lock (its bytes in flight and its client), both leaves
 * otherwise: nothing else is called with them held but
 * kinf_http_interrupt(), which takes only the transport's leaf locks.
 */

#define MAX_PROXIES 64
#define MAX_IN_FLIGHT ((size_t)256 << 10)
#define MAX_IDLE 4

struct serve_proxy {
	struct kinf_serve *srv;
	size_t ctx;
	unsigned flags;			/* SERVE_FORWARD_* */
	atomic_uint refs;
	atomic_bool aborted;		/* the client went away, or the server stops */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t in_flight;		/* lock: bytes posted, not yet written */
	struct kinf_http *http;		/* lock: the worker's client, NULL once done */
	char *path;			/* upstream path and query */
	char *accept;			/* the client's Accept, or NULL */
	char *prefix;			/* the context's URL prefix ("" for the first) */
	char *what;			/* "GET /api/v1/pods", for messages */
	long long start_us;
	/* The worker's. */
	bool head_posted;
	struct kinf_http_response resp;
	/* The loop thread's. */
	struct kinf_httpd_req *req;	/* NULL once answered or gone */
	bool streaming;
	/* srv->proxy_lock */
	struct serve_proxy *next, *prev;
};

static void proxy_unref(struct serve_proxy *p) {
	if (!p || atomic_fetch_sub(&p->refs, 1) != 1) {
		return;
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	kinf_http_response_release(&p->resp);
	free(p->path);
	free(p->accept);
	free(p->prefix);
	free(p->what);
	free(p);
}

static struct serve_proxy *proxy_ref(struct serve_proxy *p) {
	atomic_fetch_add(&p->refs, 1);
	return p;
}

/* ---- the loop thread's side ---- */

/*
 * The relayed header lines of an upstream answer, into out: all but the
 * hop-by-hop ones and those httpd writes itself; a Location under the
 * context's prefix. 0 or -KINF_ENOMEM.
 */
static int relay_headers(const struct serve_proxy *p, const struct kinf_buf *in,
		struct kinf_buf *out) {
	static const char *const dropped[] = {
		"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "TE",
		"Trailer", "Upgrade", "Content-Length", "Content-Encoding", "Content-Type",
		"Date", NULL,
	};
	const char *s = in->data ? in->data : "";
	const char *end = s + in->len;
	while (s < end) {
		const char *eol = strstr(s, "\r\n");
		if (!eol) {
			break;
		}
		const char *colon = memchr(s, ':', (size_t)(eol - s));
		bool keep = colon != NULL;
		for (size_t i = 0; keep && dropped[i]; i++) {
			keep = !((size_t)(colon - s) == strlen(dropped[i]) &&
				strncasecmp(s, dropped[i], (size_t)(colon - s)) == 0);
		}
		if (keep && p->prefix[0] && (size_t)(colon - s) == 8 &&
				strncasecmp(s, "Location", 8) == 0) {
			const char *v = colon + 1;
			while (*v == ' ') {
				v++;
			}
			if (*v == '/') {
				kinf_buf_putf(out, "Location: %s", p->prefix);
				kinf_buf_put(out, v, (size_t)(eol - v));
				kinf_buf_puts(out, "\r\n");
				s = eol + 2;
				continue;
			}
		}
		if (keep) {
			kinf_buf_put(out, s, (size_t)(eol + 2 - s));
		}
		s = eol + 2;
	}
	if (p->flags & SERVE_FORWARD_VERSION) {
		/* The upstream's version is the body; kinf's own goes here. */
		kinf_buf_putf(out, "Kinf-Serve-Version: %s\r\n", p->srv->version);
	}
	return kinf_buf_error(out);
}

/* Stop p's worker: its wait for the client, and its transfer. Any thread. */
static void proxy_abort(struct serve_proxy *p) {
	atomic_store(&p->aborted, true);
	pthread_mutex_lock(&p->lock);
	pthread_cond_signal(&p->cond);
	if (p->http) {
		kinf_http_interrupt(p->http);
	}
	pthread_mutex_unlock(&p->lock);
}

static void proxy_closed(struct kinf_httpd_req *req, void *arg) {
	struct serve_proxy *p = arg;
	(void)req;
	p->req = NULL;
	proxy_abort(p);
	proxy_unref(p);		/* the request's */
}

/* The request is answered (or cut): the loop's reference goes. */
static void proxy_done(struct serve_proxy *p) {
	p->req = NULL;
	proxy_unref(p);
}

/* A minimal serve_request for the answers serverespond.c builds (Status, warnings). */
static struct serve_request request_of(struct serve_proxy *p) {
	return (struct serve_request){
		.srv = p->srv, .req = p->req, .ctx = p->ctx, .prefix = p->prefix,
		.start_us = p->start_us,
	};
}

/* Cut the client's connection: an answer that cannot be finished is not made to look whole. */
static void proxy_cut(struct serve_proxy *p) {
	kinf_httpd_req_on_close(p->req, NULL, NULL);
	kinf_httpd_req_abort(p->req);
	proxy_done(p);
}

struct head_post {
	struct serve_proxy *p;
	long status;
	char *content_type;
	struct kinf_buf headers;
};

static void apply_head(void *arg) {
	struct head_post *h = arg;
	struct serve_proxy *p = h->p;
	struct kinf_buf extra = {0};
	if (p->req) {
		int rc = relay_headers(p, &h->headers, &extra);
		if (rc == 0) {
			rc = kinf_httpd_stream_start(p->req, (int)h->status, h->content_type,
					extra.len ? extra.data : NULL);
		}
		if (rc < 0) {
			proxy_cut(p);
		} else {
			p->streaming = true;
			serve_count(p->srv, (int)h->status, p->start_us);
		}
	}
	kinf_buf_release(&extra);
	kinf_buf_release(&h->headers);
	free(h->content_type);
	free(h);
	proxy_unref(p);
}

struct chunk {
	struct serve_proxy *p;
	size_t len;
	char data[];
};

/* A chunk is written (or dropped): the worker may read on. */
static void chunk_release(void *arg) {
	struct chunk *k = arg;
	struct serve_proxy *p = k->p;
	pthread_mutex_lock(&p->lock);
	p->in_flight -= k->len;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	free(k);
	proxy_unref(p);
}

static void apply_chunk(void *arg) {
	struct chunk *k = arg;
	struct serve_proxy *p = k->p;
	if (!p->req || !p->streaming) {
		chunk_release(k);
		return;
	}
	/* (on an error the release has run) */
	if (kinf_httpd_stream_write_ref(p->req, k->data, k->len, chunk_release, k) < 0) {
		proxy_cut(p);
	}
}

enum end_how {
	END_STREAM,		/* the streamed body is complete */
	END_ANSWER,		/* a whole answer: status, headers, body */
	END_FAILED,		/* no answer from the upstream: why */
};

struct end_post {
	struct serve_proxy *p;
	enum end_how how;
	int rc;
	char *why;
};

/* The upstream could not be asked or did not answer in full. */
static void answer_failed(struct serve_proxy *p, const struct end_post *e) {
	struct serve_request r = request_of(p);
	struct serve_ctx *x = &p->srv->ctxs[p->ctx];
	struct kinf_apistatus_body st = {0};
	struct kinf_buf msg = {0};

	if (p->streaming) {
		/* Half an answer: the client sees the connection cut, as from the upstream. */
		proxy_cut(p);
		return;
	}
	if (p->flags & SERVE_FORWARD_VERSION) {
		pthread_mutex_lock(&p->srv->proxy_lock);
		struct kinf_buf b = {0}, h = {0};
		kinf_buf_put(&b, x->version_body.data, x->version_body.len);
		pthread_mutex_unlock(&p->srv->proxy_lock);
		if (b.len) {
			/* Remembered: the upstream's version while it is away. */
			kinf_httpd_req_on_close(p->req, NULL, NULL);
			if (serve_warning_headers(&r, &h) == 0 && !kinf_buf_error(&b)) {
				kinf_buf_putf(&h, "Kinf-Serve-Version: %s\r\n", p->srv->version);
			}
			if (kinf_buf_error(&h) || kinf_buf_error(&b)) {
				serve_respond_oom(&r);
			} else {
				serve_count(p->srv, 200, p->start_us);
				kinf_httpd_respond(p->req, 200, "application/json", h.data, b.data, b.len);
			}
			kinf_buf_release(&b);
			kinf_buf_release(&h);
			proxy_done(p);
			return;
		}
		kinf_buf_release(&b);
	}
	if (e->rc == -KINF_ECANCELED) {
		proxy_cut(p);
		return;
	}
	char desc[600];
	if (x->name) {
		snprintf(desc, sizeof(desc), "context \"%s\" (%s)", x->name, x->upstream);
	} else {
		snprintf(desc, sizeof(desc), "%s", x->upstream);
	}
	kinf_buf_putf(&msg, "kinf serve: %s: the upstream %s did not answer: %s", p->what, desc,
			e->why ? e->why : kinf_strerror(e->rc));
	kinf_httpd_req_on_close(p->req, NULL, NULL);
	if (kinf_buf_error(&msg) == 0) {
		kinf_apistatus_unavailable(&st, msg.data);
	}
	if (kinf_buf_error(&msg) || kinf_buf_error(&st.json)) {
		serve_respond_oom(&r);
	} else {
		serve_respond_status(&r, &st);
	}
	kinf_apistatus_body_release(&st);
	kinf_buf_release(&msg);
	proxy_done(p);
}

/*
 * The /openapi/v3 index under a /clusters/NAME prefix: its documents'
 * serverRelativeURLs are the upstream's paths, so they get the prefix.
 */
static void rewrite_index(const struct serve_proxy *p, const struct kinf_buf *in,
		struct kinf_buf *out) {
	static const char *const keys[] = { "\"serverRelativeURL\":\"/", "\"serverRelativeURL\": \"/" };
	const char *s = in->data ? in->data : "";
	const char *end = s + in->len;
	while (s < end) {
		const char *hit = NULL;
		size_t klen = 0;
		for (size_t i = 0; i < 2; i++) {
			const char *h = strstr(s, keys[i]);
			if (h && (!hit || h < hit)) {
				hit = h;
				klen = strlen(keys[i]) - 1;	/* up to the slash */
			}
		}
		if (!hit) {
			kinf_buf_put(out, s, (size_t)(end - s));
			break;
		}
		kinf_buf_put(out, s, (size_t)(hit + klen - s));
		kinf_buf_puts(out, p->prefix);
		s = hit + klen;
	}
}

/* A collected answer (or an error answer), whole. */
static void answer_whole(struct serve_proxy *p) {
	struct kinf_http_response *resp = &p->resp;
	struct kinf_buf extra = {0}, body = {0};
	struct serve_request r = request_of(p);
	const struct kinf_buf *b = &resp->body;

	if ((p->flags & SERVE_FORWARD_OPENAPI_INDEX) && p->prefix[0] && resp->status == 200) {
		rewrite_index(p, &resp->body, &body);
		b = &body;
	}
	if ((p->flags & SERVE_FORWARD_VERSION) && resp->status == 200) {
		struct serve_ctx *x = &p->srv->ctxs[p->ctx];
		pthread_mutex_lock(&p->srv->proxy_lock);
		kinf_buf_reset(&x->version_body);
		kinf_buf_put(&x->version_body, b->data ? b->data : "", b->len);
		if (kinf_buf_error(&x->version_body)) {
			kinf_buf_release(&x->version_body);
		}
		pthread_mutex_unlock(&p->srv->proxy_lock);
	}
	kinf_httpd_req_on_close(p->req, NULL, NULL);
	if (relay_headers(p, &resp->headers, &extra) < 0 || kinf_buf_error(b)) {
		serve_respond_oom(&r);
	} else {
		serve_count(p->srv, (int)resp->status, p->start_us);
		kinf_httpd_respond(p->req, (int)resp->status, resp->content_type,
				extra.len ? extra.data : NULL, b->data ? b->data : "", b->len);
	}
	kinf_buf_release(&extra);
	kinf_buf_release(&body);
	proxy_done(p);
}

static void apply_end(void *arg) {
	struct end_post *e = arg;
	struct serve_proxy *p = e->p;
	if (p->req) {
		switch (e->how) {
		case END_STREAM:
			if (p->streaming) {
				kinf_httpd_req_on_close(p->req, NULL, NULL);
				kinf_httpd_stream_end(p->req);
				proxy_done(p);
			} else {
				answer_whole(p);	/* a 2xx with no body */
			}
			break;
		case END_ANSWER:
			if (p->streaming) {
				proxy_cut(p);
			} else {
				answer_whole(p);
			}
			break;
		case END_FAILED:
			answer_failed(p, e);
			break;
		}
	}
	free(e->why);
	free(e);
	proxy_unref(p);
}

/* ---- the worker ---- */

static int aborted_cb(void *userdata) {
	struct serve_proxy *p = userdata;
	return atomic_load(&p->aborted) ? -KINF_ECANCELED : 0;
}

static bool canceled_cb(void *userdata) {
	return aborted_cb(userdata) < 0;
}

/* Post fn(arg) to the loop; on failure (out of memory) the transfer ends. */
static int post(struct serve_proxy *p, void (*fn)(void *), void *arg) {
	return kinf_httpd_post(p->srv->httpd, fn, arg);
}

/* A piece of a 2xx body: the head first, then the piece, paced by the client. */
static int on_body(const char *data, size_t len, void *userdata) {
	struct serve_proxy *p = userdata;

	pthread_mutex_lock(&p->lock);
	while (p->in_flight > MAX_IN_FLIGHT && !atomic_load(&p->aborted)) {
		pthread_cond_wait(&p->cond, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	if (atomic_load(&p->aborted)) {
		return -KINF_ECANCELED;
	}
	if (!p->head_posted) {
		struct head_post *h = calloc(1, sizeof(*h));
		if (!h) {
			return -KINF_ENOMEM;
		}
		h->p = proxy_ref(p);
		h->status = p->resp.status;
		h->headers = p->resp.headers;
		p->resp.headers = (struct kinf_buf){0};
		if ((p->resp.content_type && !(h->content_type = strdup(p->resp.content_type))) ||
				post(p, apply_head, h) < 0) {
			kinf_buf_release(&h->headers);
			free(h->content_type);
			free(h);
			proxy_unref(p);
			return -KINF_ENOMEM;
		}
		p->head_posted = true;
	}
	if (!len) {
		return 0;
	}
	struct chunk *k = malloc(sizeof(*k) + len);
	if (!k) {
		return -KINF_ENOMEM;
	}
	k->p = proxy_ref(p);
	k->len = len;
	memcpy(k->data, data, len);
	pthread_mutex_lock(&p->lock);
	p->in_flight += len;
	pthread_mutex_unlock(&p->lock);
	if (post(p, apply_chunk, k) < 0) {
		chunk_release(k);
		return -KINF_ENOMEM;
	}
	return 0;
}

/* A client of ctx for the worker: an idle one, or a new clone. NULL: none. */
static struct kinf_http *client_take(struct kinf_serve *srv, size_t ctx) {
	struct serve_ctx *x = &srv->ctxs[ctx];
	struct kinf_http *h = NULL;
	pthread_mutex_lock(&srv->proxy_lock);
	if (x->n_idle) {
		h = x->idle[--x->n_idle];
	}
	pthread_mutex_unlock(&srv->proxy_lock);
	return h ? h : kinf_http_clone(x->http);
}

static void client_put(struct kinf_serve *srv, size_t ctx, struct kinf_http *h) {
	struct serve_ctx *x = &srv->ctxs[ctx];
	if (!h) {
		return;
	}
	pthread_mutex_lock(&srv->proxy_lock);
	if (x->n_idle < MAX_IDLE) {
		x->idle[x->n_idle++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&srv->proxy_lock);
	kinf_http_free(h);
}

static void *worker(void *arg) {
	struct serve_proxy *p = arg;
	struct kinf_serve *srv = p->srv;
	struct kinf_error err = {0};
	struct end_post *e = calloc(1, sizeof(*e));
	struct kinf_http *http = client_take(srv, p->ctx);
	int rc;

	pthread_mutex_lock(&p->lock);
	p->http = http;
	pthread_mutex_unlock(&p->lock);
	if (!e || !http) {
		rc = kinf_error_set(&err, KINF_ENOMEM, "out of memory");
	} else {
		/* Its own client: warnings go on in the headers, the cancel is this request's. */
		kinf_http_set_warning(http, NULL, NULL);
		kinf_http_set_cancel(http, canceled_cb, p);
		struct kinf_http_request hr = {
			.path = p->path,
			.accept = p->accept,
			.on_body = (p->flags & SERVE_FORWARD_COLLECT) ? NULL : on_body,
			.aborted = aborted_cb,
			.userdata = p,
			.timeout_ms = -1,
			.watch = true,
			.keep_headers = true,
			.relay = true,
		};
		rc = atomic_load(&p->aborted) ? -KINF_ECANCELED : kinf_http_get(http, &hr, &p->resp, &err);
	}
	pthread_mutex_lock(&p->lock);
	p->http = NULL;
	pthread_mutex_unlock(&p->lock);
	if (http) {
		kinf_http_set_cancel(http, NULL, NULL);
	}
	/* A client whose transfer was cut may hold a half-read connection: not kept. */
	if (rc == 0 || rc == -KINF_EHTTP || rc == -KINF_EGONE || rc == -KINF_EAUTH) {
		client_put(srv, p->ctx, http);
	} else {
		kinf_http_free(http);
	}
	if (e) {
		e->p = proxy_ref(p);
		e->rc = rc;
		if (rc == 0) {
			e->how = END_STREAM;
		} else if ((rc == -KINF_EHTTP || rc == -KINF_EGONE || rc == -KINF_EAUTH) &&
				!p->head_posted && p->resp.status) {
			e->how = END_ANSWER;
		} else {
			e->how = END_FAILED;
			e->why = err.message[0] ? strdup(err.message) : NULL;
		}
		if (post(p, apply_end, e) < 0) {
			/* No memory to say so: the loop still has the request; stop frees it. */
			free(e->why);
			free(e);
			proxy_unref(p);
		}
	}
	pthread_mutex_lock(&srv->proxy_lock);
	if (p->prev) {
		p->prev->next = p->next;
	} else {
		srv->proxies = p->next;
	}
	if (p->next) {
		p->next->prev = p->prev;
	}
	srv->n_proxies--;
	pthread_cond_broadcast(&srv->proxy_done);
	pthread_mutex_unlock(&srv->proxy_lock);
	proxy_unref(p);		/* the worker's */
	return NULL;
}

/* ---- forwarding ---- */

/* The request's target after the context's /clusters/NAME prefix (raw, with its query). */
static const char *upstream_target(const struct serve_request *r) {
	const char *t = r->head->target;
	if (r->prefix[0] && strncmp(t, "/clusters/", 10) == 0) {
		t += 10 + strcspn(t + 10, "/?");
		if (*t != '/') {
			return NULL;	/* "/clusters/NAME" alone: nothing upstream */
		}
	}
	return t;
}

void serve_forward(struct serve_request *r, unsigned flags) {
	struct kinf_serve *srv = r->srv;
	struct serve_ctx *x = &srv->ctxs[r->ctx];
	struct kinf_apistatus_body st = {0};
	const char *target = upstream_target(r);
	const char *accept = kinf_httpreq_header(r->head, "Accept");

	if (!x->http || !target) {
		struct kinf_buf msg = {0};
		kinf_buf_putf(&msg, "kinf serve has no client for the upstream of %s",
				x->name ? x->name : x->upstream);
		if (!target) {
			serve_respond(r, 404, "text/plain; charset=utf-8", KINF_APISTATUS_PAGE_NOT_FOUND,
					strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
		} else if (kinf_buf_error(&msg) ||
				(kinf_apistatus_unavailable(&st, msg.data), kinf_buf_error(&st.json))) {
			serve_respond_oom(r);
		} else {
			serve_respond_status(r, &st);
		}
		kinf_buf_release(&msg);
		kinf_apistatus_body_release(&st);
		return;
	}
	struct serve_proxy *p = calloc(1, sizeof(*p));
	if (!p) {
		serve_respond_oom(r);
		return;
	}
	atomic_init(&p->refs, 2);	/* the request's and the worker's */
	atomic_init(&p->aborted, false);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->srv = srv;
	p->ctx = r->ctx;
	p->flags = flags;
	p->req = r->req;
	p->start_us = r->start_us;
	p->path = strdup(target);
	p->accept = accept ? strdup(accept) : NULL;
	p->prefix = strdup(r->prefix);
	struct kinf_buf what = {0};
	kinf_buf_putf(&what, "%s %s", r->head->method, r->head->path);
	p->what = kinf_buf_take(&what);
	if (!p->path || (accept && !p->accept) || !p->prefix || !p->what) {
		atomic_store(&p->refs, 1);
		proxy_unref(p);
		serve_respond_oom(r);
		return;
	}
	pthread_mutex_lock(&srv->proxy_lock);
	if (srv->n_proxies >= MAX_PROXIES) {
		pthread_mutex_unlock(&srv->proxy_lock);
		atomic_store(&p->refs, 1);
		proxy_unref(p);
		/* As the apiserver's max-in-flight filter answers. */
		kinf_httpd_respond(r->req, 429, "text/plain; charset=utf-8", "Retry-After: 1\r\n",
				KINF_APISTATUS_TOO_MANY, strlen(KINF_APISTATUS_TOO_MANY));
		serve_count(srv, 429, r->start_us);
		return;
	}
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	p->next = srv->proxies;
	if (p->next) {
		p->next->prev = p;
	}
	srv->proxies = p;
	srv->n_proxies++;
	srv->forwarded++;
	kinf_httpd_req_on_close(r->req, proxy_closed, p);
	int rc = pthread_create(&t, &attr, worker, p);
	if (rc != 0) {
		srv->proxies = p->next;
		if (p->next) {
			p->next->prev = NULL;
		}
		srv->n_proxies--;
		srv->forwarded--;
	}
	pthread_mutex_unlock(&srv->proxy_lock);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		kinf_httpd_req_on_close(r->req, NULL, NULL);
		atomic_store(&p->refs, 1);
		proxy_unref(p);
		kinf_apistatus_unavailable(&st, "kinf serve: no thread for the upstream request");
		serve_respond_status(r, &st);
		kinf_apistatus_body_release(&st);
	}
}

void serve_proxies_end(struct kinf_serve *srv) {
	pthread_mutex_lock(&srv->proxy_lock);
	for (struct serve_proxy *p = srv->proxies; p; p = p->next) {
		proxy_abort(p);
	}
	while (srv->n_proxies) {
		pthread_cond_wait(&srv->proxy_done, &srv->proxy_lock);
	}
	for (size_t i = 0; i < srv->n_ctxs; i++) {
		struct serve_ctx *x = &srv->ctxs[i];
		while (x->n_idle) {
			kinf_http_free(x->idle[--x->n_idle]);
		}
	}
	pthread_mutex_unlock(&srv->proxy_lock);
}
