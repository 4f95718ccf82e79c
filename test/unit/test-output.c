/* The -o formats: the names kubectl takes, and the templates' arguments. */
#include <stddef.h>

#include "err.h"
#include "output.h"
#include "tap.h"

int main(void) {
	static const struct {
		const char *s;
		int rc;
		enum kinf_output_format f;
		const char *arg;
	} cases[] = {
		{ "", 0, KINF_OUTPUT_TABLE, NULL },
		{ "table", 0, KINF_OUTPUT_TABLE, NULL },
		{ "wide", 0, KINF_OUTPUT_WIDE, NULL },
		{ "json", 0, KINF_OUTPUT_JSON, NULL },
		{ "yaml", 0, KINF_OUTPUT_YAML, NULL },
		{ "name", 0, KINF_OUTPUT_NAME, NULL },
		{ "jsonpath={.metadata.name}", 0, KINF_OUTPUT_JSONPATH, "{.metadata.name}" },
		{ "jsonpath=", 0, KINF_OUTPUT_JSONPATH, "" },
		{ "custom-columns=N:.metadata.name", 0, KINF_OUTPUT_CUSTOM_COLUMNS,
			"N:.metadata.name" },
		{ "jsonpath-as-json={.items[*].metadata.name}", 0, KINF_OUTPUT_JSONPATH_JSON,
			"{.items[*].metadata.name}" },
		{ "JSON", -KINF_EINVAL, 0, NULL },
		{ "jsonpath", -KINF_EINVAL, 0, NULL },
		{ "jsonpath-as-json", -KINF_EINVAL, 0, NULL },
		{ "go-template={{.}}", -KINF_EUNSUPPORTED, 0, NULL },
		{ "go-template", -KINF_EUNSUPPORTED, 0, NULL },
		{ "go-template-file=/t", -KINF_EUNSUPPORTED, 0, NULL },
		{ "template={{.}}", -KINF_EUNSUPPORTED, 0, NULL },
		{ "templatefile=/t", -KINF_EUNSUPPORTED, 0, NULL },
		{ "templates", -KINF_EINVAL, 0, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		enum kinf_output_format f = KINF_OUTPUT_TABLE;
		const char *arg = "unset";
		int rc = kinf_output_parse_format(cases[i].s, &f, &arg);
		is_int(rc, cases[i].rc, "\"%s\": %s", cases[i].s, rc ? "refused" : "taken");
		if (cases[i].rc == 0) {
			is_int(f, cases[i].f, "\"%s\": its format", cases[i].s);
		}
		if (cases[i].rc == 0 && cases[i].arg) {
			is_str(arg, cases[i].s + strlen(cases[i].s) - strlen(cases[i].arg),
					"\"%s\": the argument after '='", cases[i].s);
		} else if (cases[i].rc == 0) {
			ok(arg == NULL, "\"%s\": no argument", cases[i].s);
		}
	}
	return tap_done();
}
