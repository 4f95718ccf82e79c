#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "base64.h"
#include "buf.h"
#include "kubeconfig_write.h"

static int emit(yaml_emitter_t *em, yaml_event_t *ev) {
	return yaml_emitter_emit(em, ev) ? 0 : -KINF_ENOMEM;
}

/* A key: plain. */
static int key(yaml_emitter_t *em, const char *s) {
	yaml_event_t ev;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
			1, 1, YAML_PLAIN_SCALAR_STYLE)) {
		return -KINF_ENOMEM;
	}
	return emit(em, &ev);
}

/*
 * key: "value", always double-quoted (a context named "true" stays a
 * string). -KINF_EINVAL when libyaml refuses the value, which it does for
 * invalid UTF-8 (the only other cause, its copy of the value failing, is
 * out of memory for a few bytes).
 */
static int pair(yaml_emitter_t *em, const char *k, const char *v) {
	yaml_event_t ev;
	int rc = key(em, k);
	if (rc == 0 && !yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v,
			(int)strlen(v), 1, 1, YAML_DOUBLE_QUOTED_SCALAR_STYLE)) {
		rc = -KINF_EINVAL;
	}
	return rc ? rc : emit(em, &ev);
}

static int map_start(yaml_emitter_t *em) {
	yaml_event_t ev;
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	return emit(em, &ev);
}

static int map_end(yaml_emitter_t *em) {
	yaml_event_t ev;
	yaml_mapping_end_event_initialize(&ev);
	return emit(em, &ev);
}

static int seq_start(yaml_emitter_t *em, const char *k) {
	yaml_event_t ev;
	int rc = key(em, k);
	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
	return rc ? rc : emit(em, &ev);
}

static int seq_end(yaml_emitter_t *em) {
	yaml_event_t ev;
	yaml_sequence_end_event_initialize(&ev);
	return emit(em, &ev);
}

/* One "- name: N\n  KIND:\n    ..." entry whose inner map holds pairs (k, v; v NULL skipped). */
static int named(yaml_emitter_t *em, const char *name, const char *kind,
		const char *const *kv, size_t n) {
	int rc = map_start(em);
	rc = rc ? rc : pair(em, "name", name);
	rc = rc ? rc : key(em, kind);
	rc = rc ? rc : map_start(em);
	for (size_t i = 0; rc == 0 && i + 1 < n; i += 2) {
		if (kv[i + 1]) {
			rc = pair(em, kv[i], kv[i + 1]);
		}
	}
	rc = rc ? rc : map_end(em);
	return rc ? rc : map_end(em);
}

static int to_buf(void *data, unsigned char *bytes, size_t len) {
	return kinf_buf_append(data, bytes, len) == 0;
}

static int render(const struct kinf_kubeconfig_write_opts *o, const char *ca_b64,
		struct kinf_buf *out, struct kinf_error *reterr) {
	yaml_emitter_t em;
	yaml_event_t ev;
	const char *user = o->user ? o->user : "kinf-serve";
	const char *current = o->current_context ? o->current_context : o->entries[0].context;

	if (kinf_buf_printf(out, "%s\n", KINF_KUBECONFIG_WRITE_MARK) < 0 ||
			!yaml_emitter_initialize(&em)) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	yaml_emitter_set_output(&em, to_buf, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	int rc = emit(&em, &ev);
	if (rc == 0) {
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		rc = emit(&em, &ev);
	}
	rc = rc ? rc : map_start(&em);
	rc = rc ? rc : pair(&em, "apiVersion", "v1");
	rc = rc ? rc : pair(&em, "kind", "Config");
	rc = rc ? rc : seq_start(&em, "clusters");
	for (size_t i = 0; rc == 0 && i < o->n_entries; i++) {
		const char *kv[] = { "server", o->entries[i].server,
			"certificate-authority-data", ca_b64 };
		rc = named(&em, o->entries[i].context, "cluster", kv, 4);
	}
	rc = rc ? rc : seq_end(&em);
	rc = rc ? rc : seq_start(&em, "contexts");
	for (size_t i = 0; rc == 0 && i < o->n_entries; i++) {
		const char *kv[] = { "cluster", o->entries[i].context, "user", user,
			"namespace", o->entries[i].namespace };
		rc = named(&em, o->entries[i].context, "context", kv, 6);
	}
	rc = rc ? rc : seq_end(&em);
	rc = rc ? rc : pair(&em, "current-context", current);
	rc = rc ? rc : seq_start(&em, "users");
	if (rc == 0) {
		const char *kv[] = { "token", o->token };
		rc = named(&em, user, "user", kv, 2);
	}
	rc = rc ? rc : seq_end(&em);
	rc = rc ? rc : map_end(&em);
	if (rc == 0) {
		yaml_document_end_event_initialize(&ev, 1);
		rc = emit(&em, &ev);
	}
	if (rc == 0) {
		yaml_stream_end_event_initialize(&ev);
		rc = emit(&em, &ev);
	}
	if (rc == 0 && !yaml_emitter_flush(&em)) {
		rc = -KINF_ENOMEM;
	}
	if (rc == -KINF_EINVAL) {
		rc = kinf_error_set(reterr, KINF_EINVAL, "a name, server or token is not valid UTF-8");
	} else if (rc < 0) {
		rc = em.problem ? kinf_error_set(reterr, KINF_EINVAL, "cannot write YAML: %s",
			em.problem) : kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	yaml_emitter_delete(&em);
	return rc;
}

static int check_opts(const struct kinf_kubeconfig_write_opts *o, struct kinf_error *reterr) {
	if (!o->n_entries) {
		return kinf_error_set(reterr, KINF_EINVAL, "no context to write");
	}
	if (!o->token || !*o->token) {
		return kinf_error_set(reterr, KINF_EINVAL, "no token to write");
	}
	if (!o->ca_pem || !o->ca_pem_len || o->ca_pem_len > (1 << 20)) {
		return kinf_error_set(reterr, KINF_EINVAL, "no CA certificate to write");
	}
	if (o->user && !*o->user) {
		return kinf_error_set(reterr, KINF_EINVAL, "an empty user name");
	}
	bool current_found = !o->current_context;
	for (size_t i = 0; i < o->n_entries; i++) {
		const struct kinf_kubeconfig_entry *e = &o->entries[i];
		if (!e->context || !*e->context) {
			return kinf_error_set(reterr, KINF_EINVAL, "an empty context name");
		}
		if (!e->server || !*e->server) {
			return kinf_error_set(reterr, KINF_EINVAL, "context '%s': no server", e->context);
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(o->entries[j].context, e->context) == 0) {
				return kinf_error_set(reterr, KINF_EINVAL, "context '%s' given twice",
					e->context);
			}
		}
		current_found |= o->current_context && strcmp(o->current_context, e->context) == 0;
	}
	if (!current_found) {
		return kinf_error_set(reterr, KINF_EINVAL, "current context '%s' is not written",
			o->current_context);
	}
	return 0;
}

/* path may be replaced: missing, empty, or an earlier serve's file. */
static int check_existing(const char *path, struct kinf_error *reterr) {
	struct stat st;
	if (lstat(path, &st) < 0) {
		return errno == ENOENT ? 0 : kinf_error_set(reterr, KINF_EIO, "'%s': %s", path,
			strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		return kinf_error_set(reterr, KINF_EEXISTS, "'%s' exists and is not a regular file",
			path);
	}
	if (st.st_size == 0) {
		return 0;
	}
	char head[sizeof(KINF_KUBECONFIG_WRITE_MARK)] = "";
	FILE *f = fopen(path, "r");
	if (!f) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(errno));
	}
	size_t n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = '\0';
	if (strcmp(head, KINF_KUBECONFIG_WRITE_MARK) != 0) {
		return kinf_error_set(reterr, KINF_EEXISTS,
			"'%s' exists and was not written by kinf serve; not replacing it", path);
	}
	return 0;
}

/* Write data to a new 0600 file beside path and rename it over path. */
static int write_atomic(const char *path, const char *data, size_t len,
		struct kinf_error *reterr) {
	struct kinf_buf tmp = {0};
	if (kinf_buf_printf(&tmp, "%s.XXXXXX", path) < 0) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	int fd = mkstemp(tmp.data);
	if (fd < 0) {
		int rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(errno));
		kinf_buf_release(&tmp);
		return rc;
	}
	int rc = 0;
	if (fchmod(fd, 0600) < 0) {
		rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", tmp.data, strerror(errno));
	}
	for (size_t off = 0; rc == 0 && off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", tmp.data,
				w < 0 ? strerror(errno) : "short write");
			break;
		}
		off += (size_t)w;
	}
	if (rc == 0 && fsync(fd) < 0) {
		rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", tmp.data, strerror(errno));
	}
	if (close(fd) < 0 && rc == 0) {
		rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", tmp.data, strerror(errno));
	}
	if (rc == 0 && rename(tmp.data, path) < 0) {
		rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(errno));
	}
	if (rc < 0) {
		unlink(tmp.data);
	}
	kinf_buf_release(&tmp);
	return rc;
}

int kinf_kubeconfig_write(const char *path, const struct kinf_kubeconfig_write_opts *opts,
		struct kinf_error *reterr) {
	struct kinf_buf out = {0};
	int rc = check_opts(opts, reterr);
	if (rc < 0) {
		return rc;
	}
	rc = check_existing(path, reterr);
	if (rc < 0) {
		return rc;
	}
	/* certificate-authority-data: standard base64 of the PEM, one line. */
	char *b64 = kinf_base64_encode(opts->ca_pem, opts->ca_pem_len, KINF_BASE64_STD);
	if (!b64) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	rc = render(opts, b64, &out, reterr);
	free(b64);
	if (rc == 0) {
		rc = write_atomic(path, out.data, out.len, reterr);
	}
	/* The token is in there. */
	if (out.data) {
		kinf_explicit_bzero(out.data, out.len);
	}
	kinf_buf_release(&out);
	return rc;
}
