/*
 * Resource-name resolution against discovery documents (src/discovery.c):
 * aggregated (apidiscovery.k8s.io/v2) and legacy documents, then the
 * disk cache written and read back. Input: one flags byte (bit 0: /api and
 * /apis answer as aggregated documents, bit 1: v2beta1 instead of v2, bit
 * 2: round trip through the disk cache), the name to resolve up to a NUL
 * byte, then documents separated by NUL bytes: the first answers /api, the
 * second /apis, the others every further path in the order asked for
 * (404 once they run out).
 *
 * Properties checked besides memory safety: every resource discovery
 * lists resolves by "resource.version.group" to a resource of that group
 * and version, resolution failures say "unknown resource type", and the
 * cache gives back the same resources.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "discovery.h"
#include "fuzz.h"
#include "http.h"

#define SERVER "https://127.0.0.1:6443"

struct docs {
	struct fuzz_input in;
	bool aggregated;
	const char *content_type;
	int served;
};

static int next_doc(struct docs *d, struct kinf_buf *out) {
	if (!d->in.n && d->served > 0) {
		return -1;
	}
	const uint8_t *nul = d->in.n ? memchr(d->in.p, 0, d->in.n) : NULL;
	size_t len = nul ? (size_t)(nul - d->in.p) : d->in.n;
	FUZZ_CHECK(kinf_buf_append(out, d->in.p, len) == 0);
	d->in.p += len + (nul ? 1 : 0);
	d->in.n -= len + (nul ? 1 : 0);
	d->served++;
	return 0;
}

static int fetch(const char *path, const char *accept,
		struct kinf_http_response *ret_resp, struct kinf_error *reterr,
		void *userdata) {
	struct docs *d = userdata;
	bool top = strcmp(path, "/api") == 0 || strcmp(path, "/apis") == 0;

	FUZZ_CHECK(path[0] == '/');
	if (next_doc(d, &ret_resp->body) < 0) {
		ret_resp->status = 404;
		return kinf_error_set(reterr, KINF_EHTTP, "404 Not Found");
	}
	ret_resp->status = 200;
	ret_resp->content_type = strdup(top && d->aggregated ? d->content_type :
			"application/json");
	FUZZ_CHECK(ret_resp->content_type != NULL);
	return 0;
}

static void remove_tree(const char *dir) {
	DIR *dh = opendir(dir);
	struct dirent *e;
	if (!dh) {
		return;
	}
	while ((e = readdir(dh))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		struct kinf_buf p = {0};
		FUZZ_CHECK(kinf_buf_printf(&p, "%s/%s", dir, e->d_name) == 0);
		if (unlink(p.data) < 0) {
			remove_tree(p.data);
		}
		kinf_buf_release(&p);
	}
	closedir(dh);
	rmdir(dir);
}

static bool has_upper(const char *s) {
	for (; *s; s++) {
		if (*s >= 'A' && *s <= 'Z') {
			return true;
		}
	}
	return false;
}

static void check_resolves(const struct kinf_discovery *disc) {
	size_t n = kinf_discovery_count(disc);
	for (size_t i = 0; i < n; i++) {
		const struct kinf_resource *r = kinf_discovery_at(disc, i), *got = NULL;
		FUZZ_CHECK(r && r->group && r->version && r->resource && r->singular &&
				r->kind && r->short_names && r->verbs);
		char *path = kinf_resource_path(r, "ns");
		FUZZ_CHECK(path && path[0] == '/');
		free(path);
		/* kubectl lowercases what it resolves; names with dots are ambiguous. */
		if (!r->resource[0] || strchr(r->resource, '.') || strchr(r->version, '.') ||
				has_upper(r->resource) || has_upper(r->version) ||
				has_upper(r->group)) {
			continue;
		}
		struct kinf_buf full = {0};
		FUZZ_CHECK(kinf_buf_printf(&full, "%s.%s.%s", r->resource, r->version, r->group) == 0);
		struct kinf_error err = {0};
		int rc = kinf_discovery_resolve(disc, full.data, &got, &err);
		if (rc != 0) {
			fprintf(stderr, "resolving \"%s\": %s\n", full.data, err.message);
		}
		FUZZ_CHECK(rc == 0);
		FUZZ_CHECK(strcmp(got->group, r->group) == 0 &&
				strcmp(got->version, r->version) == 0);
		kinf_buf_release(&full);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	char *name = fuzz_string(&in);
	struct docs docs = {
		.in = in,
		.aggregated = flags & 1,
		.content_type = flags & 2 ?
			"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList" :
			"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
	};
	struct kinf_discovery_opts opts = { .cache_dir = "" };
	struct kinf_discovery *disc = NULL;
	struct kinf_error err = {0};
	char cache[80] = "";

	if (flags & 4) {
		const char *tmp = getenv("TMPDIR");
		snprintf(cache, sizeof(cache), "%.40s/kinf-fuzz-disc-%ld",
				tmp && *tmp ? tmp : "/tmp", (long)getpid());
		remove_tree(cache);
		opts.cache_dir = cache;
	}
	int rc = kinf_discovery_load_with(fetch, &docs, SERVER, &opts, &disc, &err);
	if (rc < 0) {
		FUZZ_CHECK(disc == NULL);
		FUZZ_CHECK(err.code == -rc && err.message[0]);
		goto out;
	}
	FUZZ_CHECK(!kinf_discovery_from_cache(disc));
	check_resolves(disc);
	const struct kinf_resource *res = NULL;
	rc = kinf_discovery_resolve(disc, name, &res, &err);
	if (rc < 0) {
		FUZZ_CHECK(rc == -KINF_ENOTFOUND || rc == -KINF_ENOMEM ||
				(rc == -KINF_EINVAL && !name[0]) ||
				(rc == -KINF_EHTTP && kinf_discovery_count(disc) == 0));
		FUZZ_CHECK(rc != -KINF_ENOTFOUND ||
				strncmp(err.message, "unknown resource type", 21) == 0);
	} else {
		FUZZ_CHECK(res != NULL);
	}
	if (cache[0] && !kinf_discovery_partial(disc)) {
		struct kinf_discovery *again = NULL;
		struct docs none = { .served = 1 };
		char *dir = kinf_discovery_cache_dir(SERVER, &opts);
		struct kinf_buf file = {0};
		FUZZ_CHECK(dir != NULL);
		FUZZ_CHECK(kinf_buf_printf(&file, "%s/discovery.json", dir) == 0);
		bool written = access(file.data, F_OK) == 0;
		kinf_buf_release(&file);
		free(dir);
		rc = kinf_discovery_load_with(fetch, &none, SERVER, &opts, &again, &err);
		/* What kinf wrote to its cache, it reads back. */
		FUZZ_CHECK(!written || (rc == 0 && kinf_discovery_from_cache(again)));
		if (rc == 0 && kinf_discovery_from_cache(again)) {
			FUZZ_CHECK(kinf_discovery_count(again) == kinf_discovery_count(disc));
			for (size_t i = 0; i < kinf_discovery_count(disc); i++) {
				const struct kinf_resource *a = kinf_discovery_at(disc, i);
				const struct kinf_resource *b = kinf_discovery_at(again, i);
				FUZZ_CHECK(strcmp(a->resource, b->resource) == 0 &&
						strcmp(a->group, b->group) == 0 &&
						strcmp(a->kind, b->kind) == 0 &&
						a->namespaced == b->namespaced);
			}
		}
		kinf_discovery_free(again);
	}
out:
	kinf_discovery_free(disc);
	if (cache[0]) {
		remove_tree(cache);
	}
	/* The aggregated documents straight from memory as well. */
	struct fuzz_input rest = in;
	char *api = fuzz_string(&rest);
	char *apis = fuzz_string(&rest);
	disc = NULL;
	if (kinf_discovery_from_aggregated(api, strlen(api), apis, strlen(apis),
			&disc, &err) == 0) {
		check_resolves(disc);
		kinf_discovery_free(disc);
	}
	free(api);
	free(apis);
	free(name);
	return 0;
}
