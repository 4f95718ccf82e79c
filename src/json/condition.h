#ifndef KINF_CONDITION_H
#define KINF_CONDITION_H

#include <stdbool.h>

#include "buf.h"
#include "err.h"

struct kinf_object;

/*
 * Wait conditions, as kubectl wait --for takes them: create, delete,
 * condition=TYPE[=STATUS] (status.conditions, STATUS default True, compared
 * case-insensitively), jsonpath='{PATH}'[=VALUE] (VALUE compared with
 * what the path prints; without VALUE, that the path reaches something) and
 * rollout (what kubectl rollout status waits for: a Deployment, StatefulSet
 * or DaemonSet whose controller has observed its spec and updated, readied
 * and made available its replicas).
 */
enum kinf_condition_kind {
	KINF_COND_CREATE,
	KINF_COND_DELETE,
	KINF_COND_CONDITION,
	KINF_COND_JSONPATH,
	KINF_COND_ROLLOUT,
};

/* What an object's state says of a condition. */
enum kinf_condition_state {
	KINF_COND_NOT_MET,
	KINF_COND_MET,
	KINF_COND_FAILED,	/* never will be: a rollout past its deadline */
	KINF_COND_ERROR,	/* could not be told: memory ran out */
};

struct kinf_condition {
	enum kinf_condition_kind kind;
	char *spec;		/* as given, for messages */
	char *name;		/* condition type, JSONPath expression, or rollout kind */
	char *value;		/* wanted status or value; NULL: any (jsonpath) */
};

/* Parse one --for. -KINF_EINVAL with a message naming it. */
KINF_MUST_CHECK int kinf_condition_parse(const char *spec, struct kinf_condition *ret,
		struct kinf_error *reterr);
void kinf_condition_release(struct kinf_condition *c);

/*
 * Tell c which kind it is waited on (group "" for the core group). Only
 * rollout cares: -KINF_EINVAL, with a message, for a kind without a
 * rollout status (anything but Deployment, StatefulSet and DaemonSet).
 */
KINF_MUST_CHECK int kinf_condition_bind(struct kinf_condition *c, const char *group,
		const char *kind, struct kinf_error *reterr);

/*
 * Does obj (NULL when it does not exist) satisfy c? When not, a short
 * reason is appended to why (e.g. "Ready=False", "not found",
 * "{.status.phase}=Pending") if why is not NULL. KINF_COND_FAILED when it
 * never will (why says why): a Deployment whose Progressing condition says
 * ProgressDeadlineExceeded, a StatefulSet or DaemonSet whose update strategy
 * is not RollingUpdate (kubectl rollout status fails on both). An object
 * with a number beyond float64's range has no values to test: NOT_MET,
 * why naming the object and the field. KINF_COND_ERROR when memory ran
 * out (never a verdict made without the values).
 */
enum kinf_condition_state kinf_condition_eval(const struct kinf_condition *c,
		const struct kinf_object *obj, struct kinf_buf *why);

/* kinf_condition_eval() == KINF_COND_MET. */
bool kinf_condition_met(const struct kinf_condition *c,
		const struct kinf_object *obj, struct kinf_buf *why);

#endif
