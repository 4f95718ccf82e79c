#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "err.h"
#include "rfc3339.h"

/* n decimal digits at *s into *ret, advancing s. */
static bool digits(const char **s, int n, int *ret) {
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*s)[i];
		if (c < '0' || c > '9') {
			return false;
		}
		v = v * 10 + (c - '0');
	}
	*s += n;
	*ret = v;
	return true;
}

static bool expect(const char **s, char c, char alt) {
	if (**s != c && **s != alt) {
		return false;
	}
	(*s)++;
	return true;
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (Howard Hinnant's days_from_civil). */
static long long days_from_civil(int y, int m, int d) {
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	long long yoe = y - era * 400;
	long long doy = (153LL * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int kinf_rfc3339_parse(const char *s, struct timespec *ret) {
	int y, mo, d, h, mi, sec;
	long nsec = 0;

	if (!s || !digits(&s, 4, &y) || !expect(&s, '-', '-') || !digits(&s, 2, &mo) ||
			!expect(&s, '-', '-') || !digits(&s, 2, &d) || !expect(&s, 'T', 't') ||
			!digits(&s, 2, &h) || !expect(&s, ':', ':') || !digits(&s, 2, &mi) ||
			!expect(&s, ':', ':') || !digits(&s, 2, &sec)) {
		return -KINF_EINVAL;
	}
	if (*s == '.') {
		long scale = 100000000;
		s++;
		if (*s < '0' || *s > '9') {
			return -KINF_EINVAL;
		}
		/* digits past nanoseconds are read and dropped */
		for (; *s >= '0' && *s <= '9'; s++) {
			nsec += (*s - '0') * scale;
			scale /= 10;
		}
	}
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) {
		return -KINF_EINVAL;
	}
	long long t = days_from_civil(y, mo, d) * 86400 + h * 3600LL + mi * 60LL + sec;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s == '-' ? -1 : 1, oh, om;
		s++;
		if (!digits(&s, 2, &oh) || !expect(&s, ':', ':') || !digits(&s, 2, &om) ||
				oh > 23 || om > 59) {
			return -KINF_EINVAL;
		}
		t -= sign * (oh * 3600LL + om * 60LL);
	} else {
		return -KINF_EINVAL;
	}
	if (*s) {
		return -KINF_EINVAL;
	}
	ret->tv_sec = (time_t)t;
	ret->tv_nsec = nsec;
	return 0;
}

long long kinf_rfc3339_seconds_since(const char *s) {
	struct timespec ts;
	if (kinf_rfc3339_parse(s, &ts) < 0) {
		return -1;
	}
	return (long long)time(NULL) - (long long)ts.tv_sec;
}
