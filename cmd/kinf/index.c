#include "common.h"

static int run_index(int argc, char **argv) {
	return cli_usage_error(NULL, "index: coming in the informer work");
}

const struct cmd cmd_index = {
	.name = "index",
	.summary = "index",
	.usage = "Usage: kinf index\n",
	.run = run_index,
};
