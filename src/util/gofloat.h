#ifndef KINF_GOFLOAT_H
#define KINF_GOFLOAT_H

/*
 * A float64 as Go's fmt prints it with %v: strconv's 'g' with the shortest
 * digits that read back, and an exponent when it is below -4 or at least
 * 6, whatever the digit count (C's %g compares with the precision
 * instead). kubectl prints JSONPath results and server-side
 * table cells this way: 1.5, 1e+06, 1.2345675e+06, 1e-05, NaN, +Inf.
 */

/* Room for any result, NUL included. */
#define KINF_GOFLOAT_SIZE 32

/* Format d into buf (KINF_GOFLOAT_SIZE bytes); returns buf. */
char *kinf_gofloat_format(double d, char buf[KINF_GOFLOAT_SIZE]);

/*
 * d as Go's encoding/json writes a float64: the same shortest digits, in
 * plain notation from 1e-6 up to 1e21 (1000000, 0.000015), else with an
 * exponent, e-7 rather than e-07 (1e+21, 1e-7). For -o jsonpath-as-json.
 */
char *kinf_gofloat_format_json(double d, char buf[KINF_GOFLOAT_SIZE]);

#endif
