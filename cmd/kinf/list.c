#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "http.h"
#include "pager.h"

static const char list_usage[] =
	"Usage: kinf list RESOURCE [NAME...] [OPTIONS]\n"
	"\n"
	"List a resource as one consistent, paginated list (the reflector's list\n"
	"phase) and print it sorted by namespace and name.\n"
	"\n"
	"Examples:\n"
	"  kinf list pods -n default\n"
	"  kinf list deploy -A -o wide\n"
	"  kinf list pods -l app=web -o json | jq .metadata.name\n"
	"  kinf list nodes -o name\n"
	"  kinf list pods -o jsonpath='{range .items[*]}{.metadata.name}{\"\\n\"}{end}'\n"
	"  kinf list pods -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName\n"
	"\n";

static const struct option list_options[] = {
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static bool name_wanted(char **names, int n, const char *name) {
	if (n == 0) {
		return true;
	}
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i], name) == 0) {
			return true;
		}
	}
	return false;
}

/* The item kind a list's kind implies: "PodList" -> "Pod". */
static char *item_kind(const struct kinf_resource *res) {
	return strdup(res->kind);
}

static char *api_version_of(const struct kinf_resource *res) {
	struct kinf_buf b = {0};
	if (res->group[0]) {
		kinf_buf_printf(&b, "%s/%s", res->group, res->version);
	} else {
		kinf_buf_append_str(&b, res->version);
	}
	return kinf_buf_take(&b);
}

/* With names given: a field selector on metadata.name when there is one name. */
static int print_objects(struct cli *cli, struct kinf_list_result *res,
		char **names, int n_names) {
	char *api_version = api_version_of(cli->res);
	char *kind = item_kind(cli->res);
	struct kinf_error err = {0};
	bool first = true;
	int rc = 0;

	for (size_t i = 0; i < res->items.n && rc == 0; i++) {
		struct kinf_object *obj = res->items.v[i];
		if (!name_wanted(names, n_names, kinf_object_name(obj))) {
			continue;
		}
		if (cli->format == KINF_OUTPUT_NAME) {
			cli_print_name(cli->res, obj, stdout);
			continue;
		}
		struct kinf_object *typed = kinf_object_with_type(obj, api_version, kind);
		if (!typed) {
			rc = -KINF_ENOMEM;
			break;
		}
		size_t len;
		const char *json = kinf_object_json(typed, &len);
		if (cli->format == KINF_OUTPUT_JSON) {
			fwrite(json, 1, len, stdout);
			fputc('\n', stdout);
		} else {
			if (!first) {
				fputs("---\n", stdout);
			}
			rc = kinf_output_yaml(stdout, json, len, &err);
		}
		first = false;
		kinf_object_unref(typed);
	}
	free(api_version);
	free(kind);
	if (rc < 0) {
		return cli_error(cli, rc, &err, "output");
	}
	return EXIT_OK;
}

/* -o jsonpath / custom-columns: over a List, or the one object asked for by name. */
static int print_templated(struct cli *cli, struct kinf_list_result *res,
		char **names, int n_names) {
	char *api_version = api_version_of(cli->res);
	struct kinf_object **typed = calloc(res->items.n + 1, sizeof(*typed));
	size_t n = 0;
	int status;

	for (size_t i = 0; typed && i < res->items.n; i++) {
		if (name_wanted(names, n_names, kinf_object_name(res->items.v[i]))) {
			typed[n] = kinf_object_with_type(res->items.v[i], api_version, cli->res->kind);
			if (typed[n]) {
				n++;
			}
		}
	}
	status = typed ? cli_print_templated(cli, typed, n, n_names == 1, stdout) : EXIT_ERROR;
	for (size_t i = 0; i < n; i++) {
		kinf_object_unref(typed[i]);
	}
	free(typed);
	free(api_version);
	return status;
}

static int print_table(struct cli *cli, struct kinf_list_result *res,
		char **names, int n_names) {
	struct kinf_error err = {0};
	struct kinf_table_row *rows = res->rows;
	size_t n = res->n_rows;
	int rc;

	if (n_names > 0) {
		/* Keep only the named rows, in key order. */
		size_t out = 0;
		for (size_t i = 0; i < n; i++) {
			const char *slash = strrchr(rows[i].key, '/');
			const char *name = slash ? slash + 1 : rows[i].key;
			if (name_wanted(names, n_names, name)) {
				struct kinf_table_row tmp = rows[out];
				rows[out++] = rows[i];
				rows[i] = tmp;
			}
		}
		n = out;
	}
	if (n == 0 && n_names > 0) {
		return EXIT_OK;	/* each missing name was reported already */
	}
	if (n == 0) {
		if (cli->namespace) {
			fprintf(stderr, "No resources found in %s namespace.\n", cli->namespace);
		} else {
			fprintf(stderr, "No resources found\n");
		}
		return EXIT_OK;
	}
	rc = kinf_output_server_table(stdout, res->columns_json, rows, n,
			cli->format == KINF_OUTPUT_WIDE, cli->all_namespaces && cli->res->namespaced,
			cli->no_headers, &err);
	if (rc < 0) {
		return cli_error(cli, rc, &err, "output");
	}
	return EXIT_OK;
}

/*
 * A progress line on stderr while a long list comes in, when stderr is a
 * terminal: "listed 42,000 pods (84 pages)...", erased when done.
 */
struct progress {
	const char *what;
	bool shown;
};

static void on_page(unsigned pages, size_t items, void *userdata) {
	struct progress *p = userdata;
	if (pages < 2 || !isatty(STDERR_FILENO)) {
		return;
	}
	char num[32];
	cli_group_thousands(items, num, sizeof(num));
	fprintf(stderr, "\rlisted %s %s (%u pages)...\033[K", num, p->what, pages);
	p->shown = true;
}

static int run_list(int argc, char **argv) {
	struct cli cli;
	struct kinf_list_result result = {0};
	struct kinf_error err = {0};
	char *path = NULL;
	int opt, status;

	cli_init(&cli, &cmd_list);
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":" CLI_COMMON_SHORT, list_options, NULL)) != -1) {
		if (opt == 'h') {
			cli_print_help(&cmd_list);
			return EXIT_OK;
		}
		int r = cli_common_option(&cli, opt, optarg);
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&cli, argc, argv, list_options);
		}
	}
	/* getopt_long moved the positional arguments to the end. */
	char **pos = argv + optind;
	int n_pos = argc - optind;
	if (n_pos < 1) {
		return cli_usage_error(&cli, "list needs a resource type, e.g. 'kinf list pods'");
	}
	status = cli_connect(&cli, pos[0]);
	if (status != EXIT_OK) {
		goto out;
	}
	path = kinf_resource_path(cli.res, cli.namespace);
	struct progress progress = { .what = cli.res->resource };
	const char *field_selector = cli.field_selector;
	char *name_selector = NULL;
	if (n_pos == 2 && !field_selector) {
		/* One name: let the server filter, as kubectl's get does by name. */
		struct kinf_buf b = {0};
		kinf_buf_printf(&b, "metadata.name=%s", pos[1]);
		name_selector = kinf_buf_take(&b);
		field_selector = name_selector;
	}
	struct kinf_list_opts lopts = {
		.path = path,
		.label_selector = cli.label_selector,
		.field_selector = field_selector,
		.limit = cli.chunk_size,
		.table = cli.format == KINF_OUTPUT_TABLE || cli.format == KINF_OUTPUT_WIDE,
		.limits = cli.limits,
		.on_page = on_page,
		.userdata = &progress,
	};
	int rc = kinf_list(cli.http, &lopts, &result, &err);
	if (progress.shown) {
		fputs("\r\033[K", stderr);
	}
	free(name_selector);
	if (rc < 0) {
		status = cli_error(&cli, rc, &err, NULL);
		goto out;
	}
	if (n_pos > 1) {
		/* Every name asked for must exist, as kubectl get reports NotFound. */
		for (int i = 1; i < n_pos; i++) {
			bool found = false;
			for (size_t j = 0; j < result.items.n && !found; j++) {
				found = strcmp(kinf_object_name(result.items.v[j]), pos[i]) == 0;
			}
			for (size_t j = 0; j < result.n_rows && !found; j++) {
				const char *slash = strrchr(result.rows[j].key, '/');
				found = strcmp(slash ? slash + 1 : result.rows[j].key, pos[i]) == 0;
			}
			if (!found) {
				fprintf(stderr, "kinf: %s \"%s\" not found\n", cli.res->resource, pos[i]);
				status = EXIT_ERROR;
			}
		}
	}
	int pstatus = lopts.table ? print_table(&cli, &result, pos + 1, n_pos - 1) :
		cli.format == KINF_OUTPUT_JSONPATH || cli.format == KINF_OUTPUT_CUSTOM_COLUMNS ?
		print_templated(&cli, &result, pos + 1, n_pos - 1) :
		print_objects(&cli, &result, pos + 1, n_pos - 1);
	if (status == EXIT_OK) {
		status = pstatus;
	}
out:
	kinf_list_result_release(&result);
	free(path);
	cli_release(&cli);
	return status;
}

const struct cmd cmd_list = {
	.name = "list",
	.summary = "list a resource once, consistently, sorted by key",
	.usage = list_usage,
	.run = run_list,
};
