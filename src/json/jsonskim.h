#ifndef KINF_JSONSKIM_H
#define KINF_JSONSKIM_H

#include <stdbool.h>

/*
 * The fast path under kinf_json_skip() (src/json.c): validates an object or
 * array of compact JSON 64 bytes at a time and returns the end of it, or
 * NULL when it cannot vouch for it. NULL is not a verdict: white space
 * outside strings, non-ASCII bytes, \u escapes of surrogates, nesting deeper than 64 or
 * than room, and every error send the caller to the byte-at-a-time
 * validator, which gives the exact message. Anything it accepts, that
 * validator accepts too, with the same end.
 */
const char *kinf_jsonskim(const char *p, const char *end, unsigned room);

/* Whether this CPU runs it (x86-64 with AVX2); otherwise it returns NULL. */
bool kinf_jsonskim_available(void);

/* Tests: turn the fast path off (and on again) to compare the two. */
void kinf_jsonskim_enable(bool on);
bool kinf_jsonskim_enabled(void);

#endif
