#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "apistatus.h"
#include "clock.h"
#include "customcolumns.h"
#include "getwatch.h"
#include "http.h"
#include "jsonnum.h"
#include "jsonpath.h"
#include "kindcols.h"
#include "list.h"
#include "listpage.h"
#include "object.h"
#include "table.h"
#include "toyaml.h"
#include "urlquery.h"
#include "watchstream.h"

/*
 * kinf list -w: kubectl get -w (kubectl/pkg/cmd/get/get.go's watch()). One
 * list, printed (unless --watch-only), then one watch from its
 * resourceVersion, each event printed as the list's objects were. Tables
 * come from the server for both (as=Table, the watch's too), so the
 * columns are the server's, as kubectl's; a server that prints no Tables
 * gets kinf's columns for the kind. The watch is reopened from the last
 * resourceVersion when the server ends it; an ERROR event (410: the
 * resourceVersion is too old) or a failed request ends the run with exit
 * status 1, as kubectl's. kinf watch is the informer.
 */

/* Seconds a watch request asks for before the server ends it (reopened then). */
#define WATCH_TIMEOUT_S 1800

struct getwatch {
	struct cli *cli;
	const struct getwatch_opts *opts;
	bool table;
	char *rv;
	/* tables */
	struct kinf_table *t;		/* widths kept from the first block on */
	struct kinf_server_table *st;	/* the server's columns, or NULL: kinf's */
	bool streaming;			/* the first block is out */
	char *api_version;
	/* custom-columns */
	struct kinf_customcolumns *cc;
	struct kinf_table *cct;
	unsigned long yaml_docs;
	/* the watch stream, cut at newlines */
	struct kinf_buf line;
	unsigned long events;	/* lines read from the watches */
	bool stop;		/* the output failed or an ERROR came: no more */
	int status;
};

static const char *event_word(enum kinf_watch_event_type t) {
	switch (t) {
	case KINF_WATCH_ADDED: return "ADDED";
	case KINF_WATCH_MODIFIED: return "MODIFIED";
	default: return "DELETED";
	}
}

/* After an event: flush, and stop when nobody reads any more. */
static void flushed(struct getwatch *g) {
	if (fflush(stdout) != 0 || ferror(stdout)) {
		g->stop = true;	/* cli_finish_stdout() says so, quietly for a closed pipe */
	}
}

/* One table row: into the first block until it is printed, then printed. */
static int table_row(struct getwatch *g, const char *event, struct kinf_strv *cells) {
	if (g->opts->output_watch_events) {
		if (kinf_strv_push_str(cells, event) < 0) {
			return -KINF_ENOMEM;
		}
		/* EVENT first: rotate the pushed cell to the front */
		char *last = cells->v[cells->n - 1];
		memmove(cells->v + 1, cells->v, (cells->n - 1) * sizeof(*cells->v));
		cells->v[0] = last;
	}
	if (!g->streaming) {
		return kinf_table_add_row(g->t, (const char *const *)cells->v);
	}
	return kinf_table_print_row(g->t, (const char *const *)cells->v, stdout);
}

/* The header, and the table, once its columns are known. */
static int table_start(struct getwatch *g, const char *columns_json) {
	struct kinf_strv h = {0};
	struct kinf_error err = {0};
	const struct kinf_resource *res = g->cli->res;
	int rc = 0;

	if (columns_json) {
		struct kinf_table_server_opts topts = {
			.wide = g->cli->format == KINF_OUTPUT_WIDE,
			.with_namespace = g->cli->all_namespaces && res->namespaced,
			.labels = g->opts->labels,
		};
		rc = kinf_server_table_new(columns_json, &topts, &g->st, &err);
		if (rc == 0) {
			rc = kinf_server_table_header(g->st, &h);
		}
	} else {
		if (g->cli->all_namespaces && res->namespaced) {
			kinf_strv_put_str(&h, "NAMESPACE");
		}
		rc = kinf_kindcols_headers(kinf_kindcols_for(res->group, res->kind),
				g->cli->format == KINF_OUTPUT_WIDE, &h);
		if (rc == 0 && g->opts->labels) {
			rc = kinf_kindcols_append_labels(g->opts->labels, NULL, &h);
		}
		rc = rc < 0 || kinf_strv_error(&h) ? -KINF_ENOMEM : 0;
	}
	if (rc == 0 && g->opts->output_watch_events) {
		rc = kinf_strv_push_str(&h, "EVENT");
		if (rc == 0) {
			char *last = h.v[h.n - 1];
			memmove(h.v + 1, h.v, (h.n - 1) * sizeof(*h.v));
			h.v[0] = last;
		}
	}
	if (rc == 0 && !(g->t = kinf_table_new(h.n))) {
		rc = -KINF_ENOMEM;
	}
	if (rc == 0 && g->opts->output_watch_events) {
		/* EVENT as wide as MODIFIED from the start, as kubectl's */
		const char **widest = calloc(h.n, sizeof(*widest));
		for (size_t i = 0; widest && i < h.n; i++) {
			widest[i] = i == 0 ? "MODIFIED" : "";
		}
		if (widest) {
			kinf_table_widen(g->t, widest);
		}
		free(widest);
	}
	if (rc == 0 && !g->cli->no_headers) {
		rc = kinf_table_add_row(g->t, (const char *const *)h.v);
	}
	kinf_strv_release(&h);
	if (rc < 0) {
		return cli_error(g->cli, rc, err.message[0] ? &err : NULL, NULL);
	}
	return EXIT_OK;
}

/* A row of kinf's own columns for obj (a server without Tables). */
static int local_row(struct getwatch *g, const struct kinf_object *obj, const char *event) {
	const struct kinf_resource *res = g->cli->res;
	struct kinf_strv cells = {0};
	if (g->cli->all_namespaces && res->namespaced) {
		kinf_strv_put_str(&cells, kinf_object_namespace(obj));
	}
	struct kinf_error err = {0};
	int rc = kinf_kindcols_cells(kinf_kindcols_for(res->group, res->kind), obj,
			g->cli->format == KINF_OUTPUT_WIDE, NULL, &cells, &err);
	if (rc < 0 && rc != -KINF_ENOMEM) {
		/* A number beyond float64: the object named, the watch goes on, exit 1. */
		g->status = cli_error(g->cli, rc, &err, NULL);
		kinf_strv_release(&cells);
		return 0;
	}
	if (rc == 0 && g->opts->labels) {
		rc = kinf_kindcols_append_labels(g->opts->labels, obj, &cells);
	}
	if (rc == 0 && kinf_strv_error(&cells)) {
		rc = -KINF_ENOMEM;
	}
	if (rc == 0) {
		rc = table_row(g, event, &cells);
	}
	kinf_strv_release(&cells);
	return rc;
}

/* A Table row as the server sent it ({"cells":[...],"object":{...}}). */
static int server_row(struct getwatch *g, const char *row, size_t len, const char *key,
		const char *event) {
	struct kinf_strv cells = {0};
	struct kinf_error err = {0};
	int rc = kinf_server_table_row(g->st, row, len, key, NULL, &cells, &err);
	if (rc < 0 && rc != -KINF_ENOMEM) {
		g->status = cli_error(g->cli, rc, &err, NULL);	/* named; the rest goes on */
		rc = 0;
	} else if (rc == 0) {
		rc = table_row(g, event, &cells);
	}
	kinf_strv_release(&cells);
	return rc;
}

/* The first block (the list's rows, or the first events) is printed. 0 or what failed. */
static int table_stream(struct getwatch *g) {
	if ((g->t || g->cct) && !g->streaming) {
		int rc = g->t ? kinf_table_flush(g->t, stdout) : 0;
		if (rc == 0 && g->cct) {
			rc = kinf_table_flush(g->cct, stdout);
		}
		g->streaming = true;
		return rc;
	}
	return 0;
}

/* table_stream() with its failure as an exit status (status when it did not fail). */
static int table_streamed(struct getwatch *g, int status) {
	int rc = table_stream(g);
	if (rc < 0) {
		int pstatus = cli_print_failed(g->cli, rc, NULL);
		return status != EXIT_OK ? status : pstatus;
	}
	return status;
}

/*
 * An object's event in the other outputs: the object, or with
 * --output-watch-events {"type":...,"object":...}, as kubectl wraps it in
 * a WatchEvent.
 */
static int print_object(struct getwatch *g, struct kinf_object *obj, const char *event) {
	struct cli *cli = g->cli;
	struct kinf_buf doc = {0};
	struct kinf_error err = {0};
	size_t len, skip;
	const char *json = kinf_object_json(obj, &len);
	int rc = 0;

	if (cli->format == KINF_OUTPUT_NAME) {
		cli_print_name(cli->res, obj, stdout);
		return 0;
	}
	/* apiVersion and kind (list items lack them) */
	struct kinf_buf prefix = {0};
	rc = kinf_object_type_prefix(obj, g->api_version, cli->res->kind, &prefix, &skip);
	if (g->opts->output_watch_events) {
		kinf_buf_puts(&doc, "{\"type\":\"");
		kinf_buf_puts(&doc, event);
		kinf_buf_puts(&doc, "\",\"object\":");
	}
	kinf_buf_put(&doc, prefix.data, prefix.len);
	kinf_buf_put(&doc, json + skip, len - skip);
	if (g->opts->output_watch_events) {
		kinf_buf_puts(&doc, "}");
	}
	kinf_buf_release(&prefix);
	if (rc == 0 && kinf_buf_error(&doc)) {
		rc = -KINF_ENOMEM;
	}
	if (rc == 0 && cli->format == KINF_OUTPUT_JSON) {
		kinf_buf_puts(&doc, "\n");
		cli_emit(stdout, &doc);
	} else if (rc == 0 && cli->format == KINF_OUTPUT_YAML) {
		/* bare documents, "---" between, as kubectl get -w -o yaml */
		if (g->yaml_docs++ > 0) {
			fputs("---\n", stdout);
		}
		rc = kinf_toyaml_write(stdout, doc.data, doc.len, &err);
		if (rc < 0 && !ferror(stdout)) {
			cli_report(cli, rc, &err, "output");
		}
	} else if (rc == 0) {
		/* jsonpath, jsonpath-as-json, custom-columns: over what is printed */
		struct kinf_error derr = {0};
		json_t *data = kinf_jsonnum_load(doc.data, doc.len, 0, &derr);
		struct kinf_buf out = {0};
		if (!data && derr.code != KINF_ENOMEM) {
			/* A number beyond float64: no values to print, the object named. */
			struct kinf_buf q = {0};
			kinf_error_prefix(&derr, "object %s", kinf_object_key_quoted(&q,
					kinf_object_namespace(obj), strlen(kinf_object_namespace(obj)),
					kinf_object_name(obj), strlen(kinf_object_name(obj))));
			kinf_buf_release(&q);
			g->status = cli_error(cli, -derr.code, &derr, NULL);
		} else if (!data) {
			rc = -KINF_ENOMEM;
		} else if (cli->format == KINF_OUTPUT_CUSTOM_COLUMNS) {
			/* The spec was checked with the options: a failure here is memory's. */
			struct kinf_strv cells = {0};
			/*
			 * The header and the first block (the list's rows, or the
			 * first event's) aligned as one, as kubectl's tabwriter
			 * has them; later rows keep those widths. The spec was
			 * checked with the options: a failure here is memory's.
			 */
			if (!g->cc) {
				rc = kinf_customcolumns_parse(cli->output_arg, &g->cc, &err);
				if (rc == 0 && !(g->cct = kinf_table_new(g->cc->n))) {
					rc = -KINF_ENOMEM;
				}
				if (rc == 0 && !cli->no_headers) {
					kinf_table_put_row(g->cct, (const char *const *)g->cc->names);
				}
			}
			if (rc == 0 && g->cct) {
				rc = kinf_customcolumns_cells(g->cc, data, &cells);
			}
			if (rc == 0 && g->cct) {
				if (g->streaming) {
					rc = kinf_table_print_row(g->cct, (const char *const *)cells.v, stdout);
				} else {
					kinf_table_put_row(g->cct, (const char *const *)cells.v);
				}
			}
			kinf_strv_release(&cells);
		} else {
			struct kinf_jsonpath *jp = NULL;
			rc = kinf_jsonpath_parse(cli->output_arg, &jp, &err);
			if (rc == 0) {
				rc = cli->format == KINF_OUTPUT_JSONPATH_JSON ?
					kinf_jsonpath_execute_json(jp, data, &out, &err) :
					kinf_jsonpath_execute(jp, data, &out, &err);
			}
			kinf_jsonpath_free(jp);
			if (rc == 0 && out.len) {
				fwrite(out.data, 1, out.len, stdout);
			}
		}
		kinf_buf_release(&out);
		json_decref(data);
	}
	kinf_buf_release(&doc);
	return rc;
}

/* The list: printed as kubectl prints a watch's first objects. */
static int initial_list(struct getwatch *g, const char *path, const char *field_selector) {
	struct cli *cli = g->cli;
	struct kinf_list_result res = {0};
	struct kinf_error err = {0};
	int status = EXIT_OK;

	struct kinf_list_opts lopts = {
		.path = path,
		.label_selector = cli->label_selector,
		.field_selector = field_selector,
		.limit = cli->chunk_size,
		.table = g->table,
		.row_objects = g->table && g->opts->labels,
		.limits = cli->limits,
	};
	int rc = kinf_list(cli->http, &lopts, &res, &err);
	if (rc < 0) {
		status = cli_error(cli, rc, &err, NULL);
		goto out;
	}
	g->rv = res.resource_version ? strdup(res.resource_version) : strdup("");
	if (g->opts->name && res.n_items == 0 && !cli->ignore_not_found) {
		cli_printf_safe(stderr, "kinf: %s \"%s\" not found", cli->res->resource,
				g->opts->name);
		status = EXIT_ERROR;
		goto out;
	}
	/* The columns: the list's; with nothing to print, the first event's. */
	bool rows = !g->opts->watch_only && (res.n_rows || res.items.n);
	if (g->table && rows && (rc = table_start(g, res.n_rows ? res.columns_json : NULL)) !=
			EXIT_OK) {
		status = rc;
		goto out;
	}
	for (size_t i = 0; !g->opts->watch_only && i < res.n_rows; i++) {
		if (server_row(g, res.rows[i].json, res.rows[i].len, res.rows[i].key, "ADDED") < 0) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			goto out;
		}
	}
	for (size_t i = 0; !g->opts->watch_only && i < res.items.n; i++) {
		rc = g->table ? local_row(g, res.items.v[i], "ADDED") :
			print_object(g, res.items.v[i], "ADDED");
		if (rc < 0) {
			status = ferror(stdout) ? EXIT_OK : cli_error(cli, rc, NULL, NULL);
			g->stop = true;
			goto out;
		}
	}
	if (rows) {
		status = table_streamed(g, status);
	}
	flushed(g);
out:
	kinf_list_result_release(&res);
	return status;
}

/* A Table event: its rows (one) printed; the columns come with the first. */
static int table_event(struct getwatch *g, const char *type, json_t *object) {
	json_t *rows = json_object_get(object, "rows");
	if (!g->st && !g->t) {
		/* --watch-only or an empty list: the columns come with this event */
		char *cols = json_dumps(json_object_get(object, "columnDefinitions"), JSON_COMPACT);
		int status = table_start(g, cols ? cols : "[]");
		free(cols);
		if (status != EXIT_OK) {
			return status;
		}
	}
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *row = json_array_get(rows, i);
		json_t *md = json_object_get(json_object_get(row, "object"), "metadata");
		const char *ns = json_string_value(json_object_get(md, "namespace"));
		const char *name = json_string_value(json_object_get(md, "name"));
		char *text = json_dumps(row, JSON_COMPACT);
		struct kinf_buf key = {0};
		kinf_buf_putf(&key, "%s%s%s", ns ? ns : "", ns ? "/" : "", name ? name : "");
		int rc = text && !kinf_buf_error(&key) && g->st ?
			server_row(g, text, strlen(text), key.data, type) : -KINF_ENOMEM;
		free(text);
		kinf_buf_release(&key);
		if (rc < 0) {
			return cli_error(g->cli, rc, NULL, NULL);
		}
	}
	return table_streamed(g, EXIT_OK);
}

/* One line of the watch stream: an event. */
static int handle_line(struct getwatch *g, const char *line, size_t len) {
	struct cli *cli = g->cli;
	struct kinf_error err = {0};

	if (len == 0) {
		return 0;
	}
	g->events++;
	struct kinf_error perr = {0};
	json_t *ev = kinf_jsonnum_load(line, len, 0, &perr);
	/* A number beyond float64 in an object: read it below as any object. */
	bool unvalued = !ev && perr.code == KINF_ETOOBIG;
	const char *type = unvalued ? "" : json_string_value(json_object_get(ev, "type"));
	json_t *object = json_object_get(ev, "object");
	if (!unvalued && (!type || !json_is_object(object))) {
		json_decref(ev);
		cli_printf_safe(stderr, "kinf: watch: an event that is not one (%.*s)",
				len > 80 ? 80 : (int)len, line);
		g->status = EXIT_ERROR;
		return -KINF_EJSON;
	}
	const char *rv = json_string_value(json_object_get(json_object_get(object, "metadata"),
			"resourceVersion"));
	int status = EXIT_OK;
	if (strcmp(type, "ERROR") == 0) {
		char *st = json_dumps(object, JSON_COMPACT);
		kinf_apistatus_to_error(0, st ? st : "", st ? strlen(st) : 0, &err);
		free(st);
		status = cli_error(cli, -KINF_EHTTP, &err, "watch");
	} else if (strcmp(type, "BOOKMARK") == 0) {
		status = EXIT_OK;
	} else if (g->table && json_is_string(json_object_get(object, "kind")) &&
			strcmp(json_string_value(json_object_get(object, "kind")), "Table") == 0) {
		status = table_event(g, type, object);
	} else {
		/* An object: as the decoder reads one (limits, managedFields dropped). */
		struct kinf_watch_event wev = {0};
		if (kinf_watch_event_decode(line, len, &cli->limits, &wev, &err) < 0) {
			status = cli_error(cli, -KINF_EJSON, &err, "watch");
		} else if (unvalued && wev.obj) {
			/* The tree had none: the object's own (it goes before rv is read). */
			free(g->rv);
			g->rv = strdup(kinf_object_resource_version(wev.obj));
		}
		if (status != EXIT_OK || !wev.obj) {
			/* said above, or an event without an object */
		} else if (wev.obj && g->table) {
			if (!g->t) {
				status = table_start(g, NULL);
			}
			if (status == EXIT_OK && local_row(g, wev.obj, event_word(wev.type)) < 0) {
				status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			}
			status = table_streamed(g, status);
		} else if (wev.obj && print_object(g, wev.obj, event_word(wev.type)) < 0 &&
				!ferror(stdout)) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		} else {
			table_stream(g);	/* custom-columns: the first event's block */
		}
		kinf_watch_event_release(&wev);
	}
	if (rv && status == EXIT_OK) {
		free(g->rv);
		g->rv = strdup(rv);
	}
	json_decref(ev);
	flushed(g);
	if (status != EXIT_OK) {
		g->status = status;
		return -KINF_ECANCELED;
	}
	return g->stop ? -KINF_ECANCELED : 0;
}

/* The watch's body: cut into lines. */
static int on_body(const char *data, size_t len, void *userdata) {
	struct getwatch *g = userdata;
	size_t max = g->cli->limits.max_bytes ? g->cli->limits.max_bytes : (64u << 20);
	for (const char *p = data, *end = data + len; p < end; ) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (g->line.len + n > max) {
			cli_printf_safe(stderr, "kinf: watch: an event over %zu bytes "
					"(--max-object-size)", max);
			g->status = EXIT_ERROR;
			return -KINF_ETOOBIG;
		}
		kinf_buf_put(&g->line, p, n);
		if (kinf_buf_error(&g->line)) {
			g->status = cli_error(g->cli, -KINF_ENOMEM, NULL, NULL);
			return -KINF_ENOMEM;
		}
		p += n;
		if (nl) {
			int rc = handle_line(g, g->line.data, g->line.len);
			kinf_buf_reset(&g->line);
			p++;
			if (rc < 0) {
				return rc;
			}
		}
	}
	return 0;
}

/* Between waits: a reader that went away ends the watch. */
static int aborted(void *userdata) {
	struct getwatch *g = userdata;
	if (cli_stdout_closed()) {
		g->stop = true;
		return -KINF_ECANCELED;
	}
	return 0;
}

/* Watch from g->rv until the server fails or the output does. */
static int watch_loop(struct getwatch *g, const char *path, const char *field_selector) {
	struct cli *cli = g->cli;
	struct kinf_buf url = {0};
	int status = EXIT_OK;

	while (!g->stop && status == EXIT_OK) {
		struct kinf_error err = {0};
		struct kinf_urlquery q;
		kinf_urlquery_start(&q, &url, path);
		kinf_urlquery_add(&q, "watch", "1");
		kinf_urlquery_add(&q, "allowWatchBookmarks", "true");
		kinf_urlquery_add_long(&q, "timeoutSeconds", WATCH_TIMEOUT_S);
		kinf_urlquery_add(&q, "resourceVersion", g->rv);
		kinf_urlquery_add(&q, "labelSelector", cli->label_selector);
		kinf_urlquery_add(&q, "fieldSelector", field_selector);
		if (kinf_urlquery_finish(&q) < 0) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			break;
		}
		struct kinf_list_opts table_opts = { .table = true };
		struct kinf_http_request req = {
			.path = url.data,
			.accept = g->table ? kinf_listpage_accept(&table_opts) : NULL,
			.on_body = on_body,
			.aborted = aborted,
			.userdata = g,
			.watch = true,
			.timeout_ms = (WATCH_TIMEOUT_S + 30) * 1000L,
		};
		kinf_buf_reset(&g->line);
		unsigned long before = g->events;
		long long started = kinf_clock_now_ms();
		int rc = kinf_http_get(cli->http, &req, NULL, &err);
		if (g->status != EXIT_OK) {
			status = g->status;	/* said */
		} else if (g->stop) {
			break;
		} else if (rc < 0 && rc != -KINF_ETIMEDOUT) {
			status = cli_error(cli, rc, &err, "watch");
		} else if (g->events == before && kinf_clock_now_ms() - started < 1000) {
			/* ended at once with nothing in it: not again at once */
			sleep(1);
		}
		/*
		 * The server ended the watch, or it was quiet for --idle-timeout:
		 * again, from where it was.
		 */
	}
	kinf_buf_release(&url);
	return status;
}

int getwatch_run(struct cli *cli, const struct getwatch_opts *opts) {
	struct getwatch g = {
		.cli = cli,
		.opts = opts,
		.table = cli->format == KINF_OUTPUT_TABLE || cli->format == KINF_OUTPUT_WIDE,
	};
	char *path = kinf_resource_path(cli->res, cli->namespace);
	struct kinf_buf fs = {0};
	const char *field_selector = cli->field_selector;
	int status;

	cli_managed_fields(cli, false);
	struct kinf_buf av = {0};
	if (cli->res->group[0]) {
		kinf_buf_putf(&av, "%s/%s", cli->res->group, cli->res->version);
	} else {
		kinf_buf_puts(&av, cli->res->version);
	}
	g.api_version = kinf_buf_take(&av);
	if (opts->name) {
		/* One name, as kubectl get NAME -w: the server filters */
		kinf_buf_putf(&fs, "metadata.name=%s%s%s", opts->name,
				field_selector ? "," : "", field_selector ? field_selector : "");
		field_selector = fs.data;
	}
	if (!path || !g.api_version || kinf_buf_error(&fs)) {
		status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	} else {
		status = initial_list(&g, path, field_selector);
	}
	if (status == EXIT_OK && !g.stop) {
		status = watch_loop(&g, path, field_selector);
	}
	status = table_streamed(&g, status);
	kinf_table_free(g.t);
	kinf_server_table_free(g.st);
	kinf_table_free(g.cct);
	kinf_customcolumns_free(g.cc);
	kinf_buf_release(&g.line);
	kinf_buf_release(&fs);
	free(g.api_version);
	free(g.rv);
	free(path);
	return status;
}
