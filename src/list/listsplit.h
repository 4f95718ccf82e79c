#ifndef KINF_LISTSPLIT_H
#define KINF_LISTSPLIT_H

#include <stddef.h>

#include "err.h"

/*
 * The list splitter: a streaming splitter for one JSON object whose named
 * array members ("items" of a List, "rows" of a Table) are split into
 * elements; every other top-level member is handed over whole. It is fed
 * in arbitrary pieces, so no page of a list is ever buffered whole.
 *
 * Invariants:
 * - Elements and members are handed over in input order, each exactly
 *   once, with surrounding whitespace trimmed; how the input was cut
 *   into pieces never changes what is handed over (test-listsplit checks
 *   every two-piece cut; fuzz_listsplit every split of its inputs).
 * - The splitter checks only the structure it needs (the object's keys,
 *   colons and commas, balanced brackets outside strings, nesting at most
 *   1000 deep): the callbacks validate each value's bytes.
 * - No element larger than max_element is gathered (-KINF_ETOOBIG).
 * - After the first error every call returns that error again.
 */
struct kinf_listsplit;

struct kinf_listsplit_ops {
	/* A top-level member other than a split array: raw key and value bytes. */
	int (*member)(const char *key, size_t key_len, const char *value,
			size_t len, void *userdata);
	/* One element of a split array. */
	int (*element)(const char *key, size_t key_len, const char *value,
			size_t len, void *userdata);
	/*
	 * Optional: take the element that data[0..avail) starts with ('{')
	 * where it lies, without copying it first, and say how many bytes it
	 * was in *ret_used. Return 0, or <0 when it is cut short or not
	 * acceptable: then the element is scanned, gathered and handed to
	 * element(). Return a positive error code when the element was taken
	 * but the split must stop (with reterr set): feed returns it negated.
	 * Pieces are then gathered in larger chunks first.
	 */
	int (*element_prefix)(const char *key, size_t key_len, const char *data,
			size_t avail, size_t *ret_used, void *userdata);
};

/* A new splitter (NULL: out of memory); max_element 0 is the default. */
struct kinf_listsplit *kinf_listsplit_new(const struct kinf_listsplit_ops *ops,
		void *userdata, size_t max_element);
void kinf_listsplit_free(struct kinf_listsplit *s);
/* Feed bytes; returns 0 or the first error (then every later call fails). */
KINF_MUST_CHECK int kinf_listsplit_feed(struct kinf_listsplit *s, const char *data,
		size_t len, struct kinf_error *reterr);
/*
 * Feed a block the caller gathered already (the lister's 256 KiB blocks):
 * scanned where it lies, without the copy into the splitter's own chunk.
 */
KINF_MUST_CHECK int kinf_listsplit_feed_block(struct kinf_listsplit *s, const char *data,
		size_t len, struct kinf_error *reterr);
/* The input is complete: checks that the object was closed. */
KINF_MUST_CHECK int kinf_listsplit_finish(struct kinf_listsplit *s, struct kinf_error *reterr);

#endif
