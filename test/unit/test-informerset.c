/*
 * Unit tests for a set of informers (src/informerset.c) over recorded
 * streams, without a network: events of several informers merged and
 * tagged with their member; exit_after_sync waiting for every member; one
 * member failing for good reported once while the others go on; stop
 * while a reader waits; how far a member reads ahead, the sync as the
 * reader sees it, a removed member's pops handed out first, and members
 * that follow namespaces, one of which leaves with its tombstones.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "indexer.h"
#include "informerset.h"
#include "tap.h"

/*
 * A List of pods named names (space separated) in namespace ns, or with
 * ns NULL of namespaces.
 */
static char *list_of(const char *ns, const char *names) {
	struct kinf_buf b = {0};
	char *copy = strdup(names);
	char *save = NULL;
	int n = 0;
	must(kinf_buf_append_str(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\","
			"\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["));
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		must(kinf_buf_printf(&b, "%s{\"metadata\":{\"name\":\"%s\",%s%s%s"
				"\"resourceVersion\":\"%d\"}}", n ? "," : "", t,
				ns ? "\"namespace\":\"" : "", ns ? ns : "", ns ? "\"," : "", n + 1));
		n++;
	}
	must(kinf_buf_append_str(&b, "]}\n"));
	free(copy);
	return kinf_buf_take(&b);
}

static int pipe_with(const char *text, int *ret_wr) {
	int fds[2];
	if (pipe(fds) != 0) {
		abort();
	}
	size_t len = strlen(text);
	if (write(fds[1], text, len) != (ssize_t)len) {
		abort();
	}
	*ret_wr = fds[1];
	return fds[0];
}

struct src {
	int rd, wr;
};

static void add_pipe(struct kinf_informerset *set, struct src *s, const char *text,
		bool exit_after_sync) {
	s->rd = pipe_with(text, &s->wr);
	struct kinf_informer_opts o = { .replay_fd = s->rd, .exit_after_sync = exit_after_sync };
	struct kinf_error err = {0};
	size_t i = 99;
	if (kinf_informerset_add(set, &o, &i, &err) < 0 || i + 1 != kinf_informerset_len(set)) {
		printf("# add failed: %s\n", err.message);
		abort();
	}
}

static void close_src(struct src *s) {
	if (s->wr >= 0) {
		close(s->wr);
	}
	close(s->rd);
}

/* Read events until next() says over (or 3 s); "member:key" or "member!rc". */
static int drain(struct kinf_informerset *set, struct kinf_buf *out, int *counts,
		size_t ncounts) {
	long long until = kinf_clock_now_ms() + 3000;
	int rc;
	struct kinf_informerset_event ev;
	while ((rc = kinf_informerset_next(set, 200, &ev)) != 0) {
		if (rc == -KINF_ETIMEDOUT) {
			if (kinf_clock_now_ms() > until) {
				return rc;
			}
			continue;
		}
		if (ev.rc < 0) {
			must(kinf_buf_printf(out, "%s%zu!%s", out->len ? " " : "", ev.member,
					ev.err.message));
		}
		for (size_t i = 0; i < ev.batch.n; i++) {
			must(kinf_buf_printf(out, "%s%zu:%s", out->len ? " " : "", ev.member,
					ev.batch.v[i].key));
		}
		if (ev.member < ncounts) {
			counts[ev.member]++;
		}
		kinf_informerset_event_release(&ev);
	}
	return 0;
}

static void test_merge_exit_after_sync(void) {
	struct kinf_informerset *set = kinf_informerset_new(false);
	struct src s[3];
	char *l0 = list_of("a", "p1 p2"), *l1 = list_of("b", "q1"), *l2 = list_of("c", "");
	add_pipe(set, &s[0], l0, true);
	add_pipe(set, &s[1], l1, true);
	add_pipe(set, &s[2], l2, true);
	struct kinf_error err = {0};
	ok(kinf_informerset_start(set, &err) == 0, "start three members");
	struct kinf_buf got = {0};
	int counts[3] = {0};
	long long t0 = kinf_clock_now_ms();
	is_int(drain(set, &got, counts, 3), 0, "over once every member synced (pipes open)");
	ok(kinf_clock_now_ms() - t0 < 2500, "soon (%lld ms)", kinf_clock_now_ms() - t0);
	is_int(counts[0], 2, "member 0: two events");
	is_int(counts[1], 1, "member 1: one event");
	is_int(counts[2], 0, "member 2: an empty list, no events");
	ok(strstr(got.data, "0:a/p1") && strstr(got.data, "0:a/p2") &&
			strstr(got.data, "1:b/q1"), "each event tagged with its member: %s",
			got.data);
	ok(strstr(got.data, "0:a/p1") < strstr(got.data, "0:a/p2"),
			"a member's events in their order");
	ok(kinf_informerset_has_synced(set), "the set has synced");
	is_int(kinf_informerset_failed(set), 0, "none failed");
	is_int(kinf_indexer_len(kinf_informer_indexer(kinf_informerset_get(set, 0))), 2,
			"member 0's indexer");
	ok(kinf_informerset_get(set, 3) == NULL, "no member 3");
	kinf_informerset_free(set);
	for (int i = 0; i < 3; i++) {
		close_src(&s[i]);
	}
	free(l0);
	free(l1);
	free(l2);
	kinf_buf_release(&got);
}

static void test_one_fails(void) {
	struct kinf_informerset *set = kinf_informerset_new(true);
	struct src s[2];
	char *l0 = list_of("a", "p1");
	struct kinf_buf bad = {0};
	must(kinf_buf_append_str(&bad, l0));
	must(kinf_buf_append_str(&bad, "{\"type\":\"ADDED\",\"object\":{"));
	add_pipe(set, &s[0], bad.data, false);
	close(s[0].wr);		/* end of input: the truncated event fails */
	s[0].wr = -1;
	char *l1 = list_of("b", "q1");
	add_pipe(set, &s[1], l1, false);
	struct kinf_error err = {0};
	ok(kinf_informerset_start(set, &err) == 0, "start two members");

	struct kinf_buf got = {0};
	int counts[2] = {0};
	int failures = 0, events1 = 0;
	struct kinf_informerset_event ev;
	long long until = kinf_clock_now_ms() + 3000;
	/* Member 1 goes on after member 0 failed: its event written later arrives. */
	while (kinf_clock_now_ms() < until) {
		int rc = kinf_informerset_next(set, 100, &ev);
		if (rc == 0) {
			break;
		}
		if (rc == -KINF_ETIMEDOUT) {
			if (failures && events1 == 1) {
				const char *add = "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
					"{\"name\":\"q2\",\"namespace\":\"b\",\"resourceVersion\":\"20\"}}}\n";
				if (write(s[1].wr, add, strlen(add)) < 0) {
					abort();
				}
			}
			if (events1 >= 2) {
				break;
			}
			continue;
		}
		if (ev.rc < 0) {
			failures++;
			ok(ev.member == 0 && ev.rc == -KINF_EJSON, "member 0 failed: %s",
					ev.err.message);
		} else {
			counts[ev.member]++;
			ok(ev.deltas != NULL, "deltas asked for and given (member %zu)", ev.member);
			if (ev.member == 1) {
				events1++;
			}
		}
		kinf_informerset_event_release(&ev);
	}
	is_int(failures, 1, "the failure is reported once");
	is_int(counts[0], 1, "member 0's list came before its failure");
	is_int(events1, 2, "member 1 went on: its list and a later event");
	is_int(kinf_informerset_failed(set), 1, "one member failed");
	ok(kinf_informerset_has_synced(set), "synced: the failed member does not count");
	kinf_informerset_free(set);
	close_src(&s[0]);
	close_src(&s[1]);
	free(l0);
	free(l1);
	kinf_buf_release(&bad);
	kinf_buf_release(&got);
}

struct stopper {
	struct kinf_informerset *set;
};

static void *stop_later(void *userdata) {
	struct stopper *s = userdata;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000000L };
	nanosleep(&ts, NULL);
	kinf_informerset_stop(s->set);
	return NULL;
}

static void test_stop_while_blocked(void) {
	struct kinf_informerset *set = kinf_informerset_new(false);
	struct src s[2];
	char *l0 = list_of("a", "p1 p2 p3"), *l1 = list_of("b", "q1");
	add_pipe(set, &s[0], l0, false);
	add_pipe(set, &s[1], l1, false);
	struct kinf_error err = {0};
	ok(kinf_informerset_start(set, &err) == 0, "stop: start two members");
	/* Take one event, leave the others handed over and untaken. */
	struct kinf_informerset_event ev;
	ok(kinf_informerset_next(set, 2000, &ev) == 1, "one event");
	kinf_informerset_event_release(&ev);
	int taken = 1, rc;
	struct stopper st = { .set = set };
	pthread_t t;
	pthread_create(&t, NULL, stop_later, &st);
	long long t0 = kinf_clock_now_ms();
	while ((rc = kinf_informerset_next(set, -1, &ev)) == 1) {
		taken++;
		kinf_informerset_event_release(&ev);
	}
	long long took = kinf_clock_now_ms() - t0;
	pthread_join(t, NULL);
	is_int(rc, 0, "a reader waiting without a limit returns 0 on stop");
	ok(took >= 150 && took < 3000, "soon after the stop (%lld ms)", took);
	is_int(taken, 4, "every event came before the stop");
	kinf_informerset_free(set);	/* nothing leaks (ASan) */
	close_src(&s[0]);
	close_src(&s[1]);
	free(l0);
	free(l1);
}

/* One member: popped in the caller's thread, its failure reported once. */
static void test_single(void) {
	struct kinf_informerset *set = kinf_informerset_new(false);
	struct src s;
	char *l0 = list_of("a", "p1 p2");
	struct kinf_buf text = {0};
	must(kinf_buf_append_str(&text, l0));
	must(kinf_buf_append_str(&text, "{\"type\":"));
	add_pipe(set, &s, text.data, false);
	close(s.wr);
	s.wr = -1;
	struct kinf_error err = {0};
	ok(kinf_informerset_start(set, &err) == 0, "single: start");
	struct kinf_buf got = {0};
	int counts[1] = {0};
	is_int(drain(set, &got, counts, 1), 0, "single: over after the failure");
	is_str(got.data, "0:a/p1 0:a/p2 0!event 2: truncated at end of input",
			"single: events, then the failure once");
	is_int(kinf_informerset_failed(set), 1, "single: one failed");
	kinf_informerset_free(set);
	close_src(&s);
	free(l0);
	kinf_buf_release(&text);
	kinf_buf_release(&got);
}

static void test_empty(void) {
	struct kinf_informerset *set = kinf_informerset_new(false);
	struct kinf_informerset_event ev;
	struct kinf_error err = {0};
	ok(kinf_informerset_start(set, &err) == 0, "an empty set starts");
	is_int(kinf_informerset_next(set, -1, &ev), 0, "and is over at once");
	kinf_informerset_free(set);
	kinf_informerset_free(NULL);
}

/*
 * A growing set: one member (a pump all the same), another added after
 * start whose events arrive, then one removed: it is over, and the set
 * with it once the others are.
 */
static void test_grow_and_remove(void) {
	struct kinf_informerset *set = kinf_informerset_new(false);
	struct kinf_informerset_event ev;
	struct kinf_error err = {0};
	struct src a, b;
	char *la = list_of("a", "p1"), *lb = list_of("b", "q1 q2");

	kinf_informerset_allow_growth(set);
	add_pipe(set, &a, la, false);
	ok(kinf_informerset_start(set, &err) == 0, "grow: start one member");
	ok(kinf_informerset_next(set, 3000, &ev) == 1 && ev.member == 0 && ev.batch.n == 1,
			"grow: the first member's event");
	kinf_informerset_event_release(&ev);
	is_int(kinf_informerset_start_member(set, 0, &err), -KINF_EINVAL,
			"grow: a member that runs is not started twice");
	add_pipe(set, &b, lb, false);
	ok(kinf_informerset_start_member(set, 1, &err) == 0, "grow: start the member added");
	struct kinf_buf got = {0};
	for (int n = 0; n < 2 && kinf_informerset_next(set, 3000, &ev) == 1; n++) {
		for (size_t i = 0; i < ev.batch.n; i++) {
			must(kinf_buf_printf(&got, "%s%zu:%s", got.len ? " " : "", ev.member,
					ev.batch.v[i].key));
		}
		kinf_informerset_event_release(&ev);
	}
	is_str(got.data, "1:b/q1 1:b/q2", "grow: the added member's events, in order");
	ok(kinf_informerset_has_synced(set), "grow: both synced");
	/* Both pipes stay open: only remove ends them. */
	ok(kinf_informerset_remove(set, 0, false) == 0, "grow: remove member 0");
	ok(kinf_informerset_remove(set, 1, false) == 0, "grow: remove member 1");
	long long t0 = kinf_clock_now_ms();
	is_int(kinf_informerset_next(set, 3000, &ev), 0, "grow: over once both left");
	ok(kinf_clock_now_ms() - t0 < 2000, "grow: soon (%lld ms)", kinf_clock_now_ms() - t0);
	is_int(kinf_informerset_failed(set), 0, "grow: leaving is not failing");
	kinf_informerset_free(set);
	close_src(&a);
	close_src(&b);
	free(la);
	free(lb);
	kinf_buf_release(&got);
}

/* Space-separated names p000 p001 ... of n pods. */
static char *names_of(int n) {
	struct kinf_buf b = {0};
	for (int i = 0; i < n; i++) {
		must(kinf_buf_printf(&b, "%sp%03d", i ? " " : "", i));
	}
	return kinf_buf_take(&b);
}

/*
 * Member i's pops so far (its pump's), each a pod of its list added to its
 * indexer (which, unlike the stats, may be read while it runs).
 */
static unsigned long pops_of(struct kinf_informerset *set, size_t i) {
	return kinf_indexer_len(kinf_informer_indexer(kinf_informerset_get(set, i)));
}

/* Wait up to 3 s until member i popped at least n. */
static void wait_pops(struct kinf_informerset *set, size_t i, unsigned long n) {
	long long until = kinf_clock_now_ms() + 3000;
	while (pops_of(set, i) < n && kinf_clock_now_ms() < until) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/*
 * A pump reads ahead of a reader that takes nothing by READ_AHEAD pops,
 * no more; the set reports a member synced only once the reader took the
 * pop that completed its list, though its pump popped it long before.
 */
static void test_read_ahead(void) {
	struct kinf_informerset *set = kinf_informerset_new(false);
	struct src s[2];
	char *names = names_of(100);
	char *l0 = list_of("a", names), *l1 = list_of("b", "q1");
	add_pipe(set, &s[0], l0, false);
	add_pipe(set, &s[1], l1, false);
	struct kinf_error err = {0};
	ok(kinf_informerset_start(set, &err) == 0, "read-ahead: start two members");
	wait_pops(set, 0, KINF_INFORMERSET_READ_AHEAD);
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000000L };
	nanosleep(&ts, NULL);
	is_int((int)pops_of(set, 0), KINF_INFORMERSET_READ_AHEAD,
			"read-ahead: a member pops %d ahead of the reader, no more",
			KINF_INFORMERSET_READ_AHEAD);
	ok(!kinf_informerset_has_synced(set), "read-ahead: not synced before any is taken");
	/* Member 1's one-object list popped, not taken: what serve's
	 * readiness asks. */
	wait_pops(set, 1, 1);
	ok(kinf_informer_has_synced(kinf_informerset_get(set, 1)) &&
			!kinf_informerset_member_synced(set, 1),
			"read-ahead: member 1's informer synced, but not as the reader sees it");

	int taken[2] = {0}, wrong = 0, order = 0, wrong_member = 0;
	struct kinf_informerset_event ev;
	while (taken[0] + taken[1] < 101 && kinf_informerset_next(set, 3000, &ev) == 1) {
		if (ev.member == 0 && ev.batch.n == 1) {
			char key[16];
			snprintf(key, sizeof(key), "a/p%03d", taken[0]);
			order += strcmp(ev.batch.v[0].key, key) != 0;
		}
		taken[ev.member]++;
		bool want = taken[0] == 100 && taken[1] == 1;
		wrong += kinf_informerset_has_synced(set) != want;
		wrong_member += kinf_informerset_member_synced(set, 0) != (taken[0] == 100) ||
			kinf_informerset_member_synced(set, 1) != (taken[1] == 1);
		kinf_informerset_event_release(&ev);
	}
	is_int(taken[0], 100, "read-ahead: every event of member 0");
	is_int(order, 0, "read-ahead: in their order");
	is_int(wrong, 0, "read-ahead: synced exactly once both lists' last events were taken");
	is_int(wrong_member, 0, "read-ahead: each member synced once its own list's last was taken");
	kinf_informerset_free(set);
	close_src(&s[0]);
	close_src(&s[1]);
	free(names);
	free(l0);
	free(l1);
}

/*
 * A member removed: the pops it read ahead and the reader did not take,
 * in the queue and in what the reader took out of it, come out of next()
 * first, in their order; nothing of it after them.
 */
static void test_remove_hands_back(void) {
	struct kinf_informerset *set = kinf_informerset_new(false);
	struct src s[2];
	char *names = names_of(100);
	char *l0 = list_of("a", names), *l1 = list_of("b", "q1");
	kinf_informerset_allow_growth(set);
	add_pipe(set, &s[0], l0, false);
	add_pipe(set, &s[1], l1, false);
	struct kinf_error err = {0};
	ok(kinf_informerset_start(set, &err) == 0, "remove: start two members");
	wait_pops(set, 0, KINF_INFORMERSET_READ_AHEAD);
	wait_pops(set, 1, 1);
	struct kinf_informerset_event ev;
	int taken0 = 0, taken1 = 0;
	/* Take until one of member 0's came, so the reader holds a batch too. */
	while (taken0 == 0 && kinf_informerset_next(set, 3000, &ev) == 1) {
		taken0 += ev.member == 0;
		taken1 += ev.member == 1;
		kinf_informerset_event_release(&ev);
	}
	ok(kinf_informerset_remove(set, 0, false) == 0, "remove: member 0");
	unsigned long popped = pops_of(set, 0);
	int rc, left = 0, order = 0, late = 0, others_first = 0;
	while ((rc = kinf_informerset_next(set, 300, &ev)) == 1) {
		if (ev.member == 0) {
			char key[16];
			snprintf(key, sizeof(key), "a/p%03d", taken0 + left);
			order += ev.rc != 0 || ev.batch.n != 1 || strcmp(ev.batch.v[0].key, key) != 0;
			late += others_first;
			left++;
		} else {
			others_first = 1;
			taken1++;
		}
		kinf_informerset_event_release(&ev);
	}
	is_int(taken0 + left, (int)popped, "remove: what was taken and what came after "
			"are all it popped (%lu)", popped);
	is_int(order, 0, "remove: its pops read ahead in their order");
	is_int(late, 0, "remove: before anything else");
	is_int(rc, -KINF_ETIMEDOUT, "remove: member 1 goes on");
	is_int(taken1, 1, "remove: member 1's event all the same");
	ok(kinf_informerset_has_synced(set), "remove: synced (member 0 left)");
	ok(kinf_informerset_remove(set, 1, false) == 0, "remove: member 1");
	is_int(kinf_informerset_next(set, 3000, &ev), 0, "remove: over once both left");
	kinf_informerset_free(set);	/* nothing leaks (ASan) */
	close_src(&s[0]);
	close_src(&s[1]);
	free(names);
	free(l0);
	free(l1);
}

/* The followed namespaces' test: one member per namespace, three pods each. */
struct following {
	struct src pods[4];
	char *lists[4];
	size_t members[4];		/* set index of namespace i's member */
	size_t n;
	struct kinf_buf log;		/* "+ns" joined, "-member" left */
};

static void joined(struct kinf_informerset *set, size_t follower, const char *ns,
		void *userdata) {
	struct following *f = userdata;
	struct kinf_error err = {0};
	size_t i = f->n++;
	must(kinf_buf_printf(&f->log, "%s+%s", f->log.len ? " " : "", ns));
	f->lists[i] = list_of(ns, "p1 p2 p3");
	f->pods[i].rd = pipe_with(f->lists[i], &f->pods[i].wr);
	struct kinf_informer_opts o = { .replay_fd = f->pods[i].rd };
	if (kinf_informerset_add_in(set, &o, follower, ns, &f->members[i], &err) < 0 ||
			kinf_informerset_start_member(set, f->members[i], &err) < 0) {
		printf("# joining %s: %s\n", ns, err.message);
	}
}

static void left(struct kinf_informerset *set, size_t member, int rc, void *userdata) {
	struct following *f = userdata;
	must(kinf_buf_printf(&f->log, " -%zu%s", member, rc < 0 ? "!" : ""));
}

/*
 * -A --accessible's membership: a follower over namespaces; each namespace
 * that appears gets a member through joined; one that goes makes its
 * member leave with tombstones: a DELETED of unknown final state for each
 * object it held, its indexer empty, the others going on. The follower's
 * own pops never come out of next().
 */
static void test_namespace_leaves(void) {
	struct kinf_informerset *set = kinf_informerset_new(true);
	struct following f = {0};
	struct kinf_informerset_follow fo = { .joined = joined, .left = left, .userdata = &f };
	struct kinf_error err = {0};
	struct kinf_informerset_event ev;
	struct src ns;
	char *nsl = list_of(NULL, "a b");
	size_t follower = 99;

	kinf_informerset_allow_growth(set);
	ns.rd = pipe_with(nsl, &ns.wr);
	struct kinf_informer_opts o = { .replay_fd = ns.rd };
	struct kinf_informer_opts plain = { .replay_fd = ns.rd };
	is_int(kinf_informerset_add_in(set, &plain, 0, "a", NULL, &err), -KINF_EINVAL,
			"follow: no member in a namespace before a follower");
	ok(kinf_informerset_follow(set, &o, &fo, &follower, &err) == 0 && follower == 0,
			"follow: a follower over namespaces a and b");
	ok(kinf_informerset_start(set, &err) == 0, "follow: started");
	int per_ns[2] = {0}, other = 0;
	while (per_ns[0] + per_ns[1] + other < 6 && kinf_informerset_next(set, 3000, &ev) == 1) {
		for (size_t i = 0; i < f.n && i < 2; i++) {
			per_ns[i] += ev.member == f.members[i] && ev.batch.n == 1 &&
				ev.batch.v[0].type == KINF_INFORMER_ADD;
		}
		other += ev.member != f.members[0] && ev.member != f.members[1];
		kinf_informerset_event_release(&ev);
	}
	is_str(f.log.data, "+a +b", "follow: joined for a, then b");
	ok(per_ns[0] == 3 && per_ns[1] == 3 && other == 0,
			"follow: each namespace's member added its three pods; none of the "
			"follower's pops came out");
	ok(kinf_informerset_has_synced(set), "follow: synced");

	/* Namespace a goes away. */
	const char *gone = "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\","
		"\"resourceVersion\":\"20\"}}}\n";
	ok(write(ns.wr, gone, strlen(gone)) == (ssize_t)strlen(gone), "follow: namespace a deleted");
	struct kinf_buf got = {0};
	int bad = 0, rc;
	while ((rc = kinf_informerset_next(set, 500, &ev)) == 1) {
		bad += ev.member != f.members[0] || ev.rc != 0 || ev.batch.n != 1 || !ev.deltas;
		for (size_t i = 0; i < ev.batch.n; i++) {
			const struct kinf_informer_event *e = &ev.batch.v[i];
			bad += e->type != KINF_INFORMER_DELETE || !e->final_state_unknown || !e->obj;
			must(kinf_buf_printf(&got, "%s%s", got.len ? " " : "", e->key));
		}
		bad += ev.deltas && (ev.deltas->n != 1 || ev.deltas->v[0].type != KINF_DELTA_DELETED ||
			!ev.deltas->v[0].final_state_unknown);
		kinf_informerset_event_release(&ev);
	}
	is_int(rc, -KINF_ETIMEDOUT, "follow: then quiet, b's member going on");
	struct kinf_strv keys = {0};
	char *save = NULL;
	for (char *t = strtok_r(got.data, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		must(kinf_strv_push_str(&keys, t));
	}
	kinf_strv_sort(&keys);
	ok(keys.n == 3 && strcmp(keys.v[0], "a/p1") == 0 && strcmp(keys.v[2], "a/p3") == 0,
			"follow: a DELETED for each of a's three pods (%zu)", keys.n);
	is_int(bad, 0, "follow: each from a's member, of unknown final state, its delta a tombstone");
	is_str(f.log.data, "+a +b -1", "follow: left called for a's member");
	is_int(kinf_indexer_len(kinf_informer_indexer(kinf_informerset_get(set, f.members[0]))),
			0, "follow: a's indexer is empty");
	is_int(kinf_indexer_len(kinf_informer_indexer(kinf_informerset_get(set, f.members[1]))),
			3, "follow: b's holds its three");
	is_int(kinf_informerset_failed(set), 0, "follow: leaving is not failing");
	kinf_informerset_free(set);
	close_src(&ns);
	for (size_t i = 0; i < f.n; i++) {
		close_src(&f.pods[i]);
		free(f.lists[i]);
	}
	free(nsl);
	kinf_strv_release(&keys);
	kinf_buf_release(&got);
	kinf_buf_release(&f.log);
}

int main(void) {
	test_merge_exit_after_sync();
	test_one_fails();
	test_stop_while_blocked();
	test_single();
	test_empty();
	test_grow_and_remove();
	test_read_ahead();
	test_remove_hands_back();
	test_namespace_leaves();
	return tap_done();
}
