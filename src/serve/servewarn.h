#ifndef KINF_SERVEWARN_H
#define KINF_SERVEWARN_H

/*
 * servewarn.c, a leaf of serve/: the upstream's Warnings on the
 * informers' requests, kept per collection and passed on.
 */
#include "serveint.h"

struct serve_upwarn {
	char *text;
	size_t len;
	long long seen_ms;
};
/*
 * Append c's upstream Warnings (those still sent) as Warning header lines
 * to out, each text once: none already in seen (texts, appended to).
 */
void serve_coll_warnings(struct serve_coll *c, struct kinf_strv *seen, struct kinf_buf *out);
/* Free c's upstream Warnings. */
void serve_coll_warnings_release(struct serve_coll *c);
/* One Warning header line of text, escaped as NewWarningHeader escapes it. */
void serve_warning_line(struct kinf_buf *out, const char *text, size_t len);

#endif
