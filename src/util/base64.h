#ifndef KINF_BASE64_H
#define KINF_BASE64_H

#include <stddef.h>

#include "err.h"

/*
 * Base64 (RFC 4648), the one implementation: the standard alphabet with
 * padding, as Go's encoding/base64.StdEncoding writes a []byte field
 * (certificate-authority-data in a kubeconfig or an ExecCredential), and
 * the URL alphabet without padding (RawURLEncoding: serve's tokens).
 */
enum kinf_base64_alphabet {
	KINF_BASE64_STD,	/* A-Z a-z 0-9 + /, padded with '=' */
	KINF_BASE64_URL_RAW,	/* A-Z a-z 0-9 - _, no padding */
};

/*
 * The len bytes of in, encoded on one line: a NUL-terminated string the
 * caller frees, or NULL when out of memory.
 */
KINF_MUST_CHECK char *kinf_base64_encode(const void *in, size_t len, enum kinf_base64_alphabet alphabet);

/*
 * Decode standard base64 as a kubeconfig's []byte fields are read: line
 * breaks and blanks are ignored, padding is accepted (and may be left
 * out). 0 with the bytes in *ret (NUL-terminated, caller frees) and their
 * count in *ret_len; -KINF_EINVAL for a byte outside the alphabet, data
 * after padding, too much padding or a dangling sixth bit group (what was
 * decoded is wiped); -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_base64_decode(const char *in, size_t len, char **ret, size_t *ret_len);

#endif
