#ifndef KINF_LISTPAGE_H
#define KINF_LISTPAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"
#include "list.h"

struct kinf_listsplit;

/*
 * Page parsing for the lister (list.c): what one page of a List or Table
 * means, one page at a time, whichever thread parses it. Its members go
 * into the result (kind, apiVersion, columnDefinitions) and the page's
 * metadata (continue token, resourceVersion); its items become objects
 * (kept, or handed to opts->on_item), its rows Table rows.
 *
 * Invariants:
 * - One thread at a time uses a kinf_listpage (the lister hands it from
 *   its caller's thread to its parser thread and back, never shares it).
 * - n_items counts every item and row of the list so far, including ones
 *   handed to on_item; it never passes opts->limits.max_list_items.
 * - After a restart (an expired continue token: one full list replaces
 *   the pages), an item whose key was handed to on_item before is dropped,
 *   and the full list's own continue token is not followed.
 * - cont and rv are those of the page being parsed (its metadata member,
 *   the last one when repeated): kinf_listpage_done() moves rv into the
 *   result, the lister takes cont to ask for the next page.
 */
struct kinf_listpage {
	const struct kinf_list_opts *opts;
	struct kinf_list_result *result;
	struct kinf_object_list items;
	struct {
		struct kinf_list_row *v;
		size_t n;
		size_t cap;
	} rows;
	size_t n_items;			/* items or rows of this list so far */
	struct kinf_strv handed;	/* keys given to on_item (sorted once restarted) */
	bool restarted;			/* a full list after an expired continue */
	char *cont;			/* this page's metadata.continue */
	char *rv;
	struct kinf_error *reterr;	/* where a page's errors go */
	struct kinf_listsplit *splitter;	/* the page being parsed, or NULL */
	bool md_seen;			/* this page's metadata member was read */
	/*
	 * A page that is a Status (kind "Status"): its status, message,
	 * reason, code and details members, as "name":value, for the error.
	 */
	bool is_status;
	struct kinf_buf status_members;
};

/* --max-list-items: the most items (and pages) a list may hold. */
size_t kinf_listpage_max_items(const struct kinf_list_opts *opts);

/* The Accept header of a page request. */
const char *kinf_listpage_accept(const struct kinf_list_opts *opts);

/*
 * The request path of a page into path (reset first): the first (cont
 * NULL, with the resourceVersion) or a continued one. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_listpage_path(const struct kinf_list_opts *opts, long limit,
		const char *cont, struct kinf_buf *path);

/* A new page: a splitter for it in p->splitter. 0 or -KINF_ENOMEM (reterr). */
KINF_MUST_CHECK int kinf_listpage_begin(struct kinf_listpage *p);

/*
 * The page is parsed (its splitter finished): count it, take its RV. A
 * page that is a Status saying Failure (a 200 that client-go turns into
 * an error) is that error instead: -its code (reterr).
 */
KINF_MUST_CHECK int kinf_listpage_done(struct kinf_listpage *p);

/* Drop the items and rows kept so far (a restart, or a failed list). */
void kinf_listpage_drop(struct kinf_listpage *p);

/* The list is complete: move the items and rows, sorted, into p->result. */
void kinf_listpage_finish(struct kinf_listpage *p);

/* Free what p holds (not p), its splitter included. */
void kinf_listpage_release(struct kinf_listpage *p);

#endif
