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

#include "clock.h"
#include "httpd_int.h"
#include "tls.h"

/*
 * httpd.c: the loop (httpd_int.h has the map of httpd's files): posts from
 * other threads, timers, deadlines, one poll(2) over every socket; the
 * server made, run and freed.
 */


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
	if (pipe(srv->wake) < 0 || httpd_set_flags(srv->wake[0]) < 0 || httpd_set_flags(srv->wake[1]) < 0) {
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
			httpd_conn_kill(c);
		} else if (c->qhead && now - c->last_progress >= srv->opts.write_timeout_ms) {
			srv->stats.timeouts++;
			if (c->state == C_STREAM && c->req_active && c->req.on_stall) {
				/* The stream's owner ends it; what is left gets one more period. */
				void (*fn)(struct kinf_httpd_req *, void *) = c->req.on_stall;
				c->req.on_stall = NULL;
				c->last_progress = now;
				fn(&c->req, c->req.on_stall_arg);
			} else {
				httpd_conn_kill(c);
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
		if (c->kick || httpd_tls_pending(c)) {
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
		if (c->state == C_LINGER || (!c->peer_eof && c->in.len - c->in_off < httpd_read_cap(c) &&
				!httpd_reading_paused(c))) {
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
			httpd_conn_handshake(c);
			continue;
		}
		if ((re & (POLLIN | POLLHUP | POLLERR)) || (c->rd_wants_write && (re & POLLOUT))) {
			httpd_conn_read(c);
		}
		if (!c->dead && (re & (POLLHUP | POLLERR))) {
			/* Closed both ways: nothing can be answered any more. */
			httpd_conn_kill(c);
		}
		if (!c->dead && ((re & POLLOUT) || (c->wr_wants_read && (re & POLLIN)))) {
			httpd_conn_write(c);
			httpd_conn_drained(c);	/* what it queues goes out below */
			/* What other threads posted meanwhile (serve's events)
			 * is taken in now, not after every client's write:
			 * else it piles up in memory while the loop writes. */
			run_posts(srv);
		}
	}
	for (struct conn *c = srv->conns; c; c = c->next) {
		if (httpd_tls_pending(c)) {
			httpd_conn_read(c);	/* decrypted bytes poll cannot see */
		}
		if (c->kick && !c->dead) {
			c->kick = false;
			httpd_conn_process(c);
		}
		if (!c->dead && c->qhead) {
			httpd_conn_write(c);	/* answers queued by the handler go out now */
			httpd_conn_drained(c);	/* its next part: POLLOUT at the next poll */
			run_posts(srv);
		}
	}
	if (r > 0) {
		for (size_t i = 1; i < 1 + nl; i++) {
			if (srv->pfds[i].revents & POLLIN) {
				for (size_t j = 0; j < srv->n_ls; j++) {
					if (srv->ls[j].fd == srv->pfds[i].fd) {
						httpd_accept_conns(srv, &srv->ls[j]);
					}
				}
			}
		}
	}
	check_deadlines(srv, kinf_clock_now_ms());
	httpd_sweep(srv);
	return 0;
}

int kinf_httpd_run(struct kinf_httpd *srv, struct kinf_error *reterr) {
	int rc = 0;
	while (!srv->stopping) {
		rc = loop_once(srv, true, -1, reterr);
		if (rc < 0) {
			break;
		}
	}
	httpd_close_listeners(srv);
	drop_timers(srv);
	/* Streams end with their last chunk; unanswered requests are dropped. */
	for (struct conn *c = srv->conns; c; c = c->next) {
		if (c->dead) {
			continue;
		}
		c->close_after = true;
		if (c->state == C_STREAM && c->req_active && c->req.whole) {
			httpd_conn_kill(c);	/* a list cut short must not look complete */
		} else if (c->state == C_STREAM && c->req_active) {
			void (*fn)(struct kinf_httpd_req *, void *) = c->req.on_close;
			void *arg = c->req.on_close_arg;
			kinf_httpd_stream_end(&c->req);
			if (fn) {
				fn(&c->req, arg);
			}
		} else if (c->state == C_HANDLER || c->state == C_HEAD || c->state == C_BODY ||
				c->state == C_HANDSHAKE) {
			httpd_conn_kill(c);
		}
	}
	httpd_sweep(srv);
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
		httpd_conn_kill(c);
	}
	httpd_sweep(srv);
	run_posts(srv);
	return rc;
}

void kinf_httpd_free(struct kinf_httpd *srv) {
	if (!srv) {
		return;
	}
	for (struct conn *c = srv->conns; c; c = c->next) {
		httpd_conn_kill(c);
	}
	httpd_sweep(srv);
	run_posts(srv);
	drop_timers(srv);
	httpd_close_listeners(srv);
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
