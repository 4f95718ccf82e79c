#include <curl/curl.h>
#include <pthread.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#include "apistatus.h"
#include "auth.h"
#include "clock.h"
#include "header.h"
#include "http.h"
#include "kubeconfig.h"
#include "log.h"
#include "transport.h"

/*
 * client-go's rest client retries a 429 or any status from 500 up with a
 * Retry-After up to 10 times (request.go checkWait, with_retry.go). It waits as long as the server says; kinf waits at most
 * this long, and a server asking for longer gets no retry (the error says so).
 */
#define MAX_RETRY_AFTER_RETRIES 10
#define MAX_RETRY_AFTER_S KINF_HTTP_MAX_RETRY_AFTER_S

struct kinf_http {
	CURL *curl;
	/* shared with the clones: their requests go over the same connections */
	struct kinf_transport *transport;
	struct kinf_transport_stream *stream;	/* curl's requests through it */
	const struct kinf_rest_config *config;
	struct kinf_auth *auth;
	struct kinf_http_opts opts;
	char *server;		/* without trailing slash */
	char *url_base;		/* server, or https://tls-server-name:port when set */
	struct curl_slist *connect_to;
	unsigned cred_generation;
	bool have_cred_generation;
	bool client_cert;	/* the current credentials include a client certificate */
	bool userinfo;		/* the server URL had user:password@ */
	/*
	 * 1 + the generation of credentials a connection was last opened
	 * afresh for, 0 for none (the first client's, which its clones
	 * outlive; they race for it).
	 */
	atomic_uint fresh_generation;
	bool plain_http;
	atomic_ulong requests;
	struct kinf_http *counts_to;	/* a clone counts its requests there */
	char errbuf[CURL_ERROR_SIZE];
};

/* Per-request state shared with the libcurl callbacks. */
struct transfer {
	struct kinf_http *http;
	const struct kinf_http_request *req;
	struct kinf_http_response *resp;
	long status;		/* from the status line (the transport's thread) */
	bool status_checked;	/* the body began (the caller's) */
	int abort_rc;		/* what on_body returned, to pass back */
	size_t max_error_body;
	struct kinf_error *reterr;
	/*
	 * Content-Encoding, from the headers (the transport's thread): the
	 * body is inflated here, in the caller's thread, as it is consumed,
	 * not by libcurl in the transport's, where a paused transfer would
	 * keep what a piece inflates to (a gzip bomb's: 16 MiB from 16 KiB).
	 */
	enum { ENC_NONE, ENC_GZIP, ENC_OTHER, ENC_ENDED } encoding;
	bool z_ready;
	z_stream z;
	unsigned char *zout;
};

/* Header bytes a relay keeps of a response (kinf_http_response.headers). */
#define RELAY_HEADER_BYTES ((size_t)64 << 10)

/* Inflated bytes handed on at a time. */
#define INFLATE_BYTES ((size_t)64 << 10)

/* Remove "user:password@" from a URL in place; true when there was one. */
static bool strip_userinfo(char *url) {
	char *a = strstr(url, "://");
	if (!a) {
		return false;
	}
	a += 3;
	char *end = a + strcspn(a, "/?#");
	char *at = NULL;
	for (char *p = a; p < end; p++) {
		if (*p == '@') {
			at = p;
		}
	}
	if (!at) {
		return false;
	}
	kinf_explicit_bzero(a, (size_t)(at + 1 - a));
	memmove(a, at + 1, strlen(at + 1) + 1);
	return true;
}

/*
 * libcurl's memory is zeroed when libcurl frees it: its request buffers
 * and header lists held "Authorization: Bearer ..." and basic-auth
 * passwords, and freed heap memory ends up in core dumps. A size header
 * in front of each block tells free how much to clear.
 */
union zhdr {
	size_t size;
	max_align_t align;
};

static void *z_malloc(size_t n) {
	union zhdr *h;
	if (n > SIZE_MAX - sizeof(*h) || !(h = malloc(sizeof(*h) + n))) {
		return NULL;
	}
	h->size = n;
	return h + 1;
}

static void z_free(void *p) {
	if (p) {
		union zhdr *h = (union zhdr *)p - 1;
		kinf_explicit_bzero(p, h->size);
		free(h);
	}
}

static void *z_realloc(void *p, size_t n) {
	if (!p) {
		return z_malloc(n);
	}
	size_t old = ((union zhdr *)p - 1)->size;
	void *q = z_malloc(n);
	if (!q) {
		return NULL;
	}
	memcpy(q, p, old < n ? old : n);
	z_free(p);
	return q;
}

static char *z_strdup(const char *s) {
	size_t n = strlen(s) + 1;
	char *d = z_malloc(n);
	if (d) {
		memcpy(d, s, n);
	}
	return d;
}

static void *z_calloc(size_t nmemb, size_t size) {
	if (size && nmemb > SIZE_MAX / size) {
		return NULL;
	}
	void *p = z_malloc(nmemb * size);
	if (p) {
		memset(p, 0, nmemb * size);
	}
	return p;
}

/*
 * libcurl's global init, once per process whichever thread makes the first
 * client (curl_global_init is not thread safe before 7.84). Never cleaned
 * up: clients may live until exit.
 */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_code;

static void curl_init(void) {
	curl_init_code = curl_global_init_mem(CURL_GLOBAL_DEFAULT, z_malloc, z_free, z_realloc,
			z_strdup, z_calloc);
}

/*
 * kinf serve's unix socket: libcurl connects there for the http URL, and
 * messages name the socket and the URL's path prefix ("unix:/run/user/
 * 1000/kinf/serve.sock/clusters/b") instead of a host nobody listens on.
 */
static int set_unix_socket(struct kinf_http *http) {
	struct kinf_buf b = {0};
	const char *path = strstr(http->server, "://");
	path = path ? path + 3 + strcspn(path + 3, "/") : "";
	if (kinf_buf_printf(&b, "unix:%s%s", http->config->unix_socket, path) < 0) {
		return -KINF_ENOMEM;
	}
	free(http->server);
	http->server = kinf_buf_take(&b);
	curl_easy_setopt(http->curl, CURLOPT_UNIX_SOCKET_PATH, http->config->unix_socket);
	return 0;
}

/* A client whose requests go through transport (a new one when NULL). */
static struct kinf_http *http_new(const struct kinf_rest_config *config,
		struct kinf_auth *auth, const struct kinf_http_opts *opts,
		struct kinf_transport *transport) {
	struct kinf_http *http;

	if (pthread_once(&curl_once, curl_init) != 0 || curl_init_code != CURLE_OK) {
		return NULL;
	}
	http = calloc(1, sizeof(*http));
	if (!http) {
		return NULL;
	}
	http->config = config;
	http->auth = auth;
	if (opts) {
		http->opts = *opts;
	}
	if (!http->opts.connect_timeout_ms) {
		http->opts.connect_timeout_ms = 10000;
	}
	if (!http->opts.max_error_body) {
		http->opts.max_error_body = 1 << 20;
	}
	if (!http->opts.max_body) {
		http->opts.max_body = KINF_HTTP_DEFAULT_MAX_BODY;
	}
	http->server = strdup(config->server);
	http->curl = curl_easy_init();
	/* (HTTP/2 is asked for over TLS only: an http:// server gets HTTP/1.1) */
	http->transport = transport ? kinf_transport_ref(transport) :
		kinf_transport_new(strncasecmp(config->server, "http://", 7) == 0);
	if (http->curl && http->transport) {
		http->stream = kinf_transport_stream_new(http->transport, http->curl);
	}
	if (!http->server || !http->stream) {
		kinf_http_free(http);
		return NULL;
	}
	size_t n = strlen(http->server);
	while (n > 0 && http->server[n - 1] == '/') {
		http->server[--n] = '\0';
	}
	http->plain_http = strncasecmp(http->server, "http://", 7) == 0;
	http->url_base = strdup(http->server);
	if (!http->url_base) {
		kinf_http_free(http);
		return NULL;
	}
	/*
	 * user:password@ in the URL is basic auth for libcurl: requests use
	 * it, but messages, logs and the discovery cache's name never show it.
	 */
	http->userinfo = strip_userinfo(http->server);
	if (config->unix_socket && set_unix_socket(http) < 0) {
		kinf_http_free(http);
		return NULL;
	}

	/*
	 * tls-server-name: libcurl verifies against the URL's host, so put that
	 * name in the URL and route the connection to the real address.
	 */
	if (config->tls_server_name && config->tls_server_name[0] && !http->plain_http) {
		CURLU *u = curl_url();
		char *host = NULL, *port = NULL, *path = NULL;
		bool oom = false;
		if (u && curl_url_set(u, CURLUPART_URL, http->server, 0) == CURLUE_OK &&
				curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
				curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
			struct kinf_buf b = {0};
			curl_url_get(u, CURLUPART_PATH, &path, 0);
			if (kinf_buf_printf(&b, "%s:%s:%s:%s", config->tls_server_name, port,
					host, port) == 0) {
				http->connect_to = curl_slist_append(NULL, b.data);
			}
			kinf_buf_reset(&b);
			kinf_buf_putf(&b, "https://%s:%s%s", config->tls_server_name, port,
					path && strcmp(path, "/") != 0 ? path : "");
			free(http->url_base);
			http->url_base = kinf_buf_take(&b);
			oom = !http->connect_to || !http->url_base;
		}
		curl_free(host);
		curl_free(port);
		curl_free(path);
		curl_url_cleanup(u);
		if (oom) {
			kinf_http_free(http);
			return NULL;
		}
	}

	CURL *c = http->curl;
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kinf/" KINF_VERSION);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, http->errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, http->opts.connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	/*
	 * The options libcurl copies (and may fail to, out of memory) that
	 * decide where and whom kinf trusts are checked: without them a
	 * transfer would go on with libcurl's defaults (any protocol, no
	 * proxy, the system's CAs instead of the kubeconfig's).
	 */
	bool lost = curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	if (!config->disable_compression) {
		/* asked for; decoded by on_write (struct transfer says why) */
		curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
		curl_easy_setopt(c, CURLOPT_HTTP_CONTENT_DECODING, 0L);
	}
	if (http->opts.low_speed_time_s > 0) {
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, http->opts.low_speed_time_s);
	}
	if (http->connect_to) {
		curl_easy_setopt(c, CURLOPT_CONNECT_TO, http->connect_to);
	}
	/* Without proxy-url, libcurl honours the *_proxy environment like Go. */
	if (config->proxy_url && config->proxy_url[0]) {
		lost |= curl_easy_setopt(c, CURLOPT_PROXY, config->proxy_url) != CURLE_OK;
	}
	if (config->insecure_skip_tls_verify) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (config->ca_pem && config->ca_pem_len) {
		struct curl_blob blob = {
			.data = config->ca_pem, .len = config->ca_pem_len,
			.flags = CURL_BLOB_COPY,
		};
		lost |= curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK;
	}
	if (lost) {
		kinf_http_free(http);
		return NULL;	/* (out of memory) */
	}
	return http;
}

struct kinf_http *kinf_http_new(const struct kinf_rest_config *config,
		struct kinf_auth *auth, const struct kinf_http_opts *opts) {
	return http_new(config, auth, opts, NULL);
}

void kinf_http_free(struct kinf_http *http) {
	if (!http) {
		return;
	}
	kinf_transport_stream_free(http->stream);
	if (http->curl) {
		curl_easy_cleanup(http->curl);
	}
	kinf_transport_unref(http->transport);
	curl_slist_free_all(http->connect_to);
	free(http->server);
	free(http->url_base);
	free(http);
}

void kinf_http_set_cancel(struct kinf_http *http, bool (*canceled)(void *),
		void *userdata) {
	http->opts.canceled = canceled;
	http->opts.canceled_userdata = userdata;
}

void kinf_http_set_warning(struct kinf_http *http,
		void (*fn)(const char *text, size_t len, void *userdata), void *userdata) {
	http->opts.on_warning = fn;
	http->opts.warning_userdata = userdata;
}

const char *kinf_http_server(const struct kinf_http *http) {
	return http->server;
}

unsigned long kinf_http_request_count(const struct kinf_http *http) {
	return atomic_load(&http->requests);
}

struct kinf_http *kinf_http_clone(struct kinf_http *http) {
	struct kinf_http *c = http_new(http->config, http->auth, &http->opts, http->transport);
	if (c) {
		c->counts_to = http->counts_to ? http->counts_to : http;
	}
	return c;
}

const char *kinf_http_response_header(const struct kinf_http_response *resp, const char *name,
		size_t *ret_len) {
	size_t n = strlen(name);
	const char *s = resp->headers.data;
	const char *end = s ? s + resp->headers.len : NULL;
	while (s && s < end) {
		const char *eol = strstr(s, "\r\n");
		if (!eol) {
			break;
		}
		if ((size_t)(eol - s) > n && s[n] == ':' && strncasecmp(s, name, n) == 0) {
			const char *v = s + n + 1;
			while (v < eol && (*v == ' ' || *v == '\t')) {
				v++;
			}
			*ret_len = (size_t)(eol - v);
			return v;
		}
		s = eol + 2;
	}
	return NULL;
}

void kinf_http_response_release(struct kinf_http_response *resp) {
	if (!resp) {
		return;
	}
	free(resp->content_type);
	resp->content_type = NULL;
	kinf_buf_release(&resp->body);
	kinf_buf_release(&resp->headers);
}

long kinf_http_parse_retry_after(const char *v, size_t len) {
	bool negative = false;
	long s = 0;
	size_t i = 0;

	/* strconv.Atoi's syntax: an optional sign, then decimal digits only */
	if (len > 0 && (v[0] == '+' || v[0] == '-')) {
		negative = v[0] == '-';
		i = 1;
	}
	if (i == len) {
		return -1;
	}
	for (; i < len; i++) {
		if (v[i] < '0' || v[i] > '9') {
			return -1;
		}
		if (s > (LONG_MAX - (v[i] - '0')) / 10) {
			s = LONG_MAX;	/* keep reading: it must still be all digits */
		} else if (s != LONG_MAX) {
			s = s * 10 + (v[i] - '0');
		}
	}
	/* a wait below zero is none (time.Duration(negative) sleeps not at all) */
	return negative ? 0 : s;
}

/* A warning of a Warning header: the ones client-go's WarningWriter shows go up. */
static void on_warning(int code, const char *text, size_t len, void *userdata) {
	const struct kinf_http_opts *o = userdata;
	if (code == 299 && len) {
		o->on_warning(text, len, o->warning_userdata);
	}
}

/*
 * Memory ran out for a header kinf needs (the type decides how the body
 * is read, a relayed answer carries its headers, a Warning is shown): the
 * transfer ends with -KINF_ENOMEM rather than go on without it.
 */
static size_t header_failed(struct transfer *t) {
	t->abort_rc = kinf_error_set(t->reterr, KINF_ENOMEM, "out of memory");
	return 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata) {
	struct transfer *t = userdata;
	size_t len = size * nmemb;

	if (len > 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* A new response (after a 100 or a redirect): forget the old one. */
		free(t->resp->content_type);
		t->resp->content_type = NULL;
		t->resp->retry_after_s = -1;
		t->encoding = ENC_NONE;
		kinf_buf_reset(&t->resp->headers);
		/* "HTTP/1.1 200 OK", "HTTP/2 200": the status the body goes with */
		const char *sp = memchr(data, ' ', len);
		t->status = 0;
		for (const char *p = sp ? sp + 1 : data + len; p < data + len &&
				*p >= '0' && *p <= '9' && t->status < 1000; p++) {
			t->status = t->status * 10 + (*p - '0');
		}
		return len;
	}
	const char *colon = memchr(data, ':', len);
	if (!colon) {
		return len;
	}
	size_t name_len = (size_t)(colon - data);
	const char *v = colon + 1;
	const char *end = data + len;
	while (v < end && (*v == ' ' || *v == '\t')) {
		v++;
	}
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) {
		end--;
	}
	if (t->req->keep_headers && t->resp->headers.len + (size_t)(end - data) < RELAY_HEADER_BYTES &&
			kinf_header_value_bad_byte(v, (size_t)(end - v)) < 0) {
		kinf_buf_put(&t->resp->headers, data, (size_t)(end - data));
		kinf_buf_puts(&t->resp->headers, "\r\n");
		if (kinf_buf_error(&t->resp->headers)) {
			return header_failed(t);
		}
	}
	if (name_len == 12 && strncasecmp(data, "Content-Type", 12) == 0) {
		free(t->resp->content_type);
		t->resp->content_type = strndup(v, (size_t)(end - v));
		if (!t->resp->content_type) {
			return header_failed(t);
		}
	} else if (name_len == 11 && strncasecmp(data, "Retry-After", 11) == 0) {
		t->resp->retry_after_s = kinf_http_parse_retry_after(v, (size_t)(end - v));
	} else if (name_len == 16 && strncasecmp(data, "Content-Encoding", 16) == 0 &&
			!t->http->config->disable_compression) {
		size_t n = (size_t)(end - v);
		t->encoding = (n == 4 && strncasecmp(v, "gzip", 4) == 0) ||
			(n == 6 && strncasecmp(v, "x-gzip", 6) == 0) ? ENC_GZIP :
			(n == 8 && strncasecmp(v, "identity", 8) == 0) || n == 0 ?
			ENC_NONE : ENC_OTHER;
	} else if (name_len == 7 && strncasecmp(data, "Warning", 7) == 0 &&
			t->http->opts.on_warning) {
		if (kinf_header_warnings(v, (size_t)(end - v), on_warning, &t->http->opts) < 0) {
			return header_failed(t);
		}
	}
	return len;
}

/* A piece of the (decoded) body, in the caller's thread. */
static int on_body(const char *data, size_t len, struct transfer *t) {
	t->status_checked = true;
	t->resp->status = t->status;
	if (t->status >= 200 && t->status < 300 && t->req->on_body) {
		return t->req->on_body(data, len, t->req->userdata);
	}
	/* Error bodies are kept up to a bound; the rest is read and dropped. */
	bool ok = t->status >= 200 && t->status < 300;
	size_t limit = ok ? t->http->opts.max_body : t->max_error_body;
	size_t room = t->resp->body.len < limit ? limit - t->resp->body.len : 0;
	if (ok && len > room) {
		return limit % (1 << 20) == 0 ?
			kinf_error_set(t->reterr, KINF_ETOOBIG,
				"%s: the response exceeds %zu MiB", t->req->path, limit >> 20) :
			kinf_error_set(t->reterr, KINF_ETOOBIG,
				"%s: the response exceeds %zu bytes", t->req->path, limit);
	}
	if (room && kinf_buf_append(&t->resp->body, data, len < room ? len : room) < 0) {
		return -KINF_ENOMEM;
	}
	return 0;
}

/* Inflate a piece of a gzip body and hand on what it gives. */
static int inflate_piece(struct transfer *t, const char *data, size_t len) {
	if (!t->z_ready) {
		t->zout = malloc(INFLATE_BYTES);
		if (!t->zout || inflateInit2(&t->z, 16 + MAX_WBITS) != Z_OK) {
			return kinf_error_set(t->reterr, KINF_ENOMEM, "out of memory");
		}
		t->z_ready = true;
	}
	t->z.next_in = (Bytef *)data;
	t->z.avail_in = (uInt)len;
	for (;;) {
		t->z.next_out = t->zout;
		t->z.avail_out = (uInt)INFLATE_BYTES;
		int zr = inflate(&t->z, Z_NO_FLUSH);
		size_t n = INFLATE_BYTES - t->z.avail_out;
		int rc = n ? on_body((const char *)t->zout, n, t) : 0;
		if (rc < 0) {
			return rc;
		}
		if (zr == Z_STREAM_END) {
			/* what follows the gzip stream is dropped, as libcurl does */
			t->encoding = ENC_ENDED;
			return 0;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			return kinf_error_set(t->reterr, KINF_ECONNECT, "%s: the response's "
					"gzip encoding is broken: %s", t->http->server,
					t->z.msg ? t->z.msg : "invalid data");
		}
		if (t->z.avail_in == 0 && t->z.avail_out > 0) {
			return 0;	/* all in, all out */
		}
		if (zr == Z_BUF_ERROR && n == 0) {
			return 0;	/* no progress: more input needed */
		}
	}
}

/* The transport's body hook, in the caller's thread: raw bytes, decoded here. */
static int on_write(const char *data, size_t len, void *userdata) {
	struct transfer *t = userdata;

	switch (t->encoding) {
	case ENC_NONE:
		return on_body(data, len, t);
	case ENC_GZIP:
		return inflate_piece(t, data, len);
	case ENC_ENDED:
		return 0;
	default:
		return kinf_error_set(t->reterr, KINF_ECONNECT, "%s: the response has a "
				"Content-Encoding kinf did not ask for (only gzip)", t->http->server);
	}
}

/* The transport's check hook, in the caller's thread between waits. */
static int on_check(void *userdata) {
	struct transfer *t = userdata;
	struct kinf_http *http = t->http;

	if (http->opts.canceled && http->opts.canceled(http->opts.canceled_userdata)) {
		return -KINF_ECANCELED;
	}
	return t->req->aborted ? t->req->aborted(t->req->userdata) : 0;
}

void kinf_http_interrupt(struct kinf_http *http) {
	if (http) {
		kinf_transport_stream_wake(http->stream);
	}
}

/*
 * curl_easy_perform() through the client's transport: the same transfer,
 * over a connection it may share with the clones' requests (HTTP/2), and
 * the wait for data can be interrupted from another thread
 * (kinf_http_interrupt): a cancel takes effect at once.
 */
static CURLcode run_transfer(struct transfer *t) {
	const struct kinf_transport_hooks hooks = {
		.header = on_header, .body = on_write, .check = on_check, .userdata = t,
	};
	int abort_rc = 0;
	CURLcode code = kinf_transport_perform(t->http->stream, &hooks, &abort_rc);
	if (abort_rc < 0) {
		t->abort_rc = abort_rc;
	}
	return code;
}

/* Sleep s seconds in small steps, stopping early when canceled. */
static int sleep_cancelable(struct kinf_http *http, long s) {
	for (long ms = s * 1000; ms > 0; ms -= 100) {
		if (http->opts.canceled && http->opts.canceled(http->opts.canceled_userdata)) {
			return -KINF_ECANCELED;
		}
		struct timespec ts = { 0, (ms < 100 ? ms : 100) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * Append "Name: [scheme ]value" to a request's headers, after the header-value
 * check (src/header.c): every header kinf builds from a value goes
 * through here, so none can carry a CR or LF into another header. what
 * names the value for the error. The line is zeroed once copied.
 */
static int add_header(struct curl_slist **headers, const char *name, const char *scheme,
		const char *value, const char *what, struct kinf_error *reterr) {
	struct kinf_buf h = {0};
	struct curl_slist *n;
	int r;

	if ((r = kinf_header_value_check(value, strlen(value), what, KINF_EAUTH, reterr)) < 0) {
		return r;
	}
	/*
	 * libcurl drops "Name:" with nothing after it; "Name;" sends it
	 * empty. Appended, not printf'd: glibc's vsnprintf(NULL, 0) formats
	 * into a buffer on the stack, which would keep the value there.
	 */
	if (kinf_buf_append_str(&h, name) < 0 ||
			(!*value && !scheme ? kinf_buf_append_char(&h, ';') < 0 :
			kinf_buf_append(&h, ": ", 2) < 0 ||
			(scheme && (kinf_buf_append_str(&h, scheme) < 0 ||
				kinf_buf_append_char(&h, ' ') < 0)) ||
			kinf_buf_append_str(&h, value) < 0)) {
		kinf_explicit_bzero(h.data, h.len);
		kinf_buf_release(&h);
		return -KINF_ENOMEM;
	}
	n = curl_slist_append(*headers, h.data);
	kinf_explicit_bzero(h.data, h.len);
	kinf_buf_release(&h);
	if (!n) {
		return -KINF_ENOMEM;
	}
	*headers = n;
	return 0;
}

/* The Impersonate-* headers of the config (round_trippers.go), if any. */
static int add_impersonation(const struct kinf_rest_config *config,
		struct curl_slist **headers, struct kinf_error *reterr) {
	int rc;

	if (!config || !config->impersonate_user) {
		return 0;
	}
	if ((rc = add_header(headers, "Impersonate-User", NULL, config->impersonate_user,
			"the impersonated user", reterr)) < 0) {
		return rc;
	}
	if (config->impersonate_uid && (rc = add_header(headers, "Impersonate-Uid", NULL,
			config->impersonate_uid, "the impersonated uid", reterr)) < 0) {
		return rc;
	}
	for (char **g = config->impersonate_groups; g && *g; g++) {
		if ((rc = add_header(headers, "Impersonate-Group", NULL, *g,
				"an impersonated group", reterr)) < 0) {
			return rc;
		}
	}
	for (size_t i = 0; i < config->n_impersonate_extra; i++) {
		const struct kinf_impersonate_extra *x = &config->impersonate_extra[i];
		if ((rc = add_header(headers, x->name, NULL, x->value,
				"an impersonated user-extra value", reterr)) < 0) {
			return rc;
		}
	}
	return 0;
}

static int apply_credentials(struct kinf_http *http, struct curl_slist **headers,
		unsigned *ret_generation, struct kinf_error *reterr) {
	const struct kinf_credentials *cred = NULL;
	CURL *c = http->curl;
	int rc;

	if (http->userinfo && http->plain_http) {
		return kinf_error_set(reterr, KINF_EAUTH,
				"refusing to send credentials to %s over plain http; use https",
				http->server);
	}
	if (!http->auth) {
		return 0;
	}
	/*
	 * The auth may be shared with other threads' clients (a clone shares
	 * it): what the request keeps of cred is copied (headers,
	 * CURL_BLOB_COPY, libcurl's own copies of strings) before it is dropped.
	 */
	if ((rc = kinf_auth_get(http->auth, &cred, reterr)) < 0) {
		return rc;
	}
	bool has_any = cred->token || cred->client_cert_pem || cred->username;
	if (has_any && http->plain_http) {
		rc = kinf_error_set(reterr, KINF_EAUTH,
				"refusing to send credentials to %s over plain http; use https",
				http->server);
		goto out;
	}
	*ret_generation = cred->generation;
	if (cred->token && (rc = add_header(headers, "Authorization", "Bearer", cred->token,
			"the bearer token", reterr)) < 0) {
		goto out;
	}
	if (!http->have_cred_generation || http->cred_generation != cred->generation) {
		/* New credentials: new TLS identity, so no reuse of old connections. */
		http->client_cert = cred->client_cert_pem && cred->client_key_pem;
		if (http->client_cert) {
			struct curl_blob cert = {
				.data = (void *)cred->client_cert_pem,
				.len = cred->client_cert_pem_len, .flags = CURL_BLOB_COPY,
			};
			struct curl_blob key = {
				.data = (void *)cred->client_key_pem,
				.len = cred->client_key_pem_len, .flags = CURL_BLOB_COPY,
			};
			curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
			curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
			curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
			curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
		}
		if (cred->username) {
			curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
			curl_easy_setopt(c, CURLOPT_USERNAME, cred->username);
			curl_easy_setopt(c, CURLOPT_PASSWORD, cred->password ? cred->password : "");
		}
		/*
		 * A new identity: a new connection, once for the client and its
		 * clones (libcurl reuses no connection made with another
		 * client certificate). client-go closes its connections then.
		 */
		struct kinf_http *first = http->counts_to ? http->counts_to : http;
		unsigned seen = atomic_load(&first->fresh_generation);
		if (http->have_cred_generation && seen != cred->generation + 1 &&
				atomic_compare_exchange_strong(&first->fresh_generation, &seen,
					cred->generation + 1)) {
			curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
		}
		http->cred_generation = cred->generation;
		http->have_cred_generation = true;
	}
	rc = 0;
out:
	kinf_auth_credentials_unref(cred);
	return rc;
}

/*
 * TLS alerts a server sends about our client certificate, as OpenSSL words
 * them: the credentials are at fault, not the network.
 */
static const char *const client_cert_alerts[] = {
	"certificate expired", "certificate revoked", "bad certificate",
	"unsupported certificate", "certificate unknown", "unknown ca",
	"certificate required", "access denied",
};

static int map_curl_error(struct kinf_http *http, CURLcode code, const char *url,
		struct kinf_error *reterr) {
	const char *detail = http->errbuf[0] ? http->errbuf : curl_easy_strerror(code);
	const char *alert = strstr(detail, "alert ");
	for (size_t i = 0; alert && i < sizeof(client_cert_alerts) /
			sizeof(*client_cert_alerts); i++) {
		const char *a = client_cert_alerts[i];
		if (strncmp(alert + 6, a, strlen(a)) == 0 && http->client_cert) {
			return kinf_error_set(reterr, KINF_EAUTH, "%s: TLS: the server "
					"rejected the client certificate: %s", http->server, a);
		}
	}
	switch (code) {
	case CURLE_OUT_OF_MEMORY:
	/*
	 * kinf's write callbacks say why they stop (an abort, the transport's
	 * own codes); a write error left is libcurl's, which could not keep
	 * a piece for them: its memory ran out.
	 */
	case CURLE_WRITE_ERROR:
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return kinf_error_set(reterr, KINF_ECONNECT, "%s: %s", http->server, detail);
	case CURLE_OPERATION_TIMEDOUT:
		return kinf_error_set(reterr, KINF_ETIMEDOUT, "%s: %s", http->server, detail);
	case CURLE_FILESIZE_EXCEEDED:	/* (from the transport, transport.h) */
		return kinf_error_set(reterr, KINF_ETOOBIG, "%s: more than %zu MiB of "
				"a response waited for kinf to read them", http->server,
				KINF_TRANSPORT_H2_QUEUE_MAX >> 20);
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
		return kinf_error_set(reterr, KINF_ETLS, "%s: TLS: %s", http->server, detail);
	default:
		return kinf_error_set(reterr, KINF_ECONNECT, "%s: %s", http->server, detail);
	}
}

/* One attempt: returns 0 for any HTTP answer (status in resp), <0 on transport failure. */
static int perform(struct kinf_http *http, const struct kinf_http_request *req,
		struct kinf_http_response *resp, unsigned *ret_generation,
		bool *ret_body_started, struct kinf_error *reterr) {
	struct curl_slist *headers = NULL;
	struct kinf_buf url = {0};
	struct transfer t = {
		.http = http, .req = req, .resp = resp,
		.max_error_body = http->opts.max_error_body, .reterr = reterr,
	};
	CURL *c = http->curl;
	int rc;

	resp->status = 0;
	resp->retry_after_s = -1;
	free(resp->content_type);
	resp->content_type = NULL;
	kinf_buf_reset(&resp->body);
	kinf_buf_reset(&resp->headers);
	http->errbuf[0] = '\0';

	if (kinf_buf_printf(&url, "%s%s", http->url_base, req->path) < 0) {
		return -KINF_ENOMEM;
	}
	rc = add_header(&headers, "Accept", NULL, req->accept ? req->accept : "application/json",
			"the Accept header", reterr);
	if (rc < 0) {
		goto out;
	}
	if ((rc = add_impersonation(http->config, &headers, reterr)) < 0) {
		goto out;
	}
	if (req->body && (rc = add_header(&headers, "Content-Type", NULL, "application/json",
			"the Content-Type header", reterr)) < 0) {
		goto out;
	}
	rc = apply_credentials(http, &headers, ret_generation, reterr);
	if (rc < 0) {
		goto out;
	}
	long timeout = req->timeout_ms ? req->timeout_ms : http->opts.request_timeout_ms;
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout > 0 ? timeout : 0L);
	/*
	 * A watch may idle between events (bookmarks come every minute or so);
	 * anything else that trickles in slower than this has stalled.
	 */
	long min_speed = req->watch ? 1L : KINF_HTTP_MIN_SPEED;
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT,
			http->opts.low_speed_time_s > 0 && !req->relay ? min_speed : 0L);
	if (curl_easy_setopt(c, CURLOPT_URL, url.data) != CURLE_OK) {
		/* libcurl keeps a copy; without it, "No URL set" or the last one */
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	if (req->body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
	} else {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);

	long long t0 = kinf_clock_now_ms();
	atomic_fetch_add(http->counts_to ? &http->counts_to->requests : &http->requests, 1);
	CURLcode code = run_transfer(&t);
	long long ms = kinf_clock_now_ms() - t0;
	curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 0L);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	*ret_body_started = t.status_checked;
	/* The URL never holds credentials; tokens travel in headers only. */
	kinf_log(2, "%s %s%s %ld in %lld ms", req->body ? "POST" : "GET", http->server,
			req->path, resp->status, ms);

	if (t.abort_rc < 0) {
		rc = t.abort_rc;
		if (rc == -KINF_ECANCELED) {
			kinf_error_fill(reterr, KINF_ECANCELED, "canceled");
		}
		goto out;
	}
	/* libcurl's words tell its three timeouts apart. */
	if (code == CURLE_OPERATION_TIMEDOUT && (strstr(http->errbuf, "Connection timed out") ||
			strstr(http->errbuf, "SSL connection timeout"))) {
		bool by_request = timeout > 0 && timeout <= http->opts.connect_timeout_ms;
		rc = kinf_error_set(reterr, KINF_ETIMEDOUT,
				"%s: no connection (TCP and TLS) within %ld ms%s", http->server,
				by_request ? timeout : http->opts.connect_timeout_ms,
				by_request ? " (--request-timeout)" : "");
		goto out;
	}
	if (code == CURLE_OPERATION_TIMEDOUT && timeout > 0 && !strstr(http->errbuf, "too slow")) {
		rc = kinf_error_set(reterr, KINF_ETIMEDOUT,
				"%s: no complete answer after %ld ms (--request-timeout)",
				http->server, timeout);
		goto out;
	}
	if (code == CURLE_OPERATION_TIMEDOUT && strstr(http->errbuf, "too slow")) {
		rc = min_speed > 1 ?
			kinf_error_set(reterr, KINF_ETIMEDOUT, "%s: the server sent less "
				"than %ld bytes/s for %ld s (--idle-timeout)", http->server,
				min_speed, http->opts.low_speed_time_s) :
			kinf_error_set(reterr, KINF_ETIMEDOUT, "%s: the server sent "
				"nothing for %ld s (--idle-timeout)", http->server,
				http->opts.low_speed_time_s);
		goto out;
	}
	if (code != CURLE_OK) {
		rc = map_curl_error(http, code, url.data, reterr);
		goto out;
	}
	rc = 0;
out:
	if (t.z_ready) {
		inflateEnd(&t.z);
	}
	free(t.zout);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	/* (the Authorization header is zeroed as libcurl frees it) */
	curl_slist_free_all(headers);
	kinf_buf_release(&url);
	return rc;
}

int kinf_http_get(struct kinf_http *http, const struct kinf_http_request *req,
		struct kinf_http_response *ret_resp, struct kinf_error *reterr) {
	struct kinf_http_response local = {0};
	struct kinf_http_response *resp = ret_resp ? ret_resp : &local;
	long timeout = req->timeout_ms ? req->timeout_ms : http->opts.request_timeout_ms;
	bool retried_auth = false;
	long long start = kinf_clock_now_ms();
	int retries = 0;
	int rc;

	for (;;) {
		unsigned generation = 0;
		bool body_started = false;
		rc = perform(http, req, resp, &generation, &body_started, reterr);
		if (rc < 0) {
			break;
		}
		if (resp->status >= 200 && resp->status < 300) {
			/* A Status that says Failure is an error, 200 or not (client-go). */
			rc = kinf_apistatus_check_success(resp->body.data, resp->body.len, reterr);
			break;
		}
		bool refresh = false;
		if (resp->status == 401 && !retried_auth && http->auth) {
			refresh = kinf_auth_unauthorized(http->auth, generation);
		}
		if (refresh) {
			retried_auth = true;
			kinf_log(1, "401 Unauthorized: refreshing credentials and retrying");
			continue;
		}
		bool retry_after = (resp->status == 429 || resp->status >= 500) && !req->relay &&
			resp->retry_after_s >= 0 && retries < MAX_RETRY_AFTER_RETRIES;
		long wait = retry_after ? resp->retry_after_s : 0;
		const char *why_not = NULL;
		char why[160];
		if (retry_after && wait > MAX_RETRY_AFTER_S) {
			snprintf(why, sizeof(why), "the server asked to retry after %s%ld s, longer "
					"than the %d s kinf waits", wait == LONG_MAX ? "over " : "",
					wait, MAX_RETRY_AFTER_S);
			why_not = why;
		} else if (retry_after && timeout > 0 &&
				kinf_clock_now_ms() - start + (wait < 1 ? 1 : wait) * 1000 > timeout) {
			snprintf(why, sizeof(why), "the server asked to retry after %ld s, past "
					"the %ld ms of --request-timeout", wait, timeout);
			why_not = why;
		}
		if (retry_after && !why_not) {
			if (wait < 1) {
				wait = 1;
			}
			retries++;
			kinf_log(1, "%ld from the server: retrying in %ld s (Retry-After, attempt %d)",
					resp->status, wait, retries);
			if ((rc = sleep_cancelable(http, wait)) < 0) {
				kinf_error_fill(reterr, KINF_ECANCELED, "canceled");
				break;
			}
			continue;
		}
		kinf_apistatus_to_error(resp->status, resp->body.data, resp->body.len, reterr);
		if (why_not && reterr) {
			size_t n = strlen(reterr->message);
			snprintf(reterr->message + n, sizeof(reterr->message) - n, "; %s", why_not);
		}
		rc = resp->status == 410 ? -KINF_EGONE :
			resp->status == 401 ? -KINF_EAUTH : -KINF_EHTTP;
		break;
	}
	kinf_http_response_release(&local);
	return rc;
}
