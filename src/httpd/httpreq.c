#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hex.h"
#include "httpreq.h"

static int fail(struct kinf_error *reterr, int status, const char *msg) {
	int rc = kinf_error_set(reterr, status == 500 ? KINF_ENOMEM : status == 413 ? KINF_ETOOBIG :
		status == 501 || status == 505 || status == 417 ? KINF_EUNSUPPORTED : KINF_EINVAL,
		"%s", msg);
	if (reterr) {
		reterr->http_status = status;
	}
	return rc;
}

static bool is_tchar(unsigned char c) {
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
		return true;
	}
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/*
 * Percent-decode s in place (plus as space when plus is set). Returns false
 * on a malformed escape or a decoded NUL, leaving s unchanged.
 */
static bool pct_decode(char *s, bool plus) {
	for (const char *p = s; *p; p++) {
		if (*p == '%') {
			int hi = kinf_hex_value(p[1]);
			int lo = hi < 0 ? -1 : kinf_hex_value(p[2]);
			if (lo < 0 || (hi == 0 && lo == 0)) {
				return false;
			}
			p += 2;
		}
	}
	char *w = s;
	for (const char *p = s; *p; p++) {
		if (*p == '%') {
			*w++ = (char)(kinf_hex_value(p[1]) * 16 + kinf_hex_value(p[2]));
			p += 2;
		} else if (plus && *p == '+') {
			*w++ = ' ';
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
	return true;
}

static bool has_token(const char *list, const char *tok) {
	size_t n = strlen(tok);
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',') {
			p++;
		}
		const char *e = p;
		while (*e && *e != ',') {
			e++;
		}
		const char *t = e;
		while (t > p && (t[-1] == ' ' || t[-1] == '\t')) {
			t--;
		}
		if ((size_t)(t - p) == n && strncasecmp(p, tok, n) == 0) {
			return true;
		}
		p = e;
	}
	return false;
}

void kinf_httpreq_free(struct kinf_httpreq *req) {
	if (!req) {
		return;
	}
	free(req->headers);
	free(req->params);
	free(req->storage_);
	free(req);
}

static int parse_request_line(struct kinf_httpreq *req, char *line, struct kinf_error *reterr) {
	char *sp1 = strchr(line, ' ');
	if (!sp1 || sp1 == line) {
		return fail(reterr, 400, "malformed HTTP request line");
	}
	*sp1 = '\0';
	for (const char *p = line; *p; p++) {
		if (!is_tchar((unsigned char)*p)) {
			return fail(reterr, 400, "malformed HTTP method");
		}
	}
	char *target = sp1 + 1;
	char *sp2 = strchr(target, ' ');
	if (!sp2 || sp2 == target) {
		return fail(reterr, 400, "malformed HTTP request line");
	}
	*sp2 = '\0';
	const char *version = sp2 + 1;
	if (strcmp(version, "HTTP/1.1") == 0) {
		req->minor = 1;
	} else if (strcmp(version, "HTTP/1.0") == 0) {
		req->minor = 0;
	} else if (strncmp(version, "HTTP/", 5) == 0 && version[5] >= '0' && version[5] <= '9' &&
			version[6] == '.' && version[7] >= '0' && version[7] <= '9' && !version[8]) {
		return fail(reterr, 505, "HTTP version not supported");
	} else {
		return fail(reterr, 400, "malformed HTTP version");
	}
	if (target[0] != '/') {
		return fail(reterr, 400, "malformed request target: an absolute path expected");
	}
	for (const unsigned char *p = (const unsigned char *)target; *p; p++) {
		if (*p < 0x21 || *p == 0x7f) {
			return fail(reterr, 400, "invalid control character in URL");
		}
	}
	req->method = line;
	req->target = target;
	return 0;
}

/* Split the target into the decoded path and the decoded parameters. */
static int parse_target(struct kinf_httpreq *req, char *pathbuf, char *querybuf,
		struct kinf_error *reterr) {
	const char *q = strchr(req->target, '?');
	size_t plen = q ? (size_t)(q - req->target) : strlen(req->target);
	memcpy(pathbuf, req->target, plen);
	pathbuf[plen] = '\0';
	if (!pct_decode(pathbuf, false)) {
		return fail(reterr, 400, "invalid URL escape in path");
	}
	req->path = pathbuf;
	req->query = q ? q + 1 : "";
	strcpy(querybuf, req->query);

	size_t n = 1;
	for (const char *p = querybuf; *p; p++) {
		n += *p == '&';
	}
	req->params = calloc(n, sizeof(*req->params));
	if (!req->params) {
		return fail(reterr, 500, "out of memory");
	}
	char *p = querybuf;
	while (*p) {
		char *amp = strchr(p, '&');
		if (amp) {
			*amp = '\0';
		}
		if (*p) {
			struct kinf_httpreq_param *prm = &req->params[req->n_params++];
			char *eq = strchr(p, '=');
			if (eq) {
				*eq = '\0';
			}
			prm->name = p;
			prm->value = eq ? eq + 1 : p + strlen(p);
			bool ok = pct_decode(p, true);
			if (ok && eq) {
				ok = pct_decode(eq + 1, true);
			}
			prm->bad = !ok;
		}
		if (!amp) {
			break;
		}
		p = amp + 1;
	}
	return 0;
}

static int parse_content_length(struct kinf_httpreq *req, const char *v, size_t max_body,
		struct kinf_error *reterr) {
	long long n = 0;
	if (!*v) {
		return fail(reterr, 400, "bad Content-Length");
	}
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9') {
			return fail(reterr, 400, "bad Content-Length");
		}
		if (n > (LLONG_MAX - 9) / 10) {
			return fail(reterr, 413, "request body too large");
		}
		n = n * 10 + (*p - '0');
	}
	if (req->content_length >= 0 && req->content_length != n) {
		return fail(reterr, 400, "multiple Content-Length headers");
	}
	req->content_length = n;
	if ((unsigned long long)n > max_body) {
		return fail(reterr, 413, "request body too large");
	}
	return 0;
}

static int parse_header(struct kinf_httpreq *req, char *line, const struct kinf_httpreq_limits *lim,
		bool *seen_host, struct kinf_error *reterr) {
	if (line[0] == ' ' || line[0] == '\t') {
		return fail(reterr, 400, "obsolete line folding in header");
	}
	char *colon = strchr(line, ':');
	if (!colon || colon == line) {
		return fail(reterr, 400, "malformed header line");
	}
	*colon = '\0';
	for (const char *p = line; *p; p++) {
		if (!is_tchar((unsigned char)*p)) {
			return fail(reterr, 400, "invalid header name");
		}
	}
	char *v = colon + 1;
	while (*v == ' ' || *v == '\t') {
		v++;
	}
	char *e = v + strlen(v);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t')) {
		e--;
	}
	*e = '\0';
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
			return fail(reterr, 400, "invalid header value");
		}
	}
	if (req->n_headers >= lim->max_headers) {
		return fail(reterr, 431, "too many header fields");
	}
	req->headers[req->n_headers].name = line;
	req->headers[req->n_headers].value = v;
	req->n_headers++;

	if (strcasecmp(line, "Content-Length") == 0) {
		return parse_content_length(req, v, lim->max_body, reterr);
	}
	if (strcasecmp(line, "Transfer-Encoding") == 0) {
		if (strcasecmp(v, "chunked") != 0 || req->chunked) {
			return fail(reterr, 501, "unsupported transfer encoding");
		}
		req->chunked = true;
	} else if (strcasecmp(line, "Host") == 0) {
		if (*seen_host) {
			return fail(reterr, 400, "too many Host headers");
		}
		*seen_host = true;
	} else if (strcasecmp(line, "Connection") == 0) {
		if (has_token(v, "close")) {
			req->keep_alive = false;
		} else if (has_token(v, "keep-alive") && req->minor == 0) {
			req->keep_alive = true;
		}
	} else if (strcasecmp(line, "Expect") == 0) {
		if (strcasecmp(v, "100-continue") != 0) {
			return fail(reterr, 417, "unsupported Expect header");
		}
		req->expect_continue = true;
	}
	return 0;
}

int kinf_httpreq_parse(const char *data, size_t len, const struct kinf_httpreq_limits *limits,
		struct kinf_httpreq **ret_req, size_t *ret_headlen, struct kinf_error *reterr) {
	struct kinf_httpreq_limits lim = {
		.max_line = KINF_HTTPREQ_MAX_LINE,
		.max_head = KINF_HTTPREQ_MAX_HEAD,
		.max_headers = KINF_HTTPREQ_MAX_HEADERS,
		.max_body = KINF_HTTPREQ_MAX_BODY,
	};
	if (limits) {
		lim.max_line = limits->max_line ? limits->max_line : lim.max_line;
		lim.max_head = limits->max_head ? limits->max_head : lim.max_head;
		lim.max_headers = limits->max_headers ? limits->max_headers : lim.max_headers;
		lim.max_body = limits->max_body ? limits->max_body : lim.max_body;
	}

	/* Empty lines before a request line are skipped (RFC 9112 2.2). */
	size_t skip = 0;
	while (skip < len && (data[skip] == '\r' || data[skip] == '\n')) {
		skip++;
	}
	if (skip > 64) {
		return fail(reterr, 400, "malformed HTTP request");
	}
	const char *s = data + skip;
	size_t n = len - skip;

	const char *nl = memchr(s, '\n', n < lim.max_line + 2 ? n : lim.max_line + 2);
	if (!nl) {
		return n > lim.max_line + 1 ? fail(reterr, 414, "request line too long") : 0;
	}
	if ((size_t)(nl - s) > lim.max_line + (nl > s && nl[-1] == '\r')) {
		return fail(reterr, 414, "request line too long");
	}
	/* Find the empty line that ends the head, counting lines on the way. */
	size_t lines = 1, headlen = 0;
	const char *p = nl + 1;
	const char *end = s + (n < lim.max_head + 2 ? n : lim.max_head + 2);
	while (p < end) {
		const char *q = memchr(p, '\n', (size_t)(end - p));
		if (!q) {
			break;
		}
		if (q == p || (q == p + 1 && *p == '\r')) {
			headlen = (size_t)(q + 1 - s);
			break;
		}
		if (++lines > lim.max_headers + 1) {
			return fail(reterr, 431, "too many header fields");
		}
		p = q + 1;
	}
	if (!headlen) {
		return n > lim.max_head ? fail(reterr, 431, "request header fields too large") : 0;
	}
	if (headlen > lim.max_head + 2) {
		return fail(reterr, 431, "request header fields too large");
	}
	if (memchr(s, '\0', headlen)) {
		return fail(reterr, 400, "NUL byte in request head");
	}

	size_t tlen = headlen;	/* the target's copies fit in this */
	struct kinf_httpreq *req = calloc(1, sizeof(*req));
	if (!req) {
		return fail(reterr, 500, "out of memory");
	}
	req->content_length = -1;
	req->storage_ = malloc(headlen + 1 + 2 * (tlen + 1));
	req->headers = calloc(lines, sizeof(*req->headers));
	if (!req->storage_ || !req->headers) {
		kinf_httpreq_free(req);
		return fail(reterr, 500, "out of memory");
	}
	char *head = req->storage_;
	memcpy(head, s, headlen);
	head[headlen] = '\0';
	char *pathbuf = head + headlen + 1;
	char *querybuf = pathbuf + tlen + 1;

	int rc = 0;
	bool seen_host = false;
	char *line = head;
	for (size_t i = 0; rc == 0; i++) {
		char *lf = strchr(line, '\n');
		char *le = lf;
		if (le > line && le[-1] == '\r') {
			le--;
		}
		*le = '\0';
		if (strchr(line, '\r')) {
			rc = fail(reterr, 400, "bare CR in request head");
			break;
		}
		if (i == 0) {
			rc = parse_request_line(req, line, reterr);
			if (rc == 0) {
				req->keep_alive = req->minor == 1;
				rc = parse_target(req, pathbuf, querybuf, reterr);
			}
		} else if (!*line) {
			break;
		} else {
			rc = parse_header(req, line, &lim, &seen_host, reterr);
		}
		line = lf + 1;
	}
	if (rc == 0 && req->minor == 1 && !seen_host) {
		rc = fail(reterr, 400, "missing required Host header");
	}
	if (rc == 0 && req->chunked && req->content_length >= 0) {
		rc = fail(reterr, 400, "both Transfer-Encoding and Content-Length");
	}
	if (rc < 0) {
		kinf_httpreq_free(req);
		return rc;
	}
	*ret_req = req;
	*ret_headlen = skip + headlen;
	return 1;
}

const char *kinf_httpreq_header(const struct kinf_httpreq *req, const char *name) {
	for (size_t i = 0; i < req->n_headers; i++) {
		if (strcasecmp(req->headers[i].name, name) == 0) {
			return req->headers[i].value;
		}
	}
	return NULL;
}

const struct kinf_httpreq_param *kinf_httpreq_param(const struct kinf_httpreq *req,
		const char *name) {
	for (size_t i = 0; i < req->n_params; i++) {
		if (strcmp(req->params[i].name, name) == 0) {
			return &req->params[i];
		}
	}
	return NULL;
}

/*
 * The length of the white space rune at p (Go's unicode.IsSpace: ASCII
 * white space, U+0085, U+00A0, U+1680, U+2000 to U+200A, U+2028, U+2029,
 * U+202F, U+205F, U+3000), 0 for anything else.
 */
static size_t space_rune(const unsigned char *p) {
	if (*p == ' ' || (*p >= '\t' && *p <= '\r')) {
		return 1;
	}
	if (p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0)) {
		return 2;
	}
	if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) {
		return 3;
	}
	if (p[0] == 0xe2 && p[1] == 0x80 && ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 ||
			p[2] == 0xa9 || p[2] == 0xaf)) {
		return 3;
	}
	if ((p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) ||
			(p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80)) {
		return 3;
	}
	return 0;
}

/* The last white space rune ending at end (after start), its length, or 0. */
static size_t space_rune_before(const unsigned char *start, const unsigned char *end) {
	for (size_t k = 1; k <= 3 && end - k >= start; k++) {
		if (space_rune(end - k) == k) {
			return k;
		}
	}
	return 0;
}

/*
 * The apiserver's bearertoken authenticator: the header value with white
 * space trimmed (strings.TrimSpace), split on single spaces into at most
 * three parts: "bearer" in any case, then the token, which must not be
 * empty; a third part is ignored. *ret_spaced: an empty token followed
 * by another part ("Bearer  TOKEN"), which the apiserver refuses with a
 * Warning.
 */
static const char *bearer(const struct kinf_httpreq *req, size_t *ret_len, bool *ret_spaced) {
	const char *v = kinf_httpreq_header(req, "Authorization");
	*ret_spaced = false;
	if (!v) {
		return NULL;
	}
	const unsigned char *s = (const unsigned char *)v, *e = s + strlen(v);
	size_t k;
	while (s < e && (k = space_rune(s))) {
		s += k;
	}
	while (e > s && (k = space_rune_before(s, e))) {
		e -= k;
	}
	if ((size_t)(e - s) < 7 || strncasecmp((const char *)s, "bearer ", 7) != 0) {
		return NULL;
	}
	const unsigned char *t = s + 7;
	const unsigned char *te = memchr(t, ' ', (size_t)(e - t));
	if (!te) {
		te = e;
	}
	if (te == t) {
		*ret_spaced = te < e;
		return NULL;
	}
	*ret_len = (size_t)(te - t);
	return (const char *)t;
}

const char *kinf_httpreq_bearer(const struct kinf_httpreq *req, size_t *ret_len) {
	bool spaced;
	return bearer(req, ret_len, &spaced);
}

bool kinf_httpreq_bearer_spaced(const struct kinf_httpreq *req) {
	size_t len;
	bool spaced;
	bearer(req, &len, &spaced);
	return spaced;
}

bool kinf_httpreq_token_equal(const char *a, size_t alen, const char *b, size_t blen) {
	volatile unsigned char d = (unsigned char)(alen != blen);
	size_t n = alen > blen ? alen : blen;
	for (size_t i = 0; i < n; i++) {
		unsigned char x = i < alen ? (unsigned char)a[i] : 0;
		unsigned char y = i < blen ? (unsigned char)b[i] : 0;
		d |= x ^ y;
	}
	return d == 0;
}

static bool parse_bool(const char *v) {
	return !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
}

/* strconv.ParseInt(v, 10, 64) with its error messages. */
static int parse_int(const char *v, long long *ret, struct kinf_error *reterr) {
	const char *p = v;
	bool neg = false;
	unsigned long long n = 0, max = (unsigned long long)LLONG_MAX;
	if (*p == '+' || *p == '-') {
		neg = *p == '-';
		p++;
	}
	if (!*p) {
		goto syntax;
	}
	bool range = false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9') {
			goto syntax;
		}
		unsigned d = (unsigned)(*p - '0');
		if (n > (max + 1 - d) / 10) {
			range = true;
		} else {
			n = n * 10 + d;
		}
	}
	if (range || n > max + neg) {
		kinf_error_fill(reterr, KINF_EINVAL, "strconv.ParseInt: parsing \"%.400s\": value out of range", v);
		goto out;
	}
	*ret = neg ? (n == max + 1 ? LLONG_MIN : -(long long)n) : (long long)n;
	return 0;
syntax:
	kinf_error_fill(reterr, KINF_EINVAL, "strconv.ParseInt: parsing \"%.400s\": invalid syntax", v);
out:
	if (reterr) {
		reterr->http_status = 400;
	}
	return -KINF_EINVAL;
}

int kinf_apiquery_parse(const struct kinf_httpreq *req, struct kinf_apiquery *ret,
		struct kinf_error *reterr) {
	struct kinf_apiquery q = { .send_initial_events = -1 };
	bool seen[13] = {0};
	static const char *const names[13] = {
		"labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
		"resourceVersionMatch", "watch", "allowWatchBookmarks", "sendInitialEvents",
		"timeoutSeconds", "includeObject", "pretty", "timeout",
	};

	for (size_t i = 0; i < req->n_params; i++) {
		const struct kinf_httpreq_param *prm = &req->params[i];
		if (prm->bad) {
			int rc = kinf_error_set(reterr, KINF_EINVAL,
				"invalid query parameter encoding: %.200s", prm->name);
			if (reterr) {
				reterr->http_status = 400;
			}
			return rc;
		}
		size_t k = 0;
		while (k < 13 && strcmp(prm->name, names[k]) != 0) {
			k++;
		}
		if (k == 13) {
			if (q.n_unknown < sizeof(q.unknown) / sizeof(q.unknown[0])) {
				q.unknown[q.n_unknown] = prm->name;
			}
			q.n_unknown++;
			continue;
		}
		if (seen[k]) {
			continue;
		}
		seen[k] = true;
		const char *v = prm->value;
		int rc = 0;
		switch (k) {
		case 0: q.label_selector = v; break;
		case 1: q.field_selector = v; break;
		case 2: rc = parse_int(v, &q.limit, reterr); q.has_limit = true; break;
		case 3: q.continue_token = v; break;
		case 4: q.resource_version = v; break;
		case 5: q.resource_version_match = v; break;
		case 6: q.watch = parse_bool(v); break;
		case 7: q.allow_watch_bookmarks = parse_bool(v); break;
		case 8: q.send_initial_events = parse_bool(v); break;
		case 9: rc = parse_int(v, &q.timeout_seconds, reterr); q.has_timeout_seconds = true; break;
		case 10: q.include_object = v; break;
		case 11: q.pretty = parse_bool(v); break;
		default: break;	/* timeout: a duration the apiserver ignores on reads */
		}
		if (rc < 0) {
			return rc;
		}
	}
	*ret = q;
	return 0;
}

static void copy_lower(char *dst, size_t cap, const char *s, size_t n, bool lower) {
	if (n >= cap) {
		n = cap - 1;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		dst[i] = lower && c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
	}
	dst[n] = '\0';
}

static const char *trim(const char *s, const char *e, const char **ret_end) {
	while (s < e && (*s == ' ' || *s == '\t')) {
		s++;
	}
	while (e > s && (e[-1] == ' ' || e[-1] == '\t')) {
		e--;
	}
	*ret_end = e;
	return s;
}

static enum kinf_accept_kind classify(const struct kinf_accept_range *r) {
	bool json = strcmp(r->type, "application/json") == 0;
	if (r->as[0]) {
		if (!json) {
			return KINF_ACCEPT_NONE;
		}
		if (strcmp(r->as, "Table") == 0 && strcmp(r->group, "meta.k8s.io") == 0 &&
				(strcmp(r->version, "v1") == 0 || strcmp(r->version, "v1beta1") == 0)) {
			return KINF_ACCEPT_TABLE;
		}
		if (strcmp(r->as, "APIGroupDiscoveryList") == 0 &&
				strcmp(r->group, "apidiscovery.k8s.io") == 0 &&
				(strcmp(r->version, "v2") == 0 || strcmp(r->version, "v2beta1") == 0)) {
			return KINF_ACCEPT_DISCOVERY;
		}
		return KINF_ACCEPT_NONE;
	}
	if (json || strcmp(r->type, "*/*") == 0 || strcmp(r->type, "application/*") == 0) {
		return KINF_ACCEPT_JSON;
	}
	if (strcmp(r->type, "application/yaml") == 0) {
		return KINF_ACCEPT_YAML;
	}
	return KINF_ACCEPT_NONE;
}

void kinf_accept_parse(const char *header, struct kinf_accept *ret) {
	memset(ret, 0, sizeof(*ret));
	if (!header || !*header) {
		header = "application/json";
	}
	const char *p = header;
	while (*p && ret->n < sizeof(ret->ranges) / sizeof(ret->ranges[0])) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *te;
		const char *t = trim(p, semi ? semi : end, &te);
		struct kinf_accept_range r = { .q = 1 };
		const char *slash = memchr(t, '/', (size_t)(te - t));
		bool okay = slash && slash > t && slash + 1 < te;
		copy_lower(r.type, sizeof(r.type), t, (size_t)(te - t), true);
		while (okay && semi) {
			const char *ps = semi + 1;
			semi = memchr(ps, ';', (size_t)(end - ps));
			const char *pe;
			ps = trim(ps, semi ? semi : end, &pe);
			const char *eq = memchr(ps, '=', (size_t)(pe - ps));
			if (!eq) {
				okay = false;
				break;
			}
			const char *ke, *ve;
			const char *k = trim(ps, eq, &ke);
			const char *v = trim(eq + 1, pe, &ve);
			size_t kl = (size_t)(ke - k), vl = (size_t)(ve - v);
			if (vl >= 2 && *v == '"' && ve[-1] == '"') {
				v++;
				vl -= 2;
			}
			if (kl == 2 && strncasecmp(k, "as", 2) == 0) {
				copy_lower(r.as, sizeof(r.as), v, vl, false);
			} else if (kl == 1 && (*k == 'v' || *k == 'V')) {
				copy_lower(r.version, sizeof(r.version), v, vl, false);
			} else if (kl == 1 && (*k == 'g' || *k == 'G')) {
				copy_lower(r.group, sizeof(r.group), v, vl, false);
			} else if (kl == 1 && (*k == 'q' || *k == 'Q')) {
				char num[16];
				copy_lower(num, sizeof(num), v, vl, false);
				char *ep;
				r.q = strtod(num, &ep);
				if (*ep || ep == num || !(r.q >= 0 && r.q <= 1)) {
					okay = false;
				}
			}
		}
		if (okay && r.q > 0) {
			r.kind = classify(&r);
			ret->ranges[ret->n++] = r;
		}
		if (!comma) {
			break;
		}
		p = comma + 1;
	}
}

const struct kinf_accept_range *kinf_accept_find(const struct kinf_accept *acc,
		enum kinf_accept_kind kind) {
	for (size_t i = 0; i < acc->n; i++) {
		if (acc->ranges[i].kind == kind) {
			return &acc->ranges[i];
		}
	}
	return NULL;
}

void kinf_apipath_release(struct kinf_apipath *p) {
	if (p) {
		free(p->storage_);
		memset(p, 0, sizeof(*p));
	}
}

/* The check or rest after a prefix: "" for the prefix itself, NULL when not under it. */
static const char *under(const char *path, const char *prefix) {
	size_t n = strlen(prefix);
	if (strncmp(path, prefix, n) != 0) {
		return NULL;
	}
	if (!path[n]) {
		return "";
	}
	return path[n] == '/' && path[n + 1] ? path + n + 1 : NULL;
}

int kinf_apipath_parse(const char *path, struct kinf_apipath *ret) {
	struct kinf_apipath r = {0};
	const char *rest;
	char *parts[8];
	size_t n = 0;

	memset(ret, 0, sizeof(*ret));
	if (strcmp(path, "/") == 0) {
		ret->kind = KINF_APIPATH_ROOT;
		return 0;
	}
	static const struct {
		const char *prefix;
		enum kinf_apipath_kind kind;
	} simple[] = {
		{ "/healthz", KINF_APIPATH_HEALTHZ },
		{ "/readyz", KINF_APIPATH_READYZ },
		{ "/livez", KINF_APIPATH_LIVEZ },
		{ "/openapi", KINF_APIPATH_OPENAPI },
	};
	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
		if ((rest = under(path, simple[i].prefix))) {
			if (simple[i].kind == KINF_APIPATH_OPENAPI && !*rest) {
				return 0;
			}
			r.storage_ = strdup(rest);
			if (!r.storage_) {
				return -KINF_ENOMEM;
			}
			r.kind = simple[i].kind;
			r.rest = r.storage_;
			*ret = r;
			return 0;
		}
	}
	if (strcmp(path, "/version") == 0 || strcmp(path, "/version/") == 0) {
		ret->kind = KINF_APIPATH_VERSION;
		return 0;
	}
	if (strcmp(path, "/metrics") == 0) {
		ret->kind = KINF_APIPATH_METRICS;
		return 0;
	}
	bool legacy;
	if (strncmp(path, "/api", 4) == 0 && (!path[4] || path[4] == '/')) {
		legacy = true;
	} else if (strncmp(path, "/apis", 5) == 0 && (!path[5] || path[5] == '/')) {
		legacy = false;
	} else {
		return 0;
	}
	r.storage_ = strdup(path + (legacy ? 4 : 5));
	if (!r.storage_) {
		return -KINF_ENOMEM;
	}
	/* Split on '/': every segment non-empty, at most 8 of them. */
	char *s = r.storage_;
	if (*s) {
		s++;
		for (;;) {
			char *sl = strchr(s, '/');
			if (sl) {
				*sl = '\0';
			}
			if (!*s || n == sizeof(parts) / sizeof(parts[0])) {
				goto unknown;
			}
			parts[n++] = s;
			if (!sl) {
				break;
			}
			s = sl + 1;
		}
	}
	size_t i = 0;
	if (n == 0) {
		r.kind = legacy ? KINF_APIPATH_API : KINF_APIPATH_APIS;
		goto done;
	}
	if (legacy) {
		r.group = "";
	} else {
		r.group = parts[i++];
		if (i == n) {
			r.kind = KINF_APIPATH_GROUP;
			goto done;
		}
	}
	r.version = parts[i++];
	if (i == n) {
		r.kind = KINF_APIPATH_GROUP_VERSION;
		goto done;
	}
	if (strcmp(parts[i], "watch") == 0) {
		r.watch_prefix = true;
		if (++i == n) {
			goto unknown;
		}
	}
	/* AS endpoints/request/requestinfo.go: namespaces/NS/..., where a
	 * third part that is not a namespace subresource is a resource. */
	if (strcmp(parts[i], "namespaces") == 0 && n - i > 1) {
		r.namespace_ = parts[i + 1];
		if (n - i > 2 && strcmp(parts[i + 2], "status") != 0 &&
				strcmp(parts[i + 2], "finalize") != 0) {
			i += 2;
		}
	}
	switch (n - i) {
	case 3:
		r.subresource = parts[i + 2];
		/* fallthrough */
	case 2:
		r.name = parts[i + 1];
		/* fallthrough */
	case 1:
		r.resource = parts[i];
		break;
	default:
		goto unknown;
	}
	r.kind = KINF_APIPATH_RESOURCE;
done:
	*ret = r;
	return 0;
unknown:
	free(r.storage_);
	return 0;
}

const char *kinf_apipath_verb(const struct kinf_apipath *p, const char *method, bool watch) {
	bool named = p->kind == KINF_APIPATH_RESOURCE && p->name;
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
		if (p->kind == KINF_APIPATH_RESOURCE && (watch || p->watch_prefix)) {
			return "watch";
		}
		return p->kind == KINF_APIPATH_RESOURCE && !named ? "list" : "get";
	}
	if (strcmp(method, "POST") == 0) {
		return "create";
	}
	if (strcmp(method, "PUT") == 0) {
		return "update";
	}
	if (strcmp(method, "PATCH") == 0) {
		return "patch";
	}
	if (strcmp(method, "DELETE") == 0) {
		return named ? "delete" : "deletecollection";
	}
	if (strcmp(method, "OPTIONS") == 0) {
		return "options";
	}
	return "unknown";
}

bool kinf_apipath_verb_is_write(const char *verb) {
	return strcmp(verb, "get") != 0 && strcmp(verb, "list") != 0 && strcmp(verb, "watch") != 0;
}
