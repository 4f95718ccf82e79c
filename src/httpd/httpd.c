#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "httpd.h"
#include "tls.h"

/*
 * One piece of queued output, one allocation: a body part (a copy in
 * data[] or a borrowed reference) with the chunk framing around it inline,
 * so a watch event costs one small struct per client.
 */
struct seg {
	struct seg *next;
	const char *p;		/* the body part */
	size_t len;
	size_t off;		/* bytes of pre + body + post already written */
	void (*release)(void *arg);
	void *arg;
	bool keep;		/* a response head (or an earlier response): never cut */
	bool owned;		/* p is the queue's: freed with the segment */
	unsigned char pre_len, post_len;
	char pre[22];		/* a chunk header, "%zx\r\n" */
	char data[];
};

static size_t seg_total(const struct seg *s) {
	return s->pre_len + s->len + s->post_len;
}

struct listener {
	int fd;
	bool is_unix;
	long long paused_until;	/* out of descriptors: not accepting until then (ms) */
	bool tls;		/* tcp: connections start with a TLS handshake */
	char *path;		/* unix: the socket we made, unlinked at the end */
	char *addr;		/* "unix:PATH", "tcp:127.0.0.1:PORT" */
	char *url;		/* tcp: "https://127.0.0.1:PORT" */
	int port;
};

enum cstate {
	C_HANDSHAKE,	/* TLS handshake under way; no HTTP yet */
	C_HEAD,		/* reading a request head (or idle between requests) */
	C_BODY,		/* reading a Content-Length body */
	C_HANDLER,	/* the handler has the request, no response yet */
	C_STREAM,	/* a chunked response is open */
	C_DONE,		/* response queued; close once it is written */
	C_LINGER,	/* write side shut; reading until EOF or a deadline */
};

struct kinf_httpd_req {
	struct conn *conn;
	struct kinf_httpreq *head;
	char *body;
	size_t body_len;
	void (*on_close)(struct kinf_httpd_req *req, void *arg);
	void *on_close_arg;
	void (*on_drain)(struct kinf_httpd_req *req, void *arg);
	void *on_drain_arg;
	size_t drain_below;
	void (*on_stall)(struct kinf_httpd_req *req, void *arg);
	void *on_stall_arg;
	bool chunked;		/* stream framing: chunked (1.1) or close-delimited (1.0) */
	bool counted;		/* handed to the handler: in the server's active count */
	bool whole;		/* one document: cut short, never ended, at stop */
	bool long_running;	/* not in inflight (kinf_httpd_req_long_running) */
};

struct conn {
	struct conn *next;
	struct kinf_httpd *srv;
	unsigned long long id;
	int fd;
	bool is_unix;
	/*
	 * TCP: a request carried the token. Until then the connection is in
	 * the server's unauthenticated list, idlest first (the one dropped
	 * when a budget is full), moved to its end on every read or write.
	 */
	bool authed;
	bool spoke;		/* the client sent a byte (a ClientHello, a request) */
	struct conn *ua_prev, *ua_next;
	unsigned char peer[16];	/* TCP: the peer's IP address (IPv4 as ::ffff:a.b.c.d) */
	struct kinf_tls_conn *tls;	/* NULL: plain */
	bool rd_wants_write;	/* TLS: the last read waits for POLLOUT */
	bool wr_wants_read;	/* TLS: the last write waits for POLLIN */
	bool dead;		/* closed: swept at the end of the loop iteration */
	bool kick;		/* parse buffered input at the next iteration */
	bool peer_eof;
	bool close_after;	/* close once the current response is written */
	enum cstate state;
	struct kinf_buf in;
	size_t in_off;		/* bytes of in already consumed */
	long long deadline;	/* read deadline (ms), 0 for none */
	long long last_progress;	/* last write progress while output was queued */
	struct seg *qhead, *qtail;
	size_t queued;
	bool req_active;
	struct kinf_httpd_req req;
};

struct post {
	struct post *next;
	void (*fn)(void *arg);
	void *arg;
};

struct kinf_httpd_timer {
	struct kinf_httpd_timer *next;
	long long due;
	void (*fn)(void *arg);
	void *arg;
};

struct kinf_httpd {
	struct kinf_httpd_opts opts;
	char *token;
	struct listener *ls;
	size_t n_ls;
	struct conn *conns;
	int wake[2];
	volatile sig_atomic_t stopping;
	pthread_mutex_t lock;	/* posts only */
	struct post *posts, *posts_tail;
	struct kinf_httpd_timer *timers;	/* loop thread only, unsorted */
	struct kinf_httpd_timer *firing;	/* due this round, not run yet */
	struct kinf_httpd_stats stats;
	unsigned long long next_conn_id;
	struct conn *ua_head, *ua_tail;	/* unauthenticated TCP connections, idlest first */
	size_t tcp_open;		/* live TCP connections (not killed) */
	unsigned long long active;	/* requests handed to the handler, not answered */
	unsigned long long long_running;	/* of them, marked long-running */
	struct pollfd *pfds;
	struct conn **pconns;
	size_t pcap;
	char date[64];
	time_t date_time;
};

/*
 * The accept queue: as deep as the system allows (Linux caps it at
 * net.core.somaxconn), as Go's listeners ask. A burst of connections
 * past a short queue drops the SYNs of others, who wait a second for
 * their retransmission.
 */
#define LISTEN_BACKLOG 65535

static int set_flags(int fd) {
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
			fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		return -1;
	}
	return 0;
}

/*
 * The connection budgets' defaults, and all of them within the
 * descriptors the process may open (RLIMIT_NOFILE, less 64 for the
 * listeners, the informers' connections and files): a full table is
 * answered by dropping a connection, never by accept(2) failing.
 */
static void limit_conns(struct kinf_httpd_opts *o) {
	struct rlimit rl;
	size_t fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
		(size_t)rl.rlim_cur : SIZE_MAX;
	size_t room = fds > 128 ? fds - 64 : 64;
	o->max_conns = o->max_conns ? o->max_conns : 4096;
	o->max_unix_conns = o->max_unix_conns ? o->max_unix_conns : 1024;
	o->max_unauth = o->max_unauth ? o->max_unauth : 1024;
	o->max_unauth_per_peer = o->max_unauth_per_peer ? o->max_unauth_per_peer : 256;
	if (o->max_unix_conns > room / 4) {
		o->max_unix_conns = room / 4 ? room / 4 : 1;
	}
	if (o->max_conns > room - o->max_unix_conns) {
		o->max_conns = room - o->max_unix_conns;
	}
	if (o->max_unauth > o->max_conns) {
		o->max_unauth = o->max_conns;
	}
	if (o->max_unauth_per_peer > o->max_unauth) {
		o->max_unauth_per_peer = o->max_unauth;
	}
}

struct kinf_httpd *kinf_httpd_new(const struct kinf_httpd_opts *opts) {
	struct kinf_httpd *srv = calloc(1, sizeof(*srv));
	if (!srv) {
		return NULL;
	}
	srv->opts = *opts;
	srv->wake[0] = srv->wake[1] = -1;
	if (opts->token) {
		srv->token = strdup(opts->token);
		if (!srv->token) {
			free(srv);
			return NULL;
		}
	}
	srv->opts.token = srv->token;
	if (opts->tls) {
		kinf_tls_ref(opts->tls);
	}
	limit_conns(&srv->opts);
	if (!srv->opts.max_queue) {
		srv->opts.max_queue = 1 << 20;
	}
	if (!srv->opts.read_pause) {
		srv->opts.read_pause = 256u << 10;
	}
	if (srv->opts.header_timeout_ms <= 0) {
		srv->opts.header_timeout_ms = 10000;
	}
	if (srv->opts.idle_timeout_ms <= 0) {
		srv->opts.idle_timeout_ms = 90000;
	}
	if (srv->opts.write_timeout_ms <= 0) {
		srv->opts.write_timeout_ms = 30000;
	}
	if (srv->opts.shutdown_grace_ms <= 0) {
		srv->opts.shutdown_grace_ms = 1000;
	}
	if (srv->opts.handshake_timeout_ms <= 0) {
		srv->opts.handshake_timeout_ms = 10000;
	}
	struct kinf_httpreq_limits *l = &srv->opts.limits;
	l->max_line = l->max_line ? l->max_line : KINF_HTTPREQ_MAX_LINE;
	l->max_head = l->max_head ? l->max_head : KINF_HTTPREQ_MAX_HEAD;
	l->max_headers = l->max_headers ? l->max_headers : KINF_HTTPREQ_MAX_HEADERS;
	l->max_body = l->max_body ? l->max_body : KINF_HTTPREQ_MAX_BODY;
	if (pipe(srv->wake) < 0 || set_flags(srv->wake[0]) < 0 || set_flags(srv->wake[1]) < 0) {
		if (srv->wake[0] >= 0) {
			close(srv->wake[0]);
			close(srv->wake[1]);
		}
		kinf_tls_unref(srv->opts.tls);
		kinf_free_secret(srv->token);
		free(srv);
		return NULL;
	}
	pthread_mutex_init(&srv->lock, NULL);
	return srv;
}

/* ---- output queue ---- */

/* What s holds in memory: its struct and its bytes (borrowed bytes are their owner's). */
static size_t seg_mem(const struct seg *s) {
	return sizeof(*s) + (s->p == s->data || s->owned ? s->len : 0);
}

/* Free s, taken off c's queue. */
static void seg_free(struct conn *c, struct seg *s) {
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
		seg_free(c, s);
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
static void queue_drop_unbegun(struct conn *c) {
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
		seg_free(c, s);
		s = next;
	}
	if (keep) {
		keep->next = NULL;
	}
	c->qhead = c->qtail = keep;
}

static void queue_push(struct conn *c, struct seg *s) {
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
static struct seg *seg_new(const void *data, size_t len, bool copy, bool chunk) {
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
static int queue_copy2(struct conn *c, const void *a, size_t alen, const void *b, size_t blen) {
	if (alen + blen < alen) {
		return -KINF_ENOMEM;
	}
	struct seg *s = seg_new(NULL, alen + blen, true, false);
	if (!s) {
		return -KINF_ENOMEM;
	}
	if (alen) {
		memcpy(s->data, a, alen);
	}
	if (blen) {
		memcpy(s->data + alen, b, blen);
	}
	queue_push(c, s);
	return 0;
}

/* ---- connections ---- */

/* ---- the unauthenticated list ---- */

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
static void ua_unlink(struct conn *c) {
	if (c->authed) {
		return;
	}
	ua_remove(c);
	c->authed = true;
	c->srv->stats.unauth--;
}

static void ua_append(struct conn *c) {
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
static void ua_touch(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (c->authed || srv->ua_tail == c) {
		return;
	}
	ua_remove(c);
	ua_append(c);
}

/*
 * The unauthenticated connection to drop for room (of peer, NULL: any):
 * the idlest of those that never sent a byte, else the idlest. A flood
 * of connections that say nothing cannot push out a client that is
 * halfway through its handshake.
 */
static struct conn *ua_victim(struct kinf_httpd *srv, const unsigned char *peer) {
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

/* ---- connections ---- */

/* The request is over (answered, aborted or its connection gone): uncount it. */
static void req_inactive(struct conn *c) {
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
static void conn_kill(struct conn *c) {
	if (c->dead) {
		return;
	}
	c->dead = true;
	ua_unlink(c);
	if (c->is_unix) {
		c->srv->stats.unix_open--;
	} else {
		c->srv->tcp_open--;
	}
}

/* conn_kill, and its descriptor closed at once: room for the next accept. */
static void conn_drop(struct conn *c) {
	conn_kill(c);
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
		req_inactive(c);
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

static void sweep(struct kinf_httpd *srv) {
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

static const char *http_date(struct kinf_httpd *srv) {
	time_t t = time(NULL);
	if (t != srv->date_time) {
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(srv->date, sizeof(srv->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		srv->date_time = t;
	}
	return srv->date;
}

/* The status line and headers of a response, into head. */
static int response_head(struct conn *c, struct kinf_buf *head, int status,
		const char *content_type, const char *extra, long long content_length,
		bool chunked) {
	bool keep = !c->close_after;
	int rc = kinf_buf_printf(head, "HTTP/1.1 %d %s\r\nDate: %s\r\n", status,
		kinf_apistatus_status_text(status), http_date(c->srv));
	if (rc == 0 && content_type) {
		rc = kinf_buf_printf(head, "Content-Type: %s\r\n", content_type);
	}
	if (rc == 0 && content_length >= 0) {
		rc = kinf_buf_printf(head, "Content-Length: %lld\r\n", content_length);
	}
	if (rc == 0 && chunked) {
		rc = kinf_buf_append_str(head, "Transfer-Encoding: chunked\r\n");
	}
	if (rc == 0 && !keep) {
		rc = kinf_buf_append_str(head, "Connection: close\r\n");
	} else if (rc == 0 && c->req_active && c->req.head && c->req.head->minor == 0) {
		rc = kinf_buf_append_str(head, "Connection: keep-alive\r\n");
	}
	if (rc == 0 && extra) {
		rc = kinf_buf_append_str(head, extra);
	}
	return rc ? rc : kinf_buf_append_str(head, "\r\n");
}

/* The request is answered: back to reading the next one, or closing. */
static void request_done(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (c->state == C_STREAM) {
		srv->stats.streams--;
	}
	req_inactive(c);
	c->req.on_close = NULL;
	c->req.on_drain = NULL;
	c->req.on_stall = NULL;
	kinf_httpreq_free(c->req.head);
	c->req.head = NULL;
	free(c->req.body);
	c->req.body = NULL;
	c->req.body_len = 0;
	if (c->close_after || c->peer_eof || srv->stopping) {
		c->close_after = true;
		c->state = C_DONE;
		return;
	}
	c->state = C_HEAD;
	c->deadline = kinf_clock_now_ms() + (c->in.len > c->in_off ? srv->opts.header_timeout_ms :
		srv->opts.idle_timeout_ms);
	c->kick = true;
}

/* An error answered by httpd itself (no handler): plain text as Go's net/http, then close. */
static void reject_plain(struct conn *c, int status, const char *detail, const char *extra) {
	struct kinf_buf head = {0}, body = {0};
	c->close_after = true;
	c->srv->stats.rejected++;
	int rc = kinf_buf_printf(&body, "%d %s%s%s", status, kinf_apistatus_status_text(status),
		detail ? ": " : "", detail ? detail : "");
	if (rc == 0) {
		rc = response_head(c, &head, status, "text/plain; charset=utf-8", extra,
			(long long)body.len, false);
	}
	if (rc == 0) {
		rc = queue_copy2(c, head.data, head.len, body.data, body.len);
	}
	kinf_buf_release(&head);
	kinf_buf_release(&body);
	c->state = C_DONE;
	if (rc < 0) {
		conn_kill(c);
	}
}

static int respond_common(struct kinf_httpd_req *req, int status, const char *content_type,
		const char *extra, const void *body, size_t len) {
	struct conn *c = req->conn;
	struct kinf_buf head = {0};
	bool head_only = req->head && strcmp(req->head->method, "HEAD") == 0;
	int rc = response_head(c, &head, status, content_type, extra, (long long)len, false);
	if (rc == 0) {
		rc = queue_copy2(c, head.data, head.len, head_only ? NULL : body, head_only ? 0 : len);
	}
	kinf_buf_release(&head);
	if (rc < 0) {
		req_inactive(c);
		conn_kill(c);
		return rc;
	}
	request_done(c);
	return 0;
}

int kinf_httpd_respond(struct kinf_httpd_req *req, int status, const char *content_type,
		const char *extra_headers, const void *body, size_t len) {
	return respond_common(req, status, content_type, extra_headers, body, len);
}

int kinf_httpd_respond_status_body(struct kinf_httpd_req *req,
		const struct kinf_apistatus_body *st) {
	char extra[64] = "";
	if (kinf_buf_error(&st->json) || !st->json.len) {
		/* Never an answer without its body: the connection goes. */
		req_inactive(req->conn);
		conn_kill(req->conn);
		return -KINF_ENOMEM;
	}
	if (st->retry_after_seconds > 0) {
		snprintf(extra, sizeof(extra), "Retry-After: %d\r\n", st->retry_after_seconds);
	}
	return respond_common(req, st->code, "application/json", extra[0] ? extra : NULL,
		st->json.data, st->json.len);
}

int kinf_httpd_respond_status(struct kinf_httpd_req *req, const struct kinf_apistatus *st) {
	struct kinf_apistatus_body body = {0};
	/* A failure stays in body.json: the connection's end below. */
	int made = kinf_apistatus_make(&body, st);
	int rc = kinf_httpd_respond_status_body(req, &body);
	kinf_apistatus_body_release(&body);
	return made < 0 ? made : rc;
}

/* A Status answer from httpd itself, before the handler (401, 413), with extra headers. */
static void reject_status(struct conn *c, const struct kinf_apistatus_body *st,
		const char *extra) {
	if (kinf_buf_error(&st->json) || !st->json.len) {
		reject_plain(c, 500, NULL, NULL);
		return;
	}
	c->srv->stats.rejected++;
	c->req_active = true;
	c->req.conn = c;
	c->req.on_close = NULL;
	c->req.on_drain = NULL;
	c->req.on_stall = NULL;
	respond_common(&c->req, st->code, "application/json", extra, st->json.data, st->json.len);
}

int kinf_httpd_stream_start(struct kinf_httpd_req *req, int status, const char *content_type,
		const char *extra_headers) {
	struct conn *c = req->conn;
	struct kinf_buf head = {0};
	req->chunked = req->head->minor >= 1;
	if (!req->chunked) {
		c->close_after = true;	/* HTTP/1.0: the end of the body is the close */
	}
	int rc = response_head(c, &head, status, content_type, extra_headers, -1, req->chunked);
	if (rc == 0) {
		rc = queue_copy2(c, head.data, head.len, NULL, 0);
	}
	kinf_buf_release(&head);
	if (rc < 0) {
		return rc;
	}
	c->qtail->keep = true;
	c->state = C_STREAM;
	c->srv->stats.streams++;
	return 0;
}

size_t kinf_httpd_stream_queued(const struct kinf_httpd_req *req) {
	return req->conn->queued;
}

static int stream_check(struct kinf_httpd_req *req, size_t len) {
	struct conn *c = req->conn;
	if (c->state != C_STREAM || c->dead) {
		return -KINF_ECLOSED;
	}
	/* An event bigger than the whole queue still goes to a client that
	 * has caught up; otherwise the queue's bound holds. */
	if (c->queued && (len > c->srv->opts.max_queue ||
			c->queued > c->srv->opts.max_queue - len)) {
		return -KINF_ETOOBIG;
	}
	return 0;
}

int kinf_httpd_stream_write(struct kinf_httpd_req *req, const void *data, size_t len) {
	int rc = stream_check(req, len);
	if (rc < 0 || !len) {
		return rc;
	}
	struct seg *sg = seg_new(data, len, true, req->chunked);
	if (!sg) {
		return -KINF_ENOMEM;
	}
	queue_push(req->conn, sg);
	return 0;
}

int kinf_httpd_stream_write_ref(struct kinf_httpd_req *req, const void *data, size_t len,
		void (*release)(void *arg), void *arg) {
	int rc = stream_check(req, len);
	struct seg *sg = rc < 0 || !len ? NULL : seg_new(data, len, false, req->chunked);
	if (!sg) {
		if (release) {
			release(arg);
		}
		return rc < 0 || !len ? rc : -KINF_ENOMEM;
	}
	sg->release = release;
	sg->arg = arg;
	queue_push(req->conn, sg);
	return 0;
}

int kinf_httpd_stream_write_take(struct kinf_httpd_req *req, char *data, size_t len) {
	int rc = stream_check(req, len);
	struct seg *sg = rc < 0 || !len ? NULL : seg_new(data, len, false, req->chunked);
	if (!sg) {
		free(data);
		return rc < 0 || !len ? rc : -KINF_ENOMEM;
	}
	sg->owned = true;
	queue_push(req->conn, sg);
	return 0;
}

void kinf_httpd_stream_end(struct kinf_httpd_req *req) {
	struct conn *c = req->conn;
	if (c->state != C_STREAM) {
		return;
	}
	/* A HEAD's answer has no body: not even the last chunk. */
	bool head_only = strcmp(req->head->method, "HEAD") == 0;
	if (req->chunked && !head_only && queue_copy2(c, "0\r\n\r\n", 5, NULL, 0) < 0) {
		c->close_after = true;
	}
	request_done(c);
}

int kinf_httpd_stream_cut(struct kinf_httpd_req *req, const void *last, size_t len) {
	struct conn *c = req->conn;
	if (c->state != C_STREAM || c->dead) {
		return -KINF_ECLOSED;
	}
	queue_drop_unbegun(c);
	struct seg *sg = len ? seg_new(last, len, true, req->chunked) : NULL;
	if (len && !sg) {
		kinf_httpd_req_abort(req);
		return -KINF_ENOMEM;
	}
	if (sg) {
		queue_push(c, sg);
	}
	kinf_httpd_stream_end(req);
	return 0;
}

void kinf_httpd_stream_whole(struct kinf_httpd_req *req) {
	req->whole = true;
}

void kinf_httpd_stream_on_stall(struct kinf_httpd_req *req,
		void (*fn)(struct kinf_httpd_req *req, void *arg), void *arg) {
	req->on_stall = fn;
	req->on_stall_arg = arg;
}

void kinf_httpd_req_abort(struct kinf_httpd_req *req) {
	struct conn *c = req->conn;
	if (c->state == C_STREAM) {
		c->srv->stats.streams--;
		c->state = C_DONE;
	}
	req_inactive(c);
	conn_kill(c);
}

unsigned long long kinf_httpd_req_conn_id(const struct kinf_httpd_req *req) {
	return req->conn->id;
}

void kinf_httpd_req_long_running(struct kinf_httpd_req *req, bool on) {
	struct kinf_httpd *srv = req->conn->srv;
	if (!req->counted || req->long_running == on) {
		return;
	}
	req->long_running = on;
	if (on) {
		srv->long_running++;
	} else {
		srv->long_running--;
	}
}

void kinf_httpd_req_on_close(struct kinf_httpd_req *req, void (*fn)(struct kinf_httpd_req *req,
		void *arg), void *arg) {
	req->on_close = fn;
	req->on_close_arg = arg;
}

void kinf_httpd_stream_on_drain(struct kinf_httpd_req *req, size_t below,
		void (*fn)(struct kinf_httpd_req *req, void *arg), void *arg) {
	req->on_drain = fn;
	req->on_drain_arg = arg;
	req->drain_below = below;
}

/* After a write: a streaming request's on-drain callback, once its queue fell under its mark. */
static void conn_drained(struct conn *c) {
	struct kinf_httpd_req *req = &c->req;
	if (c->dead || c->state != C_STREAM || !req->on_drain || c->queued >= req->drain_below) {
		return;
	}
	void (*fn)(struct kinf_httpd_req *, void *) = req->on_drain;
	req->on_drain = NULL;
	fn(req, req->on_drain_arg);
}

const struct kinf_httpreq *kinf_httpd_req_head(const struct kinf_httpd_req *req) {
	return req->head;
}

const char *kinf_httpd_req_body(const struct kinf_httpd_req *req, size_t *ret_len) {
	if (ret_len) {
		*ret_len = req->body_len;
	}
	return req->body;
}

bool kinf_httpd_req_is_unix(const struct kinf_httpd_req *req) {
	return req->conn->is_unix;
}

/* ---- reading and dispatch ---- */

/* A GET or HEAD of one of opts.public_paths: answered without a token. */
static bool public_path(const struct kinf_httpd *srv, const struct kinf_httpreq *head) {
	if (!srv->opts.public_paths || (strcmp(head->method, "GET") != 0 &&
			strcmp(head->method, "HEAD") != 0)) {
		return false;
	}
	for (const char *const *p = srv->opts.public_paths; *p; p++) {
		if (strcmp(head->path, *p) == 0) {
			return true;
		}
	}
	return false;
}

enum auth { AUTH_NO, AUTH_ANONYMOUS, AUTH_TOKEN };

/* Who sent c's request: the token's holder (or a unix socket's), anonymous, or no one allowed. */
static enum auth authorized(struct conn *c) {
	if (c->is_unix) {
		return AUTH_TOKEN;
	}
	const char *tok = c->srv->token;
	size_t len = 0;
	const char *got = kinf_httpreq_bearer(c->req.head, &len);
	if (!got && public_path(c->srv, c->req.head)) {
		/* anonymous; a wrong token is a 401 there too, as the apiserver's */
		return AUTH_ANONYMOUS;
	}
	if (!tok || !got) {
		return AUTH_NO;
	}
	return kinf_httpreq_token_equal(got, len, tok, strlen(tok)) ? AUTH_TOKEN : AUTH_NO;
}

static void dispatch(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	c->deadline = 0;
	c->req_active = true;
	c->req.conn = c;
	c->req.on_close = NULL;
	c->req.on_drain = NULL;
	c->req.on_stall = NULL;
	c->req.counted = false;
	c->req.long_running = false;
	c->req.whole = false;
	c->state = C_HANDLER;
	if (c->req.head->chunked || c->req.head->expect_continue) {
		/* The body is left unread: the connection cannot be reused. */
		c->close_after = true;
	}
	if (!c->req.head->keep_alive) {
		c->close_after = true;
	}
	enum auth who = authorized(c);
	if (who == AUTH_NO) {
		struct kinf_apistatus_body body = {0};
		/* The apiserver's bearertoken authenticator warns of this one. */
		const char *warn = kinf_httpreq_bearer_spaced(c->req.head) ?
			"Warning: 299 - \"the provided Authorization header contains extra space "
			"before the bearer token, and is ignored\"\r\n" : NULL;
		c->req_active = false;
		kinf_apistatus_unauthorized(&body);
		reject_status(c, &body, warn);
		kinf_apistatus_body_release(&body);
		return;
	}
	if (who == AUTH_TOKEN) {
		ua_unlink(c);
	}
	srv->stats.requests++;
	c->req.counted = true;
	srv->active++;
	if (srv->opts.admit && !srv->opts.admit(&c->req, srv->opts.userdata)) {
		return;
	}
	if (!srv->opts.handler) {
		respond_common(&c->req, 404, "text/plain; charset=utf-8", NULL,
			KINF_APISTATUS_PAGE_NOT_FOUND, strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
		return;
	}
	srv->opts.handler(&c->req, srv->opts.userdata);
}

static bool reading_paused(const struct conn *c);

/* Make progress on c's buffered input: parse heads, collect bodies, dispatch. */
static void conn_process(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	while (!c->dead && (c->state == C_HEAD || c->state == C_BODY)) {
		const char *data = c->in.data ? c->in.data + c->in_off : "";
		size_t avail = c->in.len - c->in_off;
		if (c->state == C_HEAD) {
			struct kinf_httpreq *head = NULL;
			size_t headlen = 0;
			struct kinf_error err = {0};
			if (!avail || reading_paused(c)) {
				break;	/* paused: conn_write kicks it once the queue is down */
			}
			int rc = kinf_httpreq_parse(data, avail, &srv->opts.limits, &head, &headlen, &err);
			if (rc == 0) {
				if (c->peer_eof) {
					conn_kill(c);
				}
				break;
			}
			if (rc < 0) {
				if (err.http_status == 413) {
					struct kinf_apistatus_body body = {0};
					kinf_apistatus_too_large(&body, srv->opts.limits.max_body);
					c->close_after = true;
					reject_status(c, &body, NULL);
					kinf_apistatus_body_release(&body);
				} else {
					/* Go's server says what was wrong, except for 431. */
					int st = err.http_status ? err.http_status : 400;
					reject_plain(c, st, st != 431 && err.message[0] ? err.message : NULL, NULL);
				}
				break;
			}
			c->in_off += headlen;
			c->req.head = head;
			if (head->content_length > 0 && !head->expect_continue) {
				c->state = C_BODY;
				continue;
			}
			dispatch(c);
		} else {
			size_t need = (size_t)c->req.head->content_length;
			if (avail < need) {
				if (c->peer_eof) {
					conn_kill(c);
				}
				break;
			}
			c->req.body = malloc(need + 1);
			if (!c->req.body) {
				conn_kill(c);
				break;
			}
			memcpy(c->req.body, data, need);
			c->req.body[need] = '\0';
			c->req.body_len = need;
			c->in_off += need;
			dispatch(c);
		}
	}
	/* Keep idle connections small: drop a fully consumed input buffer. */
	if (c->in_off == c->in.len) {
		kinf_buf_release(&c->in);
		c->in_off = 0;
	}
}

/*
 * c is behind: so much of its answers is queued that its next request
 * waits (a client pipelining requests it does not read the answers of
 * cannot grow the queue), and is not even read from the socket.
 */
static bool reading_paused(const struct conn *c) {
	return c->state == C_HEAD && c->queued >= c->srv->opts.read_pause;
}

/* How much unconsumed input c may hold: a head (plus a body while reading one). */
static size_t read_cap(const struct conn *c) {
	const struct kinf_httpreq_limits *l = &c->srv->opts.limits;
	size_t cap = l->max_head + 2 + 64;
	if (c->state == C_BODY) {
		cap += (size_t)c->req.head->content_length;
	}
	return cap;
}

/* read(2) on c, through TLS when it has it. */
static ssize_t conn_recv(struct conn *c, void *buf, size_t len) {
	if (!c->tls) {
		return read(c->fd, buf, len);
	}
	ssize_t n = kinf_tls_conn_read(c->tls, buf, len);
	c->rd_wants_write = n < 0 && errno == EAGAIN && kinf_tls_conn_events(c->tls) == POLLOUT;
	return n;
}

/*
 * sendmsg(2) of iov on c. Through TLS, up to 16 KiB (one record) of small
 * pieces are gathered into one write, a big piece goes as it is. A write
 * that waits is retried with the same queue head, so the same bytes come
 * first again and no fewer of them, as OpenSSL requires.
 */
static ssize_t conn_send(struct conn *c, const struct iovec *iov, int n) {
	if (!c->tls) {
		struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n };
		return sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	}
	char stage[16384];
	const void *p = iov[0].iov_base;
	size_t len = iov[0].iov_len;
	if (len < sizeof(stage)) {
		len = 0;
		for (int i = 0; i < n && len < sizeof(stage); i++) {
			size_t k = iov[i].iov_len < sizeof(stage) - len ? iov[i].iov_len :
				sizeof(stage) - len;
			memcpy(stage + len, iov[i].iov_base, k);
			len += k;
		}
		p = stage;
	}
	ssize_t w = kinf_tls_conn_write(c->tls, p, len);
	c->wr_wants_read = w < 0 && errno == EAGAIN && kinf_tls_conn_events(c->tls) == POLLIN;
	return w;
}

/* Decrypted input waits in OpenSSL, and c has room for it. */
static bool tls_pending(const struct conn *c) {
	return c->tls && !c->dead && c->state != C_HANDSHAKE && c->state != C_LINGER &&
		!c->peer_eof && c->in.len - c->in_off < read_cap(c) &&
		kinf_tls_conn_pending(c->tls);
}

static void conn_read(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	for (int round = 0; round < 4; round++) {
		if (c->state == C_LINGER) {
			char sink[4096];
			ssize_t n = read(c->fd, sink, sizeof(sink));
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
				conn_kill(c);
			}
			if (n <= 0) {
				return;
			}
			continue;
		}
		size_t pending = c->in.len - c->in_off;
		if (pending >= read_cap(c)) {
			break;	/* full: what is in is parsed below (a head past its limit: 431) */
		}
		size_t want = read_cap(c) - pending;
		if (want > 16384) {
			want = 16384;
		}
		if (c->in_off && c->in_off == c->in.len) {
			kinf_buf_reset(&c->in);
			c->in_off = 0;
		}
		if (kinf_buf_reserve(&c->in, want) < 0) {
			conn_kill(c);
			return;
		}
		ssize_t n = conn_recv(c, c->in.data + c->in.len, want);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				conn_kill(c);
			}
			break;
		}
		if (n == 0) {
			c->peer_eof = true;
			if (c->state == C_STREAM || c->state == C_DONE ||
					(c->state == C_HEAD && pending == 0)) {
				conn_kill(c);
				return;
			}
			if (c->state == C_HANDLER) {
				c->close_after = true;
			}
			break;
		}
		if (c->state == C_HEAD && pending == 0 && c->in_off == 0) {
			/* The first byte of a request starts its header deadline. */
			c->deadline = kinf_clock_now_ms() + srv->opts.header_timeout_ms;
		}
		c->spoke = true;
		ua_touch(c);
		c->in.len += (size_t)n;
		c->in.data[c->in.len] = '\0';
		/* A TLS read stops at a record's end: read on to EAGAIN. */
		if ((size_t)n < want && !c->tls) {
			break;
		}
	}
	conn_process(c);
}

/* Half-close after what is queued and read until EOF or a deadline. */
static void conn_linger(struct conn *c) {
	shutdown(c->fd, SHUT_WR);
	c->state = C_LINGER;
	c->deadline = kinf_clock_now_ms() + 1000;
}

static void conn_write(struct conn *c) {
	while (c->qhead && !c->dead) {
		struct iovec iov[48];
		int n = 0;
		for (struct seg *s = c->qhead; s && n <= 45; s = s->next) {
			const char *base[3] = { s->pre, s->p, "\r\n" };
			size_t len[3] = { s->pre_len, s->len, s->post_len };
			size_t o = s->off;
			for (int k = 0; k < 3; k++) {
				if (o >= len[k]) {
					o -= len[k];
					continue;
				}
				iov[n].iov_base = (void *)(base[k] + o);
				iov[n].iov_len = len[k] - o;
				n++;
				o = 0;
			}
		}
		ssize_t w = conn_send(c, iov, n);
		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				conn_kill(c);
			}
			return;
		}
		c->last_progress = kinf_clock_now_ms();
		ua_touch(c);
		size_t left = (size_t)w;
		c->queued -= left;
		while (c->qhead && left >= seg_total(c->qhead) - c->qhead->off) {
			struct seg *s = c->qhead;
			left -= seg_total(s) - s->off;
			c->qhead = s->next;
			seg_free(c, s);
		}
		if (!c->qhead) {
			c->qtail = NULL;
		} else {
			c->qhead->off += left;
		}
		if (w == 0) {
			return;
		}
	}
	if (c->state == C_HEAD && !c->dead && c->in.len > c->in_off && !reading_paused(c)) {
		c->kick = true;	/* a pipelined request waited for the queue to go down */
	}
	if (!c->qhead && c->state == C_DONE && !c->dead) {
		/* Half-close and read what the client still sends, so a close
		 * with unread input does not reset the response away (Go's
		 * closeWriteAndWait), after TLS's close_notify. */
		if (c->tls) {
			kinf_tls_conn_close_notify(c->tls);
		}
		conn_linger(c);
	}
}

/* Go's answer to plain HTTP on a TLS port (net/http's serve). */
#define PLAIN_ON_TLS "HTTP/1.0 400 Bad Request\r\n\r\n" \
	"Client sent an HTTP request to an HTTPS server.\n"

/*
 * Go on with c's TLS handshake (poll saw it move); once done, c reads its
 * first request. The TLS state (tens of KB in OpenSSL) is made at the
 * client's first byte: a connection that says nothing costs its struct
 * alone, and one that closes without a word is simply gone.
 */
static void conn_handshake(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (!c->tls) {
		char peek;
		ssize_t n = recv(c->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			conn_kill(c);
			return;
		}
		if (n < 0) {
			return;
		}
		c->spoke = true;
		if (!(c->tls = kinf_tls_conn_new(srv->opts.tls, c->fd))) {
			conn_kill(c);
			return;
		}
	}
	ua_touch(c);
	int rc = kinf_tls_conn_handshake(c->tls, NULL);
	if (rc == 0) {
		return;
	}
	if (rc < 0) {
		srv->stats.tls_failures++;
		if (rc == -KINF_EUNSUPPORTED) {
			ssize_t w = send(c->fd, PLAIN_ON_TLS, strlen(PLAIN_ON_TLS), MSG_NOSIGNAL);
			(void)w;	/* best effort, as Go's */
			conn_linger(c);
		} else {
			conn_kill(c);
		}
		return;
	}
	c->state = C_HEAD;
	c->deadline = kinf_clock_now_ms() + srv->opts.header_timeout_ms;
	conn_read(c);	/* the request may have come with the handshake's end */
}

/* The idlest kept-alive authenticated TCP connection (between requests, nothing queued), or NULL. */
static struct conn *idlest_kept_alive(struct kinf_httpd *srv) {
	struct conn *best = NULL;
	for (struct conn *c = srv->conns; c; c = c->next) {
		/* The idle deadline is the last answer's time; of two, the older connection. */
		if (!c->dead && !c->is_unix && c->authed && c->state == C_HEAD && !c->qhead &&
				c->in.len == c->in_off && (!best || c->deadline < best->deadline ||
				(c->deadline == best->deadline && c->id < best->id))) {
			best = c;
		}
	}
	return best;
}

/*
 * Room for one more TCP connection from peer, made by dropping an
 * unauthenticated connection (ua_victim; of peer when peer's budget is
 * full), else past max_conns the idlest kept-alive one. false when the
 * table is full of busy connections.
 */
static bool make_room_tcp(struct kinf_httpd *srv, const unsigned char *peer) {
	size_t of_peer = 0;
	for (struct conn *c = srv->ua_head; c; c = c->ua_next) {
		of_peer += memcmp(c->peer, peer, sizeof(c->peer)) == 0;
	}
	if (of_peer >= srv->opts.max_unauth_per_peer) {
		srv->stats.dropped_unauth_peer++;
		conn_drop(ua_victim(srv, peer));
	} else if (srv->stats.unauth >= srv->opts.max_unauth) {
		srv->stats.dropped_unauth++;
		conn_drop(ua_victim(srv, NULL));
	}
	if (srv->tcp_open < srv->opts.max_conns) {
		return true;
	}
	if (srv->ua_head) {
		srv->stats.dropped_unauth++;
		conn_drop(ua_victim(srv, NULL));
		return true;
	}
	struct conn *idle = idlest_kept_alive(srv);
	if (idle) {
		srv->stats.dropped_idle++;
		conn_drop(idle);
		return true;
	}
	return false;
}

/* ss's IP address as 16 bytes, IPv4 mapped into IPv6 (::ffff:a.b.c.d). */
static void peer_key(const struct sockaddr_storage *ss, unsigned char out[16]) {
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else if (ss->ss_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	}
}

static void accept_conns(struct kinf_httpd *srv, struct listener *l) {
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		int fd = accept(l->fd, (struct sockaddr *)&ss, &sl);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				/*
				 * Out of descriptors (other files count too): the
				 * idlest unauthenticated connection makes room, else
				 * the listener rests a moment rather than spin.
				 */
				if (srv->ua_head) {
					srv->stats.dropped_unauth++;
					conn_drop(ua_victim(srv, NULL));
					continue;
				}
				l->paused_until = kinf_clock_now_ms() + 100;
			}
			return;
		}
		if (set_flags(fd) < 0) {
			close(fd);
			continue;
		}
		srv->stats.connections++;
		unsigned char peer[16];
		peer_key(&ss, peer);
		if (!l->is_unix) {
			/* No Nagle (as Go's net/http): an answer's last small TLS
			 * record must not wait for the client's delayed ACK. */
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			if (!make_room_tcp(srv, peer)) {
				/* Plain text would be noise to a TLS client; a close
				 * is what it sees of a full Go server too. */
				srv->stats.rejected++;
				srv->stats.refused++;
				close(fd);
				continue;
			}
		} else if (srv->stats.unix_open >= srv->opts.max_unix_conns) {
			/* The apiserver's max-in-flight answer, best effort. */
			char busy[256];
			int bl = snprintf(busy, sizeof(busy), "HTTP/1.1 429 Too Many Requests\r\n"
				"Content-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
				"Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
				strlen(KINF_APISTATUS_TOO_MANY), KINF_APISTATUS_TOO_MANY);
			ssize_t w = send(fd, busy, (size_t)bl, MSG_NOSIGNAL);
			(void)w;
			srv->stats.rejected++;
			srv->stats.refused++;
			close(fd);
			continue;
		}
		struct conn *c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->srv = srv;
		c->id = ++srv->next_conn_id;
		c->fd = fd;
		c->is_unix = l->is_unix;
		c->state = C_HEAD;
		c->deadline = kinf_clock_now_ms() + srv->opts.header_timeout_ms;
		if (l->tls) {
			c->state = C_HANDSHAKE;
			c->deadline = kinf_clock_now_ms() + srv->opts.handshake_timeout_ms;
		}
		c->next = srv->conns;
		srv->conns = c;
		srv->stats.open++;
		if (l->is_unix) {
			c->authed = true;	/* the socket's mode is its access control */
			srv->stats.unix_open++;
		} else {
			memcpy(c->peer, peer, sizeof(c->peer));
			srv->tcp_open++;
			srv->stats.unauth++;
			ua_append(c);
		}
		if (l->tls) {
			conn_handshake(c);	/* the ClientHello is often in already */
		}
	}
}

static void run_posts(struct kinf_httpd *srv) {
	pthread_mutex_lock(&srv->lock);
	struct post *p = srv->posts;
	srv->posts = srv->posts_tail = NULL;
	pthread_mutex_unlock(&srv->lock);
	while (p) {
		struct post *next = p->next;
		p->fn(p->arg);
		free(p);
		p = next;
	}
}

int kinf_httpd_post(struct kinf_httpd *srv, void (*fn)(void *arg), void *arg) {
	struct post *p = malloc(sizeof(*p));
	if (!p) {
		return -KINF_ENOMEM;
	}
	p->next = NULL;
	p->fn = fn;
	p->arg = arg;
	pthread_mutex_lock(&srv->lock);
	if (srv->posts_tail) {
		srv->posts_tail->next = p;
	} else {
		srv->posts = p;
	}
	srv->posts_tail = p;
	pthread_mutex_unlock(&srv->lock);
	char b = 1;
	ssize_t w = write(srv->wake[1], &b, 1);
	(void)w;	/* a full pipe already wakes the loop */
	return 0;
}

void kinf_httpd_stop(struct kinf_httpd *srv) {
	srv->stopping = 1;
	char b = 0;
	ssize_t w = write(srv->wake[1], &b, 1);
	(void)w;
}

struct kinf_httpd_timer *kinf_httpd_timer_add(struct kinf_httpd *srv, long long ms,
		void (*fn)(void *arg), void *arg) {
	struct kinf_httpd_timer *t = malloc(sizeof(*t));
	if (!t) {
		return NULL;
	}
	t->due = kinf_clock_now_ms() + (ms > 0 ? ms : 0);
	t->fn = fn;
	t->arg = arg;
	t->next = srv->timers;
	srv->timers = t;
	return t;
}

static bool unlink_timer(struct kinf_httpd_timer **pp, struct kinf_httpd_timer *t) {
	for (; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			return true;
		}
	}
	return false;
}

void kinf_httpd_timer_cancel(struct kinf_httpd *srv, struct kinf_httpd_timer *t) {
	if (t && (unlink_timer(&srv->timers, t) || unlink_timer(&srv->firing, t))) {
		free(t);
	}
}

/*
 * Run the timers that are due now; those they add wait for the next round
 * (a timer re-adding itself with 0 ms cannot starve the loop), and one of
 * them cancelling another that is due is still honoured.
 */
static void run_timers(struct kinf_httpd *srv) {
	long long now = kinf_clock_now_ms();
	struct kinf_httpd_timer **pp = &srv->timers;
	while (*pp) {
		struct kinf_httpd_timer *t = *pp;
		if (t->due <= now) {
			*pp = t->next;
			t->next = srv->firing;
			srv->firing = t;
		} else {
			pp = &t->next;
		}
	}
	while (srv->firing) {
		struct kinf_httpd_timer *t = srv->firing;
		srv->firing = t->next;
		void (*fn)(void *) = t->fn;
		void *arg = t->arg;
		free(t);
		fn(arg);
	}
}

static void drop_timers(struct kinf_httpd *srv) {
	while (srv->timers) {
		struct kinf_httpd_timer *t = srv->timers;
		srv->timers = t->next;
		free(t);
	}
}

void kinf_httpd_stats(const struct kinf_httpd *srv, struct kinf_httpd_stats *ret) {
	*ret = srv->stats;
	ret->inflight = srv->active - srv->long_running;
}

/* Deadlines: header/body/idle reads, stalled writes, lingering closes. */
static void check_deadlines(struct kinf_httpd *srv, long long now) {
	for (struct conn *c = srv->conns; c; c = c->next) {
		if (c->dead) {
			continue;
		}
		bool reading = c->state == C_HEAD || c->state == C_BODY || c->state == C_LINGER ||
			c->state == C_HANDSHAKE;
		if (reading && c->deadline && now >= c->deadline) {
			if (c->state == C_HANDSHAKE) {
				srv->stats.tls_failures++;
				srv->stats.timeouts++;
			} else if (c->state != C_LINGER &&
					(c->in.len > c->in_off || c->state == C_BODY)) {
				srv->stats.timeouts++;
			}
			conn_kill(c);
		} else if (c->qhead && now - c->last_progress >= srv->opts.write_timeout_ms) {
			srv->stats.timeouts++;
			if (c->state == C_STREAM && c->req_active && c->req.on_stall) {
				/* The stream's owner ends it; what is left gets one more period. */
				void (*fn)(struct kinf_httpd_req *, void *) = c->req.on_stall;
				c->req.on_stall = NULL;
				c->last_progress = now;
				fn(&c->req, c->req.on_stall_arg);
			} else {
				conn_kill(c);
			}
		}
	}
}

static int next_timeout(struct kinf_httpd *srv, long long now) {
	long long t = -1;
	for (struct conn *c = srv->conns; c; c = c->next) {
		long long d = -1;
		if ((c->state == C_HEAD || c->state == C_BODY || c->state == C_LINGER ||
				c->state == C_HANDSHAKE) && c->deadline) {
			d = c->deadline - now;
		}
		if (c->qhead) {
			long long w = c->last_progress + srv->opts.write_timeout_ms - now;
			d = d < 0 || w < d ? w : d;
		}
		if (d >= 0 && (t < 0 || d < t)) {
			t = d;
		}
		if (c->kick || tls_pending(c)) {
			t = 0;
		}
	}
	for (struct kinf_httpd_timer *tm = srv->timers; tm; tm = tm->next) {
		long long d = tm->due > now ? tm->due - now : 0;
		if (t < 0 || d < t) {
			t = d;
		}
	}
	for (size_t i = 0; i < srv->n_ls; i++) {
		long long d = srv->ls[i].paused_until - now;
		if (d > 0 && (t < 0 || d < t)) {
			t = d;
		}
	}
	if (t > INT_MAX) {
		t = INT_MAX;
	}
	return t < 0 ? -1 : (int)t + (t ? 1 : 0);
}

static int ensure_pfds(struct kinf_httpd *srv, size_t n) {
	if (n <= srv->pcap) {
		return 0;
	}
	size_t cap = srv->pcap ? srv->pcap * 2 : 64;
	while (cap < n) {
		cap *= 2;
	}
	struct pollfd *p = realloc(srv->pfds, cap * sizeof(*p));
	if (!p) {
		return -KINF_ENOMEM;
	}
	srv->pfds = p;
	struct conn **pc = realloc(srv->pconns, cap * sizeof(*pc));
	if (!pc) {
		return -KINF_ENOMEM;
	}
	srv->pconns = pc;
	srv->pcap = cap;
	return 0;
}

/* One poll round. Returns 0, or -KINF_IO/-KINF_ENOMEM. */
static int loop_once(struct kinf_httpd *srv, bool accepting, int max_wait, struct kinf_error *reterr) {
	size_t n = 1 + (accepting ? srv->n_ls : 0) + srv->stats.open;
	if (ensure_pfds(srv, n) < 0) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	size_t k = 0;
	srv->pfds[k++] = (struct pollfd){ .fd = srv->wake[0], .events = POLLIN };
	size_t nl = 0;
	long long now = kinf_clock_now_ms();
	if (accepting) {
		for (size_t i = 0; i < srv->n_ls; i++) {
			if (srv->ls[i].fd >= 0 && srv->ls[i].paused_until <= now) {
				srv->pfds[k++] = (struct pollfd){ .fd = srv->ls[i].fd, .events = POLLIN };
				nl++;
			}
		}
	}
	size_t first_conn = k;
	for (struct conn *c = srv->conns; c; c = c->next) {
		short ev = 0;
		/* After the client's FIN only its full close matters, which
		 * poll reports as POLLHUP without being asked. */
		if (c->state == C_LINGER || (!c->peer_eof && c->in.len - c->in_off < read_cap(c) &&
				!reading_paused(c))) {
			ev |= POLLIN;
		}
		if (c->qhead) {
			ev |= POLLOUT;
		}
		if (c->state == C_HANDSHAKE) {
			ev = c->tls ? kinf_tls_conn_events(c->tls) : POLLIN;
		} else if (c->tls && c->state != C_LINGER) {
			ev |= (c->rd_wants_write ? POLLOUT : 0) | (c->wr_wants_read ? POLLIN : 0);
		}
		srv->pconns[k] = c;
		srv->pfds[k++] = (struct pollfd){ .fd = c->fd, .events = ev };
	}
	int timeout = next_timeout(srv, now);
	if (max_wait >= 0 && (timeout < 0 || timeout > max_wait)) {
		timeout = max_wait;
	}
	int r = poll(srv->pfds, (nfds_t)k, timeout);
	if (r < 0 && errno != EINTR) {
		return kinf_error_set(reterr, KINF_EIO, "poll: %s", strerror(errno));
	}
	if (r > 0 && (srv->pfds[0].revents & POLLIN)) {
		char drain[256];
		while (read(srv->wake[0], drain, sizeof(drain)) > 0) {
		}
	}
	run_posts(srv);
	run_timers(srv);
	for (size_t i = first_conn; r > 0 && i < k; i++) {
		struct conn *c = srv->pconns[i];
		short re = srv->pfds[i].revents;
		if (c->dead || !re) {
			continue;
		}
		if (c->state == C_HANDSHAKE) {
			conn_handshake(c);
			continue;
		}
		if ((re & (POLLIN | POLLHUP | POLLERR)) || (c->rd_wants_write && (re & POLLOUT))) {
			conn_read(c);
		}
		if (!c->dead && (re & (POLLHUP | POLLERR))) {
			/* Closed both ways: nothing can be answered any more. */
			conn_kill(c);
		}
		if (!c->dead && ((re & POLLOUT) || (c->wr_wants_read && (re & POLLIN)))) {
			conn_write(c);
			conn_drained(c);	/* what it queues goes out below */
			/* What other threads posted meanwhile (serve's events)
			 * is taken in now, not after every client's write:
			 * else it piles up in memory while the loop writes. */
			run_posts(srv);
		}
	}
	for (struct conn *c = srv->conns; c; c = c->next) {
		if (tls_pending(c)) {
			conn_read(c);	/* decrypted bytes poll cannot see */
		}
		if (c->kick && !c->dead) {
			c->kick = false;
			conn_process(c);
		}
		if (!c->dead && c->qhead) {
			conn_write(c);	/* answers queued by the handler go out now */
			conn_drained(c);	/* its next part: POLLOUT at the next poll */
			run_posts(srv);
		}
	}
	if (r > 0) {
		for (size_t i = 1; i < 1 + nl; i++) {
			if (srv->pfds[i].revents & POLLIN) {
				for (size_t j = 0; j < srv->n_ls; j++) {
					if (srv->ls[j].fd == srv->pfds[i].fd) {
						accept_conns(srv, &srv->ls[j]);
					}
				}
			}
		}
	}
	check_deadlines(srv, kinf_clock_now_ms());
	sweep(srv);
	return 0;
}

static void close_listeners(struct kinf_httpd *srv) {
	for (size_t i = 0; i < srv->n_ls; i++) {
		struct listener *l = &srv->ls[i];
		if (l->fd >= 0) {
			close(l->fd);
			l->fd = -1;
		}
		if (l->path) {
			unlink(l->path);
			free(l->path);
			l->path = NULL;
		}
	}
}

int kinf_httpd_run(struct kinf_httpd *srv, struct kinf_error *reterr) {
	int rc = 0;
	while (!srv->stopping) {
		rc = loop_once(srv, true, -1, reterr);
		if (rc < 0) {
			break;
		}
	}
	close_listeners(srv);
	drop_timers(srv);
	/* Streams end with their last chunk; unanswered requests are dropped. */
	for (struct conn *c = srv->conns; c; c = c->next) {
		if (c->dead) {
			continue;
		}
		c->close_after = true;
		if (c->state == C_STREAM && c->req_active && c->req.whole) {
			conn_kill(c);	/* a list cut short must not look complete */
		} else if (c->state == C_STREAM && c->req_active) {
			void (*fn)(struct kinf_httpd_req *, void *) = c->req.on_close;
			void *arg = c->req.on_close_arg;
			kinf_httpd_stream_end(&c->req);
			if (fn) {
				fn(&c->req, arg);
			}
		} else if (c->state == C_HANDLER || c->state == C_HEAD || c->state == C_BODY ||
				c->state == C_HANDSHAKE) {
			conn_kill(c);
		}
	}
	sweep(srv);
	long long until = kinf_clock_now_ms() + srv->opts.shutdown_grace_ms;
	while (rc == 0 && srv->conns) {
		bool pending = false;
		for (struct conn *c = srv->conns; c; c = c->next) {
			pending |= c->qhead != NULL;
		}
		long long left = until - kinf_clock_now_ms();
		if (!pending || left <= 0) {
			break;
		}
		rc = loop_once(srv, false, (int)left, reterr);
	}
	for (struct conn *c = srv->conns; c; c = c->next) {
		conn_kill(c);
	}
	sweep(srv);
	run_posts(srv);
	return rc;
}

void kinf_httpd_free(struct kinf_httpd *srv) {
	if (!srv) {
		return;
	}
	for (struct conn *c = srv->conns; c; c = c->next) {
		conn_kill(c);
	}
	sweep(srv);
	run_posts(srv);
	drop_timers(srv);
	close_listeners(srv);
	for (size_t i = 0; i < srv->n_ls; i++) {
		free(srv->ls[i].addr);
		free(srv->ls[i].url);
	}
	free(srv->ls);
	free(srv->pfds);
	free(srv->pconns);
	close(srv->wake[0]);
	close(srv->wake[1]);
	pthread_mutex_destroy(&srv->lock);
	kinf_tls_unref(srv->opts.tls);
	kinf_free_secret(srv->token);
	free(srv);
}

/* ---- listeners ---- */

/* Add listener l (its strings taken: freed, its fd closed on failure). */
static int add_listener(struct kinf_httpd *srv, struct listener l, struct kinf_error *reterr) {
	struct listener *ls = realloc(srv->ls, (srv->n_ls + 1) * sizeof(*ls));
	if (!ls) {
		close(l.fd);
		if (l.path) {
			unlink(l.path);
		}
		free(l.path);
		free(l.addr);
		free(l.url);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	srv->ls = ls;
	ls[srv->n_ls++] = l;
	return 0;
}

/*
 * A unix socket's directory must be a directory (not a symlink) of this
 * user (or root's, as /tmp and /run are) that no one else may write to,
 * unless it is sticky as /tmp is (then no one else can remove or rename
 * the socket). 0 or -KINF_EIO naming what is wrong.
 */
static int check_socket_dir(const char *dir, struct kinf_error *reterr) {
	struct stat st;
	uid_t me = geteuid();
	if (lstat(dir, &st) < 0) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': %s", dir, strerror(errno));
	}
	if (S_ISLNK(st.st_mode)) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': the socket's directory is a "
			"symbolic link; use a directory of mode 0700 of your own", dir);
	}
	if (!S_ISDIR(st.st_mode)) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': not a directory", dir);
	}
	if (st.st_uid != me && st.st_uid != 0) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': the socket's directory belongs to "
			"uid %u, not to you (uid %u); use a directory of mode 0700 of your own", dir,
			(unsigned)st.st_uid, (unsigned)me);
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & 01000)) {	/* S_ISVTX, an XSI name */
		return kinf_error_set(reterr, KINF_EIO, "'%s': the socket's directory is writable "
			"by others (mode %04o); use a directory of mode 0700 of your own", dir,
			(unsigned)(st.st_mode & 07777));
	}
	return 0;
}

static int listen_unix(struct kinf_httpd *srv, const char *path, struct kinf_error *reterr) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd = -1;

	if (!path || !*path) {
		return kinf_error_set(reterr, KINF_EINVAL, "unix: a socket path is needed");
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		return kinf_error_set(reterr, KINF_EINVAL, "'%s': socket path too long (%zu bytes at most)",
			path, sizeof(sa.sun_path) - 1);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* The directory: made 0700 when missing; what protects the socket. */
	char *dir = strdup(path);
	if (!dir) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			int rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", dir, strerror(errno));
			free(dir);
			return rc;
		}
		/*
		 * Made now or found: whoever owns the directory (or may write to
		 * it) can put their own socket in ours' place. Another user may
		 * have made /tmp/kinf-UID first.
		 */
		int rc = check_socket_dir(dir, reterr);
		if (rc < 0) {
			free(dir);
			return rc;
		}
	}
	free(dir);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			return kinf_error_set(reterr, KINF_EEXISTS, "'%s' exists and is not a socket", path);
		}
		/* A socket nobody answers on is left over from a dead server. */
		int probe = socket(AF_UNIX, SOCK_STREAM, 0);
		if (probe < 0) {
			return kinf_error_set(reterr, KINF_EIO, "socket: %s", strerror(errno));
		}
		int cr = connect(probe, (struct sockaddr *)&sa, sizeof(sa));
		int cerr = errno;
		close(probe);
		if (cr == 0) {
			return kinf_error_set(reterr, KINF_EEXISTS, "'%s': a server is already listening there",
				path);
		}
		if (cerr != ECONNREFUSED) {
			return kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(cerr));
		}
		if (unlink(path) < 0) {
			return kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(errno));
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || set_flags(fd) < 0) {
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		goto fail;
	}
	if (chmod(path, 0600) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		int rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(errno));
		unlink(path);
		close(fd);
		return rc;
	}
	char *p = strdup(path);
	struct kinf_buf addr = {0};
	if (!p || kinf_buf_printf(&addr, "unix:%s", path) < 0) {
		free(p);
		kinf_buf_release(&addr);
		unlink(path);
		close(fd);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	return add_listener(srv, (struct listener){ .fd = fd, .is_unix = true, .path = p,
		.addr = kinf_buf_take(&addr) }, reterr);
fail:;
	int rc = kinf_error_set(reterr, errno == EADDRINUSE ? KINF_EEXISTS : KINF_EIO, "'%s': %s",
		path, strerror(errno));
	if (fd >= 0) {
		close(fd);
	}
	return rc;
}

static int listen_tcp(struct kinf_httpd *srv, const char *hostport, struct kinf_error *reterr) {
	const char *colon = strrchr(hostport, ':');
	char host[256], port[8];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res = NULL;

	if (!srv->token || !*srv->token) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: a TCP listener needs a token", hostport);
	}
	if (!colon || colon == hostport) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: HOST:PORT expected", hostport);
	}
	size_t hl = (size_t)(colon - hostport);
	const char *h = hostport;
	if (*h == '[') {
		if (hl < 3 || h[hl - 1] != ']') {
			return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: bad IPv6 address", hostport);
		}
		h++;
		hl -= 2;
	}
	if (hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port) || !colon[1] ||
			strspn(colon + 1, "0123456789") != strlen(colon + 1) || atoi(colon + 1) > 65535) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: bad host or port", hostport);
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, sizeof(port), "%s", colon + 1);
	int gr = getaddrinfo(host, port, &hints, &res);
	if (gr != 0) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: %s", hostport, gai_strerror(gr));
	}
	int fd = -1, err = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (set_flags(fd) == 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
				listen(fd, LISTEN_BACKLOG) == 0) {
			break;
		}
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		return kinf_error_set(reterr, err == EADDRINUSE ? KINF_EEXISTS : KINF_EIO, "tcp:%s: %s",
			hostport, strerror(err));
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	int bound = 0;
	struct kinf_buf addr = {0}, url = {0};
	const char *scheme = srv->opts.tls ? "https" : "http";
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		bound = ntohs(s6->sin6_port);
		err = kinf_buf_printf(&addr, "tcp:[%s]:%d", ip, bound);
		/* A client of a wildcard listener here reaches it on loopback. */
		err = err ? err : kinf_buf_printf(&url, "%s://[%s]:%d", scheme,
				IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ? "::1" : ip, bound);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		bound = ntohs(s4->sin_port);
		err = kinf_buf_printf(&addr, "tcp:%s:%d", ip, bound);
		err = err ? err : kinf_buf_printf(&url, "%s://%s:%d", scheme,
				s4->sin_addr.s_addr == htonl(INADDR_ANY) ? "127.0.0.1" : ip, bound);
	}
	if (err < 0) {
		kinf_buf_release(&addr);
		kinf_buf_release(&url);
		close(fd);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	return add_listener(srv, (struct listener){ .fd = fd, .tls = srv->opts.tls != NULL,
		.addr = kinf_buf_take(&addr), .url = kinf_buf_take(&url), .port = bound }, reterr);
}

int kinf_httpd_listen(struct kinf_httpd *srv, const char *addr, struct kinf_error *reterr) {
	if (strncmp(addr, "unix:", 5) == 0) {
		return listen_unix(srv, addr + 5, reterr);
	}
	if (strncmp(addr, "tcp:", 4) == 0) {
		return listen_tcp(srv, addr + 4, reterr);
	}
	return kinf_error_set(reterr, KINF_EINVAL, "'%s': unix:PATH or tcp:HOST:PORT expected", addr);
}

const char *kinf_httpd_address(const struct kinf_httpd *srv, size_t i) {
	return i < srv->n_ls ? srv->ls[i].addr : NULL;
}

int kinf_httpd_port(const struct kinf_httpd *srv, size_t i) {
	return i < srv->n_ls ? srv->ls[i].port : 0;
}

const char *kinf_httpd_url(const struct kinf_httpd *srv, size_t i) {
	return i < srv->n_ls ? srv->ls[i].url : NULL;
}
