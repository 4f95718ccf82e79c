#ifndef KINF_TOYAML_H
#define KINF_TOYAML_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/*
 * Write JSON text as one YAML document, as kubectl (go-yaml v2) writes it:
 * keys sorted (of a key written twice, the last), strings quoted where a
 * YAML 1.1 or 1.2 reader would take them for something else. Numbers are
 * the JSON's literals, never rounded through a float64 as kubectl's are
 * (kinf_jsonnum_append_yaml: 12345678901234567890 stays so). Writes only
 * to out, nothing for bad JSON (-KINF_EJSON); -KINF_EIO when out failed,
 * with a message in reterr.
 */
KINF_MUST_CHECK int kinf_toyaml_write(FILE *out, const char *json, size_t len,
		struct kinf_error *reterr);

#endif
