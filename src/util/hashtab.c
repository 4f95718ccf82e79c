#include <stdlib.h>

#include "err.h"
#include "hashtab.h"

static void place(struct kinf_hashtab_slot *slots, size_t cap, struct kinf_hashtab_slot s) {
	size_t mask = cap - 1;
	size_t i = s.hash & mask;
	while (slots[i].value) {
		i = (i + 1) & mask;
	}
	slots[i] = s;
}

/* Move every entry into a new slot array of capacity cap. */
static int resize(struct kinf_hashtab *t, size_t cap) {
	struct kinf_hashtab_slot *slots = calloc(cap, sizeof(*slots));
	if (!slots) {
		return -KINF_ENOMEM;
	}
	size_t span = kinf_hashtab_span(t), j = 0;
	for (size_t i = 0; i < span; i++) {
		if (!t->slots[i].value) {
			continue;
		}
		if (cap <= KINF_HASHTAB_SMALL_MAX) {
			/* Only ever shrinking to the array form; n fits. */
			slots[j++] = t->slots[i];
		} else {
			place(slots, cap, t->slots[i]);
		}
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

int kinf_hashtab_reserve(struct kinf_hashtab *t, size_t more) {
	size_t want = t->n + more;
	if (want <= KINF_HASHTAB_SMALL_MAX) {
		if (want <= t->cap) {
			return 0;
		}
		size_t cap = t->cap ? t->cap * 2 : 1;
		while (cap < want) {
			cap *= 2;
		}
		struct kinf_hashtab_slot *slots = realloc(t->slots, cap * sizeof(*slots));
		if (!slots) {
			return -KINF_ENOMEM;
		}
		t->slots = slots;
		t->cap = cap;
		return 0;
	}
	/* Hash form: keep the load factor at or below 3/4. */
	if (!kinf_hashtab_is_small(t) && want * 4 <= t->cap * 3) {
		return 0;
	}
	size_t cap = kinf_hashtab_is_small(t) ? KINF_HASHTAB_MIN_CAP : t->cap * 2;
	while (want * 4 > cap * 3) {
		cap *= 2;
	}
	return resize(t, cap);
}

void kinf_hashtab_insert(struct kinf_hashtab *t, uint64_t hash, void *value) {
	struct kinf_hashtab_slot s = { .hash = hash, .value = value };
	if (kinf_hashtab_is_small(t)) {
		t->slots[t->n] = s;
	} else {
		place(t->slots, t->cap, s);
	}
	t->n++;
}

void kinf_hashtab_remove(struct kinf_hashtab *t, struct kinf_hashtab_slot *slot) {
	size_t i = (size_t)(slot - t->slots);
	t->n--;
	if (kinf_hashtab_is_small(t)) {
		t->slots[i] = t->slots[t->n];
		t->slots[t->n] = (struct kinf_hashtab_slot){ 0 };
		return;
	}
	/* Backward-shift deletion keeps every probe chain unbroken. */
	size_t mask = t->cap - 1;
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!t->slots[j].value) {
			break;
		}
		size_t home = t->slots[j].hash & mask;
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (!stays) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = (struct kinf_hashtab_slot){ 0 };
	/* Give memory back after a table drained; failure just keeps it. */
	if (t->n * 8 <= t->cap && t->cap > KINF_HASHTAB_MIN_CAP) {
		size_t cap = t->cap / 4;
		if (t->n <= KINF_HASHTAB_SMALL_MAX / 2) {
			cap = KINF_HASHTAB_SMALL_MAX;
		} else if (cap < KINF_HASHTAB_MIN_CAP) {
			cap = KINF_HASHTAB_MIN_CAP;
		}
		(void)resize(t, cap);
	}
}

void kinf_hashtab_release(struct kinf_hashtab *t) {
	free(t->slots);
	t->slots = NULL;
	t->n = 0;
	t->cap = 0;
}
