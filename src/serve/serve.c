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
#include "servecoll.h"
#include "servefilter.h"
#include "servelist.h"
#include "serveproxy.h"
#include "serverespond.h"
#include "serveroute.h"
#include "servestream.h"
#include "servewarn.h"
#include "servewatch.h"

/*
 * serve.c: serve.h's entry points: the server's contexts, sources and
 * collections, and the hand-over of events, syncs and upstream states
 * from the informers' thread to the loop. Requests go to the router
 * (serveroute.c).
 */

#define DEFAULT_WINDOW 10000
#define DEFAULT_MAX_LAG 1000
#define DEFAULT_BOOKMARK_MS 60000
#define DEFAULT_MAX_INFLIGHT 400	/* kube-apiserver's --max-requests-inflight */
#define DEFAULT_MAX_QUEUED (64u << 20)

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
	srv->dispatch = serve_handle;
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
	serve_describe_ctx(x, desc, sizeof(desc));
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

