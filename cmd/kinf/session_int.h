#ifndef KINF_CMD_SESSION_INT_H
#define KINF_CMD_SESSION_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "informerset.h"
#include "session.h"

/*
 * The session's parts (session.h is what the commands see), each calling
 * only those below it:
 *   session.c             the session: its members into a set, started,
 *                         popped until the end; stats and --dump-on-exit
 *   session_targets.c     the command line's types, names, namespaces and
 *                         contexts resolved into members
 *   session_accessible.c  -A --accessible: the access reviews, and the
 *                         members of namespaces as they join
 *   session_members.c     one member: made, named, its informer's options,
 *                         into the set
 */

/* One informer of the session: a resource in a namespace (or all) of a context. */
struct member {
	struct session *s;
	size_t i;			/* its place in s->members and the set */
	struct cli *cli;			/* its context's connection */
	const struct kinf_resource *res;	/* NULL with --from */
	const char *namespace;		/* s->namespaces', or NULL */
	char *path;
	char *api_version;
	char *resource_name;		/* "pods", "deployments.apps" */
	char *label;			/* for messages: pods in namespace "a" */
	struct kinf_http *http;		/* a clone of cli->http, or NULL */
	char *failed;			/* why it failed for good, or NULL */
	char **names;			/* the names of its type (borrowed strings) */
	size_t n_names;
	char *field_selector;		/* NULL: --field-selector as given */
	char *label_selector;		/* NULL: -l as given */
	size_t ctx;			/* its context: s->clis[ctx] */
	bool hidden;			/* the namespaces watched for --accessible */
	bool left;			/* its namespace went away (--accessible) */
	char *own_namespace;		/* namespace, when it joined later */
	size_t follower;		/* then: the hidden member it joined through */
	const struct kinf_kindcols *kindcols;	/* its tables' columns, once asked for */
};

/* A resource type resolved in one context, with the names given for it. */
struct want {
	const struct kinf_resource *res;
	char **names;			/* the strings are the targets' */
	size_t n_names;
};

struct session {
	struct cli *cli;
	struct session_opts so;
	bool woke;			/* the wake_on_sync return was made */
	struct kinf_informerset *set;
	struct member **members;	/* each its own: callbacks hold them */
	size_t n_members;
	size_t cur;			/* the member of the last event */
	struct kinf_strv namespaces;	/* -n, expanded and without repeats */
	struct kinf_strv contexts;	/* --context, the same */
	struct cli **clis;		/* one per context: clis[0] is cli */
	size_t n_clis;
	/*
	 * -A --accessible, per context: the types watched namespace by
	 * namespace (their cluster-wide list or watch is forbidden), and a
	 * client for the access reviews.
	 */
	struct wants *dyn;
	struct kinf_http **review_http;
	/* How the namespaces watched for --accessible are followed (the set's joined, left). */
	struct kinf_informerset_follow follow;
	bool strip_managed_fields;	/* kept, but not for -o json or yaml */
	int from_fd;			/* --from */
	atomic_bool progress_shown;	/* written by the reflector thread */
	long printed;
	int failed_status;		/* the first member that failed for good */
};

/* The wants of one context; names arrays are the wants' own. */
struct wants {
	struct want *v;
	size_t n;
};

/* session_targets.c */
KINF_MUST_CHECK int session_expand_list(struct cli *cli, const char *const *args, size_t n_args,
		const char *what, struct kinf_strv *ret);
void session_wants_release(struct wants *w);
KINF_MUST_CHECK int session_connect_members(struct session *s, const struct session_target *targets,
		size_t n_targets);

/* session_accessible.c */
KINF_MUST_CHECK int session_accessible_init(struct session *s, size_t n_ctx);
KINF_MUST_CHECK int session_review_cluster_wide(struct session *s, size_t c, const struct want *w,
		bool *ret_by_namespace);
KINF_MUST_CHECK int session_watch_namespaces(struct session *s, size_t c);
void session_namespace_joined(struct kinf_informerset *set, size_t follower,
		const char *ns, void *userdata);
void session_namespace_left(struct kinf_informerset *set, size_t member, int rc,
		void *userdata);

/* session_members.c */
KINF_MUST_CHECK int session_resolve(struct cli *cli, const char *name, const struct kinf_resource **ret,
		struct kinf_error *err);
/* A new, empty member at the end of s->members; NULL when out of memory. */
struct member *session_new_member(struct session *s);
/* Fill m (cli, res and namespace set) with its path, names and HTTP client. */
KINF_MUST_CHECK int session_member_init(struct session *s, struct member *m, bool clone_http);
KINF_MUST_CHECK int session_member_selectors(struct session *s, struct member *m);
KINF_MUST_CHECK int session_add_to_set(struct session *s, size_t i);
/* The last member, not in the set, goes (what it holds with it). */
void session_drop_last_member(struct session *s);
/* "deployments.apps" (caller frees), or NULL when out of memory. */
char *session_resource_name_of(const struct kinf_resource *res);

#endif
