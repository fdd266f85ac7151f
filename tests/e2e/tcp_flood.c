// SPDX-License-Identifier: BSD-2-Clause
/*
 * A peer that floods a TCP port with connections that never finish
 * their handshake: COUNT connections from SRC to DST:PORT, each silent
 * (or, with "half", having sent the first bytes of a message and no
 * more), held for SECONDS. One the other side closes is opened again at
 * once, so the pressure stays. With "hello", each says a good HELLO of
 * the fabric (naming SRC) instead, as a port on another host does. Not
 * run under the sim: a plain program.
 *
 *   tcp_flood SRC DST PORT COUNT SECONDS [half|hello]
 *
 * Prints how many connections were made and how many the other side
 * closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "fabric.h"
#include "tcp.h"

#define MAX_CONNS	1024

static struct sockaddr_in src, dst;
static bool half, hello;
static char hello_name[FAB_TCP_NAME_MAX];

static void say_hello(int fd)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_HELLO,
			     .opcode = FAB_VERSION };
	uint8_t b[sizeof(h) + FAB_TCP_NAME_MAX];

	h.len = (uint32_t)strlen(hello_name) + 1;
	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), hello_name, h.len);
	(void)!write(fd, b, sizeof(h) + h.len);
}

static int open_one(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (s < 0)
		return -1;
	if (bind(s, (struct sockaddr *)&src, sizeof(src)) ||
	    (connect(s, (struct sockaddr *)&dst, sizeof(dst)) &&
	     errno != EINPROGRESS)) {
		close(s);
		return -1;
	}
	return s;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct pollfd p[MAX_CONNS];
	static bool said[MAX_CONNS];
	unsigned long made = 0, closed = 0;
	unsigned int count, i;
	double end;
	char buf[256];

	if (argc < 6) {
		fprintf(stderr, "usage: tcp_flood SRC DST PORT COUNT "
			"SECONDS [half|hello]\n");
		return 2;
	}
	src.sin_family = dst.sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1)
		return 2;
	dst.sin_port = htons((uint16_t)atoi(argv[3]));
	count = (unsigned int)atoi(argv[4]);
	if (count > MAX_CONNS)
		count = MAX_CONNS;
	end = now_s() + atof(argv[5]);
	half = argc > 6 && !strcmp(argv[6], "half");
	hello = argc > 6 && !strcmp(argv[6], "hello");
	snprintf(hello_name, sizeof(hello_name), "tcp:%s:%s", argv[1],
		 argv[3]);
	for (i = 0; i < count; i++) {
		p[i].fd = open_one();
		p[i].events = POLLIN | POLLOUT;
		made += p[i].fd >= 0;
	}
	while (now_s() < end) {
		if (poll(p, count, 100) < 0 && errno != EINTR)
			break;
		for (i = 0; i < count; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if ((p[i].revents & POLLOUT) && !said[i]) {
				/* connected: half a header, or nothing */
				if (half)
					(void)!write(p[i].fd, "\x11\x22", 2);
				else if (hello)
					say_hello(p[i].fd);
				said[i] = true;
				p[i].events = POLLIN;
			}
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n > 0 || (n < 0 && errno == EAGAIN))
				continue;
			if (said[i])
				closed++;
			else
				usleep(1000);	/* refused: not at once */
			close(p[i].fd);
			p[i].fd = open_one();
			p[i].events = POLLIN | POLLOUT;
			said[i] = false;
			made += p[i].fd >= 0;
		}
	}
	printf("tcp_flood: %lu connections made, %lu closed by the peer\n",
	       made, closed);
	return 0;
}
