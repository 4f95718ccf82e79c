/*
 * kinf_toyaml_write() against the corpus of test/fixtures/yaml: every
 * string, as a value and as a key, reads back through libyaml as the same
 * bytes, and when it is printed plain, no YAML 1.1 or 1.2 resolver (their
 * published patterns, written here independently of toyaml.c) takes it for
 * anything but a string. Also the layouts kubectl uses: literal blocks,
 * numbers, empty collections.
 */
#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "tap.h"
#include "toyaml.h"

/* Plain scalars that resolve to something other than a string. */
static const char *const not_strings[] = {
	/* YAML 1.1 (yaml.org/type, as PyYAML implements them) */
	"^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$",
	"^(~|null|Null|NULL|)$",
	"^[-+]?0b[0-1_]+$",
	"^[-+]?0[0-7_]+$",
	"^[-+]?(0|[1-9][0-9_]*)$",
	"^[-+]?0x[0-9a-fA-F_]+$",
	"^[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+$",
	"^[-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?$",
	"^\\.[0-9_]+([eE][-+][0-9]+)?$",
	"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*$",
	"^[-+]?\\.(inf|Inf|INF)$",
	"^\\.(nan|NaN|NAN)$",
	"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
	"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
		"(\\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?$",
	"^<<$",
	"^=$",
	/* YAML 1.2 core schema */
	"^[-+]?[0-9]+$",
	"^0o[0-7]+$",
	"^0x[0-9a-fA-F]+$",
	"^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$",
};
#define N_PATTERNS (sizeof(not_strings) / sizeof(*not_strings))
static regex_t patterns[N_PATTERNS];

static char *to_yaml(const char *json, size_t *ret_len) {
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct kinf_error err = {0};
	int rc = kinf_toyaml_write(f, json, strlen(json), &err);
	fclose(f);
	if (rc < 0) {
		printf("# kinf_toyaml_write: %s\n", err.message);
		free(text);
		return NULL;
	}
	*ret_len = len;
	return text;
}

/*
 * The scalars of a one-pair mapping document: key and value, with the
 * style the value (want_key false) or key was written in.
 */
static bool read_pair(const char *text, size_t len, bool want_key, char **ret,
		size_t *ret_len, yaml_scalar_style_t *ret_style) {
	yaml_parser_t p;
	yaml_event_t ev;
	int n_scalar = 0;
	bool found = false, done = false;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			printf("# libyaml: %s\n", p.problem ? p.problem : "error");
			break;
		}
		if (ev.type == YAML_SCALAR_EVENT && n_scalar++ == (want_key ? 0 : 1)) {
			*ret = malloc(ev.data.scalar.length + 1);
			memcpy(*ret, ev.data.scalar.value, ev.data.scalar.length + 1);
			*ret_len = ev.data.scalar.length;
			*ret_style = ev.data.scalar.style;
			found = true;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return found;
}

static void check(const char *s, size_t len, bool as_key) {
	json_t *obj = json_object();
	json_t *str = json_stringn(s, len);
	if (as_key) {
		json_object_setn_new(obj, s, len, json_string("k"));
		json_decref(str);
	} else {
		json_object_set_new(obj, "k", str);
	}
	char *json = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	size_t ylen = 0, got_len = 0;
	char *yaml = to_yaml(json, &ylen);
	char *got = NULL;
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
	bool read = yaml && read_pair(yaml, ylen, as_key, &got, &got_len, &style);
	ok(read && got_len == len && memcmp(got, s, len) == 0,
		"%s %s reads back the same", as_key ? "key" : "value", json);
	if (read && style == YAML_PLAIN_SCALAR_STYLE) {
		size_t hit = N_PATTERNS;
		for (size_t i = 0; i < N_PATTERNS && hit == N_PATTERNS; i++) {
			if (regexec(&patterns[i], got, 0, NULL, 0) == 0) {
				hit = i;
			}
		}
		ok(hit == N_PATTERNS, "plain %s %s is a string to YAML 1.1 and 1.2%s%s",
			as_key ? "key" : "value", json, hit < N_PATTERNS ? ": matches " : "",
			hit < N_PATTERNS ? not_strings[hit] : "");
	}
	if (!read || got_len != len || memcmp(got, s, len) != 0) {
		printf("# yaml: %s", yaml ? yaml : "(none)\n");
	}
	free(got);
	free(yaml);
	free(json);
}

static void corpus(const char *file) {
	json_error_t jerr;
	json_t *strings = json_load_file(file, JSON_ALLOW_NUL, &jerr);
	size_t i;
	json_t *v;
	ok(json_is_array(strings), "%s loads (%s)", file, strings ? "" : jerr.text);
	json_array_foreach(strings, i, v) {
		check(json_string_value(v), json_string_length(v), false);
		if (!memchr(json_string_value(v), '\0', json_string_length(v))) {
			check(json_string_value(v), json_string_length(v), true);
		}
	}
	json_decref(strings);
}

static void layout(void) {
	static const struct { const char *json, *yaml, *what; } cases[] = {
		{ "{\"a\":\"line1\\nline2\"}", "a: |-\n  line1\n  line2\n", "a literal block, |-" },
		{ "{\"a\":\"line1\\n\"}", "a: |\n  line1\n", "one final line break: |" },
		{ "{\"a\":\"line1\\n\\n\",\"b\":1}", "a: |+\n  line1\n\nb: 1\n", "more: |+" },
		{ "{\"a\":\"  x\\ny\"}", "a: |2-\n    x\n  y\n", "leading spaces: an indentation indicator" },
		{ "{\"a\":\"x \\ny\"}", "a: \"x \\ny\"\n", "a space before a break: double quotes" },
		{ "{\"a\\nb\":1}", "? |-\n  a\n  b\n: 1\n", "a key with a break: a complex key" },
		{ "{\"a\":\"0x1F\",\"b\":\"0b101\",\"c\":\"2026-11-20T09:08:30Z\"}",
		  "a: \"0x1F\"\nb: \"0b101\"\nc: \"2026-11-20T09:08:30Z\"\n", "the issue's examples" },
		{ "{\"a\":\"1.2.3\",\"b\":\"yEs\",\"c\":\"1:60\"}", "a: 1.2.3\nb: yEs\nc: 1:60\n",
		  "strings to every resolver stay plain" },
		{ "{\"a\":\"- x\",\"b\":\"x: y\",\"c\":\"x #y\",\"d\":\" x\"}",
		  "a: '- x'\nb: 'x: y'\nc: 'x #y'\nd: ' x'\n", "indicators: single quotes" },
		{ "{\"f\":[0.1,1.0,1000000.0,1234567.5,1e300,1e-5,-0.0,6.02e23,1.5E3]}",
		  "f:\n- 0.1\n- 1.0\n- 1000000.0\n- 1234567.5\n- 1.0e+300\n- 1.0e-5\n- -0.0\n"
		  "- 6.02e+23\n- 1.5E+3\n",
		  "numbers as written, an exponent with the '.' and sign YAML 1.1 needs" },
		{ "{\"a\":100000000000000000000,\"b\":1e+21,\"c\":1e-7,\"d\":0.00001,"
		  "\"e\":12345678901234567000,\"f\":-0}",
		  "a: 100000000000000000000\nb: 1.0e+21\nc: 1.0e-7\nd: 0.00001\n"
		  "e: 12345678901234567000\nf: -0\n",
		  "the floats kube-apiserver writes, exactly" },
		{ "{\"e\":{},\"l\":[],\"x\":null,\"t\":true}", "e: {}\nl: []\nt: true\nx: null\n",
		  "empty collections, null, booleans" },
		{ "{\"big\":123456789012345678901234567890,\"small\":42,\"neg\":-9007199254740993}",
		  "big: 123456789012345678901234567890\nneg: -9007199254740993\nsmall: 42\n",
		  "integers past int64 and 2^53: every digit kept" },
		{ "{\"a\":1,\"b\":{\"x\":[]},\"a\":3}", "a: 3\nb:\n  x: []\n",
		  "a key twice: the last one, as Go's decoder keeps it" },
		{ "[ 1 , {\"k\" : \"v\" } ]", "- 1\n- k: v\n", "white space around values" },
		{ "{\"a\":\"nul\\u0000byte\"}", "a: \"nul\\0byte\"\n", "a NUL in a string" },
		{ "{\"v10\":1,\"v9\":2,\"a_b\":3,\"aB\":4,\"v09\":5}",
		  "a_b: 3\naB: 4\nv9: 2\nv09: 5\nv10: 1\n", "go-yaml's key order" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		size_t len = 0;
		char *yaml = to_yaml(cases[i].json, &len);
		is_str(yaml, cases[i].yaml, "layout: %s", cases[i].what);
		free(yaml);
	}
}

int main(void) {
	for (size_t i = 0; i < N_PATTERNS; i++) {
		if (regcomp(&patterns[i], not_strings[i], REG_EXTENDED | REG_NOSUB) != 0) {
			printf("Bail out! pattern %zu does not compile\n", i);
			return 1;
		}
	}
	corpus("../fixtures/yaml/strings.json");
	corpus("../fixtures/yaml/strings-control.json");
	layout();
	for (size_t i = 0; i < N_PATTERNS; i++) {
		regfree(&patterns[i]);
	}
	return tap_done();
}
