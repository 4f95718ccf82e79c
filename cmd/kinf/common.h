#ifndef KINF_CMD_COMMON_H
#define KINF_CMD_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "discovery.h"
#include "flags.h"
#include "kindcols.h"
#include "err.h"
#include "kubeconfig.h"
#include "object.h"
#include "output.h"
#include "selector.h"

/* Exit statuses, listed in the man page's EXIT STATUS and the README. */
enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,		/* API, network or data error */
	EXIT_USAGE = 2,		/* bad flags or arguments */
	EXIT_CONFIG = 3,	/* kubeconfig or credentials */
	EXIT_TIMEOUT = 4,	/* a --for condition was not met in time */
	EXIT_FAILED = 5,	/* a --for rollout failed: it never will be met */
	EXIT_SIGNALED = 128,	/* + the signal that interrupted a --for wait */
};

/* One subcommand (tmux's cmd_entry, git's cmd_foo). */
struct cmd {
	const char *name;
	const char *summary;
	const char *usage;	/* full --help text */
	int (*run)(int argc, char **argv);
	const struct option *options;	/* its getopt_long table */
	const char *more_usage;	/* options text shared with others, or NULL */
	unsigned formats;	/* the -o it prints: CLI_FORMAT() bits; 0: none */
};

/* A -o format's bit in struct cmd's formats. */
#define CLI_FORMAT(f) (1u << (f))
/* Every -o format: list, watch and index print them all. */
#define CLI_FORMATS_ALL (CLI_FORMAT(KINF_OUTPUT_TABLE) | CLI_FORMAT(KINF_OUTPUT_WIDE) | \
	CLI_FORMAT(KINF_OUTPUT_JSON) | CLI_FORMAT(KINF_OUTPUT_YAML) | \
	CLI_FORMAT(KINF_OUTPUT_NAME) | CLI_FORMAT(KINF_OUTPUT_JSONPATH) | \
	CLI_FORMAT(KINF_OUTPUT_JSONPATH_JSON) | CLI_FORMAT(KINF_OUTPUT_CUSTOM_COLUMNS))

/*
 * The -o names of formats (CLI_FORMAT bits), in kubectl's order, as
 * completion offers them: "table", "json", "jsonpath=", ... NULL-terminated;
 * names[i] belongs to the format in formats[i].
 */
extern const char *const cli_format_names[];
extern const enum kinf_output_format cli_format_of_name[];

extern const struct cmd cmd_complete;	/* hidden: kinf __complete */
extern const struct cmd cmd_deltas;
extern const struct cmd cmd_index;
extern const struct cmd cmd_list;
extern const struct cmd cmd_serve;
extern const struct cmd cmd_version;
extern const struct cmd cmd_watch;

#define CLI_MAX_LIST_ARGS 64

/* Options every subcommand that talks to a server shares. */
struct cli {
	const struct cmd *cmd;
	struct kinf_kubeconfig_opts kc;
	bool all_namespaces;
	const char *label_selector;
	const char *field_selector;
	const char *output;
	enum kinf_output_format format;
	const char *output_arg;	/* the template of jsonpath= / custom-columns= */
	bool no_headers;
	bool templated;			/* -o jsonpath=, jsonpath-as-json=, custom-columns= */
	/* -L (label keys, comma lists split) and --show-labels: label columns */
	struct kinf_label_columns label_columns;
	const char *sort_by;		/* --sort-by JSONPATH, or NULL */
	bool ignore_not_found;		/* --ignore-not-found */
	bool show_managed_fields;	/* --show-managed-fields */
	long chunk_size;
	bool chunk_size_set;		/* --chunk-size given: informers page every list */
	int verbose;
	bool refresh;
	long request_timeout_ms;
	struct kinf_object_limits limits;
	long idle_timeout_s;

	/* Parsed -l and --field-selector (NULL when not given). */
	struct kinf_selector *labels;
	struct kinf_selector *fields;

	/* Set up by cli_connect(). */
	struct kinf_rest_config *config;
	struct kinf_auth *auth;
	struct kinf_http *http;
	struct kinf_discovery *disc;
	const struct kinf_resource *res;
	const char *namespace;	/* NULL for -A or cluster-scoped resources */

	/*
	 * -n and --context as given, each maybe a comma list; session.c
	 * expands them into one informer per context and namespace (commands
	 * without a session take one).
	 */
	const char *namespace_args[CLI_MAX_LIST_ARGS];
	size_t n_namespace_args;
	const char *context_args[CLI_MAX_LIST_ARGS];
	size_t n_context_args;
	bool namespace_args_after;	/* one of them came after the command */
	bool context_args_after;
	/*
	 * kinf serve as the server: --server unix:PATH or tcp:HOST:PORT, or
	 * KINF_SERVER (any ADDR form) when --server is not given. NULL:
	 * direct mode. cli_connect() sets serve and serve_url (owned).
	 */
	const char *serve_addr;
	bool serve_addr_from_env;
	bool serve;
	char *serve_url;
	bool takes_lists;		/* set by session.c before cli_connect() */
	bool several_namespaces;	/* set by session.c: a NAMESPACE column */
};

/* Long-only option ids, above any short option character. */
enum {
	OPT_KUBECONFIG = 1000,
	OPT_CONTEXT,
	OPT_CLUSTER,
	OPT_USER,
	OPT_SERVER,
	OPT_TOKEN,
	OPT_CA,
	OPT_INSECURE,
	OPT_TLS_SERVER_NAME,
	OPT_AS,
	OPT_AS_GROUP,
	OPT_AS_UID,
	OPT_REQUEST_TIMEOUT,
	OPT_FIELD_SELECTOR,
	OPT_NO_HEADERS,
	OPT_CHUNK_SIZE,
	OPT_REFRESH,
	OPT_MAX_OBJECT_SIZE,
	OPT_MAX_DEPTH,
	OPT_IDLE_TIMEOUT,
	OPT_SHOW_MANAGED_FIELDS,
	OPT_MAX_LIST_ITEMS,
	OPT_SHOW_LABELS,
	OPT_SORT_BY,
	OPT_IGNORE_NOT_FOUND,
	OPT_OUTPUT_WATCH_EVENTS,
	OPT_HELP,
	OPT_CMD_FIRST,		/* subcommands number their own options from here */
};

/* The getopt_long entries of the shared options; end with a zero entry. */
#define CLI_COMMON_OPTIONS \
	{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG }, \
	{ "context", required_argument, NULL, OPT_CONTEXT }, \
	{ "cluster", required_argument, NULL, OPT_CLUSTER }, \
	{ "user", required_argument, NULL, OPT_USER }, \
	{ "server", required_argument, NULL, OPT_SERVER }, \
	{ "token", required_argument, NULL, OPT_TOKEN }, \
	{ "certificate-authority", required_argument, NULL, OPT_CA }, \
	{ "insecure-skip-tls-verify", no_argument, NULL, OPT_INSECURE }, \
	{ "tls-server-name", required_argument, NULL, OPT_TLS_SERVER_NAME }, \
	{ "as", required_argument, NULL, OPT_AS }, \
	{ "as-group", required_argument, NULL, OPT_AS_GROUP }, \
	{ "as-uid", required_argument, NULL, OPT_AS_UID }, \
	{ "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT }, \
	{ "namespace", required_argument, NULL, 'n' }, \
	{ "all-namespaces", no_argument, NULL, 'A' }, \
	{ "selector", required_argument, NULL, 'l' }, \
	{ "field-selector", required_argument, NULL, OPT_FIELD_SELECTOR }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "no-headers", no_argument, NULL, OPT_NO_HEADERS }, \
	{ "show-managed-fields", no_argument, NULL, OPT_SHOW_MANAGED_FIELDS }, \
	{ "chunk-size", required_argument, NULL, OPT_CHUNK_SIZE }, \
	{ "verbose", optional_argument, NULL, 'v' }, \
	{ "v", optional_argument, NULL, 'v' }, \
	{ "refresh", no_argument, NULL, OPT_REFRESH }, \
	{ "max-object-size", required_argument, NULL, OPT_MAX_OBJECT_SIZE }, \
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH }, \
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT }, \
	{ "max-list-items", required_argument, NULL, OPT_MAX_LIST_ITEMS }, \
	{ "help", no_argument, NULL, 'h' }

#define CLI_COMMON_SHORT "n:Al:o:v::h"

/*
 * kubectl get's table options, for the commands that print tables of
 * objects (list, index): -L, --show-labels, --sort-by. Handled by
 * cli_table_option(); their short options are CLI_TABLE_SHORT.
 */
#define CLI_TABLE_OPTIONS \
	{ "show-labels", no_argument, NULL, OPT_SHOW_LABELS }, \
	{ "label-columns", required_argument, NULL, 'L' }, \
	{ "sort-by", required_argument, NULL, OPT_SORT_BY }

#define CLI_TABLE_SHORT "L:"

/* Text of the shared options for usage messages. */
extern const char cli_common_usage[];

/*
 * How many of the command's arguments (after its name) main() moved there
 * from before the command: -n or --context after the command replace the
 * ones before it, as any option does, rather than add to them.
 */
extern int cli_args_before;

void cli_init(struct cli *cli, const struct cmd *cmd);
/* Whether tables need a NAMESPACE column: -A, or several namespaces. */
bool cli_namespace_column(const struct cli *cli);
/*
 * Handle one shared option from getopt_long. Returns 1 when it was one
 * (handled), 0 when it is not a shared option, or -EXIT_USAGE after
 * printing an error.
 */
KINF_MUST_CHECK int cli_common_option(struct cli *cli, int opt, const char *arg);
/*
 * Handle one of CLI_TABLE_OPTIONS: 1 when it was one, 0 when not, or
 * -EXIT_USAGE after printing an error (a --sort-by that is not a
 * JSONPath expression, an empty -L key).
 */
KINF_MUST_CHECK int cli_table_option(struct cli *cli, int opt, const char *arg);

/*
 * After the options: -L and --show-labels go with tables (kubectl refuses
 * --show-labels with other printers and ignores -L). 0, or a usage error
 * (printed, exit status 2).
 */
KINF_MUST_CHECK int cli_check_table_options(const struct cli *cli);

/* Text of CLI_TABLE_OPTIONS for usage messages. */
#define CLI_TABLE_USAGE \
	"  -L, --label-columns KEY[,KEY]  a column with each label's value, as kubectl\n" \
	"                                 (repeatable)\n" \
	"      --show-labels              a LABELS column last, as kubectl\n" \
	"      --sort-by JSONPATH         sort by this field, as kubectl\n" \
	"                                 (--sort-by .metadata.creationTimestamp)\n"

/* Print a command's --help text (usage, more_usage, the shared options). */
void cli_print_help(const struct cmd *cmd);
/* Print "kinf: <msg>" and "try 'kinf CMD --help'" to stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Report what cli_getopt() (flags.h) rejected: an unknown option, with
 * the closest of options as a suggestion, a missing value, a boolean's
 * value that is not one. Returns EXIT_USAGE.
 */
KINF_MUST_CHECK int cli_bad_option(const struct cli *cli, const struct option *options);
/* Whether cmd's option table has the long option name[0..len). */
bool cli_command_has_option(const struct cmd *cmd, const char *name, size_t len);

/*
 * Load the kubeconfig, set up credentials and HTTP, load discovery and
 * resolve resource_name (NULL: no resource). Prints the error and returns
 * its exit status on failure, 0 on success.
 */
KINF_MUST_CHECK int cli_connect(struct cli *cli, const char *resource_name);
/*
 * Check -l and --field-selector before any request (a usage error, exit 2,
 * names the selector and position). Called by cli_connect() too.
 */
KINF_MUST_CHECK int cli_parse_selectors(struct cli *cli);
/*
 * Whether objects are kept with metadata.managedFields: unless
 * --show-managed-fields, only -o jsonpath and custom-columns print them
 * (kubectl's json and yaml printers leave them out), so they are dropped
 * as objects are read unless needed (a path that names them, --diff-all,
 * --dump-on-exit). Sets cli->limits.drop_managed_fields; returns whether
 * -o json and yaml must leave them out of kept objects as they print.
 */
bool cli_managed_fields(struct cli *cli, bool needed);

/*
 * The socket `kinf serve` listens on by default and `--server unix:` names:
 * $XDG_RUNTIME_DIR/kinf/serve.sock, else /tmp/kinf-UID/serve.sock. Its
 * directory (the socket's dirname) must be the user's, mode 0700. Caller
 * frees; NULL on out of memory.
 */
char *cli_serve_default_socket(void);

/*
 * The positional arguments checked by kubectl's resource builder rules:
 * TYPE[,TYPE...] [NAME...], or only TYPE/NAME arguments, each of a single
 * type and name. Prints the usage error (a TYPE/NAME after a plain type,
 * more than one slash, an empty or several types) and returns 2; 0 when
 * they are fine. *ret_n_slash: how many are TYPE/NAME.
 */
KINF_MUST_CHECK int cli_check_type_names(const struct cli *cli, char *const *pos, int n_pos,
		int *ret_n_slash);

/* Free everything cli_connect() set up. */
void cli_release(struct cli *cli);

/*
 * Print fmt's text and a newline to out with everything in the text escaped
 * for the terminal (termsafe.h): for every line that holds text from a
 * server, a kubeconfig or a recorded stream.
 */
void cli_printf_safe(FILE *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Write what a printer built with kinf_buf_put* (a JSON line, say) to out.
 * When building it ran out of memory, a line of the output would be lost
 * unseen: kinf says so on stderr and exits with status 1 instead.
 */
void cli_emit(FILE *out, const struct kinf_buf *line);

/*
 * Print "kinf: <context>: <message>" for reterr (escaped as
 * cli_printf_safe does); returns the exit status.
 */
KINF_MUST_CHECK int cli_error(const struct cli *cli, int rc, const struct kinf_error *reterr,
		const char *context);

/*
 * An option's value was refused (rc, err from its parser): a usage error
 * ("kinf: PREFIX: message", exit 2), unless memory ran out, which is no
 * fault of the option: "kinf: out of memory", exit 1. prefix may be NULL.
 */
int cli_option_error(const struct cli *cli, int rc, const struct kinf_error *err,
		const char *prefix);

/* cli_error as a statement, for a caller whose exit status is decided elsewhere. */
void cli_report(const struct cli *cli, int rc, const struct kinf_error *reterr,
		const char *context);

/*
 * cli_error for a resource type that discovery could not resolve: an
 * unknown type is a bad argument, so it exits EXIT_USAGE (before any list
 * or watch); any other failure keeps cli_error's status.
 */
KINF_MUST_CHECK int cli_resolve_error(const struct cli *cli, int rc, const struct kinf_error *reterr);

/* Parse "30s", "5m", "1h30m", "250ms", "0"; -1 on error. In milliseconds. */
long long cli_parse_duration(const char *s);
/* Parse a size with optional K/M/G suffix (binary); -1 on error. */
long long cli_parse_size(const char *s);

/*
 * The objects -o jsonpath and custom-columns print, handed over one at a
 * time (and as often as a template reaches each), so that no more of them
 * than one is ever a tree.
 */
struct cli_objects {
	size_t n;
	/* Object i with apiVersion and kind, a new reference; NULL: out of memory. */
	struct kinf_object *(*get)(void *userdata, size_t i);
	void *userdata;
};

/* The objects of v[0..n) (typed, held by the caller while it is used). */
struct cli_objects cli_objects_array(struct kinf_object *const *v, size_t n);

/*
 * -o jsonpath / custom-columns for objs (in the order to print them:
 * --sort-by is the caller's), as kubectl prints them: a template runs over
 * a List of them, or over the one object when single; custom columns
 * print a header and a row each. An object without a tree (a number beyond
 * float64) is named on stderr and left out (exit 1). Returns the exit
 * status.
 */
KINF_MUST_CHECK int cli_print_templated(const struct cli *cli, const struct cli_objects *objs, bool single,
		FILE *out);

/*
 * -o custom-columns a row at a time, for objects that come one by one (a
 * list's, as they arrive): the rows are kept, not the objects (kubectl's
 * printer evaluates the columns per object too), and printed as one table
 * whose widths come from every row, as kubectl's tabwriter has them.
 */
struct cli_columns;
/* Parse cli's columns; with sort, the rows are printed in --sort-by's order. The exit status. */
KINF_MUST_CHECK int cli_columns_new(const struct cli *cli, bool sort, struct cli_columns **ret);
void cli_columns_free(struct cli_columns *c);
/*
 * Add obj's row (obj has apiVersion and kind). An object without a tree
 * keeps its error in its place, said by cli_columns_print(). 0 or
 * -KINF_ENOMEM.
 */
KINF_MUST_CHECK int cli_columns_add(struct cli_columns *c, const struct kinf_object *obj);
/* The list now coming started over: forget its rows so far. */
void cli_columns_restart(struct cli_columns *c);
/* The list now coming is over: its rows in key order, as a list keeps its items. */
void cli_columns_sort_list(struct cli_columns *c);
/*
 * Print the table to out: each row's error first (then exit 1), or with
 * --sort-by the first error alone and no table, as cli_sort_objects()
 * stops. The exit status.
 */
KINF_MUST_CHECK int cli_columns_print(struct cli_columns *c, FILE *out);

/*
 * --sort-by: sort v[0..n) by cli->sort_by as kubectl sorts (sortby.h),
 * stably (nothing to do without one). Prints the error (a field no object
 * has, keys that cannot be compared) and returns its exit status; 0.
 */
KINF_MUST_CHECK int cli_sort_objects(const struct cli *cli, struct kinf_object **v, size_t n);

/*
 * --sort-by's sort of items by their keys (sortby.h), the error that stops
 * it printed. The exit status.
 */
struct kinf_sortby_item;
int cli_sort_items(const struct cli *cli, struct kinf_sortby_item *items, size_t n);

/*
 * --sort-by over any array: v[0..n) of size bytes each, each one's JSON
 * (its object) given by json_of (a new reference, NULL for none; NULL
 * with reterr set when it has no value to sort by: a number beyond
 * float64, printed, exit 1), sorted as cli_sort_objects() sorts. The exit
 * status (errors printed).
 */
KINF_MUST_CHECK int cli_sort_by_field(const struct cli *cli, void *v, size_t n, size_t size,
		json_t *(*json_of)(const void *elem, void *userdata, struct kinf_error *reterr),
		void *userdata);

/* "pod/web-1" or "deployment.apps/web", as kubectl -o name. */
void cli_print_name(const struct kinf_resource *res, const struct kinf_object *obj,
		FILE *out);

/* 42000 -> "42,000" for progress lines. */
void cli_group_thousands(size_t n, char *buf, size_t size);

/*
 * The progress line of a long list on stderr, rewritten in place: "listed
 * 42,000 pods (84 pages)...", from the second page on and only when stderr
 * is a terminal. True when it was written; then cli_progress_erase()
 * clears it before anything else goes to stderr or the terminal.
 */
bool cli_progress_show(const char *resource, unsigned pages, size_t items);
void cli_progress_erase(void);

/* Install the stderr log callback for -v. */
void cli_setup_logging(int verbose);

/*
 * True when nobody reads stdout any more: the reader of a pipe (or a
 * socket) went away (`| head -1` exited).
 */
bool cli_stdout_closed(void);

/*
 * Flush stdout and report a write error other than a closed pipe. Returns
 * the exit status to use: status when stdout was fine or a closed pipe
 * (kinf ends quietly there, where kubectl dies of SIGPIPE), else status
 * or 1.
 */
KINF_MUST_CHECK int cli_finish_stdout(int status);

/*
 * A printer failed with rc: when stdout itself failed (a closed pipe, a
 * full disk) cli_finish_stdout() says so at the end, or nothing for a
 * closed pipe, and this returns 0; else it prints the error ("output: ...")
 * and returns its exit status.
 */
KINF_MUST_CHECK int cli_print_failed(const struct cli *cli, int rc, const struct kinf_error *err);

#endif
