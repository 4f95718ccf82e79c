#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "listsplit.h"
#include "tap.h"

/*
 * The list splitter (src/listsplit.c); the lister over it is test-list.c
 * and test/cli/pager.bats. Members and elements become "key=value" lines.
 */
static int on_member(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct kinf_buf *log = userdata;
	must(kinf_buf_printf(log, "%.*s=%.*s\n", (int)key_len, key, (int)len, value));
	return 0;
}

static int on_element(const char *key, size_t key_len, const char *value,
		size_t len, void *userdata) {
	struct kinf_buf *log = userdata;
	must(kinf_buf_printf(log, "%.*s[]=%.*s\n", (int)key_len, key, (int)len, value));
	return 0;
}

static const struct kinf_listsplit_ops ops = {
	.member = on_member, .element = on_element,
};

/* Split s whole and at every two-piece cut: 0 and the log, or the error. */
static int split(const char *s, struct kinf_buf *log, struct kinf_error *err, int *ret_bad) {
	size_t len = strlen(s);
	int rc0 = 0;
	*ret_bad = 0;
	for (size_t cut = 0; cut <= len; cut++) {
		struct kinf_buf l = {0};
		struct kinf_error e = {0};
		struct kinf_listsplit *sp = kinf_listsplit_new(&ops, &l, 0);
		int rc = kinf_listsplit_feed(sp, s, cut, &e);
		if (rc == 0) {
			rc = kinf_listsplit_feed(sp, s + cut, len - cut, &e);
		}
		if (rc == 0) {
			rc = kinf_listsplit_finish(sp, &e);
		}
		kinf_listsplit_free(sp);
		if (cut == 0) {
			rc0 = rc;
			*err = e;
			kinf_buf_reset(log);
			must(kinf_buf_append(log, l.data ? l.data : "", l.len));
			must(kinf_buf_append(log, "", 0));
		} else if (rc != rc0 || (rc == 0 && strcmp(l.data ? l.data : "", log->data) != 0)) {
			(*ret_bad)++;
		}
		kinf_buf_release(&l);
	}
	return rc0;
}

/* client-go reads "items": null as an empty list and ignores other members. */
static void test_members(void) {
	struct kinf_buf log = {0};
	struct kinf_error err = {0};
	int bad;

	int rc = split("{\"kind\":\"PodList\",\"items\":null}", &log, &err, &bad);
	ok(rc == 0 && bad == 0, "\"items\": null splits (%s)", err.message);
	is_str(log.data, "kind=\"PodList\"\nitems=null\n", "handed over as a member");

	rc = split("{\"n\":3,\"kind\":\"PodList\",\"s\":\"x\",\"t\":true, \"f\" : false ,\"z\":null,"
			"\"neg\":-1.5e3,\"metadata\":{\"resourceVersion\":\"3\"},\"a\":[1,\"]\",{\"b\":[]}],"
			"\"items\":[{\"metadata\":{\"name\":\"p\"}}],\"o\":{\"k\":\"}\"},\"e\":0}",
			&log, &err, &bad);
	ok(rc == 0 && bad == 0, "scalar, array and object members of every type split, "
			"at every cut (%d bad) (%s)", bad, err.message);
	is_str(log.data, "n=3\nkind=\"PodList\"\ns=\"x\"\nt=true\nf=false\nz=null\nneg=-1.5e3\n"
			"metadata={\"resourceVersion\":\"3\"}\na=[1,\"]\",{\"b\":[]}]\n"
			"items[]={\"metadata\":{\"name\":\"p\"}}\no={\"k\":\"}\"}\ne=0\n",
			"each member exactly as sent");

	rc = split("{\"items\":[],\"x\":12}", &log, &err, &bad);
	ok(rc == 0 && bad == 0, "a number as the last member");
	is_str(log.data, "x=12\n", "its value");

	/* The splitter finds the member's end; the pager validates what it holds. */
	rc = split("{\"x\":tru,\"items\":[]}", &log, &err, &bad);
	ok(rc == 0 && bad == 0, "a malformed scalar is handed over whole");
	is_str(log.data, "x=tru\n", "for the member callback to judge");

	static const char *const broken[] = {
		"{\"x\":3", "{\"x\":3,}", "{\"x\":}", "{\"x\" 3}", "{\"x\":3]", "{3:1}",
		"{\"x\":3\"y\"}", "{\"x\":true{}}", "{\"items\":[],}", "{,}",
	};
	for (size_t i = 0; i < sizeof(broken) / sizeof(*broken); i++) {
		rc = split(broken[i], &log, &err, &bad);
		ok(rc == -KINF_EJSON && bad == 0, "%s: %s", broken[i], err.message);
	}
	kinf_buf_release(&log);
}

int main(void) {
	test_members();
	return tap_done();
}
