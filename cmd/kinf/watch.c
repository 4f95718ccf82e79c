#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "condition.h"
#include "customcolumns.h"
#include "deltafifo.h"
#include "json.h"
#include "jsondiff.h"
#include "kindcols.h"
#include "session.h"
#include "table.h"
#include "toyaml.h"

static const char watch_usage[] =
	"Usage: kinf watch RESOURCE[,RESOURCE...] [NAME...] [OPTIONS]\n"
	"       kinf watch TYPE/NAME... [OPTIONS]\n"
	"\n"
	"Run an informer (list, then watch from the list's resourceVersion,\n"
	"reconnecting and relisting as client-go does) and print its events:\n"
	"ADDED, UPDATED and DELETED. A closed stream is never the end: kinf\n"
	"reconnects. Ends on SIGINT/SIGTERM, --timeout, --count or\n"
	"--exit-after-sync, with exit status 0.\n"
	"\n"
	"Several resources (pods,configmaps), namespaces (-n a,b) and contexts\n"
	"(--context a,b) run an informer each, their events merged; -o json lines name their \"resource\"\n"
	"and \"context\". One that fails for good (403 in one namespace) is\n"
	"reported and the others go on; the exit status is then 1.\n"
	"Several names (deploy a b, deploy/a pod/b) watch their types and print\n"
	"only their events; --for waits for all of them, as kubectl wait.\n"
	"A type some contexts lack is reported for each and watched in the others.\n"
	"\n"
	"Examples:\n"
	"  kinf watch pods -n default\n"
	"  kinf watch pods,configmaps -n app,web -o json\n"
	"  kinf watch pods -A -o json | jq -c 'select(.type==\"DELETED\")'\n"
	"  kinf watch deploy web --diff\n"
	"  kinf watch pods/web-1 --for condition=Ready --timeout 60s\n"
	"  kinf watch pods -l app=web --for 'jsonpath={.status.phase}=Running'\n"
	"  kinf watch deploy/web --for rollout --timeout 5m\n"
	"  kubectl get pods -w --output-watch-events -o json | kinf watch --from -\n"
	"\n"
	"Watch options:\n"
	"  -w, --watch                    watch (kinf watch always does; for the habit of\n"
	"                                 kubectl get -w, which is kinf list -w)\n"
	"      --watch-only               do not print the initial list's events\n"
	"      --no-resync-events         leave out updates that did not change the\n"
	"                                 resourceVersion (\"resync\":true in -o json)\n"
	"      --old                      with -o json, add \"oldObject\" to updates\n"
	"      --diff                     print the fields an update changed\n"
	"      --diff-all                 --diff including managedFields and resourceVersion\n"
	"      --timestamps WHEN          none, local (default), utc or rfc3339\n"
	"      --color WHEN               auto (default), always or never\n"
	"\n"
	"Waiting (the informer's answer to kubectl wait):\n"
	"      --for CONDITION            wait until CONDITION holds, then exit 0:\n"
	"                                 create, delete, condition=TYPE[=STATUS],\n"
	"                                 jsonpath='{PATH}'[=VALUE], rollout (as kubectl\n"
	"                                 rollout status; exit status 5 when it fails);\n"
	"                                 several are ANDed; with -l, for every match;\n"
	"                                 gives up after --timeout (default 30s; 0 checks\n"
	"                                 once) with exit status 4; 130 or 143 when\n"
	"                                 SIGINT or SIGTERM interrupts the wait\n"
	"      --all                      wait for every object, not one NAME\n"
	"\n";

enum {
	OPT_WATCH_ONLY = OPT_CMD_FIRST,
	OPT_NO_RESYNC_EVENTS,
	OPT_OLD,
	OPT_DIFF,
	OPT_DIFF_ALL,
	OPT_TIMESTAMPS,
	OPT_COLOR,
	OPT_FOR,
	OPT_ALL,
};

static const struct option watch_options[] = {
	CLI_COMMON_OPTIONS,
	SESSION_OPTIONS,
	{ "watch", no_argument, NULL, 'w' },
	{ "watch-only", no_argument, NULL, OPT_WATCH_ONLY },
	{ "no-resync-events", no_argument, NULL, OPT_NO_RESYNC_EVENTS },
	{ "old", no_argument, NULL, OPT_OLD },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "diff-all", no_argument, NULL, OPT_DIFF_ALL },
	{ "timestamps", required_argument, NULL, OPT_TIMESTAMPS },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "for", required_argument, NULL, OPT_FOR },
	{ "all", no_argument, NULL, OPT_ALL },
	{ NULL, 0, NULL, 0 },
};

enum timestamps { TS_NONE, TS_LOCAL, TS_UTC, TS_RFC3339 };

struct watch {
	struct cli cli;
	struct session_opts so;
	struct session *session;
	bool watch_only;
	bool no_resync_events;	/* --no-resync-events */
	bool old;
	bool diff;
	bool diff_all;
	bool color;
	enum timestamps timestamps;
	bool timestamps_given;
	struct kinf_table *table;
	struct kinf_customcolumns *columns;	/* -o custom-columns */
	const struct kinf_kindcols *kindcols;	/* the kind whose columns the table shows */
	struct kinf_condition *fors;	/* --for, ANDed */
	size_t n_fors;
	bool all;			/* --all */
	bool checked;			/* the --for targets were looked at once */
	bool no_match;			/* the first look found none to wait for */
	enum kinf_condition_state wait;	/* the last look's verdict */
	struct kinf_buf why;		/* what it found still not true */
	struct session_targets targets;	/* TYPE [NAME...] or TYPE/NAME... */
	const char *color_arg;		/* --color */
	bool help;			/* -h: print the usage, nothing else */
	bool streaming;		/* the first block is out */
	size_t block_rows;	/* rows held in the first block */
	struct kinf_buf line;
	unsigned long yaml_docs;	/* -o yaml documents printed */
	bool data_error;	/* an object could not be shown: exit 1 at the end */
	int print_rc;		/* the table's block could not be printed, or 0 */
	int wait_rc;		/* --for's targets could not be gathered, or 0 */
};

/*
 * An object whose data cannot be shown (a number beyond float64): its line
 * on stderr, naming it and the field, and exit status 1 at the end. The
 * watch goes on.
 */
static void object_error(struct watch *w, int rc, const struct kinf_error *err) {
	cli_report(&w->cli, rc, err, NULL);
	w->data_error = true;
}

static void format_time(enum timestamps ts, char *buf, size_t size) {
	struct timespec now;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &now);
	if (ts == TS_LOCAL) {
		localtime_r(&now.tv_sec, &tm);
		strftime(buf, size, "%H:%M:%S", &tm);
	} else if (ts == TS_UTC) {
		gmtime_r(&now.tv_sec, &tm);
		strftime(buf, size, "%H:%M:%SZ", &tm);
	} else {
		gmtime_r(&now.tv_sec, &tm);
		size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(buf + n, size - n, ".%06ldZ", now.tv_nsec / 1000);
	}
}

static const char *event_name(const struct kinf_informer_event *ev) {
	switch (ev->type) {
	case KINF_INFORMER_ADD: return "ADDED";
	case KINF_INFORMER_UPDATE: return "UPDATED";
	default: return "DELETED";
	}
}

static const char *event_color(const struct kinf_informer_event *ev) {
	switch (ev->type) {
	case KINF_INFORMER_ADD: return "\033[32m";
	case KINF_INFORMER_UPDATE: return "\033[33m";
	default: return "\033[31m";
	}
}

/*
 * The fields an update changed. Both sides typed first: objects from a
 * list lack apiVersion and kind, watch events carry them, and that is no
 * change (kinf prints both typed).
 */
static int diff_event(struct watch *w, const struct kinf_informer_event *ev,
		bool as_json, const char *indent, struct kinf_buf *out) {
	struct kinf_object *old = session_typed(w->session, ev->old);
	struct kinf_object *new = session_typed(w->session, ev->obj);
	int rc = -KINF_ENOMEM;
	if (old && new) {
		/* --from has no resource: one side's type fills the other's. */
		struct kinf_object *o2 = kinf_object_with_type(old,
				kinf_object_api_version(new), kinf_object_kind(new));
		struct kinf_object *n2 = kinf_object_with_type(new,
				kinf_object_api_version(old), kinf_object_kind(old));
		kinf_object_unref(old);
		kinf_object_unref(new);
		old = o2;
		new = n2;
	}
	if (old && new) {
		size_t ol, nl;
		const char *o = kinf_object_json(old, &ol);
		const char *n = kinf_object_json(new, &nl);
		rc = kinf_jsondiff_append(o, ol, n, nl, w->diff_all, as_json, indent, out);
	}
	kinf_object_unref(old);
	kinf_object_unref(new);
	return rc;
}

/* obj's typed JSON into b; a failure sticks in b, as the put family's. */
static void put_typed(struct watch *w, struct kinf_object *obj, struct kinf_buf *b) {
	int rc = kinf_buf_error(b) ? 0 : session_append_typed(w->session, obj, b);
	if (rc < 0) {
		kinf_buf_fail(b, rc);
	}
}

/* The -o json line of ev, newline-terminated, in w->line. */
static void event_json(struct watch *w, const struct kinf_informer_event *ev) {
	struct kinf_buf *b = &w->line;
	kinf_buf_reset(b);
	kinf_buf_puts(b, "{\"type\":");
	kinf_json_put_quoted(b, event_name(ev), strlen(event_name(ev)));
	kinf_buf_puts(b, ",\"key\":");
	kinf_json_put_quoted(b, ev->key, strlen(ev->key));
	session_put_source(w->session, b);
	if (ev->obj) {
		const char *rv = kinf_object_resource_version(ev->obj);
		kinf_buf_puts(b, ",\"resourceVersion\":");
		kinf_json_put_quoted(b, rv, strlen(rv));
	}
	if (w->timestamps_given && w->timestamps != TS_NONE) {
		char t[64];
		format_time(TS_RFC3339, t, sizeof(t));
		kinf_buf_puts(b, ",\"time\":");
		kinf_json_put_quoted(b, t, strlen(t));
	}
	if (ev->initial) {
		kinf_buf_puts(b, ",\"initial\":true");
	}
	if (ev->final_state_unknown) {
		kinf_buf_puts(b, ",\"finalStateUnknown\":true");
	}
	if (ev->is_sync) {
		kinf_buf_puts(b, ",\"resync\":true");
	}
	if (ev->obj) {
		kinf_buf_puts(b, ",\"object\":");
		put_typed(w, ev->obj, b);
	} else {
		kinf_buf_puts(b, ",\"object\":null");
	}
	if (ev->type == KINF_INFORMER_UPDATE && ev->old && w->old) {
		kinf_buf_puts(b, ",\"oldObject\":");
		put_typed(w, ev->old, b);
	}
	if (ev->type == KINF_INFORMER_UPDATE && ev->old && ev->obj && w->diff) {
		kinf_buf_puts(b, ",\"diff\":");
		int rc = kinf_buf_error(b) ? 0 : diff_event(w, ev, true, "", b);
		if (rc == -KINF_ENOMEM) {
			kinf_buf_fail(b, rc);	/* the line is not printed: out of memory is */
		} else if (rc < 0) {
			kinf_buf_puts(b, "null");	/* a side that does not parse */
		}
	}
	kinf_buf_puts(b, "}\n");
}

static int print_json(struct watch *w, const struct kinf_informer_event *ev) {
	event_json(w, ev);
	cli_emit(stdout, &w->line);
	return 0;
}

/*
 * -o yaml: the -o json event as a YAML document, documents separated by
 * "---" as kubectl get -w -o yaml separates them.
 */
static int print_yaml(struct watch *w, const struct kinf_informer_event *ev) {
	struct kinf_error err = {0};
	event_json(w, ev);
	if (w->yaml_docs++ > 0) {
		fputs("---\n", stdout);
	}
	int rc = kinf_toyaml_write(stdout, w->line.data, w->line.len, &err);
	if (rc < 0 && !ferror(stdout)) {	/* a closed pipe ends quietly */
		cli_report(&w->cli, rc, &err, "output");
	}
	return rc;
}

/*
 * The header and the first rows (the initial list's, else those of the
 * first pop: under --watch-only or --from) print as one block whose
 * widths come from all of them, as kubectl's tabwriter aligns a header
 * with the rows it came with; from then on rows print as they come. The
 * block waits for a row unless force (the end).
 */
static void table_stream(struct watch *w, bool force) {
	if (w->table && !w->streaming && (w->block_rows > 0 || force)) {
		int rc = kinf_table_flush(w->table, stdout);
		if (rc < 0 && w->print_rc == 0) {
			w->print_rc = rc;	/* checked once, as a sticky writer's */
		}
		w->streaming = true;
	}
}

/* One row: into the first block while it is being made, else printed. */
static int table_row(struct watch *w, const char *const *cells) {
	if (!w->streaming) {
		w->block_rows++;
		return kinf_table_add_row(w->table, cells);
	}
	return kinf_table_print_row(w->table, cells, stdout);
}

static int print_table_line(struct watch *w, const struct kinf_informer_event *ev) {
	struct kinf_strv cells = {0};
	bool wide = w->cli.format == KINF_OUTPUT_WIDE;
	int rc = 0;

	if (!w->table) {
		const struct kinf_resource *res = session_resource(w->session);
		w->kindcols = res ? session_kindcols(w->session) :
			ev->obj ? kinf_kindcols_for_object(ev->obj) : kinf_kindcols_for("", "");
		struct kinf_strv headers = {0};
		if (w->timestamps != TS_NONE) {
			kinf_strv_put_str(&headers, "TIME");
		}
		kinf_strv_put_str(&headers, "EVENT");
		if (session_context(w->session)) {
			kinf_strv_put_str(&headers, "CONTEXT");
		}
		if (cli_namespace_column(&w->cli) || w->so.from) {
			kinf_strv_put_str(&headers, "NAMESPACE");
		}
		int hrc = kinf_kindcols_headers(w->kindcols, wide, &headers);
		w->table = hrc < 0 || kinf_strv_error(&headers) ? NULL : kinf_table_new(headers.n);
		if (!w->table) {
			kinf_strv_release(&headers);
			return -KINF_ENOMEM;
		}
		/* Wide enough for every event name and time up front. */
		const char *widest[64] = {0};
		char t[64];
		format_time(w->timestamps, t, sizeof(t));
		for (size_t i = 0; i < headers.n && i < 64; i++) {
			widest[i] = "";
		}
		if (w->timestamps != TS_NONE) {
			widest[0] = t;
		}
		widest[w->timestamps != TS_NONE ? 1 : 0] = "UPDATED";
		kinf_table_widen(w->table, widest);
		if (!w->cli.no_headers) {
			kinf_table_put_row(w->table, (const char *const *)headers.v);
		}
		kinf_strv_release(&headers);
	}
	if (w->timestamps != TS_NONE) {
		char t[64];
		format_time(w->timestamps, t, sizeof(t));
		kinf_strv_put_str(&cells, t);
	}
	kinf_strv_put_str(&cells, event_name(ev));
	if (session_context(w->session)) {
		kinf_strv_put_str(&cells, session_context(w->session));
	}
	if (cli_namespace_column(&w->cli) || w->so.from) {
		const char *slash = strchr(ev->key, '/');
		kinf_strv_put(&cells, ev->key, slash ? (size_t)(slash - ev->key) : 0);
	}
	if (ev->obj) {
		struct kinf_error err = {0};
		rc = kinf_kindcols_cells(w->kindcols, ev->obj, wide, NULL, &cells, &err);
		if (rc < 0 && rc != -KINF_ENOMEM) {
			object_error(w, rc, &err);
			kinf_strv_release(&cells);
			return 0;
		}
	} else {
		const char *slash = strchr(ev->key, '/');
		kinf_strv_put_str(&cells, slash ? slash + 1 : ev->key);
	}
	/* Pad or cut to the table's width (a tombstone without its object). */
	struct kinf_strv headers = {0};
	int hrc = kinf_kindcols_headers(w->kindcols, wide, &headers);
	size_t want = headers.n + 1 + (w->timestamps != TS_NONE) +
		(session_context(w->session) != NULL) +
		(cli_namespace_column(&w->cli) || w->so.from);
	if (rc == 0 && (hrc < 0 || kinf_strv_error(&headers) || kinf_strv_error(&cells))) {
		rc = -KINF_ENOMEM;	/* a title or a cell could not be made */
	}
	kinf_strv_release(&headers);
	while (rc == 0 && cells.n < want) {
		rc = kinf_strv_push_str(&cells, "<unknown>");
	}
	if (rc == 0) {
		size_t ei = w->timestamps != TS_NONE ? 1 : 0;
		if (w->color) {
			kinf_table_color_next(w->table, ei, event_color(ev));
		}
		rc = table_row(w, (const char *const *)cells.v);
		bool more = ev->final_state_unknown ||
			(w->diff && ev->type == KINF_INFORMER_UPDATE && ev->old && ev->obj);
		if (more) {
			table_stream(w, false);	/* the lines under it follow it */
		}
		if (ev->final_state_unknown) {
			fputs("  (final state unknown)\n", stdout);
		}
	}
	if (rc == 0 && w->diff && ev->type == KINF_INFORMER_UPDATE && ev->old && ev->obj) {
		kinf_buf_reset(&w->line);
		/* Nothing changed but what is skipped: no line, and no buffer yet. */
		if (diff_event(w, ev, false, "    ", &w->line) == 0 && w->line.len) {
			cli_emit(stdout, &w->line);
		}
	}
	kinf_strv_release(&cells);
	return rc;
}

/* -o jsonpath runs per object; custom-columns print a header, then rows. */
static int print_templated_event(struct watch *w, const struct kinf_informer_event *ev) {
	if (!ev->obj) {
		return 0;
	}
	struct kinf_object *typed = session_typed(w->session, ev->obj);
	if (!typed) {
		return -KINF_ENOMEM;
	}
	if (w->cli.format != KINF_OUTPUT_CUSTOM_COLUMNS) {
		struct cli_objects objs = cli_objects_array(&typed, 1);
		if (cli_print_templated(&w->cli, &objs, true, stdout) != EXIT_OK) {
			w->data_error = true;	/* its line is out */
		}
		kinf_object_unref(typed);
		return 0;
	}
	if (!w->columns) {
		if (kinf_customcolumns_parse(w->cli.output_arg, &w->columns, NULL) < 0) {
			kinf_object_unref(typed);
			return -KINF_EINVAL;
		}
		w->table = kinf_table_new(w->columns->n);
		if (w->table && !w->cli.no_headers) {
			kinf_table_put_row(w->table, (const char *const *)w->columns->names);
		}
	}
	struct kinf_error err = {0};
	json_t *root = kinf_object_tree(typed, &err);
	struct kinf_strv cells = {0};
	if (!root && err.code != KINF_ENOMEM) {
		object_error(w, -err.code, &err);
	} else if (root && w->table && kinf_customcolumns_cells(w->columns, root, &cells) == 0) {
		table_row(w, (const char *const *)cells.v);
	}
	kinf_strv_release(&cells);
	json_decref(root);
	kinf_object_unref(typed);
	return 0;
}

static int print_event(struct watch *w, const struct kinf_informer_event *ev) {
	switch (w->cli.format) {
	case KINF_OUTPUT_JSONPATH:
	case KINF_OUTPUT_JSONPATH_JSON:
	case KINF_OUTPUT_CUSTOM_COLUMNS:
		return print_templated_event(w, ev);
	case KINF_OUTPUT_JSON:
		return print_json(w, ev);
	case KINF_OUTPUT_YAML:
		return print_yaml(w, ev);
	case KINF_OUTPUT_NAME:
		if (ev->obj && session_resource(w->session)) {
			cli_print_name(session_resource(w->session), ev->obj, stdout);
		} else {
			cli_printf_safe(stdout, "%s", ev->key);
		}
		return 0;
	default:
		return print_table_line(w, ev);
	}
}

/*
 * What --for waits for, in every informer: each object named (in the
 * order given; a missing one is NULL), or every cached object. refs gets
 * "kind/name" of each, for messages.
 */
static int wait_targets(struct watch *w, struct kinf_object_list *list,
		struct kinf_strv *refs) {
	int rc = 0;
	for (size_t m = 0; rc == 0 && m < session_n_informers(w->session); m++) {
		if (!session_select(w->session, m)) {
			continue;
		}
		struct kinf_indexer *idx = session_indexer(w->session);
		struct kinf_object_list some = {0};
		size_t n_names;
		char *const *names = session_names(w->session, &n_names);
		if (n_names) {
			some.v = calloc(n_names, sizeof(*some.v));
			rc = some.v ? 0 : -KINF_ENOMEM;
			for (size_t i = 0; rc == 0 && i < n_names; i++) {
				struct kinf_buf key = {0};
				if (session_namespace(w->session)) {
					kinf_buf_putf(&key, "%s/", session_namespace(w->session));
				}
				kinf_buf_puts(&key, names[i]);
				char *k = kinf_buf_take(&key);
				if (!k) {
					rc = -KINF_ENOMEM;	/* never "not there" for want of a key */
					break;
				}
				some.v[some.n++] = kinf_indexer_get(idx, k);
				free(k);
			}
		} else {
			rc = kinf_indexer_list(idx, &some);
		}
		struct kinf_object **v = rc == 0 ?
			realloc(list->v, (list->n + some.n + 1) * sizeof(*v)) : NULL;
		if (v) {
			list->v = v;
		} else if (rc == 0) {
			rc = -KINF_ENOMEM;
		}
		for (size_t i = 0; i < some.n; i++) {
			struct kinf_buf ref = {0};
			if (rc == 0) {
				session_put_ref(w->session,
						some.v[i] ? kinf_object_name(some.v[i]) : names[i], &ref);
			}
			char *r = rc == 0 ? kinf_buf_take(&ref) : NULL;
			if (r && kinf_strv_push_take(refs, r) == 0) {
				list->v[list->n++] = some.v[i];
			} else {
				rc = -KINF_ENOMEM;	/* a target left out would be a wrong verdict */
				kinf_object_unref(some.v[i]);
			}
		}
		free(some.v);
	}
	return rc;
}

/*
 * Whether every --for holds for the targets (the objects named, or with
 * --all or a selector every cached object). When not, why says what is
 * still not true for which objects; when met, each object's "condition
 * met" line is printed. KINF_COND_FAILED when one never will be (why says
 * which).
 */
static enum kinf_condition_state conditions_met(struct watch *w, struct kinf_buf *why) {
	struct kinf_object_list list = {0};
	struct kinf_strv refs = {0};
	size_t unmet = 0;
	struct kinf_buf failed = {0};

	kinf_buf_reset(why);
	int rc = wait_targets(w, &list, &refs);
	if (rc < 0) {
		w->wait_rc = rc;
		kinf_object_list_release(&list);
		kinf_strv_release(&refs);
		return KINF_COND_NOT_MET;
	}
	if (list.n == 0) {
		bool ok = true;
		for (size_t c = 0; c < w->n_fors; c++) {
			ok &= w->fors[c].kind == KINF_COND_DELETE;
		}
		if (!ok) {
			kinf_buf_puts(why, "no matching objects");
		}
		/*
		 * kubectl wait visits what its first list finds: none, and it
		 * fails at once unless waiting for deletion.
		 */
		w->no_match = !ok && !w->checked;
		w->checked = true;
		free(list.v);
		kinf_strv_release(&refs);
		return ok ? KINF_COND_MET : KINF_COND_NOT_MET;
	}
	w->checked = true;
	for (size_t i = 0; i < list.n; i++) {
		struct kinf_buf one = {0};
		enum kinf_condition_state st = KINF_COND_MET;
		for (size_t c = 0; c < w->n_fors && st == KINF_COND_MET; c++) {
			st = kinf_condition_eval(&w->fors[c], list.v[i], &one);
		}
		if (st == KINF_COND_ERROR) {
			w->wait_rc = -KINF_ENOMEM;
		}
		if (st == KINF_COND_FAILED && !failed.len) {
			kinf_buf_putf(&failed, "%s: %s", refs.v[i], one.data ? one.data : "");
		}
		if (st != KINF_COND_MET && unmet++ < 5) {
			kinf_buf_putf(why, "%s%s: %s", unmet > 1 ? "; " : "", refs.v[i],
					one.data ? one.data : "");
		}
		kinf_buf_release(&one);
	}
	if (unmet > 5) {
		kinf_buf_putf(why, "; and %zu more", unmet - 5);
	}
	enum kinf_condition_state st = unmet == 0 ? KINF_COND_MET : KINF_COND_NOT_MET;
	if (failed.len) {
		kinf_buf_reset(why);
		kinf_buf_put(why, failed.data, failed.len);
		st = KINF_COND_FAILED;
	}
	if (w->wait_rc < 0) {
		st = KINF_COND_NOT_MET;	/* no verdict: the caller says out of memory */
	}
	for (size_t i = 0; st == KINF_COND_MET && i < list.n; i++) {
		cli_printf_safe(stdout, "%s condition met", refs.v[i]);
	}
	kinf_buf_release(&failed);
	kinf_object_list_release(&list);
	kinf_strv_release(&refs);
	return st;
}

/* One option of watch's own: 1 handled, 0 not one, or -status. */
static int watch_option(struct watch *w, int opt, const char *arg) {
	struct kinf_error err = {0};

	switch (opt) {
	case 'w': return 1;	/* it watches anyway */
	case OPT_WATCH_ONLY: w->watch_only = true; return 1;
	case OPT_NO_RESYNC_EVENTS: w->no_resync_events = true; return 1;
	case OPT_ALL: w->all = true; return 1;
	case OPT_OLD: w->old = true; return 1;
	case OPT_DIFF: w->diff = true; return 1;
	case OPT_DIFF_ALL: w->diff = w->diff_all = true; return 1;
	case OPT_FOR: {
		struct kinf_condition *v = realloc(w->fors, (w->n_fors + 1) * sizeof(*v));
		if (!v) {
			return -cli_error(&w->cli, -KINF_ENOMEM, NULL, NULL);
		}
		w->fors = v;
		int rc = kinf_condition_parse(arg, &w->fors[w->n_fors], &err);
		if (rc < 0) {
			return -cli_option_error(&w->cli, rc, &err, NULL);
		}
		w->n_fors++;
		/* A jsonpath that reads them: keep managedFields in the cache. */
		w->so.keep_managed_fields |= strstr(arg, "managedFields") != NULL;
		return 1;
	}
	case OPT_COLOR:
		if (strcmp(arg, "auto") && strcmp(arg, "always") && strcmp(arg, "never")) {
			return -cli_usage_error(&w->cli, "--color must be auto, always or never, "
					"not \"%s\"", arg);
		}
		w->color_arg = arg;
		return 1;
	case OPT_TIMESTAMPS: {
		static const char *const names[] = {
			[TS_NONE] = "none", [TS_LOCAL] = "local", [TS_UTC] = "utc",
			[TS_RFC3339] = "rfc3339",
		};
		w->timestamps_given = true;
		for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
			if (strcmp(arg, names[i]) == 0) {
				w->timestamps = (enum timestamps)i;
				return 1;
			}
		}
		return -cli_usage_error(&w->cli, "--timestamps must be none, local, utc "
				"or rfc3339, not \"%s\"", arg);
	}
	}
	int r = session_option(&w->cli, &w->so, opt, arg);
	return r == 0 ? cli_common_option(&w->cli, opt, arg) : r;
}

/* The options into w; *ret_optind: the first argument. */
static int watch_parse(struct watch *w, int argc, char **argv, int *ret_optind) {
	int opt;

	optind = 0;
	while ((opt = cli_getopt(argc, argv, ":" CLI_COMMON_SHORT "w", watch_options)) != -1) {
		if (opt == 'h') {
			w->help = true;
			return EXIT_OK;
		}
		int r = watch_option(w, opt, optarg);
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&w->cli, watch_options);
		}
	}
	*ret_optind = optind;
	return EXIT_OK;
}

/* The arguments (TYPE [NAME...], TYPE/NAME...) and how the options go together. */
static int watch_check(struct watch *w, char **pos, int n_pos) {
	int status = session_parse_targets(&w->cli, pos, n_pos, &w->targets);
	if (status != EXIT_OK) {
		return status;
	}
	size_t n_names = 0;
	for (size_t i = 0; i < w->targets.n; i++) {
		n_names += w->targets.v[i].n_names;
	}
	if (w->n_fors) {
		/* A selector waits for every match, as kubectl wait -l does. */
		if (!n_names && !w->all && !w->cli.label_selector && !w->cli.field_selector) {
			return cli_usage_error(&w->cli, "--for needs one object (NAME or TYPE/NAME), "
					"a selector (-l, --field-selector) or --all");
		}
		if (n_names && w->all) {
			return cli_usage_error(&w->cli, "--all and a NAME exclude each other");
		}
		w->so.one_namespace = true;
		w->so.one_namespace_why = "watch --for";
		w->so.tables_per_type = true;	/* it prints no table */
		if (!w->so.timeout_given) {
			w->so.timeout_ms = 30000;	/* kubectl wait's default */
		} else if (w->so.timeout_ms == 0) {
			w->so.exit_after_sync = true;	/* check once */
		}
	} else if (w->all) {
		return cli_usage_error(&w->cli, "--all goes with --for");
	}
	if (strcmp(w->color_arg, "always") == 0) {
		w->color = true;
	} else if (strcmp(w->color_arg, "auto") == 0) {
		const char *nc = getenv("NO_COLOR");
		w->color = isatty(STDOUT_FILENO) && !(nc && nc[0]);
	}
	w->so.keep_managed_fields |= w->diff_all;
	/* an empty first list ends the wait at once: see conditions_met */
	w->so.wake_on_sync = w->n_fors > 0;
	return EXIT_OK;
}

/* Each --for bound to each informer's type (rollout: one type). */
static int bind_conditions(struct watch *w) {
	for (size_t m = 0; m < session_n_informers(w->session); m++) {
		if (!session_select(w->session, m)) {
			continue;
		}
		const struct kinf_resource *res = session_resource(w->session);
		for (size_t c = 0; res && c < w->n_fors; c++) {
			struct kinf_error err = {0};
			if (w->fors[c].kind == KINF_COND_ROLLOUT && session_several_types(w->session)) {
				return cli_usage_error(&w->cli, "--for rollout takes one resource type");
			}
			int rc = kinf_condition_bind(&w->fors[c], res->group, res->kind, &err);
			if (rc < 0) {
				return cli_option_error(&w->cli, rc, &err, NULL);
			}
		}
	}
	return EXIT_OK;
}

/* Print one pop's events (those of the names given, if any). */
static void print_batch(struct watch *w, const struct kinf_informer_batch *batch) {
	for (size_t i = 0; i < batch->n; i++) {
		const struct kinf_informer_event *ev = &batch->v[i];
		if (w->watch_only && ev->initial) {
			continue;
		}
		if (!session_name_wanted(w->session, ev->key)) {
			continue;
		}
		/*
		 * client-go hands an update with an unchanged resourceVersion (a
		 * resync, or an object a relist found unchanged) to every
		 * listener that is "syncing": addListener marks each one so and
		 * only shouldResync, on a resync tick, can unmark it. With no
		 * period no tick comes; with one, kinf's single handler is due
		 * at every tick. So every handler gets them, marked here, unless
		 * asked to leave them out.
		 */
		if (ev->is_sync && w->no_resync_events) {
			continue;
		}
		print_event(w, ev);
		session_count(w->session);
	}
}

/*
 * Pop and print (or, with --for, check) until the session ends or the
 * wait is decided; w->wait holds the last verdict.
 */
static int watch_loop(struct watch *w) {
	int status = EXIT_OK;
	while (status == EXIT_OK) {
		struct kinf_informer_batch batch;
		int r = session_next(w->session, &batch, NULL);
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			/* Over; with --for check the final state once more. */
			if (w->n_fors && session_synced(w->session)) {
				w->wait = conditions_met(w, &w->why);
			}
			return w->wait_rc < 0 ? cli_error(&w->cli, w->wait_rc, NULL, NULL) : EXIT_OK;
		}
		if (w->n_fors) {
			/* Waiting prints only the result, as kubectl wait does. */
			kinf_informer_batch_release(&batch);
			if (session_synced(w->session)) {
				w->wait = conditions_met(w, &w->why);
				if (w->wait_rc < 0) {
					return cli_error(&w->cli, w->wait_rc, NULL, NULL);
				}
				if (w->wait != KINF_COND_NOT_MET || w->no_match) {
					return EXIT_OK;
				}
			}
			continue;
		}
		print_batch(w, &batch);
		kinf_informer_batch_release(&batch);
		if (w->table && session_synced(w->session)) {
			table_stream(w, false);
		}
		if (w->print_rc < 0) {
			return cli_print_failed(&w->cli, w->print_rc, NULL);
		}
		if (ferror(stdout)) {
			break;	/* a closed pipe: end quietly */
		}
		/* Flush per event while the queue is drained; batch under load. */
		fflush(stdout);
	}
	return status;
}

/* What --for came to: the line on stderr and the exit status. */
static int wait_result(struct watch *w, int status) {
	const char *what = w->n_fors == 1 ? w->fors[0].spec : "the conditions";
	const char *why = w->why.len ? w->why.data : "the initial list did not complete";
	int sig = session_stop_signal();

	if (status != EXIT_OK || !w->n_fors) {
		return status;
	}
	if (w->no_match) {
		/* kubectl wait's words (errNoMatchingResources), its status 1 */
		fprintf(stderr, "kinf: no matching resources found\n");
		return EXIT_ERROR;
	}
	if (w->wait == KINF_COND_FAILED) {
		/* kubectl rollout status fails too: waiting longer will not help. */
		cli_printf_safe(stderr, "kinf: %s failed: %s", what, w->why.data ? w->why.data : "");
		return EXIT_FAILED;
	}
	if (w->wait == KINF_COND_MET) {
		return EXIT_OK;
	}
	if (sig) {
		/* Interrupted: not a timeout; 128 + signal, as a shell reports it. */
		cli_printf_safe(stderr, "kinf: interrupted (%s) waiting for %s: %s",
				sig == SIGINT ? "SIGINT" : "SIGTERM", what, why);
		return EXIT_SIGNALED + sig;
	}
	char limit[32] = "";
	if (w->so.timeout_ms > 0) {
		snprintf(limit, sizeof(limit), " after %llds", (w->so.timeout_ms + 999) / 1000);
	}
	cli_printf_safe(stderr, "kinf: timed out%s waiting for %s: %s", limit, what, why);
	return EXIT_TIMEOUT;
}

/* The informers, their events printed or waited on, and the outcome. */
static int watch_run(struct watch *w) {
	int status = session_new_targets(&w->cli, &w->so, w->targets.v, w->targets.n,
			&w->session);
	if (status != EXIT_OK) {
		w->session = NULL;
		return status;
	}
	status = bind_conditions(w);
	if (status == EXIT_OK) {
		status = session_start(w->session);
	}
	if (status == EXIT_OK) {
		status = wait_result(w, watch_loop(w));
	}
	if (status == EXIT_OK && w->data_error) {
		status = EXIT_ERROR;
	}
	table_stream(w, true);
	if (w->print_rc < 0 && status == EXIT_OK) {
		status = cli_print_failed(&w->cli, w->print_rc, NULL);
	}
	status = session_end(w->session, status);
	w->session = NULL;
	return status;
}

static int run_watch(int argc, char **argv) {
	struct watch w = { .timestamps = TS_LOCAL, .color_arg = "auto",
		.wait = KINF_COND_NOT_MET };
	int first = argc;

	cli_init(&w.cli, &cmd_watch);
	int status = watch_parse(&w, argc, argv, &first);
	if (status == EXIT_OK && w.help) {
		cli_print_help(&cmd_watch);
	} else if (status == EXIT_OK && (status = watch_check(&w, argv + first,
			argc - first)) == EXIT_OK) {
		status = watch_run(&w);
	}
	for (size_t i = 0; i < w.n_fors; i++) {
		kinf_condition_release(&w.fors[i]);
	}
	free(w.fors);
	session_targets_release(&w.targets);
	kinf_table_free(w.table);
	kinf_customcolumns_free(w.columns);
	kinf_buf_release(&w.line);
	kinf_buf_release(&w.why);
	return status;
}

const struct cmd cmd_watch = {
	.name = "watch",
	.summary = "print the informer's events as they happen",
	.usage = watch_usage,
	.run = run_watch,
	.options = watch_options,
	.more_usage = session_usage,
	.formats = CLI_FORMATS_ALL,
};
