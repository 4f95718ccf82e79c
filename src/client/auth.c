#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "auth.h"
#include "base64.h"
#include "buf.h"
#include "clock.h"
#include "err.h"
#include "header.h"
#include "jsonnum.h"
#include "kubeconfig.h"
#include "log.h"
#include "rfc3339.h"
#include "trim.h"

/*
 * Credentials for requests (client-go's transport config and the exec
 * authenticator in plugin/pkg/client/auth/exec/exec.go). Exec plugins are
 * started with posix_spawn (an argv, never a shell), in their own process
 * group unless they get our terminal, so a timeout can kill the plugin and
 * whatever it started.
 *
 * Threads. Clients in several threads share one auth. Its mutex guards the
 * fields of struct kinf_auth and is held only briefly: never while an exec
 * plugin runs. A refresh is single-flight: the thread that finds the
 * credential missing, expired or rejected marks the auth running, runs
 * the plugin unlocked and installs the result; a thread that needs a
 * credential meanwhile waits on the condition variable for that run's
 * result (it has none it could use), while threads with a request in
 * flight keep the credentials they hold. What is handed out is an
 * immutable struct creds, shared by reference, so installing a new one
 * never pulls memory from under a reader. Interactive plugins (which get
 * our terminal) run one at a time in the process: interactive_lock.
 */

extern char **environ;

/* One set of credentials: immutable once made, shared by reference. */
struct creds {
	struct kinf_credentials pub;	/* first: what kinf_auth_get hands out */
	atomic_uint refs;
	/* Secrets owned here (pub points at these or into the config). */
	char *token;
	char *cert;
	size_t cert_len;
	char *key;
	size_t key_len;
};

struct kinf_auth {
	const struct kinf_rest_config *config;	/* immutable: read unlocked */
	pthread_mutex_t lock;		/* guards the rest */
	pthread_cond_t ran;		/* an exec plugin run ended */
	unsigned generation;
	long exec_timeout_ms;
	struct creds *current;		/* NULL until the first success */

	/* tokenFile: the stat the current token was read with */
	bool file_stat_valid;
	dev_t file_dev;
	ino_t file_ino;
	off_t file_size;
	struct timespec file_mtime;

	/* exec plugin: the last credential it gave is current */
	bool exec_valid;	/* false: run the plugin on the next get */
	bool exec_has_expiry;
	struct timespec exec_expiry;
	bool running;		/* a thread runs the plugin (unlocked) */
	unsigned long runs;	/* runs ended */
	int run_rc;		/* the last run's result, for those who waited */
	struct kinf_error run_err;
};

/* Interactive plugins share our terminal: one at a time in the process. */
static pthread_mutex_t interactive_lock = PTHREAD_MUTEX_INITIALIZER;

static void free_secret_len(char *s, size_t len) {
	if (s) {
		kinf_explicit_bzero(s, len);
		free(s);
	}
}

/* New credentials (one reference): the config's static fields, or none for NULL. */
static struct creds *creds_new(const struct kinf_rest_config *c) {
	struct creds *cr = calloc(1, sizeof(*cr));
	if (!cr) {
		return NULL;
	}
	atomic_init(&cr->refs, 1);
	if (!c) {
		return cr;
	}
	cr->pub.token = c->token;
	cr->pub.client_cert_pem = c->client_cert_pem;
	cr->pub.client_cert_pem_len = c->client_cert_pem_len;
	cr->pub.client_key_pem = c->client_key_pem;
	cr->pub.client_key_pem_len = c->client_key_pem_len;
	cr->pub.username = c->username;
	cr->pub.password = c->password;
	return cr;
}

static void creds_unref(struct creds *cr) {
	if (!cr || atomic_fetch_sub(&cr->refs, 1) != 1) {
		return;
	}
	kinf_free_secret(cr->token);
	free(cr->cert);
	free_secret_len(cr->key, cr->key_len);
	kinf_explicit_bzero(cr, sizeof(*cr));
	free(cr);
}

const struct kinf_credentials *kinf_auth_credentials_unref(
		const struct kinf_credentials *cred) {
	/* pub is the first member: the pointer is the struct creds */
	creds_unref((struct creds *)cred);
	return NULL;
}

/* Make cr current with the next generation (lock held). */
static void install(struct kinf_auth *auth, struct creds *cr) {
	auth->generation++;
	cr->pub.generation = auth->generation;
	creds_unref(auth->current);
	auth->current = cr;
}

struct kinf_auth *kinf_auth_new(const struct kinf_rest_config *config) {
	struct kinf_auth *auth = calloc(1, sizeof(*auth));
	if (!auth) {
		return NULL;
	}
	if (pthread_mutex_init(&auth->lock, NULL) != 0) {
		free(auth);
		return NULL;
	}
	if (pthread_cond_init(&auth->ran, NULL) != 0) {
		pthread_mutex_destroy(&auth->lock);
		free(auth);
		return NULL;
	}
	auth->config = config;
	auth->generation = 1;
	auth->exec_timeout_ms = KINF_AUTH_EXEC_TIMEOUT_MS;
	return auth;
}

void kinf_auth_free(struct kinf_auth *auth) {
	if (!auth) {
		return;
	}
	creds_unref(auth->current);
	pthread_cond_destroy(&auth->ran);
	pthread_mutex_destroy(&auth->lock);
	free(auth);
}

void kinf_auth_set_exec_timeout(struct kinf_auth *auth, long timeout_ms) {
	pthread_mutex_lock(&auth->lock);
	auth->exec_timeout_ms = timeout_ms > 0 ? timeout_ms : KINF_AUTH_EXEC_TIMEOUT_MS;
	pthread_mutex_unlock(&auth->lock);
}

static bool same_str(const char *a, const char *b) {
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_mem(const char *a, size_t alen, const char *b, size_t blen) {
	return alen == blen && (alen == 0 || (a && b && memcmp(a, b, alen) == 0));
}

/* ---- token file ---- */

static int read_all_fd(int fd, struct kinf_buf *b, size_t max) {
	for (;;) {
		ssize_t n;
		int r = kinf_buf_reserve(b, 4096);
		if (r < 0) {
			return r;
		}
		n = read(fd, b->data + b->len, b->cap - b->len - 1);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -KINF_EIO;
		}
		if (n == 0) {
			return 0;
		}
		b->len += (size_t)n;
		b->data[b->len] = '\0';
		if (b->len > max) {
			return -KINF_ETOOBIG;
		}
	}
}

/*
 * Re-read the token file when its identity, size or mtime changed (one
 * stat per call; the lock is held, as reading a local file is quick). A
 * failure keeps a token read before, as client-go's cachedFileTokenSource
 * does; with none it is an error.
 */
static int refresh_token_file(struct kinf_auth *auth, struct kinf_error *reterr) {
	const char *path = auth->config->token_file;
	struct kinf_buf b = { 0 };
	struct stat st;
	size_t token_len;
	char *token;
	int fd, r = 0;

	if (stat(path, &st) < 0) {
		r = kinf_error_set(reterr, KINF_EAUTH, "unable to read token file %s: %s", path,
				strerror(errno));
		goto fail;
	}
	if (auth->file_stat_valid && auth->current && st.st_dev == auth->file_dev &&
			st.st_ino == auth->file_ino && st.st_size == auth->file_size &&
			st.st_mtim.tv_sec == auth->file_mtime.tv_sec &&
			st.st_mtim.tv_nsec == auth->file_mtime.tv_nsec) {
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = kinf_error_set(reterr, KINF_EAUTH, "unable to read token file %s: %s", path,
				strerror(errno));
		goto fail;
	}
	/* stat what we read, so a file replaced meanwhile is read again */
	if (fstat(fd, &st) < 0 || (r = read_all_fd(fd, &b, 1u << 20)) < 0) {
		close(fd);
		if (b.data) {
			kinf_explicit_bzero(b.data, b.len);
		}
		kinf_buf_release(&b);
		if (r == -KINF_ENOMEM) {
			return r;
		}
		r = kinf_error_set(reterr, KINF_EAUTH, "unable to read token file %s: %s", path,
				r == -KINF_ETOOBIG ? "file too large" : strerror(errno));
		goto fail;
	}
	close(fd);
	token = kinf_trim_space_dup(b.data ? b.data : "", b.len, &token_len);
	if (b.data) {
		kinf_explicit_bzero(b.data, b.len);
	}
	kinf_buf_release(&b);
	if (!token) {
		return -KINF_ENOMEM;
	}
	if (!token_len) {
		free(token);
		r = kinf_error_set(reterr, KINF_EAUTH, "read empty token from file %s", path);
		goto fail;
	}
	{
		char what[256];
		snprintf(what, sizeof(what), "the token in file %s", path);
		r = kinf_header_value_check(token, token_len, what, KINF_EAUTH, reterr);
		if (r < 0) {
			kinf_free_secret(token);
			goto fail;
		}
	}
	auth->file_dev = st.st_dev;
	auth->file_ino = st.st_ino;
	auth->file_size = st.st_size;
	auth->file_mtime = st.st_mtim;
	auth->file_stat_valid = true;
	if (auth->current && same_str(token, auth->current->token)) {
		kinf_free_secret(token);
		return 0;
	}
	struct creds *cr = creds_new(auth->config);
	if (!cr) {
		kinf_free_secret(token);
		auth->file_stat_valid = false;
		return -KINF_ENOMEM;
	}
	if (auth->current) {
		kinf_log(2, "token file %s changed", path);
	}
	cr->token = token;
	cr->pub.token = token;
	install(auth, cr);
	return 0;
fail:
	if (auth->current) {
		kinf_log(1, "%s; using the token read before", reterr ? reterr->message : path);
		kinf_error_clear(reterr);
		return 0;
	}
	return r;
}

/* ---- exec plugin ---- */

/* The KUBERNETES_EXEC_INFO value: an ExecCredential with only a spec. */
static char *exec_info(const struct kinf_rest_config *c, bool interactive) {
	json_t *root = json_object(), *spec = json_object(), *cluster = NULL;
	char *out = NULL;
	int bad = !root || !spec;

	bad |= json_object_set_new(root, "apiVersion", json_string(c->exec->api_version)) < 0;
	bad |= json_object_set_new(root, "kind", json_string("ExecCredential")) < 0;
	bad |= json_object_set_new(spec, "interactive", json_boolean(interactive)) < 0;
	if (c->exec->provide_cluster_info) {
		cluster = json_object();
		bad |= !cluster;
		bad |= json_object_set_new(cluster, "server", json_string(c->server)) < 0;
		if (c->tls_server_name) {
			bad |= json_object_set_new(cluster, "tls-server-name",
					json_string(c->tls_server_name)) < 0;
		}
		if (c->insecure_skip_tls_verify) {
			bad |= json_object_set_new(cluster, "insecure-skip-tls-verify",
					json_true()) < 0;
		}
		if (c->ca_pem && c->ca_pem_len) {
			char *b64 = kinf_base64_encode(c->ca_pem, c->ca_pem_len, KINF_BASE64_STD);
			bad |= !b64 || json_object_set_new(cluster, "certificate-authority-data",
					json_string(b64)) < 0;
			free(b64);
		}
		if (c->proxy_url) {
			bad |= json_object_set_new(cluster, "proxy-url", json_string(c->proxy_url)) < 0;
		}
		if (c->disable_compression) {
			bad |= json_object_set_new(cluster, "disable-compression", json_true()) < 0;
		}
		if (c->exec->cluster_config_json) {
			json_t *cfg = json_loads(c->exec->cluster_config_json, JSON_DECODE_ANY, NULL);
			bad |= !cfg || json_object_set_new(cluster, "config", cfg) < 0;
		}
		bad |= json_object_set_new(spec, "cluster", cluster) < 0;
	}
	bad |= json_object_set(root, "spec", spec) < 0;
	if (!bad) {
		out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	}
	json_decref(spec);
	json_decref(root);
	return out;
}

/* Set NAME=value in an environment vector, replacing an earlier NAME. */
static int env_set(struct kinf_strv *env, const char *name, const char *value) {
	size_t n = strlen(name);
	struct kinf_buf b = { 0 };

	for (size_t i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=') {
			kinf_free_secret(env->v[i]);
			memmove(&env->v[i], &env->v[i + 1], (env->n - i) * sizeof(char *));
			env->n--;
			break;
		}
	}
	if (kinf_buf_printf(&b, "%s=%s", name, value) < 0) {
		kinf_buf_release(&b);
		return -KINF_ENOMEM;
	}
	return kinf_strv_push_take(env, kinf_buf_take(&b));
}

/* exec.LookPath: a name without '/' is searched in $PATH ("" means "."). */
static char *look_path(const char *cmd) {
	const char *path = getenv("PATH");
	struct kinf_buf b = { 0 };
	struct stat st;

	if (strchr(cmd, '/')) {
		if (stat(cmd, &st) == 0 && S_ISREG(st.st_mode) && access(cmd, X_OK) == 0) {
			return strdup(cmd);
		}
		return NULL;
	}
	if (!path) {
		path = "/usr/local/bin:/usr/bin:/bin";
	}
	for (const char *p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		kinf_buf_reset(&b);
		if (kinf_buf_printf(&b, "%.*s/%s", n ? (int)n : 1, n ? p : ".", cmd) < 0) {
			break;
		}
		if (stat(b.data, &st) == 0 && S_ISREG(st.st_mode) && access(b.data, X_OK) == 0) {
			return kinf_buf_take(&b);
		}
		if (!colon) {
			break;
		}
		p = colon + 1;
	}
	kinf_buf_release(&b);
	return NULL;
}

static void release_env(struct kinf_strv *env) {
	for (size_t i = 0; i < env->n; i++) {
		kinf_explicit_bzero(env->v[i], strlen(env->v[i]));
	}
	kinf_strv_release(env);
}

struct run {
	pid_t pid;
	bool own_group;
	int out_fd;
};

static void run_kill(struct run *run) {
	int status;
	kill(run->own_group ? -run->pid : run->pid, SIGKILL);
	while (waitpid(run->pid, &status, 0) < 0 && errno == EINTR) {
	}
}

/*
 * Read the plugin's stdout to EOF and reap it, both before the deadline.
 * Returns 0 with *ret_status, or a negative code after killing it.
 */
static int run_collect(struct run *run, long long deadline, struct kinf_buf *out,
		int *ret_status) {
	bool eof = false;
	int r;

	while (!eof) {
		struct pollfd pfd = { .fd = run->out_fd, .events = POLLIN };
		long long left = deadline - kinf_clock_now_ms();
		ssize_t n;

		if (left <= 0) {
			run_kill(run);
			return -KINF_ETIMEDOUT;
		}
		r = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (r < 0 && errno != EINTR) {
			run_kill(run);
			return -KINF_EIO;
		}
		if (r <= 0) {
			continue;
		}
		if ((r = kinf_buf_reserve(out, 4096)) < 0) {
			run_kill(run);
			return r;
		}
		n = read(run->out_fd, out->data + out->len, out->cap - out->len - 1);
		if (n < 0 && errno != EINTR && errno != EAGAIN) {
			run_kill(run);
			return -KINF_EIO;
		}
		if (n == 0) {
			eof = true;
		} else if (n > 0) {
			out->len += (size_t)n;
			out->data[out->len] = '\0';
			if (out->len > KINF_AUTH_EXEC_MAX_OUTPUT) {
				run_kill(run);
				return -KINF_ETOOBIG;
			}
		}
	}
	for (;;) {
		pid_t w = waitpid(run->pid, ret_status, WNOHANG);
		if (w == run->pid) {
			return 0;
		}
		if (w < 0 && errno != EINTR) {
			return -KINF_EIO;
		}
		if (kinf_clock_now_ms() >= deadline) {
			run_kill(run);
			return -KINF_ETIMEDOUT;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
}

static int exec_error(const struct kinf_exec_config *e, struct kinf_error *reterr,
		const char *what) {
	if (e->install_hint && *e->install_hint) {
		return kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\" %s (%s)", e->command,
				what, e->install_hint);
	}
	return kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\" %s", e->command, what);
}

/* Start the plugin and collect its output; stderr is left as ours. */
static int exec_spawn(const struct kinf_rest_config *config, long timeout,
		struct kinf_buf *out, struct kinf_error *reterr) {
	const struct kinf_exec_config *e = config->exec;
	struct kinf_strv env = { 0 }, argv = { 0 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	struct run run = { .pid = -1, .out_fd = -1 };
	bool interactive = false, fa_init = false, attr_init = false;
	char *path = NULL, *info = NULL, msg[64];
	int pipefd[2] = { -1, -1 };
	int status = 0, r;
	sigset_t sigs;
	short flags;

	if (strcmp(e->interactive_mode, "IfAvailable") == 0) {
		interactive = isatty(STDIN_FILENO);
	} else if (strcmp(e->interactive_mode, "Always") == 0) {
		if (!isatty(STDIN_FILENO)) {
			return kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\": interactiveMode "
					"is Always but standard input is not a terminal", e->command);
		}
		interactive = true;
	}

	path = look_path(e->command);
	if (!path) {
		return exec_error(e, reterr, strchr(e->command, '/') ?
				"failed: no such executable file" : "failed: executable not found in $PATH");
	}

	r = -KINF_ENOMEM;
	for (char **p = environ; p && *p; p++) {
		if (kinf_strv_push_str(&env, *p) < 0) {
			goto out;
		}
	}
	for (size_t i = 0; i < e->n_env; i++) {
		if (env_set(&env, e->env[i].name, e->env[i].value) < 0) {
			goto out;
		}
	}
	info = exec_info(config, interactive);
	if (!info || env_set(&env, "KUBERNETES_EXEC_INFO", info) < 0) {
		goto out;
	}
	if (kinf_strv_push_str(&argv, e->command) < 0) {
		goto out;
	}
	for (char **a = e->args; a && *a; a++) {
		if (kinf_strv_push_str(&argv, *a) < 0) {
			goto out;
		}
	}

	if (pipe(pipefd) < 0) {
		r = kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\": pipe: %s", e->command,
				strerror(errno));
		goto out;
	}
	fcntl(pipefd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pipefd[1], F_SETFD, FD_CLOEXEC);

	if (posix_spawn_file_actions_init(&fa) != 0) {
		goto out;
	}
	fa_init = true;
	if (posix_spawnattr_init(&attr) != 0) {
		goto out;
	}
	attr_init = true;
	if (posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO) != 0 ||
			(!interactive && posix_spawn_file_actions_addopen(&fa, STDIN_FILENO,
					"/dev/null", O_RDONLY, 0) != 0)) {
		goto out;
	}
	/* the plugin starts with default signal handling and nothing blocked */
	flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	sigemptyset(&sigs);
	posix_spawnattr_setsigmask(&attr, &sigs);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGPIPE);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGCHLD);
	posix_spawnattr_setsigdefault(&attr, &sigs);
	if (!interactive) {
		/* its own process group, so a timeout kills its children too */
		flags |= POSIX_SPAWN_SETPGROUP;
		posix_spawnattr_setpgroup(&attr, 0);
		run.own_group = true;
	}
	posix_spawnattr_setflags(&attr, flags);

	if (interactive) {
		/* the terminal is one: another context's login waits its turn */
		pthread_mutex_lock(&interactive_lock);
	}
	kinf_log(2, "running exec plugin %s", path);
	r = posix_spawn(&run.pid, path, &fa, &attr, argv.v, env.v);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (r != 0) {
		if (interactive) {
			pthread_mutex_unlock(&interactive_lock);
		}
		snprintf(msg, sizeof(msg), "failed: %s", strerror(r));
		r = exec_error(e, reterr, msg);
		goto out;
	}
	run.out_fd = pipefd[0];
	if (interactive && timeout < KINF_AUTH_EXEC_INTERACTIVE_TIMEOUT_MS) {
		timeout = KINF_AUTH_EXEC_INTERACTIVE_TIMEOUT_MS;
	}
	r = run_collect(&run, kinf_clock_now_ms() + timeout, out, &status);
	if (interactive) {
		pthread_mutex_unlock(&interactive_lock);
	}
	if (r == -KINF_ETIMEDOUT) {
		r = kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\" timed out after %ld ms "
				"and was killed", e->command, timeout);
	} else if (r == -KINF_ETOOBIG) {
		r = kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\": more than %u bytes "
				"of output", e->command, KINF_AUTH_EXEC_MAX_OUTPUT);
	} else if (r == -KINF_EIO) {
		r = kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\": reading its output: %s",
				e->command, strerror(errno));
	} else if (r == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		snprintf(msg, sizeof(msg), "failed: exit status %d", WEXITSTATUS(status));
		r = exec_error(e, reterr, msg);
	} else if (r == 0 && WIFSIGNALED(status)) {
		snprintf(msg, sizeof(msg), "failed: killed by signal %d", WTERMSIG(status));
		r = exec_error(e, reterr, msg);
	}
out:
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
	}
	if (pipefd[1] >= 0) {
		close(pipefd[1]);
	}
	if (fa_init) {
		posix_spawn_file_actions_destroy(&fa);
	}
	if (attr_init) {
		posix_spawnattr_destroy(&attr);
	}
	release_env(&env);
	kinf_strv_release(&argv);
	free(info);
	free(path);
	return r;
}

static int cred_error(const struct kinf_exec_config *e, struct kinf_error *reterr,
		const char *fmt, const char *a, const char *b) {
	char msg[256];
	snprintf(msg, sizeof(msg), fmt, a, b);
	return kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\": %s", e->command, msg);
}

static void wipe_json_string(json_t *s) {
	/* jansson owns the bytes; zero them before it frees them */
	if (json_is_string(s)) {
		kinf_explicit_bzero((char *)json_string_value(s), json_string_length(s));
	}
}

/* What one run of the plugin gave. */
struct exec_result {
	struct creds *creds;	/* a reference */
	bool has_expiry;
	struct timespec expiry;
};

/*
 * Decode an ExecCredential strictly: same apiVersion, kind ExecCredential,
 * status with a token or a certificate and key, optional expiry.
 */
static int exec_parse(const struct kinf_exec_config *e, const char *data, size_t len,
		struct exec_result *ret, struct kinf_error *reterr) {
	json_t *root, *status, *v, *token, *cert, *key, *exp;
	char *new_token = NULL, *new_cert = NULL, *new_key = NULL;
	size_t new_cert_len = 0, new_key_len = 0;
	struct timespec expiry = { 0 };
	bool has_expiry = false;
	json_error_t jerr = {0};
	int r;

	root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		/*
		 * jansson quotes the input "near '...'": that may be the token
		 * itself (plugins that print a bare token), so say where only.
		 */
		char *near = strstr(jerr.text, " near ");
		if (near) {
			*near = '\0';
		}
		r = len == 0 ? cred_error(e, reterr, "decoding stdout: %s%s", "no output", "") :
			kinf_jsonnum_load_error(data, len, JSON_REJECT_DUPLICATES, &jerr, NULL) ==
				-KINF_ENOMEM ? kinf_error_set(reterr, KINF_ENOMEM, "out of memory") :
			kinf_error_set(reterr, KINF_EAUTH, "exec plugin \"%s\": decoding stdout: "
				"line %d, column %d: %s", e->command, jerr.line, jerr.column,
				jerr.text);
		kinf_explicit_bzero(&jerr, sizeof(jerr));
		return r;
	}
	if (!json_is_object(root)) {
		r = cred_error(e, reterr, "decoding stdout: %s%s", "not a JSON object", "");
		goto out;
	}
	v = json_object_get(root, "kind");
	if (!json_is_string(v) || strcmp(json_string_value(v), "ExecCredential") != 0) {
		r = cred_error(e, reterr, "decoding stdout: kind is %s%s, want ExecCredential",
				json_is_string(v) ? json_string_value(v) : "missing", "");
		goto out;
	}
	v = json_object_get(root, "apiVersion");
	if (!json_is_string(v) || strcmp(json_string_value(v), e->api_version) != 0) {
		r = cred_error(e, reterr, "plugin is configured to use API version %s, plugin "
				"returned version %s", e->api_version,
				json_is_string(v) ? json_string_value(v) : "(none)");
		goto out;
	}
	status = json_object_get(root, "status");
	if (!json_is_object(status)) {
		r = cred_error(e, reterr, "didn't return a status field%s%s", "", "");
		goto out;
	}
	token = json_object_get(status, "token");
	cert = json_object_get(status, "clientCertificateData");
	key = json_object_get(status, "clientKeyData");
	exp = json_object_get(status, "expirationTimestamp");
	if ((token && !json_is_string(token) && !json_is_null(token)) ||
			(cert && !json_is_string(cert) && !json_is_null(cert)) ||
			(key && !json_is_string(key) && !json_is_null(key)) ||
			(exp && !json_is_string(exp) && !json_is_null(exp))) {
		r = cred_error(e, reterr, "decoding stdout: %s%s",
				"status fields must be strings", "");
		goto out;
	}
	if (json_is_string(token) && !json_string_length(token)) {
		token = NULL;
	}
	if (json_is_string(cert) && !json_string_length(cert)) {
		cert = NULL;
	}
	if (json_is_string(key) && !json_string_length(key)) {
		key = NULL;
	}
	if (!json_is_string(token) && !json_is_string(cert) && !json_is_string(key)) {
		r = cred_error(e, reterr, "didn't return a token or cert/key pair%s%s", "", "");
		goto out;
	}
	if (json_is_string(cert) != json_is_string(key)) {
		r = cred_error(e, reterr, "returned only certificate or key, not both%s%s", "", "");
		goto out;
	}
	if (json_is_string(token)) {
		char what[320];
		snprintf(what, sizeof(what), "exec plugin \"%s\": the token it printed",
				e->command);
		r = kinf_header_value_check(json_string_value(token), json_string_length(token),
				what, KINF_EAUTH, reterr);
		if (r < 0) {
			goto out;
		}
	}
	if (json_is_string(exp)) {
		if (kinf_rfc3339_parse(json_string_value(exp), &expiry) < 0) {
			r = cred_error(e, reterr, "invalid expirationTimestamp \"%s\"%s",
					json_string_value(exp), "");
			goto out;
		}
		has_expiry = true;
	}

	r = -KINF_ENOMEM;
	if (json_is_string(token) && !(new_token = strdup(json_string_value(token)))) {
		goto out;
	}
	if (json_is_string(cert)) {
		new_cert_len = json_string_length(cert);
		new_key_len = json_string_length(key);
		new_cert = malloc(new_cert_len + 1);
		new_key = malloc(new_key_len + 1);
		if (!new_cert || !new_key) {
			goto out;
		}
		memcpy(new_cert, json_string_value(cert), new_cert_len + 1);
		memcpy(new_key, json_string_value(key), new_key_len + 1);
	}

	struct creds *cr = creds_new(NULL);
	if (!cr) {
		goto out;
	}
	cr->pub.token = cr->token = new_token;
	cr->pub.client_cert_pem = cr->cert = new_cert;
	cr->pub.client_cert_pem_len = cr->cert_len = new_cert_len;
	cr->pub.client_key_pem = cr->key = new_key;
	cr->pub.client_key_pem_len = cr->key_len = new_key_len;
	new_token = new_cert = new_key = NULL;
	ret->creds = cr;
	ret->has_expiry = has_expiry;
	ret->expiry = expiry;
	r = 0;
out:
	kinf_free_secret(new_token);
	free(new_cert);
	free_secret_len(new_key, new_key_len);
	if (json_is_object(root)) {
		status = json_object_get(root, "status");
		wipe_json_string(json_object_get(status, "token"));
		wipe_json_string(json_object_get(status, "clientKeyData"));
	}
	json_decref(root);
	return r;
}

static bool exec_expired(const struct kinf_auth *auth) {
	struct timespec now;

	if (!auth->exec_has_expiry) {
		return false;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec > auth->exec_expiry.tv_sec ||
		(now.tv_sec == auth->exec_expiry.tv_sec && now.tv_nsec > auth->exec_expiry.tv_nsec);
}

/* Run the plugin (no lock held) and decode what it printed. */
static int exec_run(const struct kinf_rest_config *config, long timeout,
		struct exec_result *ret, struct kinf_error *reterr) {
	struct kinf_buf out = { 0 };
	int r;

	r = exec_spawn(config, timeout, &out, reterr);
	if (r == 0) {
		r = exec_parse(config->exec, out.data ? out.data : "", out.len, ret, reterr);
	}
	if (out.data) {
		kinf_explicit_bzero(out.data, out.cap);
	}
	kinf_buf_release(&out);
	return r;
}

/* Install a run's credential (lock held): a new generation only when it changed. */
static void exec_install(struct kinf_auth *auth, struct exec_result *res) {
	struct creds *cur = auth->current, *cr = res->creds;
	if (cur && same_str(cr->token, cur->token) &&
			same_mem(cr->cert, cr->cert_len, cur->cert, cur->cert_len) &&
			same_mem(cr->key, cr->key_len, cur->key, cur->key_len)) {
		creds_unref(cr);
	} else {
		install(auth, cr);
	}
	auth->exec_has_expiry = res->has_expiry;
	auth->exec_expiry = res->expiry;
	auth->exec_valid = true;
}

/*
 * Make auth->current a credential the plugin gave that is neither expired
 * nor rejected (lock held on entry and return, released while the plugin
 * runs). Single-flight: with a run under way, wait for its result.
 */
static int exec_refresh(struct kinf_auth *auth, struct kinf_error *reterr) {
	struct exec_result res = { 0 };
	struct kinf_error err = { 0 };
	int r;

	while (!auth->current || !auth->exec_valid || exec_expired(auth)) {
		if (!auth->running) {
			goto run;
		}
		unsigned long runs = auth->runs;
		while (auth->running) {
			pthread_cond_wait(&auth->ran, &auth->lock);
		}
		if (auth->runs != runs) {
			/* the run waited for: its result, as the thread that ran it got */
			if (auth->run_rc < 0 && reterr) {
				*reterr = auth->run_err;
			}
			return auth->run_rc;
		}
	}
	return 0;
run:
	auth->running = true;
	auth->exec_valid = false;
	long timeout = auth->exec_timeout_ms;
	pthread_mutex_unlock(&auth->lock);
	r = exec_run(auth->config, timeout, &res, &err);
	pthread_mutex_lock(&auth->lock);
	if (r == 0) {
		exec_install(auth, &res);
	}
	auth->running = false;
	auth->runs++;
	auth->run_rc = r;
	auth->run_err = err;
	pthread_cond_broadcast(&auth->ran);
	if (r < 0 && reterr) {
		*reterr = err;
	}
	return r;
}

int kinf_auth_get(struct kinf_auth *auth, const struct kinf_credentials **ret,
		struct kinf_error *reterr) {
	const struct kinf_rest_config *c = auth->config;
	int r = 0;

	pthread_mutex_lock(&auth->lock);
	if (c->exec) {
		r = exec_refresh(auth, reterr);
	} else if (c->token_file) {
		r = refresh_token_file(auth, reterr);
	} else if (!auth->current) {
		struct creds *cr = creds_new(c);
		if (cr) {
			install(auth, cr);
		} else {
			r = -KINF_ENOMEM;
		}
	}
	if (r == 0) {
		atomic_fetch_add(&auth->current->refs, 1);
		*ret = &auth->current->pub;
	}
	pthread_mutex_unlock(&auth->lock);
	return r;
}

bool kinf_auth_unauthorized(struct kinf_auth *auth, unsigned generation) {
	const struct kinf_rest_config *c = auth->config;
	bool retry = false;

	pthread_mutex_lock(&auth->lock);
	if (c->exec) {
		/* maybeRefreshCreds: only if nobody rotated them meanwhile */
		if (generation == auth->generation) {
			auth->exec_valid = false;
		}
		retry = true;
	} else if (c->token_file) {
		auth->file_stat_valid = false;
		retry = true;
	}
	pthread_mutex_unlock(&auth->lock);
	return retry;
}
