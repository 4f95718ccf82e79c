/*
 * Workloads: apps/v1, batch/v1, and what scales and guards them:
 * autoscaling/v2's HorizontalPodAutoscaler, policy/v1's PodDisruptionBudget.
 */
#include <ctype.h>
#include <string.h>

#include "kindcols_int.h"

/* apps Deployment */
static const struct kinf_kindcols_column deployment_columns[] = {
	COLUMN_NAME,
	{ "Ready", "string", "", 0,
		"Number of the pod with ready state" },
	{ "Up-to-date", "string", "", 0,
		"Total number of non-terminated pods targeted by this deployment that have "
		"the desired template spec." },
	{ "Available", "string", "", 0,
		"Total number of available pods (ready for at least minReadySeconds) "
		"targeted by this deployment." },
	COLUMN_AGE,
	COLUMN_CONTAINERS(1),
	COLUMN_IMAGES(1),
	{ "Selector", "string", "", 1,
		"Label selector for pods. Existing ReplicaSets whose pods are selected by "
		"this will be the ones affected by this deployment." },
};

/* printDeployment */
static void deployment_cells(struct row *r, json_t *d) {
	json_t *spec = json_object_get(d, "spec"), *status = json_object_get(d, "status");
	struct kinf_buf b = {0};
	cell_str(r, obj_name(d));
	cell_strf(r, "%lld/%lld", num(status, "readyReplicas"), num(spec, "replicas"));
	cell_int(r, num(status, "updatedReplicas"));
	cell_int(r, num(status, "availableReplicas"));
	cell_created(r, d);
	cell_containers(r, at(spec, "template", "spec", "containers", NULL));
	/* LabelSelectorAsSelector(...).String(): no "<none>" here */
	format_label_selector(json_object_get(spec, "selector"), "", &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* apps ReplicaSet */
static const struct kinf_kindcols_column replicaset_columns[] = {
	COLUMN_NAME,
	{ "Desired", "integer", "", 0,
		"Replicas is the number of desired replicas. This is a pointer to "
		"distinguish between explicit zero and unspecified. Defaults to 1. More "
		"info: "
		"https://kubernetes.io/docs/concepts/workloads/controllers/replicationc"
		"ontroller/#what-is-a-replicationcontroller" },
	{ "Current", "integer", "", 0,
		"Replicas is the most recently observed number of replicas. More info: "
		"https://kubernetes.io/docs/concepts/workloads/controllers/replicationc"
		"ontroller/#what-is-a-replicationcontroller" },
	{ "Ready", "integer", "", 0,
		"The number of ready replicas for this replica set." },
	COLUMN_AGE,
	COLUMN_CONTAINERS(1),
	COLUMN_IMAGES(1),
	{ "Selector", "string", "", 1,
		"Selector is a label query over pods that should match the replica count. If "
		"the selector is empty, it is defaulted to the labels present on the pod "
		"template. Label keys and values that must match in order to be controlled "
		"by this replica set. More info: "
		"https://kubernetes.io/docs/concepts/overview/working-with-objects/labe"
		"ls/#label-selectors" },
};

/* printReplicaSet */
static void replicaset_cells(struct row *r, json_t *rs) {
	json_t *spec = json_object_get(rs, "spec"), *status = json_object_get(rs, "status");
	struct kinf_buf b = {0};
	cell_str(r, obj_name(rs));
	cell_int(r, num(spec, "replicas"));
	cell_int(r, num(status, "replicas"));
	cell_int(r, num(status, "readyReplicas"));
	cell_created(r, rs);
	cell_containers(r, at(spec, "template", "spec", "containers", NULL));
	format_label_selector(json_object_get(spec, "selector"), "<none>", &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* apps StatefulSet */
static const struct kinf_kindcols_column statefulset_columns[] = {
	COLUMN_NAME,
	{ "Ready", "string", "", 0,
		"Number of the pod with ready state" },
	COLUMN_AGE,
	COLUMN_CONTAINERS(1),
	COLUMN_IMAGES(1),
};

static void statefulset_cells(struct row *r, json_t *ss) {
	json_t *spec = json_object_get(ss, "spec");
	cell_str(r, obj_name(ss));
	cell_strf(r, "%lld/%lld", num(json_object_get(ss, "status"), "readyReplicas"),
			num(spec, "replicas"));
	cell_created(r, ss);
	cell_containers(r, at(spec, "template", "spec", "containers", NULL));
}

/* apps DaemonSet */
static const struct kinf_kindcols_column daemonset_columns[] = {
	COLUMN_NAME,
	{ "Desired", "integer", "", 0,
		"The total number of nodes that should be running the daemon pod (including "
		"nodes correctly running the daemon pod). More info: "
		"https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/" },
	{ "Current", "integer", "", 0,
		"The number of nodes that are running at least 1 daemon pod and are supposed "
		"to run the daemon pod. More info: "
		"https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/" },
	{ "Ready", "integer", "", 0,
		"The number of nodes that should be running the daemon pod and have one or "
		"more of the daemon pod running and ready." },
	{ "Up-to-date", "integer", "", 0,
		"The total number of nodes that are running updated daemon pod" },
	{ "Available", "integer", "", 0,
		"The number of nodes that should be running the daemon pod and have one or "
		"more of the daemon pod running and available (ready for at least "
		"spec.minReadySeconds)" },
	{ "Node Selector", "string", "", 0,
		"NodeSelector is a selector which must be true for the pod to fit on a node. "
		"Selector which must match a node's labels for the pod to be scheduled on "
		"that node. More info: "
		"https://kubernetes.io/docs/concepts/configuration/assign-pod-node/" },
	COLUMN_AGE,
	COLUMN_CONTAINERS(1),
	COLUMN_IMAGES(1),
	{ "Selector", "string", "", 1,
		"A label query over pods that are managed by the daemon set. Must match in "
		"order to be controlled. If empty, defaulted to labels on Pod template. More "
		"info: "
		"https://kubernetes.io/docs/concepts/overview/working-with-objects/labe"
		"ls/#label-selectors" },
};

/* printDaemonSet */
static void daemonset_cells(struct row *r, json_t *ds) {
	json_t *spec = json_object_get(ds, "spec"), *status = json_object_get(ds, "status");
	struct kinf_buf b = {0};
	cell_str(r, obj_name(ds));
	cell_int(r, num(status, "desiredNumberScheduled"));
	cell_int(r, num(status, "currentNumberScheduled"));
	cell_int(r, num(status, "numberReady"));
	cell_int(r, num(status, "updatedNumberScheduled"));
	cell_int(r, num(status, "numberAvailable"));
	format_labels(at(spec, "template", "spec", "nodeSelector", NULL), &b);
	cell_buf(r, &b, "");
	cell_created(r, ds);
	cell_containers(r, at(spec, "template", "spec", "containers", NULL));
	format_label_selector(json_object_get(spec, "selector"), "<none>", &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* apps ControllerRevision */
static const struct kinf_kindcols_column controllerrevision_columns[] = {
	COLUMN_NAME,
	{ "Controller", "string", "", 0,
		"Controller of the object" },
	{ "Revision", "string", "", 0,
		"revision indicates the revision of the state represented by Data." },
	COLUMN_AGE,
};

/*
 * printControllerRevision: the controller owner as formatResourceName
 * writes it, kind.group/name in lower case ("statefulset.apps/db",
 * "pod/p").
 */
static void controllerrevision_cells(struct row *r, json_t *cr) {
	json_t *owner = NULL, *o;
	struct kinf_buf b = {0};
	size_t i;
	json_array_foreach(at(cr, "metadata", "ownerReferences", NULL), i, o) {
		if (json_is_true(json_object_get(o, "controller"))) {
			owner = o;
			break;
		}
	}
	if (owner) {
		const char *gv = str(owner, "apiVersion"), *slash = strchr(gv, '/');
		const char *kind = str(owner, "kind");
		for (const char *k = kind; *k; k++) {
			kinf_buf_putc(&b, (char)tolower((unsigned char)*k));
		}
		if (slash) {
			kinf_buf_putc(&b, '.');
			for (const char *g = gv; g < slash; g++) {
				kinf_buf_putc(&b, (char)tolower((unsigned char)*g));
			}
		}
		kinf_buf_putf(&b, "%s%s", b.len ? "/" : "", str(owner, "name"));
	}
	cell_str(r, obj_name(cr));
	cell_buf(r, &b, "<none>");
	cell_int(r, num(cr, "revision"));
	cell_created(r, cr);
	kinf_buf_release(&b);
}

/* batch Job */
static const struct kinf_kindcols_column job_columns[] = {
	COLUMN_NAME,
	{ "Completions", "string", "", 0,
		"The number of pods which reached phase Succeeded." },
	{ "Duration", "string", "", 0,
		"Time required to complete the job." },
	COLUMN_AGE,
	COLUMN_CONTAINERS(1),
	COLUMN_IMAGES(1),
	{ "Selector", "string", "", 1,
		"A label query over pods that should match the pod count. Normally, the "
		"system sets this field for you. More info: "
		"https://kubernetes.io/docs/concepts/overview/working-with-objects/labe"
		"ls/#label-selectors" },
};

/* printJob */
static void job_cells(struct row *r, json_t *job) {
	json_t *spec = json_object_get(job, "spec"), *status = json_object_get(job, "status");
	const char *start = json_string_value(json_object_get(status, "startTime"));
	const char *done = json_string_value(json_object_get(status, "completionTime"));
	long long succeeded = num(status, "succeeded");
	struct kinf_buf b = {0};
	char d[32] = "";
	cell_str(r, obj_name(job));
	if (json_object_get(spec, "completions")) {
		cell_strf(r, "%lld/%lld", succeeded, num(spec, "completions"));
	} else if (num(spec, "parallelism") > 1) {
		cell_strf(r, "%lld/1 of %lld", succeeded, num(spec, "parallelism"));
	} else {
		cell_strf(r, "%lld/1", succeeded);
	}
	long long since_start, since_done;
	if (start && row_seconds_since(r, start, &since_start)) {
		if (!done || !row_seconds_since(r, done, &since_done)) {
			kinf_kindcols_human_duration(since_start, d, sizeof(d));
		} else {
			kinf_kindcols_human_duration(since_start - since_done, d, sizeof(d));
		}
	}
	cell_str(r, d);
	cell_created(r, job);
	cell_containers(r, at(spec, "template", "spec", "containers", NULL));
	format_label_selector(json_object_get(spec, "selector"), "<none>", &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* batch CronJob */
static const struct kinf_kindcols_column cronjob_columns[] = {
	COLUMN_NAME,
	{ "Schedule", "string", "", 0,
		"The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron." },
	{ "Suspend", "boolean", "", 0,
		"This flag tells the controller to suspend subsequent executions, it does "
		"not apply to already started executions.  Defaults to false." },
	{ "Active", "integer", "", 0,
		"A list of pointers to currently running jobs." },
	{ "Last Schedule", "string", "", 0,
		"Information when was the last time the job was successfully scheduled." },
	COLUMN_AGE,
	COLUMN_CONTAINERS(1),
	COLUMN_IMAGES(1),
	{ "Selector", "string", "", 1,
		"A label query over pods that should match the pod count. Normally, the "
		"system sets this field for you. More info: "
		"https://kubernetes.io/docs/concepts/overview/working-with-objects/labe"
		"ls/#label-selectors" },
};

/* printCronJob */
static void cronjob_cells(struct row *r, json_t *cj) {
	json_t *spec = json_object_get(cj, "spec"), *status = json_object_get(cj, "status");
	json_t *suspend = json_object_get(spec, "suspend");
	json_t *job = at(spec, "jobTemplate", "spec", NULL);
	const char *last = json_string_value(json_object_get(status, "lastScheduleTime"));
	struct kinf_buf b = {0};
	cell_str(r, obj_name(cj));
	cell_str(r, str(spec, "schedule"));
	/* printBoolPtr: a string, whatever the column's type says */
	cell_str(r, !json_is_boolean(suspend) ? "<unset>" : json_is_true(suspend) ? "True" :
			"False");
	cell_int(r, (long long)json_array_size(json_object_get(status, "active")));
	if (last) {
		cell_age(r, last);
	} else {
		cell_str(r, "<none>");
	}
	cell_created(r, cj);
	cell_containers(r, at(job, "template", "spec", "containers", NULL));
	format_label_selector(json_object_get(job, "selector"), "<none>", &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* autoscaling HorizontalPodAutoscaler */
static const struct kinf_kindcols_column horizontalpodautoscaler_columns[] = {
	COLUMN_NAME,
	{ "Reference", "string", "", 0,
		"scaleTargetRef points to the target resource to scale, and is used to the "
		"pods for which metrics should be collected, as well as to actually change "
		"the replica count." },
	{ "Targets", "string", "", 0,
		"metrics contains the specifications for which to use to calculate the "
		"desired replica count (the maximum replica count across all metrics will be "
		"used).  The desired replica count is calculated multiplying the ratio "
		"between the target value and the current value by the current number of "
		"pods.  Ergo, metrics used must decrease as the pod count is increased, and "
		"vice-versa.  See the individual metric source types for more information "
		"about how each type of metric must respond." },
	{ "MinPods", "string", "", 0,
		"minReplicas is the lower limit for the number of replicas to which the "
		"autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed "
		"to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least "
		"one Object or External metric is configured.  Scaling is active as long as "
		"at least one metric value is available." },
	{ "MaxPods", "string", "", 0,
		"maxReplicas is the upper limit for the number of replicas to which the "
		"autoscaler can scale up. It cannot be less that minReplicas." },
	{ "Replicas", "string", "", 0,
		"currentReplicas is current number of replicas of pods managed by this "
		"autoscaler, as last seen by the autoscaler." },
	COLUMN_AGE,
};

/* A *resource.Quantity's String(): "<nil>" for none. */
static const char *quantity_ptr(json_t *q) {
	return json_is_string(q) ? json_string_value(q) : "<nil>";
}

/* A pointer field that is set (not missing, not null). */
static json_t *set(json_t *o, const char *key) {
	json_t *v = json_object_get(o, key);
	return json_is_null(v) ? NULL : v;
}

/*
 * One metric of formatHPAMetrics: the current value over the target.
 * st is the status at the metric's index when it is of the metric's type
 * (NULL: "<unknown>").
 */
static void hpa_metric(json_t *spec, json_t *statuses, size_t i, struct kinf_buf *out) {
	static const char *const members[][2] = {
		{ "External", "external" }, { "Object", "object" }, { "Pods", "pods" },
		{ "Resource", "resource" }, { "ContainerResource", "containerResource" },
	};
	size_t t = 0, n = sizeof(members) / sizeof(*members);
	while (t < n && strcmp(str(spec, "type"), members[t][0]) != 0) {
		t++;
	}
	if (t == n) {
		kinf_buf_puts(out, "<unknown type>");
		return;
	}
	json_t *target = json_object_get(set(spec, members[t][1]), "target");
	json_t *st = set(json_array_get(statuses, i), members[t][1]);
	json_t *current = json_object_get(st, "current");
	if (t <= 1) {
		/* External, Object: an average ("(avg)") or a value */
		if (set(target, "averageValue")) {
			kinf_buf_putf(out, "%s/%s (avg)", st && set(current, "averageValue") ?
					quantity_ptr(set(current, "averageValue")) : "<unknown>",
					quantity_ptr(set(target, "averageValue")));
		} else {
			kinf_buf_putf(out, "%s/%s", st ? quantity_ptr(set(current, "value")) :
					"<unknown>", quantity_ptr(set(target, "value")));
		}
	} else if (t == 2 || set(target, "averageValue")) {
		/* Pods, or a resource's average value */
		kinf_buf_putf(out, "%s/%s", st ? quantity_ptr(set(current, "averageValue")) :
				"<unknown>", quantity_ptr(set(target, "averageValue")));
	} else {
		/* a resource's utilization */
		json_t *cu = set(current, "averageUtilization");
		json_t *tu = set(target, "averageUtilization");
		if (st && cu) {
			kinf_buf_putf(out, "%lld%%", (long long)json_integer_value(cu));
		} else {
			kinf_buf_puts(out, "<unknown>");
		}
		if (tu) {
			kinf_buf_putf(out, "/%lld%%", (long long)json_integer_value(tu));
		} else {
			kinf_buf_puts(out, "/<auto>");
		}
	}
}

/* formatHPAMetrics: the first two metrics, then "+ N more...". */
static void hpa_metrics(json_t *specs, json_t *statuses, struct kinf_buf *out) {
	size_t n = json_array_size(specs);
	if (n == 0) {
		kinf_buf_puts(out, "<none>");
		return;
	}
	for (size_t i = 0; i < n && i < 2; i++) {
		kinf_buf_puts(out, i ? ", " : "");
		hpa_metric(json_array_get(specs, i), statuses, i, out);
	}
	if (n > 2) {
		kinf_buf_putf(out, " + %zu more...", n - 2);
	}
}

/* printHorizontalPodAutoscaler */
static void horizontalpodautoscaler_cells(struct row *r, json_t *hpa) {
	json_t *spec = json_object_get(hpa, "spec"), *status = json_object_get(hpa, "status");
	json_t *ref = json_object_get(spec, "scaleTargetRef");
	struct kinf_buf b = {0};
	cell_str(r, obj_name(hpa));
	cell_strf(r, "%s/%s", str(ref, "kind"), str(ref, "name"));
	hpa_metrics(json_object_get(spec, "metrics"), json_object_get(status, "currentMetrics"),
			&b);
	cell_buf(r, &b, "");
	if (json_object_get(spec, "minReplicas")) {
		cell_strf(r, "%lld", num(spec, "minReplicas"));
	} else {
		cell_str(r, "<unset>");
	}
	cell_int(r, num(spec, "maxReplicas"));
	cell_int(r, num(status, "currentReplicas"));
	cell_created(r, hpa);
	kinf_buf_release(&b);
}

/* policy PodDisruptionBudget */
static const struct kinf_kindcols_column poddisruptionbudget_columns[] = {
	COLUMN_NAME,
	{ "Min Available", "string", "", 0,
		"The minimum number of pods that must be available." },
	{ "Max Unavailable", "string", "", 0,
		"The maximum number of pods that may be unavailable." },
	{ "Allowed Disruptions", "integer", "", 0,
		"Calculated number of pods that may be disrupted at this time." },
	COLUMN_AGE,
};

/* An IntOrString's String(), "N/A" for none. */
static void int_or_string(struct row *r, json_t *v) {
	if (json_is_string(v)) {
		cell_str(r, json_string_value(v));
	} else if (json_is_integer(v)) {
		cell_strf(r, "%lld", (long long)json_integer_value(v));
	} else {
		cell_str(r, "N/A");
	}
}

static void poddisruptionbudget_cells(struct row *r, json_t *pdb) {
	json_t *spec = json_object_get(pdb, "spec");
	cell_str(r, obj_name(pdb));
	int_or_string(r, json_object_get(spec, "minAvailable"));
	int_or_string(r, json_object_get(spec, "maxUnavailable"));
	cell_int(r, num(json_object_get(pdb, "status"), "disruptionsAllowed"));
	cell_created(r, pdb);
}

const struct kinf_kindcols kindcols_apps[] = {
	KIND("apps", "Deployment", deployment_columns, deployment_cells),
	KIND("apps", "ReplicaSet", replicaset_columns, replicaset_cells),
	KIND("apps", "StatefulSet", statefulset_columns, statefulset_cells),
	KIND("apps", "DaemonSet", daemonset_columns, daemonset_cells),
	KIND("apps", "ControllerRevision", controllerrevision_columns,
		controllerrevision_cells),
	KIND("batch", "Job", job_columns, job_cells),
	KIND("batch", "CronJob", cronjob_columns, cronjob_cells),
	KIND("autoscaling", "HorizontalPodAutoscaler", horizontalpodautoscaler_columns,
		horizontalpodautoscaler_cells),
	KIND("policy", "PodDisruptionBudget", poddisruptionbudget_columns,
		poddisruptionbudget_cells),
};
const size_t kindcols_n_apps = sizeof(kindcols_apps) / sizeof(*kindcols_apps);
