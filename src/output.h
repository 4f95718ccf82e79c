#ifndef KINF_OUTPUT_H
#define KINF_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"

struct kinf_object;
struct kinf_table_row;

/*
 * Printers. Every function writes only to the FILE * it is handed and
 * returns 0 or a negative KINF_E* (-KINF_EIO when the stream failed).
 */

enum kinf_output_format {
	KINF_OUTPUT_TABLE,
	KINF_OUTPUT_WIDE,
	KINF_OUTPUT_JSON,
	KINF_OUTPUT_YAML,
	KINF_OUTPUT_NAME,
	KINF_OUTPUT_JSONPATH,		/* -o jsonpath=TEMPLATE */
	KINF_OUTPUT_CUSTOM_COLUMNS,	/* -o custom-columns=NAME:PATH,... */
};

/*
 * "table" (or ""), "wide", "json", "yaml", "name", "jsonpath=TEMPLATE",
 * "custom-columns=SPEC". *ret_arg points into s after '=' (or NULL).
 * -KINF_EINVAL otherwise.
 */
int kinf_output_parse_format(const char *s, enum kinf_output_format *ret,
		const char **ret_arg);

/* -o custom-columns=NAME:PATH,...: headers and JSONPath expressions. */
struct kinf_custom_columns {
	size_t n;
	char **names;
	char **paths;
};

/* Parse a spec (checking every path). -KINF_EINVAL with a message. */
int kinf_custom_columns_parse(const char *spec, struct kinf_custom_columns **ret,
		struct kinf_error *reterr);
void kinf_custom_columns_free(struct kinf_custom_columns *cc);
/*
 * One row of cells for a decoded object, as kubectl's custom-columns
 * printer shows them: Go's %v of each value, several joined with ",",
 * "<none>" when a path reaches nothing.
 */
int kinf_custom_columns_cells(const struct kinf_custom_columns *cc, json_t *obj,
		struct kinf_strv *ret);

/* Write JSON text as one YAML document (keys sorted, like kubectl). */
int kinf_output_yaml(FILE *out, const char *json, size_t len,
		struct kinf_error *reterr);

/*
 * A text table laid out like kubectl's (Go tabwriter: minwidth 6, padding
 * 3, spaces; the last column unpadded).
 */
struct kinf_table;

struct kinf_table *kinf_table_new(size_t n_columns);
void kinf_table_free(struct kinf_table *t);
/*
 * Add a row of n_columns cells (copied); NULL cells print as "<none>".
 * Every cell is escaped for the terminal (termsafe.h) by every function
 * here: callers hand cells as the server sent them.
 */
int kinf_table_add_row(struct kinf_table *t, const char *const *cells);
/*
 * Print one cell of the next row added or printed in color: sgr (an SGR
 * escape of kinf's own, e.g. "\033[32m", borrowed) before the escaped
 * cell, a reset after it.
 */
void kinf_table_color_next(struct kinf_table *t, size_t column, const char *sgr);
/* Format all rows added so far. */
int kinf_table_print(struct kinf_table *t, FILE *out);
/* Print the rows added so far and forget them; widths are kept. */
int kinf_table_flush(struct kinf_table *t, FILE *out);
/* Make columns at least as wide as these cells need, printing nothing. */
void kinf_table_widen(struct kinf_table *t, const char *const *cells);
/* Format one row with widths computed so far plus this row (streaming). */
int kinf_table_print_row(struct kinf_table *t, const char *const *cells, FILE *out);

/*
 * Render a server-side Table (columnDefinitions JSON and rows) as kubectl
 * does: upper-cased headers, priority>0 columns only when wide, a leading
 * NAMESPACE column when with_namespace.
 */
int kinf_output_server_table(FILE *out, const char *columns_json,
		const struct kinf_table_row *rows, size_t n_rows, bool wide,
		bool with_namespace, bool no_headers, struct kinf_error *reterr);
/*
 * The same, the NAME ("format": "name") cells after name_prefix ("pod/")
 * unless NULL, and with contexts (one per row) a CONTEXT column first.
 */
int kinf_output_server_table_kind(FILE *out, const char *columns_json,
		const struct kinf_table_row *rows, size_t n_rows, bool wide,
		bool with_namespace, bool no_headers, const char *name_prefix,
		const char *const *contexts, struct kinf_error *reterr);

/*
 * A duration in kubectl's human form (duration.HumanDuration): "5s",
 * "3m", "2m30s", "4h", "3d5h", "400d", "3y45d". seconds < 0 is "<invalid>".
 */
void kinf_human_duration(long long seconds, char *buf, size_t size);

#endif

/*
 * The usual columns of an object's kind, computed locally (for watch lines,
 * where the server's Table is not at hand), as kubectl's printers compute
 * them: Pod NAME READY STATUS RESTARTS AGE; Deployment NAME READY
 * UP-TO-DATE AVAILABLE AGE; Node NAME STATUS ROLES AGE VERSION; Namespace
 * NAME STATUS AGE; ConfigMap NAME DATA AGE; others NAME AGE. With obj NULL,
 * the header cells for kind.
 */
int kinf_output_object_columns(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret);

/*
 * The columns -o wide adds to those of kinf_output_object_columns(), as
 * kubectl's printers add them: Pod IP NODE NOMINATED NODE READINESS GATES;
 * Deployment CONTAINERS IMAGES SELECTOR; Node INTERNAL-IP EXTERNAL-IP
 * OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME; none for other kinds. With obj
 * NULL, the header cells for kind.
 */
int kinf_output_object_wide_columns(const char *kind, const struct kinf_object *obj,
		struct kinf_strv *ret);

/*
 * The fields that differ between two JSON documents as "path: old → new"
 * (one per line, appended to out, each starting with indent), or with
 * as_json a JSON array of {"path","old","new"}. metadata.managedFields and
 * metadata.resourceVersion are skipped unless all.
 */
int kinf_output_diff(const char *old_json, size_t old_len, const char *new_json,
		size_t new_len, bool all, bool as_json, const char *indent,
		struct kinf_buf *out);
