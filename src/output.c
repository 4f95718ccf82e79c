#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "output.h"

int kinf_output_parse_format(const char *s, enum kinf_output_format *ret,
		const char **ret_arg) {
	if (ret_arg) {
		*ret_arg = NULL;
	}
	if (strncmp(s, "jsonpath=", 9) == 0 || strncmp(s, "custom-columns=", 15) == 0) {
		bool jp = s[0] == 'j';
		*ret = jp ? KINF_OUTPUT_JSONPATH : KINF_OUTPUT_CUSTOM_COLUMNS;
		if (ret_arg) {
			*ret_arg = s + (jp ? 9 : 15);
		}
		return 0;
	}
	static const struct { const char *name; enum kinf_output_format f; } formats[] = {
		{ "", KINF_OUTPUT_TABLE }, { "table", KINF_OUTPUT_TABLE },
		{ "wide", KINF_OUTPUT_WIDE }, { "json", KINF_OUTPUT_JSON },
		{ "yaml", KINF_OUTPUT_YAML }, { "name", KINF_OUTPUT_NAME },
	};
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++) {
		if (strcmp(s, formats[i].name) == 0) {
			*ret = formats[i].f;
			return 0;
		}
	}
	return -KINF_EINVAL;
}
