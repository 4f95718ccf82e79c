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
 * httpdio.c: a connection's socket: the TLS handshake, reading (within
 * the read budget), parsing a request and handing it to the handler once
 * authenticated, writing the queue; accepting connections within the
 * connection budgets (the idlest goes to make room).
 */

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
		httpd_reject_status(c, &body, warn);
		kinf_apistatus_body_release(&body);
		return;
	}
	if (who == AUTH_TOKEN) {
		httpd_ua_unlink(c);
	}
	srv->stats.requests++;
	c->req.counted = true;
	srv->active++;
	if (srv->opts.admit && !srv->opts.admit(&c->req, srv->opts.userdata)) {
		return;
	}
	if (!srv->opts.handler) {
		httpd_respond_common(&c->req, 404, "text/plain; charset=utf-8", NULL,
			KINF_APISTATUS_PAGE_NOT_FOUND, strlen(KINF_APISTATUS_PAGE_NOT_FOUND));
		return;
	}
	srv->opts.handler(&c->req, srv->opts.userdata);
}

/* Make progress on c's buffered input: parse heads, collect bodies, dispatch. */
void httpd_conn_process(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	while (!c->dead && (c->state == C_HEAD || c->state == C_BODY)) {
		const char *data = c->in.data ? c->in.data + c->in_off : "";
		size_t avail = c->in.len - c->in_off;
		if (c->state == C_HEAD) {
			struct kinf_httpreq *head = NULL;
			size_t headlen = 0;
			struct kinf_error err = {0};
			if (!avail || httpd_reading_paused(c)) {
				break;	/* paused: conn_write kicks it once the queue is down */
			}
			int rc = kinf_httpreq_parse(data, avail, &srv->opts.limits, &head, &headlen, &err);
			if (rc == 0) {
				if (c->peer_eof) {
					httpd_conn_kill(c);
				}
				break;
			}
			if (rc < 0) {
				if (err.http_status == 413) {
					struct kinf_apistatus_body body = {0};
					kinf_apistatus_too_large(&body, srv->opts.limits.max_body);
					c->close_after = true;
					httpd_reject_status(c, &body, NULL);
					kinf_apistatus_body_release(&body);
				} else {
					/* Go's server says what was wrong, except for 431. */
					int st = err.http_status ? err.http_status : 400;
					httpd_reject_plain(c, st, st != 431 && err.message[0] ? err.message : NULL, NULL);
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
					httpd_conn_kill(c);
				}
				break;
			}
			c->req.body = malloc(need + 1);
			if (!c->req.body) {
				httpd_conn_kill(c);
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
bool httpd_reading_paused(const struct conn *c) {
	return c->state == C_HEAD && c->queued >= c->srv->opts.read_pause;
}

/* How much unconsumed input c may hold: a head (plus a body while reading one). */
size_t httpd_read_cap(const struct conn *c) {
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
bool httpd_tls_pending(const struct conn *c) {
	return c->tls && !c->dead && c->state != C_HANDSHAKE && c->state != C_LINGER &&
		!c->peer_eof && c->in.len - c->in_off < httpd_read_cap(c) &&
		kinf_tls_conn_pending(c->tls);
}

void httpd_conn_read(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	for (int round = 0; round < 4; round++) {
		if (c->state == C_LINGER) {
			char sink[4096];
			ssize_t n = read(c->fd, sink, sizeof(sink));
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
				httpd_conn_kill(c);
			}
			if (n <= 0) {
				return;
			}
			continue;
		}
		size_t pending = c->in.len - c->in_off;
		if (pending >= httpd_read_cap(c)) {
			break;	/* full: what is in is parsed below (a head past its limit: 431) */
		}
		size_t want = httpd_read_cap(c) - pending;
		if (want > 16384) {
			want = 16384;
		}
		if (c->in_off && c->in_off == c->in.len) {
			kinf_buf_reset(&c->in);
			c->in_off = 0;
		}
		if (kinf_buf_reserve(&c->in, want) < 0) {
			httpd_conn_kill(c);
			return;
		}
		ssize_t n = conn_recv(c, c->in.data + c->in.len, want);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				httpd_conn_kill(c);
			}
			break;
		}
		if (n == 0) {
			c->peer_eof = true;
			if (c->state == C_STREAM || c->state == C_DONE ||
					(c->state == C_HEAD && pending == 0)) {
				httpd_conn_kill(c);
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
		httpd_ua_touch(c);
		c->in.len += (size_t)n;
		c->in.data[c->in.len] = '\0';
		/* A TLS read stops at a record's end: read on to EAGAIN. */
		if ((size_t)n < want && !c->tls) {
			break;
		}
	}
	httpd_conn_process(c);
}

/* Half-close after what is queued and read until EOF or a deadline. */
static void conn_linger(struct conn *c) {
	shutdown(c->fd, SHUT_WR);
	c->state = C_LINGER;
	c->deadline = kinf_clock_now_ms() + 1000;
}

void httpd_conn_write(struct conn *c) {
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
				httpd_conn_kill(c);
			}
			return;
		}
		c->last_progress = kinf_clock_now_ms();
		httpd_ua_touch(c);
		size_t left = (size_t)w;
		c->queued -= left;
		while (c->qhead && left >= seg_total(c->qhead) - c->qhead->off) {
			struct seg *s = c->qhead;
			left -= seg_total(s) - s->off;
			c->qhead = s->next;
			httpd_seg_free(c, s);
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
	if (c->state == C_HEAD && !c->dead && c->in.len > c->in_off && !httpd_reading_paused(c)) {
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
void httpd_conn_handshake(struct conn *c) {
	struct kinf_httpd *srv = c->srv;
	if (!c->tls) {
		char peek;
		ssize_t n = recv(c->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			httpd_conn_kill(c);
			return;
		}
		if (n < 0) {
			return;
		}
		c->spoke = true;
		if (!(c->tls = kinf_tls_conn_new(srv->opts.tls, c->fd))) {
			httpd_conn_kill(c);
			return;
		}
	}
	httpd_ua_touch(c);
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
			httpd_conn_kill(c);
		}
		return;
	}
	c->state = C_HEAD;
	c->deadline = kinf_clock_now_ms() + srv->opts.header_timeout_ms;
	httpd_conn_read(c);	/* the request may have come with the handshake's end */
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
		httpd_conn_drop(httpd_ua_victim(srv, peer));
	} else if (srv->stats.unauth >= srv->opts.max_unauth) {
		srv->stats.dropped_unauth++;
		httpd_conn_drop(httpd_ua_victim(srv, NULL));
	}
	if (srv->tcp_open < srv->opts.max_conns) {
		return true;
	}
	if (srv->ua_head) {
		srv->stats.dropped_unauth++;
		httpd_conn_drop(httpd_ua_victim(srv, NULL));
		return true;
	}
	struct conn *idle = idlest_kept_alive(srv);
	if (idle) {
		srv->stats.dropped_idle++;
		httpd_conn_drop(idle);
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

void httpd_accept_conns(struct kinf_httpd *srv, struct listener *l) {
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
					httpd_conn_drop(httpd_ua_victim(srv, NULL));
					continue;
				}
				l->paused_until = kinf_clock_now_ms() + 100;
			}
			return;
		}
		if (httpd_set_flags(fd) < 0) {
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
			httpd_ua_append(c);
		}
		if (l->tls) {
			httpd_conn_handshake(c);	/* the ClientHello is often in already */
		}
	}
}
