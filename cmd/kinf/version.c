#include <jansson.h>
#include <string.h>

#include "common.h"
#include "http.h"

static const char version_usage[] =
	"Usage: kinf version [OPTIONS]\n"
	"\n"
	"Print kinf's version and, when a cluster is reachable, the server's\n"
	"(GET /version).\n"
	"\n"
	"Version options:\n"
	"      --client                   do not contact a server\n"
	"  -o json                        {\"clientVersion\":...,\"serverVersion\":...}\n";

enum { OPT_CLIENT = OPT_CMD_FIRST };

static const struct option version_options[] = {
	CLI_COMMON_OPTIONS,
	{ "client", no_argument, NULL, OPT_CLIENT },
	{ NULL, 0, NULL, 0 },
};

static int run_version(int argc, char **argv) {
	struct cli cli;
	struct kinf_error err = {0};
	struct kinf_http_response resp = {0};
	bool client_only = false;
	int opt, status = EXIT_OK;

	cli_init(&cli, &cmd_version);
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":" CLI_COMMON_SHORT, version_options, NULL)) != -1) {
		if (opt == 'h') {
			cli_print_help(&cmd_version);
			return EXIT_OK;
		}
		if (opt == OPT_CLIENT) {
			client_only = true;
			continue;
		}
		int r = cli_common_option(&cli, opt, optarg);
		if (r < 0) {
			return -r;
		}
		if (r == 0) {
			return cli_bad_option(&cli, argc, argv, version_options);
		}
	}
	if (optind < argc) {
		return cli_usage_error(&cli, "version takes no arguments");
	}
	bool json = cli.format == KINF_OUTPUT_JSON;
	if (cli.format != KINF_OUTPUT_JSON && cli.format != KINF_OUTPUT_TABLE) {
		return cli_usage_error(&cli, "version prints text or -o json");
	}
	json_t *server = NULL;
	if (!client_only) {
		status = cli_connect(&cli, NULL);
		if (status == EXIT_OK) {
			struct kinf_http_request req = { .path = "/version" };
			int rc = kinf_http_get(cli.http, &req, &resp, &err);
			if (rc == 0) {
				server = json_loadb(resp.body.data, resp.body.len, 0, NULL);
			}
			if (!json_is_object(server)) {
				if (rc == 0) {
					kinf_error_set(&err, KINF_EJSON, "/version: not a JSON object");
					rc = -KINF_EJSON;
				}
				json_decref(server);
				server = NULL;
				status = cli_error(&cli, rc, &err, "server version");
			}
		}
	}
	if (json) {
		json_t *out = json_pack("{s:{s:s}}", "clientVersion", "gitVersion", KINF_VERSION);
		if (server) {
			json_object_set(out, "serverVersion", server);
		}
		char *s = json_dumps(out, JSON_COMPACT);
		if (s) {
			puts(s);
		}
		free(s);
		json_decref(out);
	} else {
		printf("Client Version: kinf %s\n", KINF_VERSION);
		const char *gv = json_string_value(json_object_get(server, "gitVersion"));
		if (gv) {
			printf("Server Version: %s\n", gv);
		}
	}
	json_decref(server);
	kinf_http_response_release(&resp);
	cli_release(&cli);
	return status;
}

const struct cmd cmd_version = {
	.name = "version",
	.summary = "print kinf's version and the server's",
	.usage = version_usage,
	.run = run_version,
	.options = version_options,
};
