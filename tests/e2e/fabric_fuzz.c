// SPDX-License-Identifier: BSD-2-Clause
/*
 * Speaks wrongly to an adapter's TCP port (sim/fabric/tcp.c), as anything
 * on the network may: random bytes; a HELLO of another version, naming
 * another address, too long; frames after a good HELLO whose header
 * fields are mutated one at a time (magic, type, lengths, QPNs, PSN);
 * well-formed requests with random keys and addresses, to QPNs an adapter
 * hands out (not the one the test's traffic uses); more connections waiting for their HELLO than the adapter
 * keeps. Each connection is closed once its bytes are sent, so the adapter
 * never waits on a payload that will not come.
 *
 * With "stall" instead, it opens a connection every STALL_EVERY_MS for
 * STALL_MS, each with a HELLO and the first bytes of a well-formed frame,
 * and holds them all open: an adapter that waits inside a frame for the
 * rest of it, rather than for the frame to arrive, stands still meanwhile.
 *
 * With "hello", it opens HOLD_HELLOS connections that say a good HELLO,
 * naming SRC_ADDR as any process of that host may, and holds them for
 * HELLO_MS: the adapter must not take them for the links of the adapter
 * at SRC_ADDR and send its requests there.
 *
 * With "cm", PORT is a CM agent's (cm_tcp.c): random bytes of every length
 * around a CM message's, some held open for a while, all of them closed.
 *
 *   fabric_fuzz ADDR PORT SRC_ADDR [SEED|stall|hello|cm]
 *
 * SRC_ADDR is this side's own address (the one a HELLO may name). Exit 0
 * once everything was sent: the test then checks the adapter still works.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric.h"
#include "tcp.h"

#define ROUNDS		200
#define HOLD_OPEN	80	/* above the adapter's 64 before HELLO */
#define STALL_MS	3000
#define STALL_EVERY_MS	250
#define HOLD_HELLOS	4
#define HELLO_MS	2000

static struct sockaddr_in target;
static const char *src_addr;
static unsigned int sent_conns;

/* A connection to the adapter; -1 if it is gone (only when may_end). */
static int dial_or_end(bool may_end)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0) {
		perror("socket");
		exit(1);
	}
	if (connect(fd, (struct sockaddr *)&target, sizeof(target))) {
		if (may_end && errno == ECONNREFUSED) {
			close(fd);
			return -1;
		}
		fprintf(stderr, "connect: %s\n", strerror(errno));
		exit(1);
	}
	sent_conns++;
	return fd;
}

static int dial(void)
{
	return dial_or_end(false);
}

/* The peer may have dropped us already: EPIPE/ECONNRESET are results. */
static void put(int fd, const void *buf, size_t len)
{
	(void)!send(fd, buf, len, MSG_NOSIGNAL);
}

static void random_bytes(uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)random();
}

static void hello(int fd, const char *name, uint8_t version)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_HELLO,
			     .opcode = version };

	h.len = (uint32_t)strlen(name) + 1;
	put(fd, &h, sizeof(h));
	put(fd, name, h.len);
}

static void good_hello(int fd)
{
	char name[64];

	snprintf(name, sizeof(name), "tcp:%s:%u", src_addr,
		 ntohs(target.sin_port));
	hello(fd, name, FAB_VERSION);
}

/* A request that passes the header checks: a WRITE of len bytes. */
static struct fab_hdr good_req(uint32_t len)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_REQ };

	h.opcode = (uint8_t)(random() % 12);
	h.src_qpn = (uint32_t)random() & 0xffffff;
	/* QPNs an adapter hands out, but not the first (0x100): that one
	 * carries the test's traffic, and a request that guessed its PSN
	 * may fail it as it would on a real fabric. */
	h.dst_qpn = 0x101 + (uint32_t)(random() % 63);
	h.psn = (uint32_t)random() & 0xffffff;
	h.rkey = (uint32_t)random();
	h.remote_addr = (uint64_t)random() << 32 | (uint64_t)random();
	h.read_len = (uint32_t)random() % 65536;
	h.len = len;
	return h;
}

static void send_frame(int fd, const struct fab_hdr *h, size_t payload)
{
	static uint8_t data[8192];

	random_bytes(data, payload < sizeof(data) ? payload : sizeof(data));
	put(fd, h, sizeof(*h));
	if (payload)
		put(fd, data, payload < sizeof(data) ? payload : sizeof(data));
}

static void mutate(struct fab_hdr *h)
{
	uint8_t *b = (uint8_t *)h;

	switch (random() % 8) {
	case 0:
		h->magic ^= 1u << (random() % 32);
		break;
	case 1:
		h->type = (uint8_t)random();
		break;
	case 2:
		h->len = (uint32_t)random() | 0x80000000u;
		break;
	case 3:
		h->dst_qpn = (uint32_t)random() | 0x1000000u;
		h->src_qpn = (uint32_t)random() | 0x1000000u;
		break;
	case 4:
		h->psn = (uint32_t)random() | 0x1000000u;
		break;
	case 5:
		h->type = FAB_ACK;
		h->len = 1 + (uint32_t)(random() % 100);
		break;
	case 6:
		h->type = FAB_UD_SEND;
		h->len = 4097 + (uint32_t)(random() % 100000);
		break;
	default:
		b[random() % sizeof(*h)] = (uint8_t)random();
		break;
	}
}

static void stall(void)
{
	int fds[STALL_MS / STALL_EVERY_MS];
	struct fab_hdr h;
	unsigned int i, n;

	/* The adapter's program may finish meanwhile: that ends it. */
	for (i = 0; i < STALL_MS / STALL_EVERY_MS; i++) {
		fds[i] = dial_or_end(true);
		if (fds[i] < 0)
			break;
		good_hello(fds[i]);
		h = good_req(4096);
		send_frame(fds[i], &h, 100);	/* 3996 bytes never come */
		usleep(STALL_EVERY_MS * 1000);
	}
	n = i;
	for (i = 0; i < n; i++)
		close(fds[i]);
	printf("fabric_fuzz: held %u frames open\n", n);
}

static void hellos(void)
{
	int fds[HOLD_HELLOS];
	unsigned int i;

	for (i = 0; i < HOLD_HELLOS; i++) {
		fds[i] = dial();
		good_hello(fds[i]);
	}
	usleep(HELLO_MS * 1000);
	for (i = 0; i < HOLD_HELLOS; i++)
		close(fds[i]);
	printf("fabric_fuzz: held %u HELLOs\n", i);
}

static void cm(void)
{
	static uint8_t junk[4096];
	int held[16];
	unsigned int i, n = 0;
	int fd;

	for (i = 0; i < ROUNDS; i++) {
		size_t len = 1 + (size_t)random() % sizeof(junk);

		fd = dial();
		random_bytes(junk, len);
		put(fd, junk, len);
		if (n < 16 && i % 8 == 0)
			held[n++] = fd;		/* half a message, held */
		else
			close(fd);
	}
	usleep(500000);
	for (i = 0; i < n; i++)
		close(held[i]);
	printf("fabric_fuzz: %u connections to a CM agent\n", sent_conns);
}

int main(int argc, char **argv)
{
	int hold[HOLD_OPEN];
	uint8_t junk[1024];
	struct fab_hdr h;
	char name[256];
	unsigned int i, k;
	int fd;

	if (argc < 4) {
		fprintf(stderr, "usage: %s ADDR PORT SRC_ADDR [SEED]\n",
			argv[0]);
		return 2;
	}
	target.sin_family = AF_INET;
	target.sin_port = htons((uint16_t)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &target.sin_addr) != 1) {
		fprintf(stderr, "%s: not an IPv4 address\n", argv[1]);
		return 2;
	}
	src_addr = argv[3];
	if (argc > 4 && !strcmp(argv[4], "cm")) {
		srandom(14);
		cm();
		return 0;
	}
	if (argc > 4 && !strcmp(argv[4], "hello")) {
		hellos();
		return 0;
	}
	if (argc > 4 && !strcmp(argv[4], "stall")) {
		srandom(14);
		stall();
		return 0;
	}
	srandom(argc > 4 ? (unsigned int)atoi(argv[4]) : 14);

	/* Random bytes: no HELLO, no magic. */
	for (i = 0; i < ROUNDS; i++) {
		size_t len = 1 + (size_t)random() % sizeof(junk);

		fd = dial();
		random_bytes(junk, len);
		put(fd, junk, len);
		close(fd);
	}

	/* HELLOs that must be refused. */
	fd = dial();
	good_hello(fd);
	close(fd);
	fd = dial();
	snprintf(name, sizeof(name), "tcp:%s:%u", src_addr, 4791);
	hello(fd, name, FAB_VERSION + 1);
	close(fd);
	fd = dial();
	hello(fd, "tcp:203.0.113.9:4791", FAB_VERSION);	/* not us */
	close(fd);
	fd = dial();
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	hello(fd, name, FAB_VERSION);
	close(fd);
	fd = dial();
	h = good_req(16);		/* a request before any HELLO */
	send_frame(fd, &h, 16);
	close(fd);

	/* After a good HELLO: mutated headers, then well-formed requests
	 * with keys nobody granted. */
	for (i = 0; i < ROUNDS; i++) {
		fd = dial();
		good_hello(fd);
		for (k = 0; k < 4; k++) {
			h = good_req((uint32_t)(random() % 2048));
			send_frame(fd, &h, h.len);
		}
		h = good_req((uint32_t)(random() % 2048));
		mutate(&h);
		send_frame(fd, &h, random() % 64);
		close(fd);
	}

	/* More connections waiting for their HELLO than an adapter keeps. */
	for (i = 0; i < HOLD_OPEN; i++)
		hold[i] = dial();
	for (i = 0; i < HOLD_OPEN; i++)
		close(hold[i]);

	printf("fabric_fuzz: %u connections sent\n", sent_conns);
	return 0;
}
