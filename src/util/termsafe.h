#ifndef KINF_TERMSAFE_H
#define KINF_TERMSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "buf.h"
#include "err.h"

/*
 * Text from a server or a file made safe for a terminal, as kubectl does
 * since CVE-2021-25743 (cli-runtime printers.EscapeTerminal: ESC as "^[",
 * CR as "\r"), and further: every character a terminal acts on is shown
 * instead of sent.
 *
 *   ESC                          ^[
 *   CR, LF, TAB                  \r \n \t
 *   other C0 controls, DEL       caret notation: ^@ ^G ^H ... ^_ ^?
 *   C1 controls U+0080-U+009F    \u0080 ... \u009f
 *   bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
 *   U+2066-U+2069)               \u202e and so on
 *   a byte that is not UTF-8     \xff
 *
 * Everything else (printable ASCII, other UTF-8, backslashes) is copied as
 * it is, so ordinary names print unchanged. The result holds no control
 * character, no DEL, no bidi control and is always valid UTF-8.
 */

/* Whether s[0..len) would be changed by escaping. */
bool kinf_termsafe_needed(const char *s, size_t len);

/*
 * Append s[0..len) escaped to out, a builder's put: a failure sticks in out
 * (kinf_buf_error(), kinf_buf_take() gives NULL).
 */
void kinf_termsafe_put(struct kinf_buf *out, const char *s, size_t len);

/*
 * A new NUL-terminated escaped copy of the string s (caller frees), NULL
 * on out of memory.
 */
KINF_MUST_CHECK char *kinf_termsafe_dup(const char *s);

/*
 * Write s[0..len) escaped to out, allocating nothing (for error lines when
 * memory has run out). A write error sticks in the stream, as fputs's do:
 * ferror(out), checked where the stream is closed.
 */
void kinf_termsafe_fput(FILE *out, const char *s, size_t len);

#endif
