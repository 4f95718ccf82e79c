#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"

/* d with the fewest significant digits that read back as d, as %e; its exponent. */
static int shortest_e(double d, char buf[KINF_GOFLOAT_SIZE], int *ret_digits) {
	int digits = 17;
	for (int prec = 1; prec < 17; prec++) {
		snprintf(buf, KINF_GOFLOAT_SIZE, "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d) {
			digits = prec;
			break;
		}
	}
	snprintf(buf, KINF_GOFLOAT_SIZE, "%.*e", digits - 1, d);
	*ret_digits = digits;
	const char *e = strchr(buf, 'e');
	return e ? atoi(e + 1) : 0;
}

char *kinf_gofloat_format(double d, char buf[KINF_GOFLOAT_SIZE]) {
	int digits;
	if (d != d) {
		return strcpy(buf, "NaN");
	}
	if (d - d != 0) {
		return strcpy(buf, d > 0 ? "+Inf" : "-Inf");
	}
	int exp = shortest_e(d, buf, &digits);
	if (exp >= -4 && exp < 6) {
		int decimals = digits - 1 - exp;
		snprintf(buf, KINF_GOFLOAT_SIZE, "%.*f", decimals > 0 ? decimals : 0, d);
	}
	return buf;
}

char *kinf_gofloat_format_json(double d, char buf[KINF_GOFLOAT_SIZE]) {
	int digits;
	if (d != d || d - d != 0) {
		return kinf_gofloat_format(d, buf);	/* Go's json refuses them */
	}
	int exp = shortest_e(d, buf, &digits);
	double a = d < 0 ? -d : d;
	if (a != 0 && (a < 1e-6 || a >= 1e21)) {
		/* 'e', and e-07 cleaned up to e-7 as encoding/json does */
		char *e = strchr(buf, 'e');
		if (e && e[1] == '-' && e[2] == '0' && e[3] && !e[4]) {
			e[2] = e[3];
			e[3] = '\0';
		}
		return buf;
	}
	/* Plain notation from the shortest digits (%f would show the binary value's). */
	char digs[KINF_GOFLOAT_SIZE];
	size_t n = 0;
	for (const char *p = buf; *p && *p != 'e'; p++) {
		if (*p >= '0' && *p <= '9') {
			digs[n++] = *p;
		}
	}
	size_t o = 0;
	if (d < 0 || (d == 0 && 1 / d < 0)) {
		buf[o++] = '-';
	}
	if (exp < 0) {
		buf[o++] = '0';
		buf[o++] = '.';
		for (int i = -1; i > exp; i--) {
			buf[o++] = '0';
		}
		memcpy(buf + o, digs, n);
		o += n;
	} else {
		for (int i = 0; i <= exp; i++) {
			buf[o++] = (size_t)i < n ? digs[i] : '0';
		}
		if ((size_t)exp + 1 < n) {
			buf[o++] = '.';
			memcpy(buf + o, digs + exp + 1, n - (size_t)exp - 1);
			o += n - (size_t)exp - 1;
		}
	}
	buf[o] = '\0';
	(void)digits;
	return buf;
}
