#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "kindcols.h"
#include "log.h"
#include "session.h"
#include "session_int.h"

/*
 * One member of the session: a resource type in a namespace (or all) of
 * a context, its informer's options and messages, made, filled and added
 * to the set; and the resolution of a type's name it starts from. The
 * session's other files make members through these, never the other way.
 */

/*
 * Resolve one resource type in cli's discovery, asking the server again
 * when a cached discovery lacks it (a new CRD). Returns 0 or the error
 * (not printed) in err.
 */
int session_resolve(struct cli *cli, const char *name, const struct kinf_resource **ret,
		struct kinf_error *err) {
	struct kinf_discovery_opts dopts = { .refresh = cli->refresh };
	return kinf_discovery_resolve_deferred(&cli->disc, cli->http, &dopts, name, ret, err);
}

/* The reflector retries (after the first sync, or a 5xx): say so. */
static void on_retry(int rc, const struct kinf_error *err, void *userdata) {
	struct member *m = userdata;
	bool several = m->s->n_members > 1;
	if (m->s->so.on_retry) {
		m->s->so.on_retry(m->i, rc, err, m->s->so.on_retry_data);
		return;
	}
	cli_printf_safe(stderr, "kinf: warning: %s%s%s%s%s; retrying",
			several ? m->label : "", several ? ": " : "",
			err->message[0] ? err->message : kinf_strerror(rc),
			err->http_status ? " " : "", err->http_status ? err->reason : "");
}

static void on_list_page(unsigned pages, size_t items, void *userdata) {
	struct member *m = userdata;
	struct session *s = m->s;
	/* A progress line on stderr during a long initial list, on a terminal. */
	if (m->res && cli_progress_show(m->res->resource, pages, items)) {
		atomic_store(&s->progress_shown, true);
	}
}

/* The informer's options for member m; strings are borrowed. */
static struct kinf_informer_opts informer_opts(struct session *s, struct member *m) {
	struct cli *cli = s->cli;
	struct kinf_informer_opts o = {
		.reflector.limits = cli->limits,
		.replay_fd = s->from_fd,
		.labels = cli->labels,
		.fields = cli->fields,
		.emit_replaced = s->so.emit_replaced,
		.timeout_ms = s->so.timeout_ms,
		.exit_after_sync = s->so.exit_after_sync,
		.on_retry = on_retry,
		.on_list_page = on_list_page,
		.userdata = m,
	};
	if (m->res) {
		struct kinf_reflector_opts *r = &o.reflector;
		r->http = m->http ? m->http : m->cli->http;
		r->path = m->path;
		r->label_selector = m->label_selector ? m->label_selector : cli->label_selector;
		r->field_selector = m->field_selector ? m->field_selector : cli->field_selector;
		r->page_size = cli->chunk_size;
		r->page_always = cli->chunk_size_set;
		r->watch_list = s->so.watch_list;
		r->resync_ms = s->so.resync_ms;
		r->watch_timeout_s = s->so.watch_timeout_s;
		o.api_version = m->api_version;
		o.kind = m->res->kind;
	}
	return o;
}

/* "deployments.apps" (caller frees), or NULL when out of memory. */
char *session_resource_name_of(const struct kinf_resource *res) {
	struct kinf_buf b = {0};
	kinf_buf_putf(&b, "%s%s%s", res->resource, res->group[0] ? "." : "", res->group);
	return kinf_buf_take(&b);
}

/* A new, empty member at the end of s->members; NULL when out of memory. */
struct member *session_new_member(struct session *s) {
	struct member **v = realloc(s->members, (s->n_members + 1) * sizeof(*v));
	if (!v) {
		return NULL;
	}
	s->members = v;
	struct member *m = calloc(1, sizeof(*m));
	if (m) {
		m->s = s;
		m->i = s->n_members;
		s->members[s->n_members++] = m;
	}
	return m;
}

/* kinf_http_opts.on_warning of a member's client: so.on_warning names the member. */
static void member_warning(const char *text, size_t len, void *userdata) {
	struct member *m = userdata;
	m->s->so.on_warning(m->i, text, len, m->s->so.on_warning_data);
}

/* Fill m (cli, res and namespace set) with its path, names and HTTP client. */
int session_member_init(struct session *s, struct member *m, bool clone_http) {
	struct kinf_buf b = {0};
	const struct kinf_resource *res = m->res;
	const char *context = m->cli->config->context_name;

	m->s = s;
	m->path = kinf_resource_path(res, m->namespace);
	if (res->group[0]) {
		kinf_buf_putf(&b, "%s/%s", res->group, res->version);
	} else {
		kinf_buf_puts(&b, res->version);
	}
	m->api_version = kinf_buf_take(&b);
	m->resource_name = session_resource_name_of(res);
	if (m->namespace) {
		kinf_buf_putf(&b, "%s in namespace \"%s\"", m->resource_name, m->namespace);
	} else {
		kinf_buf_puts(&b, m->resource_name ? m->resource_name : "");
	}
	if (s->n_clis > 1) {
		kinf_buf_putf(&b, " of context \"%s\"", context ? context : "");
	}
	m->label = kinf_buf_take(&b);
	if (clone_http) {
		m->http = kinf_http_clone(m->cli->http);
		if (m->http && s->so.on_warning) {
			kinf_http_set_warning(m->http, member_warning, m);
		}
	}
	if (!m->path || !m->api_version || !m->resource_name || !m->label ||
			(clone_http && !m->http)) {
		return cli_error(s->cli, -KINF_ENOMEM, NULL, NULL);
	}
	return EXIT_OK;
}

/*
 * The selectors m's informer asks the server for: -l and --field-selector,
 * ANDed with metadata.name=NAME (one name of its type) and what
 * so.pushdown adds for its resource. NULL when there is nothing to add.
 */
int session_member_selectors(struct session *s, struct member *m) {
	struct cli *cli = s->cli;
	struct kinf_buf b = {0};
	struct kinf_buf push_labels = {0}, push_fields = {0};
	const char *name = m->n_names == 1 ? m->names[0] : NULL;
	int rc = 0;

	if (s->so.pushdown) {
		s->so.pushdown(m->res, &push_labels, &push_fields, s->so.pushdown_data);
		if (kinf_buf_error(&push_labels) || kinf_buf_error(&push_fields)) {
			rc = -KINF_ENOMEM;
		}
	}
	if (rc == 0 && (name || push_fields.len)) {
		const char *sep = "";
		if (name) {
			kinf_buf_putf(&b, "metadata.name=%s", name);
			sep = ",";
		}
		if (cli->field_selector && cli->field_selector[0]) {
			kinf_buf_putf(&b, "%s%s", sep, cli->field_selector);
			sep = ",";
		}
		if (push_fields.len) {
			kinf_buf_putf(&b, "%s%s", sep, push_fields.data);
		}
		m->field_selector = kinf_buf_take(&b);
		rc = m->field_selector ? 0 : -KINF_ENOMEM;
	}
	if (rc == 0 && push_labels.len) {
		if (cli->label_selector && cli->label_selector[0]) {
			kinf_buf_putf(&b, "%s,", cli->label_selector);
		}
		kinf_buf_put(&b, push_labels.data, push_labels.len);
		m->label_selector = kinf_buf_take(&b);
		rc = m->label_selector ? 0 : -KINF_ENOMEM;
	}
	kinf_buf_release(&push_labels);
	kinf_buf_release(&push_fields);
	return rc;
}

/*
 * Member i into the set, prepared by the command (its indexes): the
 * namespaces watched for --accessible as a follower, a member that joined
 * in its namespace.
 */
int session_add_to_set(struct session *s, size_t i) {
	struct kinf_error err = {0};
	struct member *m = s->members[i];
	struct kinf_informer_opts io = informer_opts(s, m);
	int rc = m->hidden ? kinf_informerset_follow(s->set, &io, &s->follow, NULL, &err) :
		m->own_namespace ? kinf_informerset_add_in(s->set, &io, m->follower,
				m->own_namespace, NULL, &err) :
		kinf_informerset_add(s->set, &io, NULL, &err);
	if (rc < 0) {
		return cli_error(s->cli, rc, &err, NULL);
	}
	if (!m->hidden && s->so.prepare) {
		struct kinf_informer *inf = kinf_informerset_get(s->set, i);
		rc = s->so.prepare(kinf_informer_indexer(inf), s->so.prepare_data);
		if (rc < 0) {
			return rc == -KINF_ENOMEM ? cli_error(s->cli, rc, NULL, NULL) : EXIT_USAGE;
		}
	}
	return EXIT_OK;
}

/* The last member, not in the set, goes (what it holds with it). */
void session_drop_last_member(struct session *s) {
	struct member *m = s->members[--s->n_members];
	kinf_http_free(m->http);
	free(m->path);
	free(m->api_version);
	free(m->resource_name);
	free(m->label);
	free(m->failed);
	free(m->names);
	free(m->field_selector);
	free(m->label_selector);
	free(m->own_namespace);
	kinf_kindcols_unref(m->kindcols);
	free(m);
}

int session_member_crd_columns(struct session *s, size_t i, struct kinf_kindcols **ret,
		struct kinf_error *reterr) {
	const struct member *m = s->members[i];
	*ret = NULL;
	if (!m->res || !m->cli->http || kinf_kindcols_is_builtin(m->res->group, m->res->kind)) {
		return 0;
	}
	/* A clone: the member's own client is its informer's. */
	struct kinf_http *http = kinf_http_clone(m->cli->http);
	int rc = http ? kinf_kindcols_fetch_crd(http, m->res->group, m->res->resource,
			m->res->version, ret, reterr) : kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	kinf_http_free(http);
	return rc;
}

const struct kinf_kindcols *session_kindcols(struct session *s) {
	struct member *m = s->members[s->cur];
	if (m->kindcols || !m->res) {
		return m->kindcols;
	}
	struct kinf_kindcols *crd = NULL;
	struct kinf_error err = {0};
	if (session_member_crd_columns(s, s->cur, &crd, &err) < 0) {
		/* kubectl shows the server's columns; without the CRD, Name and Age. */
		kinf_log(1, "%s: NAME and AGE only: reading its CustomResourceDefinition: %s",
				m->label, err.message);
	}
	m->kindcols = crd ? crd : kinf_kindcols_for(m->res->group, m->res->kind);
	return m->kindcols;
}
