#include <string.h>

#include "object.h"
#include "selector.h"
#include "tap.h"

static struct kinf_object *obj(const char *json) {
	struct kinf_object *o = NULL;
	kinf_object_parse(json, strlen(json), NULL, &o, NULL);
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
		{ "a/b/c=x", -1 }, { "gen>x", -1 }, { "app===web", -1 }, { "app in ()", -1 },
	};
	for (size_t i = 0; i < sizeof(labels) / sizeof(*labels); i++) {
		struct kinf_selector *s = NULL;
		struct kinf_error err = {0};
		int rc = kinf_label_selector_parse(labels[i].sel, &s, &err);
		if (labels[i].match < 0) {
			ok(rc == -KINF_EINVAL && err.message[0], "label \"%s\" rejected: %s", labels[i].sel, err.message);
		} else {
			ok(rc == 0 && kinf_selector_matches(s, a) == (labels[i].match == 1),
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
			ok(rc == 0 && kinf_selector_matches(s, a) == (fields[i].match == 1),
				"field \"%s\" %s", fields[i].sel, fields[i].match ? "matches" : "does not match");
		}
		kinf_selector_free(s);
	}
	ok(kinf_selector_matches(NULL, a), "NULL selects everything");
	kinf_object_unref(a);
	return tap_done();
}
