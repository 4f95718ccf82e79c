#ifndef KINF_HEADER_H
#define KINF_HEADER_H

#include <stddef.h>

#include "err.h"

/*
 * The one check of a value that goes into an HTTP request header (a bearer
 * token, wherever it came from). A value may hold no control character but
 * horizontal tab: no CR or LF to end the header and start another, no NUL
 * to cut it short, no DEL. That is net/http's rule
 * (httpguts.ValidHeaderFieldValue), so what client-go refuses, kinf refuses.
 */

/* The index of the first byte of value (len bytes) a header cannot hold, or -1. */
ptrdiff_t kinf_header_value_bad_byte(const char *value, size_t len);

/*
 * 0 when value (len bytes, NULs included) may be sent as a header value.
 * Otherwise fills reterr with code and "WHAT holds a line feed (byte 4),
 * which an HTTP header cannot carry" and returns -code. The message names
 * the byte and its position, never the value (it is usually a secret).
 */
KINF_MUST_CHECK int kinf_header_value_check(const char *value, size_t len, const char *what, int code,
		struct kinf_error *reterr);

/*
 * Called with each warning of a Warning header: its three-digit code and
 * its text (len bytes, NUL-terminated, quoted-pair escapes undone; any byte
 * may be in it, so whoever prints it escapes it).
 */
typedef void (*kinf_header_warning_func)(int code, const char *text, size_t len,
		void *userdata);

/*
 * The warnings in one Warning header value (RFC 7234 5.5), as apimachinery's
 * net.ParseWarningHeaders reads them: `CODE AGENT "TEXT"`, an optional
 * quoted date after it, several separated by commas. A malformed warning
 * ends the value: the ones before it count, the rest is skipped. Unlike
 * client-go, a text with control characters or bytes that are not UTF-8 is
 * passed on (to be shown escaped) rather than dropped, and RFC 2047 encoded
 * words are left as they are. The number of warnings passed to fn, or
 * -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_header_warnings(const char *value, size_t len, kinf_header_warning_func fn,
		void *userdata);

#endif
