#include <stdio.h>
#include <string.h>

#include "urlquery.h"

void kinf_urlquery_start(struct kinf_urlquery *q, struct kinf_buf *buf, const char *path) {
	q->buf = buf;
	q->sep = strchr(path, '?') ? '&' : '?';
	kinf_buf_reset(buf);
	q->rc = kinf_buf_append_str(buf, path);
}

void kinf_urlquery_add(struct kinf_urlquery *q, const char *name, const char *value) {
	if (q->rc < 0 || !value || !value[0]) {
		return;
	}
	q->rc = kinf_buf_printf(q->buf, "%c%s=", q->sep, name);
	if (q->rc == 0) {
		q->rc = kinf_buf_append_urlenc(q->buf, value);
	}
	q->sep = '&';
}

void kinf_urlquery_add_long(struct kinf_urlquery *q, const char *name, long value) {
	char n[32];

	snprintf(n, sizeof(n), "%ld", value);
	kinf_urlquery_add(q, name, n);
}

int kinf_urlquery_finish(const struct kinf_urlquery *q) {
	return q->rc;
}
