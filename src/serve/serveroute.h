#ifndef KINF_SERVEROUTE_H
#define KINF_SERVEROUTE_H

/*
 * serveroute.c, the top of serve/: every request routed to what answers
 * it (a handler, the upstream, or an answer of its own).
 */
#include "serveint.h"

/* The httpd handler. */
void serve_handle(struct kinf_httpd_req *req, void *userdata);

#endif
