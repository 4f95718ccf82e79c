#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "loopback.h"
#include "tap.h"
#include "transport.h"

/*
 * The transport (one multi handle and its thread for a client and its
 * clones), against an HTTP/1.1 server in this test (a thread per
 * connection, on loopback): connections reused in turn and one per request
 * in flight, a consumer that stops for a while holding up no other
 * request, its transfer paused meanwhile (the server cannot finish) and
 * its bytes intact after, an abort from the check hook or the body hook.
 *
 * With KINF_TEST_H2_URL (and KINF_TEST_H2_CA, KINF_TEST_H2_TOKEN), the
 * same consumer that stops, against an HTTP/2 server (test/cli/h2.bats:
 * nghttpx in front of test/fakeapi): the other request completes on the
 * same connection meanwhile.
 */

#define BIG_BYTES ((size_t)32 << 20)	/* more than loopback's socket buffers hold */

/* The server ------------------------------------------------------------ */

#define MAX_CONNS 16

struct server {
	int fd;
	int port;
	pthread_t thread;
	atomic_bool stop;
	atomic_int accepts;
	atomic_int hangups;		/* connections the client closed */
	atomic_bool big_written;	/* a /big answer was written to its end */
	pthread_t conns[MAX_CONNS];
	int conn_fds[MAX_CONNS];
	int n_conns;
};

struct conn {
	struct server *s;
	int fd;
};

static char pattern(size_t i) {
	return (char)('a' + (i * 7) % 26);
}

static bool send_all(int fd, const char *p, size_t len) {
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0) {
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read a request head: its path in path (NUL-ended), false at EOF or stop. */
static bool read_request(struct server *s, int fd, char *path, size_t size) {
	char head[4096];
	size_t len = 0;
	while (!atomic_load(&s->stop) && len < sizeof(head) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 50) <= 0) {
			continue;
		}
		if (read(fd, head + len, 1) != 1) {
			return false;
		}
		len++;
		if (len >= 4 && memcmp(head + len - 4, "\r\n\r\n", 4) == 0) {
			head[len] = '\0';
			char *sp = strchr(head, ' ');
			char *end = sp ? strchr(sp + 1, ' ') : NULL;
			if (!end || (size_t)(end - sp - 1) >= size) {
				return false;
			}
			memcpy(path, sp + 1, (size_t)(end - sp - 1));
			path[end - sp - 1] = '\0';
			return true;
		}
	}
	return false;
}

static void *conn_main(void *userdata) {
	struct conn *c = userdata;
	struct server *s = c->s;
	char path[256];

	for (;;) {
		if (!read_request(s, c->fd, path, sizeof(path))) {
			if (!atomic_load(&s->stop)) {
				atomic_fetch_add(&s->hangups, 1);
			}
			break;
		}
		if (strcmp(path, "/small") == 0) {
			static const char r[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
			if (!send_all(c->fd, r, sizeof(r) - 1)) {
				break;
			}
		} else if (strcmp(path, "/big") == 0) {
			char buf[64 << 10];
			int n = snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\n"
					"Content-Length: %zu\r\n\r\n", BIG_BYTES);
			if (!send_all(c->fd, buf, (size_t)n)) {
				break;
			}
			size_t off = 0;
			while (off < BIG_BYTES && !atomic_load(&s->stop)) {
				size_t k = BIG_BYTES - off < sizeof(buf) ? BIG_BYTES - off : sizeof(buf);
				for (size_t i = 0; i < k; i++) {
					buf[i] = pattern(off + i);
				}
				if (!send_all(c->fd, buf, k)) {
					break;
				}
				off += k;
			}
			if (off == BIG_BYTES) {
				atomic_store(&s->big_written, true);
			}
		} else {
			/* /hang: a first chunk, then nothing, as an idle watch */
			static const char r[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				"5\r\nfirst\r\n";
			if (!send_all(c->fd, r, sizeof(r) - 1)) {
				break;
			}
			char ch;
			while (!atomic_load(&s->stop)) {
				struct pollfd p = { .fd = c->fd, .events = POLLIN };
				if (poll(&p, 1, 50) > 0 && read(c->fd, &ch, 1) <= 0) {
					break;
				}
			}
			break;
		}
	}
	free(c);
	return NULL;
}

static void *server_main(void *userdata) {
	struct server *s = userdata;

	while (!atomic_load(&s->stop)) {
		int fd = loopback_accept(s->fd);
		if (fd < 0) {
			continue;
		}
		struct conn *c = malloc(sizeof(*c));
		if (!c || s->n_conns == MAX_CONNS) {
			free(c);
			close(fd);
			continue;
		}
		c->s = s;
		c->fd = fd;
		atomic_fetch_add(&s->accepts, 1);
		s->conn_fds[s->n_conns] = fd;
		if (pthread_create(&s->conns[s->n_conns], NULL, conn_main, c) != 0) {
			free(c);
			close(fd);
			continue;
		}
		s->n_conns++;
	}
	for (int i = 0; i < s->n_conns; i++) {
		pthread_join(s->conns[i], NULL);
		close(s->conn_fds[i]);
	}
	return NULL;
}

static void server_start(struct server *s) {
	memset(s, 0, sizeof(*s));
	s->fd = loopback_listen(&s->port);
	pthread_create(&s->thread, NULL, server_main, s);
}

static void server_stop(struct server *s) {
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	close(s->fd);
}

/* Clients ---------------------------------------------------------------- */

/* A request through a stream, its body collected, a consumer that may wait. */
struct client {
	CURL *easy;
	struct kinf_transport_stream *stream;
	struct curl_slist *headers;
	struct kinf_buf body;
	CURLcode code;
	int abort_rc;
	int fail_with;			/* the body hook's answer */
	atomic_bool cancel;		/* the check hook's */
	/* a consumer that stops at its first bytes until released */
	bool hold;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool holding, released;
	pthread_t thread;
};

static void client_init(struct client *c, struct kinf_transport *t) {
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->easy = curl_easy_init();
	c->stream = kinf_transport_stream_new(t, c->easy);
	const char *ca = getenv("KINF_TEST_H2_CA");
	const char *token = getenv("KINF_TEST_H2_TOKEN");
	curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	if (ca) {
		curl_easy_setopt(c->easy, CURLOPT_CAINFO, ca);
	}
	if (token) {
		struct kinf_buf h = {0};
		must(kinf_buf_printf(&h, "Authorization: Bearer %s", token));
		c->headers = curl_slist_append(NULL, h.data);
		curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->headers);
		kinf_buf_release(&h);
	}
}

static void client_release(struct client *c) {
	kinf_transport_stream_free(c->stream);
	curl_easy_cleanup(c->easy);
	curl_slist_free_all(c->headers);
	kinf_buf_release(&c->body);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
}

static int on_body(const char *data, size_t len, void *userdata) {
	struct client *c = userdata;
	if (c->hold) {
		pthread_mutex_lock(&c->lock);
		c->holding = true;
		pthread_cond_broadcast(&c->cond);
		while (!c->released) {
			pthread_cond_wait(&c->cond, &c->lock);
		}
		c->hold = false;
		pthread_mutex_unlock(&c->lock);
	}
	if (c->fail_with) {
		return c->fail_with;
	}
	return kinf_buf_append(&c->body, data, len) < 0 ? -KINF_ENOMEM : 0;
}

static int on_check(void *userdata) {
	struct client *c = userdata;
	return atomic_load(&c->cancel) ? -KINF_ECANCELED : 0;
}

static void run(struct client *c, const char *url) {
	const struct kinf_transport_hooks hooks = {
		.body = on_body, .check = on_check, .userdata = c,
	};
	kinf_buf_reset(&c->body);
	curl_easy_setopt(c->easy, CURLOPT_URL, url);
	c->code = kinf_transport_perform(c->stream, &hooks, &c->abort_rc);
}

struct bg {
	struct client *c;
	char url[256];
};

static void *bg_main(void *userdata) {
	struct bg *b = userdata;
	run(b->c, b->url);
	return NULL;
}

static void start_bg(struct bg *b, struct client *c, const char *url) {
	b->c = c;
	snprintf(b->url, sizeof(b->url), "%s", url);
	pthread_create(&c->thread, NULL, bg_main, b);
}

static void wait_holding(struct client *c) {
	pthread_mutex_lock(&c->lock);
	while (!c->holding) {
		pthread_cond_wait(&c->cond, &c->lock);
	}
	pthread_mutex_unlock(&c->lock);
}

static void release(struct client *c) {
	pthread_mutex_lock(&c->lock);
	c->released = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

static bool big_intact(const struct kinf_buf *b) {
	if (b->len != BIG_BYTES) {
		return false;
	}
	for (size_t i = 0; i < b->len; i++) {
		if (b->data[i] != pattern(i)) {
			return false;
		}
	}
	return true;
}

/* The tests -------------------------------------------------------------- */

static void test_reuse(void) {
	struct server s;
	struct client a, b;
	char url[128];

	server_start(&s);
	struct kinf_transport *t = kinf_transport_new(true);
	client_init(&a, t);
	client_init(&b, t);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/small", s.port);
	run(&a, url);
	is_int(a.code, CURLE_OK, "HTTP/1.1: a request in the caller's thread");
	ok(a.body.len == 5 && memcmp(a.body.data, "hello", 5) == 0, "its body");
	run(&a, url);
	is_int(a.code, CURLE_OK, "the client's next request");
	is_int(atomic_load(&s.accepts), 1, "on its connection, kept alive");
	run(&b, url);
	is_int(b.code, CURLE_OK, "a clone's request");
	is_int(atomic_load(&s.accepts), 2, "on a connection of its own");
	client_release(&a);
	client_release(&b);
	kinf_transport_unref(t);
	server_stop(&s);
}

/* The version not known: the first request finds HTTP/1.1 out for the others. */
static void test_probe(void) {
	struct server s;
	struct client a, b;
	char url[128];

	server_start(&s);
	struct kinf_transport *t = kinf_transport_new(false);
	client_init(&a, t);
	client_init(&b, t);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/small", s.port);
	run(&a, url);
	is_int(a.code, CURLE_OK, "version unknown: the first request through the transport");
	ok(a.body.len == 5, "with its body");
	for (int i = 0; i < 500 && atomic_load(&s.hangups) == 0; i++) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	is_int(atomic_load(&s.hangups), 1, "HTTP/1.1: its connection closed after it");
	run(&b, url);
	run(&a, url);
	is_int(b.code + a.code, CURLE_OK, "then the clients' requests in their threads");
	run(&a, url);
	is_int(atomic_load(&s.accepts), 3, "the first one's connection not kept, "
			"then one for each client");
	client_release(&a);
	client_release(&b);
	kinf_transport_unref(t);
	server_stop(&s);
}

static void test_slow_consumer(void) {
	struct server s;
	struct client a, b;
	struct bg bga;
	char url[128];

	server_start(&s);
	struct kinf_transport *t = kinf_transport_new(false);
	client_init(&a, t);
	client_init(&b, t);
	a.hold = true;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/big", s.port);
	start_bg(&bga, &a, url);
	wait_holding(&a);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/small", s.port);
	run(&b, url);
	is_int(b.code, CURLE_OK, "HTTP/1.1: a request completes while another's consumer waits");
	ok(b.body.len == 5, "with its body");
	is_int(atomic_load(&s.accepts), 2, "on a connection of its own");
	/* Unpaused, the server would be done at once: give it a second. */
	for (int i = 0; i < 100 && !atomic_load(&s.big_written); i++) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	ok(!atomic_load(&s.big_written), "the waiting consumer's transfer is paused "
			"(the server cannot write its %zu MiB)", BIG_BYTES >> 20);
	release(&a);
	pthread_join(a.thread, NULL);
	is_int(a.code, CURLE_OK, "resumed, it completes");
	ok(big_intact(&a.body), "every byte, in order (%zu of %zu)", a.body.len, BIG_BYTES);
	client_release(&a);
	client_release(&b);
	kinf_transport_unref(t);
	server_stop(&s);
}

static void test_abort(void) {
	struct server s;
	struct client a;
	struct bg bga;
	char url[128];

	server_start(&s);
	struct kinf_transport *t = kinf_transport_new(false);
	client_init(&a, t);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hang", s.port);
	a.hold = true;	/* to know when the first bytes came */
	start_bg(&bga, &a, url);
	wait_holding(&a);
	atomic_store(&a.cancel, true);
	release(&a);
	kinf_transport_stream_wake(a.stream);
	pthread_join(a.thread, NULL);
	is_int(a.code, CURLE_ABORTED_BY_CALLBACK, "the check hook ends an idle transfer");
	is_int(a.abort_rc, -KINF_ECANCELED, "with what it returned");
	ok(a.body.len == 5 && memcmp(a.body.data, "first", 5) == 0, "after the bytes that came");

	/* HTTP/1.1 known now: the same in the caller's thread, waiting in its poll */
	atomic_store(&a.cancel, false);
	a.hold = true;
	a.holding = a.released = false;
	start_bg(&bga, &a, url);
	wait_holding(&a);
	release(&a);
	atomic_store(&a.cancel, true);
	kinf_transport_stream_wake(a.stream);
	pthread_join(a.thread, NULL);
	is_int(a.code, CURLE_ABORTED_BY_CALLBACK, "in the caller's thread too");
	is_int(a.abort_rc, -KINF_ECANCELED, "with what the hook returned");
	ok(a.body.len == 5 && memcmp(a.body.data, "first", 5) == 0, "after its bytes");

	atomic_store(&a.cancel, false);
	a.fail_with = -KINF_EJSON;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/big", s.port);
	run(&a, url);
	is_int(a.code, CURLE_ABORTED_BY_CALLBACK, "the body hook ends a transfer");
	is_int(a.abort_rc, -KINF_EJSON, "with what it returned");
	a.fail_with = 0;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/small", s.port);
	run(&a, url);
	is_int(a.code, CURLE_OK, "the next request on the stream is not aborted too");
	is_int(a.abort_rc, 0, "and no abort code");
	ok(a.body.len == 5, "its body");
	client_release(&a);
	kinf_transport_unref(t);
	server_stop(&s);
}

static void test_h2(void) {
	const char *base = getenv("KINF_TEST_H2_URL");
	if (!base) {
		skip("no HTTP/2 server (KINF_TEST_H2_URL: test/cli/h2.bats)",
				"HTTP/2: one connection, a waiting consumer holds up no other stream");
		return;
	}
	struct client a, b;
	struct bg bga;
	char url[512];
	long va = 0, vb = 0, pa = 0, pb = 0;

	struct kinf_transport *t = kinf_transport_new(false);
	client_init(&a, t);
	client_init(&b, t);
	snprintf(url, sizeof(url), "%s/api/v1/pods", base);
	a.hold = true;
	start_bg(&bga, &a, url);
	wait_holding(&a);
	snprintf(url, sizeof(url), "%s/api/v1/pods?limit=1", base);
	run(&b, url);
	is_int(b.code, CURLE_OK, "HTTP/2: a stream completes while another's consumer waits");
	curl_easy_getinfo(b.easy, CURLINFO_HTTP_VERSION, &vb);
	curl_easy_getinfo(b.easy, CURLINFO_LOCAL_PORT, &pb);
	release(&a);
	pthread_join(a.thread, NULL);
	is_int(a.code, CURLE_OK, "the waiting one completes after");
	curl_easy_getinfo(a.easy, CURLINFO_HTTP_VERSION, &va);
	curl_easy_getinfo(a.easy, CURLINFO_LOCAL_PORT, &pa);
	ok(va == CURL_HTTP_VERSION_2_0 && vb == CURL_HTTP_VERSION_2_0, "both over HTTP/2");
	ok(pa && pa == pb, "on one connection (local ports %ld and %ld)", pa, pb);
	size_t first = a.body.len;
	snprintf(url, sizeof(url), "%s/api/v1/pods", base);
	run(&a, url);
	ok(first > (1 << 20) && a.body.len == first, "the waiting stream's body whole "
			"(%zu bytes, again %zu)", first, a.body.len);
	client_release(&a);
	client_release(&b);
	kinf_transport_unref(t);
}

int main(void) {
	curl_global_init(CURL_GLOBAL_DEFAULT);
	test_reuse();
	test_probe();
	test_slow_consumer();
	test_abort();
	test_h2();
	curl_global_cleanup();
	return tap_done();
}
