#ifndef KINF_GOJSON_H
#define KINF_GOJSON_H

#include <jansson.h>

#include "buf.h"
#include "err.h"

/*
 * JSON text as Go's encoding/json writes it, for output that must read as
 * kubectl's byte for byte (-o jsonpath-as-json): object keys sorted,
 * "<", ">" and "&" escaped as \u003c, \u003e and \u0026 (and U+2028,
 * U+2029), other control characters as \n, \r, \t or \u00XX, integers as
 * written and reals as a float64 (gofloat.h's json form).
 */

/* Append v as json.Marshal(v) writes it: compact. 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_gojson_append(struct kinf_buf *out, json_t *v);

/*
 * Append v as json.MarshalIndent(v, "", indent) writes it: each element on
 * its own line, indent repeated per level, "[]" and "{}" when empty, ": "
 * after a key. 0 or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_gojson_append_indent(struct kinf_buf *out, json_t *v, const char *indent);

/*
 * Append v as it is written at depth levels inside a larger value
 * (indent NULL: compact): its lines indented depth + 1 times, its closing
 * bracket depth times. For a writer that makes the enclosing value a piece
 * at a time. 0 or -KINF_ENOMEM.
 */
int kinf_gojson_append_at(struct kinf_buf *out, json_t *v, const char *indent, int depth);

#endif
