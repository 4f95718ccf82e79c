#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
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
	struct kinf_indexer *idx;
	struct kinf_deltafifo *fifo;
	struct kinf_reflector *reflector;
	struct kinf_reflector_opts ropts;
	char *path;
	char *name_selector;
	char *label_selector;		/* -l with what so.pushdown added */
	char *api_version;
	struct kinf_buf type_prefix;	/* session_append_typed()'s */
	bool strip_managed_fields;	/* kept, but not for -o json or yaml */
	/* --from */
	int from_fd;
	atomic_bool stopping;		/* tells the replay thread to end */
	pthread_t replay_thread;
	bool replay_running;
	int replay_rc;
	struct kinf_error replay_err;
	struct kinf_reflector_stats replay_stats;
	/* errors reported by the reflector thread */
	pthread_mutex_t lock;
	int fatal_rc;
	struct kinf_error fatal_err;
	long long deadline_ms;
	long printed;
	unsigned long pops;
	bool progress_shown;
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

static long long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Errors before the first sync end the program (a person asked for
 * something that does not work: 403, 404, a bad selector, an unreachable
 * server); after it the reflector retries forever, saying so on stderr.
 */
static bool on_reflector_error(int rc, const struct kinf_error *err, bool synced,
		void *userdata) {
	struct session *s = userdata;
	if (!synced && err->http_status != 429 && err->http_status != 410 &&
			err->http_status < 500) {
		pthread_mutex_lock(&s->lock);
		s->fatal_rc = rc < 0 ? rc : -KINF_EHTTP;
		s->fatal_err = *err;
		pthread_mutex_unlock(&s->lock);
		return true;
	}
	cli_printf_safe(stderr, "kinf: warning: %s%s%s; retrying",
			err->message[0] ? err->message : kinf_strerror(rc),
			err->http_status ? " " : "", err->http_status ? err->reason : "");
	return false;
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
		s->progress_shown = true;
	}
}

int session_new(struct cli *cli, const struct session_opts *so,
		const char *resource, const char *name, struct session **ret) {
	struct session *s = calloc(1, sizeof(*s));
	int status;

	if (!s) {
		fprintf(stderr, "kinf: out of memory\n");
		return EXIT_ERROR;
	}
	s->cli = cli;
	s->so = *so;
	s->from_fd = -1;
	s->strip_managed_fields = cli_managed_fields(cli,
			so->keep_managed_fields || so->dump_file);
	pthread_mutex_init(&s->lock, NULL);
	s->idx = kinf_indexer_new();
	s->fifo = s->idx ? kinf_deltafifo_new(s->idx, so->emit_replaced) : NULL;
	if (!s->fifo) {
		fprintf(stderr, "kinf: out of memory\n");
		status = EXIT_ERROR;
		goto fail;
	}
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
		*ret = s;
		return EXIT_OK;
	}
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
	const char *field_selector = cli->field_selector;
	const char *label_selector = cli->label_selector;
	struct kinf_buf push_labels = {0}, push_fields = {0};
	if (so->pushdown) {
		so->pushdown(cli->res, &push_labels, &push_fields, so->pushdown_data);
	}
	if (name || push_fields.len) {
		const char *sep = "";
		if (name) {
			kinf_buf_printf(&b, "metadata.name=%s", name);
			sep = ",";
		}
		if (field_selector && field_selector[0]) {
			kinf_buf_printf(&b, "%s%s", sep, field_selector);
			sep = ",";
		}
		if (push_fields.len) {
			kinf_buf_printf(&b, "%s%s", sep, push_fields.data);
		}
		s->name_selector = kinf_buf_take(&b);
		field_selector = s->name_selector;
	}
	if (push_labels.len) {
		if (label_selector && label_selector[0]) {
			kinf_buf_printf(&b, "%s,", label_selector);
		}
		kinf_buf_append(&b, push_labels.data, push_labels.len);
		s->label_selector = kinf_buf_take(&b);
		label_selector = s->label_selector;
	}
	kinf_buf_release(&push_labels);
	kinf_buf_release(&push_fields);
	s->ropts = (struct kinf_reflector_opts){
		.http = cli->http,
		.path = s->path,
		.label_selector = label_selector,
		.field_selector = field_selector,
		.page_size = cli->chunk_size,
		.watch_list = so->watch_list,
		.resync_ms = so->resync_ms,
		.watch_timeout_s = so->watch_timeout_s,
		.limits = cli->limits,
		.on_error = on_reflector_error,
		.on_list_page = on_list_page,
		.userdata = s,
	};
	s->reflector = kinf_reflector_new(&s->ropts, s->fifo);
	if (!s->reflector) {
		fprintf(stderr, "kinf: out of memory\n");
		status = EXIT_ERROR;
		goto fail;
	}
	*ret = s;
	return EXIT_OK;
fail:
	session_end(s, status);
	return status;
}

struct kinf_indexer *session_indexer(struct session *s) {
	return s->idx;
}

const struct kinf_resource *session_resource(struct session *s) {
	return s->cli->res;
}

static bool replay_canceled(void *userdata) {
	struct session *s = userdata;
	return atomic_load(&s->stopping);
}

static void *replay(void *userdata) {
	struct session *s = userdata;
	s->replay_rc = kinf_reflector_replay_fd(s->from_fd, s->fifo, &s->cli->limits,
			s->cli->labels, s->cli->fields, replay_canceled, s,
			&s->replay_stats, &s->replay_err);
	if (s->replay_rc == -KINF_ECANCELED) {
		s->replay_rc = 0;
	}
	/* End of input: the FIFO drains, then Pop says closed. */
	kinf_deltafifo_close(s->fifo);
	return NULL;
}

int session_start(struct session *s) {
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (s->so.timeout_ms > 0) {
		s->deadline_ms = now_ms() + s->so.timeout_ms;
	}
	if (s->from_fd >= 0) {
		struct stat st;
		if (fstat(s->from_fd, &st) == 0 && S_ISREG(st.st_mode)) {
			/*
			 * A file is read whole before the first Pop, so what the
			 * pops show does not depend on thread timing (golden tests).
			 * Pipes are read as they arrive.
			 */
			replay(s);
			return EXIT_OK;
		}
		if (pthread_create(&s->replay_thread, NULL, replay, s) != 0) {
			fprintf(stderr, "kinf: cannot start a thread\n");
			return EXIT_ERROR;
		}
		s->replay_running = true;
		return EXIT_OK;
	}
	if (kinf_reflector_start(s->reflector) < 0) {
		fprintf(stderr, "kinf: cannot start a thread\n");
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

bool session_synced(struct session *s) {
	return kinf_deltafifo_has_synced(s->fifo);
}

void session_count(struct session *s) {
	s->printed++;
}

int session_next(struct session *s, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas) {
	for (;;) {
		if (stop_signal) {
			return 0;
		}
		if (s->so.count > 0 && s->printed >= s->so.count) {
			return 0;
		}
		if (s->so.exit_after_sync && kinf_deltafifo_has_synced(s->fifo) &&
				kinf_deltafifo_len(s->fifo) == 0) {
			return 0;
		}
		if (s->reflector && kinf_reflector_stopped(s->reflector)) {
			pthread_mutex_lock(&s->lock);
			struct kinf_error err = s->fatal_err;
			int rc = s->fatal_rc;
			pthread_mutex_unlock(&s->lock);
			return -cli_error(s->cli, rc, &err, NULL);
		}
		int wait = 200;
		if (s->deadline_ms) {
			long long left = s->deadline_ms - now_ms();
			if (left <= 0) {
				return 0;
			}
			if (left < wait) {
				wait = (int)left;
			}
		}
		int rc = kinf_informer_pop(s->fifo, s->idx, wait, ret_batch, ret_deltas);
		if (rc == -KINF_ETIMEDOUT) {
			if (stdout_closed()) {
				return 0;	/* `| head` went away: end quietly */
			}
			if (s->so.wake_on_sync && !s->woke &&
					kinf_deltafifo_has_synced(s->fifo)) {
				s->woke = true;
				memset(ret_batch, 0, sizeof(*ret_batch));
				if (ret_deltas) {
					*ret_deltas = NULL;
				}
				return 1;
			}
			continue;
		}
		if (rc == -KINF_ECLOSED) {
			if (s->replay_running) {
				pthread_join(s->replay_thread, NULL);
				s->replay_running = false;
			}
			if (s->replay_rc < 0) {
				cli_printf_safe(stderr, "kinf: %s: %s", s->so.from,
						s->replay_err.message[0] ? s->replay_err.message :
						kinf_strerror(s->replay_rc));
				return -EXIT_ERROR;
			}
			return 0;
		}
		if (rc < 0) {
			return -cli_error(s->cli, rc, NULL, "informer");
		}
		if (s->progress_shown) {
			fputs("\r\033[K", stderr);
			s->progress_shown = false;
		}
		s->pops++;
		return 1;
	}
}

struct kinf_object *session_typed(struct session *s, struct kinf_object *obj) {
	if (!s->cli->res) {
		return kinf_object_ref(obj);
	}
	return kinf_object_with_type(obj, s->api_version, s->cli->res->kind);
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
	size_t len, skip = 0;
	struct kinf_object *bare = NULL;
	int rc;

	if (s->strip_managed_fields) {
		if (kinf_object_without_managed_fields(obj, &bare) < 0) {
			return -KINF_ENOMEM;
		}
		obj = bare;
	}
	const char *json = kinf_object_json(obj, &len);

	if (s->cli->res && kinf_object_type_prefix(obj, s->api_version, s->cli->res->kind,
			&s->type_prefix, &skip) < 0) {
		rc = -KINF_ENOMEM;
	} else if (skip && kinf_buf_append(out, s->type_prefix.data, s->type_prefix.len) < 0) {
		rc = -KINF_ENOMEM;
	} else {
		rc = kinf_buf_append(out, json + skip, len - skip);
	}
	kinf_object_unref(bare);
	return rc;
}

static void print_stats(struct session *s) {
	struct kinf_reflector_stats st = s->replay_stats;
	if (s->reflector) {
		kinf_reflector_get_stats(s->reflector, &st);
	}
	fprintf(stderr,
		"lists %lu\nrelists %lu\npages %lu\nitems_listed %lu\nwatches %lu\n"
		"events %lu\nbookmarks %lu\nexpired %lu\nerrors %lu\nbackoffs %lu\n"
		"resyncs %lu\nwatch_list_fallbacks %lu\npops %lu\nprinted %ld\ncached %zu\n",
		st.lists, st.relists, st.pages, st.items_listed, st.watches, st.events,
		st.bookmarks, st.expired, st.errors, st.backoffs, st.resyncs,
		st.watch_list_fallbacks, s->pops, s->printed, kinf_indexer_len(s->idx));
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
	int rc = kinf_indexer_list(s->idx, &list);
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
	if (s->reflector) {
		kinf_reflector_stop(s->reflector);
	}
	if (s->replay_running) {
		/* Input may still be open (stdin): the thread polls and stops. */
		atomic_store(&s->stopping, true);
		pthread_join(s->replay_thread, NULL);
		s->replay_running = false;
	}
	if (s->progress_shown) {
		fputs("\r\033[K", stderr);
	}
	if (s->so.stats && s->idx) {
		print_stats(s);
	}
	if (s->so.dump_file && s->idx) {
		int d = dump(s);
		if (status == EXIT_OK) {
			status = d;
		}
	}
	kinf_reflector_free(s->reflector);
	kinf_deltafifo_free(s->fifo);
	kinf_indexer_free(s->idx);
	if (s->from_fd > STDIN_FILENO) {
		close(s->from_fd);
	}
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s->name_selector);
	free(s->label_selector);
	free(s->api_version);
	kinf_buf_release(&s->type_prefix);
	cli_release(s->cli);
	free(s);
	return status;
}
