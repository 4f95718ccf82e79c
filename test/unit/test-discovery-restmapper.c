#include "discovery-test.h"

/*
 * Resolution as kubectl's RESTMapper does it (src/discovery/restmapper.c):
 * core first wherever the server lists it, collection paths, and the
 * deferred RESTMapper (a name missing from the disk cache is asked of the
 * server once more).
 */

static void test_core_first_anywhere(void) {
	struct kinf_discovery *d = NULL;
	const struct kinf_resource *r = NULL;
	const char *doc =
		"{\"kind\":\"APIGroupDiscoveryList\",\"items\":["
		"{\"metadata\":{\"name\":\"events.k8s.io\"},\"versions\":[{\"version\":"
		"\"v1\",\"resources\":[{\"resource\":\"events\",\"responseKind\":"
		"{\"kind\":\"Event\"},\"scope\":\"Namespaced\",\"singularResource\":"
		"\"event\",\"shortNames\":[\"ev\"]}]}]},"
		"{\"metadata\":{},\"versions\":[{\"version\":\"v1\",\"resources\":["
		"{\"resource\":\"events\",\"responseKind\":{\"kind\":\"Event\"},"
		"\"scope\":\"Namespaced\",\"singularResource\":\"event\","
		"\"shortNames\":[\"ev\"]}]}]}]}";

	if (!ok(kinf_discovery_from_aggregated(NULL, 0, doc, strlen(doc), &d,
			NULL) == 0, "core listed after a group parses")) {
		return;
	}
	ok(kinf_discovery_resolve(d, "ev", &r, NULL) == 0 && r->group[0] == '\0',
			"core wins even when listed last");
	kinf_discovery_free(d);
}

static void test_paths(void) {
	static const struct {
		const char *name;
		const char *namespace;
		const char *path;
	} table[] = {
		{ "pods", "default", "/api/v1/namespaces/default/pods" },
		{ "pods", NULL, "/api/v1/pods" },
		{ "pods", "", "/api/v1/pods" },
		{ "nodes", "default", "/api/v1/nodes" },
		{ "nodes", NULL, "/api/v1/nodes" },
		{ "deploy", "kube-system",
			"/apis/apps/v1/namespaces/kube-system/deployments" },
		{ "deployments.apps", NULL, "/apis/apps/v1/deployments" },
		{ "crd", "x", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" },
		{ "wd", "team-a", "/apis/example.com/v1/namespaces/team-a/widgets" },
		{ "crontabs.v1beta1.stable.example.com", NULL,
			"/apis/stable.example.com/v1beta1/crontabs" },
		{ "hpa", "ns1", "/apis/autoscaling/v2/namespaces/ns1/horizontalpodautoscalers" },
	};
	struct kinf_discovery *d = load_fixture_aggregated();

	if (!d) {
		return;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct kinf_resource *r = NULL;
		char *path = NULL;
		if (kinf_discovery_resolve(d, table[i].name, &r, NULL) == 0) {
			path = kinf_resource_path(r, table[i].namespace);
		}
		is_str(path, table[i].path, "path of %s in %s", table[i].name,
				table[i].namespace ? table[i].namespace : "(all)");
		free(path);
	}
	kinf_discovery_free(d);
}

/* Drop API group `group` from the cache file, as if its CRD came after the fetch. */
static int cache_drop_group(const char *file, const char *group) {
	json_error_t jerr;
	json_t *root = json_load_file(file, 0, &jerr);
	json_t *items = json_object_get(json_object_get(root, "discovery"), "items");
	int rc = -1;
	for (size_t i = 0; i < json_array_size(items); i++) {
		json_t *md = json_object_get(json_array_get(items, i), "metadata");
		const char *name = json_string_value(json_object_get(md, "name"));
		if (name && strcmp(name, group) == 0 && json_array_remove(items, i) == 0) {
			rc = json_dump_file(root, file, JSON_COMPACT);
			break;
		}
	}
	json_decref(root);
	return rc;
}

/*
 * client-go's DeferredDiscoveryRESTMapper: a name missing from a cached
 * discovery is asked of the server once more; what was resolved in the
 * cached one stays valid (ASan would see it freed).
 */
static void test_resolve_deferred(const char *tmp) {
	struct fake f = { .mode = FAKE_AGGREGATED };
	struct kinf_discovery *d = NULL, *cached;
	struct kinf_discovery_opts opts = {0};
	struct kinf_error err = {0};
	struct kinf_buf base = {0}, file = {0};
	const struct kinf_resource *pods = NULL, *r = NULL;
	int rc;

	must(kinf_buf_printf(&base, "%s/deferred", tmp));
	must(kinf_buf_printf(&file, "%s/discovery/127.0.0.1_6443/discovery.json", base.data));
	opts.cache_dir = base.data;
	ok(load(&f, base.data, false, 0, &d, &err) == 0 && cache_drop_group(file.data,
			"example.com") == 0, "a cache written, then the group of widgets left out");
	kinf_discovery_free(d);
	d = NULL;
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0 && kinf_discovery_from_cache(d) && f.requests == 0 &&
		kinf_discovery_resolve(d, "widgets", &r, NULL) == -KINF_ENOTFOUND,
		"the cached discovery lacks widgets");
	if (rc < 0) {
		goto out;
	}
	ok(kinf_discovery_resolve_deferred_with(&d, fake_fetch, &f, SERVER, &opts, "pods",
		&pods, &err) == 0 && f.requests == 0, "a name in the cache: no request");
	cached = d;
	rc = kinf_discovery_resolve_deferred_with(&d, fake_fetch, &f, SERVER, &opts,
			"widgets", &r, &err);
	ok(rc == 0 && strcmp(r->resource, "widgets") == 0 && strcmp(r->group, "example.com") == 0,
		"widgets, missing from the cache, found on the server");
	ok(f.requests == 2 && d != cached && !kinf_discovery_from_cache(d),
		"  one aggregated fetch, a new discovery (%lu requests)", f.requests);
	is_str(pods->resource, "pods", "  pods resolved in the cached one is still readable");
	f.requests = 0;
	rc = kinf_discovery_resolve_deferred_with(&d, fake_fetch, &f, SERVER, &opts, "podz",
			&r, &err);
	ok(rc == -KINF_ENOTFOUND && f.requests == 0 && strstr(err.message, "did you mean"),
		"an unknown name in a fresh discovery: no request, the suggestion");
	kinf_discovery_free(d);
	d = NULL;
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0 && kinf_discovery_from_cache(d) &&
		kinf_discovery_resolve(d, "widgets", &r, NULL) == 0,
		"the refresh rewrote the cache: widgets is in it");
	rc = kinf_discovery_resolve_deferred_with(&d, fake_fetch, &f, SERVER, &opts, "podz",
			&r, &err);
	ok(rc == -KINF_ENOTFOUND && f.requests == 2 && strstr(err.message, "did you mean"),
		"an unknown name in a cached discovery: asked once, then not found");
	kinf_discovery_free(d);
	d = NULL;
	ok(load(&f, base.data, false, 0, &d, &err) == 0 && kinf_discovery_from_cache(d),
		"cached again");
	f.fail_path = "/api";
	f.fail_code = KINF_EAUTH;
	f.fail_status = 401;
	cached = d;
	rc = kinf_discovery_resolve_deferred_with(&d, fake_fetch, &f, SERVER, &opts, "podz",
			&r, &err);
	ok(rc == -KINF_EAUTH && d == cached && strncmp(err.message, "discovery: ", 11) == 0,
		"the server fails the reload: its error, prefixed (%s); the cached one kept",
		err.message);
out:
	kinf_discovery_free(d);
	fake_release(&f);
	kinf_buf_release(&base);
	kinf_buf_release(&file);
}

int main(void) {
	char tmpl[] = "/tmp/kinf-test-discovery-restmapper-XXXXXX";
	const char *tmp = disc_test_begin(tmpl);

	test_core_first_anywhere();
	test_paths();
	test_resolve_deferred(tmp);
	return disc_test_end(tmp);
}
