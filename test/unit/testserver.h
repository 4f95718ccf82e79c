#ifndef KINF_TEST_TESTSERVER_H
#define KINF_TEST_TESTSERVER_H

/*
 * A tiny HTTP/1.1 server in a thread of a unit test, on a loopback socket:
 * it answers each request with the next of a script of raw responses (then
 * 599 "Script Ended") and keeps the request heads, in order. One
 * connection at a time, kept alive until the client closes it: scripts for
 * clients that open several connections say "Connection: close". A
 * response that starts with "DELAY <ms>\n" is sent that long after the
 * request (a server that thinks, or a watch that stays quiet).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "loopback.h"
#include "tap.h"

struct server {
	int fd;
	int port;
	pthread_t thread;
	atomic_bool stop;
	const char *const *script;	/* raw responses, one per request, NULL-ended */
	size_t next;
	pthread_mutex_t lock;
	struct kinf_strv heads;		/* the request heads, in order */
};

/* Read one request head from c into head: false at EOF or on stop. */
static bool read_head(struct server *s, int c, struct kinf_buf *head) {
	kinf_buf_reset(head);
	while (!atomic_load(&s->stop)) {
		struct pollfd p = { .fd = c, .events = POLLIN };
		if (poll(&p, 1, 50) <= 0) {
			continue;
		}
		char ch;
		if (read(c, &ch, 1) != 1) {
			return false;
		}
		must(kinf_buf_append(head, &ch, 1));
		if (head->len >= 4 && memcmp(head->data + head->len - 4, "\r\n\r\n", 4) == 0) {
			must(kinf_buf_append(head, "", 0));
			return true;
		}
	}
	return false;
}

static void *server_main(void *userdata) {
	struct server *s = userdata;
	struct kinf_buf head = {0};

	while (!atomic_load(&s->stop)) {
		int c = loopback_accept(s->fd);
		if (c < 0) {
			continue;
		}
		/* Keep-alive: requests on one connection until the client closes it. */
		while (read_head(s, c, &head)) {
			pthread_mutex_lock(&s->lock);
			must(kinf_strv_push_str(&s->heads, head.data));
			const char *resp = s->script[s->next] ? s->script[s->next++] :
				"HTTP/1.1 599 Script Ended\r\nContent-Length: 0\r\n\r\n";
			pthread_mutex_unlock(&s->lock);
			if (strncmp(resp, "DELAY ", 6) == 0) {
				long ms = strtol(resp + 6, NULL, 10);
				for (long waited = 0; waited < ms && !atomic_load(&s->stop);
						waited += 10) {
					poll(NULL, 0, 10);
				}
				resp = strchr(resp, '\n') + 1;
			}
			size_t off = 0, len = strlen(resp);
			while (off < len) {
				ssize_t n = write(c, resp + off, len - off);
				if (n <= 0) {
					break;
				}
				off += (size_t)n;
			}
		}
		close(c);
	}
	kinf_buf_release(&head);
	return NULL;
}

static void server_start(struct server *s, const char *const *script) {
	memset(s, 0, sizeof(*s));
	s->script = script;
	atomic_init(&s->stop, false);
	pthread_mutex_init(&s->lock, NULL);
	s->fd = loopback_listen(&s->port);
	pthread_create(&s->thread, NULL, server_main, s);
}

static void server_stop(struct server *s) {
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	close(s->fd);
	kinf_strv_release(&s->heads);
	pthread_mutex_destroy(&s->lock);
}

#endif
