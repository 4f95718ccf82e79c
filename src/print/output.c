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
	static const struct { const char *prefix; enum kinf_output_format f; } templated[] = {
		{ "jsonpath=", KINF_OUTPUT_JSONPATH },
		{ "jsonpath-as-json=", KINF_OUTPUT_JSONPATH_JSON },
		{ "custom-columns=", KINF_OUTPUT_CUSTOM_COLUMNS },
	};
	for (size_t i = 0; i < sizeof(templated) / sizeof(*templated); i++) {
		size_t n = strlen(templated[i].prefix);
		if (strncmp(s, templated[i].prefix, n) == 0) {
			*ret = templated[i].f;
			if (ret_arg) {
				*ret_arg = s + n;
			}
			return 0;
		}
	}
	static const char *const go_templates[] = { "go-template", "go-template-file",
		"template", "templatefile" };
	for (size_t i = 0; i < sizeof(go_templates) / sizeof(*go_templates); i++) {
		size_t n = strlen(go_templates[i]);
		if (strncmp(s, go_templates[i], n) == 0 && (s[n] == '\0' || s[n] == '=')) {
			return -KINF_EUNSUPPORTED;
		}
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
