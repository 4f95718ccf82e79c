/*
 * The kubeconfig `kinf serve --write-kubeconfig` writes
 * (src/kubeconfig_write.c): read back with kinf's own loader context by
 * context (server, CA bytes, token, namespace), written 0600 and
 * atomically (no temporary file left, an earlier serve's file replaced),
 * a file kinf did not write never replaced, bad options refused.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "kubeconfig.h"
#include "kubeconfig_write.h"
#include "tls.h"
#include "tap.h"

static char dir[64];

static const char *no_env(const char *name) {
	return NULL;
}

static struct kinf_rest_config *load(const char *path, const char *context,
		struct kinf_error *err) {
	struct kinf_kubeconfig_opts o = {
		.kubeconfig = path,
		.context = context,
		.insecure_skip_tls_verify = -1,
		.getenv = no_env,
		.serviceaccount_dir = "/nonexistent/serviceaccount",
	};
	struct kinf_rest_config *c = NULL;
	kinf_error_clear(err);
	if (kinf_kubeconfig_load(&o, &c, err) < 0) {
		return NULL;
	}
	return c;
}

static int count_files(void) {
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		n += e->d_name[0] != '.';
	}
	if (d) {
		closedir(d);
	}
	return n;
}

static char *slurp(const char *path) {
	FILE *f = fopen(path, "r");
	struct kinf_buf b = {0};
	char tmp[4096];
	size_t n;
	while (f && (n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		must(kinf_buf_append(&b, tmp, n));
	}
	if (f) {
		fclose(f);
	}
	return kinf_buf_take(&b);
}

static void put(const char *path, const char *text) {
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

int main(void) {
	struct kinf_error err = {0};
	struct kinf_tls *tls = NULL;
	snprintf(dir, sizeof(dir), "/tmp/kinf-kcw-XXXXXX");
	if (!mkdtemp(dir)) {
		return 1;
	}
	char path[128];
	snprintf(path, sizeof(path), "%s/kubeconfig", dir);
	is_int(kinf_tls_new(NULL, &tls, &err), 0, "a CA to write (%s)", err.message);
	size_t ca_len = 0;
	const char *ca = kinf_tls_ca_pem(tls, &ca_len);

	/* Names YAML would read as something else, or not at all, plain. */
	const struct kinf_kubeconfig_entry entries[] = {
		{ "prod", "https://127.0.0.1:40001", NULL },
		{ "true", "https://127.0.0.1:40001/ctx/true", "kube-system" },
		{ "a: b #c 'q' \"d\" \xc3\xa9", "https://[::1]:40002", "x" },
	};
	struct kinf_kubeconfig_write_opts o = {
		.entries = entries, .n_entries = 3, .token = "tok-abc_123", .ca_pem = ca,
		.ca_pem_len = ca_len,
	};
	umask(022);
	is_int(kinf_kubeconfig_write(path, &o, &err), 0, "written (%s)", err.message);
	struct stat st = {0};
	int sr = stat(path, &st);
	ok(sr == 0 && (st.st_mode & 0777) == 0600, "mode 0600 (%o)", (unsigned)(st.st_mode & 0777));
	is_int(count_files(), 1, "no temporary file left");
	char *text = slurp(path);
	ok(text && strncmp(text, KINF_KUBECONFIG_WRITE_MARK "\n", strlen(KINF_KUBECONFIG_WRITE_MARK) + 1) == 0,
		"its first line marks it as serve's");
	free(text);

	for (size_t i = 0; i < 3; i++) {
		struct kinf_rest_config *c = load(path, entries[i].context, &err);
		if (!ok(c != NULL, "context %zu loads back (%s)", i, err.message)) {
			continue;
		}
		is_str(c->context_name, entries[i].context, "  its name");
		is_str(c->cluster_name, entries[i].context, "  its cluster, of the same name");
		is_str(c->server, entries[i].server, "  server");
		ok(c->ca_pem && c->ca_pem_len == ca_len && memcmp(c->ca_pem, ca, ca_len) == 0,
			"  certificate-authority-data is the CA's PEM");
		is_str(c->token, "tok-abc_123", "  token");
		is_str(c->user_name, "kinf-serve", "  user");
		is_str(c->namespace, entries[i].namespace ? entries[i].namespace : "default",
			"  namespace");
		ok(!c->insecure_skip_tls_verify && !c->client_cert_pem, "  nothing else");
		kinf_rest_config_free(c);
	}
	struct kinf_rest_config *c = load(path, NULL, &err);
	ok(c && strcmp(c->context_name, "prod") == 0, "current-context: the first entry");
	kinf_rest_config_free(c);

	/* Rewritten by the next start, with another current context and user. */
	o.current_context = "true";
	o.user = "serve-user";
	o.token = "tok-2";
	is_int(kinf_kubeconfig_write(path, &o, &err), 0, "an earlier serve's file is replaced");
	c = load(path, NULL, &err);
	ok(c && strcmp(c->context_name, "true") == 0 && strcmp(c->token, "tok-2") == 0 &&
		strcmp(c->user_name, "serve-user") == 0, "  with the new current context, user, token");
	kinf_rest_config_free(c);
	is_int(count_files(), 1, "  and no temporary file left");

	/* What kinf did not write is left alone. */
	const char *foreign = "apiVersion: v1\nkind: Config\n";
	put(path, foreign);
	is_int(kinf_kubeconfig_write(path, &o, &err), -KINF_EEXISTS, "another kubeconfig is not replaced");
	ok(strstr(err.message, "was not written by kinf serve"), "  saying so: %s", err.message);
	text = slurp(path);
	is_str(text, foreign, "  and it is untouched");
	free(text);
	put(path, "");
	is_int(kinf_kubeconfig_write(path, &o, &err), 0, "an empty file is replaced");
	unlink(path);
	char link[160];
	snprintf(link, sizeof(link), "%s/link", dir);
	if (symlink("/nonexistent", link) == 0) {
		is_int(kinf_kubeconfig_write(link, &o, &err), -KINF_EEXISTS, "a symlink is not replaced");
		unlink(link);
	}
	is_int(kinf_kubeconfig_write(dir, &o, &err), -KINF_EEXISTS, "nor a directory");
	snprintf(link, sizeof(link), "%s/none/kubeconfig", dir);
	is_int(kinf_kubeconfig_write(link, &o, &err), -KINF_EIO, "a missing directory: an I/O error");

	/* Options that make no usable kubeconfig. */
	struct kinf_kubeconfig_write_opts bad = o;
	bad.n_entries = 0;
	is_int(kinf_kubeconfig_write(path, &bad, &err), -KINF_EINVAL, "no entries");
	bad = o;
	bad.token = "";
	is_int(kinf_kubeconfig_write(path, &bad, &err), -KINF_EINVAL, "no token");
	bad = o;
	bad.ca_pem = NULL;
	is_int(kinf_kubeconfig_write(path, &bad, &err), -KINF_EINVAL, "no CA");
	bad = o;
	bad.current_context = "staging";
	is_int(kinf_kubeconfig_write(path, &bad, &err), -KINF_EINVAL, "an unknown current context");
	is_str(err.message, "current context 'staging' is not written", "  named");
	const struct kinf_kubeconfig_entry twice[] = {
		{ "a", "https://127.0.0.1:1", NULL }, { "a", "https://127.0.0.1:2", NULL },
	};
	bad = o;
	bad.entries = twice;
	bad.n_entries = 2;
	bad.current_context = NULL;
	is_int(kinf_kubeconfig_write(path, &bad, &err), -KINF_EINVAL, "a context twice");
	const struct kinf_kubeconfig_entry badutf[] = { { "a\xff", "https://127.0.0.1:1", NULL } };
	bad.entries = badutf;
	bad.n_entries = 1;
	is_int(kinf_kubeconfig_write(path, &bad, &err), -KINF_EINVAL, "invalid UTF-8 in a name");
	is_str(err.message, "a name, server or token is not valid UTF-8", "  said");
	is_int(count_files(), 0, "nothing written by the refusals");

	kinf_tls_unref(tls);
	rmdir(dir);
	return tap_done();
}
