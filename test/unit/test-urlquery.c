#include <stdlib.h>

#include "err.h"
#include "tap.h"
#include "urlquery.h"

int main(void) {
	struct kinf_buf path = {0};
	struct kinf_urlquery q;

	kinf_urlquery_start(&q, &path, "/api/v1/pods");
	kinf_urlquery_add(&q, "labelSelector", "app in (web,db),tier!=x");
	kinf_urlquery_add(&q, "fieldSelector", "");
	kinf_urlquery_add(&q, "continue", NULL);
	kinf_urlquery_add_long(&q, "limit", 500);
	is_int(kinf_urlquery_finish(&q), 0, "built");
	is_str(path.data, "/api/v1/pods?labelSelector=app%20in%20%28web%2Cdb%29%2Ctier%21%3Dx&limit=500",
			"'?' first, '&' after, values encoded, empty and NULL values left out");

	kinf_urlquery_start(&q, &path, "/api/v1/pods?watch=1");
	kinf_urlquery_add(&q, "resourceVersion", "12/3");
	is_int(kinf_urlquery_finish(&q), 0, "built on a path with a query");
	is_str(path.data, "/api/v1/pods?watch=1&resourceVersion=12%2F3",
			"a path that has a query already goes on with '&'");

	kinf_urlquery_start(&q, &path, "/p");
	is_str(path.data, "/p", "start resets what the buffer held");
	q.rc = -KINF_ENOMEM;	/* as if an append had failed */
	kinf_urlquery_add(&q, "a", "b");
	kinf_urlquery_add_long(&q, "limit", 1);
	is_int(kinf_urlquery_finish(&q), -KINF_ENOMEM, "the first failure sticks");
	is_str(path.data, "/p", "nothing is appended after a failure");

	kinf_buf_release(&path);
	return tap_done();
}
