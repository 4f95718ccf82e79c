#include <stdlib.h>
#include <string.h>

#include "servecoll.h"
#include "servedisc.h"
#include "serverespond.h"

/*
 * Discovery of the served types only, legacy (APIVersions, APIGroupList,
 * APIGroup, APIResourceList) and aggregated (APIGroupDiscoveryList, v2
 * or v2beta1 as the client asks, picked by Accept and answered with the
 * Content-Type client-go detects it by). Verbs are get, list and watch;
 * short names and categories are the upstream's (kubectl get all).
 * Namespaces are listed too when their reads go upstream
 * (serve_forwards_namespaces), so that kubectl get ns resolves.
 */

/* The core group's namespaces, as the apiserver describes them. */
static const struct {
	const char *resource, *singular, *kind, *short_name;
} namespaces = { "namespaces", "namespace", "Namespace", "ns" };

/*
 * The distinct groups of context ctx's collections, in the order served
 * (core left out). 0 or -KINF_ENOMEM.
 */
static int groups(struct kinf_serve *srv, size_t ctx, struct kinf_strv *ret) {
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx == ctx && c->group[0] && !kinf_strv_contains(ret, c->group) &&
				kinf_strv_push_str(ret, c->group) < 0) {
			return -KINF_ENOMEM;
		}
	}
	return 0;
}

/* The versions of group served in ctx. 0 or -KINF_ENOMEM. */
static int versions(struct kinf_serve *srv, size_t ctx, const char *group, struct kinf_strv *ret) {
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx == ctx && strcmp(c->group, group) == 0 &&
				!kinf_strv_contains(ret, c->version) &&
				kinf_strv_push_str(ret, c->version) < 0) {
			return -KINF_ENOMEM;
		}
	}
	return 0;
}

static void verbs(struct kinf_buf *b) {
	kinf_buf_puts(b, "\"verbs\":[\"get\",\"list\",\"watch\"]");
}

/* Whether ctx's core v1 discovery lists the namespaces serve forwards. */
static bool lists_namespaces(struct kinf_serve *srv, size_t ctx, const char *group,
		const char *version) {
	return !group[0] && strcmp(version, "v1") == 0 && serve_forwards_namespaces(srv, ctx);
}

/* ,"NAME":["a","b"], nothing for none. */
static void string_list(struct kinf_buf *b, const char *name, const struct kinf_strv *v) {
	if (!v->n) {
		return;
	}
	kinf_buf_putf(b, ",\"%s\":[", name);
	for (size_t k = 0; k < v->n; k++) {
		if (k) {
			kinf_buf_putc(b, ',');
		}
		kinf_apistatus_put_quoted(b, v->v[k]);
	}
	kinf_buf_putc(b, ']');
}

/* shortNames and categories (kubectl get all), as the upstream lists them. */
static void short_names(struct kinf_buf *b, const struct serve_coll *c) {
	string_list(b, "shortNames", &c->short_names);
	string_list(b, "categories", &c->categories);
}

/*
 * "G/V" (just "V" for the core group) as a JSON string: both are DNS
 * names from discovery, nothing in them to escape (preferredVersion below
 * is written the same way).
 */
static void group_version(struct kinf_buf *b, const char *group, const char *version) {
	kinf_buf_putf(b, "\"%s%s%s\"", group, group[0] ? "/" : "", version);
}

/* {"groupVersion":"apps/v1","version":"v1"} entries and the preferred one (the first). */
static void group_fields(struct kinf_buf *b, const char *group, const struct kinf_strv *vs) {
	kinf_buf_puts(b, "\"name\":");
	kinf_apistatus_put_quoted(b, group);
	kinf_buf_puts(b, ",\"versions\":[");
	for (size_t i = 0; i < vs->n; i++) {
		kinf_buf_putf(b, "%s{\"groupVersion\":", i ? "," : "");
		group_version(b, group, vs->v[i]);
		kinf_buf_puts(b, ",\"version\":");
		kinf_apistatus_put_quoted(b, vs->v[i]);
		kinf_buf_putc(b, '}');
	}
	kinf_buf_putf(b, "],\"preferredVersion\":{\"groupVersion\":\"%s/%s\",\"version\":\"%s\"}",
			group, vs->n ? vs->v[0] : "", vs->n ? vs->v[0] : "");
}

static void group_entry(struct kinf_buf *b, const char *group, const struct kinf_strv *vs) {
	kinf_buf_putc(b, '{');
	group_fields(b, group, vs);
	kinf_buf_putc(b, '}');
}

/* The resources of one group-version, aggregated form. */
static void agg_version(struct kinf_serve *srv, size_t ctx, const char *group,
		const char *version, struct kinf_buf *b) {
	size_t k = 0;
	kinf_buf_puts(b, "{\"version\":");
	kinf_apistatus_put_quoted(b, version);
	kinf_buf_puts(b, ",\"resources\":[");
	for (size_t i = 0; i < srv->n_colls; i++) {
		const struct serve_coll *c = srv->colls[i];
		if (c->ctx != ctx || strcmp(c->group, group) || strcmp(c->version, version)) {
			continue;
		}
		kinf_buf_puts(b, k++ ? ",{\"resource\":" : "{\"resource\":");
		kinf_apistatus_put_quoted(b, c->resource);
		kinf_buf_puts(b, ",\"responseKind\":{\"group\":");
		kinf_apistatus_put_quoted(b, c->group);
		kinf_buf_puts(b, ",\"version\":");
		kinf_apistatus_put_quoted(b, c->version);
		kinf_buf_puts(b, ",\"kind\":");
		kinf_apistatus_put_quoted(b, c->kind);
		kinf_buf_putf(b, "},\"scope\":\"%s\",\"singularResource\":",
				c->namespaced ? "Namespaced" : "Cluster");
		kinf_apistatus_put_quoted(b, c->singular);
		kinf_buf_putc(b, ',');
		verbs(b);
		short_names(b, c);
		kinf_buf_putc(b, '}');
	}
	if (lists_namespaces(srv, ctx, group, version)) {
		kinf_buf_putf(b, "%s{\"resource\":\"%s\",\"responseKind\":{\"group\":\"\","
				"\"version\":\"v1\",\"kind\":\"%s\"},\"scope\":\"Cluster\","
				"\"singularResource\":\"%s\",", k++ ? "," : "", namespaces.resource,
				namespaces.kind, namespaces.singular);
		verbs(b);
		kinf_buf_putf(b, ",\"shortNames\":[\"%s\"]}", namespaces.short_name);
	}
	kinf_buf_puts(b, "],\"freshness\":\"Current\"}");
}

static void aggregated(struct serve_request *r, bool legacy, const char *v) {
	struct kinf_buf b = {0}, ctype = {0};
	int rc = 0;
	kinf_buf_putf(&b, "{\"kind\":\"APIGroupDiscoveryList\",\"apiVersion\":"
			"\"apidiscovery.k8s.io/%s\",\"metadata\":{},\"items\":[", v);
	if (legacy) {
		kinf_buf_puts(&b, "{\"metadata\":{\"creationTimestamp\":null},\"versions\":[");
		agg_version(r->srv, r->ctx, "", "v1", &b);
		kinf_buf_puts(&b, "]}");
	} else {
		struct kinf_strv gs = {0};
		rc = groups(r->srv, r->ctx, &gs);
		for (size_t i = 0; rc == 0 && i < gs.n; i++) {
			struct kinf_strv vs = {0};
			rc = versions(r->srv, r->ctx, gs.v[i], &vs);
			kinf_buf_puts(&b, i ? ",{\"metadata\":{\"name\":" : "{\"metadata\":{\"name\":");
			kinf_apistatus_put_quoted(&b, gs.v[i]);
			kinf_buf_puts(&b, ",\"creationTimestamp\":null},\"versions\":[");
			for (size_t k = 0; k < vs.n; k++) {
				if (k) {
					kinf_buf_putc(&b, ',');
				}
				agg_version(r->srv, r->ctx, gs.v[i], vs.v[k], &b);
			}
			kinf_buf_puts(&b, "]}");
			kinf_strv_release(&vs);
		}
		kinf_strv_release(&gs);
	}
	kinf_buf_puts(&b, "]}\n");
	kinf_buf_putf(&ctype, "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList",
			v);
	if (rc < 0 || kinf_buf_error(&ctype)) {
		serve_respond_oom(r);
	} else {
		serve_respond_buf(r, 200, ctype.data, &b);
	}
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
	kinf_buf_puts(&b, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":");
	group_version(&b, group, version);
	kinf_buf_puts(&b, ",\"resources\":[");
	for (size_t i = 0; i < r->srv->n_colls; i++) {
		const struct serve_coll *c = r->srv->colls[i];
		if (c->ctx != r->ctx || strcmp(c->group, group) || strcmp(c->version, version)) {
			continue;
		}
		kinf_buf_puts(&b, k++ ? ",{\"name\":" : "{\"name\":");
		kinf_apistatus_put_quoted(&b, c->resource);
		kinf_buf_puts(&b, ",\"singularName\":");
		kinf_apistatus_put_quoted(&b, c->singular);
		kinf_buf_putf(&b, ",\"namespaced\":%s,\"kind\":", c->namespaced ? "true" : "false");
		kinf_apistatus_put_quoted(&b, c->kind);
		kinf_buf_putc(&b, ',');
		verbs(&b);
		short_names(&b, c);
		kinf_buf_putc(&b, '}');
	}
	if (lists_namespaces(r->srv, r->ctx, group, version)) {
		kinf_buf_putf(&b, "%s{\"name\":\"%s\",\"singularName\":\"%s\",\"namespaced\":false,"
				"\"kind\":\"%s\",", k++ ? "," : "", namespaces.resource,
				namespaces.singular, namespaces.kind);
		verbs(&b);
		kinf_buf_putf(&b, ",\"shortNames\":[\"%s\"]}", namespaces.short_name);
	}
	kinf_buf_puts(&b, "]}\n");
	serve_respond_buf(r, 200, "application/json", &b);
	kinf_buf_release(&b);
}

void serve_discovery(struct serve_request *r) {
	struct kinf_buf b = {0};
	const char *agg = aggregated_version(&r->accept);
	const char *group = r->path.group ? r->path.group : "";
	struct kinf_strv vs = {0};
	int rc = 0;

	switch (r->path.kind) {
	case KINF_APIPATH_API:
		if (agg) {
			aggregated(r, true, agg);
			return;
		}
		kinf_buf_puts(&b, "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
				"\"serverAddressByClientCIDRs\":null}\n");
		break;
	case KINF_APIPATH_APIS:
		if (agg) {
			aggregated(r, false, agg);
			return;
		}
		kinf_buf_puts(&b, "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[");
		struct kinf_strv gs = {0};
		rc = groups(r->srv, r->ctx, &gs);
		for (size_t i = 0; rc == 0 && i < gs.n; i++) {
			kinf_strv_reset(&vs);
			rc = versions(r->srv, r->ctx, gs.v[i], &vs);
			if (i) {
				kinf_buf_putc(&b, ',');
			}
			group_entry(&b, gs.v[i], &vs);
		}
		kinf_strv_release(&gs);
		kinf_buf_puts(&b, "]}\n");
		break;
	case KINF_APIPATH_GROUP:
		rc = versions(r->srv, r->ctx, group, &vs);
		if (rc == 0 && (!vs.n || !group[0])) {
			kinf_strv_release(&vs);
			serve_respond(r, 404, "text/plain; charset=utf-8", KINF_APISTATUS_PAGE_NOT_FOUND,
					strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
			return;
		}
		kinf_buf_puts(&b, "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",");
		group_fields(&b, group, &vs);
		kinf_buf_puts(&b, "}\n");
		break;
	default:
		rc = versions(r->srv, r->ctx, group, &vs);
		if (rc == 0 && !kinf_strv_contains(&vs, r->path.version) && !(strcmp(r->path.version, "v1") == 0 &&
				!group[0])) {
			kinf_strv_release(&vs);
			serve_respond(r, 404, "text/plain; charset=utf-8", KINF_APISTATUS_PAGE_NOT_FOUND,
					strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
			return;
		}
		kinf_strv_release(&vs);
		if (rc < 0) {
			serve_respond_oom(r);
		} else {
			resource_list(r, group, r->path.version);
		}
		return;
	}
	kinf_strv_release(&vs);
	if (rc < 0) {
		serve_respond_oom(r);
	} else {
		serve_respond_buf(r, 200, "application/json", &b);
	}
	kinf_buf_release(&b);
}
