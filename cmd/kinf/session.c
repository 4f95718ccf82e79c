#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "session.h"
#include "termsafe.h"

const char session_usage[] =
	"Informer options:\n"
	"      --from FILE                read a recorded stream (- for stdin) instead of a server\n"
	"      --resync DURATION          resync period: Sync deltas for cached objects (0: off)\n"
	"      --watch-list               streaming initial list (sendInitialEvents), with fallback\n"
	"      --timeout DURATION         stop after this long, exit status 0 (watch --for:\n"
	"                                 give up waiting, exit status 4)\n"
	"      --count N                  stop after N events\n"
	"      --exit-after-sync          stop once the initial list has been processed\n"
	"      --stats                    print counters to stderr at exit\n"
	"      --dump-on-exit FILE        write the cache as JSON lines at exit (- for stderr)\n"
	"\n";

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
	stop_signal = sig;
}

int session_stop_signal(void) {
	return stop_signal;
}

struct session {
	struct cli *cli;
	struct session_opts so;
	bool woke;		/* the wake_on_sync return was made */
	struct kinf_informer *inf;
	char *path;
	char *name_selector;		/* NAME and what so.pushdown added, with --field-selector */
	char *label_selector;		/* -l with what so.pushdown added */
	char *api_version;
	bool strip_managed_fields;	/* kept, but not for -o json or yaml */
	int from_fd;			/* --from */
	atomic_bool progress_shown;	/* written by the reflector thread */
	long printed;
};

int session_option(struct cli *cli, struct session_opts *so, int opt,
		const char *arg) {
	long long v;
	char *end;

	switch (opt) {
	case OPT_FROM: so->from = arg; return 1;
	case OPT_WATCH_LIST: so->watch_list = true; return 1;
	case OPT_EXIT_AFTER_SYNC: so->exit_after_sync = true; return 1;
	case OPT_STATS: so->stats = true; return 1;
	case OPT_DUMP_ON_EXIT: so->dump_file = arg; return 1;
	case OPT_RESYNC:
	case OPT_TIMEOUT:
		v = cli_parse_duration(arg);
		if (v < 0) {
			cli_usage_error(cli, "invalid duration \"%s\" for --%s (e.g. 30s, 5m, 1h)",
					arg, opt == OPT_RESYNC ? "resync" : "timeout");
			return -EXIT_USAGE;
		}
		if (opt == OPT_RESYNC) {
			if (v > 0 && v < 1000) {
				v = 1000;	/* client-go's minimumResyncPeriod */
			}
			so->resync_ms = (long)v;
		} else {
			so->timeout_ms = v;
			so->timeout_given = true;
		}
		return 1;
	case OPT_COUNT:
		errno = 0;
		v = strtoll(arg, &end, 10);
		if (end == arg || *end || errno || v < 1) {
			cli_usage_error(cli, "--count must be a whole number >= 1, not \"%s\"", arg);
			return -EXIT_USAGE;
		}
		so->count = (long)v;
		return 1;
	case OPT_WATCH_TIMEOUT:
		v = cli_parse_duration(arg);
		if (v < 1000) {
			cli_usage_error(cli, "invalid --watch-timeout \"%s\"", arg);
			return -EXIT_USAGE;
		}
		so->watch_timeout_s = (long)(v / 1000);
		return 1;
	}
	return 0;
}

/*
 * True when nobody reads stdout any more (the reader of a pipe exited).
 * Checked while idle, so a quiet watch into `| head -3` still ends.
 */
static bool stdout_closed(void) {
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

/* The reflector retries (after the first sync, or a 5xx): say so. */
static void on_retry(int rc, const struct kinf_error *err, void *userdata) {
	(void)userdata;
	cli_printf_safe(stderr, "kinf: warning: %s%s%s; retrying",
			err->message[0] ? err->message : kinf_strerror(rc),
			err->http_status ? " " : "", err->http_status ? err->reason : "");
}

static void on_list_page(unsigned pages, size_t items, void *userdata) {
	struct session *s = userdata;
	/* A progress line on stderr during a long initial list, on a terminal. */
	if (isatty(STDERR_FILENO) && s->cli->res && pages > 1) {
		char num[32];
		cli_group_thousands(items, num, sizeof(num));
		/* The resource's name came from discovery: escaped, not the line's own \r. */
		fprintf(stderr, "\rlisted %s ", num);
		kinf_termsafe_write(stderr, s->cli->res->resource, strlen(s->cli->res->resource));
		fprintf(stderr, " (%u pages)...\033[K", pages);
		atomic_store(&s->progress_shown, true);
	}
}

/* The informer's options from the command line; strings are borrowed. */
static struct kinf_informer_opts informer_opts(struct session *s) {
	struct cli *cli = s->cli;
	struct kinf_informer_opts o = {
		.replay_fd = s->from_fd,
		.labels = cli->labels,
		.fields = cli->fields,
		.limits = cli->limits,
		.emit_replaced = s->so.emit_replaced,
		.timeout_ms = s->so.timeout_ms,
		.exit_after_sync = s->so.exit_after_sync,
		.on_retry = on_retry,
		.on_list_page = on_list_page,
		.userdata = s,
	};
	if (s->from_fd < 0) {
		o.http = cli->http;
		o.path = s->path;
		o.label_selector = s->label_selector ? s->label_selector : cli->label_selector;
		o.field_selector = s->name_selector ? s->name_selector : cli->field_selector;
		o.page_size = cli->chunk_size;
		o.watch_list = s->so.watch_list;
		o.resync_ms = s->so.resync_ms;
		o.watch_timeout_s = s->so.watch_timeout_s;
		o.api_version = s->api_version;
		o.kind = cli->res->kind;
	}
	return o;
}

/*
 * The selectors the informer asks the server for: -l and --field-selector,
 * ANDed with metadata.name=NAME and what so.pushdown adds for res.
 */
static int build_selectors(struct session *s, const struct kinf_resource *res,
		const char *name) {
	struct cli *cli = s->cli;
	struct kinf_buf b = {0};
	struct kinf_buf push_labels = {0}, push_fields = {0};
	int rc = 0;

	if (s->so.pushdown) {
		s->so.pushdown(res, &push_labels, &push_fields, s->so.pushdown_data);
	}
	if (name || push_fields.len) {
		const char *sep = "";
		if (name) {
			kinf_buf_printf(&b, "metadata.name=%s", name);
			sep = ",";
		}
		if (cli->field_selector && cli->field_selector[0]) {
			kinf_buf_printf(&b, "%s%s", sep, cli->field_selector);
			sep = ",";
		}
		if (push_fields.len) {
			kinf_buf_printf(&b, "%s%s", sep, push_fields.data);
		}
		s->name_selector = kinf_buf_take(&b);
		rc = s->name_selector ? 0 : -KINF_ENOMEM;
	}
	if (rc == 0 && push_labels.len) {
		if (cli->label_selector && cli->label_selector[0]) {
			kinf_buf_printf(&b, "%s,", cli->label_selector);
		}
		kinf_buf_append(&b, push_labels.data, push_labels.len);
		s->label_selector = kinf_buf_take(&b);
		rc = s->label_selector ? 0 : -KINF_ENOMEM;
	}
	kinf_buf_release(&push_labels);
	kinf_buf_release(&push_fields);
	return rc;
}

int session_new(struct cli *cli, const struct session_opts *so,
		const char *resource, const char *name, struct session **ret) {
	struct session *s = calloc(1, sizeof(*s));
	struct kinf_error err = {0};
	int status, rc;

	if (!s) {
		fprintf(stderr, "kinf: out of memory\n");
		return EXIT_ERROR;
	}
	s->cli = cli;
	s->so = *so;
	s->from_fd = -1;
	s->strip_managed_fields = cli_managed_fields(cli,
			so->keep_managed_fields || so->dump_file);
	atomic_init(&s->progress_shown, false);
	if ((status = cli_parse_selectors(cli)) != EXIT_OK) {
		goto fail;
	}
	if (so->from) {
		cli_setup_logging(cli->verbose);
		if (strcmp(so->from, "-") == 0) {
			s->from_fd = STDIN_FILENO;
		} else {
			s->from_fd = open(so->from, O_RDONLY | O_CLOEXEC);
			if (s->from_fd < 0) {
				fprintf(stderr, "kinf: --from %s: %s\n", so->from, strerror(errno));
				status = EXIT_USAGE;
				goto fail;
			}
		}
	} else {
		if (!resource) {
			status = cli_usage_error(cli, "%s needs a resource type (or --from FILE)",
					cli->cmd->name);
			goto fail;
		}
		status = cli_connect(cli, resource);
		if (status != EXIT_OK) {
			goto fail;
		}
		s->path = kinf_resource_path(cli->res, cli->namespace);
		struct kinf_buf b = {0};
		if (cli->res->group[0]) {
			kinf_buf_printf(&b, "%s/%s", cli->res->group, cli->res->version);
		} else {
			kinf_buf_append_str(&b, cli->res->version);
		}
		s->api_version = kinf_buf_take(&b);
		if (build_selectors(s, cli->res, name) < 0) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			goto fail;
		}
		if (!s->path || !s->api_version) {
			fprintf(stderr, "kinf: out of memory\n");
			status = EXIT_ERROR;
			goto fail;
		}
	}
	struct kinf_informer_opts io = informer_opts(s);
	if ((rc = kinf_informer_new(&io, &s->inf, &err)) < 0) {
		status = cli_error(cli, rc, &err, NULL);
		goto fail;
	}
	*ret = s;
	return EXIT_OK;
fail:
	session_end(s, status);
	return status;
}

struct kinf_indexer *session_indexer(struct session *s) {
	return kinf_informer_indexer(s->inf);
}

const struct kinf_resource *session_resource(struct session *s) {
	return s->cli->res;
}

int session_start(struct session *s) {
	struct kinf_error err = {0};
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (kinf_informer_start(s->inf, &err) < 0) {
		fprintf(stderr, "kinf: %s\n", err.message);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

bool session_synced(struct session *s) {
	return kinf_informer_has_synced(s->inf);
}

void session_count(struct session *s) {
	s->printed++;
}

int session_next(struct session *s, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas) {
	for (;;) {
		struct kinf_error err = {0};
		if (stop_signal) {
			return 0;
		}
		if (s->so.count > 0 && s->printed >= s->so.count) {
			return 0;
		}
		/* Short waits: a signal or a closed stdout is noticed soon. */
		int rc = kinf_informer_next(s->inf, 200, ret_batch, ret_deltas, &err);
		if (rc == -KINF_ETIMEDOUT) {
			if (stdout_closed()) {
				return 0;	/* `| head` went away: end quietly */
			}
			if (s->so.wake_on_sync && !s->woke &&
					kinf_informer_has_synced(s->inf)) {
				s->woke = true;
				memset(ret_batch, 0, sizeof(*ret_batch));
				if (ret_deltas) {
					*ret_deltas = NULL;
				}
				return 1;
			}
			continue;
		}
		if (rc < 0 && s->so.from) {
			cli_printf_safe(stderr, "kinf: %s: %s", s->so.from, err.message);
			return -EXIT_ERROR;
		}
		if (rc < 0) {
			return -cli_error(s->cli, rc, &err, NULL);
		}
		if (rc == 0) {
			return 0;
		}
		if (atomic_exchange(&s->progress_shown, false)) {
			fputs("\r\033[K", stderr);
		}
		return 1;
	}
}

struct kinf_object *session_typed(struct session *s, struct kinf_object *obj) {
	return kinf_informer_typed(s->inf, obj);
}

struct kinf_object *session_printed(struct session *s, struct kinf_object *obj) {
	struct kinf_object *bare = NULL, *typed;
	if (!s->strip_managed_fields) {
		return session_typed(s, obj);
	}
	if (kinf_object_without_managed_fields(obj, &bare) < 0) {
		return NULL;
	}
	typed = session_typed(s, bare);
	kinf_object_unref(bare);
	return typed;
}

int session_append_typed(struct session *s, struct kinf_object *obj,
		struct kinf_buf *out) {
	struct kinf_object *bare = NULL;
	int rc;

	if (s->strip_managed_fields) {
		if (kinf_object_without_managed_fields(obj, &bare) < 0) {
			return -KINF_ENOMEM;
		}
		obj = bare;
	}
	rc = kinf_informer_append_typed(s->inf, obj, out);
	kinf_object_unref(bare);
	return rc;
}

static void print_stats(struct session *s) {
	struct kinf_informer_stats is;
	kinf_informer_get_stats(s->inf, &is);
	const struct kinf_reflector_stats *st = &is.source;
	fprintf(stderr,
		"lists %lu\nrelists %lu\npages %lu\nitems_listed %lu\nwatches %lu\n"
		"events %lu\nbookmarks %lu\nexpired %lu\nerrors %lu\nbackoffs %lu\n"
		"resyncs %lu\nwatch_list_fallbacks %lu\npops %lu\nprinted %ld\ncached %zu\n",
		st->lists, st->relists, st->pages, st->items_listed, st->watches, st->events,
		st->bookmarks, st->expired, st->errors, st->backoffs, st->resyncs,
		st->watch_list_fallbacks, is.pops, s->printed, is.cached);
	if (s->cli->http) {
		fprintf(stderr, "requests %lu\n", kinf_http_request_count(s->cli->http));
	}
}

static int dump(struct session *s) {
	struct kinf_object_list list = {0};
	FILE *out = strcmp(s->so.dump_file, "-") == 0 ? stderr : fopen(s->so.dump_file, "w");
	if (!out) {
		fprintf(stderr, "kinf: --dump-on-exit %s: %s\n", s->so.dump_file, strerror(errno));
		return EXIT_ERROR;
	}
	int rc = kinf_indexer_list(kinf_informer_indexer(s->inf), &list);
	for (size_t i = 0; rc == 0 && i < list.n; i++) {
		size_t len;
		const char *json = kinf_object_json(list.v[i], &len);
		fwrite(json, 1, len, out);
		fputc('\n', out);
	}
	kinf_object_list_release(&list);
	if (out != stderr && fclose(out) != 0) {
		rc = -KINF_EIO;
	}
	if (rc < 0) {
		fprintf(stderr, "kinf: --dump-on-exit %s: %s\n", s->so.dump_file, kinf_strerror(rc));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

int session_end(struct session *s, int status) {
	if (!s) {
		return status;
	}
	if (s->inf) {
		kinf_informer_stop(s->inf);
	}
	if (atomic_load(&s->progress_shown)) {
		fputs("\r\033[K", stderr);
	}
	if (s->so.stats && s->inf) {
		print_stats(s);
	}
	if (s->so.dump_file && s->inf) {
		int d = dump(s);
		if (status == EXIT_OK) {
			status = d;
		}
	}
	kinf_informer_free(s->inf);
	if (s->from_fd > STDIN_FILENO) {
		close(s->from_fd);
	}
	free(s->path);
	free(s->name_selector);
	free(s->label_selector);
	free(s->api_version);
	cli_release(s->cli);
	free(s);
	return status;
}
