/*
 * The table printer: kubectl's layout (Go tabwriter, minwidth 6, padding
 * 3, the last column unpadded), <none> for missing cells, escaping and
 * color, streaming rows, and the server-side Table as kubectl get prints
 * it (headers upper-cased, priority columns with -o wide, NAMESPACE and
 * CONTEXT columns, kind/name in NAME).
 */
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "table.h"
#include "tap.h"

/* What f wrote since it was opened, as a string to free. */
struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *capture_open(struct capture *c) {
	*c = (struct capture){0};
	c->f = open_memstream(&c->text, &c->len);
	return c->f;
}

static char *capture_take(struct capture *c) {
	fclose(c->f);
	return c->text;
}

static void test_layout(void) {
	struct capture c;
	struct kinf_table *t = kinf_table_new(3);
	const char *const h[] = { "NAME", "READY", "AGE" };
	const char *const r1[] = { "web-1", "1/1", "5m" };
	const char *const r2[] = { "a-much-longer-name", NULL, "3d" };
	ok(t && kinf_table_add_row(t, h) == 0 && kinf_table_add_row(t, r1) == 0 &&
			kinf_table_add_row(t, r2) == 0, "three rows added");
	ok(kinf_table_print(t, capture_open(&c)) == 0, "printed");
	char *s = capture_take(&c);
	is_str(s, "NAME                 READY    AGE\n"
			"web-1                1/1      5m\n"
			"a-much-longer-name   <none>   3d\n",
			"columns padded by 3 to the widest cell, the last unpadded, NULL <none>");
	free(s);
	kinf_table_free(t);

	t = kinf_table_new(2);
	const char *const tiny[] = { "A", "B" };
	must(kinf_table_add_row(t, tiny));
	must(kinf_table_print(t, capture_open(&c)));
	s = capture_take(&c);
	is_str(s, "A     B\n", "a column is at least 6 wide");
	free(s);
	kinf_table_free(t);

	/* Display width counts code points, not bytes. */
	t = kinf_table_new(2);
	const char *const u[] = { "\xc3\xa9t\xc3\xa9", "x" };
	const char *const v[] = { "abc", "y" };
	must(kinf_table_add_row(t, u));
	must(kinf_table_add_row(t, v));
	must(kinf_table_print(t, capture_open(&c)));
	s = capture_take(&c);
	is_str(s, "\xc3\xa9t\xc3\xa9   x\nabc   y\n", "UTF-8 cells by code points");
	free(s);
	kinf_table_free(t);
}

static void test_escape_and_color(void) {
	struct capture c;
	struct kinf_table *t = kinf_table_new(2);
	const char *const r[] = { "evil\033[2J", "a\nb" };
	must(kinf_table_add_row(t, r));
	must(kinf_table_print(t, capture_open(&c)));
	char *s = capture_take(&c);
	ok(s && !strchr(s, '\033') && strchr(s, '\n') == s + strlen(s) - 1,
			"no ESC and no line break of the cells' own reach the terminal: %s", s);
	free(s);
	kinf_table_free(t);

	t = kinf_table_new(2);
	const char *const h[] = { "EVENT", "NAME" };
	const char *const e[] = { "ADDED", "web" };
	must(kinf_table_add_row(t, h));
	kinf_table_color_next(t, 0, "\033[32m");
	must(kinf_table_add_row(t, e));
	must(kinf_table_print(t, capture_open(&c)));
	s = capture_take(&c);
	is_str(s, "EVENT   NAME\n\033[32mADDED\033[0m   web\n",
			"the color's escapes take no width, and only the next row has it");
	free(s);
	kinf_table_free(t);
}

static void test_streaming(void) {
	struct capture c;
	struct kinf_table *t = kinf_table_new(2);
	const char *const widest[] = { "", "Replaced" };
	const char *const h[] = { "POP", "TYPE" };
	const char *const r1[] = { "1", "Added" };
	const char *const r2[] = { "2", "Deleted" };
	const char *const r3[] = { "30000000", "Sync" };
	kinf_table_widen(t, widest);
	must(kinf_table_add_row(t, h));
	must(kinf_table_add_row(t, r1));
	FILE *f = capture_open(&c);
	ok(kinf_table_flush(t, f) == 0, "flushed");
	ok(kinf_table_print(t, f) == 0, "nothing left after a flush");
	must(kinf_table_print_row(t, r2, f));
	must(kinf_table_print_row(t, r3, f));
	char *s = capture_take(&c);
	is_str(s, "POP   TYPE\n1     Added\n2     Deleted\n30000000   Sync\n",
			"widened, flushed, then a row at a time with the widths so far");
	free(s);
	kinf_table_free(t);
}

static const char columns[] =
	"[{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\",\"priority\":0},"
	"{\"name\":\"Ready\",\"type\":\"string\",\"format\":\"\",\"priority\":0},"
	"{\"name\":\"Restarts\",\"type\":\"integer\",\"format\":\"\",\"priority\":0},"
	"{\"name\":\"IP\",\"type\":\"string\",\"format\":\"\",\"priority\":1}]";

static char *server_table(const struct kinf_table_server_opts *opts,
		const char *cols, int *ret_rc) {
	static char k1[] = "default/web-1", j1[] = "{\"cells\":[\"web-1\",\"1/1\",0,\"10.0.0.1\"]}";
	static char k2[] = "kube-system/dns", j2[] = "{\"cells\":[\"dns\\nmore\",\"0/1\",1234567.0,null]}";
	const struct kinf_list_row rows[] = {
		{ k1, j1, sizeof(j1) - 1 },
		{ k2, j2, sizeof(j2) - 1 },
	};
	struct capture c;
	struct kinf_error err = {0};
	*ret_rc = kinf_table_print_server(capture_open(&c), cols, rows, 2, opts, &err);
	char *s = capture_take(&c);
	if (*ret_rc < 0) {
		printf("# %s\n", err.message);
	}
	return s;
}

static void test_server_table(void) {
	struct kinf_table_server_opts opts = {0};
	int rc;
	char *s = server_table(&opts, columns, &rc);
	is_str(s, "NAME     READY   RESTARTS\nweb-1    1/1     0\ndns...   0/1     1.234567e+06\n",
			"headers upper-cased, priority 1 hidden, cells as Go's %%v (a float too), "
			"a string to its first line break");
	free(s);

	opts.wide = true;
	s = server_table(&opts, columns, &rc);
	is_str(s, "NAME     READY   RESTARTS       IP\nweb-1    1/1     0              10.0.0.1\n"
			"dns...   0/1     1.234567e+06   \n", "-o wide: priority 1 too, null as nothing");
	free(s);

	opts = (struct kinf_table_server_opts){ .with_namespace = true, .no_headers = true,
		.name_prefix = "pod/" };
	s = server_table(&opts, columns, &rc);
	is_str(s, "default       pod/web-1    1/1   0\nkube-system   pod/dns...   0/1   1.234567e+06\n",
			"NAMESPACE from the key, kind/name in NAME, no headers");
	free(s);

	const char *const contexts[] = { "kind-a", "kind-b" };
	opts = (struct kinf_table_server_opts){ .contexts = contexts };
	s = server_table(&opts, columns, &rc);
	is_str(s, "CONTEXT   NAME     READY   RESTARTS\nkind-a    web-1    1/1     0\n"
			"kind-b    dns...   0/1     1.234567e+06\n", "a CONTEXT column first");
	free(s);

	opts = (struct kinf_table_server_opts){0};
	s = server_table(&opts, "{\"not\":\"an array\"}", &rc);
	ok(rc == -KINF_EJSON, "columns that are not an array: -KINF_EJSON");
	free(s);
	struct capture c;
	struct kinf_error err = {0};
	rc = kinf_table_print_server(capture_open(&c), "{}", NULL, 0, &opts, &err);
	is_str(err.message, "table columns: not an array", "the error says what was wrong");
	s = capture_take(&c);
	free(s);
}

int main(void) {
	test_layout();
	test_escape_and_color();
	test_streaming();
	test_server_table();
	return tap_done();
}
