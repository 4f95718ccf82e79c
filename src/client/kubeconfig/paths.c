#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "kubeconfig.h"
#include "kubeconfig_int.h"

/*
 * Lexically clean an absolute path as Go's filepath.Clean does: collapse
 * "//", drop "." and resolve ".." against the previous element.
 */
static void clean_path(char *path) {
	char *out = path + 1;	/* the result so far is [path, out): "/" or "/a/b" */
	const char *p = path;

	if (*p != '/') {
		return;
	}
	while (*p) {
		const char *start;
		size_t len;

		while (*p == '/') {
			p++;
		}
		start = p;
		while (*p && *p != '/') {
			p++;
		}
		len = (size_t)(p - start);
		if (len == 0 || (len == 1 && start[0] == '.')) {
			continue;
		}
		if (len == 2 && start[0] == '.' && start[1] == '.') {
			while (out > path + 1 && out[-1] != '/') {
				out--;
			}
			if (out > path + 1) {
				out--;
			}
			continue;
		}
		/* out never passes start: the result is never longer than what was read */
		if (out > path + 1) {
			*out++ = '/';
		}
		memmove(out, start, len);
		out += len;
	}
	*out = '\0';
}

/* base + "/" + rel, cleaned. rel absolute: a cleaned copy of it. */
char *kc_join_path(const char *base, const char *rel) {
	struct kinf_buf b = { 0 };
	if (rel[0] == '/') {
		if (kinf_buf_append_str(&b, rel) < 0) {
			goto fail;
		}
	} else if (kinf_buf_printf(&b, "%s/%s", base, rel) < 0) {
		goto fail;
	}
	clean_path(b.data);
	return kinf_buf_take(&b);
fail:
	kinf_buf_release(&b);
	return NULL;
}

char *kc_absolute_path(const char *path) {
	char *cwd, *abs;
	long size;

	if (path[0] == '/') {
		return kc_join_path("/", path);
	}
	size = pathconf(".", _PC_PATH_MAX);
	if (size <= 0) {
		size = PATH_MAX;
	}
	cwd = malloc((size_t)size);
	if (!cwd) {
		return NULL;
	}
	if (!getcwd(cwd, (size_t)size)) {
		free(cwd);
		return strdup(path);
	}
	abs = kc_join_path(cwd, path);
	free(cwd);
	return abs;
}

char *kc_dir_of(const char *abs_file) {
	const char *slash = strrchr(abs_file, '/');
	if (!slash || slash == abs_file) {
		return strdup("/");
	}
	return kc_memdup0(abs_file, (size_t)(slash - abs_file));
}

/*
 * Read a whole file. errno-style result in *ret_errno when it cannot be
 * read (so callers can skip missing files); -KINF_ENOMEM otherwise.
 */
int kc_read_file(const char *path, char **ret, size_t *ret_len, int *ret_errno) {
	struct kinf_buf b = { 0 };
	FILE *f;
	int r = 0;

	*ret_errno = 0;
	f = fopen(path, "rb");
	if (!f) {
		*ret_errno = errno;
		return -KINF_EIO;
	}
	for (;;) {
		size_t n;
		if (b.len > MAX_KUBECONFIG_SIZE) {
			*ret_errno = EFBIG;
			r = -KINF_EIO;
			break;
		}
		r = kinf_buf_reserve(&b, 65536);
		if (r < 0) {
			break;
		}
		n = fread(b.data + b.len, 1, b.cap - b.len - 1, f);
		b.len += n;
		b.data[b.len] = '\0';
		if (n == 0) {
			if (ferror(f)) {
				*ret_errno = errno ? errno : EIO;
				r = -KINF_EIO;
			}
			break;
		}
	}
	fclose(f);
	if (r < 0) {
		if (b.data) {
			kinf_explicit_bzero(b.data, b.cap);
		}
		kinf_buf_release(&b);
		return r;
	}
	*ret_len = b.len;
	*ret = kinf_buf_take(&b);
	return *ret ? 0 : -KINF_ENOMEM;
}

const char *kc_env_get(const struct kinf_kubeconfig_opts *opts, const char *name) {
	if (opts->getenv) {
		return opts->getenv(name);
	}
	return getenv(name);
}

bool kc_file_readable(const char *path, int *ret_errno) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		*ret_errno = errno;
		return false;
	}
	fclose(f);
	return true;
}

/*
 * Read a file the config names into memory (CA, certificate, key). The
 * validation above checked readability; a race still gets a clear message.
 */
int kc_slurp(const char *what, const char *path, char **ret, size_t *ret_len,
		struct kinf_error *reterr) {
	int err, r = kc_read_file(path, ret, ret_len, &err);

	if (r == -KINF_EIO) {
		return kinf_error_set(reterr, KINF_ECONFIG, "unable to read %s %s: %s", what, path,
				strerror(err));
	}
	return r;
}

/* "host:8443" gets a scheme as rest.DefaultServerURL would give it. */
char *kc_normalize_server(const char *server, bool tls_hint) {
	struct kinf_buf b = { 0 };
	int r;

	if (strstr(server, "://")) {
		r = kinf_buf_append_str(&b, server);
	} else {
		r = kinf_buf_printf(&b, "%s://%s", tls_hint ? "https" : "http", server);
	}
	if (r < 0) {
		kinf_buf_release(&b);
		return NULL;
	}
	/* drop query and fragment as client_config.go does, then trailing '/' */
	char *q = strpbrk(b.data + (strstr(b.data, "://") - b.data) + 3, "?#");
	if (q) {
		*q = '\0';
		b.len = (size_t)(q - b.data);
	}
	while (b.len > 0 && b.data[b.len - 1] == '/') {
		b.data[--b.len] = '\0';
	}
	return kinf_buf_take(&b);
}
