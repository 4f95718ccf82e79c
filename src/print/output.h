#ifndef KINF_OUTPUT_H
#define KINF_OUTPUT_H

#include "err.h"

/*
 * The -o formats kinf prints in. Each has a printer module of its own:
 * table.h (table, wide), toyaml.h (yaml), customcolumns.h
 * (custom-columns), jsonpath.h (jsonpath), kindcols.h (kinf's own
 * columns for a kind), jsondiff.h (watch --diff); json and name lines are
 * the CLI's, from the object's bytes.
 */

enum kinf_output_format {
	KINF_OUTPUT_TABLE,
	KINF_OUTPUT_WIDE,
	KINF_OUTPUT_JSON,
	KINF_OUTPUT_YAML,
	KINF_OUTPUT_NAME,
	KINF_OUTPUT_JSONPATH,		/* -o jsonpath=TEMPLATE */
	KINF_OUTPUT_CUSTOM_COLUMNS,	/* -o custom-columns=NAME:PATH,... */
	KINF_OUTPUT_JSONPATH_JSON,	/* -o jsonpath-as-json=TEMPLATE */
};

/*
 * "table" (or ""), "wide", "json", "yaml", "name", "jsonpath=TEMPLATE",
 * "jsonpath-as-json=TEMPLATE", "custom-columns=SPEC". *ret_arg points into
 * s after '=' (or NULL). kubectl's Go template formats (go-template=,
 * go-template-file=, template=, templatefile=) are -KINF_EUNSUPPORTED;
 * anything else -KINF_EINVAL.
 */
KINF_MUST_CHECK int kinf_output_parse_format(const char *s, enum kinf_output_format *ret,
		const char **ret_arg);

#endif
