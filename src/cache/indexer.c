/*
 * The Indexer: client-go's threadSafeMap plus storeIndex (tools/cache
 * thread_safe_store.go, index.go, store.go).
 *
 * Layout. Each stored object lives in one small record (struct item: the
 * object reference, the key's hash and a copy of the key). The store is a
 * hash table of item pointers keyed by the key. Every named index is a hash
 * table of buckets keyed by the index value, and each bucket holds the set
 * of items having that value, again as a hash table of item pointers. So an
 * object costs one item plus one (hash, pointer) slot per index value it
 * has; no per-object list of index values is kept (like client-go, the old
 * values are recomputed from the old object on update and delete).
 *
 * All tables are src/hashtab.h: a plain array while they hold at most
 * KINF_HASHTAB_SMALL_MAX entries (most buckets of a high-cardinality index
 * hold a single key), then open addressing with linear probing. Adding or
 * removing one key in a bucket of any size is O(1) amortized.
 *
 * Locking: one pthread rwlock. Writers (add, update, delete, replace,
 * add_index) hold it exclusively and call the index functions under it;
 * readers share it. The indexer never calls into the DeltaFIFO, so the
 * FIFO may call us while holding its own lock (see deltafifo.c).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "indexer.h"
#include "object.h"

/* One stored object. The key is copied so index sets stay valid across
 * updates that swap the object. */
struct item {
	uint64_t hash;			/* of key */
	struct kinf_object *obj;	/* one reference */
	char key[];
};

/* The keys having one value of one index. */
struct bucket {
	struct kinf_hashtab keys;	/* of struct item, hashed by key */
	char value[];
};

struct index_def {
	char *name;
	kinf_index_func fn;
	void *userdata;
	void (*free_userdata)(void *);
};

/* Everything replace() rebuilds: the items and one value table per index. */
struct state {
	struct kinf_hashtab items;	/* of struct item */
	struct kinf_hashtab *values;	/* [ndefs], each of struct bucket */
};

struct kinf_indexer {
	pthread_rwlock_t lock;
	struct index_def *defs;
	size_t ndefs;
	struct state st;
};

static bool match_ptr(const void *value, const void *ctx) {
	return value == ctx;
}

static bool match_item_key(const void *value, const void *ctx) {
	return strcmp(((const struct item *)value)->key, ctx) == 0;
}

static bool match_bucket_value(const void *value, const void *ctx) {
	return strcmp(((const struct bucket *)value)->value, ctx) == 0;
}

static struct kinf_hashtab_slot *items_find(const struct kinf_hashtab *items,
		const char *key) {
	return kinf_hashtab_find(items, kinf_hashtab_hash_str(key), match_item_key, key);
}

static struct kinf_hashtab_slot *bucket_slot(const struct kinf_hashtab *values,
		const char *value) {
	return kinf_hashtab_find(values, kinf_hashtab_hash_str(value), match_bucket_value, value);
}

/* The bucket of value, or NULL. */
static struct bucket *bucket_find(const struct kinf_hashtab *values, const char *value) {
	struct kinf_hashtab_slot *s = bucket_slot(values, value);
	return s ? s->value : NULL;
}

static void bucket_free(struct bucket *b) {
	if (b) {
		kinf_hashtab_release(&b->keys);
		free(b);
	}
}

static void values_release(struct kinf_hashtab *values) {
	for (size_t i = 0; i < kinf_hashtab_span(values); i++) {
		bucket_free(values->slots[i].value);
	}
	kinf_hashtab_release(values);
}

static void state_release(struct state *st, size_t ndefs) {
	for (size_t i = 0; i < kinf_hashtab_span(&st->items); i++) {
		struct item *it = st->items.slots[i].value;
		if (it) {
			kinf_object_unref(it->obj);
			free(it);
		}
	}
	kinf_hashtab_release(&st->items);
	if (st->values) {
		for (size_t d = 0; d < ndefs; d++) {
			values_release(&st->values[d]);
		}
	}
	free(st->values);
	st->values = NULL;
}

/*
 * Put item into the bucket for value. Returns 1 when inserted, 0 when it was
 * there already, or -KINF_ENOMEM (then nothing changed).
 */
static int bucket_add(struct kinf_hashtab *values, const char *value,
		struct item *it) {
	struct bucket *b = bucket_find(values, value);
	int r;

	if (b) {
		if (kinf_hashtab_find(&b->keys, it->hash, match_ptr, it)) {
			return 0;
		}
		r = kinf_hashtab_reserve(&b->keys, 1);
		if (r < 0) {
			return r;
		}
		kinf_hashtab_insert(&b->keys, it->hash, it);
		return 1;
	}
	size_t len = strlen(value);
	b = calloc(1, sizeof(*b) + len + 1);
	if (!b) {
		return -KINF_ENOMEM;
	}
	memcpy(b->value, value, len + 1);
	r = kinf_hashtab_reserve(values, 1);
	if (r < 0 || (r = kinf_hashtab_reserve(&b->keys, 1)) < 0) {
		bucket_free(b);
		return r;
	}
	kinf_hashtab_insert(&b->keys, it->hash, it);
	kinf_hashtab_insert(values, kinf_hashtab_hash_str(value), b);
	return 1;
}

/* Take item out of the bucket for value, dropping the bucket when empty
 * (kubernetes#84959: no empty sets left behind). Never fails. */
static void bucket_del(struct kinf_hashtab *values, const char *value,
		struct item *it) {
	struct kinf_hashtab_slot *slot = bucket_slot(values, value);
	if (!slot) {
		return;
	}
	struct bucket *b = slot->value;
	struct kinf_hashtab_slot *kslot = kinf_hashtab_find(&b->keys, it->hash, match_ptr, it);
	if (!kslot) {
		return;
	}
	kinf_hashtab_remove(&b->keys, kslot);
	if (b->keys.n == 0) {
		kinf_hashtab_remove(values, slot);
		bucket_free(b);
	}
}

static bool sorted_contains(const struct kinf_strv *sv, const char *s) {
	size_t lo = 0, hi = sv->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(sv->v[mid], s);
		if (c == 0) {
			return true;
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return false;
}

/*
 * Remove item from every bucket whose value is not in keep: the slow path
 * used when the old object's values could not be computed. Never fails.
 */
static void bucket_del_scan(struct kinf_hashtab *values, struct item *it,
		const struct kinf_strv *keep) {
	size_t i = 0;
	while (i < kinf_hashtab_span(values)) {
		struct bucket *b = values->slots[i].value;
		struct kinf_hashtab_slot *kslot;
		if (!b || sorted_contains(keep, b->value) ||
				!(kslot = kinf_hashtab_find(&b->keys, it->hash, match_ptr, it))) {
			i++;
			continue;
		}
		kinf_hashtab_remove(&b->keys, kslot);
		if (b->keys.n > 0) {
			i++;
			continue;
		}
		/*
		 * Removing the bucket may shift a later bucket into slot i, or
		 * shrink the table, so restart; this path is rare.
		 */
		kinf_hashtab_remove(values, &values->slots[i]);
		bucket_free(b);
		i = 0;
	}
}

/* The object's values for one index, sorted and unique. */
static int compute_values(const struct index_def *def,
		const struct kinf_object *obj, struct kinf_strv *out) {
	kinf_strv_reset(out);
	int r = def->fn(obj, out, def->userdata);
	if (r < 0) {
		kinf_strv_reset(out);
		return r;
	}
	kinf_strv_sort_unique(out);
	return 0;
}

static int namespace_index_func(const struct kinf_object *obj,
		struct kinf_strv *ret_values, void *userdata) {
	(void)userdata;
	return kinf_strv_push_str(ret_values, kinf_object_namespace(obj));
}

/*
 * Move item's index entries from old_obj's values to new_obj's (either may
 * be NULL: add or delete), in every index, all or nothing. First every new
 * value is added (undone on failure), then the old values not kept are
 * removed, which cannot fail. Like client-go, a single unchanged value is
 * left alone.
 */
static int update_indices(struct kinf_indexer *idx, struct state *st,
		struct item *it, const struct kinf_object *old_obj,
		const struct kinf_object *new_obj) {
	size_t nd = idx->ndefs;
	struct kinf_strv *oldv = NULL, *newv = NULL;
	bool *old_ok = NULL;
	unsigned char **added = NULL;
	int r = 0;

	if (nd == 0) {
		return 0;
	}
	oldv = calloc(nd, sizeof(*oldv));
	newv = calloc(nd, sizeof(*newv));
	old_ok = calloc(nd, sizeof(*old_ok));
	added = calloc(nd, sizeof(*added));
	if (!oldv || !newv || !old_ok || !added) {
		r = -KINF_ENOMEM;
		goto out;
	}
	for (size_t d = 0; d < nd; d++) {
		if (new_obj) {
			r = compute_values(&idx->defs[d], new_obj, &newv[d]);
			if (r < 0) {
				goto out;
			}
			added[d] = calloc(newv[d].n + 1, 1);
			if (!added[d]) {
				r = -KINF_ENOMEM;
				goto out;
			}
		}
		/* Without the old values we fall back to a scan below. */
		old_ok[d] = !old_obj ||
			compute_values(&idx->defs[d], old_obj, &oldv[d]) == 0;
	}

	for (size_t d = 0; d < nd; d++) {
		if (old_ok[d] && oldv[d].n == 1 && newv[d].n == 1 &&
				strcmp(oldv[d].v[0], newv[d].v[0]) == 0) {
			continue;
		}
		for (size_t i = 0; i < newv[d].n; i++) {
			if (old_ok[d] && sorted_contains(&oldv[d], newv[d].v[i])) {
				continue;
			}
			r = bucket_add(&st->values[d], newv[d].v[i], it);
			if (r < 0) {
				goto undo;
			}
			added[d][i] = (unsigned char)r;
		}
	}
	r = 0;

	for (size_t d = 0; d < nd; d++) {
		if (!old_ok[d]) {
			bucket_del_scan(&st->values[d], it, &newv[d]);
			continue;
		}
		if (oldv[d].n == 1 && newv[d].n == 1 &&
				strcmp(oldv[d].v[0], newv[d].v[0]) == 0) {
			continue;
		}
		for (size_t i = 0; i < oldv[d].n; i++) {
			if (!sorted_contains(&newv[d], oldv[d].v[i])) {
				bucket_del(&st->values[d], oldv[d].v[i], it);
			}
		}
	}
	goto out;

undo:
	for (size_t d = 0; d < nd; d++) {
		for (size_t i = 0; added[d] && i < newv[d].n; i++) {
			if (added[d][i]) {
				bucket_del(&st->values[d], newv[d].v[i], it);
			}
		}
	}
out:
	for (size_t d = 0; d < nd; d++) {
		if (oldv) {
			kinf_strv_release(&oldv[d]);
		}
		if (newv) {
			kinf_strv_release(&newv[d]);
		}
		if (added) {
			free(added[d]);
		}
	}
	free(oldv);
	free(newv);
	free(old_ok);
	free(added);
	return r;
}

/* Store obj under its key in st (client-go threadSafeMap.Update). */
static int state_put(struct kinf_indexer *idx, struct state *st,
		struct kinf_object *obj) {
	const char *key = kinf_object_key(obj);
	struct kinf_hashtab_slot *slot = items_find(&st->items, key);
	struct item *it;
	int r;

	if (slot) {
		it = slot->value;
		r = update_indices(idx, st, it, it->obj, obj);
		if (r < 0) {
			return r;
		}
		struct kinf_object *old = it->obj;
		it->obj = kinf_object_ref(obj);
		kinf_object_unref(old);
		return 0;
	}
	r = kinf_hashtab_reserve(&st->items, 1);
	if (r < 0) {
		return r;
	}
	size_t len = strlen(key);
	it = malloc(sizeof(*it) + len + 1);
	if (!it) {
		return -KINF_ENOMEM;
	}
	memcpy(it->key, key, len + 1);
	it->hash = kinf_hashtab_hash_str(key);
	it->obj = obj;
	r = update_indices(idx, st, it, NULL, obj);
	if (r < 0) {
		free(it);
		return r;
	}
	it->obj = kinf_object_ref(obj);
	kinf_hashtab_insert(&st->items, it->hash, it);
	return 0;
}

struct kinf_indexer *kinf_indexer_new(void) {
	struct kinf_indexer *idx = calloc(1, sizeof(*idx));
	if (!idx) {
		return NULL;
	}
	if (pthread_rwlock_init(&idx->lock, NULL) != 0) {
		free(idx);
		return NULL;
	}
	if (kinf_indexer_add_index(idx, KINF_INDEX_NAMESPACE,
			namespace_index_func, NULL, NULL) < 0) {
		kinf_indexer_free(idx);
		return NULL;
	}
	return idx;
}

void kinf_indexer_free(struct kinf_indexer *idx) {
	if (!idx) {
		return;
	}
	state_release(&idx->st, idx->ndefs);
	for (size_t d = 0; d < idx->ndefs; d++) {
		if (idx->defs[d].free_userdata) {
			idx->defs[d].free_userdata(idx->defs[d].userdata);
		}
		free(idx->defs[d].name);
	}
	free(idx->defs);
	pthread_rwlock_destroy(&idx->lock);
	free(idx);
}

static struct index_def *find_def(struct kinf_indexer *idx, const char *name,
		size_t *ret_pos) {
	for (size_t d = 0; d < idx->ndefs; d++) {
		if (strcmp(idx->defs[d].name, name) == 0) {
			if (ret_pos) {
				*ret_pos = d;
			}
			return &idx->defs[d];
		}
	}
	return NULL;
}

static int add_index_locked(struct kinf_indexer *idx, const char *name,
		kinf_index_func fn, void *userdata, void (*free_userdata)(void *)) {
	struct kinf_strv vals = {0};
	struct kinf_hashtab built = {0};
	char *name_copy = NULL;
	struct index_def *defs;
	struct kinf_hashtab *values;
	int r = 0;

	if (find_def(idx, name, NULL)) {
		return -KINF_EEXISTS;
	}
	name_copy = strdup(name);
	if (!name_copy) {
		return -KINF_ENOMEM;
	}
	struct index_def def = {
		.name = name_copy, .fn = fn, .userdata = userdata,
		.free_userdata = free_userdata,
	};
	/* Index the existing items before publishing the index (AddIndexers). */
	for (size_t i = 0; i < kinf_hashtab_span(&idx->st.items); i++) {
		struct item *it = idx->st.items.slots[i].value;
		if (!it) {
			continue;
		}
		r = compute_values(&def, it->obj, &vals);
		for (size_t v = 0; r == 0 && v < vals.n; v++) {
			int a = bucket_add(&built, vals.v[v], it);
			r = a < 0 ? a : 0;
		}
		if (r < 0) {
			goto fail;
		}
	}
	defs = realloc(idx->defs, (idx->ndefs + 1) * sizeof(*defs));
	if (!defs) {
		r = -KINF_ENOMEM;
		goto fail;
	}
	idx->defs = defs;
	values = realloc(idx->st.values, (idx->ndefs + 1) * sizeof(*values));
	if (!values) {
		r = -KINF_ENOMEM;
		goto fail;
	}
	idx->st.values = values;
	idx->defs[idx->ndefs] = def;
	idx->st.values[idx->ndefs] = built;
	idx->ndefs++;
	kinf_strv_release(&vals);
	return 0;

fail:
	kinf_strv_release(&vals);
	values_release(&built);
	free(name_copy);
	return r;
}

int kinf_indexer_add_index(struct kinf_indexer *idx, const char *name,
		kinf_index_func fn, void *userdata, void (*free_userdata)(void *)) {
	int r;

	if (!idx || !name || !fn) {
		r = -KINF_EINVAL;
	} else {
		pthread_rwlock_wrlock(&idx->lock);
		r = add_index_locked(idx, name, fn, userdata, free_userdata);
		pthread_rwlock_unlock(&idx->lock);
	}
	if (r < 0 && free_userdata) {
		free_userdata(userdata);
	}
	return r;
}

bool kinf_indexer_has_index(struct kinf_indexer *idx, const char *name) {
	pthread_rwlock_rdlock(&idx->lock);
	bool found = find_def(idx, name, NULL) != NULL;
	pthread_rwlock_unlock(&idx->lock);
	return found;
}

int kinf_indexer_add(struct kinf_indexer *idx, struct kinf_object *obj) {
	pthread_rwlock_wrlock(&idx->lock);
	int r = state_put(idx, &idx->st, obj);
	pthread_rwlock_unlock(&idx->lock);
	return r;
}

int kinf_indexer_update(struct kinf_indexer *idx, struct kinf_object *obj) {
	return kinf_indexer_add(idx, obj);
}

int kinf_indexer_delete(struct kinf_indexer *idx, const char *key) {
	pthread_rwlock_wrlock(&idx->lock);
	struct kinf_hashtab_slot *slot = items_find(&idx->st.items, key);
	if (slot) {
		struct item *it = slot->value;
		if (update_indices(idx, &idx->st, it, it->obj, NULL) < 0) {
			/* Only an allocation can fail here; scan instead. */
			struct kinf_strv none = {0};
			for (size_t d = 0; d < idx->ndefs; d++) {
				bucket_del_scan(&idx->st.values[d], it, &none);
			}
		}
		kinf_hashtab_remove(&idx->st.items, slot);
		kinf_object_unref(it->obj);
		free(it);
	}
	pthread_rwlock_unlock(&idx->lock);
	return 0;
}

int kinf_indexer_replace(struct kinf_indexer *idx,
		struct kinf_object *const *objs, size_t n) {
	struct state fresh = {0};
	int r = 0;

	pthread_rwlock_wrlock(&idx->lock);
	fresh.values = calloc(idx->ndefs ? idx->ndefs : 1,
			sizeof(*fresh.values));
	if (!fresh.values) {
		r = -KINF_ENOMEM;
		goto out;
	}
	/* Build aside and swap, so a failure leaves the old contents. */
	for (size_t i = 0; i < n; i++) {
		r = state_put(idx, &fresh, objs[i]);
		if (r < 0) {
			goto out;
		}
	}
	struct state old = idx->st;
	idx->st = fresh;
	fresh = old;
out:
	state_release(&fresh, idx->ndefs);
	pthread_rwlock_unlock(&idx->lock);
	return r;
}

struct kinf_object *kinf_indexer_get(struct kinf_indexer *idx,
		const char *key) {
	struct kinf_object *obj = NULL;

	pthread_rwlock_rdlock(&idx->lock);
	struct kinf_hashtab_slot *slot = items_find(&idx->st.items, key);
	if (slot) {
		obj = kinf_object_ref(((struct item *)slot->value)->obj);
	}
	pthread_rwlock_unlock(&idx->lock);
	return obj;
}

size_t kinf_indexer_len(struct kinf_indexer *idx) {
	pthread_rwlock_rdlock(&idx->lock);
	size_t n = idx->st.items.n;
	pthread_rwlock_unlock(&idx->lock);
	return n;
}

static int cmp_item_key(const void *a, const void *b) {
	const struct item *x = *(const struct item *const *)a;
	const struct item *y = *(const struct item *const *)b;
	return strcmp(x->key, y->key);
}

/* Append the items of table t to *v (n used so far, room for t->n more). */
static size_t collect(struct item **v, size_t n, const struct kinf_hashtab *t) {
	for (size_t i = 0; i < kinf_hashtab_span(t); i++) {
		if (t->slots[i].value) {
			v[n++] = t->slots[i].value;
		}
	}
	return n;
}

/* Sort items by key, drop repeats, and make an object list of them. */
static int items_to_objects(struct item **v, size_t n,
		struct kinf_object_list *ret) {
	size_t out = 0;

	if (n > 1) {
		qsort(v, n, sizeof(*v), cmp_item_key);
	}
	struct kinf_object **objs = malloc((n ? n : 1) * sizeof(*objs));
	if (!objs) {
		return -KINF_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && v[i] == v[i - 1]) {
			continue;
		}
		objs[out++] = kinf_object_ref(v[i]->obj);
	}
	ret->v = objs;
	ret->n = out;
	return 0;
}

static int items_to_keys(struct item **v, size_t n, struct kinf_strv *ret) {
	struct kinf_strv keys = {0};

	if (n > 1) {
		qsort(v, n, sizeof(*v), cmp_item_key);
	}
	for (size_t i = 0; i < n; i++) {
		int r = kinf_strv_push_str(&keys, v[i]->key);
		if (r < 0) {
			kinf_strv_release(&keys);
			return r;
		}
	}
	*ret = keys;
	return 0;
}

/* The value table of index name, or NULL with reterr filled in. */
static struct kinf_hashtab *lookup_index(struct kinf_indexer *idx, const char *name,
		struct kinf_error *reterr) {
	size_t pos;
	if (!find_def(idx, name, &pos)) {
		kinf_error_fill(reterr, KINF_ENOTFOUND,
				"index with name %s does not exist", name);
		return NULL;
	}
	return &idx->st.values[pos];
}

/*
 * The items under value of index name, or every stored item when name is
 * NULL, unsorted, in a new array. Under the lock.
 */
static int find_items(struct kinf_indexer *idx, const char *name,
		const char *value, struct item ***ret_v, size_t *ret_n,
		struct kinf_error *reterr) {
	const struct kinf_hashtab *t = &idx->st.items;
	if (name) {
		struct kinf_hashtab *values = lookup_index(idx, name, reterr);
		if (!values) {
			return -KINF_ENOTFOUND;
		}
		struct bucket *b = bucket_find(values, value);
		t = b ? &b->keys : NULL;
	}
	size_t n = t ? t->n : 0;
	struct item **v = malloc((n + 1) * sizeof(*v));
	if (!v) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	*ret_n = t ? collect(v, 0, t) : 0;
	*ret_v = v;
	return 0;
}

/*
 * List, ListKeys, ByIndex and IndexKeys: the items find_items() finds,
 * sorted by key, as objects into *ret_objs or as keys into *ret_keys (the
 * other one NULL).
 */
static int list_items(struct kinf_indexer *idx, const char *name,
		const char *value, struct kinf_object_list *ret_objs,
		struct kinf_strv *ret_keys, struct kinf_error *reterr) {
	struct item **v = NULL;
	size_t n = 0;

	pthread_rwlock_rdlock(&idx->lock);
	int r = find_items(idx, name, value, &v, &n, reterr);
	if (r == 0) {
		r = ret_objs ? items_to_objects(v, n, ret_objs) :
			items_to_keys(v, n, ret_keys);
	}
	pthread_rwlock_unlock(&idx->lock);
	free(v);
	return r;
}

int kinf_indexer_list(struct kinf_indexer *idx, struct kinf_object_list *ret) {
	return list_items(idx, NULL, NULL, ret, NULL, NULL);
}

int kinf_indexer_list_keys(struct kinf_indexer *idx, struct kinf_strv *ret) {
	return list_items(idx, NULL, NULL, NULL, ret, NULL);
}

int kinf_indexer_by_index(struct kinf_indexer *idx, const char *name,
		const char *value, struct kinf_object_list *ret,
		struct kinf_error *reterr) {
	return list_items(idx, name, value, ret, NULL, reterr);
}

int kinf_indexer_index_keys(struct kinf_indexer *idx, const char *name,
		const char *value, struct kinf_strv *ret, struct kinf_error *reterr) {
	return list_items(idx, name, value, NULL, ret, reterr);
}

int kinf_indexer_index(struct kinf_indexer *idx, const char *name,
		const struct kinf_object *obj, struct kinf_object_list *ret,
		struct kinf_error *reterr) {
	struct kinf_strv vals = {0};
	struct item **v = NULL;
	size_t n = 0, total = 0;
	size_t pos;
	int r;

	pthread_rwlock_rdlock(&idx->lock);
	if (!find_def(idx, name, &pos)) {
		r = kinf_error_set(reterr, KINF_ENOTFOUND,
				"index with name %s does not exist", name);
		goto out;
	}
	r = compute_values(&idx->defs[pos], obj, &vals);
	if (r < 0) {
		kinf_error_fill(reterr, -r, "index %s: %s", name,
				kinf_strerror(r));
		goto out;
	}
	for (size_t i = 0; i < vals.n; i++) {
		struct bucket *b = bucket_find(&idx->st.values[pos],
				vals.v[i]);
		total += b ? b->keys.n : 0;
	}
	v = malloc((total + 1) * sizeof(*v));
	if (!v) {
		r = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < vals.n; i++) {
		struct bucket *b = bucket_find(&idx->st.values[pos],
				vals.v[i]);
		if (b) {
			n = collect(v, n, &b->keys);
		}
	}
	/* An object under several of the values is listed once. */
	r = items_to_objects(v, n, ret);
out:
	pthread_rwlock_unlock(&idx->lock);
	kinf_strv_release(&vals);
	free(v);
	return r;
}

int kinf_indexer_index_count(struct kinf_indexer *idx, const char *name,
		const char *value, size_t *ret_count, struct kinf_error *reterr) {
	int r = 0;

	pthread_rwlock_rdlock(&idx->lock);
	struct kinf_hashtab *values = lookup_index(idx, name, reterr);
	if (!values) {
		r = -KINF_ENOTFOUND;
	} else {
		struct bucket *b = bucket_find(values, value);
		*ret_count = b ? b->keys.n : 0;
	}
	pthread_rwlock_unlock(&idx->lock);
	return r;
}

static int cmp_index_value(const void *a, const void *b) {
	const struct kinf_index_value *x = a, *y = b;
	if (x->count != y->count) {
		return x->count > y->count ? -1 : 1;
	}
	return strcmp(x->value, y->value);
}

int kinf_indexer_values(struct kinf_indexer *idx, const char *name,
		struct kinf_index_value **ret, size_t *ret_n,
		struct kinf_error *reterr) {
	struct kinf_index_value *out = NULL;
	size_t n = 0;
	int r = 0;

	pthread_rwlock_rdlock(&idx->lock);
	struct kinf_hashtab *values = lookup_index(idx, name, reterr);
	if (!values) {
		r = -KINF_ENOTFOUND;
		goto out;
	}
	out = calloc(values->n + 1, sizeof(*out));
	if (!out) {
		r = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < kinf_hashtab_span(values); i++) {
		struct bucket *b = values->slots[i].value;
		if (!b) {
			continue;
		}
		out[n].value = strdup(b->value);
		if (!out[n].value) {
			r = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			goto out;
		}
		out[n++].count = b->keys.n;
	}
out:
	pthread_rwlock_unlock(&idx->lock);
	if (r < 0) {
		kinf_index_values_free(out, n);
		return r;
	}
	if (n > 1) {
		qsort(out, n, sizeof(*out), cmp_index_value);
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

void kinf_index_values_free(struct kinf_index_value *values, size_t n) {
	if (!values) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		free(values[i].value);
	}
	free(values);
}
