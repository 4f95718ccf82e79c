#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "buf.h"
#include "discovery.h"
#include "discovery_int.h"
#include "err.h"
#include "log.h"

/* ---- the disk cache ---- */

/* The kinf cache directory: opts, $XDG_CACHE_HOME/kinf or ~/.cache/kinf. */
static char *cache_base(const struct kinf_discovery_opts *opts) {
	struct kinf_buf b = {0};
	const char *env;
	int rc;

	if (opts && opts->cache_dir) {
		if (!opts->cache_dir[0]) {
			return NULL;
		}
		return strdup(opts->cache_dir);
	}
	env = getenv("XDG_CACHE_HOME");
	/* The XDG spec says relative paths are invalid and to be ignored. */
	if (env && env[0] == '/') {
		rc = kinf_buf_printf(&b, "%s/kinf", env);
	} else if ((env = getenv("HOME")) && env[0]) {
		rc = kinf_buf_printf(&b, "%s/.cache/kinf", env);
	} else {
		return NULL;
	}
	if (rc < 0) {
		kinf_buf_release(&b);
		return NULL;
	}
	return kinf_buf_take(&b);
}

char *kinf_discovery_cache_dir(const char *server,
		const struct kinf_discovery_opts *opts) {
	struct kinf_buf b = {0};
	char *base = cache_base(opts);
	size_t start;
	int rc;

	if (!base) {
		return NULL;
	}
	/* As kubectl's computeDiscoverCacheDir, but '/' is replaced too. */
	if (strncmp(server, "https://", 8) == 0) {
		server += 8;
	} else if (strncmp(server, "http://", 7) == 0) {
		server += 7;
	}
	rc = kinf_buf_printf(&b, "%s/discovery/", base);
	start = b.len;
	for (const char *p = server; *p && rc == 0; p++) {
		char c = *p;
		if (!isalnum((unsigned char)c) && c != '.' && c != '-' && c != '_') {
			c = '_';
		}
		rc = kinf_buf_append_char(&b, c);
	}
	if (rc == 0 && (b.len == start || strcmp(b.data + start, ".") == 0 ||
			strcmp(b.data + start, "..") == 0)) {
		rc = kinf_buf_append_char(&b, '_');
	}
	free(base);
	if (rc < 0) {
		kinf_buf_release(&b);
		return NULL;
	}
	return kinf_buf_take(&b);
}

/* mkdir -p with mode 0700 for what is created. */
static int make_dirs(char *path) {
	struct stat st;

	for (char *p = path + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;
			*p = '\0';
			if (mkdir(path, 0700) < 0 && errno != EEXIST) {
				*p = saved;
				return -errno;
			}
			*p = saved;
			if (!saved) {
				break;
			}
		}
	}
	if (stat(path, &st) < 0) {
		return -errno;
	}
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static json_t *strv_to_json(char **v) {
	json_t *arr = json_array();

	for (char **p = v; arr && *p; p++) {
		if (json_array_append_new(arr, json_string(*p)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* The model as an aggregated APIGroupDiscoveryList. */
static json_t *model_to_json(const struct kinf_discovery *d) {
	json_t *list = json_object(), *items;

	if (!list ||
			json_object_set_new(list, "apiVersion",
				json_string("apidiscovery.k8s.io/v2")) < 0 ||
			json_object_set_new(list, "kind",
				json_string("APIGroupDiscoveryList")) < 0 ||
			json_object_set_new(list, "items", json_array()) < 0) {
		goto fail;
	}
	items = json_object_get(list, "items");
	/* set_new and append_new take the value even when they fail. */
	for (size_t i = 0; i < d->n_groups; i++) {
		const struct group *g = &d->groups[i];
		json_t *gobj = json_object(), *versions;
		if (json_array_append_new(items, gobj) < 0 ||
				json_object_set_new(gobj, "metadata",
					json_pack("{ss}", "name", g->name)) < 0 ||
				json_object_set_new(gobj, "versions", json_array()) < 0) {
			goto fail;
		}
		versions = json_object_get(gobj, "versions");
		for (size_t j = 0; j < g->n_versions; j++) {
			const struct version *v = &g->versions[j];
			json_t *vobj = json_object(), *resources;
			if (json_array_append_new(versions, vobj) < 0 ||
					json_object_set_new(vobj, "version",
						json_string(v->name)) < 0 ||
					json_object_set_new(vobj, "freshness",
						json_string("Current")) < 0 ||
					json_object_set_new(vobj, "resources",
						json_array()) < 0) {
				goto fail;
			}
			resources = json_object_get(vobj, "resources");
			for (size_t k = 0; k < v->n_res; k++) {
				const struct res *r = &v->res[k];
				json_t *robj = json_object();
				if (json_array_append_new(resources, robj) < 0 ||
						json_object_set_new(robj, "resource",
							json_string(r->name)) < 0 ||
						json_object_set_new(robj, "responseKind",
							json_pack("{ssssss}", "group", g->name,
								"version", v->name,
								"kind", r->kind)) < 0 ||
						json_object_set_new(robj, "scope",
							json_string(r->namespaced ?
								"Namespaced" : "Cluster")) < 0 ||
						json_object_set_new(robj, "singularResource",
							json_string(r->singular)) < 0 ||
						json_object_set_new(robj, "verbs",
							strv_to_json(r->verbs)) < 0 ||
						json_object_set_new(robj, "shortNames",
							strv_to_json(r->short_names)) < 0 ||
						json_object_set_new(robj, "categories",
							strv_to_json(r->categories)) < 0) {
					goto fail;
				}
			}
		}
	}
	return list;
fail:
	json_decref(list);
	return NULL;
}

/*
 * Write the cache file atomically: a temporary file in the same directory
 * (mkstemp: mode 0600), then rename. Failures are logged, never fatal.
 */
void disc_cache_write(const char *dir, const char *server,
		const struct kinf_discovery *d) {
	struct kinf_buf path = {0}, tmp = {0};
	json_t *root = json_object();
	char *text = NULL, *dirs = NULL;
	const char *why = "out of memory";
	bool tmp_exists = false;
	int fd = -1, rc;
	size_t len, off;

	if (!root ||
			json_object_set_new(root, "kind", json_string(CACHE_KIND)) < 0 ||
			json_object_set_new(root, "version",
				json_integer(CACHE_VERSION)) < 0 ||
			json_object_set_new(root, "server", json_string(server)) < 0 ||
			json_object_set_new(root, "fetchTime",
				json_integer((json_int_t)time(NULL))) < 0 ||
			json_object_set_new(root, "discovery", model_to_json(d)) < 0) {
		goto out;
	}
	if (!(text = json_dumps(root, JSON_COMPACT))) {
		goto out;
	}
	if (!(dirs = strdup(dir))) {
		goto out;
	}
	if ((rc = make_dirs(dirs)) < 0) {
		why = strerror(-rc);
		goto out;
	}
	if (kinf_buf_printf(&path, "%s/" CACHE_FILE, dir) < 0 ||
			kinf_buf_printf(&tmp, "%s/." CACHE_FILE ".XXXXXX", dir) < 0) {
		goto out;
	}
	if ((fd = mkstemp(tmp.data)) < 0) {
		why = strerror(errno);
		goto out;
	}
	tmp_exists = true;
	len = strlen(text);
	for (off = 0; off < len; ) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			why = strerror(errno);
			goto out;
		}
		off += (size_t)n;
	}
	rc = close(fd);
	fd = -1;
	if (rc < 0) {
		why = strerror(errno);
		goto out;
	}
	if (rename(tmp.data, path.data) < 0) {
		why = strerror(errno);
		goto out;
	}
	tmp_exists = false;
	why = NULL;
	kinf_log(2, "discovery: cached in %s", path.data);
out:
	if (why) {
		kinf_log(1, "discovery: cannot write the cache in %s: %s", dir, why);
	}
	if (fd >= 0) {
		close(fd);
	}
	if (tmp_exists) {
		unlink(tmp.data);
	}
	free(text);
	free(dirs);
	json_decref(root);
	kinf_buf_release(&path);
	kinf_buf_release(&tmp);
}

static int read_file(const char *path, struct kinf_buf *out) {
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0) {
		return -errno;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_CACHE_BYTES) {
		rc = -EINVAL;
		goto out;
	}
	for (;;) {
		ssize_t n;
		if (kinf_buf_reserve(out, 65536) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		n = read(fd, out->data + out->len, out->cap - out->len - 1);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0) {
			break;
		}
		out->len += (size_t)n;
		out->data[out->len] = '\0';
		if ((off_t)out->len > MAX_CACHE_BYTES) {
			rc = -EINVAL;
			goto out;
		}
	}
out:
	close(fd);
	return rc;
}

/*
 * Read a fresh cache for server. 0 with *ret set, or 1 for a miss (absent,
 * stale, another server's, or unreadable: a corrupt file is only logged).
 */
int disc_cache_read(const char *dir, const char *server, long ttl_s,
		struct kinf_discovery **ret) {
	struct kinf_buf path = {0}, data = {0};
	struct kinf_error err = {0};
	struct pctx c = { "cache", &err };
	struct kinf_discovery *d = NULL;
	json_t *root = NULL, *model, *v;
	const char *s;
	json_int_t fetched;
	time_t now = time(NULL);
	int rc;

	if (kinf_buf_printf(&path, "%s/" CACHE_FILE, dir) < 0) {
		rc = 1;
		goto out;
	}
	if ((rc = read_file(path.data, &data)) < 0) {
		if (rc != -ENOENT) {
			kinf_log(1, "discovery: ignoring the cache %s: %s", path.data,
					strerror(-rc));
		}
		rc = 1;
		goto out;
	}
	rc = 1;
	if (!(root = disc_load_json(&c, data.data, data.len))) {
		goto corrupt;
	}
	if (disc_check_kind(&c, root, CACHE_KIND) < 0) {
		goto corrupt;
	}
	v = json_object_get(root, "version");
	if (!json_is_integer(v) || json_integer_value(v) != CACHE_VERSION) {
		kinf_error_fill(&err, KINF_EJSON, "not a version %d cache",
				CACHE_VERSION);
		goto corrupt;
	}
	v = json_object_get(root, "fetchTime");
	if (!json_is_integer(v)) {
		disc_type_fail(&c, "fetchTime", "integer");
		goto corrupt;
	}
	fetched = json_integer_value(v);
	if (disc_member_str(&c, root, "", "server", &s) < 0) {
		goto corrupt;
	}
	if (strcmp(s, server) != 0) {
		kinf_log(2, "discovery: cache %s is for %s", path.data, s);
		goto out;
	}
	/* A fetch time in the future means the clock moved: stale. */
	if (fetched > (json_int_t)now || (json_int_t)now - fetched >= ttl_s) {
		kinf_log(2, "discovery: cache %s is stale", path.data);
		goto out;
	}
	if (disc_member(&c, root, "", "discovery", J_OBJECT, &model) < 0) {
		goto corrupt;
	}
	if (!model) {
		disc_type_fail(&c, "discovery", "object");
		goto corrupt;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		goto out;
	}
	if (disc_parse_agg_list(&c, d, model) < 0 || disc_finish(d) < 0) {
		goto corrupt;
	}
	d->from_cache = true;
	*ret = d;
	d = NULL;
	rc = 0;
	kinf_log(2, "discovery: from the cache %s", path.data);
	goto out;
corrupt:
	kinf_log(1, "discovery: ignoring the corrupt cache %s: %s", path.data,
			err.message);
out:
	kinf_discovery_free(d);
	json_decref(root);
	kinf_buf_release(&path);
	kinf_buf_release(&data);
	return rc;
}
