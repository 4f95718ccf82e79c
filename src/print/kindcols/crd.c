/*
 * A custom resource's columns: its CRD's additionalPrinterColumns for the
 * version served, as apiextensions-apiserver's tableconvertor prints them
 * (registry/customresource/tableconvertor).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "jsonnum.h"
#include "jsonpath.h"
#include "kindcols_int.h"
#include "rfc3339.h"

struct crd_columns {
	struct kinf_kindcols_column *cols;	/* Name, then the printer columns */
	size_t n;
	struct kinf_jsonpath **paths;		/* one per column; [0] (Name) NULL */
	struct kinf_strv strings;		/* the columns' texts */
};

void crd_free(struct crd_columns *crd) {
	if (!crd) {
		return;
	}
	for (size_t i = 0; i < crd->n; i++) {
		kinf_jsonpath_free(crd->paths ? crd->paths[i] : NULL);
	}
	free(crd->paths);
	free(crd->cols);
	kinf_strv_release(&crd->strings);
	free(crd);
}

/* A copy of s kept in crd->strings (NULL once memory ran out). */
static const char *keep(struct crd_columns *crd, const char *s) {
	kinf_strv_put_str(&crd->strings, s);
	return kinf_strv_error(&crd->strings) ? NULL : crd->strings.v[crd->strings.n - 1];
}

/*
 * One cell of a printer column: its path's first value (FindResults'
 * results[0][0]) as cellForJSONValue makes it, or as the path's printer
 * writes it for a string column.
 */
static void crd_cell(struct row *r, const struct kinf_kindcols_column *col,
		const struct kinf_jsonpath *path, json_t *obj) {
	json_t *found = kinf_jsonpath_find(path, obj);
	json_t *v = json_array_get(found, 0);
	const char *type = col->type;
	if (!found) {
		/* One expression (checked when made): memory ran out, not a missing key. */
		if (!r->err) {
			r->err = -KINF_ENOMEM;
		}
		cell_null(r);
	} else if (!v) {
		cell_null(r);	/* a missing key: AllowMissingKeys */
	} else if (strcmp(type, "string") == 0) {
		struct kinf_buf b = {0};
		if (json_is_null(v)) {
			kinf_buf_puts(&b, "<no value>");	/* text/template's nil */
		} else if (kinf_jsonpath_print_value(v, &b) < 0) {
			kinf_buf_fail(&b, -KINF_ENOMEM);
		}
		cell_buf(r, &b, "");
		kinf_buf_release(&b);
	} else if (strcmp(type, "integer") == 0 && json_is_number(v)) {
		/* Go's int64(float64), which is INT64_MIN out of range on amd64 */
		double d = json_number_value(v);
		cell_int(r, json_is_integer(v) ? json_integer_value(v) :
				d >= -9223372036854775808.0 && d < 9223372036854775808.0 ?
				(long long)d : LLONG_MIN);
	} else if (strcmp(type, "number") == 0 && json_is_number(v)) {
		json_t *f = json_real(json_number_value(v));
		cell_value(r, f);
		json_decref(f);
	} else if (strcmp(type, "boolean") == 0 && json_is_boolean(v)) {
		cell_bool(r, json_is_true(v));
	} else if (strcmp(type, "date") == 0 && json_is_string(v)) {
		struct timespec t;
		if (kinf_rfc3339_parse(json_string_value(v), &t) < 0) {
			cell_str(r, "<invalid>");
		} else {
			cell_age(r, json_string_value(v));
		}
	} else {
		cell_null(r);
	}
	json_decref(found);
}

static void crd_cells(struct row *r, json_t *obj) {
	const struct crd_columns *crd = r->k->crd;
	cell_str(r, obj_name(obj));
	for (size_t i = 1; i < crd->n; i++) {
		crd_cell(r, &crd->cols[i], crd->paths[i], obj);
	}
}

/* One printer column into crd->cols[i] and crd->paths[i]. */
static int add_column(struct crd_columns *crd, size_t i, json_t *c, struct kinf_error *reterr) {
	const char *path = str(c, "jsonPath");
	struct kinf_buf t = {0}, desc = {0};
	json_t *empty = json_object(), *probe = NULL;
	kinf_buf_putf(&t, "{%s}", path);
	if (!kinf_buf_error(&t) && kinf_jsonpath_parse(t.data, &crd->paths[i], NULL) == 0) {
		probe = kinf_jsonpath_find(crd->paths[i], empty);	/* one expression */
	}
	json_decref(empty);
	kinf_buf_release(&t);
	if (!probe) {
		return kinf_error_set(reterr, KINF_EINVAL,
				"unrecognized column definition \"%s\"", path);
	}
	json_decref(probe);
	if (str(c, "description")[0]) {
		kinf_buf_puts(&desc, str(c, "description"));
	} else {
		kinf_buf_putf(&desc, "Custom resource definition column (in JSONPath format): %s",
				path);
	}
	crd->cols[i] = (struct kinf_kindcols_column){
		.name = keep(crd, str(c, "name")),
		.type = keep(crd, str(c, "type")),
		.format = keep(crd, str(c, "format")),
		.priority = (int)num(c, "priority"),
		.description = keep(crd, desc.data ? desc.data : ""),
	};
	int rc = kinf_buf_error(&desc) ? kinf_buf_error(&desc) : kinf_strv_error(&crd->strings);
	kinf_buf_release(&desc);
	return rc < 0 ? kinf_error_set(reterr, KINF_ENOMEM, "out of memory") : 0;
}

/*
 * The printer columns of crd's version (a new reference): Age
 * (serveDefaultColumnsIfEmpty) when it has none; NULL (reterr) when it
 * has no such version.
 */
static json_t *version_columns(json_t *crd, const char *version, struct kinf_error *reterr) {
	size_t i;
	json_t *v;
	json_array_foreach(at(crd, "spec", "versions", NULL), i, v) {
		if (strcmp(str(v, "name"), version) == 0) {
			json_t *cols = json_object_get(v, "additionalPrinterColumns");
			json_t *ret = json_array_size(cols) ? json_incref(cols) :
				json_pack("[{s:s,s:s,s:s,s:s}]", "name", "Age", "type", "date",
						"jsonPath", ".metadata.creationTimestamp",
						"description", DOC_CREATED);
			if (!ret) {
				kinf_error_fill(reterr, KINF_ENOMEM, "out of memory");
			}
			return ret;
		}
	}
	kinf_error_fill(reterr, KINF_EINVAL, "version %s not found in CustomResourceDefinition %s",
			version, obj_name(crd));
	return NULL;
}

int kinf_kindcols_from_crd(const char *json, size_t len, const char *version,
		struct kinf_kindcols **ret, struct kinf_error *reterr) {
	struct kinf_error jerr = {0};
	json_t *root = kinf_jsonnum_load(json, len, 0, &jerr), *cols = NULL, *c;
	struct kinf_kindcols *k = calloc(1, sizeof(*k));
	struct crd_columns *crd = calloc(1, sizeof(*crd));
	int rc = 0;
	size_t i;

	if (!k || !crd) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	if (!root) {
		rc = kinf_error_set(reterr, jerr.code ? jerr.code : KINF_EJSON,
				"CustomResourceDefinition: %s", jerr.message);
		goto out;
	}
	struct kinf_error local = {0};
	if (!(cols = version_columns(root, version, &local))) {
		rc = kinf_error_set(reterr, local.code, "%s", local.message);
		goto out;
	}
	crd->n = json_array_size(cols) + 1;
	crd->cols = calloc(crd->n, sizeof(*crd->cols));
	crd->paths = calloc(crd->n, sizeof(*crd->paths));
	if (!crd->cols || !crd->paths) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	crd->cols[0] = (struct kinf_kindcols_column){ "Name", "string", "name", 0, DOC_NAME };
	json_array_foreach(cols, i, c) {
		if ((rc = add_column(crd, i + 1, c, reterr)) < 0) {
			goto out;
		}
	}
	k->group = keep(crd, str(json_object_get(root, "spec"), "group"));
	k->kind = keep(crd, str(at(root, "spec", "names", NULL), "kind"));
	k->cols = crd->cols;
	k->n_cols = crd->n;
	k->cells = crd_cells;
	k->refs = 1;
	k->crd = crd;
	if (kinf_strv_error(&crd->strings)) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
out:
	json_decref(cols);
	json_decref(root);
	if (rc < 0) {
		crd_free(crd);
		free(k);
		return rc;
	}
	*ret = k;
	return 0;
}

int kinf_kindcols_fetch_crd(struct kinf_http *http, const char *group, const char *resource,
		const char *version, struct kinf_kindcols **ret, struct kinf_error *reterr) {
	struct kinf_http_response resp = {0};
	struct kinf_buf path = {0};
	kinf_buf_puts(&path, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/");
	kinf_buf_put_urlenc(&path, resource);
	kinf_buf_putc(&path, '.');
	kinf_buf_put_urlenc(&path, group);
	if (kinf_buf_error(&path)) {
		kinf_buf_release(&path);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	struct kinf_http_request req = { .path = path.data };
	int rc = kinf_http_get(http, &req, &resp, reterr);
	if (rc == 0) {
		rc = kinf_kindcols_from_crd(resp.body.data ? resp.body.data : "", resp.body.len,
				version, ret, reterr);
	}
	kinf_http_response_release(&resp);
	kinf_buf_release(&path);
	return rc;
}
