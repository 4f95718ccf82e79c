#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"
#include "jsonnum.h"
#include "kindcols.h"
#include "list.h"
#include "object.h"
#include "table.h"
#include "termsafe.h"

#define TAB_MINWIDTH 6
#define TAB_PADDING 3

struct kinf_table {
	size_t n_columns;
	size_t *widths;
	struct kinf_strv cells;		/* row-major, escaped (termsafe.h) */
	size_t color_column;		/* of the next row, with color */
	const char *color;
	int err;			/* a row kinf_table_put_row() lost, or 0 */
};

struct kinf_table *kinf_table_new(size_t n_columns) {
	struct kinf_table *t = calloc(1, sizeof(*t));
	if (!t) {
		return NULL;
	}
	t->n_columns = n_columns;
	t->widths = calloc(n_columns ? n_columns : 1, sizeof(*t->widths));
	if (!t->widths) {
		free(t);
		return NULL;
	}
	return t;
}

void kinf_table_free(struct kinf_table *t) {
	if (t) {
		kinf_strv_release(&t->cells);
		free(t->widths);
		free(t);
	}
}

/* Display width: UTF-8 code points, not bytes; ANSI colour codes are free. */
static size_t display_width(const char *s) {
	size_t n = 0;
	for (; *s; s++) {
		if (*s == '\033' && s[1] == '[') {
			s += 2;
			while (*s && !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) {
				s++;
			}
			if (!*s) {
				break;
			}
			continue;
		}
		n += ((unsigned char)*s & 0xc0) != 0x80;
	}
	return n;
}

static void widen(struct kinf_table *t, const char *const *cells) {
	for (size_t i = 0; i < t->n_columns; i++) {
		size_t w = display_width(cells[i] ? cells[i] : "<none>") + TAB_PADDING;
		if (w < TAB_MINWIDTH) {
			w = TAB_MINWIDTH;
		}
		if (w > t->widths[i]) {
			t->widths[i] = w;
		}
	}
}

/*
 * The cells as they are printed, appended to ret: escaped for the
 * terminal (a name holding ESC or a newline must not draw or add a line),
 * then the color asked for with kinf_table_color_next() around its cell.
 */
static int escape_row(struct kinf_table *t, const char *const *cells,
		struct kinf_strv *ret) {
	const char *color = t->color;
	t->color = NULL;
	for (size_t i = 0; i < t->n_columns; i++) {
		const char *c = cells[i] ? cells[i] : "<none>";
		size_t len = strlen(c);
		int rc;
		if (color && i == t->color_column) {
			struct kinf_buf b = {0};
			kinf_buf_puts(&b, color);
			kinf_termsafe_put(&b, c, len);
			kinf_buf_puts(&b, "\033[0m");
			rc = kinf_strv_push_take(ret, kinf_buf_take(&b));
		} else if (kinf_termsafe_needed(c, len)) {
			struct kinf_buf b = {0};
			kinf_termsafe_put(&b, c, len);
			rc = kinf_strv_push_take(ret, kinf_buf_take(&b));
		} else {
			rc = kinf_strv_push(ret, c, len);
		}
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

void kinf_table_color_next(struct kinf_table *t, size_t column, const char *sgr) {
	t->color_column = column;
	t->color = sgr;
}

int kinf_table_add_row(struct kinf_table *t, const char *const *cells) {
	size_t first = t->cells.n;
	int rc = escape_row(t, cells, &t->cells);
	if (rc < 0) {
		return rc;
	}
	widen(t, (const char *const *)t->cells.v + first);
	return 0;
}

void kinf_table_put_row(struct kinf_table *t, const char *const *cells) {
	if (t->err == 0) {
		int rc = kinf_table_add_row(t, cells);
		if (rc < 0) {
			t->err = rc;
		}
	}
}

static int print_cells(const struct kinf_table *t, const char *const *cells, FILE *out) {
	for (size_t i = 0; i < t->n_columns; i++) {
		const char *c = cells[i] ? cells[i] : "<none>";
		fputs(c, out);
		if (i + 1 < t->n_columns) {
			for (size_t w = display_width(c); w < t->widths[i]; w++) {
				fputc(' ', out);
			}
		}
	}
	fputc('\n', out);
	return ferror(out) ? -KINF_EIO : 0;
}

int kinf_table_print(struct kinf_table *t, FILE *out) {
	if (t->err < 0) {
		return t->err;
	}
	size_t rows = t->n_columns ? t->cells.n / t->n_columns : 0;
	for (size_t r = 0; r < rows; r++) {
		int rc = print_cells(t, (const char *const *)t->cells.v + r * t->n_columns, out);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

int kinf_table_flush(struct kinf_table *t, FILE *out) {
	int rc = kinf_table_print(t, out);
	kinf_strv_reset(&t->cells);
	return rc;
}

void kinf_table_widen(struct kinf_table *t, const char *const *cells) {
	struct kinf_strv esc = {0};
	const char *color = t->color;
	t->color = NULL;
	if (escape_row(t, cells, &esc) == 0) {
		widen(t, (const char *const *)esc.v);
	}
	t->color = color;
	kinf_strv_release(&esc);
}

int kinf_table_print_row(struct kinf_table *t, const char *const *cells, FILE *out) {
	if (t->err < 0) {
		return t->err;
	}
	struct kinf_strv esc = {0};
	int rc = escape_row(t, cells, &esc);
	if (rc == 0) {
		widen(t, (const char *const *)esc.v);
		rc = print_cells(t, (const char *const *)esc.v, out);
	}
	kinf_strv_release(&esc);
	return rc;
}

static char *upper(const char *s) {
	char *u = strdup(s);
	for (char *p = u; p && *p; p++) {
		if (*p >= 'a' && *p <= 'z') {
			*p = (char)(*p - 'a' + 'A');
		}
	}
	return u;
}

/*
 * A cell as kubectl's printTable prints it: a string up to its first line
 * break, then "..."; null as nothing; anything else fmt's %v of the
 * decoded JSON value.
 */
static char *cell_text(json_t *v) {
	char num[64];
	switch (json_typeof(v)) {
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = strcspn(s, "\f\n\r");
		char *t = malloc(n + 4);
		if (t) {
			memcpy(t, s, n);
			strcpy(t + n, s[n] ? "..." : "");
		}
		return t;
	}
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return strdup(num);
	case JSON_REAL:
		return strdup(kinf_gofloat_format(json_real_value(v), num));
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	case JSON_NULL:
		return strdup("");
	default:
		return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

/*
 * A row's "cells" as a jansson array (numbers as jsonnum.h has them), or
 * NULL (reterr says why when the row does not load). The pager keeps rows
 * as just their cells, and their objects when asked to: then *ret_obj is
 * it (a new reference, NULL when the row has none).
 */
static json_t *row_cells(const char *row, size_t len, struct kinf_object **ret_obj,
		struct kinf_error *reterr) {
	json_t *whole = kinf_jsonnum_load(row, len, 0, reterr);
	json_t *cells = json_incref(json_object_get(whole, "cells"));
	json_t *obj = ret_obj ? json_object_get(whole, "object") : NULL;
	char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	if (ret_obj) {
		*ret_obj = NULL;
	}
	int rc = obj && !text ? -KINF_ENOMEM : 0;
	if (text) {
		struct kinf_object_limits limits = {0};
		rc = kinf_object_parse(text, strlen(text), &limits, ret_obj, NULL);
	}
	free(text);
	json_decref(whole);
	if (rc < 0) {
		/* Without its object the label columns would be empty: never so. */
		json_decref(cells);
		kinf_error_fill(reterr, -rc, "%s", kinf_strerror(rc));
		return NULL;
	}
	return cells;
}

struct kinf_server_table {
	struct kinf_table_server_opts opts;
	json_t *cols;
	size_t *shown;		/* the columns printed, by index */
	size_t n_shown;
	struct kinf_strv label_headers;
	size_t width;
};

void kinf_server_table_free(struct kinf_server_table *st) {
	if (st) {
		json_decref(st->cols);
		free(st->shown);
		kinf_strv_release(&st->label_headers);
		free(st);
	}
}

int kinf_server_table_new(const char *columns_json, const struct kinf_table_server_opts *opts,
		struct kinf_server_table **ret, struct kinf_error *reterr) {
	struct kinf_error cols_err = {0};
	struct kinf_server_table *st = calloc(1, sizeof(*st));
	int rc = 0;

	if (!st) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	st->opts = *opts;
	st->cols = kinf_jsonnum_load(columns_json ? columns_json : "[]",
			columns_json ? strlen(columns_json) : 2, 0, &cols_err);
	if (!json_is_array(st->cols)) {
		rc = kinf_error_set(reterr, KINF_EJSON, "table columns: %s",
				st->cols ? "not an array" : cols_err.message);
		goto out;
	}
	st->shown = calloc(json_array_size(st->cols) + 1, sizeof(*st->shown));
	if (!st->shown) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < json_array_size(st->cols); i++) {
		json_t *c = json_array_get(st->cols, i);
		if (opts->wide || json_integer_value(json_object_get(c, "priority")) == 0) {
			st->shown[st->n_shown++] = i;
		}
	}
	if (opts->labels && kinf_kindcols_append_labels(opts->labels, NULL,
			&st->label_headers) < 0) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	st->width = st->n_shown + (opts->with_namespace ? 1 : 0) + (opts->contexts ? 1 : 0) +
		st->label_headers.n;
out:
	if (rc < 0) {
		kinf_server_table_free(st);
		st = NULL;
	}
	*ret = st;
	return rc;
}

size_t kinf_server_table_width(const struct kinf_server_table *st) {
	return st->width;
}

int kinf_server_table_header(const struct kinf_server_table *st, struct kinf_strv *ret) {
	if (st->opts.contexts) {
		kinf_strv_put_str(ret, "CONTEXT");
	}
	if (st->opts.with_namespace) {
		kinf_strv_put_str(ret, "NAMESPACE");
	}
	for (size_t i = 0; i < st->n_shown; i++) {
		const char *name = json_string_value(json_object_get(
				json_array_get(st->cols, st->shown[i]), "name"));
		kinf_strv_put_take(ret, upper(name ? name : ""));
	}
	for (size_t i = 0; i < st->label_headers.n; i++) {
		kinf_strv_put_str(ret, st->label_headers.v[i]);
	}
	return kinf_strv_error(ret) ? -KINF_ENOMEM : 0;
}

int kinf_server_table_row(const struct kinf_server_table *st, const char *row, size_t len,
		const char *key, const char *context, struct kinf_strv *ret,
		struct kinf_error *reterr) {
	const char *name_prefix = st->opts.name_prefix;
	struct kinf_object *obj = NULL;
	struct kinf_error row_err = {0};
	json_t *cells = row_cells(row, len, st->opts.labels ? &obj : NULL, &row_err);
	size_t first = ret->n;
	int rc = 0;

	if (!cells && row_err.code) {
		/* A number beyond float64: no cells to show, the object named. */
		kinf_error_prefix(&row_err, "object \"%s\"", key);
		return kinf_error_set(reterr, row_err.code, "%s", row_err.message);
	}

	if (st->opts.contexts) {
		kinf_strv_put_str(ret, context ? context : "");
	}
	if (st->opts.with_namespace) {
		/* The key is namespace/name (the pager read it from the row's object). */
		const char *slash = strchr(key, '/');
		kinf_strv_put(ret, key, slash ? (size_t)(slash - key) : 0);
	}
	for (size_t i = 0; i < st->n_shown; i++) {
		json_t *v = json_array_get(cells, st->shown[i]);
		char *text = v ? cell_text(v) : strdup("");
		const char *format = json_string_value(json_object_get(
				json_array_get(st->cols, st->shown[i]), "format"));
		if (text && name_prefix && format && strcmp(format, "name") == 0) {
			/* kubectl get pods,svc: kind/name in NAME. */
			size_t lp = strlen(name_prefix), lt = strlen(text);
			char *both = malloc(lp + lt + 1);
			if (both) {
				memcpy(both, name_prefix, lp);
				memcpy(both + lp, text, lt + 1);
			}
			free(text);
			text = both;
		}
		kinf_strv_put_take(ret, text);
	}
	json_decref(cells);
	if (st->opts.labels && obj) {
		rc = kinf_kindcols_append_labels(st->opts.labels, obj, ret);
	}
	while (st->opts.labels && !obj && ret->n - first < st->width) {
		kinf_strv_put_str(ret, "");	/* no object: blank, as kubectl's */
	}
	kinf_object_unref(obj);
	return rc < 0 || kinf_strv_error(ret) || ret->n - first != st->width ? -KINF_ENOMEM : 0;
}

int kinf_table_print_server(FILE *out, const char *columns_json,
		const struct kinf_list_row *rows, size_t n_rows,
		const struct kinf_table_server_opts *opts, struct kinf_error *reterr) {
	struct kinf_server_table *st = NULL;
	struct kinf_table *t = NULL;
	struct kinf_strv cells = {0};
	int rc = kinf_server_table_new(columns_json, opts, &st, reterr);

	if (rc < 0) {
		return rc;
	}
	if (!(t = kinf_table_new(st->width))) {
		rc = -KINF_ENOMEM;
		goto out;
	}
	if (!opts->no_headers && ((rc = kinf_server_table_header(st, &cells)) < 0 ||
			(rc = kinf_table_add_row(t, (const char *const *)cells.v)) < 0)) {
		goto out;
	}
	for (size_t r = 0; r < n_rows; r++) {
		kinf_strv_reset(&cells);
		rc = kinf_server_table_row(st, rows[r].json, rows[r].len, rows[r].key,
				opts->contexts ? opts->contexts[r] : NULL, &cells, reterr);
		if (rc < 0 || (rc = kinf_table_add_row(t, (const char *const *)cells.v)) < 0) {
			goto out;
		}
	}
	rc = kinf_table_print(t, out);
out:
	kinf_strv_release(&cells);
	kinf_table_free(t);
	kinf_server_table_free(st);
	return rc;
}
