#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kubeconfig-test.h"

/*
 * Reading a kubeconfig's YAML (src/kubeconfig/yaml.c, and load.c's
 * parse of one file): libyaml's errors with their line and column, and
 * the bounds that keep a hostile file cheap (nesting, aliases, nodes and
 * bytes with aliases expanded), checked before the document is built.
 */

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

int main(void) {
	if (kc_test_begin("kubeconfig-yaml") < 0) {
		return 1;
	}
	test_yaml_errors();
	test_bounds();
	return kc_test_end();
}
