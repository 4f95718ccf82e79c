/*
 * The number model (jsonnum.h): Go's value of a literal, its %v and its
 * encoding/json text (the table below is what go1.21 printed for each
 * literal, decoded by sigs.k8s.io/json with PreserveInts as kube-apiserver
 * and kubectl decode), exact comparison, YAML literals, and the jansson
 * loader.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gofloat.h"
#include "jsonnum.h"
#include "tap.h"

static const struct {
	const char *lit, *type, *value, *json;	/* type NULL: Go refuses it */
} go[] = {
	{ "42", "int64", "42", "42" },
	{ "-0", "int64", "0", "0" },
	{ "0", "int64", "0", "0" },
	{ "9223372036854775807", "int64", "9223372036854775807", "9223372036854775807" },
	{ "-9223372036854775808", "int64", "-9223372036854775808", "-9223372036854775808" },
	{ "9223372036854775808", "float64", "9.223372036854776e+18", "9223372036854776000" },
	{ "-9223372036854775809", "float64", "-9.223372036854776e+18", "-9223372036854776000" },
	{ "1e3", "float64", "1000", "1000" },
	{ "1.0", "float64", "1", "1" },
	{ "100000000000000000000", "float64", "1e+20", "100000000000000000000" },
	{ "12345678901234567890", "float64", "1.2345678901234567e+19", "12345678901234567000" },
	{ "-12345678901234567890", "float64", "-1.2345678901234567e+19", "-12345678901234567000" },
	{ "9007199254740993", "int64", "9007199254740993", "9007199254740993" },
	{ "1e20", "float64", "1e+20", "100000000000000000000" },
	{ "1e21", "float64", "1e+21", "1e+21" },
	{ "1E+2", "float64", "100", "100" },
	{ "1.5e3", "float64", "1500", "1500" },
	{ "1e-7", "float64", "1e-07", "1e-7" },
	{ "1e-6", "float64", "1e-06", "0.000001" },
	{ "0.000001", "float64", "1e-06", "0.000001" },
	{ "0.00001", "float64", "1e-05", "0.00001" },
	{ "0.1", "float64", "0.1", "0.1" },
	{ "-0.0", "float64", "-0", "-0" },
	{ "-0e0", "float64", "-0", "-0" },
	{ "1e300", "float64", "1e+300", "1e+300" },
	{ "1e308", "float64", "1e+308", "1e+308" },
	{ "1.7976931348623157e308", "float64", "1.7976931348623157e+308", "1.7976931348623157e+308" },
	{ "1e400", NULL, NULL, NULL },
	{ "-1e400", NULL, NULL, NULL },
	{ "1e-400", "float64", "0", "0" },
	{ "-1e-400", "float64", "-0", "-0" },
	{ "5e-324", "float64", "5e-324", "5e-324" },
	{ "123456789012345678901234567890", "float64", "1.2345678901234568e+29", "1.2345678901234568e+29" },
	{ "1234567.5", "float64", "1.2345675e+06", "1234567.5" },
	{ "1e6", "float64", "1e+06", "1000000" },
	{ "1.5e-7", "float64", "1.5e-07", "1.5e-7" },
	{ "2.5e-10", "float64", "2.5e-10", "2.5e-10" },
	{ "6.02e23", "float64", "6.02e+23", "6.02e+23" },
	{ "0.3333333333333333", "float64", "0.3333333333333333", "0.3333333333333333" },
	{ "1e-5", "float64", "1e-05", "0.00001" },
	{ "-2.5e-300", "float64", "-2.5e-300", "-2.5e-300" },
	{ "999999999999999999999", "float64", "1e+21", "1e+21" },
	{ "1e22", "float64", "1e+22", "1e+22" },
};

static void go_values(void) {
	for (size_t i = 0; i < sizeof(go) / sizeof(*go); i++) {
		struct kinf_jsonnum v;
		char buf[KINF_JSONNUM_SIZE];
		int rc = kinf_jsonnum_parse(go[i].lit, strlen(go[i].lit), &v);
		if (!go[i].type) {
			is_int(rc, -KINF_ETOOBIG, "%s: beyond float64, refused as Go refuses it", go[i].lit);
			continue;
		}
		if (!ok(rc == 0, "%s parses", go[i].lit)) {
			continue;
		}
		is_str(v.type == KINF_JSONNUM_INT ? "int64" : "float64", go[i].type,
				"%s: Go's type", go[i].lit);
		is_str(kinf_jsonnum_format_value(&v, buf), go[i].value, "%s: Go's %%v", go[i].lit);
		if (v.type == KINF_JSONNUM_FLOAT) {
			char g[KINF_GOFLOAT_SIZE];
			is_str(kinf_gofloat_format_json(v.f, g), go[i].json,
					"%s: encoding/json's text", go[i].lit);
		}
	}
}

static void parse_errors(void) {
	static const char *const bad[] = { "", "-", "01", "1.", ".5", "+1", "1e", "0x10", "1 ", "NaN" };
	struct kinf_jsonnum v;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		is_int(kinf_jsonnum_parse(bad[i], strlen(bad[i]), &v), -KINF_EINVAL,
				"\"%s\" is not a JSON number", bad[i]);
		ok(!kinf_jsonnum_valid(bad[i], strlen(bad[i])), "\"%s\" is not valid", bad[i]);
	}
	/* Long literals: a 300-digit integer is a float64, a 400-digit one too big. */
	char digits[402];
	memset(digits, '9', 400);
	digits[0] = '1';
	ok(kinf_jsonnum_parse(digits, 300, &v) == 0 && v.type == KINF_JSONNUM_FLOAT &&
			v.f > 1e299, "a 300-digit integer is a float64");
	is_int(kinf_jsonnum_parse(digits, 400, &v), -KINF_ETOOBIG, "a 400-digit integer is too big");
}

/* Literals in ascending order; those in one string (split at '|') are equal. */
static const char *const ascending[] = {
	"-1e999999999999999999999",
	"-1e999999999999999999998",
	"-1e400",
	"-1.7976931348623157e308",
	"-12345678901234567891",
	"-12345678901234567890|-1.234567890123456789e19",
	"-9223372036854775809",
	"-9223372036854775808",
	"-1e3|-1000|-1000.000|-0.1e4|-10e2",
	"-1",
	"-0.5|-5e-1|-0.50",
	"-1e-400",
	"-1e-999999999999999999999",
	"0|-0|0.0|-0.0|0e10|-0e-10|0e999999999999999999999",
	"1e-999999999999999999999|10e-1000000000000000000000",
	"1e-999999999999999999998",
	"1e-400",
	"5e-324",
	"1e-7|0.0000001",
	"0.000001|1e-6",
	"0.01",
	"0.1|1e-1|0.10",
	"0.3333333333333333",
	"1|1.0|1e0|1E+0|0.1e1|10e-1|0.00001e5",
	"1.5",
	"2",
	"10",
	"42",
	"123.456|123.4560",
	"123.4561",
	"9007199254740992",
	"9007199254740993",
	"9223372036854775807",
	"9223372036854775808",
	"12345678901234567000",
	"12345678901234567890|1.234567890123456789e19",
	"12345678901234567891",
	"99999999999999999999",
	"100000000000000000000|1e20|1E+20|0.1e21|10e19",
	"100000000000000000001",
	"1e21|1000000000000000000000",
	"1e308",
	"1e400",
	"1e999999999999999999998",
	"1e999999999999999999999|10e999999999999999999998",
	"1e1000000000000000000000000000000000000",
};

static void exact_order(void) {
	size_t n = sizeof(ascending) / sizeof(*ascending);
	size_t bad = 0, pairs = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			char *a = strdup(ascending[i]), *b = strdup(ascending[j]);
			char *sa = NULL, *sb = NULL;
			for (char *x = strtok_r(a, "|", &sa); x; x = strtok_r(NULL, "|", &sa)) {
				char *bcopy = strdup(ascending[j]);
				sb = NULL;
				for (char *y = strtok_r(bcopy, "|", &sb); y; y = strtok_r(NULL, "|", &sb)) {
					int want = i < j ? -1 : i > j ? 1 : 0;
					int got = kinf_jsonnum_cmp(x, strlen(x), y, strlen(y));
					pairs++;
					if (got != want) {
						if (bad++ < 10) {
							printf("# cmp(%s, %s) = %d, want %d\n", x, y, got, want);
						}
					}
				}
				free(bcopy);
			}
			free(a);
			free(b);
		}
	}
	ok(bad == 0, "exact order over %zu pairs of literals (%zu wrong)", pairs, bad);
}

/* A random JSON number literal with up to 12 significant digits. */
static void random_literal(char *buf, size_t size, unsigned *seed) {
	int n = 0;
	int ints = rand_r(seed) % 4, fracs = rand_r(seed) % 4;
	n += snprintf(buf + n, size - (size_t)n, "%s", rand_r(seed) % 2 ? "-" : "");
	n += snprintf(buf + n, size - (size_t)n, "%d", ints ? rand_r(seed) % 1000000 : 0);
	if (fracs) {
		n += snprintf(buf + n, size - (size_t)n, ".%0*d", fracs, rand_r(seed) % 1000);
	}
	if (rand_r(seed) % 2) {
		n += snprintf(buf + n, size - (size_t)n, "%c%d", rand_r(seed) % 2 ? 'e' : 'E',
				rand_r(seed) % 60 - 30);
	}
}

/*
 * The same value written another way: the digits with the '.' moved k
 * places and the exponent made up for it ("12.5" -> "1250e-2").
 */
static void rewritten(const char *lit, int k, char *buf, size_t size) {
	char digits[64];
	size_t nd = 0, point = 0;
	long exp = 0;
	bool neg = lit[0] == '-', seen_point = false;
	for (const char *p = lit + neg; *p && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.') {
			seen_point = true;
			continue;
		}
		digits[nd++] = *p;
		point += !seen_point;
	}
	const char *e = strpbrk(lit, "eE");
	if (e) {
		exp = strtol(e + 1, NULL, 10);
	}
	/* value = 0.digits * 10^(point + exp): digits as an integer, then an exponent. */
	snprintf(buf, size, "%s%.*s%se%ld", neg ? "-" : "", (int)nd, digits,
			k > 0 ? "000" : "", exp + (long)point - (long)nd - (k > 0 ? 3 : 0));
}

static void random_order(void) {
	unsigned seed = 21;
	size_t bad = 0;
	for (int i = 0; i < 20000; i++) {
		char a[64], b[64], a2[96];
		random_literal(a, sizeof(a), &seed);
		random_literal(b, sizeof(b), &seed);
		rewritten(a, i % 2, a2, sizeof(a2));
		int ab = kinf_jsonnum_cmp(a, strlen(a), b, strlen(b));
		int ba = kinf_jsonnum_cmp(b, strlen(b), a, strlen(a));
		double x = strtod(a, NULL), y = strtod(b, NULL);
		bool wrong = ab != -ba || kinf_jsonnum_cmp(a, strlen(a), a2, strlen(a2)) != 0 ||
			kinf_jsonnum_cmp(a2, strlen(a2), b, strlen(b)) != ab ||
			(x < y && ab != -1) || (x > y && ab != 1);
		if (wrong && bad++ < 5) {
			printf("# %s vs %s (%s): %d, %d\n", a, b, a2, ab, ba);
		}
	}
	ok(bad == 0, "20,000 random pairs: antisymmetric, as the float64s order them, "
			"and equal to the same value written otherwise (%zu wrong)", bad);
}

static json_t *num(const char *lit) {
	return kinf_jsonnum_load(lit, strlen(lit), JSON_DECODE_ANY, NULL);
}

static void jansson_order(void) {
	static const struct { const char *a, *b; int want; } cases[] = {
		{ "9007199254740993", "9007199254740992.0", 1 },
		{ "9007199254740992", "9007199254740992.0", 0 },
		{ "1", "1.0", 0 },
		{ "-1", "-0.5", -1 },
		{ "-1", "-1.5", 1 },
		{ "9223372036854775807", "9223372036854775808", -1 },
		{ "-9223372036854775808", "-9223372036854775808.0", 0 },
		{ "-9223372036854775808", "-9223372036854777000", 1 },
		{ "1.5", "1", 1 },
		{ "100000000000000000000", "1e21", -1 },
		{ "3", "2", 1 },
		{ "2.5", "2.5", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *a = num(cases[i].a), *b = num(cases[i].b);
		if (ok(a && b, "%s and %s load", cases[i].a, cases[i].b)) {
			is_int(kinf_jsonnum_cmp_json(a, b), cases[i].want, "json %s vs %s",
					cases[i].a, cases[i].b);
			is_int(kinf_jsonnum_cmp_json(b, a), -cases[i].want, "json %s vs %s",
					cases[i].b, cases[i].a);
		}
		json_decref(a);
		json_decref(b);
	}
}

static void yaml(void) {
	static const struct { const char *lit, *want; } cases[] = {
		{ "42", "42" }, { "-0", "-0" }, { "100000000000000000000", "100000000000000000000" },
		{ "1.5", "1.5" }, { "0.00001", "0.00001" }, { "1e20", "1.0e+20" },
		{ "1e+21", "1.0e+21" }, { "1e-7", "1.0e-7" }, { "1.5E3", "1.5E+3" },
		{ "-2.5e-300", "-2.5e-300" }, { "1E400", "1.0E+400" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct kinf_buf b = {0};
		kinf_jsonnum_append_yaml(&b, cases[i].lit, strlen(cases[i].lit));
		is_str(b.data, cases[i].want, "yaml %s", cases[i].lit);
		kinf_buf_release(&b);
	}
}

static void load(void) {
	const char *doc = "{\"a\":12345678901234567890,\"b\":[1, -99999999999999999999 ],"
		"\"c\":9007199254740993,\"d\":1.5,\"e\":\"12345678901234567890\",\"f\":-0}";
	struct kinf_error err = {0};
	json_t *root = kinf_jsonnum_load(doc, strlen(doc), 0, &err);
	if (ok(root != NULL, "integers past int64 load (%s)", err.message)) {
		json_t *a = json_object_get(root, "a");
		ok(json_is_real(a) && json_real_value(a) == 12345678901234567890.0,
				"past int64: a float64, as Go reads it");
		json_t *b1 = json_array_get(json_object_get(root, "b"), 1);
		ok(json_is_real(b1) && json_real_value(b1) == -99999999999999999999.0,
				"negative past int64 (white space around it)");
		json_t *c = json_object_get(root, "c");
		ok(json_is_integer(c) && json_integer_value(c) == 9007199254740993LL,
				"within int64: exact");
		ok(json_is_real(json_object_get(root, "d")), "1.5 stays a real");
		is_str(json_string_value(json_object_get(root, "e")), "12345678901234567890",
				"a string is left alone");
		ok(json_is_integer(json_object_get(root, "f")), "-0 is the int 0");
	}
	json_decref(root);

	static const struct { const char *json, *msg; int code; } bad[] = {
		{ "{\"spec\":{\"x\":[1,{\"huge\":1e400}]},\"big\":12345678901234567890}",
		  "field .spec.x[1].huge: number 1e400 is beyond float64's range", KINF_ETOOBIG },
		{ "{\"a.b\":[-1e999],\"c\":99999999999999999999}",
		  "field ['a.b'][0]: number -1e999 is beyond float64's range", KINF_ETOOBIG },
		{ "[1e400]", "field [0]: number 1e400 is beyond float64's range", KINF_ETOOBIG },
		{ "{\"x\":11111111111111111111111111111111111111111111111111e400}",
		  "field .x: number 1111111111111111111111111111111111111111... is beyond "
		  "float64's range", KINF_ETOOBIG },
		{ "{\"x\":1", NULL, KINF_EJSON },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		kinf_error_clear(&err);
		root = kinf_jsonnum_load(bad[i].json, strlen(bad[i].json), 0, &err);
		ok(!root, "%s fails", bad[i].json);
		is_int(err.code, bad[i].code, "%s: the code", bad[i].json);
		if (bad[i].msg) {
			is_str(err.message, bad[i].msg, "%s: names the field", bad[i].json);
		}
		json_decref(root);
	}
}

int main(void) {
	go_values();
	parse_errors();
	exact_order();
	random_order();
	jansson_order();
	yaml();
	load();
	return tap_done();
}
