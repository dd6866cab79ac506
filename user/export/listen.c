// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's listening socket ([ADDR]:PORT, bound as root before the
 * drop), and the descriptors its connections may take.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include "export/export.h"

/* "[ADDR]:PORT" into host (NULL: every address) and port; -EINVAL when malformed. */
static int split_listen(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(s, ':');
	const char *h = s, *he;
	char *end;
	long p;

	if (!colon)
		return -EINVAL;
	he = colon;
	if (*h == '[') {
		if (he == h || he[-1] != ']')
			return -EINVAL;
		h++;
		he--;
	}
	if ((size_t)(he - h) >= hlen || strlen(colon + 1) >= plen)
		return -EINVAL;
	memcpy(host, h, he - h);
	host[he - h] = '\0';
	snprintf(port, plen, "%s", colon + 1);
	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 1 || p > 65535)
		return -EINVAL;
	return 0;
}

#define DEFER_ACCEPT_S 5

static int bind_one(const struct addrinfo *ai)
{
	int one = 1, zero = 0, defer = DEFER_ACCEPT_S;
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Accepted once a request's first bytes are in: see refuse_garbage(). */
	setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 4096)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int bw_listen_open(const char *spec)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE |
				  AI_NUMERICSERV }, *res, *ai;
	char host[256], port[16];
	int fd = -EADDRNOTAVAIL, err;

	if (split_listen(spec, host, sizeof(host), port, sizeof(port))) {
		bw_err("bad --listen '%s': give [ADDR]:PORT, e.g. :%s, 127.0.0.1:%s or [::1]:%s",
		       spec, DEFAULT_PORT, DEFAULT_PORT, DEFAULT_PORT);
		return -EINVAL;
	}
	hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (err && !host[0]) {
		hints.ai_family = AF_INET;	/* no IPv6 here */
		err = getaddrinfo(NULL, port, &hints, &res);
	}
	if (err) {
		bw_err("bad --listen '%s': %s", spec, gai_strerror(err));
		return -EINVAL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = bind_one(ai);
		if (fd >= 0 || fd == -EADDRINUSE)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0)
		bw_err("cannot listen on %s: %s%s", spec, strerror(-fd),
		       fd == -EADDRINUSE ? " (another exporter there? give --listen)" : "");
	return fd;
}

/*
 * Descriptors for --max-connections: the soft limit raised to the hard
 * one (systemd's default soft limit is 1024), else fewer connections.
 */
#define FD_RESERVE 256

void bw_listen_fit_nofile(struct export_args *a)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || (rlim_t)a->max_conn + FD_RESERVE <= rl.rlim_cur)
		return;
	a->max_conn = rl.rlim_cur > 2 * FD_RESERVE ? (long)(rl.rlim_cur - FD_RESERVE) : FD_RESERVE;
	bw_warn("--max-connections: %ld (RLIMIT_NOFILE is %llu)", a->max_conn,
		(unsigned long long)rl.rlim_cur);
}
