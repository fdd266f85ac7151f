// SPDX-License-Identifier: BSD-2-Clause
/*
 * One-sided operations against a target that does not run: the promise of
 * RDMA (the target's CPU is not involved), which adapters on one host keep
 * by placing the data themselves. The client stops the server process with
 * SIGSTOP, then, while it is stopped:
 *   - RDMA WRITEs 256 KiB of a pattern into the server's buffer;
 *   - RDMA READs 256 KiB of another pattern out of it;
 *   - runs FETCH_AND_ADDs and a COMPARE_AND_SWAP on a counter there;
 * every WR must complete successfully with the right values. Then it
 * continues the server, which checks that its memory holds what the client
 * wrote and what the atomics left.
 *
 * Mode stopped-target-fallback, for the socket fabric (a target on another
 * host, or --no-single-copy): a stopped target answers nothing there, and
 * the WRITE must end in RETRY_EXC_ERR within the QP's retry budget; the
 * stopped-target mode fails on that path.
 *
 * Mode cq-overflow: the client's send CQ is small and never polled; RDMA
 * WRITEs past its size overflow it: the CQ reports IBV_EVENT_CQ_ERR and
 * the QP is in the error state, whichever path the WRITEs take.
 *
 * Mode post-list: one post list of WRITE, READ, WRITE, WRITE completes in
 * order with the right data, so does one of four READs; then a list of a
 * WRITE, a WRITE with a bad rkey and a WRITE: the first succeeds (its data
 * lands), the second ends in IBV_WC_REM_ACCESS_ERR, the third is flushed.
 *
 *   same_host --server|--client --port P
 *             --mode stopped-target[-fallback]|cq-overflow|post-list
 */
#include <poll.h>
#include "e2e_common.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XFER_LEN	(256u << 10)
#define WRITE_OFF	0u
#define READ_OFF	XFER_LEN
#define ATOMIC_OFF	(2 * XFER_LEN)
#define BUF_SIZE	(2 * XFER_LEN + 4096)
#define ADDS		16u
#define WRITE_SEED	7u
#define READ_SEED	11u

static pid_t stopped_peer;

/* A failing client must not leave the server stopped for good. */
static void continue_peer(void)
{
	if (stopped_peer)
		kill(stopped_peer, SIGCONT);
}

/* True when the kernel says the thread of stat file path is stopped. */
static bool task_stopped(const char *path)
{
	char buf[512], *p;
	FILE *f = fopen(path, "r");

	if (!f)
		return true;	/* gone */
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' && p[2] == 'T';
}

/* Waits until every thread of pid is stopped: the group stop reaches
 * them one by one, and a thread of the device still running could answer
 * what the test sends the stopped target. */
static void wait_stopped(pid_t pid)
{
	char dir[64], path[400];
	struct dirent *de;
	unsigned int i;
	bool all;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	for (i = 0; i < E2E_WAIT_SECONDS * 1000; i++) {
		d = opendir(dir);
		E2E_CHECK(d, "%s: %s", dir, strerror(errno));
		all = true;
		while ((de = readdir(d)) && all) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/stat", dir,
				 de->d_name);
			all = task_stopped(path);
		}
		closedir(d);
		if (all)
			return;
		usleep(1000);
	}
	E2E_CHECK(0, "the server never stopped");
}

static void post_one(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(qp, wr, &bad);

	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
}

static void complete(struct ibv_cq *cq, uint64_t wr_id,
		     enum ibv_wc_opcode opcode, const char *what)
{
	struct ibv_wc wc;

	e2e_poll_one(cq, &wc, what);
	E2E_CHECK(wc.status == IBV_WC_SUCCESS, "%s: status %s", what,
		  ibv_wc_status_str(wc.status));
	E2E_CHECK(wc.wr_id == wr_id && wc.opcode == opcode,
		  "%s: wr_id %llu opcode %d", what,
		  (unsigned long long)wc.wr_id, wc.opcode);
}

static void client(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		   uint8_t *buf, const struct e2e_peer *peer, pid_t pid,
		   bool fallback)
{
	struct ibv_sge sge = { .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	};
	uint64_t *result = (uint64_t *)(buf + ATOMIC_OFF);
	unsigned int i;
	struct ibv_wc wc;

	stopped_peer = pid;
	atexit(continue_peer);
	E2E_CHECK(!kill(pid, SIGSTOP), "kill: %s", strerror(errno));
	wait_stopped(pid);

	e2e_pattern(buf + WRITE_OFF, XFER_LEN, WRITE_SEED);
	sge.addr = (uintptr_t)buf + WRITE_OFF;
	sge.length = XFER_LEN;
	wr.wr_id = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = peer->addr + WRITE_OFF;
	wr.wr.rdma.rkey = peer->rkey;
	post_one(qp, &wr);
	if (fallback) {
		e2e_poll_one(cq, &wc, "RDMA WRITE to a stopped target");
		E2E_CHECK(wc.wr_id == 1 && wc.status == IBV_WC_RETRY_EXC_ERR,
			  "WRITE to a stopped target over the socket "
			  "fabric: wr_id %llu status %s, want RETRY_EXC_ERR",
			  (unsigned long long)wc.wr_id,
			  ibv_wc_status_str(wc.status));
		E2E_CHECK(!kill(pid, SIGCONT), "kill: %s", strerror(errno));
		stopped_peer = 0;
		printf("stopped target, socket fabric: RETRY_EXC_ERR\n");
		return;
	}
	complete(cq, 1, IBV_WC_RDMA_WRITE, "RDMA WRITE to a stopped target");

	memset(buf + READ_OFF, 0, XFER_LEN);
	sge.addr = (uintptr_t)buf + READ_OFF;
	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = peer->addr + READ_OFF;
	post_one(qp, &wr);
	complete(cq, 2, IBV_WC_RDMA_READ, "RDMA READ from a stopped target");
	E2E_CHECK(e2e_pattern_ok(buf + READ_OFF, XFER_LEN, READ_SEED),
		  "RDMA READ: wrong data");

	sge.addr = (uintptr_t)result;
	sge.length = 8;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = peer->addr + ATOMIC_OFF;
	wr.wr.atomic.rkey = peer->rkey;
	wr.wr.atomic.compare_add = 3;
	for (i = 0; i < ADDS; i++) {
		wr.wr_id = 10 + i;
		post_one(qp, &wr);
		complete(cq, 10 + i, IBV_WC_FETCH_ADD, "FETCH_AND_ADD");
		E2E_CHECK(*result == 100 + 3ull * i,
			  "FETCH_AND_ADD %u: original %llu, want %llu", i,
			  (unsigned long long)*result, 100 + 3ull * i);
	}
	wr.wr_id = 99;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 100 + 3ull * ADDS;
	wr.wr.atomic.swap = 4242;
	post_one(qp, &wr);
	complete(cq, 99, IBV_WC_COMP_SWAP, "COMPARE_AND_SWAP");
	E2E_CHECK(*result == 100 + 3ull * ADDS,
		  "COMPARE_AND_SWAP: original %llu",
		  (unsigned long long)*result);

	E2E_CHECK(!kill(pid, SIGCONT), "kill: %s", strerror(errno));
	stopped_peer = 0;
	printf("stopped target: WRITE, READ, %u FETCH_AND_ADD, "
	       "COMPARE_AND_SWAP done\n", ADDS);
}

/* Overflows the send CQ (of cqe entries) with signaled WRITEs. */
static void cq_overflow(struct ibv_context *ctx, struct ibv_qp *qp,
			struct ibv_cq *cq, struct ibv_mr *mr, uint8_t *buf,
			const struct e2e_peer *peer)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = peer->addr, .rkey = peer->rkey },
	};
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int i, n = cq->cqe + 2;

	for (i = 0; i < n; i++) {
		wr.wr_id = (uint64_t)i;
		post_one(qp, &wr);
	}
	E2E_CHECK(poll(&pfd, 1, E2E_WAIT_SECONDS * 1000) == 1,
		  "no async event after %d WRITEs into a CQ of %d", n,
		  cq->cqe);
	E2E_CHECK(!ibv_get_async_event(ctx, &ev), "ibv_get_async_event: %s",
		  strerror(errno));
	E2E_CHECK(ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq,
		  "async event %s, want CQ_ERR of the send CQ",
		  ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	E2E_CHECK(!ibv_query_qp(qp, &attr, IBV_QP_STATE, &init),
		  "ibv_query_qp: %s", strerror(errno));
	E2E_CHECK(attr.qp_state == IBV_QPS_ERR, "QP state %d after the "
		  "CQ overflowed, want ERR", attr.qp_state);
	printf("CQ of %d overflowed: CQ_ERR, QP in error\n", cq->cqe);
}

static void expect_wc(struct ibv_cq *cq, uint64_t wr_id,
		      enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc;

	e2e_poll_one(cq, &wc, what);
	E2E_CHECK(wc.wr_id == wr_id && wc.status == status,
		  "%s: wr_id %llu status %s, want %llu %s", what,
		  (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		  (unsigned long long)wr_id, ibv_wc_status_str(status));
}

/* Post lists: in order, and an error inside one. */
static void post_list(struct ibv_qp *qp, struct ibv_cq *cq,
		      struct ibv_mr *mr, uint8_t *buf,
		      const struct e2e_peer *peer)
{
	struct ibv_sge sge[4];
	struct ibv_send_wr wr[4], *bad;
	unsigned int i;
	int ret;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		/* 4 KiB pieces: WRITE 0, READ 1, WRITE 2, WRITE 3 */
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)buf + WRITE_OFF + i * 4096,
			.length = 4096, .lkey = mr->lkey,
		};
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .next = i < 3 ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
			.opcode = i == 1 ? IBV_WR_RDMA_READ :
					   IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = {
				.remote_addr = peer->addr +
					(i == 1 ? READ_OFF : WRITE_OFF) +
					i * 4096,
				.rkey = peer->rkey,
			},
		};
		if (i != 1)
			e2e_pattern(buf + WRITE_OFF + i * 4096, 4096, 20 + i);
		else
			memset(buf + WRITE_OFF + 4096, 0, 4096);
	}
	ret = ibv_post_send(qp, wr, &bad);
	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
	for (i = 0; i < 4; i++)
		expect_wc(cq, i, IBV_WC_SUCCESS, "post list");
	/* What the READ brought is 4 KiB of the server's READ pattern. */
	{
		uint8_t want[8192];

		e2e_pattern(want, sizeof(want), READ_SEED);
		E2E_CHECK(!memcmp(buf + WRITE_OFF + 4096, want + 4096, 4096),
			  "READ in a post list: wrong data");
	}

	/* READs one after the other (one copy on one host): each brings
	 * its own piece, in order. */
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = 20 + i;
		wr[i].opcode = IBV_WR_RDMA_READ;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
		sge[i].addr = (uintptr_t)buf + WRITE_OFF + i * 4096;
		wr[i].wr.rdma.remote_addr = peer->addr + READ_OFF +
					    (3 - i) * 4096;
		memset(buf + WRITE_OFF + i * 4096, 0, 4096);
	}
	ret = ibv_post_send(qp, wr, &bad);
	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
	for (i = 0; i < 4; i++)
		expect_wc(cq, 20 + i, IBV_WC_SUCCESS, "READs in a post list");
	{
		uint8_t want[4 * 4096];

		e2e_pattern(want, sizeof(want), READ_SEED);
		for (i = 0; i < 4; i++)
			E2E_CHECK(!memcmp(buf + WRITE_OFF + i * 4096,
					  want + (3 - i) * 4096, 4096),
				  "READ %u of a post list: wrong data", i);
	}

	/* WRITE, WRITE with a bad rkey, WRITE. */
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 10 + i;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
		wr[i].wr.rdma.remote_addr = peer->addr + XFER_LEN / 2 +
					    i * 4096;
		e2e_pattern(buf + WRITE_OFF + i * 4096, 4096, 30 + i);
	}
	wr[1].wr.rdma.rkey = peer->rkey + 1000;
	ret = ibv_post_send(qp, wr, &bad);
	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
	expect_wc(cq, 10, IBV_WC_SUCCESS, "WRITE before a bad one");
	expect_wc(cq, 11, IBV_WC_REM_ACCESS_ERR, "WRITE with a bad rkey");
	expect_wc(cq, 12, IBV_WC_WR_FLUSH_ERR, "WRITE after a bad one");
	printf("post lists: in order; an error inside one\n");
}

static void server_check_lists(const uint8_t *buf)
{
	E2E_CHECK(e2e_pattern_ok(buf + WRITE_OFF, 4096, 20) &&
		  e2e_pattern_ok(buf + WRITE_OFF + 2 * 4096, 4096, 22) &&
		  e2e_pattern_ok(buf + WRITE_OFF + 3 * 4096, 4096, 23),
		  "the WRITEs of the first post list did not land");
	E2E_CHECK(e2e_pattern_ok(buf + XFER_LEN / 2, 4096, 30),
		  "the WRITE before the bad one did not land");
	printf("target memory as the post lists left it\n");
}

static void server_check(const uint8_t *buf)
{
	E2E_CHECK(e2e_pattern_ok(buf + WRITE_OFF, XFER_LEN, WRITE_SEED),
		  "the client's RDMA WRITE did not land");
	E2E_CHECK(e2e_pattern_ok(buf + READ_OFF, XFER_LEN, READ_SEED),
		  "the READ source changed");
	E2E_CHECK(*(const uint64_t *)(buf + ATOMIC_OFF) == 4242,
		  "atomic counter %llu, want 4242",
		  (unsigned long long)*(const uint64_t *)(buf + ATOMIC_OFF));
	printf("target memory as the client left it\n");
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct e2e_dev d;
	struct e2e_peer me = { 0 }, peer;
	struct e2e_rc_opts opts = {
		/* ~17 ms a try, 2 retries: a target that answers nothing
		 * fails in well under a second. */
		.timeout = 12,
		.retry_cnt = 2,
	};
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	pid_t pid;
	bool fallback, overflow, lists;
	int sock;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single, "--server or --client");
	E2E_CHECK(args.mode && (!strcmp(args.mode, "stopped-target") ||
				!strcmp(args.mode, "stopped-target-fallback") ||
				!strcmp(args.mode, "cq-overflow") ||
				!strcmp(args.mode, "post-list")),
		  "--mode stopped-target, stopped-target-fallback, "
		  "cq-overflow or post-list");
	lists = !strcmp(args.mode, "post-list");
	fallback = !strcmp(args.mode, "stopped-target-fallback");
	overflow = !strcmp(args.mode, "cq-overflow");
	e2e_open(&d, args.dev, args.gid_index);
	cq = ibv_create_cq(d.ctx, overflow ? 4 : 16, NULL, NULL, 0);
	E2E_CHECK(cq, "ibv_create_cq: %s", strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&buf, 4096, BUF_SIZE),
		  "out of memory");
	memset(buf, 0, BUF_SIZE);
	if (args.server) {
		e2e_pattern(buf + READ_OFF, XFER_LEN, READ_SEED);
		*(uint64_t *)(buf + ATOMIC_OFF) = 100;
	}
	mr = ibv_reg_mr(d.pd, buf, BUF_SIZE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	E2E_CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	E2E_CHECK(cq->cqe + 2 <= 64, "CQ of %d", cq->cqe);
	qp = e2e_create_qp(&d, IBV_QPT_RC, cq, cq, 64, 1);
	e2e_qp_to_init(qp, IBV_QPT_RC);
	me.rc_qpn = qp->qp_num;
	me.psn = args.server ? 0x111 : 0x222;
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)buf;
	memcpy(me.gid, d.gid.raw, 16);

	sock = e2e_channel_open(&args);
	e2e_exchange(sock, &me, &peer);
	e2e_rc_connect(&d, qp, me.psn, &peer, &opts);
	pid = getpid();
	e2e_send_all(sock, &pid, sizeof(pid));
	E2E_CHECK(e2e_recv_all(sock, &pid, sizeof(pid)), "peer went away");
	e2e_sync(sock, "connected");

	if (overflow) {
		if (!args.server)
			cq_overflow(d.ctx, qp, cq, mr, buf, &peer);
		e2e_sync(sock, "done");
	} else if (lists) {
		if (!args.server)
			post_list(qp, cq, mr, buf, &peer);
		e2e_sync(sock, "done");
		if (args.server)
			server_check_lists(buf);
	} else if (args.server) {
		/* Stopped and continued by the client in between. */
		e2e_sync(sock, "done");
		if (!fallback)
			server_check(buf);
	} else {
		client(qp, cq, mr, buf, &peer, pid, fallback);
		e2e_sync(sock, "done");
	}
	e2e_sync(sock, "bye");
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	free(buf);
	e2e_close(&d);
	close(sock);
	printf("passed\n");
	return 0;
}
