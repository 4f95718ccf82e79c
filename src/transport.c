/*
 * The transport (transport.h): a libcurl multi handle and the thread that
 * drives it, for all the requests of an HTTP client and its clones.
 *
 * A request: its caller sets up the easy handle, then asks the thread to
 * add it (an op on the transport's queue, and curl_multi_wakeup). The
 * thread's write callback appends the body to the stream's queue and wakes
 * the caller, who takes the queued bytes and hands them to its body hook
 * outside any lock. The thread removes the handle when libcurl is done with
 * it (or when the caller asks, to abort) and says so; the caller returns.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "buf.h"
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

enum {
	OP_ADD = 1,
	OP_UNPAUSE = 2,
	OP_REMOVE = 4,
};

struct kinf_transport {
	pthread_mutex_t lock;
	unsigned refs;				/* under lock */
	CURLM *multi;
	pthread_t thread;
	bool started;				/* under lock */
	bool stopping;				/* under lock */
	struct kinf_transport_stream *ops;	/* under lock: streams with ops */
};

struct kinf_transport_stream {
	struct kinf_transport *t;
	CURL *easy;
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
	CURLcode code;
	/* the caller's */
	struct kinf_buf out;
};

static void *transport_main(void *userdata);

struct kinf_transport *kinf_transport_new(void) {
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
	t->refs = 1;
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
	if (s->in.len + len >= GROW_AT && s->in.cap < QUEUE_BYTES &&
			kinf_buf_reserve(&s->in, QUEUE_BYTES - 1 - s->in.len) < 0) {
		/* (the append below asks for less) */
	}
	if (kinf_buf_append(&s->in, data, len) < 0) {
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

struct kinf_transport_stream *kinf_transport_stream_new(struct kinf_transport *t,
		CURL *easy) {
	struct kinf_transport_stream *s = calloc(1, sizeof(*s));
	if (!s) {
		return NULL;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->lock, NULL);
	s->t = kinf_transport_ref(t);
	s->easy = easy;
	curl_easy_setopt(easy, CURLOPT_PRIVATE, s);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
	return s;
}

void kinf_transport_stream_free(struct kinf_transport_stream *s) {
	if (!s) {
		return;
	}
	/* Not queued: every request ended with its handle out of the multi. */
	kinf_transport_unref(s->t);
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
	pthread_mutex_unlock(&s->lock);
}

static void wait_a_second(struct kinf_transport_stream *s) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
}

CURLcode kinf_transport_perform(struct kinf_transport_stream *s,
		const struct kinf_transport_hooks *hooks, int *ret_abort) {
	int abort_rc = 0;
	bool aborting = false;

	pthread_mutex_lock(&s->lock);
	kinf_buf_reset(&s->in);
	s->version_known = s->multiplexed = s->paused = s->discard = false;
	s->done = s->nomem = false;
	s->code = CURLE_OK;
	pthread_mutex_unlock(&s->lock);
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
	kinf_buf_reset(&s->in);
	if (s->in.cap > KEEP_BUFFER_BYTES) {
		kinf_buf_release(&s->in);
	}
	pthread_mutex_unlock(&s->lock);
	*ret_abort = abort_rc;
	return aborting ? CURLE_ABORTED_BY_CALLBACK : code;
}
