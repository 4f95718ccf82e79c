/*
 * The transport (transport.h): a libcurl multi handle and the thread that
 * drives it, for all the requests of an HTTP client and its clones.
 *
 * A request to an HTTP/2 server (or one not known yet): its caller sets
 * up the easy handle, then asks the thread to add it (an op on the
 * transport's queue, and curl_multi_wakeup). The thread's write callback
 * appends the body to the stream's queue and wakes the caller, who takes
 * the queued bytes and hands them to its body hook outside any lock. The
 * thread removes the handle when libcurl is done with it (or when the
 * caller asks, to abort) and says so; the caller returns.
 *
 * A request to an HTTP/1.1 server runs in its caller's thread, through the
 * stream's own multi handle (so a wake can interrupt its wait), its body
 * handed to the hook from libcurl's write callback: a slow consumer is
 * held back by TCP, with no queue, pause or thread in between.
 *
 * Which one a server is: known at once for an http:// URL (kinf asks for
 * HTTP/2 over TLS only), else learned from the first response: its first
 * request (the probe) goes through the thread, and the others wait for its
 * status line. Were they let through at once, each would open a
 * connection of its own in the shared multi handle before the server's
 * answer said whether one would do. An HTTP/1.1 probe's connection is
 * closed when it ends (it is in the shared multi handle, where no other
 * request of this server goes): one TLS handshake more per server.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "buf.h"
#include "clock.h"
#include "log.h"
#include "transport.h"

/*
 * The streams an HTTP/2 connection may carry at once, on our side; the
 * server's SETTINGS lower it (nghttpx says 100). A stream beyond it opens a
 * second connection rather than wait: a watch holds its stream for minutes.
 */
#define MAX_CONCURRENT_STREAMS 1000L
/* A stream's queue buffer larger than this is freed once drained. */
#define KEEP_BUFFER_BYTES ((size_t)1 << 20)
/*
 * A queue past GROW_AT bytes is given QUEUE_BYTES at once (the pause
 * bound and a piece or two more), not doubled there step by step: every
 * pause and realloc is memory freed (a sanitizer keeps it for a while).
 */
#define GROW_AT ((size_t)64 << 10)
#define QUEUE_BYTES ((size_t)512 << 10)
/* What the transport knows of the server's HTTP version. */
enum { PROTO_UNKNOWN, PROTO_HTTP1, PROTO_HTTP2 };

enum {
	OP_ADD = 1,
	OP_UNPAUSE = 2,
	OP_REMOVE = 4,
};

struct kinf_transport {
	pthread_mutex_t lock;
	unsigned refs;				/* under lock */
	int proto;				/* under lock: PROTO_* */
	bool probing;				/* under lock: a probe is out */
	unsigned wakes;				/* under lock: streams woken, */
	pthread_cond_t learned;			/* broadcast with proto, probing, wakes */
	CURLM *multi;
	pthread_t thread;
	bool started;				/* under lock */
	bool stopping;				/* under lock */
	struct kinf_transport_stream *ops;	/* under lock: streams with ops */
};

struct kinf_transport_stream {
	struct kinf_transport *t;
	CURL *easy;
	/* the thread running the request's (set by the caller before it) */
	const struct kinf_transport_hooks *hooks;
	bool version_seen;		/* the response's version went to learn() */
	bool probe;			/* this request is the transport's probe */
	bool forbid_reuse;		/* its HTTP/1.1 connection closes after it */
	int direct_abort;		/* in the caller's thread: the body hook's < 0 */
	CURLM *own;			/* under lock (created): the caller's thread's */
	/* under t->lock */
	unsigned ops;
	bool queued;
	struct kinf_transport_stream *next_op;
	/* the transport thread's */
	bool in_multi;
	/* under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kinf_buf in;		/* received, not yet taken by the caller */
	bool version_known;
	bool multiplexed;		/* HTTP/2: never paused */
	bool paused;
	bool discard;			/* the caller is aborting: drop the bytes */
	bool done;
	bool woken;
	bool nomem;
	bool overflow;			/* an HTTP/2 queue past its bound */
	CURLcode code;
	/* the caller's */
	struct kinf_buf out;
};

static void *transport_main(void *userdata);

struct kinf_transport *kinf_transport_new(bool http1) {
	struct kinf_transport *t = calloc(1, sizeof(*t));
	if (!t) {
		return NULL;
	}
	t->multi = curl_multi_init();
	if (!t->multi) {
		free(t);
		return NULL;
	}
	curl_multi_setopt(t->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	curl_multi_setopt(t->multi, CURLMOPT_MAX_CONCURRENT_STREAMS, MAX_CONCURRENT_STREAMS);
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->learned, NULL);
	t->refs = 1;
	t->proto = http1 ? PROTO_HTTP1 : PROTO_UNKNOWN;
	return t;
}

struct kinf_transport *kinf_transport_ref(struct kinf_transport *t) {
	pthread_mutex_lock(&t->lock);
	t->refs++;
	pthread_mutex_unlock(&t->lock);
	return t;
}

struct kinf_transport *kinf_transport_unref(struct kinf_transport *t) {
	if (!t) {
		return NULL;
	}
	pthread_mutex_lock(&t->lock);
	bool last = --t->refs == 0;
	bool started = t->started;
	if (last) {
		t->stopping = true;
	}
	pthread_mutex_unlock(&t->lock);
	if (!last) {
		return NULL;
	}
	if (started) {
		curl_multi_wakeup(t->multi);
		pthread_join(t->thread, NULL);
	}
	curl_multi_cleanup(t->multi);
	pthread_cond_destroy(&t->learned);
	pthread_mutex_destroy(&t->lock);
	free(t);
	return NULL;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata) {
	struct kinf_transport_stream *s = userdata;
	size_t len = size * nmemb;

	pthread_mutex_lock(&s->lock);
	if (!s->version_known) {
		long v = 0;
		curl_easy_getinfo(s->easy, CURLINFO_HTTP_VERSION, &v);
		s->multiplexed = v >= CURL_HTTP_VERSION_2_0;
		s->version_known = true;
	}
	if (s->discard) {
		pthread_mutex_unlock(&s->lock);
		return len;
	}
	if (s->multiplexed && s->in.len + len > KINF_TRANSPORT_H2_QUEUE_MAX) {
		s->overflow = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		return CURL_WRITEFUNC_ERROR;
	}
	if ((s->in.len + len >= GROW_AT && s->in.cap < QUEUE_BYTES &&
			kinf_buf_reserve(&s->in, QUEUE_BYTES - 1 - s->in.len) < 0) ||
			kinf_buf_append(&s->in, data, len) < 0) {
		s->nomem = true;
		len = 0;	/* CURLE_WRITE_ERROR */
	}
	/*
	 * Taken, then paused: CURL_WRITEFUNC_PAUSE would have libcurl copy
	 * the piece aside (and free it) at every pause.
	 */
	bool pause = !s->multiplexed && !s->paused && s->in.len >= KINF_TRANSPORT_PAUSE_BYTES;
	if (pause) {
		s->paused = true;
	}
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (pause) {
		curl_easy_pause(s->easy, CURLPAUSE_RECV);
	}
	return len;
}

/*
 * The server's version, from a response (whichever thread runs it): the
 * waiting requests go on. An HTTP/1.1 probe's connection is not kept.
 */
static void learn(struct kinf_transport_stream *s, bool http2) {
	struct kinf_transport *t = s->t;

	pthread_mutex_lock(&t->lock);
	if (t->proto == PROTO_UNKNOWN) {
		t->proto = http2 ? PROTO_HTTP2 : PROTO_HTTP1;
		pthread_cond_broadcast(&t->learned);
	}
	pthread_mutex_unlock(&t->lock);
	if (!http2 && s->probe) {
		/*
		 * Read when the transfer ends: this one's connection closes.
		 * (libcurl's rule is no call into it from a callback but
		 * curl_easy_pause; this option only sets a flag, lib/setopt.c.)
		 */
		curl_easy_setopt(s->easy, CURLOPT_FORBID_REUSE, 1L);
		s->forbid_reuse = true;
	}
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata) {
	struct kinf_transport_stream *s = userdata;
	long v = 0;

	/* the first header line is the status line: the version is in by then */
	if (!s->version_seen && curl_easy_getinfo(s->easy, CURLINFO_HTTP_VERSION, &v) ==
			CURLE_OK && v != 0) {
		s->version_seen = true;
		learn(s, v >= CURL_HTTP_VERSION_2_0);
	}
	return s->hooks->header ? s->hooks->header(data, size, nmemb, s->hooks->userdata) :
		size * nmemb;
}

/* The write callback of a request in its caller's thread. */
static size_t on_write_direct(char *data, size_t size, size_t nmemb, void *userdata) {
	struct kinf_transport_stream *s = userdata;
	int rc = s->hooks->body(data, size * nmemb, s->hooks->userdata);
	if (rc < 0) {
		s->direct_abort = rc;
		return CURL_WRITEFUNC_ERROR;
	}
	return size * nmemb;
}

struct kinf_transport_stream *kinf_transport_stream_new(struct kinf_transport *t,
		CURL *easy) {
	struct kinf_transport_stream *s = calloc(1, sizeof(*s));
	if (!s) {
		return NULL;
	}
	if (kinf_clock_cond_init(&s->cond) != 0) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->t = kinf_transport_ref(t);
	s->easy = easy;
	curl_easy_setopt(easy, CURLOPT_PRIVATE, s);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
	return s;
}

void kinf_transport_stream_free(struct kinf_transport_stream *s) {
	if (!s) {
		return;
	}
	/* Not queued: every request ended with its handle out of the multi. */
	kinf_transport_unref(s->t);
	if (s->own) {
		curl_multi_cleanup(s->own);
	}
	kinf_buf_release(&s->in);
	kinf_buf_release(&s->out);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Queue ops for the thread (starting it if need be). set: replace, not add. */
static int post(struct kinf_transport_stream *s, unsigned ops, bool set) {
	struct kinf_transport *t = s->t;
	int rc = 0;

	pthread_mutex_lock(&t->lock);
	if (!t->started) {
		if (pthread_create(&t->thread, NULL, transport_main, t) != 0) {
			rc = -1;
			goto out;
		}
		t->started = true;
	}
	s->ops = set ? ops : s->ops | ops;
	if (!s->queued) {
		s->queued = true;
		s->next_op = t->ops;
		t->ops = s;
	}
out:
	pthread_mutex_unlock(&t->lock);
	if (rc == 0) {
		curl_multi_wakeup(t->multi);
	}
	return rc;
}

/* In the transport thread: the handle is out of the multi, the request over. */
static void finish(struct kinf_transport_stream *s, CURLcode code) {
	if (s->in_multi) {
		curl_multi_remove_handle(s->t->multi, s->easy);
		s->in_multi = false;
	}
	pthread_mutex_lock(&s->lock);
	s->done = true;
	s->code = code;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void run_ops(struct kinf_transport_stream *s, unsigned ops) {
	if (ops & OP_ADD) {
		CURLMcode mc = curl_multi_add_handle(s->t->multi, s->easy);
		if (mc != CURLM_OK) {
			finish(s, mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY :
					CURLE_FAILED_INIT);
			return;
		}
		s->in_multi = true;
	}
	if ((ops & OP_UNPAUSE) && s->in_multi) {
		/* (may call on_write at once with what was held back) */
		CURLcode code = curl_easy_pause(s->easy, CURLPAUSE_CONT);
		if (code != CURLE_OK) {
			kinf_log(1, "resuming a paused transfer: %s", curl_easy_strerror(code));
		}
	}
	if ((ops & OP_REMOVE) && s->in_multi) {
		finish(s, CURLE_ABORTED_BY_CALLBACK);
	}
}

static void *transport_main(void *userdata) {
	struct kinf_transport *t = userdata;

	pthread_mutex_lock(&t->lock);
	while (!t->stopping) {
		/* Ops one at a time: a stream re-queued meanwhile is its caller's. */
		while (t->ops) {
			struct kinf_transport_stream *s = t->ops;
			unsigned ops = s->ops;
			t->ops = s->next_op;
			s->next_op = NULL;
			s->queued = false;
			s->ops = 0;
			pthread_mutex_unlock(&t->lock);
			run_ops(s, ops);
			pthread_mutex_lock(&t->lock);
		}
		pthread_mutex_unlock(&t->lock);

		int running = 0, left;
		CURLMcode mc = curl_multi_perform(t->multi, &running);
		CURLMsg *msg;
		while ((msg = curl_multi_info_read(t->multi, &left))) {
			struct kinf_transport_stream *s = NULL;
			if (msg->msg == CURLMSG_DONE &&
					curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
						(char **)&s) == CURLE_OK && s) {
				finish(s, msg->data.result);
			}
		}
		if (mc == CURLM_OK) {
			mc = curl_multi_poll(t->multi, NULL, 0, 1000, NULL);
		}
		if (mc != CURLM_OK) {
			/* Not expected (out of memory): do not spin. */
			kinf_log(1, "HTTP transport: %s", curl_multi_strerror(mc));
			struct timespec ts = { 0, 10 * 1000000L };
			nanosleep(&ts, NULL);
		}
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

void kinf_transport_stream_wake(struct kinf_transport_stream *s) {
	if (!s) {
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->woken = true;
	pthread_cond_signal(&s->cond);
	if (s->own) {
		curl_multi_wakeup(s->own);
	}
	pthread_mutex_unlock(&s->lock);
	/* (a request waiting for the probe) */
	pthread_mutex_lock(&s->t->lock);
	s->t->wakes++;
	pthread_cond_broadcast(&s->t->learned);
	pthread_mutex_unlock(&s->t->lock);
}

static void wait_a_second(struct kinf_transport_stream *s) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

/*
 * Where the request runs: PROTO_HTTP1 in this thread, PROTO_HTTP2 through
 * the transport's, waiting for the probe's answer if need be (the check
 * hook asked every second and at each wake), or becoming the probe. < 0:
 * what the check hook returned.
 */
static int choose(struct kinf_transport_stream *s, const struct kinf_transport_hooks *hooks) {
	struct kinf_transport *t = s->t;
	int proto;

	pthread_mutex_lock(&t->lock);
	unsigned wakes = t->wakes;
	while ((proto = t->proto) == PROTO_UNKNOWN && t->probing) {
		if (t->wakes == wakes) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&t->learned, &t->lock, &ts);
		}
		if (t->proto != PROTO_UNKNOWN || !t->probing || !hooks->check) {
			continue;
		}
		wakes = t->wakes;
		pthread_mutex_unlock(&t->lock);
		int rc = hooks->check(hooks->userdata);
		if (rc < 0) {
			return rc;
		}
		pthread_mutex_lock(&t->lock);
	}
	if (proto == PROTO_UNKNOWN) {
		t->probing = true;
		s->probe = true;
		proto = PROTO_HTTP2;
	}
	pthread_mutex_unlock(&t->lock);
	return proto;
}

/* The request in this thread, through the stream's own multi handle. */
static CURLcode perform_direct(struct kinf_transport_stream *s,
		const struct kinf_transport_hooks *hooks, int *ret_abort) {
	CURLcode code = CURLE_OK;
	int running = 1;

	pthread_mutex_lock(&s->lock);
	if (!s->own) {
		s->own = curl_multi_init();
	}
	CURLM *m = s->own;
	pthread_mutex_unlock(&s->lock);
	*ret_abort = 0;
	if (!m) {
		return CURLE_OUT_OF_MEMORY;
	}
	s->direct_abort = 0;
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_write_direct);
	if (curl_multi_add_handle(m, s->easy) != CURLM_OK) {
		return CURLE_OUT_OF_MEMORY;
	}
	for (;;) {
		CURLMcode mc = curl_multi_perform(m, &running);
		if (s->direct_abort < 0) {
			*ret_abort = s->direct_abort;
			code = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		int rc;
		if (mc == CURLM_OK && running && hooks->check &&
				(rc = hooks->check(hooks->userdata)) < 0) {
			*ret_abort = rc;
			code = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		if (mc == CURLM_OK && running) {
			mc = curl_multi_poll(m, NULL, 0, 1000, NULL);
		}
		if (mc != CURLM_OK) {
			code = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_RECV_ERROR;
			break;
		}
		if (!running) {
			CURLMsg *msg;
			int left;
			while ((msg = curl_multi_info_read(m, &left))) {
				if (msg->msg == CURLMSG_DONE && msg->easy_handle == s->easy) {
					code = msg->data.result;
				}
			}
			break;
		}
	}
	curl_multi_remove_handle(m, s->easy);
	return code;
}

/* The request through the transport's thread. */
static CURLcode perform_shared(struct kinf_transport_stream *s,
		const struct kinf_transport_hooks *hooks, int *ret_abort) {
	int abort_rc = 0;
	bool aborting = false;

	pthread_mutex_lock(&s->lock);
	kinf_buf_reset(&s->in);
	s->version_known = s->multiplexed = s->paused = s->discard = false;
	s->done = s->nomem = s->overflow = false;
	s->code = CURLE_OK;
	pthread_mutex_unlock(&s->lock);
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_write);
	/* set: an op left from the last request (a late remove) is dropped */
	if (post(s, OP_ADD, true) < 0) {
		*ret_abort = 0;
		return CURLE_FAILED_INIT;
	}

	pthread_mutex_lock(&s->lock);
	for (;;) {
		int rc = 0;
		if (s->in.len && !aborting) {
			struct kinf_buf b = s->out;
			s->out = s->in;
			s->in = b;
			bool unpause = s->paused;
			s->paused = false;
			pthread_mutex_unlock(&s->lock);
			/* Resumed now, the next bytes come while these are consumed. */
			if (unpause) {
				post(s, OP_UNPAUSE, false);
			}
			rc = hooks->body(s->out.data, s->out.len, hooks->userdata);
			if (s->out.cap > KEEP_BUFFER_BYTES) {
				kinf_buf_release(&s->out);
			}
			kinf_buf_reset(&s->out);
			pthread_mutex_lock(&s->lock);
		} else if (s->done) {
			break;
		}
		if (rc == 0 && !aborting && hooks->check) {
			s->woken = false;
			pthread_mutex_unlock(&s->lock);
			rc = hooks->check(hooks->userdata);
			pthread_mutex_lock(&s->lock);
		}
		if (rc < 0 && !aborting) {
			aborting = true;
			abort_rc = rc;
			s->discard = true;
			kinf_buf_reset(&s->in);
			if (!s->done) {
				pthread_mutex_unlock(&s->lock);
				post(s, OP_REMOVE, false);
				pthread_mutex_lock(&s->lock);
			}
		}
		if (!s->done && (aborting || (!s->in.len && !s->woken))) {
			wait_a_second(s);
		}
	}
	CURLcode code = s->code;
	if (s->nomem && code == CURLE_WRITE_ERROR) {
		code = CURLE_OUT_OF_MEMORY;
	}
	if (s->overflow && code == CURLE_WRITE_ERROR) {
		code = CURLE_FILESIZE_EXCEEDED;
	}
	kinf_buf_reset(&s->in);
	if (s->in.cap > KEEP_BUFFER_BYTES) {
		kinf_buf_release(&s->in);
	}
	pthread_mutex_unlock(&s->lock);
	*ret_abort = abort_rc;
	return aborting ? CURLE_ABORTED_BY_CALLBACK : code;
}

CURLcode kinf_transport_perform(struct kinf_transport_stream *s,
		const struct kinf_transport_hooks *hooks, int *ret_abort) {
	s->hooks = hooks;
	s->version_seen = s->probe = s->forbid_reuse = false;
	int proto = choose(s, hooks);
	if (proto < 0) {
		*ret_abort = proto;
		return CURLE_ABORTED_BY_CALLBACK;
	}
	CURLcode code = proto == PROTO_HTTP1 ? perform_direct(s, hooks, ret_abort) :
		perform_shared(s, hooks, ret_abort);
	if (s->probe) {
		/* answered or not: the next request learns or probes */
		pthread_mutex_lock(&s->t->lock);
		s->t->probing = false;
		pthread_cond_broadcast(&s->t->learned);
		pthread_mutex_unlock(&s->t->lock);
	}
	if (s->forbid_reuse) {
		curl_easy_setopt(s->easy, CURLOPT_FORBID_REUSE, 0L);
	}
	return code;
}
