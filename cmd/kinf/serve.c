#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildinfo.h"
#include "clock.h"
#include "http.h"
#include "kindcols.h"
#include "kubeconfig_write.h"
#include "serve.h"
#include "session.h"
#include "tls.h"

static const char serve_usage[] =
	"Usage: kinf serve RESOURCE[,RESOURCE...] [OPTIONS]\n"
	"\n"
	"Run the informers (as kinf watch does: -n, -A, --context, -l and\n"
	"--field-selector choose what they cache) and answer a read-only subset of\n"
	"the Kubernetes API from their caches: discovery, get, list (selectors,\n"
	"limit and continue, Tables for kubectl get) and watch (from a\n"
	"resourceVersion within a window of recent events, bookmarks). /version,\n"
	"/openapi/v2 and /openapi/v3, and namespaces (kubectl asks for them to\n"
	"word a NotFound) are the upstream's, asked for each time. Writes get\n"
	"405; other reads 404, or go to the upstream with --pass-through. While\n"
	"an upstream is away the cache keeps answering, with a Warning header,\n"
	"and /readyz says why it is not ready. Runs until SIGINT or SIGTERM (or\n"
	"--timeout).\n"
	"\n"
	"Every TCP listener speaks TLS and requires a bearer token, both made at\n"
	"start; --write-kubeconfig writes them, with the address, for kubectl.\n"
	"Whoever holds the token reads what the upstream identity may read.\n"
	"\n"
	"Examples:\n"
	"  kinf serve pods,deployments -A --write-kubeconfig ~/.kube/kinf.yaml\n"
	"  KUBECONFIG=~/.kube/kinf.yaml kubectl get pods -l app=web\n"
	"  curl --unix-socket $XDG_RUNTIME_DIR/kinf/serve.sock http://kinf/api/v1/pods\n"
	"\n"
	"Serve options:\n"
	"      --listen ADDR              unix:PATH or tcp:HOST:PORT, repeatable (default\n"
	"                                 unix:$XDG_RUNTIME_DIR/kinf/serve.sock and\n"
	"                                 tcp:127.0.0.1:0, a free port)\n"
	"      --write-kubeconfig FILE    write a kubeconfig (mode 0600) for the first\n"
	"                                 TCP listener (https, serve's CA, the token):\n"
	"                                 a context per upstream context (its\n"
	"                                 namespace: -n's, else the upstream context's)\n"
	"      --pass-through             forward every other read (get, list, watch,\n"
	"                                 pods/log, discovery...) to the upstream with\n"
	"                                 serve's credentials: its clients may then read\n"
	"                                 whatever serve's identity may read\n"
	"      --window N                 events kept per resource for watches from a\n"
	"                                 resourceVersion (default 10000); older: 410\n"
	"      --max-lag N                unsent events a watch client may have; past\n"
	"                                 them it must read within every 2 s or it is\n"
	"                                 ended with 410 Expired (default 1000, at most\n"
	"                                 the window)\n"
	"      --bookmark-interval DURATION  between BOOKMARK events (default 1m)\n"
	"\n"
	"Informer options:\n"
	"      --resync DURATION          resync period (0: off)\n"
	"      --watch-list               streaming initial list (sendInitialEvents),\n"
	"                                 with fallback\n"
	"      --timeout DURATION         stop after this long, exit status 0\n"
	"      --stats                    print counters to stderr at exit\n"
	"\n";

enum {
	OPT_LISTEN = OPT_CMD_FIRST,
	OPT_WRITE_KUBECONFIG,
	OPT_WINDOW,
	OPT_MAX_LAG,
	OPT_BOOKMARK_INTERVAL,
	OPT_PASS_THROUGH,
};

static const struct option serve_options[] = {
	CLI_COMMON_OPTIONS,
	{ "resync", required_argument, NULL, OPT_RESYNC },
	{ "watch-list", no_argument, NULL, OPT_WATCH_LIST },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "write-kubeconfig", required_argument, NULL, OPT_WRITE_KUBECONFIG },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "max-lag", required_argument, NULL, OPT_MAX_LAG },
	{ "bookmark-interval", required_argument, NULL, OPT_BOOKMARK_INTERVAL },
	{ "pass-through", no_argument, NULL, OPT_PASS_THROUGH },
	{ NULL, 0, NULL, 0 },
};

/* An upstream's state as the informers' thread sees it (for the log and /readyz). */
struct upstream {
	struct kinf_informer *informer;	/* set before the informers start */
	atomic_bool down;
	atomic_ulong errors_at;		/* the informer's error count when it went down */
	unsigned long watches_at, lists_at, events_at;
	long long since_ms;
};

struct serve {
	struct cli cli;
	struct session_opts so;
	struct session *session;
	struct kinf_serve *srv;
	const char *listen[CLI_MAX_LIST_ARGS];
	size_t n_listen;
	const char *kubeconfig_out;
	size_t window, max_lag;
	long bookmark_ms;
	bool pass_through;
	char *token;
	struct kinf_tls *tls;
	char *default_socket;
	size_t n_members;
	bool *synced;
	struct upstream *up;
	pthread_mutex_t lock;		/* guards up[].*_at and since_ms */
	/*
	 * What a reflector thread's callback could not hand over (0 or
	 * -KINF_ENOMEM): the cache would no longer say what the upstream
	 * said, so the informers' thread stops serve with it.
	 */
	atomic_int lost;
	atomic_bool run_failed;		/* kinf_serve_run() failed (and said so) */
	const char *resource;		/* argv's RESOURCE[,RESOURCE...] */
	int n_pos;			/* arguments after the options */
	bool help;			/* --help was printed */
};

static void log_line(const char *line, void *userdata) {
	(void)userdata;
	cli_printf_safe(stderr, "kinf: serve: %s", line);
}

/* A warning of a member's list or watch: serve's answers from it carry it. */
static void on_warning(size_t member, const char *text, size_t len, void *userdata) {
	struct serve *sv = userdata;
	int rc = kinf_serve_upstream_warning(sv->srv, member, text, len);
	if (rc < 0) {
		atomic_store(&sv->lost, rc);
	}
}

/* A reflector retries: its upstream is away (logged once, by the server). */
static void on_retry(size_t member, int rc, const struct kinf_error *err, void *userdata) {
	struct serve *sv = userdata;
	struct upstream *u = &sv->up[member];
	struct kinf_informer_stats st;
	char why[600];

	/* A reflector thread: only what setup() left and the informer's own stats. */
	kinf_informer_get_stats(u->informer, &st);
	pthread_mutex_lock(&sv->lock);
	atomic_store(&u->errors_at, st.source.errors);
	u->watches_at = st.source.watches;
	u->lists_at = st.source.lists;
	u->events_at = st.source.events;
	u->since_ms = kinf_clock_now_ms();
	pthread_mutex_unlock(&sv->lock);
	snprintf(why, sizeof(why), "%s%s%s", err && err->message[0] ? err->message : kinf_strerror(rc),
			err && err->http_status ? " " : "", err && err->http_status ? err->reason : "");
	atomic_store(&u->down, true);
	int lost = kinf_serve_upstream(sv->srv, member, false, why);	/* logged once per change */
	if (lost < 0) {
		atomic_store(&sv->lost, lost);
	}
}

/*
 * Whether a member that went down is back: it listed or received events
 * since, or a watch it opened since has stayed open 3 s without an error.
 */
static int check_upstreams(struct serve *sv) {
	for (size_t i = 0; i < sv->n_members; i++) {
		struct upstream *u = &sv->up[i];
		struct kinf_informer_stats st;
		if (!atomic_load(&u->down)) {
			continue;
		}
		kinf_informer_get_stats(u->informer, &st);
		pthread_mutex_lock(&sv->lock);
		bool back = st.source.errors == atomic_load(&u->errors_at) &&
			(st.source.lists > u->lists_at || st.source.events > u->events_at ||
			(st.source.watches > u->watches_at && kinf_clock_now_ms() - u->since_ms > 3000));
		pthread_mutex_unlock(&sv->lock);
		if (back) {
			atomic_store(&u->down, false);
			int rc = kinf_serve_upstream(sv->srv, i, true, NULL);
			if (rc < 0) {
				return rc;
			}
		}
	}
	return 0;
}

/* 0 or -KINF_ENOMEM (the server could not be told). */
static int mark_synced(struct serve *sv, size_t member) {
	struct session_member_info mi;
	if (sv->synced[member]) {
		return 0;
	}
	session_member_info(sv->session, member, &mi);
	if (mi.failed) {
		/* Failed for good (session printed it): answered 503, not waited for. */
		sv->synced[member] = true;
		return kinf_serve_failed(sv->srv, member, mi.failed);
	} else if (mi.synced) {
		/* Not the informer's own has_synced: its pump may have popped
		 * the list's end before this thread published it. */
		sv->synced[member] = true;
		return kinf_serve_synced(sv->srv, member);
	}
	return 0;
}

static void *run_loop(void *arg) {
	struct serve *sv = arg;
	struct kinf_error err = {0};
	int rc = kinf_serve_run(sv->srv, &err);
	if (rc < 0) {
		cli_printf_safe(stderr, "kinf: serve: %s", err.message[0] ? err.message :
				kinf_strerror(rc));
		/* The informers' thread ends with it (status 1), not a server gone quiet. */
		atomic_store(&sv->run_failed, true);
	}
	return NULL;
}

/*
 * The default socket: $XDG_RUNTIME_DIR/kinf/serve.sock, else
 * /tmp/kinf-UID/serve.sock, whose directory must be ours and private.
 */
static int default_socket(struct serve *sv) {
	/* The path the clients' --server unix: looks at: one place decides it. */
	char *path = cli_serve_default_socket();
	struct kinf_buf b = {0};
	struct stat st;

	if (!path) {
		return cli_error(&sv->cli, -KINF_ENOMEM, NULL, NULL);
	}
	*strrchr(path, '/') = '\0';	/* its directory */
	if (lstat(path, &st) == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
			(st.st_mode & 077))) {
		fprintf(stderr, "kinf: serve: %s is not a directory of mode 0700 owned by you; "
				"pass --listen unix:PATH\n", path);
		free(path);
		return EXIT_ERROR;
	}
	kinf_buf_putf(&b, "unix:%s/serve.sock", path);
	free(path);
	sv->default_socket = kinf_buf_take(&b);
	if (!sv->default_socket) {
		return cli_error(&sv->cli, -KINF_ENOMEM, NULL, NULL);
	}
	sv->listen[sv->n_listen++] = sv->default_socket;
	sv->listen[sv->n_listen++] = "tcp:127.0.0.1:0";
	return EXIT_OK;
}

/* The kubeconfig namespace of upstream context name (NULL: the unnamed one), or NULL. */
static const char *context_namespace(struct serve *sv, const char *name) {
	for (size_t i = 0; i < sv->n_members; i++) {
		struct session_member_info mi;
		session_member_info(sv->session, i, &mi);
		if ((!name && !mi.context) || (name && mi.context && strcmp(name, mi.context) == 0)) {
			return mi.context_namespace;
		}
	}
	return NULL;
}

/*
 * --write-kubeconfig: a context (and cluster) per upstream context, named
 * as it, at the first TCP listener's https URL (plus /clusters/NAME for
 * the others) with serve's CA, and one user with the token.
 */
static int write_kubeconfig(struct serve *sv) {
	const char *url = NULL;
	struct kinf_error err = {0};
	for (size_t i = 0; kinf_serve_address(sv->srv, i) && !url; i++) {
		url = kinf_serve_url(sv->srv, i);
	}
	if (!url) {
		fprintf(stderr, "kinf: serve: --write-kubeconfig needs a tcp: listener\n");
		return EXIT_USAGE;
	}
	size_t n = kinf_serve_n_contexts(sv->srv);
	struct kinf_kubeconfig_entry *entries = calloc(n, sizeof(*entries));
	char **servers = calloc(n, sizeof(*servers));
	const char *ns = sv->cli.n_namespace_args == 1 && !strchr(sv->cli.namespace_args[0], ',') ?
		sv->cli.namespace_args[0] : NULL;
	int rc = entries && servers ? 0 : -KINF_ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char *prefix = kinf_serve_context_prefix(sv->srv, i);
		struct kinf_buf b = {0};
		if (!prefix) {
			rc = -KINF_ENOMEM;
			break;
		}
		kinf_buf_putf(&b, "%s%s", url, prefix);
		free(prefix);
		servers[i] = kinf_buf_take(&b);	/* NULL when an append failed */
		entries[i].context = kinf_serve_context_name(sv->srv, i);
		entries[i].context = entries[i].context ? entries[i].context : "kinf-serve";
		entries[i].server = servers[i];
		/* -A or no -n: the upstream context's namespace, as kubectl straight there uses. */
		entries[i].namespace = ns ? ns : sv->cli.n_namespace_args ? NULL :
			context_namespace(sv, kinf_serve_context_name(sv->srv, i));
		rc = servers[i] ? 0 : -KINF_ENOMEM;
	}
	if (rc == 0) {
		size_t ca_len;
		const char *ca = kinf_tls_ca_pem(sv->tls, &ca_len);
		struct kinf_kubeconfig_write_opts o = {
			.entries = entries, .n_entries = n, .token = sv->token,
			.ca_pem = ca, .ca_pem_len = ca_len,
		};
		rc = kinf_kubeconfig_write(sv->kubeconfig_out, &o, &err);
	}
	for (size_t i = 0; servers && i < n; i++) {
		free(servers[i]);
	}
	free(servers);
	free(entries);
	if (rc < 0) {
		cli_printf_safe(stderr, "kinf: serve: --write-kubeconfig %s: %s", sv->kubeconfig_out,
				err.message[0] ? err.message : kinf_strerror(rc));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/*
 * The token and the TLS certificate (for every tcp: listener's host
 * besides localhost, 127.0.0.1 and ::1), made in memory at each start.
 */
static int make_tls(struct serve *sv) {
	struct kinf_error err = {0};
	const char *names[CLI_MAX_LIST_ARGS];
	char *hosts[CLI_MAX_LIST_ARGS] = {0};
	size_t n = 0;
	int rc = kinf_tls_token_new(&sv->token);

	for (size_t i = 0; rc == 0 && i < sv->n_listen; i++) {
		const char *a = sv->listen[i];
		const char *colon = strrchr(a, ':');
		if (strncmp(a, "tcp:", 4) != 0 || !colon || colon < a + 4) {
			continue;
		}
		if (!(hosts[n] = strndup(a + 4, (size_t)(colon - a - 4)))) {
			rc = -KINF_ENOMEM;
			break;
		}
		names[n] = hosts[n];
		n++;
	}
	if (rc == 0) {
		struct kinf_tls_opts o = { .names = names, .n_names = n };
		rc = kinf_tls_new(&o, &sv->tls, &err);
	}
	for (size_t i = 0; i < n; i++) {
		free(hosts[i]);
	}
	if (rc == -KINF_EINVAL) {
		cli_printf_safe(stderr, "kinf: serve: --listen: %s", err.message);
		return EXIT_USAGE;
	}
	if (rc < 0) {
		cli_printf_safe(stderr, "kinf: serve: TLS: %s", err.message[0] ? err.message :
				kinf_strerror(rc));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static int parse_count(struct serve *sv, const char *opt, const char *arg, size_t *ret) {
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (end == arg || *end || errno || v < 1 || v > 100000000) {
		return cli_usage_error(&sv->cli, "--%s must be a whole number from 1 to 100000000, "
				"not \"%s\"", opt, arg);
	}
	*ret = (size_t)v;
	return EXIT_OK;
}

/*
 * The columns of member i's Tables when it is a custom resource: its CRD's
 * printer columns, read once per type and context (NULL for a built-in
 * kind, and for a later member of a type: the first decides). Without its
 * CRD (forbidden, not found: an aggregated API's) serve's Tables of it
 * have Name and Age, as the log says once.
 */
static struct kinf_kindcols *custom_columns(struct serve *sv, size_t i) {
	struct session_member_info mi, other;
	session_member_info(sv->session, i, &mi);
	if (!mi.res || !mi.http || kinf_kindcols_is_builtin(mi.res->group, mi.res->kind)) {
		return NULL;
	}
	for (size_t j = 0; j < i; j++) {
		session_member_info(sv->session, j, &other);
		if (other.res && other.http == mi.http &&
				strcmp(other.res->group, mi.res->group) == 0 &&
				strcmp(other.res->resource, mi.res->resource) == 0) {
			return NULL;
		}
	}
	struct kinf_kindcols *k = NULL;
	struct kinf_error err = {0};
	int rc = session_member_crd_columns(sv->session, i, &k, &err);
	if (rc < 0) {
		cli_printf_safe(stderr, "kinf: serve: %s%s%s%s.%s: its Tables have NAME and AGE only: "
				"reading its CustomResourceDefinition: %s", mi.context ? "context \"" : "",
				mi.context ? mi.context : "", mi.context ? "\": " : "", mi.res->resource,
				mi.res->group, err.message[0] ? err.message : kinf_strerror(rc));
	}
	return k;
}

/* Set up the server over the session's informers; listeners opened. */
/*
 * As Go's runtime does for every Go program (the apiserver included):
 * the soft limit on open files raised to the hard one, so serve's
 * connection budgets (src/httpd.h), not accept(2), decide who gets in.
 */
static void raise_nofile(void) {
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);	/* best effort: the budgets fit either way */
	}
}

static int setup(struct serve *sv) {
	struct kinf_error err = {0};
	struct kinf_serve_opts o = {
		.token = sv->token,
		.tls = sv->tls,
		.window = sv->window,
		.max_lag = sv->max_lag,
		.bookmark_ms = sv->bookmark_ms,
		.version = KINF_VERSION,
		.pass_through = sv->pass_through,
		.log = log_line,
	};
	raise_nofile();
	int rc = kinf_serve_new(&o, &sv->srv, &err);
	if (rc < 0) {
		return cli_error(&sv->cli, rc, &err, "serve");
	}
	sv->n_members = session_n_members(sv->session);
	sv->synced = calloc(sv->n_members, sizeof(*sv->synced));
	sv->up = calloc(sv->n_members, sizeof(*sv->up));
	if (!sv->synced || !sv->up) {
		return cli_error(&sv->cli, -KINF_ENOMEM, NULL, NULL);
	}
	for (size_t i = 0; i < sv->n_members; i++) {
		struct session_member_info mi;
		session_member_info(sv->session, i, &mi);
		sv->up[i].informer = mi.informer;
		struct kinf_serve_source src = {
			.context = mi.context,
			.upstream = mi.server,
			.group = mi.res->group,
			.version = mi.res->version,
			.resource = mi.res->resource,
			.singular = mi.res->singular,
			.kind = mi.res->kind,
			.namespaced = mi.res->namespaced,
			.short_names = mi.res->short_names,
			.categories = mi.res->categories,
			.namespace = mi.namespace,
			.informer = mi.informer,
			.http = mi.http,
		};
		struct kinf_kindcols *columns = custom_columns(sv, i);
		src.columns = columns;
		rc = kinf_serve_add_source(sv->srv, &src, NULL, &err);
		kinf_kindcols_unref(columns);
		if (rc < 0) {
			return cli_error(&sv->cli, rc, &err, "serve");
		}
	}
	for (size_t i = 0; i < sv->n_listen; i++) {
		if ((rc = kinf_serve_listen(sv->srv, sv->listen[i], &err)) < 0) {
			cli_printf_safe(stderr, "kinf: serve: --listen %s: %s%s", sv->listen[i],
					err.message[0] ? err.message : kinf_strerror(rc),
					rc == -KINF_EEXISTS ? " (another kinf serve?)" : "");
			return rc == -KINF_EINVAL ? EXIT_USAGE : EXIT_ERROR;
		}
	}
	/* kinf's own version here and in /metrics: /version is the upstream's. */
	cli_printf_safe(stderr, "kinf: serve: kinf %s", KINF_VERSION);
	for (size_t i = 0; kinf_serve_address(sv->srv, i); i++) {
		cli_printf_safe(stderr, "kinf: serve: listening on %s", kinf_serve_address(sv->srv, i));
	}
	return sv->kubeconfig_out ? write_kubeconfig(sv) : EXIT_OK;
}

static int serve_loop(struct serve *sv) {
	pthread_t loop;
	int status = EXIT_OK;

	if (pthread_create(&loop, NULL, run_loop, sv) != 0) {
		return cli_error(&sv->cli, -KINF_ENOMEM, NULL, "serve");
	}
	status = session_start(sv->session);
	while (status == EXIT_OK) {
		struct kinf_informer_batch batch;
		int r = session_next(sv->session, &batch, NULL);
		if (r < 0) {
			status = -r;
			break;
		}
		if (r == 0) {
			break;
		}
		size_t m = session_member(sv->session);
		int rc = 0;
		if (batch.n) {
			rc = kinf_serve_publish(sv->srv, m, &batch);
			if (rc == 0 && !batch.in_initial_list) {
				rc = mark_synced(sv, m);
			}
		} else {
			for (size_t i = 0; rc == 0 && i < sv->n_members; i++) {
				rc = mark_synced(sv, i);
			}
		}
		kinf_informer_batch_release(&batch);
		if (rc == 0) {
			rc = check_upstreams(sv);
		}
		if (rc == 0) {
			rc = atomic_load(&sv->lost);
		}
		if (rc < 0) {
			/* An event the cache did not take: its answers would be wrong. */
			status = cli_error(&sv->cli, rc, NULL, "serve");
		} else if (atomic_load(&sv->run_failed)) {
			status = EXIT_ERROR;
		}
	}
	kinf_serve_stop(sv->srv);
	pthread_join(loop, NULL);
	return status;
}

/*
 * One of serve's own options: EXIT_OK when taken, the status of a usage
 * error (printed), or -1 when opt is not serve's.
 */
static int serve_option(struct serve *sv, int opt, const char *arg) {
	switch (opt) {
	case 'o':
		return cli_usage_error(&sv->cli, "serve prints nothing: -o does not apply");
	case OPT_LISTEN:
		if (strncmp(arg, "unix:", 5) != 0 && strncmp(arg, "tcp:", 4) != 0) {
			return cli_usage_error(&sv->cli, "--listen takes unix:PATH or "
					"tcp:HOST:PORT, not \"%s\"", arg);
		}
		if (sv->n_listen == CLI_MAX_LIST_ARGS) {
			return cli_usage_error(&sv->cli, "too many --listen");
		}
		sv->listen[sv->n_listen++] = arg;
		return EXIT_OK;
	case OPT_WRITE_KUBECONFIG:
		sv->kubeconfig_out = arg;
		return EXIT_OK;
	case OPT_PASS_THROUGH:
		sv->pass_through = true;
		return EXIT_OK;
	case OPT_WINDOW:
		return parse_count(sv, "window", arg, &sv->window);
	case OPT_MAX_LAG:
		return parse_count(sv, "max-lag", arg, &sv->max_lag);
	case OPT_BOOKMARK_INTERVAL: {
		long long v = cli_parse_duration(arg);
		if (v < 100) {
			return cli_usage_error(&sv->cli, "invalid duration \"%s\" for "
					"--bookmark-interval (e.g. 30s, 1m; at least 100ms)", arg);
		}
		sv->bookmark_ms = (long)v;
		return EXIT_OK;
	}
	}
	return -1;
}

/* Parse argv into sv. EXIT_OK, or the status of a usage error (printed). */
static int serve_parse(struct serve *sv, int argc, char **argv) {
	int opt;

	cli_init(&sv->cli, &cmd_serve);
	optind = 0;
	while ((opt = cli_getopt(argc, argv, ":" CLI_COMMON_SHORT, serve_options)) != -1) {
		if (opt == 'h') {
			cli_print_help(&cmd_serve);
			sv->help = true;
			return EXIT_OK;
		}
		int r = serve_option(sv, opt, optarg);
		if (r >= 0) {
			if (r != EXIT_OK) {
				return r;
			}
			continue;
		}
		r = session_option(&sv->cli, &sv->so, opt, optarg);
		if (r == 0) {
			r = cli_common_option(&sv->cli, opt, optarg);
		}
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&sv->cli, serve_options);
		}
	}
	sv->n_pos = argc - optind;
	sv->resource = sv->n_pos > 0 ? argv[optind] : NULL;
	return EXIT_OK;
}

static int serve_check(struct serve *sv) {
	if (sv->n_pos != 1) {
		return cli_usage_error(&sv->cli, sv->n_pos < 1 ? "serve needs a resource type "
				"(pods, or several: pods,deployments)" : "serve takes one argument, "
				"RESOURCE[,RESOURCE...] (no names)");
	}
	if (sv->max_lag && sv->window && sv->max_lag > sv->window) {
		return cli_usage_error(&sv->cli, "--max-lag (%zu) cannot exceed --window (%zu)",
				sv->max_lag, sv->window);
	}
	return EXIT_OK;
}

static int serve_main(struct serve *sv, int argc, char **argv) {
	int status = serve_parse(sv, argc, argv);
	if (status != EXIT_OK || sv->help || (status = serve_check(sv)) != EXIT_OK) {
		return status;
	}
	if (sv->n_listen == 0 && (status = default_socket(sv)) != EXIT_OK) {
		return status;
	}
	if ((status = make_tls(sv)) != EXIT_OK) {
		return status;
	}
	sv->so.on_retry = on_retry;
	sv->so.on_retry_data = sv;
	sv->so.on_warning = on_warning;
	sv->so.on_warning_data = sv;
	sv->so.wake_on_idle = true;
	/* The API serves managedFields: keep them. */
	sv->so.keep_managed_fields = true;
	cli_managed_fields(&sv->cli, true);
	sv->cli.format = KINF_OUTPUT_JSON;	/* nothing printed; several types are fine */
	status = session_new(&sv->cli, &sv->so, sv->resource, NULL, &sv->session);
	if (status != EXIT_OK) {
		return status;
	}
	status = setup(sv);
	if (status == EXIT_OK) {
		status = serve_loop(sv);
	}
	status = session_end(sv->session, status);
	sv->session = NULL;
	return status;
}

static int run_serve(int argc, char **argv) {
	struct serve sv = {0};
	/*
	 * A list answer of 1.6 MB (100 pods) was a fresh mmap each time, its
	 * pages faulted in and cleared, then unmapped: half of serve's CPU
	 * per query on the real apiserver's pods (bench/RESULTS.md, issue
	 * 23). Answers up to 32 MiB come from the heap instead, and a heap
	 * top up to 64 MiB is kept for the next one (the deltas' idle
	 * malloc_trim still gives the rest back).
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	pthread_mutex_init(&sv.lock, NULL);
	int status = serve_main(&sv, argc, argv);
	if (sv.session) {
		status = session_end(sv.session, status);
	}
	kinf_serve_free(sv.srv);
	free(sv.default_socket);
	free(sv.synced);
	free(sv.up);
	kinf_free_secret(sv.token);
	kinf_tls_unref(sv.tls);
	pthread_mutex_destroy(&sv.lock);
	return status;
}

const struct cmd cmd_serve = {
	.name = "serve",
	.summary = "serve the informers' caches as a read-only Kubernetes API",
	.usage = serve_usage,
	.run = run_serve,
	.options = serve_options,
};
