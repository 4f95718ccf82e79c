#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "tap.h"

/*
 * The hash table under the DeltaFIFO and the indexer: the array form and
 * the probing form, growth and shrinking between them, deletion that keeps
 * every other key findable (also across the wrap-around of the slot array
 * and with every key in one probe chain), checked against a plain array.
 */

static bool match_str(const void *value, const void *ctx) {
	return strcmp(value, ctx) == 0;
}

static struct kinf_hashtab_slot *find(const struct kinf_hashtab *t, const char *key,
		uint64_t (*hash)(const char *)) {
	return kinf_hashtab_find(t, hash(key), match_str, key);
}

static uint64_t fnv(const char *s) {
	return kinf_hashtab_hash_str(s);
}

/* Every key in one probe chain from the last slot, wrapping round. */
static uint64_t collide(const char *s) {
	(void)s;
	return UINT64_MAX;
}

static int count_values(const struct kinf_hashtab *t) {
	int n = 0;
	for (size_t i = 0; i < kinf_hashtab_span(t); i++) {
		n += t->slots[i].value != NULL;
	}
	return n;
}

/* Insert n keys, delete every other, then the rest; check all along. */
static void exercise(const char *what, int n, uint64_t (*hash)(const char *)) {
	struct kinf_hashtab t = { 0 };
	char (*keys)[16] = calloc((size_t)n, sizeof(*keys));
	int bad = 0;

	for (int i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "ns/pod-%d", i);
		if (kinf_hashtab_reserve(&t, 1) < 0) {
			bad++;
			break;
		}
		kinf_hashtab_insert(&t, hash(keys[i]), keys[i]);
	}
	is_int(t.n, n, "%s: %d inserted", what, n);
	is_int(count_values(&t), n, "%s: a scan sees each once", what);
	for (int i = 0; i < n; i++) {
		struct kinf_hashtab_slot *s = find(&t, keys[i], hash);
		bad += !s || s->value != keys[i];
	}
	is_int(bad, 0, "%s: every key found", what);
	ok(!find(&t, "ns/absent", hash), "%s: an absent key is not", what);
	ok(n <= KINF_HASHTAB_SMALL_MAX ? kinf_hashtab_is_small(&t) :
			t.n * 4 <= t.cap * 3 && (t.cap & (t.cap - 1)) == 0,
			"%s: array form while small, else a power of two at most 3/4 full", what);

	for (int i = 0; i < n; i += 2) {
		kinf_hashtab_remove(&t, find(&t, keys[i], hash));
	}
	bad = 0;
	for (int i = 0; i < n; i++) {
		struct kinf_hashtab_slot *s = find(&t, keys[i], hash);
		bad += i % 2 ? !s || s->value != keys[i] : s != NULL;
	}
	is_int(bad, 0, "%s: half removed, the other half still found", what);
	is_int(count_values(&t), t.n, "%s: the count matches the slots", what);
	for (int i = 1; i < n; i += 2) {
		kinf_hashtab_remove(&t, find(&t, keys[i], hash));
	}
	is_int(t.n, 0, "%s: empty", what);
	ok(t.cap <= KINF_HASHTAB_MIN_CAP, "%s: memory given back (cap %zu)", what, t.cap);
	ok(!find(&t, keys[0], hash), "%s: nothing found in an empty table", what);
	kinf_hashtab_release(&t);
	free(keys);
}

int main(void) {
	struct kinf_hashtab t = { 0 };

	/* FNV-1a test vectors (64 bit) */
	ok(kinf_hashtab_hash_str("") == UINT64_C(0xcbf29ce484222325), "fnv1a: empty");
	ok(kinf_hashtab_hash_str("a") == UINT64_C(0xaf63dc4c8601ec8c), "fnv1a: a");
	ok(kinf_hashtab_hash_str("foobar") == UINT64_C(0x85944171f73967e8), "fnv1a: foobar");

	ok(!find(&t, "x", fnv), "a zeroed table is empty");
	is_int(kinf_hashtab_reserve(&t, 100), 0, "reserve 100 at once");
	ok(t.cap >= 134 && !kinf_hashtab_is_small(&t), "room for 100 at 3/4 (cap %zu)", t.cap);
	size_t cap = t.cap;
	for (int i = 0; i < 100; i++) {
		kinf_hashtab_insert(&t, (uint64_t)i, &t);
	}
	is_int(t.cap, cap, "no growth within what was reserved");
	kinf_hashtab_release(&t);
	is_int(t.n + t.cap, 0, "released");

	exercise("small", KINF_HASHTAB_SMALL_MAX, fnv);
	exercise("growing past small", KINF_HASHTAB_SMALL_MAX + 1, fnv);
	exercise("10,000 keys", 10000, fnv);
	exercise("one probe chain", 40, collide);
	return tap_done();
}
