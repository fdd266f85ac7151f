// SPDX-License-Identifier: BSD-2-Clause
/*
 * udp_stream server ADDR PORT [gro]
 * udp_stream client ADDR PORT SIZE COUNT DGRAM [gso]
 *
 * A plain UDP stream between two hosts (bench/run: two network
 * namespaces): the limit of the sim's RoCE v2 wire, which sends datagrams
 * of the path MTU and its headers on the same kind of socket with the
 * same 4 MiB buffers. The client sends COUNT messages of SIZE bytes, each
 * as datagrams of DGRAM bytes: one sendto() each, or with gso one
 * sendmsg() a message (UDP_SEGMENT). The server reads them, one recv()
 * each, or with gro as the kernel coalesced them (UDP_GRO), until an end
 * datagram of 1 byte; it answers it with the bytes it received. UDP has
 * no flow control: what the receiver could not take is lost, so the
 * client prints the bytes that arrived over the time from its first send
 * to that answer, one JSON line {"GBps": ..., "lost": fraction}.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
#ifndef UDP_GRO
#define UDP_GRO		104
#endif

#define SOCK_BUF	(4 << 20)	/* as sim/fabric */
#define RX_LEN		65536

static int udp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), sz = SOCK_BUF;

	if (fd < 0)
		die("socket", errno);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

static int server(struct sockaddr_in *sa, bool gro)
{
	static uint8_t buf[RX_LEN];
	struct sockaddr_in from;
	socklen_t fl;
	uint64_t total = 0;
	int fd = udp_socket(), one = 1;
	ssize_t n;

	if (gro && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)))
		die("UDP_GRO", errno);
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)))
		die("bind", errno);
	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &fl);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv", errno);
		if (n != 1) {
			total += n;
			continue;
		}
		/* the end: answered for each end datagram the client sends */
		if (sendto(fd, &total, sizeof(total), 0,
			   (struct sockaddr *)&from, fl) != sizeof(total))
			die("sendto", errno);
		if (buf[0] == 'q')
			break;
	}
	close(fd);
	return 0;
}

static uint64_t send_message(int fd, struct sockaddr_in *sa, uint8_t *buf,
			     size_t size, size_t dgram, bool gso)
{
	/* a datagram of UDP_SEGMENT carries at most 64 KiB and 64 parts */
	size_t step = gso ? (65000 / dgram < 64 ? 65000 / dgram : 64) * dgram :
		      dgram;
	uint64_t sent = 0;
	size_t off, len;
	ssize_t n;

	for (off = 0; off < size; off += len) {
		len = size - off < step ? size - off : step;
		n = sendto(fd, buf + off, len, 0, (struct sockaddr *)sa,
			   sizeof(*sa));
		if (n > 0)
			sent += n;
	}
	return sent;
}

/* Sends the end datagram until the server answers with its count. */
static uint64_t finish(int fd, struct sockaddr_in *sa, char what)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t got = 0;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (sendto(fd, &what, 1, 0, (struct sockaddr *)sa,
			   sizeof(*sa)) != 1)
			die("sendto", errno);
		if (poll(&p, 1, 100) == 1 &&
		    recv(fd, &got, sizeof(got), 0) == sizeof(got))
			return got;
	}
	errno = ETIMEDOUT;
	die("no answer from the server", errno);
	return 0;
}

static int client(struct sockaddr_in *sa, size_t size, uint64_t count,
		  size_t dgram, bool gso)
{
	uint8_t *buf = calloc(1, size);
	int fd = udp_socket(), seg = (int)dgram;
	uint64_t i, sent = 0, got;
	double t0, t;

	if (!buf)
		die("calloc", errno);
	if (gso && setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg)))
		die("UDP_SEGMENT", errno);
	/* the server is up once it answers */
	finish(fd, sa, 's');
	t0 = now_s();
	for (i = 0; i < count; i++)
		sent += send_message(fd, sa, buf, size, dgram, gso);
	got = finish(fd, sa, 'q');
	t = now_s() - t0;
	printf("{\"GBps\": %.6f, \"lost\": %.4f}\n", got / t / 1e9,
	       sent ? 1.0 - (double)got / (double)(size * count) : 1.0);
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
	if (!strcmp(argv[1], "server") && argc <= 5)
		return server(&sa, argc == 5 && !strcmp(argv[4], "gro"));
	if (!strcmp(argv[1], "client") &&
	    (argc == 7 || (argc == 8 && !strcmp(argv[7], "gso"))))
		return client(&sa, strtoul(argv[4], NULL, 0),
			      strtoull(argv[5], NULL, 0),
			      strtoul(argv[6], NULL, 0), argc == 8);
usage:
	fprintf(stderr, "usage: udp_stream server ADDR PORT [gro] | "
		"client ADDR PORT SIZE COUNT DGRAM [gso]\n");
	return 2;
}
