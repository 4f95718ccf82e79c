#ifndef KINF_APISTATUS_H
#define KINF_APISTATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

struct kinf_error;

/*
 * metav1.Status bodies byte for byte as kube-apiserver v1.28 writes them
 * (AM api/errors/errors.go constructors, encoded by Go's encoding/json:
 * fields in struct order, empty ones omitted, <, > and & as \u003c...,
 * a newline at the end), and the plain-text answers of the layers under
 * the API (Go's net/http, the not-found and max-in-flight handlers).
 */

struct kinf_apistatus_cause {
	const char *reason;	/* "FieldValueForbidden"; NULL omits */
	const char *message;
	const char *field;
};

/* A Status: NULL or "" strings are left out, as Go's omitempty does. */
struct kinf_apistatus {
	int code;
	const char *reason;
	const char *message;
	bool details;		/* write "details" even when all of it is empty ({}) */
	const char *name;
	const char *group;
	const char *kind;	/* the plural resource for NotFound/Forbidden */
	struct kinf_apistatus_cause causes[4];
	size_t n_causes;
	int retry_after_seconds;	/* > 0: also the Retry-After header */
};

/* Append st's JSON (with the final newline) to out. 0 or -KINF_ENOMEM. */
KINF_MUST_CHECK int kinf_apistatus_format(const struct kinf_apistatus *st, struct kinf_buf *out);

/*
 * A Status ready to be sent: its JSON and the values of the HTTP status
 * line and the Retry-After header, all taken from one struct
 * kinf_apistatus, so the answer's status and its body's "code" cannot
 * disagree. Initialise with {0}; release with kinf_apistatus_body_release().
 */
struct kinf_apistatus_body {
	int code;			/* the Status's code: the HTTP status to send */
	int retry_after_seconds;	/* > 0: send Retry-After with it */
	struct kinf_buf json;		/* the body, ending in a newline */
};

/*
 * Make out the Status st (what out held before is replaced). 0 or
 * -KINF_ENOMEM, when out->json is marked failed (kinf_buf_error()).
 */
KINF_MUST_CHECK int kinf_apistatus_make(struct kinf_apistatus_body *out, const struct kinf_apistatus *st);
/* kinf_apistatus_make as a statement: a failure sticks in out->json alone. */
void kinf_apistatus_put(struct kinf_apistatus_body *out, const struct kinf_apistatus *st);
void kinf_apistatus_body_release(struct kinf_apistatus_body *b);

/* Append s as a JSON string the way Go's encoding/json writes it. */
KINF_MUST_CHECK int kinf_apistatus_quote(struct kinf_buf *out, const char *s);
/* kinf_apistatus_quote for builders: a failure sticks in out (buf.h). */
void kinf_apistatus_put_quoted(struct kinf_buf *out, const char *s);

/*
 * The apiserver's errors, each made into out as kinf_apistatus_make() does.
 * group is "" (or NULL) for the core group. Builders: a failure sticks in
 * out->json (kinf_buf_error()), which kinf_httpd_respond_status_body()
 * checks once, where the body is sent.
 */
/* 400 BadRequest, message as given (NewBadRequest). */
void kinf_apistatus_bad_request(struct kinf_apistatus_body *out, const char *message);
/* 401 Unauthorized, message "Unauthorized" (the authentication filter). */
void kinf_apistatus_unauthorized(struct kinf_apistatus_body *out);
/* 403: `pods "x" is forbidden: why` (NewForbidden; name may be NULL). */
void kinf_apistatus_forbidden(struct kinf_apistatus_body *out, const char *group, const char *resource,
	const char *name, const char *why);
/* 404: `pods "x" not found`, `deployments.apps "x" not found` (NewNotFound). */
void kinf_apistatus_not_found(struct kinf_apistatus_body *out, const char *group, const char *resource,
	const char *name);
/*
 * 405 MethodNotAllowed as go-restful's error handler writes it for a verb
 * the resource does not have (details {}), its message followed by
 * ": kinf serve is a read-only cache" and " of UPSTREAM" when upstream
 * is not NULL.
 */
void kinf_apistatus_read_only(struct kinf_apistatus_body *out, const char *upstream);
/* 410 Expired with message, e.g. "too old resource version: 5 (41)". */
void kinf_apistatus_expired(struct kinf_apistatus_body *out, const char *message);
/* 413: "Request entity too large: limit is N" (NewRequestEntityTooLargeError). */
void kinf_apistatus_too_large(struct kinf_apistatus_body *out, size_t limit);
/* 429 TooManyRequests with details.retryAfterSeconds (NewTooManyRequests). */
void kinf_apistatus_too_many_requests(struct kinf_apistatus_body *out, const char *message,
	int retry_after_seconds);
/* 500: "Internal error occurred: ERR", one cause with ERR (NewInternalError). */
void kinf_apistatus_internal(struct kinf_apistatus_body *out, const char *err);
/* 503 ServiceUnavailable with message (NewServiceUnavailable). */
void kinf_apistatus_unavailable(struct kinf_apistatus_body *out, const char *message);

/*
 * Plain-text bodies the apiserver answers below its API (Content-Type
 * text/plain; charset=utf-8): the unknown path's "404 page not found\n",
 * max-in-flight's "Too many requests, please try again later.\n" (429 with
 * Retry-After: 1), and Go's "431 Request Header Fields Too Large".
 */
#define KINF_APISTATUS_PAGE_NOT_FOUND "404 page not found\n"
#define KINF_APISTATUS_TOO_MANY "Too many requests, please try again later.\n"

/*
 * The reason phrase of an HTTP status code ("Not Found"), "" for a code it
 * does not know: Go's http.StatusText, as kube-apiserver writes it in its
 * status lines. For httpd's status lines and the messages of the errors
 * kinf reads (kinf_apistatus_to_error).
 */
const char *kinf_apistatus_status_text(int code);

/*
 * Reading one, client side: a Status body (or any other body) and an HTTP
 * status into reterr (may be NULL): code, HTTP status, reason, first cause
 * and the message ("pods is forbidden: User ..."), or "the server responded
 * with status 502 Bad Gateway: <the body's start>" for a body that is not
 * a Status. http_status 0 takes the Status's own code (in-stream ERROR
 * events of a watch). reterr->code: KINF_EAUTH for 401, KINF_EGONE for
 * 410, else KINF_EHTTP.
 */
void kinf_apistatus_to_error(long http_status, const char *body, size_t len,
		struct kinf_error *reterr);

/*
 * A successful (2xx) answer whose body is a Status that does not say
 * "Success" is an error, as client-go's transformResponse makes it
 * (errors.FromObject): 0 when body is anything else, else reterr as
 * kinf_apistatus_to_error() fills it (the Status's own code) and -its code.
 */
KINF_MUST_CHECK int kinf_apistatus_check_success(const char *body, size_t len, struct kinf_error *reterr);

#endif
