// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fabric between processes: two adapters in two processes (fork), a
 * Unix stream socket between them, found through the GID registry.
 *
 *   - a stream of packets of mixed sizes, sent as fast as the socket takes
 *     them, arrives complete, in order and intact (partial writes, the
 *     out-queue, headers read ahead with payloads or arriving in part),
 *     and the receiver answers over the same link (one per pair);
 *   - packets sent in place (fabric_send_in_place) to a peer that does
 *     not read cost the out-queue their headers, not their payloads, and
 *     arrive intact once it reads; one whose memory is gone before any of
 *     it left is dropped whole, one whose memory is gone after a part of
 *     it left ends in zeros, and the link goes on; copied on demand
 *     (fabric_copy_in_place), they arrive as they were when the memory
 *     changes or goes afterwards;
 *   - a GID a live process published is not taken by another adapter;
 *   - a peer killed with SIGKILL: its link dies, its stale registry entry
 *     answers "unreachable" at once, and a later adapter owning the same
 *     GID takes the entry over and is reached.
 *
 * This file stands in for the engine: its engine_rx() checks packets.
 */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fabric.h"

#define NPKT		3000u
#define MAX_PAYLOAD	(256u * 1024)

/* The adapter the port belongs to, as the fabric sees it. */
static struct {
	unsigned int index;
	pthread_mutex_t lock;
	union ibv_gid gid[SIM_GID_TABLE_LEN];
	unsigned int gid_count;
} dev;
static struct fab_port *port;
/* A port lives as long as its process, as the engine's does (fabric_close
 * withdraws it from the fabric but frees nothing): keep every one the tests
 * open reachable. */
static struct fab_port *ports_opened[8];
static unsigned int nports_opened;
static uint8_t rxbuf[MAX_PAYLOAD];
static uint8_t txbuf[MAX_PAYLOAD + 256];
static uint32_t rx_count;
static bool rx_bad;
static struct fab_link *rx_from;

/* Sizes cover empty, odd, header-sized and socket-buffer-sized payloads. */
static uint32_t pkt_len(uint32_t i)
{
	static const uint32_t sizes[] = { 0, 1, 7, 104, 4096, 65536, 65537,
					  MAX_PAYLOAD, 3000, 200000 };

	return sizes[(i * 7) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static uint8_t pattern(uint32_t i, uint32_t k)
{
	return (uint8_t)(i * 31 + k * 7 + (k >> 8));
}

static void peer_rx(void *d, struct fab_link *from,
		    const struct fab_hdr *h, struct fab_rx *rx)
{
	struct iovec v[2];
	uint32_t k, half;

	(void)d;
	rx_from = from;
	if (h->type != FAB_REQ)
		return;
	if (h->psn != rx_count || h->len != pkt_len(rx_count)) {
		fprintf(stderr, "peer: packet %u len %u, expected %u len %u\n",
			h->psn, h->len, rx_count, pkt_len(rx_count));
		rx_bad = true;
		return;
	}
	/* Two reads, the second one ending the payload. */
	half = h->len / 3;
	v[0].iov_base = rxbuf;
	v[0].iov_len = half;
	v[1].iov_base = rxbuf + half;
	v[1].iov_len = h->len - half;
	if (!fab_rx_read(rx, &v[0], 1) || !fab_rx_read(rx, &v[1], 1)) {
		rx_bad = true;
		return;
	}
	for (k = 0; k < h->len; k++)
		if (rxbuf[k] != pattern(rx_count, k)) {
			fprintf(stderr, "peer: packet %u byte %u differs\n",
				rx_count, k);
			rx_bad = true;
			return;
		}
	rx_count++;
}

static void port_open_rx(uint8_t id,
			 void (*rx)(void *, struct fab_link *,
				    const struct fab_hdr *, struct fab_rx *))
{
	memset(&dev, 0, sizeof(dev));
	pthread_mutex_init(&dev.lock, NULL);
	dev.index = 0;
	dev.gid_count = 1;
	dev.gid[0].raw[0] = 0xfe;
	dev.gid[0].raw[1] = 0x80;
	dev.gid[0].raw[15] = id;
	port = fabric_open(&(struct fab_adapter){
		.index = dev.index, .gid = dev.gid, .gid_count = &dev.gid_count,
		.lock = &dev.lock, .rx = rx, .owner = &dev });
	assert_non_null(port);
	assert_true(nports_opened < 8);
	ports_opened[nports_opened++] = port;
}

static void port_open(uint8_t id)
{
	port_open_rx(id, peer_rx);
}

static void gid_of(uint8_t id, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[15] = id;
}

/* Child: adapter `id`; receives n packets (n = 0: just lives), then
 * answers one ACK so the parent knows. Exit status 0 = all good. */
static pid_t spawn_peer(uint8_t id, uint32_t n)
{
	int p[2];
	pid_t pid;
	char c = 1;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid) {
		close(p[1]);
		assert_int_equal(read(p[0], &c, 1), 1);
		close(p[0]);
		return pid;
	}
	close(p[0]);
	port_open(id);
	if (write(p[1], &c, 1) != 1)
		_exit(2);
	while (n ? rx_count < n && !rx_bad : true)
		fabric_poll(port, 1000);
	if (n && !rx_bad && rx_from) {
		uint8_t parent[16] = { 0xfe, 0x80, [15] = 1 };

		/* One link per pair of ports: the one the parent opened. */
		pthread_mutex_lock(&dev.lock);
		if (fabric_resolve(port, parent, 0) != rx_from) {
			fprintf(stderr, "peer: a second link to the parent\n");
			rx_bad = true;
		}
		pthread_mutex_unlock(&dev.lock);
	}
	if (!rx_bad && rx_from) {
		struct fab_hdr a = { .magic = FAB_MAGIC, .type = FAB_ACK };
		int i;

		pthread_mutex_lock(&dev.lock);
		fabric_send(port, rx_from, &a, NULL, 0);
		pthread_mutex_unlock(&dev.lock);
		/* What the socket holds is read even after we are gone. */
		for (i = 0; i < 50 && fabric_link_busy(rx_from); i++)
			fabric_poll(port, 100);
	}
	if (rx_bad)
		fprintf(stderr, "peer: bad packet after %u good ones\n",
			rx_count);
	fabric_close(port);
	_exit(rx_bad ? 1 : 0);
}

static int setup(void **unused)
{
	snprintf(sim_global.rundir, sizeof(sim_global.rundir),
		 "/tmp/pvrdma-test-fabric-XXXXXX");
	assert_non_null(mkdtemp(sim_global.rundir));
	return 0;
}

static int teardown(void **unused)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", sim_global.rundir);
	return system(cmd) ? -1 : 0;
}

static struct fab_link *resolve(const uint8_t gid[16])
{
	struct fab_link *l;

	pthread_mutex_lock(&dev.lock);
	l = fabric_resolve(port, gid, 0);
	pthread_mutex_unlock(&dev.lock);
	return l;
}

static void test_stream_arrives_intact(void **unused)
{
	uint8_t gid[16];
	struct fab_link *link;
	struct iovec v[3];
	uint32_t i, k, len, busy_waits = 0;
	int status;
	pid_t pid;

	pid = spawn_peer(2, NPKT);
	port_open(1);
	gid_of(2, gid);
	link = resolve(gid);
	assert_non_null(link);

	for (i = 0; i < NPKT; i++) {
		struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_REQ,
				     .psn = i };

		len = pkt_len(i);
		h.len = len;
		for (k = 0; k < len; k++)
			txbuf[k] = pattern(i, k);
		/* Gathered from three pieces, as from SGEs. */
		v[0] = (struct iovec){ txbuf, len / 4 };
		v[1] = (struct iovec){ txbuf + len / 4, len / 2 - len / 4 };
		v[2] = (struct iovec){ txbuf + len / 2, len - len / 2 };
		/* Every other packet waits for a full link the way the
		 * requester does; the rest go to the out-queue. */
		while ((i & 1) && fabric_link_busy(link)) {
			fabric_poll(port, 10);
			busy_waits++;
		}
		pthread_mutex_lock(&dev.lock);
		if (!fabric_send(port, link, &h, v, 3))
			fail_msg("link lost at packet %u", i);
		pthread_mutex_unlock(&dev.lock);
	}
	/* Until the receiver's ACK: everything was taken and checked. */
	rx_from = NULL;
	while (!rx_from && fabric_link_alive(link))
		fabric_poll(port, 1000);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(rx_from);
	(void)busy_waits;
	fabric_close(port);
}

static void test_killed_peer_and_stale_registry(void **unused)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_ACK };
	uint8_t gid[16];
	struct fab_link *link;
	int status, i;
	pid_t pid;

	pid = spawn_peer(3, 0);
	port_open(1);
	gid_of(3, gid);
	link = resolve(gid);
	assert_non_null(link);
	assert_true(fabric_link_alive(link));

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* The link sees the peer go (EOF); a send may see it first. */
	for (i = 0; i < 100 && fabric_link_alive(link); i++) {
		pthread_mutex_lock(&dev.lock);
		fabric_send(port, link, &h, NULL, 0);
		pthread_mutex_unlock(&dev.lock);
		fabric_poll(port, 100);
	}
	assert_false(fabric_link_alive(link));
	/* The entry is still there, naming a socket nobody listens on. */
	assert_null(resolve(gid));

	/* A new adapter with that GID takes the entry over. */
	pid = spawn_peer(3, 0);
	link = resolve(gid);
	assert_non_null(link);
	assert_true(fabric_link_alive(link));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fabric_close(port);
}

#define HELD_LEN	(4u << 20)
#define HELD_PKTS	16u

/* Packets the held peer took intact, by psn; the one whose payload may
 * end in zeros from some byte on (NO_PSN: none). */
#define NO_PSN		0xffu
static uint32_t held_seen;
static uint8_t *held_buf;
static uint8_t held_zero_tail = NO_PSN;

static void held_rx(void *d, struct fab_link *from,
		    const struct fab_hdr *h, struct fab_rx *rx)
{
	struct iovec v = { held_buf, h->len };
	uint32_t k = 0;

	(void)d;
	(void)from;
	if (h->type != FAB_REQ || h->len != HELD_LEN || h->psn >= 32 ||
	    !fab_rx_read(rx, &v, 1)) {
		rx_bad = true;
		return;
	}
	while (k < h->len && held_buf[k] == pattern(h->psn, k))
		k++;
	if (h->psn == held_zero_tail && k < h->len) {
		while (k < h->len && !held_buf[k])
			k++;
	}
	if (k < h->len) {
		fprintf(stderr, "peer: packet %u byte %u differs\n", h->psn,
			k);
		rx_bad = true;
		return;
	}
	held_seen |= 1u << h->psn;
}

/* Child: adapter `id` that reads nothing until the parent writes to go
 * (the byte written: the psn whose payload may end in zeros), then takes
 * packets until `want` (a psn mask) arrived; exits 0 if they all did
 * intact, and nothing else. */
static pid_t spawn_held_peer(uint8_t id, uint32_t want, int *go)
{
	int ready[2], start[2], i;
	pid_t pid;
	char c = 1;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(start), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid) {
		close(ready[1]);
		close(start[0]);
		assert_int_equal(read(ready[0], &c, 1), 1);
		close(ready[0]);
		*go = start[1];
		return pid;
	}
	close(ready[0]);
	close(start[1]);
	held_buf = malloc(HELD_LEN);
	if (!held_buf)
		_exit(2);
	port_open_rx(id, held_rx);
	if (write(ready[1], &c, 1) != 1 ||
	    read(start[0], &held_zero_tail, 1) != 1)
		_exit(2);
	for (i = 0; i < 300 && held_seen != want && !rx_bad; i++)
		fabric_poll(port, 100);
	_exit(held_seen == want && !rx_bad ? 0 : 1);
}

/* A held peer (adapter 2, wanting the psn mask want) and the link to it
 * from a port of adapter 1 opened here. */
static struct fab_link *held_pair(uint32_t want, int *go, pid_t *pid)
{
	struct fab_link *link;
	uint8_t gid[16];

	*pid = spawn_held_peer(2, want, go);
	port_open(1);
	gid_of(2, gid);
	link = resolve(gid);
	assert_non_null(link);
	return link;
}

static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static uint8_t *patterned_buffer(uint32_t psn)
{
	uint8_t *b = mmap(NULL, HELD_LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t k;

	assert_true(b != MAP_FAILED);
	for (k = 0; k < HELD_LEN; k++)
		b[k] = pattern(psn, k);
	return b;
}

static void send_in_place(struct fab_link *link, uint32_t psn, uint8_t *b)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_REQ, .psn = psn,
			     .len = HELD_LEN };
	struct iovec v[2] = { { b, HELD_LEN / 3 },
			      { b + HELD_LEN / 3, HELD_LEN - HELD_LEN / 3 } };

	pthread_mutex_lock(&dev.lock);
	if (!fabric_send_in_place(port, link, &h, v, 2))
		fail_msg("packet %u not sent", psn);
	pthread_mutex_unlock(&dev.lock);
}

/* Lets the held peer read (zero_tail: see spawn_held_peer) and waits
 * until the link has sent all it holds and the peer found what it wanted;
 * the link is alive and well after it. */
static void held_peer_release(struct fab_link *link, int go, pid_t pid,
			      uint8_t zero_tail)
{
	int status, i;

	assert_int_equal(write(go, &zero_tail, 1), 1);
	for (i = 0; i < 300 && fabric_link_busy(link); i++)
		fabric_poll(port, 100);
	assert_false(fabric_link_busy(link));
	assert_true(fabric_link_alive(link));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* 64 MiB of packets to a peer that reads none: the socket takes a few
 * MiB, the rest waits in the out-queue as headers. */
static void test_in_place_packets_wait_uncopied(void **unused)
{
	uint8_t *bufs[HELD_PKTS];
	struct fab_link *link;
	size_t heap_before;
	int go;
	uint32_t psn;
	pid_t pid;

	link = held_pair((1u << HELD_PKTS) - 1, &go, &pid);
	for (psn = 0; psn < HELD_PKTS; psn++)
		bufs[psn] = patterned_buffer(psn);

	heap_before = heap_bytes();
	for (psn = 0; psn < HELD_PKTS; psn++)
		send_in_place(link, psn, bufs[psn]);
	assert_true(fabric_link_busy(link));
	/* fabric_send() would hold tens of MiB of copies here. */
	assert_true(heap_bytes() - heap_before < 64u << 10);

	held_peer_release(link, go, pid, NO_PSN);
	for (psn = 0; psn < HELD_PKTS; psn++)
		munmap(bufs[psn], HELD_LEN);
	close(go);
	fabric_close(port);
}

/* Packets queued in place whose memory is unmapped: the one the socket
 * took a part of goes on with zeros, one it took nothing of is dropped,
 * and the packets around them arrive intact on the same link. */
static void test_in_place_packet_gone(void **unused)
{
	const uint32_t n = 6, gone = 4;
	const size_t frame = sizeof(struct fab_hdr) + HELD_LEN;
	uint8_t *bufs[6], cut;
	struct fab_link *link;
	int go;
	uint64_t sent;
	uint32_t psn;
	pid_t pid;

	link = held_pair(((1u << n) - 1) & ~(1u << gone), &go, &pid);
	for (psn = 0; psn < n; psn++)
		bufs[psn] = patterned_buffer(psn);
	sent = fabric_link_tx_bytes(link);	/* the link's HELLO */
	for (psn = 0; psn < n; psn++)
		send_in_place(link, psn, bufs[psn]);
	/* The socket holds a few MiB: packet 4 has not begun, and the
	 * packet it stopped in (if it stopped inside one) loses its memory
	 * too. */
	assert_true(fabric_link_busy(link));
	sent = fabric_link_tx_bytes(link) - sent;
	assert_true(sent / frame < gone);
	cut = sent % frame ? (uint8_t)(sent / frame) : NO_PSN;
	assert_int_equal(munmap(bufs[gone], HELD_LEN), 0);
	if (cut != NO_PSN)
		assert_int_equal(munmap(bufs[cut], HELD_LEN), 0);

	held_peer_release(link, go, pid, cut);
	for (psn = 0; psn < n; psn++)
		if (psn != gone && psn != cut)
			munmap(bufs[psn], HELD_LEN);
	close(go);
	fabric_close(port);
}

/* What a link still holds in place is copied by fabric_copy_in_place():
 * the memory may then change or go (a WR completed by a flush, an MR
 * deregistered) and the packets arrive as they were. */
static void test_in_place_copied_before_memory_goes(void **unused)
{
	const uint32_t n = 5;
	uint8_t *bufs[5];
	struct fab_link *link;
	uint32_t psn;
	pid_t pid;
	int go;

	link = held_pair((1u << n) - 1, &go, &pid);
	for (psn = 0; psn < n; psn++) {
		bufs[psn] = patterned_buffer(psn);
		send_in_place(link, psn, bufs[psn]);
	}
	assert_true(fabric_link_busy(link));
	pthread_mutex_lock(&dev.lock);
	fabric_copy_in_place(port);
	pthread_mutex_unlock(&dev.lock);
	for (psn = 0; psn < n; psn++) {
		memset(bufs[psn], 0x5a, HELD_LEN);
		assert_int_equal(munmap(bufs[psn], HELD_LEN), 0);
	}
	held_peer_release(link, go, pid, NO_PSN);
	close(go);
	fabric_close(port);
}

/* A GID a live process publishes stays its own: a second adapter with
 * the same GID (the same --mac in two processes) does not take it. */
static void test_live_registry_entry_kept(void **unused)
{
	char path[512], hex[33], target[512], want[64];
	uint8_t gid[16];
	ssize_t n;
	pid_t pid;
	int status, i;

	pid = spawn_peer(3, 0);
	gid_of(3, gid);
	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", gid[i]);
	snprintf(path, sizeof(path), "%s/gid/%s", sim_global.rundir, hex);
	snprintf(want, sizeof(want), "/fabric-%d-0.sock", (int)pid);
	port_open(3);
	n = readlink(path, target, sizeof(target) - 1);
	kill(pid, SIGKILL);	/* before any assert: it never exits */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(n > 0);
	target[n] = 0;
	assert_non_null(strstr(target, want));
	fabric_close(port);
}

/* A forked child that closes the port (its atexit does) leaves the
 * parent on the fabric: the registry entry and socket stay. */
static void test_forked_child_close_keeps_parent(void **unused)
{
	char path[512], hex[33];
	uint8_t gid[16];
	struct stat st;
	int status, i;
	pid_t pid;

	port_open(1);
	gid_of(1, gid);
	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", gid[i]);
	snprintf(path, sizeof(path), "%s/gid/%s", sim_global.rundir, hex);
	assert_int_equal(stat(path, &st), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		fabric_close(port);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	/* stat() follows the link: both the entry and the socket exist. */
	assert_int_equal(stat(path, &st), 0);

	fabric_close(port);
	assert_int_not_equal(lstat(path, &st), 0);
}

/* A process killed by a signal leaves its socket and segment files; the
 * next port opened in the run directory removes them, and only them. */
static void test_dead_process_files_pruned(void **unused)
{
	char dead_sock[300], dead_mem[300], live_sock[300], other[300];
	pid_t child = fork();
	struct stat st;
	int status;

	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, &status, 0), child);
	snprintf(dead_sock, sizeof(dead_sock), "%s/fabric-%d-0.sock",
		 sim_global.rundir, (int)child);
	snprintf(dead_mem, sizeof(dead_mem), "%s/fabric-%d-1.mem",
		 sim_global.rundir, (int)child);
	snprintf(live_sock, sizeof(live_sock), "%s/fabric-%d-0.sock",
		 sim_global.rundir, (int)getppid());
	snprintf(other, sizeof(other), "%s/fabric-%d-0.txt",
		 sim_global.rundir, (int)child);
	assert_int_equal(close(creat(dead_sock, 0600)), 0);
	assert_int_equal(close(creat(dead_mem, 0600)), 0);
	assert_int_equal(close(creat(live_sock, 0600)), 0);
	assert_int_equal(close(creat(other, 0600)), 0);

	port_open(1);
	assert_int_not_equal(stat(dead_sock, &st), 0);
	assert_int_not_equal(stat(dead_mem, &st), 0);
	assert_int_equal(stat(live_sock, &st), 0);
	assert_int_equal(stat(other, &st), 0);
	fabric_close(port);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stream_arrives_intact,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_in_place_packets_wait_uncopied, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_in_place_packet_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_in_place_copied_before_memory_goes, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_killed_peer_and_stale_registry, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_live_registry_entry_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_forked_child_close_keeps_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_dead_process_files_pruned, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
