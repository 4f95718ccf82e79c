#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "httpd_int.h"
#include "tls.h"

/*
 * httpdconn.c: a connection's state: its output queue (segments, each a
 * copy or a borrowed reference with its chunk framing inline), the list
 * of unauthenticated TCP connections, idlest first (their budget), and
 * its end: killed at once, freed by the loop's sweep.
 */

int httpd_set_flags(int fd) {
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
			fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		return -1;
	}
	return 0;
}

/* What s holds in memory: its struct and its bytes (borrowed bytes are their owner's). */
static size_t seg_mem(const struct seg *s) {
	return sizeof(*s) + (s->p == s->data || s->owned ? s->len : 0);
}

/* Free s, taken off c's queue. */
void httpd_seg_free(struct conn *c, struct seg *s) {
	c->srv->stats.queued_bytes -= seg_mem(s);
	if (s->release) {
		s->release(s->arg);
	}
	if (s->owned) {
		free((void *)s->p);
	}
	free(s);
}

static void queue_clear(struct conn *c) {
	struct seg *s = c->qhead;
	while (s) {
		struct seg *next = s->next;
		httpd_seg_free(c, s);
		s = next;
	}
	c->qhead = c->qtail = NULL;
	c->queued = 0;
}

/*
 * Drop the segments of the stream's body not begun: those after its
 * response head (and what came before it) and after a segment partly
 * written.
 */
void httpd_queue_drop_unbegun(struct conn *c) {
	struct seg *keep = NULL;
	for (struct seg *s = c->qhead; s; s = s->next) {
		if (s->keep || s->off) {
			keep = s;
		}
	}
	struct seg *s = keep ? keep->next : c->qhead;
	while (s) {
		struct seg *next = s->next;
		c->queued -= seg_total(s);
		httpd_seg_free(c, s);
		s = next;
	}
	if (keep) {
		keep->next = NULL;
	}
	c->qhead = c->qtail = keep;
}

void httpd_queue_push(struct conn *c, struct seg *s) {
	c->srv->stats.queued_bytes += seg_mem(s);
	if (!c->qhead) {
		c->last_progress = kinf_clock_now_ms();
		c->qhead = s;
	} else {
		c->qtail->next = s;
	}
	c->qtail = s;
	c->queued += seg_total(s);
}

/*
 * A new segment: len bytes of data copied (copy; data NULL leaves data[]
 * to the caller) or borrowed, framed as an HTTP chunk when chunk is set.
 * NULL for out of memory.
 */
struct seg *httpd_seg_new(const void *data, size_t len, bool copy, bool chunk) {
	if (copy && len > SIZE_MAX - sizeof(struct seg)) {
		return NULL;
	}
	struct seg *s = malloc(sizeof(*s) + (copy ? len : 0));
	if (!s) {
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	s->len = len;
	if (copy) {
		if (data && len) {	/* NULL: the caller fills data[] */
			memcpy(s->data, data, len);
		}
		s->p = s->data;
	} else {
		s->p = data;
	}
	if (chunk) {
		s->pre_len = (unsigned char)snprintf(s->pre, sizeof(s->pre), "%zx\r\n", len);
		s->post_len = 2;
	}
	return s;
}

/* Queue a copy of a and b (either may be empty) as one segment. */
int httpd_queue_copy2(struct conn *c, const void *a, size_t alen, const void *b, size_t blen) {
	if (alen + blen < alen) {
		return -KINF_ENOMEM;
	}
	struct seg *s = httpd_seg_new(NULL, alen + blen, true, false);
	if (!s) {
		return -KINF_ENOMEM;
	}
	if (alen) {
		memcpy(s->data, a, alen);
	}
	if (blen) {
		memcpy(s->data + alen, b, blen);
	}
	httpd_queue_push(c, s);
	return 0;
}

/* Take c out of the list's order (its count stays). */
static void ua_remove(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (c->ua_prev) {
		c->ua_prev->ua_next = c->ua_next;
	} else {
		srv->ua_head = c->ua_next;
	}
	if (c->ua_next) {
		c->ua_next->ua_prev = c->ua_prev;
	} else {
		srv->ua_tail = c->ua_prev;
	}
	c->ua_prev = c->ua_next = NULL;
}

/* c is authenticated (or gone): off the list for good. */
void httpd_ua_unlink(struct conn *c) {
	if (c->authed) {
		return;
	}
	ua_remove(c);
	c->authed = true;
	c->srv->stats.unauth--;
}

void httpd_ua_append(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	c->ua_next = NULL;
	c->ua_prev = srv->ua_tail;
	if (srv->ua_tail) {
		srv->ua_tail->ua_next = c;
	} else {
		srv->ua_head = c;
	}
	srv->ua_tail = c;
}

/* c did something: no longer the idlest of the unauthenticated. */
void httpd_ua_touch(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (c->authed || srv->ua_tail == c) {
		return;
	}
	ua_remove(c);
	httpd_ua_append(c);
}

/*
 * The unauthenticated connection to drop for room (of peer, NULL: any):
 * the idlest of those that never sent a byte, else the idlest. A flood
 * of connections that say nothing cannot push out a client that is
 * halfway through its handshake.
 */
struct conn *httpd_ua_victim(struct kinf_httpd *srv, const unsigned char *peer) {
	struct conn *idlest = NULL;
	for (struct conn *c = srv->ua_head; c; c = c->ua_next) {
		if (peer && memcmp(c->peer, peer, sizeof(c->peer)) != 0) {
			continue;
		}
		if (!c->spoke) {
			return c;
		}
		if (!idlest) {
			idlest = c;
		}
	}
	return idlest;
}

/* The request is over (answered, aborted or its connection gone): uncount it. */
void httpd_req_inactive(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (c->req_active && c->req.counted) {
		srv->active--;
		if (c->req.long_running) {
			srv->long_running--;
		}
	}
	c->req.counted = false;
	c->req.long_running = false;
	c->req_active = false;
}

/*
 * Mark c closed: it leaves the counts and the unauthenticated list now;
 * its fd is closed and its memory freed in the sweep.
 */
void httpd_conn_kill(struct conn *c) {
	if (c->dead) {
		return;
	}
	c->dead = true;
	httpd_ua_unlink(c);
	if (c->is_unix) {
		c->srv->stats.unix_open--;
	} else {
		c->srv->tcp_open--;
	}
}

/* conn_kill, and its descriptor closed at once: room for the next accept. */
void httpd_conn_drop(struct conn *c) {
	httpd_conn_kill(c);
	kinf_tls_conn_free(c->tls);
	c->tls = NULL;
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
}

static void conn_free(struct conn *c) {
	if (c->req_active) {
		void (*fn)(struct kinf_httpd_req *, void *) = c->req.on_close;
		httpd_req_inactive(c);
		if (fn) {
			fn(&c->req, c->req.on_close_arg);
		}
	}
	kinf_httpreq_free(c->req.head);
	free(c->req.body);
	queue_clear(c);
	kinf_buf_release(&c->in);
	kinf_tls_conn_free(c->tls);
	if (c->fd >= 0) {
		close(c->fd);
	}
	free(c);
}

void httpd_sweep(struct kinf_httpd *srv) {
	struct conn **pp = &srv->conns;
	while (*pp) {
		struct conn *c = *pp;
		if (c->dead) {
			*pp = c->next;
			if (c->state == C_STREAM && c->req_active) {
				srv->stats.streams--;
			}
			srv->stats.open--;
			conn_free(c);
		} else {
			pp = &c->next;
		}
	}
}
