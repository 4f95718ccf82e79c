#ifndef KINF_SERVEFILTER_H
#define KINF_SERVEFILTER_H

/*
 * servefilter.c, a leaf of serve/: a read's filter (the path's namespace,
 * labelSelector and fieldSelector, checked per kind as the apiserver
 * checks them; an equality on an indexed field starts from the index),
 * and the encoders every answer shares: typed JSON, List items, a
 * List's head, Table columns and rows.
 */
#include "apistatus.h"
#include "serveint.h"

/*
 * Build the filter of a read: the path's namespace, labelSelector and
 * fieldSelector checked against the fields the apiserver offers for the
 * kind. 0, or -KINF_EINVAL with a 400/422 Status already in *ret_status.
 */
KINF_MUST_CHECK int serve_filter_init(struct serve_coll *c, const char *namespace, const char *labels,
		const char *fields, struct serve_filter *ret, struct kinf_apistatus_body *ret_status);
void serve_filter_release(struct serve_filter *f);
/* 1, 0, or -KINF_ENOMEM when a field could not be read (kinf_selector_match). */
KINF_MUST_CHECK int serve_filter_match(const struct serve_filter *f, const struct kinf_object *obj);
/* The objects f may match, sorted by key: the smallest index bucket, or everything. */
KINF_MUST_CHECK int serve_filter_candidates(struct serve_coll *c, const struct serve_filter *f,
		struct kinf_object_list *ret);
/* The index bucket f's candidates come from (the smallest), or -1 for everything. */
KINF_MUST_CHECK int serve_filter_bucket(struct serve_coll *c, const struct serve_filter *f);

/* How a list is written: JSON items or Table rows (with includeObject). */
struct serve_list_spec {
	bool table;
	const char *table_version;	/* "v1" or "v1beta1" */
	const char *include;		/* Table includeObject: "None", "Metadata", "Object" */
	const char *rv;			/* metadata.resourceVersion */
	const char *cont;		/* metadata.continue, or NULL */
	long long remaining;		/* remainingItemCount, -1 for none */
};

/*
 * The start of a List (or Table) as spec says, up to the items' (rows')
 * opening bracket. 0, or -KINF_ENOMEM when the Table's columns could
 * not be made.
 */
KINF_MUST_CHECK int serve_list_head(struct kinf_buf *b, const struct serve_coll *c,
		const struct serve_list_spec *spec);
/* The Table's columnDefinitions JSON array: c->columns' (kindcols.h). */
KINF_MUST_CHECK int serve_table_columns(const struct serve_coll *c, struct kinf_buf *out);
/*
 * One Table row {"cells":[...],"object":...} of obj (a finished pod's
 * "conditions" too); include is "None", "Metadata" or "Object". 0,
 * -KINF_ENOMEM, or the error of kinf_kindcols_row_json() with reterr
 * naming the object and the field (a number beyond float64's range: no
 * cells for it, as the apiserver's table convertor fails).
 */
KINF_MUST_CHECK int serve_table_row(const struct serve_coll *c, const struct kinf_object *obj,
		const char *include, struct kinf_buf *out, struct kinf_error *reterr);
/* obj with metadata.resourceVersion rv: a new object, NULL when it has none or out of memory. */
struct kinf_object *serve_with_rv(const struct kinf_object *obj, unsigned long long rv);
/* obj's JSON with apiVersion and kind of c. */
KINF_MUST_CHECK int serve_append_typed(const struct serve_coll *c, const struct kinf_object *obj,
		struct kinf_buf *out);
/*
 * obj's JSON as a List's item, as the apiserver writes one:
 * without "kind" and "apiVersion" (objects from watch events carry them).
 * 0 or a negative KINF_E*.
 */
KINF_MUST_CHECK int serve_append_item(const struct kinf_object *obj, struct kinf_buf *out);

#endif
