#ifndef KINF_TEST_LOOPBACK_H
#define KINF_TEST_LOOPBACK_H

/*
 * For the unit tests' little servers: a TCP socket listening on
 * 127.0.0.1, on a free port (written to *ret_port). Exits on failure.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

static inline int loopback_listen(int *ret_port) {
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0 ||
			getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		perror("test server");
		exit(1);
	}
	*ret_port = ntohs(a.sin_port);
	return fd;
}

/* A connection accepted on fd within 50 ms (so a loop can check its stop), or -1. */
static inline int loopback_accept(int fd) {
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 50) > 0 ? accept(fd, NULL, NULL) : -1;
}

#endif
