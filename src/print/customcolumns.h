#ifndef KINF_CUSTOMCOLUMNS_H
#define KINF_CUSTOMCOLUMNS_H

#include <stddef.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"

/* -o custom-columns=NAME:PATH,...: headers and JSONPath expressions. */
struct kinf_customcolumns {
	size_t n;
	char **names;
	char **paths;
};

/* Parse a spec (checking every path). -KINF_EINVAL with a message. */
KINF_MUST_CHECK int kinf_customcolumns_parse(const char *spec, struct kinf_customcolumns **ret,
		struct kinf_error *reterr);
void kinf_customcolumns_free(struct kinf_customcolumns *cc);
/*
 * One row of cells for a decoded object, as kubectl's custom-columns
 * printer shows them: Go's %v of each value, several joined with ",",
 * "<none>" when a path reaches nothing.
 */
KINF_MUST_CHECK int kinf_customcolumns_cells(const struct kinf_customcolumns *cc, json_t *obj,
		struct kinf_strv *ret);

#endif
