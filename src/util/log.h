#ifndef KINF_LOG_H
#define KINF_LOG_H

/*
 * Library logging goes through one callback the program installs; with no
 * callback nothing is logged. Levels follow -v: 1 reflector life, 2 requests,
 * 3 headers and details.
 */
typedef void (*kinf_log_func)(int level, const char *msg, void *userdata);

void kinf_log_set(int max_level, kinf_log_func fn, void *userdata);
int kinf_log_level(void);
void kinf_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
