#ifndef KINF_SERVEPROXY_H
#define KINF_SERVEPROXY_H

/*
 * serveproxy.c, a handler of serve/: what goes upstream instead of the
 * caches' answer, relayed by a worker thread each.
 */
#include "serveint.h"

enum {
	SERVE_FORWARD_COLLECT = 1,	/* the whole answer first (small ones serve rewrites) */
	SERVE_FORWARD_VERSION = 2,	/* /version: remembered; kinf's own in a header */
	SERVE_FORWARD_OPENAPI_INDEX = 4,	/* /openapi/v3: its URLs under the context's prefix */
};
/*
 * Forward r (a GET) to its context's upstream: the path after the
 * context's prefix, the query and Accept as they came; answered from the
 * worker's posts later (r's request is kept, r itself is not). flags:
 * SERVE_FORWARD_*.
 */
void serve_forward(struct serve_request *r, unsigned flags);
/*
 * After the loop stopped: interrupt the forwarded requests, wait for
 * their workers and free the idle clients (the contexts' clients may go
 * after it).
 */
void serve_proxies_end(struct kinf_serve *srv);

#endif
