#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common.h"
#include "customcolumns.h"
#include "jsonpath.h"
#include "object.h"
#include "sortby.h"
#include "table.h"

/*
 * -o jsonpath, jsonpath-as-json and custom-columns over many objects, with
 * one object's tree at a time: custom columns keep a row per object (its
 * cells, made as the object comes), templates run over a List whose items
 * are made trees as the template reaches them (jsonpath.h). A tree of a
 * whole List took about eleven times its JSON.
 */

/* A row of custom columns: its object's key and cells, or why it has none. */
struct row {
	char *key;		/* namespace/name: a list's order */
	struct kinf_strv cells;
	json_t *sort_key;	/* --sort-by's, or NULL */
	struct kinf_error *err;	/* the object had no tree: no cells */
};

struct cli_columns {
	const struct cli *cli;
	struct kinf_customcolumns *cc;
	bool sort;		/* by cli->sort_by, when printed */
	struct row *rows;
	size_t n, cap;
	size_t list_start;	/* the first row of the list now coming */
};

int cli_columns_new(const struct cli *cli, bool sort, struct cli_columns **ret) {
	struct kinf_error err = {0};
	struct cli_columns *c = calloc(1, sizeof(*c));
	if (!c) {
		return cli_error(cli, -KINF_ENOMEM, NULL, NULL);
	}
	c->cli = cli;
	c->sort = sort && cli->sort_by;
	int rc = kinf_customcolumns_parse(cli->output_arg, &c->cc, &err);
	if (rc < 0) {
		free(c);
		return cli_error(cli, rc, &err, NULL);
	}
	*ret = c;
	return EXIT_OK;
}

static void rows_drop(struct cli_columns *c, size_t from) {
	for (size_t i = from; i < c->n; i++) {
		free(c->rows[i].key);
		kinf_strv_release(&c->rows[i].cells);
		json_decref(c->rows[i].sort_key);
		free(c->rows[i].err);
	}
	c->n = from;
}

void cli_columns_free(struct cli_columns *c) {
	if (c) {
		rows_drop(c, 0);
		free(c->rows);
		kinf_customcolumns_free(c->cc);
		free(c);
	}
}

int cli_columns_add(struct cli_columns *c, const struct kinf_object *obj) {
	struct row *rows = kinf_grow(c->rows, &c->cap, c->n, sizeof(*rows));
	struct kinf_error err = {0};
	if (!rows) {
		return -KINF_ENOMEM;
	}
	c->rows = rows;
	struct row *r = memset(&rows[c->n], 0, sizeof(*r));
	json_t *tree = kinf_object_tree(obj, &err);
	int rc = (r->key = strdup(kinf_object_key(obj))) ? 0 : -KINF_ENOMEM;
	if (!tree && err.code == KINF_ENOMEM) {
		rc = -KINF_ENOMEM;	/* never a table with the row left out for want of memory */
	} else if (rc == 0 && !tree) {
		/* Said when printed, in the row's place (a number beyond float64). */
		rc = (r->err = malloc(sizeof(*r->err))) ? 0 : -KINF_ENOMEM;
		if (rc == 0) {
			*r->err = err;
		}
	} else if (rc == 0) {
		rc = kinf_customcolumns_cells(c->cc, tree, &r->cells);
		r->sort_key = c->sort ? kinf_sortby_key(c->cli->sort_by, tree) : NULL;
	}
	json_decref(tree);
	c->n++;
	if (rc < 0) {
		rows_drop(c, c->n - 1);
	}
	return rc;
}

void cli_columns_restart(struct cli_columns *c) {
	rows_drop(c, c->list_start);
}

static int cmp_row_key(const void *a, const void *b) {
	return strcmp(((const struct row *)a)->key, ((const struct row *)b)->key);
}

void cli_columns_sort_list(struct cli_columns *c) {
	/* Keys are unique in a list: qsort's instability does not show. */
	if (c->n - c->list_start > 1) {
		qsort(c->rows + c->list_start, c->n - c->list_start, sizeof(*c->rows), cmp_row_key);
	}
	c->list_start = c->n;
}

/* --sort-by over the rows: their order, or the error (printed) that stops it. */
static int sort_rows(struct cli_columns *c, size_t **ret_order) {
	struct kinf_sortby_item *items = calloc(c->n + 1, sizeof(*items));
	size_t *order = calloc(c->n + 1, sizeof(*order));
	int status = items && order ? EXIT_OK : cli_error(c->cli, -KINF_ENOMEM, NULL, NULL);
	for (size_t i = 0; status == EXIT_OK && i < c->n; i++) {
		if (c->rows[i].err) {
			/* No value to sort it by: said, not guessed (cli_sort_by_field). */
			status = cli_error(c->cli, -c->rows[i].err->code, c->rows[i].err, "--sort-by");
		}
		items[i] = (struct kinf_sortby_item){ .key = c->rows[i].sort_key, .index = i };
	}
	if (status == EXIT_OK && c->sort && c->n > 0) {
		status = cli_sort_items(c->cli, items, c->n);
	}
	for (size_t i = 0; status == EXIT_OK && i < c->n; i++) {
		order[i] = items[i].index;
	}
	free(items);
	if (status != EXIT_OK) {
		free(order);
		return status;
	}
	*ret_order = order;
	return EXIT_OK;
}

int cli_columns_print(struct cli_columns *c, FILE *out) {
	struct kinf_table *t = kinf_table_new(c->cc->n);
	size_t *order = NULL;
	int status = t ? EXIT_OK : cli_error(c->cli, -KINF_ENOMEM, NULL, NULL);
	int rc = 0;

	if (status == EXIT_OK && c->sort) {
		status = sort_rows(c, &order);
	}
	for (size_t i = 0; status == EXIT_OK && !c->sort && i < c->n; i++) {
		if (c->rows[i].err) {
			/* Named on stderr, never left out unseen; the others are printed. */
			cli_report(c->cli, -c->rows[i].err->code, c->rows[i].err, NULL);
		}
	}
	/* Widths from every row first, as kubectl's tabwriter has them. */
	const char *const *header = (const char *const *)c->cc->names;
	if (status == EXIT_OK && !c->cli->no_headers) {
		kinf_table_widen(t, header);
	}
	for (size_t i = 0; status == EXIT_OK && i < c->n; i++) {
		const struct row *r = &c->rows[order ? order[i] : i];
		if (!r->err) {
			kinf_table_widen(t, (const char *const *)r->cells.v);
		}
	}
	if (status == EXIT_OK && !c->cli->no_headers) {
		rc = kinf_table_print_row(t, header, out);
	}
	for (size_t i = 0; status == EXIT_OK && rc == 0 && i < c->n; i++) {
		const struct row *r = &c->rows[order ? order[i] : i];
		if (!r->err) {
			rc = kinf_table_print_row(t, (const char *const *)r->cells.v, out);
		}
	}
	if (rc < 0) {
		status = cli_print_failed(c->cli, rc, NULL);
	}
	for (size_t i = 0; status == EXIT_OK && i < c->n; i++) {
		if (c->rows[i].err) {
			status = EXIT_ERROR;	/* said above */
		}
	}
	kinf_table_free(t);
	free(order);
	return status;
}

static struct kinf_object *array_object(void *userdata, size_t i) {
	return kinf_object_ref(((struct kinf_object *const *)userdata)[i]);
}

struct cli_objects cli_objects_array(struct kinf_object *const *v, size_t n) {
	return (struct cli_objects){ n, array_object, (void *)v };
}

/* A List's item for the template: object i's tree, or NULL (its error printed). */
struct list_items {
	const struct cli *cli;
	const struct cli_objects *objs;
	int status;
};

static json_t *item_tree(void *userdata, size_t i) {
	struct list_items *li = userdata;
	struct kinf_error err = {0};
	struct kinf_object *obj = li->objs->get(li->objs->userdata, i);
	json_t *tree = obj ? kinf_object_tree(obj, &err) : NULL;
	if (!tree) {
		/* Named on stderr (a number beyond float64), never left out unseen. */
		li->status = cli_error(li->cli, obj ? -err.code : -KINF_ENOMEM, &err, NULL);
	}
	kinf_object_unref(obj);
	return tree;
}

static int print_columns(const struct cli *cli, const struct cli_objects *objs, FILE *out) {
	struct cli_columns *c = NULL;
	int status = cli_columns_new(cli, false, &c);
	for (size_t i = 0; status == EXIT_OK && i < objs->n; i++) {
		struct kinf_object *obj = objs->get(objs->userdata, i);
		int rc = obj ? cli_columns_add(c, obj) : -KINF_ENOMEM;
		if (rc < 0) {
			status = cli_error(cli, rc, NULL, NULL);
		}
		kinf_object_unref(obj);
	}
	if (status == EXIT_OK) {
		status = cli_columns_print(c, out);
	}
	cli_columns_free(c);
	return status;
}

int cli_print_templated(const struct cli *cli, const struct cli_objects *objs, bool single,
		FILE *out) {
	struct kinf_error err = {0};
	struct kinf_jsonpath *jp = NULL;
	struct list_items li = { .cli = cli, .objs = objs, .status = EXIT_OK };
	bool as_json = cli->format == KINF_OUTPUT_JSONPATH_JSON;
	int rc;

	if (cli->format == KINF_OUTPUT_CUSTOM_COLUMNS) {
		return print_columns(cli, objs, out);
	}
	if ((rc = kinf_jsonpath_parse(cli->output_arg, &jp, &err)) < 0) {
		return cli_error(cli, rc, &err, NULL);
	}
	if (single && objs->n == 1) {
		/* The one object asked for by name: the template runs over it. */
		struct kinf_buf b = {0};
		json_t *data = item_tree(&li, 0);
		rc = !data ? 0 : as_json ? kinf_jsonpath_execute_json(jp, data, &b, &err) :
			kinf_jsonpath_execute(jp, data, &b, &err);
		if (rc == 0 && b.len) {
			fwrite(b.data, 1, b.len, out);
		}
		json_decref(data);
		kinf_buf_release(&b);
	} else {
		struct kinf_jsonpath_list list = { objs->n, item_tree, &li };
		rc = kinf_jsonpath_execute_list(jp, &list, as_json, out, &err);
	}
	kinf_jsonpath_free(jp);
	if (rc < 0) {
		return rc == -KINF_EIO ? cli_print_failed(cli, rc, &err) : cli_error(cli, rc, &err, NULL);
	}
	return li.status;
}
