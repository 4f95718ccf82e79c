#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kubeconfig-test.h"

/*
 * rest.InClusterConfig (src/kubeconfig/incluster.c): the service
 * account's token, CA and namespace files, KUBERNETES_SERVICE_HOST and
 * _PORT, the flags over them, and when a kubeconfig wins.
 */

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

int main(void) {
	if (kc_test_begin("kubeconfig-incluster") < 0) {
		return 1;
	}
	test_in_cluster();
	return kc_test_end();
}
