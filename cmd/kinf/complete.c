#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "indexfuncs.h"
#include "jsonnum.h"
#include "session.h"
#include "termsafe.h"

/*
 * kinf __complete WORD... CURRENT: the candidates for CURRENT, one per line,
 * then ":DIRECTIVE", as cobra's hidden __complete answers (kubectl's own, and
 * what kubectl reads from a plugin's kubectl_complete-<plugin>). The shell
 * completions call it for what only the cluster knows: object names, label
 * keys and values for --by, namespaces. Nothing goes to stderr; anything
 * that fails (no cluster, a timeout) gives fewer candidates, never an error.
 */

extern char **environ;

/* cobra's ShellCompDirective bits. */
enum {
	DIRECTIVE_DEFAULT = 0,		/* and file names if nothing matches */
	DIRECTIVE_NO_SPACE = 2,
	DIRECTIVE_NO_FILE_COMP = 4,
};

/* A question to the server may take this long in all (--request-timeout less). */
#define CHILD_DEADLINE_MS 5000

static const struct cmd *const commands[] = {
	&cmd_deltas, &cmd_index, &cmd_list, &cmd_serve, &cmd_version, &cmd_watch,
};

#define N_COMMANDS (sizeof(commands) / sizeof(*commands))

struct opt {
	char name[40];
	char short_name;
	bool value;		/* takes a value (the help shows "--opt VALUE") */
	bool optional;		/* "--opt[=VALUE]" */
};

struct comp {
	const struct cmd *cmd;
	struct opt *opts;
	size_t n_opts;
	struct kinf_strv pos;		/* operands before CURRENT */
	struct kinf_strv conn;		/* connection options, for kinf list */
	struct kinf_strv indexes;	/* --index definitions */
	const char *kubeconfig;
	const char *context;
	const char *namespace;
	bool all_namespaces;
	struct kinf_strv out;		/* candidates */
	int directive;
	int rc;				/* the first allocation that failed */
};

/* Remember the first failure: a completion that ran out of memory offers nothing. */
static void keep(struct comp *c, int r) {
	if (r < 0 && c->rc == 0) {
		c->rc = r;
	}
}

/*
 * The options a help text lists: "  -n, --namespace NS   ..." or
 * "      --watch-only   ...". An upper-case word after the name means the
 * option takes a value; "--verbose[=LEVEL]" takes it after '=' (or as an integer word).
 */
static void options_from_help(struct comp *c, const char *text) {
	for (const char *line = text; line && *line; ) {
		const char *p = line, *nl = strchr(line, '\n');
		struct opt o = {0};
		while (*p == ' ') {
			p++;
		}
		if (p[0] == '-' && p[1] && p[1] != '-' && p[2] == ',' && p[3] == ' ') {
			o.short_name = p[1];
			p += 4;
		}
		if (p[0] == '-' && p[1] == '-' && (!nl || p < nl)) {
			size_t n = 0;
			p += 2;
			while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') ||
					p[n] == '-') {
				n++;
			}
			o.value = p[n] == ' ' && p[n + 1] >= 'A' && p[n + 1] <= 'Z';
			o.optional = p[n] == '[' && p[n + 1] == '=';
			bool seen = n == 0 || n >= sizeof(o.name);
			for (size_t i = 0; !seen && i < c->n_opts; i++) {
				seen = strlen(c->opts[i].name) == n &&
					strncmp(c->opts[i].name, p, n) == 0;
			}
			struct opt *v = seen ? NULL :
				realloc(c->opts, (c->n_opts + 1) * sizeof(*v));
			if (v) {
				memcpy(o.name, p, n);
				c->opts = v;
				c->opts[c->n_opts++] = o;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
}

static const struct opt *find_long(const struct comp *c, const char *name, size_t len) {
	for (size_t i = 0; i < c->n_opts; i++) {
		if (strlen(c->opts[i].name) == len && strncmp(c->opts[i].name, name, len) == 0) {
			return &c->opts[i];
		}
	}
	return NULL;
}

static const struct opt *find_short(const struct comp *c, char s) {
	for (size_t i = 0; i < c->n_opts; i++) {
		if (c->opts[i].short_name == s) {
			return &c->opts[i];
		}
	}
	return NULL;
}

/*
 * Add prefix + word as a candidate when word starts with partial. A word
 * from the cluster with a control character (a hostile server's name or
 * label) is left out: it would break the one-per-line protocol or reach
 * the terminal through the shell's menu.
 */
static void offer(struct comp *c, const char *prefix, const char *word, const char *partial) {
	struct kinf_buf b = {0};
	if (strncmp(word, partial, strlen(partial)) != 0 ||
			kinf_termsafe_needed(word, strlen(word))) {
		return;
	}
	int r = kinf_buf_printf(&b, "%s%s", prefix, word);
	if (r == 0 && !kinf_strv_contains(&c->out, b.data)) {
		r = kinf_strv_push_take(&c->out, kinf_buf_take(&b));
	}
	keep(c, r);
	kinf_buf_release(&b);
}

/* What the command line says that a question to the server needs. */
static void note_option(struct comp *c, const struct opt *o, const char *val) {
	static const char *const conn[] = {
		"kubeconfig", "context", "cluster", "user", "server", "token",
		"certificate-authority", "tls-server-name", "insecure-skip-tls-verify",
		"as", "as-group", "as-uid",
	};
	for (size_t i = 0; i < sizeof(conn) / sizeof(*conn); i++) {
		if (strcmp(o->name, conn[i]) == 0) {
			struct kinf_buf b = {0};
			int r = kinf_buf_printf(&b, "--%s", o->name);
			if (r == 0) {
				r = kinf_strv_push_take(&c->conn, kinf_buf_take(&b));
			}
			if (r == 0 && o->value) {
				r = kinf_strv_push_str(&c->conn, val);
			}
			keep(c, r);
			kinf_buf_release(&b);
		}
	}
	if (strcmp(o->name, "kubeconfig") == 0) {
		c->kubeconfig = val;
	} else if (strcmp(o->name, "context") == 0) {
		c->context = val;
	} else if (strcmp(o->name, "namespace") == 0) {
		c->namespace = val;
	} else if (strcmp(o->name, "all-namespaces") == 0) {
		c->all_namespaces = true;
	} else if (strcmp(o->name, "index") == 0) {
		keep(c, kinf_strv_push_str(&c->indexes, val));
	}
}

/*
 * Run this kinf with args (the connection options of the line added),
 * briefly: its standard output, or NULL when it failed or took too long.
 */
static char *ask_kinf(struct comp *c, const char *const *args, bool namespaced) {
	struct kinf_strv argv = {0};
	struct kinf_buf out = {0};
	posix_spawn_file_actions_t fa;
	int fds[2];
	pid_t pid;
	int status = 0;

	int r = kinf_strv_push_str(&argv, "kinf");
	for (size_t i = 0; r == 0 && args[i]; i++) {
		r = kinf_strv_push_str(&argv, args[i]);
	}
	if (r == 0) {
		r = kinf_strv_push_str(&argv, "--request-timeout");
	}
	if (r == 0) {
		r = kinf_strv_push_str(&argv, "3s");
	}
	for (size_t i = 0; r == 0 && i < c->conn.n; i++) {
		r = kinf_strv_push_str(&argv, c->conn.v[i]);
	}
	if (r == 0 && namespaced && c->all_namespaces) {
		r = kinf_strv_push_str(&argv, "-A");
	} else if (r == 0 && namespaced && c->namespace) {
		r = kinf_strv_push_str(&argv, "-n");
		if (r == 0) {
			r = kinf_strv_push_str(&argv, c->namespace);
		}
	}
	keep(c, r);
	char **av = r == 0 ? calloc(argv.n + 1, sizeof(*av)) : NULL;
	if (!av || pipe(fds) < 0) {
		free(av);
		kinf_strv_release(&argv);
		return NULL;
	}
	memcpy(av, argv.v, argv.n * sizeof(*av));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, av, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	free(av);
	kinf_strv_release(&argv);
	if (rc != 0) {
		close(fds[0]);
		return NULL;
	}
	long long deadline = kinf_clock_now_ms() + CHILD_DEADLINE_MS;
	bool timed_out = false;
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		long long left = deadline - kinf_clock_now_ms();
		if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
			timed_out = true;
			break;
		}
		char chunk[16384];
		ssize_t n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0 || kinf_buf_append(&out, chunk, (size_t)n) < 0) {
			break;
		}
	}
	close(fds[0]);
	if (timed_out) {
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		kinf_buf_release(&out);
		return NULL;
	}
	return kinf_buf_take(&out);
}

/* TYPE of "TYPE" or "TYPE/NAME"; caller frees. */
static char *type_of(const char *operand) {
	const char *slash = strchr(operand, '/');
	return slash ? strndup(operand, (size_t)(slash - operand)) : strdup(operand);
}

/*
 * The names of the objects of a type: kinf list -o json prints an object a
 * line, its name exact (-o name would print a hostile name escaped, a
 * candidate that names nothing; offer() leaves such names out).
 */
static void offer_listed_names(struct comp *c, const char *type, bool namespaced,
		const char *prefix, const char *partial) {
	const char *args[] = { "list", type, "-o", "json", NULL };
	char *text = ask_kinf(c, args, namespaced);
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next) {
			*next++ = '\0';
		}
		json_t *obj = kinf_jsonnum_load(line, strlen(line), 0, NULL);
		const char *name = json_string_value(json_object_get(
				json_object_get(obj, "metadata"), "name"));
		if (name) {
			offer(c, prefix, name, partial);
		}
		json_decref(obj);
	}
	free(text);
}

static void offer_names(struct comp *c, const char *type, const char *prefix,
		const char *partial) {
	offer_listed_names(c, type, true, prefix, partial);
}

static void offer_namespaces(struct comp *c, const char *prefix, const char *partial) {
	offer_listed_names(c, "namespaces", false, prefix, partial);
}

/*
 * Resource types from discovery (the cache when it is fresh, else the
 * server, which fills the cache): plural names. Of a comma list
 * (pods,de), the last item, the list before it kept and the types already
 * in it left out.
 */
static void offer_resources(struct comp *c, const char *cur) {
	const char *comma = c->cmd != &cmd_version ? strrchr(cur, ',') : NULL;
	const char *partial = comma ? comma + 1 : cur;
	char *prefix = strndup(cur, comma ? (size_t)(comma - cur + 1) : 0);
	if (!prefix) {
		keep(c, -KINF_ENOMEM);
		return;
	}
	static const struct option common[] = { CLI_COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	struct cli cli;
	struct kinf_discovery *disc = NULL;
	struct kinf_discovery_opts dopts = {0};

	cli_init(&cli, c->cmd);
	for (size_t i = 0; i < c->conn.n; i++) {
		const char *name = c->conn.v[i] + 2;
		for (size_t j = 0; common[j].name; j++) {
			if (strcmp(common[j].name, name) == 0) {
				const char *arg = common[j].has_arg == required_argument &&
					i + 1 < c->conn.n ? c->conn.v[++i] : NULL;
				/* A bad flag in a half-typed line is left out; completion goes on. */
				(void)(cli_common_option(&cli, common[j].val, arg) < 0);
				break;
			}
		}
	}
	cli.request_timeout_ms = 3000;
	if (cli_connect(&cli, NULL) == EXIT_OK &&
			kinf_discovery_load(cli.http, &dopts, &disc, NULL) == 0) {
		struct kinf_strv names = {0};
		for (size_t i = 0; i < kinf_discovery_count(disc); i++) {
			const struct kinf_resource *r = kinf_discovery_at(disc, i);
			bool listable = false;
			for (size_t v = 0; r->verbs && r->verbs[v]; v++) {
				listable |= strcmp(r->verbs[v], "list") == 0;
			}
			if (listable) {
				keep(c, kinf_strv_push_str(&names, r->resource));
			}
		}
		kinf_strv_sort_unique(&names);
		for (size_t i = 0; i < names.n; i++) {
			/* ",pods," in ",pods,de": already in the list */
			size_t n = strlen(names.v[i]);
			bool listed = false;
			for (const char *p = prefix; (p = strstr(p, names.v[i])) != NULL; p += n) {
				listed |= (p == prefix || p[-1] == ',') && p[n] == ',';
			}
			if (!listed) {
				offer(c, prefix, names.v[i], partial);
			}
		}
		kinf_strv_release(&names);
	}
	kinf_discovery_free(disc);
	cli_release(&cli);
	free(prefix);
}

static void offer_contexts(struct comp *c, const char *prefix, const char *partial) {
	struct kinf_kubeconfig_opts kc = { .kubeconfig = c->kubeconfig,
		.insecure_skip_tls_verify = -1 };
	char **names = NULL;
	if (kinf_kubeconfig_context_names(&kc, &names, NULL) == 0) {
		for (size_t i = 0; names[i]; i++) {
			offer(c, prefix, names[i], partial);
			free(names[i]);
		}
		free(names);
	}
}

/*
 * --by and --values: index names (built-in, label:, field:, --index ones)
 * and the label keys of the objects; after "INDEX=", the values the objects
 * have for it (labels, node, phase, namespace, owner).
 */
static void offer_indexes(struct comp *c, bool by, const char *prefix, const char *partial) {
	const char *eq = by ? strchr(partial, '=') : NULL;
	char *type = c->pos.n ? type_of(c->pos.v[0]) : NULL;
	char *text = NULL;

	if (!eq) {
		for (size_t i = 0; kinf_index_builtin_names[i]; i++) {
			offer(c, prefix, kinf_index_builtin_names[i], partial);
		}
		offer(c, prefix, "label:", partial);
		offer(c, prefix, "field:", partial);
		for (size_t i = 0; i < c->indexes.n; i++) {
			char *name = strndup(c->indexes.v[i], strcspn(c->indexes.v[i], "="));
			if (name) {
				offer(c, prefix, name, partial);
			}
			free(name);
		}
		if (by) {
			c->directive |= DIRECTIVE_NO_SPACE;	/* INDEX=VALUE follows */
		}
	}
	if (type) {
		const char *args[] = { "list", type, "-o",
			"jsonpath={range .items[*]}{.metadata.labels}{\"\\t\"}{.spec.nodeName}"
			"{\"\\t\"}{.status.phase}{\"\\t\"}{.metadata.namespace}{\"\\t\"}"
			"{range .metadata.ownerReferences[*]}{.kind}/{.name} {end}{\"\\n\"}{end}",
			NULL };
		text = ask_kinf(c, args, true);
	}
	struct kinf_buf idx = {0}, pre = {0};
	if (eq) {
		int r = kinf_buf_append(&idx, partial, (size_t)(eq - partial));
		if (r == 0) {
			r = kinf_buf_printf(&pre, "%s%s=", prefix, idx.data);
		}
		keep(c, r);
		if (r < 0) {
			kinf_buf_release(&idx);
			kinf_buf_release(&pre);
			free(text);
			free(type);
			return;
		}
	}
	const char *key = idx.data ? idx.data : "";
	struct kinf_strv found = {0};	/* keys, or values of the index */
	if (strncmp(key, "label:", 6) == 0) {
		key += 6;
	}
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next) {
			*next++ = '\0';
		}
		char *f[5] = { line };
		for (int i = 1; i < 5 && f[i - 1]; i++) {
			f[i] = strchr(f[i - 1], '\t');
			if (f[i]) {
				*f[i]++ = '\0';
			}
		}
		json_t *labels = f[0][0] ? json_loads(f[0], 0, NULL) : NULL;
		const char *k;
		json_t *v;
		if (!eq) {
			json_object_foreach(labels, k, v) {
				keep(c, kinf_strv_push_str(&found, k));
			}
		} else if (strcmp(idx.data, "node") == 0 || strcmp(idx.data, "phase") == 0 ||
				strcmp(idx.data, "namespace") == 0) {
			int col = idx.data[1] == 'o' ? 1 : idx.data[1] == 'h' ? 2 : 3;
			if (f[col] && f[col][0]) {
				keep(c, kinf_strv_push_str(&found, f[col]));
			}
		} else if (strcmp(idx.data, "owner") == 0) {
			for (char *o = f[4], *sp; o && *o; o = sp) {
				sp = strchr(o, ' ');
				if (sp) {
					*sp++ = '\0';
				}
				keep(c, kinf_strv_push_str(&found, o));
			}
		} else if (json_is_string(json_object_get(labels, key))) {
			keep(c, kinf_strv_push_str(&found,
					json_string_value(json_object_get(labels, key))));
		}
		json_decref(labels);
	}
	kinf_strv_sort_unique(&found);
	for (size_t i = 0; i < found.n; i++) {
		offer(c, eq ? pre.data : prefix, found.v[i], eq ? eq + 1 : partial);
	}
	kinf_strv_release(&found);
	kinf_buf_release(&idx);
	kinf_buf_release(&pre);
	free(text);
	free(type);
}

/* The -o formats of the command (struct cmd's formats). */
static void offer_formats(struct comp *c, const char *prefix, const char *partial) {
	unsigned formats = c->cmd ? c->cmd->formats : CLI_FORMATS_ALL;
	for (size_t i = 0; cli_format_names[i]; i++) {
		if (formats & CLI_FORMAT(cli_format_of_name[i])) {
			offer(c, prefix, cli_format_names[i], partial);
		}
	}
	c->directive |= DIRECTIVE_NO_SPACE;
}

/* The value of option o: partial is what is typed of it, after prefix. */
static void offer_value(struct comp *c, const struct opt *o, const char *prefix,
		const char *partial) {
	static const char *const files[] = {
		"kubeconfig", "certificate-authority", "from", "dump-on-exit", "write-kubeconfig", NULL,
	};
	static const char *const fors[] = { "create", "delete", "rollout", "condition=Ready",
		"condition=", "jsonpath=", NULL };
	static const char *const timestamps[] = { "none", "local", "utc", "rfc3339", NULL };
	static const char *const colors[] = { "auto", "always", "never", NULL };
	const char *const *fixed = NULL;

	for (size_t i = 0; files[i]; i++) {
		if (strcmp(o->name, files[i]) == 0) {
			c->directive = DIRECTIVE_DEFAULT;
			return;
		}
	}
	if (strcmp(o->name, "output") == 0) {
		offer_formats(c, prefix, partial);
	} else if (strcmp(o->name, "namespace") == 0) {
		offer_namespaces(c, prefix, partial);
	} else if (strcmp(o->name, "context") == 0) {
		offer_contexts(c, prefix, partial);
	} else if (strcmp(o->name, "by") == 0 || strcmp(o->name, "values") == 0) {
		offer_indexes(c, o->name[0] == 'b', prefix, partial);
	} else if (strcmp(o->name, "for") == 0) {
		fixed = fors;
		c->directive |= DIRECTIVE_NO_SPACE;
	} else if (strcmp(o->name, "timestamps") == 0) {
		fixed = timestamps;
	} else if (strcmp(o->name, "color") == 0) {
		fixed = colors;
	}
	for (size_t i = 0; fixed && fixed[i]; i++) {
		offer(c, prefix, fixed[i], partial);
	}
}

static void offer_operand(struct comp *c, const char *cur) {
	bool named = c->cmd == &cmd_list || c->cmd == &cmd_watch || c->cmd == &cmd_deltas;
	if (c->cmd == &cmd_version) {
		return;
	}
	if (c->pos.n == 0) {
		const char *slash = strchr(cur, '/');
		if (named && slash && slash != cur) {
			/* TYPE/NAME */
			char *type = strndup(cur, (size_t)(slash - cur));
			char *prefix = strndup(cur, (size_t)(slash - cur + 1));
			if (type && prefix) {
				offer_names(c, type, prefix, slash + 1);
			}
			free(type);
			free(prefix);
			return;
		}
		offer_resources(c, cur);
		return;
	}
	/* list takes names; watch and deltas one, not after TYPE/NAME. */
	if (named && !strchr(c->pos.v[0], '/') && (c->cmd == &cmd_list || c->pos.n == 1)) {
		offer_names(c, c->pos.v[0], "", cur);
		/* Not the names already on the line. */
		for (size_t i = 0; i < c->out.n; ) {
			bool given = false;
			for (size_t j = 1; j < c->pos.n; j++) {
				given |= strcmp(c->out.v[i], c->pos.v[j]) == 0;
			}
			if (given) {
				free(c->out.v[i]);
				memmove(&c->out.v[i], &c->out.v[i + 1], (c->out.n - i - 1) * sizeof(char *));
				c->out.n--;
			} else {
				i++;
			}
		}
	}
}

/*
 * An option word, in kubectl's grammar (flags.h): "--opt", "--opt=v",
 * "-A", "-A=false", "-nNS", "-n=NS", "-An NS": note it, or wait for its
 * value. A boolean set to false is not noted; an optional value (-v 2)
 * is skipped by *skip_integer.
 */
static void take_option(struct comp *c, const char *a, const struct opt **pending,
		bool *skip_integer) {
	*skip_integer = false;
	if (a[1] == '-') {
		const char *eq = strchr(a, '=');
		const struct opt *o = find_long(c, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		if (o && o->value && !eq) {
			*pending = o;
		} else if (o && (o->value || !eq || cli_parse_bool(eq + 1) == 1)) {
			note_option(c, o, eq ? eq + 1 : "");
		}
		*skip_integer = o && o->optional && !eq;
		return;
	}
	for (const char *s = a + 1; *s; s++) {
		const struct opt *o = find_short(c, *s);
		if (o && s[1] == '=' && s[2]) {
			if (o->value || o->optional || cli_parse_bool(s + 2) == 1) {
				note_option(c, o, s + 2);
			}
			return;
		}
		if (o && (o->value || o->optional)) {
			if (s[1]) {
				note_option(c, o, s + 1);
			} else if (o->value) {
				*pending = o;
			} else {
				*skip_integer = true;
			}
			return;
		}
		if (o) {
			note_option(c, o, "");
		}
	}
}

/* After an optional value's option (-v), whether word is its value. */
static bool optional_value(bool skip_integer, const char *word) {
	long ignored;
	return skip_integer && cli_parse_int32(word, &ignored);
}

/* Where the words before the current one are read up to, and what is pending. */
struct cursor {
	char **w;
	int n;				/* the words before the current one */
	int i;
	const struct opt *pending;	/* an option whose value comes next */
	bool skip_integer;		/* an optional value's option: an integer is its value */
};

/* The shared options before the command (they may come there too); i stops at the command. */
static void parse_global(struct comp *c, struct cursor *k) {
	for (; k->i < k->n; k->i++) {
		const char *a = k->w[k->i];
		if (k->pending) {
			note_option(c, k->pending, a);
			k->pending = NULL;
		} else if (optional_value(k->skip_integer, a)) {
			k->skip_integer = false;
		} else if (strcmp(a, "--") == 0) {
			k->i++;
			return;
		} else if (a[0] == '-' && a[1]) {
			take_option(c, a, &k->pending, &k->skip_integer);
		} else {
			return;
		}
	}
}

/* The command named by word (kinf get is kinf list), its options noted; NULL for none. */
static const struct cmd *command_of(struct comp *c, const char *word) {
	for (size_t k = 0; k < N_COMMANDS; k++) {
		if (strcmp(word, commands[k]->name) == 0) {
			c->cmd = commands[k];
		}
	}
	if (strcmp(word, "get") == 0) {
		c->cmd = &cmd_list;
	}
	if (c->cmd) {
		options_from_help(c, c->cmd->usage);
		if (c->cmd->more_usage) {
			options_from_help(c, c->cmd->more_usage);	/* the informer options */
		}
	}
	return c->cmd;
}

/* The command's words after it: options noted, operands kept in c->pos. */
static void parse_command(struct comp *c, struct cursor *k) {
	bool operands_only = false;
	k->skip_integer = false;	/* the command word came in between */
	for (k->i++; k->i < k->n; k->i++) {
		const char *a = k->w[k->i];
		if (k->pending) {
			note_option(c, k->pending, a);
			k->pending = NULL;
		} else if (!operands_only && optional_value(k->skip_integer, a)) {
			k->skip_integer = false;
		} else if (operands_only || a[0] != '-' || !a[1]) {
			keep(c, kinf_strv_push_str(&c->pos, a));
			k->skip_integer = false;
		} else if (strcmp(a, "--") == 0) {
			operands_only = true;
		} else {
			take_option(c, a, &k->pending, &k->skip_integer);
		}
	}
}

/* What completes cur, a word of the command: an option, its value or an operand. */
static void offer_in_command(struct comp *c, const struct opt *pending, const char *cur) {
	if (pending) {
		offer_value(c, pending, "", cur);
	} else if (cur[0] == '-' && cur[1] == '-' && strchr(cur, '=')) {
		const char *eq = strchr(cur, '=');
		const struct opt *o = find_long(c, cur + 2, (size_t)(eq - cur - 2));
		if (o && o->value) {
			struct kinf_buf prefix = {0};
			int r = kinf_buf_append(&prefix, cur, (size_t)(eq - cur + 1));
			keep(c, r);
			if (r == 0) {
				offer_value(c, o, prefix.data, eq + 1);
			}
			kinf_buf_release(&prefix);
		}
	} else if (cur[0] == '-') {
		for (size_t k = 0; k < c->n_opts; k++) {
			struct kinf_buf b = {0};
			int r = kinf_buf_printf(&b, "--%s", c->opts[k].name);
			keep(c, r);
			if (r == 0) {
				offer(c, "", b.data, cur);
			}
			kinf_buf_release(&b);
		}
	} else {
		offer_operand(c, cur);
	}
}

/* What completes cur in place of the command: a global option or a command name. */
static void offer_command(struct comp *c, const char *cur) {
	if (cur[0] == '-') {
		offer(c, "", "--help", cur);
		offer(c, "", "--version", cur);
		return;
	}
	for (size_t k = 0; k < N_COMMANDS; k++) {
		offer(c, "", commands[k]->name, cur);
	}
	offer(c, "", "help", cur);
}

/* The candidates and the directive on stdout, as cobra's __complete prints them. */
static int print_candidates(struct comp *c) {
	if (c->rc < 0) {
		fprintf(stderr, "kinf: __complete: out of memory\n");
	}
	for (size_t k = 0; c->rc == 0 && k < c->out.n; k++) {
		printf("%s\n", c->out.v[k]);
	}
	printf(":%d\n", c->directive);
	kinf_strv_release(&c->out);
	kinf_strv_release(&c->pos);
	kinf_strv_release(&c->conn);
	kinf_strv_release(&c->indexes);
	free(c->opts);
	return EXIT_OK;
}

static int run_complete(int argc, char **argv) {
	struct comp c = { .directive = DIRECTIVE_NO_FILE_COMP };
	const char *cur = argc > 1 ? argv[argc - 1] : "";
	struct cursor k = { .w = argv + 1, .n = argc > 1 ? argc - 2 : 0 };

	/* Candidates go to stdout; errors of what is asked go nowhere. */
	if (!freopen("/dev/null", "w", stderr)) {
		return EXIT_ERROR;
	}
	options_from_help(&c, cli_common_usage);
	parse_global(&c, &k);
	if (k.pending) {
		offer_value(&c, k.pending, "", cur);
	} else if (k.i >= k.n) {
		offer_command(&c, cur);
	} else if (strcmp(k.w[k.i], "help") == 0) {
		for (size_t j = 0; k.n == k.i + 1 && j < N_COMMANDS; j++) {
			offer(&c, "", commands[j]->name, cur);
		}
	} else if (command_of(&c, k.w[k.i])) {
		parse_command(&c, &k);
		offer_in_command(&c, k.pending, cur);
	}
	return print_candidates(&c);
}

const struct cmd cmd_complete = {
	.name = "__complete",
	.summary = "shell completion candidates (hidden)",
	.usage = "Usage: kinf __complete WORD... CURRENT\n",
	.run = run_complete,
};
