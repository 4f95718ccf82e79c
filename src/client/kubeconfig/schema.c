#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "buf.h"
#include "err.h"
#include "kubeconfig.h"
#include "kubeconfig_int.h"

/* ---- the model: its lists and what frees it ---- */

int kc_ptrv_push(struct ptrv *pv, void *p) {
	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 8;
		void **v = realloc(pv->v, cap * sizeof(*v));
		if (!v) {
			return -KINF_ENOMEM;
		}
		pv->v = v;
		pv->cap = cap;
	}
	pv->v[pv->n++] = p;
	return 0;
}

void kc_exec_config_free(struct kinf_exec_config *e) {
	if (!e) {
		return;
	}
	free(e->api_version);
	free(e->command);
	if (e->args) {
		for (char **a = e->args; *a; a++) {
			free(*a);
		}
		free(e->args);
	}
	for (size_t i = 0; i < e->n_env; i++) {
		free(e->env[i].name);
		kinf_free_secret(e->env[i].value);
	}
	free(e->env);
	free(e->interactive_mode);
	free(e->install_hint);
	free(e->cluster_config_json);
	free(e);
}

static void cluster_free(struct kc_cluster *c) {
	if (!c) {
		return;
	}
	free(c->name);
	free(c->server);
	free(c->tls_server_name);
	free(c->ca_file);
	free(c->ca_data);
	free(c->proxy_url);
	free(c->exec_extension);
	free(c);
}

static void values_free(struct kc_value *v, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(v[i].s);
	}
	free(v);
}

static void impersonation_release(struct kc_user *u) {
	free(u->imp_user.s);
	free(u->imp_uid.s);
	values_free(u->imp_groups, u->n_imp_groups);
	for (size_t i = 0; i < u->n_imp_extra; i++) {
		free(u->imp_extra[i].key);
		values_free(u->imp_extra[i].values, u->imp_extra[i].n_values);
	}
	free(u->imp_extra);
	u->imp_user.s = u->imp_uid.s = NULL;
	u->imp_groups = NULL;
	u->imp_extra = NULL;
	u->n_imp_groups = u->n_imp_extra = 0;
}

static void user_free(struct kc_user *u) {
	if (!u) {
		return;
	}
	free(u->name);
	kinf_free_secret(u->token);
	free(u->token_file);
	free(u->cert_file);
	free(u->cert_data);
	free(u->key_file);
	kc_free_secret_len(u->key_data, u->key_data_len);
	free(u->username);
	kinf_free_secret(u->password);
	kc_exec_config_free(u->exec);
	free(u->auth_provider);
	impersonation_release(u);
	free(u);
}

static void context_free(struct kc_context *c) {
	if (!c) {
		return;
	}
	free(c->name);
	free(c->cluster);
	free(c->user);
	free(c->namespace);
	free(c);
}

void kc_release(struct kc *kc) {
	for (size_t i = 0; i < kc->clusters.n; i++) {
		cluster_free(kc->clusters.v[i]);
	}
	for (size_t i = 0; i < kc->users.n; i++) {
		user_free(kc->users.v[i]);
	}
	for (size_t i = 0; i < kc->contexts.n; i++) {
		context_free(kc->contexts.v[i]);
	}
	free(kc->clusters.v);
	free(kc->users.v);
	free(kc->contexts.v);
	free(kc->current_context);
	kinf_strv_release(&kc->files);
	memset(kc, 0, sizeof(*kc));
}

/* Entries are looked up by name; kubeconfigs hold a handful of them. */
void *kc_find_named(const struct ptrv *pv, const char *name) {
	if (!name) {
		return NULL;
	}
	for (size_t i = 0; i < pv->n; i++) {
		/* every entry struct starts with char *name */
		const char *n = *(char *const *)pv->v[i];
		if (strcmp(n, name) == 0) {
			return pv->v[i];
		}
	}
	return NULL;
}

/* ---- schema ---- */

static int parse_extensions(struct parse *p, const yaml_node_t *seq, struct kc_cluster *c) {
	yaml_node_t *item, *k, *v;
	int r;

	if (kc_is_null(seq)) {
		return 0;
	}
	if ((r = kc_want_sequence(p, seq, "extensions")) < 0) {
		return r;
	}
	FOR_ITEMS(p, seq, item) {
		const yaml_node_t *ext = NULL;
		char *name = NULL;
		json_t *j;
		if ((r = kc_want_mapping(p, item, "extensions[]")) < 0) {
			return r;
		}
		FOR_PAIRS(p, item, k, v) {
			if (kc_key_is(k, "name")) {
				if ((r = kc_get_string(p, v, "name", false, &name)) < 0) {
					free(name);	/* a name before a bad duplicate */
					return r;
				}
			} else if (kc_key_is(k, "extension")) {
				ext = v;
			}
		}
		if (!name || strcmp(name, EXEC_EXTENSION) != 0 || !ext || kc_is_null(ext)) {
			free(name);
			continue;
		}
		free(name);
		j = kc_node_to_json(p, ext, 0);
		free(c->exec_extension);
		c->exec_extension = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(j);
		if (!c->exec_extension) {
			return -KINF_ENOMEM;
		}
	}
	return 0;
}

static int parse_cluster(struct parse *p, const yaml_node_t *map, struct kc_cluster *c) {
	yaml_node_t *k, *v;
	int r = 0;

	c->empty = true;
	if (kc_is_null(map)) {
		return 0;
	}
	if ((r = kc_want_mapping(p, map, "cluster")) < 0) {
		return r;
	}
	FOR_PAIRS(p, map, k, v) {
		if (kc_key_is(k, "server")) {
			r = kc_get_string(p, v, "server", false, &c->server);
		} else if (kc_key_is(k, "tls-server-name")) {
			r = kc_get_string(p, v, "tls-server-name", false, &c->tls_server_name);
		} else if (kc_key_is(k, "insecure-skip-tls-verify")) {
			r = kc_get_bool(p, v, "insecure-skip-tls-verify", &c->insecure);
		} else if (kc_key_is(k, "certificate-authority")) {
			r = kc_get_path(p, v, "certificate-authority", &c->ca_file);
		} else if (kc_key_is(k, "certificate-authority-data")) {
			r = kc_get_data(p, v, "certificate-authority-data", false,
					&c->ca_data, &c->ca_data_len);
		} else if (kc_key_is(k, "proxy-url")) {
			r = kc_get_string(p, v, "proxy-url", false, &c->proxy_url);
		} else if (kc_key_is(k, "disable-compression")) {
			r = kc_get_bool(p, v, "disable-compression", &c->disable_compression);
		} else if (kc_key_is(k, "extensions")) {
			r = parse_extensions(p, v, c);
		} else {
			continue;	/* unknown keys are ignored, as client-go does */
		}
		if (r < 0) {
			return r;
		}
	}
	c->empty = !c->server && !c->tls_server_name && !c->insecure && !c->ca_file &&
		!c->ca_data && !c->proxy_url && !c->disable_compression && !c->exec_extension;
	return 0;
}

static int parse_exec_env(struct parse *p, const yaml_node_t *seq, struct kinf_exec_config *e) {
	yaml_node_t *item, *k, *v;
	size_t n;
	int r;

	if (kc_is_null(seq)) {
		return 0;
	}
	if ((r = kc_want_sequence(p, seq, "env")) < 0) {
		return r;
	}
	for (size_t i = 0; i < e->n_env; i++) {
		free(e->env[i].name);
		kinf_free_secret(e->env[i].value);
	}
	free(e->env);
	e->n_env = 0;
	n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	e->env = calloc(n ? n : 1, sizeof(*e->env));
	if (!e->env) {
		return -KINF_ENOMEM;
	}
	FOR_ITEMS(p, seq, item) {
		struct kinf_exec_env *ev = &e->env[e->n_env++];
		if ((r = kc_want_mapping(p, item, "env[]")) < 0) {
			return r;
		}
		FOR_PAIRS(p, item, k, v) {
			if (kc_key_is(k, "name")) {
				r = kc_get_string(p, v, "name", false, &ev->name);
			} else if (kc_key_is(k, "value")) {
				r = kc_get_string(p, v, "value", true, &ev->value);
			} else {
				continue;
			}
			if (r < 0) {
				return r;
			}
		}
		if (!ev->value && !(ev->value = strdup(""))) {
			return -KINF_ENOMEM;
		}
	}
	return 0;
}

static int parse_exec_args(struct parse *p, const yaml_node_t *seq, struct kinf_exec_config *e) {
	yaml_node_t *item;
	size_t n = 0;
	int r;

	if (kc_is_null(seq)) {
		return 0;
	}
	if ((r = kc_want_sequence(p, seq, "args")) < 0) {
		return r;
	}
	for (char **a = e->args; a && *a; a++) {
		free(*a);
	}
	free(e->args);
	e->args = calloc((size_t)(seq->data.sequence.items.top -
			seq->data.sequence.items.start) + 1, sizeof(char *));
	if (!e->args) {
		return -KINF_ENOMEM;
	}
	FOR_ITEMS(p, seq, item) {
		if (item->type != YAML_SCALAR_NODE) {
			return kc_node_error(p, item, "\"args\" must be a sequence of strings");
		}
		e->args[n] = kc_memdup0(item->data.scalar.value, item->data.scalar.length);
		if (!e->args[n++]) {
			return -KINF_ENOMEM;
		}
	}
	return 0;
}

/*
 * client_config.go cleanANSIEscapeCodes: the install hint ends up on a
 * terminal, so control characters other than white space (ESC above all)
 * are written as U+001B instead.
 */
static int clean_control_chars(char **s) {
	struct kinf_buf b = { 0 };
	const unsigned char *p = (const unsigned char *)*s;
	int r = 0;

	for (; *p && r == 0; p++) {
		if ((*p < 0x20 && !(*p >= 0x09 && *p <= 0x0d)) || *p == 0x7f) {
			r = kinf_buf_printf(&b, "U+%04X", *p);
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			/* C1 controls, UTF-8 encoded */
			r = kinf_buf_printf(&b, "U+%04X", p[1]);
			p++;
		} else {
			r = kinf_buf_append_char(&b, (char)*p);
		}
	}
	if (r < 0) {
		kinf_buf_release(&b);
		return r;
	}
	free(*s);
	*s = kinf_buf_take(&b);
	return *s ? 0 : -KINF_ENOMEM;
}

static int parse_exec(struct parse *p, const yaml_node_t *map, struct kc_user *u) {
	struct kinf_exec_config *e;
	yaml_node_t *k, *v;
	int r = 0;

	kc_exec_config_free(u->exec);
	u->exec = NULL;
	if (kc_is_null(map)) {
		return 0;
	}
	if ((r = kc_want_mapping(p, map, "exec")) < 0) {
		return r;
	}
	e = u->exec = calloc(1, sizeof(*e));
	if (!e) {
		return -KINF_ENOMEM;
	}
	FOR_PAIRS(p, map, k, v) {
		if (kc_key_is(k, "apiVersion")) {
			r = kc_get_string(p, v, "apiVersion", false, &e->api_version);
		} else if (kc_key_is(k, "command")) {
			r = kc_get_string(p, v, "command", false, &e->command);
		} else if (kc_key_is(k, "args")) {
			r = parse_exec_args(p, v, e);
		} else if (kc_key_is(k, "env")) {
			r = parse_exec_env(p, v, e);
		} else if (kc_key_is(k, "interactiveMode")) {
			r = kc_get_string(p, v, "interactiveMode", false, &e->interactive_mode);
		} else if (kc_key_is(k, "provideClusterInfo")) {
			r = kc_get_bool(p, v, "provideClusterInfo", &e->provide_cluster_info);
		} else if (kc_key_is(k, "installHint")) {
			r = kc_get_string(p, v, "installHint", false, &e->install_hint);
		} else {
			continue;
		}
		if (r < 0) {
			return r;
		}
	}
	if (!e->args && !(e->args = calloc(1, sizeof(char *)))) {
		return -KINF_ENOMEM;
	}
	if (e->install_hint && (r = clean_control_chars(&e->install_hint)) < 0) {
		return r;
	}
	/* Only a command with a path separator is relative to the file (loader.go). */
	if (e->command && strchr(e->command, '/') && e->command[0] != '/') {
		char *dir = kc_dir_of(p->file);
		char *abs = dir ? kc_join_path(dir, e->command) : NULL;
		free(dir);
		if (!abs) {
			return -KINF_ENOMEM;
		}
		free(e->command);
		e->command = abs;
	}
	/* v1beta1 defaults interactiveMode to IfAvailable (api/v1/defaults.go) */
	if ((!e->interactive_mode || !*e->interactive_mode) && e->api_version &&
			strcmp(e->api_version, EXEC_API_V1BETA1) == 0) {
		free(e->interactive_mode);
		if (!(e->interactive_mode = strdup("IfAvailable"))) {
			return -KINF_ENOMEM;
		}
	}
	return 0;
}

static int parse_auth_provider(struct parse *p, const yaml_node_t *map, struct kc_user *u) {
	yaml_node_t *k, *v;
	int r;

	free(u->auth_provider);
	u->auth_provider = NULL;
	u->has_auth_provider = !kc_is_null(map);
	if (!u->has_auth_provider) {
		return 0;
	}
	if ((r = kc_want_mapping(p, map, "auth-provider")) < 0) {
		return r;
	}
	FOR_PAIRS(p, map, k, v) {
		if (kc_key_is(k, "name") && (r = kc_get_string(p, v, "name", false, &u->auth_provider)) < 0) {
			return r;
		}
	}
	return 0;
}

/* A string kept as written, NULs included, with its place; null unsets it. */
static int get_value(struct parse *p, const yaml_node_t *n, const char *key,
		struct kc_value *out) {
	free(out->s);
	memset(out, 0, sizeof(*out));
	if (kc_is_null(n)) {
		return 0;
	}
	if (n->type != YAML_SCALAR_NODE) {
		return kc_node_error(p, n, "\"%s\" must be a string", key);
	}
	if (!(out->s = kc_memdup0(n->data.scalar.value, n->data.scalar.length))) {
		return -KINF_ENOMEM;
	}
	out->len = n->data.scalar.length;
	out->line = n->start_mark.line + 1;
	out->column = n->start_mark.column + 1;
	return 0;
}

/* A sequence of strings (a null item is ""); null is none. */
static int get_values(struct parse *p, const yaml_node_t *seq, const char *key,
		struct kc_value **ret, size_t *ret_n) {
	yaml_node_t *item;
	struct kc_value *v;
	size_t n = 0;
	int r;

	if (kc_is_null(seq)) {
		return 0;
	}
	if ((r = kc_want_sequence(p, seq, key)) < 0) {
		return r;
	}
	v = calloc((size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start) + 1,
			sizeof(*v));
	if (!v) {
		return -KINF_ENOMEM;
	}
	FOR_ITEMS(p, seq, item) {
		if (item->type != YAML_SCALAR_NODE) {
			r = kc_node_error(p, item, "\"%s\" must be a sequence of strings", key);
			goto fail;
		}
		if (kc_is_null(item)) {
			v[n].s = strdup("");
			v[n].len = 0;
		} else {
			v[n].s = kc_memdup0(item->data.scalar.value, item->data.scalar.length);
			v[n].len = item->data.scalar.length;
		}
		v[n].line = item->start_mark.line + 1;
		v[n].column = item->start_mark.column + 1;
		if (!v[n++].s) {
			r = -KINF_ENOMEM;
			goto fail;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
fail:
	values_free(v, n);
	return r;
}

/* as-user-extra: a mapping of keys to sequences of strings. */
static int parse_as_user_extra(struct parse *p, const yaml_node_t *map, struct kc_user *u) {
	yaml_node_t *k, *v;
	int r;

	for (size_t i = 0; i < u->n_imp_extra; i++) {
		free(u->imp_extra[i].key);
		values_free(u->imp_extra[i].values, u->imp_extra[i].n_values);
	}
	free(u->imp_extra);
	u->imp_extra = NULL;
	u->n_imp_extra = 0;
	if (kc_is_null(map)) {
		return 0;
	}
	if ((r = kc_want_mapping(p, map, "as-user-extra")) < 0) {
		return r;
	}
	u->imp_extra = calloc((size_t)(map->data.mapping.pairs.top -
			map->data.mapping.pairs.start) + 1, sizeof(*u->imp_extra));
	if (!u->imp_extra) {
		return -KINF_ENOMEM;
	}
	FOR_PAIRS(p, map, k, v) {
		struct kc_extra *e = &u->imp_extra[u->n_imp_extra];
		if (k->type != YAML_SCALAR_NODE) {
			return kc_node_error(p, k, "the keys of \"as-user-extra\" must be strings");
		}
		if (!(e->key = kc_memdup0(k->data.scalar.value, k->data.scalar.length))) {
			return -KINF_ENOMEM;
		}
		e->key_len = k->data.scalar.length;
		u->n_imp_extra++;
		if ((r = get_values(p, v, "as-user-extra", &e->values, &e->n_values)) < 0) {
			return r;
		}
	}
	return 0;
}

static int parse_user(struct parse *p, const yaml_node_t *map, struct kc_user *u) {
	yaml_node_t *k, *v;
	int r = 0;

	if (kc_is_null(map)) {
		return 0;
	}
	if ((r = kc_want_mapping(p, map, "user")) < 0) {
		return r;
	}
	FOR_PAIRS(p, map, k, v) {
		if (kc_key_is(k, "token")) {
			r = kc_get_string(p, v, "token", true, &u->token);
			u->token_len = u->token ? v->data.scalar.length : 0;
			u->token_line = v->start_mark.line + 1;
			u->token_column = v->start_mark.column + 1;
		} else if (kc_key_is(k, "tokenFile")) {
			r = kc_get_path(p, v, "tokenFile", &u->token_file);
		} else if (kc_key_is(k, "client-certificate")) {
			r = kc_get_path(p, v, "client-certificate", &u->cert_file);
		} else if (kc_key_is(k, "client-certificate-data")) {
			r = kc_get_data(p, v, "client-certificate-data", false,
					&u->cert_data, &u->cert_data_len);
		} else if (kc_key_is(k, "client-key")) {
			r = kc_get_path(p, v, "client-key", &u->key_file);
		} else if (kc_key_is(k, "client-key-data")) {
			r = kc_get_data(p, v, "client-key-data", true, &u->key_data, &u->key_data_len);
		} else if (kc_key_is(k, "username")) {
			r = kc_get_string(p, v, "username", false, &u->username);
		} else if (kc_key_is(k, "password")) {
			r = kc_get_string(p, v, "password", true, &u->password);
		} else if (kc_key_is(k, "exec")) {
			r = parse_exec(p, v, u);
		} else if (kc_key_is(k, "auth-provider")) {
			r = parse_auth_provider(p, v, u);
		} else if (kc_key_is(k, "as")) {
			r = get_value(p, v, "as", &u->imp_user);
		} else if (kc_key_is(k, "as-uid")) {
			r = get_value(p, v, "as-uid", &u->imp_uid);
		} else if (kc_key_is(k, "as-groups")) {
			values_free(u->imp_groups, u->n_imp_groups);
			u->imp_groups = NULL;
			u->n_imp_groups = 0;
			r = get_values(p, v, "as-groups", &u->imp_groups, &u->n_imp_groups);
		} else if (kc_key_is(k, "as-user-extra")) {
			r = parse_as_user_extra(p, v, u);
		} else {
			continue;
		}
		if (r < 0) {
			return r;
		}
	}
	/* empty strings are unset, as Go's len() checks treat them */
	if (u->token && !u->token_len) {
		kinf_free_secret(u->token);
		u->token = NULL;
	}
	if (u->username && !*u->username) {
		free(u->username);
		u->username = NULL;
	}
	if (u->password && !*u->password) {
		kinf_free_secret(u->password);
		u->password = NULL;
	}
	return 0;
}

static int parse_context(struct parse *p, const yaml_node_t *map, struct kc_context *c) {
	yaml_node_t *k, *v;
	int r = 0;

	if (kc_is_null(map)) {
		return 0;
	}
	if ((r = kc_want_mapping(p, map, "context")) < 0) {
		return r;
	}
	FOR_PAIRS(p, map, k, v) {
		if (kc_key_is(k, "cluster")) {
			r = kc_get_string(p, v, "cluster", false, &c->cluster);
		} else if (kc_key_is(k, "user")) {
			r = kc_get_string(p, v, "user", false, &c->user);
		} else if (kc_key_is(k, "namespace")) {
			r = kc_get_string(p, v, "namespace", false, &c->namespace);
		} else {
			continue;
		}
		if (r < 0) {
			return r;
		}
	}
	return 0;
}

static const char *const kind_list[] = { "clusters", "users", "contexts" };
static const char *const kind_body[] = { "cluster", "user", "context" };

void kc_entry_free(enum kind kind, void *e) {
	switch (kind) {
	case KIND_CLUSTER:
		cluster_free(e);
		break;
	case KIND_USER:
		user_free(e);
		break;
	case KIND_CONTEXT:
		context_free(e);
		break;
	}
}

/* - name: x \n  <body>: {...}, as NamedCluster / NamedAuthInfo / NamedContext */
static int parse_named_list(struct parse *p, const yaml_node_t *seq, enum kind kind,
		struct ptrv *out) {
	static const size_t sizes[] = {
		sizeof(struct kc_cluster), sizeof(struct kc_user), sizeof(struct kc_context),
	};
	yaml_node_t *item, *k, *v;
	int r;

	if (kc_is_null(seq)) {
		return 0;
	}
	if ((r = kc_want_sequence(p, seq, kind_list[kind])) < 0) {
		return r;
	}
	FOR_ITEMS(p, seq, item) {
		const yaml_node_t *body = NULL;
		char *name = NULL;
		void *e;

		if (item->type != YAML_MAPPING_NODE) {
			return kc_node_error(p, item, "\"%s\" entries must be mappings", kind_list[kind]);
		}
		FOR_PAIRS(p, item, k, v) {
			if (kc_key_is(k, "name")) {
				if ((r = kc_get_string(p, v, "name", false, &name)) < 0) {
					free(name);	/* a name before a bad duplicate */
					return r;
				}
			} else if (kc_key_is(k, kind_body[kind])) {
				body = v;
			}
		}
		if (!name && !(name = strdup(""))) {
			return -KINF_ENOMEM;
		}
		if (kc_find_named(out, name)) {
			r = kc_node_error(p, item, "duplicate name \"%s\" in \"%s\"", name,
					kind_list[kind]);
			free(name);
			return r;
		}
		e = calloc(1, sizes[kind]);
		if (!e) {
			free(name);
			return -KINF_ENOMEM;
		}
		*(char **)e = name;	/* every entry struct starts with its name */
		switch (kind) {
		case KIND_CLUSTER:
			((struct kc_cluster *)e)->file = p->file;
			r = parse_cluster(p, body, e);
			break;
		case KIND_USER:
			((struct kc_user *)e)->file = p->file;
			r = parse_user(p, body, e);
			break;
		case KIND_CONTEXT:
			((struct kc_context *)e)->file = p->file;
			r = parse_context(p, body, e);
			break;
		}
		if (r < 0 || (r = kc_ptrv_push(out, e)) < 0) {
			kc_entry_free(kind, e);
			return r;
		}
	}
	return 0;
}

int kc_parse_root(struct parse *p, struct kc *kc) {
	yaml_node_t *root = yaml_document_get_root_node(p->doc);
	yaml_node_t *k, *v;
	int r = 0;

	if (!root || kc_is_null(root)) {
		return 0;
	}
	if (root->type != YAML_MAPPING_NODE) {
		return kc_node_error(p, root, "a kubeconfig must be a mapping");
	}
	FOR_PAIRS(p, root, k, v) {
		if (kc_key_is(k, "clusters")) {
			r = parse_named_list(p, v, KIND_CLUSTER, &kc->clusters);
		} else if (kc_key_is(k, "users")) {
			r = parse_named_list(p, v, KIND_USER, &kc->users);
		} else if (kc_key_is(k, "contexts")) {
			r = parse_named_list(p, v, KIND_CONTEXT, &kc->contexts);
		} else if (kc_key_is(k, "current-context")) {
			r = kc_get_string(p, v, "current-context", false, &kc->current_context);
		} else {
			continue;
		}
		if (r < 0) {
			return r;
		}
	}
	return 0;
}
