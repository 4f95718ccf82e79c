#ifndef KINF_SERVEWATCH_H
#define KINF_SERVEWATCH_H

/*
 * servewatch.c, a handler of serve/: the watch clients of a collection.
 */
#include "serveint.h"

/* c's watch clients in turn: the first after NULL, then the next; NULL at the end. */
const struct serve_watch *serve_coll_next_watch(const struct serve_coll *c,
		const struct serve_watch *w);
/* A watch client's unsent events, bytes queued on its connection, and its id (/metrics). */
unsigned long long serve_watch_unsent(const struct serve_watch *w);
size_t serve_watch_queued(const struct serve_watch *w);
unsigned long long serve_watch_id(const struct serve_watch *w);
void serve_watch(struct serve_request *r, struct serve_coll *c);
/*
 * A watch the cache could not start in time: 200, an ERROR event with the
 * 504 Status, the end (the apiserver's errWatcher).
 */
void serve_watch_too_large(struct serve_request *r, const char *rv, unsigned long long current);
/* Append ev to the window and pass it to the watch clients. */
void serve_coll_push(struct serve_coll *c, struct serve_event *ev);
/* End every watch of c (stop) with its last chunk. */
void serve_coll_end_watches(struct serve_coll *c);

#endif
