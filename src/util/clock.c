#include <pthread.h>
#include <time.h>

#include "clock.h"

long long kinf_clock_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long kinf_clock_now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void kinf_clock_deadline(struct timespec *ret, long ms) {
	clock_gettime(CLOCK_MONOTONIC, ret);
	ret->tv_sec += ms / 1000;
	ret->tv_nsec += (ms % 1000) * 1000000L;
	if (ret->tv_nsec >= 1000000000L) {
		ret->tv_sec++;
		ret->tv_nsec -= 1000000000L;
	}
}

int kinf_clock_cond_init(pthread_cond_t *cond) {
	pthread_condattr_t attr;
	int rc = pthread_condattr_init(&attr);
	if (rc != 0) {
		return rc;
	}
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (rc == 0) {
		rc = pthread_cond_init(cond, &attr);
	}
	pthread_condattr_destroy(&attr);
	return rc;
}
