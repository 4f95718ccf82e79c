#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "kubeconfig.h"
#include "log.h"
#include "tap.h"

/*
 * kubeconfig loading, merging, selection, overrides, validation and
 * in-cluster config, without a network. Fixtures live in
 * test/fixtures/kubeconfig (the test runs in test/unit); everything else
 * is written to a temporary directory.
 */

static char fixtures[PATH_MAX / 2];
static char tmpdir[PATH_MAX / 2];

/* ---- a fake environment, passed as opts.getenv ---- */

#define MAX_ENV 16
static const char *env_name[MAX_ENV];
static const char *env_value[MAX_ENV];
static int n_env;

static void env_reset(void) {
	n_env = 0;
}

static void env_put(const char *name, const char *value) {
	env_name[n_env] = name;
	env_value[n_env++] = value;
}

static const char *fake_getenv(const char *name) {
	for (int i = 0; i < n_env; i++) {
		if (strcmp(env_name[i], name) == 0) {
			return env_value[i];
		}
	}
	return NULL;
}

static struct kinf_kubeconfig_opts new_opts(void) {
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
static const char *path_in(const char *dir, const char *name) {
	char *p = paths[next_path++ % 16];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static const char *tmp(const char *name) {
	return path_in(tmpdir, name);
}

static const char *fixture(const char *name) {
	return path_in(fixtures, name);
}

static const char *write_tmp(const char *name, const char *content) {
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

static char *slurp(const char *path) {
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
static int load_opts(const struct kinf_kubeconfig_opts *o, struct kinf_rest_config **c,
		struct kinf_error *e) {
	*c = NULL;
	kinf_error_clear(e);
	return kinf_kubeconfig_load(o, c, e);
}

/* Load yaml written to tmpdir/name with --kubeconfig pointing at it. */
static int load_yaml(const char *yaml, struct kinf_kubeconfig_opts *o,
		struct kinf_rest_config **c, struct kinf_error *e) {
	o->kubeconfig = write_tmp("config", yaml);
	return load_opts(o, c, e);
}

/* Expect a load of yaml to fail with message (exactly). */
static void load_fails(const char *what, const char *yaml, struct kinf_kubeconfig_opts o,
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

static void count_loads(int level, const char *msg, void *userdata) {
	(void)level;
	(void)userdata;
	if (strncmp(msg, "loading kubeconfig ", 19) == 0) {
		loads_logged++;
	}
}

/* ---- tests ---- */

static const char *const simple =
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

static void test_loading_order(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_rest_config *c = NULL;
	struct kinf_error e = { 0 };
	char kubeconfig[2 * PATH_MAX + 64], home[PATH_MAX];
	int r;

	/* --kubeconfig: only that file, even with KUBECONFIG set */
	env_reset();
	snprintf(kubeconfig, sizeof(kubeconfig), "%s", fixture("merge/a/config"));
	env_put("KUBECONFIG", kubeconfig);
	o.kubeconfig = write_tmp("explicit/config", simple);
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "--kubeconfig loads");
	is_str(c ? c->server : NULL, "https://simple.example:6443", "--kubeconfig: only that file");
	is_str(c ? c->source : NULL, tmp("explicit/config"), "source is the file");
	kinf_rest_config_free(c);

	/* --kubeconfig that does not exist is an error, not an empty config */
	o.kubeconfig = tmp("explicit/missing");
	c = NULL;
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "missing --kubeconfig fails");
	snprintf(kubeconfig, sizeof(kubeconfig),
			"error loading config file \"%s\": No such file or directory",
			tmp("explicit/missing"));
	is_str(e.message, kubeconfig, "missing --kubeconfig: message names it");

	/* KUBECONFIG wins over HOME; missing entries are skipped */
	o.kubeconfig = NULL;
	write_tmp("home/.kube/config", simple);
	snprintf(home, sizeof(home), "%s", tmp("home"));
	snprintf(kubeconfig, sizeof(kubeconfig), "%s:%s", tmp("nope/config"),
			fixture("merge/a/config"));
	env_reset();
	env_put("HOME", home);
	env_put("KUBECONFIG", kubeconfig);
	o.context = "shared-ctx";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "KUBECONFIG with a missing file loads");
	is_str(c ? c->server : NULL, "https://a.example:6443", "KUBECONFIG used, not HOME");
	kinf_rest_config_free(c);
	o.context = NULL;

	/* KUBECONFIG listing only missing files: an empty config, not HOME */
	snprintf(kubeconfig, sizeof(kubeconfig), "%s::%s", tmp("nope/1"), tmp("nope/2"));
	env_reset();
	env_put("HOME", home);
	env_put("KUBECONFIG", kubeconfig);
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "KUBECONFIG all missing: error");
	is_str(e.message, "no configuration: set --kubeconfig, KUBECONFIG or ~/.kube/config",
			"KUBECONFIG all missing: no configuration");

	/* empty KUBECONFIG: ~/.kube/config */
	env_reset();
	env_put("HOME", home);
	env_put("KUBECONFIG", "");
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "HOME config loads");
	is_str(c ? c->server : NULL, "https://simple.example:6443", "~/.kube/config used");
	is_str(c ? c->context_name : NULL, "simple", "its current-context");
	kinf_rest_config_free(c);

	/* no HOME config either */
	env_reset();
	env_put("HOME", tmp("empty-home"));
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "nothing at all: error");
	is_str(e.message, "no configuration: set --kubeconfig, KUBECONFIG or ~/.kube/config",
			"nothing at all: message");

	/* the same file twice in KUBECONFIG is read once */
	snprintf(kubeconfig, sizeof(kubeconfig), "%s:%s", tmp("home/.kube/config"),
			tmp("home/.kube/config"));
	env_reset();
	env_put("KUBECONFIG", kubeconfig);
	loads_logged = 0;
	kinf_log_set(2, count_loads, NULL);
	r = load_opts(&o, &c, &e);
	kinf_log_set(0, NULL, NULL);
	is_int(r, 0, "duplicate KUBECONFIG entry loads");
	is_int(loads_logged, 1, "duplicate KUBECONFIG entry read once");
	kinf_rest_config_free(c);

	/* a file that exists but can't be parsed is an error even in KUBECONFIG */
	snprintf(kubeconfig, sizeof(kubeconfig), "%s:%s", write_tmp("bad/config", "a: [\n"),
			tmp("home/.kube/config"));
	env_reset();
	env_put("KUBECONFIG", kubeconfig);
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "broken file in KUBECONFIG fails");
	ok(strncmp(e.message, tmp("bad/config"), strlen(tmp("bad/config"))) == 0,
			"broken file: message starts with its path (%s)", e.message);
}

static void test_merge(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_rest_config *c = NULL;
	struct kinf_error e = { 0 };
	char kubeconfig[3 * PATH_MAX + 8];
	char *ca;
	int r;

	snprintf(kubeconfig, sizeof(kubeconfig), "%s:", fixture("merge/a/config"));
	strcat(kubeconfig, fixture("merge/b/config"));
	strcat(kubeconfig, ":");
	strcat(kubeconfig, fixture("merge/c/config"));
	env_reset();
	env_put("KUBECONFIG", kubeconfig);
	ca = slurp(fixture("certs/ca.crt"));
	ok(ca != NULL, "fixture ca.crt readable");

	/* current-context: a leaves it empty, b sets ctx-b, c's ctx-c loses */
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "merged load");
	is_str(c ? c->context_name : NULL, "ctx-b", "current-context: first non-empty wins");
	is_str(c ? c->cluster_name : NULL, "only-b", "ctx-b's cluster");
	is_str(c ? c->server : NULL, "https://only-b.example", "only-b's server");
	is_str(c ? c->proxy_url : NULL, "socks5://proxy.example:1080", "socks5 proxy-url");
	/* shared-user: a's entry wins whole; b's username/password are dropped */
	is_str(c ? c->token : NULL, "token-from-a", "shared-user from the first file");
	ok(c && !c->username && !c->password, "no fields merged from b's shared-user");
	is_str(c ? c->source : NULL, fixture("merge/b/config"), "source: file of the context");
	is_str(c ? c->namespace : NULL, "default", "no namespace in context: default");
	ok(c && !c->namespace_from_flag, "namespace not from a flag");
	/* b's CA path "ca/../../../certs/ca.crt" is relative to merge/b */
	ok(c && c->ca_pem && ca && c->ca_pem_len == strlen(ca) &&
			memcmp(c->ca_pem, ca, c->ca_pem_len) == 0,
			"relative certificate-authority read from b's directory");
	kinf_rest_config_free(c);

	/* shared-ctx and cluster shared: a's entries win over b's */
	o.context = "shared-ctx";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "shared-ctx loads");
	is_str(c ? c->server : NULL, "https://a.example:6443", "a's cluster, trailing '/' gone");
	ok(c && !c->tls_server_name, "b's tls-server-name not merged into a's cluster");
	is_str(c ? c->namespace : NULL, "from-a", "a's context namespace");
	is_str(c ? c->source : NULL, fixture("merge/a/config"), "source: a");
	ok(c && c->ca_pem && ca && c->ca_pem_len == strlen(ca),
			"a's relative certificate-authority");
	kinf_rest_config_free(c);

	/* client certificate paths with "./" are relative to a's directory */
	o.context = "shared-ctx";
	o.user = "cert-user";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "--user cert-user loads");
	ok(c && c->client_cert_pem && strstr(c->client_cert_pem, "BEGIN CERTIFICATE"),
			"client certificate read");
	ok(c && c->client_key_pem && strstr(c->client_key_pem, "PRIVATE KEY"),
			"client key read");
	ok(c && !c->token, "--user replaces the context's user");
	is_str(c ? c->user_name : NULL, "cert-user", "user name");
	kinf_rest_config_free(c);
	o.user = NULL;

	/* exec.command with a '/' resolves against b's dir; args kept */
	o.context = "exec-ctx";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "exec-ctx loads");
	is_str(c && c->exec ? c->exec->command : NULL, fixture("bin/kinf-test-plugin"),
			"relative exec command resolved");
	is_str(c && c->exec ? c->exec->interactive_mode : NULL, "IfAvailable",
			"v1beta1 interactiveMode defaults to IfAvailable");
	ok(c && c->exec && c->exec->args && c->exec->args[0] && c->exec->args[1] &&
			!c->exec->args[2] && strcmp(c->exec->args[0], "--flag") == 0 &&
			strcmp(c->exec->args[1], "value") == 0, "exec args");
	kinf_rest_config_free(c);

	/* a bare exec command is left for a PATH lookup */
	o.context = "ctx-b";
	o.user = "path-exec-user";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "path-exec-user loads");
	is_str(c && c->exec ? c->exec->command : NULL, "kinf-test-plugin",
			"bare exec command unchanged");
	kinf_rest_config_free(c);
	o.user = NULL;

	/* tokenFile is relative to b's directory and kept as a path */
	o.context = "token-ctx";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "token-ctx loads");
	is_str(c ? c->token_file : NULL, fixture("merge/b/token"), "relative tokenFile");
	ok(c && !c->token, "no static token");
	is_str(c ? c->server : NULL, "https://a.example:6443", "cluster shared comes from a");
	kinf_rest_config_free(c);

	/* a context naming a user nobody defines */
	o.context = "dangling-ctx";
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "dangling user fails");
	is_str(e.message, "invalid configuration: user \"no-such-user\" was not found for "
			"context \"dangling-ctx\"", "dangling user: message");

	/* reversed order: b first, so b's shared entries win */
	snprintf(kubeconfig, sizeof(kubeconfig), "%s:", fixture("merge/b/config"));
	strcat(kubeconfig, fixture("merge/a/config"));
	env_reset();
	env_put("KUBECONFIG", kubeconfig);
	o.context = "shared-ctx";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "b first: shared-ctx loads");
	is_str(c ? c->namespace : NULL, "from-b", "b first: b's shared-ctx");
	ok(c && c->exec, "b first: b's exec user");
	kinf_rest_config_free(c);
	o.context = "ctx-b";
	o.user = "shared-user";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "b first: shared-user loads");
	is_str(c ? c->username : NULL, "admin", "b first: b's shared-user");
	is_str(c ? c->password : NULL, "from-b", "b first: password");
	ok(c && !c->token, "b first: no token from a's shared-user");
	kinf_rest_config_free(c);
	free(ca);
}

static void test_context_names(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_error e = { 0 };
	char kubeconfig[2 * PATH_MAX + 8];
	char **names = NULL;
	struct kinf_buf b = { 0 };
	int r;

	snprintf(kubeconfig, sizeof(kubeconfig), "%s:", fixture("merge/a/config"));
	strcat(kubeconfig, fixture("merge/b/config"));
	env_reset();
	env_put("KUBECONFIG", kubeconfig);
	r = kinf_kubeconfig_context_names(&o, &names, &e);
	is_int(r, 0, "context names");
	for (char **n = names; n && *n; n++) {
		must(kinf_buf_printf(&b, "%s%s", n == names ? "" : " ", *n));
		free(*n);
	}
	free(names);
	is_str(b.data, "ctx-b dangling-ctx exec-ctx shared-ctx token-ctx",
			"context names merged, unique and sorted");
	kinf_buf_release(&b);

	env_reset();
	names = NULL;
	r = kinf_kubeconfig_context_names(&o, &names, &e);
	is_int(r, 0, "context names of nothing");
	ok(names && !names[0], "empty list");
	free(names);
}

static const char *const two_contexts =
	"current-context: one\n"
	"clusters:\n"
	"- name: c1\n"
	"  cluster:\n"
	"    server: https://c1.example\n"
	"    tls-server-name: c1.internal\n"
	"    certificate-authority-data: Q0EtREFUQQ==\n"
	"- name: c2\n"
	"  cluster: {server: 'https://c2.example:8443/prefix/', insecure-skip-tls-verify: true}\n"
	"users:\n"
	"- name: u1\n"
	"  user:\n"
	"    client-certificate-data: Q0VSVA==\n"
	"    client-key-data: S0VZ\n"
	"- name: u2\n"
	"  user: {username: bob, password: s3cret}\n"
	"contexts:\n"
	"- name: one\n"
	"  context: {cluster: c1, user: u1, namespace: ns1}\n"
	"- name: two\n"
	"  context: {cluster: c2, user: u2}\n"
	"- name: no-cluster\n"
	"  context: {user: u2}\n";

static void test_selection(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_rest_config *c = NULL;
	struct kinf_error e = { 0 };
	int r;

	env_reset();
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "current context loads");
	is_str(c ? c->context_name : NULL, "one", "current-context used");
	is_str(c ? c->namespace : NULL, "ns1", "context namespace");
	ok(c && c->ca_pem_len == 7 && memcmp(c->ca_pem, "CA-DATA", 7) == 0,
			"certificate-authority-data decoded");
	ok(c && c->client_cert_pem_len == 4 && memcmp(c->client_cert_pem, "CERT", 4) == 0,
			"client-certificate-data decoded");
	ok(c && c->client_key_pem_len == 3 && memcmp(c->client_key_pem, "KEY", 3) == 0,
			"client-key-data decoded");
	is_str(c ? c->tls_server_name : NULL, "c1.internal", "tls-server-name");
	ok(c && !c->insecure_skip_tls_verify, "verify TLS by default");
	kinf_rest_config_free(c);

	o.context = "two";
	o.namespace = "flagged";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--context two loads");
	is_str(c ? c->server : NULL, "https://c2.example:8443/prefix", "server with a path prefix");
	ok(c && c->insecure_skip_tls_verify, "insecure-skip-tls-verify in flow mapping");
	is_str(c ? c->username : NULL, "bob", "basic auth user");
	is_str(c ? c->password : NULL, "s3cret", "basic auth password");
	is_str(c ? c->namespace : NULL, "flagged", "--namespace wins");
	ok(c && c->namespace_from_flag, "namespace_from_flag");
	kinf_rest_config_free(c);
	o.namespace = NULL;

	/* --cluster and --user override the context's */
	o.context = "two";
	o.cluster = "c1";
	o.user = "u1";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--cluster/--user load");
	is_str(c ? c->server : NULL, "https://c1.example", "--cluster c1");
	is_str(c ? c->cluster_name : NULL, "c1", "cluster_name");
	ok(c && c->client_cert_pem && !c->username, "--user u1");
	is_str(c ? c->context_name : NULL, "two", "context name kept");
	is_str(c ? c->namespace : NULL, "default", "context two has no namespace");
	kinf_rest_config_free(c);
	o.cluster = o.user = NULL;

	o.context = "nope";
	load_fails("missing --context", two_contexts, o, "context \"nope\" does not exist");
	o.context = NULL;
	o.cluster = "nope";
	load_fails("missing --cluster", two_contexts, o, "cluster \"nope\" does not exist");
	o.cluster = NULL;
	o.user = "nope";
	load_fails("missing --user", two_contexts, o, "auth info \"nope\" does not exist");
	o.user = NULL;
	load_fails("current-context names a missing context",
			"current-context: gone\nclusters: [{name: c, cluster: {server: https://x}}]\n",
			o, "invalid configuration: context was not found for specified context: gone");
	load_fails("context names a missing cluster",
			"current-context: x\ncontexts: [{name: x, context: {cluster: gone}}]\n", o,
			"invalid configuration: cluster \"gone\" was not found for context \"x\"");
	o.context = "no-cluster";
	load_fails("context without a cluster", two_contexts, o,
			"invalid configuration: cluster was not specified for context \"no-cluster\"");
	o.context = NULL;
	load_fails("no current context, no --server",
			"clusters: [{name: c, cluster: {server: https://x}}]\n", o,
			"no context chosen: current-context is not set; use --context or --server");
	load_fails("cluster without server",
			"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
			"clusters: [{name: c, cluster: {tls-server-name: x}}]\n", o,
			"invalid configuration: no server found for cluster \"c\"");

	/* --server alone is enough, with no context at all */
	o.server = "https://flag.example:6443/";
	o.token = "flag-token";
	r = load_yaml("clusters: []\n", &o, &c, &e);
	is_int(r, 0, "--server without a context");
	is_str(c ? c->server : NULL, "https://flag.example:6443", "--server used");
	is_str(c ? c->token : NULL, "flag-token", "--token used");
	ok(c && !c->context_name && !c->cluster_name && !c->user_name, "no names");
	is_str(c ? c->namespace : NULL, "default", "namespace default");
	kinf_rest_config_free(c);
	o.server = o.token = NULL;

	/* a server without a scheme gets one as rest.DefaultServerURL gives it */
	r = load_yaml("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
			"clusters: [{name: c, cluster: {server: 'localhost:8080'}}]\n", &o, &c, &e);
	is_int(r, 0, "scheme-less server loads");
	is_str(c ? c->server : NULL, "http://localhost:8080", "no TLS settings: http");
	kinf_rest_config_free(c);
	r = load_yaml("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
			"clusters: [{name: c, cluster: {server: 'k:6443', "
			"insecure-skip-tls-verify: yes}}]\n", &o, &c, &e);
	is_int(r, 0, "scheme-less server with TLS settings loads");
	is_str(c ? c->server : NULL, "https://k:6443", "TLS settings: https");
	kinf_rest_config_free(c);
}

static void test_overrides(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_rest_config *c = NULL;
	struct kinf_error e = { 0 };
	const char *ca_path = fixture("certs/ca.crt");
	char *ca = slurp(ca_path);
	char yaml[4096];
	int r;

	env_reset();
	/* --server clears the kubeconfig's tls-server-name */
	o.server = "https://other.example";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--server loads");
	is_str(c ? c->server : NULL, "https://other.example", "--server replaces server");
	ok(c && !c->tls_server_name, "--server clears tls-server-name");
	ok(c && c->ca_pem_len == 7, "--server keeps the CA");
	kinf_rest_config_free(c);

	/* ... unless --tls-server-name comes with it */
	o.tls_server_name = "flag.internal";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--server --tls-server-name loads");
	is_str(c ? c->tls_server_name : NULL, "flag.internal", "--tls-server-name kept");
	kinf_rest_config_free(c);
	o.server = NULL;
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--tls-server-name alone loads");
	is_str(c ? c->tls_server_name : NULL, "flag.internal", "--tls-server-name alone");
	kinf_rest_config_free(c);
	o.tls_server_name = NULL;

	/* --token replaces the user's client certificate */
	o.token = "tok";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--token loads");
	is_str(c ? c->token : NULL, "tok", "--token");
	ok(c && !c->client_cert_pem && !c->client_key_pem, "--token drops the client cert");
	kinf_rest_config_free(c);
	o.context = "two";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--token over basic auth loads (no 'more than one method')");
	ok(c && !c->username && !c->password, "--token drops basic auth");
	kinf_rest_config_free(c);
	o.context = NULL;
	/* --server may hold no control character either */
	o.server = "https://a\r\nX-Injected: 1";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, -KINF_ECONFIG, "--server with CR LF: refused");
	is_str(e.message, "--server holds a carriage return (byte 10), which a URL cannot "
			"carry", "--server with CR LF: message");
	o.server = NULL;
	/* URLs in messages lose their userinfo */
	{
		char buf[128];
		is_str(kinf_kubeconfig_url_redact("http://u:p@h:1/x@y", buf, sizeof(buf)),
				"http://xxxxx@h:1/x@y", "redact: user:password");
		is_str(kinf_kubeconfig_url_redact("https://u:p@w@h", buf, sizeof(buf)),
				"https://xxxxx@h", "redact: the last @ of the authority");
		is_str(kinf_kubeconfig_url_redact("u:p@h:3128", buf, sizeof(buf)),
				"xxxxx@h:3128", "redact: no scheme");
		is_str(kinf_kubeconfig_url_redact("u:p@h://x", buf, sizeof(buf)),
				"xxxxx@h://x", "redact: not a scheme before ://");
		is_str(kinf_kubeconfig_url_redact("https://h:6443", buf, sizeof(buf)),
				"https://h:6443", "redact: nothing to redact");
	}
	/* empty impersonation fields are unset, as in Go */
	o.token = NULL;
	r = load_yaml("current-context: x\n"
			"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
			"clusters: [{name: c, cluster: {server: 'https://c'}}]\n"
			"users: [{name: u, user: {token: t, as: \"\", as-groups: [], "
			"as-user-extra: {}, as-uid: ~}}]\n", &o, &c, &e);
	is_int(r, 0, "empty impersonation fields load");
	ok(c && !c->impersonate_user && !c->impersonate_groups && !c->n_impersonate_extra,
			"empty impersonation fields: none");
	kinf_rest_config_free(c);
	/* impersonation: flags over the user's fields; extra keys escaped */
	{
		const char *groups[] = { "fg", "" };
		o.as_groups = groups;
		o.n_as_groups = 2;
		r = load_yaml("current-context: x\n"
				"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
				"clusters: [{name: c, cluster: {server: 'https://c'}}]\n"
				"users: [{name: u, user: {token: t, as: bob, as-uid: '7', "
				"as-groups: [g], as-user-extra: {\"a/b%\\xfc\": [v1, v2], "
				"e: ~}}}]\n", &o, &c, &e);
		is_int(r, 0, "impersonation loads");
		is_str(c ? c->impersonate_user : NULL, "bob", "impersonation: user");
		is_str(c ? c->impersonate_uid : NULL, "7", "impersonation: uid");
		ok(c && c->impersonate_groups && strcmp(c->impersonate_groups[0], "fg") == 0 &&
				strcmp(c->impersonate_groups[1], "") == 0 &&
				!c->impersonate_groups[2], "impersonation: --as-group replaces");
		is_int(c ? (long)c->n_impersonate_extra : -1, 2, "impersonation: two extra");
		is_str(c && c->n_impersonate_extra ? c->impersonate_extra[1].name : NULL,
				"Impersonate-Extra-a%2Fb%25%C3%BC", "impersonation: key escaped");
		is_str(c && c->n_impersonate_extra ? c->impersonate_extra[1].value : NULL,
				"v2", "impersonation: value");
		kinf_rest_config_free(c);
		o.as_groups = NULL;
		o.n_as_groups = 0;
	}
	/* --token is checked like any token bound for a header */
	o.token = "abc\r\nX-Injected: 1";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, -KINF_ECONFIG, "--token with CR LF: refused");
	is_str(e.message, "--token holds a carriage return (byte 4), which an HTTP header "
			"cannot carry", "--token with CR LF: message");
	ok(c == NULL, "--token with CR LF: no config");
	o.token = NULL;

	/* --insecure-skip-tls-verify drops the CA data (else: both set, an error) */
	o.insecure_skip_tls_verify = 1;
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--insecure-skip-tls-verify loads");
	ok(c && c->insecure_skip_tls_verify, "insecure set");
	ok(c && !c->ca_pem, "CA data dropped");
	kinf_rest_config_free(c);

	/* --insecure-skip-tls-verify=false is no override, as in kubectl */
	o.insecure_skip_tls_verify = 0;
	o.context = "two";
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--insecure-skip-tls-verify=false loads");
	ok(c && c->insecure_skip_tls_verify, "kubeconfig's insecure stays");
	kinf_rest_config_free(c);

	/* --certificate-authority replaces insecure and CA data */
	o.insecure_skip_tls_verify = -1;
	o.certificate_authority = ca_path;
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--certificate-authority over insecure loads");
	ok(c && !c->insecure_skip_tls_verify, "--certificate-authority clears insecure");
	ok(c && ca && c->ca_pem && c->ca_pem_len == strlen(ca) &&
			memcmp(c->ca_pem, ca, c->ca_pem_len) == 0, "CA read from the flag's file");
	kinf_rest_config_free(c);
	o.context = NULL;
	r = load_yaml(two_contexts, &o, &c, &e);
	is_int(r, 0, "--certificate-authority over CA data loads");
	ok(c && ca && c->ca_pem_len == strlen(ca), "CA data replaced by the flag's file");
	kinf_rest_config_free(c);

	o.insecure_skip_tls_verify = 1;
	load_fails("--certificate-authority with --insecure-skip-tls-verify", two_contexts, o,
			"invalid configuration: specifying a root certificates file with the "
			"insecure flag is not allowed");
	o.insecure_skip_tls_verify = -1;
	o.certificate_authority = tmp("no-such-ca.crt");
	snprintf(yaml, sizeof(yaml), "invalid configuration: unable to read "
			"certificate-authority %s for c1 due to No such file or directory",
			tmp("no-such-ca.crt"));
	load_fails("unreadable --certificate-authority", two_contexts, o, yaml);
	o.certificate_authority = NULL;
	free(ca);
}

static void test_in_cluster(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_rest_config *c = NULL;
	struct kinf_error e = { 0 };
	char sa[PATH_MAX];
	int r;

	write_tmp("sa/token", "sa-token\n");
	write_tmp("sa/ca.crt", "SA-CA");
	write_tmp("sa/namespace", " from-file\n");
	snprintf(sa, sizeof(sa), "%s", tmp("sa"));
	o.serviceaccount_dir = sa;

	env_reset();
	env_put("KUBERNETES_SERVICE_HOST", "10.0.0.1");
	env_put("KUBERNETES_SERVICE_PORT", "443");
	env_put("HOME", tmp("empty-home"));
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "in-cluster loads");
	ok(c && c->in_cluster, "in_cluster set");
	is_str(c ? c->server : NULL, "https://10.0.0.1:443", "in-cluster server");
	is_str(c ? c->token_file : NULL, tmp("sa/token"), "token file, re-read later");
	ok(c && !c->token, "no static token");
	ok(c && c->ca_pem_len == 5 && memcmp(c->ca_pem, "SA-CA", 5) == 0, "ca.crt");
	is_str(c ? c->namespace : NULL, "from-file", "namespace file, trimmed");
	ok(c && !c->context_name && !c->source, "no context, no file");
	kinf_rest_config_free(c);

	env_put("POD_NAMESPACE", "from-env");
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "in-cluster with POD_NAMESPACE");
	is_str(c ? c->namespace : NULL, "from-env", "POD_NAMESPACE first");
	kinf_rest_config_free(c);

	o.namespace = "flag-ns";
	o.token = "flag-token";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "in-cluster with --namespace --token");
	is_str(c ? c->namespace : NULL, "flag-ns", "--namespace first");
	is_str(c ? c->token : NULL, "flag-token", "--token replaces the token file");
	ok(c && !c->token_file, "no token file with --token");
	kinf_rest_config_free(c);
	o.namespace = o.token = NULL;

	/* impersonation flags apply in-cluster too (client-go drops them) */
	{
		const char *groups[] = { "g1" };
		o.as = "alice";
		o.as_groups = groups;
		o.n_as_groups = 1;
		r = load_opts(&o, &c, &e);
		is_int(r, 0, "in-cluster with --as --as-group");
		is_str(c ? c->impersonate_user : NULL, "alice", "in-cluster --as");
		ok(c && c->impersonate_groups && strcmp(c->impersonate_groups[0], "g1") == 0,
				"in-cluster --as-group");
		kinf_rest_config_free(c);
		c = NULL;
		o.as = NULL;
		r = load_opts(&o, &c, &e);
		is_int(r, -KINF_ECONFIG, "in-cluster --as-group without --as");
		is_str(e.message, "invalid configuration: requesting uid or groups (--as-uid, "
				"--as-group) without impersonating a user (--as)",
				"in-cluster --as-group without --as: message");
		ok(c == NULL, "in-cluster --as-group without --as: no config");
		o.as_groups = NULL;
		o.n_as_groups = 0;
	}

	/* IPv6 hosts are bracketed; no namespace file: default */
	unlink(tmp("sa/namespace"));
	env_reset();
	env_put("KUBERNETES_SERVICE_HOST", "fd00::1");
	env_put("KUBERNETES_SERVICE_PORT", "6443");
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "in-cluster IPv6");
	is_str(c ? c->server : NULL, "https://[fd00::1]:6443", "IPv6 host bracketed");
	is_str(c ? c->namespace : NULL, "default", "no namespace file: default");
	kinf_rest_config_free(c);

	/* a kubeconfig with a current context wins over in-cluster */
	o.kubeconfig = write_tmp("config", simple);
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "kubeconfig and in-cluster env");
	ok(c && !c->in_cluster, "kubeconfig used");
	kinf_rest_config_free(c);
	/* one without a context falls back to in-cluster, as client-go does */
	o.kubeconfig = write_tmp("config", "clusters: [{name: c, cluster: {server: https://x}}]\n");
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "contextless kubeconfig and in-cluster env");
	ok(c && c->in_cluster, "in-cluster used");
	kinf_rest_config_free(c);
	/* --server means the kubeconfig is usable: no in-cluster */
	o.server = "https://flag.example";
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "--server and in-cluster env");
	ok(c && !c->in_cluster, "--server: not in-cluster");
	kinf_rest_config_free(c);
	o.server = NULL;
	o.kubeconfig = NULL;

	/* only one of host and port: no in-cluster */
	env_reset();
	env_put("KUBERNETES_SERVICE_HOST", "10.0.0.1");
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "host without port: no in-cluster");

	/* no token file: no in-cluster */
	env_put("KUBERNETES_SERVICE_PORT", "443");
	unlink(tmp("sa/token"));
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "no token file: no in-cluster");
	is_str(e.message, "no configuration: set --kubeconfig, KUBECONFIG or ~/.kube/config",
			"no token file: no configuration");

	/* a missing ca.crt is only logged */
	write_tmp("sa/token", "t");
	unlink(tmp("sa/ca.crt"));
	r = load_opts(&o, &c, &e);
	is_int(r, 0, "in-cluster without ca.crt");
	ok(c && !c->ca_pem, "no CA: system store");
	kinf_rest_config_free(c);
}

struct fail_case {
	const char *what;
	const char *yaml;
	const char *message;
};

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

static const struct fail_case validation_cases[] = {
	{ "cert data and file", USER_CFG(
		"    client-certificate-data: Q0VSVA==\n"
		"    client-certificate: /nonexistent/client.crt\n"
		"    client-key-data: S0VZ\n"),
		"invalid configuration: [client-cert-data and client-cert are both specified for u. "
		"client-cert-data will override., unable to read client-cert /nonexistent/client.crt "
		"for u due to No such file or directory]" },
	{ "key data and file", USER_CFG(
		"    client-certificate-data: Q0VSVA==\n"
		"    client-key-data: S0VZ\n"
		"    client-key: /dev/null\n"),
		"invalid configuration: client-key-data and client-key are both specified for u; "
		"client-key-data will override" },
	{ "cert without key", USER_CFG(
		"    client-certificate-data: Q0VSVA==\n"),
		"invalid configuration: client-key-data or client-key must be specified for u to use "
		"the clientCert authentication method." },
	{ "key without cert", USER_CFG(
		"    client-key-data: S0VZ\n"),
		"invalid configuration: client-certificate-data or client-certificate must be "
		"specified for u to use the clientCert authentication method." },
	{ "unreadable key", USER_CFG(
		"    client-certificate-data: Q0VSVA==\n"
		"    client-key: /nonexistent/client.key\n"),
		"invalid configuration: unable to read client-key /nonexistent/client.key for u due "
		"to No such file or directory" },
	{ "unreadable tokenFile", USER_CFG(
		"    tokenFile: /nonexistent/token\n"),
		"invalid configuration: unable to read tokenFile /nonexistent/token for u due to No "
		"such file or directory" },
	{ "token and basic auth", USER_CFG(
		"    token: t\n"
		"    username: bob\n"
		"    password: pw\n"),
		"invalid configuration: more than one authentication method found for u; found "
		"[token basicAuth], only one is allowed" },
	{ "exec without command", USER_CFG(
		"    exec:\n"
		"      apiVersion: client.authentication.k8s.io/v1\n"
		"      interactiveMode: Never\n"),
		"invalid configuration: command must be specified for u to use exec authentication "
		"plugin" },
	{ "exec without apiVersion", USER_CFG(
		"    exec:\n"
		"      command: plugin\n"
		"      interactiveMode: Never\n"),
		"invalid configuration: apiVersion must be specified for u to use exec "
		"authentication plugin" },
	{ "v1 exec without interactiveMode", USER_CFG(
		"    exec:\n"
		"      apiVersion: client.authentication.k8s.io/v1\n"
		"      command: plugin\n"),
		"invalid configuration: interactiveMode must be specified for u to use exec "
		"authentication plugin" },
	{ "exec with a bad interactiveMode", USER_CFG(
		"    exec:\n"
		"      apiVersion: client.authentication.k8s.io/v1\n"
		"      command: plugin\n"
		"      interactiveMode: Sometimes\n"),
		"invalid configuration: invalid interactiveMode for u: \"Sometimes\"" },
	{ "exec v1alpha1", USER_CFG(
		"    exec:\n"
		"      apiVersion: client.authentication.k8s.io/v1alpha1\n"
		"      command: plugin\n"
		"      interactiveMode: Never\n"),
		"invalid configuration: exec plugin: invalid apiVersion "
		"\"client.authentication.k8s.io/v1alpha1\"" },
	{ "exec env without a name", USER_CFG(
		"    exec:\n"
		"      apiVersion: client.authentication.k8s.io/v1\n"
		"      command: plugin\n"
		"      interactiveMode: Never\n"
		"      env: [{value: x}]\n"),
		"invalid configuration: env variable name must be specified for u to use exec "
		"authentication plugin" },
	{ "auth-provider", USER_CFG(
		"    auth-provider:\n"
		"      name: gcp\n"
		"      config: {cmd-path: gcloud}\n"),
		"invalid configuration: auth-provider \"gcp\" of user \"u\" is not supported; use an "
		"exec credential plugin (client.authentication.k8s.io)" },
	{ "auth-provider and exec", USER_CFG(
		"    auth-provider: {name: oidc}\n"
		"    exec:\n"
		"      apiVersion: client.authentication.k8s.io/v1beta1\n"
		"      command: plugin\n"),
		"invalid configuration: authProvider cannot be provided in combination with an exec "
		"plugin for u" },
	{ "CA data and file", CLUSTER_CFG(
		"    certificate-authority-data: Q0E=\n"
		"    certificate-authority: /dev/null\n"),
		"invalid configuration: certificate-authority-data and certificate-authority are "
		"both specified for c. certificate-authority-data will override." },
	{ "unreadable CA", CLUSTER_CFG(
		"    certificate-authority: /nonexistent/ca.crt\n"),
		"invalid configuration: unable to read certificate-authority /nonexistent/ca.crt for "
		"c due to No such file or directory" },
	{ "CA and insecure", CLUSTER_CFG(
		"    certificate-authority-data: Q0E=\n"
		"    insecure-skip-tls-verify: true\n"),
		"invalid configuration: specifying a root certificates file with the insecure flag "
		"is not allowed" },
	/* CR LF in a URL would reach the request line or a proxy's headers */
	{ "proxy-url with CR LF", CLUSTER_CFG(
		"    proxy-url: \"http://u:p\\r\\nX-Injected: 1@proxy.example:3128\"\n"),
		"invalid configuration: the proxy-url of cluster \"c\" holds a carriage return "
		"(byte 11), which a URL cannot carry" },
	{ "server with a tab", "current-context: x\n"
		"contexts: [{name: x, context: {cluster: c}}]\n"
		"clusters: [{name: c, cluster: {server: \"https://c/\\tX\"}}]\n",
		"invalid configuration: the server URL of cluster \"c\" holds the control "
		"character 0x09 (byte 11), which a URL cannot carry" },
	/* validation.go: uid, groups or extra need a user to impersonate */
	{ "impersonation: groups only", USER_CFG(
		"    token: t\n"
		"    as: \"\"\n"
		"    as-groups: [\"devs\\r\\nX-Injected: 1\"]\n"),
		"invalid configuration: requesting uid, groups or user-extra for u without "
		"impersonating a user" },
	{ "impersonation: extra only", USER_CFG(
		"    token: t\n"
		"    as-user-extra: {k: ~}\n"),
		"invalid configuration: requesting uid, groups or user-extra for u without "
		"impersonating a user" },
	{ "proxy-url ftp", CLUSTER_CFG(
		"    proxy-url: ftp://proxy.example\n"),
		"invalid configuration: invalid 'proxy-url' \"ftp://proxy.example\" for cluster "
		"\"c\": unsupported scheme \"ftp\", must be http, https, or socks5" },
	{ "proxy-url without scheme", CLUSTER_CFG(
		"    proxy-url: proxy.example:3128\n"),
		"invalid configuration: invalid 'proxy-url' \"proxy.example:3128\" for cluster "
		"\"c\": unsupported scheme \"\", must be http, https, or socks5" },
	{ "proxy-url socks4", CLUSTER_CFG(
		"    proxy-url: socks4://proxy.example\n"),
		"invalid configuration: invalid 'proxy-url' \"socks4://proxy.example\" for cluster "
		"\"c\": unsupported scheme \"socks4\", must be http, https, or socks5" },
};

static void test_validation(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	env_reset();
	for (size_t i = 0; i < sizeof(validation_cases) / sizeof(*validation_cases); i++) {
		const struct fail_case *t = &validation_cases[i];
		load_fails(t->what, t->yaml, o, t->message);
	}
}

static void test_proxy_and_fields(void) {
	static const char *const ok_proxies[] = {
		"http://proxy.example:3128", "https://proxy.example", "socks5://127.0.0.1:1080",
	};
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_rest_config *c = NULL;
	struct kinf_error e = { 0 };
	char yaml[1024];
	int r;

	env_reset();
	for (size_t i = 0; i < sizeof(ok_proxies) / sizeof(*ok_proxies); i++) {
		snprintf(yaml, sizeof(yaml), CLUSTER_CFG("    proxy-url: %s\n"), ok_proxies[i]);
		r = load_yaml(yaml, &o, &c, &e);
		is_int(r, 0, "proxy-url %s accepted", ok_proxies[i]);
		is_str(c ? c->proxy_url : NULL, ok_proxies[i], "proxy-url %s kept", ok_proxies[i]);
		kinf_rest_config_free(c);
	}

	/* quoted "true", disable-compression, exec details and the exec extension */
	r = load_yaml(
		"current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u, namespace: ''}}]\n"
		"clusters:\n"
		"- name: c\n"
		"  cluster:\n"
		"    server: https://c\n"
		"    insecure-skip-tls-verify: \"true\"\n"
		"    disable-compression: True\n"
		"    extensions:\n"
		"    - name: other\n"
		"      extension: {a: 1}\n"
		"    - name: client.authentication.k8s.io/exec\n"
		"      extension:\n"
		"        audience: kinf\n"
		"        n: 3\n"
		"        quoted: \"3\"\n"
		"        list: [true, ~, 1.5]\n"
		"users:\n"
		"- name: u\n"
		"  user:\n"
		"    exec:\n"
		"      apiVersion: client.authentication.k8s.io/v1\n"
		"      command: /usr/bin/plugin\n"
		"      env:\n"
		"      - name: A\n"
		"        value: one\n"
		"      - name: B\n"
		"      interactiveMode: Always\n"
		"      provideClusterInfo: true\n"
		"      installHint: \"\\e[1minstall\\e[0m it\\n\"\n", &o, &c, &e);
	is_int(r, 0, "exec config loads");
	ok(c && c->insecure_skip_tls_verify, "quoted \"true\" is true");
	ok(c && c->disable_compression, "disable-compression True");
	is_str(c ? c->namespace : NULL, "default", "empty namespace: default");
	if (c && c->exec) {
		const struct kinf_exec_config *x = c->exec;
		is_str(x->api_version, "client.authentication.k8s.io/v1", "exec apiVersion");
		is_str(x->command, "/usr/bin/plugin", "absolute command unchanged");
		ok(x->args && !x->args[0], "no args: empty argv tail");
		is_int(x->n_env, 2, "two env entries");
		is_str(x->n_env > 0 ? x->env[0].name : NULL, "A", "env[0].name");
		is_str(x->n_env > 0 ? x->env[0].value : NULL, "one", "env[0].value");
		is_str(x->n_env > 1 ? x->env[1].value : NULL, "", "env[1] without value: empty");
		is_str(x->interactive_mode, "Always", "interactiveMode");
		ok(x->provide_cluster_info, "provideClusterInfo");
		is_str(x->install_hint, "U+001B[1minstallU+001B[0m it\n",
				"installHint, escape sequences defused");
		is_str(x->cluster_config_json,
				"{\"audience\":\"kinf\",\"n\":3,\"quoted\":\"3\",\"list\":[true,null,1.5]}",
				"exec extension as JSON");
	} else {
		ok(0, "exec config present");
	}
	kinf_rest_config_free(c);

	/* exec is ignored when the user also has a token (exec.go stands back) */
	r = load_yaml(USER_CFG(
		"    token: t\n"
		"    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: x}\n"),
		&o, &c, &e);
	is_int(r, 0, "token and exec loads");
	ok(c && c->token && !c->exec, "token wins over exec");
	kinf_rest_config_free(c);

	/* empty files and comments are empty configs */
	o.kubeconfig = write_tmp("config", "# nothing\n");
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "comment-only file is empty");
	is_str(e.message, "no configuration: set --kubeconfig, KUBECONFIG or ~/.kube/config",
			"comment-only file: no configuration");
	o.kubeconfig = write_tmp("config", "");
	r = load_opts(&o, &c, &e);
	is_int(r, -KINF_ECONFIG, "empty file is empty");
}

struct yaml_case {
	const char *yaml;
	const char *where_what;	/* after "<path>: " */
};

static const struct yaml_case yaml_cases[] = {
	{ "clusters:\n- name: c\n  cluster:\n    server: https://x: y\n",
		"line 4, column 22: mapping values are not allowed in this context" },
	{ "clusters: [\n", "line 2, column 1: did not find expected node content" },
	{ "current-context: x\n\tusers: []\n",
		"line 2, column 1: found a tab character that violates indentation" },
	{ "a: 'unterminated\n", "line 2, column 1: found unexpected end of stream" },
	{ "- just\n- a list\n", "line 1, column 1: a kubeconfig must be a mapping" },
	{ "apiVersion: v1\nclusters: foo\n", "line 2, column 11: \"clusters\" must be a sequence" },
	{ "users:\n  name: u\n", "line 2, column 3: \"users\" must be a sequence" },
	{ "users:\n- name: u\n  user: {as: a, as-groups: devs}\n",
		"line 3, column 28: \"as-groups\" must be a sequence" },
	{ "users:\n- name: u\n  user: {as: [a]}\n", "line 3, column 14: \"as\" must be a string" },
	{ "users:\n- name: u\n  user: {as-user-extra: {k: v}}\n",
		"line 3, column 29: \"as-user-extra\" must be a sequence" },
	{ "contexts:\n- just-a-string\n", "line 2, column 3: \"contexts\" entries must be mappings" },
	{ "clusters:\n- name: c\n  cluster: [server]\n",
		"line 3, column 12: \"cluster\" must be a mapping" },
	{ "clusters:\n- name: c\n  cluster:\n    server: [a, b]\n",
		"line 4, column 13: \"server\" must be a string" },
	{ "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: maybe\n",
		"line 4, column 31: \"insecure-skip-tls-verify\" must be a boolean" },
	{ "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: \"yes\"\n",
		"line 4, column 31: \"insecure-skip-tls-verify\" must be a boolean" },
	{ "clusters:\n- name: c\n  cluster:\n    certificate-authority-data: not*base64\n",
		"line 4, column 33: \"certificate-authority-data\" is not valid base64" },
	{ "users:\n- name: u\n  user:\n    client-key-data: QUJD=\n",
		"line 4, column 22: \"client-key-data\" is not valid base64" },
	{ "users:\n- name: u\n  user:\n    exec:\n      args: {a: b}\n",
		"line 5, column 13: \"args\" must be a sequence" },
	{ "users:\n- name: u\n  user:\n    exec:\n      args: [[nested]]\n",
		"line 5, column 14: \"args\" must be a sequence of strings" },
	{ "users:\n- name: u\n  user:\n    exec:\n      env: [x]\n",
		"line 5, column 13: \"env[]\" must be a mapping" },
	{ "clusters:\n- name: c\n  cluster: {server: a}\n- name: c\n  cluster: {server: b}\n",
		"line 4, column 3: duplicate name \"c\" in \"clusters\"" },
	{ "current-context: [x]\n", "line 1, column 18: \"current-context\" must be a string" },
	/* a token that would end its header and start another (security.bats has more) */
	{ USER_CFG("    token: \"abc\\r\\nX-Injected: 1\"\n"),
		"line 7, column 12: the token of user \"u\" holds a carriage return (byte 4), "
		"which an HTTP header cannot carry" },
	{ USER_CFG("    token: |\n      abc\n"),
		"line 7, column 12: the token of user \"u\" holds a line feed (byte 4), "
		"which an HTTP header cannot carry" },
	/* a NUL first was taken for an empty token, and the user for no user */
	{ USER_CFG("    token: \"\\0abc\"\n"),
		"line 7, column 12: the token of user \"u\" holds a NUL byte (byte 1), "
		"which an HTTP header cannot carry" },
};

static void test_yaml_errors(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	char message[1024];

	env_reset();
	for (size_t i = 0; i < sizeof(yaml_cases) / sizeof(*yaml_cases); i++) {
		const struct yaml_case *t = &yaml_cases[i];
		char what[64];
		snprintf(message, sizeof(message), "%s: %s", tmp("config"), t->where_what);
		snprintf(what, sizeof(what), "yaml case %zu", i + 1);
		load_fails(what, t->yaml, o, message);
	}
}

/* Expect yaml (built in b) to fail with "<path>: " where_what; times it. */
static void bound_fails(const char *what, struct kinf_buf *b, const char *where_what) {
	struct kinf_kubeconfig_opts o = new_opts();
	char message[1024];
	struct timespec t0, t1;

	snprintf(message, sizeof(message), "%s: %s", tmp("config"), where_what);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	load_fails(what, b->data, o, message);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok(t1.tv_sec - t0.tv_sec < 2, "%s: quickly", what);
	kinf_buf_reset(b);
}

/* A context whose cluster carries extension (YAML text) for an exec plugin. */
static void exec_config(struct kinf_buf *b, const char *extension) {
	must(kinf_buf_printf(b, "current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, "
		"command: /bin/true, interactiveMode: Never, provideClusterInfo: true}}}]\n"
		"clusters:\n"
		"- name: c\n"
		"  cluster:\n"
		"    server: https://c\n"
		"    extensions:\n"
		"    - name: client.authentication.k8s.io/exec\n"
		"      extension: %s\n", extension));
}

/*
 * Hostile YAML: aliases that expand without end (a billion laughs),
 * nesting without end, used or not: each stopped at its limit, quickly,
 * naming it (badinput.bats measures memory and time of the same).
 */
static void test_bounds(void) {
	struct kinf_kubeconfig_opts o = new_opts();
	struct kinf_rest_config *c = NULL;
	struct kinf_error e;
	struct kinf_buf b = { 0 };
	char msg[256];
	int r;

	env_reset();
	/* a billion laughs in the exec extension: 10^9 scalars from 90 aliases */
	exec_config(&b, "&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]");
	for (int i = 1; i < 10; i++) {
		must(kinf_buf_printf(&b, "x%d: &a%d [", i, i));
		for (int j = 0; j < 10; j++) {
			must(kinf_buf_printf(&b, "%s*a%d", j ? ", " : "", i - 1));
		}
		must(kinf_buf_append_str(&b, "]\n"));
	}
	bound_fails("billion laughs", &b, "line 15, column 10: more than 200000 nodes, an alias "
			"counting as the nodes it names (the kubeconfig limit)");

	/* the same in a part of the file nothing reads */
	must(kinf_buf_append_str(&b, "apiVersion: v1\nunused:\n  a0: &a0 [lol, lol, lol, lol, lol, "
			"lol, lol, lol, lol, lol]\n"));
	for (int i = 1; i < 10; i++) {
		must(kinf_buf_printf(&b, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
				"*a%d, *a%d]\n", i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
				i - 1, i - 1, i - 1));
	}
	bound_fails("billion laughs, unused", &b, "line 8, column 12: more than 200000 nodes, an "
			"alias counting as the nodes it names (the kubeconfig limit)");

	/* few nodes, big scalars: 1 MiB named 65 times */
	must(kinf_buf_append_str(&b, "apiVersion: v1\nbig: &big \""));
	for (int i = 0; i < 1 << 20; i++) {
		must(kinf_buf_append_char(&b, 'x'));
	}
	must(kinf_buf_append_str(&b, "\"\nmany: ["));
	for (int i = 0; i < 65; i++) {
		must(kinf_buf_append_str(&b, i ? ", *big" : "*big"));
	}
	must(kinf_buf_append_str(&b, "]\n"));
	bound_fails("aliases of a big scalar", &b, "line 3, column 380: more than 64 MiB of "
			"scalars, an alias counting as the scalars it names (the kubeconfig limit)");

	/* more aliases than allowed, each of them small */
	must(kinf_buf_append_str(&b, "apiVersion: v1\nx: &x 1\ny: ["));
	for (int i = 0; i < KINF_KUBECONFIG_MAX_ALIASES + 1; i++) {
		must(kinf_buf_append_str(&b, i ? ",*x" : "*x"));
	}
	must(kinf_buf_append_str(&b, "]\n"));
	snprintf(msg, sizeof(msg), "line 3, column %d: more than %d aliases (the kubeconfig "
			"limit)", 5 + 3 * KINF_KUBECONFIG_MAX_ALIASES, KINF_KUBECONFIG_MAX_ALIASES);
	bound_fails("too many aliases", &b, msg);

	/* an alias inside the node it names */
	must(kinf_buf_append_str(&b, "apiVersion: v1\nloop: &l [a, [b, *l]]\n"));
	bound_fails("alias loop", &b, "line 2, column 18: alias *l is inside the node it names "
			"(a loop)");

	/* nesting: used (the exec extension), unused, 100,000 deep, via an alias */
	kinf_buf_reset(&b);
	{
		struct kinf_buf deep = { 0 };
		for (int i = 0; i < 100; i++) {
			must(kinf_buf_append_char(&deep, '['));
		}
		for (int i = 0; i < 100; i++) {
			must(kinf_buf_append_char(&deep, ']'));
		}
		exec_config(&b, deep.data);
		bound_fails("deep exec extension", &b, "line 10, column 112: nested more than 100 "
				"levels deep (the kubeconfig limit)");
		kinf_buf_release(&deep);
	}
	must(kinf_buf_append_str(&b, "apiVersion: v1\nunused: "));
	for (int i = 0; i < 100000; i++) {
		must(kinf_buf_append_char(&b, '['));
	}
	for (int i = 0; i < 100000; i++) {
		must(kinf_buf_append_char(&b, ']'));
	}
	must(kinf_buf_append_char(&b, '\n'));
	bound_fails("100,000 levels, unused", &b, "line 2, column 108: nested more than 100 "
			"levels deep (the kubeconfig limit)");
	must(kinf_buf_append_str(&b, "apiVersion: v1\nd: &d "));
	for (int i = 0; i < 60; i++) {
		must(kinf_buf_append_char(&b, '['));
	}
	for (int i = 0; i < 60; i++) {
		must(kinf_buf_append_char(&b, ']'));
	}
	must(kinf_buf_append_str(&b, "\ne: "));
	for (int i = 0; i < 45; i++) {
		must(kinf_buf_append_char(&b, '['));
	}
	must(kinf_buf_append_str(&b, "*d"));
	for (int i = 0; i < 45; i++) {
		must(kinf_buf_append_char(&b, ']'));
	}
	must(kinf_buf_append_char(&b, '\n'));
	bound_fails("deep through an alias", &b, "line 3, column 49: nested more than 100 levels "
			"deep with aliases expanded (the kubeconfig limit)");

	/* within the limits: anchors shared by users, a 99-deep extension */
	must(kinf_buf_append_str(&b, "current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: &cl {server: 'https://c'}}, {name: d, cluster: *cl}]\n"
		"users: [{name: u, user: &u {token: shared}}, {name: v, user: *u}]\n"));
	r = load_yaml(b.data, &o, &c, &e);
	is_int(r, 0, "anchors and aliases within the limits load");
	is_str(c ? c->token : NULL, "shared", "an aliased user's token");
	kinf_rest_config_free(c);
	kinf_buf_reset(&b);
	{
		struct kinf_buf deep = { 0 };
		/* 6 levels of kubeconfig around it */
		for (int i = 0; i < KINF_KUBECONFIG_MAX_DEPTH - 6; i++) {
			must(kinf_buf_append_char(&deep, '['));
		}
		for (int i = 0; i < KINF_KUBECONFIG_MAX_DEPTH - 6; i++) {
			must(kinf_buf_append_char(&deep, ']'));
		}
		exec_config(&b, deep.data);
		kinf_buf_release(&deep);
	}
	r = load_yaml(b.data, &o, &c, &e);
	is_int(r, 0, "an extension at the depth limit loads");
	if (r < 0) {
		printf("# %s\n", e.message);
	}
	ok(c && c->exec && c->exec->cluster_config_json &&
			strlen(c->exec->cluster_config_json) == 2 * (KINF_KUBECONFIG_MAX_DEPTH - 6),
			"... and is passed on whole");
	kinf_rest_config_free(c);
	kinf_buf_release(&b);
}

/* The absolute, symlink-free name of dir (realpath is not POSIX base). */
static int absdir(const char *dir, char *out, size_t size) {
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

int main(void) {
	const char *dir = getenv("KINF_FIXTURES_DIR");
	char tmpl[] = "/tmp/kinf-test-kubeconfig-XXXXXX";

	if (absdir(dir ? dir : "../fixtures/kubeconfig", fixtures, sizeof(fixtures)) < 0) {
		printf("Bail out! fixtures not found (run in test/unit or set KINF_FIXTURES_DIR)\n");
		return 1;
	}
	if (!mkdtemp(tmpl) || absdir(tmpl, tmpdir, sizeof(tmpdir)) < 0) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}

	test_loading_order();
	test_merge();
	test_context_names();
	test_selection();
	test_overrides();
	test_in_cluster();
	test_validation();
	test_proxy_and_fields();
	test_yaml_errors();
	test_bounds();

	{
		char cmd[PATH_MAX + 16];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0) {
			printf("# could not remove %s\n", tmpdir);
		}
	}
	return tap_done();
}
