#ifndef KINF_JSONPATH_H
#define KINF_JSONPATH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "buf.h"
#include "err.h"

/*
 * kubectl's JSONPath subset (k8s.io/client-go/util/jsonpath): text and
 * {expressions}; fields (.a.b, ['a'], a backslash escaping the next
 * character: .app\.kubernetes\.io/name; ['a.b'] is .a.b as in client-go),
 * [n], [-n], [a:b], [*], .., filters [?(@.x=="y")] with == != < > <= >= and
 * existence, range/end, string literals {"\n"} with Go's escapes, and
 * number and true/false literals ({123}); another identifier
 * ({metadata.name}) is an error, as in kubectl. Missing keys print nothing
 * (allowMissingKeys, kubectl's default). Values print as kubectl prints
 * them: strings raw, numbers as Go's fmt (1.5, 1e+06), booleans as JSON,
 * maps and lists as compact JSON, several results of one expression
 * separated by a space.
 */
struct kinf_jsonpath;

/* Parse a template; -KINF_EINVAL with a message naming the problem. */
KINF_MUST_CHECK int kinf_jsonpath_parse(const char *template, struct kinf_jsonpath **ret,
		struct kinf_error *reterr);
void kinf_jsonpath_free(struct kinf_jsonpath *jp);
/* Execute against data, appending the text to out. */
KINF_MUST_CHECK int kinf_jsonpath_execute(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr);
/*
 * Execute as kubectl's -o jsonpath-as-json: each text or expression of the
 * template (each time a range runs it) as a JSON array of its results,
 * indented as json.MarshalIndent(v, "", "    ") (gojson.h), and a newline.
 */
KINF_MUST_CHECK int kinf_jsonpath_execute_json(const struct kinf_jsonpath *jp, json_t *data,
		struct kinf_buf *out, struct kinf_error *reterr);

/*
 * The values a template of one expression ("{.spec.x}") reaches in data,
 * as a new JSON array (caller decrefs): client-go's FindResults, as the
 * apiserver's CRD printer columns take it. NULL for a template of text
 * or several expressions (or when out of memory).
 */
json_t *kinf_jsonpath_find(const struct kinf_jsonpath *jp, json_t *data);

/*
 * A List kubectl would run a template over ({"apiVersion": "v1", "items":
 * [...], "kind": "List", "metadata": {"resourceVersion": ""}}) whose items
 * are handed over one at a time, as the template reaches each: a List of
 * any length is run over in the memory of one item's tree (or of one per
 * range over its items nested in another), never a tree of it all.
 */
struct kinf_jsonpath_list {
	size_t n;
	/*
	 * Item i's tree, a new reference; NULL when it has none (the
	 * callback says why, to whom it likes): that item is then not in
	 * the List, as if it had never been. Called each time the template
	 * reaches the item, in any order, and never again once it had none.
	 */
	json_t *(*item)(void *userdata, size_t i);
	void *userdata;
};

/*
 * Execute over list as kinf_jsonpath_execute() (as_json:
 * kinf_jsonpath_execute_json()) does over the whole List in one tree, with
 * the same text, written to out as it is made. Each item is asked for at
 * least once (after the run, those the template did not reach), so that
 * the callback sees which have no tree whatever the template. 0,
 * -KINF_ENOMEM (out may have part of the text), or -KINF_EIO when writing
 * to out failed (errno says why).
 */
int kinf_jsonpath_execute_list(const struct kinf_jsonpath *jp,
		const struct kinf_jsonpath_list *list, bool as_json, FILE *out,
		struct kinf_error *reterr);

/*
 * Evaluate one expression as kubectl's custom-columns and wait --for take
 * it (RelaxedJSONPathExpression: "status.phase", ".status.phase",
 * "{status.phase}" or "{.status.phase}", no brace inside) and return every value it reaches as a new JSON array
 * (caller decrefs). NULL on a parse error (reterr says why).
 */
KINF_MUST_CHECK json_t *kinf_jsonpath_values(const char *expression, json_t *data,
		struct kinf_error *reterr);

/* Append a value as kubectl's JSONPath printer shows it. */
KINF_MUST_CHECK int kinf_jsonpath_print_value(json_t *v, struct kinf_buf *out);
/* Append every value of an array of results, separated by a space. */
KINF_MUST_CHECK int kinf_jsonpath_print_values(json_t *values, struct kinf_buf *out);

#endif
