#ifndef KINF_AUTH_H
#define KINF_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct kinf_rest_config;

/*
 * Credentials for requests, from a rest config: a static token, a token
 * file re-read when it changes, a client certificate, basic auth, or an
 * exec plugin run with execve (no shell), cached until its
 * expirationTimestamp and re-run once after a 401.
 *
 * Thread safe: the clients of several threads share one auth. It keeps
 * its own lock and never holds it while an exec plugin runs; a refresh is
 * single-flight (one plugin run, the others wait for its result), and
 * credentials already handed out stay valid for their holders.
 */
struct kinf_auth;

struct kinf_credentials {
	const char *token;		/* bearer token, or NULL */
	const char *client_cert_pem;	/* or NULL */
	size_t client_cert_pem_len;
	const char *client_key_pem;
	size_t client_key_pem_len;
	const char *username;		/* basic auth, or NULL */
	const char *password;
	unsigned generation;		/* changes whenever the credentials change */
};

/* How long an exec plugin may run before it is killed, by default. */
#define KINF_AUTH_EXEC_TIMEOUT_MS 60000
/* At least this long when it has our terminal (a login may be under way). */
#define KINF_AUTH_EXEC_INTERACTIVE_TIMEOUT_MS 600000
/* Most bytes of standard output read from an exec plugin. */
#define KINF_AUTH_EXEC_MAX_OUTPUT (1u << 20)

/* config is borrowed and must outlive the auth. NULL on out of memory. */
struct kinf_auth *kinf_auth_new(const struct kinf_rest_config *config);
/* Free, zeroing cached secrets. NULL is fine. */
void kinf_auth_free(struct kinf_auth *auth);

/*
 * Set how long an exec plugin may run (milliseconds) before it and its
 * process group are killed with SIGKILL; <= 0 restores the default. A
 * plugin given our terminal gets KINF_AUTH_EXEC_INTERACTIVE_TIMEOUT_MS at least.
 */
void kinf_auth_set_exec_timeout(struct kinf_auth *auth, long timeout_ms);

/*
 * The credentials to use now: a reference, immutable, which the caller
 * drops with kinf_auth_credentials_unref (they stay valid until then, also
 * when others are installed meanwhile). Runs the exec plugin when there is
 * no cached credential or it has expired or was rejected, or waits for the
 * run another thread started; re-reads the token file when it changed.
 * -KINF_EAUTH with a message such as "exec plugin \"/bin/x\" failed: exit
 * status 1" on failure (the same for every thread that waited on that
 * run); *ret is then left alone.
 */
KINF_MUST_CHECK int kinf_auth_get(struct kinf_auth *auth, const struct kinf_credentials **ret,
		struct kinf_error *reterr);

/* Drop a reference from kinf_auth_get. NULL is fine; returns NULL. */
const struct kinf_credentials *kinf_auth_credentials_unref(
		const struct kinf_credentials *cred);

/*
 * A request got 401: forget cached exec credentials (if they are still
 * those of generation) so the next kinf_auth_get runs the plugin again.
 * Returns true when a retry could help (exec or token file), false otherwise.
 */
bool kinf_auth_unauthorized(struct kinf_auth *auth, unsigned generation);

#endif
