#include <string.h>

#include "object.h"
#include "selector.h"
#include "tap.h"

static struct kinf_object *obj(const char *json) {
	struct kinf_object *o = NULL;
	must(kinf_object_parse(json, strlen(json), NULL, &o, NULL));
	return o;
}

int main(void) {
	struct kinf_object *a = obj("{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\","
		"\"labels\":{\"app\":\"web\",\"tier\":\"front\",\"gen\":\"7\","
		"\"example.com/team\":\"x\"}},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}");
	static const struct {
		const char *sel;
		int match;	/* 1, 0, or -1 for a parse error */
	} labels[] = {
		{ "", 1 }, { "app", 1 }, { "!app", 0 }, { "!nope", 1 }, { "app=web", 1 },
		{ "app==web", 1 }, { "app!=web", 0 }, { "app=db", 0 }, { "nope!=x", 1 },
		{ "app in (db,web)", 1 }, { "app in (db)", 0 }, { "app notin (db)", 1 },
		{ "app notin (web, db)", 0 }, { "app=web,tier=front", 1 }, { "app=web, tier=back", 0 },
		{ "gen>5", 1 }, { "gen<5", 0 }, { "example.com/team=x", 1 }, { " app = web ", 1 },
		{ "app in (web", -1 }, { "app in web", -1 }, { "app=", 0 }, { "=web", -1 },
		{ "app=web,", -1 }, { ",app", -1 }, { "app=we b", -1 }, { "app=-web", -1 },
		{ "a/b/c=x", -1 }, { "gen>x", -1 }, { "app===web", -1 }, { "app in ()", 0 },
		{ "app notin ()", 1 }, { "app in (,web)", 1 }, { "in=x", 0 }, { "app in (in)", 0 },
		{ "!app=web", -1 }, { "gen>-1", -1 }, { "gen>99999999999999999999", -1 },
	};
	for (size_t i = 0; i < sizeof(labels) / sizeof(*labels); i++) {
		struct kinf_selector *s = NULL;
		struct kinf_error err = {0};
		int rc = kinf_label_selector_parse(labels[i].sel, &s, &err);
		if (labels[i].match < 0) {
			ok(rc == -KINF_EINVAL && err.message[0], "label \"%s\" rejected: %s", labels[i].sel, err.message);
		} else {
			ok(rc == 0 && kinf_selector_match(s, a) == (labels[i].match == 1),
				"label \"%s\" %s", labels[i].sel, labels[i].match ? "matches" : "does not match");
		}
		kinf_selector_free(s);
	}
	static const struct {
		const char *sel;
		int match;
	} fields[] = {
		{ "", 1 }, { "metadata.name=a", 1 }, { "metadata.name==a", 1 }, { "metadata.name!=a", 0 },
		{ "metadata.namespace=ns,spec.nodeName=n1", 1 }, { "spec.nodeName=n2", 0 },
		{ "status.phase!=Pending", 1 }, { "spec.missing=", 1 }, { "spec.missing=x", 0 },
		{ "metadata.name", -1 }, { "=a", -1 }, { "metadata.name=a,", -1 }, { "spec..x=1", -1 },
		{ "metadata.name=a=b", -1 }, { "metadata.name=a\\=b", 0 },
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++) {
		struct kinf_selector *s = NULL;
		struct kinf_error err = {0};
		int rc = kinf_field_selector_parse(fields[i].sel, &s, &err);
		if (fields[i].match < 0) {
			ok(rc == -KINF_EINVAL && err.message[0], "field \"%s\" rejected: %s", fields[i].sel, err.message);
		} else {
			ok(rc == 0 && kinf_selector_match(s, a) == (fields[i].match == 1),
				"field \"%s\" %s", fields[i].sel, fields[i].match ? "matches" : "does not match");
		}
		kinf_selector_free(s);
	}
	ok(kinf_selector_match(NULL, a) == 1, "NULL selects everything");

	/* Each error as kube-apiserver 1.28.7 words it (its 400 for ?labelSelector=). */
	static const struct {
		const char *sel, *message;
	} errors[] = {
		{ "a===b", "unable to parse requirement: found '=', expected: identifier" },
		{ "a in (b", "unable to parse requirement: found '', expected: ',' or ')'" },
		{ "!", "unable to parse requirement: found '', expected: identifier" },
		{ "=b", "found '=', expected: !, identifier, or 'end of string'" },
		{ "a notin b", "unable to parse requirement: found 'b' expected: '('" },
		{ "a,,b", "found ',', expected: identifier after ','" },
		{ "a=b=c", "found '=', expected: ',' or 'end of string'" },
		{ "a exists", "unable to parse requirement: found 'exists', expected: in, notin, =, ==, "
			"!=, gt, lt" },
		{ "-a", "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must "
			"consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
			"an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
			"used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" },
		{ "a=b,", "found '', expected: identifier after ','" },
		{ "a=-b", "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid "
			"label must be an empty string or consist of alphanumeric characters, '-', '_' or "
			"'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
			"'my_value',  or '12345', regex used for validation is "
			"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')" },
		{ "a<", "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' "
			"operators, the value must be an integer" },
		{ "a(b", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, "
			"lt" },
		{ "a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'" },
		{ "a in", "unable to parse requirement: found '' expected: '('" },
		{ "!a=b", "found '=', expected: ',' or 'end of string'" },
		{ "x/y/z", "unable to parse requirement: <nil>: Invalid value: \"x/y/z\": a qualified "
			"name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
			"end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
			"regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
			"optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')" },
		{ "Ex/a", "unable to parse requirement: <nil>: Invalid value: \"Ex/a\": prefix part a "
			"lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
			"'-' or '.', and must start and end with an alphanumeric character (e.g. "
			"'example.com', regex used for validation is "
			"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" },
		{ "a in (-x,_y)", "unable to parse requirement: [values[0][a]: Invalid value: \"-x\": "
			"a valid label must be an empty string or consist of alphanumeric characters, '-', "
			"'_' or '.', and must start and end with an alphanumeric character (e.g. "
			"'MyValue',  or 'my_value',  or '12345', regex used for validation is "
			"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), values[1][a]: Invalid value: "
			"\"_y\": a valid label must be an empty string or consist of alphanumeric "
			"characters, '-', '_' or '.', and must start and end with an alphanumeric "
			"character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
			"is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]" },
	};
	for (size_t i = 0; i < sizeof(errors) / sizeof(*errors); i++) {
		struct kinf_selector *s = NULL;
		struct kinf_error err = {0};
		ok(kinf_label_selector_parse(errors[i].sel, &s, &err) == -KINF_EINVAL,
				"label \"%s\" refused", errors[i].sel);
		if (strlen(errors[i].message) >= sizeof(err.message)) {
			/* two values' problems: as much as a kinf_error holds */
			ok(strncmp(err.message, errors[i].message, sizeof(err.message) - 1) == 0,
					"label \"%s\": the apiserver's error, cut at %zu bytes",
					errors[i].sel, sizeof(err.message) - 1);
		} else {
			is_str(err.message, errors[i].message, "label \"%s\": the apiserver's error",
					errors[i].sel);
		}
		kinf_selector_free(s);
	}
	kinf_object_unref(a);
	return tap_done();
}
