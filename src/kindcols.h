#ifndef KINF_KINDCOLS_H
#define KINF_KINDCOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

struct kinf_object;

/*
 * The usual columns of an object's kind, computed locally (for watch lines,
 * where the server's Table is not at hand), as kubectl's printers compute
 * them: Pod NAME READY STATUS RESTARTS AGE; Deployment NAME READY
 * UP-TO-DATE AVAILABLE AGE; Node NAME STATUS ROLES AGE VERSION; Namespace
 * NAME STATUS AGE; ConfigMap NAME DATA AGE; others NAME AGE (from the
 * object's record, never failing). With obj NULL, the header cells for
 * kind. Cells are appended to ret; -KINF_ENOMEM, or the error of
 * kinf_object_tree() with reterr naming the object and the field (a
 * number beyond float64's range).
 */
int kinf_kindcols_append(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret, struct kinf_error *reterr);

/*
 * The columns -o wide adds to those of kinf_kindcols_append(), as
 * kubectl's printers add them: Pod IP NODE NOMINATED NODE READINESS GATES;
 * Deployment CONTAINERS IMAGES SELECTOR; Node INTERNAL-IP EXTERNAL-IP
 * OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME; none for other kinds. With obj
 * NULL, the header cells for kind. Errors as kinf_kindcols_append().
 */
int kinf_kindcols_append_wide(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret, struct kinf_error *reterr);

/*
 * The label columns kubectl adds after a table's others (printers'
 * decorateTable): one per key of -L (in order), then with --show-labels
 * LABELS.
 */
struct kinf_label_columns {
	const char *const *keys;	/* -L, each a label key */
	size_t n_keys;
	bool show_labels;
};

/*
 * Append obj's label cells: each -L key's value ("" when the object lacks
 * it), then LABELS as labels.FormatLabels writes them (k=v,... sorted by
 * key; "<none>" when none). With obj NULL, the headers: each key's last
 * "/" segment upper-cased (app.kubernetes.io/name: NAME), then LABELS.
 * 0 or -KINF_ENOMEM.
 */
int kinf_kindcols_append_labels(const struct kinf_label_columns *lc,
		const struct kinf_object *obj, struct kinf_strv *ret);

/*
 * A duration in kubectl's human form (duration.HumanDuration), as the AGE
 * column shows it: "5s", "3m", "2m30s", "4h", "3d5h", "400d", "3y45d".
 * seconds < 0 is "<invalid>".
 */
void kinf_kindcols_human_duration(long long seconds, char *buf, size_t size);

#endif
