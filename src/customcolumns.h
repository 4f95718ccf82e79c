#ifndef KINF_CUSTOMCOLUMNS_H
#define KINF_CUSTOMCOLUMNS_H

#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"

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

#endif
