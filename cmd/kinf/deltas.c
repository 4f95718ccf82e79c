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
	kinf_buf_printf(b, "{\"pop\":%lu,\"type\":", pop);
	kinf_json_quote(b, type, strlen(type));
	kinf_buf_append_str(b, ",\"key\":");
	kinf_json_quote(b, d->key, strlen(d->key));
	session_append_source(s, b);
	if (delta->obj) {
		const char *rv = kinf_object_resource_version(delta->obj);
		kinf_buf_append_str(b, ",\"resourceVersion\":");
		kinf_json_quote(b, rv, strlen(rv));
	}
	kinf_buf_printf(b, ",\"finalStateUnknown\":%s", delta->final_state_unknown ? "true" : "false");
	if (initial) {
		kinf_buf_append_str(b, ",\"initial\":true");
	}
	kinf_buf_append_str(b, ",\"object\":");
	if (delta->obj) {
		struct kinf_object *typed = session_printed(s, delta->obj);
		size_t len;
		const char *json = kinf_object_json(typed ? typed : delta->obj, &len);
		kinf_buf_append(b, json, len);
		kinf_object_unref(typed);
	} else {
		kinf_buf_append_str(b, "null");
	}
	kinf_buf_append_str(b, "}\n");
	fwrite(b->data, 1, b->len, stdout);
}

static int run_deltas(int argc, char **argv) {
	struct cli cli;
	struct session_opts so = {0};
	struct session *s = NULL;
	struct kinf_table *table = NULL;
	struct kinf_buf line = {0};
	unsigned long pops = 0;
	bool streaming = false;
	int opt, status;

	cli_init(&cli, &cmd_deltas);
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":" CLI_COMMON_SHORT, deltas_options, NULL)) != -1) {
		if (opt == 'h') {
			cli_print_help(&cmd_deltas);
			return EXIT_OK;
		}
		if (opt == OPT_EMIT_REPLACED) {
			so.emit_replaced = true;
			continue;
		}
		int r = session_option(&cli, &so, opt, optarg);
		if (r == 0) {
			r = cli_common_option(&cli, opt, optarg);
		}
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&cli, argc, argv, deltas_options);
		}
	}
	int n_pos = argc - optind;
	if (n_pos > 2) {
		return cli_usage_error(&cli, "deltas takes a resource type and at most one name");
	}
	if (cli.format != KINF_OUTPUT_TABLE && cli.format != KINF_OUTPUT_JSON) {
		return cli_usage_error(&cli, "deltas prints table or json output");
	}
	status = session_new(&cli, &so, n_pos > 0 ? argv[optind] : NULL,
			n_pos > 1 ? argv[optind + 1] : NULL, &s);
	if (status != EXIT_OK) {
		return status;
	}
	if (cli.format == KINF_OUTPUT_TABLE) {
		static const char *const headers[] = { "POP", "TYPE", "KEY", "RESOURCEVERSION", "TOMBSTONE" };
		static const char *const widest[] = { "", "Replaced", "", "", "" };
		table = kinf_table_new(5);
		if (!table) {
			return session_end(s, EXIT_ERROR);
		}
		kinf_table_widen(table, widest);
		if (!cli.no_headers) {
			kinf_table_add_row(table, headers);
		}
	}
	status = session_start(s);
	while (status == EXIT_OK) {
		struct kinf_informer_batch batch;
		struct kinf_deltas *d = NULL;
		int r = session_next(s, &batch, &d);
		if (r <= 0) {
			status = -r;
			break;
		}
		pops++;
		bool initial = batch.in_initial_list;
		for (size_t i = 0; i < d->n; i++) {
			const struct kinf_delta *delta = &d->v[i];
			if (table) {
				char pop[32];
				snprintf(pop, sizeof(pop), "%lu", pops);
				const char *cells[] = {
					pop, kinf_delta_type_name(delta->type), d->key,
					delta->obj ? kinf_object_resource_version(delta->obj) : "<unknown>",
					delta->final_state_unknown ? "yes" : "",
				};
				if (streaming) {
					kinf_table_print_row(table, cells, stdout);
				} else {
					/* The initial population is printed as one aligned block. */
					kinf_table_add_row(table, cells);
				}
			} else {
				print_delta_json(s, &line, pops, d, delta, initial);
			}
		}
		session_count(s);
		kinf_deltas_free(d);
		kinf_informer_batch_release(&batch);
		if (table && !streaming && session_synced(s)) {
			kinf_table_flush(table, stdout);
			streaming = true;
		}
		if (ferror(stdout)) {
			break;
		}
		fflush(stdout);
	}
	if (table && !streaming) {
		kinf_table_flush(table, stdout);
	}
	kinf_table_free(table);
	kinf_buf_release(&line);
	return session_end(s, status);
}

const struct cmd cmd_deltas = {
	.name = "deltas",
	.summary = "print the raw DeltaFIFO pops (Sync deltas on resync included)",
	.usage = deltas_usage,
	.run = run_deltas,
	.options = deltas_options,
	.more_usage = session_usage,
};
