#ifndef KINF_KUBECONFIG_WRITE_H
#define KINF_KUBECONFIG_WRITE_H

#include <stddef.h>

#include "err.h"

/*
 * Writing the kubeconfig `kinf serve --write-kubeconfig FILE` makes: a
 * context (and a cluster of the same name) per upstream context served,
 * each pointing at serve's https URL with its CA, and one user holding
 * serve's bearer token. The file is written 0600 and atomically (a
 * temporary file in the same directory, fsync, rename), so a client never
 * reads half of it and nobody else can read the token.
 */

struct kinf_kubeconfig_entry {
	const char *context;	/* the context's name, and its cluster's */
	const char *server;	/* "https://127.0.0.1:43121" (a path prefix allowed) */
	const char *namespace;	/* the context's namespace, or NULL */
};

/* The first line of every file written: what makes it safe to replace. */
#define KINF_KUBECONFIG_WRITE_MARK "# Written by kinf serve; rewritten each time it starts."

struct kinf_kubeconfig_write_opts {
	const struct kinf_kubeconfig_entry *entries;
	size_t n_entries;		/* at least one */
	const char *current_context;	/* NULL: the first entry's */
	const char *user;		/* the user entry's name; NULL: "kinf-serve" */
	const char *token;		/* the bearer token, required */
	const char *ca_pem;		/* PEM of the CA, for certificate-authority-data */
	size_t ca_pem_len;
};

/*
 * Write the kubeconfig opts describes to path. An existing file is
 * replaced only when it is empty or begins with
 * KINF_KUBECONFIG_WRITE_MARK (an earlier serve's), so a mistyped
 * ~/.kube/config is never overwritten. Returns 0, -KINF_EINVAL (no
 * entries, an empty name or server, duplicate context names, no token or
 * CA, a current_context that is no entry's), -KINF_EEXISTS (a file kinf did
 * not write, or not a regular file), -KINF_EIO, -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_kubeconfig_write(const char *path, const struct kinf_kubeconfig_write_opts *opts,
	struct kinf_error *reterr);

#endif
