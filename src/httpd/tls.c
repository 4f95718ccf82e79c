#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base64.h"
#include "buf.h"
#include "tls.h"

struct kinf_tls {
	atomic_int refs;
	SSL_CTX *ctx;
	char *ca_pem;
	size_t ca_pem_len;
	char *cert_pem;
	size_t cert_pem_len;
};

struct kinf_tls_conn {
	SSL *ssl;
	int fd;
	short events;
};

/*
 * OpenSSL's socket BIO writes with write(2): a client gone before an
 * alert is sent would raise SIGPIPE in a process that has not ignored it.
 * This one sends with MSG_NOSIGNAL, as httpd's httpdio.c does.
 */
static int bio_write(BIO *b, const char *data, int len) {
	struct kinf_tls_conn *c = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t n = send(c->fd, data, (size_t)len, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		BIO_set_retry_write(b);
	}
	return (int)n;
}

static int bio_read(BIO *b, char *data, int len) {
	struct kinf_tls_conn *c = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t n = recv(c->fd, data, (size_t)len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		BIO_set_retry_read(b);
	}
	return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

/* One method for the process: OpenSSL has fewer than 128 BIO type numbers to give. */
static BIO_METHOD *bio_method;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

static void bio_method_init(void) {
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "kinf socket");
	if (m && BIO_meth_set_write(m, bio_write) && BIO_meth_set_read(m, bio_read) &&
			BIO_meth_set_ctrl(m, bio_ctrl)) {
		bio_method = m;
	} else {
		BIO_meth_free(m);
	}
	ERR_clear_error();
}

/* The reason of OpenSSL's last error, or what, into reterr; the queue is cleared. */
static int ssl_fail(struct kinf_error *reterr, const char *what) {
	unsigned long e = ERR_peek_last_error();
	const char *reason = e ? ERR_reason_error_string(e) : NULL;
	int rc = kinf_error_set(reterr, KINF_ETLS, "%s%s%s", what, reason ? ": " : "",
		reason ? reason : "");
	ERR_clear_error();
	return rc;
}

static EVP_PKEY *new_key(void) {
	return EVP_EC_gen("P-256");
}

/* A random positive serial of 16 bytes (RFC 5280: at most 20, positive; Go checks). */
static int set_serial(X509 *x) {
	unsigned char b[16];
	if (RAND_bytes(b, sizeof(b)) != 1) {
		return -1;
	}
	b[0] = (b[0] & 0x7f) | 0x01;
	BIGNUM *bn = BN_bin2bn(b, sizeof(b), NULL);
	int ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : -1;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value) {
	X509V3_CTX v3;
	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	if (!ext) {
		return -1;
	}
	int ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/* A certificate for key named cn, valid for days from an hour ago, its extensions to add. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, int days) {
	X509 *x = X509_new();
	if (!x) {
		return NULL;
	}
	X509_NAME *name = X509_get_subject_name(x);
	if (!X509_set_version(x, 2) || set_serial(x) < 0 ||
			!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
				(const unsigned char *)"kinf", -1, -1, 0) ||
			!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
				(const unsigned char *)cn, -1, -1, 0) ||
			!X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
			!X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) ||
			!X509_set_pubkey(x, key)) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static bool is_wildcard(const char *h) {
	return strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 || strcmp(h, "[::]") == 0;
}

/* A DNS name as RFC 1123 allows it (letters, digits, inner '-'; labels of 1-63; a final '.'). */
static bool dns_name_ok(const char *s) {
	size_t n = strlen(s), label = 0;
	if (!n || n > 253) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '.') {
			if (!label) {
				return false;
			}
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				(ch >= '0' && ch <= '9') || ch == '-') {
			/* No '-' at either end of a label. */
			if (++label > 63 || (ch == '-' && (label == 1 || i + 1 == n || s[i + 1] == '.'))) {
				return false;
			}
		} else {
			return false;
		}
	}
	return label > 0 || s[n - 1] == '.';
}

/* Append one subjectAltName for host (IP or DNS) unless it is already there. */
static int add_san(GENERAL_NAMES *gens, const char *host, struct kinf_error *reterr) {
	char ip[INET6_ADDRSTRLEN + 2];
	const char *h = host;
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']' && hl - 2 < sizeof(ip)) {
		memcpy(ip, host + 1, hl - 2);
		ip[hl - 2] = '\0';
		h = ip;
	}
	if (is_wildcard(h)) {
		return 0;
	}
	GENERAL_NAME *g = NULL;
	ASN1_OCTET_STRING *addr = a2i_IPADDRESS(h);
	if (addr) {
		g = GENERAL_NAME_new();
		if (!g) {
			ASN1_OCTET_STRING_free(addr);
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		GENERAL_NAME_set0_value(g, GEN_IPADD, addr);
	} else {
		ERR_clear_error();
		if (!dns_name_ok(h)) {
			return kinf_error_set(reterr, KINF_EINVAL,
				"'%s': neither an IP address nor a DNS name", host);
		}
		ASN1_IA5STRING *dns = ASN1_IA5STRING_new();
		g = GENERAL_NAME_new();
		if (!dns || !g || !ASN1_STRING_set(dns, h, -1)) {
			ASN1_IA5STRING_free(dns);
			GENERAL_NAME_free(g);
			return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		}
		GENERAL_NAME_set0_value(g, GEN_DNS, dns);
	}
	for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		if (GENERAL_NAME_cmp(sk_GENERAL_NAME_value(gens, i), g) == 0) {
			GENERAL_NAME_free(g);
			return 0;
		}
	}
	if (!sk_GENERAL_NAME_push(gens, g)) {
		GENERAL_NAME_free(g);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	return 0;
}

static int add_sans(X509 *x, const struct kinf_tls_opts *opts, struct kinf_error *reterr) {
	static const char *const always[] = { "localhost", "127.0.0.1", "::1" };
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	int rc = gens ? 0 : kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < sizeof(always) / sizeof(always[0]); i++) {
		rc = add_san(gens, always[i], reterr);
	}
	for (size_t i = 0; rc == 0 && opts && i < opts->n_names; i++) {
		rc = add_san(gens, opts->names[i], reterr);
	}
	if (rc == 0 && !X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT)) {
		rc = ssl_fail(reterr, "subjectAltName");
	}
	GENERAL_NAMES_free(gens);
	return rc;
}

/* x in PEM, NUL-terminated, into *ret. */
static int cert_pem(X509 *x, char **ret, size_t *ret_len) {
	BIO *bio = BIO_new(BIO_s_mem());
	char *data = NULL;
	if (!bio || !PEM_write_bio_X509(bio, x)) {
		BIO_free(bio);
		return -1;
	}
	long n = BIO_get_mem_data(bio, &data);
	char *copy = n > 0 ? malloc((size_t)n + 1) : NULL;
	if (copy) {
		memcpy(copy, data, (size_t)n);
		copy[n] = '\0';
		*ret = copy;
		*ret_len = (size_t)n;
	}
	BIO_free(bio);
	return copy ? 0 : -1;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		const unsigned char *in, unsigned int inlen, void *arg) {
	static const unsigned char ours[] = "\x08http/1.1";
	unsigned char *sel = NULL;
	if (SSL_select_next_proto(&sel, outlen, ours, sizeof(ours) - 1, in, inlen) !=
			OPENSSL_NPN_NEGOTIATED) {
		/* No overlap (an h2-only client): go on without ALPN, as Go's
		 * servers did before 1.17; the client decides. */
		return SSL_TLSEXT_ERR_NOACK;
	}
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *server_ctx(X509 *cert, EVP_PKEY *key) {
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
		SSL_OP_NO_TICKET | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
		SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
			!SSL_CTX_set_num_tickets(ctx, 0) ||
			!SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") ||
			!SSL_CTX_use_certificate(ctx, cert) ||
			!SSL_CTX_use_PrivateKey(ctx, key) ||
			!SSL_CTX_check_private_key(ctx)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

int kinf_tls_new(const struct kinf_tls_opts *opts, struct kinf_tls **ret,
		struct kinf_error *reterr) {
	int days = opts && opts->validity_days > 0 ? opts->validity_days : KINF_TLS_VALIDITY_DAYS;
	EVP_PKEY *ca_key = NULL, *key = NULL;
	X509 *ca = NULL, *cert = NULL;
	struct kinf_tls *tls = calloc(1, sizeof(*tls));
	int rc = 0;

	ERR_clear_error();
	if (!tls) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	atomic_init(&tls->refs, 1);
	pthread_once(&bio_once, bio_method_init);
	if (!bio_method) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
	ca_key = new_key();
	key = new_key();
	if (!ca_key || !key) {
		rc = ssl_fail(reterr, "P-256 key");
		goto out;
	}
	ca = new_cert(ca_key, "kinf serve CA", days);
	if (!ca || X509_set_issuer_name(ca, X509_get_subject_name(ca)) != 1 ||
			add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
			add_ext(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
			add_ext(ca, ca, NID_subject_key_identifier, "hash") < 0 ||
			!X509_sign(ca, ca_key, EVP_sha256())) {
		rc = ssl_fail(reterr, "CA certificate");
		goto out;
	}
	cert = new_cert(key, "kinf serve", days);
	if (!cert || X509_set_issuer_name(cert, X509_get_subject_name(ca)) != 1 ||
			add_ext(cert, ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
			add_ext(cert, ca, NID_key_usage, "critical,digitalSignature") < 0 ||
			add_ext(cert, ca, NID_ext_key_usage, "serverAuth") < 0 ||
			add_ext(cert, ca, NID_authority_key_identifier, "keyid:always") < 0) {
		rc = ssl_fail(reterr, "server certificate");
		goto out;
	}
	rc = add_sans(cert, opts, reterr);
	if (rc < 0) {
		goto out;
	}
	if (!X509_sign(cert, ca_key, EVP_sha256())) {
		rc = ssl_fail(reterr, "server certificate");
		goto out;
	}
	tls->ctx = server_ctx(cert, key);
	if (!tls->ctx) {
		rc = ssl_fail(reterr, "server context");
		goto out;
	}
	if (cert_pem(ca, &tls->ca_pem, &tls->ca_pem_len) < 0 ||
			cert_pem(cert, &tls->cert_pem, &tls->cert_pem_len) < 0) {
		rc = kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
		goto out;
	}
out:
	/* EVP_PKEY_free clears the key material (OpenSSL's *_clear_free). */
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(key);
	X509_free(ca);
	X509_free(cert);
	ERR_clear_error();
	if (rc < 0) {
		kinf_tls_unref(tls);
		return rc;
	}
	*ret = tls;
	return 0;
}

struct kinf_tls *kinf_tls_ref(struct kinf_tls *tls) {
	atomic_fetch_add(&tls->refs, 1);
	return tls;
}

struct kinf_tls *kinf_tls_unref(struct kinf_tls *tls) {
	if (!tls || atomic_fetch_sub(&tls->refs, 1) > 1) {
		return NULL;
	}
	SSL_CTX_free(tls->ctx);
	free(tls->ca_pem);
	free(tls->cert_pem);
	free(tls);
	return NULL;
}

const char *kinf_tls_ca_pem(const struct kinf_tls *tls, size_t *ret_len) {
	if (ret_len) {
		*ret_len = tls->ca_pem_len;
	}
	return tls->ca_pem;
}

const char *kinf_tls_cert_pem(const struct kinf_tls *tls, size_t *ret_len) {
	if (ret_len) {
		*ret_len = tls->cert_pem_len;
	}
	return tls->cert_pem;
}

int kinf_tls_token_new(char **ret_token) {
	unsigned char raw[32];
	if (RAND_bytes(raw, sizeof(raw)) != 1) {
		ERR_clear_error();
		return -KINF_ETLS;
	}
	char *tok = kinf_base64_encode(raw, sizeof(raw), KINF_BASE64_URL_RAW);
	kinf_explicit_bzero(raw, sizeof(raw));
	if (!tok) {
		return -KINF_ENOMEM;
	}
	*ret_token = tok;
	return 0;
}

/* ---- connections ---- */

struct kinf_tls_conn *kinf_tls_conn_new(struct kinf_tls *tls, int fd) {
	struct kinf_tls_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		return NULL;
	}
	ERR_clear_error();
	c->fd = fd;
	c->ssl = SSL_new(tls->ctx);
	BIO *bio = BIO_new(bio_method);
	if (!c->ssl || !bio) {
		BIO_free(bio);
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	BIO_set_data(bio, c);
	BIO_set_init(bio, 1);
	SSL_set_bio(c->ssl, bio, bio);
	SSL_set_accept_state(c->ssl);
	c->events = POLLIN;
	return c;
}

/*
 * Map an SSL_* result r to read(2)'s conventions: WANT_* is EAGAIN (and
 * sets the events to wait for), a clean close 0, anything else -1 with
 * errno EIO or the socket's error. The error queue is left empty.
 */
static ssize_t io_result(struct kinf_tls_conn *c, int r) {
	int e = SSL_get_error(c->ssl, r);
	int saved = errno;
	ERR_clear_error();
	switch (e) {
	case SSL_ERROR_WANT_READ:
		c->events = POLLIN;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_WANT_WRITE:
		c->events = POLLOUT;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		/* errno tells, or 0 for a TCP close without close_notify
		 * (OpenSSL 3's "unexpected eof"), which Go's server also
		 * takes as the end of the connection. */
		if (saved == 0 || saved == EAGAIN || saved == EWOULDBLOCK) {
			return 0;
		}
		errno = saved;
		return -1;
	case SSL_ERROR_SSL:
		if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			return 0;
		}
		errno = EIO;
		return -1;
	default:
		errno = EIO;
		return -1;
	}
}

int kinf_tls_conn_handshake(struct kinf_tls_conn *c, struct kinf_error *reterr) {
	ERR_clear_error();
	errno = 0;
	int r = SSL_do_handshake(c->ssl);
	if (r == 1) {
		return 1;
	}
	int e = SSL_get_error(c->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		c->events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
		ERR_clear_error();
		return 0;
	}
	unsigned long err = ERR_peek_last_error();
	int rc;
	if (ERR_GET_LIB(err) == ERR_LIB_SSL && ERR_GET_REASON(err) == SSL_R_HTTP_REQUEST) {
		rc = kinf_error_set(reterr, KINF_EUNSUPPORTED, "a plain HTTP request");
	} else if (err) {
		rc = ssl_fail(reterr, "handshake");
	} else {
		rc = kinf_error_set(reterr, KINF_ETLS, "handshake: %s",
			errno ? strerror(errno) : "unexpected eof");
	}
	ERR_clear_error();
	return rc;
}

short kinf_tls_conn_events(const struct kinf_tls_conn *c) {
	return c->events;
}

ssize_t kinf_tls_conn_read(struct kinf_tls_conn *c, void *buf, size_t len) {
	size_t got = 0;
	ERR_clear_error();
	errno = 0;
	int r = SSL_read_ex(c->ssl, buf, len, &got);
	if (r == 1) {
		return (ssize_t)got;
	}
	return io_result(c, r);
}

ssize_t kinf_tls_conn_write(struct kinf_tls_conn *c, const void *buf, size_t len) {
	size_t put = 0;
	ERR_clear_error();
	errno = 0;
	int r = SSL_write_ex(c->ssl, buf, len, &put);
	if (r == 1) {
		return (ssize_t)put;
	}
	ssize_t n = io_result(c, r);
	if (n == 0) {
		/* The client closed its side: writing on is pointless. */
		errno = EPIPE;
		return -1;
	}
	return n;
}

bool kinf_tls_conn_pending(const struct kinf_tls_conn *c) {
	return SSL_pending(c->ssl) > 0;
}

void kinf_tls_conn_close_notify(struct kinf_tls_conn *c) {
	ERR_clear_error();
	SSL_shutdown(c->ssl);
	ERR_clear_error();
}

const char *kinf_tls_conn_alpn(const struct kinf_tls_conn *c) {
	const unsigned char *p = NULL;
	unsigned int n = 0;
	SSL_get0_alpn_selected(c->ssl, &p, &n);
	/* The callback agrees to nothing else. */
	return p && n == 8 && memcmp(p, "http/1.1", 8) == 0 ? "http/1.1" : "";
}

void kinf_tls_conn_free(struct kinf_tls_conn *c) {
	if (!c) {
		return;
	}
	SSL_free(c->ssl);
	free(c);
}
