#ifndef KINF_ACCESSREVIEW_H
#define KINF_ACCESSREVIEW_H

#include <stdbool.h>

#include "err.h"

struct kinf_http;

/*
 * Whether the server's user may do verb on resource (plural; group "" for
 * the core group) in namespace (NULL: in every namespace, or a
 * cluster-scoped resource): a SelfSubjectAccessReview
 * (authorization.k8s.io/v1), POSTed as kubectl auth can-i posts it, and
 * its status.allowed. Returns 0 with *ret_allowed, or the request's error
 * with reterr (a server without the API answers 404).
 */
KINF_MUST_CHECK int kinf_access_review(struct kinf_http *http, const char *verb, const char *group,
		const char *resource, const char *namespace, bool *ret_allowed,
		struct kinf_error *reterr);

#endif
