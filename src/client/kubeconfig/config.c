#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "header.h"
#include "kubeconfig.h"
#include "kubeconfig_int.h"

static int dup_str(const char *s, char **ret) {
	if (!s) {
		*ret = NULL;
		return 0;
	}
	*ret = strdup(s);
	return *ret ? 0 : -KINF_ENOMEM;
}

/* ---- selection, overrides and validation ---- */

/* client-go's errConfigurationInvalid: "invalid configuration: [a, b]" */
struct errlist {
	struct kinf_strv msgs;
	int oom;
};

static void errlist_add(struct errlist *el, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void errlist_add(struct errlist *el, const char *fmt, ...) {
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!kinf_strv_contains(&el->msgs, msg) && kinf_strv_push_str(&el->msgs, msg) < 0) {
		el->oom = 1;
	}
}

static int errlist_finish(struct errlist *el, struct kinf_error *reterr) {
	struct kinf_buf b = { 0 };
	int r;

	if (el->oom) {
		kinf_strv_release(&el->msgs);
		return -KINF_ENOMEM;
	}
	if (el->msgs.n == 0) {
		return 0;
	}
	if (el->msgs.n == 1) {
		r = kinf_error_set(reterr, KINF_ECONFIG, "invalid configuration: %s", el->msgs.v[0]);
	} else {
		int brc = 0;
		for (size_t i = 0; brc == 0 && i < el->msgs.n; i++) {
			brc = kinf_buf_printf(&b, "%s%s", i ? ", " : "", el->msgs.v[i]);
		}
		r = brc < 0 ? kinf_error_set(reterr, KINF_ENOMEM, "out of memory") :
			kinf_error_set(reterr, KINF_ECONFIG, "invalid configuration: [%s]", b.data);
	}
	kinf_buf_release(&b);
	kinf_strv_release(&el->msgs);
	return r;
}

/* The "://" after a URL's scheme (RFC 3986: a letter, then letters, digits, +-.), or NULL. */
static const char *scheme_end(const char *url) {
	const char *sep = strstr(url, "://");
	if (!sep || sep == url || !isalpha((unsigned char)url[0])) {
		return NULL;
	}
	for (const char *p = url; p < sep; p++) {
		if (!isalnum((unsigned char)*p) && !strchr("+-.", *p)) {
			return NULL;
		}
	}
	return sep;
}

const char *kinf_kubeconfig_url_redact(const char *url, char *buf, size_t size) {
	const char *sep = scheme_end(url);
	const char *host = sep ? sep + 3 : url;
	const char *end = host + strcspn(host, "/?#");
	const char *at = NULL;

	for (const char *p = host; p < end; p++) {
		if (*p == '@') {
			at = p;	/* the last one: a password may hold '@' unescaped */
		}
	}
	if (!at) {
		snprintf(buf, size, "%s", url);
	} else {
		snprintf(buf, size, "%.*sxxxxx%s", (int)(host - url), url, at);
	}
	return buf;
}

/* helpers.go parseProxyURL: only http, https and socks5 proxies. */
static void check_proxy_url(struct errlist *el, const char *raw, const char *cluster) {
	const char *sep = scheme_end(raw);
	size_t n = sep ? (size_t)(sep - raw) : 0;
	char url[512];

	/* quoted without its user:password */
	kinf_kubeconfig_url_redact(raw, url, sizeof(url));
	if (!sep || n == 0) {
		errlist_add(el, "invalid 'proxy-url' \"%s\" for cluster \"%s\": "
				"unsupported scheme \"\", must be http, https, or socks5", url, cluster);
		return;
	}
	if ((n == 4 && strncmp(raw, "http", 4) == 0) || (n == 5 && strncmp(raw, "https", 5) == 0) ||
			(n == 6 && strncmp(raw, "socks5", 6) == 0)) {
		/* the host: after any user:password@, before the port or path */
		const char *host = sep + 3, *end = host + strcspn(host, "/?#");
		for (const char *p = host; p < end; p++) {
			if (*p == '@') {
				host = p + 1;
			}
		}
		if (host == end || *host == ':') {
			errlist_add(el, "invalid 'proxy-url' \"%s\" for cluster \"%s\": no host",
					url, cluster);
		}
		return;
	}
	errlist_add(el, "invalid 'proxy-url' \"%s\" for cluster \"%s\": "
			"unsupported scheme \"%.*s\", must be http, https, or socks5",
			url, cluster, (int)n, raw);
}

/*
 * The first control character in a URL (net/url refuses any: "invalid
 * control character in URL"), named for a message, or NULL. A CR or LF
 * there would otherwise reach the request line or a proxy's headers.
 */
static const char *url_ctl(const char *url, char *buf, size_t size, size_t *ret_at) {
	for (size_t i = 0; url[i]; i++) {
		unsigned char c = (unsigned char)url[i];
		if (c < 0x20 || c == 0x7f) {
			*ret_at = i + 1;
			if (c == '\r') {
				return "a carriage return";
			}
			if (c == '\n') {
				return "a line feed";
			}
			snprintf(buf, size, "the control character 0x%02x", c);
			return buf;
		}
	}
	return NULL;
}

/* validation.go validateClusterInfo, for the cluster after overrides. */
static void validate_cluster(struct errlist *el, const char *name, const struct kc_cluster *c) {
	int err;

	if (!c->server || !*c->server) {
		if (!name || !*name) {
			errlist_add(el, "default cluster has no server defined");
		} else {
			errlist_add(el, "no server found for cluster \"%s\"", name);
		}
	}
	char ctl_buf[40];
	const char *ctl;
	size_t at;
	if (c->server && (ctl = url_ctl(c->server, ctl_buf, sizeof(ctl_buf), &at))) {
		errlist_add(el, "the server URL of cluster \"%s\" holds %s (byte %zu), which a URL "
				"cannot carry", name ? name : "", ctl, at);
	}
	if (c->proxy_url && (ctl = url_ctl(c->proxy_url, ctl_buf, sizeof(ctl_buf), &at))) {
		/* (not quoted: it may hold a password) */
		errlist_add(el, "the proxy-url of cluster \"%s\" holds %s (byte %zu), which a URL "
				"cannot carry", name ? name : "", ctl, at);
	} else if (c->proxy_url && *c->proxy_url) {
		check_proxy_url(el, c->proxy_url, name ? name : "");
	}
	if (c->ca_file && c->ca_data) {
		errlist_add(el, "certificate-authority-data and certificate-authority are both "
				"specified for %s. certificate-authority-data will override.", name);
	}
	if (c->ca_file && !kc_file_readable(c->ca_file, &err)) {
		errlist_add(el, "unable to read certificate-authority %s for %s due to %s",
				c->ca_file, name, strerror(err));
	}
	/* transport.TLSConfigFor refuses this combination */
	if (c->insecure && (c->ca_file || c->ca_data)) {
		errlist_add(el, "specifying a root certificates file with the insecure flag "
				"is not allowed");
	}
}

/* validation.go validateAuthInfo, plus what the exec authenticator checks. */
static void validate_user(struct errlist *el, const char *name, const struct kc_user *u) {
	const struct kinf_exec_config *e = u->exec;
	int err;

	if (u->cert_file || u->cert_data) {
		if (u->cert_file && u->cert_data) {
			errlist_add(el, "client-cert-data and client-cert are both specified for %s. "
					"client-cert-data will override.", name);
		}
		if (u->key_file && u->key_data) {
			errlist_add(el, "client-key-data and client-key are both specified for %s; "
					"client-key-data will override", name);
		}
		if (!u->key_file && !u->key_data) {
			errlist_add(el, "client-key-data or client-key must be specified for %s to "
					"use the clientCert authentication method.", name);
		}
		if (u->cert_file && !kc_file_readable(u->cert_file, &err)) {
			errlist_add(el, "unable to read client-cert %s for %s due to %s",
					u->cert_file, name, strerror(err));
		}
		if (u->key_file && !kc_file_readable(u->key_file, &err)) {
			errlist_add(el, "unable to read client-key %s for %s due to %s",
					u->key_file, name, strerror(err));
		}
	} else if (u->key_file || u->key_data) {
		/* client-go accepts this silently and then fails in tls.X509KeyPair */
		errlist_add(el, "client-certificate-data or client-certificate must be specified "
				"for %s to use the clientCert authentication method.", name);
	}
	if (u->token_file && !u->token && !kc_file_readable(u->token_file, &err)) {
		errlist_add(el, "unable to read tokenFile %s for %s due to %s",
				u->token_file, name, strerror(err));
	}
	if (e) {
		if (u->has_auth_provider) {
			errlist_add(el, "authProvider cannot be provided in combination with an exec "
					"plugin for %s", name);
		}
		if (!e->command || !*e->command) {
			errlist_add(el, "command must be specified for %s to use exec authentication "
					"plugin", name);
		}
		if (!e->api_version || !*e->api_version) {
			errlist_add(el, "apiVersion must be specified for %s to use exec authentication "
					"plugin", name);
		} else if (strcmp(e->api_version, EXEC_API_V1) != 0 &&
				strcmp(e->api_version, EXEC_API_V1BETA1) != 0) {
			errlist_add(el, "exec plugin: invalid apiVersion \"%s\"", e->api_version);
		}
		for (size_t i = 0; i < e->n_env; i++) {
			if (!e->env[i].name || !*e->env[i].name) {
				errlist_add(el, "env variable name must be specified for %s to use exec "
						"authentication plugin", name);
			}
		}
		if (!e->interactive_mode || !*e->interactive_mode) {
			errlist_add(el, "interactiveMode must be specified for %s to use exec "
					"authentication plugin", name);
		} else if (strcmp(e->interactive_mode, "Never") != 0 &&
				strcmp(e->interactive_mode, "IfAvailable") != 0 &&
				strcmp(e->interactive_mode, "Always") != 0) {
			errlist_add(el, "invalid interactiveMode for %s: \"%s\"", name,
					e->interactive_mode);
		}
	} else if (u->has_auth_provider) {
		errlist_add(el, "auth-provider \"%s\" of user \"%s\" is not supported; "
				"use an exec credential plugin (client.authentication.k8s.io)",
				u->auth_provider ? u->auth_provider : "", name);
	}
	/* validation.go: the rest of impersonation needs a user to impersonate */
	if (!u->flag_as && u->imp_user.len == 0 && (u->flag_as_uid || u->imp_uid.len > 0 ||
			u->n_flag_as_groups > 0 || u->n_imp_groups > 0 || u->n_imp_extra > 0)) {
		errlist_add(el, "requesting uid, groups or user-extra for %s without "
				"impersonating a user", name);
	}
	if (u->token && (u->username || u->password)) {
		errlist_add(el, "more than one authentication method found for %s; found "
				"[token basicAuth], only one is allowed", name);
	}
}

static int copy_exec(const struct kinf_exec_config *src, const char *extension,
		struct kinf_exec_config **ret) {
	struct kinf_exec_config *e = calloc(1, sizeof(*e));
	size_t n = 0;

	if (!e) {
		return -KINF_ENOMEM;
	}
	if (dup_str(src->api_version, &e->api_version) < 0 ||
			dup_str(src->command, &e->command) < 0 ||
			dup_str(src->interactive_mode, &e->interactive_mode) < 0 ||
			dup_str(src->install_hint, &e->install_hint) < 0 ||
			dup_str(extension, &e->cluster_config_json) < 0) {
		goto oom;
	}
	e->provide_cluster_info = src->provide_cluster_info;
	while (src->args && src->args[n]) {
		n++;
	}
	e->args = calloc(n + 1, sizeof(char *));
	if (!e->args) {
		goto oom;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(e->args[i] = strdup(src->args[i]))) {
			goto oom;
		}
	}
	if (src->n_env) {
		e->env = calloc(src->n_env, sizeof(*e->env));
		if (!e->env) {
			goto oom;
		}
		for (size_t i = 0; i < src->n_env; i++) {
			e->n_env++;
			if (dup_str(src->env[i].name, &e->env[i].name) < 0 ||
					dup_str(src->env[i].value, &e->env[i].value) < 0) {
				goto oom;
			}
		}
	}
	*ret = e;
	return 0;
oom:
	kc_exec_config_free(e);
	return -KINF_ENOMEM;
}

struct selection {
	const char *context_name;
	struct kc_context *context;
	const char *cluster_name;
	const char *user_name;
	struct kc_cluster cluster;	/* merged with overrides; fields borrowed */
	struct kc_user user;		/* likewise */
	const char *file;
};

/*
 * Pick context, cluster and user the way DirectClientConfig does:
 * explicitly named ones must exist; the rest may be empty.
 */
static int select_entries(const struct kinf_kubeconfig_opts *opts, const struct kc *kc,
		struct selection *s, struct kinf_error *reterr) {
	const struct kc_cluster *cl;
	const struct kc_user *u;

	s->context_name = opts->context && *opts->context ? opts->context : kc->current_context;
	s->context = kc_find_named(&kc->contexts, s->context_name);
	s->user_name = opts->user && *opts->user ? opts->user :
		(s->context ? s->context->user : NULL);
	s->cluster_name = opts->cluster && *opts->cluster ? opts->cluster :
		(s->context ? s->context->cluster : NULL);

	u = kc_find_named(&kc->users, s->user_name);
	if (!u && opts->user && *opts->user) {
		return kinf_error_set(reterr, KINF_ECONFIG, "auth info \"%s\" does not exist",
				opts->user);
	}
	if (!s->context && opts->context && *opts->context) {
		return kinf_error_set(reterr, KINF_ECONFIG, "context \"%s\" does not exist",
				opts->context);
	}
	cl = kc_find_named(&kc->clusters, s->cluster_name);
	if (!cl && opts->cluster && *opts->cluster) {
		return kinf_error_set(reterr, KINF_ECONFIG, "cluster \"%s\" does not exist",
				opts->cluster);
	}
	if (cl) {
		s->cluster = *cl;
	} else {
		s->cluster.empty = true;
	}
	if (u) {
		s->user = *u;
	}
	s->file = s->context ? s->context->file : (cl ? cl->file : (u ? u->file : NULL));
	return 0;
}

/* Overrides on the borrowed copies (getCluster / getAuthInfo). */
/* clientcmd merges the flags over the user field by field (mergo). */
static void apply_impersonation_flags(const struct kinf_kubeconfig_opts *opts,
		struct kc_user *u) {
	if (opts->as && *opts->as) {
		u->flag_as = opts->as;
	}
	if (opts->as_uid && *opts->as_uid) {
		u->flag_as_uid = opts->as_uid;
	}
	if (opts->n_as_groups > 0) {
		u->flag_as_groups = opts->as_groups;
		u->n_flag_as_groups = opts->n_as_groups;
	}
}

static void apply_overrides(const struct kinf_kubeconfig_opts *opts, struct selection *s,
		char **ca_override) {
	struct kc_cluster *c = &s->cluster;
	struct kc_user *u = &s->user;

	if (opts->server && *opts->server) {
		c->server = (char *)opts->server;
		c->empty = false;
		/* --server clears the kubeconfig's tls-server-name */
		c->tls_server_name = NULL;
	}
	if (opts->tls_server_name && *opts->tls_server_name) {
		c->tls_server_name = (char *)opts->tls_server_name;
		c->empty = false;
	}
	/* --insecure-skip-tls-verify and --certificate-authority replace both */
	if (opts->insecure_skip_tls_verify == 1 || *ca_override) {
		c->insecure = opts->insecure_skip_tls_verify == 1;
		c->ca_file = *ca_override;
		c->ca_data = NULL;
		c->ca_data_len = 0;
		c->empty = false;
	}
	if (opts->token && *opts->token) {
		/* --token replaces whatever the user entry authenticates with */
		struct kc_user keep = *u;
		memset(u, 0, sizeof(*u));
		u->name = keep.name;
		u->file = keep.file;
		/* kubectl keeps the impersonation with --token */
		u->imp_user = keep.imp_user;
		u->imp_uid = keep.imp_uid;
		u->imp_groups = keep.imp_groups;
		u->n_imp_groups = keep.n_imp_groups;
		u->imp_extra = keep.imp_extra;
		u->n_imp_extra = keep.n_imp_extra;
		u->token = (char *)opts->token;
		u->token_len = strlen(opts->token);
	}
	apply_impersonation_flags(opts, u);
}

/*
 * A header name's bytes as client-go's headerKeyEscape leaves them: an
 * RFC 7230 token character but '%'; anything else goes as %XX.
 */
static bool header_key_byte(unsigned char b) {
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
		(b && strchr("!#$&'*+-.^_`|~", b));
}

/* Check a kubeconfig impersonation value bound for a header (see header.h). */
static int check_value(const struct kc_user *u, const char *user_name,
		const struct kc_value *v, const char *key, struct kinf_error *reterr) {
	char what[512];
	snprintf(what, sizeof(what), "%s: line %zu, column %zu: '%s' of user \"%s\"",
			u->file ? u->file : "kubeconfig", v->line, v->column, key, user_name);
	return kinf_header_value_check(v->s, v->len, what, KINF_ECONFIG, reterr);
}

/*
 * The Impersonate-* headers (round_trippers.go), flags over the user's
 * fields; none unless a user is impersonated (client_config.go).
 */
static int build_impersonation(const struct selection *s, struct kinf_rest_config *c,
		struct kinf_error *reterr) {
	const struct kc_user *u = &s->user;
	const char *name = s->user_name ? s->user_name : "";
	size_t n_groups, n_extra = 0, k = 0;
	int r;

	if (!u->flag_as && u->imp_user.len == 0) {
		return 0;
	}
	if (!u->flag_as && (r = check_value(u, name, &u->imp_user, "as", reterr)) < 0) {
		return r;
	}
	if (!u->flag_as_uid && u->imp_uid.len > 0 &&
			(r = check_value(u, name, &u->imp_uid, "as-uid", reterr)) < 0) {
		return r;
	}
	if (!(c->impersonate_user = strdup(u->flag_as ? u->flag_as : u->imp_user.s))) {
		return -KINF_ENOMEM;
	}
	if (u->flag_as_uid || u->imp_uid.len > 0) {
		if (!(c->impersonate_uid = strdup(u->flag_as_uid ? u->flag_as_uid :
				u->imp_uid.s))) {
			return -KINF_ENOMEM;
		}
	}
	n_groups = u->n_flag_as_groups ? u->n_flag_as_groups : u->n_imp_groups;
	if (n_groups && !(c->impersonate_groups = calloc(n_groups + 1, sizeof(char *)))) {
		return -KINF_ENOMEM;
	}
	for (size_t i = 0; i < n_groups; i++) {
		if (!u->n_flag_as_groups && (r = check_value(u, name, &u->imp_groups[i],
				"as-groups", reterr)) < 0) {
			return r;
		}
		c->impersonate_groups[i] = strdup(u->n_flag_as_groups ? u->flag_as_groups[i] :
				u->imp_groups[i].s);
		if (!c->impersonate_groups[i]) {
			return -KINF_ENOMEM;
		}
	}
	for (size_t i = 0; i < u->n_imp_extra; i++) {
		n_extra += u->imp_extra[i].n_values;
	}
	if (n_extra && !(c->impersonate_extra = calloc(n_extra, sizeof(*c->impersonate_extra)))) {
		return -KINF_ENOMEM;
	}
	for (size_t i = 0; i < u->n_imp_extra; i++) {
		const struct kc_extra *e = &u->imp_extra[i];
		for (size_t j = 0; j < e->n_values; j++) {
			struct kinf_impersonate_extra *x = &c->impersonate_extra[k];
			struct kinf_buf b = {0};
			if ((r = check_value(u, name, &e->values[j], "as-user-extra", reterr)) < 0) {
				return r;
			}
			r = kinf_buf_append_str(&b, "Impersonate-Extra-");
			for (size_t n = 0; r == 0 && n < e->key_len; n++) {
				unsigned char ch = (unsigned char)e->key[n];
				r = header_key_byte(ch) ? kinf_buf_append_char(&b, (char)ch) :
					kinf_buf_printf(&b, "%%%02X", ch);
			}
			if (r < 0 || !(x->name = kinf_buf_take(&b)) ||
					!(x->value = strdup(e->values[j].s))) {
				kinf_buf_release(&b);
				c->n_impersonate_extra = k + 1;
				return -KINF_ENOMEM;
			}
			c->n_impersonate_extra = ++k;
		}
	}
	return 0;
}

static int build_rest_config(const struct kinf_kubeconfig_opts *opts, struct selection *s,
		struct kinf_rest_config *c, struct kinf_error *reterr) {
	const struct kc_cluster *cl = &s->cluster;
	const struct kc_user *u = &s->user;
	bool tls_hint;
	int r;

	tls_hint = cl->insecure || cl->ca_file || cl->ca_data || u->cert_file || u->cert_data;
	c->server = kc_normalize_server(cl->server, tls_hint);
	if (!c->server ||
			dup_str(cl->tls_server_name, &c->tls_server_name) < 0 ||
			dup_str(cl->proxy_url && *cl->proxy_url ? cl->proxy_url : NULL,
				&c->proxy_url) < 0 ||
			dup_str(s->context ? s->context_name : NULL, &c->context_name) < 0 ||
			dup_str(s->cluster_name && *s->cluster_name ? s->cluster_name : NULL,
				&c->cluster_name) < 0 ||
			dup_str(s->user_name && *s->user_name ? s->user_name : NULL,
				&c->user_name) < 0 ||
			dup_str(s->file, &c->source) < 0) {
		return -KINF_ENOMEM;
	}
	c->insecure_skip_tls_verify = cl->insecure;
	c->disable_compression = cl->disable_compression;

	if (opts->namespace && *opts->namespace) {
		c->namespace = strdup(opts->namespace);
		c->namespace_from_flag = true;
	} else if (s->context && s->context->namespace && *s->context->namespace) {
		c->namespace = strdup(s->context->namespace);
	} else {
		c->namespace = strdup("default");
	}
	if (!c->namespace) {
		return -KINF_ENOMEM;
	}

	/* certificate-authority-data wins over certificate-authority */
	if (cl->ca_data) {
		if (!(c->ca_pem = kc_memdup0(cl->ca_data, cl->ca_data_len))) {
			return -KINF_ENOMEM;
		}
		c->ca_pem_len = cl->ca_data_len;
	} else if (cl->ca_file) {
		r = kc_slurp("certificate-authority", cl->ca_file, &c->ca_pem, &c->ca_pem_len,
				reterr);
		if (r < 0) {
			return r;
		}
	}

	if (dup_str(u->token, &c->token) < 0 || dup_str(u->token_file, &c->token_file) < 0 ||
			dup_str(u->username, &c->username) < 0 ||
			dup_str(u->password, &c->password) < 0) {
		return -KINF_ENOMEM;
	}
	if (u->cert_data || u->cert_file) {
		if (u->cert_data) {
			if (!(c->client_cert_pem = kc_memdup0(u->cert_data, u->cert_data_len))) {
				return -KINF_ENOMEM;
			}
			c->client_cert_pem_len = u->cert_data_len;
		} else if ((r = kc_slurp("client-cert", u->cert_file, &c->client_cert_pem,
				&c->client_cert_pem_len, reterr)) < 0) {
			return r;
		}
		if (u->key_data) {
			if (!(c->client_key_pem = kc_memdup0(u->key_data, u->key_data_len))) {
				return -KINF_ENOMEM;
			}
			c->client_key_pem_len = u->key_data_len;
		} else if ((r = kc_slurp("client-key", u->key_file, &c->client_key_pem,
				&c->client_key_pem_len, reterr)) < 0) {
			return r;
		}
	}
	/*
	 * The exec authenticator stands back when a token, basic auth or a
	 * client certificate is configured (exec.go UpdateTransportConfig).
	 */
	if (u->exec && !c->token && !c->token_file && !c->username && !c->password &&
			!c->client_cert_pem) {
		r = copy_exec(u->exec, cl->exec_extension, &c->exec);
		if (r < 0) {
			return r;
		}
	}
	return build_impersonation(s, c, reterr);
}

/*
 * --as, --as-group, --as-uid with the in-cluster config. client-go's
 * inClusterClientConfig drops them; acting with the service account's own
 * rights instead of as asked would be the surprise issue 16 was about, so
 * they apply here as they do with a kubeconfig.
 */
static int in_cluster_impersonation(const struct kinf_kubeconfig_opts *opts,
		struct kinf_rest_config *c, struct kinf_error *reterr) {
	struct selection s = { 0 };

	apply_impersonation_flags(opts, &s.user);
	if (!s.user.flag_as && (s.user.flag_as_uid || s.user.n_flag_as_groups)) {
		return kinf_error_set(reterr, KINF_ECONFIG, "invalid configuration: requesting "
				"uid or groups (--as-uid, --as-group) without impersonating a user "
				"(--as)");
	}
	return build_impersonation(&s, c, reterr);
}

static int load_merged(const struct kinf_kubeconfig_opts *opts, struct kc *kc,
		struct kinf_error *reterr) {
	static const struct kinf_kubeconfig_opts none = { .insecure_skip_tls_verify = -1 };
	return kc_load_files(opts ? opts : &none, kc, reterr);
}

int kinf_kubeconfig_load(const struct kinf_kubeconfig_opts *opts,
		struct kinf_rest_config **ret, struct kinf_error *reterr) {
	static const struct kinf_kubeconfig_opts none = { .insecure_skip_tls_verify = -1 };
	struct kinf_rest_config *c = NULL;
	struct selection s = { 0 };
	struct errlist el = { 0 };
	struct kc kc = { 0 };
	char *ca_override = NULL, *sa_dir = NULL;
	bool empty_selection;
	int r;

	if (!opts) {
		opts = &none;
	}
	if (opts->token && (r = kinf_header_value_check(opts->token, strlen(opts->token),
			"--token", KINF_ECONFIG, reterr)) < 0) {
		return r;
	}
	/* the impersonation flags, like --token, before anything is read */
	if (opts->as && (r = kinf_header_value_check(opts->as, strlen(opts->as), "--as",
			KINF_ECONFIG, reterr)) < 0) {
		return r;
	}
	if (opts->as_uid && (r = kinf_header_value_check(opts->as_uid, strlen(opts->as_uid),
			"--as-uid", KINF_ECONFIG, reterr)) < 0) {
		return r;
	}
	for (size_t i = 0; i < opts->n_as_groups; i++) {
		r = kinf_header_value_check(opts->as_groups[i], strlen(opts->as_groups[i]),
				"--as-group", KINF_ECONFIG, reterr);
		if (r < 0) {
			return r;
		}
	}
	if (opts->server) {
		char ctl_buf[40];
		size_t at;
		const char *ctl = url_ctl(opts->server, ctl_buf, sizeof(ctl_buf), &at);
		if (ctl) {
			return kinf_error_set(reterr, KINF_ECONFIG, "--server holds %s (byte %zu), "
					"which a URL cannot carry", ctl, at);
		}
	}
	r = load_merged(opts, &kc, reterr);
	if (r < 0) {
		goto out;
	}
	r = select_entries(opts, &kc, &s, reterr);
	if (r < 0) {
		goto out;
	}
	if (opts->certificate_authority && *opts->certificate_authority) {
		ca_override = kc_absolute_path(opts->certificate_authority);
		if (!ca_override) {
			r = -KINF_ENOMEM;
			goto out;
		}
	}

	/*
	 * Nothing chose a cluster: client-go calls that an empty config and
	 * tries the in-cluster config before giving up.
	 */
	empty_selection = !s.context && s.cluster.empty && !(opts->server && *opts->server) &&
		!(s.context_name && *s.context_name);
	if (empty_selection && !(opts->cluster && *opts->cluster)) {
		if (kc_in_cluster_possible(opts, &sa_dir)) {
			c = calloc(1, sizeof(*c));
			r = c ? kc_in_cluster_config(opts, sa_dir, c, reterr) : -KINF_ENOMEM;
			if (r == 0) {
				r = in_cluster_impersonation(opts, c, reterr);
			}
			goto out;
		}
		if (kc.clusters.n == 0 && kc.users.n == 0 && kc.contexts.n == 0) {
			r = kinf_error_set(reterr, KINF_ECONFIG, "no configuration: set --kubeconfig, "
					"KUBECONFIG or ~/.kube/config");
		} else {
			r = kinf_error_set(reterr, KINF_ECONFIG, "no context chosen: current-context "
					"is not set; use --context or --server");
		}
		goto out;
	}

	apply_overrides(opts, &s, &ca_override);

	/* ConfirmUsable, with validateContext's pointers to missing entries */
	if (s.context_name && *s.context_name && !s.context) {
		errlist_add(&el, "context was not found for specified context: %s", s.context_name);
	}
	if (s.context && !(opts->user && *opts->user) && s.context->user && *s.context->user &&
			!kc_find_named(&kc.users, s.context->user)) {
		errlist_add(&el, "user \"%s\" was not found for context \"%s\"", s.context->user,
				s.context_name);
	}
	if (s.context && !(opts->cluster && *opts->cluster)) {
		if (!s.context->cluster || !*s.context->cluster) {
			if (!(opts->server && *opts->server)) {
				errlist_add(&el, "cluster was not specified for context \"%s\"",
						s.context_name);
			}
		} else if (!kc_find_named(&kc.clusters, s.context->cluster)) {
			errlist_add(&el, "cluster \"%s\" was not found for context \"%s\"",
					s.context->cluster, s.context_name);
		}
	}
	validate_user(&el, s.user_name ? s.user_name : "", &s.user);
	if (el.msgs.n == 0 || s.cluster.server) {
		validate_cluster(&el, s.cluster_name ? s.cluster_name : "", &s.cluster);
	}
	r = errlist_finish(&el, reterr);
	if (r < 0) {
		goto out;
	}
	/* (--token was checked first) */
	if (s.user.token && !(opts->token && *opts->token)) {
		char what[512];
		snprintf(what, sizeof(what), "%s: line %zu, column %zu: the token of user \"%s\"",
				s.user.file ? s.user.file : "kubeconfig", s.user.token_line,
				s.user.token_column, s.user_name ? s.user_name : "");
		r = kinf_header_value_check(s.user.token, s.user.token_len, what, KINF_ECONFIG,
				reterr);
		if (r < 0) {
			goto out;
		}
	}

	c = calloc(1, sizeof(*c));
	r = c ? build_rest_config(opts, &s, c, reterr) : -KINF_ENOMEM;
out:
	if (r < 0) {
		kinf_rest_config_free(c);
	} else {
		*ret = c;
	}
	free(ca_override);
	free(sa_dir);
	kc_release(&kc);
	return r;
}

void kinf_rest_config_free(struct kinf_rest_config *c) {
	if (!c) {
		return;
	}
	free(c->server);
	free(c->unix_socket);
	free(c->tls_server_name);
	free(c->ca_pem);
	free(c->proxy_url);
	free(c->namespace);
	free(c->context_name);
	free(c->cluster_name);
	free(c->user_name);
	free(c->source);
	kinf_free_secret(c->token);
	free(c->token_file);
	free(c->client_cert_pem);
	kc_free_secret_len(c->client_key_pem, c->client_key_pem_len);
	free(c->username);
	kinf_free_secret(c->password);
	kc_exec_config_free(c->exec);
	free(c->impersonate_user);
	free(c->impersonate_uid);
	for (char **g = c->impersonate_groups; g && *g; g++) {
		free(*g);
	}
	free(c->impersonate_groups);
	for (size_t i = 0; i < c->n_impersonate_extra; i++) {
		free(c->impersonate_extra[i].name);
		free(c->impersonate_extra[i].value);
	}
	free(c->impersonate_extra);
	free(c);
}

int kinf_kubeconfig_context_names(const struct kinf_kubeconfig_opts *opts,
		char ***ret, struct kinf_error *reterr) {
	struct kinf_strv names = { 0 };
	struct kc kc = { 0 };
	int r;

	r = load_merged(opts, &kc, reterr);
	for (size_t i = 0; r == 0 && i < kc.contexts.n; i++) {
		r = kinf_strv_push_str(&names, ((struct kc_context *)kc.contexts.v[i])->name);
	}
	if (r == 0 && !names.v) {
		names.v = calloc(1, sizeof(char *));
		r = names.v ? 0 : -KINF_ENOMEM;
	}
	if (r < 0) {
		kinf_strv_release(&names);
	} else {
		kinf_strv_sort(&names);
		*ret = names.v;
	}
	kc_release(&kc);
	return r;
}
