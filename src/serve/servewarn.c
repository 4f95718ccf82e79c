#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "servewarn.h"

/*
 * servewarn.c: the upstream's Warning headers passed on. A list or watch
 * response of a source's informer may carry warnings (a deprecated API
 * version, an admission policy's word): the answers serve makes from that
 * collection carry them too, as the upstream's own answers would, each
 * text once, for as long as the upstream keeps sending it: a text not
 * heard again for KEEP_MS (longer than a watch lasts, 5 to 10 minutes,
 * so one sent with every request stays) is dropped. A hostile upstream
 * cannot grow this: at most MAX_TEXTS texts of at most MAX_TEXT_BYTES a
 * collection (the oldest goes).
 */

#define KEEP_MS (15LL * 60 * 1000)
#define MAX_TEXTS 16
#define MAX_TEXT_BYTES 4096

struct warn_post {
	struct kinf_serve *srv;
	size_t source;
	size_t len;
	char text[];
};

static void apply_warning(void *arg) {
	struct warn_post *w = arg;
	struct serve_coll *c = w->srv->sources[w->source].coll;
	long long now = kinf_clock_now_ms();
	struct serve_upwarn *slot = NULL;

	for (size_t i = 0; i < c->n_upwarn && !slot; i++) {
		if (c->upwarn[i].len == w->len && memcmp(c->upwarn[i].text, w->text, w->len) == 0) {
			slot = &c->upwarn[i];
		}
	}
	if (!slot) {
		char *text = malloc(w->len + 1);
		if (!text) {
			free(w);
			return;		/* out of memory: that warning is not passed on */
		}
		memcpy(text, w->text, w->len + 1);
		if (!c->upwarn && !(c->upwarn = calloc(MAX_TEXTS, sizeof(*c->upwarn)))) {
			free(text);
			free(w);
			return;
		}
		if (c->n_upwarn == MAX_TEXTS) {
			free(c->upwarn[0].text);
			memmove(c->upwarn, c->upwarn + 1, (MAX_TEXTS - 1) * sizeof(*c->upwarn));
			c->n_upwarn--;
		}
		slot = &c->upwarn[c->n_upwarn++];
		slot->text = text;
		slot->len = w->len;
		if (w->srv->opts.log) {
			struct kinf_buf line = {0};
			kinf_buf_putf(&line, "upstream warning for %s%s%s: ", c->resource,
					c->group[0] ? "." : "", c->group);
			kinf_buf_put(&line, text, w->len);
			if (!kinf_buf_error(&line)) {
				w->srv->opts.log(line.data, w->srv->opts.log_data);
			}
			kinf_buf_release(&line);
		}
	}
	slot->seen_ms = now;
	free(w);
}

int kinf_serve_upstream_warning(struct kinf_serve *srv, size_t source, const char *text,
		size_t len) {
	if (len > MAX_TEXT_BYTES) {
		/* cut at a character's start, not inside one */
		for (len = MAX_TEXT_BYTES; len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80; ) {
			len--;
		}
	}
	struct warn_post *w = malloc(sizeof(*w) + len + 1);
	if (!w) {
		return -KINF_ENOMEM;
	}
	w->srv = srv;
	w->source = source;
	w->len = len;
	memcpy(w->text, text, len);
	w->text[len] = '\0';
	int rc = kinf_httpd_post(srv->httpd, apply_warning, w);
	if (rc < 0) {
		free(w);
	}
	return rc;
}

void serve_coll_warnings(struct serve_coll *c, struct kinf_strv *seen, struct kinf_buf *out) {
	long long now = kinf_clock_now_ms();
	size_t k = 0;
	for (size_t i = 0; i < c->n_upwarn; i++) {
		struct serve_upwarn *u = &c->upwarn[i];
		if (now - u->seen_ms > KEEP_MS) {
			free(u->text);
			continue;	/* no longer sent */
		}
		c->upwarn[k++] = *u;
		if (strlen(u->text) == u->len && kinf_strv_contains(seen, u->text)) {
			continue;
		}
		if (strlen(u->text) == u->len && kinf_strv_push_str(seen, u->text) < 0) {
			kinf_buf_fail(out, -KINF_ENOMEM);
		}
		serve_warning_line(out, u->text, u->len);
	}
	c->n_upwarn = k;
}

void serve_coll_warnings_release(struct serve_coll *c) {
	for (size_t i = 0; i < c->n_upwarn; i++) {
		free(c->upwarn[i].text);
	}
	free(c->upwarn);
	c->upwarn = NULL;
	c->n_upwarn = 0;
}

void serve_warning_line(struct kinf_buf *out, const char *text, size_t len) {
	kinf_buf_puts(out, "Warning: 299 - \"");
	for (size_t i = 0; i < len; i++) {
		char ch = text[i];
		if (ch == '"' || ch == '\\') {
			kinf_buf_putc(out, '\\');
		}
		kinf_buf_putc(out, (unsigned char)ch < 0x20 ? ' ' : ch);
	}
	kinf_buf_puts(out, "\"\r\n");
}
