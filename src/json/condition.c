#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "condition.h"
#include "jsonpath.h"
#include "object.h"

int kinf_condition_parse(const char *spec, struct kinf_condition *ret,
		struct kinf_error *reterr) {
	memset(ret, 0, sizeof(*ret));
	ret->spec = strdup(spec);
	if (!ret->spec) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (strcasecmp(spec, "create") == 0) {
		ret->kind = KINF_COND_CREATE;
		return 0;
	}
	if (strcasecmp(spec, "delete") == 0) {
		ret->kind = KINF_COND_DELETE;
		return 0;
	}
	if (strcasecmp(spec, "rollout") == 0) {
		ret->kind = KINF_COND_ROLLOUT;
		return 0;
	}
	if (strncasecmp(spec, "condition=", 10) == 0) {
		const char *name = spec + 10;
		const char *eq = strchr(name, '=');
		if (!name[0] || eq == name) {
			goto bad;
		}
		ret->kind = KINF_COND_CONDITION;
		ret->name = eq ? strndup(name, (size_t)(eq - name)) : strdup(name);
		ret->value = strdup(eq ? eq + 1 : "True");
		if (!ret->name || !ret->value) {
			kinf_condition_release(ret);
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		return 0;
	}
	if (strncasecmp(spec, "jsonpath=", 9) == 0) {
		/*
		 * As kubectl wait's processJSONPathInput: split at each "=" that
		 * is not part of "==" (braces and backslashes mean nothing here:
		 * kubectl's RelaxedJSONPathExpression then refuses a brace inside
		 * the path, "\}" too), PATH or PATH=VALUE, VALUE trimmed of
		 * quotes and not empty.
		 */
		const char *expr = spec + 9, *eq = NULL;
		const char *msg = NULL;
		for (const char *p = expr; *p; p++) {
			if (p[0] == '=' && p[1] == '=') {
				p++;
			} else if (*p == '=') {
				if (eq) {
					msg = "jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3 "
						"or --for=jsonpath='{.status.readyReplicas}'";
					break;
				}
				eq = p;
			}
		}
		const char *val = eq ? eq + 1 : NULL, *val_end = val ? val + strlen(val) : NULL;
		while (val && val < val_end && (*val == '\'' || *val == '"')) {
			val++;
		}
		while (val && val_end > val && (val_end[-1] == '\'' || val_end[-1] == '"')) {
			val_end--;
		}
		if (!msg && (eq ? eq == expr : !expr[0])) {
			msg = "jsonpath expression cannot be empty";
		} else if (!msg && val && val == val_end) {
			msg = "jsonpath wait has to have a value after equal sign, like "
				"--for=jsonpath='{.status.readyReplicas}'=3";
		}
		if (msg) {
			kinf_condition_release(ret);
			return kinf_error_set(reterr, KINF_EINVAL, "--for \"%s\": %s", spec, msg);
		}
		ret->kind = KINF_COND_JSONPATH;
		ret->name = eq ? strndup(expr, (size_t)(eq - expr)) : strdup(expr);
		ret->value = val ? strndup(val, (size_t)(val_end - val)) : NULL;
		if (!ret->name || (val && !ret->value)) {
			kinf_condition_release(ret);
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		struct kinf_error perr = {0};
		json_t *probe = kinf_jsonpath_values(ret->name, NULL, &perr);
		if (!probe) {
			kinf_condition_release(ret);
			if (perr.code == KINF_ENOMEM || !perr.code) {
				return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			}
			if (reterr) {
				*reterr = perr;
			}
			kinf_error_prefix(reterr, "--for \"%s\"", spec);
			return -KINF_EINVAL;
		}
		json_decref(probe);
		return 0;
	}
bad:
	kinf_condition_release(ret);
	return kinf_error_set(reterr, KINF_EINVAL,
			"--for \"%s\": expected create, delete, rollout, "
			"condition=TYPE[=STATUS] or jsonpath='{PATH}'[=VALUE]", spec);
}

void kinf_condition_release(struct kinf_condition *c) {
	free(c->spec);
	free(c->name);
	free(c->value);
	memset(c, 0, sizeof(*c));
}

int kinf_condition_bind(struct kinf_condition *c, const char *group,
		const char *kind, struct kinf_error *reterr) {
	bool apps = strcmp(group, "apps") == 0, ext = strcmp(group, "extensions") == 0;
	if (c->kind != KINF_COND_ROLLOUT) {
		return 0;
	}
	/* kubectl's StatusViewerFor. */
	if (!((apps || ext) && (strcmp(kind, "Deployment") == 0 ||
			strcmp(kind, "DaemonSet") == 0)) &&
			!(apps && strcmp(kind, "StatefulSet") == 0)) {
		return kinf_error_set(reterr, KINF_EINVAL, "--for rollout: %s%s%s has no "
				"rollout status (Deployment, StatefulSet or DaemonSet)",
				kind, group[0] ? "." : "", group);
	}
	free(c->name);
	c->name = strdup(kind);
	return c->name ? 0 : -KINF_ENOMEM;
}

/*
 * The reason a condition is not met, for the message only: when memory
 * runs out the reason is left empty rather than cut, and the state
 * stands.
 */
static void explain(struct kinf_buf *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void explain(struct kinf_buf *why, const char *fmt, ...) {
	va_list ap;

	if (!why) {
		return;
	}
	size_t len = why->len;
	va_start(ap, fmt);
	if (kinf_buf_vprintf(why, fmt, ap) < 0) {
		why->len = len;
		if (why->data) {
			why->data[len] = '\0';
		}
	}
	va_end(ap);
}

static json_int_t int_at(json_t *o, const char *a, const char *b) {
	return json_integer_value(json_object_get(json_object_get(o, a), b));
}

/* kubectl's DeploymentStatusViewer. */
static enum kinf_condition_state deployment_rollout(json_t *d, struct kinf_buf *why) {
	json_t *spec = json_object_get(d, "spec"), *status = json_object_get(d, "status");
	json_t *replicas = json_object_get(spec, "replicas");
	json_int_t updated = int_at(d, "status", "updatedReplicas");
	json_int_t available = int_at(d, "status", "availableReplicas");
	json_int_t total = int_at(d, "status", "replicas");
	size_t i;
	json_t *cond;

	if (int_at(d, "metadata", "generation") > int_at(d, "status", "observedGeneration")) {
		explain(why, "spec update not observed yet");
		return KINF_COND_NOT_MET;
	}
	json_array_foreach(json_object_get(status, "conditions"), i, cond) {
		const char *type = json_string_value(json_object_get(cond, "type"));
		const char *reason = json_string_value(json_object_get(cond, "reason"));
		if (type && strcmp(type, "Progressing") == 0 && reason &&
				strcmp(reason, "ProgressDeadlineExceeded") == 0) {
			explain(why, "exceeded its progress deadline");
			return KINF_COND_FAILED;
		}
	}
	if (json_is_integer(replicas) && updated < json_integer_value(replicas)) {
		explain(why, "%" JSON_INTEGER_FORMAT " out of %" JSON_INTEGER_FORMAT
				" new replicas have been updated", updated, json_integer_value(replicas));
	} else if (total > updated) {
		explain(why, "%" JSON_INTEGER_FORMAT " old replicas are pending termination",
				total - updated);
	} else if (available < updated) {
		explain(why, "%" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
				" updated replicas are available", available, updated);
	} else {
		return KINF_COND_MET;
	}
	return KINF_COND_NOT_MET;
}

static bool rolling_update(json_t *o, struct kinf_buf *why) {
	const char *type = json_string_value(json_object_get(
			json_object_get(json_object_get(o, "spec"), "updateStrategy"), "type"));
	if (type && strcmp(type, "RollingUpdate") == 0) {
		return true;
	}
	explain(why, "rollout status is only available for the RollingUpdate "
			"update strategy, not %s", type ? type : "none");
	return false;
}

/* kubectl's DaemonSetStatusViewer. */
static enum kinf_condition_state daemonset_rollout(json_t *d, struct kinf_buf *why) {
	json_int_t desired = int_at(d, "status", "desiredNumberScheduled");
	json_int_t updated = int_at(d, "status", "updatedNumberScheduled");
	json_int_t available = int_at(d, "status", "numberAvailable");

	if (!rolling_update(d, why)) {
		return KINF_COND_FAILED;
	}
	if (int_at(d, "metadata", "generation") > int_at(d, "status", "observedGeneration")) {
		explain(why, "spec update not observed yet");
	} else if (updated < desired) {
		explain(why, "%" JSON_INTEGER_FORMAT " out of %" JSON_INTEGER_FORMAT
				" new pods have been updated", updated, desired);
	} else if (available < desired) {
		explain(why, "%" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
				" updated pods are available", available, desired);
	} else {
		return KINF_COND_MET;
	}
	return KINF_COND_NOT_MET;
}

/* kubectl's StatefulSetStatusViewer, partitions included. */
static enum kinf_condition_state statefulset_rollout(json_t *s, struct kinf_buf *why) {
	json_t *spec = json_object_get(s, "spec"), *status = json_object_get(s, "status");
	json_t *replicas = json_object_get(spec, "replicas");
	json_t *ru = json_object_get(json_object_get(spec, "updateStrategy"), "rollingUpdate");
	json_int_t observed = int_at(s, "status", "observedGeneration");
	json_int_t ready = int_at(s, "status", "readyReplicas");
	json_int_t updated = int_at(s, "status", "updatedReplicas");

	if (!rolling_update(s, why)) {
		return KINF_COND_FAILED;
	}
	if (observed == 0 || int_at(s, "metadata", "generation") > observed) {
		explain(why, "spec update not observed yet");
		return KINF_COND_NOT_MET;
	}
	if (json_is_integer(replicas) && ready < json_integer_value(replicas)) {
		explain(why, "%" JSON_INTEGER_FORMAT " pods not ready",
				json_integer_value(replicas) - ready);
		return KINF_COND_NOT_MET;
	}
	if (json_is_object(ru)) {
		json_t *partition = json_object_get(ru, "partition");
		if (json_is_integer(replicas) && json_is_integer(partition)) {
			json_int_t want = json_integer_value(replicas) - json_integer_value(partition);
			if (updated < want) {
				explain(why, "partitioned roll out: %" JSON_INTEGER_FORMAT
						" out of %" JSON_INTEGER_FORMAT " new pods have been updated",
						updated, want);
				return KINF_COND_NOT_MET;
			}
		}
		return KINF_COND_MET;
	}
	const char *cur = json_string_value(json_object_get(status, "currentRevision"));
	const char *upd = json_string_value(json_object_get(status, "updateRevision"));
	if (strcmp(cur ? cur : "", upd ? upd : "") != 0) {
		explain(why, "rolling update: %" JSON_INTEGER_FORMAT
				" pods at revision %s", updated, upd ? upd : "");
		return KINF_COND_NOT_MET;
	}
	return KINF_COND_MET;
}

static enum kinf_condition_state rollout(const struct kinf_condition *c,
		const struct kinf_object *obj, json_t *root, struct kinf_buf *why) {
	const char *kind = c->name ? c->name : kinf_object_kind(obj);
	struct kinf_buf scratch = {0};
	enum kinf_condition_state st;

	if (!why) {
		why = &scratch;
	}
	if (kind && strcmp(kind, "Deployment") == 0) {
		st = deployment_rollout(root, why);
	} else if (kind && strcmp(kind, "StatefulSet") == 0) {
		st = statefulset_rollout(root, why);
	} else if (kind && strcmp(kind, "DaemonSet") == 0) {
		st = daemonset_rollout(root, why);
	} else {
		explain(why, "%s has no rollout status", kind ? kind : "the object");
		st = KINF_COND_FAILED;
	}
	kinf_buf_release(&scratch);
	return st;
}

enum kinf_condition_state kinf_condition_eval(const struct kinf_condition *c,
		const struct kinf_object *obj, struct kinf_buf *why) {
	switch (c->kind) {
	case KINF_COND_CREATE:
		if (!obj && why) {
			explain(why, "not found");
		}
		return obj ? KINF_COND_MET : KINF_COND_NOT_MET;
	case KINF_COND_DELETE:
		if (obj && why) {
			explain(why, "still exists");
		}
		return obj ? KINF_COND_NOT_MET : KINF_COND_MET;
	default:
		break;
	}
	if (!obj) {
		if (why) {
			explain(why, "not found");
		}
		return KINF_COND_NOT_MET;
	}
	struct kinf_error err = {0};
	json_t *root = kinf_object_tree(obj, &err);
	enum kinf_condition_state st = KINF_COND_NOT_MET;
	if (!root && err.code == KINF_ENOMEM) {
		return KINF_COND_ERROR;
	}
	if (!root) {
		/* A number beyond float64: no value to test, as for kubectl wait. */
		explain(why, "%s", err.message);
		return KINF_COND_NOT_MET;
	}
	if (c->kind == KINF_COND_ROLLOUT) {
		st = rollout(c, obj, root, why);
	} else if (c->kind == KINF_COND_CONDITION) {
		json_t *conds = json_object_get(json_object_get(root, "status"), "conditions");
		const char *status = NULL;
		size_t i;
		json_t *cond;
		json_array_foreach(conds, i, cond) {
			const char *type = json_string_value(json_object_get(cond, "type"));
			if (type && strcasecmp(type, c->name) == 0) {
				status = json_string_value(json_object_get(cond, "status"));
				break;
			}
		}
		bool met = status && strcasecmp(status, c->value) == 0;
		st = met ? KINF_COND_MET : KINF_COND_NOT_MET;
		if (!met && why) {
			if (status) {
				explain(why, "%s=%s", c->name, status);
			} else {
				explain(why, "no %s condition", c->name);
			}
		}
	} else {
		json_t *vals = kinf_jsonpath_values(c->name, root, NULL);
		struct kinf_buf text = {0};
		bool met;
		if (!vals || kinf_jsonpath_print_values(vals, &text) < 0) {
			/* The expression was checked when parsed: memory ran out. */
			kinf_buf_release(&text);
			json_decref(vals);
			json_decref(root);
			return KINF_COND_ERROR;
		}
		if (c->value) {
			met = json_array_size(vals) > 0 &&
				strcmp(text.data ? text.data : "", c->value) == 0;
		} else {
			met = json_array_size(vals) > 0;
		}
		if (!met && why) {
			explain(why, "%s=%s", c->name, json_array_size(vals) ?
					(text.data ? text.data : "") : "<none>");
		}
		st = met ? KINF_COND_MET : KINF_COND_NOT_MET;
		kinf_buf_release(&text);
		json_decref(vals);
	}
	json_decref(root);
	return st;
}

bool kinf_condition_met(const struct kinf_condition *c,
		const struct kinf_object *obj, struct kinf_buf *why) {
	return kinf_condition_eval(c, obj, why) == KINF_COND_MET;
}
