#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "buf.h"
#include "header.h"
#include "kubeconfig.h"
#include "tap.h"

/*
 * Credentials: static ones, a token file re-read when it changes, and the
 * exec plugin test/fixtures/kubeconfig/bin/kinf-test-plugin, steered
 * through files in a temporary directory (see the script's header).
 */

static char fixtures[PATH_MAX / 2];
static char tmpdir[PATH_MAX / 2];
static char plugin[PATH_MAX];

static const char *tmp(const char *name) {
	static char paths[4][PATH_MAX];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
	return p;
}

static void write_file(const char *path, const char *content) {
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(99);
	}
	fputs(content, f);
	fclose(f);
}

static char *read_file(const char *path) {
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

static void set_mode(const char *mode) {
	write_file(tmp("mode"), mode);
}

static int run_count(void) {
	char *s = read_file(tmp("count"));
	int n = s ? atoi(s) : 0;
	free(s);
	return n;
}

/* What cr points to before a successful get, so failing tests don't crash. */
static const struct kinf_credentials no_credentials;

/* Drop the reference *cr holds, if any: *cr is no_credentials again. */
static void drop(const struct kinf_credentials **cr) {
	if (*cr != &no_credentials) {
		kinf_auth_credentials_unref(*cr);
	}
	*cr = &no_credentials;
}

/* kinf_auth_get into *cr, dropping what it held when that succeeds. */
static int get(struct kinf_auth *auth, const struct kinf_credentials **cr,
		struct kinf_error *e) {
	const struct kinf_credentials *got;
	int r = kinf_auth_get(auth, &got, e);
	if (r == 0) {
		drop(cr);
		*cr = got;
	}
	return r;
}

static struct kinf_rest_config *load(const char *yaml) {
	struct kinf_kubeconfig_opts o = { .insecure_skip_tls_verify = -1 };
	struct kinf_rest_config *c = NULL;
	struct kinf_error e = { 0 };

	o.kubeconfig = tmp("config");
	write_file(o.kubeconfig, yaml);
	if (kinf_kubeconfig_load(&o, &c, &e) < 0) {
		printf("# load failed: %s\n", e.message);
		return NULL;
	}
	return c;
}

struct exec_opts {
	const char *api;		/* NULL: v1 */
	const char *command;		/* NULL: the fixture plugin */
	const char *mode;		/* interactiveMode, NULL: Never */
	bool cluster_info;
	const char *hint;		/* installHint or NULL */
};

static struct kinf_rest_config *load_exec(struct exec_opts x) {
	char yaml[8192];
	const char *api = x.api ? x.api : "client.authentication.k8s.io/v1";

	snprintf(yaml, sizeof(yaml),
		"current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"clusters:\n"
		"- name: c\n"
		"  cluster:\n"
		"    server: https://k.example:6443\n"
		"    tls-server-name: k.internal\n"
		"    certificate-authority-data: Q0EtREFUQQ==\n"
		"    proxy-url: http://proxy.example:3128\n"
		"    extensions:\n"
		"    - name: client.authentication.k8s.io/exec\n"
		"      extension: {audience: kinf, n: 3}\n"
		"users:\n"
		"- name: u\n"
		"  user:\n"
		"    exec:\n"
		"      apiVersion: %s\n"
		"      command: %s\n"
		"      args: [--flag, value]\n"
		"      interactiveMode: %s\n"
		"      provideClusterInfo: %s\n"
		"%s%s%s"
		"      env:\n"
		"      - name: KINF_PLUGIN_DIR\n"
		"        value: %s\n"
		"      - name: KINF_PLUGIN_VAR\n"
		"        value: from-config\n"
		"      - name: KINF_PLUGIN_API\n"
		"        value: %s\n",
		api, x.command ? x.command : plugin, x.mode ? x.mode : "Never",
		x.cluster_info ? "true" : "false",
		x.hint ? "      installHint: \"" : "", x.hint ? x.hint : "", x.hint ? "\"\n" : "",
		tmpdir, api);
	return load(yaml);
}

static void test_static(void) {
	struct kinf_rest_config *c;
	const struct kinf_credentials *cr = &no_credentials;
	struct kinf_error e = { 0 };
	struct kinf_auth *auth;
	unsigned gen;
	int r;

	c = load("current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: {server: https://k}}]\n"
		"users: [{name: u, user: {token: static-token, client-certificate-data: Q0VSVA==, "
		"client-key-data: S0VZ}}]\n");
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	ok(auth != NULL, "static: auth");
	if (!auth) {
		kinf_rest_config_free(c);
		return;
	}
	r = get(auth, &cr, &e);
	is_int(r, 0, "static: get");
	is_str(cr->token, "static-token", "static: token");
	ok(cr->client_cert_pem_len == 4 && memcmp(cr->client_cert_pem, "CERT", 4) == 0,
			"static: client cert");
	ok(cr->client_key_pem_len == 3 && memcmp(cr->client_key_pem, "KEY", 3) == 0,
			"static: client key");
	ok(!cr->username && !cr->password, "static: no basic auth");
	gen = cr->generation;
	ok(!kinf_auth_unauthorized(auth, gen), "static: a retry after 401 can't help");
	r = get(auth, &cr, &e);
	is_int(cr->generation, gen, "static: generation unchanged");
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);

	c = load("current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: {server: https://k}}]\n"
		"users: [{name: u, user: {username: bob, password: pw}}]\n");
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	r = auth ? get(auth, &cr, &e) : -1;
	is_int(r, 0, "basic: get");
	is_str(r == 0 ? cr->username : NULL, "bob", "basic: username");
	is_str(r == 0 ? cr->password : NULL, "pw", "basic: password");
	ok(r == 0 && !cr->token, "basic: no token");
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);
}

static void test_token_file(void) {
	const char *path = tmp("token");
	struct kinf_rest_config *c;
	const struct kinf_credentials *cr = &no_credentials;
	struct kinf_error e = { 0 };
	struct kinf_auth *auth;
	struct timespec times[2];
	struct stat st;
	char yaml[2048];
	unsigned gen;
	int r;

	write_file(path, "first-token\n");
	snprintf(yaml, sizeof(yaml), "current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: {server: https://k}}]\n"
		"users: [{name: u, user: {tokenFile: %s}}]\n", path);
	c = load(yaml);
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	ok(auth != NULL, "token file: auth");
	if (!auth) {
		kinf_rest_config_free(c);
		return;
	}
	r = get(auth, &cr, &e);
	is_int(r, 0, "token file: get");
	is_str(cr->token, "first-token", "token file: read and trimmed");
	gen = cr->generation;
	r = get(auth, &cr, &e);
	is_int(cr->generation, gen, "token file: unchanged file, same generation");

	write_file(path, "second-token-longer");
	r = get(auth, &cr, &e);
	is_int(r, 0, "token file: get after change");
	is_str(cr->token, "second-token-longer", "token file: re-read after it changed");
	ok(cr->generation != gen, "token file: generation changed");
	gen = cr->generation;

	/* same size, same mtime: not noticed until a 401 forces a re-read */
	stat(path, &st);
	write_file(path, "third--token-longer");
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	utimensat(AT_FDCWD, path, times, 0);
	r = get(auth, &cr, &e);
	is_str(cr->token, "second-token-longer", "token file: stat unchanged, not re-read");
	ok(kinf_auth_unauthorized(auth, gen), "token file: 401 says retry");
	r = get(auth, &cr, &e);
	is_str(cr->token, "third--token-longer", "token file: re-read after 401");
	ok(cr->generation != gen, "token file: generation changed again");
	gen = cr->generation;

	/* a token file that goes away keeps the token read before */
	unlink(path);
	r = get(auth, &cr, &e);
	is_int(r, 0, "token file removed: still ok");
	is_str(cr->token, "third--token-longer", "token file removed: old token kept");
	is_int(cr->generation, gen, "token file removed: same generation");
	drop(&cr);
	kinf_auth_free(auth);

	/* ... but with nothing read before it is an error, as is an empty file */
	auth = kinf_auth_new(c);
	drop(&cr);
	r = get(auth, &cr, &e);
	is_int(r, -KINF_EAUTH, "token file missing: error");
	snprintf(yaml, sizeof(yaml), "unable to read token file %s: No such file or directory",
			path);
	is_str(e.message, yaml, "token file missing: message");
	write_file(path, " \n");
	r = get(auth, &cr, &e);
	is_int(r, -KINF_EAUTH, "empty token file: error");
	snprintf(yaml, sizeof(yaml), "read empty token from file %s", path);
	is_str(e.message, yaml, "empty token file: message");
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);
}

static const char *const info_plain =
	"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	"\"spec\":{\"interactive\":false}}";

static const char *const info_cluster =
	"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	"\"spec\":{\"interactive\":false,\"cluster\":{\"server\":\"https://k.example:6443\","
	"\"tls-server-name\":\"k.internal\",\"certificate-authority-data\":\"Q0EtREFUQQ==\","
	"\"proxy-url\":\"http://proxy.example:3128\",\"config\":{\"audience\":\"kinf\",\"n\":3}}}}";

static void test_exec(void) {
	struct kinf_rest_config *c;
	const struct kinf_credentials *cr = &no_credentials;
	struct kinf_error e = { 0 };
	struct kinf_auth *auth;
	unsigned gen, gen2;
	char *s;
	int r;

	/* a token, KUBERNETES_EXEC_INFO and the environment */
	setenv("KINF_PROCESS_VAR", "from-process", 1);
	setenv("KINF_PLUGIN_VAR", "overridden", 1);
	unlink(tmp("count"));
	set_mode("token:one");
	c = load_exec((struct exec_opts){ 0 });
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	ok(auth != NULL, "exec: auth");
	if (!auth) {
		kinf_rest_config_free(c);
		return;
	}
	r = get(auth, &cr, &e);
	is_int(r, 0, "exec: get");
	is_str(r == 0 ? cr->token : NULL, "one", "exec: token from the plugin");
	is_int(run_count(), 1, "exec: ran once");
	s = read_file(tmp("info"));
	is_str(s, info_plain, "exec: KUBERNETES_EXEC_INFO without cluster info");
	free(s);
	s = read_file(tmp("env"));
	is_str(s, "from-config from-process --flag value\n",
			"exec: config env over process env, process env kept, args");
	free(s);
	gen = r == 0 ? cr->generation : 0;

	/* cached: no expiry means for the process lifetime */
	set_mode("token:two");
	r = get(auth, &cr, &e);
	is_str(r == 0 ? cr->token : NULL, "one", "exec: cached");
	is_int(run_count(), 1, "exec: not run again");

	/* a 401 with these credentials: re-run on the next get */
	ok(kinf_auth_unauthorized(auth, gen), "exec: 401 says retry");
	r = get(auth, &cr, &e);
	is_str(r == 0 ? cr->token : NULL, "two", "exec: new token after 401");
	is_int(run_count(), 2, "exec: ran again after 401");
	gen2 = r == 0 ? cr->generation : 0;
	ok(gen2 != gen, "exec: generation changed");

	/* a 401 from a request made with older credentials: already rotated */
	set_mode("token:three");
	ok(kinf_auth_unauthorized(auth, gen), "exec: stale 401 still says retry");
	r = get(auth, &cr, &e);
	is_str(r == 0 ? cr->token : NULL, "two", "exec: stale 401 doesn't drop the new token");
	is_int(run_count(), 2, "exec: stale 401 doesn't re-run");

	/* the same token again: the generation stays */
	set_mode("token:two");
	kinf_auth_unauthorized(auth, gen2);
	r = get(auth, &cr, &e);
	is_int(run_count(), 3, "exec: re-run after 401");
	is_int(r == 0 ? cr->generation : 0, gen2, "exec: same credentials, same generation");

	/* an expired credential is fetched again on every get */
	set_mode("expired:old");
	kinf_auth_unauthorized(auth, gen2);
	r = get(auth, &cr, &e);
	is_str(r == 0 ? cr->token : NULL, "old", "exec: expired token returned once");
	is_int(run_count(), 4, "exec: ran");
	set_mode("future:new");
	r = get(auth, &cr, &e);
	is_str(r == 0 ? cr->token : NULL, "new", "exec: expired credential re-run");
	is_int(run_count(), 5, "exec: ran for the expired one");
	r = get(auth, &cr, &e);
	is_int(run_count(), 5, "exec: future expiry cached");

	/* a client certificate */
	set_mode("cert");
	gen = cr->generation;
	kinf_auth_unauthorized(auth, gen);
	r = get(auth, &cr, &e);
	is_int(r, 0, "exec cert: get");
	ok(r == 0 && !cr->token, "exec cert: no token");
	ok(r == 0 && cr->client_cert_pem &&
			strcmp(cr->client_cert_pem, "-----BEGIN CERTIFICATE-----\nMIIB\n"
				"-----END CERTIFICATE-----\n") == 0 &&
			cr->client_cert_pem_len == strlen(cr->client_cert_pem),
			"exec cert: certificate, JSON escapes decoded");
	ok(r == 0 && cr->client_key_pem && strstr(cr->client_key_pem, "PRIVATE KEY") &&
			cr->client_key_pem_len == strlen(cr->client_key_pem), "exec cert: key");
	ok(r == 0 && cr->generation != gen, "exec cert: generation changed");

	/* a failing re-run is an error, not the old credential */
	set_mode("garbage");
	kinf_auth_unauthorized(auth, cr->generation);
	r = get(auth, &cr, &e);
	is_int(r, -KINF_EAUTH, "exec garbage: error");
	ok(strncmp(e.message, "exec plugin \"", 13) == 0 && strstr(e.message, plugin) &&
			strstr(e.message, "decoding stdout: "), "exec garbage: message (%s)",
			e.message);
	set_mode("token:back");
	r = get(auth, &cr, &e);
	is_str(r == 0 ? cr->token : NULL, "back", "exec: works again after an error");
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);

	/* provideClusterInfo: cluster with CA data, proxy and the extension */
	c = load_exec((struct exec_opts){ .cluster_info = true });
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	r = auth ? get(auth, &cr, &e) : -1;
	is_int(r, 0, "exec cluster info: get");
	s = read_file(tmp("info"));
	is_str(s, info_cluster, "exec: KUBERNETES_EXEC_INFO with cluster info");
	free(s);
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);

	/* v1beta1 end to end; IfAvailable without a terminal is not interactive */
	c = load_exec((struct exec_opts){ .api = "client.authentication.k8s.io/v1beta1",
		.mode = "IfAvailable" });
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	r = auth ? get(auth, &cr, &e) : -1;
	is_int(r, 0, "exec v1beta1: get");
	s = read_file(tmp("info"));
	is_str(s, "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
			"\"ExecCredential\",\"spec\":{\"interactive\":false}}",
			"exec v1beta1: KUBERNETES_EXEC_INFO");
	free(s);
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);
}

struct exec_fail {
	const char *what;
	const char *mode;
	struct exec_opts opts;
	const char *message;	/* %s: the plugin path */
};

static void test_exec_errors(void) {
	static const struct exec_fail cases[] = {
		{ "exit status", "fail", { .hint = "apt install kinf-test-plugin" },
			"exec plugin \"%s\" failed: exit status 1 (apt install kinf-test-plugin)" },
		{ "garbage", "garbage", { 0 },
			"exec plugin \"%s\": decoding stdout: line 1, column 4: '[' or '{' expected" },
		{ "wrong apiVersion", "wrongversion", { 0 },
			"exec plugin \"%s\": plugin is configured to use API version "
			"client.authentication.k8s.io/v1, plugin returned version "
			"client.authentication.k8s.io/v1beta1" },
		{ "key only", "keyonly", { 0 },
			"exec plugin \"%s\": returned only certificate or key, not both" },
		{ "no status", "nostatus", { 0 },
			"exec plugin \"%s\": didn't return a status field" },
		{ "bad expiry", "badexpiry", { 0 },
			"exec plugin \"%s\": invalid expirationTimestamp \"yesterday\"" },
		{ "too much output", "huge", { 0 },
			"exec plugin \"%s\": more than 1048576 bytes of output" },
		{ "Always without a terminal", "token:x", { .mode = "Always" },
			"exec plugin \"%s\": interactiveMode is Always but standard input is not "
			"a terminal" },
		{ "not in PATH", "token:x", { .command = "kinf-no-such-plugin", .hint = "get it" },
			"exec plugin \"kinf-no-such-plugin\" failed: executable not found in $PATH "
			"(get it)" },
		{ "no such file", "token:x", { .command = "/nonexistent/plugin" },
			"exec plugin \"/nonexistent/plugin\" failed: no such executable file" },
	};
	char want[1024];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct exec_fail *t = &cases[i];
		const struct kinf_credentials *cr = &no_credentials;
		struct kinf_error e = { 0 };
		struct kinf_rest_config *c;
		struct kinf_auth *auth;
		int r;

		set_mode(t->mode);
		c = load_exec(t->opts);
		auth = c ? kinf_auth_new(c) : NULL;
		drop(&cr);
		r = auth ? get(auth, &cr, &e) : -1;
		is_int(r, -KINF_EAUTH, "exec %s: -KINF_EAUTH", t->what);
		snprintf(want, sizeof(want), t->message, plugin);
		is_str(e.message, want, "exec %s: message", t->what);
		drop(&cr);
		kinf_auth_free(auth);
		kinf_rest_config_free(c);
	}
}

static void test_exec_timeout_and_path(void) {
	const struct kinf_credentials *cr = &no_credentials;
	struct kinf_error e = { 0 };
	struct kinf_rest_config *c;
	struct kinf_auth *auth;
	struct timespec t0, t1;
	char path[PATH_MAX + 64], want[PATH_MAX + 128];
	const char *old_path = getenv("PATH");
	double secs;
	int r;

	/* a plugin that hangs is killed after the timeout */
	set_mode("hang");
	c = load_exec((struct exec_opts){ 0 });
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	if (auth) {
		kinf_auth_set_exec_timeout(auth, 300);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = auth ? get(auth, &cr, &e) : -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	is_int(r, -KINF_EAUTH, "exec hang: error");
	snprintf(want, sizeof(want), "exec plugin \"%s\" timed out after 300 ms and was killed",
			plugin);
	is_str(e.message, want, "exec hang: message");
	ok(secs >= 0.25 && secs < 5, "exec hang: killed after about 300 ms (%.2f s)", secs);
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);

	/* a command without '/' is looked up in PATH */
	snprintf(path, sizeof(path), "%s/bin:%s", fixtures, old_path ? old_path : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	set_mode("token:from-path");
	c = load_exec((struct exec_opts){ .command = "kinf-test-plugin" });
	auth = c ? kinf_auth_new(c) : NULL;
	drop(&cr);
	r = auth ? get(auth, &cr, &e) : -1;
	is_int(r, 0, "exec PATH lookup: get");
	is_str(r == 0 ? cr->token : NULL, "from-path", "exec PATH lookup: token");
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);
	if (old_path) {
		setenv("PATH", old_path, 1);
	} else {
		unsetenv("PATH");
	}
}

static int absdir(const char *dir, char *out, size_t size) {
	char cwd[PATH_MAX];
	int good = 0;

	if (!getcwd(cwd, sizeof(cwd))) {
		return -1;
	}
	if (chdir(dir) == 0) {
		good = getcwd(out, size) != NULL;
		if (chdir(cwd) != 0) {
			return -1;
		}
	}
	return good ? 0 : -1;
}

/*
 * Values bound for a header: no control character but tab (net/http's
 * httpguts.ValidHeaderFieldValue), checked wherever a token comes from.
 */
static void test_header_values(void) {
	const struct kinf_credentials *cr = &no_credentials;
	struct kinf_error e = { 0 };
	struct kinf_rest_config *c;
	struct kinf_auth *auth;
	char yaml[2 * PATH_MAX], want[2 * PATH_MAX];
	const char *path = tmp("bad-token");
	bool all = true;
	int r;

	for (int b = 0; b < 256; b++) {
		char v[3] = { 'a', (char)b, 'z' };
		bool bad = (b < 0x20 && b != '\t') || b == 0x7f;
		if (kinf_header_value_bad_byte(v, 3) != (bad ? 1 : -1)) {
			printf("# byte 0x%02x\n", b);
			all = false;
		}
	}
	ok(all, "header value: exactly the CTLs but tab are refused, bytes >= 0x80 pass");
	is_int(kinf_header_value_bad_byte("", 0), -1, "header value: empty is valid");
	is_int(kinf_header_value_bad_byte("ab\0c", 4), 2, "header value: a NUL counts (length given)");
	r = kinf_header_value_check("abc\r\nX-Injected: 1", 18, "the token", KINF_EAUTH, &e);
	is_int(r, -KINF_EAUTH, "header value: check fails with the code given");
	is_str(e.message, "the token holds a carriage return (byte 4), which an HTTP header "
			"cannot carry", "header value: message names the byte, not the value");
	is_int(kinf_header_value_check("\x1b]0;x\a", 6, "v", KINF_ECONFIG, &e), -KINF_ECONFIG,
			"header value: ESC is refused");
	is_str(e.message, "v holds the control character 0x1b (byte 1), which an HTTP header "
			"cannot carry", "header value: other control characters by number");
	is_int(kinf_header_value_check("a\tb\xc3\xa9", 5, "v", KINF_ECONFIG, &e), 0,
			"header value: tab and UTF-8 pass");

	/* a token file with CR LF inside (the trailing newline is trimmed) */
	write_file(path, "abc\r\nX-Injected: 1\n");
	snprintf(yaml, sizeof(yaml), "current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: {server: https://k}}]\n"
		"users: [{name: u, user: {tokenFile: %s}}]\n", path);
	c = load(yaml);
	auth = c ? kinf_auth_new(c) : NULL;
	r = auth ? get(auth, &cr, &e) : -1;
	is_int(r, -KINF_EAUTH, "token file with CR LF: error");
	snprintf(want, sizeof(want), "the token in file %s holds a carriage return (byte 4), "
			"which an HTTP header cannot carry", path);
	is_str(e.message, want, "token file with CR LF: message");
	kinf_auth_free(auth);
	kinf_rest_config_free(c);

	/*
	 * A NUL is not white space: Go's strings.TrimSpace keeps a trailing
	 * one, and net/http refuses the header. So does kinf (it once trimmed
	 * NULs, as strchr(set, '\0') matches the set's terminator).
	 */
	FILE *f = fopen(path, "w");
	ok(f && fwrite("nul-token\0\n", 1, 11, f) == 11 && fclose(f) == 0,
			"a token file ending in NUL, newline");
	c = load(yaml);
	auth = c ? kinf_auth_new(c) : NULL;
	r = auth ? get(auth, &cr, &e) : -1;
	is_int(r, -KINF_EAUTH, "token file ending in NUL: error");
	snprintf(want, sizeof(want), "the token in file %s holds a NUL byte (byte 10), "
			"which an HTTP header cannot carry", path);
	is_str(e.message, want, "token file ending in NUL: the NUL was not trimmed");
	write_file(path, "\xc2\xa0 spaced-token\xe2\x80\x83\n");
	r = auth ? get(auth, &cr, &e) : -1;
	is_str(r == 0 ? cr->token : NULL, "spaced-token",
			"token file: Unicode spaces trimmed as strings.TrimSpace does");

	/* one read well before keeps being used, as for an unreadable file */
	write_file(path, "good-token\n");
	r = auth ? get(auth, &cr, &e) : -1;
	is_str(r == 0 ? cr->token : NULL, "good-token", "token file: a good token read");
	write_file(path, "bad\ntoken, longer\n");
	r = auth ? get(auth, &cr, &e) : -1;
	is_str(r == 0 ? cr->token : NULL, "good-token", "token file turned bad: old token kept");
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);

	/* an exec plugin's token */
	set_mode("token:abc\\r\\nX-Injected: 1");
	c = load_exec((struct exec_opts){ 0 });
	auth = c ? kinf_auth_new(c) : NULL;
	r = auth ? get(auth, &cr, &e) : -1;
	is_int(r, -KINF_EAUTH, "exec token with CR LF: error");
	snprintf(want, sizeof(want), "exec plugin \"%s\": the token it printed holds a carriage "
			"return (byte 4), which an HTTP header cannot carry", plugin);
	is_str(e.message, want, "exec token with CR LF: message");
	set_mode("token:tab\\there");
	r = auth ? get(auth, &cr, &e) : -1;
	is_str(r == 0 ? cr->token : NULL, "tab\there", "exec token with a tab: fine");
	drop(&cr);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);
}

/* A thread asking for credentials, as each informer's client does. */
struct getter {
	pthread_t thread;
	struct kinf_auth *auth;
	int rc;
	char token[64];
	unsigned generation;
	struct kinf_error e;
};

static void *getter_main(void *userdata) {
	struct getter *g = userdata;
	const struct kinf_credentials *cr;
	g->rc = kinf_auth_get(g->auth, &cr, &g->e);
	if (g->rc == 0) {
		snprintf(g->token, sizeof(g->token), "%s", cr->token ? cr->token : "(none)");
		g->generation = cr->generation;
		kinf_auth_credentials_unref(cr);
	}
	return NULL;
}

/* Wait (at most 10 s) until the plugin has been started n times in all. */
static bool wait_runs(int n) {
	for (int i = 0; i < 1000 && run_count() < n; i++) {
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return run_count() >= n;
}

#define N_GETTERS 4

/*
 * Clients in several threads share one auth: one plugin run serves them
 * all (single-flight), the auth's lock is free while the plugin runs
 * (kinf_auth_unauthorized, which takes it, returns meanwhile), a failed
 * run fails every thread that waited for it, and credentials handed out
 * before stay valid for their holder while others are installed.
 */
static void test_exec_threads(void) {
	struct getter g[N_GETTERS];
	const struct kinf_credentials *held = &no_credentials;
	struct kinf_error e = { 0 };
	struct kinf_rest_config *c;
	struct kinf_auth *auth;
	int same = 0;

	unlink(tmp("count"));
	unlink(tmp("gate"));
	set_mode("token:first");
	c = load_exec((struct exec_opts){ 0 });
	auth = c ? kinf_auth_new(c) : NULL;
	ok(auth && get(auth, &held, &e) == 0 && strcmp(held->token, "first") == 0,
			"threads: a first credential, held");
	if (!auth || held == &no_credentials) {
		drop(&held);
		kinf_auth_free(auth);
		kinf_rest_config_free(c);
		return;
	}
	ok(kinf_auth_unauthorized(auth, held->generation), "threads: it is rejected (401)");

	/* a refresh that blocks until the gate opens */
	set_mode("gate:second");
	for (int i = 0; i < N_GETTERS; i++) {
		g[i] = (struct getter){ .auth = auth };
		pthread_create(&g[i].thread, NULL, getter_main, &g[i]);
	}
	ok(wait_runs(2), "threads: the plugin runs");
	ok(kinf_auth_unauthorized(auth, 0),
			"threads: the auth's lock is free while the plugin runs");
	is_str(held->token, "first", "threads: a held credential is intact during the run");
	write_file(tmp("gate"), "");
	for (int i = 0; i < N_GETTERS; i++) {
		pthread_join(g[i].thread, NULL);
		same += g[i].rc == 0 && strcmp(g[i].token, "second") == 0 &&
			g[i].generation == g[0].generation;
	}
	is_int(same, N_GETTERS, "threads: every thread got the new credential");
	is_int(run_count(), 2, "threads: from one plugin run");
	is_str(held->token, "first", "threads: the held credential outlives its replacement");
	ok(g[0].generation != held->generation, "threads: of a new generation");

	/* a failing refresh: every thread that waited gets its error */
	unlink(tmp("gate"));
	set_mode("gatefail");
	kinf_auth_unauthorized(auth, g[0].generation);
	for (int i = 0; i < N_GETTERS; i++) {
		g[i] = (struct getter){ .auth = auth };
		pthread_create(&g[i].thread, NULL, getter_main, &g[i]);
	}
	ok(wait_runs(3), "threads fail: the plugin runs");
	write_file(tmp("gate"), "");
	same = 0;
	for (int i = 0; i < N_GETTERS; i++) {
		pthread_join(g[i].thread, NULL);
		same += g[i].rc == -KINF_EAUTH &&
			strcmp(g[i].e.message, g[0].e.message) == 0 &&
			strstr(g[i].e.message, "failed: exit status 1") != NULL;
	}
	is_int(same, N_GETTERS, "threads fail: every thread got the error (%s)",
			g[0].e.message);
	is_int(run_count(), 3, "threads fail: from one plugin run");

	unlink(tmp("gate"));
	drop(&held);
	kinf_auth_free(auth);
	kinf_rest_config_free(c);
}

int main(void) {
	const char *dir = getenv("KINF_FIXTURES_DIR");
	char tmpl[] = "/tmp/kinf-test-auth-XXXXXX";
	char cmd[PATH_MAX];

	/* interactiveMode decisions depend on it: never a terminal here */
	if (!freopen("/dev/null", "r", stdin)) {
		printf("Bail out! can't reopen stdin\n");
		return 1;
	}
	if (absdir(dir ? dir : "../fixtures/kubeconfig", fixtures, sizeof(fixtures)) < 0) {
		printf("Bail out! fixtures not found (run in test/unit or set KINF_FIXTURES_DIR)\n");
		return 1;
	}
	if (!mkdtemp(tmpl) || absdir(tmpl, tmpdir, sizeof(tmpdir)) < 0) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	snprintf(plugin, sizeof(plugin), "%s/bin/kinf-test-plugin", fixtures);

	test_static();
	test_token_file();
	test_exec();
	test_exec_errors();
	test_exec_timeout_and_path();
	test_exec_threads();
	test_header_values();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0) {
		printf("# could not remove %s\n", tmpdir);
	}
	return tap_done();
}
