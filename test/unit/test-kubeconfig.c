#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kubeconfig-test.h"

/*
 * clientcmd's loading rules, merging, selection, overrides and
 * validation (src/kubeconfig/load.c and config.c), without a network.
 * Fixtures live in test/fixtures/kubeconfig (the test runs in
 * test/unit); everything else is written to a temporary directory. The
 * other parts have test-kubeconfig-yaml, -schema and -incluster.
 */

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

struct fail_case {
	const char *what;
	const char *yaml;
	const char *message;
};

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

int main(void) {
	if (kc_test_begin("kubeconfig") < 0) {
		return 1;
	}
	test_loading_order();
	test_merge();
	test_context_names();
	test_selection();
	test_overrides();
	test_validation();
	return kc_test_end();
}
