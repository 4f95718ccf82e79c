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
		size_t d = cli_edit_distance(name, commands[i]->name);
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
