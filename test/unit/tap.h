#ifndef KINF_TEST_TAP_H
#define KINF_TEST_TAP_H

/*
 * A minimal TAP producer for unit tests: ok(cond, fmt, ...) prints one
 * "ok N - ..." / "not ok N - ..." line; tap_done() prints the plan and
 * returns the exit status. is_str/is_int show both values on failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline int tap_ok(int cond, const char *file, int line, const char *fmt, ...) {
	va_list ap;
	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

/* A setup step that must work (an append, say): else the test bails out. */
#define must(expr) do { \
		if ((expr) < 0) { \
			printf("Bail out! %s:%d: %s failed\n", __FILE__, __LINE__, #expr); \
			exit(1); \
		} \
	} while (0)

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) do { \
		const char *g_ = (got), *w_ = (want); \
		if (!ok(g_ && w_ ? strcmp(g_, w_) == 0 : g_ == w_, __VA_ARGS__)) { \
			printf("#   got:  \"%s\"\n#   want: \"%s\"\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
		} \
	} while (0)
#define is_int(got, want, ...) do { \
		long long g_ = (long long)(got), w_ = (long long)(want); \
		if (!ok(g_ == w_, __VA_ARGS__)) { \
			printf("#   got:  %lld\n#   want: %lld\n", g_, w_); \
		} \
	} while (0)
#define skip(why, ...) do { printf("ok %d - ", ++tap_n); printf(__VA_ARGS__); printf(" # SKIP %s\n", why); } while (0)

static inline int tap_done(void) {
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
