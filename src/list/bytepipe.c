/*
 * The byte pipe: blocks of 256 KiB in a queue. The receiver copies into the
 * tail block past its filled length and then publishes the new length under
 * the lock; the consumer reads the head block below the length it last saw,
 * bytes nobody writes any more, outside the lock. A block is recycled only
 * once it is consumed and is no longer the tail, so the receiver never
 * writes into a block the consumer may drop. A mark is a block of its own
 * (is_mark, its bytes in data), taken out of the queue when it is the head:
 * every byte before it was consumed then.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bytepipe.h"

#define BLOCK_BYTES KINF_BYTEPIPE_BLOCK_BYTES
#define DEFAULT_MAX_AHEAD ((size_t)8 << 20)
#define DEFAULT_MAX_SPARE 2	/* consumed blocks kept for reuse (page faults) */

struct block {
	struct block *next;
	size_t len;		/* filled: written by the receiver under the lock */
	bool is_mark;		/* a mark: len bytes of it in data, never written to */
	char data[];		/* BLOCK_BYTES, or a mark's len */
};

struct kinf_bytepipe {
	struct kinf_bytepipe_opts opts;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t data_cond;	/* the consumer waits for bytes */
	pthread_cond_t room_cond;	/* the receiver waits for room */
	struct block *head, *tail;
	struct block *spare;
	unsigned n_spare;
	size_t head_off;	/* consumed bytes of head */
	size_t queued;		/* written and not yet consumed */
	size_t consumed;
	bool consumer_waiting;
	bool writer_waiting;
	bool ended;		/* no more writes */
	bool drop;		/* ended without draining */
	atomic_int rc;		/* the consumer's failure, or 0 */
	struct kinf_error err;	/* its message, set before rc */
};

static void recycle_locked(struct kinf_bytepipe *p, struct block *b) {
	if (p->n_spare < p->opts.max_spare) {
		b->next = p->spare;
		p->spare = b;
		p->n_spare++;
	} else {
		free(b);
	}
}

/* The consumer failed with rc (why in err): tell the receiver. Under lock; unlocks. */
static void *consumer_failed(struct kinf_bytepipe *p, int rc, const struct kinf_error *err) {
	p->err = *err;
	atomic_store(&p->rc, rc);
	pthread_cond_signal(&p->room_cond);
	pthread_mutex_unlock(&p->lock);
	if (p->opts.on_fail) {
		p->opts.on_fail(p->opts.userdata);
	}
	return NULL;
}

static void *consumer_main(void *userdata) {
	struct kinf_bytepipe *p = userdata;
	struct kinf_error err = {0};

	pthread_mutex_lock(&p->lock);
	while (!p->drop) {
		struct block *b = p->head;
		if (b && b->is_mark) {
			p->head = b->next;
			if (p->tail == b) {
				p->tail = NULL;
			}
			pthread_mutex_unlock(&p->lock);
			int rc = p->opts.mark ? p->opts.mark(b->data, b->len,
					p->opts.userdata, &err) : 0;
			free(b);
			pthread_mutex_lock(&p->lock);
			if (rc < 0) {
				return consumer_failed(p, rc, &err);
			}
			continue;
		}
		if (b && p->head_off < b->len && (!p->opts.whole_blocks ||
				b->len == BLOCK_BYTES || b != p->tail || p->ended)) {
			size_t off = p->head_off, end = b->len;
			pthread_mutex_unlock(&p->lock);
			int rc = p->opts.consume(b->data + off, end - off, p->opts.userdata, &err);
			pthread_mutex_lock(&p->lock);
			p->head_off = end;
			p->queued -= end - off;
			p->consumed += end - off;
			if (p->writer_waiting) {
				pthread_cond_signal(&p->room_cond);
			}
			if (rc < 0) {
				return consumer_failed(p, rc, &err);
			}
			continue;
		}
		if (b && b != p->tail) {
			/* Consumed, and the receiver has moved on to a later block. */
			p->head = b->next;
			p->head_off = 0;
			recycle_locked(p, b);
			continue;
		}
		if (p->ended) {
			break;
		}
		p->consumer_waiting = true;
		pthread_cond_wait(&p->data_cond, &p->lock);
		p->consumer_waiting = false;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct kinf_bytepipe *kinf_bytepipe_start(const struct kinf_bytepipe_opts *opts) {
	struct kinf_bytepipe *p = calloc(1, sizeof(*p));
	if (!p) {
		return NULL;
	}
	p->opts = *opts;
	if (!p->opts.max_ahead) {
		p->opts.max_ahead = DEFAULT_MAX_AHEAD;
	}
	if (!p->opts.max_spare) {
		p->opts.max_spare = DEFAULT_MAX_SPARE;
	}
	atomic_init(&p->rc, 0);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->data_cond, NULL);
	pthread_cond_init(&p->room_cond, NULL);
	if (pthread_create(&p->thread, NULL, consumer_main, p) != 0) {
		pthread_cond_destroy(&p->room_cond);
		pthread_cond_destroy(&p->data_cond);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	return p;
}

/* Put block b (its next NULL) at the end of the queue; under lock. */
static void append_locked(struct kinf_bytepipe *p, struct block *b) {
	if (p->tail) {
		p->tail->next = b;
	} else {
		p->head = b;
		p->head_off = 0;
	}
	p->tail = b;
}

/* The tail block with room, a new one appended when it is full; under lock. */
static struct block *tail_with_room_locked(struct kinf_bytepipe *p) {
	struct block *b = p->tail;
	if (b && !b->is_mark && b->len < BLOCK_BYTES) {
		return b;
	}
	b = p->spare;
	if (b) {
		p->spare = b->next;
		p->n_spare--;
	} else if (!(b = malloc(sizeof(*b) + BLOCK_BYTES))) {
		return NULL;
	}
	b->next = NULL;
	b->len = 0;
	b->is_mark = false;
	append_locked(p, b);
	return b;
}

int kinf_bytepipe_write(struct kinf_bytepipe *p, const char *data, size_t len) {
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	while (len > 0 && (rc = atomic_load(&p->rc)) == 0) {
		if (p->queued >= p->opts.max_ahead) {
			p->writer_waiting = true;
			pthread_cond_wait(&p->room_cond, &p->lock);
			p->writer_waiting = false;
			continue;
		}
		struct block *b = tail_with_room_locked(p);
		if (!b) {
			rc = -KINF_ENOMEM;
			break;
		}
		size_t n = BLOCK_BYTES - b->len < len ? BLOCK_BYTES - b->len : len;
		/* Past b->len: bytes the consumer does not read until published. */
		pthread_mutex_unlock(&p->lock);
		memcpy(b->data + b->len, data, n);
		pthread_mutex_lock(&p->lock);
		b->len += n;
		p->queued += n;
		data += n;
		len -= n;
		/* With whole blocks, a block that is not full is nothing to take yet. */
		if (p->consumer_waiting && (!p->opts.whole_blocks || b->len == BLOCK_BYTES)) {
			pthread_cond_signal(&p->data_cond);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

int kinf_bytepipe_mark(struct kinf_bytepipe *p, const char *data, size_t len) {
	struct block *b = malloc(sizeof(*b) + len);
	int rc;

	if (!b) {
		return -KINF_ENOMEM;
	}
	b->next = NULL;
	b->len = len;
	b->is_mark = true;
	if (len) {
		memcpy(b->data, data, len);
	}
	pthread_mutex_lock(&p->lock);
	if ((rc = atomic_load(&p->rc)) < 0) {
		pthread_mutex_unlock(&p->lock);
		free(b);
		return rc;
	}
	append_locked(p, b);
	if (p->consumer_waiting) {
		pthread_cond_signal(&p->data_cond);
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int kinf_bytepipe_failed(struct kinf_bytepipe *p) {
	return atomic_load(&p->rc);
}

size_t kinf_bytepipe_consumed(struct kinf_bytepipe *p) {
	pthread_mutex_lock(&p->lock);
	size_t n = p->consumed;
	pthread_mutex_unlock(&p->lock);
	return n;
}

int kinf_bytepipe_finish(struct kinf_bytepipe *p, bool drain, struct kinf_error *err) {
	pthread_mutex_lock(&p->lock);
	p->ended = true;
	p->drop = !drain;
	pthread_cond_signal(&p->data_cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);

	int rc = atomic_load(&p->rc);
	if (rc < 0 && err) {
		*err = p->err;
	}
	for (struct block *b = p->head, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	for (struct block *b = p->spare, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	pthread_cond_destroy(&p->room_cond);
	pthread_cond_destroy(&p->data_cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return rc;
}
