// SPDX-License-Identifier: BSD-2-Clause
/*
 * udp_stream server ADDR PORT [gro] [icrc]
 * udp_stream client ADDR PORT SIZE COUNT DGRAM [gso] [icrc] [busy-poller]
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
 *
 * With icrc, both ends also do the least that any RoCE v2 endpoint in
 * userspace must do for each packet besides the system calls: the client
 * computes a CRC-32 over each datagram but its last 4 bytes and puts it
 * there, as a sender puts the ICRC; the server checks it and copies the
 * datagram's payload (all but a BTH's 12 bytes and the CRC) to its place
 * in a buffer of SIZE, as a responder places a WRITE. The CRC is the
 * sim's own (sim/fabric/roce_crc32.c); no headers are built or parsed,
 * so this is a floor, not a model of the wire.
 *
 * With busy-poller, a second thread of the client spins while it sends
 * (busy_poller.h), as the thread of perftest's client busy-polls its CQ.
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
#include "busy_poller.h"
#include "roce_crc32.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
#ifndef UDP_GRO
#define UDP_GRO		104
#endif

#define SOCK_BUF	(4 << 20)	/* as sim/fabric */
#define RX_LEN		65536
#define BTH_LEN		12		/* a packet's header, not placed */
#define CRC_LEN		4

/* What a command line's trailing words ask for. */
struct stream_mode {
	bool gso, gro, icrc, busy_poller;
};

static bool parse_mode(int argc, char **argv, struct stream_mode *m)
{
	for (; argc > 0; argc--, argv++) {
		if (!strcmp(*argv, "gso"))
			m->gso = true;
		else if (!strcmp(*argv, "gro"))
			m->gro = true;
		else if (!strcmp(*argv, "icrc"))
			m->icrc = true;
		else if (!strcmp(*argv, "busy-poller"))
			m->busy_poller = true;
		else
			return false;
	}
	return true;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The datagrams of n bytes at p, each seg long but the last: their CRC
 * checked and their payload placed at *off in place[0..size); how many
 * had a wrong one. */
static uint64_t check_and_place(const uint8_t *p, size_t n, size_t seg,
				uint8_t *place, size_t size, size_t *off)
{
	uint64_t bad = 0;
	size_t len, pay;

	for (; n; p += len, n -= len) {
		len = n < seg ? n : seg;
		if (len < BTH_LEN + CRC_LEN ||
		    ~roce_crc32_update(~0u, p, len - CRC_LEN) !=
		    get_le32(p + len - CRC_LEN)) {
			bad++;
			continue;
		}
		pay = len - BTH_LEN - CRC_LEN;
		if (*off + pay > size)
			*off = 0;
		memcpy(place + *off, p + BTH_LEN, pay);
		*off += pay;
	}
	return bad;
}

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

/* The length of each datagram of a coalesced read (UDP_GRO), or 0. */
static size_t gro_segment(struct msghdr *m)
{
	struct cmsghdr *c;
	int v;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return (size_t)v;
		}
	return 0;
}

static int server(struct sockaddr_in *sa, const struct stream_mode *mode)
{
	static uint8_t buf[RX_LEN], place[RX_LEN];
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec v = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct sockaddr_in from;
	struct msghdr m;
	uint64_t total = 0, bad = 0;
	size_t off = 0, seg;
	int fd = udp_socket(), one = 1;
	ssize_t n;

	if (mode->gro &&
	    setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)))
		die("UDP_GRO", errno);
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)))
		die("bind", errno);
	for (;;) {
		memset(&m, 0, sizeof(m));
		m.msg_name = &from;
		m.msg_namelen = sizeof(from);
		m.msg_iov = &v;
		m.msg_iovlen = 1;
		m.msg_control = ctl.b;
		m.msg_controllen = sizeof(ctl.b);
		n = recvmsg(fd, &m, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv", errno);
		if (n != 1) {
			if (mode->icrc) {
				seg = gro_segment(&m);
				bad += check_and_place(buf, (size_t)n,
						       seg ? seg : (size_t)n,
						       place, sizeof(place),
						       &off);
			}
			total += n;
			continue;
		}
		if (bad) {
			fprintf(stderr, "udp_stream: %llu datagrams with a "
				"wrong CRC\n", (unsigned long long)bad);
			total = 0;	/* the client reports no bandwidth */
		}
		/* the end: answered for each end datagram the client sends */
		if (sendto(fd, &total, sizeof(total), 0,
			   (struct sockaddr *)&from, m.msg_namelen) !=
		    sizeof(total))
			die("sendto", errno);
		if (buf[0] == 'q')
			break;
	}
	close(fd);
	return 0;
}

/* Each datagram's CRC into its last bytes, as a sender puts the ICRC. */
static void put_crcs(uint8_t *p, size_t n, size_t dgram)
{
	size_t len;

	for (; n; p += len, n -= len) {
		len = n < dgram ? n : dgram;
		if (len >= CRC_LEN)
			put_le32(p + len - CRC_LEN,
				 ~roce_crc32_update(~0u, p, len - CRC_LEN));
	}
}

static uint64_t send_message(int fd, struct sockaddr_in *sa, uint8_t *buf,
			     size_t size, size_t dgram, bool gso, bool icrc)
{
	/* a datagram of UDP_SEGMENT carries at most 64 KiB and 64 parts */
	size_t step = gso ? (65000 / dgram < 64 ? 65000 / dgram : 64) * dgram :
		      dgram;
	uint64_t sent = 0;
	size_t off, len;
	ssize_t n;

	for (off = 0; off < size; off += len) {
		len = size - off < step ? size - off : step;
		if (icrc)
			put_crcs(buf + off, len, dgram);
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
		  size_t dgram, const struct stream_mode *mode)
{
	struct busy_poller busy = { .running = false };
	uint8_t *buf = calloc(1, size);
	int fd = udp_socket(), seg = (int)dgram;
	uint64_t i, sent = 0, got;
	double t0, t;

	if (!buf)
		die("calloc", errno);
	if (mode->gso &&
	    setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg)))
		die("UDP_SEGMENT", errno);
	/* the server is up once it answers */
	finish(fd, sa, 's');
	if (mode->busy_poller)
		busy_poller_start(&busy);
	t0 = now_s();
	for (i = 0; i < count; i++)
		sent += send_message(fd, sa, buf, size, dgram, mode->gso,
				     mode->icrc);
	got = finish(fd, sa, 'q');
	t = now_s() - t0;
	busy_poller_stop(&busy);
	printf("{\"GBps\": %.6f, \"lost\": %.4f}\n", got / t / 1e9,
	       sent ? 1.0 - (double)got / (double)(size * count) : 1.0);
	close(fd);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct stream_mode mode = { 0 };

	if (argc < 4 || inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
		goto usage;
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	if (!strcmp(argv[1], "server") &&
	    parse_mode(argc - 4, argv + 4, &mode) && !mode.gso &&
	    !mode.busy_poller)
		return server(&sa, &mode);
	if (!strcmp(argv[1], "client") && argc >= 7 &&
	    parse_mode(argc - 7, argv + 7, &mode) && !mode.gro)
		return client(&sa, strtoul(argv[4], NULL, 0),
			      strtoull(argv[5], NULL, 0),
			      strtoul(argv[6], NULL, 0), &mode);
usage:
	fprintf(stderr, "usage: udp_stream server ADDR PORT [gro] [icrc] | "
		"client ADDR PORT SIZE COUNT DGRAM [gso] [icrc] "
		"[busy-poller]\n");
	return 2;
}
