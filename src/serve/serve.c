#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "http.h"
#include "indexfuncs.h"
#include "json.h"
#include "kindcols.h"
#include "serveint.h"

/*
 * serve.c: the server's sources and collections, the hand-over of events
 * from the informers' thread, routing (what the caches answer, what goes
 * upstream: serveproxy.c), and the answers that are not about one
 * resource type (health, metrics).
 */

#define DEFAULT_WINDOW 10000
#define DEFAULT_MAX_LAG 1000
#define DEFAULT_BOOKMARK_MS 60000
#define DEFAULT_MAX_INFLIGHT 400	/* kube-apiserver's --max-requests-inflight */
#define DEFAULT_MAX_QUEUED (64u << 20)

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

/* ---- setup ---- */

int kinf_serve_new(const struct kinf_serve_opts *opts, struct kinf_serve **ret,
		struct kinf_error *reterr) {
	struct kinf_serve *srv = calloc(1, sizeof(*srv));
	if (!srv) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	srv->opts = *opts;
	if (!srv->opts.window) {
		srv->opts.window = DEFAULT_WINDOW;
	}
	if (!srv->opts.max_lag) {
		srv->opts.max_lag = DEFAULT_MAX_LAG;
	}
	if (srv->opts.max_lag > srv->opts.window) {
		srv->opts.max_lag = srv->opts.window;
	}
	if (srv->opts.bookmark_ms <= 0) {
		srv->opts.bookmark_ms = DEFAULT_BOOKMARK_MS;
	}
	if (!srv->opts.max_inflight) {
		srv->opts.max_inflight = DEFAULT_MAX_INFLIGHT;
	}
	if (!srv->opts.max_queued_bytes) {
		srv->opts.max_queued_bytes = DEFAULT_MAX_QUEUED;
	}
	srv->token = opts->token ? strdup(opts->token) : NULL;
	srv->version = strdup(opts->version ? opts->version : "unknown");
	srv->opts.token = srv->token;
	srv->opts.tls = NULL;	/* httpd holds its own reference */
	srv->opts.version = srv->version;
	atomic_init(&srv->stopping, false);
	pthread_mutex_init(&srv->proxy_lock, NULL);
	pthread_cond_init(&srv->proxy_done, NULL);
	/*
	 * As kube-apiserver's system:public-info-viewer, probes need no token;
	 * /version does here (the upstream's, asked with serve's credentials).
	 */
	static const char *const public_paths[] = {
		"/healthz", "/livez", "/readyz", NULL,
	};
	struct kinf_httpd_opts ho = {
		.userdata = srv,
		.token = srv->token,
		.public_paths = public_paths,
		.tls = opts->tls,
		/* A watch client's queue: its lag is counted in events, this is the slack. */
		.max_queue = 4u << 20,
		.write_timeout_ms = opts->write_timeout_ms > 0 && opts->write_timeout_ms < INT_MAX ?
			(int)opts->write_timeout_ms : 0,
	};
	ho.handler = serve_handle;
	ho.admit = serve_admit_req;
	srv->httpd = kinf_httpd_new(&ho);
	if (!srv->httpd || !srv->version || (opts->token && !srv->token)) {
		kinf_serve_free(srv);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	*ret = srv;
	return 0;
}

static void coll_free(struct serve_coll *c) {
	if (!c) {
		return;
	}
	free(c->group);
	free(c->version);
	free(c->resource);
	free(c->singular);
	free(c->kind);
	free(c->api_version);
	free(c->list_kind);
	kinf_strv_release(&c->short_names);
	kinf_strv_release(&c->categories);
	kinf_strv_release(&c->namespaces);
	kinf_kindcols_unref(c->columns);
	serve_coll_warnings_release(c);
	for (size_t i = 0; i < sizeof(c->snap_cache) / sizeof(c->snap_cache[0]); i++) {
		serve_snap_unref(c->snap_cache[i]);
	}
	kinf_indexer_free(c->store);
	for (size_t i = 0; i < c->n; i++) {
		serve_event_unref(c->ring[(c->head + i) % c->cap]);
	}
	free(c->ring);
	free(c);
}

void kinf_serve_free(struct kinf_serve *srv) {
	if (!srv) {
		return;
	}
	/* Connections close first: their on-close callbacks unlink watches. */
	kinf_httpd_free(srv->httpd);
	serve_snapshots_release(srv);
	for (size_t i = 0; i < srv->n_colls; i++) {
		coll_free(srv->colls[i]);
	}
	free(srv->colls);
	for (size_t i = 0; i < srv->n_sources; i++) {
		free(srv->sources[i].namespace);
		free(srv->sources[i].why);
		free(srv->sources[i].failed);
	}
	free(srv->sources);
	for (size_t i = 0; i < srv->n_ctxs; i++) {
		free(srv->ctxs[i].name);
		free(srv->ctxs[i].upstream);
		free(srv->ctxs[i].down_why);
		kinf_buf_release(&srv->ctxs[i].version_body);
		/* (idle clients only outlive a kinf_serve_run() that never ran) */
		while (srv->ctxs[i].n_idle) {
			kinf_http_free(srv->ctxs[i].idle[--srv->ctxs[i].n_idle]);
		}
	}
	free(srv->ctxs);
	pthread_mutex_destroy(&srv->proxy_lock);
	pthread_cond_destroy(&srv->proxy_done);
	kinf_free_secret(srv->token);
	free(srv->version);
	free(srv);
}

static bool str_eq(const char *a, const char *b) {
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The context named name (NULL: none), added when new; SIZE_MAX when out of memory. */
static size_t find_ctx(struct kinf_serve *srv, const char *name, const char *upstream) {
	for (size_t i = 0; i < srv->n_ctxs; i++) {
		if (str_eq(srv->ctxs[i].name, name)) {
			return i;
		}
	}
	struct serve_ctx *v = realloc(srv->ctxs, (srv->n_ctxs + 1) * sizeof(*v));
	if (!v) {
		return SIZE_MAX;
	}
	srv->ctxs = v;
	struct serve_ctx *c = &v[srv->n_ctxs];
	memset(c, 0, sizeof(*c));
	c->name = name ? strdup(name) : NULL;
	c->upstream = strdup(upstream ? upstream : "");
	if ((name && !c->name) || !c->upstream) {
		free(c->name);
		free(c->upstream);
		return SIZE_MAX;
	}
	return srv->n_ctxs++;
}

/* Install the indexes a kind's field selectors are answered from. */
static int install_indexes(struct serve_coll *c) {
	static const char *const pod_indexes[] = { "node", "phase", NULL };
	if (c->group[0] || strcmp(c->kind, "Pod") != 0) {
		return 0;
	}
	for (size_t i = 0; pod_indexes[i]; i++) {
		struct kinf_index_spec spec = {0};
		int rc = kinf_index_spec_resolve(pod_indexes[i], NULL, NULL, &spec, NULL);
		if (rc == 0) {
			rc = kinf_index_spec_install(&spec, c->store, NULL);
		}
		kinf_index_spec_release(&spec);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

static struct serve_coll *coll_new(struct kinf_serve *srv, size_t ctx,
		const struct kinf_serve_source *src) {
	struct serve_coll *c = calloc(1, sizeof(*c));
	struct kinf_buf b = {0};
	if (!c) {
		return NULL;
	}
	c->srv = srv;
	c->ctx = ctx;
	c->group = strdup(src->group ? src->group : "");
	c->version = strdup(src->version);
	c->resource = strdup(src->resource);
	c->singular = strdup(src->singular && src->singular[0] ? src->singular : "");
	c->kind = strdup(src->kind);
	c->namespaced = src->namespaced;
	c->columns = src->columns ? kinf_kindcols_ref(src->columns) :
		kinf_kindcols_for(src->group, src->kind);
	c->rv_numeric = true;
	c->next_seq = 1;
	c->cap = srv->opts.window;
	c->ring = calloc(c->cap, sizeof(*c->ring));
	c->store = kinf_indexer_new();
	if (c->group && c->group[0]) {
		kinf_buf_putf(&b, "%s/%s", c->group, c->version);
	} else {
		kinf_buf_puts(&b, src->version);
	}
	c->api_version = kinf_buf_take(&b);
	kinf_buf_putf(&b, "%sList", src->kind);
	c->list_kind = kinf_buf_take(&b);
	bool ok = c->group && c->version && c->resource && c->singular && c->kind &&
		c->ring && c->store && c->api_version && c->list_kind;
	for (size_t i = 0; ok && src->short_names && src->short_names[i]; i++) {
		ok = kinf_strv_push_str(&c->short_names, src->short_names[i]) == 0;
	}
	for (size_t i = 0; ok && src->categories && src->categories[i]; i++) {
		ok = kinf_strv_push_str(&c->categories, src->categories[i]) == 0;
	}
	if (!ok || install_indexes(c) < 0) {
		coll_free(c);
		return NULL;
	}
	return c;
}

int kinf_serve_add_source(struct kinf_serve *srv, const struct kinf_serve_source *src,
		size_t *ret_id, struct kinf_error *reterr) {
	size_t ctx = find_ctx(srv, src->context, src->upstream);
	struct serve_coll *c = NULL;

	if (ctx == SIZE_MAX) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (!srv->ctxs[ctx].http) {
		srv->ctxs[ctx].http = src->http;
	}
	for (size_t i = 0; i < srv->n_colls && !c; i++) {
		struct serve_coll *o = srv->colls[i];
		if (o->ctx == ctx && strcmp(o->group, src->group ? src->group : "") == 0 &&
				strcmp(o->resource, src->resource) == 0) {
			c = o;
		}
	}
	if (!c) {
		struct serve_coll **v = realloc(srv->colls, (srv->n_colls + 1) * sizeof(*v));
		if (!v) {
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		srv->colls = v;
		if (!(c = coll_new(srv, ctx, src))) {
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		srv->colls[srv->n_colls++] = c;
	}
	struct serve_source *v = realloc(srv->sources, (srv->n_sources + 1) * sizeof(*v));
	if (!v) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	srv->sources = v;
	struct serve_source *s = &v[srv->n_sources];
	memset(s, 0, sizeof(*s));
	atomic_init(&s->handover, 0);
	s->coll = c;
	s->ctx = ctx;
	s->informer = src->informer;
	s->up = true;
	if (src->namespace && c->namespaced) {
		if (!(s->namespace = strdup(src->namespace)) ||
				(!kinf_strv_contains(&c->namespaces, src->namespace) &&
				kinf_strv_push_str(&c->namespaces, src->namespace) < 0)) {
			free(s->namespace);
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
	} else if (c->namespaced) {
		c->namespaces.n = 0;	/* all of them: the namespace list no longer limits */
		kinf_strv_release(&c->namespaces);
	}
	c->n_sources++;
	if (ret_id) {
		*ret_id = srv->n_sources;
	}
	srv->n_sources++;
	return 0;
}

int kinf_serve_listen(struct kinf_serve *srv, const char *addr, struct kinf_error *reterr) {
	return kinf_httpd_listen(srv->httpd, addr, reterr);
}

const char *kinf_serve_address(const struct kinf_serve *srv, size_t i) {
	return kinf_httpd_address(srv->httpd, i);
}

const char *kinf_serve_url(const struct kinf_serve *srv, size_t i) {
	return kinf_httpd_url(srv->httpd, i);
}

size_t kinf_serve_n_contexts(const struct kinf_serve *srv) {
	return srv->n_ctxs;
}

const char *kinf_serve_context_name(const struct kinf_serve *srv, size_t i) {
	return i < srv->n_ctxs ? srv->ctxs[i].name : NULL;
}

char *kinf_serve_context_prefix(const struct kinf_serve *srv, size_t i) {
	struct kinf_buf b = {0};
	if (i > 0 && i < srv->n_ctxs) {
		kinf_buf_puts(&b, "/clusters/");
		if (kinf_buf_append_urlenc(&b, srv->ctxs[i].name ? srv->ctxs[i].name : "") < 0) {
			kinf_buf_release(&b);
			return NULL;
		}
	}
	kinf_buf_puts(&b, "");
	return kinf_buf_take(&b);	/* NULL when an append failed */
}

int kinf_serve_run(struct kinf_serve *srv, struct kinf_error *reterr) {
	int rc = kinf_httpd_run(srv->httpd, reterr);
	/* Every connection is closed: the forwarded requests are ended, their threads go. */
	serve_proxies_end(srv);
	if (rc == 0 && atomic_load(&srv->lost) < 0) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory: the cache could not "
				"take an event");
	}
	return rc;
}

/* The cache missed an event (loop thread): never served so. */
static void serve_lost(struct kinf_serve *srv, int rc) {
	if (atomic_load(&srv->lost) == 0) {
		atomic_store(&srv->lost, rc);
		kinf_serve_stop(srv);
	}
}

void kinf_serve_stop(struct kinf_serve *srv) {
	atomic_store(&srv->stopping, true);
	kinf_httpd_stop(srv->httpd);
}

/* ---- hand-over from the informers' thread ---- */

struct publish {
	struct kinf_serve *srv;
	size_t source;
	struct serve_event **v;
	size_t n;
};

static void apply_publish(void *arg) {
	struct publish *p = arg;
	struct serve_source *s = &p->srv->sources[p->source];
	struct serve_coll *c = s->coll;
	bool stopping = atomic_load(&p->srv->stopping);

	for (size_t i = 0; i < p->n; i++) {
		struct serve_event *ev = p->v[i];
		if (stopping) {
			serve_event_unref(ev);
			continue;
		}
		const char *key = kinf_object_key(ev->obj);
		struct kinf_object *prev = kinf_indexer_get(c->store, key);
		size_t len = 0;
		if (prev) {
			kinf_object_json(prev, &len);
			c->bytes -= len;
			kinf_object_unref(prev);
		}
		int rc = ev->type == SERVE_DELETED ? kinf_indexer_delete(c->store, key) :
			kinf_indexer_add(c->store, ev->obj);
		if (rc < 0) {
			serve_lost(p->srv, rc);
		} else if (ev->type != SERVE_DELETED) {
			kinf_object_json(ev->obj, &len);
			c->bytes += len;
		}
		c->last_event_ms = kinf_clock_now_ms();
		unsigned long long rv;
		if (serve_parse_rv(kinf_object_resource_version(ev->obj), &rv)) {
			if (rv > c->rv) {
				c->rv = rv;
			}
		} else {
			c->rv_numeric = false;
		}
		/*
		 * A delete a relist found carries the object's last state, older
		 * than the delete: it happened by the newest version seen, which
		 * its object says, as the apiserver's DELETED object does (a
		 * client's reflector goes on from the last event's version).
		 */
		if (ev->type == SERVE_DELETED && ev->rv < c->rv) {
			struct kinf_object *moved = serve_with_rv(ev->obj, c->rv);
			struct kinf_buf line = {0};
			if (moved && kinf_buf_printf(&line, "{\"type\":\"DELETED\",\"object\":") == 0 &&
					serve_append_typed(c, moved, &line) == 0 &&
					kinf_buf_append_str(&line, "}\n") == 0) {
				kinf_object_unref(ev->obj);
				ev->obj = kinf_object_ref(moved);
				kinf_buf_release(&ev->line);
				ev->line = line;
				line = (struct kinf_buf){0};
			}
			kinf_buf_release(&line);
			kinf_object_unref(moved);
			ev->rv = c->rv;
		}
		c->events++;
		if (c->synced) {
			serve_coll_push(c, ev);	/* takes the reference */
		} else {
			serve_event_unref(ev);
		}
	}
	if (p->n && !stopping) {
		serve_coll_changed(c);
	}
	if (c->synced && c->rv_waits) {
		serve_coll_rv_advanced(c);
	}
	atomic_fetch_sub(&s->handover, p->n);
	free(p->v);
	free(p);
}

static enum serve_ev_type ev_type(const struct kinf_informer_event *ev) {
	switch (ev->type) {
	case KINF_INFORMER_ADD: return SERVE_ADDED;
	case KINF_INFORMER_UPDATE: return SERVE_MODIFIED;
	default: return SERVE_DELETED;
	}
}

static const char *const type_names[] = { "ADDED", "MODIFIED", "DELETED" };

int kinf_serve_publish(struct kinf_serve *srv, size_t source,
		const struct kinf_informer_batch *batch) {
	struct serve_coll *c = srv->sources[source].coll;
	struct publish *p = calloc(1, sizeof(*p));
	int rc = 0;

	if (!p || !(p->v = calloc(batch->n ? batch->n : 1, sizeof(*p->v)))) {
		free(p);
		return -KINF_ENOMEM;
	}
	p->srv = srv;
	p->source = source;
	for (size_t i = 0; i < batch->n && rc == 0; i++) {
		const struct kinf_informer_event *ie = &batch->v[i];
		/* A resync's unchanged object is no change on the wire. */
		if (!ie->obj || (ie->is_sync && ie->type == KINF_INFORMER_UPDATE)) {
			continue;
		}
		struct serve_event *ev = calloc(1, sizeof(*ev));
		if (!ev) {
			rc = -KINF_ENOMEM;
			break;
		}
		atomic_init(&ev->refs, 1);
		ev->type = ev_type(ie);
		ev->obj = kinf_object_ref(ie->obj);
		ev->old = ie->old ? kinf_object_ref(ie->old) : NULL;
		serve_parse_rv(kinf_object_resource_version(ie->obj), &ev->rv);
		rc |= kinf_buf_printf(&ev->line, "{\"type\":\"%s\",\"object\":", type_names[ev->type]);
		rc |= serve_append_typed(c, ev->obj, &ev->line);
		rc |= kinf_buf_append_str(&ev->line, "}\n");
		p->v[p->n++] = ev;
		rc = rc < 0 ? -KINF_ENOMEM : 0;
	}
	if (rc == 0) {
		/* Counted first: the loop may apply it before the post returns. */
		atomic_fetch_add(&srv->sources[source].handover, p->n);
		rc = kinf_httpd_post(srv->httpd, apply_publish, p);
		if (rc < 0) {
			atomic_fetch_sub(&srv->sources[source].handover, p->n);
		}
	}
	if (rc < 0) {
		for (size_t i = 0; i < p->n; i++) {
			serve_event_unref(p->v[i]);
		}
		free(p->v);
		free(p);
	}
	return rc;
}

struct note {
	struct kinf_serve *srv;
	size_t source;
	bool up;
	char *why;
};

static void apply_synced(void *arg) {
	struct note *n = arg;
	struct serve_source *s = &n->srv->sources[n->source];
	struct serve_coll *c = s->coll;
	if (n->why && !s->failed) {
		s->failed = n->why;	/* failed for good: as synced, with nothing */
		n->why = NULL;
		c->n_failed++;
	}
	free(n->why);
	if (!s->synced) {
		s->synced = true;
		if (++c->n_synced == c->n_sources) {
			c->synced = true;
			c->window_rv = c->rv;
			serve_coll_release_pending(c);
		}
	}
	free(n);
}

static int post_synced(struct kinf_serve *srv, size_t source, const char *failed) {
	struct note *n = calloc(1, sizeof(*n));
	if (!n || (failed && !(n->why = strdup(failed)))) {
		free(n);
		return -KINF_ENOMEM;
	}
	n->srv = srv;
	n->source = source;
	int rc = kinf_httpd_post(srv->httpd, apply_synced, n);
	if (rc < 0) {
		free(n->why);
		free(n);
	}
	return rc;
}

int kinf_serve_synced(struct kinf_serve *srv, size_t source) {
	return post_synced(srv, source, NULL);
}

int kinf_serve_failed(struct kinf_serve *srv, size_t source, const char *why) {
	return post_synced(srv, source, why ? why : "failed");
}

static void say(struct kinf_serve *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct kinf_serve *srv, const char *fmt, ...) {
	char line[1024];
	va_list ap;
	if (!srv->opts.log) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	srv->opts.log(line, srv->opts.log_data);
}

/* `context "admin" (https://...)`, or the URL alone without a context name. */
static void describe_ctx(const struct serve_ctx *x, char *buf, size_t size) {
	if (x->name) {
		snprintf(buf, size, "context \"%s\" (%s)", x->name, x->upstream);
	} else {
		snprintf(buf, size, "%s", x->upstream);
	}
}

static void apply_upstream(void *arg) {
	struct note *n = arg;
	struct kinf_serve *srv = n->srv;
	struct serve_source *s = &srv->sources[n->source];
	struct serve_ctx *x = &srv->ctxs[s->ctx];
	char desc[600];

	s->up = n->up;
	free(s->why);
	s->why = n->why;
	n->why = NULL;
	bool any_down = false;
	const char *why = NULL;
	for (size_t i = 0; i < srv->n_sources; i++) {
		if (srv->sources[i].ctx == s->ctx && !srv->sources[i].up) {
			any_down = true;
			why = why ? why : srv->sources[i].why;
		}
	}
	describe_ctx(x, desc, sizeof(desc));
	if (any_down && !x->down_since) {
		time_t t = time(NULL);
		struct tm tm;
		x->down_since = kinf_clock_now_ms();
		gmtime_r(&t, &tm);
		strftime(x->down_since_utc, sizeof(x->down_since_utc), "%Y-%m-%dT%H:%M:%SZ", &tm);
		free(x->down_why);
		x->down_why = strdup(why ? why : "unreachable");
		x->state_changes++;
		say(srv, "upstream %s unreachable: %s; answering from the cache", desc,
				x->down_why ? x->down_why : "unreachable");
	} else if (any_down && n->up == false && s->why) {
		/* Still away: the Warning and /readyz say the latest reason. */
		char *w = strdup(s->why);
		if (w) {
			free(x->down_why);
			x->down_why = w;
		}
	} else if (!any_down && x->down_since) {
		long long s_ = (kinf_clock_now_ms() - x->down_since) / 1000;
		x->down_since = 0;
		free(x->down_why);
		x->down_why = NULL;
		x->state_changes++;
		say(srv, "upstream %s is back after %llds", desc, s_);
	}
	free(n);
}

int kinf_serve_upstream(struct kinf_serve *srv, size_t source, bool up, const char *why) {
	struct note *n = calloc(1, sizeof(*n));
	if (!n) {
		return -KINF_ENOMEM;
	}
	n->srv = srv;
	n->source = source;
	n->up = up;
	n->why = why ? strdup(why) : NULL;
	int rc = kinf_httpd_post(srv->httpd, apply_upstream, n);
	if (rc < 0) {
		free(n->why);
		free(n);
	}
	return rc;
}

/* ---- answers ---- */

void serve_warning_line(struct kinf_buf *out, const char *text, size_t len) {
	kinf_buf_puts(out, "Warning: 299 - \"");
	for (size_t i = 0; i < len; i++) {
		char ch = text[i];
		if (ch == '"' || ch == '\\') {
			kinf_buf_putc(out, '\\');
		}
		kinf_buf_putc(out, (unsigned char)ch < 0x20 ? ' ' : ch);
	}
	kinf_buf_puts(out, "\"\r\n");
}

/* "pods", "pods in namespace \"a\"", for messages. */
static void describe_source(const struct serve_source *s, struct kinf_buf *out) {
	const struct serve_coll *c = s->coll;
	kinf_buf_putf(out, "%s%s%s", c->resource, c->group[0] ? "." : "", c->group);
	if (s->namespace) {
		kinf_buf_putf(out, " in namespace \"%s\"", s->namespace);
	}
}

/* One Warning line of text, unless an earlier one of the answer said the same. */
static void warning_once(struct kinf_buf *out, struct kinf_strv *seen, const struct kinf_buf *text) {
	if (!text->len || kinf_strv_contains(seen, text->data)) {
		return;
	}
	if (kinf_strv_push_str(seen, text->data) < 0) {
		kinf_buf_fail(out, -KINF_ENOMEM);
	}
	serve_warning_line(out, text->data, text->len);
}

int serve_warning_headers(const struct serve_request *r, struct kinf_buf *out) {
	struct kinf_serve *srv = r->srv;
	size_t ctx = r->ctx;
	const struct serve_ctx *x = &srv->ctxs[ctx];
	struct kinf_buf text = {0};
	struct kinf_strv seen = {0};
	int rc = kinf_buf_error(&r->warning);
	warning_once(out, &seen, &r->warning);
	char desc[600];
	describe_ctx(x, desc, sizeof(desc));
	if (x->down_since) {
		/* The same text for the whole outage: clients show each text once. */
		kinf_buf_putf(&text, "kinf serve: upstream %s unreachable since %s (%s): "
				"answering from the cache", desc, x->down_since_utc,
				x->down_why ? x->down_why : "");
		rc = rc ? rc : kinf_buf_error(&text);
		warning_once(out, &seen, &text);
	}
	for (size_t i = 0; i < srv->n_sources; i++) {
		const struct serve_source *s = &srv->sources[i];
		if (s->ctx == ctx && s->failed) {
			rc = rc ? rc : kinf_buf_error(&text);
			kinf_buf_reset(&text);
			kinf_buf_puts(&text, "kinf serve: ");
			describe_source(s, &text);
			kinf_buf_putf(&text, " of %s failed: %s; not served", desc, s->failed);
			rc = rc ? rc : kinf_buf_error(&text);
			warning_once(out, &seen, &text);
		}
	}
	if (r->coll) {
		/* The upstream's own, as its answer would have carried them. */
		serve_coll_warnings(r->coll, &seen, out);
	}
	rc = rc ? rc : kinf_buf_error(&text);
	kinf_buf_release(&text);
	kinf_strv_release(&seen);
	return rc ? rc : kinf_buf_error(out);
}

static const double latency_bounds[] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	0.25, 0.5, 1, 2.5, 5,
};
#define N_BOUNDS (sizeof(latency_bounds) / sizeof(latency_bounds[0]))

void serve_count(struct kinf_serve *srv, int code, long long start_us) {
	double s = (double)(kinf_clock_now_us() - start_us) / 1e6;
	srv->requests++;
	if (code >= 100 && code < 600) {
		srv->requests_by_code[code / 100]++;
	}
	srv->latency_count++;
	srv->latency_sum += s;
	for (size_t i = 0; i < N_BOUNDS; i++) {
		if (s <= latency_bounds[i]) {
			srv->latency_buckets[i]++;
		}
	}
}

void serve_respond_oom(struct serve_request *r) {
	struct kinf_apistatus_body b = {0};
	serve_count(r->srv, 500, r->start_us);
	kinf_apistatus_internal(&b, "out of memory");
	if (kinf_buf_error(&b.json) < 0) {
		/* Not even that: the connection goes, never half an answer. */
		kinf_httpd_req_abort(r->req);
	} else {
		kinf_httpd_respond_status_body(r->req, &b);
	}
	kinf_apistatus_body_release(&b);
}

void serve_respond(struct serve_request *r, int code, const char *content_type,
		const char *body, size_t len) {
	struct kinf_buf h = {0};
	if (serve_warning_headers(r, &h) < 0) {
		kinf_buf_release(&h);
		serve_respond_oom(r);
		return;
	}
	serve_count(r->srv, code, r->start_us);
	kinf_httpd_respond(r->req, code, content_type ? content_type : "application/json",
			h.len ? h.data : NULL, body, len);
	kinf_buf_release(&h);
}

void serve_respond_buf(struct serve_request *r, int code, const char *content_type,
		const struct kinf_buf *body) {
	if (kinf_buf_error(body)) {
		serve_respond_oom(r);
		return;
	}
	serve_respond(r, code, content_type, body->data ? body->data : "", body->len);
}

void serve_respond_status(struct serve_request *r, const struct kinf_apistatus_body *st) {
	struct kinf_buf h = {0};
	if (kinf_buf_error(&st->json) || !st->json.len) {
		serve_respond_oom(r);
		return;
	}
	int rc = serve_warning_headers(r, &h);
	/* client-go retries a 429 or 5xx that says when. */
	if (st->retry_after_seconds > 0) {
		kinf_buf_putf(&h, "Retry-After: %d\r\n", st->retry_after_seconds);
	}
	if (rc < 0 || kinf_buf_error(&h)) {
		kinf_buf_release(&h);
		serve_respond_oom(r);
		return;
	}
	serve_count(r->srv, st->code, r->start_us);
	kinf_httpd_respond(r->req, st->code, "application/json", h.len ? h.data : NULL,
			st->json.data, st->json.len);
	kinf_buf_release(&h);
}

static void respond_text(struct serve_request *r, int code, const char *text, size_t len) {
	serve_respond(r, code, "text/plain; charset=utf-8", text, len);
}

/* What the server caches, for messages: "pods, configmaps of context \"a\" (URL)". */
static void describe_cache(struct kinf_serve *srv, size_t ctx, struct kinf_buf *out) {
	char desc[600];
	size_t k = 0;
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx != ctx) {
			continue;
		}
		kinf_buf_putf(out, "%s%s%s%s", k++ ? ", " : "", c->resource,
				c->group[0] ? "." : "", c->group);
	}
	describe_ctx(&srv->ctxs[ctx], desc, sizeof(desc));
	kinf_buf_putf(out, " of %s", desc);
}

/* A 404 NotFound Status with msg (built by the caller) as its message. */
static void respond_not_found(struct serve_request *r, const struct kinf_buf *msg) {
	struct kinf_apistatus_body body = {0};
	struct kinf_apistatus st = {
		.code = 404, .reason = "NotFound", .message = msg->data, .details = true,
	};
	if (kinf_buf_error(msg)) {
		serve_respond_oom(r);
	} else {
		kinf_apistatus_put(&body, &st);
		serve_respond_status(r, &body);
	}
	kinf_apistatus_body_release(&body);
}

/*
 * 404 naming what (a resource and its group, built by the caller), what
 * is served, and the option that would forward the read upstream.
 */
static void respond_not_served(struct serve_request *r, const struct kinf_buf *what) {
	struct kinf_buf msg = {0};
	kinf_buf_putf(&msg, "the server could not find the requested resource %s: "
			"kinf serve is a read-only cache of ", what->data ? what->data : "");
	describe_cache(r->srv, r->ctx, &msg);
	kinf_buf_puts(&msg, ", and passes other reads to it only with --pass-through");
	if (kinf_buf_error(what)) {
		kinf_buf_fail(&msg, kinf_buf_error(what));
	}
	respond_not_found(r, &msg);
	kinf_buf_release(&msg);
}

static void respond_page_not_found(struct serve_request *r) {
	respond_text(r, 404, KINF_APISTATUS_PAGE_NOT_FOUND,
			strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
}

/* ---- health, version, metrics ---- */

static bool ctx_synced(struct kinf_serve *srv, struct kinf_buf *why) {
	bool ok = true;
	for (size_t i = 0; i < srv->n_sources; i++) {
		const struct serve_source *s = &srv->sources[i];
		if (s->failed) {
			char desc[600];
			describe_ctx(&srv->ctxs[s->ctx], desc, sizeof(desc));
			kinf_buf_puts(why, ok ? "" : "; ");
			describe_source(s, why);
			kinf_buf_putf(why, " of %s: failed: %s", desc, s->failed);
			ok = false;
		}
	}
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (!c->synced) {
			char desc[600];
			describe_ctx(&srv->ctxs[c->ctx], desc, sizeof(desc));
			kinf_buf_putf(why, "%s%s%s%s of %s: initial list not done",
					ok ? "" : "; ", c->resource, c->group[0] ? "." : "",
					c->group, desc);
			ok = false;
		}
	}
	return ok;
}

static bool upstreams_up(struct kinf_serve *srv, struct kinf_buf *why) {
	bool ok = true;
	for (size_t i = 0; i < srv->n_ctxs; i++) {
		const struct serve_ctx *x = &srv->ctxs[i];
		if (x->down_since) {
			char desc[600];
			describe_ctx(x, desc, sizeof(desc));
			kinf_buf_putf(why, "%supstream %s unreachable for %llds: %s", ok ? "" : "; ",
					desc, (kinf_clock_now_ms() - x->down_since) / 1000,
					x->down_why ? x->down_why : "");
			ok = false;
		}
	}
	return ok;
}

/* The request came on the unix socket or with the token (health is public on TCP). */
static bool trusted(const struct serve_request *r) {
	size_t len = 0;
	const char *got = kinf_httpreq_bearer(r->head, &len);
	const char *tok = r->srv->token;
	return kinf_httpd_req_is_unix(r->req) ||
		(tok && got && kinf_httpreq_token_equal(got, len, tok, strlen(tok)));
}

/*
 * /healthz and /livez: the process answers. /readyz: every collection
 * synced and every upstream reachable. A failure says why to a client
 * with the token or on the socket; to anyone else the reason is withheld,
 * as the apiserver withholds it (the why names upstreams and their errors).
 */
static void health(struct serve_request *r, bool ready) {
	const char *name = r->path.kind == KINF_APIPATH_HEALTHZ ? "healthz" :
		r->path.kind == KINF_APIPATH_LIVEZ ? "livez" : "readyz";
	struct kinf_buf why_sync = {0}, why_up = {0}, out = {0};
	bool synced = !ready || ctx_synced(r->srv, &why_sync);
	bool up = !ready || upstreams_up(r->srv, &why_up);
	const char *check = r->path.rest && r->path.rest[0] ? r->path.rest : NULL;
	bool verbose = kinf_httpreq_param(r->head, "verbose") != NULL;

	if (check && strcmp(check, "ping") != 0 && (!ready ||
			(strcmp(check, "informer-sync") != 0 && strcmp(check, "upstream") != 0))) {
		respond_page_not_found(r);
		return;
	}
	if (check && strcmp(check, "informer-sync") == 0) {
		up = true;
	} else if (check && strcmp(check, "upstream") == 0) {
		synced = true;
	} else if (check) {
		synced = up = true;
	}
	bool ok = synced && up;
	if (ok && !verbose) {
		respond_text(r, 200, "ok", 2);
		return;
	}
	kinf_buf_puts(&out, "[+]ping ok\n");
	if (ready) {
		bool say_why = trusted(r);
		if (synced) {
			kinf_buf_puts(&out, "[+]informer-sync ok\n");
		} else {
			kinf_buf_putf(&out, "[-]informer-sync failed: %s\n",
					say_why ? why_sync.data : "reason withheld");
		}
		if (up) {
			kinf_buf_puts(&out, "[+]upstream ok\n");
		} else {
			kinf_buf_putf(&out, "[-]upstream failed: %s\n",
					say_why ? why_up.data : "reason withheld");
		}
	}
	kinf_buf_putf(&out, "%s check %s\n", name, ok ? "passed" : "failed");
	if (kinf_buf_error(&why_sync) || kinf_buf_error(&why_up)) {
		serve_respond_oom(r);
	} else {
		serve_respond_buf(r, ok ? 200 : 500, "text/plain; charset=utf-8", &out);
	}
	kinf_buf_release(&out);
	kinf_buf_release(&why_sync);
	kinf_buf_release(&why_up);
}

/* A Prometheus label value: backslash, quote and newline escaped. */
static void label(struct kinf_buf *out, const char *name, const char *value) {
	kinf_buf_putf(out, "%s=\"", name);
	for (const char *p = value ? value : ""; *p; p++) {
		if (*p == '\\' || *p == '"') {
			kinf_buf_putc(out, '\\');
			kinf_buf_putc(out, *p);
		} else if (*p == '\n') {
			kinf_buf_puts(out, "\\n");
		} else {
			kinf_buf_putc(out, *p);
		}
	}
	kinf_buf_putc(out, '"');
}

static void source_labels(struct kinf_serve *srv, const struct serve_source *s,
		struct kinf_buf *out) {
	const struct serve_coll *c = s->coll;
	char res[300];
	snprintf(res, sizeof(res), "%s%s%s", c->resource, c->group[0] ? "." : "", c->group);
	kinf_buf_putc(out, '{');
	label(out, "context", srv->ctxs[s->ctx].name);
	kinf_buf_putc(out, ',');
	label(out, "resource", res);
	kinf_buf_putc(out, ',');
	label(out, "namespace", s->namespace);
	kinf_buf_putc(out, '}');
}

static void metric_head(struct kinf_buf *out, const char *name, const char *type,
		const char *help) {
	kinf_buf_putf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void serve_metric_head(struct kinf_buf *out, const char *name, const char *type,
		const char *help) {
	metric_head(out, name, type, help);
}

/* One line per source for a counter or gauge read from its informer's stats. */
enum src_field {
	F_LISTS, F_RELISTS, F_WATCHES, F_EVENTS, F_ERRORS, F_EXPIRED, F_OBJECTS, F_QUEUE,
	F_HANDOVER, F_UP,
};

static double source_value(const struct serve_source *s, enum src_field f) {
	struct kinf_informer_stats st = {0};
	if (s->informer) {
		kinf_informer_get_stats(s->informer, &st);
	}
	switch (f) {
	case F_LISTS: return (double)st.source.lists;
	case F_RELISTS: return (double)st.source.relists;
	case F_WATCHES: return (double)st.source.watches;
	case F_EVENTS: return (double)st.source.events;
	case F_ERRORS: return (double)st.source.errors;
	case F_EXPIRED: return (double)st.source.expired;
	case F_OBJECTS: return (double)st.cached;
	case F_QUEUE: return (double)st.queued;
	case F_HANDOVER: return (double)atomic_load(&s->handover);
	case F_UP: return s->up ? 1 : 0;
	}
	return 0;
}

/* Per watch client: what it has not been sent, and its connection's queue. */
static void watch_metrics(struct kinf_serve *srv, struct kinf_buf *b) {
	static const struct { const char *name, *help; } per_watch[] = {
		{ "kinf_serve_watch_unsent_events",
			"Events of the window a watch client has not been sent yet." },
		{ "kinf_serve_watch_queued_bytes",
			"Bytes queued on a watch client's connection, not yet read." },
	};
	for (size_t m = 0; m < 2; m++) {
		metric_head(b, per_watch[m].name, "gauge", per_watch[m].help);
		for (size_t i = 0; i < srv->n_colls; i++) {
			const struct serve_coll *c = srv->colls[i];
			char res[300];
			snprintf(res, sizeof(res), "%s%s%s", c->resource, c->group[0] ? "." : "",
					c->group);
			for (const struct serve_watch *w = serve_coll_next_watch(c, NULL); w;
					w = serve_coll_next_watch(c, w)) {
				kinf_buf_puts(b, per_watch[m].name);
				kinf_buf_putc(b, '{');
				label(b, "context", srv->ctxs[c->ctx].name);
				kinf_buf_putc(b, ',');
				label(b, "resource", res);
				kinf_buf_putf(b, ",client=\"%llu\"} ", serve_watch_id(w));
				if (m == 0) {
					kinf_buf_putf(b, "%llu\n", serve_watch_unsent(w));
				} else {
					kinf_buf_putf(b, "%zu\n", serve_watch_queued(w));
				}
			}
		}
	}
}

static void metrics(struct serve_request *r) {
	static const struct {
		const char *name, *type, *help;
		enum src_field f;
	} per_source[] = {
		{ "kinf_informer_lists_total", "counter", "Lists completed (the first and relists).", F_LISTS },
		{ "kinf_informer_relists_total", "counter", "Lists after the first.", F_RELISTS },
		{ "kinf_informer_watches_total", "counter", "Watch requests opened.", F_WATCHES },
		{ "kinf_informer_events_total", "counter", "Watch events received from the upstream.", F_EVENTS },
		{ "kinf_informer_errors_total", "counter", "Failed list or watch attempts.", F_ERRORS },
		{ "kinf_informer_expired_total", "counter", "410 Gone answers from the upstream.", F_EXPIRED },
		{ "kinf_informer_objects", "gauge", "Objects in the informer's cache.", F_OBJECTS },
		{ "kinf_informer_queue_length", "gauge",
			"Keys in the informer's DeltaFIFO, not yet handed to serve.", F_QUEUE },
		{ "kinf_serve_handover_events", "gauge",
			"Events the informer handed to serve, not yet in the served cache.", F_HANDOVER },
		{ "kinf_informer_up", "gauge", "1 while the upstream answers, 0 while it is away.", F_UP },
	};
	struct kinf_serve *srv = r->srv;
	struct kinf_buf b = {0};
	long long now = kinf_clock_now_ms();

	for (size_t m = 0; m < sizeof(per_source) / sizeof(per_source[0]); m++) {
		metric_head(&b, per_source[m].name, per_source[m].type, per_source[m].help);
		for (size_t i = 0; i < srv->n_sources; i++) {
			kinf_buf_puts(&b, per_source[m].name);
			source_labels(srv, &srv->sources[i], &b);
			kinf_buf_putf(&b, " %.0f\n", source_value(&srv->sources[i], per_source[m].f));
		}
	}
	metric_head(&b, "kinf_serve_resource_version", "gauge",
			"Newest resourceVersion of the collection.");
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		char res[300];
		snprintf(res, sizeof(res), "%s%s%s", c->resource, c->group[0] ? "." : "", c->group);
		kinf_buf_puts(&b, "kinf_serve_resource_version{");
		label(&b, "context", srv->ctxs[c->ctx].name);
		kinf_buf_putc(&b, ',');
		label(&b, "resource", res);
		kinf_buf_putf(&b, "} %llu\n", c->rv);
	}
	struct { const char *name, *type, *help; } per_coll[] = {
		{ "kinf_serve_seconds_since_last_event", "gauge",
			"Seconds since the collection's last event (-1: none yet)." },
		{ "kinf_serve_objects", "gauge", "Objects served." },
		{ "kinf_serve_bytes", "gauge", "Bytes of the objects served (their JSON)." },
		{ "kinf_serve_window_events", "gauge", "Events in the watch window." },
		{ "kinf_serve_events_total", "counter", "Events applied to the served cache." },
		{ "kinf_serve_watch_clients", "gauge", "Watch clients now." },
		{ "kinf_serve_evicted_clients_total", "counter",
			"Watch clients ended for falling too far behind." },
	};
	for (size_t m = 0; m < sizeof(per_coll) / sizeof(per_coll[0]); m++) {
		metric_head(&b, per_coll[m].name, per_coll[m].type, per_coll[m].help);
		for (size_t i = 0; i < srv->n_colls; i++) {
			const struct serve_coll *c = srv->colls[i];
			char res[300];
			snprintf(res, sizeof(res), "%s%s%s", c->resource, c->group[0] ? "." : "",
					c->group);
			kinf_buf_puts(&b, per_coll[m].name);
			kinf_buf_putc(&b, '{');
			label(&b, "context", srv->ctxs[c->ctx].name);
			kinf_buf_putc(&b, ',');
			label(&b, "resource", res);
			kinf_buf_puts(&b, "} ");
			switch (m) {
			case 0:
				kinf_buf_putf(&b, "%.3f\n", c->last_event_ms ?
						(double)(now - c->last_event_ms) / 1000 : -1.0);
				break;
			case 1: kinf_buf_putf(&b, "%zu\n", kinf_indexer_len(c->store)); break;
			case 2: kinf_buf_putf(&b, "%llu\n", c->bytes); break;
			case 3: kinf_buf_putf(&b, "%zu\n", c->n); break;
			case 4: kinf_buf_putf(&b, "%llu\n", c->events); break;
			case 5: kinf_buf_putf(&b, "%zu\n", c->n_watches); break;
			default: kinf_buf_putf(&b, "%llu\n", c->evicted); break;
			}
		}
	}
	watch_metrics(srv, &b);
	size_t snap_objects, snaps = serve_snapshots_live(srv, &snap_objects);
	metric_head(&b, "kinf_serve_continue_snapshots", "gauge",
			"Snapshots kept for lists with a continue token still to come.");
	kinf_buf_putf(&b, "kinf_serve_continue_snapshots %zu\n", snaps);
	metric_head(&b, "kinf_serve_continue_snapshot_objects", "gauge",
			"Objects those snapshots hold (some replaced in the cache since).");
	kinf_buf_putf(&b, "kinf_serve_continue_snapshot_objects %zu\n", snap_objects);
	metric_head(&b, "kinf_serve_build_info", "gauge",
			"kinf serve's own version (/version answers the upstream's).");
	kinf_buf_puts(&b, "kinf_serve_build_info{");
	label(&b, "version", srv->version);
	kinf_buf_puts(&b, "} 1\n");
	pthread_mutex_lock(&srv->proxy_lock);
	const struct { const char *name, *type, *help; unsigned long long v; } forwards[] = {
		{ "kinf_serve_forwarded_requests_total", "counter", "Reads forwarded to the "
			"upstream (/version, OpenAPI, namespaces, --pass-through).", srv->forwarded },
		{ "kinf_serve_forwarded_requests", "gauge", "Forwarded reads in progress (a "
			"relayed watch or log stays until it ends).", srv->n_proxies },
	};
	pthread_mutex_unlock(&srv->proxy_lock);
	for (size_t i = 0; i < 2; i++) {
		metric_head(&b, forwards[i].name, forwards[i].type, forwards[i].help);
		kinf_buf_putf(&b, "%s %llu\n", forwards[i].name, forwards[i].v);
	}
	struct kinf_httpd_stats hs;
	kinf_httpd_stats(srv->httpd, &hs);
	metric_head(&b, "kinf_serve_connections_total", "counter", "Connections accepted.");
	kinf_buf_putf(&b, "kinf_serve_connections_total %llu\n", hs.connections);
	metric_head(&b, "kinf_serve_clients", "gauge", "Open connections.");
	kinf_buf_putf(&b, "kinf_serve_clients %llu\n", hs.open);
	metric_head(&b, "kinf_serve_rejected_total", "counter",
			"Requests refused before routing (bad requests, limits, tokens).");
	kinf_buf_putf(&b, "kinf_serve_rejected_total %llu\n", hs.rejected);
	serve_limit_metrics(srv, &hs, &b);
	metric_head(&b, "kinf_serve_requests_total", "counter", "Requests answered, by status class.");
	for (int k = 1; k < 6; k++) {
		kinf_buf_putf(&b, "kinf_serve_requests_total{code=\"%dxx\"} %llu\n", k,
				srv->requests_by_code[k]);
	}
	metric_head(&b, "kinf_serve_watch_clients_total", "gauge", "Watch clients now, all collections.");
	kinf_buf_putf(&b, "kinf_serve_watch_clients_total %llu\n", srv->watch_clients);
	metric_head(&b, "kinf_serve_request_duration_seconds", "histogram",
			"Time to answer a request (a watch: to its headers).");
	for (size_t i = 0; i < N_BOUNDS; i++) {
		kinf_buf_putf(&b, "kinf_serve_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
				latency_bounds[i], srv->latency_buckets[i]);
	}
	kinf_buf_putf(&b, "kinf_serve_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
			"kinf_serve_request_duration_seconds_sum %.6f\n"
			"kinf_serve_request_duration_seconds_count %llu\n",
			srv->latency_count, srv->latency_sum, srv->latency_count);
	serve_respond_buf(r, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
	kinf_buf_release(&b);
}

/* ---- routing ---- */

static struct serve_coll *find_coll(struct serve_request *r, bool *ret_gv_known) {
	struct kinf_serve *srv = r->srv;
	*ret_gv_known = false;
	for (size_t i = 0; i < srv->n_colls; i++) {
		struct serve_coll *c = srv->colls[i];
		if (c->ctx != r->ctx || strcmp(c->group, r->path.group ? r->path.group : "") != 0 ||
				strcmp(c->version, r->path.version ? r->path.version : "") != 0) {
			continue;
		}
		*ret_gv_known = true;
		if (strcmp(c->resource, r->path.resource) == 0) {
			return c;
		}
	}
	return NULL;
}

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

void serve_coll_release_pending(struct serve_coll *c) {
	struct serve_pending *p = c->pending;
	c->pending = NULL;
	while (p) {
		struct serve_pending *next = p->next;
		kinf_httpd_req_on_close(p->req, NULL, NULL);
		serve_handle(p->req, c->srv);
		free(p);
		p = next;
	}
}

static bool namespace_served(const struct serve_coll *c, const char *ns) {
	return !ns || c->namespaces.n == 0 || kinf_strv_contains(&c->namespaces, ns);
}

/* `kinf serve caches pods in namespaces "a", "b" only`. */
static void describe_namespaces(const struct serve_coll *c, struct kinf_buf *out) {
	kinf_buf_putf(out, "kinf serve caches %s in namespace%s ", c->resource,
			c->namespaces.n > 1 ? "s" : "");
	for (size_t i = 0; i < c->namespaces.n; i++) {
		kinf_buf_putf(out, "%s\"%s\"", i ? ", " : "", c->namespaces.v[i]);
	}
	kinf_buf_puts(out, " only");
}

/* The 405 of a write: the first and only answer, whatever it is about. */
static void respond_read_only(struct serve_request *r) {
	struct kinf_apistatus_body body = {0};
	char desc[600];
	describe_ctx(&r->srv->ctxs[r->ctx], desc, sizeof(desc));
	kinf_apistatus_read_only(&body, desc);
	serve_respond_status(r, &body);
	kinf_apistatus_body_release(&body);
}

/* A read the caches do not answer: upstream with --pass-through. */
static bool pass_through(struct serve_request *r) {
	if (!r->srv->opts.pass_through || r->index || strcmp(r->head->method, "GET") != 0) {
		return false;
	}
	serve_forward(r, 0);
	return true;
}

static void resource(struct serve_request *r) {
	bool gv_known;
	struct serve_coll *c = find_coll(r, &gv_known);
	const char *verb = kinf_apipath_verb(&r->path, r->head->method, r->query.watch);
	struct kinf_apistatus_body body = {0};

	if (kinf_apipath_verb_is_write(verb)) {
		respond_read_only(r);
		return;
	}
	if (!c && !r->index && (!r->path.group || !r->path.group[0]) &&
			strcmp(r->path.version ? r->path.version : "", "v1") == 0 &&
			strcmp(r->path.resource, "namespaces") == 0 &&
			strcmp(r->head->method, "GET") == 0 && serve_forwards_namespaces(r->srv, r->ctx)) {
		/* kubectl asks for the namespace to word a NotFound: the upstream's answer. */
		serve_forward(r, 0);
		return;
	}
	if (!c || r->path.subresource) {
		if (pass_through(r)) {
			return;
		}
	}
	if (!c) {
		if (!gv_known && (r->path.group == NULL || !r->path.group[0]) &&
				strcmp(r->path.version ? r->path.version : "", "v1") != 0) {
			respond_page_not_found(r);
			return;
		}
		struct kinf_buf what = {0};
		kinf_buf_putf(&what, "(%s%s%s)", r->path.resource,
				r->path.group && r->path.group[0] ? "." : "",
				r->path.group ? r->path.group : "");
		respond_not_served(r, &what);
		kinf_buf_release(&what);
		return;
	}
	if (r->path.subresource) {
		struct kinf_buf what = {0};
		kinf_buf_putf(&what, "(%s/%s)", c->resource, r->path.subresource);
		respond_not_served(r, &what);
		kinf_buf_release(&what);
		return;
	}
	if (!c->namespaced && r->path.namespace_ && !(strcmp(c->resource, "namespaces") == 0)) {
		respond_page_not_found(r);
		return;
	}
	const char *ns = c->namespaced ? r->path.namespace_ : NULL;
	if (c->namespaced && c->namespaces.n && (!ns || !namespace_served(c, ns)) &&
			pass_through(r)) {
		return;		/* all of it, or a namespace not cached: the upstream has it */
	}
	if (c->namespaced && !ns && c->namespaces.n) {
		/* Across namespaces, from a cache of some: say which. */
		describe_namespaces(c, &r->warning);
	}
	if (!namespace_served(c, ns)) {
		struct kinf_buf msg = {0};
		kinf_buf_puts(&msg, "the server could not find the requested resource: ");
		describe_namespaces(c, &msg);
		kinf_buf_puts(&msg, " (and passes other reads upstream only with --pass-through)");
		respond_not_found(r, &msg);
		kinf_buf_release(&msg);
		kinf_apistatus_body_release(&body);
		return;
	}
	if (!c->synced) {
		/* As the apiserver's cacher waits until it is ready. */
		struct serve_pending *p = calloc(1, sizeof(*p));
		if (!p) {
			kinf_apistatus_internal(&body, "out of memory");
			serve_respond_status(r, &body);
			kinf_apistatus_body_release(&body);
			return;
		}
		p->req = r->req;
		p->coll = c;
		p->next = c->pending;
		if (p->next) {
			p->next->prev = p;
		}
		c->pending = p;
		kinf_httpd_req_on_close(r->req, pending_closed, p);
		return;
	}
	for (size_t i = 0; c->n_failed && i < r->srv->n_sources; i++) {
		const struct serve_source *s = &r->srv->sources[i];
		/* All of it failed, or the namespace asked for did. */
		if (s->coll == c && s->failed && (c->n_failed == c->n_sources ||
				(ns && s->namespace && strcmp(ns, s->namespace) == 0))) {
			if (pass_through(r)) {
				return;
			}
			struct kinf_buf msg = {0};
			char desc[600];
			describe_ctx(&r->srv->ctxs[r->ctx], desc, sizeof(desc));
			kinf_buf_puts(&msg, "kinf serve could not cache ");
			describe_source(s, &msg);
			kinf_buf_putf(&msg, " of %s: %s", desc, s->failed);
			if (kinf_buf_error(&msg)) {
				serve_respond_oom(r);
			} else {
				kinf_apistatus_unavailable(&body, msg.data);
				serve_respond_status(r, &body);
			}
			kinf_buf_release(&msg);
			kinf_apistatus_body_release(&body);
			return;
		}
	}
	r->coll = c;
	if (r->index) {
		serve_index(r, c);
	} else if (strcmp(verb, "watch") == 0) {
		serve_watch(r, c);
	} else if (strcmp(verb, "get") == 0) {
		serve_get(r, c);
	} else {
		serve_list(r, c);
	}
}

static void root(struct serve_request *r) {
	struct kinf_buf b = {0};
	kinf_buf_puts(&b, "{\n  \"paths\": [\n    \"/api\",\n    \"/api/v1\",\n    \"/apis\"");
	for (size_t i = 0; i < r->srv->n_colls; i++) {
		const struct serve_coll *c = r->srv->colls[i];
		if (c->ctx == r->ctx && c->group[0]) {
			kinf_buf_putf(&b, ",\n    \"/apis/%s/%s\"", c->group, c->version);
		}
	}
	kinf_buf_puts(&b, ",\n    \"/healthz\",\n    \"/livez\",\n    \"/metrics\",\n"
			"    \"/openapi/v2\",\n    \"/openapi/v3\",\n    \"/readyz\",\n"
			"    \"/version\"\n  ]\n}");
	serve_respond_buf(r, 200, "application/json", &b);
	kinf_buf_release(&b);
}

/*
 * "/clusters/NAME/rest" names context NAME (the first context is also
 * served without a prefix). Returns the path after the prefix, or NULL
 * for an unknown context.
 */
static const char *strip_context(struct serve_request *r, const char *path, char **ret_prefix) {
	struct kinf_serve *srv = r->srv;
	*ret_prefix = NULL;
	r->ctx = 0;
	if (strncmp(path, "/clusters/", 10) != 0) {
		return path;
	}
	const char *name = path + 10;
	size_t len = strcspn(name, "/");
	for (size_t i = 0; i < srv->n_ctxs; i++) {
		const char *n = srv->ctxs[i].name ? srv->ctxs[i].name : "";
		if (strlen(n) == len && strncmp(n, name, len) == 0) {
			r->ctx = i;
			*ret_prefix = strndup(path, (size_t)(name + len - path));
			return name[len] ? name + len : "/";
		}
	}
	return NULL;
}

void serve_handle(struct kinf_httpd_req *req, void *userdata) {
	struct serve_request r = {
		.srv = userdata,
		.req = req,
		.head = kinf_httpd_req_head(req),
		.start_us = kinf_clock_now_us(),
	};
	struct kinf_error err = {0};
	struct kinf_apistatus_body body = {0};
	char *prefix = NULL;

	const char *path = strip_context(&r, r.head->path, &prefix);
	r.prefix = prefix ? prefix : "";
	if (path && strncmp(path, "/kinf/v1/index/", 15) == 0) {
		r.index = true;		/* kinf's index path (serveindex.c) */
		path += 14;
	}
	if (!path) {
		respond_page_not_found(&r);
		return;
	}
	if (kinf_apipath_parse(path, &r.path) < 0) {
		kinf_httpd_req_abort(req);
		free(prefix);
		return;
	}
	kinf_accept_parse(kinf_httpreq_header(r.head, "Accept"), &r.accept);
	if (kinf_apiquery_parse(r.head, &r.query, &err) < 0) {
		kinf_apistatus_bad_request(&body, err.message);
		serve_respond_status(&r, &body);
		goto out;
	}
	bool get = strcmp(r.head->method, "GET") == 0 || strcmp(r.head->method, "HEAD") == 0;
	if (r.path.kind != KINF_APIPATH_RESOURCE && r.path.kind != KINF_APIPATH_UNKNOWN && !get) {
		respond_read_only(&r);
		goto out;
	}
	/* Upstream, asked as it came: what only the upstream knows. */
	bool forward = !r.index && strcmp(r.head->method, "GET") == 0;
	switch (r.index && r.path.kind != KINF_APIPATH_RESOURCE ? KINF_APIPATH_UNKNOWN :
			r.path.kind) {
	case KINF_APIPATH_ROOT: root(&r); break;
	case KINF_APIPATH_API:
	case KINF_APIPATH_APIS:
	case KINF_APIPATH_GROUP:
	case KINF_APIPATH_GROUP_VERSION:
		if (forward && r.srv->opts.pass_through) {
			serve_forward(&r, 0);	/* every type the upstream has */
		} else {
			serve_discovery(&r);
		}
		break;
	case KINF_APIPATH_RESOURCE: resource(&r); break;
	case KINF_APIPATH_VERSION:
		if (forward) {
			serve_forward(&r, SERVE_FORWARD_VERSION | SERVE_FORWARD_COLLECT);
		} else {
			respond_page_not_found(&r);
		}
		break;
	case KINF_APIPATH_OPENAPI:
		if (!forward || (strcmp(r.path.rest, "v2") != 0 && strcmp(r.path.rest, "v3") != 0 &&
				strncmp(r.path.rest, "v3/", 3) != 0)) {
			respond_page_not_found(&r);
		} else if (strcmp(r.path.rest, "v3") == 0 && r.prefix[0]) {
			serve_forward(&r, SERVE_FORWARD_OPENAPI_INDEX | SERVE_FORWARD_COLLECT);
		} else {
			serve_forward(&r, 0);
		}
		break;
	case KINF_APIPATH_HEALTHZ:
	case KINF_APIPATH_LIVEZ:
		health(&r, false);
		break;
	case KINF_APIPATH_READYZ: health(&r, true); break;
	case KINF_APIPATH_METRICS: metrics(&r); break;
	default:
		if (forward && r.srv->opts.pass_through) {
			serve_forward(&r, 0);
		} else {
			respond_page_not_found(&r);
		}
		break;
	}
out:
	kinf_apistatus_body_release(&body);
	kinf_buf_release(&r.warning);
	kinf_apipath_release(&r.path);
	free(prefix);
}
