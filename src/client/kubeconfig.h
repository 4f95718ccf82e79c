#ifndef KINF_KUBECONFIG_H
#define KINF_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/*
 * kubeconfig loading, merging and selection as client-go's clientcmd does
 * it (loader.go, client_config.go, validation.go), plus in-cluster config.
 * The result is a flat struct kinf_rest_config the HTTP layer consumes.
 * Implemented in src/kubeconfig/ (its file map: kubeconfig_int.h).
 */

/*
 * Bounds on one kubeconfig file, so that a hostile one (a billion laughs
 * of YAML aliases, nesting without end) costs little time and memory:
 * collections nested this deep, aliases written, and nodes and bytes of
 * scalars the document holds with every alias expanded. The file itself
 * may be 64 MiB.
 */
#define KINF_KUBECONFIG_MAX_DEPTH 100
#define KINF_KUBECONFIG_MAX_ALIASES 1000
#define KINF_KUBECONFIG_MAX_NODES 200000
#define KINF_KUBECONFIG_MAX_EXPANDED_BYTES ((size_t)64 << 20)

/* Command-line overrides; NULL / -1 fields are unset. */
struct kinf_kubeconfig_opts {
	const char *kubeconfig;		/* --kubeconfig: only this file */
	const char *context;
	const char *cluster;
	const char *user;
	const char *namespace;
	const char *server;
	const char *token;
	const char *certificate_authority;
	const char *tls_server_name;
	int insecure_skip_tls_verify;	/* -1 unset, 0, 1 */
	/*
	 * Impersonation: --as, --as-uid, --as-group (repeated). Each one set
	 * (non-empty; for groups, n_as_groups > 0) replaces the user's as,
	 * as-uid or as-groups, as kubectl's flags do.
	 */
	const char *as;
	const char *as_uid;
	const char *const *as_groups;
	size_t n_as_groups;
	/*
	 * Environment lookups go through here so tests can fake them; NULL
	 * means getenv. Used for KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST/PORT,
	 * POD_NAMESPACE.
	 */
	const char *(*getenv)(const char *name);
	/* In-cluster service account directory; NULL means the real one. */
	const char *serviceaccount_dir;
};

struct kinf_exec_env {
	char *name;
	char *value;
};

/* A user's exec credential plugin (client.authentication.k8s.io). */
struct kinf_exec_config {
	char *api_version;	/* .../v1 or .../v1beta1 */
	char *command;		/* resolved against the kubeconfig's dir if it has a '/' */
	char **args;		/* NULL-terminated */
	struct kinf_exec_env *env;
	size_t n_env;
	char *interactive_mode;	/* Never, IfAvailable, Always */
	bool provide_cluster_info;
	char *install_hint;
	char *cluster_config_json;	/* extension client.authentication.k8s.io/exec, or NULL */
};

/* One Impersonate-Extra-KEY: VALUE header. */
struct kinf_impersonate_extra {
	char *name;	/* "Impersonate-Extra-" and the escaped key */
	char *value;
};

struct kinf_rest_config {
	char *server;		/* https://host:port[/prefix], no trailing slash */
	/*
	 * Connect to this unix socket instead of server's host and port
	 * (kinf serve's socket; server is then http://localhost[/prefix]).
	 * NULL: none. Never set by the loader: the caller sets it after.
	 */
	char *unix_socket;
	char *tls_server_name;	/* or NULL */
	bool insecure_skip_tls_verify;
	char *ca_pem;		/* CA bundle bytes, or NULL for the system store */
	size_t ca_pem_len;
	char *proxy_url;	/* or NULL */
	bool disable_compression;

	char *namespace;	/* never NULL: flag, context, in-cluster, "default" */
	bool namespace_from_flag;
	char *context_name;	/* or NULL (in-cluster, --server only) */
	char *cluster_name;
	char *user_name;
	char *source;		/* file the context came from, for messages */

	/* Credentials; at most one method (validation.go). Secrets are zeroed on free. */
	char *token;
	char *token_file;	/* re-read when it changes */
	char *client_cert_pem;
	size_t client_cert_pem_len;
	char *client_key_pem;
	size_t client_key_pem_len;
	char *username;
	char *password;
	struct kinf_exec_config *exec;	/* or NULL */
	bool in_cluster;

	/*
	 * Impersonation, sent as Impersonate-* headers with every request:
	 * none when impersonate_user is NULL. Every value passed the header
	 * check. Extra entries are (name, value) pairs in file order, the name
	 * the whole header name with the key percent-encoded as client-go
	 * does (Impersonate-Extra-example.com%2Fscopes).
	 */
	char *impersonate_user;
	char *impersonate_uid;		/* or NULL */
	char **impersonate_groups;	/* NULL-terminated, or NULL */
	struct kinf_impersonate_extra *impersonate_extra;
	size_t n_impersonate_extra;
};

/*
 * Load and merge the kubeconfig files opts selects (or in-cluster config
 * when there is none), pick context, cluster and user, apply overrides,
 * read referenced files (CA, certs, keys; relative to the file naming
 * them) and validate. Errors name the file and, for YAML, line and column:
 * "/x/config: line 12, column 3: mapping values are not allowed here".
 * Returns 0 and a new config, or -KINF_ECONFIG / -KINF_EIO / -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_kubeconfig_load(const struct kinf_kubeconfig_opts *opts,
		struct kinf_rest_config **ret, struct kinf_error *reterr);

/*
 * url for a message: any userinfo (user:password@, with or without a
 * scheme) replaced by "xxxxx@". Written to buf (size bytes, cut short if
 * need be) and returned.
 */
const char *kinf_kubeconfig_url_redact(const char *url, char *buf, size_t size);

/* Free (zeroing secrets). NULL is fine. */
void kinf_rest_config_free(struct kinf_rest_config *config);

/*
 * The names of every context in the merged kubeconfig, for completion:
 * a NULL-terminated array the caller frees with each element.
 */
KINF_MUST_CHECK int kinf_kubeconfig_context_names(const struct kinf_kubeconfig_opts *opts,
		char ***ret, struct kinf_error *reterr);

#endif
