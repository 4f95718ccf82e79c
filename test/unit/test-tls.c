/*
 * serve's TLS (src/tls.c) without a network: the generated CA and server
 * certificate read back with OpenSSL (a CA, P-256, SANs, validity, server
 * auth), bad names refused, tokens; and handshakes over a socketpair with
 * an OpenSSL client in the same thread, both sides non-blocking: ALPN
 * http/1.1, a client that trusts another CA, TLS 1.2 and 1.1, plain HTTP, an
 * h2-only client, data both ways in partial writes, and the client's close.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "buf.h"
#include "tls.h"
#include "tap.h"

static X509 *read_pem(const char *pem, size_t len) {
	BIO *b = BIO_new_mem_buf(pem, (int)len);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	return x;
}

/* Days from now to t (negative: past). */
static double days_until(const ASN1_TIME *t) {
	int d = 0, s = 0;
	ASN1_TIME_diff(&d, &s, NULL, t);
	return d + s / 86400.0;
}

static bool verifies(X509 *ca, X509 *cert) {
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_STORE_add_cert(st, ca);
	X509_STORE_CTX_init(ctx, st, cert, NULL);
	X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
	bool good = X509_verify_cert(ctx) == 1;
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return good;
}

static void test_certificates(void) {
	struct kinf_tls *tls = NULL, *other = NULL;
	struct kinf_error err = {0};
	const char *names[] = { "kinf.example", "[fd00::1]", "10.1.2.3", "0.0.0.0", "localhost",
		"::" };
	struct kinf_tls_opts o = { .names = names, .n_names = 6 };

	is_int(kinf_tls_new(&o, &tls, &err), 0, "CA and server certificate made (%s)", err.message);
	size_t ca_len = 0, cert_len = 0;
	const char *ca_pem = kinf_tls_ca_pem(tls, &ca_len);
	const char *cert_pem = kinf_tls_cert_pem(tls, &cert_len);
	ok(ca_len == strlen(ca_pem) && strncmp(ca_pem, "-----BEGIN CERTIFICATE-----\n", 28) == 0,
		"the CA in PEM, its length given");
	X509 *ca = read_pem(ca_pem, ca_len), *cert = read_pem(cert_pem, cert_len);
	ok(ca && cert, "both parse");
	ok(X509_check_ca(ca) == 1, "the CA is a CA");
	ok(X509_check_issued(ca, ca) == X509_V_OK, "  self-signed");
	EVP_PKEY *pk = X509_get0_pubkey(ca);
	char group[32] = "";
	size_t gl = 0;
	EVP_PKEY_get_group_name(pk, group, sizeof(group), &gl);
	ok(EVP_PKEY_get_base_id(pk) == EVP_PKEY_EC && strcmp(group, "prime256v1") == 0,
		"  ECDSA P-256 (%s)", group);
	double nb = days_until(X509_get0_notBefore(cert)), na = days_until(X509_get0_notAfter(cert));
	ok(nb < 0 && nb > -1, "valid from just before now (%.3f days)", nb);
	ok(na > 364 && na <= 365, "  for a year (%.1f days)", na);
	ok(X509_check_ca(cert) == 0, "the server certificate is no CA");
	ok(verifies(ca, cert), "  it verifies against the CA for server auth");
	ok(X509_check_host(cert, "localhost", 0, 0, NULL) == 1, "  names localhost");
	ok(X509_check_ip_asc(cert, "127.0.0.1", 0) == 1, "  127.0.0.1");
	ok(X509_check_ip_asc(cert, "::1", 0) == 1, "  ::1");
	ok(X509_check_host(cert, "kinf.example", 0, 0, NULL) == 1, "  a DNS name given");
	ok(X509_check_ip_asc(cert, "fd00::1", 0) == 1 && X509_check_ip_asc(cert, "10.1.2.3", 0) == 1,
		"  the IP addresses given ([IPv6] and IPv4)");
	ok(X509_check_ip_asc(cert, "0.0.0.0", 0) != 1 && X509_check_ip_asc(cert, "::", 0) != 1,
		"  not the wildcards");
	ok(X509_check_host(cert, "other.example", 0, 0, NULL) != 1, "  nor another name");
	GENERAL_NAMES *gens = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	is_int(sk_GENERAL_NAME_num(gens), 6, "  six names: localhost twice is once");
	GENERAL_NAMES_free(gens);

	is_int(kinf_tls_new(NULL, &other, &err), 0, "another CA");
	size_t ol = 0;
	const char *opem = kinf_tls_ca_pem(other, &ol);
	X509 *oca = read_pem(opem, ol);
	ok(ol != ca_len || memcmp(opem, ca_pem, ca_len) != 0, "  a different one");
	ok(!verifies(oca, cert), "  which does not verify the first server certificate");
	ok(ASN1_INTEGER_cmp(X509_get0_serialNumber(ca), X509_get0_serialNumber(oca)) != 0,
		"  random serials");
	X509_free(oca);
	kinf_tls_unref(other);
	X509_free(ca);
	X509_free(cert);

	struct kinf_tls *ref = kinf_tls_ref(tls);
	ok(ref == tls && kinf_tls_unref(tls) == NULL && kinf_tls_ca_pem(ref, NULL) == ca_pem,
		"a reference keeps it");
	kinf_tls_unref(ref);

	o = (struct kinf_tls_opts){ .validity_days = 2 };
	is_int(kinf_tls_new(&o, &tls, &err), 0, "validity_days 2");
	cert = read_pem(kinf_tls_cert_pem(tls, &cert_len), cert_len);
	na = days_until(X509_get0_notAfter(cert));
	ok(na > 1.9 && na <= 2, "  two days (%.2f)", na);
	X509_free(cert);
	kinf_tls_unref(tls);

	static const char *const bad[] = { "a b", "evil,DNS:x", "-", "a..b", "é.example", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *one[] = { bad[i] };
		o = (struct kinf_tls_opts){ .names = one, .n_names = 1 };
		tls = NULL;
		int rc = kinf_tls_new(&o, &tls, &err);
		ok(rc == -KINF_EINVAL && !tls && strstr(err.message, "neither an IP address nor a DNS name"),
			"'%s' refused: %s", bad[i], err.message);
	}
	kinf_tls_unref(NULL);

	char *t1 = NULL, *t2 = NULL;
	is_int(kinf_tls_token_new(&t1), 0, "a token");
	must(kinf_tls_token_new(&t2));
	ok(t1 && strlen(t1) == 43 && strspn(t1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		"0123456789-_") == 43, "  43 base64url characters (%s)", t1);
	ok(t2 && strcmp(t1, t2) != 0, "  another one differs");
	kinf_free_secret(t1);
	kinf_free_secret(t2);
}

/* ---- handshakes over a socketpair ---- */

struct pair {
	int sfd, cfd;
	struct kinf_tls_conn *server;
	SSL_CTX *cctx;
	SSL *client;
};

static void nonblock(int fd) {
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* A client trusting ca_pem (NULL: nothing), for TLS versions up to max, offering alpn. */
static void pair_open(struct pair *p, struct kinf_tls *tls, const char *ca_pem, size_t ca_len,
		int max_version, const unsigned char *alpn, unsigned alpn_len) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		abort();
	}
	p->sfd = sv[0];
	p->cfd = sv[1];
	nonblock(p->sfd);
	nonblock(p->cfd);
	p->server = kinf_tls_conn_new(tls, p->sfd);
	p->cctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_verify(p->cctx, SSL_VERIFY_PEER, NULL);
	if (max_version) {
		SSL_CTX_set_min_proto_version(p->cctx, TLS1_VERSION);
		SSL_CTX_set_max_proto_version(p->cctx, max_version);
		SSL_CTX_set_security_level(p->cctx, 0);
		SSL_CTX_set_cipher_list(p->cctx, "ALL:@SECLEVEL=0");
	}
	if (ca_pem) {
		BIO *b = BIO_new_mem_buf(ca_pem, (int)ca_len);
		X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
		X509_STORE_add_cert(SSL_CTX_get_cert_store(p->cctx), x);
		X509_free(x);
		BIO_free(b);
	}
	if (alpn) {
		SSL_CTX_set_alpn_protos(p->cctx, alpn, alpn_len);
	}
	p->client = SSL_new(p->cctx);
	SSL_set_fd(p->client, p->cfd);
	SSL_set1_host(p->client, "localhost");
	SSL_set_tlsext_host_name(p->client, "localhost");
	SSL_set_connect_state(p->client);
}

static void pair_close(struct pair *p) {
	SSL_free(p->client);
	SSL_CTX_free(p->cctx);
	kinf_tls_conn_free(p->server);
	if (p->sfd >= 0) {
		close(p->sfd);
	}
	if (p->cfd >= 0) {
		close(p->cfd);
	}
	ERR_clear_error();
}

/* Step both sides until the server's handshake ends; its result, the client's in *crc. */
static int handshake(struct pair *p, int *crc, struct kinf_error *err) {
	int src = 0, c = 0;
	kinf_error_clear(err);
	for (int i = 0; i < 200 && src == 0; i++) {
		if (c != 1) {
			c = SSL_do_handshake(p->client);
			if (c != 1) {
				int e = SSL_get_error(p->client, c);
				if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
					c = -1;
				}
			}
		}
		src = kinf_tls_conn_handshake(p->server, err);
	}
	/* The client reads the server's Finished (or alert) last. */
	for (int i = 0; i < 20 && c == 0; i++) {
		c = SSL_do_handshake(p->client);
		if (c != 1 && SSL_get_error(p->client, c) != SSL_ERROR_WANT_READ) {
			c = -1;
		}
	}
	ERR_clear_error();
	*crc = c;
	return src;
}

static void test_handshakes(void) {
	struct kinf_tls *tls = NULL, *other = NULL;
	struct kinf_error err = {0};
	struct pair p;
	int crc = 0;
	size_t ca_len = 0, ol = 0;
	must(kinf_tls_new(NULL, &tls, &err));
	must(kinf_tls_new(NULL, &other, &err));
	const char *ca = kinf_tls_ca_pem(tls, &ca_len), *oca = kinf_tls_ca_pem(other, &ol);
	static const unsigned char go_alpn[] = "\x02h2\x08http/1.1";

	pair_open(&p, tls, ca, ca_len, 0, go_alpn, sizeof(go_alpn) - 1);
	is_int(handshake(&p, &crc, &err), 1, "a handshake with a client trusting the CA (%s)",
		err.message);
	is_int(crc, 1, "  the client verified localhost");
	is_str(kinf_tls_conn_alpn(p.server), "http/1.1", "  ALPN: http/1.1 of h2, http/1.1");
	const unsigned char *ap = NULL;
	unsigned al = 0;
	SSL_get0_alpn_selected(p.client, &ap, &al);
	ok(al == 8 && memcmp(ap, "http/1.1", 8) == 0, "  as the client sees it");
	ok(SSL_version(p.client) == TLS1_3_VERSION, "  TLS 1.3");

	char buf[65536];
	SSL_write(p.client, "GET / HTTP/1.1\r\n", 16);
	ssize_t n = kinf_tls_conn_read(p.server, buf, sizeof(buf));
	ok(n == 16 && memcmp(buf, "GET / HTTP/1.1\r\n", 16) == 0, "the server reads what the client wrote");
	n = kinf_tls_conn_read(p.server, buf, sizeof(buf));
	ok(n == -1 && errno == EAGAIN && kinf_tls_conn_events(p.server) == POLLIN,
		"  then EAGAIN, waiting for POLLIN");
	SSL_write(p.client, "0123456789", 10);
	n = kinf_tls_conn_read(p.server, buf, 4);
	ok(n == 4 && kinf_tls_conn_pending(p.server), "a short read leaves the rest pending");
	n = kinf_tls_conn_read(p.server, buf, sizeof(buf));
	ok(n == 6 && memcmp(buf, "456789", 6) == 0 && !kinf_tls_conn_pending(p.server),
		"  which the next read gets");

	/* 4 MiB through a socket buffer the client drains as it goes. */
	size_t total = 4 << 20, sent = 0, got = 0;
	unsigned char *big = malloc(total);
	for (size_t i = 0; i < total; i++) {
		big[i] = (unsigned char)(i * 7 + i / 4096);
	}
	bool same = true;
	int eagain = 0;
	bool failed = false;
	for (int i = 0; i < 100000 && got < total && !failed; i++) {
		/* Write until the socket is full, then read until it is empty. */
		while (sent < total) {
			ssize_t w = kinf_tls_conn_write(p.server, big + sent, total - sent);
			if (w > 0) {
				sent += (size_t)w;
				continue;
			}
			eagain += errno == EAGAIN;
			failed = errno != EAGAIN;
			break;
		}
		int r;
		while ((r = SSL_read(p.client, buf, sizeof(buf))) > 0) {
			same = same && memcmp(buf, big + got, (size_t)r) == 0;
			got += (size_t)r;
		}
	}
	ok(got == total && same, "4 MiB written in partial writes arrive whole (%zu)", got);
	ok(eagain > 0, "  the socket filled up on the way (%d EAGAINs)", eagain);
	free(big);

	SSL_shutdown(p.client);
	n = kinf_tls_conn_read(p.server, buf, sizeof(buf));
	is_int(n, 0, "the client's close_notify: 0");
	pair_close(&p);

	pair_open(&p, tls, ca, ca_len, 0, NULL, 0);
	handshake(&p, &crc, &err);
	ok(crc == 1 && strcmp(kinf_tls_conn_alpn(p.server), "") == 0, "no ALPN offered: none agreed");
	close(p.cfd);
	p.cfd = -1;
	n = kinf_tls_conn_read(p.server, buf, sizeof(buf));
	is_int(n, 0, "a bare TCP close is the end too, as Go's server takes it");
	pair_close(&p);

	static const unsigned char h2[] = "\x02h2";
	pair_open(&p, tls, ca, ca_len, 0, h2, sizeof(h2) - 1);
	is_int(handshake(&p, &crc, &err), 1, "an h2-only client still connects");
	is_str(kinf_tls_conn_alpn(p.server), "", "  without ALPN, so it must speak HTTP/1.1");
	pair_close(&p);

	pair_open(&p, tls, oca, ol, 0, NULL, 0);
	is_int(handshake(&p, &crc, &err), -KINF_ETLS, "a client trusting another CA: the handshake fails");
	ok(crc == -1, "  the client refused the certificate");
	ok(strstr(err.message, "unknown ca") != NULL, "  the server says: %s", err.message);
	pair_close(&p);

	pair_open(&p, tls, ca, ca_len, TLS1_2_VERSION, NULL, 0);
	is_int(handshake(&p, &crc, &err), 1, "a TLS 1.2 client connects (%s)", err.message);
	const char *cipher = SSL_get_cipher_name(p.client);
	ok(SSL_version(p.client) == TLS1_2_VERSION && cipher &&
		strncmp(cipher, "ECDHE-ECDSA-", 12) == 0 && strstr(cipher, "GCM"),
		"  with ECDHE-ECDSA and AES-GCM (%s)", cipher ? cipher : "none");
	pair_close(&p);

	pair_open(&p, tls, ca, ca_len, TLS1_1_VERSION, NULL, 0);
	is_int(handshake(&p, &crc, &err), -KINF_ETLS, "TLS 1.1 is refused");
	ok(strstr(err.message, "unsupported protocol") != NULL, "  %s", err.message);
	pair_close(&p);

	pair_open(&p, tls, ca, ca_len, 0, NULL, 0);
	ssize_t w = write(p.cfd, "GET /version HTTP/1.1\r\nHost: x\r\n\r\n", 35);
	(void)w;
	is_int(kinf_tls_conn_handshake(p.server, &err), -KINF_EUNSUPPORTED, "plain HTTP is told apart");
	pair_close(&p);

	pair_open(&p, tls, ca, ca_len, 0, NULL, 0);
	w = write(p.cfd, "\x16\x03\x01\x00\x05hello", 10);
	close(p.cfd);
	p.cfd = -1;
	is_int(kinf_tls_conn_handshake(p.server, &err), -KINF_ETLS, "a broken ClientHello fails");
	ok(err.message[0], "  %s", err.message);
	ok(ERR_peek_error() == 0, "  leaving OpenSSL's error queue empty");
	pair_close(&p);

	pair_open(&p, tls, ca, ca_len, 0, NULL, 0);
	close(p.cfd);
	p.cfd = -1;
	is_int(kinf_tls_conn_handshake(p.server, &err), -KINF_ETLS, "a close before the hello");
	pair_close(&p);

	kinf_tls_unref(tls);
	kinf_tls_unref(other);
}

int main(void) {
	test_certificates();
	test_handshakes();
	return tap_done();
}
