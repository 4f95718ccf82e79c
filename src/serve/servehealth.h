#ifndef KINF_SERVEHEALTH_H
#define KINF_SERVEHEALTH_H

/*
 * servehealth.c, with the router at the top of serve/: the answers that
 * are not about one resource type: health and metrics.
 */
#include "serveint.h"

/*
 * /healthz and /livez (ready false): the process answers. /readyz:
 * every collection synced and every upstream reachable.
 */
void serve_health(struct serve_request *r, bool ready);
/* /metrics, in Prometheus' text format. */
void serve_metrics(struct serve_request *r);

#endif
