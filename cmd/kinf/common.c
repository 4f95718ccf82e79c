#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "auth.h"
#include "common.h"
#include "customcolumns.h"
#include "editdist.h"
#include "flags.h"
#include "http.h"
#include "jsonpath.h"
#include "log.h"
#include "sortby.h"
#include "termsafe.h"

const char cli_common_usage[] =
	"Connection options:\n"
	"      --kubeconfig FILE          use only this kubeconfig file\n"
	"      --context NAME             kubeconfig context to use; several as a,b or\n"
	"                                 repeated (not version)\n"
	"      --cluster NAME             kubeconfig cluster to use\n"
	"      --user NAME                kubeconfig user to use\n"
	"      --server ADDR              API server URL, or a kinf serve: unix:PATH\n"
	"                                 (unix: for its default socket), tcp:HOST:PORT\n"
	"      --token TOKEN              bearer token\n"
	"      --certificate-authority FILE  CA bundle to verify the server with\n"
	"      --insecure-skip-tls-verify do not verify the server's certificate\n"
	"      --tls-server-name NAME     server name for TLS verification and SNI\n"
	"      --as USER                  impersonate USER\n"
	"      --as-group GROUP           impersonate GROUP too (repeatable; needs --as)\n"
	"      --as-uid UID               impersonate UID too (needs --as)\n"
	"      --request-timeout DURATION give up on a request after this long (0: never)\n"
	"      --refresh                  ignore the discovery cache\n"
	"Selection and output:\n"
	"  -n, --namespace NS             namespace (default: the context's, else default);\n"
	"                                 several as a,b or -n a -n b (not version)\n"
	"  -A, --all-namespaces           every namespace\n"
	"  -l, --selector SELECTOR        label selector (app=web,tier!=db)\n"
	"      --field-selector SELECTOR  field selector (spec.nodeName=node-1)\n"
	"  -o, --output FORMAT            table, wide, json, yaml, name, jsonpath=TEMPLATE,\n"
	"                                 jsonpath-as-json=TEMPLATE or\n"
	"                                 custom-columns=NAME:PATH,...\n"
	"      --no-headers               no header line in table output\n"
	"      --show-managed-fields      keep metadata.managedFields in json and yaml\n"
	"      --chunk-size N             list page size (default 500; 0: no paging)\n"
	"Limits and diagnostics:\n"
	"      --max-object-size SIZE     largest object accepted (default 64M)\n"
	"      --max-depth N              deepest JSON nesting accepted (default 512)\n"
	"      --max-list-items N         most items a list may hold (default 1000000)\n"
	"      --idle-timeout DURATION    abort a response that stalls this long (default 60s)\n"
	"  -v, --v[=LEVEL]                log to stderr: 1 reflector, 2 requests, 3 more;\n"
	"                                 alone 1 more; -v 2, -v=2 and --v=2 as kubectl's\n"
	"      --verbose[=LEVEL]          the same as -v\n"
	"  -h, --help                     show this help\n";

const char *const cli_format_names[] = { "table", "wide", "json", "yaml", "name",
	"jsonpath=", "jsonpath-as-json=", "custom-columns=", NULL };
const enum kinf_output_format cli_format_of_name[] = { KINF_OUTPUT_TABLE, KINF_OUTPUT_WIDE,
	KINF_OUTPUT_JSON, KINF_OUTPUT_YAML, KINF_OUTPUT_NAME, KINF_OUTPUT_JSONPATH,
	KINF_OUTPUT_JSONPATH_JSON, KINF_OUTPUT_CUSTOM_COLUMNS };

/*
 * What cmd prints with -o, for its help and errors: "table or json",
 * "text (the default), json or yaml" for version's table.
 */
static void format_list(const struct cmd *cmd, bool help, struct kinf_buf *out) {
	static const char *const spelled[] = { "table", "wide", "json", "yaml", "name",
		"jsonpath=TEMPLATE", "jsonpath-as-json=TEMPLATE", "custom-columns=NAME:PATH,..." };
	size_t n = 0, total = 0;
	for (size_t i = 0; cli_format_names[i]; i++) {
		total += (cmd->formats & CLI_FORMAT(cli_format_of_name[i])) != 0;
	}
	for (size_t i = 0; cli_format_names[i]; i++) {
		if (!(cmd->formats & CLI_FORMAT(cli_format_of_name[i]))) {
			continue;
		}
		kinf_buf_putf(out, "%s%s", n == 0 ? "" : n + 1 == total ? " or " : ", ", spelled[i]);
		n++;
	}
	if (n == 0) {
		kinf_buf_puts(out, "none: it prints nothing");
	} else if (help && !(cmd->formats & CLI_FORMAT(KINF_OUTPUT_TABLE))) {
		kinf_buf_puts(out, " (default: text)");	/* version's */
	}
}

void cli_print_help(const struct cmd *cmd) {
	fputs(cmd->usage, stdout);
	if (cmd->more_usage) {
		fputs(cmd->more_usage, stdout);
	}
	/* The shared options, with the -o this command prints. */
	static const char o_line[] = "  -o, --output FORMAT";
	const char *o = strstr(cli_common_usage, o_line);
	const char *after = o ? strstr(o, "\n      --") : NULL;
	if (!o || !after) {
		fputs(cli_common_usage, stdout);
		return;
	}
	fwrite(cli_common_usage, 1, (size_t)(o - cli_common_usage), stdout);
	struct kinf_buf list = {0};
	format_list(cmd, true, &list);
	/* Wrapped at the description column, as the other lines are. */
	const char *text = kinf_buf_error(&list) ? "" : list.data;
	int col = printf("%-33s", o_line);
	for (const char *w = text; *w; ) {
		size_t len = strcspn(w, " ");
		if (col > 33 && col + 1 + (int)len > 80) {
			col = printf("\n%33s", "") - 1;
		} else if (col > 33) {
			col += printf(" ");
		}
		col += printf("%.*s", (int)len, w);
		w += len;
		w += *w == ' ';
	}
	fputs(after, stdout);
	kinf_buf_release(&list);
}

/*
 * The --as-group values, kept for the process: options are parsed where an
 * early return (a usage error, --help) would lose a per-command array.
 */
static struct {
	const char **v;
	size_t n;
} as_groups;

static void free_as_groups(void) {
	free(as_groups.v);
	as_groups.v = NULL;
	as_groups.n = 0;
}

static int add_as_group(struct cli *cli, const char *group) {
	const char **v = realloc(as_groups.v, (as_groups.n + 1) * sizeof(*v));
	if (!v) {
		fprintf(stderr, "kinf: out of memory\n");
		return -EXIT_ERROR;
	}
	if (!as_groups.v) {
		atexit(free_as_groups);
	}
	as_groups.v = v;
	as_groups.v[as_groups.n++] = group;
	cli->kc.as_groups = as_groups.v;
	cli->kc.n_as_groups = as_groups.n;
	return 1;
}

/* The -L keys, kept for the process as --as-group's are. */
static struct kinf_strv label_keys;

static void free_label_keys(void) {
	kinf_strv_release(&label_keys);
}

int cli_table_option(struct cli *cli, int opt, const char *arg) {
	switch (opt) {
	case OPT_SHOW_LABELS:
		cli->label_columns.show_labels = true;
		return 1;
	case 'L':
		if (!label_keys.v && !label_keys.n) {
			atexit(free_label_keys);
		}
		for (const char *p = arg;;) {
			size_t len = strcspn(p, ",");
			if (len == 0) {
				cli_usage_error(cli, "-L: empty label key in \"%s\"", arg);
				return -EXIT_USAGE;
			}
			char *key = strndup(p, len);
			if (!key || kinf_strv_push_take(&label_keys, key) < 0) {
				cli_report(cli, -KINF_ENOMEM, NULL, NULL);
				return -EXIT_ERROR;
			}
			if (!p[len]) {
				break;
			}
			p += len + 1;
		}
		cli->label_columns.keys = (const char *const *)label_keys.v;
		cli->label_columns.n_keys = label_keys.n;
		return 1;
	case OPT_SORT_BY: {
		struct kinf_error err = {0};
		int rc = kinf_sortby_check(arg, &err);
		if (rc < 0) {
			return -cli_option_error(cli, rc, &err, "--sort-by");
		}
		cli->sort_by = arg;
		return 1;
	}
	}
	return 0;
}

int cli_check_table_options(const struct cli *cli) {
	bool table = cli->format == KINF_OUTPUT_TABLE || cli->format == KINF_OUTPUT_WIDE;
	if (!table && (cli->label_columns.show_labels || cli->label_columns.n_keys)) {
		return cli_usage_error(cli, "%s goes with table output (the default, or -o "
				"wide), not -o %s", cli->label_columns.show_labels ? "--show-labels" :
				"-L", cli->output);
	}
	return EXIT_OK;
}

void cli_init(struct cli *cli, const struct cmd *cmd) {
	memset(cli, 0, sizeof(*cli));
	opterr = 0;	/* cli_bad_option() says what was wrong, once */
	cli->cmd = cmd;
	cli->kc.insecure_skip_tls_verify = -1;
	as_groups.n = 0;	/* (each command line is parsed once) */
	kinf_strv_reset(&label_keys);
	cli->output = "";
	cli->chunk_size = 500;
	cli->idle_timeout_s = 60;
}

bool cli_managed_fields(struct cli *cli, bool needed) {
	bool templated = cli->templated;
	cli->limits.drop_managed_fields = !cli->show_managed_fields && !templated && !needed;
	return !cli->show_managed_fields && !templated && needed &&
		(cli->format == KINF_OUTPUT_JSON || cli->format == KINF_OUTPUT_YAML);
}

int cli_args_before;

/*
 * Add a -n or --context value to args: they add up on either side of the
 * command, and the first after it drops those from before it.
 */
static int push_list_arg(struct cli *cli, const char **args, size_t *n,
		bool *after, const char *opt, const char *arg) {
	if (!*after && optind > cli_args_before + 1) {
		*after = true;
		*n = 0;
	}
	if (*n == CLI_MAX_LIST_ARGS) {
		cli_usage_error(cli, "%s given more than %d times (a comma list takes "
				"any number)", opt, CLI_MAX_LIST_ARGS);
		return -EXIT_USAGE;
	}
	args[(*n)++] = arg;
	return 1;
}

bool cli_namespace_column(const struct cli *cli) {
	return cli->all_namespaces || cli->several_namespaces;
}

long long cli_parse_duration(const char *s) {
	long long total = 0;
	const char *p = s;

	if (!s || !*s) {
		return -1;
	}
	if (strcmp(s, "0") == 0) {
		return 0;
	}
	while (*p) {
		char *end;
		errno = 0;
		double v = strtod(p, &end);
		if (end == p || errno || v < 0) {
			return -1;
		}
		double unit;
		if (strncmp(end, "ms", 2) == 0) {
			unit = 1;
			end += 2;
		} else if (*end == 's') {
			unit = 1000;
			end++;
		} else if (*end == 'm') {
			unit = 60000;
			end++;
		} else if (*end == 'h') {
			unit = 3600000;
			end++;
		} else if (*end == '\0' && p == s) {
			unit = 1000;	/* a bare number is seconds, as kubectl */
		} else {
			return -1;
		}
		double ms = v * unit;
		if (ms > (double)LLONG_MAX / 2) {
			return -1;
		}
		total += (long long)ms;
		p = end;
	}
	return total;
}

long long cli_parse_size(const char *s) {
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || errno || v < 0) {
		return -1;
	}
	long long mul = 1;
	if (*end == 'K' || *end == 'k') {
		mul = 1LL << 10;
		end++;
	} else if (*end == 'M' || *end == 'm') {
		mul = 1LL << 20;
		end++;
	} else if (*end == 'G' || *end == 'g') {
		mul = 1LL << 30;
		end++;
	}
	if (*end == 'i') {
		end++;
	}
	if (*end == 'B') {
		end++;
	}
	if (*end || v > LLONG_MAX / mul) {
		return -1;
	}
	return v * mul;
}

int cli_usage_error(const struct cli *cli, const char *fmt, ...) {
	va_list ap;
	fputs("kinf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\ntry 'kinf %s%s--help'\n", cli && cli->cmd ? cli->cmd->name : "",
			cli && cli->cmd ? " " : "");
	return EXIT_USAGE;
}

bool cli_command_has_option(const struct cmd *cmd, const char *name, size_t len) {
	for (const struct option *o = cmd->options; o && o->name; o++) {
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
			return true;
		}
	}
	return false;
}

int cli_bad_option(const struct cli *cli, const struct option *options) {
	const struct cli_flag_fault *f = cli_getopt_fault();
	const char *word = f->word ? f->word : "?";

	if (f->kind == CLI_FLAG_BAD_SYNTAX) {
		return cli_usage_error(cli, "bad option syntax '%s'", word);
	}
	if (f->short_name) {
		char c = f->short_name;
		if (f->kind == CLI_FLAG_NEEDS_VALUE) {
			return cli_usage_error(cli, "option '-%c' needs a value", c);
		}
		if (f->kind == CLI_FLAG_BAD_BOOL) {
			return cli_usage_error(cli, "option '-%c' takes true or false, not \"%s\"",
					c, f->value);
		}
		/* -Afalse: the letters of "false" taken for options. */
		const struct option *prev = NULL;
		for (const struct option *o = options; f->at >= 2 && o->name; o++) {
			if (o->val == (unsigned char)word[f->at - 1] && o->has_arg == no_argument) {
				prev = o;
			}
		}
		if (prev && cli_parse_bool(word + f->at) >= 0) {
			return cli_usage_error(cli, "unknown option '-%c' in '%s' (a boolean's "
					"value follows '=': -%c=%s)", c, word, word[f->at - 1],
					word + f->at);
		}
		if (strlen(word) > 2) {
			return cli_usage_error(cli, "unknown option '-%c' in '%s'", c, word);
		}
		return cli_usage_error(cli, "unknown option '-%c'", c);
	}
	if (f->kind == CLI_FLAG_NEEDS_VALUE) {
		return cli_usage_error(cli, "option '--%s' needs a value", f->option->name);
	}
	if (f->kind == CLI_FLAG_BAD_BOOL) {
		return cli_usage_error(cli, "option '--%s' takes true or false, not \"%s\"",
				f->option->name, f->value);
	}
	/* An unknown long option: the closest as a suggestion. */
	char *plain = strndup(f->name ? f->name : "", f->name_len);
	size_t len = f->name_len;
	const char *best = NULL;
	size_t best_d = plain && len > 3 ? 3 : 2;
	for (const struct option *o = options; plain && o->name; o++) {
		size_t d = kinf_editdist(plain, o->name, 2);
		if (d < best_d || (d == best_d && !best && d <= 1)) {
			best_d = d;
			best = o->name;
		}
		/* A prefix of a longer option also counts as close. */
		if (!best && strncmp(o->name, plain, len) == 0) {
			best = o->name;
		}
	}
	int rc = best ? cli_usage_error(cli, "unknown option '%s', did you mean '--%s'?", word, best) :
		cli_usage_error(cli, "unknown option '%s'", word);
	free(plain);
	return rc;
}

int cli_common_option(struct cli *cli, int opt, const char *arg) {
	long long v;
	char *end;

	switch (opt) {
	case OPT_KUBECONFIG: cli->kc.kubeconfig = arg; return 1;
	case OPT_CONTEXT:
		cli->kc.context = arg;
		return push_list_arg(cli, cli->context_args, &cli->n_context_args,
				&cli->context_args_after, "--context", arg);
	case OPT_CLUSTER: cli->kc.cluster = arg; return 1;
	case OPT_USER: cli->kc.user = arg; return 1;
	case OPT_SERVER:
		/* unix: and tcp: name a kinf serve; a URL any API server (kubectl's). */
		if (strncmp(arg, "unix:", 5) == 0 || strncmp(arg, "tcp:", 4) == 0) {
			cli->serve_addr = arg;
			cli->kc.server = NULL;
		} else {
			cli->serve_addr = NULL;
			cli->kc.server = arg;
		}
		return 1;
	case OPT_TOKEN: cli->kc.token = arg; return 1;
	case OPT_CA: cli->kc.certificate_authority = arg; return 1;
	case OPT_INSECURE: cli->kc.insecure_skip_tls_verify = 1; return 1;
	case OPT_TLS_SERVER_NAME: cli->kc.tls_server_name = arg; return 1;
	case OPT_AS: cli->kc.as = arg; return 1;
	case OPT_AS_GROUP: return add_as_group(cli, arg);
	case OPT_AS_UID: cli->kc.as_uid = arg; return 1;
	case 'n':
		if (!arg[0]) {
			cli_usage_error(cli, "--namespace needs a name");
			return -EXIT_USAGE;
		}
		cli->kc.namespace = arg;
		return push_list_arg(cli, cli->namespace_args, &cli->n_namespace_args,
				&cli->namespace_args_after, "--namespace", arg);
	case 'A': cli->all_namespaces = true; return 1;
	case 'l': cli->label_selector = arg; return 1;
	case OPT_FIELD_SELECTOR: cli->field_selector = arg; return 1;
	case 'o': {
		struct kinf_error err = {0};
		struct kinf_buf list = {0};
		int rc = kinf_output_parse_format(arg, &cli->format, &cli->output_arg);
		bool taken = rc == 0 && (!cli->cmd ||
				(cli->cmd->formats & CLI_FORMAT(cli->format)));
		if (!taken && cli->cmd) {
			format_list(cli->cmd, false, &list);
		}
		if (rc == -KINF_EUNSUPPORTED) {
			cli_usage_error(cli, "-o %.*s: kinf has no Go templates; use -o "
					"jsonpath=TEMPLATE (-o jsonpath='{.metadata.name}') or -o "
					"custom-columns=NAME:PATH,...", (int)strcspn(arg, "="), arg);
		} else if (rc < 0) {
			cli_usage_error(cli, "unknown output format \"%s\" (%s%s prints %s)", arg,
					cli->cmd ? "kinf " : "", cli->cmd ? cli->cmd->name : "kinf",
					list.data ? list.data : "table, wide, json, yaml, name, "
					"jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE or custom-columns=SPEC");
		} else if (!taken) {
			cli_usage_error(cli, "kinf %s prints %s, not \"%s\"", cli->cmd->name,
					list.data ? list.data : "", arg);
		}
		kinf_buf_release(&list);
		if (!taken) {
			return -EXIT_USAGE;
		}
		cli->templated = cli->format == KINF_OUTPUT_JSONPATH ||
			cli->format == KINF_OUTPUT_JSONPATH_JSON ||
			cli->format == KINF_OUTPUT_CUSTOM_COLUMNS;
		/* Check the template now; the printer parses it again. */
		if (cli->format == KINF_OUTPUT_JSONPATH || cli->format == KINF_OUTPUT_JSONPATH_JSON) {
			struct kinf_jsonpath *jp = NULL;
			int prc = kinf_jsonpath_parse(cli->output_arg, &jp, &err);
			if (prc < 0) {
				return -cli_option_error(cli, prc, &err, NULL);
			}
			kinf_jsonpath_free(jp);
		} else if (cli->format == KINF_OUTPUT_CUSTOM_COLUMNS) {
			struct kinf_customcolumns *cc = NULL;
			int prc = kinf_customcolumns_parse(cli->output_arg, &cc, &err);
			if (prc < 0) {
				return -cli_option_error(cli, prc, &err, NULL);
			}
			kinf_customcolumns_free(cc);
		}
		cli->output = arg;
		return 1;
	}
	case OPT_NO_HEADERS: cli->no_headers = true; return 1;
	case OPT_SHOW_MANAGED_FIELDS: cli->show_managed_fields = true; return 1;
	case OPT_CHUNK_SIZE:
		errno = 0;
		v = strtoll(arg, &end, 10);
		if (end == arg || *end || errno || v < 0) {
			cli_usage_error(cli, "--chunk-size must be a whole number >= 0, not \"%s\"", arg);
			return -EXIT_USAGE;
		}
		cli->chunk_size = (long)v;
		cli->chunk_size_set = true;
		return 1;
	case 'v': {
		/* klog's -v: any int32 (kubectl's -v=10 is kinf's most, 9) */
		long level;
		if (!arg) {
			cli->verbose++;
		} else if (cli_parse_int32(arg, &level)) {
			cli->verbose = level < 0 ? 0 : level > 9 ? 9 : (int)level;
		} else {
			cli_usage_error(cli, "-v takes a level (an integer: 0 for none, 9 "
					"for the most), not \"%s\"", arg);
			return -EXIT_USAGE;
		}
		return 1;
	}
	case OPT_REFRESH: cli->refresh = true; return 1;
	case OPT_REQUEST_TIMEOUT:
		v = cli_parse_duration(arg);
		if (v < 0) {
			cli_usage_error(cli, "invalid --request-timeout \"%s\" (e.g. 30s, 1m)", arg);
			return -EXIT_USAGE;
		}
		cli->request_timeout_ms = (long)v;
		return 1;
	case OPT_IDLE_TIMEOUT:
		v = cli_parse_duration(arg);
		if (v < 0) {
			cli_usage_error(cli, "invalid --idle-timeout \"%s\" (e.g. 30s, 1m)", arg);
			return -EXIT_USAGE;
		}
		cli->idle_timeout_s = (long)((v + 999) / 1000);
		return 1;
	case OPT_MAX_OBJECT_SIZE:
		v = cli_parse_size(arg);
		if (v <= 0) {
			cli_usage_error(cli, "invalid --max-object-size \"%s\" (e.g. 64M)", arg);
			return -EXIT_USAGE;
		}
		cli->limits.max_bytes = (size_t)v;
		return 1;
	case OPT_MAX_DEPTH:
		v = strtoll(arg, &end, 10);
		if (end == arg || *end || v < 1 || v > 100000) {
			cli_usage_error(cli, "invalid --max-depth \"%s\"", arg);
			return -EXIT_USAGE;
		}
		cli->limits.max_depth = (unsigned)v;
		return 1;
	case OPT_MAX_LIST_ITEMS:
		errno = 0;
		v = strtoll(arg, &end, 10);
		if (end == arg || *end || errno || v < 1) {
			cli_usage_error(cli, "invalid --max-list-items \"%s\"", arg);
			return -EXIT_USAGE;
		}
		cli->limits.max_list_items = (size_t)v;
		return 1;
	default:
		return 0;
	}
}

void cli_printf_safe(FILE *out, const char *fmt, ...) {
	/* A fixed buffer: this line may be the one saying memory ran out. */
	char line[4096];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0) {
		return;
	}
	kinf_termsafe_fput(out, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	fputc('\n', out);
}

void cli_report(const struct cli *cli, int rc, const struct kinf_error *err,
		const char *context) {
	const char *msg = err && err->message[0] ? err->message : kinf_strerror(rc);
	char status[64] = "";

	if (err && err->http_status) {
		snprintf(status, sizeof(status), " (%d%s", err->http_status,
				err->reason[0] ? " " : ")");
	}
	/* A Status message is the server's text: escaped, as all of this line. */
	cli_printf_safe(stderr, "kinf: %s%s%s%s%s%s", context ? context : "",
			context && context[0] ? ": " : "", msg, status,
			status[0] && err->reason[0] ? err->reason : "",
			status[0] && err->reason[0] ? ")" : "");
}

int cli_error(const struct cli *cli, int rc, const struct kinf_error *err,
		const char *context) {
	int code = rc < 0 ? -rc : rc;

	cli_report(cli, rc, err, context);
	if (code == KINF_ECONFIG || code == KINF_EAUTH ||
			(err && err->http_status == 401)) {
		return EXIT_CONFIG;
	}
	if (code == KINF_EINVAL) {
		return EXIT_USAGE;
	}
	return EXIT_ERROR;
}

int cli_resolve_error(const struct cli *cli, int rc, const struct kinf_error *reterr) {
	int status = cli_error(cli, rc, reterr, NULL);
	return rc == -KINF_ENOTFOUND ? EXIT_USAGE : status;
}

static void log_to_stderr(int level, const char *msg, void *userdata) {
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	cli_printf_safe(stderr, "kinf: %02d:%02d:%02d.%03ld %s", tm.tm_hour, tm.tm_min,
			tm.tm_sec, ts.tv_nsec / 1000000, msg);
}

void cli_setup_logging(int verbose) {
	kinf_log_set(verbose, verbose > 0 ? log_to_stderr : NULL, NULL);
}

int cli_option_error(const struct cli *cli, int rc, const struct kinf_error *err,
		const char *prefix) {
	if (rc == -KINF_ENOMEM) {
		return cli_error(cli, rc, NULL, NULL);
	}
	return cli_usage_error(cli, "%s%s%s", prefix ? prefix : "", prefix ? ": " : "",
			err && err->message[0] ? err->message : kinf_strerror(rc));
}

int cli_parse_selectors(struct cli *cli) {
	struct kinf_error err = {0};
	int rc = 0;
	if (!cli->labels &&
			(rc = kinf_label_selector_parse(cli->label_selector, &cli->labels, &err)) < 0) {
		if (rc == -KINF_ENOMEM) {
			return cli_error(cli, rc, NULL, NULL);
		}
		/* the apiserver's words for it, which do not name the selector */
		return cli_usage_error(cli, "-l: invalid selector \"%s\": %s", cli->label_selector,
				err.message);
	}
	if (!cli->fields &&
			(rc = kinf_field_selector_parse(cli->field_selector, &cli->fields, &err)) < 0) {
		return cli_option_error(cli, rc, &err, "--field-selector");
	}
	return EXIT_OK;
}

void cli_emit(FILE *out, const struct kinf_buf *line) {
	if (kinf_buf_error(line)) {
		fputs("kinf: out of memory: a line of output could not be made\n", stderr);
		fflush(out);
		exit(EXIT_ERROR);
	}
	fwrite(line->data, 1, line->len, out);
}

char *cli_serve_default_socket(void) {
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct kinf_buf b = {0};
	if (xdg && xdg[0] == '/') {
		kinf_buf_putf(&b, "%s/kinf/serve.sock", xdg);
	} else {
		kinf_buf_putf(&b, "/tmp/kinf-%u/serve.sock", (unsigned)getuid());
	}
	return kinf_buf_take(&b);	/* NULL when memory ran out */
}

/* Where the kinf serve came from, for messages: "--server unix:/x". */
static void serve_what(const struct cli *cli, char *buf, size_t size) {
	snprintf(buf, size, "%s%s", cli->serve_addr_from_env ? "KINF_SERVER=" : "--server ",
			cli->serve_addr);
}

/*
 * Serve mode (--server unix:|tcp:, or KINF_SERVER): the URL the address
 * names, plus /clusters/NAME for --context NAME (kinf serve's path for an
 * upstream context), as the kubeconfig's server override; the socket path
 * for unix: in *ret_socket (caller frees). Direct mode: nothing.
 */
static int serve_target(struct cli *cli, char **ret_socket) {
	const char *addr = cli->serve_addr;
	struct kinf_buf url = {0};
	char *sock = NULL;
	char what[300];

	*ret_socket = NULL;
	if (!addr && !cli->kc.server && cli->cmd != &cmd_serve) {
		const char *env = getenv("KINF_SERVER");
		if (env && env[0]) {
			cli->serve_addr = addr = env;
			cli->serve_addr_from_env = true;
		}
	}
	if (!addr) {
		return EXIT_OK;
	}
	serve_what(cli, what, sizeof(what));
	if (strncmp(addr, "unix:", 5) == 0) {
		sock = addr[5] ? strdup(addr + 5) : cli_serve_default_socket();
		if (!sock) {
			return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		}
		kinf_buf_puts(&url, "http://localhost");
	} else if (strncmp(addr, "tcp:", 4) == 0) {
		const char *colon = strrchr(addr + 4, ':');
		if (!colon || colon == addr + 4 || !colon[1] ||
				strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
			return cli_usage_error(cli, "%s: tcp: takes HOST:PORT, e.g. tcp:127.0.0.1:8443",
					what);
		}
		kinf_buf_putf(&url, "https://%s", addr + 4);
	} else if (cli->serve_addr_from_env && (strncmp(addr, "https://", 8) == 0 ||
			strncmp(addr, "http://", 7) == 0)) {
		kinf_buf_put(&url, addr, strcspn(addr, "?#"));
		while (!kinf_buf_error(&url) && url.len > 0 && url.data[url.len - 1] == '/') {
			url.data[--url.len] = '\0';
		}
	} else {
		return cli_usage_error(cli, "KINF_SERVER takes unix:PATH, unix: (the default "
				"socket), tcp:HOST:PORT or https://HOST:PORT, not \"%s\"", addr);
	}
	if ((cli->kc.as && cli->kc.as[0]) || cli->kc.n_as_groups || (cli->kc.as_uid &&
			cli->kc.as_uid[0])) {
		/* Not silently ignored: serve reads with its upstream identity. */
		free(sock);
		kinf_buf_release(&url);
		return cli_usage_error(cli, "%s: --as, --as-group and --as-uid do not apply "
				"to kinf serve (it reads with its upstream's identity)", what);
	}
	if (cli->kc.context && cli->kc.context[0]) {
		kinf_buf_puts(&url, "/clusters/");
		kinf_buf_put_urlenc(&url, cli->kc.context);
	}
	free(cli->serve_url);
	cli->serve_url = kinf_buf_take(&url);
	if (!cli->serve_url) {
		free(sock);
		return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	}
	cli->kc.server = cli->serve_url;
	cli->serve = true;
	*ret_socket = sock;
	return EXIT_OK;
}

/*
 * Check that the serve address answers as kinf serve: its /version (the
 * upstream's) comes with a Kinf-Serve-Version header. One clear line and
 * the exit status when it does not (unreachable, refused credentials,
 * another server).
 */
static int check_serve(struct cli *cli) {
	struct kinf_http_request req = { .path = "/version", .keep_headers = true };
	struct kinf_http_response resp = {0};
	struct kinf_error err = {0};
	char what[300];
	int status = EXIT_OK;

	serve_what(cli, what, sizeof(what));
	int rc = kinf_http_get(cli->http, &req, &resp, &err);
	if (rc < 0 && err.http_status != 404) {
		/* One line: the address, what failed, and what to do. */
		const char *msg = err.message[0] ? err.message : kinf_strerror(rc);
		const char *server = kinf_http_server(cli->http);
		size_t n = strlen(server);
		if (strncmp(msg, server, n) == 0 && strncmp(msg + n, ": ", 2) == 0) {
			msg += n + 2;	/* the address is said once */
		}
		const char *sock = cli->config->unix_socket;
		bool creds = rc == -KINF_EAUTH || rc == -KINF_ETLS || err.http_status == 401 ||
			err.http_status == 403;
		bool reason = err.http_status && err.reason[0] && !strstr(msg, err.reason);
		if (sock && rc == -KINF_ECONNECT) {
			cli_printf_safe(stderr, "kinf: %s: no kinf serve listens on %s (%s); "
					"start one with kinf serve", what, sock,
					access(sock, F_OK) == 0 ? "connection refused" : "no such socket");
			status = EXIT_ERROR;
		} else if (rc == -KINF_ECONNECT || rc == -KINF_ETIMEDOUT) {
			cli_printf_safe(stderr, "kinf: %s: cannot reach kinf serve: %s", what, msg);
			status = EXIT_ERROR;
		} else if (!sock && creds) {
			cli_printf_safe(stderr, "kinf: %s: %s%s%s; pass the kubeconfig kinf serve "
					"--write-kubeconfig wrote (--kubeconfig FILE) for its CA and "
					"token", what, msg, reason ? " " : "", reason ? err.reason : "");
			status = EXIT_CONFIG;
		} else {
			status = cli_error(cli, rc, &err, what);
		}
		goto out;
	}
	size_t hlen;
	json_t *root = rc == 0 ? json_loadb(resp.body.data ? resp.body.data : "", resp.body.len,
			0, NULL) : NULL;
	const char *v = json_string_value(json_object_get(root, "gitVersion"));
	if (rc < 0 || !kinf_http_response_header(&resp, "Kinf-Serve-Version", &hlen)) {
		if (v) {
			cli_printf_safe(stderr, "kinf: %s: not a kinf serve (its /version says "
					"gitVersion \"%s\")", what, v);
		} else {
			cli_printf_safe(stderr, "kinf: %s: not a kinf serve (no kinf version at "
					"%s/version%s)%s%s%s", what, kinf_http_server(cli->http),
					rc < 0 ? ": 404 Not Found" : "",
					cli->kc.context ? ", or it serves no context \"" : "",
					cli->kc.context ? cli->kc.context : "",
					cli->kc.context ? "\"" : "");
		}
		status = EXIT_ERROR;
	}
	json_decref(root);
out:
	kinf_http_response_release(&resp);
	return status;
}

/*
 * The server's warnings (Warning: 299 - "TEXT" headers) on stderr as
 * kubectl prints them, "Warning: TEXT", each text once per process
 * (kubectl's WarningWriter with Deduplicate), escaped for the terminal. A
 * hostile server cannot flood stderr or memory: at most MAX_WARNINGS
 * different texts are shown, each cut at MAX_WARNING_BYTES, and then one
 * line says that the rest are not.
 */
#define MAX_WARNINGS 32
#define MAX_WARNING_BYTES 1024

static struct {
	pthread_mutex_t lock;
	size_t n;
	bool capped;
	size_t len[MAX_WARNINGS];
	char text[MAX_WARNINGS][MAX_WARNING_BYTES];
} warnings = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* kinf_http_opts.on_warning: any thread, at any time. */
static void print_warning(const char *text, size_t len, void *userdata) {
	(void)userdata;
	bool cut = len > MAX_WARNING_BYTES;
	if (cut) {
		/* at a character's start, not inside one */
		for (len = MAX_WARNING_BYTES; len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80; ) {
			len--;
		}
	}
	pthread_mutex_lock(&warnings.lock);
	for (size_t i = 0; i < warnings.n; i++) {
		if (warnings.len[i] == len && memcmp(warnings.text[i], text, len) == 0) {
			pthread_mutex_unlock(&warnings.lock);
			return;
		}
	}
	if (warnings.n == MAX_WARNINGS) {
		if (!warnings.capped) {
			fprintf(stderr, "kinf: the server sent more than %d different warnings; "
					"the rest are not shown\n", MAX_WARNINGS);
			warnings.capped = true;
		}
		pthread_mutex_unlock(&warnings.lock);
		return;
	}
	memcpy(warnings.text[warnings.n], text, len);
	warnings.len[warnings.n++] = len;
	/*
	 * The stream's lock makes the line one piece among other threads'
	 * lines, without building it first (nothing to allocate).
	 */
	flockfile(stderr);
	fputs("Warning: ", stderr);
	kinf_termsafe_fput(stderr, text, len);
	fputs(cut ? "...\n" : "\n", stderr);
	funlockfile(stderr);
	pthread_mutex_unlock(&warnings.lock);
}

int cli_connect(struct cli *cli, const char *resource_name) {
	struct kinf_error err = {0};
	int rc;

	cli_setup_logging(cli->verbose);
	if ((rc = cli_parse_selectors(cli)) != EXIT_OK) {
		return rc;
	}
	if (!cli->takes_lists && (cli->n_namespace_args > 1 ||
			(cli->kc.namespace && strchr(cli->kc.namespace, ',')))) {
		/* Not silently the last one: watch and deltas take several. */
		return cli_usage_error(cli, "%s takes one namespace", cli->cmd->name);
	}
	if (!cli->takes_lists && (cli->n_context_args > 1 ||
			(cli->kc.context && strchr(cli->kc.context, ',')))) {
		return cli_usage_error(cli, "%s takes one context", cli->cmd->name);
	}
	if (!cli->takes_lists && resource_name && strchr(resource_name, ',')) {
		return cli_usage_error(cli, "%s takes one resource type", cli->cmd->name);
	}
	char *sock = NULL;
	if ((rc = serve_target(cli, &sock)) != EXIT_OK) {
		return rc;
	}
	rc = kinf_kubeconfig_load(&cli->kc, &cli->config, &err);
	if (rc < 0) {
		free(sock);
		int status = cli_error(cli, rc, &err, NULL);
		/* Memory running out is no kubeconfig's fault: exit 1, as anywhere. */
		return rc == -KINF_ENOMEM ? status : EXIT_CONFIG;
	}
	/* kinf serve's socket: its mode lets us in; no credentials go there. */
	cli->config->unix_socket = sock;
	if (cli->config->insecure_skip_tls_verify) {
		char url[512];
		cli_printf_safe(stderr, "kinf: warning: TLS verification is off for %s; "
				"the connection is not secure",
				kinf_kubeconfig_url_redact(cli->config->server, url, sizeof(url)));
	}
	if (!sock) {
		cli->auth = kinf_auth_new(cli->config);
	}
	struct kinf_http_opts hopts = {
		.request_timeout_ms = cli->request_timeout_ms,
		.low_speed_time_s = cli->idle_timeout_s,
		.on_warning = print_warning,
	};
	if (cli->auth || sock) {
		cli->http = kinf_http_new(cli->config, cli->auth, &hopts);
	}
	if ((!cli->auth && !sock) || !cli->http) {
		fprintf(stderr, "kinf: out of memory\n");
		return EXIT_ERROR;
	}
	if (cli->serve && (rc = check_serve(cli)) != EXIT_OK) {
		return rc;
	}
	if (!resource_name) {
		return 0;
	}
	/* No disk cache for kinf serve: what it serves changes as it restarts. */
	struct kinf_discovery_opts dopts = { .refresh = cli->refresh,
		.cache_dir = cli->serve ? "" : NULL };
	rc = kinf_discovery_load(cli->http, &dopts, &cli->disc, &err);
	if (rc < 0) {
		return cli_error(cli, rc, &err, "discovery");
	}
	rc = kinf_discovery_resolve_deferred(&cli->disc, cli->http, &dopts, resource_name,
			&cli->res, &err);
	if (rc < 0) {
		char what[300] = "";
		if (cli->serve && rc == -KINF_ENOTFOUND) {
			serve_what(cli, what, sizeof(what));
			cli_printf_safe(stderr, "kinf: %s: kinf serve does not serve \"%s\" "
					"(it serves what its command line named)", what, resource_name);
			return EXIT_ERROR;
		}
		return cli_resolve_error(cli, rc, &err);
	}
	if (cli->res->namespaced && !cli->all_namespaces) {
		cli->namespace = cli->config->namespace;
	}
	return 0;
}

int cli_check_type_names(const struct cli *cli, char *const *pos, int n_pos,
		int *ret_n_slash) {
	int n_slash = 0;
	for (int i = 0; i < n_pos; i++) {
		n_slash += strchr(pos[i], '/') != NULL;
	}
	*ret_n_slash = n_slash;
	if (n_slash > 0 && n_slash != n_pos) {
		return cli_usage_error(cli, "there is no need to specify a resource type as a "
				"separate argument when passing arguments in resource/name form "
				"(e.g. 'kinf %s resource/<resource_name>' instead of "
				"'kinf %s resource resource/<resource_name>')",
				cli->cmd->name, cli->cmd->name);
	}
	for (int i = 0; i < n_slash; i++) {
		const char *slash = strchr(pos[i], '/');
		if (strchr(slash + 1, '/')) {
			return cli_usage_error(cli, "arguments in resource/name form may not "
					"have more than one slash");
		}
		if (slash == pos[i] || !slash[1] || memchr(pos[i], ',', (size_t)(slash - pos[i]))) {
			return cli_usage_error(cli, "arguments in resource/name form must "
					"have a single resource and name");
		}
	}
	return EXIT_OK;
}

void cli_release(struct cli *cli) {
	kinf_selector_free(cli->labels);
	kinf_selector_free(cli->fields);
	cli->labels = cli->fields = NULL;
	kinf_discovery_free(cli->disc);
	kinf_http_free(cli->http);
	kinf_auth_free(cli->auth);
	kinf_rest_config_free(cli->config);
	cli->disc = NULL;
	cli->http = NULL;
	cli->auth = NULL;
	cli->config = NULL;
	free(cli->serve_url);
	cli->serve_url = NULL;
}

void cli_print_name(const struct kinf_resource *res, const struct kinf_object *obj,
		FILE *out) {
	const char *name = kinf_object_name(obj);
	/* A watch prints a line per event: no formatting for plain names. */
	bool plain = !kinf_termsafe_needed(name, strlen(name)) &&
		!kinf_termsafe_needed(res->kind, strlen(res->kind)) &&
		!kinf_termsafe_needed(res->group, strlen(res->group));
	if (plain) {
		for (const char *p = res->kind; *p; p++) {
			fputc(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p, out);
		}
		if (res->group[0]) {
			fputc('.', out);
			fputs(res->group, out);
		}
		fputc('/', out);
		fputs(name, out);
		fputc('\n', out);
		return;
	}
	/* Lower case, as kubectl prints it; the kind as it is if memory runs out. */
	char *kind = strdup(res->kind);
	for (char *p = kind; p && *p; p++) {
		*p = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
	}
	cli_printf_safe(out, "%s%s%s/%s", kind ? kind : res->kind, res->group[0] ? "." : "",
			res->group, name);
	free(kind);
}

bool cli_stdout_closed(void) {
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

int cli_print_failed(const struct cli *cli, int rc, const struct kinf_error *err) {
	if (ferror(stdout)) {
		return EXIT_OK;	/* cli_finish_stdout() has the last word */
	}
	return cli_error(cli, rc, err, "output");
}

int cli_finish_stdout(int status) {
	int earlier = errno;
	errno = 0;
	bool flush_failed = fflush(stdout) != 0;
	if (flush_failed || ferror(stdout)) {
		/*
		 * The flush's errno, else (an earlier write failed, nothing was
		 * left to flush) the last call's, which may be a later call's:
		 * a closed pipe is asked for again, and no "Success" is printed.
		 */
		int e = flush_failed && errno ? errno : earlier;
		if (e == EPIPE || cli_stdout_closed()) {
			return status;
		}
		if (e != 0) {
			fprintf(stderr, "kinf: writing output: %s\n", strerror(e));
		} else {
			fputs("kinf: writing output failed\n", stderr);
		}
		return status ? status : EXIT_ERROR;
	}
	return status;
}

int cli_sort_items(const struct cli *cli, struct kinf_sortby_item *items, size_t n) {
	struct kinf_error err = {0};
	if (kinf_sortby_sort(cli->sort_by, items, n, &err) < 0) {
		/* The objects' data, not the command line: exit 1, as kubectl. */
		cli_printf_safe(stderr, "kinf: --sort-by: %s", err.message);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

int cli_sort_by_field(const struct cli *cli, void *v, size_t n, size_t size,
		json_t *(*json_of)(const void *elem, void *userdata, struct kinf_error *reterr),
		void *userdata) {
	if (!cli->sort_by || n == 0) {
		return EXIT_OK;
	}
	struct kinf_sortby_item *items = calloc(n, sizeof(*items));
	char *sorted = calloc(n, size);
	int status = items && sorted ? EXIT_OK : cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	for (size_t i = 0; status == EXIT_OK && i < n; i++) {
		struct kinf_error oerr = {0};
		json_t *o = json_of((char *)v + i * size, userdata, &oerr);
		if (!o && oerr.code) {
			/* No value to sort it by (a number beyond float64): said, not guessed. */
			status = cli_error(cli, -oerr.code, &oerr, "--sort-by");
		}
		items[i] = (struct kinf_sortby_item){
			.key = o ? kinf_sortby_key(cli->sort_by, o) : NULL, .index = i };
		json_decref(o);
	}
	if (status == EXIT_OK) {
		status = cli_sort_items(cli, items, n);
	}
	if (status == EXIT_OK) {
		for (size_t i = 0; i < n; i++) {
			memcpy(sorted + i * size, (char *)v + items[i].index * size, size);
		}
		memcpy(v, sorted, n * size);
	}
	for (size_t i = 0; items && i < n; i++) {
		json_decref(items[i].key);
	}
	free(items);
	free(sorted);
	return status;
}

static json_t *object_json(const void *elem, void *userdata, struct kinf_error *reterr) {
	(void)userdata;
	return kinf_object_tree(*(struct kinf_object *const *)elem, reterr);
}

int cli_sort_objects(const struct cli *cli, struct kinf_object **v, size_t n) {
	return cli_sort_by_field(cli, v, n, sizeof(*v), object_json, NULL);
}

bool cli_progress_show(const char *resource, unsigned pages, size_t items) {
	char num[32];

	if (pages < 2 || !isatty(STDERR_FILENO)) {
		return false;
	}
	cli_group_thousands(items, num, sizeof(num));
	/* The resource's name came from discovery: escaped, not the line's own \r. */
	fprintf(stderr, "\rlisted %s ", num);
	kinf_termsafe_fput(stderr, resource, strlen(resource));
	fprintf(stderr, " (%u pages)...\033[K", pages);
	return true;
}

void cli_progress_erase(void) {
	fputs("\r\033[K", stderr);
}

void cli_group_thousands(size_t n, char *buf, size_t size) {
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%zu", n);
	size_t o = 0;
	for (int i = 0; i < len && o + 1 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0 && o + 2 < size) {
			buf[o++] = ',';
		}
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}
