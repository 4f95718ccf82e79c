#ifndef KINF_KINDCOLS_INT_H
#define KINF_KINDCOLS_INT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "buf.h"
#include "kindcols.h"

/*
 * Private to src/kindcols/: the apiserver's Table columns of each kind.
 *
 * A printer is a kind's column definitions and a function that appends an
 * object's cells to a row, in the columns' order, all of them (the
 * apiserver prints every Table "wide": kubectl hides priority > 0). The
 * row writes each cell either as the Table's JSON carries it (a string, an
 * integer, a boolean or null) or as kubectl prints it, so a cell function
 * is written once for both.
 *
 * Where each part lives (calls go down this list, never up):
 *   kindcols.c    the public functions and the table of built-in kinds:
 *                 the one place to look a kind up
 *   crd.c         custom resources: a CRD's additionalPrinterColumns
 *                 (apiextensions-apiserver's tableconvertor)
 *   core.c        core/v1, and events.k8s.io/v1's Event (printed as core's)
 *   apps.c        apps/v1, batch/v1, autoscaling/v2, policy/v1
 *   networking.c  networking.k8s.io/v1, discovery.k8s.io/v1
 *   storage.c     storage.k8s.io/v1
 *   control.c     rbac, certificates, coordination, scheduling, node,
 *                 admissionregistration, flowcontrol, apiregistration,
 *                 apiextensions: the cluster's own machinery
 *   cells.c       the row and the helpers kinds share (ages, selectors,
 *                 labels, containers, lists with "+ N more...")
 * pkg/printers/internalversion/printers.go (Kubernetes 1.28) is what the
 * cell functions port; its internal types' fields are read here under
 * their v1 JSON names.
 */

/* ---- the row (cells.c) ---- */

struct row {
	const struct kinf_kindcols *k;	/* whose cells these are */
	size_t at;			/* the next cell's column */
	struct timespec now;		/* ages are from here */
	bool json;			/* JSON literals into out, else kubectl's text */
	bool wide;			/* text: priority > 0 columns too */
	struct kinf_buf *out;		/* json: "a",1,true,null */
	struct kinf_strv *text;
	const char *conditions;		/* the row's "conditions" JSON (static), or NULL */
	int err;			/* the first failure */
};

void cell_str(struct row *r, const char *s);	/* NULL is "" */
void cell_strf(struct row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* b's text as a string cell, or empty when b is empty; b is reset. */
void cell_buf(struct row *r, struct kinf_buf *b, const char *empty);
void cell_int(struct row *r, long long v);
void cell_bool(struct row *r, bool v);
void cell_null(struct row *r);
/* A JSON value as it is (a custom resource's cell): its literal, or kubectl's %v of it. */
void cell_value(struct row *r, json_t *v);
/* translateTimestampSince: HumanDuration since an RFC 3339 time, "<unknown>" for none. */
void cell_age(struct row *r, const char *timestamp);

/* Seconds from timestamp to r->now, whole and toward zero; false when it does not parse. */
bool row_seconds_since(const struct row *r, const char *timestamp, long long *ret);

/* ---- JSON helpers (cells.c) ---- */

/* o[a][b]... for a NULL-terminated path of keys; NULL where one is missing. */
json_t *at(json_t *o, ...) __attribute__((sentinel));
/* A string member, "" when missing or not a string. */
const char *str(json_t *o, const char *key);
/* An integer member, 0 when missing. */
long long num(json_t *o, const char *key);
/* The object's name, and its creationTimestamp's age as a cell. */
const char *obj_name(json_t *obj);
void cell_created(struct row *r, json_t *obj);

/* ---- formats printers.go shares (cells.c) ---- */

/*
 * metav1.LabelSelectorAsSelector(sel).String(): "app=web,!canary,tier in
 * (a,b)", requirements sorted by key; none (FormatLabelSelector's
 * "<none>", or "") when it selects everything or nothing.
 */
void format_label_selector(json_t *sel, const char *none, struct kinf_buf *out);
/* The keys of a JSON object, sorted (Go's sort of strings), appended to ret. */
void sorted_keys(json_t *map, struct kinf_strv *ret);
/* labels.FormatLabels: "a=1,b=2" sorted by key, "<none>" for none. */
void format_labels(json_t *map, struct kinf_buf *out);
/* layoutContainerCells: the names and the images cells of a containers array. */
void cell_containers(struct row *r, json_t *containers);
/*
 * A list of at most max items then " + N more..." (printers.go's
 * listWithMoreString; formatEndpoints and formatHosts say it alike):
 * list_more_add() takes the next item (copied) and counts it.
 */
struct list_more {
	struct kinf_buf text;
	size_t shown, count, max;
};
void list_more_add(struct list_more *l, const char *item);
/* "a,b,c + 2 more...", or the list alone; empty gives unset (NULL: ""). */
void cell_list_more(struct row *r, struct list_more *l, const char *unset);

/*
 * (ingress)LoadBalancerStatusStringer, wide: of a loadBalancer.ingress
 * array, each IP or else hostname, sorted, once each, joined with ",".
 */
void load_balancer_ingress(json_t *ingress, struct kinf_buf *out);

/* ---- printers ---- */

typedef void cells_fn(struct row *r, json_t *obj);

/*
 * A printer: built-in ones are static (refs 0, never freed), a custom
 * resource's is made from its CRD by crd.c and counted.
 */
struct kinf_kindcols {
	const char *group;		/* "" for core */
	const char *kind;
	const struct kinf_kindcols_column *cols;
	size_t n_cols;
	cells_fn *cells;
	atomic_uint refs;
	struct crd_columns *crd;	/* crd.c's, or NULL */
	/*
	 * Its cells need only the object's name and creationTimestamp (the
	 * defaults): they come from the object's record, no tree of it is
	 * made, and no number in it can fail the row.
	 */
	bool from_record;
	/* Rows not in the list's order: by this key, then by name (or NULL). */
	long long (*row_order)(json_t *obj);
};

/* A built-in kind's entry in its file's table. */
#define KIND(group_, kind_, cols_, cells_) { .group = (group_), .kind = (kind_), \
	.cols = (cols_), .n_cols = sizeof(cols_) / sizeof((cols_)[0]), .cells = (cells_) }
/* One printed from the object's record (rest's default table). */
#define DEFAULT_KIND(group_, kind_) { .group = (group_), .kind = (kind_), \
	.cols = kindcols_default_columns, .n_cols = 2, .cells = default_cells, \
	.from_record = true }

#define DOC_NAME "Name must be unique within a namespace. Is required when creating " \
	"resources, although some resources may allow a client to request the " \
	"generation of an appropriate name automatically. Name is primarily " \
	"intended for creation idempotence and configuration definition. Cannot be " \
	"updated. More info: " \
	"https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define DOC_CREATED "CreationTimestamp is a timestamp representing the server time when " \
	"this object was created. It is not guaranteed to be set in happens-before " \
	"order across separate operations. Clients may not set this value. It is " \
	"represented in RFC3339 form and is in UTC.\n\nPopulated by the system. " \
	"Read-only. Null for lists. More info: " \
	"https://git.k8s.io/community/contributors/devel/sig-architecture/" \
	"api-conventions.md#metadata"

/* The columns nearly every kind has. */
#define COLUMN_NAME { "Name", "string", "name", 0, DOC_NAME }
#define COLUMN_AGE { "Age", "string", "", 0, DOC_CREATED }
#define COLUMN_CONTAINERS(p) { "Containers", "string", "", p, \
	"Names of each container in the template." }
#define COLUMN_IMAGES(p) { "Images", "string", "", p, \
	"Images referenced by each container in the template." }

/* Each file's kinds (kindcols.c looks them up). */
extern const struct kinf_kindcols kindcols_core[];
extern const size_t kindcols_n_core;
extern const struct kinf_kindcols kindcols_apps[];
extern const size_t kindcols_n_apps;
extern const struct kinf_kindcols kindcols_networking[];
extern const size_t kindcols_n_networking;
extern const struct kinf_kindcols kindcols_storage[];
extern const size_t kindcols_n_storage;
extern const struct kinf_kindcols kindcols_control[];
extern const size_t kindcols_n_control;

/*
 * rest.NewDefaultTableConvertor, for the built-in kinds without a printer
 * (Role, LimitRange, ...): Name, and Created At as RFC 3339 UTC.
 */
void default_cells(struct row *r, json_t *obj);
extern const struct kinf_kindcols_column kindcols_default_columns[2];

/* crd.c: free what a custom resource's printer owns. */
void crd_free(struct crd_columns *crd);

#endif
