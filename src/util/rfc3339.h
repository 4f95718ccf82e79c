#ifndef KINF_RFC3339_H
#define KINF_RFC3339_H

#include <time.h>

#include "err.h"

/*
 * RFC 3339 timestamps as metav1.Time reads them (Go's time.RFC3339):
 * 2006-01-02T15:04:05(.999999999)?(Z|+07:00), 'T' and 'Z' in either case,
 * nothing before or after. An exec plugin's expirationTimestamp and an
 * object's creationTimestamp both come this way.
 */

/* Parse s into seconds and nanoseconds since the epoch. 0 or -KINF_EINVAL. */
KINF_MUST_CHECK int kinf_rfc3339_parse(const char *s, struct timespec *ret);

/*
 * Whole seconds from s to now on the wall clock (negative for the future),
 * or -1 when s is NULL or does not parse: an object's age.
 */
long long kinf_rfc3339_seconds_since(const char *s);

#endif
