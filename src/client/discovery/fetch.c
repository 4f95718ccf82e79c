#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "discovery.h"
#include "discovery_int.h"
#include "err.h"
#include "http.h"
#include "log.h"

/* ---- fetching ---- */

/*
 * Whether a Content-Type names an aggregated discovery document, as
 * client-go's ContentTypeIsGVK: application/json with g, v and as
 * parameters (in any order, names case-insensitive, values maybe quoted).
 */
bool kinf_discovery_is_aggregated(const char *content_type) {
	char g[64] = "", v[64] = "", as[64] = "";
	const char *p = content_type, *end;

	if (!p) {
		return false;
	}
	while (*p == ' ' || *p == '\t') {
		p++;
	}
	end = p + strcspn(p, ";");
	while (end > p && (end[-1] == ' ' || end[-1] == '\t')) {
		end--;
	}
	if ((size_t)(end - p) != strlen("application/json") ||
			strncasecmp(p, "application/json", (size_t)(end - p)) != 0) {
		return false;
	}
	p += strcspn(p, ";");
	while (*p == ';') {
		const char *key, *val;
		size_t klen, vlen;
		char *dst = NULL;

		p++;
		while (*p == ' ' || *p == '\t') {
			p++;
		}
		key = p;
		klen = strcspn(p, "=;");
		if (p[klen] != '=') {
			p += klen;
			continue;
		}
		val = p + klen + 1;
		while (klen && (key[klen - 1] == ' ' || key[klen - 1] == '\t')) {
			klen--;
		}
		while (*val == ' ' || *val == '\t') {
			val++;
		}
		if (*val == '"') {
			val++;
			vlen = strcspn(val, "\"");
			p = val + vlen + (val[vlen] == '"');
		} else {
			vlen = strcspn(val, "; \t");
			p = val + vlen;
		}
		p += strcspn(p, ";");
		if (klen == 1 && strncasecmp(key, "g", 1) == 0) {
			dst = g;
		} else if (klen == 1 && strncasecmp(key, "v", 1) == 0) {
			dst = v;
		} else if (klen == 2 && strncasecmp(key, "as", 2) == 0) {
			dst = as;
		}
		if (dst && vlen < 64) {
			memcpy(dst, val, vlen);
			dst[vlen] = '\0';
		}
	}
	return strcmp(g, "apidiscovery.k8s.io") == 0 &&
			(strcmp(v, "v2") == 0 || strcmp(v, "v2beta1") == 0) &&
			strcmp(as, "APIGroupDiscoveryList") == 0;
}

struct fetcher {
	kinf_discovery_fetch_func fn;
	void *userdata;
};

/*
 * GET path. 0 with the body in resp; 1 when the server said 404 or 406
 * (no such document); else the error.
 */
static int get(struct fetcher *f, const char *path, const char *accept,
		struct kinf_http_response *resp, struct kinf_error *reterr) {
	int rc;

	memset(resp, 0, sizeof(*resp));
	kinf_log(3, "discovery: GET %s", path);
	rc = f->fn(path, accept, resp, reterr, f->userdata);
	if (rc == -KINF_EHTTP && (resp->status == 404 || resp->status == 406)) {
		kinf_error_clear(reterr);
		return 1;
	}
	return rc;
}

/*
 * Fetch the APIResourceList of every version of g (legacy discovery).
 * A group version the server cannot serve (an HTTP error, e.g. 503 from
 * an unavailable aggregated API) is left out and marks the result
 * partial, as client-go's ErrGroupDiscoveryFailed.
 */
static int fetch_versions(struct fetcher *f, struct kinf_discovery *d,
		struct group *g, struct kinf_error *reterr) {
	struct kinf_buf path = {0};
	struct kinf_http_response resp;
	int rc = 0;

	for (size_t i = 0; i < g->n_versions; ) {
		struct version *v = &g->versions[i];
		struct kinf_error err = {0};

		kinf_buf_reset(&path);
		if (g->name[0]) {
			rc = kinf_buf_printf(&path, "/apis/%s/%s", g->name, v->name);
		} else {
			rc = kinf_buf_printf(&path, "/api/%s", v->name);
		}
		if (rc < 0) {
			kinf_error_fill(reterr, rc, "out of memory");
			break;
		}
		rc = get(f, path.data, LEGACY_ACCEPT, &resp, &err);
		if (rc == 1 || rc == -KINF_EHTTP) {
			kinf_log(1, "discovery: couldn't get resource list for %s%s%s: %s",
					g->name, g->name[0] ? "/" : "", v->name,
					rc == 1 ? "not found" : err.message);
			kinf_http_response_release(&resp);
			d->partial = true;
			disc_remove_version(g, i);
			rc = 0;
			continue;
		}
		if (rc == 0) {
			rc = disc_parse_resource_list(v, path.data, resp.body.data,
					resp.body.len, &err);
		}
		kinf_http_response_release(&resp);
		if (rc < 0) {
			if (reterr) {
				*reterr = err;
			}
			break;
		}
		i++;
	}
	kinf_buf_release(&path);
	return rc;
}

static int fetch_all(struct fetcher *f, struct kinf_discovery *d,
		struct kinf_error *reterr) {
	static const char *const docs[] = { "/api", "/apis" };
	struct kinf_http_response resp;
	int rc = 0;

	for (size_t i = 0; i < 2 && rc >= 0; i++) {
		size_t first = d->n_groups;
		rc = get(f, docs[i], KINF_DISCOVERY_ACCEPT, &resp, reterr);
		if (rc == 1) {
			/* client-go: 404 or 406 means no groups there. */
			kinf_log(2, "discovery: %s not served", docs[i]);
			rc = 0;
		} else if (rc == 0 && kinf_discovery_is_aggregated(resp.content_type)) {
			rc = disc_parse_aggregated(d, docs[i], resp.body.data, resp.body.len,
					reterr);
		} else if (rc == 0) {
			kinf_log(2, "discovery: %s is not aggregated (%s)", docs[i],
					resp.content_type ? resp.content_type : "no type");
			if (i == 0) {
				rc = disc_parse_api_versions(d, resp.body.data, resp.body.len,
						reterr);
			} else {
				rc = disc_parse_group_list(d, resp.body.data, resp.body.len,
						reterr);
			}
			for (size_t j = first; j < d->n_groups && rc == 0; ) {
				rc = fetch_versions(f, d, &d->groups[j], reterr);
				if (rc == 0 && d->groups[j].n_versions == 0) {
					disc_remove_group(d, j);
				} else {
					j++;
				}
			}
		}
		kinf_http_response_release(&resp);
	}
	return rc;
}

int disc_http_fetch(const char *path, const char *accept,
		struct kinf_http_response *ret_resp, struct kinf_error *reterr,
		void *userdata) {
	struct kinf_http_request req = {
		.path = path,
		.accept = accept,
	};

	return kinf_http_get(userdata, &req, ret_resp, reterr);
}

int kinf_discovery_load_with(kinf_discovery_fetch_func fetch, void *userdata,
		const char *server, const struct kinf_discovery_opts *opts,
		struct kinf_discovery **ret, struct kinf_error *reterr) {
	static const struct kinf_discovery_opts defaults = {0};
	struct fetcher f = { fetch, userdata };
	struct kinf_discovery *d = NULL;
	char *dir;
	long ttl;
	int rc;

	if (!opts) {
		opts = &defaults;
	}
	ttl = opts->ttl_s > 0 ? opts->ttl_s : DEFAULT_TTL_S;
	dir = server ? kinf_discovery_cache_dir(server, opts) : NULL;
	if (dir && !opts->refresh && disc_cache_read(dir, server, ttl, &d) == 0) {
		*ret = d;
		free(dir);
		return 0;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = fetch_all(&f, d, reterr)) < 0) {
		goto out;
	}
	if ((rc = disc_finish(d)) < 0) {
		kinf_error_fill(reterr, rc, "out of memory");
		goto out;
	}
	if (dir && !d->partial) {
		disc_cache_write(dir, server, d);
	}
	*ret = d;
	d = NULL;
out:
	kinf_discovery_free(d);
	free(dir);
	return rc;
}

int kinf_discovery_load(struct kinf_http *http,
		const struct kinf_discovery_opts *opts,
		struct kinf_discovery **ret, struct kinf_error *reterr) {
	return kinf_discovery_load_with(disc_http_fetch, http, kinf_http_server(http),
			opts, ret, reterr);
}
