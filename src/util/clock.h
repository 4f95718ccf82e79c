#ifndef KINF_CLOCK_H
#define KINF_CLOCK_H

#include <pthread.h>
#include <time.h>

#include "err.h"

/*
 * The monotonic clock (CLOCK_MONOTONIC) for timeouts, deadlines and
 * durations: never the wall clock, which may jump.
 */

/* Milliseconds on the monotonic clock (from an arbitrary start). */
long long kinf_clock_now_ms(void);
/* Microseconds on the same clock, for timing what takes less than a millisecond. */
long long kinf_clock_now_us(void);

/*
 * The monotonic time ms milliseconds from now, for pthread_cond_timedwait
 * on a condition variable set to CLOCK_MONOTONIC.
 */
void kinf_clock_deadline(struct timespec *ret, long ms);

/*
 * Initialise cond on the monotonic clock, for those deadlines: every timed
 * wait in kinf is on one. 0, or the pthread error (nothing to destroy).
 */
KINF_MUST_CHECK int kinf_clock_cond_init(pthread_cond_t *cond);

#endif
