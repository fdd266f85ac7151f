// SPDX-License-Identifier: BSD-2-Clause
/*
 * fabric_stream bw SIZE COUNT | lat SIZE ITERS
 *
 * The raw bandwidth and latency of the sim's fabric transport, with no
 * provider, no rings and no device engine: two processes each open a port
 * with sim/fabric/fabric.c itself (a Unix stream socket found through the GID
 * registry of a run directory, struct fab_hdr framing, sendmsg out and
 * header-then-payload reads in) and this program stands in for the
 * device's receive path (the port's rx callback).
 *   bw  - COUNT FAB_REQ packets of SIZE bytes one way. Like an RC
 *         requester the sender keeps at most WINDOW packets unacknowledged
 *         (perftest's default send queue depth) and the receiver sends one
 *         coalesced FAB_ACK per poll round, as the engine does.
 *   lat - ITERS ping-pongs of SIZE bytes; one-way latency = half the
 *         round trip, median and 99th percentile.
 * One JSON line, like unix_stream.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "fabric.h"

#define WINDOW		128
#define DRAIN_MS	10000

/* The adapter the port belongs to, as the fabric sees it. */
static struct {
	unsigned int index;
	pthread_mutex_t lock;
	union ibv_gid gid[SIM_GID_TABLE_LEN];
	unsigned int gid_count;
} dev = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct fab_port *port;
static uint8_t *buf;
static size_t size;
static bool lat;
static bool is_sender;

static uint64_t received;	/* receiver: REQ packets taken */
static struct fab_link *peer;	/* receiver: where they came from */
static uint64_t acked;		/* sender: highest ACK */
static bool echoed;		/* sender: the ping came back */

static void send_pkt(struct fab_link *to, enum fab_type type, uint32_t psn,
		     size_t len)
{
	struct fab_hdr h = {
		.magic = FAB_MAGIC, .type = type, .psn = psn,
		.len = (uint32_t)len,
	};
	struct iovec v = { .iov_base = buf, .iov_len = len };

	if (!fabric_send(port, to, &h, &v, len ? 1 : 0)) {
		fprintf(stderr, "fabric_stream: link lost\n");
		exit(1);
	}
}

static void peer_rx(void *d, struct fab_link *from,
		    const struct fab_hdr *hdr, struct fab_rx *rx)
{
	struct iovec v = { .iov_base = buf, .iov_len = size };

	switch (hdr->type) {
	case FAB_REQ:		/* receiver's data, or the sender's echo */
		if (!fab_rx_read(rx, &v, 1))
			return;
		peer = from;
		received++;
		if (lat && is_sender)
			echoed = true;
		else if (lat)
			send_pkt(from, FAB_REQ, hdr->psn, size);
		break;
	case FAB_ACK:
		acked = hdr->psn;
		break;
	default:
		break;
	}
}

static void port_open(unsigned int index)
{
	dev.index = index;
	dev.gid_count = 1;
	dev.gid[0].raw[0] = 0xfe;
	dev.gid[0].raw[1] = 0x80;
	dev.gid[0].raw[15] = (uint8_t)(index + 1);
	port = fabric_open(&(struct fab_adapter){
		.index = dev.index, .gid = dev.gid, .gid_count = &dev.gid_count,
		.lock = &dev.lock, .rx = peer_rx, .owner = &dev });
	if (!port) {
		fprintf(stderr, "fabric_stream: fabric_open failed\n");
		exit(1);
	}
}

/* Child: adapter 0, receives (bw) or echoes (lat). */
static void receiver(int ready_fd, uint64_t count)
{
	uint64_t ack_sent = 0;
	double t0;
	char c = 1;

	port_open(0);
	if (write(ready_fd, &c, 1) != 1)
		_exit(1);
	while (received < count) {
		fabric_poll(port, 1000);
		if (!lat && peer && received > ack_sent) {
			send_pkt(peer, FAB_ACK, (uint32_t)received, 0);
			ack_sent = received;
		}
	}
	/* Let the last ACK or echo drain; the sender's exit ends the link. */
	t0 = now_s();
	while (fabric_link_alive(peer) && now_s() - t0 < DRAIN_MS / 1e3)
		fabric_poll(port, 100);
	fabric_close(port);
	_exit(0);
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/pvrdma-bench-fabric-XXXXXX", c, cmd[128];
	uint8_t peer_gid[16] = { 0xfe, 0x80, [15] = 1 };
	struct fab_link *link;
	uint64_t count, sent, i;
	double t0, t, *rtt;
	int pfd[2], status;
	pid_t pid;

	if (argc != 4 || (strcmp(argv[1], "bw") && strcmp(argv[1], "lat"))) {
		fprintf(stderr, "usage: fabric_stream bw|lat SIZE COUNT\n");
		return 2;
	}
	lat = !strcmp(argv[1], "lat");
	size = strtoull(argv[2], NULL, 0);
	count = strtoull(argv[3], NULL, 0);
	buf = calloc(1, size ? size : 1);
	rtt = calloc(count ? count : 1, sizeof(*rtt));
	if (!size || size > UINT32_MAX || !count || !buf || !rtt) {
		fprintf(stderr, "fabric_stream: bad SIZE or COUNT\n");
		return 2;
	}
	if (!mkdtemp(tmpl) || pipe(pfd)) {
		perror("fabric_stream: rundir");
		return 1;
	}
	snprintf(sim_global.rundir, sizeof(sim_global.rundir), "%s", tmpl);

	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(pfd[0]);
		receiver(pfd[1], count);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		fprintf(stderr, "fabric_stream: receiver did not start\n");
		return 1;
	}
	is_sender = true;
	port_open(1);
	link = fabric_resolve(port, peer_gid, 0);
	if (!link) {
		fprintf(stderr, "fabric_stream: cannot reach the receiver\n");
		return 1;
	}

	t0 = now_s();
	for (sent = 0, i = 0; i < count; i++) {
		if (lat) {
			t = now_s();
			echoed = false;
			send_pkt(link, FAB_REQ, (uint32_t)i, size);
			while (!echoed && fabric_link_alive(link))
				fabric_poll(port, 1000);
			rtt[i] = now_s() - t;
			continue;
		}
		while (sent - acked >= WINDOW && fabric_link_alive(link))
			fabric_poll(port, 1000);
		send_pkt(link, FAB_REQ, (uint32_t)sent, size);
		sent++;
		if (!(sent % 16))
			fabric_poll(port, 0);	/* ACKs, out-queue */
	}
	while (!lat && acked < count && fabric_link_alive(link))
		fabric_poll(port, 1000);
	t = now_s() - t0;
	if (!fabric_link_alive(link)) {
		fprintf(stderr, "fabric_stream: link died\n");
		return 1;
	}
	fabric_close(port);
	/* The receiver is done; it would only wait for this end to close. */
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	if (system(cmd))
		fprintf(stderr, "fabric_stream: cannot remove %s\n", tmpl);
	if (!lat) {
		printf("{\"mode\": \"bw\", \"size\": %zu, \"count\": %llu, "
		       "\"GBps\": %.4f, \"Mpps\": %.4f}\n", size,
		       (unsigned long long)count,
		       size * (double)count / t / 1e9, count / t / 1e6);
		return 0;
	}
	qsort(rtt, count, sizeof(*rtt), cmp_double);
	printf("{\"mode\": \"lat\", \"size\": %zu, \"count\": %llu, "
	       "\"typical_us\": %.3f, \"p99_us\": %.3f}\n", size,
	       (unsigned long long)count, rtt[count / 2] / 2 * 1e6,
	       rtt[count * 99 / 100] / 2 * 1e6);
	return 0;
}
