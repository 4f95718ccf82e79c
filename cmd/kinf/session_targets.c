#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "session_int.h"

/*
 * What the command line names, resolved: the types and names of the
 * targets in each context's discovery, -n and --context expanded, and
 * the session's members made of them (one per type, namespace and
 * context).
 */

/*
 * -n a,b and -n a -n b (--context the same): the names in the order
 * given, each once. Prints a usage error for an empty name.
 */
int session_expand_list(struct cli *cli, const char *const *args, size_t n_args,
		const char *what, struct kinf_strv *ret) {
	for (size_t i = 0; i < n_args; i++) {
		const char *arg = args[i];
		for (const char *p = arg;;) {
			size_t len = strcspn(p, ",");
			if (len == 0) {
				return cli_usage_error(cli, "empty %s name in \"%s\"", what, arg);
			}
			char *name = strndup(p, len);
			if (!name) {
				return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			}
			if (kinf_strv_contains(ret, name)) {
				free(name);	/* named twice: watched once */
			} else if (kinf_strv_push_take(ret, name) < 0) {
				return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			}
			if (!p[len]) {
				break;
			}
			p += len + 1;
		}
	}
	return EXIT_OK;
}

void session_wants_release(struct wants *w) {
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].names);
	}
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

/* Add res with t's names to ws: a type already there gets the names too. */
static int wants_add(struct wants *ws, const struct kinf_resource *res,
		const struct session_target *t) {
	struct want *w = NULL;
	for (size_t i = 0; i < ws->n && !w; i++) {
		if (strcmp(ws->v[i].res->group, res->group) == 0 &&
				strcmp(ws->v[i].res->resource, res->resource) == 0) {
			w = &ws->v[i];	/* pods,po: once */
		}
	}
	if (!w) {
		struct want *v = realloc(ws->v, (ws->n + 1) * sizeof(*v));
		if (!v) {
			return -KINF_ENOMEM;
		}
		ws->v = v;
		w = &ws->v[ws->n++];
		*w = (struct want){ .res = res };
	}
	if (t->n_names == 0) {
		return 0;
	}
	char **names = realloc(w->names, (w->n_names + t->n_names) * sizeof(*names));
	if (!names) {
		return -KINF_ENOMEM;
	}
	w->names = names;
	for (size_t i = 0; i < t->n_names; i++) {
		w->names[w->n_names++] = t->names[i];
	}
	return 0;
}

/* Each comma-separated item of list, in turn, as a string of its own. */
static int each_item(struct cli *cli, const char *list, const char *what,
		int (*fn)(const char *item, void *userdata), void *userdata) {
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		if (len == 0) {
			return cli_usage_error(cli, "empty %s in \"%s\"", what, list);
		}
		char *one = strndup(p, len);
		if (!one) {
			return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		}
		int status = fn(one, userdata);
		free(one);
		if (status != EXIT_OK || !p[len]) {
			return status;
		}
		p += len + 1;
	}
}

/* One type of a target in one context (each_item's callback). */
struct resolving {
	struct session *s;
	struct cli *cli;
	const struct session_target *target;
	struct wants *wants;
	struct kinf_strv *missing;	/* the types this context lacks */
};

static int resolve_one(const char *type, void *userdata) {
	struct resolving *r = userdata;
	const struct kinf_resource *res = NULL;
	struct kinf_error err = {0};
	int rc = session_resolve(r->cli, type, &res, &err);
	if (rc == -KINF_ENOTFOUND) {
		return kinf_strv_push_str(r->missing, type) < 0 ?
			cli_error(r->cli, -KINF_ENOMEM, NULL, NULL) : EXIT_OK;
	}
	if (rc < 0) {
		return cli_error(r->cli, rc, &err, NULL);
	}
	return wants_add(r->wants, res, r->target) < 0 ?
		cli_error(r->cli, -KINF_ENOMEM, NULL, NULL) : EXIT_OK;
}

/* A connection for one more context: cli's options, nothing connected yet. */
static struct cli *cli_for_context(const struct cli *cli, const char *context) {
	struct cli *c = malloc(sizeof(*c));
	if (!c) {
		return NULL;
	}
	*c = *cli;
	c->labels = c->fields = NULL;
	c->config = NULL;
	c->auth = NULL;
	c->http = NULL;
	c->disc = NULL;
	c->res = NULL;
	c->namespace = NULL;
	c->serve_url = NULL;	/* cli's; cli_connect() makes this context's */
	c->kc.context = context;
	return c;
}

/* Connect cli (its context set) and load its discovery. */
static int connect_context(struct session *s, struct cli *cli) {
	struct kinf_discovery_opts dopts = { .refresh = cli->refresh };
	struct kinf_error err = {0};

	cli->takes_lists = true;
	if (s->namespaces.n > 0) {
		cli->kc.namespace = s->namespaces.v[0];	/* the default for the others */
	}
	int status = cli_connect(cli, NULL);
	if (status != EXIT_OK) {
		return status;
	}
	int rc = kinf_discovery_load(cli->http, &dopts, &cli->disc, &err);
	return rc < 0 ? cli_error(cli, rc, &err, "discovery") : EXIT_OK;
}

/* The name of type as some context resolved it ("widgets.example.com"). */
static char *resolved_name(struct session *s, const char *type) {
	for (size_t c = 0; c < s->n_clis; c++) {
		const struct kinf_resource *res = NULL;
		if (kinf_discovery_resolve(s->clis[c]->disc, type, &res, NULL) == 0) {
			return session_resource_name_of(res);
		}
	}
	return NULL;
}

/*
 * Every context connected and every type resolved, before any list. A
 * type unknown in every context is an error (the first context's words,
 * with its suggestion); one only some lack is reported once for each and
 * the others go on.
 */
static int resolve_contexts(struct session *s, const struct session_target *targets,
		size_t n_targets, struct wants *wants) {
	struct cli *cli = s->cli;
	size_t n_ctx = s->n_clis;
	struct kinf_strv *missing = calloc(n_ctx, sizeof(*missing));
	int status = missing ? EXIT_OK : cli_error(cli, -KINF_ENOMEM, NULL, NULL);

	for (size_t c = 0; c < n_ctx && status == EXIT_OK; c++) {
		status = connect_context(s, s->clis[c]);
		for (size_t t = 0; t < n_targets && status == EXIT_OK; t++) {
			struct resolving r = {
				.s = s, .cli = s->clis[c], .target = &targets[t],
				.wants = &wants[c], .missing = &missing[c],
			};
			status = each_item(cli, targets[t].types, "resource type",
					resolve_one, &r);
		}
	}
	/* Unknown everywhere: the context's own words, before any warning. */
	for (size_t c = 0; c < n_ctx && status == EXIT_OK; c++) {
		for (size_t i = 0; i < missing[c].n && status == EXIT_OK; i++) {
			char *name = resolved_name(s, missing[c].v[i]);
			if (!name) {
				const struct kinf_resource *res;
				struct kinf_error err = {0};
				int rc = kinf_discovery_resolve(s->clis[c]->disc, missing[c].v[i],
						&res, &err);
				status = cli_resolve_error(cli, rc < 0 ? rc : -KINF_ENOTFOUND, &err);
			}
			free(name);
		}
	}
	for (size_t c = 0; c < n_ctx && status == EXIT_OK; c++) {
		for (size_t i = 0; i < missing[c].n; i++) {
			char *name = resolved_name(s, missing[c].v[i]);
			const char *ctx = s->clis[c]->config->context_name;
			cli_printf_safe(stderr, "kinf: %s of context \"%s\": the server doesn't "
					"have a resource type \"%s\"", name ? name : missing[c].v[i],
					ctx ? ctx : "", missing[c].v[i]);
			free(name);
			s->failed_status = EXIT_ERROR;
		}
	}
	for (size_t c = 0; missing && c < n_ctx; c++) {
		kinf_strv_release(&missing[c]);
	}
	free(missing);
	return status;
}

/*
 * The members for the contexts (--context a,b), the targets' types
 * (pods,configmaps; deploy/a pod/b) and the namespaces: a namespaced
 * resource once per namespace (the context's when none was given, all
 * with -A), a cluster-scoped one once, in each context.
 */
int session_connect_members(struct session *s, const struct session_target *targets,
		size_t n_targets) {
	struct cli *cli = s->cli;
	size_t n_ctx = s->contexts.n > 0 ? s->contexts.n : 1;
	struct wants *wants = calloc(n_ctx, sizeof(*wants));
	int status = EXIT_OK;

	s->clis = calloc(n_ctx, sizeof(*s->clis));
	if (!wants || !s->clis) {
		status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
		goto out;
	}
	/* Every context known before any request: an unknown one is exit 3, naming it. */
	for (size_t c = 0; c < n_ctx; c++) {
		struct cli *cc = cli;
		if (c > 0 && !(cc = cli_for_context(cli, s->contexts.v[c]))) {
			status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
			goto out;
		}
		s->clis[s->n_clis++] = cc;
		if (c == 0 && s->contexts.n > 0) {
			cli->kc.context = s->contexts.v[0];
		}
	}
	if ((status = resolve_contexts(s, targets, n_targets, wants)) != EXIT_OK) {
		goto out;
	}

	size_t n_ns = s->namespaces.n > 0 ? s->namespaces.n : 1;
	size_t n = 0, n_types = 0;
	for (size_t c = 0; c < n_ctx; c++) {
		for (size_t i = 0; i < wants[c].n; i++) {
			n += wants[c].v[i].res->namespaced && !cli->all_namespaces ? n_ns : 1;
		}
		n_types = wants[c].n > n_types ? wants[c].n : n_types;
	}
	if (s->so.one_namespace && (n_ns > 1 || n_ctx > 1)) {
		status = cli_usage_error(cli, "%s takes one namespace and one context",
				s->so.one_namespace_why ? s->so.one_namespace_why : cli->cmd->name);
		goto out;
	}
	if (n_types > 1 && !s->so.tables_per_type &&
			(cli->format == KINF_OUTPUT_TABLE || cli->format == KINF_OUTPUT_WIDE)) {
		status = cli_usage_error(cli, "several resource types need -o json, yaml, "
				"name, jsonpath or custom-columns (a table takes one type)");
		goto out;
	}
	if (s->so.accessible && (status = session_accessible_init(s, n_ctx)) != EXIT_OK) {
		goto out;
	}
	for (size_t c = 0; c < n_ctx; c++) {
		bool first_of_context = true;
		for (size_t i = 0; i < wants[c].n; i++) {
			const struct want *w = &wants[c].v[i];
			bool per_ns = w->res->namespaced && !cli->all_namespaces;
			bool by_namespace = false;
			if (s->so.accessible && w->res->namespaced && cli->all_namespaces &&
					(status = session_review_cluster_wide(s, c, w, &by_namespace)) != EXIT_OK) {
				goto out;
			}
			for (size_t j = 0; j < (per_ns ? n_ns : 1) && !by_namespace; j++) {
				struct member *m = session_new_member(s);
				if (!m) {
					status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
					goto out;
				}
				m->cli = s->clis[c];
				m->ctx = c;
				m->res = w->res;
				if (per_ns) {
					m->namespace = s->namespaces.n > 0 ? s->namespaces.v[j] :
						m->cli->config->namespace;
				}
				if (w->n_names && !(m->names = malloc(w->n_names * sizeof(char *)))) {
					status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
					goto out;
				}
				if (w->n_names) {
					memcpy(m->names, w->names, w->n_names * sizeof(char *));
				}
				m->n_names = w->n_names;
				/* (every member has a client of its own when its warnings go to so.on_warning) */
				status = session_member_init(s, m, !first_of_context || s->so.on_warning);
				first_of_context = false;
				if (status == EXIT_OK && session_member_selectors(s, m) < 0) {
					status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
				}
				if (status != EXIT_OK) {
					goto out;
				}
			}
		}
	}
	for (size_t c = 0; s->dyn && c < n_ctx && status == EXIT_OK; c++) {
		if (s->dyn[c].n > 0) {
			status = session_watch_namespaces(s, c);
		}
	}
	cli->several_namespaces = s->namespaces.n > 1 && !cli->all_namespaces;
out:
	for (size_t c = 0; wants && c < n_ctx; c++) {
		session_wants_release(&wants[c]);
	}
	free(wants);
	return status;
}

int session_parse_targets(const struct cli *cli, char **pos, int n_pos,
		struct session_targets *ret) {
	int n_slash;
	int status = cli_check_type_names(cli, pos, n_pos, &n_slash);
	if (status != EXIT_OK) {
		return status;
	}
	ret->v = calloc((size_t)n_pos + 1, sizeof(*ret->v));
	ret->names = calloc((size_t)n_pos + 1, sizeof(*ret->names));
	if (!ret->v || !ret->names) {
		return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	}
	ret->by_name = n_slash > 0;
	for (int i = 0; i < n_slash; i++) {
		char *slash = strchr(pos[i], '/');
		*slash = '\0';
		ret->names[i] = slash + 1;
		ret->v[ret->n++] = (struct session_target){
			.types = pos[i], .names = &ret->names[i], .n_names = 1,
		};
	}
	if (n_slash == 0 && n_pos > 0) {
		/* TYPE[,TYPE...] NAME...: the names of each type. */
		for (int i = 1; i < n_pos; i++) {
			ret->names[i - 1] = pos[i];
		}
		ret->v[ret->n++] = (struct session_target){
			.types = pos[0], .names = ret->names, .n_names = (size_t)n_pos - 1,
		};
	}
	return EXIT_OK;
}

void session_targets_release(struct session_targets *t) {
	free(t->v);
	free(t->names);
	t->v = NULL;
	t->names = NULL;
	t->n = 0;
}

