#include "discovery-test.h"

/*
 * The legacy documents (src/discovery/legacy.c): APIVersions,
 * APIGroupList and APIResourceList from a server without aggregated
 * discovery, and the fallbacks to them.
 */

static void test_load_legacy(const char *tmp) {
	struct fake f = { .mode = FAKE_LEGACY };
	struct kinf_discovery *d = NULL;
	struct kinf_error err = {0};
	const struct kinf_resource *r = NULL;
	struct kinf_buf dir = {0}, file = {0};
	struct stat st;
	int rc = load(&f, "", false, 0, &d, &err);
	bool accepts_ok = true;

	if (!ok(rc == 0, "legacy load")) {
		printf("#   %s\n", err.message);
		fake_release(&f);
		return;
	}
	is_int(f.requests, 3 + N_GROUP_VERSIONS,
			"legacy: /api, /api/v1, /apis and every group version");
	ok(f.paths.n > 3 && strcmp(f.paths.v[0], "/api") == 0 &&
			strcmp(f.paths.v[1], "/api/v1") == 0 &&
			strcmp(f.paths.v[2], "/apis") == 0 &&
			strcmp(f.paths.v[3], "/apis/apiregistration.k8s.io/v1") == 0,
			"legacy request order");
	ok(kinf_strv_contains(&f.paths, "/apis/autoscaling/v1") &&
			kinf_strv_contains(&f.paths, "/apis/autoscaling/v2") &&
			kinf_strv_contains(&f.paths, "/apis/stable.example.com/v1beta1"),
			"non-preferred versions are fetched too");
	for (size_t i = 0; i < f.accepts.n; i++) {
		const char *want = i == 0 || i == 2 ? KINF_DISCOVERY_ACCEPT :
				"application/json";
		if (strcmp(f.accepts.v[i], want) != 0) {
			accepts_ok = false;
		}
	}
	ok(accepts_ok, "legacy group versions are asked for application/json");
	ok(!kinf_discovery_partial(d), "legacy load is complete");
	check_fixture_api(d, "legacy");
	kinf_discovery_free(d);

	/* preferredVersion wins even when listed last. */
	d = NULL;
	f.body_path = "/apis";
	f.body = "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{"
		"\"name\":\"autoscaling\",\"versions\":["
		"{\"groupVersion\":\"autoscaling/v1\",\"version\":\"v1\"},"
		"{\"groupVersion\":\"autoscaling/v2\",\"version\":\"v2\"}],"
		"\"preferredVersion\":{\"groupVersion\":\"autoscaling/v2\","
		"\"version\":\"v2\"}}]}";
	rc = load(&f, "", false, 0, &d, &err);
	ok(rc == 0 && kinf_discovery_resolve(d, "hpa", &r, NULL) == 0 &&
			strcmp(r->version, "v2") == 0,
			"legacy: preferredVersion first even when listed last");
	ok(rc == 0 && f.paths.n == 5 &&
			strcmp(f.paths.v[3], "/apis/autoscaling/v2") == 0 &&
			strcmp(f.paths.v[4], "/apis/autoscaling/v1") == 0,
			"legacy: the preferred version is fetched first");
	ok(rc == 0 && kinf_discovery_resolve(d,
			"horizontalpodautoscalers.v1.autoscaling", &r, NULL) == 0 &&
			strcmp(r->version, "v1") == 0, "legacy: the other version is there");
	kinf_discovery_free(d);
	f.body_path = NULL;

	/* An unavailable aggregated API: that version is left out. */
	must(kinf_buf_printf(&dir, "%s/legacy-partial", tmp));
	d = NULL;
	f.fail_path = "/apis/stable.example.com/v1";
	f.fail_code = KINF_EHTTP;
	f.fail_status = 503;
	rc = load(&f, dir.data, false, 0, &d, &err);
	ok(rc == 0, "a failing group version is not fatal");
	ok(rc == 0 && kinf_discovery_partial(d), "but the result is partial");
	ok(rc == 0 && kinf_discovery_resolve(d, "ct", &r, NULL) == 0 &&
			strcmp(r->version, "v1beta1") == 0,
			"the other version of that group still resolves");
	must(kinf_buf_printf(&file, "%s/discovery/127.0.0.1_6443/discovery.json",
			dir.data));
	ok(stat(file.data, &st) < 0 && errno == ENOENT,
			"a partial result is not cached");
	kinf_discovery_free(d);

	/* Every version of a group failing drops the group. */
	d = NULL;
	f.fail_path = "/apis/example.com/v1";
	rc = load(&f, "", false, 0, &d, &err);
	ok(rc == 0 && kinf_discovery_resolve(d, "wd", &r, NULL) == -KINF_ENOTFOUND,
			"a group with no readable version is gone");
	kinf_discovery_free(d);

	/* A transport error is fatal. */
	d = NULL;
	f.fail_path = "/apis/apps/v1";
	f.fail_code = KINF_ECONNECT;
	f.fail_status = 0;
	err = (struct kinf_error){0};
	rc = load(&f, "", false, 0, &d, &err);
	is_int(rc, -KINF_ECONNECT, "a transport error fails the load");
	ok(d == NULL, "and returns nothing");
	is_str(err.message, "injected failure 0", "with the transport's message");

	/* Malformed legacy documents are errors. */
	f.fail_path = NULL;
	{
		static const struct {
			const char *path;
			const char *body;
			const char *message;
		} table[] = {
			{ "/api", "{\"versions\":[1]}",
				"/api: versions[0]: non-empty string expected" },
			{ "/api", "{\"kind\":\"APIGroupList\"}",
				"/api: kind APIGroupList, expected APIVersions" },
			{ "/api", "{\"kind\":\"APIGroupDiscoveryList\",\"items\":[]}",
				"/api: kind APIGroupDiscoveryList, expected APIVersions" },
			{ "/apis", "{\"groups\":[{\"versions\":[]}]}",
				"/apis: groups[0].name: non-empty string expected" },
			{ "/apis", "{\"groups\":[{\"name\":\"apps\",\"versions\":[7]}]}",
				"/apis: groups[0].versions[0]: object expected" },
			{ "/apis", "{\"groups\":[{\"name\":\"apps\",\"preferredVersion\":1}]}",
				"/apis: groups[0].preferredVersion: object expected" },
			{ "/api/v1", "{\"resources\":{}}",
				"/api/v1: resources: array expected" },
			{ "/apis/apps/v1", "{\"resources\":[{\"name\":\"deployments\","
				"\"namespaced\":\"yes\"}]}",
				"/apis/apps/v1: resources[0].namespaced: boolean expected" },
			{ "/apis/apps/v1", "{\"resources\":[{\"name\":\"\"}]}",
				"/apis/apps/v1: resources[0].name: non-empty string expected" },
			{ "/apis/apps/v1", "{\"resources\":[{\"name\":\"d\",\"verbs\":[null]}]}",
				"/apis/apps/v1: resources[0].verbs[0]: string expected" },
			{ "/apis/apps/v1", "{\"resources\":[", NULL },
		};
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
			d = NULL;
			err = (struct kinf_error){0};
			f.body_path = table[i].path;
			f.body = table[i].body;
			rc = load(&f, "", false, 0, &d, &err);
			is_int(rc, -KINF_EJSON, "malformed legacy %s %zu is an error",
					table[i].path, i);
			ok(d == NULL, "malformed legacy %zu: nothing returned", i);
			if (table[i].message) {
				is_str(err.message, table[i].message,
						"malformed legacy %zu: message", i);
			}
			kinf_discovery_free(d);
		}
		f.body_path = NULL;
	}
	fake_release(&f);
	kinf_buf_release(&dir);
	kinf_buf_release(&file);
}

int main(void) {
	char tmpl[] = "/tmp/kinf-test-discovery-legacy-XXXXXX";
	const char *tmp = disc_test_begin(tmpl);

	test_load_legacy(tmp);
	return disc_test_end(tmp);
}
