#include "discovery-test.h"

/*
 * Aggregated discovery (src/discovery/aggregated.c, and the model it
 * builds): the fixtures' apidiscovery.k8s.io/v2 documents through
 * kinf_discovery_from_aggregated(), edge documents, and malformed ones
 * refused with where in the document.
 */

static void test_aggregated(void) {
	struct kinf_discovery *d = load_fixture_aggregated();

	if (!d) {
		return;
	}
	check_fixture_api(d, "aggregated");
	ok(!kinf_discovery_from_cache(d), "in-memory discovery is not cached");
	ok(!kinf_discovery_partial(d), "fixtures are complete");
	kinf_discovery_free(d);
}

/* The same core document read as only /apis: core still comes first. */
static void test_edge_documents(void) {
	struct kinf_discovery *d = NULL;
	const struct kinf_resource *r = NULL;
	struct kinf_error err = {0};
	const char *doc =
		"{\"apiVersion\":\"apidiscovery.k8s.io/v2\",\"kind\":"
		"\"APIGroupDiscoveryList\",\"metadata\":{},\"items\":["
		/* metrics-server down: the version is Stale and left out. */
		"{\"metadata\":{\"name\":\"metrics.k8s.io\"},\"versions\":[{"
		"\"version\":\"v1beta1\",\"freshness\":\"Stale\",\"resources\":[{"
		"\"resource\":\"podmetricses\",\"responseKind\":{\"group\":\"\","
		"\"version\":\"\",\"kind\":\"PodMetrics\"},\"scope\":\"Namespaced\","
		"\"verbs\":[\"get\",\"list\"]}]}]},"
		"{\"metadata\":{\"name\":\"things.example.com\"},\"versions\":[{"
		"\"version\":\"v1\",\"freshness\":\"Current\",\"resources\":["
		/* A singular that is not the lower-cased kind. */
		"{\"resource\":\"things\",\"responseKind\":{\"kind\":\"Thing\"},"
		"\"scope\":\"Cluster\",\"singularResource\":\"item\"},"
		/* No singular: guessed from the kind, as client-go. */
		"{\"resource\":\"gizmos\",\"responseKind\":{\"kind\":\"GizmoThing\"},"
		"\"scope\":\"Namespaced\",\"verbs\":null,\"shortNames\":null},"
		/* No responseKind: client-go skips it. */
		"{\"resource\":\"nokinds\",\"scope\":\"Namespaced\"},"
		/* Listed twice: the first wins. */
		"{\"resource\":\"things\",\"responseKind\":{\"kind\":\"Other\"},"
		"\"scope\":\"Namespaced\"}"
		"]}]}]}";
	int rc = kinf_discovery_from_aggregated(NULL, 0, doc, strlen(doc), &d, &err);

	if (!ok(rc == 0, "edge document parses")) {
		printf("#   %s\n", err.message);
		return;
	}
	ok(kinf_discovery_partial(d), "a Stale version makes it partial");
	is_int(kinf_discovery_resolve(d, "podmetricses", &r, NULL), -KINF_ENOTFOUND,
			"a Stale version's resources are left out");
	is_int(kinf_discovery_resolve(d, "PodMetrics", &r, NULL), -KINF_ENOTFOUND,
			"a Stale version's kinds are left out");
	ok(kinf_discovery_resolve(d, "THING", &r, NULL) == 0 &&
			strcmp(r->resource, "things") == 0,
			"kind matches case-insensitively");
	ok(kinf_discovery_resolve(d, "thing.things.example.com", &r, NULL) == 0 &&
			strcmp(r->resource, "things") == 0, "kind with a group");
	ok(kinf_discovery_resolve(d, "item", &r, NULL) == 0 &&
			strcmp(r->resource, "things") == 0 && !r->namespaced,
			"singular from the document");
	ok(kinf_discovery_resolve(d, "gizmothing", &r, NULL) == 0 &&
			strcmp(r->resource, "gizmos") == 0 &&
			strcmp(r->singular, "gizmothing") == 0,
			"missing singular is the lower-cased kind");
	ok(r && r->verbs && !r->verbs[0] && r->short_names && !r->short_names[0],
			"null verbs and shortNames are empty vectors");
	is_int(kinf_discovery_resolve(d, "nokinds", &r, NULL), -KINF_ENOTFOUND,
			"a resource without responseKind is skipped");
	ok(kinf_discovery_resolve(d, "things", &r, NULL) == 0 &&
			strcmp(r->kind, "Thing") == 0, "a duplicate resource is ignored");
	is_int(kinf_discovery_count(d), 2, "two resources");
	is_int(kinf_discovery_resolve(d, "", &r, &err), -KINF_EINVAL,
			"empty name is invalid");
	kinf_discovery_free(d);

	/* Nothing at all. */
	d = NULL;
	ok(kinf_discovery_from_aggregated(NULL, 0, NULL, 0, &d, NULL) == 0 &&
			kinf_discovery_count(d) == 0, "no documents: empty discovery");
	err = (struct kinf_error){0};
	is_int(kinf_discovery_resolve(d, "pods", &r, &err), -KINF_EHTTP,
			"empty discovery resolves nothing");
	is_str(err.message, "the server could not find the requested resource "
			"(no API at /api or /apis)", "the server's fault, not the name's");
	kinf_discovery_free(d);
}

struct bad {
	const char *doc;
	const char *message;	/* NULL: any */
};

static void test_malformed(void) {
	static const struct bad table[] = {
		{ "", NULL },
		{ "{", NULL },
		{ "[]", "/apis: document: object expected" },
		{ "null", NULL },
		{ "\"items\"", NULL },
		{ "{\"items\":[]} x", NULL },
		{ "{\"items\":[],\"items\":[]}", NULL },
		{ "{\"items\":{}}", "/apis: items: array expected" },
		{ "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"]}",
			"/apis: kind APIVersions, expected APIGroupDiscoveryList" },
		{ "{\"kind\":7}", "/apis: kind: string expected" },
		{ "{\"items\":[1]}", "/apis: items[0]: object expected" },
		{ "{\"items\":[{\"metadata\":[]}]}",
			"/apis: items[0].metadata: object expected" },
		{ "{\"items\":[{\"metadata\":{\"name\":5}}]}",
			"/apis: items[0].metadata.name: string expected" },
		{ "{\"items\":[{\"versions\":{}}]}",
			"/apis: items[0].versions: array expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"\"}]}]}",
			"/apis: items[0].versions[0].version: non-empty string expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":1}]}]}",
			"/apis: items[0].versions[0].version: string expected" },
		{ "{\"items\":[{\"versions\":[\"v1\"]}]}",
			"/apis: items[0].versions[0]: object expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":7}]}]}]}",
			"/apis: items[0].versions[0].resources[0].resource: "
			"string expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":\"\"}]}]}]}",
			"/apis: items[0].versions[0].resources[0].resource: "
			"non-empty string expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":\"pods\",\"verbs\":\"get\"}]}]}]}",
			"/apis: items[0].versions[0].resources[0].verbs: array expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":\"pods\",\"shortNames\":[\"po\",1]}]}]}]}",
			"/apis: items[0].versions[0].resources[0].shortNames[1]: "
			"string expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":\"pods\",\"scope\":true}]}]}]}",
			"/apis: items[0].versions[0].resources[0].scope: string expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":\"pods\",\"responseKind\":\"Pod\"}]}]}]}",
			"/apis: items[0].versions[0].resources[0].responseKind: "
			"object expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":\"pods\",\"responseKind\":{\"kind\":[]}}]}]}]}",
			"/apis: items[0].versions[0].resources[0].responseKind.kind: "
			"string expected" },
		{ "{\"items\":[{\"versions\":[{\"version\":\"v1\",\"resources\":"
			"[{\"resource\":\"pods\",\"subresources\":{}}]}]}]}",
			"/apis: items[0].versions[0].resources[0].subresources: "
			"array expected" },
		{ "{\"items\":[{\"metadata\":{\"name\":\"\xff\"}}]}", NULL },
	};
	static char sentinel;
	size_t len = 0;
	char *real = slurp(FIXTURES "/aggregated-apis.json", &len);

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct kinf_discovery *d = (struct kinf_discovery *)&sentinel;
		struct kinf_error err = {0};
		int rc = kinf_discovery_from_aggregated(NULL, 0, table[i].doc,
				strlen(table[i].doc), &d, &err);
		is_int(rc, -KINF_EJSON, "malformed document %zu is an error", i);
		ok(d == (struct kinf_discovery *)&sentinel,
				"malformed document %zu: ret untouched", i);
		if (table[i].message) {
			is_str(err.message, table[i].message, "malformed document %zu: message",
					i);
		} else {
			ok(strncmp(err.message, "/apis: ", 7) == 0,
					"malformed document %zu: message names the document (%s)",
					i, err.message);
		}
	}
	/* A real document cut anywhere fails cleanly (ASan checks the rest). */
	if (real) {
		size_t fails = 0, cuts = 0;
		for (size_t cut = 0; cut < len - 2; cut += 97) {
			struct kinf_discovery *d = NULL;
			cuts++;
			if (kinf_discovery_from_aggregated(NULL, 0, real, cut, &d,
					NULL) == -KINF_EJSON && d == NULL) {
				fails++;
			}
			kinf_discovery_free(d);
		}
		is_int(fails, cuts, "every truncation of the /apis fixture is an error");
		{
			struct kinf_discovery *d = NULL;
			struct kinf_error err = {0};
			ok(kinf_discovery_from_aggregated(real, len / 2, NULL, 0, &d,
					&err) == -KINF_EJSON &&
					strncmp(err.message, "/api: line 1, column ", 21) == 0,
					"a truncated /api names the document and position (%s)",
					err.message);
		}
	} else {
		ok(0, "aggregated-apis.json readable");
	}
	free(real);
}

int main(void) {
	test_aggregated();
	test_edge_documents();
	test_malformed();
	return tap_done();
}
