/*
 * kubectl's --sort-by order (kubectl/pkg/cmd/get/sorter.go): strings byte
 * by byte, quantities, numbers, missing fields first, stable, and what
 * cannot be sorted.
 */
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "sortby.h"
#include "tap.h"

static int sign(int c) {
	return c < 0 ? -1 : c > 0;
}

static void is_order(const char *a, const char *b, int want) {
	is_int(sign(kinf_sortby_compare_strings(a, b)), want, "\"%s\" vs \"%s\"", a, b);
	is_int(sign(kinf_sortby_compare_strings(b, a)), -want, "\"%s\" vs \"%s\"", b, a);
}

static void test_strings(void) {
	/* byte by byte, as kubectl 1.31 and later (not sortorder's natural order) */
	is_order("a", "b", -1);
	is_order("pod-10", "pod-9", -1);
	is_order("web-10", "web-2", -1);
	is_order("api-68kw5", "api-6j5v5", -1);
	is_order("abc", "abcd", -1);
	is_order("Z", "a", -1);
	is_order("x", "x", 0);
	is_order("10.244.1.12", "10.244.1.9", -1);	/* no quantity: text */
}

static void test_quantities(void) {
	is_order("100m", "1", -1);
	is_order("1Gi", "1G", 1);
	is_order("1Ki", "1000", 1);
	is_order("1024", "1Ki", 0);
	is_order("2e3", "1k", 1);
	is_order("2E3", "2000", 0);
	is_order("1.5", "1500m", 0);
	is_order("-1", "0", -1);
	is_order("0.1n", "1n", 0);	/* rounded up to the nano */
	is_order("0.5n", "0.9n", 0);
	is_order("-0.5n", "-1n", 0);	/* away from zero */
	is_order("9Ei", "8Ei", 0);	/* both capped at 2^63-1 */
	is_order("512Mi", "1Gi", -1);
	is_order("3", "20", -1);	/* quantities, not text */
	is_order("1e", "1E", 1);	/* "1e" is no quantity: text */
	is_order("abc", "100m", 1);	/* one is none: text */
	is_order("m", "0", 0);		/* a bare suffix is zero */
}

static void test_numbers(void) {
	json_t *i3 = json_integer(3), *r25 = json_real(2.5), *r3 = json_real(3.0);
	json_t *big = json_integer(9007199254740993LL), *rbig = json_real(9007199254740992.0);
	json_t *r1e20 = json_real(1e20), *imax = json_integer(INT64_MAX);
	is_int(sign(kinf_sortby_compare_numbers(i3, r25)), 1, "3 > 2.5 (an integer and a float)");
	is_int(sign(kinf_sortby_compare_numbers(r25, i3)), -1, "2.5 < 3");
	is_int(sign(kinf_sortby_compare_numbers(i3, r3)), 0, "3 == 3.0");
	is_int(sign(kinf_sortby_compare_numbers(big, rbig)), 1,
			"9007199254740993 > 9007199254740992.0, exactly");
	is_int(sign(kinf_sortby_compare_numbers(imax, r1e20)), -1, "int64 max < 1e20");
	json_decref(i3);
	json_decref(r25);
	json_decref(r3);
	json_decref(big);
	json_decref(rbig);
	json_decref(r1e20);
	json_decref(imax);
}

/* Sort the JSON array of keys (a "MISSING" string is no key); the order as indexes. */
static int sort_keys(const char *keys_json, char *out, size_t size, struct kinf_error *err) {
	json_t *keys = json_loads(keys_json, 0, NULL);
	size_t n = json_array_size(keys);
	struct kinf_sortby_item items[32];
	for (size_t i = 0; i < n; i++) {
		json_t *k = json_array_get(keys, i);
		items[i].key = json_is_string(k) && strcmp(json_string_value(k), "MISSING") == 0 ?
			NULL : k;
		items[i].index = i;
	}
	int rc = kinf_sortby_sort(".x", items, n, err);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(out);
		snprintf(out + len, size - len, "%s%zu", i ? " " : "", items[i].index);
	}
	json_decref(keys);
	return rc;
}

static void test_sort(void) {
	struct kinf_error err = {0};
	char got[256];
	is_int(sort_keys("[\"b\",\"MISSING\",null,\"a\",\"MISSING\"]", got, sizeof(got), &err), 0,
			"strings, nulls, missing");
	is_str(got, "1 4 2 3 0", "missing first (in order), then null, then the strings");
	is_int(sort_keys("[\"x\",\"x\",\"a\",\"x\"]", got, sizeof(got), &err), 0, "ties");
	is_str(got, "2 0 1 3", "equal keys keep their order (stable)");
	is_int(sort_keys("[10,2.5,-1,3,1e3]", got, sizeof(got), &err), 0, "numbers");
	is_str(got, "2 1 3 0 4", "integers and floats by value");
	is_int(sort_keys("[\"pod-9\",\"pod-10\",\"2\",\"100m\"]", got, sizeof(got), &err), 0,
			"text and quantity order");
	is_str(got, "3 2 1 0", "100m < 2 (quantities), then pod-10 < pod-9 (text), 2 < pod-10");
	is_int(sort_keys("[1,\"a\"]", got, sizeof(got), &err), -KINF_EINVAL,
			"a number and a string: not sortable");
	ok(strstr(err.message, "a number") && strstr(err.message, "a string"), "says so (%s)",
			err.message);
	is_str(got, "0 1", "and the items are left as they were");
	is_int(sort_keys("[true,false]", got, sizeof(got), &err), -KINF_EINVAL,
			"booleans: not sortable, as kubectl");
	is_int(sort_keys("[true,\"MISSING\"]", got, sizeof(got), &err), 0,
			"one boolean among missing fields is never compared");
	is_int(sort_keys("[\"MISSING\",\"MISSING\"]", got, sizeof(got), &err), -KINF_EINVAL,
			"no item has the field");
	is_str(err.message, "couldn't find any field with path \"{.x}\" in the list of objects",
			"kubectl's words");
	is_int(sort_keys("[]", got, sizeof(got), &err), 0, "nothing to sort");
	json_t *obj = json_loads("{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"1\"}}}", 0, NULL);
	json_t *k = kinf_sortby_key("{.metadata.labels.x}", obj);
	is_str(json_string_value(k), "1", "the key of an object");
	json_decref(k);
	ok(kinf_sortby_key("metadata.nothere", obj) == NULL, "no key: NULL");
	json_decref(obj);
	is_int(kinf_sortby_check(".metadata.name", &err), 0, "a relaxed path");
	is_int(kinf_sortby_check("{.a}{.b}", &err), -KINF_EINVAL, "two expressions: refused");
}

int main(void) {
	test_strings();
	test_quantities();
	test_numbers();
	test_sort();
	return tap_done();
}
