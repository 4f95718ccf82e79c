#ifndef KINF_INDEXER_H
#define KINF_INDEXER_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "object.h"

struct kinf_object;

/*
 * The Indexer: client-go's thread-safe store plus named indexes
 * (tools/cache thread_safe_store.go, index.go). Objects are keyed by
 * kinf_object_key(). Every function takes the indexer's own lock; none calls
 * out to user code under it except the index functions themselves, which
 * must not call back into the indexer.
 */
struct kinf_indexer;

/*
 * An index function: append the object's index values to ret_values
 * (zero, one or many; duplicates are fine). Return 0, or a negative KINF_E*
 * which makes the add/update fail (client-go panics instead).
 */
typedef int (*kinf_index_func)(const struct kinf_object *obj,
		struct kinf_strv *ret_values, void *userdata);

/* client-go's NamespaceIndex, built into every indexer. */
#define KINF_INDEX_NAMESPACE "namespace"

/* A new, empty indexer with the "namespace" index. NULL on out of memory. */
struct kinf_indexer *kinf_indexer_new(void);
/* Free the indexer, its references to objects and index userdata. NULL ok. */
void kinf_indexer_free(struct kinf_indexer *idx);

/*
 * Add a named index. Existing objects are indexed at once (AddIndexers).
 * free_userdata (may be NULL) is called on userdata when the indexer is
 * freed or when this call fails. -KINF_EEXISTS when the name is taken
 * ("indexer conflict").
 */
KINF_MUST_CHECK int kinf_indexer_add_index(struct kinf_indexer *idx, const char *name,
		kinf_index_func fn, void *userdata, void (*free_userdata)(void *));
/* Whether an index called name exists. */
bool kinf_indexer_has_index(struct kinf_indexer *idx, const char *name);

/*
 * Add or replace the object stored under its key, keeping every index
 * up to date (old values removed, new added, empty sets dropped). The
 * indexer takes its own reference. Add and Update are the same operation.
 */
KINF_MUST_CHECK int kinf_indexer_add(struct kinf_indexer *idx, struct kinf_object *obj);
KINF_MUST_CHECK int kinf_indexer_update(struct kinf_indexer *idx, struct kinf_object *obj);
/* Remove key; removing an absent key is not an error. */
KINF_MUST_CHECK int kinf_indexer_delete(struct kinf_indexer *idx, const char *key);
/* Replace the whole contents with objs[0..n) and rebuild every index. */
KINF_MUST_CHECK int kinf_indexer_replace(struct kinf_indexer *idx,
		struct kinf_object *const *objs, size_t n);

/* A new reference to the object stored under key, or NULL. */
struct kinf_object *kinf_indexer_get(struct kinf_indexer *idx, const char *key);
/* Number of stored objects. */
size_t kinf_indexer_len(struct kinf_indexer *idx);

/* Every stored object, sorted by key. */
KINF_MUST_CHECK int kinf_indexer_list(struct kinf_indexer *idx, struct kinf_object_list *ret);
/* Every stored key, sorted (ListKeys). */
KINF_MUST_CHECK int kinf_indexer_list_keys(struct kinf_indexer *idx, struct kinf_strv *ret);

/*
 * Objects whose value for index name is value (ByIndex), sorted by key.
 * -KINF_ENOTFOUND with "index with name %s does not exist" for an unknown
 * index.
 */
KINF_MUST_CHECK int kinf_indexer_by_index(struct kinf_indexer *idx, const char *name,
		const char *value, struct kinf_object_list *ret,
		struct kinf_error *reterr);
/* Keys whose value for index name is value (IndexKeys), sorted. */
KINF_MUST_CHECK int kinf_indexer_index_keys(struct kinf_indexer *idx, const char *name,
		const char *value, struct kinf_strv *ret, struct kinf_error *reterr);
/* Objects sharing any of obj's values for index name (Index), sorted. */
KINF_MUST_CHECK int kinf_indexer_index(struct kinf_indexer *idx, const char *name,
		const struct kinf_object *obj, struct kinf_object_list *ret,
		struct kinf_error *reterr);
/* Number of keys under one value of an index, without copying them. */
KINF_MUST_CHECK int kinf_indexer_index_count(struct kinf_indexer *idx, const char *name,
		const char *value, size_t *ret_count, struct kinf_error *reterr);

struct kinf_index_value {
	char *value;
	size_t count;
};
/*
 * Every value of index name with its number of keys (ListIndexFuncValues),
 * sorted by count descending, then value. Free with
 * kinf_index_values_free(*ret, n).
 */
KINF_MUST_CHECK int kinf_indexer_values(struct kinf_indexer *idx, const char *name,
		struct kinf_index_value **ret, size_t *ret_n,
		struct kinf_error *reterr);
void kinf_index_values_free(struct kinf_index_value *values, size_t n);

#endif
