#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apistatus.h"
#include "err.h"
#include "jsonnum.h"

/* Length of the valid UTF-8 sequence at s (0 when invalid). */
static size_t utf8_len(const unsigned char *s) {
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80) {
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
			(n == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
		return 0;
	}
	return n;
}

int kinf_apistatus_quote(struct kinf_buf *out, const char *str) {
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	int rc = kinf_buf_append_char(out, '"');
	while (rc == 0 && *s) {
		unsigned char c = *s;
		size_t n = utf8_len(s);
		char esc[8];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			rc = kinf_buf_append(out, esc, 2);
		} else if (c == '\n' || c == '\r' || c == '\t') {
			rc = kinf_buf_append_str(out, c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t");
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			/* Go escapes these for HTML safety, as \u00XX. */
			snprintf(esc, sizeof(esc), "\\u00%c%c", hex[c >> 4], hex[c & 15]);
			rc = kinf_buf_append_str(out, esc);
		} else if (n == 0) {
			rc = kinf_buf_append_str(out, "\\ufffd");
			n = 1;
		} else if (n == 3 && c == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
			rc = kinf_buf_append_str(out, s[2] == 0xa8 ? "\\u2028" : "\\u2029");
		} else {
			rc = kinf_buf_append(out, s, n);
		}
		s += n ? n : 1;
	}
	return rc ? rc : kinf_buf_append_char(out, '"');
}

void kinf_apistatus_put_quoted(struct kinf_buf *out, const char *s) {
	if (kinf_buf_error(out) == 0) {
		int rc = kinf_apistatus_quote(out, s);
		if (rc < 0) {
			kinf_buf_fail(out, rc);
		}
	}
}

static int member(struct kinf_buf *out, bool *first, const char *key, const char *val) {
	if (!val || !*val) {
		return 0;
	}
	int rc = kinf_buf_printf(out, "%s\"%s\":", *first ? "" : ",", key);
	*first = false;
	return rc ? rc : kinf_apistatus_quote(out, val);
}

int kinf_apistatus_format(const struct kinf_apistatus *st, struct kinf_buf *out) {
	bool first = false;
	int rc = kinf_buf_append_str(out,
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":");
	if (rc == 0) {
		rc = kinf_apistatus_quote(out, st->code >= 200 && st->code < 300 ? "Success" : "Failure");
	}
	if (rc == 0) {
		rc = member(out, &first, "message", st->message);
	}
	if (rc == 0) {
		rc = member(out, &first, "reason", st->reason);
	}
	bool details = st->details || (st->name && *st->name) || (st->group && *st->group) ||
		(st->kind && *st->kind) || st->n_causes || st->retry_after_seconds > 0;
	if (rc == 0 && details) {
		bool dfirst = true;
		rc = kinf_buf_append_str(out, ",\"details\":{");
		if (rc == 0) {
			rc = member(out, &dfirst, "name", st->name);
		}
		if (rc == 0) {
			rc = member(out, &dfirst, "group", st->group);
		}
		if (rc == 0) {
			rc = member(out, &dfirst, "kind", st->kind);
		}
		if (rc == 0 && st->n_causes) {
			rc = kinf_buf_printf(out, "%s\"causes\":[", dfirst ? "" : ",");
			dfirst = false;
			for (size_t i = 0; rc == 0 && i < st->n_causes && i < 4; i++) {
				const struct kinf_apistatus_cause *c = &st->causes[i];
				bool cfirst = true;
				rc = kinf_buf_append_str(out, i ? ",{" : "{");
				if (rc == 0) {
					rc = member(out, &cfirst, "reason", c->reason);
				}
				if (rc == 0) {
					rc = member(out, &cfirst, "message", c->message);
				}
				if (rc == 0) {
					rc = member(out, &cfirst, "field", c->field);
				}
				if (rc == 0) {
					rc = kinf_buf_append_char(out, '}');
				}
			}
			if (rc == 0) {
				rc = kinf_buf_append_char(out, ']');
			}
		}
		if (rc == 0 && st->retry_after_seconds > 0) {
			rc = kinf_buf_printf(out, "%s\"retryAfterSeconds\":%d", dfirst ? "" : ",",
				st->retry_after_seconds);
		}
		if (rc == 0) {
			rc = kinf_buf_append_char(out, '}');
		}
	}
	if (rc == 0 && st->code) {
		rc = kinf_buf_printf(out, ",\"code\":%d", st->code);
	}
	return rc ? rc : kinf_buf_append_str(out, "}\n");
}

/* Go's %q for a name: quotes, with " and \ escaped (names are ASCII in practice). */
static int go_quote(struct kinf_buf *out, const char *s) {
	int rc = kinf_buf_append_char(out, '"');
	for (const unsigned char *p = (const unsigned char *)s; rc == 0 && *p; p++) {
		if (*p == '"' || *p == '\\') {
			rc = kinf_buf_printf(out, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			rc = kinf_buf_printf(out, "\\x%02x", *p);
		} else {
			rc = kinf_buf_append_char(out, (char)*p);
		}
	}
	return rc ? rc : kinf_buf_append_char(out, '"');
}

/* GroupResource.String(): "pods", "deployments.apps". */
static int group_resource(struct kinf_buf *msg, const char *group, const char *resource) {
	return group && *group ? kinf_buf_printf(msg, "%s.%s", resource, group) :
		kinf_buf_append_str(msg, resource);
}

void kinf_apistatus_put(struct kinf_apistatus_body *out, const struct kinf_apistatus *st) {
	out->code = st->code;
	out->retry_after_seconds = st->retry_after_seconds;
	kinf_buf_reset(&out->json);
	int rc = kinf_apistatus_format(st, &out->json);
	if (rc < 0) {
		kinf_buf_fail(&out->json, rc);
	}
}

int kinf_apistatus_make(struct kinf_apistatus_body *out, const struct kinf_apistatus *st) {
	kinf_apistatus_put(out, st);
	return kinf_buf_error(&out->json);
}

void kinf_apistatus_body_release(struct kinf_apistatus_body *b) {
	kinf_buf_release(&b->json);
	b->code = 0;
	b->retry_after_seconds = 0;
}

/* A message could not be built: out holds no Status, and says so. */
static void fail(struct kinf_apistatus_body *out, int rc) {
	kinf_buf_reset(&out->json);
	kinf_buf_fail(&out->json, rc);
	out->code = 0;
	out->retry_after_seconds = 0;
}

/* st with msg (when not NULL) as its message into out, or fail with rc < 0. */
static void emit(struct kinf_apistatus_body *out, struct kinf_apistatus *st,
		struct kinf_buf *msg, int rc) {
	if (rc < 0) {
		if (msg) {
			kinf_buf_release(msg);
		}
		fail(out, rc);
		return;
	}
	if (msg) {
		st->message = msg->data ? msg->data : "";
	}
	kinf_apistatus_put(out, st);
	if (msg) {
		kinf_buf_release(msg);
	}
}

void kinf_apistatus_bad_request(struct kinf_apistatus_body *out, const char *message) {
	struct kinf_apistatus st = { .code = 400, .reason = "BadRequest", .message = message };
	emit(out, &st, NULL, 0);
}

void kinf_apistatus_unauthorized(struct kinf_apistatus_body *out) {
	struct kinf_apistatus st = { .code = 401, .reason = "Unauthorized",
		.message = "Unauthorized" };
	emit(out, &st, NULL, 0);
}

void kinf_apistatus_forbidden(struct kinf_apistatus_body *out, const char *group, const char *resource,
		const char *name, const char *why) {
	struct kinf_apistatus st = { .code = 403, .reason = "Forbidden", .name = name,
		.group = group, .kind = resource };
	struct kinf_buf msg = {0};
	int rc = 0;
	if (!resource || !*resource) {
		rc = kinf_buf_printf(&msg, "forbidden: %s", why);
	} else {
		rc = group_resource(&msg, group, resource);
		if (rc == 0 && name && *name) {
			rc = kinf_buf_append_char(&msg, ' ');
			if (rc == 0) {
				rc = go_quote(&msg, name);
			}
		}
		if (rc == 0) {
			rc = kinf_buf_printf(&msg, " is forbidden: %s", why);
		}
	}
	emit(out, &st, &msg, rc);
}

void kinf_apistatus_not_found(struct kinf_apistatus_body *out, const char *group, const char *resource,
		const char *name) {
	struct kinf_apistatus st = { .code = 404, .reason = "NotFound", .name = name,
		.group = group, .kind = resource };
	struct kinf_buf msg = {0};
	int rc = group_resource(&msg, group, resource);
	if (rc == 0) {
		rc = kinf_buf_append_char(&msg, ' ');
	}
	if (rc == 0) {
		rc = go_quote(&msg, name ? name : "");
	}
	if (rc == 0) {
		rc = kinf_buf_append_str(&msg, " not found");
	}
	emit(out, &st, &msg, rc);
}

void kinf_apistatus_read_only(struct kinf_apistatus_body *out, const char *upstream) {
	struct kinf_apistatus st = { .code = 405, .reason = "MethodNotAllowed", .details = true };
	struct kinf_buf msg = {0};
	int rc = kinf_buf_append_str(&msg, "the server does not allow this method on the requested "
		"resource: kinf serve is a read-only cache");
	if (rc == 0 && upstream) {
		rc = kinf_buf_printf(&msg, " of %s", upstream);
	}
	emit(out, &st, &msg, rc);
}

void kinf_apistatus_expired(struct kinf_apistatus_body *out, const char *message) {
	struct kinf_apistatus st = { .code = 410, .reason = "Expired", .message = message };
	emit(out, &st, NULL, 0);
}

void kinf_apistatus_too_large(struct kinf_apistatus_body *out, size_t limit) {
	struct kinf_apistatus st = { .code = 413, .reason = "RequestEntityTooLarge" };
	struct kinf_buf msg = {0};
	int rc = kinf_buf_printf(&msg, "Request entity too large: limit is %zu", limit);
	emit(out, &st, &msg, rc);
}

void kinf_apistatus_too_many_requests(struct kinf_apistatus_body *out, const char *message,
		int retry_after_seconds) {
	struct kinf_apistatus st = { .code = 429, .reason = "TooManyRequests", .message = message,
		.retry_after_seconds = retry_after_seconds };
	emit(out, &st, NULL, 0);
}

void kinf_apistatus_internal(struct kinf_apistatus_body *out, const char *err) {
	struct kinf_apistatus st = { .code = 500, .reason = "InternalError", .n_causes = 1 };
	struct kinf_buf msg = {0};
	st.causes[0].message = err;
	int rc = kinf_buf_printf(&msg, "Internal error occurred: %s", err);
	emit(out, &st, &msg, rc);
}

void kinf_apistatus_unavailable(struct kinf_apistatus_body *out, const char *message) {
	struct kinf_apistatus st = { .code = 503, .reason = "ServiceUnavailable",
		.message = message };
	emit(out, &st, NULL, 0);
}

/* Reading a Status ----------------------------------------------------- */

static void copy_str(char *dst, size_t size, const char *src) {
	if (!src) {
		src = "";
	}
	size_t n = strlen(src);
	if (n >= size) {
		n = size - 1;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

const char *kinf_apistatus_status_text(int code) {
	switch (code) {
	case 100: return "Continue";
	case 101: return "Switching Protocols";
	case 102: return "Processing";
	case 103: return "Early Hints";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 203: return "Non-Authoritative Information";
	case 204: return "No Content";
	case 205: return "Reset Content";
	case 206: return "Partial Content";
	case 207: return "Multi-Status";
	case 208: return "Already Reported";
	case 226: return "IM Used";
	case 300: return "Multiple Choices";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 305: return "Use Proxy";
	case 307: return "Temporary Redirect";
	case 308: return "Permanent Redirect";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Payment Required";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Request Entity Too Large";
	case 414: return "Request URI Too Long";
	case 415: return "Unsupported Media Type";
	case 416: return "Requested Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 418: return "I'm a teapot";
	case 421: return "Misdirected Request";
	case 422: return "Unprocessable Entity";
	case 423: return "Locked";
	case 424: return "Failed Dependency";
	case 425: return "Too Early";
	case 426: return "Upgrade Required";
	case 428: return "Precondition Required";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 451: return "Unavailable For Legal Reasons";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	case 506: return "Variant Also Negotiates";
	case 507: return "Insufficient Storage";
	case 508: return "Loop Detected";
	case 510: return "Not Extended";
	case 511: return "Network Authentication Required";
	default: return "";
	}
}

void kinf_apistatus_to_error(long http_status, const char *body, size_t len,
		struct kinf_error *reterr) {
	json_t *root = NULL;
	const char *message = NULL, *reason = NULL, *cause = NULL, *text;
	json_int_t code = 0;

	if (!reterr) {
		return;
	}
	if (body && len) {
		root = kinf_jsonnum_load(body, len, JSON_REJECT_DUPLICATES, NULL);
	}
	if (json_is_object(root) &&
			json_is_string(json_object_get(root, "kind")) &&
			strcmp(json_string_value(json_object_get(root, "kind")), "Status") == 0) {
		message = json_string_value(json_object_get(root, "message"));
		reason = json_string_value(json_object_get(root, "reason"));
		code = json_integer_value(json_object_get(root, "code"));
		json_t *causes = json_object_get(json_object_get(root, "details"), "causes");
		cause = json_string_value(json_object_get(json_array_get(causes, 0), "reason"));
	}
	if (!http_status && code) {
		http_status = (long)code;
	}
	text = http_status >= 0 && http_status <= INT_MAX ?
		kinf_apistatus_status_text((int)http_status) : "";
	reterr->http_status = (int)http_status;
	copy_str(reterr->reason, sizeof(reterr->reason), reason);
	copy_str(reterr->cause, sizeof(reterr->cause), cause);
	switch (http_status) {
	case 401:
		reterr->code = KINF_EAUTH;
		break;
	case 410:
		reterr->code = KINF_EGONE;
		break;
	default:
		reterr->code = KINF_EHTTP;
		break;
	}
	if (message && message[0]) {
		snprintf(reterr->message, sizeof(reterr->message), "%s", message);
	} else if (body && len && !root) {
		/* Not JSON: show the start of it, on one line. */
		char snippet[120];
		size_t n = len < sizeof(snippet) - 1 ? len : sizeof(snippet) - 1;
		for (size_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)body[i];
			snippet[i] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
		}
		snippet[n] = '\0';
		snprintf(reterr->message, sizeof(reterr->message),
				"the server responded with status %ld%s%s: %s", http_status,
				text[0] ? " " : "", text, snippet);
	} else {
		snprintf(reterr->message, sizeof(reterr->message),
				"the server responded with status %ld%s%s", http_status,
				text[0] ? " " : "", text);
	}
	json_decref(root);
}

/* Whether s[0..len) holds the text of needle (memmem is not POSIX). */
static bool holds(const char *s, size_t len, const char *needle) {
	size_t n = strlen(needle);
	for (const char *p = s; p && (size_t)(s + len - p) >= n;
			p = memchr(p + 1, needle[0], (size_t)(s + len - p - 1))) {
		if (memcmp(p, needle, n) == 0) {
			return true;
		}
	}
	return false;
}

int kinf_apistatus_check_success(const char *body, size_t len, struct kinf_error *reterr) {
	/* Most bodies are not a Status: only one that names it is parsed. */
	if (!body || len == 0 || !holds(body, len, "\"Status\"")) {
		return 0;
	}
	json_t *root = kinf_jsonnum_load(body, len, 0, NULL);
	const char *kind = json_string_value(json_object_get(root, "kind"));
	const char *status = json_string_value(json_object_get(root, "status"));
	bool failed = kind && strcmp(kind, "Status") == 0 && status && status[0] &&
		strcmp(status, "Success") != 0;
	json_decref(root);
	if (!failed) {
		return 0;
	}
	struct kinf_error local = {0};
	struct kinf_error *e = reterr ? reterr : &local;
	kinf_apistatus_to_error(0, body, len, e);
	return -e->code;
}
