#include <stdlib.h>
#include <string.h>

#include "serveint.h"

/*
 * Discovery of the served types only, legacy (APIVersions, APIGroupList,
 * APIGroup, APIResourceList) and aggregated (APIGroupDiscoveryList, v2
 * or v2beta1 as the client asks, picked by Accept and answered with the
 * Content-Type client-go detects it by). Verbs are get, list and watch.
 */

static void quote(struct kinf_buf *b, const char *s) {
	kinf_apistatus_quote(b, s);
}

/* The distinct groups of context ctx's collections, in the order served (core left out). */
static void groups(struct kinf_serve *srv, size_t ctx, struct kinf_strv *ret) {
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx == ctx && c->group[0] && !kinf_strv_contains(ret, c->group)) {
			kinf_strv_push_str(ret, c->group);
		}
	}
}

/* The versions of group served in ctx. */
static void versions(struct kinf_serve *srv, size_t ctx, const char *group, struct kinf_strv *ret) {
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx == ctx && strcmp(c->group, group) == 0 &&
				!kinf_strv_contains(ret, c->version)) {
			kinf_strv_push_str(ret, c->version);
		}
	}
}

static void verbs(struct kinf_buf *b) {
	kinf_buf_append_str(b, "\"verbs\":[\"get\",\"list\",\"watch\"]");
}

static void short_names(struct kinf_buf *b, const struct serve_coll *c) {
	if (!c->short_names.n) {
		return;
	}
	kinf_buf_append_str(b, ",\"shortNames\":[");
	for (size_t k = 0; k < c->short_names.n; k++) {
		if (k) {
			kinf_buf_append_char(b, ',');
		}
		quote(b, c->short_names.v[k]);
	}
	kinf_buf_append_char(b, ']');
}

/* {"groupVersion":"apps/v1","version":"v1"} entries and the preferred one (the first). */
static void group_fields(struct kinf_buf *b, const char *group, const struct kinf_strv *vs) {
	kinf_buf_append_str(b, "\"name\":");
	quote(b, group);
	kinf_buf_append_str(b, ",\"versions\":[");
	for (size_t i = 0; i < vs->n; i++) {
		kinf_buf_printf(b, "%s{\"groupVersion\":", i ? "," : "");
		struct kinf_buf gv = {0};
		kinf_buf_printf(&gv, "%s/%s", group, vs->v[i]);
		quote(b, gv.data);
		kinf_buf_release(&gv);
		kinf_buf_append_str(b, ",\"version\":");
		quote(b, vs->v[i]);
		kinf_buf_append_char(b, '}');
	}
	kinf_buf_printf(b, "],\"preferredVersion\":{\"groupVersion\":\"%s/%s\",\"version\":\"%s\"}",
			group, vs->n ? vs->v[0] : "", vs->n ? vs->v[0] : "");
}

static void group_entry(struct kinf_buf *b, const char *group, const struct kinf_strv *vs) {
	kinf_buf_append_char(b, '{');
	group_fields(b, group, vs);
	kinf_buf_append_char(b, '}');
}

/* The resources of one group-version, aggregated form. */
static void agg_version(struct kinf_serve *srv, size_t ctx, const char *group,
		const char *version, struct kinf_buf *b) {
	size_t k = 0;
	kinf_buf_append_str(b, "{\"version\":");
	quote(b, version);
	kinf_buf_append_str(b, ",\"resources\":[");
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx != ctx || strcmp(c->group, group) || strcmp(c->version, version)) {
			continue;
		}
		kinf_buf_append_str(b, k++ ? ",{\"resource\":" : "{\"resource\":");
		quote(b, c->resource);
		kinf_buf_append_str(b, ",\"responseKind\":{\"group\":");
		quote(b, c->group);
		kinf_buf_append_str(b, ",\"version\":");
		quote(b, c->version);
		kinf_buf_append_str(b, ",\"kind\":");
		quote(b, c->kind);
		kinf_buf_printf(b, "},\"scope\":\"%s\",\"singularResource\":",
				c->namespaced ? "Namespaced" : "Cluster");
		quote(b, c->singular);
		kinf_buf_append_char(b, ',');
		verbs(b);
		short_names(b, c);
		kinf_buf_append_char(b, '}');
	}
	kinf_buf_append_str(b, "],\"freshness\":\"Current\"}");
}

static void aggregated(struct serve_request *r, bool legacy, const char *v) {
	struct kinf_buf b = {0}, ctype = {0};
	kinf_buf_printf(&b, "{\"kind\":\"APIGroupDiscoveryList\",\"apiVersion\":"
			"\"apidiscovery.k8s.io/%s\",\"metadata\":{},\"items\":[", v);
	if (legacy) {
		kinf_buf_append_str(&b, "{\"metadata\":{\"creationTimestamp\":null},\"versions\":[");
		agg_version(r->srv, r->ctx, "", "v1", &b);
		kinf_buf_append_str(&b, "]}");
	} else {
		struct kinf_strv gs = {0};
		groups(r->srv, r->ctx, &gs);
		for (size_t i = 0; i < gs.n; i++) {
			struct kinf_strv vs = {0};
			versions(r->srv, r->ctx, gs.v[i], &vs);
			kinf_buf_append_str(&b, i ? ",{\"metadata\":{\"name\":" : "{\"metadata\":{\"name\":");
			quote(&b, gs.v[i]);
			kinf_buf_append_str(&b, ",\"creationTimestamp\":null},\"versions\":[");
			for (size_t k = 0; k < vs.n; k++) {
				if (k) {
					kinf_buf_append_char(&b, ',');
				}
				agg_version(r->srv, r->ctx, gs.v[i], vs.v[k], &b);
			}
			kinf_buf_append_str(&b, "]}");
			kinf_strv_release(&vs);
		}
		kinf_strv_release(&gs);
	}
	kinf_buf_append_str(&b, "]}\n");
	kinf_buf_printf(&ctype, "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList",
			v);
	serve_respond(r, 200, ctype.data, b.data, b.len);
	kinf_buf_release(&b);
	kinf_buf_release(&ctype);
}

/* Which aggregated version the client takes ("v2", "v2beta1"), or NULL for legacy. */
static const char *aggregated_version(const struct kinf_accept *acc) {
	for (size_t i = 0; i < acc->n; i++) {
		const struct kinf_accept_range *ar = &acc->ranges[i];
		if (ar->kind == KINF_ACCEPT_DISCOVERY &&
				(strcmp(ar->version, "v2") == 0 || strcmp(ar->version, "v2beta1") == 0)) {
			return strcmp(ar->version, "v2") == 0 ? "v2" : "v2beta1";
		}
		if (ar->kind == KINF_ACCEPT_JSON) {
			return NULL;
		}
	}
	return NULL;
}

static void resource_list(struct serve_request *r, const char *group, const char *version) {
	struct kinf_buf b = {0};
	size_t k = 0;
	kinf_buf_append_str(&b, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":");
	struct kinf_buf gv = {0};
	if (group[0]) {
		kinf_buf_printf(&gv, "%s/%s", group, version);
	} else {
		kinf_buf_append_str(&gv, version);
	}
	quote(&b, gv.data);
	kinf_buf_release(&gv);
	kinf_buf_append_str(&b, ",\"resources\":[");
	for (size_t i = 0; i < r->srv->n_colls; i++) {
		const struct serve_coll *c = r->srv->colls[i];
		if (c->ctx != r->ctx || strcmp(c->group, group) || strcmp(c->version, version)) {
			continue;
		}
		kinf_buf_append_str(&b, k++ ? ",{\"name\":" : "{\"name\":");
		quote(&b, c->resource);
		kinf_buf_append_str(&b, ",\"singularName\":");
		quote(&b, c->singular);
		kinf_buf_printf(&b, ",\"namespaced\":%s,\"kind\":", c->namespaced ? "true" : "false");
		quote(&b, c->kind);
		kinf_buf_append_char(&b, ',');
		verbs(&b);
		short_names(&b, c);
		kinf_buf_append_char(&b, '}');
	}
	kinf_buf_append_str(&b, "]}\n");
	serve_respond(r, 200, "application/json", b.data, b.len);
	kinf_buf_release(&b);
}

void serve_discovery(struct serve_request *r) {
	struct kinf_buf b = {0};
	const char *agg = aggregated_version(&r->accept);
	const char *group = r->path.group ? r->path.group : "";
	struct kinf_strv vs = {0};

	switch (r->path.kind) {
	case KINF_APIPATH_API:
		if (agg) {
			aggregated(r, true, agg);
			return;
		}
		kinf_buf_append_str(&b, "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
				"\"serverAddressByClientCIDRs\":null}\n");
		break;
	case KINF_APIPATH_APIS:
		if (agg) {
			aggregated(r, false, agg);
			return;
		}
		kinf_buf_append_str(&b, "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[");
		struct kinf_strv gs = {0};
		groups(r->srv, r->ctx, &gs);
		for (size_t i = 0; i < gs.n; i++) {
			kinf_strv_reset(&vs);
			versions(r->srv, r->ctx, gs.v[i], &vs);
			if (i) {
				kinf_buf_append_char(&b, ',');
			}
			group_entry(&b, gs.v[i], &vs);
		}
		kinf_strv_release(&gs);
		kinf_buf_append_str(&b, "]}\n");
		break;
	case KINF_APIPATH_GROUP:
		versions(r->srv, r->ctx, group, &vs);
		if (!vs.n || !group[0]) {
			kinf_strv_release(&vs);
			serve_respond(r, 404, "text/plain; charset=utf-8", KINF_APISTATUS_PAGE_NOT_FOUND,
					strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
			return;
		}
		kinf_buf_append_str(&b, "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",");
		group_fields(&b, group, &vs);
		kinf_buf_append_str(&b, "}\n");
		break;
	default:
		versions(r->srv, r->ctx, group, &vs);
		if (!kinf_strv_contains(&vs, r->path.version) && !(strcmp(r->path.version, "v1") == 0 &&
				!group[0])) {
			kinf_strv_release(&vs);
			serve_respond(r, 404, "text/plain; charset=utf-8", KINF_APISTATUS_PAGE_NOT_FOUND,
					strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
			return;
		}
		kinf_strv_release(&vs);
		resource_list(r, group, r->path.version);
		return;
	}
	kinf_strv_release(&vs);
	serve_respond(r, 200, "application/json", b.data, b.len);
	kinf_buf_release(&b);
}
