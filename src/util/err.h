#ifndef KINF_ERR_H
#define KINF_ERR_H

#include <stddef.h>

/*
 * On every fallible function: a result that can say "failed" must be
 * looked at (curl's dynbuf does the same for its appends). Writers that
 * cannot usefully fail alone (a builder's appends into a sticky buffer)
 * are void instead, and checked once where the buffer is taken.
 */
#define KINF_MUST_CHECK __attribute__((warn_unused_result))

/*
 * Error codes returned (negated) by fallible library functions, with the
 * string kinf_strerror() gives for each. One table, as libuv's UV_ERRNO_MAP.
 */
#define KINF_ERRNO_MAP(X) \
	X(NOMEM, "out of memory") \
	X(INVAL, "invalid argument") \
	X(IO, "input/output error") \
	X(JSON, "invalid JSON") \
	X(YAML, "invalid YAML") \
	X(CONFIG, "invalid configuration") \
	X(AUTH, "authentication failed") \
	X(CONNECT, "connection failed") \
	X(TLS, "TLS error") \
	X(HTTP, "HTTP error") \
	X(TIMEDOUT, "timed out") \
	X(NOTFOUND, "not found") \
	X(EXISTS, "already exists") \
	X(GONE, "resource version expired") \
	X(TOOBIG, "too large") \
	X(CANCELED, "canceled") \
	X(CLOSED, "closed") \
	X(UNSUPPORTED, "not supported")

enum {
	KINF_OK = 0,
#define X(name, str) KINF_E##name,
	KINF_E_FIRST_ = 0,
	KINF_ERRNO_MAP(X)
#undef X
};

/* Error codes are returned negated: return -KINF_ENOMEM; */

/* A short English description of an error code (positive or negative). */
const char *kinf_strerror(int code);

/*
 * Detail for an error: the code, an HTTP status and Status reason where the
 * error came from the API server, and a one-line message without a trailing
 * full stop ("line 12, column 3: mapping expected").
 */
struct kinf_error {
	int code;		/* positive KINF_E* or 0 */
	int http_status;	/* 0 when not an HTTP answer */
	char reason[48];	/* Status.reason, e.g. "Expired", "Forbidden" */
	char cause[48];		/* first Status.details.causes[].reason */
	char message[512];
};

/*
 * Fill reterr (which may be NULL) with code and a printf-formatted message,
 * and return -code so callers can write: return kinf_error_set(e, ...);
 * or rc = kinf_error_set(e, ...); (the result must be used: a message
 * without the code it describes is a failure reported as success).
 */
KINF_MUST_CHECK int kinf_error_set(struct kinf_error *reterr, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The same as a statement, for a caller that returns its code some other
 * way (a NULL, a code it already holds, a void function's caller).
 */
void kinf_error_fill(struct kinf_error *reterr, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix reterr->message with "prefix: " (for adding file names etc). */
void kinf_error_prefix(struct kinf_error *reterr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void kinf_error_clear(struct kinf_error *reterr);

#endif
