#include <stdlib.h>
#include <string.h>

#include "accessreview.h"
#include "http.h"
#include "list.h"
#include "log.h"
#include "session.h"
#include "session_int.h"

/*
 * -A --accessible: where the cluster-wide list or watch of a type is
 * forbidden, the namespaces where both are allowed, as
 * SelfSubjectAccessReviews say (kubectl auth can-i's question), joining
 * as namespaces come (the set's follower, informerset.h, makes them
 * leave); and list -A --accessible's namespaces for one list.
 */

/* -A --accessible: a client per context for the access reviews. */
int session_accessible_init(struct session *s, size_t n_ctx) {
	s->dyn = calloc(n_ctx, sizeof(*s->dyn));
	s->review_http = calloc(n_ctx, sizeof(*s->review_http));
	for (size_t c = 0; s->dyn && s->review_http && c < n_ctx; c++) {
		if (!(s->review_http[c] = kinf_http_clone(s->clis[c]->http))) {
			break;
		}
	}
	if (!s->dyn || !s->review_http || !s->review_http[n_ctx - 1]) {
		return cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
	}
	return EXIT_OK;
}

/*
 * Whether cli's user may do each of verbs (NULL-ended: "list", "watch")
 * with res in namespace (NULL: cluster-wide), as kubectl auth can-i asks:
 * a SelfSubjectAccessReview per verb, through http. A review that fails
 * is reported (naming context, when not NULL) and counts as no; *ret_status
 * then gets its exit status.
 */
static bool may(struct cli *cli, struct kinf_http *http, const struct kinf_resource *res,
		const char *namespace, const char *const *verbs, const char *context,
		int *ret_status) {
	struct kinf_error err = {0};
	struct kinf_buf what = {0};
	bool allowed = true;
	int rc = 0;

	for (size_t i = 0; verbs[i]; i++) {
		kinf_buf_putf(&what, "%s%s", i ? " and " : "", verbs[i]);
	}
	for (size_t i = 0; verbs[i] && allowed && rc == 0; i++) {
		rc = kinf_access_review(http, verbs[i], res->group, res->resource, namespace,
				&allowed, &err);
	}
	kinf_log(1, "may %s %s%s%s in %s%s: %s", what.data ? what.data : "", res->resource,
			res->group[0] ? "." : "", res->group, namespace ? "namespace " : "",
			namespace ? namespace : "the cluster", rc == 0 && allowed ? "yes" : "no");
	if (rc < 0) {
		kinf_buf_reset(&what);
		kinf_buf_putf(&what, "access review of %s%s%s%s%s%s", res->resource,
				res->group[0] ? "." : "", res->group,
				namespace ? " in namespace \"" : "", namespace ? namespace : "",
				namespace ? "\"" : "");
		if (context) {
			kinf_buf_putf(&what, " of context \"%s\"", context);
		}
		*ret_status = cli_error(cli, rc, &err,
				!kinf_buf_error(&what) && what.data ? what.data : "access review");
	}
	kinf_buf_release(&what);
	return rc == 0 && allowed;
}

/* Whether context c's user may list and watch res in namespace (NULL: cluster-wide). */
static bool may_list_watch(struct session *s, size_t c, const struct kinf_resource *res,
		const char *namespace) {
	static const char *const verbs[] = { "list", "watch", NULL };
	const char *ctx = s->clis[c]->config->context_name;
	return may(s->cli, s->review_http[c], res, namespace, verbs,
			s->n_clis > 1 ? (ctx ? ctx : "") : NULL, &s->failed_status);
}

int session_accessible_namespaces(struct cli *cli, const char *context,
		struct kinf_strv *ret, bool *ret_everywhere) {
	static const char *const verbs[] = { "list", NULL };
	const struct kinf_resource *res = cli->res;
	const struct kinf_resource *ns_res = NULL;
	struct kinf_list_result list = {0};
	struct kinf_error err = {0};
	int status = EXIT_OK;

	*ret_everywhere = !res->namespaced || may(cli, cli->http, res, NULL, verbs, context,
			&status);
	if (*ret_everywhere) {
		return status;
	}
	int rc = kinf_discovery_resolve(cli->disc, "namespaces", &ns_res, &err);
	char *path = rc == 0 ? kinf_resource_path(ns_res, NULL) : NULL;
	if (rc == 0 && !path) {
		rc = kinf_error_set(&err, KINF_ENOMEM, "out of memory");
	}
	if (rc == 0) {
		struct kinf_list_opts lopts = {
			.path = path, .limit = cli->chunk_size, .limits = cli->limits,
		};
		lopts.limits.metadata_only = true;
		rc = kinf_list(cli->http, &lopts, &list, &err);
	}
	free(path);
	if (rc < 0) {
		struct kinf_buf what = {0};
		kinf_buf_putf(&what, "--accessible: namespaces");
		if (context) {
			kinf_buf_putf(&what, " of context \"%s\"", context);
		}
		status = cli_error(cli, rc, &err, kinf_buf_error(&what) ? NULL : what.data);
		kinf_buf_release(&what);
		kinf_list_result_release(&list);
		return status;
	}
	for (size_t i = 0; i < list.items.n; i++) {
		const char *ns = kinf_object_name(list.items.v[i]);
		if (may(cli, cli->http, res, ns, verbs, context, &status) &&
				kinf_strv_push_str(ret, ns) < 0) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			break;
		}
	}
	kinf_list_result_release(&list);
	if (status == EXIT_OK && ret->n == 0) {
		cli_printf_safe(stderr, "kinf: --accessible: no namespace where %s%s%s may be "
				"listed%s%s%s", res->resource, res->group[0] ? "." : "", res->group,
				context ? " in context \"" : "", context ? context : "",
				context ? "\"" : "");
		status = EXIT_ERROR;
	}
	return status;
}

int session_check_accessible(struct cli *cli, const struct session_opts *so) {
	if (so->accessible && (!cli->all_namespaces || so->from)) {
		return cli_usage_error(cli, "--accessible goes with -A (and a server)");
	}
	return EXIT_OK;
}

/*
 * -A --accessible for w in context c: one informer over every namespace
 * when the user may list and watch it cluster-wide; else *ret_by_namespace
 * and w is kept, for the namespaces to come (s->dyn[c]).
 */
int session_review_cluster_wide(struct session *s, size_t c, const struct want *w,
		bool *ret_by_namespace) {
	if (may_list_watch(s, c, w->res, NULL)) {
		return EXIT_OK;
	}
	struct wants *d = &s->dyn[c];
	struct want *v = realloc(d->v, (d->n + 1) * sizeof(*v));
	char **names = w->n_names ? malloc(w->n_names * sizeof(*names)) : NULL;
	if (!v || (w->n_names && !names)) {
		free(names);
		if (v) {
			d->v = v;
		}
		return cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
	}
	if (w->n_names) {
		memcpy(names, w->names, w->n_names * sizeof(*names));
	}
	d->v = v;
	d->v[d->n++] = (struct want){ .res = w->res, .names = names, .n_names = w->n_names };
	*ret_by_namespace = true;
	return EXIT_OK;
}

/* The namespaces of context c, watched by an informer of the session's own. */
int session_watch_namespaces(struct session *s, size_t c) {
	const struct kinf_resource *res = NULL;
	struct kinf_error err = {0};
	int rc = session_resolve(s->clis[c], "namespaces", &res, &err);
	if (rc < 0) {
		return cli_error(s->cli, rc, &err, "namespaces");
	}
	struct member *m = session_new_member(s);
	if (!m) {
		return cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
	}
	m->cli = s->clis[c];
	m->ctx = c;
	m->res = res;
	m->hidden = true;
	s->follow = (struct kinf_informerset_follow){
		.joined = session_namespace_joined, .left = session_namespace_left, .userdata = s,
	};
	int status = session_member_init(s, m, true);
	if (status == EXIT_OK) {
		/* Named in its messages: the user did not ask for namespaces. */
		struct kinf_buf b = {0};
		kinf_buf_putf(&b, "--accessible: %s", m->label);
		free(m->label);
		m->label = kinf_buf_take(&b);
		status = m->label ? EXIT_OK : cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
	}
	return status;
}

/*
 * -A --accessible: namespace ns appeared in the context of the namespaces
 * member follower watches; each type watched namespace by namespace there
 * gets an informer when the user may list and watch it in ns.
 */
void session_namespace_joined(struct kinf_informerset *set, size_t follower,
		const char *ns, void *userdata) {
	struct session *s = userdata;
	size_t c = s->members[follower]->ctx;
	const struct wants *d = &s->dyn[c];
	for (size_t i = 0; i < d->n; i++) {
		const struct want *w = &d->v[i];
		if (!may_list_watch(s, c, w->res, ns)) {
			continue;
		}
		struct kinf_error err = {0};
		struct member *m = session_new_member(s);
		int status = m ? EXIT_OK : cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
		if (m) {
			m->cli = s->clis[c];
			m->ctx = c;
			m->res = w->res;
			m->follower = follower;
			m->namespace = m->own_namespace = strdup(ns);
			m->names = w->n_names ? malloc(w->n_names * sizeof(*m->names)) : NULL;
			if (!m->own_namespace || (w->n_names && !m->names)) {
				status = cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
			} else if (w->n_names) {
				memcpy(m->names, w->names, w->n_names * sizeof(*m->names));
				m->n_names = w->n_names;
			}
		}
		if (status == EXIT_OK && (status = session_member_init(s, m, true)) == EXIT_OK &&
				session_member_selectors(s, m) < 0) {
			status = cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
		}
		if (status == EXIT_OK && (status = session_add_to_set(s, s->n_members - 1)) == EXIT_OK) {
			int rc = kinf_informerset_start_member(set, s->n_members - 1, &err);
			status = rc < 0 ? cli_error(s->cli, rc, &err, m->label) : EXIT_OK;
		}
		if (status != EXIT_OK) {
			/* Reported; the others go on. */
			if (m && s->n_members > kinf_informerset_len(set)) {
				session_drop_last_member(s);	/* never in the set */
			} else if (m) {
				int rc = kinf_informerset_remove(set, s->n_members - 1, false);
				if (rc < 0) {
					/* It stays, never started: said, and the exit says so. */
					cli_report(s->cli, rc, NULL, m->label);
				} else {
					m->left = true;
				}
			}
			s->failed_status = s->failed_status ? s->failed_status : status;
			continue;
		}
		kinf_log(1, "%s joins", m->label);
	}
}

/* -A --accessible: member's namespace went away (the set's tombstones follow). */
void session_namespace_left(struct kinf_informerset *set, size_t member, int rc,
		void *userdata) {
	struct session *s = userdata;
	struct member *m = s->members[member];
	m->left = true;
	kinf_log(1, "%s leaves", m->label);
	if (rc < 0) {
		int status = cli_error(s->cli, rc, NULL, m->label);
		s->failed_status = s->failed_status ? s->failed_status : status;
	}
}

