// SPDX-License-Identifier: BSD-2-Clause
/*
 * unix_stream bw SIZE COUNT | lat SIZE ITERS
 *
 * A plain AF_UNIX stream between two processes, nothing else: the limit of
 * the sim's fabric, which uses the same kind of socket (and the same 4 MiB
 * buffers) between the processes of a simulated fabric. One JSON line:
 *   bw  - COUNT messages of SIZE bytes one way, one blocking send() each;
 *         the receiver takes what arrived, up to 256 KiB per recv();
 *   lat - ITERS ping-pongs of SIZE bytes; one-way latency = half the round
 *         trip, median ("typical", as perftest says) and 99th percentile.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define SOCK_BUF	(4 << 20)	/* as sim/fabric/fabric.c */
#define RX_CHUNK	(256 << 10)

static void send_all(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror("unix_stream: send");
			exit(1);
		}
		buf += n;
		len -= n;
	}
}

static void recv_all(int fd, uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = recv(fd, buf, len, MSG_WAITALL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "unix_stream: recv: %s\n",
				n ? strerror(errno) : "peer closed");
			exit(1);
		}
		buf += n;
		len -= n;
	}
}

int main(int argc, char **argv)
{
	int sv[2], sz = SOCK_BUF, status;
	unsigned long count, i;
	double t0, t, *rtt;
	uint8_t *buf, *rx, go = 1;
	uint64_t left;
	bool lat;
	size_t size;
	pid_t pid;

	if (argc != 4 || (strcmp(argv[1], "bw") && strcmp(argv[1], "lat"))) {
		fprintf(stderr, "usage: unix_stream bw|lat SIZE COUNT\n");
		return 2;
	}
	lat = !strcmp(argv[1], "lat");
	size = strtoull(argv[2], NULL, 0);
	count = strtoul(argv[3], NULL, 0);
	buf = calloc(1, size ? size : 1);
	rtt = calloc(count ? count : 1, sizeof(*rtt));
	rx = malloc(RX_CHUNK);
	left = (uint64_t)size * count;
	if (!size || !count || !buf || !rtt || !rx) {
		fprintf(stderr, "unix_stream: bad SIZE or COUNT\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(sv[0]);
		recv_all(sv[1], &go, 1);
		for (i = 0; i < count; i++) {
			if (lat)
				recv_all(sv[1], buf, size);
			send_all(sv[1], buf, size);
		}
		_exit(0);
	}
	close(sv[1]);
	t0 = now_s();
	send_all(sv[0], &go, 1);
	for (i = 0; lat && i < count; i++) {
		t = now_s();
		send_all(sv[0], buf, size);
		recv_all(sv[0], buf, size);
		rtt[i] = now_s() - t;
	}
	/* Bandwidth: the stream's capacity, whatever the sender's message
	 * size; take what has arrived, up to RX_CHUNK per recv(). */
	while (!lat && left) {
		ssize_t n = recv(sv[0], rx, RX_CHUNK, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror("unix_stream: recv");
			return 1;
		}
		left -= n;
	}
	t = now_s() - t0;
	waitpid(pid, &status, 0);
	if (!lat) {
		printf("{\"mode\": \"bw\", \"size\": %zu, \"count\": %lu, "
		       "\"GBps\": %.4f, \"Mpps\": %.4f}\n", size, count,
		       size * (double)count / t / 1e9, count / t / 1e6);
		return 0;
	}
	qsort(rtt, count, sizeof(*rtt), cmp_double);
	printf("{\"mode\": \"lat\", \"size\": %zu, \"count\": %lu, "
	       "\"typical_us\": %.3f, \"p99_us\": %.3f}\n", size, count,
	       rtt[count / 2] / 2 * 1e6, rtt[count * 99 / 100] / 2 * 1e6);
	return 0;
}
