#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "http.h"
#include "kindcols.h"
#include "jsonnum.h"
#include "list.h"
#include "getwatch.h"
#include "session.h"
#include "table.h"
#include "toyaml.h"

static const char list_usage[] =
	"Usage: kinf list RESOURCE[,RESOURCE...] [NAME...] [OPTIONS]\n"
	"       kinf list TYPE/NAME... [OPTIONS]\n"
	"\n"
	"List a resource as one consistent, paginated list (the reflector's list\n"
	"phase). -o json, yaml and name print each object as it arrives, in the\n"
	"server's order (namespace, then name); tables and templates print the\n"
	"whole list sorted by namespace and name. Several types (pods,svc) or\n"
	"TYPE/NAME arguments list each type in turn, as kubectl get: a table per\n"
	"type, kind/name in NAME, a blank line between; a type that fails is\n"
	"reported and the others are listed (exit 1). Several namespaces (-n a,b,\n"
	"-n a -n b) list each in turn, one table per type with NAMESPACE, as\n"
	"kubectl get -A shows them; several contexts (--context a,b) add a\n"
	"CONTEXT column first. -o json prints the objects, bare, as ever (for a\n"
	"\"context\" per line: kinf watch ... -o json --exit-after-sync).\n"
	"\n"
	"Examples:\n"
	"  kinf list pods -n default\n"
	"  kinf list pods,deploy -n default\n"
	"  kinf list deploy/web pod/web-1\n"
	"  kinf list pods,deploy -n app,web\n"
	"  kinf list deploy -A -o wide\n"
	"  kinf list pods -A --accessible\n"
	"  kinf list pods -l app=web -o json | jq .metadata.name\n"
	"  kinf list nodes -o name\n"
	"  kinf list pods -o jsonpath='{range .items[*]}{.metadata.name}{\"\\n\"}{end}'\n"
	"  kinf list pods -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName\n"
	"  kinf list pods -w\n"
	"\n"
	"List options:\n"
	"  -w, --watch                    after the list, watch, as kubectl get -w: the\n"
	"                                 server's columns, one watch from the list's\n"
	"                                 resourceVersion (kinf watch is the informer)\n"
	"      --watch-only               watch without printing the list first, as\n"
	"                                 kubectl get --watch-only\n"
	"      --output-watch-events      with -w, the event types: an EVENT column, or\n"
	"                                 {\"type\":...,\"object\":...} for -o json and yaml\n"
	"      --accessible               with -A: where listing a type cluster-wide is\n"
	"                                 forbidden, the namespaces where it may be listed\n"
	"                                 (a SelfSubjectAccessReview each), one list each\n"
	"      --ignore-not-found         a NAME that is not there is no error, as kubectl\n"
	CLI_TABLE_USAGE
	"\n";

/*
 * Several types (pods,svc) or TYPE/NAME arguments (deploy/web pod/web-1):
 * a list per type, run as one list each, tables printed as kubectl prints
 * several kinds (kind/name in NAME, a blank line between the tables).
 */
static struct {
	bool in_group;		/* run_list runs one group of several */
	bool show_kind;		/* more than one type: kind/name in NAME */
	bool table_printed;	/* a table went out: a blank line before the next */
	bool quiet_empty;	/* no "No resources found" per group */
	/* Several namespaces (-n a,b): a list each, one table per type. */
	const char *namespace;	/* the group's, or NULL */
	const char *context;	/* the group's, of several, or NULL */
	bool merge;		/* several namespaces or contexts: rows held */
	bool namespaced;	/* the held rows' type */
	const char **row_contexts;	/* per held row */
	bool later_namespace;	/* not the first: a cluster-scoped type is listed once */
	bool listed_once;	/* the cluster-scoped type was */
	struct kinf_list_row *rows;	/* the type's rows so far */
	size_t n_rows;
	char *columns_json;
	char *kind_prefix;
	/*
	 * For "No resources found in NS namespace." once for several types,
	 * as kubectl says it: the namespace they were listed in, and whether
	 * one of them was cluster-scoped (then it names none).
	 */
	char *listed_namespace;
	bool listed_cluster_scoped;
	/*
	 * -o jsonpath, jsonpath-as-json and custom-columns over several
	 * lists, and --sort-by's json, yaml and name: their objects, typed,
	 * for one template run (or sort) over all of them at the end
	 * (kubectl's one List), not one per type.
	 */
	struct kinf_object_list held;
	/* -o custom-columns over several lists: their rows, one table. */
	struct cli_columns *columns;
	/*
	 * -A --accessible, namespace by namespace: a name is missing when no
	 * namespace has it, as for one -A list; found per name, and the
	 * resource to name in the message.
	 */
	bool *found_any;
	char *found_resource;
	bool ignore_not_found;	/* the groups' --ignore-not-found */
} multi;

static const struct option list_options[] = {
	CLI_COMMON_OPTIONS,
	CLI_TABLE_OPTIONS,
	{ "watch", no_argument, NULL, 'w' },
	{ "watch-only", no_argument, NULL, 'W' },
	{ "accessible", no_argument, NULL, OPT_ACCESSIBLE },
	{ "ignore-not-found", no_argument, NULL, OPT_IGNORE_NOT_FOUND },
	{ "output-watch-events", no_argument, NULL, OPT_OUTPUT_WATCH_EVENTS },
	{ NULL, 0, NULL, 0 },
};

#define LIST_SHORT CLI_COMMON_SHORT CLI_TABLE_SHORT "w"

/* "pod/", "deployment.apps/": what kubectl puts before a name of several kinds. */
static char *kind_prefix_of(const struct kinf_resource *res) {
	struct kinf_buf b = {0};
	for (const char *k = res->kind; *k; k++) {
		char c = *k >= 'A' && *k <= 'Z' ? (char)(*k - 'A' + 'a') : *k;
		kinf_buf_put(&b, &c, 1);
	}
	if (res->group[0]) {
		kinf_buf_putf(&b, ".%s", res->group);
	}
	kinf_buf_puts(&b, "/");
	return kinf_buf_take(&b);
}

static char *api_version_of(const struct kinf_resource *res) {
	struct kinf_buf b = {0};
	if (res->group[0]) {
		kinf_buf_putf(&b, "%s/%s", res->group, res->version);
	} else {
		kinf_buf_puts(&b, res->version);
	}
	return kinf_buf_take(&b);
}

/*
 * A progress line on stderr while a long list comes in, when stderr is a
 * terminal: "listed 42,000 pods (84 pages)...", erased when done.
 */
struct progress {
	const char *what;
	bool off;		/* items go to the same terminal */
	bool shown;
};

/*
 * -o json, yaml and name print each item as the pager hands it over, in
 * the server's order (an API server's is namespace, then name), so the
 * first lines come with the first page and memory stays flat however long
 * the list: kubectl get prints chunk by chunk too.
 *
 * The printing runs in a thread of its own, fed through a queue: a reader
 * that stops reading (`| less`) must not stall the HTTP transfer, which
 * the server and --idle-timeout would end. The queue grows only while the
 * reader is slower than the network.
 */
struct item_printer {
	struct cli *cli;
	char **names;		/* the names asked for, or none */
	int n_names;
	bool *found;		/* per name */
	char *api_version;
	struct progress progress;
	/* -o custom-columns: a row made of each item as it comes (or NULL) */
	struct cli_columns *columns;
	/* the printing thread's */
	bool first;
	int write_errno;	/* stdout failed: 0 or its errno */
	int print_rc;		/* the first error printing, or 0 */
	struct kinf_buf prefix;	/* apiVersion and kind to write before an item */
	struct kinf_object **wanted;	/* a template's items (borrowed), while it runs */
	struct kinf_error print_err;
	/* the queue, under lock */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kinf_object_list queue;
	struct kinf_object_list printed;	/* for the producer to free */
	struct kinf_object_list freeing;	/* the producer's own: printed ones it unrefs */
	bool flush;		/* a page ended: flush once the queue is empty */
	bool done;		/* the list ended: no more items */
	bool failed;		/* the printer failed: stop the list */
	bool restart;		/* the list started over: forget its rows */
};

/* Marks the name found; false when names were given and it is not one. */
static bool name_wanted(struct item_printer *p, const char *name) {
	if (p->n_names == 0) {
		return true;
	}
	for (int i = 0; i < p->n_names; i++) {
		if (strcmp(p->names[i], name) == 0) {
			p->found[i] = true;
			return true;
		}
	}
	return false;
}

static int print_item(struct item_printer *p, struct kinf_object *obj) {
	struct cli *cli = p->cli;
	int rc = 0;

	if (!name_wanted(p, kinf_object_name(obj))) {
		return 0;
	}
	if (p->columns) {
		struct kinf_object *typed = kinf_object_with_type(obj, p->api_version, cli->res->kind);
		rc = typed ? cli_columns_add(p->columns, typed) : -KINF_ENOMEM;
		kinf_object_unref(typed);
		return rc < 0 ? kinf_error_set(&p->print_err, -rc, "out of memory") : 0;
	}
	if (cli->format == KINF_OUTPUT_NAME) {
		cli_print_name(cli->res, obj, stdout);
	} else if (cli->format == KINF_OUTPUT_JSON) {
		/* apiVersion and kind written in front, without a typed copy. */
		size_t len, skip;
		const char *json = kinf_object_json(obj, &len);
		if (kinf_object_type_prefix(obj, p->api_version, cli->res->kind,
				&p->prefix, &skip) < 0) {
			return kinf_error_set(&p->print_err, KINF_ENOMEM, "out of memory");
		}
		if (p->prefix.len) {
			fwrite(p->prefix.data, 1, p->prefix.len, stdout);
		}
		fwrite(json + skip, 1, len - skip, stdout);
		fputc('\n', stdout);
	} else {
		struct kinf_object *typed = kinf_object_with_type(obj, p->api_version, cli->res->kind);
		if (!typed) {
			return kinf_error_set(&p->print_err, KINF_ENOMEM, "out of memory");
		}
		size_t len;
		const char *json = kinf_object_json(typed, &len);
		if (!p->first) {
			fputs("---\n", stdout);
		}
		rc = kinf_toyaml_write(stdout, json, len, &p->print_err);
		if (rc < 0) {
			kinf_error_prefix(&p->print_err, "output");
		}
		kinf_object_unref(typed);
	}
	p->first = false;
	if (ferror(stdout)) {
		/* stdout failed (the YAML writer's error says only that) */
		p->write_errno = errno ? errno : EIO;
		rc = kinf_error_set(&p->print_err, KINF_ECLOSED, "writing output: %s",
				strerror(p->write_errno));
	}
	return rc;
}

#define PRINT_BATCH 64	/* items; a page's end also wakes the printer */

static void *printer_main(void *userdata) {
	struct item_printer *p = userdata;
	struct kinf_object_list batch = {0};

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->queue.n < PRINT_BATCH && !p->flush && !p->done) {
			pthread_cond_wait(&p->cond, &p->lock);
		}
		struct kinf_object_list tmp = batch;
		batch = p->queue;
		p->queue = tmp;
		bool flush = p->flush, done = p->done, restart = p->restart;
		p->flush = p->restart = false;
		pthread_mutex_unlock(&p->lock);

		if (restart) {
			/* The rows and names of the expired list; its items follow again. */
			cli_columns_restart(p->columns);
			memset(p->found, 0, (size_t)p->n_names * sizeof(*p->found));
			p->print_rc = 0;
		}

		for (size_t i = 0; i < batch.n; i++) {
			if (p->print_rc == 0) {
				p->print_rc = print_item(p, batch.v[i]);
			}
		}
		/* A page's items reach `| jq` now. */
		if ((flush || done) && p->print_rc == 0 && fflush(stdout) != 0) {
			p->write_errno = errno;
			p->print_rc = kinf_error_set(&p->print_err, KINF_ECLOSED,
					"writing output: %s", strerror(errno));
		}

		pthread_mutex_lock(&p->lock);
		p->failed = p->print_rc < 0;
		/*
		 * The objects go back to the thread that made them, to be freed
		 * there: freeing them here took that thread's malloc arena lock
		 * as it allocated, 8,000 futex calls in a list of 100,000.
		 */
		if (batch.n > 0 && kinf_object_list_reserve(&p->printed, batch.n) < 0) {
			pthread_mutex_unlock(&p->lock);
			kinf_object_list_reset(&batch);
			pthread_mutex_lock(&p->lock);
		} else if (batch.n > 0) {
			memcpy(p->printed.v + p->printed.n, batch.v, batch.n * sizeof(*batch.v));
			p->printed.n += batch.n;
			batch.n = 0;
		}
		if (done && p->queue.n == 0) {
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	kinf_object_list_release(&batch);
	return NULL;
}

/* The pager's on_item: queue it (or stop the list if printing failed). */
static int queue_item(struct kinf_object *obj, void *userdata, struct kinf_error *err) {
	struct item_printer *p = userdata;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (p->printed.n >= PRINT_BATCH) {
		/* freeing is empty here: the two vectors trade places. */
		struct kinf_object_list t = p->freeing;
		p->freeing = p->printed;
		p->printed = t;
	}
	if (p->failed) {
		rc = kinf_error_set(err, KINF_ECANCELED, "the output failed");
	} else {
		rc = kinf_object_list_push_take(&p->queue, obj);
		obj = NULL;
		if (rc < 0) {
			rc = kinf_error_set(err, KINF_ENOMEM, "out of memory");
		} else if (p->queue.n >= PRINT_BATCH) {
			/* Wake the printer for a batch, not for every item (a context switch each). */
			pthread_cond_signal(&p->cond);
		}
	}
	pthread_mutex_unlock(&p->lock);
	kinf_object_unref(obj);
	kinf_object_list_reset(&p->freeing);
	return rc;
}

/*
 * The pager's on_restart (custom columns): a continue token expired and
 * every item comes again from one full list, as a kept list would have
 * them. The queued ones go; the printer forgets the rows it made.
 */
static void restart_items(void *userdata) {
	struct item_printer *p = userdata;
	pthread_mutex_lock(&p->lock);
	kinf_object_list_reset(&p->queue);
	p->restart = true;
	pthread_mutex_unlock(&p->lock);
}

static void on_page(unsigned pages, size_t items, void *userdata) {
	struct item_printer *printer = userdata;
	struct progress *p = &printer->progress;
	if (printer->running) {
		pthread_mutex_lock(&printer->lock);
		printer->flush = true;
		pthread_cond_signal(&printer->cond);
		pthread_mutex_unlock(&printer->lock);
	}
	if (!p->off && cli_progress_show(p->what, pages, items)) {
		p->shown = true;
	}
}

static bool printer_start(struct item_printer *p) {
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->running = pthread_create(&p->thread, NULL, printer_main, p) == 0;
	if (!p->running) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
	}
	return p->running;
}

/* The list ended: print what is queued, then join. */
static void printer_finish(struct item_printer *p) {
	if (!p->running) {
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->running = false;
	kinf_object_list_release(&p->queue);
	kinf_object_list_release(&p->printed);
	kinf_object_list_release(&p->freeing);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/*
 * A typed object (apiVersion and kind in it) as -o json, yaml or name
 * print it: for --sort-by's objects, held from several lists.
 */
static int print_typed(const struct cli *cli, struct kinf_object *obj, bool first) {
	struct kinf_error err = {0};
	size_t len;
	const char *json = kinf_object_json(obj, &len);
	if (cli->format == KINF_OUTPUT_JSON) {
		fwrite(json, 1, len, stdout);
		fputc('\n', stdout);
	} else if (cli->format == KINF_OUTPUT_YAML) {
		if (!first) {
			fputs("---\n", stdout);
		}
		if (kinf_toyaml_write(stdout, json, len, &err) < 0) {
			return cli_print_failed(cli, -KINF_EIO, &err);
		}
	} else {
		/* kind[.group]/name, the group from apiVersion */
		const char *api = kinf_object_api_version(obj);
		const char *slash = strchr(api, '/');
		struct kinf_buf b = {0};
		for (const char *k = kinf_object_kind(obj); *k; k++) {
			char c = *k >= 'A' && *k <= 'Z' ? (char)(*k - 'A' + 'a') : *k;
			kinf_buf_put(&b, &c, 1);
		}
		if (slash) {
			kinf_buf_putf(&b, ".%.*s", (int)(slash - api), api);
		}
		kinf_buf_putf(&b, "/%s", kinf_object_name(obj));
		if (kinf_buf_error(&b)) {
			kinf_buf_release(&b);
			return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		}
		cli_printf_safe(stdout, "%s", b.data);
		kinf_buf_release(&b);
	}
	return EXIT_OK;
}

/*
 * --sort-by with -o json, yaml or name: the whole list, sorted, then
 * printed as the printer prints each item (or held for one sort over
 * several lists).
 */
static int print_sorted(struct item_printer *p, struct kinf_list_result *res) {
	struct cli *cli = p->cli;
	struct kinf_object_list wanted = {0};
	int status = EXIT_OK;

	for (size_t i = 0; i < res->items.n && status == EXIT_OK; i++) {
		if (!name_wanted(p, kinf_object_name(res->items.v[i]))) {
			continue;
		}
		struct kinf_object *typed = kinf_object_with_type(res->items.v[i], p->api_version,
				cli->res->kind);
		if (!typed || kinf_object_list_push_take(multi.in_group ? &multi.held : &wanted,
				typed) < 0) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		}
	}
	if (status == EXIT_OK && !multi.in_group) {
		status = cli_sort_objects(cli, wanted.v, wanted.n);
	}
	for (size_t i = 0; status == EXIT_OK && i < wanted.n; i++) {
		status = print_typed(cli, wanted.v[i], i == 0);
	}
	kinf_object_list_release(&wanted);
	return status;
}

/* A list's items for a template: typed as it reaches each. */
static struct kinf_object *typed_item(void *userdata, size_t i) {
	struct item_printer *p = userdata;
	return kinf_object_with_type(p->wanted[i], p->api_version, p->cli->res->kind);
}

/* --sort-by's value of a list's item: from it typed (it may sort by kind). */
static json_t *typed_item_tree(const void *elem, void *userdata, struct kinf_error *reterr) {
	struct item_printer *p = userdata;
	struct kinf_object *typed = kinf_object_with_type(*(struct kinf_object *const *)elem,
			p->api_version, p->cli->res->kind);
	json_t *tree = typed ? kinf_object_tree(typed, reterr) : NULL;
	if (!typed) {
		kinf_error_fill(reterr, KINF_ENOMEM, "out of memory");
	}
	kinf_object_unref(typed);
	return tree;
}

/*
 * -o jsonpath / custom-columns: over a List, or the one object asked for
 * by name. Custom columns made their rows as the items came; a template
 * runs over the items the list kept, each a tree only while it is reached.
 */
static int print_templated(struct item_printer *p, struct kinf_list_result *res) {
	struct cli *cli = p->cli;
	size_t n = 0;
	int status = EXIT_OK;

	if (p->columns) {
		cli_columns_sort_list(p->columns);
		return multi.in_group ? EXIT_OK : cli_columns_print(p->columns, stdout);
	}
	if (!(p->wanted = calloc(res->items.n + 1, sizeof(*p->wanted)))) {
		return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	}
	for (size_t i = 0; i < res->items.n; i++) {
		if (name_wanted(p, kinf_object_name(res->items.v[i]))) {
			p->wanted[n++] = res->items.v[i];
		}
	}
	for (size_t i = 0; multi.in_group && status == EXIT_OK && i < n; i++) {
		/* Held for the groups' one run (groups_run()). */
		struct kinf_object *typed = typed_item(p, i);
		if (!typed || kinf_object_list_push_take(&multi.held, typed) < 0) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		}
	}
	if (!multi.in_group) {
		struct cli_objects objs = { n, typed_item, p };
		status = cli_sort_by_field(cli, p->wanted, n, sizeof(*p->wanted), typed_item_tree, p);
		if (status == EXIT_OK) {
			status = cli_print_templated(cli, &objs, p->n_names == 1, stdout);
		}
	}
	free(p->wanted);
	p->wanted = NULL;
	return status;
}

/* -L and --show-labels, when given: the label columns of tables. */
static const struct kinf_label_columns *label_columns(const struct cli *cli) {
	const struct kinf_label_columns *lc = &cli->label_columns;
	return lc->n_keys || lc->show_labels ? lc : NULL;
}

/*
 * --sort-by for Table rows: by the field in each row's object (the list
 * asked for them whole, includeObject=Object, as kubectl does), stably
 * after their namespace/name order. The exit status (errors printed).
 */
static json_t *row_object(const void *elem, void *userdata, struct kinf_error *reterr) {
	const struct kinf_list_row *row = elem;
	(void)userdata;
	json_t *whole = kinf_jsonnum_load(row->json, row->len, 0, reterr);
	if (!whole) {
		kinf_error_prefix(reterr, "object \"%s\"", row->key);
	}
	json_t *obj = json_incref(json_object_get(whole, "object"));
	json_decref(whole);
	return obj;
}

static int sort_rows_by_field(const struct cli *cli, struct kinf_list_row *rows, size_t n) {
	return cli_sort_by_field(cli, rows, n, sizeof(*rows), row_object, NULL);
}

/*
 * The server answered the Table request with a plain List (a server or
 * aggregated API that prints no Tables: the Accept header's last choice is
 * application/json). kubectl then prints columns of its own (NAME and AGE);
 * kinf prints its own columns for the kind, as kinf watch does.
 */
static int print_local_table(struct item_printer *p, struct kinf_list_result *res) {
	struct cli *cli = p->cli;
	int sorted = cli_sort_objects(cli, res->items.v, res->items.n);
	if (sorted != EXIT_OK) {
		return sorted;
	}
	const struct kinf_resource *res_type = cli->res;
	const struct kinf_kindcols *kc = kinf_kindcols_for(res_type->group, res_type->kind);
	bool with_ns = cli->all_namespaces && cli->res->namespaced;
	bool wide = cli->format == KINF_OUTPUT_WIDE;
	struct kinf_strv cells = {0};
	struct kinf_table *table = NULL;
	int status = EXIT_OK;
	int rc = 0;

	if (with_ns) {
		rc = kinf_strv_push_str(&cells, "NAMESPACE");
	}
	if (rc == 0) {
		rc = kinf_kindcols_headers(kc, wide, &cells);
	}
	if (rc == 0 && label_columns(cli)) {
		rc = kinf_kindcols_append_labels(label_columns(cli), NULL, &cells);
	}
	if (rc == 0 && !(table = kinf_table_new(cells.n))) {
		rc = -KINF_ENOMEM;
	}
	if (rc == 0 && !cli->no_headers) {
		rc = kinf_table_add_row(table, (const char *const *)cells.v);
	}
	size_t n_cols = cells.n;
	for (size_t i = 0; rc == 0 && i < res->items.n; i++) {
		const struct kinf_object *obj = res->items.v[i];
		struct kinf_error err = {0};
		if (!name_wanted(p, kinf_object_name(obj))) {
			continue;
		}
		kinf_strv_release(&cells);
		if (with_ns) {
			rc = kinf_strv_push_str(&cells, kinf_object_namespace(obj));
		}
		if (rc == 0) {
			rc = kinf_kindcols_cells(kc, obj, wide, NULL, &cells, &err);
		}
		if (rc == 0 && multi.show_kind && cells.n > (with_ns ? 1u : 0u)) {
			/* kind/name in NAME, the first of kinf's columns. */
			char *kp = kind_prefix_of(res_type);
			struct kinf_buf b = {0};
			if (!kp) {
				kinf_buf_fail(&b, -KINF_ENOMEM);	/* take gives NULL */
			}
			kinf_buf_putf(&b, "%s%s", kp ? kp : "", cells.v[with_ns ? 1 : 0]);
			free(kp);
			char *named = kinf_buf_take(&b);
			if (!named) {
				rc = -KINF_ENOMEM;
			} else {
				free(cells.v[with_ns ? 1 : 0]);
				cells.v[with_ns ? 1 : 0] = named;
			}
		}
		if (rc < 0 && rc != -KINF_ENOMEM) {
			/* One object's data (a number beyond float64): name it, print the rest. */
			status = cli_error(cli, rc, &err, NULL);
			rc = 0;
			continue;
		}
		while (rc == 0 && label_columns(cli) && cells.n < n_cols -
				(label_columns(cli)->n_keys + label_columns(cli)->show_labels)) {
			rc = kinf_strv_push_str(&cells, "<none>");
		}
		if (rc == 0 && label_columns(cli)) {
			rc = kinf_kindcols_append_labels(label_columns(cli), obj, &cells);
		}
		while (rc == 0 && cells.n < n_cols) {
			rc = kinf_strv_push_str(&cells, "<none>");
		}
		if (rc == 0) {
			rc = kinf_table_add_row(table, (const char *const *)cells.v);
		}
	}
	if (rc == 0) {
		if (multi.table_printed && !cli->no_headers) {	/* as kubectl: none without headers */
			putchar('\n');
		}
		multi.table_printed = true;
		rc = kinf_table_print(table, stdout);
	}
	kinf_table_free(table);
	kinf_strv_release(&cells);
	return rc < 0 ? cli_print_failed(cli, rc, NULL) : status;
}

static int print_table(struct item_printer *p, struct kinf_list_result *res) {
	struct cli *cli = p->cli;
	struct kinf_error err = {0};
	struct kinf_list_row *rows = res->rows;
	size_t n = res->n_rows;
	int rc;

	if (n == 0 && res->items.n > 0) {
		return print_local_table(p, res);
	}

	if (p->n_names > 0) {
		/* Keep only the named rows, in key order. */
		size_t out = 0;
		for (size_t i = 0; i < n; i++) {
			const char *slash = strrchr(rows[i].key, '/');
			const char *name = slash ? slash + 1 : rows[i].key;
			if (name_wanted(p, name)) {
				struct kinf_list_row tmp = rows[out];
				rows[out++] = rows[i];
				rows[i] = tmp;
			}
		}
		n = out;
	}
	if (n == 0 && p->n_names > 0) {
		return EXIT_OK;	/* each missing name is reported */
	}
	if (n == 0 && (multi.quiet_empty || cli->ignore_not_found)) {
		return EXIT_OK;	/* said once for all the groups, or not at all */
	}
	if (n == 0) {
		if (cli->namespace) {
			cli_printf_safe(stderr, "No resources found in %s namespace.", cli->namespace);
		} else {
			fprintf(stderr, "No resources found\n");
		}
		return EXIT_OK;
	}
	if (multi.merge) {
		/* Held for the type's one table, CONTEXT and NAMESPACE first. */
		struct kinf_list_row *v = realloc(multi.rows, (multi.n_rows + n) * sizeof(*v));
		if (v) {
			multi.rows = v;
		}
		const char **c = realloc(multi.row_contexts, (multi.n_rows + n) * sizeof(*c));
		if (c) {
			multi.row_contexts = c;
		}
		if (!v || !c) {
			return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		}
		multi.namespaced = cli->res->namespaced;
		for (size_t i = 0; i < n; i++) {
			multi.row_contexts[multi.n_rows] = multi.context;
			multi.rows[multi.n_rows++] = rows[i];
			rows[i] = (struct kinf_list_row){0};
		}
		if (!multi.columns_json && res->columns_json) {
			multi.columns_json = strdup(res->columns_json);
		}
		if (!multi.kind_prefix && multi.show_kind) {
			multi.kind_prefix = kind_prefix_of(cli->res);
		}
		return EXIT_OK;
	}
	if ((rc = sort_rows_by_field(cli, rows, n)) != EXIT_OK) {
		return rc;
	}
	char *kind_prefix = multi.show_kind ? kind_prefix_of(cli->res) : NULL;
	if (multi.table_printed && !cli->no_headers) {
		putchar('\n');
	}
	multi.table_printed = true;
	struct kinf_table_server_opts topts = {
		.wide = cli->format == KINF_OUTPUT_WIDE,
		.with_namespace = cli->all_namespaces && cli->res->namespaced,
		.no_headers = cli->no_headers,
		.name_prefix = kind_prefix,
		.labels = label_columns(cli),
	};
	rc = kinf_table_print_server(stdout, res->columns_json, rows, n, &topts, &err);
	free(kind_prefix);
	return rc < 0 ? cli_print_failed(cli, rc, &err) : EXIT_OK;
}

static int run_list(int argc, char **argv);

static int row_cmp(const void *a, const void *b) {
	const struct kinf_list_row *x = a, *y = b;
	return strcmp(x->key, y->key);
}

/* Held rows by namespace/name within each context's run, contexts as given. */
static void sort_rows(void) {
	for (size_t i = 0, j; i < multi.n_rows; i = j) {
		for (j = i + 1; j < multi.n_rows && multi.row_contexts[j] == multi.row_contexts[i]; j++) {
		}
		qsort(multi.rows + i, j - i, sizeof(*multi.rows), row_cmp);
	}
}

/* One group: the options (argv[0..n_opts)), then type and names. */
static int run_group(int argc, char **argv, int n_opts, const char *type,
		char **names, int n_names) {
	char **v = calloc((size_t)(n_opts + 1 + n_names + 1), sizeof(*v));
	if (!v) {
		fprintf(stderr, "kinf: out of memory\n");
		return EXIT_ERROR;
	}
	(void)argc;
	memcpy(v, argv, (size_t)n_opts * sizeof(*v));
	v[n_opts] = (char *)type;
	for (int i = 0; i < n_names; i++) {
		v[n_opts + 1 + i] = names[i];
	}
	multi.in_group = true;
	int status = run_list(n_opts + 1 + n_names, v);
	multi.in_group = false;
	free(v);
	return status;
}

/* The lists several types, namespaces or contexts make (see list_groups()). */
struct groups {
	int n_slash;		/* how many arguments are TYPE/NAME */
	struct kinf_strv nss;	/* -n a,b: two or more namespaces, or none */
	struct kinf_strv ctxs;	/* --context a,b: two or more contexts, or none */
	char **types;		/* a type per group, in the order given */
	int *firsts;		/* TYPE/NAME: each group's first argument, and n_pos */
	int n_types;
	char *type_list;	/* pods,svc: a copy, split in place into types */
	bool accessible;	/* -A --accessible: each type's namespaces found out */
};

static void groups_release(struct groups *g) {
	kinf_strv_release(&g->nss);
	kinf_strv_release(&g->ctxs);
	free(g->type_list);
	free(g->types);
	free(g->firsts);
}

/* A usage error or unknown context ends all the groups; other errors one. */
static bool stops_all(int status) {
	return status == EXIT_USAGE || status == EXIT_CONFIG;
}

/* The status of several lists: the first failure, unless a later one is worse than 1. */
static int worse(int status, int one) {
	return one != EXIT_OK && (status == EXIT_OK || one != EXIT_ERROR) ? one : status;
}

/*
 * -n a,b and -n a -n b (what "namespace"), --context the same: each name
 * once, in the order given, into ret; ret is left empty for fewer than two.
 */
static int split_args(struct cli *cli, const char **args, size_t *n_args,
		const char **single, const char *what, struct kinf_strv *ret) {
	size_t n = *n_args;
	for (size_t i = 0; i < n; i++) {
		for (const char *p = args[i];;) {
			size_t len = strcspn(p, ",");
			if (len == 0) {
				return cli_usage_error(cli, "empty %s name in \"%s\"", what, args[i]);
			}
			char *name = strndup(p, len);
			if (name && kinf_strv_contains(ret, name)) {
				free(name);
			} else if (kinf_strv_push_take(ret, name) < 0) {
				return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			}
			if (!p[len]) {
				break;
			}
			p += len + 1;
		}
	}
	if (ret->n == 1 && (n > 1 || strchr(args[0], ','))) {
		/*
		 * -n a,a or --context a --context a: one name, as the one-name
		 * path wants it. Every name given is that one, so the first
		 * argument cut at its first comma is it (argv is ours).
		 */
		char *first = (char *)args[0];
		first[strcspn(first, ",")] = '\0';
		*single = args[0];
		*n_args = 1;
	}
	if (ret->n < 2) {
		kinf_strv_release(ret);
	}
	return EXIT_OK;
}

/* TYPE/NAME arguments or not, namespaces and contexts. */
static int groups_parse(struct cli *cli, char **pos, int n_pos, struct groups *g) {
	int status = cli_check_type_names(cli, pos, n_pos, &g->n_slash);
	if (status != EXIT_OK) {
		return status;
	}
	if (!cli->all_namespaces) {
		status = split_args(cli, cli->namespace_args, &cli->n_namespace_args,
				&cli->kc.namespace, "namespace", &g->nss);
	}
	if (status == EXIT_OK) {
		status = split_args(cli, cli->context_args, &cli->n_context_args,
				&cli->kc.context, "context", &g->ctxs);
	}
	return status;
}

/* Every context known before any list: an unknown one is exit 3, naming it. */
static int check_contexts(struct cli *cli, const struct kinf_strv *ctxs) {
	for (size_t c = 0; c < ctxs->n; c++) {
		struct kinf_kubeconfig_opts kc = cli->kc;
		struct kinf_rest_config *config = NULL;
		struct kinf_error err = {0};
		kc.context = ctxs->v[c];
		int rc = kinf_kubeconfig_load(&kc, &config, &err);
		kinf_rest_config_free(config);
		if (rc < 0) {
			int status = cli_error(cli, rc, &err, NULL);
			return rc == -KINF_ENOMEM ? status : EXIT_CONFIG;
		}
	}
	return EXIT_OK;
}

/*
 * The groups' types: pods,svc [NAME...] (each type with the same names),
 * or TYPE/NAME... split in place (argv is ours) into TYPE\0NAME, with
 * consecutive arguments of one type a group.
 */
static int groups_types(struct cli *cli, char **pos, int n_pos, struct groups *g) {
	int status = EXIT_OK;
	/* A slot per argument, and per type of a comma list (pods,deploy,cm) */
	size_t slots = (size_t)n_pos + 1;
	for (const char *c = pos[0]; (c = strchr(c, ',')) != NULL; c++) {
		slots++;
	}

	g->types = calloc(slots, sizeof(*g->types));
	g->firsts = calloc(slots, sizeof(*g->firsts));
	if (!g->types || !g->firsts) {
		return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	}
	if (g->n_slash == 0) {
		g->type_list = strdup(pos[0]);
		for (char *t = g->type_list, *next; t && status == EXIT_OK; t = next) {
			next = strchr(t, ',');
			if (next) {
				*next++ = '\0';
			}
			if (!*t) {
				status = cli_usage_error(cli, "empty resource type in \"%s\"", pos[0]);
			}
			g->types[g->n_types++] = t;
		}
		return status;
	}
	for (int i = 0; i < n_pos && status == EXIT_OK; i++) {
		*strchr(pos[i], '/') = '\0';
		if (g->n_types == 0 || strcmp(g->types[g->n_types - 1], pos[i]) != 0) {
			g->firsts[g->n_types] = i;
			g->types[g->n_types++] = pos[i];
		}
	}
	g->firsts[g->n_types] = n_pos;
	return status;
}

/*
 * The type's rows of every namespace held by print_table(), as one table
 * sorted as one -A list is; contexts in the order given. Then forgotten.
 */
static int print_held_rows(struct cli *cli, const struct groups *g) {
	int status = EXIT_OK;

	if (multi.n_rows > 0) {
		sort_rows();
		/* --sort-by over the one table, its contexts together */
		if ((status = sort_rows_by_field(cli, multi.rows, multi.n_rows)) != EXIT_OK) {
			return status;
		}
		if (multi.table_printed && !cli->no_headers) {	/* as kubectl: none without headers */
			putchar('\n');
		}
		multi.table_printed = true;
		struct kinf_error err = {0};
		struct kinf_table_server_opts topts = {
			.wide = cli->format == KINF_OUTPUT_WIDE,
			.with_namespace = multi.namespaced && (g->nss.n > 1 || cli->all_namespaces),
			.no_headers = cli->no_headers,
			.name_prefix = multi.kind_prefix,
			.contexts = g->ctxs.n > 1 ? multi.row_contexts : NULL,
			.labels = label_columns(cli),
		};
		int rc = kinf_table_print_server(stdout, multi.columns_json,
				multi.rows, multi.n_rows, &topts, &err);
		if (rc < 0) {
			status = cli_print_failed(cli, rc, &err);
		}
	}
	return status;
}

static void forget_held_rows(void) {
	for (size_t i = 0; i < multi.n_rows; i++) {
		free(multi.rows[i].key);
		free(multi.rows[i].json);
	}
	free(multi.rows);
	free(multi.row_contexts);
	free(multi.columns_json);
	free(multi.kind_prefix);
	multi.rows = NULL;
	multi.row_contexts = NULL;
	multi.n_rows = 0;
	multi.columns_json = multi.kind_prefix = NULL;
}

static int accessible_namespaces(int n_opts, char **argv, const char *type,
		struct kinf_strv *ret, bool *ret_everywhere);

/*
 * -A --accessible, namespace by namespace: each name no namespace had
 * (multi.found_any), said as one -A list says it; then forgotten.
 */
static int missing_names(char *const *names, int n_names) {
	int status = EXIT_OK;
	for (int i = 0; multi.found_any && multi.found_resource && i < n_names; i++) {
		if (!multi.found_any[i] && !multi.ignore_not_found) {
			cli_printf_safe(stderr, "kinf: %s \"%s\" not found", multi.found_resource,
					names[i]);
			status = EXIT_ERROR;
		}
	}
	free(multi.found_any);
	free(multi.found_resource);
	multi.found_any = NULL;
	multi.found_resource = NULL;
	return status;
}

/*
 * One type's lists: a list per context and namespace, run_list's each;
 * with -A --accessible, the namespaces where the type may be listed when
 * not everywhere.
 */
static int run_type(struct cli *cli, int argc, char **argv, int n_opts,
		const struct groups *g, int t, char **names, int n_names) {
	size_t n_ctxs = g->ctxs.n > 1 ? g->ctxs.n : 1;
	int status = EXIT_OK;

	for (size_t c = 0; c < n_ctxs && !stops_all(status); c++) {
		struct kinf_strv allowed = {0};
		bool everywhere = true;
		multi.context = g->ctxs.n > 1 ? g->ctxs.v[c] : NULL;
		multi.listed_once = false;
		if (g->accessible) {
			status = worse(status, accessible_namespaces(n_opts, argv, g->types[t],
					&allowed, &everywhere));
		}
		/* -n a,b, the namespaces allowed, or one list (-A, or the context's). */
		const struct kinf_strv *nss = everywhere ? &g->nss : &allowed;
		bool each = nss->n > 1 || !everywhere;
		if (!everywhere && n_names > 0 && allowed.n > 0 &&
				!(multi.found_any = calloc((size_t)n_names, sizeof(bool)))) {
			status = worse(status, cli_error(cli, -KINF_ENOMEM, NULL, NULL));
		}
		for (size_t j = 0; j < (each ? nss->n : 1) && !stops_all(status); j++) {
			multi.namespace = each ? nss->v[j] : NULL;
			status = worse(status, run_group(argc, argv, n_opts, g->types[t],
					names, n_names));
		}
		status = worse(status, missing_names(names, n_names));
		multi.namespace = NULL;
		kinf_strv_release(&allowed);
	}
	multi.namespace = multi.context = NULL;
	if (!stops_all(status)) {
		int printed = print_held_rows(cli, g);
		status = printed != EXIT_OK ? printed : status;
	}
	forget_held_rows();
	return status;
}

/* Each group's lists, in turn; tables as kubectl prints several kinds. */
static int groups_run(struct cli *cli, int argc, char **argv, int n_opts,
		const struct groups *g) {
	char **pos = argv + n_opts;
	int n_pos = argc - n_opts;
	bool table = cli->format == KINF_OUTPUT_TABLE || cli->format == KINF_OUTPUT_WIDE;
	int status = EXIT_OK;

	for (int i = 1; i < g->n_types && !multi.show_kind; i++) {
		for (int j = 0; j < i; j++) {
			multi.show_kind |= strcmp(g->types[i], g->types[j]) != 0;
		}
	}
	multi.quiet_empty = g->n_types > 1 || g->nss.n > 1 || g->ctxs.n > 1 || g->accessible;
	multi.ignore_not_found = cli->ignore_not_found;
	multi.merge = table && (g->nss.n > 1 || g->ctxs.n > 1 || g->accessible);
	multi.table_printed = false;
	if (cli->format == KINF_OUTPUT_CUSTOM_COLUMNS) {
		status = cli_columns_new(cli, true, &multi.columns);
	}
	char **names = NULL;
	if (g->n_slash > 0 && !(names = calloc((size_t)n_pos + 1, sizeof(*names)))) {
		status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	}
	for (int t = 0; t < g->n_types && !stops_all(status) && (g->n_slash == 0 || names); t++) {
		int n = n_pos - 1;
		char **tnames = pos + 1;
		if (g->n_slash > 0) {
			n = g->firsts[t + 1] - g->firsts[t];
			for (int i = 0; i < n; i++) {
				names[i] = pos[g->firsts[t] + i] + strlen(pos[g->firsts[t] + i]) + 1;
			}
			tnames = names;
		}
		status = worse(status, run_type(cli, argc, argv, n_opts, g, t, tnames, n));
	}
	free(names);
	bool held = cli->templated || (cli->sort_by && !table);
	if (held && multi.columns && !stops_all(status)) {
		int printed = cli_columns_print(multi.columns, stdout);
		status = status == EXIT_OK ? printed : status;
	} else if (held && !stops_all(status)) {
		int printed = cli_sort_objects(cli, multi.held.v, multi.held.n);
		if (printed == EXIT_OK && cli->templated) {
			struct cli_objects objs = cli_objects_array(multi.held.v, multi.held.n);
			printed = cli_print_templated(cli, &objs, false, stdout);
		}
		for (size_t i = 0; printed == EXIT_OK && i < multi.held.n; i++) {
			if (!cli->templated) {
				printed = print_typed(cli, multi.held.v[i], i == 0);
			}
		}
		status = status == EXIT_OK ? printed : status;
	}
	kinf_object_list_release(&multi.held);
	cli_columns_free(multi.columns);
	multi.columns = NULL;
	if (table && multi.quiet_empty && !multi.table_printed && status == EXIT_OK &&
			g->n_slash == 0 && n_pos == 1 && !cli->ignore_not_found) {
		if (multi.listed_namespace && !multi.listed_cluster_scoped && g->nss.n < 2 &&
				g->ctxs.n < 2) {
			cli_printf_safe(stderr, "No resources found in %s namespace.",
					multi.listed_namespace);
		} else {
			fprintf(stderr, "No resources found\n");
		}
	}
	free(multi.listed_namespace);
	multi.listed_namespace = NULL;
	multi.listed_cluster_scoped = false;
	fflush(stdout);
	multi.show_kind = multi.quiet_empty = multi.table_printed = false;
	multi.merge = false;
	return status;
}

/*
 * kubectl's resource builder rules for the arguments: TYPE[,TYPE...]
 * [NAME...], or only TYPE/NAME arguments (each a single type and name).
 * Several types or TYPE/NAME arguments run a list per type (consecutive
 * TYPE/NAME of one type make one group), in the order given, and so do
 * several namespaces and contexts, and -A --accessible (accessible) where
 * a type may not be listed everywhere; *handled says whether it did (one
 * plain type is the caller's).
 */
static int list_groups(struct cli *cli, int argc, char **argv, int n_opts, bool accessible,
		bool *handled) {
	char **pos = argv + n_opts;
	int n_pos = argc - n_opts;
	struct groups g = { .accessible = accessible };

	*handled = true;
	int status = groups_parse(cli, pos, n_pos, &g);
	if (status == EXIT_OK && g.nss.n < 2 && g.ctxs.n < 2 && g.n_slash == 0 &&
			!strchr(pos[0], ',') && !accessible) {
		*handled = false;
	} else if (status == EXIT_OK && (status = check_contexts(cli, &g.ctxs)) == EXIT_OK &&
			(status = groups_types(cli, pos, n_pos, &g)) == EXIT_OK) {
		status = groups_run(cli, argc, argv, n_opts, &g);
	}
	groups_release(&g);
	return status;
}

/* What kinf list was asked for: its options and arguments, parsed. */
struct list_args {
	struct cli cli;
	char **pos;		/* TYPE [NAME...], or TYPE/NAME... */
	int n_pos;
	int n_opts;		/* argv[0..n_opts): the options, moved first by getopt_long */
	bool help;		/* --help was printed */
	struct session_opts so;	/* --accessible */
	bool watch;		/* -w, --watch */
	struct getwatch_opts gw;	/* -w's: --watch-only, --output-watch-events */
};

/*
 * An option list does not know: one of kinf watch's is said to be (list
 * -w is kubectl get -w, not the informer).
 */
static int list_bad_option(struct list_args *a) {
	const struct cli_flag_fault *f = cli_getopt_fault();
	if (f->kind == CLI_FLAG_UNKNOWN && f->name_len &&
			cli_command_has_option(&cmd_watch, f->name, f->name_len)) {
		return cli_usage_error(&a->cli, "option '--%.*s' is kinf watch's: kinf list -w "
				"is kubectl get -w (for the informer's events and options, kinf "
				"watch)", (int)f->name_len, f->name);
	}
	return cli_bad_option(&a->cli, list_options);
}

/* Parse argv into a. EXIT_OK, or the status of a usage error (printed). */
static int list_parse(struct list_args *a, int argc, char **argv) {
	int opt;

	*a = (struct list_args){0};
	cli_init(&a->cli, &cmd_list);
	optind = 0;
	while ((opt = cli_getopt(argc, argv, ":" LIST_SHORT, list_options)) != -1) {
		if (opt == 'h') {
			cli_print_help(&cmd_list);
			a->help = true;
			return EXIT_OK;
		}
		if (opt == OPT_IGNORE_NOT_FOUND) {
			a->cli.ignore_not_found = true;
			continue;
		}
		if (opt == 'w' || opt == 'W') {
			a->watch = true;
			a->gw.watch_only |= opt == 'W';
			continue;
		}
		if (opt == OPT_OUTPUT_WATCH_EVENTS) {
			a->gw.output_watch_events = true;
			continue;
		}
		int r = opt == OPT_ACCESSIBLE ? session_option(&a->cli, &a->so, opt, optarg) :
			cli_table_option(&a->cli, opt, optarg);
		if (r == 0) {
			r = cli_common_option(&a->cli, opt, optarg);
		}
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return list_bad_option(a);
		}
	}
	/* getopt_long moved the positional arguments to the end. */
	a->n_opts = optind;
	a->pos = argv + optind;
	a->n_pos = argc - optind;
	int status = cli_check_table_options(&a->cli);
	if (status == EXIT_OK && a->gw.output_watch_events && !a->watch) {
		status = cli_usage_error(&a->cli, "--output-watch-events goes with -w, as kubectl's");
	}
	a->gw.labels = label_columns(&a->cli);
	return status != EXIT_OK ? status : session_check_accessible(&a->cli, &a->so);
}

/* One list's checks; within a group, the group's namespace and context. */
static int list_check(struct list_args *a) {
	if (a->n_pos < 1) {
		return cli_usage_error(&a->cli, "list needs a resource type, e.g. 'kinf list pods'");
	}
	if (multi.in_group && multi.namespace) {
		/* -A --accessible: this one of the namespaces allowed. */
		a->cli.all_namespaces = false;
		a->cli.kc.namespace = multi.namespace;
		a->cli.namespace_args[0] = multi.namespace;
		a->cli.n_namespace_args = 1;
	}
	if (multi.in_group && multi.context) {
		a->cli.kc.context = multi.context;
		a->cli.context_args[0] = multi.context;
		a->cli.n_context_args = 1;
	}
	return EXIT_OK;
}

/*
 * -A --accessible: where type may be listed in the group's context
 * (session_accessible_namespaces()), through a connection of its own
 * made with the options (argv[0..n_opts)). *ret_everywhere is false when
 * it failed (reported).
 */
static int accessible_namespaces(int n_opts, char **argv, const char *type,
		struct kinf_strv *ret, bool *ret_everywhere) {
	char **v = calloc((size_t)n_opts + 2, sizeof(*v));
	bool in_group = multi.in_group;
	struct list_args a;
	int status;

	*ret_everywhere = false;
	if (!v) {
		fprintf(stderr, "kinf: out of memory\n");
		return EXIT_ERROR;
	}
	memcpy(v, argv, (size_t)n_opts * sizeof(*v));
	v[n_opts] = (char *)type;
	multi.in_group = true;		/* the group's context */
	if ((status = list_parse(&a, n_opts + 1, v)) == EXIT_OK &&
			(status = list_check(&a)) == EXIT_OK &&
			(status = cli_connect(&a.cli, type)) == EXIT_OK) {
		status = session_accessible_namespaces(&a.cli, multi.context, ret,
				ret_everywhere);
	}
	multi.in_group = in_group;
	cli_release(&a.cli);
	free(v);
	return status;
}

/*
 * List with the printer of cli's format: items to p as they come when
 * streamed, else kept in *result. The pager's status.
 */
static int list_fetch(struct list_args *a, struct item_printer *p, const char *path,
		bool table, bool streamed, struct kinf_list_result *result,
		struct kinf_error *err) {
	struct cli *cli = &a->cli;
	const char *field_selector = cli->field_selector;
	char *name_selector = NULL;
	/* Items to the printing thread as they come: printed, or made rows. */
	bool queued = streamed || p->columns;
	int rc;

	if (a->n_pos == 2 && !field_selector) {
		/* One name: let the server filter, as kubectl's get does by name. */
		struct kinf_buf b = {0};
		kinf_buf_putf(&b, "metadata.name=%s", a->pos[1]);
		name_selector = kinf_buf_take(&b);
		if (!name_selector) {
			return kinf_error_set(err, KINF_ENOMEM, "out of memory");
		}
		field_selector = name_selector;
	}
	cli_managed_fields(cli, false);
	struct kinf_list_opts lopts = {
		.path = path,
		.label_selector = cli->label_selector,
		.field_selector = field_selector,
		.limit = cli->chunk_size,
		.table = table,
		.row_objects = table && (cli->sort_by || label_columns(cli)),
		.full_objects = table && cli->sort_by,
		.limits = cli->limits,
		.on_page = on_page,
		.on_item = queued ? queue_item : NULL,
		.on_restart = p->columns ? restart_items : NULL,
		.userdata = p,
	};
	/* Printed as they come and never indexed: no node or phase needed. */
	lopts.limits.metadata_only = streamed;
	if (!p->found || !p->api_version) {
		rc = kinf_error_set(err, KINF_ENOMEM, "out of memory");
	} else if (queued && !printer_start(p)) {
		rc = kinf_error_set(err, KINF_ENOMEM, "cannot start the output thread");
	} else {
		rc = kinf_list(cli->http, &lopts, result, err);
	}
	printer_finish(p);
	if (p->progress.shown) {
		cli_progress_erase();
	}
	free(name_selector);
	return rc;
}

/* A list that failed: of several namespaces or contexts, which one, as watch names it. */
static int list_failed(struct cli *cli, int rc, struct kinf_error *err) {
	struct kinf_buf what = {0};
	if (multi.in_group && (multi.namespace || multi.context)) {
		kinf_buf_putf(&what, "%s%s%s", cli->res->resource,
				cli->res->group[0] ? "." : "", cli->res->group);
		if (multi.namespace && cli->res->namespaced) {
			kinf_buf_putf(&what, " in namespace \"%s\"", multi.namespace);
		}
		if (multi.context) {
			kinf_buf_putf(&what, " of context \"%s\"", multi.context);
		}
	}
	int status = cli_error(cli, rc, err, kinf_buf_error(&what) ? NULL : what.data);
	kinf_buf_release(&what);
	return status;
}

/*
 * The resource as the apiserver's NotFound names it: "pods",
 * "deployments.apps", "widgets.example.com" (kubectl prints the server's
 * words for a name it asked for).
 */
static char *notfound_resource(const struct kinf_resource *res) {
	struct kinf_buf b = {0};
	if (kinf_buf_printf(&b, "%s%s%s", res->resource, res->group[0] ? "." : "",
			res->group) < 0) {
		kinf_buf_release(&b);
		return NULL;
	}
	return b.data;
}

/*
 * Print what the list brought (tables and templates: all of it now; the
 * streamed formats did as it came) and report every name not found, as
 * kubectl get reports NotFound.
 */
static int list_print(struct list_args *a, struct item_printer *p, bool table,
		bool templated, bool streamed, struct kinf_list_result *result) {
	struct cli *cli = &a->cli;
	int status = EXIT_OK;

	if (result->fell_back_to_full_list && streamed && result->n_items > 0) {
		cli_printf_safe(stderr, "kinf: warning: the list's continue token expired midway; "
				"the items after that come from a second, full list "
				"(resourceVersion %s)", result->resource_version);
	}
	int pstatus = table ? print_table(p, result) :
		templated ? print_templated(p, result) :
		!streamed ? print_sorted(p, result) : EXIT_OK;
	for (int i = 1; i < a->n_pos; i++) {
		if (multi.found_any) {
			/* Said by run_type() once every namespace was listed. */
			multi.found_any[i - 1] |= p->found[i - 1];
			if (!multi.found_resource) {
				multi.found_resource = notfound_resource(cli->res);
			}
		} else if (!p->found[i - 1] && !cli->ignore_not_found) {
			char *what = notfound_resource(cli->res);
			cli_printf_safe(stderr, "kinf: %s \"%s\" not found",
					what ? what : cli->res->resource, a->pos[i]);
			free(what);
			status = EXIT_ERROR;
		}
	}
	return status == EXIT_OK ? pstatus : status;
}

/* One type's list, connected: fetch, then print. */
static int list_one(struct list_args *a, struct item_printer *p) {
	struct cli *cli = &a->cli;
	struct kinf_list_result result = {0};
	struct kinf_error err = {0};
	char *path = kinf_resource_path(cli->res, cli->namespace);
	struct cli_columns *own_columns = NULL;
	int status;

	*p = (struct item_printer){
		.cli = cli,
		.names = a->pos + 1,
		.n_names = a->n_pos - 1,
		.found = calloc((size_t)a->n_pos, sizeof(bool)),
		.api_version = api_version_of(cli->res),
		.first = true,
	};
	bool table = cli->format == KINF_OUTPUT_TABLE || cli->format == KINF_OUTPUT_WIDE;
	bool templated = cli->templated;
	/* --sort-by needs the whole list first, as tables and templates do */
	bool streamed = !table && !templated && !cli->sort_by;
	if (cli->format == KINF_OUTPUT_CUSTOM_COLUMNS) {
		/* A row of each item as it comes (the groups' rows, of several lists). */
		if (!multi.in_group && (status = cli_columns_new(cli, true, &own_columns)) != EXIT_OK) {
			free(path);
			return status;
		}
		p->columns = multi.in_group ? multi.columns : own_columns;
	}
	if (streamed && !isatty(STDOUT_FILENO)) {
		static char stdout_buf[64 << 10];
		setvbuf(stdout, stdout_buf, _IOFBF, sizeof(stdout_buf));
	}
	/* No progress line between items that go to the same terminal. */
	p->progress.what = cli->res->resource;
	p->progress.off = streamed && isatty(STDOUT_FILENO);
	int rc = list_fetch(a, p, path, table, streamed, &result, &err);
	if (p->write_errno) {
		/* stdout failed: main() reports it (quietly for a closed pipe). */
		status = EXIT_OK;
	} else if (p->print_rc < 0) {
		status = cli_error(cli, p->print_rc, &p->print_err, NULL);
	} else if (rc < 0) {
		status = list_failed(cli, rc, &err);
	} else {
		status = list_print(a, p, table, templated, streamed, &result);
	}
	if (p->columns && status != EXIT_OK && multi.in_group) {
		/* A list that failed holds nothing for the groups' table. */
		cli_columns_restart(p->columns);
	}
	cli_columns_free(own_columns);
	kinf_list_result_release(&result);
	free(path);
	return status;
}

static int list_exec(struct list_args *a) {
	struct item_printer printer = {0};
	bool listed = false;
	int status = cli_connect(&a->cli, a->pos[0]);

	if (status == EXIT_OK && multi.in_group) {
		if (!a->cli.res->namespaced || !a->cli.namespace) {
			multi.listed_cluster_scoped = true;
		} else if (!multi.listed_namespace) {
			multi.listed_namespace = strdup(a->cli.namespace);
		}
	}
	if (status == EXIT_OK && multi.in_group && multi.namespace && !a->cli.res->namespaced) {
		/* A cluster-scoped type: listed for the first namespace only. */
		listed = multi.listed_once;
		multi.listed_once = true;
	}
	if (status == EXIT_OK && !listed) {
		status = list_one(a, &printer);
	}
	kinf_buf_release(&printer.prefix);
	free(printer.found);
	free(printer.api_version);
	cli_release(&a->cli);
	if (printer.write_errno) {
		/* What cli_finish_stdout() looks at when its flush has nothing to write. */
		errno = printer.write_errno;
	}
	return status;
}

/*
 * -w, --watch-only: kubectl get -w (getwatch.h), of one type, one
 * namespace (or -A), one context and at most one name, as kubectl's.
 */
static int list_watch(struct list_args *a) {
	struct cli *cli = &a->cli;
	int n_slash = 0, status;

	if ((status = cli_check_type_names(cli, a->pos, a->n_pos, &n_slash)) != EXIT_OK) {
		return status;
	}
	char *type = a->n_pos > 0 ? a->pos[0] : NULL;
	if (n_slash == 1) {
		char *slash = strchr(type, '/');
		*slash = '\0';
		a->gw.name = slash + 1;
	} else if (a->n_pos == 2) {
		a->gw.name = a->pos[1];
	}
	if (!type) {
		return cli_usage_error(cli, "list needs a resource type, e.g. 'kinf list pods -w'");
	}
	if (a->n_pos > (n_slash ? 1 : 2) || strchr(type, ',')) {
		return cli_usage_error(cli, "list -w watches one resource type and at most one "
				"NAME, as kubectl get -w (several: kinf watch)");
	}
	if (cli->sort_by || a->so.accessible) {
		return cli_usage_error(cli, "%s does not go with -w", cli->sort_by ? "--sort-by" :
				"--accessible");
	}
	if ((status = cli_connect(cli, type)) != EXIT_OK) {
		return status;
	}
	return getwatch_run(cli, &a->gw);
}

static int run_list(int argc, char **argv) {
	struct list_args a;
	int status;

	status = list_parse(&a, argc, argv);
	if (status == EXIT_OK && !a.help && a.watch) {
		status = list_watch(&a);
		cli_release(&a.cli);
		return status;
	}
	bool handled = status != EXIT_OK || a.help;
	if (!handled && !multi.in_group && a.n_pos > 0) {
		/* Several types, TYPE/NAMEs, namespaces or contexts: a list each. */
		status = list_groups(&a.cli, argc, argv, a.n_opts, a.so.accessible, &handled);
	}
	if (!handled && (status = list_check(&a)) == EXIT_OK) {
		return list_exec(&a);	/* it releases a.cli */
	}
	cli_release(&a.cli);
	return status;
}

const struct cmd cmd_list = {
	.name = "list",
	.summary = "list a resource once, consistently, paginated",
	.usage = list_usage,
	.run = run_list,
	.options = list_options,
	.formats = CLI_FORMATS_ALL,
};
