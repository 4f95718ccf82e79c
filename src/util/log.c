#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static int log_max_level;
static kinf_log_func log_fn;
static void *log_userdata;

void kinf_log_set(int max_level, kinf_log_func fn, void *userdata) {
	log_max_level = max_level;
	log_fn = fn;
	log_userdata = userdata;
}

int kinf_log_level(void) {
	return log_fn ? log_max_level : 0;
}

void kinf_log(int level, const char *fmt, ...) {
	char msg[1024];
	va_list ap;

	if (!log_fn || level > log_max_level) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_userdata);
}
