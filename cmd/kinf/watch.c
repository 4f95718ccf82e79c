#include "common.h"

static int run_watch(int argc, char **argv) {
	return cli_usage_error(NULL, "watch: coming in the informer work");
}

const struct cmd cmd_watch = {
	.name = "watch",
	.summary = "watch",
	.usage = "Usage: kinf watch\n",
	.run = run_watch,
};
