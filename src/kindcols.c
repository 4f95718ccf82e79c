#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kindcols.h"
#include "object.h"
#include "rfc3339.h"

void kinf_kindcols_human_duration(long long s, char *buf, size_t size) {
	/* apimachinery/pkg/util/duration.HumanDuration */
	if (s < -1) {
		snprintf(buf, size, "<invalid>");
	} else if (s < 0) {
		snprintf(buf, size, "0s");
	} else if (s < 60 * 2) {
		snprintf(buf, size, "%llds", s);
	} else if (s < 60 * 10) {
		long long m = s / 60, sec = s % 60;
		if (sec == 0) {
			snprintf(buf, size, "%lldm", m);
		} else {
			snprintf(buf, size, "%lldm%llds", m, sec);
		}
	} else if (s < 60 * 60 * 3) {
		snprintf(buf, size, "%lldm", s / 60);
	} else if (s < 60 * 60 * 8) {
		long long h = s / 3600, m = (s / 60) % 60;
		if (m == 0) {
			snprintf(buf, size, "%lldh", h);
		} else {
			snprintf(buf, size, "%lldh%lldm", h, m);
		}
	} else if (s < 60 * 60 * 48) {
		snprintf(buf, size, "%lldh", s / 3600);
	} else if (s < 60 * 60 * 24 * 8) {
		long long d = s / 86400, h = (s / 3600) % 24;
		if (h == 0) {
			snprintf(buf, size, "%lldd", d);
		} else {
			snprintf(buf, size, "%lldd%lldh", d, h);
		}
	} else if (s < 60LL * 60 * 24 * 365 * 2) {
		snprintf(buf, size, "%lldd", s / 86400);
	} else if (s < 60LL * 60 * 24 * 365 * 8) {
		long long dy = (s / 86400) % 365, y = s / (86400LL * 365);
		if (dy == 0) {
			snprintf(buf, size, "%lldy", y);
		} else {
			snprintf(buf, size, "%lldy%lldd", y, dy);
		}
	} else {
		snprintf(buf, size, "%lldy", s / (86400LL * 365));
	}
}

/* A NULL-terminated list of header cells. */
static int push_headers(const char *const *headers, struct kinf_strv *ret) {
	for (size_t i = 0; headers[i]; i++) {
		int rc = kinf_strv_push_str(ret, headers[i]);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

/* obj's JSON as a tree in *ret_root: 0, or the error (reterr names obj and why). */
static int object_tree(const struct kinf_object *obj, json_t **ret_root,
		struct kinf_error *reterr) {
	struct kinf_error local = {0};
	struct kinf_error *e = reterr ? reterr : &local;
	*ret_root = kinf_object_tree(obj, e);
	return *ret_root ? 0 : -(e->code ? e->code : KINF_EJSON);
}

static int push_age(struct kinf_strv *ret, const struct kinf_object *obj) {
	char age[32];
	long long s = kinf_rfc3339_seconds_since(kinf_object_creation_timestamp(obj));
	if (s < 0 && !kinf_object_creation_timestamp(obj)[0]) {
		snprintf(age, sizeof(age), "<unknown>");
	} else {
		kinf_kindcols_human_duration(s, age, sizeof(age));
	}
	return kinf_strv_push_str(ret, age);
}

static const char *str_at(json_t *o, const char *a, const char *b) {
	json_t *v = json_object_get(o, a);
	if (b) {
		v = json_object_get(v, b);
	}
	return json_string_value(v);
}

/* The later of two RFC 3339 UTC timestamps (they compare as strings). */
/* A cell built in b: "" (or empty when b is), the failure passed on to ret. */
static void put_cell(struct kinf_strv *ret, const struct kinf_buf *b, const char *empty) {
	if (kinf_buf_error(b)) {
		kinf_strv_fail(ret, kinf_buf_error(b));
	} else {
		kinf_strv_put_str(ret, b->len ? b->data : empty);
	}
}

static const char *later(const char *a, const char *b) {
	if (!b || !b[0]) {
		return a;
	}
	return !a || strcmp(b, a) > 0 ? b : a;
}

/* kubectl's printPod status logic, without the sidecar refinements. */
static void pod_columns(json_t *pod, struct kinf_strv *ret) {
	json_t *spec = json_object_get(pod, "spec");
	json_t *status = json_object_get(pod, "status");
	json_t *cs = json_object_get(status, "containerStatuses");
	json_t *ics = json_object_get(status, "initContainerStatuses");
	size_t total = json_array_size(json_object_get(spec, "containers"));
	size_t ready = 0, i;
	long long restarts = 0;
	char reason[128], buf[64];
	const char *phase = str_at(status, "phase", NULL);
	const char *sreason = str_at(status, "reason", NULL);
	const char *last_restart = NULL;	/* the latest lastState.terminated.finishedAt */
	json_t *c;

	snprintf(reason, sizeof(reason), "%s", sreason ? sreason : phase ? phase : "Unknown");
	bool initializing = false;
	json_array_foreach(ics, i, c) {
		restarts += json_integer_value(json_object_get(c, "restartCount"));
		last_restart = later(last_restart, str_at(json_object_get(c, "lastState"),
				"terminated", "finishedAt"));
		json_t *st = json_object_get(c, "state");
		json_t *term = json_object_get(st, "terminated");
		json_t *wait = json_object_get(st, "waiting");
		if (term && json_integer_value(json_object_get(term, "exitCode")) == 0) {
			continue;
		}
		if (term) {
			const char *r = str_at(term, "reason", NULL);
			if (r) {
				snprintf(reason, sizeof(reason), "Init:%s", r);
			} else {
				snprintf(reason, sizeof(reason), "Init:ExitCode:%lld",
						(long long)json_integer_value(json_object_get(term, "exitCode")));
			}
		} else if (wait && str_at(wait, "reason", NULL) &&
				strcmp(str_at(wait, "reason", NULL), "PodInitializing") != 0) {
			snprintf(reason, sizeof(reason), "Init:%s", str_at(wait, "reason", NULL));
		} else {
			snprintf(reason, sizeof(reason), "Init:%zu/%zu", i,
					json_array_size(json_object_get(spec, "initContainers")));
		}
		initializing = true;
		break;
	}
	if (!initializing) {
		bool has_running = false;
		for (size_t k = json_array_size(cs); k-- > 0;) {
			c = json_array_get(cs, k);
			restarts += json_integer_value(json_object_get(c, "restartCount"));
			last_restart = later(last_restart, str_at(json_object_get(c, "lastState"),
					"terminated", "finishedAt"));
			json_t *st = json_object_get(c, "state");
			json_t *term = json_object_get(st, "terminated");
			const char *wr = str_at(st, "waiting", "reason");
			if (wr && wr[0]) {
				snprintf(reason, sizeof(reason), "%s", wr);
			} else if (term && str_at(term, "reason", NULL)) {
				snprintf(reason, sizeof(reason), "%s", str_at(term, "reason", NULL));
			} else if (term) {
				long long sig = json_integer_value(json_object_get(term, "signal"));
				if (sig) {
					snprintf(reason, sizeof(reason), "Signal:%lld", sig);
				} else {
					snprintf(reason, sizeof(reason), "ExitCode:%lld",
							(long long)json_integer_value(json_object_get(term, "exitCode")));
				}
			} else if (json_is_true(json_object_get(c, "ready")) &&
					json_object_get(st, "running")) {
				has_running = true;
				ready++;
			}
		}
		if (strcmp(reason, "Completed") == 0 && has_running) {
			snprintf(reason, sizeof(reason), "Running");
		}
	}
	if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") &&
			strcmp(reason, "NodeLost") != 0) {
		snprintf(reason, sizeof(reason), "Terminating");
	}
	snprintf(buf, sizeof(buf), "%zu/%zu", ready, total);
	kinf_strv_put_str(ret, buf);
	kinf_strv_put_str(ret, reason);
	long long since = restarts && last_restart ? kinf_rfc3339_seconds_since(last_restart) : -1;
	if (since >= 0) {
		/* kubectl 1.22+: "2 (19d ago)" */
		char age[32];
		kinf_kindcols_human_duration(since, age, sizeof(age));
		snprintf(buf, sizeof(buf), "%lld (%s ago)", restarts, age);
	} else {
		snprintf(buf, sizeof(buf), "%lld", restarts);
	}
	kinf_strv_put_str(ret, buf);
}

int kinf_kindcols_append(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret, struct kinf_error *reterr) {
	static const struct {
		const char *kind;
		const char *headers[6];
	} layouts[] = {
		{ "Pod", { "NAME", "READY", "STATUS", "RESTARTS", "AGE", NULL } },
		{ "Deployment", { "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", NULL } },
		{ "Node", { "NAME", "STATUS", "ROLES", "AGE", "VERSION", NULL } },
		{ "Namespace", { "NAME", "STATUS", "AGE", NULL } },
		{ "ConfigMap", { "NAME", "DATA", "AGE", NULL } },
		{ "", { "NAME", "AGE", NULL } },
	};
	size_t li = 0;
	while (layouts[li].kind[0] && strcmp(layouts[li].kind, kind ? kind : "") != 0) {
		li++;
	}
	if (!obj) {
		return push_headers(layouts[li].headers, ret);
	}
	const char *k = layouts[li].kind;
	if (!k[0]) {
		/* NAME and AGE are in the object's record: nothing to parse. */
		kinf_strv_put_str(ret, kinf_object_name(obj));
		push_age(ret, obj);
		return kinf_strv_error(ret) ? -KINF_ENOMEM : 0;
	}
	json_t *root;
	int rc = object_tree(obj, &root, reterr);
	if (rc < 0) {
		return rc;
	}
	char buf[64];
	kinf_strv_put_str(ret, kinf_object_name(obj));
	json_t *status = json_object_get(root, "status");
	if (strcmp(k, "Pod") == 0) {
		pod_columns(root, ret);
		push_age(ret, obj);
	} else if (strcmp(k, "Deployment") == 0) {
		long long want = json_integer_value(json_object_get(json_object_get(root, "spec"), "replicas"));
		snprintf(buf, sizeof(buf), "%lld/%lld",
				(long long)json_integer_value(json_object_get(status, "readyReplicas")), want);
		kinf_strv_put_str(ret, buf);
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(json_object_get(status, "updatedReplicas")));
		kinf_strv_put_str(ret, buf);
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(json_object_get(status, "availableReplicas")));
		kinf_strv_put_str(ret, buf);
		push_age(ret, obj);
	} else if (strcmp(k, "Node") == 0) {
		const char *ready = "Unknown";
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(status, "conditions"), i, c) {
			if (str_at(c, "type", NULL) && strcmp(str_at(c, "type", NULL), "Ready") == 0) {
				const char *st = str_at(c, "status", NULL);
				ready = st && strcmp(st, "True") == 0 ? "Ready" : "NotReady";
			}
		}
		kinf_strv_put_str(ret, ready);
		struct kinf_buf roles = {0};
		size_t n;
		const struct kinf_label *labels = kinf_object_labels(obj, &n);
		for (size_t j = 0; j < n; j++) {
			if (strncmp(labels[j].key, "node-role.kubernetes.io/", 24) == 0) {
				kinf_buf_putf(&roles, "%s%s", roles.len ? "," : "", labels[j].key + 24);
			}
		}
		put_cell(ret, &roles, "<none>");
		kinf_buf_release(&roles);
		push_age(ret, obj);
		const char *v = str_at(json_object_get(status, "nodeInfo"), "kubeletVersion", NULL);
		kinf_strv_put_str(ret, v ? v : "");
	} else if (strcmp(k, "Namespace") == 0) {
		const char *phase = str_at(status, "phase", NULL);
		kinf_strv_put_str(ret, phase ? phase : "");
		push_age(ret, obj);
	} else if (strcmp(k, "ConfigMap") == 0) {
		snprintf(buf, sizeof(buf), "%zu", json_object_size(json_object_get(root, "data")) +
				json_object_size(json_object_get(root, "binaryData")));
		kinf_strv_put_str(ret, buf);
		push_age(ret, obj);
	}
	json_decref(root);
	return kinf_strv_error(ret) ? -KINF_ENOMEM : 0;
}

/* A string field, or dflt when it is missing or empty. */
static const char *str_or(json_t *o, const char *key, const char *dflt) {
	const char *v = json_string_value(json_object_get(o, key));
	return v && v[0] ? v : dflt;
}

static int cmp_str(const void *a, const void *b) {
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One requirement of a label selector, as labels.Requirement.String() writes it. */
struct requirement {
	const char *key;	/* borrowed from the selector's JSON */
	char *text;
	size_t order;		/* matchLabels, then matchExpressions */
};

/* By key, as labels' internalSelector.Add sorts (stable for one key). */
static int cmp_requirement(const void *a, const void *b) {
	const struct requirement *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* An expression: "key", "!key", "key in (a,b)" (values sorted), "key notin (a,b)". */
static char *expression_text(json_t *expr) {
	const char *k = str_or(expr, "key", "");
	const char *op = str_or(expr, "operator", "");
	struct kinf_buf b = {0};
	if (strcmp(op, "Exists") == 0) {
		kinf_buf_puts(&b, k);
	} else if (strcmp(op, "DoesNotExist") == 0) {
		kinf_buf_putf(&b, "!%s", k);
	} else {
		struct kinf_strv vals = {0};
		size_t j;
		json_t *x;
		json_array_foreach(json_object_get(expr, "values"), j, x) {
			kinf_strv_put_str(&vals, json_string_value(x) ? json_string_value(x) : "");
		}
		if (vals.n) {
			qsort(vals.v, vals.n, sizeof(*vals.v), cmp_str);
		}
		kinf_buf_putf(&b, "%s %s (", k, strcmp(op, "NotIn") == 0 ? "notin" : "in");
		for (j = 0; j < vals.n; j++) {
			kinf_buf_putf(&b, "%s%s", j ? "," : "", vals.v[j]);
		}
		kinf_buf_puts(&b, ")");
		if (kinf_strv_error(&vals)) {
			kinf_buf_fail(&b, kinf_strv_error(&vals));
		}
		kinf_strv_release(&vals);
	}
	return kinf_buf_take(&b);	/* NULL when memory ran out */
}

/*
 * metav1.FormatLabelSelector: the requirements sorted by key (so "app=web"
 * before "app.kubernetes.io/name=x" and "!canary" after "app=web"),
 * matchLabels as key=value, expressions as expression_text() writes them;
 * "<none>" for none.
 */
static void format_label_selector(json_t *sel, struct kinf_buf *out) {
	json_t *labels = json_object_get(sel, "matchLabels");
	json_t *exprs = json_object_get(sel, "matchExpressions");
	size_t max = json_object_size(labels) + json_array_size(exprs), n = 0, i;
	struct requirement *reqs = calloc(max ? max : 1, sizeof(*reqs));
	const char *key;
	json_t *v;

	if (!reqs) {
		kinf_buf_fail(out, -KINF_ENOMEM);
		return;
	}
	json_object_foreach(labels, key, v) {
		struct kinf_buf b = {0};
		kinf_buf_putf(&b, "%s=%s", key, json_string_value(v) ? json_string_value(v) : "");
		reqs[n] = (struct requirement){ key, kinf_buf_take(&b), n };
		n++;
	}
	json_array_foreach(exprs, i, v) {
		reqs[n] = (struct requirement){ str_or(v, "key", ""), expression_text(v), n };
		n++;
	}
	qsort(reqs, n, sizeof(*reqs), cmp_requirement);
	for (i = 0; i < n; i++) {
		if (!reqs[i].text) {
			kinf_buf_fail(out, -KINF_ENOMEM);
		}
		kinf_buf_putf(out, "%s%s", i ? "," : "", reqs[i].text ? reqs[i].text : "");
		free(reqs[i].text);
	}
	if (n == 0) {
		kinf_buf_puts(out, "<none>");
	}
	free(reqs);
}

int kinf_kindcols_append_wide(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret, struct kinf_error *reterr) {
	static const struct {
		const char *kind;
		const char *headers[6];
	} layouts[] = {
		{ "Pod", { "IP", "NODE", "NOMINATED NODE", "READINESS GATES", NULL } },
		{ "Deployment", { "CONTAINERS", "IMAGES", "SELECTOR", NULL } },
		{ "Node", { "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION",
			"CONTAINER-RUNTIME", NULL } },
	};
	size_t li, n_layouts = sizeof(layouts) / sizeof(*layouts);
	for (li = 0; li < n_layouts && strcmp(layouts[li].kind, kind ? kind : "") != 0; li++) {
	}
	if (li == n_layouts) {
		return 0;
	}
	if (!obj) {
		return push_headers(layouts[li].headers, ret);
	}
	json_t *root;
	int rc = object_tree(obj, &root, reterr);
	if (rc < 0) {
		return rc;
	}
	json_t *spec = json_object_get(root, "spec");
	json_t *status = json_object_get(root, "status");
	struct kinf_buf b = {0};
	size_t i;
	json_t *c;
	if (li == 0) {
		kinf_strv_put_str(ret, str_or(status, "podIP", "<none>"));
		kinf_strv_put_str(ret, str_or(spec, "nodeName", "<none>"));
		kinf_strv_put_str(ret, str_or(status, "nominatedNodeName", "<none>"));
		json_t *gates = json_object_get(spec, "readinessGates");
		if (json_array_size(gates) == 0) {
			kinf_strv_put_str(ret, "<none>");
		} else {
			size_t ready = 0;
			json_t *g;
			json_array_foreach(gates, i, g) {
				const char *type = str_or(g, "conditionType", "");
				size_t j;
				json_array_foreach(json_object_get(status, "conditions"), j, c) {
					if (strcmp(str_or(c, "type", ""), type) == 0 &&
							strcmp(str_or(c, "status", ""), "True") == 0) {
						ready++;
						break;
					}
				}
			}
			kinf_buf_putf(&b, "%zu/%zu", ready, json_array_size(gates));
			put_cell(ret, &b, "");
		}
	} else if (li == 1) {
		json_t *containers = json_object_get(json_object_get(json_object_get(spec,
				"template"), "spec"), "containers");
		json_array_foreach(containers, i, c) {
			kinf_buf_putf(&b, "%s%s", i ? "," : "", str_or(c, "name", ""));
		}
		put_cell(ret, &b, "");
		kinf_buf_reset(&b);
		json_array_foreach(containers, i, c) {
			kinf_buf_putf(&b, "%s%s", i ? "," : "", str_or(c, "image", ""));
		}
		put_cell(ret, &b, "");
		kinf_buf_reset(&b);
		json_t *sel = json_object_get(spec, "selector");
		if (sel) {
			format_label_selector(sel, &b);
		}
		put_cell(ret, &b, "<none>");
	} else {
		const char *types[] = { "InternalIP", "ExternalIP" };
		for (size_t t = 0; t < 2; t++) {
			const char *addr = "<none>";
			json_array_foreach(json_object_get(status, "addresses"), i, c) {
				if (strcmp(str_or(c, "type", ""), types[t]) == 0) {
					addr = str_or(c, "address", "<none>");
					break;
				}
			}
			kinf_strv_put_str(ret, addr);
		}
		json_t *info = json_object_get(status, "nodeInfo");
		kinf_strv_put_str(ret, str_or(info, "osImage", "<unknown>"));
		kinf_strv_put_str(ret, str_or(info, "kernelVersion", "<unknown>"));
		kinf_strv_put_str(ret, str_or(info, "containerRuntimeVersion", "<unknown>"));
	}
	kinf_buf_release(&b);
	json_decref(root);
	return kinf_strv_error(ret) ? -KINF_ENOMEM : 0;
}

int kinf_kindcols_append_labels(const struct kinf_label_columns *lc,
		const struct kinf_object *obj, struct kinf_strv *ret) {
	for (size_t i = 0; lc && i < lc->n_keys; i++) {
		if (obj) {
			const char *v = kinf_object_label(obj, lc->keys[i]);
			kinf_strv_put_str(ret, v ? v : "");
			continue;
		}
		const char *slash = strrchr(lc->keys[i], '/');
		char *h = strdup(slash ? slash + 1 : lc->keys[i]);
		for (char *p = h; p && *p; p++) {
			*p = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
		}
		kinf_strv_put_take(ret, h);
	}
	if (lc && lc->show_labels && !obj) {
		kinf_strv_put_str(ret, "LABELS");
	} else if (lc && lc->show_labels) {
		size_t n;
		const struct kinf_label *l = kinf_object_labels(obj, &n);
		struct kinf_buf b = {0};
		for (size_t i = 0; i < n; i++) {
			kinf_buf_putf(&b, "%s%s=%s", i ? "," : "", l[i].key, l[i].value);
		}
		kinf_strv_put_take(ret, n ? kinf_buf_take(&b) : strdup("<none>"));
		kinf_buf_release(&b);
	}
	return kinf_strv_error(ret) ? -KINF_ENOMEM : 0;
}
