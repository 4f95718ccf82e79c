#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "informerset.h"
#include "log.h"
#include "json.h"
#include "session.h"
#include "session_int.h"

const char session_usage[] =
	"Informer options:\n"
	"      --from FILE                read a recorded stream (- for stdin) instead of a server\n"
	"      --resync DURATION          resync period: Sync deltas for cached objects (0: off)\n"
	"      --watch-list               streaming initial list (sendInitialEvents), with fallback\n"
	"      --accessible               with -A: where listing a type cluster-wide is\n"
	"                                 forbidden, the namespaces where it may be listed\n"
	"                                 and watched (SelfSubjectAccessReview), as they come\n"
	"                                 and go\n"
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

int session_option(struct cli *cli, struct session_opts *so, int opt,
		const char *arg) {
	long long v;
	char *end;

	switch (opt) {
	case OPT_FROM: so->from = arg; return 1;
	case OPT_ACCESSIBLE: so->accessible = true; return 1;
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

int session_new_targets(struct cli *cli, const struct session_opts *so,
		const struct session_target *targets, size_t n_targets,
		struct session **ret) {
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
	atomic_init(&s->progress_shown, false);
	if ((status = cli_parse_selectors(cli)) != EXIT_OK) {
		goto fail;
	}
	if ((status = session_expand_list(cli, cli->namespace_args, cli->n_namespace_args,
			"namespace", &s->namespaces)) != EXIT_OK ||
			(status = session_expand_list(cli, cli->context_args, cli->n_context_args,
			"context", &s->contexts)) != EXIT_OK) {
		goto fail;
	}
	if ((status = session_check_accessible(cli, so)) != EXIT_OK) {
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
		if (!session_new_member(s)) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			goto fail;
		}
		s->members[0]->cli = cli;
		if (n_targets > 0 && targets[0].n_names > 0) {
			/* No server to ask: every name is filtered here. */
			size_t size = targets[0].n_names * sizeof(char *);
			if (!(s->members[0]->names = malloc(size))) {
				status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
				goto fail;
			}
			memcpy(s->members[0]->names, targets[0].names, size);
			s->members[0]->n_names = targets[0].n_names;
		}
	} else {
		if (n_targets == 0) {
			status = cli_usage_error(cli, "%s needs a resource type (or --from FILE)",
					cli->cmd->name);
			goto fail;
		}
		if ((status = session_connect_members(s, targets, n_targets)) != EXIT_OK) {
			goto fail;
		}
	}
	s->set = kinf_informerset_new(true);
	if (!s->set) {
		status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		goto fail;
	}
	if (s->dyn) {
		kinf_informerset_allow_growth(s->set);	/* namespaces join and leave */
	}
	for (size_t i = 0; i < s->n_members; i++) {
		if ((status = session_add_to_set(s, i)) != EXIT_OK) {
			goto fail;
		}
	}
	/* The first event's informer is current until then: not a hidden one. */
	for (size_t i = 0; i < s->n_members && !session_select(s, i); i++) {
	}
	*ret = s;
	return EXIT_OK;
fail:
	return session_end(s, status);
}

size_t session_n_members(struct session *s) {
	return s->n_members;
}

void session_member_info(struct session *s, size_t i, struct session_member_info *ret) {
	const struct member *m = s->members[i];
	ret->res = m->res;
	ret->namespace = m->namespace;
	ret->context = m->cli->config ? m->cli->config->context_name : NULL;
	ret->server = m->cli->config ? m->cli->config->server : NULL;
	ret->context_namespace = m->cli->config && !m->cli->config->namespace_from_flag ?
		m->cli->config->namespace : NULL;
	ret->http = m->cli->http;
	ret->informer = kinf_informerset_get(s->set, i);
	ret->failed = m->failed;
	ret->synced = kinf_informerset_member_synced(s->set, i);
}

size_t session_member(struct session *s) {
	return s->cur;
}

int session_new(struct cli *cli, const struct session_opts *so,
		const char *resource, const char *name, struct session **ret) {
	char *names[] = { (char *)name };
	struct session_target t = { .types = resource, .names = names, .n_names = name != NULL };
	return session_new_targets(cli, so, &t, resource ? 1 : 0, ret);
}

static struct kinf_informer *current(struct session *s) {
	return kinf_informerset_get(s->set, s->cur);
}

size_t session_n_informers(const struct session *s) {
	return s->n_members;
}

bool session_select(struct session *s, size_t i) {
	if (i >= s->n_members || s->members[i]->hidden) {
		return false;
	}
	s->cur = i;
	return true;
}

struct kinf_indexer *session_indexer(struct session *s) {
	return kinf_informer_indexer(current(s));
}

const struct kinf_resource *session_resource(struct session *s) {
	return s->members[s->cur]->res;
}

const char *session_namespace(struct session *s) {
	return s->members[s->cur]->namespace;
}

const char *session_resource_name(struct session *s) {
	return s->members[s->cur]->resource_name;
}

char *const *session_names(struct session *s, size_t *ret_n) {
	*ret_n = s->members[s->cur]->n_names;
	return s->members[s->cur]->names;
}

bool session_name_wanted(struct session *s, const char *key) {
	const struct member *m = s->members[s->cur];
	const char *slash = key ? strrchr(key, '/') : NULL;
	const char *name = slash ? slash + 1 : key;
	for (size_t i = 0; name && i < m->n_names; i++) {
		if (strcmp(m->names[i], name) == 0) {
			return true;
		}
	}
	return m->n_names == 0;
}

void session_put_ref(struct session *s, const char *name, struct kinf_buf *out) {
	const struct kinf_resource *res = s->members[s->cur]->res;
	for (const char *p = res ? res->kind : "object"; *p; p++) {
		kinf_buf_putc(out, *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p);
	}
	if (res && res->group[0]) {
		kinf_buf_putf(out, ".%s", res->group);
	}
	kinf_buf_putf(out, "/%s", name);
}

size_t session_context_index(struct session *s) {
	return s->members[s->cur]->ctx;
}

bool session_several_types(const struct session *s) {
	const struct kinf_resource *a = NULL;
	for (size_t i = 0; i < s->n_members; i++) {
		const struct kinf_resource *b = s->members[i]->res;
		if (s->members[i]->hidden || !b) {
			continue;
		}
		if (a && (strcmp(a->group, b->group) || strcmp(a->resource, b->resource))) {
			return true;
		}
		a = b;
	}
	return false;
}

int session_start(struct session *s) {
	struct kinf_error err = {0};
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (kinf_informerset_start(s->set, &err) < 0) {
		fprintf(stderr, "kinf: %s\n", err.message);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

int session_load(struct session *s, const struct kinf_object_list *objs,
		struct kinf_error *reterr) {
	return kinf_informer_load(current(s), objs->v, objs->n, reterr);
}

bool session_synced(struct session *s) {
	return kinf_informerset_has_synced(s->set);
}

void session_count(struct session *s) {
	s->printed++;
}

/* A member failed for good: say so once; returns the exit status it means. */
static int member_failed(struct session *s, const struct kinf_informerset_event *ev) {
	struct member *m = s->members[ev->member];
	free(m->failed);
	m->failed = strdup(ev->err.message[0] ? ev->err.message : kinf_strerror(ev->rc));
	if (s->so.from) {
		cli_printf_safe(stderr, "kinf: %s: %s", s->so.from, ev->err.message);
		return EXIT_ERROR;
	}
	/* With several, name the one that failed: the others go on. */
	return cli_error(s->cli, ev->rc, &ev->err, s->n_members > 1 || m->hidden ? m->label : NULL);
}

int session_next(struct session *s, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas) {
	for (;;) {
		struct kinf_informerset_event ev;
		if (stop_signal) {
			return 0;
		}
		if (s->so.count > 0 && s->printed >= s->so.count) {
			return 0;
		}
		/* Short waits: a signal or a closed stdout is noticed soon. */
		int rc = kinf_informerset_next(s->set, 200, &ev);
		if (rc == -KINF_ETIMEDOUT) {
			/* Checked while idle, so a quiet watch into `| head -3` ends. */
			if (cli_stdout_closed()) {
				return 0;	/* `| head` went away: end quietly */
			}
			if (s->so.wake_on_idle) {
				memset(ret_batch, 0, sizeof(*ret_batch));
				if (ret_deltas) {
					*ret_deltas = NULL;
				}
				return 1;
			}
			if (s->so.wake_on_sync && !s->woke &&
					kinf_informerset_has_synced(s->set)) {
				s->woke = true;
				memset(ret_batch, 0, sizeof(*ret_batch));
				if (ret_deltas) {
					*ret_deltas = NULL;
				}
				return 1;
			}
			continue;
		}
		if (rc == 0) {
			return 0;
		}
		if (!s->members[ev.member]->hidden) {
			s->cur = ev.member;
		}
		if (ev.rc < 0) {
			int status = member_failed(s, &ev);
			kinf_informerset_event_release(&ev);
			if (s->n_members == 1) {
				return -status;
			}
			if (!s->failed_status) {
				s->failed_status = status;
			}
			continue;
		}
		if (atomic_exchange(&s->progress_shown, false)) {
			cli_progress_erase();
		}
		*ret_batch = ev.batch;
		if (ret_deltas) {
			*ret_deltas = ev.deltas;
		} else {
			kinf_deltas_free(ev.deltas);
		}
		return 1;
	}
}

struct kinf_object *session_typed(struct session *s, struct kinf_object *obj) {
	return kinf_informer_typed(current(s), obj);
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
	rc = kinf_informer_append_typed(current(s), obj, out);
	kinf_object_unref(bare);
	return rc;
}

const char *session_context(struct session *s) {
	if (s->n_clis < 2) {
		return NULL;
	}
	const char *name = s->members[s->cur]->cli->config->context_name;
	return name ? name : "";
}

void session_put_source(struct session *s, struct kinf_buf *out) {
	const struct member *m = s->members[s->cur];
	const struct kinf_rest_config *config = m->cli->config;

	if (!m->res) {
		return;	/* --from: neither is known */
	}
	kinf_buf_puts(out, ",\"resource\":");
	kinf_json_put_quoted(out, m->resource_name, strlen(m->resource_name));
	kinf_buf_puts(out, ",\"context\":");
	if (config && config->context_name) {
		kinf_json_put_quoted(out, config->context_name, strlen(config->context_name));
	} else {
		kinf_buf_puts(out, "null");
	}
}

static void print_stat_lines(const struct kinf_reflector_stats *st,
		unsigned long pops, long printed, size_t cached) {
	fprintf(stderr,
		"lists %lu\nrelists %lu\npages %lu\nitems_listed %lu\nwatches %lu\n"
		"events %lu\nbookmarks %lu\nexpired %lu\nerrors %lu\nbackoffs %lu\n"
		"resyncs %lu\nwatch_list_fallbacks %lu\npops %lu\nprinted %ld\ncached %zu\n",
		st->lists, st->relists, st->pages, st->items_listed, st->watches, st->events,
		st->bookmarks, st->expired, st->errors, st->backoffs, st->resyncs,
		st->watch_list_fallbacks, pops, printed, cached);
}

/* The totals as for one informer; with several, then a line for each. */
static void print_stats(struct session *s) {
	struct kinf_reflector_stats t = {0};
	unsigned long pops = 0;
	size_t cached = 0;

	for (size_t i = 0; i < s->n_members; i++) {
		struct kinf_informer_stats is;
		kinf_informer_get_stats(kinf_informerset_get(s->set, i), &is);
		const struct kinf_reflector_stats *st = &is.source;
		t.lists += st->lists;
		t.relists += st->relists;
		t.pages += st->pages;
		t.items_listed += st->items_listed;
		t.watches += st->watches;
		t.events += st->events;
		t.bookmarks += st->bookmarks;
		t.expired += st->expired;
		t.errors += st->errors;
		t.backoffs += st->backoffs;
		t.resyncs += st->resyncs;
		t.watch_list_fallbacks += st->watch_list_fallbacks;
		pops += is.pops;
		cached += is.cached;
	}
	print_stat_lines(&t, pops, s->printed, cached);
	unsigned long requests = 0;
	for (size_t i = 0; i < s->n_clis; i++) {
		if (s->clis[i]->http) {
			requests += kinf_http_request_count(s->clis[i]->http);
		}
	}
	if (s->cli->http) {
		fprintf(stderr, "requests %lu\n", requests);
	}
	for (size_t i = 0; s->n_members > 1 && i < s->n_members; i++) {
		struct kinf_informer_stats is;
		kinf_informer_get_stats(kinf_informerset_get(s->set, i), &is);
		fprintf(stderr, "informer %s: lists %lu relists %lu watches %lu events %lu "
				"errors %lu pops %lu cached %zu\n", s->members[i]->label,
				is.source.lists, is.source.relists, is.source.watches,
				is.source.events, is.source.errors, is.pops, is.cached);
	}
}

/*
 * The cache as JSON lines: each object as the server sent it; with several
 * contexts (where one object may be in each), {"context":...,"object":...}.
 */
static int dump(struct session *s) {
	FILE *out = strcmp(s->so.dump_file, "-") == 0 ? stderr : fopen(s->so.dump_file, "w");
	struct kinf_buf line = {0};
	int rc = 0;
	if (!out) {
		fprintf(stderr, "kinf: --dump-on-exit %s: %s\n", s->so.dump_file, strerror(errno));
		return EXIT_ERROR;
	}
	for (size_t m = 0; rc == 0 && m < s->n_members; m++) {
		struct kinf_object_list list = {0};
		if (s->members[m]->hidden) {
			continue;
		}
		rc = kinf_indexer_list(kinf_informer_indexer(kinf_informerset_get(s->set, m)),
				&list);
		const char *context = s->members[m]->cli->config->context_name;
		for (size_t i = 0; rc == 0 && i < list.n; i++) {
			size_t len;
			const char *json = kinf_object_json(list.v[i], &len);
			kinf_buf_reset(&line);
			if (s->n_clis > 1) {
				kinf_buf_puts(&line, "{\"context\":");
				if (kinf_json_quote(&line, context ? context : "",
						context ? strlen(context) : 0) < 0) {
					rc = -KINF_ENOMEM;
				}
				kinf_buf_puts(&line, ",\"object\":");
			}
			kinf_buf_put(&line, json, len);
			kinf_buf_puts(&line, s->n_clis > 1 ? "}\n" : "\n");
			if (rc == 0 && (rc = kinf_buf_error(&line)) == 0 &&
					fwrite(line.data, 1, line.len, out) != line.len) {
				rc = -KINF_EIO;
			}
		}
		kinf_object_list_release(&list);
	}
	kinf_buf_release(&line);
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
	if (s->set) {
		kinf_informerset_stop(s->set);
	}
	if (atomic_load(&s->progress_shown)) {
		cli_progress_erase();
	}
	if (s->so.stats && s->set) {
		print_stats(s);
	}
	if (s->so.dump_file && s->set) {
		int d = dump(s);
		if (status == EXIT_OK) {
			status = d;
		}
	}
	if (status == EXIT_OK && s->failed_status) {
		status = s->failed_status;	/* some failed, the others went on */
	}
	kinf_informerset_free(s->set);
	while (s->n_members > 0) {
		session_drop_last_member(s);
	}
	free(s->members);
	for (size_t c = 0; s->dyn && c < s->n_clis; c++) {
		session_wants_release(&s->dyn[c]);
	}
	free(s->dyn);
	for (size_t c = 0; s->review_http && c < s->n_clis; c++) {
		kinf_http_free(s->review_http[c]);
	}
	free(s->review_http);
	for (size_t i = 1; i < s->n_clis; i++) {
		cli_release(s->clis[i]);
		free(s->clis[i]);
	}
	free(s->clis);
	kinf_strv_release(&s->contexts);
	if (s->from_fd > STDIN_FILENO) {
		close(s->from_fd);
	}
	kinf_strv_release(&s->namespaces);
	cli_release(s->cli);
	free(s);
	return status;
}
