#include <limits.h>
#include <string.h>

#include "apistatus.h"
#include "err.h"
#include "tap.h"

/*
 * The one reason-phrase table (Go's http.StatusText), and the messages
 * kinf_apistatus_to_error makes of a status without a Status body.
 */

static void test_status_text(void) {
	/* Every code the two tables it replaces knew, with Go's phrase. */
	static const struct {
		int code;
		const char *text;
	} known[] = {
		{ 100, "Continue" }, { 200, "OK" }, { 201, "Created" }, { 204, "No Content" },
		{ 301, "Moved Permanently" }, { 302, "Found" }, { 303, "See Other" },
		{ 304, "Not Modified" }, { 307, "Temporary Redirect" },
		{ 308, "Permanent Redirect" }, { 400, "Bad Request" }, { 401, "Unauthorized" },
		{ 403, "Forbidden" }, { 404, "Not Found" }, { 405, "Method Not Allowed" },
		{ 406, "Not Acceptable" }, { 408, "Request Timeout" }, { 409, "Conflict" },
		{ 410, "Gone" }, { 413, "Request Entity Too Large" },
		{ 414, "Request URI Too Long" }, { 415, "Unsupported Media Type" },
		{ 417, "Expectation Failed" }, { 422, "Unprocessable Entity" },
		{ 429, "Too Many Requests" }, { 431, "Request Header Fields Too Large" },
		{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
		{ 502, "Bad Gateway" }, { 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" }, { 505, "HTTP Version Not Supported" },
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++) {
		if (strcmp(kinf_apistatus_status_text(known[i].code), known[i].text) != 0) {
			printf("# %d: \"%s\"\n", known[i].code,
				kinf_apistatus_status_text(known[i].code));
			bad++;
		}
	}
	is_int(bad, 0, "the codes httpd and the client knew keep their phrases");
	is_str(kinf_apistatus_status_text(418), "I'm a teapot", "418, as Go has it");
	is_str(kinf_apistatus_status_text(511), "Network Authentication Required", "511");
	is_str(kinf_apistatus_status_text(599), "", "an unknown code: \"\", as Go's");
	is_str(kinf_apistatus_status_text(0), "", "0: \"\"");
	is_str(kinf_apistatus_status_text(-404), "", "a negative code: \"\"");
}

static void test_to_error(void) {
	struct kinf_error err = {0};

	kinf_apistatus_to_error(410, NULL, 0, &err);
	is_str(err.message, "the server responded with status 410 Gone", "410 without a body");
	is_int(err.code, KINF_EGONE, "  KINF_EGONE");
	kinf_apistatus_to_error(501, NULL, 0, &err);
	is_str(err.message, "the server responded with status 501 Not Implemented",
		"501 has its phrase (it was \"Error\")");
	kinf_apistatus_to_error(599, NULL, 0, &err);
	is_str(err.message, "the server responded with status 599",
		"a code without a phrase: none (it was \"599 Error\")");
	kinf_apistatus_to_error(599, "busy\n", 5, &err);
	is_str(err.message, "the server responded with status 599: busy ",
		"  and with a body that is not JSON");
	kinf_apistatus_to_error(502, "<html>", 6, &err);
	is_str(err.message, "the server responded with status 502 Bad Gateway: <html>",
		"502 with a body that is not JSON");
	is_int(err.http_status, 502, "  the status kept");
#if LONG_MAX > INT_MAX
	kinf_apistatus_to_error(4294967696L, NULL, 0, &err);
	ok(strcmp(err.message, "the server responded with status 4294967696") == 0,
		"a code past int is not read as 400 (%s)", err.message);
#else
	skip("long is int", "a code past int is not read as 400");
#endif
}

/* A 2xx body that is a Status saying Failure is an error, as client-go's. */
static void test_check_success(void) {
	struct kinf_error err = {0};
	const char *failure = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
		"\"Failure\",\"message\":\"no\",\"reason\":\"NotFound\",\"code\":404}";
	is_int(kinf_apistatus_check_success(failure, strlen(failure), &err), -KINF_EHTTP,
			"a Status saying Failure");
	is_int(err.http_status, 404, "its code");
	is_str(err.message, "no", "its message");
	const char *gone = "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":410}";
	is_int(kinf_apistatus_check_success(gone, strlen(gone), NULL), -KINF_EGONE,
			"code 410: gone");
	const char *other[] = {
		"{\"kind\":\"Status\",\"status\":\"Success\"}",
		"{\"kind\":\"Status\"}",
		"{\"kind\":\"PodList\",\"status\":\"Failure\",\"items\":[],\"x\":\"Status\"}",
		"{\"kind\":\"Pod\",\"status\":{\"phase\":\"Status\"}}",
		"not json, \"Status\"",
		"",
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(*other); i++) {
		is_int(kinf_apistatus_check_success(other[i], strlen(other[i]), NULL), 0,
				"not a failure: %s", other[i]);
	}
}

int main(void) {
	test_status_text();
	test_to_error();
	test_check_success();
	return tap_done();
}
