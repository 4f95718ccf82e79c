#ifndef KINF_HEX_H
#define KINF_HEX_H

/*
 * Reading hexadecimal digits: the one place for the percent escapes of a
 * request URL (httpreq.c) and the \u and \x escapes of JSON strings
 * (json.c) and JSONPath literals (jsonpath.c). Header-only, as jsonlex.h,
 * so the string readers keep a per-byte call out of their loops.
 */

/* The value of hex digit c (0-9, a-f, A-F), or -1 for any other byte. */
static inline int kinf_hex_value(char c) {
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

#endif
