#include <stdlib.h>
#include <string.h>

#include "indexer.h"
#include "indexfuncs.h"
#include "object.h"
#include "tap.h"

static struct kinf_object *pod(const char *ns, const char *name, const char *rv,
		const char *labels, const char *node, const char *phase, const char *images) {
	char json[2048];
	snprintf(json, sizeof(json),
		"{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"resourceVersion\":\"%s\","
		"\"labels\":{%s},\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs-%s\"},"
		"{\"kind\":\"Node\",\"name\":\"%s\"}]},\"spec\":{\"nodeName\":\"%s\","
		"\"serviceAccountName\":\"sa-%s\",\"containers\":[%s]},\"status\":{\"phase\":\"%s\"}}",
		ns, name, rv, labels, name, node, node, name, images, phase);
	struct kinf_object *obj = NULL;
	struct kinf_error err = {0};
	if (kinf_object_parse(json, strlen(json), NULL, &obj, &err) < 0) {
		printf("# %s\n", err.message);
	}
	return obj;
}

static char *keys_of(struct kinf_indexer *idx, const char *index, const char *value) {
	struct kinf_strv keys = {0};
	struct kinf_buf b = {0};
	if (kinf_indexer_index_keys(idx, index, value, &keys, NULL) < 0) {
		return strdup("<error>");
	}
	for (size_t i = 0; i < keys.n; i++) {
		must(kinf_buf_printf(&b, "%s%s", i ? " " : "", keys.v[i]));
	}
	kinf_strv_release(&keys);
	return kinf_buf_take(&b);
}

static void expect_keys(struct kinf_indexer *idx, const char *index, const char *value,
		const char *want) {
	char *got = keys_of(idx, index, value);
	is_str(got, want, "%s=%s", index, value);
	free(got);
}

static void install(struct kinf_indexer *idx, const char *name, struct kinf_strv *cn,
		struct kinf_strv *cp) {
	struct kinf_index_spec spec;
	struct kinf_error err = {0};
	int rc = kinf_index_spec_resolve(name, cn, cp, &spec, &err);
	ok(rc == 0 && kinf_index_spec_install(&spec, idx, &err) == 0, "install %s -> %s %s",
		name, rc == 0 ? spec.index_name : "", err.message);
	kinf_index_spec_release(&spec);
}

static size_t value_count(struct kinf_indexer *idx, const char *index) {
	struct kinf_index_value *v = NULL;
	size_t n = 0;
	must(kinf_indexer_values(idx, index, &v, &n, NULL));
	kinf_index_values_free(v, n);
	return n;
}

int main(void) {
	struct kinf_indexer *idx = kinf_indexer_new();
	struct kinf_strv cn = {0}, cp = {0};
	struct kinf_error err = {0};

	ok(kinf_index_define("sa=spec.serviceAccountName", &cn, &cp, &err) == 0, "define sa");
	ok(kinf_index_define("node=spec.x", &cn, &cp, &err) == -KINF_EINVAL, "shadowing a built-in: %s", err.message);
	ok(kinf_index_define("x=spec..y", &cn, &cp, &err) == -KINF_EINVAL, "bad path: %s", err.message);
	ok(kinf_index_define("noequals", &cn, &cp, &err) == -KINF_EINVAL, "no '=': %s", err.message);

	install(idx, "node", &cn, &cp);
	install(idx, "owner", &cn, &cp);
	install(idx, "phase", &cn, &cp);
	install(idx, "app", &cn, &cp);
	install(idx, "label:node", &cn, &cp);
	install(idx, "field:spec.containers[*].image", &cn, &cp);
	install(idx, "sa", &cn, &cp);
	install(idx, "namespace", &cn, &cp);

	struct kinf_index_spec spec;
	ok(kinf_index_spec_resolve("bad key!", &cn, &cp, &spec, &err) == -KINF_EINVAL,
		"malformed index name: %s", err.message);
	ok(kinf_index_spec_resolve("field:spec.[", &cn, &cp, &spec, &err) == -KINF_EINVAL,
		"malformed field path: %s", err.message);

	struct kinf_object *a = pod("ns1", "a", "1", "\"app\":\"web\",\"node\":\"x\"", "n1", "Running",
		"{\"image\":\"nginx:1.25\"},{\"image\":\"envoy\"}");
	struct kinf_object *b = pod("ns2", "b", "2", "\"app\":\"db\"", "n2", "Pending",
		"{\"image\":\"postgres\"},{\"image\":\"envoy\"}");
	struct kinf_object *c = pod("ns1", "c", "3", "", "n1", "Running", "{\"image\":\"nginx:1.25\"}");
	must(kinf_indexer_add(idx, a));
	must(kinf_indexer_add(idx, b));
	must(kinf_indexer_add(idx, c));

	expect_keys(idx, "node", "n1", "ns1/a ns1/c");
	expect_keys(idx, "owner", "ReplicaSet/rs-b", "ns2/b");
	expect_keys(idx, "owner", "Node/n1", "ns1/a ns1/c");
	expect_keys(idx, "phase", "Running", "ns1/a ns1/c");
	expect_keys(idx, "label:app", "web", "ns1/a");
	expect_keys(idx, "label:node", "x", "ns1/a");
	expect_keys(idx, "field:spec.containers[*].image", "envoy", "ns1/a ns2/b");
	expect_keys(idx, "field:spec.containers[*].image", "nginx:1.25", "ns1/a ns1/c");
	expect_keys(idx, "sa", "sa-b", "ns2/b");
	expect_keys(idx, "namespace", "ns1", "ns1/a ns1/c");
	is_int(value_count(idx, "field:spec.containers[*].image"), 3, "three image values");
	is_int(value_count(idx, "label:app"), 2, "unlabelled objects are not indexed");

	/* An update moves a between values: web -> db, n1 -> n2, drops envoy. */
	struct kinf_object *a2 = pod("ns1", "a", "4", "\"app\":\"db\"", "n2", "Succeeded",
		"{\"image\":\"nginx:1.25\"}");
	must(kinf_indexer_update(idx, a2));
	expect_keys(idx, "label:app", "web", "");
	expect_keys(idx, "label:app", "db", "ns1/a ns2/b");
	expect_keys(idx, "node", "n2", "ns1/a ns2/b");
	expect_keys(idx, "field:spec.containers[*].image", "envoy", "ns2/b");
	expect_keys(idx, "phase", "Succeeded", "ns1/a");
	is_int(value_count(idx, "label:app"), 1, "the emptied value web is gone");
	is_int(value_count(idx, "label:node"), 0, "label removed: no value left");

	must(kinf_indexer_delete(idx, "ns2/b"));
	must(kinf_indexer_delete(idx, "ns1/a"));
	expect_keys(idx, "field:spec.containers[*].image", "envoy", "");
	is_int(value_count(idx, "field:spec.containers[*].image"), 1, "only c's image is left");
	is_int(value_count(idx, "owner"), 2, "only c's owners are left");
	is_int(value_count(idx, "phase"), 1, "phase Running only");

	struct kinf_strv vals = {0};
	ok(kinf_index_spec_resolve("owner", &cn, &cp, &spec, &err) == 0 &&
		kinf_index_spec_values(&spec, c, &vals) == 0 && vals.n == 2 &&
		strcmp(vals.v[0], "ReplicaSet/rs-c") == 0, "owner values evaluated directly");
	kinf_index_spec_release(&spec);
	kinf_strv_release(&vals);

	kinf_object_unref(a);
	kinf_object_unref(a2);
	kinf_object_unref(b);
	kinf_object_unref(c);
	kinf_indexer_free(idx);
	kinf_strv_release(&cn);
	kinf_strv_release(&cp);
	return tap_done();
}
