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

#endif
