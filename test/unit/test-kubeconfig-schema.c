#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kubeconfig-test.h"

/*
 * The v1 schema (src/kubeconfig/schema.c): what each field of a cluster
 * and a user becomes (proxy-url, quoted booleans, disable-compression,
 * exec and its extension as JSON, token over exec), and files with no
 * entries.
 */

static void test_fields(void) {
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

int main(void) {
	if (kc_test_begin("kubeconfig-schema") < 0) {
		return 1;
	}
	test_fields();
	return kc_test_end();
}
