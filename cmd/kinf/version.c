#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buildinfo.h"
#include "common.h"
#include "http.h"
#include "toyaml.h"

static const char version_usage[] =
	"Usage: kinf version [OPTIONS]\n"
	"\n"
	"Print kinf's version and, when a cluster is reachable, the server's\n"
	"(GET /version).\n"
	"\n"
	"Version options:\n"
	"      --client                   do not contact a server\n"
	"  -o json                        {\"clientVersion\":...,\"serverVersion\":...} on one\n"
	"                                 line, the fields of kubectl version -o json\n"
	"  -o yaml                        the same as YAML, as kubectl version -o yaml\n";

enum { OPT_CLIENT = OPT_CMD_FIRST };

static const struct option version_options[] = {
	CLI_COMMON_OPTIONS,
	{ "client", no_argument, NULL, OPT_CLIENT },
	{ NULL, 0, NULL, 0 },
};

/* The compiler, as kubectl's goVersion names Go's: "gcc 12.2.0". */
static const char *compiler(void) {
#if defined(__clang__)
	return "clang " __clang_version__;
#elif defined(__GNUC__)
	return "gcc " __VERSION__;
#else
	return "unknown";
#endif
}

/* GOOS/GOARCH, as kubectl's platform: "linux/amd64". */
static const char *platform(void) {
#if defined(__linux__)
#define OS "linux"
#elif defined(__APPLE__)
#define OS "darwin"
#elif defined(__FreeBSD__)
#define OS "freebsd"
#else
#define OS "unknown"
#endif
#if defined(__x86_64__)
	return OS "/amd64";
#elif defined(__aarch64__)
	return OS "/arm64";
#elif defined(__i386__)
	return OS "/386";
#elif defined(__arm__)
	return OS "/arm";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
	return OS "/ppc64le";
#elif defined(__s390x__)
	return OS "/s390x";
#elif defined(__riscv) && __riscv_xlen == 64
	return OS "/riscv64";
#else
	return OS "/unknown";
#endif
#undef OS
}

/*
 * kubectl's clientVersion (version.Info) for kinf: major and minor from
 * the version, gitVersion "v" + version, the commit, tree state and commit
 * date meson took from git (empty in a build from a tarball), and the
 * compiler where kubectl has goVersion and compiler.
 */
static json_t *client_version(void) {
	char major[16] = "", minor[16] = "";
	char gitv[64];
	const char *v = KINF_VERSION;
	size_t n = strcspn(v, ".");
	snprintf(major, sizeof(major), "%.*s", (int)n, v);
	if (v[n] == '.') {
		snprintf(minor, sizeof(minor), "%.*s", (int)strcspn(v + n + 1, "."), v + n + 1);
	}
	snprintf(gitv, sizeof(gitv), "v%s", v);

	/* "COMMIT|TREESTATE|DATE" */
	const char *info = KINF_BUILD_INFO;
	const char *bar1 = strchr(info, '|');
	const char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
	char commit[64] = "", state[16] = "", date[32] = "";
	if (bar1 && bar2) {
		snprintf(commit, sizeof(commit), "%.*s", (int)(bar1 - info), info);
		snprintf(state, sizeof(state), "%.*s", (int)(bar2 - bar1 - 1), bar1 + 1);
		snprintf(date, sizeof(date), "%s", bar2 + 1);
	}
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}",
		"major", major, "minor", minor, "gitVersion", gitv,
		"gitCommit", commit, "gitTreeState", state, "buildDate", date,
		"compiler", compiler(), "platform", platform());
}

/* What kinf version was asked for. */
struct version_args {
	struct cli cli;
	bool client_only;
	bool help;		/* --help was printed */
	int n_pos;
};

/* Parse argv into a. EXIT_OK, or the status of a usage error (printed). */
static int version_parse(struct version_args *a, int argc, char **argv) {
	int opt;

	cli_init(&a->cli, &cmd_version);
	optind = 0;
	while ((opt = cli_getopt(argc, argv, ":" CLI_COMMON_SHORT, version_options)) != -1) {
		if (opt == 'h') {
			cli_print_help(&cmd_version);
			a->help = true;
			return EXIT_OK;
		}
		if (opt == OPT_CLIENT) {
			a->client_only = true;
			continue;
		}
		int r = cli_common_option(&a->cli, opt, optarg);
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&a->cli, version_options);
		}
	}
	a->n_pos = argc - optind;
	return EXIT_OK;
}

static int version_check(struct version_args *a) {
	if (a->n_pos) {
		return cli_usage_error(&a->cli, "version takes no arguments");
	}
	return EXIT_OK;
}

/*
 * The server's /version object into *ret (NULL when it could not be
 * had). EXIT_OK, or the status of the error (printed).
 */
static int server_version(struct cli *cli, json_t **ret) {
	struct kinf_error err = {0};
	struct kinf_http_response resp = {0};
	json_t *server = NULL;
	int status = cli_connect(cli, NULL);

	if (status == EXIT_OK) {
		struct kinf_http_request req = { .path = "/version" };
		int rc = kinf_http_get(cli->http, &req, &resp, &err);
		if (rc == 0) {
			server = json_loadb(resp.body.data, resp.body.len, 0, NULL);
		}
		if (!json_is_object(server)) {
			if (rc == 0) {
				rc = kinf_error_set(&err, KINF_EJSON, "/version: not a JSON object");
			}
			json_decref(server);
			server = NULL;
			status = cli_error(cli, rc, &err, "server version");
		}
	}
	kinf_http_response_release(&resp);
	*ret = server;
	return status;
}

/* The versions as -o json or yaml print them (kubectl's shape). status: so far. */
static int print_versions_as_data(struct cli *cli, json_t *server, int status) {
	struct kinf_error err = {0};
	bool yaml = cli->format == KINF_OUTPUT_YAML;
	json_t *out = json_object();
	json_object_set_new(out, "clientVersion", client_version());
	if (server) {
		json_object_set(out, "serverVersion", server);
	}
	/* kubectl's YAML has its keys sorted; its JSON, the struct's order. */
	char *s = json_dumps(out, JSON_COMPACT | (yaml ? JSON_SORT_KEYS : 0));
	if (!s) {
		status = cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	} else if (!yaml) {
		puts(s);
	} else if (kinf_toyaml_write(stdout, s, strlen(s), &err) < 0) {
		status = cli_error(cli, -KINF_EJSON, &err, "output");
	}
	free(s);
	json_decref(out);
	return status;
}

static int run_version(int argc, char **argv) {
	struct version_args a = {0};
	json_t *server = NULL;
	int status = version_parse(&a, argc, argv);

	if (status != EXIT_OK || a.help || (status = version_check(&a)) != EXIT_OK) {
		cli_release(&a.cli);
		return status;
	}
	if (!a.client_only) {
		status = server_version(&a.cli, &server);
	}
	if (a.cli.format == KINF_OUTPUT_JSON || a.cli.format == KINF_OUTPUT_YAML) {
		status = print_versions_as_data(&a.cli, server, status);
	} else {
		printf("Client Version: kinf %s\n", KINF_VERSION);
		const char *gv = json_string_value(json_object_get(server, "gitVersion"));
		if (gv) {
			cli_printf_safe(stdout, "Server Version: %s", gv);
		}
	}
	json_decref(server);
	cli_release(&a.cli);
	return status;
}

const struct cmd cmd_version = {
	.name = "version",
	.summary = "print kinf's version and the server's",
	.usage = version_usage,
	.run = run_version,
	.options = version_options,
	.formats = CLI_FORMAT(KINF_OUTPUT_JSON) | CLI_FORMAT(KINF_OUTPUT_YAML),
};
