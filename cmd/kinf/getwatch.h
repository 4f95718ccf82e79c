#ifndef KINF_CMD_GETWATCH_H
#define KINF_CMD_GETWATCH_H

#include <stdbool.h>

#include "common.h"

/*
 * kinf list -w (and --watch-only): kubectl get -w. One list, printed
 * unless watch_only, then a watch from its resourceVersion printed as
 * kubectl prints a watch: in tables the server's columns (its Table rows,
 * the watch's as well), the header once, EVENT first with
 * output_watch_events; -o json and yaml the objects, or with
 * output_watch_events {"type","object"}; -o yaml's documents separated by
 * "---". Not an informer: kinf watch is that.
 */
struct getwatch_opts {
	const char *name;		/* one NAME, or NULL: every object */
	bool watch_only;		/* --watch-only */
	bool output_watch_events;	/* --output-watch-events */
	const struct kinf_label_columns *labels;	/* -L, --show-labels, or NULL */
};

/*
 * Run it with cli connected (cli->res the type). Prints errors; returns
 * the exit status: 0 when the output ended it (a closed pipe), 1 when the
 * server did (an ERROR event, a failed request).
 */
KINF_MUST_CHECK int getwatch_run(struct cli *cli, const struct getwatch_opts *opts);

#endif
