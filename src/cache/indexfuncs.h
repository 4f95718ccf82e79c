#ifndef KINF_INDEXFUNCS_H
#define KINF_INDEXFUNCS_H

#include "buf.h"
#include "err.h"
#include "indexer.h"

struct kinf_object;

/*
 * The index functions kinf offers and the --by / --index syntax that names
 * them. Adding one is a function and a line in the table in indexfuncs.c.
 *   namespace            metadata.namespace (client-go MetaNamespaceIndexFunc)
 *   node                 spec.nodeName
 *   owner                KIND/NAME of every ownerReference
 *   phase                status.phase
 *   label:KEY or KEY     the value of label KEY
 *   field:PATH           every scalar PATH reaches (spec.containers[*].image)
 *   a --index NAME=PATH  named field path
 */
struct kinf_index_spec {
	char *index_name;	/* the name in the indexer: "node", "label:app" */
	kinf_index_func fn;
	char *arg;		/* label key or field path, or NULL */
};

/*
 * Parse one --index NAME=PATH definition. -KINF_EINVAL with a message for
 * a malformed one or a name that shadows a built-in.
 */
KINF_MUST_CHECK int kinf_index_define(const char *definition, struct kinf_strv *ret_names,
		struct kinf_strv *ret_paths, struct kinf_error *reterr);

/*
 * Resolve an index name as a user writes it (node, owner, label:app, app,
 * field:spec.x, or a name from custom) to a spec. custom_names and
 * custom_paths are parallel (from kinf_index_define). -KINF_EINVAL for a
 * malformed name or path.
 */
KINF_MUST_CHECK int kinf_index_spec_resolve(const char *name, const struct kinf_strv *custom_names,
		const struct kinf_strv *custom_paths, struct kinf_index_spec *ret,
		struct kinf_error *reterr);
void kinf_index_spec_release(struct kinf_index_spec *spec);

/* Add the spec's index to idx unless it is there already. */
KINF_MUST_CHECK int kinf_index_spec_install(const struct kinf_index_spec *spec,
		struct kinf_indexer *idx, struct kinf_error *reterr);

/* Evaluate the spec's function on obj (for membership checks). */
KINF_MUST_CHECK int kinf_index_spec_values(const struct kinf_index_spec *spec,
		const struct kinf_object *obj, struct kinf_strv *ret);

/*
 * Whether obj has value among spec's values (value NULL: any value at
 * all), as `kinf index --by INDEX[=VALUE]` selects: 1, 0, or
 * -KINF_ENOMEM when its values could not be made (never a guess).
 */
KINF_MUST_CHECK int kinf_index_spec_match(const struct kinf_index_spec *spec, const char *value,
		const struct kinf_object *obj);

/* The built-in index names, NULL-terminated (for completion and help). */
extern const char *const kinf_index_builtin_names[];

#endif
