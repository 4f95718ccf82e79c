#ifndef KINF_URLQUERY_H
#define KINF_URLQUERY_H

#include "buf.h"

/*
 * A request path with query parameters, the one builder both the list and
 * the watch requests use. Appending cannot be forgotten to check: the
 * first failure sticks, the later calls do nothing, and
 * kinf_urlquery_finish() reports it.
 *
 *	struct kinf_urlquery q;
 *	kinf_urlquery_start(&q, &path, "/api/v1/pods");
 *	kinf_urlquery_add(&q, "labelSelector", sel);	// skipped when NULL or ""
 *	kinf_urlquery_add_long(&q, "limit", 500);
 *	rc = kinf_urlquery_finish(&q);
 */
struct kinf_urlquery {
	struct kinf_buf *buf;
	char sep;
	int rc;
};

/* Reset buf to path; a path that has a '?' already gets '&' next. */
void kinf_urlquery_start(struct kinf_urlquery *q, struct kinf_buf *buf, const char *path);
/* name=value, the value percent-encoded; nothing when value is NULL or "". */
void kinf_urlquery_add(struct kinf_urlquery *q, const char *name, const char *value);
void kinf_urlquery_add_long(struct kinf_urlquery *q, const char *name, long value);
/* 0, or the first append's error (the path is then unusable). */
KINF_MUST_CHECK int kinf_urlquery_finish(const struct kinf_urlquery *q);

#endif
