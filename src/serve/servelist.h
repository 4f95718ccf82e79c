#ifndef KINF_SERVELIST_H
#define KINF_SERVELIST_H

/*
 * servelist.c, a handler of serve/: get and list from a collection's
 * store, limit and continue over a snapshot.
 */
#include "serveint.h"

/*
 * A continue token's snapshot (servelist.c): kept for SERVE_CONTINUE_TTL_MS
 * or until its last page is served. Each client (connection) may keep
 * SERVE_CONTINUE_PER_CLIENT; its next one replaces its own oldest, never
 * another client's. Past SERVE_CONTINUE_MAX tokens or SERVE_CONTINUE_REFS
 * object references in all, a new list is not paged (limit is ignored,
 * as ListOptions allows) rather than any token expired.
 */
struct serve_continue {
	struct serve_continue *next;
	unsigned long long id;
	unsigned long long owner;	/* the connection that made it */
	struct serve_snap *snap;
	long long created_ms;
};

#define SERVE_CONTINUE_TTL_MS (5 * 60 * 1000)
#define SERVE_CONTINUE_PER_CLIENT 4
#define SERVE_CONTINUE_MAX 1024
#define SERVE_CONTINUE_REFS (4u << 20)

void serve_get(struct serve_request *r, struct serve_coll *c);
void serve_list(struct serve_request *r, struct serve_coll *c);
/* Drop the continue tokens. */
void serve_snapshots_release(struct kinf_serve *srv);
/* Continue tokens not yet expired, and the objects their snapshots hold. */
size_t serve_snapshots_live(struct kinf_serve *srv, size_t *ret_objects);

#endif
