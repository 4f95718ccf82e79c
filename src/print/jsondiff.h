#ifndef KINF_JSONDIFF_H
#define KINF_JSONDIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

/*
 * The fields that differ between two JSON documents as "path: old → new"
 * (one per line, appended to out, each starting with indent; keys and
 * values escaped for the terminal), or with as_json a JSON array of
 * {"path","old","new"}. metadata.managedFields and
 * metadata.resourceVersion are skipped unless all. Numbers are equal when
 * their exact values are (kinf_jsonnum_cmp) and print as written; strings
 * compare by their text. -KINF_EJSON when either document does not parse.
 */
KINF_MUST_CHECK int kinf_jsondiff_append(const char *old_json, size_t old_len, const char *new_json,
		size_t new_len, bool all, bool as_json, const char *indent,
		struct kinf_buf *out);

#endif
