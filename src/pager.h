#ifndef KINF_PAGER_H
#define KINF_PAGER_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "indexer.h"
#include "object.h"

struct kinf_http;

/*
 * The list phase: one consistent list of a collection, paginated as
 * client-go's pager does it (tools/pager): limit/continue, the
 * resourceVersion only on the first page, and one full list without paging
 * when a continue token expires (410): once, and its own continue token is
 * not followed. Each page is split into items while libcurl delivers it,
 * so no page is ever buffered whole.
 */
struct kinf_list_opts {
	const char *path;		/* collection path: /api/v1/namespaces/ns/pods */
	const char *label_selector;	/* or NULL */
	const char *field_selector;	/* or NULL */
	const char *resource_version;	/* NULL/"": most recent; "0": any */
	const char *resource_version_match;	/* or NULL */
	long limit;			/* page size; 0: no paging */
	bool table;			/* ask for meta.k8s.io Table rows (as=Table) */
	struct kinf_object_limits limits;
	/* Called after each page (progress lines); may be NULL. */
	void (*on_page)(unsigned pages, size_t items, void *userdata);
	/*
	 * Optional (not for tables): take each item as it is parsed, in the
	 * server's order, instead of keeping it (ret->items stays empty); the
	 * callee owns the reference. Calls come from one thread at a time,
	 * not always the caller's (large lists are parsed in a second thread).
	 * When a continue token expires after items were handed over, the
	 * list starts over in one request and only items with keys not handed
	 * over yet follow (ret->fell_back_to_full_list says so). Return 0, or
	 * <0 with reterr set to stop the list with that error.
	 */
	int (*on_item)(struct kinf_object *obj, void *userdata,
			struct kinf_error *reterr);
	void *userdata;
};

/* A Table row's cells as the server sent them, with the key of its object. */
struct kinf_table_row {
	char *key;		/* namespace/name */
	char *json;		/* {"cells":[...]}: the row without its object */
	size_t len;
};

struct kinf_list_result {
	struct kinf_object_list items;	/* sorted by key (not for tables or on_item) */
	struct kinf_table_row *rows;	/* sorted by key (tables only) */
	size_t n_rows;
	char *columns_json;		/* Table columnDefinitions, or NULL */
	char *resource_version;		/* the list's metadata.resourceVersion */
	char *kind;			/* "PodList" */
	char *api_version;
	unsigned pages;
	size_t n_items;			/* items or rows in the list */
	bool fell_back_to_full_list;	/* a continue token expired */
};

/*
 * List everything opts selects into ret (which the caller releases with
 * kinf_list_result_release). Errors: those of kinf_http_get (a 410 on the
 * first page, or on the one full list that replaces expired pages, is
 * -KINF_EGONE), -KINF_EJSON for a malformed page or item, -KINF_ETOOBIG
 * for an item over the size limit or a list over limits.max_list_items
 * (items or pages), -KINF_EHTTP for a continue token the list was already
 * asked with (pages in a circle).
 */
int kinf_list(struct kinf_http *http, const struct kinf_list_opts *opts,
		struct kinf_list_result *ret, struct kinf_error *reterr);

void kinf_list_result_release(struct kinf_list_result *result);

/*
 * A streaming splitter for one JSON object whose named array members are
 * split into elements (a List's "items", a Table's "rows"); every other
 * top-level member is handed over whole. Fed in arbitrary pieces.
 */
struct kinf_list_splitter;

struct kinf_list_splitter_ops {
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

struct kinf_list_splitter *kinf_list_splitter_new(
		const struct kinf_list_splitter_ops *ops, void *userdata,
		size_t max_element);
void kinf_list_splitter_free(struct kinf_list_splitter *s);
/* Feed bytes; returns 0 or the first error (then every later call fails). */
int kinf_list_splitter_feed(struct kinf_list_splitter *s, const char *data,
		size_t len, struct kinf_error *reterr);
/* The input is complete: checks that the object was closed. */
int kinf_list_splitter_finish(struct kinf_list_splitter *s,
		struct kinf_error *reterr);

#endif
