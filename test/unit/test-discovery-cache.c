#include "discovery-test.h"

/*
 * The disk cache (src/discovery/diskcache.c): where it lives, cold and
 * warm loads, the TTL, another server's cache, corrupt files, the
 * refresh.
 */

static void test_cache_dirs(const char *tmp) {
	struct kinf_discovery_opts opts = { .cache_dir = "/c" };
	struct kinf_buf want = {0};
	char *dir;
	char *old_xdg = getenv("XDG_CACHE_HOME") ?
			strdup(getenv("XDG_CACHE_HOME")) : NULL;
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	static const struct {
		const char *server;
		const char *dir;
	} table[] = {
		{ "https://127.0.0.1:6443", "/c/discovery/127.0.0.1_6443" },
		{ "http://127.0.0.1:8080", "/c/discovery/127.0.0.1_8080" },
		{ "https://[::1]:6443/prefix", "/c/discovery/___1__6443_prefix" },
		{ "https://api.example.com", "/c/discovery/api.example.com" },
		{ "https://kube-api_1.example.com:443",
			"/c/discovery/kube-api_1.example.com_443" },
		{ "https://..", "/c/discovery/.._" },
		{ "https://", "/c/discovery/_" },
		{ "https://a/../../etc", "/c/discovery/a_.._.._etc" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		dir = kinf_discovery_cache_dir(table[i].server, &opts);
		is_str(dir, table[i].dir, "cache dir for %s", table[i].server);
		free(dir);
	}
	opts.cache_dir = "";
	ok(kinf_discovery_cache_dir(SERVER, &opts) == NULL, "\"\" disables the cache");

	setenv("XDG_CACHE_HOME", tmp, 1);
	must(kinf_buf_printf(&want, "%s/kinf/discovery/127.0.0.1_6443", tmp));
	dir = kinf_discovery_cache_dir(SERVER, NULL);
	is_str(dir, want.data, "$XDG_CACHE_HOME/kinf");
	free(dir);

	setenv("XDG_CACHE_HOME", "relative/dir", 1);
	setenv("HOME", "/home/someone", 1);
	dir = kinf_discovery_cache_dir(SERVER, NULL);
	is_str(dir, "/home/someone/.cache/kinf/discovery/127.0.0.1_6443",
			"relative $XDG_CACHE_HOME ignored: ~/.cache/kinf");
	free(dir);

	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	ok(kinf_discovery_cache_dir(SERVER, NULL) == NULL,
			"no $HOME and no $XDG_CACHE_HOME: no cache");

	if (old_xdg) {
		setenv("XDG_CACHE_HOME", old_xdg, 1);
	}
	if (old_home) {
		setenv("HOME", old_home, 1);
	}
	free(old_xdg);
	free(old_home);
	kinf_buf_release(&want);
}

static void test_cache(const char *tmp) {
	struct fake f = { .mode = FAKE_AGGREGATED };
	struct kinf_discovery *d = NULL;
	struct kinf_error err = {0};
	struct kinf_buf base = {0}, dir = {0}, file = {0};
	const struct kinf_resource *r = NULL;
	struct stat st;
	time_t now = time(NULL);
	int rc;

	must(kinf_buf_printf(&base, "%s/cache", tmp));
	must(kinf_buf_printf(&dir, "%s/discovery/127.0.0.1_6443", base.data));
	must(kinf_buf_printf(&file, "%s/discovery.json", dir.data));

	/* Cold: fetch and write. */
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0 && f.requests == 2, "cold cache: two requests");
	ok(rc == 0 && !kinf_discovery_from_cache(d), "cold cache: from the server");
	kinf_discovery_free(d);
	d = NULL;
	ok(stat(file.data, &st) == 0 && S_ISREG(st.st_mode), "cache file written");
	is_int(st.st_mode & 0777, 0600, "cache file mode 0600");
	ok(stat(dir.data, &st) == 0 && S_ISDIR(st.st_mode), "cache dir created");
	is_int(st.st_mode & 0777, 0700, "cache dir mode 0700");
	ok(stat(base.data, &st) == 0 && (st.st_mode & 0777) == 0700,
			"parent dirs made 0700");
	{
		DIR *dh = opendir(dir.data);
		struct dirent *e;
		size_t n = 0;
		while (dh && (e = readdir(dh))) {
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
				n++;
			}
		}
		if (dh) {
			closedir(dh);
		}
		is_int(n, 1, "no temporary file left behind");
	}

	/* Warm: zero requests, same answers. */
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0, "warm cache loads");
	is_int(f.requests, 0, "warm cache: zero requests");
	ok(rc == 0 && kinf_discovery_from_cache(d), "warm cache: from the cache");
	if (rc == 0) {
		check_fixture_api(d, "cached");
	}
	kinf_discovery_free(d);
	d = NULL;

	/* --refresh ignores it (and rewrites it). */
	rc = load(&f, base.data, true, 0, &d, &err);
	ok(rc == 0 && f.requests == 2 && !kinf_discovery_from_cache(d),
			"refresh: fetched again");
	kinf_discovery_free(d);
	d = NULL;

	/* Older than the TTL: stale. */
	ok(set_fetch_time(file.data, (long long)now - 7 * 3600, NULL) == 0,
			"age the cache to 7 hours");
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0 && f.requests == 2, "7 hours old with the 6 hour TTL: refetched");
	kinf_discovery_free(d);
	d = NULL;
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0 && f.requests == 0, "and fresh again afterwards");
	kinf_discovery_free(d);
	d = NULL;

	set_fetch_time(file.data, (long long)now - 7 * 3600, NULL);
	rc = load(&f, base.data, false, 8 * 3600, &d, &err);
	ok(rc == 0 && f.requests == 0, "7 hours old with an 8 hour TTL: fresh");
	kinf_discovery_free(d);
	d = NULL;

	set_fetch_time(file.data, (long long)now - 100, NULL);
	rc = load(&f, base.data, false, 60, &d, &err);
	ok(rc == 0 && f.requests == 2, "100 s old with a 60 s TTL: stale");
	kinf_discovery_free(d);
	d = NULL;

	set_fetch_time(file.data, (long long)now + 3600, NULL);
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0 && f.requests == 2, "a fetch time in the future: stale");
	kinf_discovery_free(d);
	d = NULL;

	/* Another server's cache in the same directory is not used. */
	set_fetch_time(file.data, (long long)now, "http://127.0.0.1:6443");
	rc = load(&f, base.data, false, 0, &d, &err);
	ok(rc == 0 && f.requests == 2, "a cache for another server: refetched");
	kinf_discovery_free(d);
	d = NULL;

	/* Corrupt files are ignored, refetched and replaced. */
	{
		static const char *const corrupt[] = {
			"",
			"{\"kind\":\"KinfDiscoveryCache\",",
			"garbage",
			"[]",
			"{\"kind\":\"Other\",\"version\":1}",
			"{\"kind\":\"KinfDiscoveryCache\",\"version\":2}",
			"{\"kind\":\"KinfDiscoveryCache\",\"version\":1,"
				"\"server\":\"" SERVER "\",\"fetchTime\":\"now\"}",
			"{\"kind\":\"KinfDiscoveryCache\",\"version\":1,"
				"\"server\":\"" SERVER "\",\"fetchTime\":%lld}",
			"{\"kind\":\"KinfDiscoveryCache\",\"version\":1,"
				"\"server\":\"" SERVER "\",\"fetchTime\":%lld,"
				"\"discovery\":{\"items\":{}}}",
			"{\"kind\":\"KinfDiscoveryCache\",\"version\":1,"
				"\"server\":\"" SERVER "\",\"fetchTime\":%lld,"
				"\"discovery\":{\"items\":[{\"versions\":[{\"version\":7}]}]}}",
		};
		for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
			struct kinf_buf text = {0};
			must(kinf_buf_printf(&text, corrupt[i], (long long)now));
			ok(spew(file.data, text.data) == 0, "corrupt cache %zu written", i);
			rc = load(&f, base.data, false, 0, &d, &err);
			ok(rc == 0 && f.requests == 2 && !kinf_discovery_from_cache(d) &&
					kinf_discovery_resolve(d, "deploy", &r, NULL) == 0,
					"corrupt cache %zu: ignored and refetched", i);
			kinf_discovery_free(d);
			d = NULL;
			rc = load(&f, base.data, false, 0, &d, &err);
			ok(rc == 0 && f.requests == 0, "corrupt cache %zu: replaced", i);
			kinf_discovery_free(d);
			d = NULL;
			kinf_buf_release(&text);
		}
	}

	/* A cache path that cannot be created is not fatal either. */
	{
		struct kinf_buf blocked = {0};
		must(kinf_buf_printf(&blocked, "%s/blocked", tmp));
		spew(blocked.data, "a file, not a directory");
		rc = load(&f, blocked.data, false, 0, &d, &err);
		ok(rc == 0 && f.requests == 2, "unwritable cache dir: loads anyway");
		kinf_discovery_free(d);
		d = NULL;
		kinf_buf_release(&blocked);
	}

	/* "" disables the cache both ways. */
	rc = load(&f, "", false, 0, &d, &err);
	ok(rc == 0 && f.requests == 2, "cache disabled: fetched");
	kinf_discovery_free(d);
	d = NULL;

	/* A legacy server's discovery round-trips through the cache too. */
	{
		struct kinf_buf lbase = {0};
		must(kinf_buf_printf(&lbase, "%s/legacy-cache", tmp));
		f.mode = FAKE_LEGACY;
		rc = load(&f, lbase.data, false, 0, &d, &err);
		ok(rc == 0 && f.requests == 3 + N_GROUP_VERSIONS, "legacy: cold");
		kinf_discovery_free(d);
		d = NULL;
		rc = load(&f, lbase.data, false, 0, &d, &err);
		ok(rc == 0 && f.requests == 0, "legacy: warm cache, zero requests");
		if (rc == 0) {
			check_fixture_api(d, "legacy-cached");
		}
		kinf_discovery_free(d);
		d = NULL;
		kinf_buf_release(&lbase);
	}

	fake_release(&f);
	kinf_buf_release(&base);
	kinf_buf_release(&dir);
	kinf_buf_release(&file);
}

int main(void) {
	char tmpl[] = "/tmp/kinf-test-discovery-cache-XXXXXX";
	const char *tmp = disc_test_begin(tmpl);

	test_cache_dirs(tmp);
	test_cache(tmp);
	return disc_test_end(tmp);
}
