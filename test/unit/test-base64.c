#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "err.h"
#include "tap.h"

/*
 * Base64: RFC 4648's test vectors both ways, the URL alphabet without
 * padding, and what a kubeconfig's []byte field may hold (line breaks,
 * missing padding) or must not (bytes outside the alphabet, data after
 * padding, a dangling bit group).
 */

static const struct {
	const char *plain, *std, *url_raw;
} vectors[] = {
	{ "", "", "" },
	{ "f", "Zg==", "Zg" },
	{ "fo", "Zm8=", "Zm8" },
	{ "foo", "Zm9v", "Zm9v" },
	{ "foob", "Zm9vYg==", "Zm9vYg" },
	{ "fooba", "Zm9vYmE=", "Zm9vYmE" },
	{ "foobar", "Zm9vYmFy", "Zm9vYmFy" },
	{ "\xfb\xff\xbf", "+/+/", "-_-_" },
};

static void test_vectors(void) {
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		size_t len = strlen(vectors[i].plain);
		char *std = kinf_base64_encode(vectors[i].plain, len, KINF_BASE64_STD);
		char *url = kinf_base64_encode(vectors[i].plain, len, KINF_BASE64_URL_RAW);
		is_str(std, vectors[i].std, "encode \"%s\", standard", vectors[i].std);
		is_str(url, vectors[i].url_raw, "encode \"%s\", URL without padding",
				vectors[i].url_raw);
		free(std);
		free(url);
		char *back = NULL;
		size_t back_len = 0;
		int rc = kinf_base64_decode(vectors[i].std, strlen(vectors[i].std), &back,
				&back_len);
		ok(rc == 0 && back_len == len && memcmp(back, vectors[i].plain, len) == 0 &&
				back[len] == '\0', "decode \"%s\"", vectors[i].std);
		free(back);
	}
}

static void test_binary(void) {
	unsigned char all[256];
	for (int i = 0; i < 256; i++) {
		all[i] = (unsigned char)i;
	}
	char *enc = kinf_base64_encode(all, sizeof(all), KINF_BASE64_STD);
	char *dec = NULL;
	size_t n = 0;
	ok(enc && strlen(enc) == 344 && kinf_base64_decode(enc, strlen(enc), &dec, &n) == 0 &&
		n == 256 && memcmp(dec, all, 256) == 0, "every byte value, there and back");
	free(enc);
	free(dec);
}

static void test_decode_lenient(void) {
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "Zm9v\nYmFy\n", "foobar", "line breaks are skipped (PEM-style wrapping)" },
		{ "Zm9v\r\nYm Fy\t", "foobar", "so are CR, blanks and tabs" },
		{ "Zm9vYg", "foob", "missing padding" },
		{ "Zm9vYmE", "fooba", "one '=' missing" },
		{ "Zm9vYg=\n=", "foob", "padding broken by a line break" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL;
		size_t n = 0;
		int rc = kinf_base64_decode(cases[i].in, strlen(cases[i].in), &out, &n);
		ok(rc == 0 && n == strlen(cases[i].want) && strcmp(out, cases[i].want) == 0,
				"%s", cases[i].what);
		free(out);
	}
}

static void test_decode_bad(void) {
	static const struct {
		const char *in, *what;
	} cases[] = {
		{ "Zm9v!", "a byte outside the alphabet" },
		{ "Zm9v-_", "the URL alphabet is not standard base64" },
		{ "Zg==Zg==", "data after padding" },
		{ "Zg===", "three '='" },
		{ "Zm8==", "more padding than is missing" },
		{ "Z", "a lone sixth bit group" },
		{ "Zm9vY", "a dangling group after whole ones" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = (char *)"untouched";
		size_t n = 7;
		int rc = kinf_base64_decode(cases[i].in, strlen(cases[i].in), &out, &n);
		ok(rc == -KINF_EINVAL && n == 7 && strcmp(out, "untouched") == 0,
				"rejected: %s (\"%s\")", cases[i].what, cases[i].in);
	}
}

int main(void) {
	test_vectors();
	test_binary();
	test_decode_lenient();
	test_decode_bad();
	return tap_done();
}
