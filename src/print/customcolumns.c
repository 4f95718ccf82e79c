#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "customcolumns.h"
#include "jsonpath.h"

void kinf_customcolumns_free(struct kinf_customcolumns *cc) {
	if (!cc) {
		return;
	}
	for (size_t i = 0; i < cc->n; i++) {
		free(cc->names[i]);
		free(cc->paths[i]);
	}
	free(cc->names);
	free(cc->paths);
	free(cc);
}

int kinf_customcolumns_parse(const char *spec, struct kinf_customcolumns **ret,
		struct kinf_error *reterr) {
	struct kinf_customcolumns *cc = calloc(1, sizeof(*cc));
	char *copy = strdup(spec);
	char *save = NULL;
	int rc = 0;

	if (!cc || !copy) {
		free(cc);
		free(copy);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	if (!spec[0]) {
		rc = kinf_error_set(reterr, KINF_EINVAL,
				"custom-columns format specified but no custom columns given");
	}
	for (char *tok = strtok_r(copy, ",", &save); rc == 0 && tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		if (!colon || colon == tok) {
			rc = kinf_error_set(reterr, KINF_EINVAL,
					"unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", tok);
			break;
		}
		*colon = '\0';
		struct kinf_error perr = {0};
		json_t *probe = kinf_jsonpath_values(colon + 1, NULL, &perr);
		if (!probe) {
			rc = kinf_error_set(reterr, perr.code ? perr.code : KINF_ENOMEM, "%s",
					perr.message[0] ? perr.message : "out of memory");
			break;
		}
		json_decref(probe);
		char **names = realloc(cc->names, (cc->n + 1) * sizeof(*names));
		if (names) {
			cc->names = names;
		}
		char **paths = realloc(cc->paths, (cc->n + 1) * sizeof(*paths));
		if (paths) {
			cc->paths = paths;
		}
		if (!names || !paths) {
			rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
			break;
		}
		cc->names[cc->n] = strdup(tok);
		cc->paths[cc->n] = strdup(colon + 1);
		cc->n++;	/* (freed with cc either way) */
		if (!cc->names[cc->n - 1] || !cc->paths[cc->n - 1]) {
			rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
	}
	free(copy);
	if (rc < 0) {
		kinf_customcolumns_free(cc);
		return rc;
	}
	*ret = cc;
	return 0;
}

/* Go's fmt %v of a value decoded into interface{} (maps sorted by key). */
static void go_value(json_t *v, struct kinf_buf *out) {
	size_t i;
	json_t *c;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		struct kinf_strv keys = {0};
		const char *k;
		json_object_foreach(v, k, c) {
			kinf_strv_put_str(&keys, k);
		}
		kinf_strv_sort(&keys);
		kinf_buf_puts(out, "map[");
		for (i = 0; i < keys.n; i++) {
			kinf_buf_putf(out, "%s%s:", i ? " " : "", keys.v[i]);
			go_value(json_object_get(v, keys.v[i]), out);
		}
		kinf_buf_putc(out, ']');
		if (kinf_strv_error(&keys)) {
			kinf_buf_fail(out, kinf_strv_error(&keys));	/* a key is missing */
		}
		kinf_strv_release(&keys);
		break;
	}
	case JSON_ARRAY:
		kinf_buf_putc(out, '[');
		json_array_foreach(v, i, c) {
			if (i) {
				kinf_buf_putc(out, ' ');
			}
			go_value(c, out);
		}
		kinf_buf_putc(out, ']');
		break;
	case JSON_NULL:
		kinf_buf_puts(out, "<nil>");
		break;
	default: {
		int rc = kinf_buf_error(out) ? 0 : kinf_jsonpath_print_value(v, out);
		if (rc < 0) {
			kinf_buf_fail(out, rc);
		}
		break;
	}
	}
}

int kinf_customcolumns_cells(const struct kinf_customcolumns *cc, json_t *obj,
		struct kinf_strv *ret) {
	for (size_t i = 0; i < cc->n; i++) {
		json_t *vals = kinf_jsonpath_values(cc->paths[i], obj, NULL);
		struct kinf_buf b = {0};
		size_t j;
		json_t *v;
		if (!vals) {
			return -KINF_ENOMEM;	/* parsed before: never "<none>" for it */
		}
		json_array_foreach(vals, j, v) {
			if (j) {
				kinf_buf_putc(&b, ',');
			}
			go_value(v, &b);
		}
		size_t found = json_array_size(vals);
		json_decref(vals);
		int rc = kinf_strv_push_take(ret, found ? kinf_buf_take(&b) : strdup("<none>"));
		kinf_buf_release(&b);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}
