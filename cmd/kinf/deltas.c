#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "session.h"
#include "table.h"

static const char deltas_usage[] =
	"Usage: kinf deltas RESOURCE[,RESOURCE...] [NAME] [OPTIONS]\n"
	"\n"
	"Run the reflector into a DeltaFIFO and print what each Pop hands out:\n"
	"one line per delta with the pop number, its type (Added, Updated,\n"
	"Deleted, Sync, Replaced), key, resourceVersion and whether it is a\n"
	"DeletedFinalStateUnknown tombstone. Several resources (pods,configmaps)\n"
	"and namespaces (-n a,b) run a reflector and DeltaFIFO each, merged.\n"
	"\n"
	"Examples:\n"
	"  kinf deltas pods -n default --resync 30s\n"
	"  kinf deltas pods --emit-replaced -o json | jq -c '{pop,type,key}'\n"
	"\n"
	"Deltas options:\n"
	"      --emit-replaced            relists queue Replaced instead of Sync\n"
	"\n";

static const struct option deltas_options[] = {
	CLI_COMMON_OPTIONS,
	SESSION_OPTIONS,
	{ "emit-replaced", no_argument, NULL, OPT_EMIT_REPLACED },
	{ NULL, 0, NULL, 0 },
};

static void print_delta_json(struct session *s, struct kinf_buf *b, unsigned long pop,
		const struct kinf_deltas *d, const struct kinf_delta *delta, bool initial) {
	const char *type = kinf_delta_type_name(delta->type);
	kinf_buf_reset(b);
	kinf_buf_putf(b, "{\"pop\":%lu,\"type\":", pop);
	kinf_json_put_quoted(b, type, strlen(type));
	kinf_buf_puts(b, ",\"key\":");
	kinf_json_put_quoted(b, d->key, strlen(d->key));
	session_put_source(s, b);
	if (delta->obj) {
		const char *rv = kinf_object_resource_version(delta->obj);
		kinf_buf_puts(b, ",\"resourceVersion\":");
		kinf_json_put_quoted(b, rv, strlen(rv));
	}
	kinf_buf_putf(b, ",\"finalStateUnknown\":%s", delta->final_state_unknown ? "true" : "false");
	if (initial) {
		kinf_buf_puts(b, ",\"initial\":true");
	}
	kinf_buf_puts(b, ",\"object\":");
	if (delta->obj) {
		struct kinf_object *typed = session_printed(s, delta->obj);
		size_t len;
		if (typed) {
			const char *json = kinf_object_json(typed, &len);
			kinf_buf_put(b, json, len);
		} else {
			kinf_buf_fail(b, -KINF_ENOMEM);	/* never the object untyped */
		}
		kinf_object_unref(typed);
	} else {
		kinf_buf_puts(b, "null");
	}
	kinf_buf_puts(b, "}\n");
	cli_emit(stdout, b);
}

/* What kinf deltas was asked for: its options and arguments, parsed. */
struct deltas_args {
	struct cli cli;
	struct session_opts so;
	const char *resource;	/* argv's, or NULL */
	const char *name;	/* argv's, or NULL */
	int n_pos;
	bool help;		/* --help was printed */
};

/* Parse argv into a. EXIT_OK, or the status of a usage error (printed). */
static int deltas_parse(struct deltas_args *a, int argc, char **argv) {
	int opt;

	*a = (struct deltas_args){0};
	cli_init(&a->cli, &cmd_deltas);
	optind = 0;
	while ((opt = cli_getopt(argc, argv, ":" CLI_COMMON_SHORT, deltas_options)) != -1) {
		if (opt == 'h') {
			cli_print_help(&cmd_deltas);
			a->help = true;
			return EXIT_OK;
		}
		if (opt == OPT_EMIT_REPLACED) {
			a->so.emit_replaced = true;
			continue;
		}
		int r = session_option(&a->cli, &a->so, opt, optarg);
		if (r == 0) {
			r = cli_common_option(&a->cli, opt, optarg);
		}
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&a->cli, deltas_options);
		}
	}
	a->n_pos = argc - optind;
	a->resource = a->n_pos > 0 ? argv[optind] : NULL;
	a->name = a->n_pos > 1 ? argv[optind + 1] : NULL;
	return EXIT_OK;
}

static int deltas_check(struct deltas_args *a) {
	if (a->n_pos > 2) {
		return cli_usage_error(&a->cli, "deltas takes a resource type and at most one name");
	}
	return EXIT_OK;
}

/* A running kinf deltas. */
struct deltas_run {
	const struct cli *cli;
	struct session *s;
	struct kinf_table *table;	/* NULL for -o json */
	struct kinf_buf line;		/* -o json's */
	unsigned long pops;
	bool streaming;		/* the initial population is out: a row at a time */
};

/* The table of -o table: headers unless --no-headers. NULL for out of memory. */
static struct kinf_table *deltas_table_new(const struct cli *cli) {
	static const char *const headers[] = { "POP", "TYPE", "KEY", "RESOURCEVERSION", "TOMBSTONE" };
	static const char *const widest[] = { "", "Replaced", "", "", "" };
	struct kinf_table *table = kinf_table_new(5);
	if (!table) {
		return NULL;
	}
	kinf_table_widen(table, widest);
	if (!cli->no_headers) {
		kinf_table_put_row(table, headers);
	}
	return table;
}

/* One pop: a row or JSON line per delta. 0 or what failed. */
static int print_pop(struct deltas_run *r, const struct kinf_deltas *d, bool initial) {
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < d->n; i++) {
		const struct kinf_delta *delta = &d->v[i];
		if (!r->table) {
			print_delta_json(r->s, &r->line, r->pops, d, delta, initial);
			continue;
		}
		char pop[32];
		snprintf(pop, sizeof(pop), "%lu", r->pops);
		const char *cells[] = {
			pop, kinf_delta_type_name(delta->type), d->key,
			delta->obj ? kinf_object_resource_version(delta->obj) : "<unknown>",
			delta->final_state_unknown ? "yes" : "",
		};
		if (r->streaming) {
			rc = kinf_table_print_row(r->table, cells, stdout);
		} else {
			/* The initial population is printed as one aligned block. */
			kinf_table_put_row(r->table, cells);
		}
	}
	return rc;
}

/* Pop until the session ends, printing each pop. */
static int deltas_loop(struct deltas_run *r) {
	int status = session_start(r->s);
	while (status == EXIT_OK) {
		struct kinf_informer_batch batch;
		struct kinf_deltas *d = NULL;
		int rc = session_next(r->s, &batch, &d);
		if (rc <= 0) {
			status = -rc;
			break;
		}
		r->pops++;
		rc = print_pop(r, d, batch.in_initial_list);
		session_count(r->s);
		kinf_deltas_free(d);
		kinf_informer_batch_release(&batch);
		if (rc == 0 && r->table && !r->streaming && session_synced(r->s)) {
			rc = kinf_table_flush(r->table, stdout);
			r->streaming = true;
		}
		if (rc < 0) {
			return cli_print_failed(r->cli, rc, NULL);
		}
		if (ferror(stdout)) {
			break;
		}
		fflush(stdout);
	}
	/* A session that failed before its first pop prints no header either. */
	if (r->table && !r->streaming && (status == EXIT_OK || r->pops > 0)) {
		int rc = kinf_table_flush(r->table, stdout);
		if (rc < 0) {
			int pstatus = cli_print_failed(r->cli, rc, NULL);
			status = status ? status : pstatus;
		}
	}
	return status;
}

static int deltas_exec(struct deltas_args *a) {
	struct deltas_run r = { .cli = &a->cli };
	int status = session_new(&a->cli, &a->so, a->resource, a->name, &r.s);
	if (status != EXIT_OK) {
		return status;
	}
	if (a->cli.format == KINF_OUTPUT_TABLE && !(r.table = deltas_table_new(&a->cli))) {
		return session_end(r.s, cli_error(&a->cli, -KINF_ENOMEM, NULL, NULL));
	}
	status = deltas_loop(&r);
	kinf_table_free(r.table);
	kinf_buf_release(&r.line);
	return session_end(r.s, status);
}

static int run_deltas(int argc, char **argv) {
	struct deltas_args a;
	int status = deltas_parse(&a, argc, argv);
	if (status == EXIT_OK && !a.help && (status = deltas_check(&a)) == EXIT_OK) {
		return deltas_exec(&a);
	}
	cli_release(&a.cli);
	return status;
}

const struct cmd cmd_deltas = {
	.name = "deltas",
	.summary = "print the raw DeltaFIFO pops (Sync deltas on resync included)",
	.usage = deltas_usage,
	.run = run_deltas,
	.options = deltas_options,
	.more_usage = session_usage,
	.formats = CLI_FORMAT(KINF_OUTPUT_TABLE) | CLI_FORMAT(KINF_OUTPUT_JSON),
};
