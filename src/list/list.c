/*
 * The lister (list.h): the pages of one list, asked for in order, parsed
 * while they arrive (listpage.c over listsplit.c).
 *
 * A small list (under SWITCH_BYTES in this call: the usual 'kinf list -n
 * ns') is parsed in the caller's thread, inside libcurl's body callback,
 * one page after the other. A list that proves large moves its parsing to
 * a parser thread, in the middle of a page: the caller's thread keeps
 * receiving and hands the bytes over through a byte pipe (bytepipe.h, in
 * whole 256 KiB blocks the parser parses where they lie), with a mark at
 * each page's end (or failure). From then on, two requests at once
 * ("lanes": two connections over HTTP/1.1, two streams of one over
 * HTTP/2) take turns: lane 0 is the caller's thread and HTTP client,
 * lane 1 a thread with a clone of it. Each asks for every other page.
 *
 * Vocabulary:
 * - turn: the number of the page being received. Only the lane whose page
 *   it is (in_turn) feeds the parser; a lane whose page comes later waits
 *   in its body callback, so the bytes reach the parser in page order.
 * - head token: the next page's continue token, read from the start of the
 *   page being received (where an API server puts a List's metadata,
 *   within HEAD_BYTES). With it the lane in turn gives the next page to the
 *   other lane at once (gave_next): the server starts on page N+1 while
 *   page N still arrives. When the metadata comes after the items (some
 *   custom resources), the next page waits for the parser's token.
 * - published: pages the parser finished, and the last one's token.
 *
 * Invariants:
 * - Requests go out in the order a sequential pager makes them (client-go's
 *   tools/pager): page N+1 is asked for only with page N's token, once per
 *   token (a repeated token is an error: pages in a circle), and at most
 *   --max-list-items pages.
 * - The parser sees the pages' bytes in order, each page closed by exactly
 *   one PAGE_END or ERROR mark; the receiver is at most the pipe's 8 MiB
 *   ahead.
 * - A page's failure is handled when its turn comes, as if it had been
 *   asked for then; a head token and the parser's must agree.
 * - A 410 after the first page (an expired continue token) restarts the
 *   list once, as one full list without paging (FullListIfExpired).
 * - Everything shared between the threads is under ls->lock; stop and
 *   lanes_over are also atomics, read without it between waits.
 *
 * The measurements behind the parser thread, SWITCH_BYTES, the block size
 * and the two lanes are in bench/RESULTS.md ("What the profile showed",
 * first to fourth pass).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytepipe.h"
#include "hashtab.h"
#include "http.h"
#include "json.h"
#include "list.h"
#include "listpage.h"
#include "listsplit.h"
#include "log.h"

#define SWITCH_BYTES ((size_t)2 << 20)
#define HEAD_BYTES ((size_t)64 << 10)	/* where the metadata is looked for */

/*
 * A page's end in the byte pipe, a mark: its first byte says how it ended,
 * then, for PAGE_END, whether the receiver read the token (and asked for
 * the next page with it) and the token, if any.
 */
enum { MARK_PAGE_END = 'P', MARK_ERROR = 'E' };

struct lister;

/* A connection the pages come through; see above. */
struct lane {
	struct lister *ls;
	struct kinf_http *http;		/* NULL with a fetch hook */
	unsigned page;			/* the page it asks for (the receiver's count) */
	char *cont;			/* with this continue token; owned */
	bool has_job;			/* under lock: page and cont given, not yet run */
	bool in_turn;			/* its page is the one being received */
	bool gave_next;			/* it gave page + 1 to the other lane */
	struct kinf_error err;
};

struct lister {
	const struct kinf_list_opts *opts;
	kinf_list_fetch_func fetch;	/* or NULL: kinf_http_get on the lanes' http */
	void *fetch_userdata;
	long limit;			/* the pages' (0 once a full list replaces them) */
	struct kinf_listpage *ps;
	struct kinf_list_result *ret;
	/* the receiver (the caller's thread) */
	size_t inline_bytes;		/* parsed in this thread */
	bool threaded;			/* the parser thread runs */
	struct kinf_bytepipe *pipe;	/* to it */
	struct kinf_buf head_buf;
	int head_state;			/* 0 looking, 1 found, -1 not at the start */
	char *head_token;
	/* shared, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stop;		/* the parser failed */
	bool receiver_gone;		/* no page end will come (out of memory) */
	bool parser_done;
	int parse_rc;
	struct kinf_error parse_err;
	unsigned published;		/* pages the parser finished */
	char *published_token;		/* the last one's continue token */
	/* the lanes: the receiving state above belongs to the lane in turn */
	struct lane lanes[2];		/* 0: the caller's thread and http */
	pthread_cond_t lane_cond;	/* turns and jobs (not cond: its wakeups are many) */
	pthread_t lane_thread;		/* runs lanes[1] */
	bool lane_thread_started;
	unsigned turn;			/* under lock: the page being received */
	atomic_bool lanes_over;		/* the last page ended, or a page failed */
	int lanes_rc;			/* under lock: that failure, */
	unsigned failed_page;		/* the page, */
	struct kinf_error lanes_err;	/* and why */
	/* under lock (when threaded): the continue tokens asked with so far */
	struct kinf_hashtab tokens;	/* of struct seen_token, by h1 */
};

/*
 * A continue token by two independent 64-bit hashes (a hostile server's
 * tokens may be megabytes each; a legitimate one never comes back), and
 * the page it was asked for.
 */
struct seen_token {
	uint64_t h1, h2;
	unsigned page;
};

/* The second hash, independent of the table's FNV-1a. */
static uint64_t token_hash2(const char *t) {
	uint64_t b = UINT64_C(0x9e3779b97f4a7c15);
	for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
		b = (b + *p) * UINT64_C(0xff51afd7ed558ccd);
		b ^= b >> 29;
	}
	return b;
}

static bool same_token(const void *value, const void *ctx) {
	const struct seen_token *t = value, *want = ctx;
	return t->h2 == want->h2;
}

/*
 * Page `page` is to be asked for with token: refuse a token asked with
 * before (the server's pages go round in a circle, or stand still) and a
 * page past --max-list-items (pages without end). Under ls->lock when
 * the lanes run. 0, or <0 with err set.
 */
static int note_token(struct lister *ls, const char *token, unsigned page,
		struct kinf_error *err) {
	size_t max = kinf_listpage_max_items(ls->opts);

	if (page > max) {
		kinf_error_clear(err);
		return kinf_error_set(err, KINF_ETOOBIG, "the list runs to more than %zu "
				"pages (--max-list-items)", max);
	}
	uint64_t h1 = kinf_hashtab_hash_str(token);
	struct seen_token want = { h1, token_hash2(token), 0 };
	struct kinf_hashtab_slot *seen = kinf_hashtab_find(&ls->tokens, h1, same_token, &want);
	if (seen) {
		kinf_error_clear(err);
		return kinf_error_set(err, KINF_EHTTP, "list page %u repeats the "
				"continue token that asked for page %u: the server's "
				"pages go round in a circle", page - 1,
				((const struct seen_token *)seen->value)->page);
	}
	struct seen_token *t = malloc(sizeof(*t));
	if (!t || kinf_hashtab_reserve(&ls->tokens, 1) < 0) {
		free(t);
		return kinf_error_set(err, KINF_ENOMEM, "out of memory");
	}
	*t = want;
	t->page = page;
	kinf_hashtab_insert(&ls->tokens, h1, t);
	return 0;
}

/*
 * The continue token in the start of a page: 1 found (*ret, NULL for the
 * last page), 0 more bytes needed, -1 not there (metadata after the items,
 * or not within HEAD_BYTES). The parser reads the page again in full.
 */
static int head_token(const char *p, size_t n, char **ret) {
	struct kinf_json_reader r;
	struct kinf_json_span k, v;
	bool seen_md = false;
	char *token = NULL;
	int rc;

	kinf_json_reader_init(&r, p, n, 64);
	if (kinf_json_object_begin(&r) < 0) {
		goto incomplete;
	}
	while ((rc = kinf_json_member(&r, &k)) > 0) {
		if (kinf_json_span_eq(&k, "items") || kinf_json_span_eq(&k, "rows")) {
			if (!seen_md) {
				free(token);
				return -1;
			}
			*ret = token;
			return 1;
		}
		if (!kinf_json_span_eq(&k, "metadata") || kinf_json_peek(&r) != KINF_JSON_OBJECT) {
			if (kinf_json_skip(&r) < 0) {
				goto incomplete;
			}
			continue;
		}
		seen_md = true;
		free(token);
		token = NULL;
		if (kinf_json_object_begin(&r) < 0) {
			goto incomplete;
		}
		while ((rc = kinf_json_member(&r, &k)) > 0) {
			if (kinf_json_span_eq(&k, "continue") && kinf_json_peek(&r) == KINF_JSON_STRING) {
				struct kinf_buf b = {0};
				if (kinf_json_string_span(&r, &v) < 0 ||
						kinf_json_span_decode(&v, &b) < 0) {
					kinf_buf_release(&b);
					goto incomplete;
				}
				free(token);
				token = b.len ? kinf_buf_take(&b) : NULL;
				kinf_buf_release(&b);
			} else if (kinf_json_skip(&r) < 0) {
				goto incomplete;
			}
		}
		if (rc < 0) {
			goto incomplete;
		}
	}
incomplete:
	free(token);
	/* Cut short by the end of what arrived so far, or malformed: the parser says which. */
	return n < HEAD_BYTES ? 0 : -1;
}


/*
 * The parser (the byte pipe's consumer thread) failed, or the list ended
 * for it (the last page, or the receiver's error): no page is published
 * any more. On failure the receiving lanes stop. Returns rc.
 */
static int parser_over(struct lister *ls, int rc) {
	pthread_mutex_lock(&ls->lock);
	ls->parse_rc = rc;
	ls->parser_done = true;
	if (rc < 0) {
		atomic_store(&ls->stop, true);
	}
	pthread_cond_broadcast(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
	return rc;
}

/* The pipe's consumer failed: the receiving lanes may wait for data. */
static void parser_failed(void *userdata) {
	struct lister *ls = userdata;
	kinf_http_interrupt(ls->lanes[0].http);
	kinf_http_interrupt(ls->lanes[1].http);
}

/* The parser: a page's bytes, in whole blocks (parsed where they lie). */
static int parse_bytes(const char *data, size_t len, void *userdata,
		struct kinf_error *err) {
	struct lister *ls = userdata;
	struct kinf_listpage *ps = ls->ps;
	int rc;

	(void)err;	/* the parser's errors go to ls->parse_err */
	if (ls->parser_done) {
		return 0;	/* (only this thread sets it while the pipe runs) */
	}
	if ((!ps->splitter && (rc = kinf_listpage_begin(ps)) < 0) ||
			(rc = kinf_listsplit_feed_block(ps->splitter, data, len, ps->reterr)) < 0) {
		return parser_over(ls, rc);
	}
	return 0;
}

/* The parser: a page's end. The page is published, or the list is over. */
static int parse_mark(const char *data, size_t len, void *userdata,
		struct kinf_error *err) {
	struct lister *ls = userdata;
	struct kinf_listpage *ps = ls->ps;
	int rc;

	(void)err;
	if (ls->parser_done) {
		return 0;
	}
	if (data[0] == MARK_ERROR) {
		/* The receiver failed (and knows why). */
		return parser_over(ls, 0);
	}
	if (!ps->splitter && (rc = kinf_listpage_begin(ps)) < 0) {
		return parser_over(ls, rc);
	}
	rc = kinf_listsplit_finish(ps->splitter, ps->reterr);
	bool token_known = len >= 2 && data[1];
	const char *token = data + 2;
	size_t token_len = len >= 2 ? len - 2 : 0;
	if (rc == 0 && token_known && ((token_len > 0) != (ps->cont != NULL) ||
			(ps->cont && (strlen(ps->cont) != token_len ||
			 memcmp(ps->cont, token, token_len) != 0)))) {
		rc = kinf_error_set(ps->reterr, KINF_EJSON, "list page %u: two "
				"different continue tokens in its metadata", ls->ret->pages + 1);
	}
	kinf_listsplit_free(ps->splitter);
	ps->splitter = NULL;
	if (rc < 0) {
		return parser_over(ls, rc);
	}
	if ((rc = kinf_listpage_done(ps)) < 0) {
		return parser_over(ls, rc);
	}
	bool more = ps->cont != NULL;
	pthread_mutex_lock(&ls->lock);
	free(ls->published_token);
	ls->published_token = ps->cont;
	ps->cont = NULL;
	ls->published = ls->ret->pages;
	pthread_cond_broadcast(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
	return more ? 0 : parser_over(ls, 0);
}

/* GET l's page: through the fetch hook, or on l's connection. */
static int lane_get(struct lister *ls, struct lane *l,
		const struct kinf_http_request *req, struct kinf_error *reterr) {
	if (ls->fetch) {
		return ls->fetch(req, l == &ls->lanes[1], ls->fetch_userdata, reterr);
	}
	return kinf_http_get(l->http, req, NULL, reterr);
}

static void *lane_main(void *userdata);
static void give_next(struct lister *ls, struct lane *l, const char *token);

/*
 * Lane 0 (this thread) has the turn; lane 1 waits in its thread for pages.
 * The lanes' jobs and flags are clear (finish_lanes clears them).
 */
static void start_lanes(struct lister *ls) {
	struct lane *l0 = &ls->lanes[0];

	atomic_store(&ls->lanes_over, false);
	ls->lanes_rc = 0;
	ls->failed_page = 0;
	kinf_error_clear(&ls->lanes_err);
	ls->turn = l0->page;
	l0->in_turn = true;
	/* Without a second connection the pages simply come one by one. */
	if ((ls->fetch || ls->lanes[1].http) &&
			pthread_create(&ls->lane_thread, NULL, lane_main, &ls->lanes[1]) == 0) {
		ls->lane_thread_started = true;
	}
	if (ls->head_state == 1 && ls->head_token) {
		give_next(ls, l0, ls->head_token);
	}
}

/*
 * Hand the parsing of the rest of this list to a new thread, in the middle
 * of the current page. The splitter (and whatever it gathered) goes along.
 * On failure the caller's thread simply goes on parsing.
 */
static void start_parser(struct lister *ls) {
	struct kinf_listpage *ps = ls->ps;

	ls->parser_done = false;
	ls->receiver_gone = false;
	ls->parse_rc = 0;
	kinf_error_clear(&ls->parse_err);
	ls->published = ls->ret->pages;
	ls->published_token = NULL;
	atomic_store(&ls->stop, false);
	/* The splitter has read this page so far: its metadata, if it came first. */
	ls->head_state = ps->md_seen ? 1 : -1;
	ls->head_token = ps->md_seen && ps->cont ? strdup(ps->cont) : NULL;
	if (ps->md_seen && ps->cont && !ls->head_token) {
		ls->head_state = -1;
	}
	ps->reterr = &ls->parse_err;
	if (!ls->fetch && !ls->lanes[1].http) {
		ls->lanes[1].http = kinf_http_clone(ls->lanes[0].http);
	}
	struct kinf_bytepipe_opts pipe_opts = {
		.consume = parse_bytes,
		.mark = parse_mark,
		.on_fail = parser_failed,
		.userdata = ls,
		.whole_blocks = true,
		/* The default 8 MiB lead, in blocks: no page faults per block. */
		.max_spare = ((size_t)8 << 20) / KINF_BYTEPIPE_BLOCK_BYTES,
	};
	if (!(ls->pipe = kinf_bytepipe_start(&pipe_opts))) {
		ps->reterr = NULL;	/* restored by the caller */
		free(ls->head_token);
		ls->head_token = NULL;
		return;
	}
	ls->threaded = true;
	start_lanes(ls);
}

/* Wait until l's page is the one being received: false when the list is over. */
static bool wait_turn(struct lister *ls, struct lane *l) {
	if (l->in_turn) {
		return true;
	}
	pthread_mutex_lock(&ls->lock);
	while (ls->turn != l->page && !atomic_load(&ls->lanes_over)) {
		pthread_cond_wait(&ls->lane_cond, &ls->lock);
	}
	l->in_turn = !atomic_load(&ls->lanes_over);
	pthread_mutex_unlock(&ls->lock);
	return l->in_turn;
}

/* The page after l's has this token: the other lane asks for it now. */
static void give_next(struct lister *ls, struct lane *l, const char *token) {
	struct lane *o = &ls->lanes[l == &ls->lanes[0]];
	char *cont;

	if (!ls->lane_thread_started || !(cont = strdup(token))) {
		return;		/* l asks for it when its page is in */
	}
	pthread_mutex_lock(&ls->lock);
	struct kinf_error err = {0};
	/* A token refused here is refused with its error when l's page ends. */
	if (!o->has_job && !atomic_load(&ls->lanes_over) &&
			note_token(ls, token, l->page + 1, &err) == 0) {
		o->page = l->page + 1;
		free(o->cont);
		o->cont = cont;
		cont = NULL;
		o->has_job = true;
		l->gave_next = true;
		pthread_cond_broadcast(&ls->lane_cond);
	}
	pthread_mutex_unlock(&ls->lock);
	free(cont);
}

/* Between waits for data: a lane stops when the list is over. */
static int lane_aborted(void *userdata) {
	struct lane *l = userdata;
	struct lister *ls = l->ls;

	if (ls->threaded && (atomic_load(&ls->lanes_over) || atomic_load(&ls->stop))) {
		return -KINF_ECANCELED;
	}
	return 0;
}

static int lister_body(const char *data, size_t len, void *userdata) {
	struct lane *lane = userdata;
	struct lister *ls = lane->ls;

	if (!ls->threaded) {
		int rc = kinf_listsplit_feed(ls->ps->splitter, data, len, ls->ps->reterr);
		if (rc < 0) {
			return rc;
		}
		ls->inline_bytes += len;
		if (ls->inline_bytes >= SWITCH_BYTES) {
			struct kinf_error *reterr = ls->ps->reterr;
			start_parser(ls);
			if (!ls->threaded) {
				ls->ps->reterr = reterr;
				ls->inline_bytes = 0;	/* try again later */
			}
		}
		return 0;
	}
	if (!wait_turn(ls, lane) || atomic_load(&ls->stop)) {
		return -KINF_ECANCELED;
	}
	if (ls->head_state == 0 && ls->ps->restarted) {
		ls->head_state = -1;	/* its token is not followed: see on_member */
	}
	if (ls->head_state == 0) {
		size_t take = len < HEAD_BYTES - ls->head_buf.len ? len : HEAD_BYTES - ls->head_buf.len;
		if (kinf_buf_append(&ls->head_buf, data, take) < 0) {
			return -KINF_ENOMEM;
		}
		ls->head_state = head_token(ls->head_buf.data, ls->head_buf.len, &ls->head_token);
		if (ls->head_state == 1 && ls->head_token) {
			give_next(ls, lane, ls->head_token);
		}
	}
	int rc = kinf_bytepipe_write(ls->pipe, data, len);
	if (rc < 0 && kinf_bytepipe_failed(ls->pipe) < 0) {
		return -KINF_ECANCELED;	/* the parser failed: its error is the one */
	}
	return rc;
}

/*
 * Stop the lanes, wait for the parser and tear the pipeline down. Returns
 * the parser's error if it failed (into reterr), else rc, or when rc is 0
 * the failure of a page the lanes asked for.
 */
static void finish_lanes(struct lister *ls);

static int stop_parser(struct lister *ls, int rc, struct kinf_error *reterr) {
	finish_lanes(ls);
	if (rc == 0 && ls->lanes_rc < 0) {
		rc = ls->lanes_rc;
		if (reterr) {
			*reterr = ls->lanes_err;
		}
	}
	/* Drained: the parser stops at its failure, an error mark or the last page. */
	int consumer_rc = kinf_bytepipe_finish(ls->pipe, true, NULL);
	if (consumer_rc < 0 && ls->parse_rc == 0) {
		/* (the parser's failure is parse_rc already; this is the pipe's own) */
		ls->parse_rc = kinf_error_set(&ls->parse_err, -consumer_rc, "%s",
				kinf_strerror(consumer_rc));
	}
	ls->pipe = NULL;
	ls->threaded = false;
	if (ls->receiver_gone && ls->parse_rc == 0) {
		ls->parse_rc = kinf_error_set(&ls->parse_err, KINF_ENOMEM, "out of memory");
	}
	if (ls->parse_rc < 0) {
		rc = ls->parse_rc;
		if (reterr) {
			*reterr = ls->parse_err;
		}
	}
	ls->ps->reterr = reterr;
	free(ls->published_token);
	ls->published_token = NULL;
	free(ls->head_token);
	ls->head_token = NULL;
	if (ls->ps->splitter) {
		kinf_listsplit_free(ls->ps->splitter);
		ls->ps->splitter = NULL;
	}
	return rc;
}

/* Tell the parser this page ended (MARK_PAGE_END) or failed (MARK_ERROR). */
static void push_end(struct lister *ls, char kind) {
	struct kinf_buf mark = {0};
	bool token_known = kind == MARK_PAGE_END && ls->head_state == 1;
	int rc = -KINF_ENOMEM;

	if (kinf_buf_append(&mark, &kind, 1) == 0 &&
			kinf_buf_append(&mark, token_known ? "\1" : "", 1) == 0 &&
			(!token_known || !ls->head_token ||
			 kinf_buf_append_str(&mark, ls->head_token) == 0)) {
		rc = kinf_bytepipe_mark(ls->pipe, mark.data, mark.len);
	}
	kinf_buf_release(&mark);
	if (rc < 0 && kinf_bytepipe_failed(ls->pipe) == 0) {
		/* Out of memory: the parser ends without this page's end. */
		pthread_mutex_lock(&ls->lock);
		atomic_store(&ls->stop, true);
		ls->receiver_gone = true;
		pthread_cond_broadcast(&ls->cond);
		pthread_mutex_unlock(&ls->lock);
	}
}

/*
 * l's request for its page is over (rc, why in err). In its turn: end the
 * page for the parser, settle who asks for the next one (the other lane
 * already does, or l now, or nobody: the list is over), pass the turn on.
 */
static void lane_page_end(struct lister *ls, struct lane *l, int rc,
		const struct kinf_error *err) {
	char *next = NULL;
	bool over = true;

	if (!wait_turn(ls, l)) {
		return;		/* another page failed or was the last */
	}
	push_end(ls, rc < 0 ? MARK_ERROR : MARK_PAGE_END);
	if (rc == 0 && !l->gave_next) {
		if (ls->head_state == 1) {
			next = ls->head_token;
			ls->head_token = NULL;
		} else {
			/* The token was not at the start: the parser has it at the end. */
			pthread_mutex_lock(&ls->lock);
			while (ls->published < l->page && !ls->parser_done &&
					!ls->receiver_gone) {
				pthread_cond_wait(&ls->cond, &ls->lock);
			}
			if (ls->published >= l->page && ls->published_token &&
					!(next = strdup(ls->published_token))) {
				rc = -KINF_ENOMEM;
				err = NULL;
			}
			pthread_mutex_unlock(&ls->lock);
		}
	}
	kinf_buf_reset(&ls->head_buf);
	ls->head_state = 0;
	free(ls->head_token);
	ls->head_token = NULL;

	struct kinf_error token_err = {0};
	pthread_mutex_lock(&ls->lock);
	if (rc == 0 && next && (rc = note_token(ls, next, l->page + 1, &token_err)) < 0) {
		err = &token_err;
		/* The parser, done with this page, waits for the next: none comes. */
		pthread_mutex_unlock(&ls->lock);
		push_end(ls, MARK_ERROR);
		pthread_mutex_lock(&ls->lock);
	}
	if (rc < 0) {
		ls->lanes_rc = rc;
		ls->failed_page = l->page;
		if (err) {
			ls->lanes_err = *err;
		} else {
			kinf_error_fill(&ls->lanes_err, KINF_ENOMEM, "out of memory");
		}
	} else if (atomic_load(&ls->stop)) {
		/* The parser stopped first: its error is the one. */
	} else if (l->gave_next) {
		over = false;
	} else if (next) {
		free(l->cont);
		l->cont = next;
		next = NULL;
		l->page++;
		l->has_job = true;
		over = false;
	}
	if (over) {
		atomic_store(&ls->lanes_over, true);
	}
	ls->turn++;
	l->in_turn = false;
	l->gave_next = false;
	pthread_cond_broadcast(&ls->lane_cond);
	pthread_mutex_unlock(&ls->lock);
	free(next);
	if (over) {
		/* The other lane may wait for a page nobody wants any more. */
		kinf_http_interrupt(ls->lanes[l == &ls->lanes[0]].http);
	}
}

/* Ask for the pages given to l, one by one, until the list is over. */
static void lane_loop(struct lister *ls, struct lane *l) {
	struct kinf_buf path = {0};

	for (;;) {
		pthread_mutex_lock(&ls->lock);
		while (!l->has_job && !atomic_load(&ls->lanes_over)) {
			pthread_cond_wait(&ls->lane_cond, &ls->lock);
		}
		bool run = l->has_job && !atomic_load(&ls->lanes_over);
		l->has_job = false;
		pthread_mutex_unlock(&ls->lock);
		if (!run) {
			break;
		}
		int rc = kinf_listpage_path(ls->opts, ls->limit, l->cont, &path);
		if (rc < 0) {
			rc = kinf_error_set(&l->err, KINF_ENOMEM, "out of memory");
		} else {
			struct kinf_http_request req = {
				.path = path.data,
				.accept = kinf_listpage_accept(ls->opts),
				.on_body = lister_body,
				.aborted = lane_aborted,
				.userdata = l,
			};
			rc = lane_get(ls, l, &req, &l->err);
		}
		lane_page_end(ls, l, rc, &l->err);
	}
	kinf_buf_release(&path);
}

static void *lane_main(void *userdata) {
	struct lane *l = userdata;
	lane_loop(l->ls, l);
	return NULL;
}

/* The list is over (or given up): stop lane 1 and clear both lanes' jobs. */
static void finish_lanes(struct lister *ls) {
	pthread_mutex_lock(&ls->lock);
	atomic_store(&ls->lanes_over, true);
	pthread_cond_broadcast(&ls->lane_cond);
	pthread_mutex_unlock(&ls->lock);
	if (ls->lane_thread_started) {
		kinf_http_interrupt(ls->lanes[1].http);
		pthread_join(ls->lane_thread, NULL);
		ls->lane_thread_started = false;
	}
	for (int i = 0; i < 2; i++) {
		struct lane *l = &ls->lanes[i];
		free(l->cont);
		l->cont = NULL;
		l->has_job = l->in_turn = l->gave_next = false;
	}
}

static int list_run(struct kinf_http *http, kinf_list_fetch_func fetch,
		void *fetch_userdata, const struct kinf_list_opts *opts,
		struct kinf_list_result *ret, struct kinf_error *reterr) {
	struct kinf_listpage ps = { .opts = opts, .result = ret, .reterr = reterr };
	struct lister ls = { .opts = opts, .fetch = fetch, .fetch_userdata = fetch_userdata,
		.limit = opts->limit, .ps = &ps, .ret = ret };
	ls.lanes[0].ls = ls.lanes[1].ls = &ls;
	ls.lanes[0].http = http;
	struct kinf_buf path = {0};
	char *cont = NULL;
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	atomic_init(&ls.stop, false);
	atomic_init(&ls.lanes_over, false);
	pthread_mutex_init(&ls.lock, NULL);
	pthread_cond_init(&ls.cond, NULL);
	pthread_cond_init(&ls.lane_cond, NULL);
	for (;;) {
		rc = kinf_listpage_path(opts, ls.limit, cont, &path);
		if (rc < 0) {
			goto out;
		}
		ls.lanes[0].page = ret->pages + 1;
		if ((rc = kinf_listpage_begin(&ps)) < 0) {
			goto out;
		}
		struct kinf_http_request req = {
			.path = path.data,
			.accept = kinf_listpage_accept(opts),
			.on_body = lister_body,
			.aborted = lane_aborted,
			.userdata = &ls.lanes[0],
		};
		rc = lane_get(&ls, &ls.lanes[0], &req, reterr);
		if (ls.threaded) {
			/*
			 * The parser has this page (it started during it): the
			 * lanes ask for the rest, this thread being lane 0.
			 */
			lane_page_end(&ls, &ls.lanes[0], rc, reterr);
			lane_loop(&ls, &ls.lanes[0]);
			rc = stop_parser(&ls, 0, reterr);
			if (rc == -KINF_EGONE && ls.failed_page > 1 && !ps.restarted) {
				goto expired;
			}
			if (rc < 0) {
				goto out;
			}
			break;
		}
		if (rc == 0) {
			rc = kinf_listsplit_finish(ps.splitter, reterr);
		}
		kinf_listsplit_free(ps.splitter);
		ps.splitter = NULL;
		/* Once only: a 410 on the full list is the server's last word. */
		if (rc == -KINF_EGONE && cont && !ps.restarted) {
			goto expired;
		}
		if (rc < 0) {
			goto out;
		}
		if ((rc = kinf_listpage_done(&ps)) < 0) {
			goto out;
		}
		free(cont);
		cont = ps.cont;
		ps.cont = NULL;
		if (!cont) {
			break;
		}
		if ((rc = note_token(&ls, cont, ret->pages + 1, reterr)) < 0) {
			goto out;
		}
		continue;
expired:
		/*
		 * The continue token expired: like the pager's FullListIfExpired,
		 * list everything in one request at the original resourceVersion.
		 */
		kinf_log(1, "list: continue token expired after %u pages; "
				"relisting without paging", ret->pages);
		kinf_listpage_drop(&ps);
		ps.n_items = 0;
		kinf_strv_sort(&ps.handed);
		ps.restarted = true;
		free(cont);
		cont = NULL;
		ls.limit = 0;
		ls.inline_bytes = 0;
		ret->fell_back_to_full_list = true;
		if (opts->on_item && opts->on_restart) {
			opts->on_restart(opts->userdata);
		}
	}
	kinf_listpage_finish(&ps);
	if (!ret->resource_version) {
		ret->resource_version = strdup("");
	}
	rc = 0;
out:
	if (ls.threaded) {
		push_end(&ls, MARK_ERROR);
		stop_parser(&ls, rc, NULL);
	}
	kinf_buf_release(&ls.head_buf);
	for (size_t i = 0; i < kinf_hashtab_span(&ls.tokens); i++) {
		free(ls.tokens.slots[i].value);
	}
	kinf_hashtab_release(&ls.tokens);
	kinf_http_free(ls.lanes[1].http);
	pthread_cond_destroy(&ls.cond);
	pthread_cond_destroy(&ls.lane_cond);
	pthread_mutex_destroy(&ls.lock);
	kinf_listpage_release(&ps);
	free(cont);
	kinf_buf_release(&path);
	if (rc < 0) {
		kinf_list_result_release(ret);
	}
	return rc;
}

int kinf_list(struct kinf_http *http, const struct kinf_list_opts *opts,
		struct kinf_list_result *ret, struct kinf_error *reterr) {
	return list_run(http, NULL, NULL, opts, ret, reterr);
}

int kinf_list_with(kinf_list_fetch_func fetch, void *userdata,
		const struct kinf_list_opts *opts, struct kinf_list_result *ret,
		struct kinf_error *reterr) {
	return list_run(NULL, fetch, userdata, opts, ret, reterr);
}

static void free_rows(struct kinf_list_row *rows, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(rows[i].key);
		free(rows[i].json);
	}
	free(rows);
}

void kinf_list_result_release(struct kinf_list_result *result) {
	if (!result) {
		return;
	}
	kinf_object_list_release(&result->items);
	free_rows(result->rows, result->n_rows);
	free(result->columns_json);
	free(result->resource_version);
	free(result->kind);
	free(result->api_version);
	memset(result, 0, sizeof(*result));
}
