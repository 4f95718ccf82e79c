#ifndef KINF_TLS_H
#define KINF_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/*
 * TLS for `kinf serve`'s TCP listeners, over OpenSSL. kubectl and
 * client-go send a bearer token only over https (clientcmd keeps the auth
 * info for TLS configs alone), so a listener that requires a token must
 * speak TLS.
 *
 * kinf_tls_new() makes, in memory and never on disk, a CA (an ECDSA P-256
 * key and a self-signed certificate) and a server certificate it signs for
 * localhost, 127.0.0.1, ::1 and the names given; the CA's PEM goes into
 * the kubeconfig's certificate-authority-data. The CA key is freed once
 * the server certificate is signed: nothing else can ever be signed with
 * it, and a restart makes a new CA (and kubeconfig).
 *
 * The server context speaks TLS 1.2 and 1.3 only, ECDHE with AES-GCM or
 * ChaCha20-Poly1305, no renegotiation, no compression, no session
 * resumption, and offers ALPN "http/1.1" alone, so Go clients that offer
 * h2 first fall back to HTTP/1.1.
 */

struct kinf_tls;

/* Validity of the certificates when opts.validity_days is 0. */
#define KINF_TLS_VALIDITY_DAYS 365

struct kinf_tls_opts {
	/*
	 * Host names and IP addresses ([IPv6] or bare) to put in the server
	 * certificate's subjectAltName besides localhost, 127.0.0.1 and ::1
	 * (duplicates and the wildcards 0.0.0.0 and :: are skipped).
	 */
	const char *const *names;
	size_t n_names;
	int validity_days;	/* 0: KINF_TLS_VALIDITY_DAYS; from an hour ago */
};

/*
 * Make a CA, a server certificate and the server's SSL_CTX. opts may be
 * NULL. Returns 0 and a new kinf_tls (refcount 1), -KINF_EINVAL for a
 * name that is neither an IP address nor a DNS name, -KINF_ETLS when
 * OpenSSL fails (its reason in reterr), -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_tls_new(const struct kinf_tls_opts *opts, struct kinf_tls **ret,
	struct kinf_error *reterr);

/* Another reference (any thread); returns tls. */
struct kinf_tls *kinf_tls_ref(struct kinf_tls *tls);
/* Drop a reference, freeing on the last (keys zeroed); NULL is fine. Returns NULL. */
struct kinf_tls *kinf_tls_unref(struct kinf_tls *tls);

/* The CA certificate in PEM, NUL-terminated, length in *ret_len if not NULL. Borrowed from tls. */
const char *kinf_tls_ca_pem(const struct kinf_tls *tls, size_t *ret_len);

/* The server certificate in PEM (for tests and logs). Borrowed from tls. */
const char *kinf_tls_cert_pem(const struct kinf_tls *tls, size_t *ret_len);

/*
 * A new random bearer token: 32 bytes from the OpenSSL CSPRNG as
 * unpadded base64url (43 characters). The caller frees it with
 * kinf_free_secret(). 0, -KINF_ETLS (no randomness) or -KINF_ENOMEM.
 */
KINF_MUST_CHECK int kinf_tls_token_new(char **ret_token);

/*
 * One server-side TLS connection on a non-blocking socket. The calls
 * below mirror read(2)/write(2): when OpenSSL needs the socket readable
 * or writable first they return -1 with errno EAGAIN, and
 * kinf_tls_conn_events() says which (POLLIN or POLLOUT) to wait for,
 * which for a write may be POLLIN and for a read POLLOUT. Loop thread
 * only; each call clears this thread's OpenSSL error queue first.
 */
struct kinf_tls_conn;

/* Start the server side of a handshake on fd (not owned). NULL for out of memory. */
struct kinf_tls_conn *kinf_tls_conn_new(struct kinf_tls *tls, int fd);

/*
 * Go on with the handshake: 1 when done, 0 when it waits for the socket
 * (see kinf_tls_conn_events), -KINF_EUNSUPPORTED when the client spoke
 * plain HTTP, -KINF_ETLS for another failure (a short reason in reterr:
 * "tlsv1 alert unknown ca", "unsupported protocol", "unexpected eof").
 */
KINF_MUST_CHECK int kinf_tls_conn_handshake(struct kinf_tls_conn *c, struct kinf_error *reterr);

/* The poll events the last EAGAIN waits for. */
short kinf_tls_conn_events(const struct kinf_tls_conn *c);

/*
 * Read up to len bytes of plaintext: > 0, 0 at the client's close
 * (close_notify or, as Go's server allows, a bare TCP close), or -1 with
 * errno EAGAIN or EIO (a TLS failure) or the socket's error.
 */
ssize_t kinf_tls_conn_read(struct kinf_tls_conn *c, void *buf, size_t len);

/*
 * Write up to len bytes (partial writes happen): > 0 bytes taken, or -1
 * with errno as above. After EAGAIN call it again with the same bytes at
 * the front of buf (buf may move, and len may grow but not shrink).
 */
ssize_t kinf_tls_conn_write(struct kinf_tls_conn *c, const void *buf, size_t len);

/* True when decrypted bytes of a record wait inside OpenSSL (poll cannot see them). */
bool kinf_tls_conn_pending(const struct kinf_tls_conn *c);

/* Send close_notify, best effort, without waiting for the client's. */
void kinf_tls_conn_close_notify(struct kinf_tls_conn *c);

/* The ALPN protocol agreed ("http/1.1"), or "" when the client sent none. Borrowed. */
const char *kinf_tls_conn_alpn(const struct kinf_tls_conn *c);

/* Free the connection (the fd stays open). NULL is fine. */
void kinf_tls_conn_free(struct kinf_tls_conn *c);

#endif
