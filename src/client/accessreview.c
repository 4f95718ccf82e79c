#include <jansson.h>
#include <string.h>

#include "accessreview.h"
#include "buf.h"
#include "http.h"
#include "jsonnum.h"
#include "json.h"

#define SSAR_PATH "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

/* ,"name":"value" into b when value is set. */
static int attr(struct kinf_buf *b, const char *name, const char *value) {
	if (!value || !value[0]) {
		return 0;
	}
	int rc = kinf_buf_printf(b, ",\"%s\":", name);
	return rc < 0 ? rc : kinf_json_quote(b, value, strlen(value));
}

int kinf_access_review(struct kinf_http *http, const char *verb, const char *group,
		const char *resource, const char *namespace, bool *ret_allowed,
		struct kinf_error *reterr) {
	struct kinf_buf body = {0};
	struct kinf_http_response resp = {0};
	int rc = kinf_buf_append_str(&body, "{\"kind\":\"SelfSubjectAccessReview\","
			"\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":{\"resourceAttributes\":"
			"{\"verb\":");
	rc |= kinf_json_quote(&body, verb, strlen(verb));
	rc |= attr(&body, "namespace", namespace);
	rc |= attr(&body, "group", group);
	rc |= attr(&body, "resource", resource);
	rc |= kinf_buf_append_str(&body, "}}}");
	if (rc < 0) {
		kinf_buf_release(&body);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	struct kinf_http_request req = {
		.path = SSAR_PATH, .body = body.data, .body_len = body.len,
	};
	rc = kinf_http_get(http, &req, &resp, reterr);
	if (rc == 0) {
		json_t *root = kinf_jsonnum_load(resp.body.data ? resp.body.data : "",
				resp.body.len, 0, NULL);
		json_t *allowed = json_object_get(json_object_get(root, "status"), "allowed");
		if (json_is_boolean(allowed)) {
			*ret_allowed = json_is_true(allowed);
		} else {
			rc = kinf_error_set(reterr, KINF_EJSON, "SelfSubjectAccessReview: "
					"no status.allowed in the answer");
		}
		json_decref(root);
	}
	kinf_http_response_release(&resp);
	kinf_buf_release(&body);
	return rc;
}
