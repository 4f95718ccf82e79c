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
int kinf_header_value_check(const char *value, size_t len, const char *what, int code,
		struct kinf_error *reterr);

#endif
