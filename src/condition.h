#ifndef KINF_CONDITION_H
#define KINF_CONDITION_H

#include <stdbool.h>

#include "buf.h"
#include "err.h"

struct kinf_object;

/*
 * Wait conditions, as kubectl wait --for takes them: create, delete,
 * condition=TYPE[=STATUS] (status.conditions, STATUS default True, compared
 * case-insensitively) and jsonpath='{PATH}'[=VALUE] (VALUE compared with
 * what the path prints; without VALUE, that the path reaches something).
 */
enum kinf_condition_kind {
	KINF_COND_CREATE,
	KINF_COND_DELETE,
	KINF_COND_CONDITION,
	KINF_COND_JSONPATH,
};

struct kinf_condition {
	enum kinf_condition_kind kind;
	char *spec;		/* as given, for messages */
	char *name;		/* condition type, or the JSONPath expression */
	char *value;		/* wanted status or value; NULL: any (jsonpath) */
};

/* Parse one --for. -KINF_EINVAL with a message naming it. */
int kinf_condition_parse(const char *spec, struct kinf_condition *ret,
		struct kinf_error *reterr);
void kinf_condition_release(struct kinf_condition *c);

/*
 * Does obj (NULL when it does not exist) satisfy c? When not, a short
 * reason is appended to why (e.g. "Ready=False", "not found",
 * "{.status.phase}=Pending") if why is not NULL.
 */
bool kinf_condition_met(const struct kinf_condition *c,
		const struct kinf_object *obj, struct kinf_buf *why);

#endif
