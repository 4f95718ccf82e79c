#ifndef KINF_HTTPD_INT_H
#define KINF_HTTPD_INT_H

/*
 * Private to httpd's files: the server's structures and the map of its
 * files, each calling only those above it in this list:
 *   httpdconn.c    a connection's state: its output queue, the list of
 *                  unauthenticated connections (their budget), its end
 *   httpdresp.c    responses and streams on a request (httpd.h's
 *                  kinf_httpd_respond*, kinf_httpd_stream_*, kinf_httpd_req_*)
 *   httpdio.c      a connection's socket: TLS handshake, reading, parsing
 *                  and handing a request to the handler, writing; accept
 *                  and the connection budgets
 *   httpdlisten.c  the listeners (unix:PATH, tcp:HOST:PORT)
 *   httpd.c        the loop: posts, timers, deadlines, poll; new, run, free
 * Everything here is the loop thread's, except the posts (srv->lock).
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "buf.h"
#include "httpd.h"

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

static inline size_t seg_total(const struct seg *s) {
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

/* ---- httpdconn.c ---- */

/* fd non-blocking and close-on-exec; -1 on failure. */
int httpd_set_flags(int fd);
void httpd_seg_free(struct conn *c, struct seg *s);
/* Drop what is queued for c and not begun (a response cut short). */
void httpd_queue_drop_unbegun(struct conn *c);
void httpd_queue_push(struct conn *c, struct seg *s);
/* A segment of data (copied, or borrowed), framed as a chunk or not; NULL: out of memory. */
struct seg *httpd_seg_new(const void *data, size_t len, bool copy, bool chunk);
/* a then b, copied, as one segment; -KINF_ENOMEM. */
int httpd_queue_copy2(struct conn *c, const void *a, size_t alen, const void *b, size_t blen);
void httpd_ua_unlink(struct conn *c);
void httpd_ua_append(struct conn *c);
void httpd_ua_touch(struct conn *c);
struct conn *httpd_ua_victim(struct kinf_httpd *srv, const unsigned char *peer);
void httpd_req_inactive(struct conn *c);
void httpd_conn_kill(struct conn *c);
void httpd_conn_drop(struct conn *c);
/* Free the connections killed since the last sweep. */
void httpd_sweep(struct kinf_httpd *srv);

/* ---- httpdresp.c ---- */

void httpd_reject_plain(struct conn *c, int status, const char *detail, const char *extra);
void httpd_reject_status(struct conn *c, const struct kinf_apistatus_body *st,
		const char *extra);
int httpd_respond_common(struct kinf_httpd_req *req, int status, const char *content_type,
		const char *extra, const void *body, size_t len);
/* c's queue fell below its on-drain mark: the callback runs. */
void httpd_conn_drained(struct conn *c);

/* ---- httpdio.c ---- */

bool httpd_reading_paused(const struct conn *c);
size_t httpd_read_cap(const struct conn *c);
bool httpd_tls_pending(const struct conn *c);
void httpd_conn_process(struct conn *c);
void httpd_conn_read(struct conn *c);
void httpd_conn_write(struct conn *c);
void httpd_conn_handshake(struct conn *c);
void httpd_accept_conns(struct kinf_httpd *srv, struct listener *l);

/* ---- httpdlisten.c ---- */

void httpd_close_listeners(struct kinf_httpd *srv);

#endif
