#ifndef KINF_CMD_SESSION_H
#define KINF_CMD_SESSION_H

#include <stdbool.h>
#include <stdio.h>

#include "common.h"
#include "deltafifo.h"
#include "indexer.h"
#include "informer.h"
#include "reflector.h"

/*
 * A session: the informers one command line asks for, from start to end
 * (src/informerset.h: an informer per type, namespace and context, or one
 * over a recorded stream with --from), popped in one loop until a signal,
 * --timeout, --count or --exit-after-sync ends it, with --stats and
 * --dump-on-exit at the end. watch, deltas, index and serve each run one;
 * list borrows its -A --accessible reviews. The informers do the work
 * (what is queued, stored and tombstoned is src/'s); a session keeps the
 * flags, the messages and what the commands print with. Its parts are in
 * session_int.h.
 */
struct session_opts {
	const char *from;		/* --from FILE or "-" */
	long resync_ms;			/* --resync */
	bool watch_list;		/* --watch-list */
	bool emit_replaced;		/* --emit-replaced */
	long long timeout_ms;		/* --timeout; 0: none */
	bool timeout_given;		/* --timeout was on the command line */
	long count;			/* --count; 0: none */
	bool exit_after_sync;		/* --exit-after-sync */
	/*
	 * session_next returns once with an empty batch when the initial list
	 * synced with nothing to pop (no object), so the caller sees it at once.
	 */
	bool wake_on_sync;
	bool stats;			/* --stats */
	const char *dump_file;		/* --dump-on-exit FILE ("-" for stderr) */
	long watch_timeout_s;		/* --watch-timeout (hidden, tests) */
	/*
	 * Selectors to AND with -l and --field-selector, asked for once the
	 * resource is known (index pushes its --by down to the server): append
	 * comma-separated requirements to labels and fields. Not with --from.
	 */
	void (*pushdown)(const struct kinf_resource *res, struct kinf_buf *labels,
			struct kinf_buf *fields, void *userdata);
	void *pushdown_data;
	bool keep_managed_fields;	/* the command reads them (--diff-all, a path) */
	/*
	 * The command (or one of its options, one_namespace_why: "watch
	 * --for") takes one namespace and one context (several types are
	 * fine).
	 */
	bool one_namespace;
	const char *one_namespace_why;
	/* Tables of several types are the command's (index prints one per type). */
	bool tables_per_type;
	/*
	 * Called from a reflector thread instead of the warning line when
	 * member's informer retries after an error (serve tracks upstreams).
	 */
	void (*on_retry)(size_t member, int rc, const struct kinf_error *err,
			void *userdata);
	void *on_retry_data;
	/*
	 * Called with each code-299 warning text (len bytes, unescaped) of
	 * member's list and watch responses, from whichever thread reads them
	 * (kinf_http_opts.on_warning), instead of the warning line on stderr
	 * (serve passes them to its clients).
	 */
	void (*on_warning)(size_t member, const char *text, size_t len, void *userdata);
	void *on_warning_data;
	/* session_next returns an empty batch after every idle wait (200 ms). */
	bool wake_on_idle;
	/*
	 * -A --accessible: where the cluster-wide list or watch of a type is
	 * forbidden, the namespaces where both are allowed (a
	 * SelfSubjectAccessReview each), joining and leaving as namespaces
	 * come and go.
	 */
	bool accessible;
	/*
	 * Called with each informer's indexer before it starts (those that
	 * join later too): the command adds its indexes. 0 or -KINF_E*.
	 */
	int (*prepare)(struct kinf_indexer *idx, void *userdata);
	void *prepare_data;
};

/*
 * What the command's arguments name: TYPE[,TYPE...] with the names of
 * those types (none: every object). A TYPE/NAME argument is a target of
 * one type and one name; targets that resolve to one type share their
 * names (deploy/a deployments/b).
 */
struct session_target {
	const char *types;		/* "pods" or "pods,deploy" */
	char *const *names;		/* borrowed; NULL when n_names is 0 */
	size_t n_names;
};

/* Long options of the session, for the commands' getopt tables. */
enum {
	OPT_FROM = OPT_CMD_FIRST + 100,
	OPT_RESYNC,
	OPT_WATCH_LIST,
	OPT_EMIT_REPLACED,
	OPT_TIMEOUT,
	OPT_COUNT,
	OPT_EXIT_AFTER_SYNC,
	OPT_STATS,
	OPT_DUMP_ON_EXIT,
	OPT_WATCH_TIMEOUT,
	OPT_ACCESSIBLE,
};

#define SESSION_OPTIONS \
	{ "from", required_argument, NULL, OPT_FROM }, \
	{ "resync", required_argument, NULL, OPT_RESYNC }, \
	{ "watch-list", no_argument, NULL, OPT_WATCH_LIST }, \
	{ "timeout", required_argument, NULL, OPT_TIMEOUT }, \
	{ "count", required_argument, NULL, OPT_COUNT }, \
	{ "exit-after-sync", no_argument, NULL, OPT_EXIT_AFTER_SYNC }, \
	{ "stats", no_argument, NULL, OPT_STATS }, \
	{ "dump-on-exit", required_argument, NULL, OPT_DUMP_ON_EXIT }, \
	{ "watch-timeout", required_argument, NULL, OPT_WATCH_TIMEOUT }, \
	{ "accessible", no_argument, NULL, OPT_ACCESSIBLE }

extern const char session_usage[];

/* 1 handled, 0 not a session option, -EXIT_USAGE after printing an error. */
KINF_MUST_CHECK int session_option(struct cli *cli, struct session_opts *so, int opt,
		const char *arg);

struct session;

/* The targets of a command line, and what they point into. */
struct session_targets {
	struct session_target *v;
	size_t n;
	char **names;			/* the targets' names arrays */
	bool by_name;			/* TYPE/NAME arguments */
};

/*
 * The positional arguments as kubectl's resource builder takes them:
 * TYPE[,TYPE...] [NAME...], or only TYPE/NAME arguments, each of a single
 * type and name (split in place: argv is the command's). Prints a usage
 * error and returns 2 for a TYPE/NAME after a plain type, more than one
 * slash, or an empty type or name; none is no target.
 */
KINF_MUST_CHECK int session_parse_targets(const struct cli *cli, char **pos, int n_pos,
		struct session_targets *ret);
void session_targets_release(struct session_targets *t);

/*
 * Connect (unless --from) and build the informers: one per resource of the
 * targets (pods,configmaps; deploy/a pod/b), namespace (-n a,b; -n a -n b;
 * a namespace named twice is watched once) and context (--context a,b;
 * every one checked before any request). A type some contexts lack is
 * reported once for each of them and the others go on (session_end then
 * returns 1); one no context has is an error. One name of a type is asked
 * for with a field selector; several are filtered (session_name_wanted).
 * The caller may add indexes to each informer's indexer (session_select)
 * before session_start(). Prints errors; returns the exit status (0 on
 * success) and the session in *ret.
 */
KINF_MUST_CHECK int session_new_targets(struct cli *cli, const struct session_opts *so,
		const struct session_target *targets, size_t n_targets,
		struct session **ret);
/*
 * --accessible goes with -A and a server: 0, or a usage error (printed,
 * exit status 2). session_new_targets() checks it too.
 */
KINF_MUST_CHECK int session_check_accessible(struct cli *cli, const struct session_opts *so);
/*
 * -A --accessible for one list (kinf list) of cli->res through cli (connected):
 * *ret_everywhere when the user may list it cluster-wide (or it is
 * cluster-scoped), as a SelfSubjectAccessReview says; else the namespaces
 * (listed now) where it may, appended to ret in order. A review that
 * fails is reported and counts as no; none allowed is reported too. The
 * exit status: 0, or 1 for either (the namespaces found are in ret).
 * context names the context in messages (NULL: none).
 */
KINF_MUST_CHECK int session_accessible_namespaces(struct cli *cli, const char *context,
		struct kinf_strv *ret, bool *ret_everywhere);
/* session_new_targets() for resource (a comma list) and at most one name. */
KINF_MUST_CHECK int session_new(struct cli *cli, const struct session_opts *so,
		const char *resource, const char *name, struct session **ret);
/*
 * The informers: session_select() makes informer i the current one, as the
 * last event's informer is, for the session_* calls below that read it.
 * It returns false (and selects nothing) for an informer of the session's
 * own (the namespaces watched for --accessible): skip those.
 */
size_t session_n_informers(const struct session *s);
bool session_select(struct session *s, size_t i);
/* The current informer's indexer and resource (NULL with --from). */
struct kinf_indexer *session_indexer(struct session *s);
const struct kinf_resource *session_resource(struct session *s);
/* Its namespace: NULL for all (-A) or a cluster-scoped resource. */
const char *session_namespace(struct session *s);
/* Its resource as plural.group ("deployments.apps"); NULL with --from. */
const char *session_resource_name(struct session *s);
/* The names given for its type (none: every object); borrowed. */
char *const *session_names(struct session *s, size_t *ret_n);
/* Whether key (namespace/name) is one of those names, or none was given. */
bool session_name_wanted(struct session *s, const char *key);
/*
 * Append "kind.group/name" for name of the current informer's type, as
 * kubectl names objects (deployment.apps/web, pod/web-1). A builder: a
 * failure sticks in out (buf.h's put family).
 */
void session_put_ref(struct session *s, const char *name, struct kinf_buf *out);
/* The current informer's context: its place in --context (0 with one). */
size_t session_context_index(struct session *s);
/* Whether the informers are of more than one resource type. */
bool session_several_types(const struct session *s);
KINF_MUST_CHECK int session_start(struct session *s);
/*
 * Instead of session_start(): the current informer's cache is objs, a list
 * fetched elsewhere (index from kinf serve's index path), as its initial
 * list. 0, or -KINF_ENOMEM with reterr (not printed).
 */
KINF_MUST_CHECK int session_load(struct session *s, const struct kinf_object_list *objs,
		struct kinf_error *reterr);

/*
 * Pop the next key's deltas and notifications, of any informer, in arrival
 * order. Returns 1 with them, 0 when the session is over (signal, timeout,
 * end of --from input, every informer synced with --exit-after-sync), or
 * -status after printing an error. With several informers, one that fails
 * for good is reported once, naming it, and the others go on; then
 * session_end() returns its status.
 */
KINF_MUST_CHECK int session_next(struct session *s, struct kinf_informer_batch *ret_batch,
		struct kinf_deltas **ret_deltas);
/* One informer of the session, as session_member_info() describes it. */
struct session_member_info {
	const struct kinf_resource *res;	/* NULL with --from */
	const char *namespace;			/* NULL: all, or cluster-scoped */
	const char *context;			/* NULL without a name */
	const char *server;			/* the upstream URL, NULL with --from */
	/*
	 * The context's namespace from its kubeconfig (NULL with -n, or with
	 * --from), and its client: requests of the member's own go through
	 * clones of it (kinf_http_clone), which must not outlive the session.
	 */
	const char *context_namespace;
	struct kinf_http *http;
	struct kinf_informer *informer;
	const char *failed;			/* why it failed for good, or NULL */
	bool synced;		/* its initial list handed out whole (session_next) */
};
size_t session_n_members(struct session *s);
/* Member i (borrowed, valid until session_end). */
void session_member_info(struct session *s, size_t i, struct session_member_info *ret);
/*
 * Member i's custom resource's columns from its CustomResourceDefinition
 * (kinf_kindcols_fetch_crd(), through a clone of its client): 0 with *ret
 * (a new reference; NULL for a built-in kind or --from), or the error.
 */
int session_member_crd_columns(struct session *s, size_t i, struct kinf_kindcols **ret,
		struct kinf_error *reterr);
/*
 * The current informer's tables' columns, as kubectl get shows them: a
 * built-in kind's, a custom resource's from its CRD (asked for once; Name
 * and Age where it cannot be read, said with -v). Borrowed, as long as the
 * session; NULL with --from (the objects' kinds say).
 */
const struct kinf_kindcols *session_kindcols(struct session *s);
/* The member of the last event. */
size_t session_member(struct session *s);

/* Count one printed event towards --count. */
void session_count(struct session *s);
bool session_synced(struct session *s);
/* The SIGINT or SIGTERM that ended the session, or 0. */
int session_stop_signal(void);
/* Stop the source, print --stats, write --dump-on-exit; free. Returns status. */
KINF_MUST_CHECK int session_end(struct session *s, int status);

/* The typed JSON of obj (apiVersion and kind filled in). New reference. */
struct kinf_object *session_typed(struct session *s, struct kinf_object *obj);
/*
 * What -o json and yaml print of obj: typed, and without managedFields
 * unless --show-managed-fields (see cli_managed_fields()). New reference.
 */
struct kinf_object *session_printed(struct session *s, struct kinf_object *obj);
/*
 * session_printed()'s bytes appended to out, without a copy of obj when
 * it has no managedFields to leave out. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int session_append_typed(struct session *s, struct kinf_object *obj,
		struct kinf_buf *out);
/*
 * For -o json lines: ,"resource":"deployments.apps","context":"NAME" (null
 * without a context) of the last event's informer; nothing with --from.
 * A builder: a failure sticks in out.
 */
void session_put_source(struct session *s, struct kinf_buf *out);
/*
 * With several contexts, the last event's (for a CONTEXT column; "" for
 * one without a name); NULL with one.
 */
const char *session_context(struct session *s);

#endif
