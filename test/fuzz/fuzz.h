/*
 * Shared helpers for kinf's libFuzzer harnesses (test/fuzz/build.sh builds
 * each fuzz_*.c with the src/ files compiled in). A harness reads its
 * options from the first bytes of the input so that one corpus explores
 * chunk boundaries, limits and modes together.
 */
#ifndef KINF_FUZZ_H
#define KINF_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A property of the code under test does not hold: crash with a message. */
#define FUZZ_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

/* A cursor over the fuzz input. */
struct fuzz_input {
	const uint8_t *p;
	size_t n;
};

/* Take one byte (0 when the input is used up). */
static inline uint8_t fuzz_byte(struct fuzz_input *in) {
	if (!in->n) {
		return 0;
	}
	in->n--;
	return *in->p++;
}

/*
 * Take the bytes up to the next NUL (or the end) as a new NUL-terminated
 * string; the NUL is consumed. Caller frees.
 */
static inline char *fuzz_string(struct fuzz_input *in) {
	const uint8_t *nul = in->n ? memchr(in->p, 0, in->n) : NULL;
	size_t len = nul ? (size_t)(nul - in->p) : in->n;
	char *s = malloc(len + 1);
	if (!s) {
		abort();
	}
	memcpy(s, in->p, len);
	s[len] = '\0';
	in->p += len + (nul ? 1 : 0);
	in->n -= len + (nul ? 1 : 0);
	return s;
}

/* A small deterministic generator (xorshift64*) seeded from the input. */
static inline uint64_t fuzz_rand(uint64_t *state) {
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

#endif
