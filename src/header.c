#include <stdio.h>

#include "header.h"

ptrdiff_t kinf_header_value_bad_byte(const char *value, size_t len) {
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			return (ptrdiff_t)i;
		}
	}
	return -1;
}

int kinf_header_value_check(const char *value, size_t len, const char *what, int code,
		struct kinf_error *reterr) {
	ptrdiff_t at = kinf_header_value_bad_byte(value, len);
	char other[32];
	const char *name;

	if (at < 0) {
		return 0;
	}
	switch ((unsigned char)value[at]) {
	case '\r':
		name = "a carriage return";
		break;
	case '\n':
		name = "a line feed";
		break;
	case '\0':
		name = "a NUL byte";
		break;
	default:
		snprintf(other, sizeof(other), "the control character 0x%02x",
				(unsigned char)value[at]);
		name = other;
		break;
	}
	return kinf_error_set(reterr, code, "%s holds %s (byte %td), which an HTTP header "
			"cannot carry", what, name, at + 1);
}
