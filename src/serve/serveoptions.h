#ifndef KINF_SERVEOPTIONS_H
#define KINF_SERVEOPTIONS_H

/*
 * serveoptions.c, a leaf of serve/: ListOptions checked as the apiserver
 * checks them.
 */
#include "serveint.h"

/*
 * ListOptions checked as the apiserver's ValidateListOptions checks them
 * (of a watch: validateWatchOptions, as with the WatchList gate on),
 * every error in one 422 Invalid `ListOptions.meta.k8s.io "" is invalid:
 * ...` with a cause each. false after answering.
 */
bool serve_validate_list_options(struct serve_request *r, bool watch);

#endif
