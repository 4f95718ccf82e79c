#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "err.h"
#include "kubeconfig.h"
#include "kubeconfig_int.h"
#include "log.h"
#include "trim.h"

bool kc_in_cluster_possible(const struct kinf_kubeconfig_opts *opts, char **ret_dir) {
	const char *host = kc_env_get(opts, "KUBERNETES_SERVICE_HOST");
	const char *port = kc_env_get(opts, "KUBERNETES_SERVICE_PORT");
	const char *dir = opts->serviceaccount_dir ? opts->serviceaccount_dir : SERVICEACCOUNT_DIR;
	struct stat st;
	char *token;
	bool ok;

	*ret_dir = NULL;
	if (!host || !*host || !port || !*port) {
		return false;
	}
	token = kc_join_path(dir, "token");
	ok = token && stat(token, &st) == 0 && !S_ISDIR(st.st_mode);
	free(token);
	if (ok) {
		*ret_dir = strdup(dir);
		ok = *ret_dir != NULL;
	}
	return ok;
}

/* rest.InClusterConfig plus inClusterClientConfig's overrides and Namespace(). */
int kc_in_cluster_config(const struct kinf_kubeconfig_opts *opts, const char *dir,
		struct kinf_rest_config *c, struct kinf_error *reterr) {
	const char *host = kc_env_get(opts, "KUBERNETES_SERVICE_HOST");
	const char *port = kc_env_get(opts, "KUBERNETES_SERVICE_PORT");
	const char *ns = kc_env_get(opts, "POD_NAMESPACE");
	struct kinf_buf b = { 0 };
	char *path = NULL, *data = NULL;
	size_t len = 0;
	int err, r;

	c->in_cluster = true;
	if (opts->server && *opts->server) {
		c->server = kc_normalize_server(opts->server, true);
	} else if (strchr(host, ':')) {
		/* net.JoinHostPort brackets IPv6 literals */
		r = kinf_buf_printf(&b, "https://[%s]:%s", host, port);
		c->server = r < 0 ? NULL : kinf_buf_take(&b);
	} else {
		r = kinf_buf_printf(&b, "https://%s:%s", host, port);
		c->server = r < 0 ? NULL : kinf_buf_take(&b);
	}
	kinf_buf_release(&b);
	if (!c->server) {
		return -KINF_ENOMEM;
	}

	if (opts->token && *opts->token) {
		if (!(c->token = strdup(opts->token))) {
			return -KINF_ENOMEM;
		}
	} else {
		c->token_file = kc_join_path(dir, "token");
		if (!c->token_file) {
			return -KINF_ENOMEM;
		}
		if (!kc_file_readable(c->token_file, &err)) {
			return kinf_error_set(reterr, KINF_ECONFIG,
					"in-cluster configuration: unable to read %s: %s",
					c->token_file, strerror(err));
		}
	}

	if (opts->certificate_authority && *opts->certificate_authority) {
		r = kc_slurp("certificate-authority", opts->certificate_authority,
				&c->ca_pem, &c->ca_pem_len, reterr);
		if (r < 0) {
			return r;
		}
	} else {
		path = kc_join_path(dir, "ca.crt");
		if (!path) {
			return -KINF_ENOMEM;
		}
		r = kc_read_file(path, &c->ca_pem, &c->ca_pem_len, &err);
		if (r == -KINF_EIO) {
			/* only logged, as rest.InClusterConfig does */
			kinf_log(1, "expected to load root CA config from %s, but got err: %s",
					path, strerror(err));
			r = 0;
		}
		free(path);
		if (r < 0) {
			return r;
		}
	}

	if (opts->namespace && *opts->namespace) {
		c->namespace = strdup(opts->namespace);
		c->namespace_from_flag = true;
	} else if (ns && *ns) {
		c->namespace = strdup(ns);
	} else {
		path = kc_join_path(dir, "namespace");
		if (!path) {
			return -KINF_ENOMEM;
		}
		if (kc_read_file(path, &data, &len, &err) == 0) {
			c->namespace = kinf_trim_space_dup(data, len, NULL);
			if (c->namespace && !*c->namespace) {
				free(c->namespace);
				c->namespace = NULL;
			}
			free(data);
		}
		free(path);
		if (!c->namespace) {
			c->namespace = strdup("default");
		}
	}
	return c->namespace ? 0 : -KINF_ENOMEM;
}
