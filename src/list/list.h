#ifndef KINF_LIST_H
#define KINF_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "object.h"

struct kinf_http;
struct kinf_http_request;

/*
 * A row of a meta.k8s.io Table (kubectl's server-side printing), as a list
 * keeps it: the cells as the server sent them, with the key of the row's
 * object. The list (listpage.c) makes them; kinf_table_print_server()
 * (table.h) prints them.
 */
struct kinf_list_row {
	char *key;		/* namespace/name */
	char *json;		/* {"cells":[...]}: the row without its object (unless row_objects) */
	size_t len;
};

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
	/*
	 * Tables: keep each row's object ({"cells":[...],"object":{...}})
	 * for what is printed from it (labels for -L, --show-labels; the
	 * field --sort-by sorts on); full_objects asks for whole objects
	 * (includeObject=Object) rather than their metadata.
	 */
	bool row_objects;
	bool full_objects;
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
	/*
	 * Optional, with on_item: when a continue token expires, call this
	 * (after the expired list's last on_item call, before the full
	 * list's first) and hand over every item of the one full list,
	 * as if the list began anew, instead of only those not handed over:
	 * for a caller that can forget what it made of the first items.
	 */
	void (*on_restart)(void *userdata);
	void *userdata;
};

struct kinf_list_result {
	struct kinf_object_list items;	/* sorted by key (not for tables or on_item) */
	struct kinf_list_row *rows;	/* sorted by key (tables only) */
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
KINF_MUST_CHECK int kinf_list(struct kinf_http *http, const struct kinf_list_opts *opts,
		struct kinf_list_result *ret, struct kinf_error *reterr);

/*
 * How kinf_list_with() GETs a page, as kinf_http_get() does it: the body
 * to req->on_body as it arrives, req->aborted asked between pieces (a
 * negative code ends the transfer with it); 0 for a 2xx answer, else a
 * negative KINF_E* with reterr set (-KINF_EGONE for a 410). lane (0 or 1)
 * names the connection: a large list's pages alternate between two, and
 * the two lanes call fetch from two threads at once.
 */
typedef int (*kinf_list_fetch_func)(const struct kinf_http_request *req,
		unsigned lane, void *userdata, struct kinf_error *reterr);

/* kinf_list() with the pages fetched through fetch (tests, another transport). */
KINF_MUST_CHECK int kinf_list_with(kinf_list_fetch_func fetch, void *userdata,
		const struct kinf_list_opts *opts, struct kinf_list_result *ret,
		struct kinf_error *reterr);

/* Free what ret holds (not ret itself) and zero it; NULL is fine. */
void kinf_list_result_release(struct kinf_list_result *result);

#endif
