#include <string.h>
#include <time.h>

#include "err.h"
#include "rfc3339.h"
#include "tap.h"

/*
 * RFC 3339 as metav1.Time parses it: the forms the API writes, offsets,
 * fractions, leap years, and every malformed input rejected.
 */

static void good(const char *s, long long sec, long nsec) {
	struct timespec ts = { -1, -1 };
	int r = kinf_rfc3339_parse(s, &ts);
	ok(r == 0 && ts.tv_sec == sec && ts.tv_nsec == nsec, "%s -> %lld.%09ld (got %d, %lld.%09ld)",
			s, sec, nsec, r, (long long)ts.tv_sec, ts.tv_nsec);
}

static void bad(const char *s) {
	struct timespec ts = { 7, 7 };
	int r = kinf_rfc3339_parse(s, &ts);
	ok(r == -KINF_EINVAL && ts.tv_sec == 7 && ts.tv_nsec == 7,
			"\"%s\" rejected, nothing written", s);
}

int main(void) {
	good("1970-01-01T00:00:00Z", 0, 0);
	good("2024-05-06T07:08:09Z", 1714979289, 0);
	good("2024-05-06t07:08:09z", 1714979289, 0);
	good("2024-02-29T00:00:00Z", 1709164800, 0);
	good("2000-03-01T00:00:00Z", 951868800, 0);
	good("1969-12-31T23:59:59Z", -1, 0);
	good("2024-05-06T09:08:09+02:00", 1714979289, 0);
	good("2024-05-06T02:38:09-04:30", 1714979289, 0);
	good("2024-05-06T07:08:09.5Z", 1714979289, 500000000);
	good("2024-05-06T07:08:09.123456789Z", 1714979289, 123456789);
	good("2024-05-06T07:08:09.1234567891Z", 1714979289, 123456789);
	good("2999-12-31T23:59:59.5+01:00", 32503676399LL, 500000000);

	bad("");
	bad("yesterday");
	bad("2024-05-06");
	bad("2024-05-06T07:08:09");
	bad("2024-05-06 07:08:09Z");
	bad("2024-05-06T07:08:09ZZ");
	bad("2024-05-06T07:08:09.Z");
	bad("2024-05-06T07:08:09+0200");
	bad("2024-05-06T07:08:09+02");
	bad("2024-13-06T07:08:09Z");
	bad("2024-00-06T07:08:09Z");
	bad("2024-05-32T07:08:09Z");
	bad("2024-05-06T24:08:09Z");
	bad("2024-05-06T07:60:09Z");
	bad(" 2024-05-06T07:08:09Z");
	bad("+024-05-06T07:08:09Z");
	bad("2024-5-06T07:08:09Z");
	bad("2024-05-06T07:08:09+24:00");

	time_t hour_ago = time(NULL) - 3600;
	char ts[32];
	struct tm tm;
	gmtime_r(&hour_ago, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	long long since = kinf_rfc3339_seconds_since(ts);
	ok(since >= 3600 && since <= 3602, "seconds since %s, an hour ago: %lld", ts, since);
	is_int(kinf_rfc3339_seconds_since(NULL), -1, "seconds since NULL: -1");
	is_int(kinf_rfc3339_seconds_since("garbage"), -1, "seconds since garbage: -1");
	return tap_done();
}
