#ifndef KINF_TABLE_H
#define KINF_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

/*
 * Text tables laid out like kubectl's (Go tabwriter: minwidth 6, padding
 * 3, spaces; the last column unpadded), and the server-side Tables
 * (meta.k8s.io Table) a list brings printed with them. Every function
 * writes only to the FILE * it is handed and returns 0 or a negative
 * KINF_E* (-KINF_EIO when the stream failed).
 */

struct kinf_list_row;	/* list.h: a server-side Table's row */
struct kinf_label_columns;	/* kindcols.h: -L and --show-labels */
struct kinf_strv;		/* buf.h */

struct kinf_table;

struct kinf_table *kinf_table_new(size_t n_columns);
void kinf_table_free(struct kinf_table *t);
/*
 * Add a row of n_columns cells (copied); NULL cells print as "<none>".
 * Every cell is escaped for the terminal (termsafe.h) by every function
 * here: callers hand cells as the server sent them.
 */
KINF_MUST_CHECK int kinf_table_add_row(struct kinf_table *t, const char *const *cells);
/*
 * kinf_table_add_row for printers that add row after row: a row that
 * cannot be kept sticks as the table's failure (later rows are dropped),
 * which the next kinf_table_print(), _flush() or _print_row() returns, so
 * a table is never printed with a row missing.
 */
void kinf_table_put_row(struct kinf_table *t, const char *const *cells);
/*
 * Print one cell of the next row added or printed in color: sgr (an SGR
 * escape of kinf's own, e.g. "\033[32m", borrowed) before the escaped
 * cell, a reset after it.
 */
void kinf_table_color_next(struct kinf_table *t, size_t column, const char *sgr);
/* Format all rows added so far (nothing when a put row failed: its code). */
KINF_MUST_CHECK int kinf_table_print(struct kinf_table *t, FILE *out);
/* Print the rows added so far and forget them; widths are kept. */
KINF_MUST_CHECK int kinf_table_flush(struct kinf_table *t, FILE *out);
/* Make columns at least as wide as these cells need, printing nothing. */
void kinf_table_widen(struct kinf_table *t, const char *const *cells);
/* Format one row with widths computed so far plus this row (streaming). */
KINF_MUST_CHECK int kinf_table_print_row(struct kinf_table *t, const char *const *cells, FILE *out);

/* How kinf_table_print_server() lays a Table out. */
struct kinf_table_server_opts {
	bool wide;		/* priority>0 columns too */
	bool with_namespace;	/* a NAMESPACE column (from each row's key) */
	bool no_headers;
	const char *name_prefix;	/* before the NAME cells ("pod/"), or NULL */
	const char *const *contexts;	/* one per row: a CONTEXT column first */
	/* -L and --show-labels columns last, from each row's object, or NULL */
	const struct kinf_label_columns *labels;
};

/*
 * Render a server-side Table (columnDefinitions JSON and rows) as kubectl
 * does: upper-cased headers, priority>0 columns only when wide, CONTEXT
 * and NAMESPACE columns first when asked for, the NAME ("format": "name")
 * cells after name_prefix, label columns last (the rows must have kept
 * their objects: list.h's row_objects). -KINF_EJSON when columns_json does
 * not parse.
 */
KINF_MUST_CHECK int kinf_table_print_server(FILE *out, const char *columns_json,
		const struct kinf_list_row *rows, size_t n_rows,
		const struct kinf_table_server_opts *opts, struct kinf_error *reterr);

/*
 * The same layout a row at a time, for tables printed as rows come (kinf
 * list -w): the columns of columns_json as opts lays them out.
 */
struct kinf_server_table;
KINF_MUST_CHECK int kinf_server_table_new(const char *columns_json, const struct kinf_table_server_opts *opts,
		struct kinf_server_table **ret, struct kinf_error *reterr);
void kinf_server_table_free(struct kinf_server_table *st);
/* How many cells a row has. */
size_t kinf_server_table_width(const struct kinf_server_table *st);
/* Append the header cells (opts->no_headers is the caller's). 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_server_table_header(const struct kinf_server_table *st, struct kinf_strv *ret);
/*
 * Append the cells of one row (its JSON: {"cells":[...],"object":{...}}),
 * key (namespace/name) for NAMESPACE and context for CONTEXT when opts ask
 * for them. 0, -KINF_ENOMEM, or -KINF_ETOOBIG with reterr naming the
 * object and the field of a number beyond float64's range (nothing
 * appended).
 */
KINF_MUST_CHECK int kinf_server_table_row(const struct kinf_server_table *st, const char *row, size_t len,
		const char *key, const char *context, struct kinf_strv *ret,
		struct kinf_error *reterr);

#endif
