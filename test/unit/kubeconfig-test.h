#ifndef KINF_TEST_KUBECONFIG_TEST_H
#define KINF_TEST_KUBECONFIG_TEST_H

/*
 * What the kubeconfig tests share (test-kubeconfig*.c, one per part of
 * src/kubeconfig/): a fake environment, files in a temporary directory
 * and the fixtures in test/fixtures/kubeconfig (the tests run in
 * test/unit), loads that must fail, and a log hook that counts the files
 * read. No network.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "kubeconfig.h"
#include "log.h"
#include "tap.h"

static char fixtures[PATH_MAX / 2];
static char tmpdir[PATH_MAX / 2];

/* ---- a fake environment, passed as opts.getenv ---- */

#define MAX_ENV 16
static const char *env_name[MAX_ENV];
static const char *env_value[MAX_ENV];
static int n_env;

static inline void env_reset(void) {
	n_env = 0;
}

static inline void env_put(const char *name, const char *value) {
	env_name[n_env] = name;
	env_value[n_env++] = value;
}

static inline const char *fake_getenv(const char *name) {
	for (int i = 0; i < n_env; i++) {
		if (env_name[i] && strcmp(env_name[i], name) == 0) {
			return env_value[i];
		}
	}
	return NULL;
}

static inline struct kinf_kubeconfig_opts new_opts(void) {
	return (struct kinf_kubeconfig_opts){
		.insecure_skip_tls_verify = -1,
		.getenv = fake_getenv,
		.serviceaccount_dir = "/nonexistent/serviceaccount",
	};
}

/* ---- files ---- */

static char paths[16][PATH_MAX];
static int next_path;

/* A path under tmpdir or fixtures, valid for the next 15 calls. */
static inline const char *path_in(const char *dir, const char *name) {
	char *p = paths[next_path++ % 16];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static inline const char *tmp(const char *name) {
	return path_in(tmpdir, name);
}

static inline const char *fixture(const char *name) {
	return path_in(fixtures, name);
}

static inline const char *write_tmp(const char *name, const char *content) {
	const char *path = tmp(name);
	char dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *s = dir + strlen(tmpdir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dir, 0700);
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(99);
	}
	fputs(content, f);
	fclose(f);
	return path;
}

static inline char *slurp(const char *path) {
	struct kinf_buf b = { 0 };
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		must(kinf_buf_append(&b, chunk, n));
	}
	fclose(f);
	return kinf_buf_take(&b);
}

/* kinf_kubeconfig_load, with c reset: a failed load leaves it alone. */
static inline int load_opts(const struct kinf_kubeconfig_opts *o, struct kinf_rest_config **c,
		struct kinf_error *e) {
	*c = NULL;
	kinf_error_clear(e);
	return kinf_kubeconfig_load(o, c, e);
}

/* Load yaml written to tmpdir/name with --kubeconfig pointing at it. */
static inline int load_yaml(const char *yaml, struct kinf_kubeconfig_opts *o,
		struct kinf_rest_config **c, struct kinf_error *e) {
	o->kubeconfig = write_tmp("config", yaml);
	return load_opts(o, c, e);
}

/* Expect a load of yaml to fail with message (exactly). */
static inline void load_fails(const char *what, const char *yaml, struct kinf_kubeconfig_opts o,
		const char *message) {
	struct kinf_rest_config *c = NULL;
	struct kinf_error e;
	int r = load_yaml(yaml, &o, &c, &e);

	is_int(r, -KINF_ECONFIG, "%s: -KINF_ECONFIG", what);
	is_str(e.message, message, "%s: message", what);
	ok(c == NULL, "%s: no config", what);
	kinf_rest_config_free(c);
}

/* ---- log capture, to count files read ---- */

static int loads_logged;

static inline void count_loads(int level, const char *msg, void *userdata) {
	(void)level;
	(void)userdata;
	if (strncmp(msg, "loading kubeconfig ", 19) == 0) {
		loads_logged++;
	}
}

/* One cluster, user and context: the smallest kubeconfig that loads. */
__attribute__((unused)) static const char *const simple =
	"current-context: simple\n"
	"clusters:\n"
	"- name: c\n"
	"  cluster:\n"
	"    server: https://simple.example:6443\n"
	"users:\n"
	"- name: u\n"
	"  user:\n"
	"    token: simple-token\n"
	"contexts:\n"
	"- name: simple\n"
	"  context:\n"
	"    cluster: c\n"
	"    user: u\n";

/* A user u in context x with cluster c; %s is the user's body. */
#define USER_CFG(body) \
	"current-context: x\n" \
	"contexts: [{name: x, context: {cluster: c, user: u}}]\n" \
	"clusters: [{name: c, cluster: {server: 'https://c'}}]\n" \
	"users:\n" \
	"- name: u\n" \
	"  user:\n" body

#define CLUSTER_CFG(body) \
	"current-context: x\n" \
	"contexts: [{name: x, context: {cluster: c}}]\n" \
	"clusters:\n" \
	"- name: c\n" \
	"  cluster:\n" \
	"    server: https://c\n" body

/* The absolute, symlink-free name of dir (realpath is not POSIX base). */
static inline int absdir(const char *dir, char *out, size_t size) {
	char cwd[PATH_MAX];
	int ok_ = 0;

	if (!getcwd(cwd, sizeof(cwd))) {
		return -1;
	}
	if (chdir(dir) == 0) {
		ok_ = getcwd(out, size) != NULL;
		if (chdir(cwd) != 0) {
			return -1;
		}
	}
	return ok_ ? 0 : -1;
}


/*
 * The test's set-up: the fixtures found, a temporary directory made. 0,
 * or -1 after a "Bail out!" line.
 */
static inline int kc_test_begin(const char *name) {
	const char *dir = getenv("KINF_FIXTURES_DIR");
	char tmpl[64];

	if (absdir(dir ? dir : "../fixtures/kubeconfig", fixtures, sizeof(fixtures)) < 0) {
		printf("Bail out! fixtures not found (run in test/unit or set KINF_FIXTURES_DIR)\n");
		return -1;
	}
	snprintf(tmpl, sizeof(tmpl), "/tmp/kinf-test-%s-XXXXXX", name);
	if (!mkdtemp(tmpl) || absdir(tmpl, tmpdir, sizeof(tmpdir)) < 0) {
		printf("Bail out! mkdtemp failed\n");
		return -1;
	}
	return 0;
}

/* The temporary directory removed; the exit status. */
static inline int kc_test_end(void) {
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0) {
		printf("# could not remove %s\n", tmpdir);
	}
	return tap_done();
}

#endif
