#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

const char *kinf_strerror(int code) {
	if (code < 0) {
		code = -code;
	}
	switch (code) {
	case 0:
		return "success";
#define X(name, str) case KINF_E##name: return str;
	KINF_ERRNO_MAP(X)
#undef X
	}
	return "unknown error";
}

static int error_vset(struct kinf_error *reterr, int code, const char *fmt, va_list ap) {
	if (code < 0) {
		code = -code;
	}
	if (reterr) {
		reterr->code = code;
		vsnprintf(reterr->message, sizeof(reterr->message), fmt, ap);
	}
	return -code;
}

int kinf_error_set(struct kinf_error *reterr, int code, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	int rc = error_vset(reterr, code, fmt, ap);
	va_end(ap);
	return rc;
}

void kinf_error_fill(struct kinf_error *reterr, int code, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	(void)error_vset(reterr, code, fmt, ap);
	va_end(ap);
}

void kinf_error_prefix(struct kinf_error *reterr, const char *fmt, ...) {
	char prefix[256];
	char old[sizeof(reterr->message)];
	va_list ap;

	if (!reterr) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, reterr->message, sizeof(old));
	/* Truncation is fine: the message is for people. */
	size_t n = strlen(prefix);
	if (n > sizeof(reterr->message) - 3) {
		n = sizeof(reterr->message) - 3;
	}
	memcpy(reterr->message, prefix, n);
	memcpy(reterr->message + n, ": ", 2);
	size_t rest = sizeof(reterr->message) - n - 3;
	size_t m = strnlen(old, rest);
	memcpy(reterr->message + n + 2, old, m);
	reterr->message[n + 2 + m] = '\0';
}

void kinf_error_clear(struct kinf_error *reterr) {
	if (reterr) {
		memset(reterr, 0, sizeof(*reterr));
	}
}
