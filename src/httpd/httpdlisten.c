#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "httpd_int.h"

/*
 * httpdlisten.c: the listeners: unix:PATH (a socket only its owner may
 * reach, in a directory checked for it) and tcp:HOST:PORT.
 */

/* Add listener l (its strings taken: freed, its fd closed on failure). */
static int add_listener(struct kinf_httpd *srv, struct listener l, struct kinf_error *reterr) {
	struct listener *ls = realloc(srv->ls, (srv->n_ls + 1) * sizeof(*ls));
	if (!ls) {
		close(l.fd);
		if (l.path) {
			unlink(l.path);
		}
		free(l.path);
		free(l.addr);
		free(l.url);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	srv->ls = ls;
	ls[srv->n_ls++] = l;
	return 0;
}

/*
 * A unix socket's directory must be a directory (not a symlink) of this
 * user (or root's, as /tmp and /run are) that no one else may write to,
 * unless it is sticky as /tmp is (then no one else can remove or rename
 * the socket). 0 or -KINF_EIO naming what is wrong.
 */
static int check_socket_dir(const char *dir, struct kinf_error *reterr) {
	struct stat st;
	uid_t me = geteuid();
	if (lstat(dir, &st) < 0) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': %s", dir, strerror(errno));
	}
	if (S_ISLNK(st.st_mode)) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': the socket's directory is a "
			"symbolic link; use a directory of mode 0700 of your own", dir);
	}
	if (!S_ISDIR(st.st_mode)) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': not a directory", dir);
	}
	if (st.st_uid != me && st.st_uid != 0) {
		return kinf_error_set(reterr, KINF_EIO, "'%s': the socket's directory belongs to "
			"uid %u, not to you (uid %u); use a directory of mode 0700 of your own", dir,
			(unsigned)st.st_uid, (unsigned)me);
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & 01000)) {	/* S_ISVTX, an XSI name */
		return kinf_error_set(reterr, KINF_EIO, "'%s': the socket's directory is writable "
			"by others (mode %04o); use a directory of mode 0700 of your own", dir,
			(unsigned)(st.st_mode & 07777));
	}
	return 0;
}

static int listen_unix(struct kinf_httpd *srv, const char *path, struct kinf_error *reterr) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd = -1;

	if (!path || !*path) {
		return kinf_error_set(reterr, KINF_EINVAL, "unix: a socket path is needed");
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		return kinf_error_set(reterr, KINF_EINVAL, "'%s': socket path too long (%zu bytes at most)",
			path, sizeof(sa.sun_path) - 1);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* The directory: made 0700 when missing; what protects the socket. */
	char *dir = strdup(path);
	if (!dir) {
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			int rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", dir, strerror(errno));
			free(dir);
			return rc;
		}
		/*
		 * Made now or found: whoever owns the directory (or may write to
		 * it) can put their own socket in ours' place. Another user may
		 * have made /tmp/kinf-UID first.
		 */
		int rc = check_socket_dir(dir, reterr);
		if (rc < 0) {
			free(dir);
			return rc;
		}
	}
	free(dir);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			return kinf_error_set(reterr, KINF_EEXISTS, "'%s' exists and is not a socket", path);
		}
		/* A socket nobody answers on is left over from a dead server. */
		int probe = socket(AF_UNIX, SOCK_STREAM, 0);
		if (probe < 0) {
			return kinf_error_set(reterr, KINF_EIO, "socket: %s", strerror(errno));
		}
		int cr = connect(probe, (struct sockaddr *)&sa, sizeof(sa));
		int cerr = errno;
		close(probe);
		if (cr == 0) {
			return kinf_error_set(reterr, KINF_EEXISTS, "'%s': a server is already listening there",
				path);
		}
		if (cerr != ECONNREFUSED) {
			return kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(cerr));
		}
		if (unlink(path) < 0) {
			return kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(errno));
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || httpd_set_flags(fd) < 0) {
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		goto fail;
	}
	if (chmod(path, 0600) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		int rc = kinf_error_set(reterr, KINF_EIO, "'%s': %s", path, strerror(errno));
		unlink(path);
		close(fd);
		return rc;
	}
	char *p = strdup(path);
	struct kinf_buf addr = {0};
	if (!p || kinf_buf_printf(&addr, "unix:%s", path) < 0) {
		free(p);
		kinf_buf_release(&addr);
		unlink(path);
		close(fd);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	return add_listener(srv, (struct listener){ .fd = fd, .is_unix = true, .path = p,
		.addr = kinf_buf_take(&addr) }, reterr);
fail:;
	int rc = kinf_error_set(reterr, errno == EADDRINUSE ? KINF_EEXISTS : KINF_EIO, "'%s': %s",
		path, strerror(errno));
	if (fd >= 0) {
		close(fd);
	}
	return rc;
}

static int listen_tcp(struct kinf_httpd *srv, const char *hostport, struct kinf_error *reterr) {
	const char *colon = strrchr(hostport, ':');
	char host[256], port[8];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res = NULL;

	if (!srv->token || !*srv->token) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: a TCP listener needs a token", hostport);
	}
	if (!colon || colon == hostport) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: HOST:PORT expected", hostport);
	}
	size_t hl = (size_t)(colon - hostport);
	const char *h = hostport;
	if (*h == '[') {
		if (hl < 3 || h[hl - 1] != ']') {
			return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: bad IPv6 address", hostport);
		}
		h++;
		hl -= 2;
	}
	if (hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port) || !colon[1] ||
			strspn(colon + 1, "0123456789") != strlen(colon + 1) || atoi(colon + 1) > 65535) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: bad host or port", hostport);
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, sizeof(port), "%s", colon + 1);
	int gr = getaddrinfo(host, port, &hints, &res);
	if (gr != 0) {
		return kinf_error_set(reterr, KINF_EINVAL, "tcp:%s: %s", hostport, gai_strerror(gr));
	}
	int fd = -1, err = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (httpd_set_flags(fd) == 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
				listen(fd, LISTEN_BACKLOG) == 0) {
			break;
		}
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		return kinf_error_set(reterr, err == EADDRINUSE ? KINF_EEXISTS : KINF_EIO, "tcp:%s: %s",
			hostport, strerror(err));
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	int bound = 0;
	struct kinf_buf addr = {0}, url = {0};
	const char *scheme = srv->opts.tls ? "https" : "http";
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		bound = ntohs(s6->sin6_port);
		err = kinf_buf_printf(&addr, "tcp:[%s]:%d", ip, bound);
		/* A client of a wildcard listener here reaches it on loopback. */
		err = err ? err : kinf_buf_printf(&url, "%s://[%s]:%d", scheme,
				IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ? "::1" : ip, bound);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		bound = ntohs(s4->sin_port);
		err = kinf_buf_printf(&addr, "tcp:%s:%d", ip, bound);
		err = err ? err : kinf_buf_printf(&url, "%s://%s:%d", scheme,
				s4->sin_addr.s_addr == htonl(INADDR_ANY) ? "127.0.0.1" : ip, bound);
	}
	if (err < 0) {
		kinf_buf_release(&addr);
		kinf_buf_release(&url);
		close(fd);
		return kinf_error_set(reterr, KINF_ENOMEM, "out of memory");
	}
	return add_listener(srv, (struct listener){ .fd = fd, .tls = srv->opts.tls != NULL,
		.addr = kinf_buf_take(&addr), .url = kinf_buf_take(&url), .port = bound }, reterr);
}

int kinf_httpd_listen(struct kinf_httpd *srv, const char *addr, struct kinf_error *reterr) {
	if (strncmp(addr, "unix:", 5) == 0) {
		return listen_unix(srv, addr + 5, reterr);
	}
	if (strncmp(addr, "tcp:", 4) == 0) {
		return listen_tcp(srv, addr + 4, reterr);
	}
	return kinf_error_set(reterr, KINF_EINVAL, "'%s': unix:PATH or tcp:HOST:PORT expected", addr);
}

const char *kinf_httpd_address(const struct kinf_httpd *srv, size_t i) {
	return i < srv->n_ls ? srv->ls[i].addr : NULL;
}

int kinf_httpd_port(const struct kinf_httpd *srv, size_t i) {
	return i < srv->n_ls ? srv->ls[i].port : 0;
}

const char *kinf_httpd_url(const struct kinf_httpd *srv, size_t i) {
	return i < srv->n_ls ? srv->ls[i].url : NULL;
}

void httpd_close_listeners(struct kinf_httpd *srv) {
	for (size_t i = 0; i < srv->n_ls; i++) {
		struct listener *l = &srv->ls[i];
		if (l->fd >= 0) {
			close(l->fd);
			l->fd = -1;
		}
		if (l->path) {
			unlink(l->path);
			free(l->path);
			l->path = NULL;
		}
	}
}
