#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"

char *kinf_gofloat_format(double d, char buf[KINF_GOFLOAT_SIZE]) {
	if (d != d) {
		return strcpy(buf, "NaN");
	}
	if (d - d != 0) {
		return strcpy(buf, d > 0 ? "+Inf" : "-Inf");
	}
	/* The fewest significant digits that read back as d. */
	int digits = 17;
	for (int prec = 1; prec < 17; prec++) {
		snprintf(buf, KINF_GOFLOAT_SIZE, "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d) {
			digits = prec;
			break;
		}
	}
	snprintf(buf, KINF_GOFLOAT_SIZE, "%.*e", digits - 1, d);
	const char *e = strchr(buf, 'e');
	int exp = e ? atoi(e + 1) : 0;
	if (exp >= -4 && exp < 6) {
		int decimals = digits - 1 - exp;
		snprintf(buf, KINF_GOFLOAT_SIZE, "%.*f", decimals > 0 ? decimals : 0, d);
	}
	return buf;
}
