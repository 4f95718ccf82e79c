#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Alphabetized; exact match only. */
static const struct cmd *const commands[] = {
	&cmd_deltas,
	&cmd_index,
	&cmd_list,
	&cmd_version,
	&cmd_watch,
};

#define N_COMMANDS (sizeof(commands) / sizeof(*commands))

static void usage(FILE *out) {
	fprintf(out,
		"kinf: a Kubernetes informer at the command line\n"
		"\n"
		"Usage: kinf COMMAND RESOURCE [NAME...] [OPTIONS]\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++) {
		fprintf(out, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	}
	fprintf(out,
		"\n"
		"Examples:\n"
		"  kinf list pods -n default          one consistent list, as a table\n"
		"  kinf list deploy -A -o json | jq   one JSON object per line\n"
		"  kinf watch pods -l app=web         the informer's events as they happen\n"
		"  kinf deltas pods --resync 30s      the raw DeltaFIFO pops\n"
		"  kinf index pods --by node=node-1   questions answered from the cache\n"
		"\n"
		"Run 'kinf COMMAND --help' for a command's options, 'man kinf' for all.\n"
		"Global options: -h, --help; --version.\n");
}

/* Levenshtein distance, for "did you mean". */
static size_t edit_distance(const char *a, const char *b) {
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = calloc(lb + 1, sizeof(*row));
	if (!row) {
		return (size_t)-1;
	}
	for (size_t j = 0; j <= lb; j++) {
		row[j] = j;
	}
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t best = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best) {
				best = row[j] + 1;
			}
			if (row[j - 1] + 1 < best) {
				best = row[j - 1] + 1;
			}
			row[j] = best;
			prev = cur;
		}
	}
	size_t d = row[lb];
	free(row);
	return d;
}

int main(int argc, char **argv) {
	/* A closed pipe is reported by the write, not by a signal. */
	signal(SIGPIPE, SIG_IGN);

	if (argc < 2) {
		usage(stdout);
		return cli_finish_stdout(EXIT_OK);
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
			strcmp(name, "help") == 0) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			for (size_t i = 0; i < N_COMMANDS; i++) {
				if (strcmp(argv[2], commands[i]->name) == 0) {
					cli_print_help(commands[i]);
					return cli_finish_stdout(EXIT_OK);
				}
			}
		}
		usage(stdout);
		return cli_finish_stdout(EXIT_OK);
	}
	if (strcmp(name, "--version") == 0) {
		printf("kinf %s\n", KINF_VERSION);
		return cli_finish_stdout(EXIT_OK);
	}
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(name, commands[i]->name) == 0) {
			return cli_finish_stdout(commands[i]->run(argc - 1, argv + 1));
		}
	}
	if (name[0] == '-') {
		return cli_usage_error(NULL, "unknown option '%s' (options go after the command)", name);
	}
	const char *best = NULL;
	size_t best_d = 3;
	for (size_t i = 0; i < N_COMMANDS; i++) {
		size_t d = edit_distance(name, commands[i]->name);
		if (d < best_d) {
			best_d = d;
			best = commands[i]->name;
		}
	}
	if (best) {
		return cli_usage_error(NULL, "unknown command \"%s\", did you mean \"%s\"?", name, best);
	}
	return cli_usage_error(NULL, "unknown command \"%s\"", name);
}
