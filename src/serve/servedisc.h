#ifndef KINF_SERVEDISC_H
#define KINF_SERVEDISC_H

/*
 * servedisc.c, a handler of serve/: discovery of what the caches serve.
 */
#include "serveint.h"

/* /api, /apis, /apis/G, /api/v1, /apis/G/V for context r->ctx. */
void serve_discovery(struct serve_request *r);

#endif
