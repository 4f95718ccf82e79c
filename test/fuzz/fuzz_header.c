/*
 * The header-value check (src/header.c) that every token, wherever it
 * comes from, passes before it goes into a request header. Input: one
 * flags byte (bit 0: also load the value as a kubeconfig user's token,
 * written with YAML escapes; bit 1: also as --token, up to its first NUL),
 * then the value.
 *
 * Properties checked besides memory safety: the first bad byte is the
 * first control character other than tab (net/http's
 * httpguts.ValidHeaderFieldValue, written out here on its own); a refusal
 * has the code asked for and a one-line message of printable ASCII that
 * names that byte (so it can never carry the value, or a CR or LF, to a
 * terminal or a log); a kubeconfig or --token token loads exactly when it
 * is valid and then comes out byte for byte, and is refused naming the
 * token otherwise. The same bytes are also read as a Warning header's value
 * (kinf_header_warnings): each text NUL-terminated, no more text than value.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fuzz.h"
#include "header.h"
#include "kubeconfig.h"

static char path[96];

static const char *fake_getenv(const char *name) {
	(void)name;
	return NULL;
}

/* The reference: RFC 7230 field-value bytes as Go accepts them. */
static ptrdiff_t reference(const uint8_t *v, size_t len) {
	for (size_t i = 0; i < len; i++) {
		bool ctl = v[i] <= 31 || v[i] == 127;
		bool lws = v[i] == ' ' || v[i] == '\t';
		if (ctl && !lws) {
			return (ptrdiff_t)i;
		}
	}
	return -1;
}

static void check_message(const struct kinf_error *err, int code, ptrdiff_t bad) {
	char want[48];
	FUZZ_CHECK(err->code == code);
	FUZZ_CHECK(memchr(err->message, '\0', sizeof(err->message)));
	for (const char *p = err->message; *p; p++) {
		FUZZ_CHECK(*p >= 0x20 && *p < 0x7f);
	}
	snprintf(want, sizeof(want), "(byte %td)", bad + 1);
	FUZZ_CHECK(strstr(err->message, want));
}

static const struct kinf_kubeconfig_opts base_opts = {
	.insecure_skip_tls_verify = -1,
	.getenv = fake_getenv,
	.serviceaccount_dir = "/nonexistent-kinf-fuzz-sa",
};

/* Load a kubeconfig whose user token is v (ASCII here), or --token. */
static void load_token(const uint8_t *v, size_t len, bool as_flag) {
	struct kinf_kubeconfig_opts opts = base_opts;
	struct kinf_rest_config *config = NULL;
	struct kinf_error err = {0};
	struct kinf_buf y = {0}, flag = {0};
	ptrdiff_t bad;
	FILE *f;
	int rc;

	FUZZ_CHECK(kinf_buf_append_str(&y, "current-context: x\n"
		"contexts: [{name: x, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
		"users: [{name: u, user: {token: \"") == 0);
	if (as_flag) {
		FUZZ_CHECK(kinf_buf_append_str(&y, "from-the-file") == 0);
		size_t n = strnlen((const char *)v, len);
		FUZZ_CHECK(kinf_buf_append(&flag, (const char *)v, n) == 0);
		FUZZ_CHECK(kinf_buf_append_char(&flag, '\0') == 0);
		opts.token = flag.data;
		len = n;
	} else {
		for (size_t i = 0; i < len; i++) {
			FUZZ_CHECK(kinf_buf_printf(&y, "\\x%02x", v[i]) == 0);
		}
	}
	FUZZ_CHECK(kinf_buf_append_str(&y, "\"}}]\n") == 0);
	f = fopen(path, "wb");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fwrite(y.data, 1, y.len, f) == y.len);
	FUZZ_CHECK(fclose(f) == 0);
	opts.kubeconfig = path;

	rc = kinf_kubeconfig_load(&opts, &config, &err);
	bad = reference(v, len);
	if (len == 0 && as_flag) {
		/* an empty --token is no --token: the file's token is used */
		FUZZ_CHECK(rc == 0 && strcmp(config->token, "from-the-file") == 0);
	} else if (len == 0) {
		FUZZ_CHECK(rc == 0 && config->token == NULL);
	} else if (bad >= 0) {
		FUZZ_CHECK(rc == -KINF_ECONFIG && config == NULL);
		check_message(&err, KINF_ECONFIG, bad);
		FUZZ_CHECK(strstr(err.message, as_flag ? "--token holds " :
				"the token of user \"u\" holds "));
	} else {
		FUZZ_CHECK(rc == 0);
		FUZZ_CHECK(strlen(config->token) == len && memcmp(config->token, v, len) == 0);
	}
	kinf_rest_config_free(config);
	kinf_buf_release(&y);
	kinf_buf_release(&flag);
}

/* The Warning parser's texts: their bytes add up to less than the value's. */
struct warnings {
	size_t len, total, n;
};

static void on_warning(int code, const char *text, size_t len, void *userdata) {
	struct warnings *w = userdata;
	FUZZ_CHECK(code >= 0 && code <= 999);
	FUZZ_CHECK(text[len] == '\0');
	w->total += len;
	w->n++;
	/* each takes at least `DDD A ""` and a comma or the end */
	FUZZ_CHECK(w->total + w->n * 8 <= w->len + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct fuzz_input in = { data, size };
	uint8_t flags = fuzz_byte(&in);
	struct kinf_error err = {0};
	ptrdiff_t bad = reference(in.p, in.n);
	int code = flags & 4 ? KINF_EAUTH : KINF_ECONFIG;

	FUZZ_CHECK(kinf_header_value_bad_byte((const char *)in.p, in.n) == bad);
	int rc = kinf_header_value_check((const char *)in.p, in.n, "the value", code, &err);
	if (bad < 0) {
		FUZZ_CHECK(rc == 0);
	} else {
		FUZZ_CHECK(rc == -code);
		check_message(&err, code, bad);
	}

	/* The same bytes as a Warning header's value. */
	struct warnings w = { .len = in.n };
	int nw = kinf_header_warnings((const char *)in.p, in.n, on_warning, &w);
	FUZZ_CHECK(nw >= 0 && (size_t)nw == w.n);

	if (flags & 3) {
		if (!path[0]) {
			const char *tmp = getenv("TMPDIR");
			snprintf(path, sizeof(path), "%.40s/kinf-fuzz-hdr-%ld",
					tmp && *tmp ? tmp : "/tmp", (long)getpid());
		}
		/* YAML's \x escapes name code points: keep to ASCII, 1 KiB */
		size_t n = in.n < 1024 ? in.n : 1024;
		uint8_t *v = malloc(n + 1);
		FUZZ_CHECK(v != NULL);
		for (size_t i = 0; i < n; i++) {
			v[i] = in.p[i] & 0x7f;
		}
		v[n] = 0;
		if (flags & 1) {
			load_token(v, n, false);
		}
		if (flags & 2) {
			load_token(v, n, true);
		}
		free(v);
		unlink(path);
	}
	return 0;
}
