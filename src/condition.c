#include <jansson.h>
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
		return -KINF_ENOMEM;
	}
	if (strcasecmp(spec, "create") == 0) {
		ret->kind = KINF_COND_CREATE;
		return 0;
	}
	if (strcasecmp(spec, "delete") == 0) {
		ret->kind = KINF_COND_DELETE;
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
		return 0;
	}
	if (strncasecmp(spec, "jsonpath=", 9) == 0) {
		const char *expr = spec + 9;
		const char *end = NULL;
		if (expr[0] == '{') {
			/* The expression runs to its matching brace; "=VALUE" may follow. */
			int depth = 0;
			for (const char *p = expr; *p; p++) {
				if (*p == '{') {
					depth++;
				} else if (*p == '}' && --depth == 0) {
					end = p + 1;
					break;
				}
			}
			if (!end) {
				goto bad;
			}
		} else {
			end = strrchr(expr, '=');
			if (!end) {
				end = expr + strlen(expr);
			}
		}
		if (end == expr || (*end && *end != '=')) {
			goto bad;
		}
		ret->kind = KINF_COND_JSONPATH;
		ret->name = strndup(expr, (size_t)(end - expr));
		ret->value = *end == '=' ? strdup(end + 1) : NULL;
		json_t *probe = kinf_jsonpath_values(ret->name, NULL, reterr);
		if (!probe) {
			kinf_error_prefix(reterr, "--for \"%s\"", spec);
			kinf_condition_release(ret);
			return -KINF_EINVAL;
		}
		json_decref(probe);
		return 0;
	}
bad:
	kinf_condition_release(ret);
	return kinf_error_set(reterr, KINF_EINVAL,
			"--for \"%s\": expected create, delete, condition=TYPE[=STATUS] "
			"or jsonpath='{PATH}'[=VALUE]", spec);
}

void kinf_condition_release(struct kinf_condition *c) {
	free(c->spec);
	free(c->name);
	free(c->value);
	memset(c, 0, sizeof(*c));
}

bool kinf_condition_met(const struct kinf_condition *c,
		const struct kinf_object *obj, struct kinf_buf *why) {
	switch (c->kind) {
	case KINF_COND_CREATE:
		if (!obj && why) {
			kinf_buf_append_str(why, "not found");
		}
		return obj != NULL;
	case KINF_COND_DELETE:
		if (obj && why) {
			kinf_buf_append_str(why, "still exists");
		}
		return obj == NULL;
	default:
		break;
	}
	if (!obj) {
		if (why) {
			kinf_buf_append_str(why, "not found");
		}
		return false;
	}
	size_t len;
	const char *json = kinf_object_json(obj, &len);
	json_t *root = json_loadb(json, len, 0, NULL);
	bool met = false;
	if (c->kind == KINF_COND_CONDITION) {
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
		met = status && strcasecmp(status, c->value) == 0;
		if (!met && why) {
			if (status) {
				kinf_buf_printf(why, "%s=%s", c->name, status);
			} else {
				kinf_buf_printf(why, "no %s condition", c->name);
			}
		}
	} else {
		json_t *vals = kinf_jsonpath_values(c->name, root, NULL);
		struct kinf_buf text = {0};
		kinf_jsonpath_print_values(vals, &text);
		if (c->value) {
			met = json_array_size(vals) > 0 &&
				strcmp(text.data ? text.data : "", c->value) == 0;
		} else {
			met = json_array_size(vals) > 0;
		}
		if (!met && why) {
			kinf_buf_printf(why, "%s=%s", c->name, json_array_size(vals) ?
					(text.data ? text.data : "") : "<none>");
		}
		kinf_buf_release(&text);
		json_decref(vals);
	}
	json_decref(root);
	return met;
}
