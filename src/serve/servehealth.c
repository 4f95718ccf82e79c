#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "servehealth.h"
#include "servelist.h"
#include "serverespond.h"
#include "servestream.h"
#include "servewatch.h"

/*
 * servehealth.c: the answers that are not about one resource type:
 * /healthz, /livez and /readyz (the caches synced, the upstreams
 * reachable), and /metrics.
 */

static bool ctx_synced(struct kinf_serve *srv, struct kinf_buf *why) {
	bool ok = true;
	for (size_t i = 0; i < srv->n_sources; i++) {
		const struct serve_source *s = &srv->sources[i];
		if (s->failed) {
			char desc[600];
			serve_describe_ctx(&srv->ctxs[s->ctx], desc, sizeof(desc));
			kinf_buf_puts(why, ok ? "" : "; ");
			serve_describe_source(s, why);
			kinf_buf_putf(why, " of %s: failed: %s", desc, s->failed);
			ok = false;
		}
	}
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (!c->synced) {
			char desc[600];
			serve_describe_ctx(&srv->ctxs[c->ctx], desc, sizeof(desc));
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
			serve_describe_ctx(x, desc, sizeof(desc));
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
void serve_health(struct serve_request *r, bool ready) {
	const char *name = r->path.kind == KINF_APIPATH_HEALTHZ ? "healthz" :
		r->path.kind == KINF_APIPATH_LIVEZ ? "livez" : "readyz";
	struct kinf_buf why_sync = {0}, why_up = {0}, out = {0};
	bool synced = !ready || ctx_synced(r->srv, &why_sync);
	bool up = !ready || upstreams_up(r->srv, &why_up);
	const char *check = r->path.rest && r->path.rest[0] ? r->path.rest : NULL;
	bool verbose = kinf_httpreq_param(r->head, "verbose") != NULL;

	if (check && strcmp(check, "ping") != 0 && (!ready ||
			(strcmp(check, "informer-sync") != 0 && strcmp(check, "upstream") != 0))) {
		serve_respond_page_not_found(r);
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
		serve_respond_text(r, 200, "ok", 2);
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
		serve_metric_head(b, per_watch[m].name, "gauge", per_watch[m].help);
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

void serve_metrics(struct serve_request *r) {
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
		serve_metric_head(&b, per_source[m].name, per_source[m].type, per_source[m].help);
		for (size_t i = 0; i < srv->n_sources; i++) {
			kinf_buf_puts(&b, per_source[m].name);
			source_labels(srv, &srv->sources[i], &b);
			kinf_buf_putf(&b, " %.0f\n", source_value(&srv->sources[i], per_source[m].f));
		}
	}
	serve_metric_head(&b, "kinf_serve_resource_version", "gauge",
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
		serve_metric_head(&b, per_coll[m].name, per_coll[m].type, per_coll[m].help);
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
	serve_metric_head(&b, "kinf_serve_continue_snapshots", "gauge",
			"Snapshots kept for lists with a continue token still to come.");
	kinf_buf_putf(&b, "kinf_serve_continue_snapshots %zu\n", snaps);
	serve_metric_head(&b, "kinf_serve_continue_snapshot_objects", "gauge",
			"Objects those snapshots hold (some replaced in the cache since).");
	kinf_buf_putf(&b, "kinf_serve_continue_snapshot_objects %zu\n", snap_objects);
	serve_metric_head(&b, "kinf_serve_build_info", "gauge",
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
		serve_metric_head(&b, forwards[i].name, forwards[i].type, forwards[i].help);
		kinf_buf_putf(&b, "%s %llu\n", forwards[i].name, forwards[i].v);
	}
	struct kinf_httpd_stats hs;
	kinf_httpd_stats(srv->httpd, &hs);
	serve_metric_head(&b, "kinf_serve_connections_total", "counter", "Connections accepted.");
	kinf_buf_putf(&b, "kinf_serve_connections_total %llu\n", hs.connections);
	serve_metric_head(&b, "kinf_serve_clients", "gauge", "Open connections.");
	kinf_buf_putf(&b, "kinf_serve_clients %llu\n", hs.open);
	serve_metric_head(&b, "kinf_serve_rejected_total", "counter",
			"Requests refused before routing (bad requests, limits, tokens).");
	kinf_buf_putf(&b, "kinf_serve_rejected_total %llu\n", hs.rejected);
	serve_limit_metrics(srv, &hs, &b);
	serve_metric_head(&b, "kinf_serve_requests_total", "counter", "Requests answered, by status class.");
	for (int k = 1; k < 6; k++) {
		kinf_buf_putf(&b, "kinf_serve_requests_total{code=\"%dxx\"} %llu\n", k,
				srv->requests_by_code[k]);
	}
	serve_metric_head(&b, "kinf_serve_watch_clients_total", "gauge", "Watch clients now, all collections.");
	kinf_buf_putf(&b, "kinf_serve_watch_clients_total %llu\n", srv->watch_clients);
	serve_metric_head(&b, "kinf_serve_request_duration_seconds", "histogram",
			"Time to answer a request (a watch: to its headers).");
	for (size_t i = 0; i < SERVE_LATENCY_BOUNDS; i++) {
		kinf_buf_putf(&b, "kinf_serve_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
				serve_latency_bounds[i], srv->latency_buckets[i]);
	}
	kinf_buf_putf(&b, "kinf_serve_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
			"kinf_serve_request_duration_seconds_sum %.6f\n"
			"kinf_serve_request_duration_seconds_count %llu\n",
			srv->latency_count, srv->latency_sum, srv->latency_count);
	serve_respond_buf(r, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
	kinf_buf_release(&b);
}
