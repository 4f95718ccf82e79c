#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "http.h"
#include "list.h"
#include "tap.h"

/*
 * The lister (src/list.c) through its fetch hook: pages served from
 * memory, generated from a small description of the server, every request
 * recorded with the lane that made it. test/cli/pager.bats covers the same
 * paths against the test API server and badserver.py.
 */

struct server {
	unsigned pages;		/* pages of a paged list; the last has no token */
	unsigned per_page;	/* items per page */
	size_t pad;		/* bytes of padding in each item */
	bool md_last;		/* metadata after the items (custom resources) */
	unsigned gone_page;	/* 0, or a continued request for it gets 410 */
	bool full_gone;		/* the full list (no limit) gets 410 too */
	bool first_gone;	/* the first page gets 410 */
	bool full_token;	/* the full list carries a continue token */
	unsigned repeat_page;	/* 0, or this page repeats the previous page's token */
	size_t piece;		/* bytes per on_body call */
	unsigned status_page;	/* 0, or this page is status_body (with 200) */
	const char *status_body;
	/* recorded, under lock */
	pthread_mutex_t lock;
	struct kinf_strv paths;
	unsigned lane_pages[2];
	unsigned full_lists;
};

static void server_init(struct server *s) {
	memset(s, 0, sizeof(*s));
	s->piece = 16384;
	pthread_mutex_init(&s->lock, NULL);
}

static void server_release(struct server *s) {
	kinf_strv_release(&s->paths);
	pthread_mutex_destroy(&s->lock);
}

static void item(struct kinf_buf *b, unsigned n, size_t pad) {
	must(kinf_buf_printf(b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
			"{\"name\":\"p-%06u\",\"namespace\":\"ns\",\"resourceVersion\":\"%u\"},"
			"\"spec\":{\"pad\":\"", n, n));
	for (size_t i = 0; i < pad; i++) {
		must(kinf_buf_append(b, "x", 1));
	}
	must(kinf_buf_append_str(b, "\"}}"));
}

/* Items first..last (1-based, inclusive), token NULL for none. */
static void page(struct kinf_buf *b, const struct server *s, unsigned first,
		unsigned last, const char *token) {
	struct kinf_buf md = {0};
	must(kinf_buf_printf(&md, "\"metadata\":{\"resourceVersion\":\"100\"%s%s%s}",
			token ? ",\"continue\":\"" : "", token ? token : "", token ? "\"" : ""));
	must(kinf_buf_append_str(b, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","));
	if (!s->md_last) {
		must(kinf_buf_printf(b, "%s,", md.data));
	}
	must(kinf_buf_append_str(b, "\"items\":["));
	for (unsigned i = first; i <= last; i++) {
		if (i > first) {
			must(kinf_buf_append(b, ",", 1));
		}
		item(b, i, s->pad);
	}
	must(kinf_buf_append_str(b, "]"));
	if (s->md_last) {
		must(kinf_buf_printf(b, ",%s", md.data));
	}
	must(kinf_buf_append_str(b, "}"));
	kinf_buf_release(&md);
}

static int fetch(const struct kinf_http_request *req, unsigned lane, void *userdata,
		struct kinf_error *reterr) {
	struct server *s = userdata;
	const char *c = strstr(req->path, "continue=t");
	bool full = !strstr(req->path, "limit=");
	unsigned pg = c ? (unsigned)strtoul(c + 10, NULL, 10) + 1 : 1;
	struct kinf_buf body = {0};
	char token[32];
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	must(kinf_strv_push_str(&s->paths, req->path));
	s->lane_pages[lane]++;
	s->full_lists += full;
	pthread_mutex_unlock(&s->lock);
	if ((full && s->full_gone) || (!full && c && pg == s->gone_page) ||
			(!full && !c && s->first_gone)) {
		return kinf_error_set(reterr, KINF_EGONE, "410 Gone: Expired: the token expired");
	}
	if (pg == s->status_page) {
		must(kinf_buf_append_str(&body, s->status_body));
	} else if (full) {
		page(&body, s, 1, s->pages * s->per_page, s->full_token ? "t1" : NULL);
	} else {
		unsigned next = pg == s->repeat_page ? pg - 1 : pg;
		snprintf(token, sizeof(token), "t%u", next);
		page(&body, s, (pg - 1) * s->per_page + 1, pg * s->per_page,
				pg < s->pages ? token : NULL);
	}
	for (size_t off = 0; off < body.len && rc == 0; off += s->piece) {
		size_t n = body.len - off < s->piece ? body.len - off : s->piece;
		if (req->aborted && (rc = req->aborted(req->userdata)) < 0) {
			break;
		}
		rc = req->on_body(body.data + off, n, req->userdata);
	}
	kinf_buf_release(&body);
	if (rc < 0) {
		return kinf_error_set(reterr, -rc, "transfer aborted");
	}
	return 0;
}

/* on_item: the items in the order they come, as numbers; ids[0] counts. */
struct taken {
	unsigned *ids;
	size_t n, cap;
};

static int take(struct kinf_object *obj, void *userdata, struct kinf_error *reterr) {
	struct taken *t = userdata;
	(void)reterr;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->ids = realloc(t->ids, t->cap * sizeof(*t->ids));
	}
	t->ids[t->n++] = (unsigned)strtoul(kinf_object_key(obj) + strlen("ns/p-"), NULL, 10);
	kinf_object_unref(obj);
	return 0;
}

/* on_restart: forget what came (the list hands every item over again). */
static unsigned restarts;

static void restart(void *userdata) {
	struct taken *t = userdata;
	t->n = 0;
	restarts++;
}

/* Every item 1..n exactly once, in order. */
static bool in_order(const struct taken *t, unsigned n) {
	if (t->n != n) {
		return false;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (t->ids[i] != i + 1) {
			return false;
		}
	}
	return true;
}

/* The requests asked for pages 1..n in order, page 1 with the RV only. */
static bool pages_in_order(const struct server *s, unsigned n) {
	if (s->paths.n != n) {
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		char want[128];
		if (i == 0) {
			snprintf(want, sizeof(want), "/api/v1/pods?limit=%u&resourceVersion=7",
					s->per_page);
		} else {
			snprintf(want, sizeof(want), "/api/v1/pods?limit=%u&continue=t%u",
					s->per_page, i);
		}
		if (strcmp(s->paths.v[i], want) != 0) {
			printf("# request %u: %s, want %s\n", i + 1, s->paths.v[i], want);
			return false;
		}
	}
	return true;
}

static struct kinf_list_opts opts_for(const struct server *s) {
	return (struct kinf_list_opts){
		.path = "/api/v1/pods",
		.resource_version = "7",
		.limit = s->per_page,
	};
}

/* A small list: parsed in the caller's thread, one lane, sorted result. */
static void test_small(void) {
	struct server s;
	struct kinf_list_result res;
	struct kinf_error err = {0};

	server_init(&s);
	s.pages = 3;
	s.per_page = 2;
	struct kinf_list_opts o = opts_for(&s);
	int rc = kinf_list_with(fetch, &s, &o, &res, &err);
	ok(rc == 0, "small list (%s)", err.message);
	is_int(res.pages, 3, "three pages");
	is_int(res.items.n, 6, "six items");
	ok(res.items.n == 6 && strcmp(kinf_object_key(res.items.v[0]), "ns/p-000001") == 0 &&
			strcmp(kinf_object_key(res.items.v[5]), "ns/p-000006") == 0,
			"items sorted by key");
	is_str(res.resource_version, "100", "the list's resourceVersion");
	is_str(res.kind, "PodList", "kind");
	ok(pages_in_order(&s, 3), "continue followed; resourceVersion on the first page only");
	is_int(s.lane_pages[1], 0, "a small list uses one connection");
	ok(!res.fell_back_to_full_list, "no fallback");
	kinf_list_result_release(&res);
	server_release(&s);
}

/*
 * A large list (over 2 MiB): parsed in a second thread, the pages asked
 * for on two connections taking turns; the items still come in the
 * server's order and the requests in a sequential pager's.
 */
static void test_two_lanes(bool md_last) {
	struct server s;
	struct kinf_list_result res;
	struct kinf_error err = {0};
	struct taken t = {0};

	server_init(&s);
	s.pages = 24;
	s.per_page = 200;
	s.pad = 1500;
	s.md_last = md_last;
	s.piece = 7000;
	struct kinf_list_opts o = opts_for(&s);
	o.on_item = take;
	o.userdata = &t;
	int rc = kinf_list_with(fetch, &s, &o, &res, &err);
	const char *how = md_last ? "metadata after the items" : "metadata first";
	ok(rc == 0, "large list, %s (%s)", how, err.message);
	is_int(res.pages, 24, "%s: 24 pages", how);
	ok(in_order(&t, 24 * 200), "%s: every item once, in the server's order (%zu)", how, t.n);
	ok(pages_in_order(&s, 24), "%s: pages asked for in order", how);
	if (md_last) {
		/* No token before the items: each next page waits for the parser's. */
		ok(s.lane_pages[1] == 0, "%s: no page asked for early (%u on the second "
				"connection)", how, s.lane_pages[1]);
	} else {
		ok(s.lane_pages[0] > 0 && s.lane_pages[1] > 0,
				"%s: both connections served pages (%u and %u)", how,
				s.lane_pages[0], s.lane_pages[1]);
	}
	is_int(res.n_items, 24 * 200, "%s: n_items", how);
	is_int(res.items.n, 0, "%s: on_item keeps nothing", how);
	kinf_list_result_release(&res);
	free(t.ids);
	server_release(&s);
}

/* A list of pages whose continue token expires midway (large: many big items). */
static void server_expiring(struct server *s, bool large) {
	server_init(s);
	s->pages = large ? 24 : 4;
	s->per_page = large ? 200 : 2;
	s->pad = large ? 1500 : 0;
	s->gone_page = large ? 20 : 3;
}

/* An expired token: one full list, once; items handed over are not again. */
static void test_expired(bool large) {
	struct server s;
	struct kinf_list_result res;
	struct kinf_error err = {0};
	struct taken t = {0};
	const char *how = large ? "large list" : "small list";

	server_expiring(&s, large);
	s.full_token = true;
	struct kinf_list_opts o = opts_for(&s);
	o.on_item = take;
	o.userdata = &t;
	int rc = kinf_list_with(fetch, &s, &o, &res, &err);
	ok(rc == 0, "%s: 410 on page %u falls back (%s)", how, s.gone_page, err.message);
	ok(res.fell_back_to_full_list, "%s: says it fell back", how);
	is_int(s.full_lists, 1, "%s: one full list", how);
	is_str(s.paths.n ? s.paths.v[s.paths.n - 1] : NULL, "/api/v1/pods?resourceVersion=7",
			"%s: the full list at the original resourceVersion, its token not followed", how);
	ok(in_order(&t, s.pages * s.per_page), "%s: every item handed over once (%zu)", how, t.n);
	kinf_list_result_release(&res);
	free(t.ids);
	server_release(&s);

	/* A caller that forgets at a restart: every item of the full list comes. */
	server_expiring(&s, large);
	s.full_token = true;
	o = opts_for(&s);
	t = (struct taken){0};
	o.on_item = take;
	o.on_restart = restart;
	o.userdata = &t;
	restarts = 0;
	rc = kinf_list_with(fetch, &s, &o, &res, &err);
	ok(rc == 0 && res.fell_back_to_full_list, "%s, on_restart: falls back (%s)", how,
			err.message);
	is_int(restarts, 1, "%s, on_restart: called once", how);
	ok(in_order(&t, s.pages * s.per_page), "%s, on_restart: every item of the full list "
			"after it (%zu)", how, t.n);
	kinf_list_result_release(&res);
	free(t.ids);
	server_release(&s);

	/* The full list expires too: that is the answer. */
	server_expiring(&s, large);
	s.full_gone = true;
	o = opts_for(&s);
	rc = kinf_list_with(fetch, &s, &o, &res, &err);
	is_int(rc, -KINF_EGONE, "%s: a 410 on the full list is an error", how);
	is_int(s.full_lists, 1, "%s: the full list asked for once", how);
	server_release(&s);
}

/* A 410 on the first page: nothing to fall back from. */
static void test_first_page_gone(void) {
	struct server s;
	struct kinf_list_result res;
	struct kinf_error err = {0};

	server_init(&s);
	s.pages = 3;
	s.per_page = 2;
	s.first_gone = true;
	struct kinf_list_opts o = opts_for(&s);
	int rc = kinf_list_with(fetch, &s, &o, &res, &err);
	is_int(rc, -KINF_EGONE, "a 410 on the first page is the error");
	ok(s.paths.n == 1 && s.full_lists == 0, "no full list after it (%zu requests)", s.paths.n);
	server_release(&s);
}

static void test_repeated_token(bool large) {
	struct server s;
	struct kinf_list_result res;
	struct kinf_error err = {0};
	const char *how = large ? "large list" : "small list";

	server_init(&s);
	s.pages = large ? 24 : 6;
	s.per_page = large ? 200 : 2;
	s.pad = large ? 1500 : 0;
	s.repeat_page = large ? 15 : 4;
	struct kinf_list_opts o = opts_for(&s);
	int rc = kinf_list_with(fetch, &s, &o, &res, &err);
	is_int(rc, -KINF_EHTTP, "%s: a repeated continue token is an error", how);
	ok(strstr(err.message, "repeats the continue token") != NULL,
			"%s: which says so (%s)", how, err.message);
	is_int(s.paths.n, s.repeat_page, "%s: no page asked for with it", how);
	server_release(&s);
}

static void test_limits(void) {
	struct server s;
	struct kinf_list_result res;
	struct kinf_error err = {0};

	server_init(&s);
	s.pages = 5;
	s.per_page = 2;
	struct kinf_list_opts o = opts_for(&s);
	o.limits.max_list_items = 9;
	int rc = kinf_list_with(fetch, &s, &o, &res, &err);
	is_int(rc, -KINF_ETOOBIG, "ten items over --max-list-items 9");
	ok(strstr(err.message, "more than 9 items") != NULL, "says so (%s)", err.message);
	server_release(&s);

	/* Empty pages without end: bounded by the same limit, as pages. */
	server_init(&s);
	s.pages = 1000000;
	s.per_page = 0;
	o = opts_for(&s);
	o.limit = 1;
	o.limits.max_list_items = 5;
	rc = kinf_list_with(fetch, &s, &o, &res, &err);
	is_int(rc, -KINF_ETOOBIG, "empty pages without end stop");
	ok(strstr(err.message, "more than 5 pages") != NULL, "at the page limit (%s)", err.message);
	is_int(s.paths.n, 5, "after five pages");
	server_release(&s);

	/* An item over the size limit. */
	server_init(&s);
	s.pages = 1;
	s.per_page = 2;
	s.pad = 5000;
	o = opts_for(&s);
	o.limits.max_bytes = 4096;
	rc = kinf_list_with(fetch, &s, &o, &res, &err);
	is_int(rc, -KINF_ETOOBIG, "an item over --max-object-size (%s)", err.message);
	server_release(&s);
}

/*
 * A 200 whose body is a Status saying Failure is that error, as
 * client-go's transformResponse makes it (first page or a later one);
 * one saying Success is not.
 */
static void test_status_page(void) {
	static const char failure[] = "{\"apiVersion\":\"v1\",\"metadata\":{},"
		"\"status\":\"Failure\",\"message\":\"pods is forbidden: no\","
		"\"reason\":\"Forbidden\",\"details\":{\"kind\":\"pods\"},\"code\":403,"
		"\"kind\":\"Status\"}";
	struct server s;
	struct kinf_list_result res;

	for (unsigned pg = 1; pg <= 2; pg++) {
		struct kinf_error err = {0};
		server_init(&s);
		s.pages = 3;
		s.per_page = 2;
		s.status_page = pg;
		s.status_body = failure;
		struct kinf_list_opts o = opts_for(&s);
		int rc = kinf_list_with(fetch, &s, &o, &res, &err);
		is_int(rc, -KINF_EHTTP, "page %u a Status Failure: an error", pg);
		is_str(err.message, "pods is forbidden: no", "its message");
		is_int(err.http_status, 403, "its code");
		is_str(err.reason, "Forbidden", "its reason");
		server_release(&s);
	}
	struct kinf_error err = {0};
	server_init(&s);
	s.pages = 1;
	s.per_page = 0;
	s.status_page = 1;
	s.status_body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		"\"status\":\"Success\"}";
	struct kinf_list_opts o = opts_for(&s);
	int rc = kinf_list_with(fetch, &s, &o, &res, &err);
	is_int(rc, 0, "a Status saying Success is no error (%s)", err.message);
	if (rc == 0) {
		kinf_list_result_release(&res);
	}
	server_release(&s);
}

int main(void) {
	test_status_page();
	test_small();
	test_two_lanes(false);
	test_two_lanes(true);
	test_expired(false);
	test_expired(true);
	test_first_page_gone();
	test_repeated_token(false);
	test_repeated_token(true);
	test_limits();
	return tap_done();
}
