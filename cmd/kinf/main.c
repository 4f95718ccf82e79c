#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "editdist.h"

/* Alphabetized; exact match only. */
static const struct cmd *const commands[] = {
	&cmd_deltas,
	&cmd_index,
	&cmd_list,
	&cmd_serve,
	&cmd_version,
	&cmd_watch,
};

#define N_COMMANDS (sizeof(commands) / sizeof(*commands))

static void usage(FILE *out) {
	fprintf(out,
		"kinf: a Kubernetes informer at the command line\n"
		"\n"
		"Usage: kinf [OPTIONS] COMMAND RESOURCE [NAME...] [OPTIONS]\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++) {
		fprintf(out, "  %-8s %s%s\n", commands[i]->name, commands[i]->summary,
				commands[i] == &cmd_list ? " (also: get)" : "");
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
		"Run 'kinf help COMMAND' for a command's options, 'man kinf' for all.\n"
		"The shared options (-n, --context, -o, ...) go before or after the\n"
		"command; after it they win. Also: -h, --help; --version.\n");
}

static const char help_usage[] =
	"Usage: kinf help [COMMAND]\n"
	"\n"
	"Print the help of COMMAND, as kinf COMMAND --help does, or without one\n"
	"kinf's own: its commands and examples. 'man kinf' has all of it.\n";

/* The shared options, which may come before the command too, as kubectl's. */
static const struct option global_options[] = {
	CLI_COMMON_OPTIONS,
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/*
 * kubectl's verbs for kinf's commands: kinf get is kinf list, as a kubectl
 * user means it (kubectl get's tables, -o, -w: kinf list's), not a
 * command of its own (kinf --help lists list).
 */
static const struct {
	const char *name;
	const struct cmd *cmd;
} aliases[] = {
	{ "get", &cmd_list },
};

static const struct cmd *find_command(const char *name) {
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(name, commands[i]->name) == 0) {
			return commands[i];
		}
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(*aliases); i++) {
		if (strcmp(name, aliases[i].name) == 0) {
			return aliases[i].cmd;
		}
	}
	return NULL;
}

/* "unknown command" with the closest command as a suggestion; EXIT_USAGE. */
static int unknown_command(const char *name) {
	const char *best = NULL;
	size_t best_d = 3;
	for (size_t i = 0; i < N_COMMANDS; i++) {
		size_t d = kinf_editdist(name, commands[i]->name, 2);
		if (d < best_d) {
			best_d = d;
			best = commands[i]->name;
		}
	}
	if (best) {
		return cli_usage_error(NULL, "unknown command \"%s\", did you mean \"%s\"?", name, best);
	}
	char list[128] = "";
	for (size_t i = 0; i < N_COMMANDS; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", commands[i]->name);
	}
	return cli_usage_error(NULL, "unknown command \"%s\" (the commands: %s)", name, list);
}

/*
 * The shared options before the command (`kinf -n team watch pods`): check
 * them against the shared table and return 0 with the index of the command
 * word in *ret_end, or print a usage error and return its status. --help
 * and --version there print and return -1 (the run ends with status 0).
 */
static int parse_global(int argc, char **argv, int *ret_end) {
	int opt;

	opterr = 0;
	optind = 0;
	while ((opt = cli_getopt(argc, argv, "+:" CLI_COMMON_SHORT, global_options)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return -1;
		}
		if (opt == 'V') {
			printf("kinf %s\n", KINF_VERSION);
			return -1;
		}
		if (opt == '?' || opt == ':') {
			/* An option of a command, not a shared one: say where it goes. */
			const struct cli_flag_fault *f = cli_getopt_fault();
			const char *arg = f->word;
			if (f->kind == CLI_FLAG_UNKNOWN && !f->short_name && f->name_len) {
				const char *name = f->name;
				size_t len = f->name_len;
				bool known = false;
				for (size_t i = 0; i < N_COMMANDS; i++) {
					known |= cli_command_has_option(commands[i], name, len);
				}
				/* The command word, if it is among the rest. */
				const struct cmd *c = NULL;
				for (int i = optind; !c && i < argc; i++) {
					c = find_command(argv[i]);
				}
				if (c && cli_command_has_option(c, name, len)) {
					return cli_usage_error(NULL, "option '%s' is %s's own: it goes "
							"after the command (kinf %s ... %s)", arg,
							c->name, c->name, arg);
				}
				if (known) {
					return cli_usage_error(NULL, "option '%s' is not a shared one: "
							"it goes after a command that has it", arg);
				}
			}
			return cli_bad_option(NULL, global_options);
		}
	}
	*ret_end = optind;
	return 0;
}

int main(int argc, char **argv) {
	/* A closed pipe is reported by the write, not by a signal. */
	signal(SIGPIPE, SIG_IGN);

	if (argc < 2) {
		usage(stdout);
		return cli_finish_stdout(EXIT_OK);
	}
	int first = 1;
	if (argv[1][0] == '-') {
		int rc = parse_global(argc, argv, &first);
		if (rc < 0) {
			return cli_finish_stdout(EXIT_OK);
		}
		if (rc > 0) {
			return rc;
		}
		if (first >= argc) {
			return cli_usage_error(NULL, "no command after the options");
		}
	}
	const char *name = argv[first];
	if (strcmp(name, "help") == 0) {
		if (first + 1 < argc && strcmp(argv[first + 1], "help") == 0) {
			fputs(help_usage, stdout);
		} else if (first + 1 < argc) {
			const struct cmd *c = find_command(argv[first + 1]);
			if (!c) {
				return unknown_command(argv[first + 1]);
			}
			cli_print_help(c);
		} else {
			usage(stdout);
		}
		return cli_finish_stdout(EXIT_OK);
	}
	if (first == 1 && strcmp(name, cmd_complete.name) == 0) {	/* hidden, for the shells */
		return cli_finish_stdout(cmd_complete.run(argc - 1, argv + 1));
	}
	const struct cmd *c = find_command(name);
	if (!c) {
		return unknown_command(name);
	}
	if (first == 1) {
		return cli_finish_stdout(c->run(argc - 1, argv + 1));
	}
	/*
	 * The command's own parse sees the options from before it first, then
	 * its own: one option set, the last occurrence winning, as kubectl's
	 * flags in either place.
	 */
	int n_before = first - 1;
	if (strcmp(argv[first - 1], "--") == 0) {
		n_before--;
	}
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	if (!av) {
		fputs("kinf: out of memory\n", stderr);
		return EXIT_ERROR;
	}
	int ac = 0;
	av[ac++] = argv[first];
	for (int i = 1; i <= n_before; i++) {
		av[ac++] = argv[i];
	}
	for (int i = first + 1; i < argc; i++) {
		av[ac++] = argv[i];
	}
	av[ac] = NULL;
	cli_args_before = n_before;
	int status = cli_finish_stdout(c->run(ac, av));
	free(av);
	return status;
}
