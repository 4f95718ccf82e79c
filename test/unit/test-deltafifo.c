/*
 * Unit tests for the DeltaFIFO (src/deltafifo.c). The main part is a table:
 * each case runs a sequence of operations on a fresh FIFO (with a known
 * objects indexer unless the case says otherwise) and checks every pop as a
 * string "key Type@rv Type!@rv ..." ("!" marks a DeletedFinalStateUnknown
 * tombstone, "@nil" a tombstone without object) plus isInInitialList.
 * Then the threaded cases: Pop timeout, close waking a blocked Pop, and a
 * producer/consumer stress run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "deltafifo.h"
#include "indexer.h"
#include "object.h"
#include "tap.h"

/* An object from "ns/name@rv" (no "ns/": cluster-scoped). */
static struct kinf_object *mkobj(const char *spec) {
	struct kinf_buf json = {0};
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	char *copy = strdup(spec);
	char *rv = strchr(copy, '@');
	char *name = strchr(copy, '/');

	if (rv) {
		*rv++ = '\0';
	}
	if (name) {
		*name++ = '\0';
		must(kinf_buf_printf(&json, "{\"metadata\":{\"namespace\":\"%s\","
				"\"name\":\"%s\"", copy, name));
	} else {
		must(kinf_buf_printf(&json, "{\"metadata\":{\"name\":\"%s\"", copy));
	}
	if (rv) {
		must(kinf_buf_printf(&json, ",\"resourceVersion\":\"%s\"", rv));
	}
	must(kinf_buf_append_str(&json, "}}"));
	if (kinf_object_parse(json.data, json.len, NULL, &obj, &err) < 0) {
		printf("# cannot parse %s: %s\n", json.data, err.message);
		abort();
	}
	kinf_buf_release(&json);
	free(copy);
	return obj;
}

/* "key Type@rv ..." for a popped set of deltas. */
static void show_deltas(struct kinf_buf *out, const struct kinf_deltas *d) {
	must(kinf_buf_append_str(out, d->key));
	for (size_t i = 0; i < d->n; i++) {
		const struct kinf_delta *x = &d->v[i];
		must(kinf_buf_printf(out, " %s%s@%s", kinf_delta_type_name(x->type),
				x->final_state_unknown ? "!" : "",
				x->obj ? kinf_object_resource_version(x->obj) : "nil"));
	}
}

/* The informer's processDeltas (controller.go), applied under the lock. */
struct consumer {
	struct kinf_indexer *known;
	bool apply;		/* update known like the informer does */
	int calls;
	bool last_initial;
	struct kinf_buf seen;	/* what process was handed */
	int fail;		/* return this from process */
};

static int process(const struct kinf_deltas *d, bool is_in_initial_list,
		void *userdata) {
	struct consumer *c = userdata;

	c->calls++;
	c->last_initial = is_in_initial_list;
	kinf_buf_reset(&c->seen);
	show_deltas(&c->seen, d);
	for (size_t i = 0; c->apply && i < d->n; i++) {
		const struct kinf_delta *x = &d->v[i];
		int r = x->type == KINF_DELTA_DELETED ?
			kinf_indexer_delete(c->known, d->key) :
			kinf_indexer_update(c->known, x->obj);
		if (r < 0) {
			return r;
		}
	}
	return c->fail;
}

enum op_kind {
	OP_END,
	OP_ADD,		/* a: object */
	OP_UPDATE,	/* a: object */
	OP_DELETE,	/* a: object */
	OP_REPLACE,	/* a: objects separated by spaces ("" for none) */
	OP_RESYNC,
	OP_KNOW,	/* a: object put into the known indexer directly */
	OP_POP,		/* want: deltas, or NULL for "nothing queued" */
	OP_SYNCED,	/* want: "true" / "false" */
	OP_LEN,		/* want: queue length */
	OP_KNOWN,	/* want: known indexer contents "key@rv ..." */
};

struct op {
	enum op_kind kind;
	const char *a;
	const char *want;
	bool initial;	/* OP_POP: expected isInInitialList */
};

struct fcase {
	const char *name;
	bool no_known;		/* FIFO without knownObjects */
	bool emit_replaced;
	bool apply;		/* pops update the known indexer */
	struct op ops[24];
};

#define POP(w) { OP_POP, NULL, (w), false }
#define POP_INITIAL(w) { OP_POP, NULL, (w), true }
#define POP_NONE { OP_POP, NULL, NULL, false }

static const struct fcase fcases[] = {
	{ "add/update/delete keep their order per key", .ops = {
		{ OP_ADD, "ns/a@1" },
		{ OP_UPDATE, "ns/a@2" },
		{ OP_ADD, "ns/b@1" },
		{ OP_DELETE, "ns/a@3" },
		{ OP_LEN, NULL, "2" },
		POP("ns/a Added@1 Updated@2 Deleted@3"),
		POP("ns/b Added@1"),
		POP_NONE,
		{ OP_END },
	} },
	{ "queue has no duplicate keys; FIFO by first queueing", .ops = {
		{ OP_ADD, "ns/a@1" },
		{ OP_ADD, "ns/b@1" },
		{ OP_UPDATE, "ns/a@2" },
		{ OP_ADD, "c@1" },
		{ OP_UPDATE, "ns/b@2" },
		{ OP_LEN, NULL, "3" },
		POP("ns/a Added@1 Updated@2"),
		{ OP_UPDATE, "ns/a@3" },
		{ OP_LEN, NULL, "3" },
		POP("ns/b Added@1 Updated@2"),
		POP("c Added@1"),
		POP("ns/a Updated@3"),
		{ OP_LEN, NULL, "0" },
		{ OP_END },
	} },
	{ "delete of a key neither queued nor known is dropped", .ops = {
		{ OP_DELETE, "ns/x@1" },
		{ OP_LEN, NULL, "0" },
		POP_NONE,
		{ OP_KNOW, "ns/k@1" },
		{ OP_DELETE, "ns/k@2" },
		POP("ns/k Deleted@2"),
		{ OP_ADD, "ns/q@1" },
		{ OP_DELETE, "ns/q@2" },
		POP("ns/q Added@1 Deleted@2"),
		{ OP_END },
	} },
	{ "without knownObjects only queued keys can be deleted", .no_known = true,
			.ops = {
		{ OP_DELETE, "ns/x@1" },
		POP_NONE,
		{ OP_ADD, "ns/x@1" },
		{ OP_DELETE, "ns/x@2" },
		POP("ns/x Added@1 Deleted@2"),
		{ OP_DELETE, "ns/x@3" },
		POP_NONE,
		{ OP_RESYNC },
		POP_NONE,
		{ OP_END },
	} },
	{ "two real deletions: the older is kept", .ops = {
		{ OP_KNOW, "ns/a@1" },
		{ OP_DELETE, "ns/a@1" },
		{ OP_DELETE, "ns/a@2" },
		POP("ns/a Deleted@1"),
		{ OP_END },
	} },
	{ "tombstone then real deletion: the real one replaces it", .ops = {
		{ OP_KNOW, "ns/a@1" },
		{ OP_REPLACE, "" },
		{ OP_DELETE, "ns/a@2" },
		POP_INITIAL("ns/a Deleted@2"),
		{ OP_END },
	} },
	{ "real deletion then tombstone: the real one is kept", .ops = {
		{ OP_KNOW, "ns/a@1" },
		{ OP_DELETE, "ns/a@2" },
		{ OP_REPLACE, "" },
		POP("ns/a Deleted@2"),
		{ OP_END },
	} },
	{ "two tombstones collapse into the newer", .ops = {
		{ OP_KNOW, "ns/a@1" },
		{ OP_REPLACE, "" },
		{ OP_REPLACE, "" },
		POP_INITIAL("ns/a Deleted!@1"),
		{ OP_END },
	} },
	{ "only the last two deltas are deduplicated", .ops = {
		{ OP_KNOW, "ns/a@1" },
		{ OP_DELETE, "ns/a@1" },
		{ OP_ADD, "ns/a@2" },
		{ OP_DELETE, "ns/a@3" },
		{ OP_DELETE, "ns/a@4" },
		{ OP_UPDATE, "ns/a@5" },
		{ OP_UPDATE, "ns/a@5" },
		POP("ns/a Deleted@1 Added@2 Deleted@3 Updated@5 Updated@5"),
		{ OP_END },
	} },
	{ "replace: Sync per listed object, tombstones for vanished keys", .ops = {
		{ OP_KNOW, "ns/gone@1" },
		{ OP_KNOW, "ns/kept@1" },
		{ OP_KNOW, "ns/queued@1" },
		{ OP_ADD, "ns/new@1" },
		{ OP_UPDATE, "ns/queued@2" },
		{ OP_UPDATE, "ns/new@4" },
		{ OP_REPLACE, "ns/kept@3 ns/listed@1" },
		{ OP_LEN, NULL, "5" },
		/* queued, not listed: tombstone of the newest queued object */
		POP("ns/new Added@1 Updated@4 Deleted!@4"),
		POP("ns/queued Updated@2 Deleted!@2"),
		POP("ns/kept Sync@3"),
		POP("ns/listed Sync@1"),
		/* known, neither listed nor queued: tombstone of the known one */
		POP("ns/gone Deleted!@1"),
		POP_NONE,
		{ OP_END },
	} },
	{ "replace emits Replaced when asked to", .emit_replaced = true, .ops = {
		{ OP_KNOW, "ns/b@1" },
		{ OP_REPLACE, "ns/a@2 c@7" },
		POP_INITIAL("ns/a Replaced@2"),
		POP_INITIAL("c Replaced@7"),
		POP_INITIAL("ns/b Deleted!@1"),
		{ OP_SYNCED, NULL, "true" },
		{ OP_RESYNC },
		POP("ns/b Sync@1"),
		{ OP_END },
	} },
	{ "a tombstone's object is unwrapped by the next replace", .ops = {
		{ OP_ADD, "ns/a@1" },
		{ OP_REPLACE, "" },
		{ OP_REPLACE, "" },
		POP("ns/a Added@1 Deleted!@1"),
		{ OP_END },
	} },
	{ "has_synced after popping exactly the first replace's items",
			.apply = true, .ops = {
		{ OP_SYNCED, NULL, "false" },
		{ OP_KNOW, "ns/old@1" },
		{ OP_REPLACE, "ns/a@1 ns/b@1 ns/a@2" },
		{ OP_SYNCED, NULL, "false" },
		POP_INITIAL("ns/a Sync@1 Sync@2"),
		{ OP_SYNCED, NULL, "false" },
		{ OP_ADD, "ns/c@1" },
		POP_INITIAL("ns/b Sync@1"),
		{ OP_SYNCED, NULL, "false" },
		/* the deletion counts as part of the initial population */
		POP_INITIAL("ns/old Deleted!@1"),
		{ OP_SYNCED, NULL, "true" },
		POP("ns/c Added@1"),
		{ OP_REPLACE, "ns/d@1" },
		{ OP_SYNCED, NULL, "true" },
		POP("ns/d Sync@1"),
		POP("ns/a Deleted!@2"),
		POP("ns/b Deleted!@1"),
		POP("ns/c Deleted!@1"),
		{ OP_KNOWN, NULL, "ns/d@1" },
		{ OP_END },
	} },
	{ "an empty first replace syncs at once", .ops = {
		{ OP_REPLACE, "" },
		{ OP_SYNCED, NULL, "true" },
		{ OP_END },
	} },
	{ "add, update or delete before the first replace sync at once", .ops = {
		{ OP_DELETE, "ns/x@1" },
		{ OP_SYNCED, NULL, "true" },
		{ OP_REPLACE, "ns/a@1" },
		{ OP_SYNCED, NULL, "true" },
		POP("ns/a Sync@1"),
		{ OP_END },
	} },
	{ "resync does not populate", .ops = {
		{ OP_KNOW, "ns/a@1" },
		{ OP_RESYNC },
		{ OP_SYNCED, NULL, "false" },
		{ OP_REPLACE, "ns/a@2" },
		{ OP_SYNCED, NULL, "false" },
		POP_INITIAL("ns/a Sync@1 Sync@2"),
		{ OP_SYNCED, NULL, "true" },
		{ OP_END },
	} },
	{ "resync queues Sync only for keys with nothing queued", .ops = {
		{ OP_KNOW, "ns/a@1" },
		{ OP_KNOW, "ns/b@1" },
		{ OP_KNOW, "c@1" },
		{ OP_UPDATE, "ns/a@2" },
		{ OP_RESYNC },
		{ OP_LEN, NULL, "3" },
		POP("ns/a Updated@2"),
		POP("c Sync@1"),
		POP("ns/b Sync@1"),
		/* the second resync finds every key queued by the first */
		{ OP_RESYNC },
		{ OP_RESYNC },
		{ OP_LEN, NULL, "3" },
		POP("c Sync@1"),
		POP("ns/a Sync@1"),
		POP("ns/b Sync@1"),
		{ OP_END },
	} },
	{ "informer loop: relist, resync, missed deletion", .apply = true,
			.emit_replaced = true, .ops = {
		{ OP_REPLACE, "ns/a@1 ns/b@1" },
		POP_INITIAL("ns/a Replaced@1"),
		POP_INITIAL("ns/b Replaced@1"),
		{ OP_KNOWN, NULL, "ns/a@1 ns/b@1" },
		{ OP_UPDATE, "ns/a@2" },
		POP("ns/a Updated@2"),
		{ OP_REPLACE, "ns/a@3 ns/c@1" },
		POP("ns/a Replaced@3"),
		POP("ns/c Replaced@1"),
		POP("ns/b Deleted!@1"),
		{ OP_KNOWN, NULL, "ns/a@3 ns/c@1" },
		{ OP_RESYNC },
		POP("ns/a Sync@3"),
		POP("ns/c Sync@1"),
		POP_NONE,
		{ OP_END },
	} },
};

static void run_fcase(const struct fcase *c) {
	struct kinf_indexer *known = kinf_indexer_new();
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(
			c->no_known ? NULL : known, c->emit_replaced);
	struct consumer cons = { .known = known, .apply = c->apply };
	struct kinf_buf got = {0};
	int failures_before = tap_failed;

	for (size_t i = 0; c->ops[i].kind != OP_END; i++) {
		const struct op *op = &c->ops[i];
		struct kinf_object *obj = NULL;
		struct kinf_deltas *d = NULL;
		int r = 0;

		switch (op->kind) {
		case OP_END:
			break;
		case OP_ADD:
		case OP_UPDATE:
		case OP_DELETE:
		case OP_KNOW:
			obj = mkobj(op->a);
			r = op->kind == OP_ADD ? kinf_deltafifo_add(fifo, obj) :
				op->kind == OP_UPDATE ? kinf_deltafifo_update(fifo, obj) :
				op->kind == OP_DELETE ? kinf_deltafifo_delete(fifo, obj) :
				kinf_indexer_add(known, obj);
			kinf_object_unref(obj);
			is_int(r, 0, "%s: op %zu", c->name, i);
			break;
		case OP_REPLACE: {
			struct kinf_object *objs[16];
			size_t n = 0;
			char *specs = strdup(op->a), *save = NULL;
			for (char *s = strtok_r(specs, " ", &save); s;
					s = strtok_r(NULL, " ", &save)) {
				objs[n++] = mkobj(s);
			}
			r = kinf_deltafifo_replace(fifo, objs, n);
			for (size_t k = 0; k < n; k++) {
				kinf_object_unref(objs[k]);
			}
			free(specs);
			is_int(r, 0, "%s: op %zu replace", c->name, i);
			break;
		}
		case OP_RESYNC:
			is_int(kinf_deltafifo_resync(fifo), 0, "%s: op %zu resync",
					c->name, i);
			break;
		case OP_POP:
			cons.calls = 0;
			r = kinf_deltafifo_pop(fifo, 0, process, &cons, &d);
			if (!op->want) {
				is_int(r, -KINF_ETIMEDOUT, "%s: op %zu nothing to pop",
						c->name, i);
				is_int(cons.calls, 0, "%s: op %zu no process call",
						c->name, i);
				break;
			}
			is_int(r, 0, "%s: op %zu pop", c->name, i);
			if (r < 0) {
				break;
			}
			kinf_buf_reset(&got);
			show_deltas(&got, d);
			is_str(got.data, op->want, "%s: op %zu pop", c->name, i);
			is_str(cons.seen.data, op->want, "%s: op %zu process saw it",
					c->name, i);
			ok(cons.calls == 1 && cons.last_initial == op->initial,
					"%s: op %zu isInInitialList %s", c->name, i,
					op->initial ? "true" : "false");
			kinf_deltas_free(d);
			break;
		case OP_SYNCED:
			is_str(kinf_deltafifo_has_synced(fifo) ? "true" : "false",
					op->want, "%s: op %zu has_synced", c->name, i);
			break;
		case OP_LEN: {
			char n[32];
			snprintf(n, sizeof(n), "%zu", kinf_deltafifo_len(fifo));
			is_str(n, op->want, "%s: op %zu len", c->name, i);
			break;
		}
		case OP_KNOWN: {
			struct kinf_object_list list = {0};
			kinf_buf_reset(&got);
			must(kinf_buf_append_str(&got, ""));
			must(kinf_indexer_list(known, &list));
			for (size_t k = 0; k < list.n; k++) {
				must(kinf_buf_printf(&got, "%s%s@%s", k ? " " : "",
						kinf_object_key(list.v[k]),
						kinf_object_resource_version(list.v[k])));
			}
			kinf_object_list_release(&list);
			is_str(got.data, op->want, "%s: op %zu known objects",
					c->name, i);
			break;
		}
		}
	}
	kinf_deltafifo_free(fifo);
	kinf_indexer_free(known);
	kinf_buf_release(&got);
	kinf_buf_release(&cons.seen);
	if (tap_failed != failures_before) {
		printf("# case failed: %s\n", c->name);
	}
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms) {
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

/* A process error comes back from Pop; the key is gone all the same. */
static void test_process_error(void) {
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(NULL, false);
	struct consumer cons = { .fail = -KINF_EIO };
	struct kinf_deltas *d = NULL;
	struct kinf_object *obj = mkobj("ns/a@1");

	must(kinf_deltafifo_add(fifo, obj));
	is_int(kinf_deltafifo_pop(fifo, 0, process, &cons, &d), -KINF_EIO,
			"pop returns the process error");
	ok(d == NULL, "no deltas handed out on error");
	is_int(kinf_deltafifo_len(fifo), 0, "key removed anyway");
	must(kinf_deltafifo_add(fifo, obj));
	is_int(kinf_deltafifo_pop(fifo, 0, NULL, NULL, NULL), 0,
			"pop without process nor ret");
	kinf_object_unref(obj);
	kinf_deltafifo_free(fifo);
	kinf_buf_release(&cons.seen);
	is_str(kinf_delta_type_name(KINF_DELTA_REPLACED), "Replaced", "type name");
}

static void test_timeout(void) {
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(NULL, false);
	double t0 = now_s();
	int r = kinf_deltafifo_pop(fifo, 100, NULL, NULL, NULL);
	double dt = now_s() - t0;

	is_int(r, -KINF_ETIMEDOUT, "pop on an empty FIFO times out");
	ok(dt >= 0.095, "after the timeout (%.3fs)", dt);
	ok(dt < 5.0, "not much later");
	is_int(kinf_deltafifo_pop(fifo, 0, NULL, NULL, NULL), -KINF_ETIMEDOUT,
			"timeout 0 does not block");
	kinf_deltafifo_free(fifo);
}

struct popper {
	struct kinf_deltafifo *fifo;
	int timeout_ms;
	int result;
	struct kinf_deltas *d;
	double elapsed;
	pthread_mutex_t lock;
	bool done;
};

static void *pop_thread(void *arg) {
	struct popper *p = arg;
	double t0 = now_s();
	int r = kinf_deltafifo_pop(p->fifo, p->timeout_ms, NULL, NULL, &p->d);
	pthread_mutex_lock(&p->lock);
	p->result = r;
	p->elapsed = now_s() - t0;
	p->done = true;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/*
 * Wait up to 5 s for the popper to return. A Pop that was not woken is
 * poked with an add and, if still stuck, abandoned (detached, FIFO leaked),
 * so a bug fails the test instead of hanging it.
 */
static bool wait_popper(struct popper *p, pthread_t th) {
	bool done = false;
	for (int i = 0; i < 500 && !done; i++) {
		pthread_mutex_lock(&p->lock);
		done = p->done;
		pthread_mutex_unlock(&p->lock);
		if (!done) {
			sleep_ms(10);
		}
	}
	if (!done) {
		struct kinf_object *o = mkobj("ns/unblock@1");
		must(kinf_deltafifo_add(p->fifo, o));
		kinf_object_unref(o);
		sleep_ms(200);
		pthread_mutex_lock(&p->lock);
		bool released = p->done;
		pthread_mutex_unlock(&p->lock);
		if (!released) {
			pthread_detach(th);
			return false;
		}
	}
	pthread_join(th, NULL);
	return done;
}

static void test_blocking(void) {
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(NULL, false);
	struct popper p[3] = {
		{ .fifo = fifo, .timeout_ms = -1, .lock = PTHREAD_MUTEX_INITIALIZER },
		{ .fifo = fifo, .timeout_ms = -1, .lock = PTHREAD_MUTEX_INITIALIZER },
		{ .fifo = fifo, .timeout_ms = 60000,
			.lock = PTHREAD_MUTEX_INITIALIZER },
	};
	pthread_t th[3];
	struct kinf_object *obj = mkobj("ns/a@1");

	/* An add wakes a blocked Pop. */
	pthread_create(&th[0], NULL, pop_thread, &p[0]);
	sleep_ms(50);
	must(kinf_deltafifo_add(fifo, obj));
	if (!ok(wait_popper(&p[0], th[0]), "blocked pop woken by add")) {
		return;
	}
	is_int(p[0].result, 0, "and succeeded");
	is_str(p[0].d ? p[0].d->key : NULL, "ns/a", "and got the key");
	kinf_deltas_free(p[0].d);

	/* Close wakes every waiter, with or without a timeout. */
	pthread_create(&th[1], NULL, pop_thread, &p[1]);
	pthread_create(&th[2], NULL, pop_thread, &p[2]);
	sleep_ms(50);
	kinf_deltafifo_close(fifo);
	bool woke1 = wait_popper(&p[1], th[1]);
	bool woke2 = wait_popper(&p[2], th[2]);
	ok(woke1, "close wakes a blocked Pop");
	ok(woke2, "close wakes a blocked Pop with timeout");
	if (!woke1 || !woke2) {
		return;
	}
	kinf_deltas_free(p[1].d);
	kinf_deltas_free(p[2].d);
	is_int(p[1].result, -KINF_ECLOSED, "close wakes a Pop without timeout");
	is_int(p[2].result, -KINF_ECLOSED, "close wakes a Pop with timeout");
	ok(p[2].elapsed < 30.0, "well before its timeout (%.3fs)", p[2].elapsed);
	for (int i = 0; i < 3; i++) {
		pthread_mutex_destroy(&p[i].lock);
	}

	/* After close, queued items still drain, then ECLOSED. */
	must(kinf_deltafifo_add(fifo, obj));
	struct kinf_deltas *d = NULL;
	is_int(kinf_deltafifo_pop(fifo, -1, NULL, NULL, &d), 0,
			"closed FIFO still hands out what is queued");
	kinf_deltas_free(d);
	is_int(kinf_deltafifo_pop(fifo, -1, NULL, NULL, NULL), -KINF_ECLOSED,
			"then closed");
	is_int(kinf_deltafifo_pop(fifo, 0, NULL, NULL, NULL), -KINF_ECLOSED,
			"closed wins over timeout 0");
	kinf_object_unref(obj);
	kinf_deltafifo_free(fifo);
}

/*
 * An empty initial list syncs with nothing to pop: a Pop waiting with a
 * long timeout returns at once (-KINF_ETIMEDOUT) so that its caller sees
 * the sync (kinf index with a selector matching nothing, watch --for -l).
 */
static void test_empty_replace_wakes(void) {
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(NULL, false);
	struct popper p = { .fifo = fifo, .timeout_ms = 20000,
		.lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t th;

	pthread_create(&th, NULL, pop_thread, &p);
	sleep_ms(50);
	must(kinf_deltafifo_replace(fifo, NULL, 0));
	if (!ok(wait_popper(&p, th), "an empty Replace wakes a waiting Pop")) {
		return;
	}
	kinf_deltas_free(p.d);
	is_int(p.result, -KINF_ETIMEDOUT, "which returns with nothing");
	ok(p.elapsed < 2.0, "at once (%.3fs), not at its timeout", p.elapsed);
	ok(kinf_deltafifo_has_synced(fifo), "and the FIFO has synced");
	is_int(kinf_deltafifo_pop(fifo, 100, NULL, NULL, NULL), -KINF_ETIMEDOUT,
			"a later Pop waits as usual");
	pthread_mutex_destroy(&p.lock);
	kinf_deltafifo_free(fifo);
}

/*
 * Producers add and update distinct keys while consumers pop; nothing may be
 * lost or reordered per key. Process runs under the FIFO lock, so the
 * consumer bookkeeping needs no lock of its own.
 */
enum { PRODUCERS = 4, CONSUMERS = 3, PER_PRODUCER = 2000, ROUNDS = 3 };

struct stress {
	struct kinf_deltafifo *fifo;
	int id;
	long deltas;			/* counted in process */
	int last_rv[PRODUCERS * PER_PRODUCER];
	int order_errors;
	int key_errors;
};

static struct stress stress;

static int stress_process(const struct kinf_deltas *d, bool initial,
		void *userdata) {
	(void)initial;
	(void)userdata;
	int idx = atoi(strchr(d->key, '/') + 2);	/* "ns/k<idx>" */
	if (idx < 0 || idx >= PRODUCERS * PER_PRODUCER) {
		stress.key_errors++;
		return 0;
	}
	for (size_t i = 0; i < d->n; i++) {
		int rv = atoi(kinf_object_resource_version(d->v[i].obj));
		if (rv != stress.last_rv[idx] + 1) {
			stress.order_errors++;
		}
		stress.last_rv[idx] = rv;
		stress.deltas++;
	}
	return 0;
}

static void *producer(void *arg) {
	int id = (int)(long)arg;
	char spec[64];
	for (int round = 1; round <= ROUNDS; round++) {
		for (int i = 0; i < PER_PRODUCER; i++) {
			int idx = id * PER_PRODUCER + i;
			snprintf(spec, sizeof(spec), "ns/k%d@%d", idx, round);
			struct kinf_object *o = mkobj(spec);
			if (round == 1) {
				must(kinf_deltafifo_add(stress.fifo, o));
			} else {
				must(kinf_deltafifo_update(stress.fifo, o));
			}
			kinf_object_unref(o);
		}
	}
	return NULL;
}

static void *consumer(void *arg) {
	(void)arg;
	for (;;) {
		struct kinf_deltas *d = NULL;
		/* A timeout, not -1, so a lost wakeup cannot hang the test. */
		int r = kinf_deltafifo_pop(stress.fifo, 1000, stress_process,
				NULL, &d);
		if (r == -KINF_ECLOSED) {
			return NULL;
		}
		kinf_deltas_free(d);
	}
}

static void test_stress(void) {
	pthread_t prod[PRODUCERS], cons[CONSUMERS];

	stress.fifo = kinf_deltafifo_new(NULL, false);
	for (long i = 0; i < CONSUMERS; i++) {
		pthread_create(&cons[i], NULL, consumer, NULL);
	}
	for (long i = 0; i < PRODUCERS; i++) {
		pthread_create(&prod[i], NULL, producer, (void *)i);
	}
	for (int i = 0; i < PRODUCERS; i++) {
		pthread_join(prod[i], NULL);
	}
	kinf_deltafifo_close(stress.fifo);
	for (int i = 0; i < CONSUMERS; i++) {
		pthread_join(cons[i], NULL);
	}
	is_int(stress.deltas, (long)PRODUCERS * PER_PRODUCER * ROUNDS,
			"stress: every delta popped exactly once");
	int incomplete = 0;
	for (int i = 0; i < PRODUCERS * PER_PRODUCER; i++) {
		incomplete += stress.last_rv[i] != ROUNDS;
	}
	is_int(incomplete, 0, "stress: every key saw its last update");
	is_int(stress.key_errors, 0, "stress: keys intact");
	/*
	 * Several consumers may process one key's batches in either order only
	 * if they pop concurrently; process runs under the lock, in pop order,
	 * so the per-key order holds.
	 */
	is_int(stress.order_errors, 0, "stress: per-key order kept");
	is_int(kinf_deltafifo_len(stress.fifo), 0, "stress: drained");
	kinf_deltafifo_free(stress.fifo);
}

/*
 * A relist at scale: 100,000 known objects, a Replace listing 90,000 of
 * them; every item is popped into the indexer, HasSynced turns true only
 * with the last pop, and the 10,000 unlisted keys end up deleted.
 */
static void test_scale(void) {
	enum { N = 100000, LISTED = 90000 };
	struct kinf_indexer *known = kinf_indexer_new();
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(known, true);
	struct kinf_object **objs = calloc(N, sizeof(*objs));
	struct consumer cons = { .known = known, .apply = true };
	char spec[64];
	int bad = 0, early_sync = 0, tombstones = 0, not_initial = 0;
	double t0 = now_s();

	for (int i = 0; i < N; i++) {
		snprintf(spec, sizeof(spec), "ns%d/p%06d@1", i % 10, i);
		objs[i] = mkobj(spec);
	}
	is_int(kinf_indexer_replace(known, objs, N), 0, "scale: 100k known");
	for (int i = 0; i < LISTED; i++) {
		snprintf(spec, sizeof(spec), "ns%d/p%06d@2", i % 10, i);
		kinf_object_unref(objs[i]);
		objs[i] = mkobj(spec);
	}
	double t1 = now_s();
	is_int(kinf_deltafifo_replace(fifo, objs, LISTED), 0, "scale: replace");
	double t2 = now_s();
	is_int(kinf_deltafifo_len(fifo), N, "scale: 100k queued");
	for (int i = 0; i < N; i++) {
		struct kinf_deltas *d = NULL;
		early_sync += kinf_deltafifo_has_synced(fifo);
		bad += kinf_deltafifo_pop(fifo, 0, process, &cons, &d) != 0;
		if (d) {
			tombstones += d->n == 1 && d->v[0].final_state_unknown;
		}
		not_initial += !cons.last_initial;
		kinf_deltas_free(d);
	}
	double t3 = now_s();
	is_int(bad, 0, "scale: 100k pops");
	is_int(early_sync, 0, "scale: not synced before the last pop");
	is_int(not_initial, 0, "scale: every pop in the initial list");
	ok(kinf_deltafifo_has_synced(fifo), "scale: synced after the last pop");
	is_int(tombstones, N - LISTED, "scale: 10k tombstones");
	is_int(kinf_indexer_len(known), LISTED, "scale: 90k left known");
	struct kinf_object *o = kinf_indexer_get(known, "ns3/p000123");
	is_str(o ? kinf_object_resource_version(o) : NULL, "2", "scale: new RV");
	kinf_object_unref(o);
	o = kinf_indexer_get(known, "ns3/p095123");
	ok(o == NULL, "scale: unlisted key deleted");
	kinf_object_unref(o);
	printf("# 100k relist: replace %.3fs, pop+index %.3fs (setup %.3fs)\n",
			t2 - t1, t3 - t2, t1 - t0);
	for (int i = 0; i < N; i++) {
		kinf_object_unref(objs[i]);
	}
	free(objs);
	kinf_buf_release(&cons.seen);
	kinf_deltafifo_free(fifo);
	kinf_indexer_free(known);
}

/* A batch defers the wake-up of a blocked Pop to its end, once. */
static void test_batch(void) {
	struct kinf_deltafifo *fifo = kinf_deltafifo_new(NULL, false);
	struct popper p = { .fifo = fifo, .timeout_ms = -1,
		.lock = PTHREAD_MUTEX_INITIALIZER };
	struct kinf_object *a = mkobj("ns/a@1"), *b = mkobj("ns/b@1");
	pthread_t th;

	pthread_create(&th, NULL, pop_thread, &p);
	sleep_ms(50);
	kinf_deltafifo_batch_begin(fifo);
	kinf_deltafifo_batch_begin(fifo);
	must(kinf_deltafifo_add(fifo, a));
	must(kinf_deltafifo_add(fifo, b));
	kinf_deltafifo_batch_end(fifo);
	sleep_ms(100);
	pthread_mutex_lock(&p.lock);
	bool early = p.done;
	pthread_mutex_unlock(&p.lock);
	ok(!early, "a Pop is not woken inside a batch");
	kinf_deltafifo_batch_end(fifo);
	if (ok(wait_popper(&p, th), "the outermost batch_end wakes it")) {
		is_str(p.d ? p.d->key : NULL, "ns/a", "with the first key");
		kinf_deltas_free(p.d);
		kinf_deltafifo_free(fifo);
	}
	kinf_object_unref(a);
	kinf_object_unref(b);
	pthread_mutex_destroy(&p.lock);
}

int main(void) {
	for (size_t i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++) {
		run_fcase(&fcases[i]);
	}
	test_process_error();
	test_timeout();
	test_blocking();
	test_empty_replace_wakes();
	test_batch();
	test_stress();
	test_scale();
	return tap_done();
}
