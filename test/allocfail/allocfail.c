/*
 * Allocation-failure injection: see allocfail.h. Linked with
 * -Wl,--wrap=malloc (and the others) into kinf and the unit tests when the
 * build option alloc-fail is on; --wrap redirects the references made by
 * the objects being linked (libkinf.a, cmd/, the tests), not those inside
 * shared libraries, so libc's own allocations are never failed.
 */
#include "allocfail.h"

#include <errno.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

/* ASan's, when the build has it: where the failed allocation was made. */
void __sanitizer_print_stack_trace(void) __attribute__((weak));
static bool trace;

/*
 * Whether to count at all: a program run without KINF_ALLOC_FAIL_AT and
 * KINF_ALLOC_FAIL_REPORT (the suite's other tests) pays one relaxed load
 * per allocation, nothing more.
 */
static atomic_bool counting;
static atomic_ulong counted;
static atomic_ulong fail_at;
static atomic_bool fired;

/* Counts one allocation; true when it is the one to fail. */
static bool fail_this(void) {
	if (!atomic_load_explicit(&counting, memory_order_relaxed)) {
		return false;
	}
	unsigned long n = atomic_fetch_add(&counted, 1) + 1;
	unsigned long at = atomic_load(&fail_at);
	if (at != 0 && n == at) {
		atomic_store(&fired, true);
		if (trace && __sanitizer_print_stack_trace) {
			fprintf(stderr, "allocfail: allocation %lu fails here:\n", n);
			__sanitizer_print_stack_trace();
		}
		errno = ENOMEM;
		return true;
	}
	return false;
}

void *__wrap_malloc(size_t size) {
	return fail_this() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t nmemb, size_t size) {
	return fail_this() ? NULL : __real_calloc(nmemb, size);
}

void *__wrap_realloc(void *p, size_t size) {
	/* realloc(p, 0) frees; failing it would leak nothing but means nothing. */
	if (size == 0) {
		return __real_realloc(p, size);
	}
	return fail_this() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s) {
	return fail_this() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n) {
	return fail_this() ? NULL : __real_strndup(s, n);
}

void kinf_allocfail_arm(unsigned long nth) {
	atomic_store(&counting, true);
	atomic_store(&fail_at, 0);
	atomic_store(&fired, false);
	atomic_store(&counted, 0);
	atomic_store(&fail_at, nth);
}

unsigned long kinf_allocfail_count(void) {
	return atomic_load(&counted);
}

bool kinf_allocfail_fired(void) {
	return atomic_load(&fired);
}

static void *json_malloc(size_t size) {
	return __wrap_malloc(size);
}

static const char *report_path;

static void report(void) {
	FILE *f = fopen(report_path, "w");
	if (f) {
		fprintf(f, "%lu %d\n", kinf_allocfail_count(), kinf_allocfail_fired() ? 1 : 0);
		fclose(f);
	}
}

__attribute__((constructor(101))) static void allocfail_init(void) {
	/*
	 * jansson allocates through its hooks: ours, until jsonnum.c's (when
	 * linked) replace them; they call malloc from kinf's code, so through
	 * the wrap too. This constructor runs first (its priority).
	 */
	json_set_alloc_funcs(json_malloc, free);
	const char *at = getenv("KINF_ALLOC_FAIL_AT");
	report_path = getenv("KINF_ALLOC_FAIL_REPORT");
	if (report_path && *report_path) {
		atexit(report);
	}
	const char *tr = getenv("KINF_ALLOC_FAIL_TRACE");
	trace = tr && *tr && strcmp(tr, "0") != 0;
	atomic_store(&fail_at, at ? strtoul(at, NULL, 10) : 0);
	atomic_store(&counting, atomic_load(&fail_at) != 0 || (report_path && *report_path));
}
