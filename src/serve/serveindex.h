#ifndef KINF_SERVEINDEX_H
#define KINF_SERVEINDEX_H

/*
 * serveindex.c, a handler of serve/: kinf's index path.
 */
#include "serveint.h"

/* The kinf index path's answer for c (synced, namespace served). */
void serve_index(struct serve_request *r, struct serve_coll *c);

#endif
