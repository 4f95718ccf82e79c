#include <math.h>

#include "gofloat.h"
#include "tap.h"

/*
 * Go's fmt.Sprint(float64) for each (checked with go1.21): the shortest
 * digits that read back, %e from an exponent of 6 or below -4.
 */
static void is_go(double d, const char *want) {
	char buf[KINF_GOFLOAT_SIZE];
	is_str(kinf_gofloat_format(d, buf), want, want);
}

/*
 * Go's encoding/json for a float64: 'f' from 1e-6 up to 1e21, else 'e'
 * with e-07 cleaned up to e-7 (encode.go's floatEncoder).
 */
static void is_json(double d, const char *want) {
	char buf[KINF_GOFLOAT_SIZE];
	is_str(kinf_gofloat_format_json(d, buf), want, "json: %s", want);
}

int main(void) {
	is_json(0, "0");
	is_json(-0.0, "-0");
	is_json(1.5, "1.5");
	is_json(0.1, "0.1");
	is_json(1e6, "1000000");
	is_json(1234567.5, "1234567.5");
	is_json(0.00001, "0.00001");
	is_json(1e-6, "0.000001");
	is_json(1e-7, "1e-7");
	is_json(1.5e-10, "1.5e-10");
	is_json(1e20, "100000000000000000000");
	is_json(1.2345678901234568e20, "123456789012345680000");
	is_json(1e21, "1e+21");
	is_json(-2.5e-300, "-2.5e-300");
	is_json(5e-324, "5e-324");
	is_go(0, "0");
	is_go(-0.0, "-0");
	is_go(1.5, "1.5");
	is_go(0.1, "0.1");
	is_go(100000, "100000");
	is_go(123456.5, "123456.5");
	is_go(1e6, "1e+06");
	is_go(1234567, "1.234567e+06");
	is_go(1234567.5, "1.2345675e+06");
	is_go(0.0001, "0.0001");
	is_go(0.00001, "1e-05");
	is_go(1.0 / 3, "0.3333333333333333");
	is_go(1e21, "1e+21");
	is_go(-2.5e-300, "-2.5e-300");
	is_go(1.7976931348623157e308, "1.7976931348623157e+308");
	is_go(5e-324, "5e-324");
	is_go(NAN, "NaN");
	is_go(INFINITY, "+Inf");
	is_go(-INFINITY, "-Inf");
	return tap_done();
}
