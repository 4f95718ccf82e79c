#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "servecoll.h"
#include "servedisc.h"
#include "servehealth.h"
#include "serveindex.h"
#include "servelist.h"
#include "serveproxy.h"
#include "serverespond.h"
#include "serveroute.h"
#include "servewatch.h"

/*
 * serveroute.c: the top of serve/'s files: every request routed to what
 * answers it: a collection's handler (servelist.c, servewatch.c,
 * serveindex.c), discovery (servedisc.c), health and metrics
 * (servehealth.c), or the upstream (serveproxy.c); a write, an unknown
 * path or a type not cached answered here.
 */

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
	serve_describe_ctx(&r->srv->ctxs[r->ctx], desc, sizeof(desc));
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
	serve_describe_ctx(&srv->ctxs[ctx], desc, sizeof(desc));
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
			serve_respond_page_not_found(r);
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
		serve_respond_page_not_found(r);
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
		if (!serve_coll_hold(c, r->req)) {
			kinf_apistatus_internal(&body, "out of memory");
			serve_respond_status(r, &body);
			kinf_apistatus_body_release(&body);
		}
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
			serve_describe_ctx(&r->srv->ctxs[r->ctx], desc, sizeof(desc));
			kinf_buf_puts(&msg, "kinf serve could not cache ");
			serve_describe_source(s, &msg);
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
		serve_respond_page_not_found(&r);
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
			serve_respond_page_not_found(&r);
		}
		break;
	case KINF_APIPATH_OPENAPI:
		if (!forward || (strcmp(r.path.rest, "v2") != 0 && strcmp(r.path.rest, "v3") != 0 &&
				strncmp(r.path.rest, "v3/", 3) != 0)) {
			serve_respond_page_not_found(&r);
		} else if (strcmp(r.path.rest, "v3") == 0 && r.prefix[0]) {
			serve_forward(&r, SERVE_FORWARD_OPENAPI_INDEX | SERVE_FORWARD_COLLECT);
		} else {
			serve_forward(&r, 0);
		}
		break;
	case KINF_APIPATH_HEALTHZ:
	case KINF_APIPATH_LIVEZ:
		serve_health(&r, false);
		break;
	case KINF_APIPATH_READYZ: serve_health(&r, true); break;
	case KINF_APIPATH_METRICS: serve_metrics(&r); break;
	default:
		if (forward && r.srv->opts.pass_through) {
			serve_forward(&r, 0);
		} else {
			serve_respond_page_not_found(&r);
		}
		break;
	}
out:
	kinf_apistatus_body_release(&body);
	kinf_buf_release(&r.warning);
	kinf_apipath_release(&r.path);
	free(prefix);
}
