#ifndef KINF_KUBECONFIG_INT_H
#define KINF_KUBECONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "buf.h"
#include "err.h"
#include "kubeconfig.h"

/*
 * clientcmd's semantics (kubeconfig.h is the contract), inside: each file
 * is parsed into a struct kc of its own (relative paths already resolved
 * against the file's directory), then merged into the result: first file
 * to name a cluster, user or context wins with its whole entry. Then an
 * entry of each kind is selected, overridden by the flags, validated and
 * built into a struct kinf_rest_config; or, with nothing selected, the
 * in-cluster config. Where each part lives:
 *   paths.c      paths, files and the server URL's form
 *   yaml.c       reading YAML: the bounds checked on libyaml's events, and
 *                typed access to the document's nodes
 *   schema.c     the v1 schema (clientcmd/api/v1): a document into a
 *                struct kc, and what frees one
 *   load.c       the loading rules (loader.go): which files, each parsed,
 *                all merged
 *   incluster.c  rest.InClusterConfig
 *   config.c     selection, overrides and validation (client_config.go,
 *                validation.go): kinf_kubeconfig_load() and the rest of
 *                kubeconfig.h
 * Calls go down this list and never up (config.c calls the others).
 */

#define EXEC_EXTENSION "client.authentication.k8s.io/exec"
#define EXEC_API_V1 "client.authentication.k8s.io/v1"
#define EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define MAX_KUBECONFIG_SIZE (64u << 20)

struct kc_cluster {
	char *name;
	const char *file;	/* borrowed from struct kc.files */
	bool empty;		/* the entry sets no field at all */
	char *server;
	char *tls_server_name;
	bool insecure;
	char *ca_file;
	char *ca_data;
	size_t ca_data_len;
	char *proxy_url;
	bool disable_compression;
	char *exec_extension;	/* JSON */
};

/* A string as written (NULs included) and where, for messages; s NULL: unset. */
struct kc_value {
	char *s;
	size_t len;
	size_t line;	/* 1-based */
	size_t column;
};

/* One key of as-user-extra and its values. */
struct kc_extra {
	char *key;
	size_t key_len;
	struct kc_value *values;
	size_t n_values;
};

struct kc_user {
	char *name;
	const char *file;
	char *token;
	size_t token_len;	/* NULs included, for the header check */
	size_t token_line;	/* where it was written (1-based), for messages */
	size_t token_column;
	char *token_file;
	char *cert_file;
	char *cert_data;
	size_t cert_data_len;
	char *key_file;
	char *key_data;
	size_t key_data_len;
	char *username;
	char *password;
	struct kinf_exec_config *exec;
	bool has_auth_provider;
	char *auth_provider;	/* its name, or NULL */
	/* Impersonation: as, as-uid, as-groups, as-user-extra */
	struct kc_value imp_user;
	struct kc_value imp_uid;
	struct kc_value *imp_groups;
	size_t n_imp_groups;
	struct kc_extra *imp_extra;
	size_t n_imp_extra;
	/* --as, --as-uid, --as-group where given (borrowed; apply_overrides) */
	const char *flag_as;
	const char *flag_as_uid;
	const char *const *flag_as_groups;
	size_t n_flag_as_groups;
};

struct kc_context {
	char *name;
	const char *file;
	char *cluster;
	char *user;
	char *namespace;
};

struct ptrv {
	void **v;
	size_t n;
	size_t cap;
};

struct kc {
	struct ptrv clusters;
	struct ptrv users;
	struct ptrv contexts;
	char *current_context;
	struct kinf_strv files;	/* absolute paths of the files read */
};

struct parse {
	yaml_document_t *doc;
	const char *file;	/* absolute, for messages and relative paths */
	struct kinf_error *reterr;
};

enum kind { KIND_CLUSTER, KIND_USER, KIND_CONTEXT };

/* A copy of len bytes (NULs included), NUL-terminated; NULL when out of memory. */
static inline char *kc_memdup0(const void *p, size_t len) {
	char *s = malloc(len + 1);
	if (s) {
		memcpy(s, p, len);
		s[len] = '\0';
	}
	return s;
}

/* Zero and free a secret of len bytes; NULL is fine. */
static inline void kc_free_secret_len(char *s, size_t len) {
	if (s) {
		kinf_explicit_bzero(s, len);
		free(s);
	}
}

/* paths.c */
/* base + "/" + rel, cleaned. rel absolute: a cleaned copy of it. NULL: out of memory. */
char *kc_join_path(const char *base, const char *rel);
/* path against the working directory, cleaned. */
char *kc_absolute_path(const char *path);
/* The directory of an absolute file name. */
char *kc_dir_of(const char *abs_file);
/*
 * Read a whole file. errno-style result in *ret_errno when it cannot be
 * read (so callers can skip missing files); -KINF_ENOMEM otherwise.
 */
KINF_MUST_CHECK int kc_read_file(const char *path, char **ret, size_t *ret_len, int *ret_errno);
/* getenv, or opts->getenv (tests). */
const char *kc_env_get(const struct kinf_kubeconfig_opts *opts, const char *name);
bool kc_file_readable(const char *path, int *ret_errno);
/*
 * Read a file the config names into memory (CA, certificate, key). The
 * validation checked readability; a race still gets a clear message.
 */
KINF_MUST_CHECK int kc_slurp(const char *what, const char *path, char **ret, size_t *ret_len,
		struct kinf_error *reterr);
/* "host:8443" gets a scheme as rest.DefaultServerURL would give it. */
char *kc_normalize_server(const char *server, bool tls_hint);

/* yaml.c */
/* One document being read, for messages and relative paths. */
KINF_MUST_CHECK int kc_node_error(struct parse *p, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
yaml_node_t *kc_node_at(struct parse *p, int id);
bool kc_is_null(const yaml_node_t *n);
bool kc_key_is(const yaml_node_t *key, const char *name);
KINF_MUST_CHECK int kc_want_mapping(struct parse *p, const yaml_node_t *n, const char *what);
KINF_MUST_CHECK int kc_want_sequence(struct parse *p, const yaml_node_t *n, const char *what);
/* A string field; null leaves it unset. secret: zero what it replaces. */
KINF_MUST_CHECK int kc_get_string(struct parse *p, const yaml_node_t *n, const char *key,
		bool secret, char **out);
/*
 * YAML booleans as sigs.k8s.io/yaml reads them (YAML 1.1 words when
 * plain), plus the quoted strings "true" and "false".
 */
KINF_MUST_CHECK int kc_get_bool(struct parse *p, const yaml_node_t *n, const char *key, bool *out);
/* A path field, made absolute against the file's directory. */
KINF_MUST_CHECK int kc_get_path(struct parse *p, const yaml_node_t *n, const char *key, char **out);
/* A []byte field: base64. */
KINF_MUST_CHECK int kc_get_data(struct parse *p, const yaml_node_t *n, const char *key,
		bool secret, char **out, size_t *out_len);
/* A YAML node as JSON, resolving plain scalars as YAML 1.1 core types. */
json_t *kc_node_to_json(struct parse *p, const yaml_node_t *n, int depth);
#define FOR_PAIRS(p, map, kvar, vvar) \
	for (yaml_node_pair_t *pr_ = (map)->data.mapping.pairs.start; \
			pr_ < (map)->data.mapping.pairs.top && \
			((kvar) = kc_node_at((p), pr_->key), (vvar) = kc_node_at((p), pr_->value), 1); \
			pr_++)

#define FOR_ITEMS(p, seq, ivar) \
	for (yaml_node_item_t *it_ = (seq)->data.sequence.items.start; \
			it_ < (seq)->data.sequence.items.top && ((ivar) = kc_node_at((p), *it_), 1); \
			it_++)

/* Zero libyaml's copies of the file (tokens, keys) before freeing them. */
void kc_yaml_wipe(yaml_parser_t *parser, yaml_document_t *doc);
KINF_MUST_CHECK int kc_check_bounds(const char *file, const char *data, size_t len,
		struct kinf_error *reterr);

/* schema.c */
KINF_MUST_CHECK int kc_ptrv_push(struct ptrv *pv, void *p);
void kc_exec_config_free(struct kinf_exec_config *e);
void kc_release(struct kc *kc);
/* Entries are looked up by name; kubeconfigs hold a handful of them. */
void *kc_find_named(const struct ptrv *pv, const char *name);
void kc_entry_free(enum kind kind, void *e);
/* The document's root mapping into kc. */
KINF_MUST_CHECK int kc_parse_root(struct parse *p, struct kc *kc);

/* load.c */
/* The files of the loading rules, each parsed, merged into kc. */
KINF_MUST_CHECK int kc_load_files(const struct kinf_kubeconfig_opts *opts, struct kc *kc,
		struct kinf_error *reterr);

/* incluster.c */
/* KUBERNETES_SERVICE_HOST and _PORT set and a token file: *ret_dir, the account's. */
bool kc_in_cluster_possible(const struct kinf_kubeconfig_opts *opts, char **ret_dir);
/* rest.InClusterConfig plus inClusterClientConfig's overrides and Namespace(). */
KINF_MUST_CHECK int kc_in_cluster_config(const struct kinf_kubeconfig_opts *opts, const char *dir,
		struct kinf_rest_config *c, struct kinf_error *reterr);

#endif
