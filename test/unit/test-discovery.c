#include "discovery-test.h"

/*
 * Discovery's requests (src/discovery/fetch.c): the aggregated Accept
 * header and the Content-Types that answer it, a load from a server with
 * aggregated discovery, and the errors that fail a load or do not. The
 * other parts have test-discovery-aggregated, -legacy, -restmapper and
 * -cache.
 */

static void test_content_types(void) {
	static const struct {
		const char *ct;
		bool aggregated;
	} table[] = {
		{ AGG_V2, true },
		{ AGG_V2BETA1, true },
		{ "application/json; as=APIGroupDiscoveryList; v=v2; "
			"g=apidiscovery.k8s.io", true },
		{ "Application/JSON;G=apidiscovery.k8s.io;V=v2;AS=APIGroupDiscoveryList",
			true },
		{ "application/json;g=\"apidiscovery.k8s.io\";v=\"v2\";"
			"as=\"APIGroupDiscoveryList\"", true },
		{ "application/json;charset=utf-8;g=apidiscovery.k8s.io;v=v2;"
			"as=APIGroupDiscoveryList", true },
		{ "application/json", false },
		{ "application/json; charset=utf-8", false },
		{ NULL, false },
		{ "", false },
		{ "application/json;g=apidiscovery.k8s.io;v=v1;as=APIGroupDiscoveryList",
			false },
		{ "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscovery",
			false },
		{ "application/json;g=apidiscovery.k8s.io;v=v2", false },
		{ "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
			false },
		{ "application/jsonx;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
			false },
		{ "application/json;g=apidiscovery.k8s.io;v=V2;as=APIGroupDiscoveryList",
			false },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		is_int(kinf_discovery_is_aggregated(table[i].ct), table[i].aggregated,
				"content type %s", table[i].ct ? table[i].ct : "(null)");
	}
}

static void test_load_aggregated(void) {
	struct fake f = { .mode = FAKE_AGGREGATED };
	struct kinf_discovery *d = NULL;
	struct kinf_error err = {0};
	int rc = load(&f, "", false, 0, &d, &err);

	if (!ok(rc == 0, "aggregated load")) {
		printf("#   %s\n", err.message);
		fake_release(&f);
		return;
	}
	is_int(f.requests, 2, "aggregated discovery takes two requests");
	ok(f.paths.n == 2 && strcmp(f.paths.v[0], "/api") == 0 &&
			strcmp(f.paths.v[1], "/apis") == 0, "GET /api then /apis");
	ok(f.accepts.n == 2 && strcmp(f.accepts.v[0], KINF_DISCOVERY_ACCEPT) == 0 &&
			strcmp(f.accepts.v[1], KINF_DISCOVERY_ACCEPT) == 0,
			"with the aggregated Accept header");
	is_str(KINF_DISCOVERY_ACCEPT,
			"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
			"application/json;g=apidiscovery.k8s.io;v=v2beta1;"
			"as=APIGroupDiscoveryList,application/json",
			"the Accept header is client-go's");
	check_fixture_api(d, "load-aggregated");
	kinf_discovery_free(d);

	d = NULL;
	f.mode = FAKE_AGGREGATED_V2BETA1;
	rc = load(&f, "", false, 0, &d, &err);
	ok(rc == 0 && f.requests == 2, "a v2beta1 answer is aggregated too");
	if (rc == 0) {
		check_resolve_table(d, "load-v2beta1");
	}
	kinf_discovery_free(d);
	fake_release(&f);
}

static void test_load_errors(void) {
	struct fake f = { .mode = FAKE_NOTHING };
	struct kinf_discovery *d = NULL;
	struct kinf_error err = {0};
	const struct kinf_resource *r = NULL;
	int rc = load(&f, "", false, 0, &d, &err);

	ok(rc == 0 && kinf_discovery_count(d) == 0,
			"404 on /api and /apis: empty discovery, as client-go");
	is_int(f.requests, 2, "and no more requests");
	is_int(kinf_discovery_resolve(d, "pods", &r, NULL), -KINF_EHTTP,
			"nothing resolves, and that is the server's fault, not the name's");
	kinf_discovery_free(d);

	d = NULL;
	f.mode = FAKE_AGGREGATED;
	f.fail_path = "/apis";
	f.fail_code = KINF_EHTTP;
	f.fail_status = 406;
	rc = load(&f, "", false, 0, &d, &err);
	ok(rc == 0, "406 on /apis is not an error");
	ok(rc == 0 && kinf_discovery_resolve(d, "pods", &r, NULL) == 0 &&
			kinf_discovery_resolve(d, "deploy", &r, NULL) == -KINF_ENOTFOUND,
			"core only");
	kinf_discovery_free(d);

	d = NULL;
	f.fail_status = 403;
	err = (struct kinf_error){0};
	rc = load(&f, "", false, 0, &d, &err);
	is_int(rc, -KINF_EHTTP, "403 on /apis fails the load");
	ok(d == NULL, "and returns nothing");

	f.fail_path = "/api";
	f.fail_code = KINF_EAUTH;
	f.fail_status = 401;
	rc = load(&f, "", false, 0, &d, &err);
	is_int(rc, -KINF_EAUTH, "401 on /api fails the load");
	ok(d == NULL, "and returns nothing");
	fake_release(&f);
}

int main(void) {
	test_content_types();
	test_load_aggregated();
	test_load_errors();
	return tap_done();
}
