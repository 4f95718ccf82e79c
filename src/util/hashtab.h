#ifndef KINF_HASHTAB_H
#define KINF_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/*
 * The open-addressing hash table under the DeltaFIFO (key -> deltas, the
 * Replace key set) and the indexer (key -> item, index value -> bucket):
 * a set of (hash, pointer) slots the caller gives meaning to. Up to
 * KINF_HASHTAB_SMALL_MAX entries it is a plain array scanned in order (an
 * index has many small buckets); above, linear probing with a power-of-two
 * capacity, a load factor at most 3/4 and backward-shift deletion, so no
 * tombstones. Memory is given back when a table drains to an eighth.
 * Not thread safe: the owner's lock guards it.
 */
#define KINF_HASHTAB_SMALL_MAX 8
#define KINF_HASHTAB_MIN_CAP 16

struct kinf_hashtab_slot {
	uint64_t hash;
	void *value;		/* NULL: free */
};

/* Zero-initialised, an empty table. */
struct kinf_hashtab {
	struct kinf_hashtab_slot *slots;
	size_t n;
	size_t cap;		/* <= KINF_HASHTAB_SMALL_MAX: slots[0..n) in use */
};

/* FNV-1a, 64 bit, of a NUL-terminated string. */
static inline uint64_t kinf_hashtab_hash_str(const char *s) {
	uint64_t h = UINT64_C(14695981039346656037);
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* Whether value (never NULL) is the one sought; ctx is find's. */
typedef bool (*kinf_hashtab_match_func)(const void *value, const void *ctx);

static inline bool kinf_hashtab_is_small(const struct kinf_hashtab *t) {
	return t->cap <= KINF_HASHTAB_SMALL_MAX;
}

/* How many slots to scan to visit every entry (skip those with value NULL). */
static inline size_t kinf_hashtab_span(const struct kinf_hashtab *t) {
	return kinf_hashtab_is_small(t) ? t->n : t->cap;
}

/*
 * The slot holding a value with this hash that match accepts, or NULL.
 * Inline so that a known match function is inlined in the hot paths.
 */
static inline struct kinf_hashtab_slot *kinf_hashtab_find(const struct kinf_hashtab *t,
		uint64_t hash, kinf_hashtab_match_func match, const void *ctx) {
	if (t->n == 0) {
		return NULL;
	}
	if (kinf_hashtab_is_small(t)) {
		for (size_t i = 0; i < t->n; i++) {
			if (t->slots[i].hash == hash && match(t->slots[i].value, ctx)) {
				return &t->slots[i];
			}
		}
		return NULL;
	}
	size_t mask = t->cap - 1;
	for (size_t i = hash & mask; t->slots[i].value; i = (i + 1) & mask) {
		if (t->slots[i].hash == hash && match(t->slots[i].value, ctx)) {
			return &t->slots[i];
		}
	}
	return NULL;
}

/*
 * Make room for more entries, so that the next inserts (that many) cannot
 * fail. 0 or -KINF_ENOMEM (the table is unchanged then).
 */
KINF_MUST_CHECK int kinf_hashtab_reserve(struct kinf_hashtab *t, size_t more);

/* Insert a value (not NULL) known to be absent, after kinf_hashtab_reserve. */
void kinf_hashtab_insert(struct kinf_hashtab *t, uint64_t hash, void *value);

/*
 * Remove the entry in slot (from kinf_hashtab_find or a scan). Other slots
 * move: pointers into the table are stale afterwards. Never fails.
 */
void kinf_hashtab_remove(struct kinf_hashtab *t, struct kinf_hashtab_slot *slot);

/* Free the slots (not the values); the table is empty again. */
void kinf_hashtab_release(struct kinf_hashtab *t);

#endif
