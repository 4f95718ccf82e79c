#ifndef KINF_TRIM_H
#define KINF_TRIM_H

#include <stddef.h>

#include "err.h"

/*
 * Go's strings.TrimSpace, the one trim: what client-go trims (a token file,
 * the in-cluster namespace file, a Warning header) kinf trims the same
 * way. White space is unicode.IsSpace's: ASCII tab, line feed, vertical
 * tab, form feed, carriage return and space, and U+0085, U+00A0, U+1680,
 * U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000 in UTF-8. A NUL
 * is not white space (it stays, for a later check to refuse), nor is a
 * byte that is not UTF-8.
 */

/*
 * The span of s (len bytes, NULs included) without leading and trailing
 * white space: its length, and its offset in *ret_start.
 */
size_t kinf_trim_space(const char *s, size_t len, size_t *ret_start);

/*
 * That span copied, NUL-terminated (caller frees), its length in *ret_len
 * when not NULL. NULL when out of memory.
 */
KINF_MUST_CHECK char *kinf_trim_space_dup(const char *s, size_t len, size_t *ret_len);

#endif
