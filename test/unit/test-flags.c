/*
 * cmd/kinf/flags.c: kubectl's (pflag's) flag grammar. Each row is a command
 * line and what cli_getopt makes of it: the options in order as val=value
 * (val alone for a boolean or a bare optional value), then "|" and the
 * operands as argv holds them at the end, or the fault.
 */
#include <stdio.h>
#include <string.h>

#include "flags.h"
#include "tap.h"

static const struct option options[] = {
	{ "namespace", required_argument, NULL, 'n' },
	{ "all-namespaces", no_argument, NULL, 'A' },
	{ "selector", required_argument, NULL, 'l' },
	{ "output", required_argument, NULL, 'o' },
	{ "no-headers", no_argument, NULL, 'H' },
	{ "watch", no_argument, NULL, 'w' },
	{ "verbose", optional_argument, NULL, 'v' },
	{ "v", optional_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define SHORTS ":n:Al:o:v::hw"

/* Parse line (words split at spaces; "_" is the empty word) into out. */
static void parse(const char *shorts, const char *line, char *out, size_t size) {
	char copy[256], *argv[32];
	int argc = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	argv[argc++] = "kinf";
	for (char *w = strtok(copy, " "); w && argc < 31; w = strtok(NULL, " ")) {
		argv[argc++] = strcmp(w, "_") == 0 ? w + 1 : w;
	}
	argv[argc] = NULL;
	out[0] = '\0';
	optind = 0;
	int opt;
	while ((opt = cli_getopt(argc, argv, shorts, options)) != -1) {
		size_t n = strlen(out);
		if (opt == '?' || opt == ':') {
			static const char *const kinds[] = { "unknown", "needs-value", "bad-bool",
				"bad-syntax" };
			const struct cli_flag_fault *f = cli_getopt_fault();
			snprintf(out + n, size - n, "%c%s %s", opt, kinds[f->kind], f->word);
			if (f->short_name) {
				n = strlen(out);
				snprintf(out + n, size - n, " -%c@%zu", f->short_name, f->at);
			}
			return;
		}
		snprintf(out + n, size - n, "%s%c%s%s", n ? " " : "", opt, optarg ? "=" : "",
				optarg ? optarg : "");
	}
	size_t n = strlen(out);
	snprintf(out + n, size - n, " |");
	for (int i = optind; i < argc; i++) {
		n = strlen(out);
		snprintf(out + n, size - n, " %s", argv[i]);
	}
}

struct row {
	const char *line;
	const char *want;
};

static const struct row rows[] = {
	/* values, in every form pflag takes */
	{ "pods -n=default", "n=default | pods" },
	{ "pods -ndefault", "n=default | pods" },
	{ "pods -n default", "n=default | pods" },
	{ "pods --namespace=default", "n=default | pods" },
	{ "pods --namespace default", "n=default | pods" },
	{ "pods -n=", "n== | pods" },
	{ "pods --namespace=", "n= | pods" },
	{ "pods -l=app=web", "l=app=web | pods" },
	{ "pods -lapp=web", "l=app=web | pods" },
	{ "pods -o=json", "o=json | pods" },
	{ "pods -ojson", "o=json | pods" },
	{ "pods --output=name", "o=name | pods" },
	{ "pods --output=jsonpath={.a=b}", "o=jsonpath={.a=b} | pods" },
	/* a required value is the next word, whatever it looks like */
	{ "pods -n -A", "n=-A | pods" },
	{ "pods -n --", "n=-- | pods" },
	{ "pods --namespace --all-namespaces", "n=--all-namespaces | pods" },
	/* booleans */
	{ "pods -A", "A | pods" },
	{ "pods -A=true", "A | pods" },
	{ "pods -A=false", " | pods" },
	{ "pods --all-namespaces", "A | pods" },
	{ "pods --all-namespaces=true", "A | pods" },
	{ "pods --all-namespaces=false", " | pods" },
	{ "pods --no-headers=1", "H | pods" },
	{ "pods --no-headers=t", "H | pods" },
	{ "pods --no-headers=T", "H | pods" },
	{ "pods --no-headers=TRUE", "H | pods" },
	{ "pods --no-headers=True", "H | pods" },
	{ "pods --no-headers=0", " | pods" },
	{ "pods --no-headers=f", " | pods" },
	{ "pods --no-headers=F", " | pods" },
	{ "pods --no-headers=FALSE", " | pods" },
	{ "pods --no-headers=False", " | pods" },
	/* the last occurrence of a boolean wins */
	{ "pods -A -A=false", " | pods" },
	{ "pods -A=false -A", "A | pods" },
	{ "pods --all-namespaces -n x -A=0", "n=x | pods" },
	{ "pods -A=f --all-namespaces=1", "A | pods" },
	/* a boolean's value never comes from the next word */
	{ "pods -A false", "A | pods false" },
	{ "pods --all-namespaces true", "A | pods true" },
	/* short options together */
	{ "pods -Ao json", "A o=json | pods" },
	{ "pods -Aojson", "A o=json | pods" },
	{ "pods -An=x", "A n=x | pods" },
	{ "pods -Anx", "A n=x | pods" },
	{ "pods -wA", "w A | pods" },
	{ "pods -A=false -wA", "w A | pods" },
	/* -v: kubectl's level, and kinf's bare -v */
	{ "pods -v 2", "v=2 | pods" },
	{ "pods -v=2", "v=2 | pods" },
	{ "pods -v2", "v=2 | pods" },
	{ "pods --v=2", "v=2 | pods" },
	{ "pods --v 2", "v=2 | pods" },
	{ "pods -v 10", "v=10 | pods" },
	{ "pods -v -1", "v=-1 | pods" },
	{ "pods --verbose=3", "v=3 | pods" },
	{ "pods --verbose 3", "v=3 | pods" },
	{ "pods -v", "v | pods" },
	{ "pods --v", "v | pods" },
	{ "pods --v web", "v | pods web" },
	{ "pods -v web", "v | pods web" },
	{ "pods -v -A", "v A | pods" },
	{ "-v 2 pods", "v=2 | pods" },
	/* operands after the options, in order; "--" ends the options */
	{ "pods web -n x db", "n=x | pods web db" },
	{ "pods -- -n x", " | pods -n x" },
	{ "a -n x b -- c -A", "n=x | a b c -A" },
	{ "- -n x", "n=x | -" },
	/* what pflag refuses */
	{ "pods -A=maybe", "?bad-bool -A=maybe -A@1" },
	{ "pods --all-namespaces=maybe", "?bad-bool --all-namespaces=maybe" },
	{ "pods --all-namespaces=", "?bad-bool --all-namespaces=" },
	{ "pods -Afalse", "A?unknown -Afalse -f@2" },
	{ "pods -A=", "A?unknown -A= -=@2" },
	{ "pods --names=x", "?unknown --names=x" },
	{ "pods --no-head", "?unknown --no-head" },
	{ "pods -x", "?unknown -x -x@1" },
	{ "pods -n", ":needs-value -n -n@1" },
	{ "pods --namespace", ":needs-value --namespace" },
	{ "pods ---x", "?bad-syntax ---x" },
	{ "pods --=x", "?bad-syntax --=x" },
};

/* With '+' (the options before the command), the first operand stops the scan. */
static void test_stop_at_operand(void) {
	char *argv[] = { "kinf", "-n", "x", "-A=false", "list", "pods", "-A", NULL };
	int argc = 7, opt;
	char got[64] = "";

	optind = 0;
	while ((opt = cli_getopt(argc, argv, "+:" "n:Al:o:v::h", options)) != -1) {
		size_t n = strlen(got);
		snprintf(got + n, sizeof(got) - n, "%c ", opt);
	}
	is_str(got, "n ", "'+': -A=false before the command is no -A (the -A after is not read)");
	is_int(optind, 4, "'+': optind is the command word");
	is_str(argv[4], "list", "'+': argv is not reordered");

	char *argv2[] = { "kinf", "-v", "list", "pods", NULL };
	got[0] = '\0';
	optind = 0;
	while ((opt = cli_getopt(4, argv2, "+:" "n:Al:o:v::h", options)) != -1) {
		size_t n = strlen(got);
		snprintf(got + n, sizeof(got) - n, "%c%s ", opt, optarg ? optarg : "");
	}
	is_str(got, "v ", "'+': a bare -v before the command");
	is_int(optind, 2, "'+': then the command");
}

static void test_parse_bool(void) {
	const char *yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	const char *no[] = { "0", "f", "F", "FALSE", "false", "False" };
	const char *neither[] = { "", "yes", "no", "tRUE", "2", "on", " true" };
	for (size_t i = 0; i < 6; i++) {
		is_int(cli_parse_bool(yes[i]), 1, "ParseBool(\"%s\") is true", yes[i]);
		is_int(cli_parse_bool(no[i]), 0, "ParseBool(\"%s\") is false", no[i]);
	}
	for (size_t i = 0; i < sizeof(neither) / sizeof(*neither); i++) {
		is_int(cli_parse_bool(neither[i]), -1, "ParseBool(\"%s\") fails", neither[i]);
	}
	long v = 0;
	ok(cli_parse_int32("+7", &v) && v == 7, "ParseInt: +7");
	ok(cli_parse_int32("-2147483648", &v) && v == -2147483648L, "ParseInt: int32's least");
	ok(!cli_parse_int32("2147483648", &v), "ParseInt: past int32");
	ok(!cli_parse_int32("2x", &v) && !cli_parse_int32("", &v) && !cli_parse_int32("-", &v) &&
			!cli_parse_int32(" 2", &v), "ParseInt: not integers");
}

int main(void) {
	char got[512];
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		parse(SHORTS, rows[i].line, got, sizeof(got));
		is_str(got, rows[i].want, "kinf %s", rows[i].line);
	}
	test_stop_at_operand();
	test_parse_bool();
	return tap_done();
}
