#ifndef KINF_KINDCOLS_H
#define KINF_KINDCOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "buf.h"
#include "err.h"

struct kinf_object;
struct kinf_http;

/*
 * The columns kube-apiserver prints for a kind (the Table kubectl get asks
 * for), computed locally: for kinf serve's Tables, and for kinf's own
 * lines where no server Table is at hand (watch, index, a list whose
 * server sent none).
 *
 * Built-in kinds are printed as pkg/printers/internalversion/printers.go
 * prints them (Kubernetes 1.28): Pod, ReplicationController, Service,
 * Endpoints, Node, Event (core and events.k8s.io), Namespace, Secret,
 * ServiceAccount, ConfigMap, PersistentVolume(Claim), ResourceQuota,
 * PodTemplate, ComponentStatus, Deployment, ReplicaSet, StatefulSet,
 * DaemonSet, ControllerRevision, Job, CronJob, HorizontalPodAutoscaler,
 * PodDisruptionBudget, Ingress, IngressClass, NetworkPolicy, EndpointSlice,
 * RoleBinding, ClusterRoleBinding, StorageClass, CSIDriver, CSINode,
 * VolumeAttachment, PriorityClass, Lease, RuntimeClass,
 * CertificateSigningRequest, Mutating- and ValidatingWebhookConfiguration,
 * FlowSchema, PriorityLevelConfiguration, and APIService as the
 * aggregator prints it. Role, ClusterRole, LimitRange,
 * CustomResourceDefinition and CSIStorageCapacity have the apiserver's
 * default columns: Name and Created At. A custom resource has its CRD's
 * additionalPrinterColumns (kinf_kindcols_from_crd()); without its CRD,
 * Name and Age, as a CRD without printer columns has them.
 *
 * Cells are all the columns, as the apiserver prints them ("wide"):
 * kubectl shows those of priority 0, and with -o wide all.
 */
struct kinf_kindcols;

/* One column, as a Table's columnDefinitions carry it. */
struct kinf_kindcols_column {
	const char *name;		/* "Nominated Node": kubectl upper-cases it */
	const char *type;		/* "string", "integer", "number", "boolean", "date" */
	const char *format;		/* "name" for the object's name, else "" or a CRD's */
	int priority;			/* 0: shown; more: only with -o wide */
	const char *description;
};

/*
 * The printer of a built-in group ("" for core) and kind; any other kind
 * gets a custom resource's default (Name, Age). Never NULL; static, so it
 * needs no reference.
 */
const struct kinf_kindcols *kinf_kindcols_for(const char *group, const char *kind);

/* kinf_kindcols_for() of obj's apiVersion's group and its kind. */
const struct kinf_kindcols *kinf_kindcols_for_object(const struct kinf_object *obj);

/*
 * Whether group/kind is one of the built-in kinds above (false: a custom
 * resource, or an aggregated API's kind, whose columns are its server's).
 */
bool kinf_kindcols_is_builtin(const char *group, const char *kind);

/*
 * A custom resource's printer from its CustomResourceDefinition's JSON
 * (apiextensions.k8s.io/v1) for version: Name, then the version's
 * additionalPrinterColumns (Age when it has none), their jsonPath
 * evaluated as the apiserver does. 0 with *ret (a new reference), or
 * -KINF_EJSON / -KINF_EINVAL with reterr (no such version, a jsonPath
 * that does not parse), -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_kindcols_from_crd(const char *json, size_t len, const char *version,
		struct kinf_kindcols **ret, struct kinf_error *reterr);

/*
 * GET the CustomResourceDefinition of resource.group through http and make
 * its printer for version (kinf_kindcols_from_crd()). The request's error
 * (reterr: "403 Forbidden: ...", a 404 for an aggregated API's resource)
 * or the CRD's.
 */
KINF_MUST_CHECK int kinf_kindcols_fetch_crd(struct kinf_http *http, const char *group, const char *resource,
		const char *version, struct kinf_kindcols **ret, struct kinf_error *reterr);

/* References; the static printers of kinf_kindcols_for() ignore both. NULL is fine. */
const struct kinf_kindcols *kinf_kindcols_ref(const struct kinf_kindcols *k);
const struct kinf_kindcols *kinf_kindcols_unref(const struct kinf_kindcols *k);

/* The columns (borrowed, as long as k): their count, the array in *ret. */
size_t kinf_kindcols_columns(const struct kinf_kindcols *k,
		const struct kinf_kindcols_column **ret);

/* The columnDefinitions JSON array, as the apiserver writes it, appended to out. */
KINF_MUST_CHECK int kinf_kindcols_columns_json(const struct kinf_kindcols *k, struct kinf_buf *out);

/*
 * obj's row as a Table carries it, appended to out: "cells":[...] and,
 * for a finished pod, ,"conditions":[...] (the caller writes the braces
 * and the object). Ages are from now (NULL: the wall clock). 0,
 * -KINF_ENOMEM, or the error of kinf_object_tree() with reterr naming
 * the object and the field (-KINF_ETOOBIG: a number beyond float64's
 * range, as the apiserver's table convertor fails on it). The defaults
 * (Name and Age or Created At) are from the object's record and never
 * fail so.
 */
KINF_MUST_CHECK int kinf_kindcols_row_json(const struct kinf_kindcols *k, const struct kinf_object *obj,
		const struct timespec *now, struct kinf_buf *out, struct kinf_error *reterr);

/*
 * Sort a list's objects (n at objs) into the order the apiserver prints
 * k's rows in when it is not the list's: FlowSchemas by
 * matchingPrecedence, then name (printFlowSchemaList). Other kinds keep
 * the list's order: false, nothing moved. 0 or -KINF_ENOMEM.
 */
bool kinf_kindcols_sorts_rows(const struct kinf_kindcols *k);
KINF_MUST_CHECK int kinf_kindcols_sort_rows(const struct kinf_kindcols *k, const struct kinf_object **objs,
		size_t n);

/*
 * The header cells kubectl prints (the names upper-cased), appended to
 * ret: priority 0 columns, all with wide. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_kindcols_headers(const struct kinf_kindcols *k, bool wide, struct kinf_strv *ret);

/*
 * obj's cells as kubectl prints a Table's (a number as Go's %v, null as
 * nothing, a string up to its first line break and "..."), of the columns
 * kinf_kindcols_headers() names, appended to ret; ages from now (NULL: the
 * wall clock). Errors as kinf_kindcols_row_json().
 */
KINF_MUST_CHECK int kinf_kindcols_cells(const struct kinf_kindcols *k, const struct kinf_object *obj,
		bool wide, const struct timespec *now, struct kinf_strv *ret,
		struct kinf_error *reterr);

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
KINF_MUST_CHECK int kinf_kindcols_append_labels(const struct kinf_label_columns *lc,
		const struct kinf_object *obj, struct kinf_strv *ret);

/*
 * A duration in kubectl's human form (duration.HumanDuration), as the AGE
 * column shows it: "5s", "3m", "2m30s", "4h", "3d5h", "400d", "3y45d".
 * seconds < -1 is "<invalid>".
 */
void kinf_kindcols_human_duration(long long seconds, char *buf, size_t size);

#endif
