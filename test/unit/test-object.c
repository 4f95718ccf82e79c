#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "object.h"
#include "tap.h"

static struct kinf_object *parse(const char *json) {
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	if (kinf_object_parse(json, strlen(json), NULL, &obj, &err) < 0) {
		printf("# parse failed: %s\n", err.message);
	}
	return obj;
}

static void test_record(void) {
	const char *json = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
		"\"name\":\"web-1\",\"namespace\":\"default\",\"uid\":\"u-1\","
		"\"resourceVersion\":\"123\",\"creationTimestamp\":\"2024-01-02T03:04:05Z\","
		"\"labels\":{\"tier\":\"front\",\"app\":\"web\",\"a\\u00e9\":\"\\\"q\\\"\"},"
		"\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		"\"name\":\"web-7d9f\",\"uid\":\"x\",\"controller\":true}]},"
		"\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"a\",\"image\":\"nginx:1.25\"},"
		"{\"name\":\"b\",\"image\":\"busybox\"}]},\"status\":{\"phase\":\"Running\"}}";
	struct kinf_object *obj = parse(json);
	size_t n, len;

	ok(obj != NULL, "a pod parses");
	if (!obj) {
		return;
	}
	is_str(kinf_object_key(obj), "default/web-1", "key is namespace/name");
	is_str(kinf_object_name(obj), "web-1", "name");
	is_str(kinf_object_namespace(obj), "default", "namespace");
	is_str(kinf_object_uid(obj), "u-1", "uid");
	is_str(kinf_object_resource_version(obj), "123", "resourceVersion");
	is_str(kinf_object_kind(obj), "Pod", "kind");
	is_str(kinf_object_api_version(obj), "v1", "apiVersion");
	is_str(kinf_object_creation_timestamp(obj), "2024-01-02T03:04:05Z", "creationTimestamp");
	is_str(kinf_object_deletion_timestamp(obj), "", "absent deletionTimestamp is empty");
	is_str(kinf_object_node_name(obj), "node-1", "spec.nodeName");
	is_str(kinf_object_phase(obj), "Running", "status.phase");
	const struct kinf_label *labels = kinf_object_labels(obj, &n);
	is_int(n, 3, "three labels");
	is_str(labels[0].key, "app", "labels sorted bytewise");
	is_str(labels[1].key, "a\xc3\xa9", "label key escapes decoded");
	is_str(labels[1].value, "\"q\"", "label value decoded");
	is_str(kinf_object_label(obj, "tier"), "front", "label lookup");
	ok(kinf_object_label(obj, "nope") == NULL, "missing label is NULL");
	const struct kinf_owner_ref *owners = kinf_object_owners(obj, &n);
	is_int(n, 1, "one owner");
	is_str(owners[0].kind, "ReplicaSet", "owner kind");
	is_str(owners[0].name, "web-7d9f", "owner name");
	ok(owners[0].controller, "owner is controller");
	const char *bytes = kinf_object_json(obj, &len);
	ok(len == strlen(json) && memcmp(bytes, json, len) == 0, "compact bytes kept byte-exact");

	struct kinf_strv v = {0};
	ok(kinf_object_field_values(obj, "spec.containers[*].image", &v, NULL) == 0 &&
		v.n == 2 && strcmp(v.v[0], "nginx:1.25") == 0 && strcmp(v.v[1], "busybox") == 0,
		"field path with [*] gives one value per container");
	kinf_strv_reset(&v);
	ok(kinf_object_field_values(obj, "spec.containers[1].name", &v, NULL) == 0 &&
		v.n == 1 && strcmp(v.v[0], "b") == 0, "field path with [1]");
	kinf_strv_reset(&v);
	ok(kinf_object_field_values(obj, "metadata.labels['a\xc3\xa9']", &v, NULL) == 0 &&
		v.n == 1 && strcmp(v.v[0], "\"q\"") == 0, "bracketed key");
	kinf_strv_reset(&v);
	ok(kinf_object_field_values(obj, ".spec.nodeName", &v, NULL) == 0 &&
		v.n == 1 && strcmp(v.v[0], "node-1") == 0, "leading dot accepted");
	kinf_strv_reset(&v);
	ok(kinf_object_field_values(obj, "spec.missing.deeper", &v, NULL) == 0 && v.n == 0,
		"missing path gives no values");
	ok(kinf_object_field_values(obj, "spec..x", &v, NULL) == -KINF_EINVAL, "bad path rejected");
	ok(kinf_object_field_path_check("spec.containers[x]", NULL) == -KINF_EINVAL,
			"bad index rejected");
	ok(kinf_object_field_path_check("spec.containers[*].image", NULL) == 0,
			"good path accepted");
	kinf_strv_release(&v);

	struct kinf_object *ref = kinf_object_ref(obj);
	ok(ref == obj, "ref returns the object");
	kinf_object_unref(ref);
	ok(kinf_object_unref(obj) == NULL, "unref returns NULL");
}

static void test_compaction_and_numbers(void) {
	const char *pretty = "{\n  \"metadata\": {\n    \"name\": \"a b\",\n"
		"    \"resourceVersion\": \"9\"\n  },\n  \"n\": 9223372036854775807,"
		" \"f\": 1.5e300, \"s\": \"x  y\\\" z\"\n}\n";
	const char *want = "{\"metadata\":{\"name\":\"a b\",\"resourceVersion\":\"9\"},"
		"\"n\":9223372036854775807,\"f\":1.5e300,\"s\":\"x  y\\\" z\"}";
	struct kinf_object *obj = parse(pretty);
	ok(obj != NULL, "pretty-printed object parses");
	if (obj) {
		is_str(kinf_object_json(obj, NULL), want, "white space outside strings removed, int64 untouched");
		is_str(kinf_object_key(obj), "a b", "cluster-scoped key is the name");
		struct kinf_object *typed = kinf_object_with_type(obj, "v1", "Namespace");
		ok(typed != NULL, "with_type");
		if (typed) {
			is_str(kinf_object_json(typed, NULL),
				"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a b\","
				"\"resourceVersion\":\"9\"},\"n\":9223372036854775807,\"f\":1.5e300,\"s\":\"x  y\\\" z\"}",
				"apiVersion and kind inserted at the front");
			is_str(kinf_object_kind(typed), "Namespace", "typed object's record has the kind");
		}
		kinf_object_unref(typed);
		typed = kinf_object_with_type(obj, NULL, NULL);
		ok(typed == obj, "nothing to add returns the same object");
		kinf_object_unref(typed);
	}
	kinf_object_unref(obj);
}

static void test_invalid(void) {
	static const struct {
		const char *json;
		size_t len;	/* 0: strlen */
		int rc;
		const char *what;
	} cases[] = {
		{ "", 0, -KINF_EJSON, "empty input" },
		{ "[]", 0, -KINF_EJSON, "not an object" },
		{ "{}", 0, -KINF_EJSON, "no metadata" },
		{ "{\"metadata\":{}}", 0, -KINF_EJSON, "no name" },
		{ "{\"metadata\":{\"name\":1}}", 0, -KINF_EJSON, "name not a string" },
		{ "{\"metadata\":{\"name\":\"a\"},}", 0, -KINF_EJSON, "trailing comma" },
		{ "{\"metadata\":{\"name\":\"a\"}} x", 0, -KINF_EJSON, "trailing garbage" },
		{ "{\"metadata\":{\"name\":\"a\"}", 0, -KINF_EJSON, "truncated" },
		{ "{\"metadata\":{\"name\":\"a\xff\"}}", 0, -KINF_EJSON, "invalid UTF-8 byte" },
		{ "{\"metadata\":{\"name\":\"a\xc0\xaf\"}}", 0, -KINF_EJSON, "overlong UTF-8" },
		{ "{\"metadata\":{\"name\":\"a\xed\xa0\x80\"}}", 0, -KINF_EJSON, "UTF-8 surrogate" },
		{ "{\"metadata\":{\"name\":\"\\ud800\"}}", 0, -KINF_EJSON, "lone surrogate escape" },
		{ "{\"metadata\":{\"name\":\"\\x\"}}", 0, -KINF_EJSON, "bad escape" },
		{ "{\"metadata\":{\"name\":\"a\nb\"}}", 0, -KINF_EJSON, "raw control character" },
		{ "{\"metadata\":{\"name\":\"a\"},\"n\":01}", 0, -KINF_EJSON, "leading zero" },
		{ "{\"metadata\":{\"name\":\"a\"},\"n\":1.}", 0, -KINF_EJSON, "bad fraction" },
		{ "{\"metadata\":{\"name\":\"a\"},\"n\":tru}", 0, -KINF_EJSON, "bad literal" },
		{ "{\"metadata\":{\"name\":\"a\"},\"x\":[1,]}", 0, -KINF_EJSON, "array trailing comma" },
		{ "{\"metadata\":{\"name\":\"a\"} \0}", 24, -KINF_EJSON, "NUL byte" },
		{ "{\"metadata\":{\"name\":\"a\",\"labels\":[]}}", 0, -KINF_EJSON,
			"labels an array" },
		{ "{\"metadata\":{\"name\":\"a\",\"ownerReferences\":{}}}", 0, -KINF_EJSON,
			"ownerReferences an object" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct kinf_object *obj = NULL;
		struct kinf_error err = {0};
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].json);
		int rc = kinf_object_parse(cases[i].json, len, NULL, &obj, &err);
		ok(rc == cases[i].rc && obj == NULL && err.message[0],
			"rejected: %s (%s)", cases[i].what, err.message);
		kinf_object_unref(obj);
	}
}

/* The API writes an empty map or list as null: no labels, no owners. */
static void test_null_labels_and_owners(void) {
	struct kinf_object *obj = parse("{\"metadata\":{\"name\":\"a\",\"labels\":null,"
		"\"ownerReferences\":null,\"namespace\":\"ns\"}}");
	size_t n = 1, m = 1;

	ok(obj != NULL, "null labels and ownerReferences parse");
	if (!obj) {
		return;
	}
	kinf_object_labels(obj, &n);
	kinf_object_owners(obj, &m);
	ok(n == 0 && m == 0, "null labels and ownerReferences are empty");
	is_str(kinf_object_key(obj), "ns/a", "members after them are read");
	kinf_object_unref(obj);
}

static void test_limits(void) {
	struct kinf_buf b = {0};
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	struct kinf_object_limits lim = { .max_depth = 64 };

	must(kinf_buf_append_str(&b, "{\"metadata\":{\"name\":\"deep\"},\"x\":"));
	for (int i = 0; i < 10000; i++) {
		must(kinf_buf_append_char(&b, '['));
	}
	for (int i = 0; i < 10000; i++) {
		must(kinf_buf_append_char(&b, ']'));
	}
	must(kinf_buf_append_char(&b, '}'));
	ok(kinf_object_parse(b.data, b.len, &lim, &obj, &err) == -KINF_EJSON &&
		strstr(err.message, "nesting too deep"), "10,000 levels rejected: %s", err.message);
	lim = (struct kinf_object_limits){ .max_bytes = 10 };
	ok(kinf_object_parse(b.data, b.len, &lim, &obj, &err) == -KINF_ETOOBIG,
		"size limit: %s", err.message);
	kinf_buf_release(&b);
	ok(kinf_json_validate("{\"a\":\n  x}", 10, 0, &err) == -KINF_EJSON &&
		strcmp(err.message, "line 2, column 3: unexpected character") == 0,
		"error has line and column: %s", err.message);
}

static void test_quote(void) {
	struct kinf_buf b = {0};
	must(kinf_json_quote(&b, "a\"b\\c\n\x01", 7));
	is_str(b.data, "\"a\\\"b\\\\c\\n\\u0001\"", "quote escapes");
	kinf_buf_release(&b);
}

/* metadata_only: metadata read, spec and status validated but not walked. */
static void test_metadata_only(void) {
	static const char pod[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		"{\"name\":\"web-1\",\"namespace\":\"prod\",\"uid\":\"u1\",\"resourceVersion\":\"42\","
		"\"labels\":{\"app\":\"web\"},\"ownerReferences\":[{\"kind\":\"ReplicaSet\","
		"\"name\":\"web\",\"uid\":\"u0\",\"controller\":true}]},"
		"\"spec\":{\"nodeName\":\"node-1\"},\"status\":{\"phase\":\"Running\"}}";
	struct kinf_object_limits lim = { .metadata_only = true };
	struct kinf_object *full = NULL, *light = NULL;
	struct kinf_error err = {0};

	ok(kinf_object_parse(pod, strlen(pod), NULL, &full, &err) == 0 &&
		kinf_object_parse(pod, strlen(pod), &lim, &light, &err) == 0, "both parse");
	size_t a, b, n_owners = 1;
	const char *ja = kinf_object_json(full, &a), *jb = kinf_object_json(light, &b);
	ok(a == b && memcmp(ja, jb, a) == 0, "the same bytes");
	is_str(kinf_object_key(light), "prod/web-1", "key");
	is_str(kinf_object_kind(light), "Pod", "kind");
	is_str(kinf_object_uid(light), "u1", "uid");
	is_str(kinf_object_resource_version(light), "42", "resourceVersion");
	is_str(kinf_object_label(light, "app"), "web", "labels read");
	kinf_object_owners(light, &n_owners);
	is_int(n_owners, 1, "owners read");
	ok(!kinf_object_node_name(light) || !*kinf_object_node_name(light), "no node read");
	ok(!kinf_object_phase(light) || !*kinf_object_phase(light), "no phase read");
	is_str(kinf_object_node_name(full), "node-1", "(the full record has the node)");
	kinf_object_unref(full);
	kinf_object_unref(light);

	static const char bad[] = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"a\":1,}}";
	ok(kinf_object_parse(bad, strlen(bad), &lim, &light, &err) == -KINF_EJSON,
		"what is not read is still validated: %s", err.message);
	static const char bad2[] = "{\"metadata\":{\"name\":\"x\"},\"status\":{\"phase\":\"\\q\"}}";
	ok(kinf_object_parse(bad2, strlen(bad2), &lim, &light, &err) == -KINF_EJSON,
		"in status too: %s", err.message);
}

static void test_drop_managed_fields(void) {
	static const struct { const char *in, *out, *what; } cases[] = {
		{ "{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:x\":{}}}],\"uid\":\"u\"},\"spec\":{}}",
		  "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"},\"spec\":{}}", "in the middle" },
		{ "{\"metadata\":{\"managedFields\":[],\"name\":\"a\"}}",
		  "{\"metadata\":{\"name\":\"a\"}}", "first" },
		{ "{\"metadata\":{\"name\":\"a\",\"managedFields\":null}}",
		  "{\"metadata\":{\"name\":\"a\"}}", "last" },
		{ "{ \"metadata\" : { \"name\" : \"a\" ,\n \"managedFields\" : [ {} ] } , \"x\" : 1 }",
		  "{\"metadata\":{\"name\":\"a\"},\"x\":1}", "spaced text" },
		{ "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"managedFields\":[1]}}",
		  "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"managedFields\":[1]}}",
		  "only metadata's" },
	};
	const struct kinf_object_limits drop = { .drop_managed_fields = true };
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct kinf_object *obj = NULL, *again = NULL;
		struct kinf_error err = {0};
		int rc = kinf_object_parse(cases[i].in, strlen(cases[i].in), &drop, &obj, &err);
		ok(rc == 0, "managedFields dropped, %s: parses (%s)", cases[i].what, err.message);
		if (rc < 0) {
			continue;
		}
		is_str(kinf_object_json(obj, NULL), cases[i].out, "managedFields dropped, %s",
				cases[i].what);
		kinf_object_unref(obj);
		obj = parse(cases[i].in);
		ok(obj && kinf_object_without_managed_fields(obj, &again) == 0,
				"kinf_object_without_managed_fields, %s", cases[i].what);
		if (again) {
			is_str(kinf_object_json(again, NULL), cases[i].out,
					"kinf_object_without_managed_fields, %s: bytes", cases[i].what);
		}
		kinf_object_unref(again);
		kinf_object_unref(obj);
	}
	struct kinf_object *obj = parse("{\"metadata\":{\"name\":\"a\",\"managedFields\":[]}}");
	ok(obj && strstr(kinf_object_json(obj, NULL), "managedFields"), "kept by default");
	kinf_object_unref(obj);
}

/* Names no server allows, and a NUL in metadata: refused, never cut short. */
static void test_names(void) {
	/* What no Kubernetes name can be (apimachinery IsValidPathSegmentName, and NUL). */
	static const struct {
		const char *name;
		size_t len;
		const char *problem;
	} names[] = {
		{ "web-1", 5, NULL }, { "a.b", 3, NULL }, { "...", 3, NULL },
		{ "system:node", 11, NULL }, { "\x1b[2J", 4, NULL },
		{ ".", 1, "may not be '.'" }, { "..", 2, "may not be '..'" },
		{ "a/b", 3, "may not contain '/'" }, { "50%", 3, "may not contain '%'" },
		{ "a\0evil", 6, "may not contain \\u0000" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		is_str(kinf_object_name_problem(names[i].name, names[i].len), names[i].problem,
				"name %zu: %s", i, names[i].problem ? names[i].problem : "fine");
	}

	static const struct {
		const char *json;
		const char *message;
	} bad[] = {
		{ "{\"metadata\":{\"name\":\"a\\u0000evil\",\"namespace\":\"ns\"}}",
			"object \"ns/a\\u0000evil\": metadata.name may not contain \\u0000" },
		{ "{\"metadata\":{\"namespace\":\"n\\u0000s\",\"name\":\"a\"}}",
			"object \"n\\u0000s/a\": metadata.namespace may not contain \\u0000" },
		{ "{\"metadata\":{\"name\":\"a/b\"}}",
			"object \"a/b\": metadata.name may not contain '/'" },
		{ "{\"metadata\":{\"name\":\"..\",\"namespace\":\"ns\"}}",
			"object \"ns/..\": metadata.name may not be '..'" },
		{ "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x%y\"}}",
			"object \"x%y/a\": metadata.namespace may not contain '%'" },
		{ "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\\u0000\"}}",
			"object \"a\": metadata.uid may not contain \\u0000" },
		{ "{\"metadata\":{\"name\":\"a\",\"labels\":{\"k\":\"v\\u0000w\"}}}",
			"object \"a\": metadata.labels may not contain \\u0000" },
		{ "{\"metadata\":{\"name\":\"a\",\"ownerReferences\":[{\"kind\":\"R\","
			"\"name\":\"\\u0000\"}]}}",
			"object \"a\": metadata.ownerReferences may not contain \\u0000" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct kinf_object *o = NULL;
		struct kinf_error err = {0};
		ok(kinf_object_parse(bad[i].json, strlen(bad[i].json), NULL, &o, &err) == -KINF_EJSON &&
				!o, "refused: %s", bad[i].json);
		is_str(err.message, bad[i].message, "with the object named");
	}
	/* Escapes a terminal would act on are kept whole: printers escape them. */
	static const char esc[] = "{\"metadata\":{\"name\":\"a\\u001b[2J\",\"namespace\":\"n\"}}";
	struct kinf_object *o = parse(esc);
	is_str(o ? kinf_object_key(o) : NULL, "n/a\x1b[2J", "an ESC in a name is kept");
	kinf_object_unref(o);
}

/* The typed vector of references: grows, keeps order, drops its references. */
static void test_list(void) {
	struct kinf_object_list list = {0};
	struct kinf_object *o = parse("{\"metadata\":{\"name\":\"a\"}}");
	bool pushed = true;
	for (int i = 0; i < 100 && o; i++) {
		pushed &= kinf_object_list_push_take(&list, kinf_object_ref(o)) == 0;
	}
	ok(pushed && list.n == 100 && list.cap >= 100, "100 pushed (n %zu, cap %zu)",
			list.n, list.cap);
	ok(list.n && list.v[0] == o && list.v[99] == o, "each the object pushed");
	size_t cap = list.cap;
	kinf_object_list_reset(&list);
	ok(list.n == 0 && list.cap == cap && list.v, "reset keeps the allocation");
	ok(kinf_object_list_reserve(&list, 1000) == 0 && list.cap >= 1000, "reserve 1000");
	ok(kinf_object_list_push_take(&list, kinf_object_ref(o)) == 0 && list.n == 1,
			"pushed after a reset");
	kinf_object_list_release(&list);
	ok(!list.v && list.n == 0 && list.cap == 0, "released");

	/* A producer's exact allocation (cap 0) grows too. */
	list.v = malloc(2 * sizeof(*list.v));
	list.n = 2;
	list.v[0] = kinf_object_ref(o);
	list.v[1] = kinf_object_ref(o);
	ok(kinf_object_list_push_take(&list, kinf_object_ref(o)) == 0 && list.n == 3 &&
			list.v[0] == o && list.v[2] == o, "a list with cap 0 grows");
	kinf_object_list_release(&list);
	kinf_object_unref(o);
}

int main(void) {
	test_record();
	test_compaction_and_numbers();
	test_invalid();
	test_null_labels_and_owners();
	test_limits();
	test_metadata_only();
	test_quote();
	test_drop_managed_fields();
	test_names();
	test_list();
	return tap_done();
}
