#include <stdio.h>
#include <string.h>

#include "serveoptions.h"
#include "serverespond.h"

/* serveoptions.c: ListOptions checked as the apiserver's validation checks them. */

/* One field.Error of ListOptions' validation. */
struct option_error {
	const char *field;
	const char *type;		/* "Forbidden", "Unsupported value" */
	const char *reason;		/* its cause: "FieldValueForbidden", ... */
	char body[200];			/* ErrorBody(): "Forbidden: ..." */
};

/* The 422 of errors (apimachinery's NewInvalid for ListOptions), aggregated. */
static void respond_invalid(struct serve_request *r, const struct option_error *e, size_t n) {
	struct kinf_apistatus_body b = {0};
	struct kinf_buf msg = {0};
	struct kinf_apistatus st = { .code = 422, .reason = "Invalid", .details = true,
		.kind = "ListOptions", .group = "meta.k8s.io" };
	kinf_buf_puts(&msg, "ListOptions.meta.k8s.io \"\" is invalid: ");
	if (n > 1) {
		kinf_buf_putc(&msg, '[');
	}
	for (size_t i = 0; i < n; i++) {
		kinf_buf_putf(&msg, "%s%s: %s", i ? ", " : "", e[i].field, e[i].body);
		if (i < sizeof(st.causes) / sizeof(st.causes[0])) {
			st.causes[st.n_causes++] = (struct kinf_apistatus_cause){ .reason = e[i].reason,
				.message = e[i].body, .field = e[i].field };
		}
	}
	if (n > 1) {
		kinf_buf_putc(&msg, ']');
	}
	st.message = msg.data;
	if (!kinf_buf_error(&msg)) {
		kinf_apistatus_put(&b, &st);
	}
	serve_respond_status(r, &b);
	kinf_apistatus_body_release(&b);
	kinf_buf_release(&msg);
}

static void forbidden(struct option_error *e, size_t *n, const char *field, const char *detail) {
	e[*n] = (struct option_error){ .field = field, .type = "Forbidden",
		.reason = "FieldValueForbidden" };
	snprintf(e[*n].body, sizeof(e[*n].body), "Forbidden: %s", detail);
	(*n)++;
}

static void unsupported(struct option_error *e, size_t *n, const char *field, const char *value,
		const char *supported) {
	e[*n] = (struct option_error){ .field = field, .type = "Unsupported value",
		.reason = "FieldValueNotSupported" };
	snprintf(e[*n].body, sizeof(e[*n].body), "Unsupported value: \"%.80s\": supported values: %s",
			value, supported);
	(*n)++;
}

bool serve_validate_list_options(struct serve_request *r, bool watch) {
	const struct kinf_apiquery *q = &r->query;
	const char *match = q->resource_version_match ? q->resource_version_match : "";
	const char *rv = q->resource_version ? q->resource_version : "";
	bool cont = q->continue_token && q->continue_token[0];
	struct option_error e[6];
	size_t n = 0;

	/* AM apis/meta/internalversion/validation: ValidateListOptions. */
	if (watch) {
		/* validateWatchOptions, as with the WatchList gate on: serve streams initial events. */
		if (q->send_initial_events >= 0 && strcmp(match, "NotOlderThan") != 0) {
			forbidden(e, &n, "resourceVersionMatch", "sendInitialEvents requires setting "
					"resourceVersionMatch to NotOlderThan");
		}
		if (match[0]) {
			if (q->send_initial_events < 0) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"for watch unless sendInitialEvents is provided");
			}
			if (strcmp(match, "NotOlderThan") != 0) {
				unsupported(e, &n, "resourceVersionMatch", match, "\"NotOlderThan\"");
			}
			if (cont) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"when continue is provided");
			}
		}
		/* Later apiservers' rule: the initial events' end is a bookmark. */
		if (n == 0 && q->send_initial_events == 1 && !q->allow_watch_bookmarks) {
			forbidden(e, &n, "allowWatchBookmarks", "sendInitialEvents requires setting "
					"allowWatchBookmarks to true");
		}
	} else {
		if (match[0]) {
			if (!rv[0]) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"unless resourceVersion is provided");
			}
			if (cont) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch is forbidden "
						"when continue is provided");
			}
			if (strcmp(match, "Exact") != 0 && strcmp(match, "NotOlderThan") != 0) {
				unsupported(e, &n, "resourceVersionMatch", match,
						"\"Exact\", \"NotOlderThan\", \"\"");
			}
			if (strcmp(match, "Exact") == 0 && strcmp(rv, "0") == 0) {
				forbidden(e, &n, "resourceVersionMatch", "resourceVersionMatch \"exact\" is "
						"forbidden for resourceVersion \"0\"");
			}
		}
		if (q->send_initial_events >= 0) {
			forbidden(e, &n, "sendInitialEvents", "sendInitialEvents is forbidden for list");
		}
	}
	if (n) {
		respond_invalid(r, e, n);
		return false;
	}
	return true;
}
