#ifndef KINF_ALLOCFAIL_H
#define KINF_ALLOCFAIL_H

#include <stdbool.h>

/*
 * Allocation-failure injection for tests (curl's torture tests, SQLite's
 * malloc tests): in a build with -Dalloc-fail=true, every malloc, calloc,
 * realloc, strdup and strndup that kinf's own code makes (and jansson's and
 * libcurl's, which kinf hands its allocators) is counted, and the Nth one
 * fails once, returning NULL with errno ENOMEM. Later ones succeed again, so
 * what runs after a failure is the recovery path.
 *
 * A program chooses N with the environment: KINF_ALLOC_FAIL_AT=N (0 or
 * unset: never fail, only count), and KINF_ALLOC_FAIL_REPORT=FILE makes it
 * write "<allocations counted> <1 if the Nth failed, else 0>" to FILE at
 * exit; KINF_ALLOC_FAIL_TRACE=1 prints where the failed allocation was
 * made (the stack, with ASan). A unit test sets N with kinf_allocfail_arm().
 *
 * Without the build option these functions do not exist;
 * kinf_allocfail_available() in a test built either way says which.
 */

/* Fail the nth allocation from now (1: the next one); 0 disarms. Resets the count. */
void kinf_allocfail_arm(unsigned long nth);
/* Allocations counted since the last kinf_allocfail_arm() (or the start). */
unsigned long kinf_allocfail_count(void);
/* Whether the armed allocation has been failed. */
bool kinf_allocfail_fired(void);

#endif
