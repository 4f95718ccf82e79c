#ifndef KINF_TOYAML_H
#define KINF_TOYAML_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/*
 * Write JSON text as one YAML document, as kubectl (go-yaml v2) writes it:
 * keys sorted, strings quoted where a YAML 1.1 or 1.2 reader would take
 * them for something else. Writes only to out; -KINF_EJSON for bad JSON,
 * -KINF_EIO when out failed, with a message in reterr.
 */
int kinf_toyaml_write(FILE *out, const char *json, size_t len,
		struct kinf_error *reterr);

#endif
