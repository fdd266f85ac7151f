// SPDX-License-Identifier: BSD-2-Clause
/*
 * tcp_stream server ADDR PORT | client ADDR PORT SIZE COUNT [busy-poller]
 *
 * A plain TCP stream between two hosts (bench/run: two network namespaces),
 * nothing else: the limit of the sim's TCP links between hosts, which use
 * the same kind of socket with the same 4 MiB buffers and TCP_NODELAY. The
 * client sends COUNT messages of SIZE bytes, one blocking send() each; the
 * server takes what arrived, up to 256 KiB per recv(), and answers one
 * byte once it has all of them. The client prints one JSON line:
 * {"GBps": ..., "Mpps": ...} from its first send to that answer.
 *
 * With busy-poller, a second thread of the client spins on memory until
 * the stream ends, as the thread of an RDMA client that busy-polls its CQ
 * (perftest's) does: what the stream gets of a machine where one core is
 * taken that way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "busy_poller.h"

#define SOCK_BUF	(4 << 20)	/* as sim/fabric/fabric.c */
#define RX_CHUNK	(256 << 10)

static void tune(int fd)
{
	int sz = SOCK_BUF, one = 1;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int server(struct sockaddr_in *sa)
{
	static uint8_t buf[RX_CHUNK];
	uint64_t total = 0, want;
	int fd, c, one = 1;
	ssize_t n;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket", errno);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	tune(fd);
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) || listen(fd, 1))
		die("bind", errno);
	c = accept(fd, NULL, NULL);
	if (c < 0)
		die("accept", errno);
	/* the client says first how many bytes follow */
	if (recv(c, &want, sizeof(want), MSG_WAITALL) != sizeof(want))
		die("recv", errno);
	while (total < want) {
		n = recv(c, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("recv", errno);
		total += n;
	}
	if (send(c, "", 1, MSG_NOSIGNAL) != 1)
		die("send", errno);
	close(c);
	close(fd);
	return 0;
}

static int client(struct sockaddr_in *sa, size_t size, uint64_t count,
		  bool poller)
{
	struct busy_poller busy = { .running = false };
	uint64_t total = size * count, i;
	uint8_t *buf = calloc(1, size), ack;
	double t0, t;
	int fd, tries = 0;
	ssize_t n;
	size_t off;

	if (!buf)
		die("calloc", errno);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket", errno);
		tune(fd);
		if (!connect(fd, (struct sockaddr *)sa, sizeof(*sa)))
			break;
		if (++tries > 100)
			die("connect", errno);
		close(fd);
		usleep(50000);
	}
	if (send(fd, &total, sizeof(total), MSG_NOSIGNAL) != sizeof(total))
		die("send", errno);
	if (poller)
		busy_poller_start(&busy);
	t0 = now_s();
	for (i = 0; i < count; i++) {
		for (off = 0; off < size; off += n) {
			n = send(fd, buf + off, size - off, MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n <= 0)
				die("send", errno);
		}
	}
	if (recv(fd, &ack, 1, MSG_WAITALL) != 1)
		die("recv", errno);
	t = now_s() - t0;
	busy_poller_stop(&busy);
	printf("{\"GBps\": %.6f, \"Mpps\": %.6f}\n", total / t / 1e9,
	       count / t / 1e6);
	close(fd);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };

	if (argc < 4 || inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
		goto usage;
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	if (!strcmp(argv[1], "server"))
		return server(&sa);
	if (!strcmp(argv[1], "client") &&
	    (argc == 6 || (argc == 7 && !strcmp(argv[6], "busy-poller"))))
		return client(&sa, strtoul(argv[4], NULL, 0),
			      strtoull(argv[5], NULL, 0), argc == 7);
usage:
	fprintf(stderr, "usage: tcp_stream server ADDR PORT | "
		"client ADDR PORT SIZE COUNT [busy-poller]\n");
	return 2;
}
