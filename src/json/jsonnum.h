#ifndef KINF_JSONNUM_H
#define KINF_JSONNUM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

/*
 * JSON numbers: kinf's one number model.
 *
 * A number is its literal, the text the server sent: "42",
 * "100000000000000000000", "1e-7", "-0". Output that reproduces data
 * writes the literal untouched (-o json, kinf serve, watch --diff, index
 * keys and selectors; -o yaml too, but for the ".0" and exponent sign YAML
 * 1.1 needs: kinf_jsonnum_append_yaml).
 *
 * Where a value is needed (JSONPath, custom-columns, table cells, --for,
 * --sort-by), it is the value Kubernetes' unstructured decoding gives it
 * (sigs.k8s.io/json with PreserveInts, so kube-apiserver's and kubectl's):
 * an int64 when the literal has no '.' and strconv.ParseInt takes it
 * ("-0" is the int 0, "1e3" is not an int), else the nearest float64
 * ("100000000000000000000" is 1e20). A literal beyond float64's range
 * (1e400) has no value: the API server refuses it, and so does every
 * value path here, naming the field. Values print as kubectl prints them:
 * fmt's %v (kinf_jsonnum_format_value: 42, 1e+20) and, inside maps and
 * lists, encoding/json's form (gofloat.h's kinf_gofloat_format_json:
 * 100000000000000000000, 1e-7, 1e+21, the literal kube-apiserver writes
 * for every float it stores).
 *
 * Jansson trees of objects are loaded with kinf_jsonnum_load(), never
 * json_loadb(): jansson refuses an integer past int64, this takes it as Go
 * does, as a float64.
 */

enum kinf_jsonnum_type {
	KINF_JSONNUM_INT,	/* .i */
	KINF_JSONNUM_FLOAT,	/* .f */
};

struct kinf_jsonnum {
	enum kinf_jsonnum_type type;
	long long i;
	double f;
};

/* Room for any formatted value, NUL included. */
#define KINF_JSONNUM_SIZE 40

/* Whether s[0..len) is exactly one JSON number literal (RFC 8259). */
bool kinf_jsonnum_valid(const char *s, size_t len);

/*
 * Go's value of the literal s[0..len) (above). 0, -KINF_EINVAL when s is
 * not a JSON number, -KINF_ETOOBIG when it is beyond float64's range.
 * *ret is written only on success.
 */
KINF_MUST_CHECK int kinf_jsonnum_parse(const char *s, size_t len, struct kinf_jsonnum *ret);

/*
 * Compare two JSON number literals by their exact decimal values, not
 * their float64s: -1, 0 or 1. "1.0", "1" and "1e0" are equal, and so are
 * "-0" and "0"; "12345678901234567890" sorts before "12345678901234567891"
 * although both are one float64; any exponent ("1e-999999999999999999999")
 * is compared exactly. This is kubectl's --sort-by order wherever kubectl
 * can tell two values apart (its int64s and float64s are exact images of
 * these), and a total order where it cannot (it stops on an int64 next to
 * a float64). Both must be valid literals (kinf_jsonnum_valid).
 */
int kinf_jsonnum_cmp(const char *a, size_t alen, const char *b, size_t blen);

/*
 * The same order for two jansson numbers (JSON_INTEGER or JSON_REAL, as
KINF_MUST_CHECK  * kinf_jsonnum_load() makes them): an int64 and a float64 are compared
 * exactly, never through a rounding conversion (9007199254740993 is above
 * 9007199254740992.0). -1, 0 or 1. Both must be numbers. Exact for the
 * values (what kubectl compares); two literals one float64 apart, which no
 * Go server writes, are one value here: kinf_jsonnum_cmp() tells them apart.
 */
int kinf_jsonnum_cmp_json(const json_t *a, const json_t *b);

/* v as Go's fmt %v prints it (kubectl's JSONPath, custom-columns, cells). */
KINF_MUST_CHECK char *kinf_jsonnum_format_value(const struct kinf_jsonnum *v,
		char buf[KINF_JSONNUM_SIZE]);

/*
 * Append the literal s[0..len) as a YAML plain scalar with the same value
 * that YAML 1.1 readers (PyYAML, go-yaml v2) and 1.2 ones alike take for a
 * number: the literal itself, except that an exponent gets a ".0" before
 * it when the mantissa has no '.', and a '+' when it has no sign
 * ("1e20" -> "1.0e+20", "1.5E3" -> "1.5E+3"), as YAML 1.1 needs both.
 */
void kinf_jsonnum_append_yaml(struct kinf_buf *out, const char *s, size_t len);

/*
 * json_loadb() under the model above: integers within int64 are
 * JSON_INTEGER, every other number JSON_REAL with Go's value. flags are
 * json_loadb()'s. NULL on failure, with reterr naming the field for a
 * number beyond float64 (-KINF_ETOOBIG: "field .spec.x: number 1e400 is
 * beyond float64's range"), or jansson's message (-KINF_EJSON), or
 * -KINF_ENOMEM. The caller names the object.
 */
KINF_MUST_CHECK json_t *kinf_jsonnum_load(const char *json, size_t len, size_t flags,
		struct kinf_error *reterr);

/*
 * Why json_loadb(json, len, flags, jerr) refused json: jansson says "out
 * of memory" only sometimes (an allocation that fails inside it often
 * reads as a syntax error at "line -1"), so its refusal of a text that is
 * valid JSON (kinf's own reader, which allocates nothing, says) is
 * memory's. -KINF_ENOMEM ("out of memory") or -KINF_EJSON ("line 3,
 * column 14: ..."), reterr filled either way.
 */
KINF_MUST_CHECK int kinf_jsonnum_load_error(const char *json, size_t len, size_t flags,
		const json_error_t *jerr, struct kinf_error *reterr);

#endif
