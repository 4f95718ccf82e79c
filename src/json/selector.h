#ifndef KINF_SELECTOR_H
#define KINF_SELECTOR_H

#include <stdbool.h>

#include "err.h"

struct kinf_object;

/*
 * Label and field selectors with apimachinery's syntax (labels.Parse, its
 * lexer and parser ported: "x in ()" is x == "", "in" may be a key;
 * fields.ParseSelector): used to reject a malformed -l or --field-selector
 * before any request, and to filter recorded streams (--from) the way the
 * server would filter a list or watch.
 *   label: key, !key, key=v, key==v, key!=v, key in (a,b), key notin (a,b),
 *          key>N, key<N, comma-separated (AND)
 *   field: path=v, path==v, path!=v, comma-separated (AND); a path is
 *          metadata.name, metadata.namespace or any field path
 */
struct kinf_selector;

/*
 * Parse; NULL or "" selects everything. -KINF_EINVAL with a message: a
 * label selector's as apimachinery's labels.Parse words it ("unable to
 * parse requirement: found '=', expected: identifier": kinf serve's 400
 * carries it as the apiserver's does; it does not name the selector), a
 * field selector's naming the selector and the position.
 */
KINF_MUST_CHECK int kinf_label_selector_parse(const char *text, struct kinf_selector **ret,
		struct kinf_error *reterr);
KINF_MUST_CHECK int kinf_field_selector_parse(const char *text, struct kinf_selector **ret,
		struct kinf_error *reterr);
void kinf_selector_free(struct kinf_selector *sel);
/*
 * 1 when obj satisfies every requirement, 0 when not, -KINF_ENOMEM when
 * a field's values could not be read (never a guess). NULL selects
 * everything.
 */
KINF_MUST_CHECK int kinf_selector_match(const struct kinf_selector *sel,
		const struct kinf_object *obj);

#endif
