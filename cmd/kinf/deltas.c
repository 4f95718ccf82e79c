#include "common.h"

static int run_deltas(int argc, char **argv) {
	return cli_usage_error(NULL, "deltas: coming in the informer work");
}

const struct cmd cmd_deltas = {
	.name = "deltas",
	.summary = "deltas",
	.usage = "Usage: kinf deltas\n",
	.run = run_deltas,
};
