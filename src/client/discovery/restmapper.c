#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "discovery.h"
#include "discovery_int.h"
#include "editdist.h"
#include "err.h"
#include "http.h"
#include "log.h"

/* ---- resolution ---- */

static const struct res *find_name(const struct kinf_discovery *d,
		const char *name, const char *version, const char *group) {
	struct walk w = { .d = d, .group = group, .version = version };
	const struct res *r;

	while ((r = disc_walk_next(&w))) {
		if (strcmp(r->name, name) == 0 || strcmp(r->singular, name) == 0) {
			return r;
		}
	}
	return NULL;
}

/*
 * The first resource (in priority order) with short name `name` in a group
 * equal to `group` (any when NULL), or whose group starts with `group` when
 * prefix is set: shortcut.go's expandResourceShortcut.
 */
static const struct res *find_short(const struct kinf_discovery *d,
		const char *name, const char *group, bool prefix,
		const char **ret_group) {
	struct walk w = { .d = d, .group = group, .prefix = prefix };
	const struct res *r;

	while ((r = disc_walk_next(&w))) {
		for (char **s = r->short_names; *s; s++) {
			if (strcmp(*s, name) == 0) {
				*ret_group = w.g->name;
				return r;
			}
		}
	}
	return NULL;
}

/*
 * kubectl's KindFor(GroupVersionResource) through the shortcut expander:
 * an exact plural or singular is left alone, else a short name expands to
 * its plural and group; the mapper then matches plural or singular,
 * lower-cased, in priority order. version and group may be NULL (any).
 */
static const struct res *lookup_resource(const struct kinf_discovery *d,
		const char *name, const char *version, const char *group) {
	const struct res *r;
	const char *sgroup;
	char *lower;

	if (!find_name(d, name, NULL, group)) {
		r = find_short(d, name, group, false, &sgroup);
		if (!r && group) {
			/* "hpa.autoscal" matches autoscaling: group prefixing. */
			r = find_short(d, name, group, true, &sgroup);
		}
		if (r) {
			name = r->name;
			group = sgroup;
		}
	}
	if (!(lower = strdup(name))) {
		return NULL;
	}
	for (char *p = lower; *p; p++) {
		*p = (char)tolower((unsigned char)*p);
	}
	r = find_name(d, lower, version, group);
	free(lower);
	return r;
}

/* A kind, case-insensitive, in priority order. */
static const struct res *lookup_kind(const struct kinf_discovery *d,
		const char *kind, const char *version, const char *group) {
	struct walk w = { .d = d, .group = group, .version = version };
	const struct res *r;

	while ((r = disc_walk_next(&w))) {
		if (strcasecmp(r->kind, kind) == 0) {
			return r;
		}
	}
	return NULL;
}

/*
 * The closest name (plural, singular or short name) to `name`, within one
 * edit for short inputs and two for longer ones; restricted to one group
 * when group is not NULL. Ties go to the higher-priority resource.
 */
static const char *suggest(const struct kinf_discovery *d, const char *name,
		const char *group) {
	size_t len = strlen(name), limit = len <= 4 ? 1 : 2, best = limit + 1;
	struct walk w = { .d = d, .group = group };
	const char *found = NULL;
	const struct res *r;

	if (len < 2) {
		return NULL;
	}
	while ((r = disc_walk_next(&w))) {
		const char *cands[2] = { r->name, r->singular };
		for (size_t c = 0; c < 2; c++) {
			size_t dist = kinf_editdist(name, cands[c], limit);
			if (dist < best) {
				best = dist;
				found = cands[c];
			}
		}
		for (char **s = r->short_names; *s; s++) {
			size_t dist = kinf_editdist(name, *s, limit);
			if (dist < best) {
				best = dist;
				found = *s;
			}
		}
	}
	return found;
}

static int not_found(const struct kinf_discovery *d, const char *name,
		const char *res, const char *group, struct kinf_error *reterr) {
	const char *hint = NULL;
	char *lower;

	/* Nothing at /api or /apis: a wrong server URL, not a mistyped type. */
	if (d->n_groups == 0) {
		return kinf_error_set(reterr, KINF_EHTTP, "the server could not find the "
				"requested resource (no API at /api or /apis)");
	}
	lower = strdup(res);

	if (lower) {
		for (char *p = lower; *p; p++) {
			*p = (char)tolower((unsigned char)*p);
		}
		/* A group that does not exist gets no hint. */
		if (!group || disc_find_group(d, group)) {
			hint = suggest(d, lower, group);
		}
	}
	if (hint && group) {
		kinf_error_fill(reterr, KINF_ENOTFOUND,
				"unknown resource type \"%s\", did you mean \"%s.%s\"?",
				name, hint, group);
	} else if (hint) {
		kinf_error_fill(reterr, KINF_ENOTFOUND,
				"unknown resource type \"%s\", did you mean \"%s\"?",
				name, hint);
	} else {
		kinf_error_fill(reterr, KINF_ENOTFOUND,
				"unknown resource type \"%s\"", name);
	}
	free(lower);
	return -KINF_ENOTFOUND;
}

int kinf_discovery_resolve(const struct kinf_discovery *disc, const char *name,
		const struct kinf_resource **ret, struct kinf_error *reterr) {
	char *copy = NULL, *dot, *s1, *s2;
	const char *res, *group = NULL;
	const struct res *r = NULL;
	int rc;

	if (!disc) {
		return kinf_error_set(reterr, KINF_EINVAL, "no discovery");
	}
	if (!name || !*name) {
		return kinf_error_set(reterr, KINF_EINVAL, "empty resource type");
	}
	if (!(copy = strdup(name))) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	/*
	 * ParseResourceArg: "a.b.c" is resource.version.group, and then (as
	 * for "a.b") resource.group with everything after the first dot.
	 */
	if ((dot = strchr(copy, '.')) && (s2 = strchr(dot + 1, '.'))) {
		*dot = '\0';
		*s2 = '\0';
		s1 = dot + 1;
		r = lookup_resource(disc, copy, s1, s2 + 1);
		if (!r) {
			r = lookup_kind(disc, copy, s1, s2 + 1);
		}
		*dot = '.';
		*s2 = '.';
	}
	res = copy;
	if ((dot = strchr(copy, '.'))) {
		*dot = '\0';
		if (dot[1]) {
			group = dot + 1;
		}
	}
	if (!r && *res) {
		r = lookup_resource(disc, res, NULL, group);
	}
	if (!r && *res) {
		r = lookup_kind(disc, res, NULL, group);
	}
	if (!r) {
		rc = not_found(disc, name, res, group, reterr);
		goto out;
	}
	*ret = &r->pub;
	rc = 0;
out:
	free(copy);
	return rc;
}

size_t kinf_discovery_count(const struct kinf_discovery *disc) {
	return disc ? disc->n_flat : 0;
}

const struct kinf_resource *kinf_discovery_at(const struct kinf_discovery *disc,
		size_t i) {
	return disc && i < disc->n_flat ? disc->flat[i] : NULL;
}

bool kinf_discovery_from_cache(const struct kinf_discovery *disc) {
	return disc && disc->from_cache;
}

bool kinf_discovery_partial(const struct kinf_discovery *disc) {
	return disc && disc->partial;
}

char *kinf_resource_path(const struct kinf_resource *res, const char *namespace) {
	struct kinf_buf b = {0};
	int rc;

	if (res->group[0]) {
		rc = kinf_buf_printf(&b, "/apis/%s/%s", res->group, res->version);
	} else {
		rc = kinf_buf_printf(&b, "/api/%s", res->version);
	}
	if (rc == 0 && namespace && *namespace && res->namespaced) {
		rc = kinf_buf_append_str(&b, "/namespaces/");
		if (rc == 0) {
			rc = kinf_buf_append_urlenc(&b, namespace);
		}
	}
	if (rc == 0) {
		rc = kinf_buf_printf(&b, "/%s", res->resource);
	}
	if (rc < 0) {
		kinf_buf_release(&b);
		return NULL;
	}
	return kinf_buf_take(&b);
}


int kinf_discovery_resolve_deferred_with(struct kinf_discovery **disc,
		kinf_discovery_fetch_func fetch, void *userdata, const char *server,
		const struct kinf_discovery_opts *opts, const char *name,
		const struct kinf_resource **ret, struct kinf_error *reterr) {
	int rc = kinf_discovery_resolve(*disc, name, ret, reterr);
	if (rc != -KINF_ENOTFOUND || !(*disc)->from_cache) {
		return rc;
	}
	struct kinf_discovery_opts fresh = {0};
	struct kinf_discovery *d = NULL;
	if (opts) {
		fresh = *opts;
	}
	fresh.refresh = true;
	kinf_log(1, "\"%s\" is not in the discovery cache: asking the server", name);
	kinf_error_clear(reterr);
	rc = kinf_discovery_load_with(fetch, userdata, server, &fresh, &d, reterr);
	if (rc < 0) {
		kinf_error_prefix(reterr, "discovery");
		return rc;
	}
	d->replaced = *disc;
	*disc = d;
	return kinf_discovery_resolve(d, name, ret, reterr);
}

int kinf_discovery_resolve_deferred(struct kinf_discovery **disc, struct kinf_http *http,
		const struct kinf_discovery_opts *opts, const char *name,
		const struct kinf_resource **ret, struct kinf_error *reterr) {
	return kinf_discovery_resolve_deferred_with(disc, disc_http_fetch, http,
			kinf_http_server(http), opts, name, ret, reterr);
}
