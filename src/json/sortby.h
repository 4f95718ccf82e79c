#ifndef KINF_SORTBY_H
#define KINF_SORTBY_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/*
 * kubectl's --sort-by (kubectl/pkg/cmd/get/sorter.go): objects ordered by
 * the first value a JSONPath expression reaches in each, as kubectl's
 * isLess orders two values:
 *
 * - an object without the field comes first, then one where it is null;
 * - two strings that both read as Kubernetes quantities (100m, 1Gi, 2e3)
 *   by their amounts, others byte by byte ("pod-10" before "pod-2"), as
 *   kubectl since 1.31 (kubernetes#124514 dropped the natural order that
 *   put "pod-2" first);
 * - two numbers by their values, exactly: kubectl compares integers as
 *   int64 and other numbers as float64, and refuses an integer with a
 *   float ("unsortable"); kinf compares any two numbers, and exactly;
 * - anything else (a string with a number, booleans, maps, lists) cannot
 *   be sorted: an error naming the two, as kubectl fails there.
 *
 * The sort is stable (equal keys keep the order they came in: namespace,
 * then name), where Go's sort.Sort is not.
 */

/*
 * Check a --sort-by expression as kubectl reads it
 * (RelaxedJSONPathExpression: "metadata.name", ".metadata.name",
 * "{.metadata.name}"): 0 or -KINF_EINVAL (reterr says why).
 */
KINF_MUST_CHECK int kinf_sortby_check(const char *field, struct kinf_error *reterr);

/* One thing to sort: its key (borrowed), and where it came from. */
struct kinf_sortby_item {
	json_t *key;		/* the first value the field reaches; NULL: none */
	size_t index;		/* the item's place before sorting */
};

/*
 * The key of data for field: the first value the expression reaches (a
 * new reference), or NULL when it reaches none (or does not parse).
 */
KINF_MUST_CHECK json_t *kinf_sortby_key(const char *field, json_t *data);

/*
 * Sort items by their keys, stably, as above. -KINF_EINVAL (reterr) when
 * two keys cannot be compared, or when there are items and none has the
 * field (kubectl: couldn't find any field with path "{...}" in the list
 * of objects). The items are reordered only on success.
 */
KINF_MUST_CHECK int kinf_sortby_sort(const char *field, struct kinf_sortby_item *items, size_t n,
		struct kinf_error *reterr);

/*
 * kubectl's order of two strings: <0, 0 or >0. Both Kubernetes quantities
 * (resource.ParseQuantity): by amount; else byte by byte.
 */
int kinf_sortby_compare_strings(const char *a, const char *b);

/*
 * The order of two JSON numbers (integers or reals), exactly:
 * jsonnum.h's kinf_jsonnum_cmp_json(), kinf's one number order.
 */
int kinf_sortby_compare_numbers(json_t *a, json_t *b);

#endif
