// SPDX-License-Identifier: BSD-2-Clause
/*
 * fastpath: the provider's data-path calls, isolated for callgrind.
 *
 * Run as
 *   pvrdma-sim --provider P -- valgrind --tool=callgrind \
 *	--collect-atstart=no --toggle-collect='bench_*' bench/fastpath N
 *
 * One process, two RC QPs on one adapter connected to each other. Each
 * provider call the benchmark counts goes through one of the noinline
 * bench_*() wrappers below, and only instructions executed inside them (on
 * this thread) are collected: the device thread that executes the work
 * and the doorbell trap (a signal handler, which callgrind keeps apart from
 * the interrupted call) are not. Each phase is dumped on its own
 * (CALLGRIND_DUMP_STATS_AT with the phase name), and the harness prints
 * how many calls each phase made so the run script can divide.
 *
 * Without valgrind the client requests are no-ops and the program still
 * checks that every completion arrived: a quick self-test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <valgrind/callgrind.h>

#include "bench_util.h"

#define MSG_SIZE	64
#define MAX_N		512	/* fits the send and receive queues */
#define EMPTY_POLLS	1000
#define WAIT_SECONDS	120

struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *a, *b;
	union ibv_gid gid;
};

__attribute__((noinline)) int bench_post_send(struct ibv_qp *qp,
					      struct ibv_send_wr *wr,
					      struct ibv_send_wr **bad);
__attribute__((noinline)) int bench_post_recv(struct ibv_qp *qp,
					      struct ibv_recv_wr *wr,
					      struct ibv_recv_wr **bad);
__attribute__((noinline)) int bench_poll_cqe(struct ibv_cq *cq,
					     struct ibv_wc *wc);
__attribute__((noinline)) int bench_poll_empty(struct ibv_cq *cq,
					       struct ibv_wc *wc);

/* The measured calls: exactly one provider call each. */
int bench_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad)
{
	return ibv_post_send(qp, wr, bad);
}

int bench_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad)
{
	return ibv_post_recv(qp, wr, bad);
}

int bench_poll_cqe(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, 1, wc);
}

int bench_poll_empty(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, 1, wc);
}

static struct ibv_qp *make_qp(struct pair *p, struct ibv_cq *scq,
			      struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = MAX_N,
			.max_recv_wr = MAX_N,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(p->pd, &init);

	if (!qp)
		die("ibv_create_qp", errno);
	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (errno)
		die("modify_qp INIT", errno);
	return qp;
}

/* INIT -> RTR -> RTS, talking to the QP numbered dest on this adapter. */
static void connect_qp(struct pair *p, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = p->gid, .sgid_index = 0,
				 .hop_limit = 1 },
			.port_num = 1,
		},
	};

	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER);
	if (errno)
		die("modify_qp RTR", errno);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 1;
	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (errno)
		die("modify_qp RTS", errno);
}

static void setup(struct pair *p)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	if (!list || !list[0])
		die("no RDMA device (run under pvrdma-sim)", ENODEV);
	p->ctx = ibv_open_device(list[0]);
	if (!p->ctx)
		die("ibv_open_device", errno);
	ibv_free_device_list(list);
	errno = ibv_query_gid(p->ctx, 1, 0, &p->gid);
	if (errno)
		die("ibv_query_gid", errno);
	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		die("ibv_alloc_pd", errno);
	p->buf = calloc(2 * MAX_N, MSG_SIZE);
	if (!p->buf)
		die("calloc", ENOMEM);
	p->mr = ibv_reg_mr(p->pd, p->buf, 2 * MAX_N * MSG_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!p->mr)
		die("ibv_reg_mr", errno);
	p->scq = ibv_create_cq(p->ctx, 2 * MAX_N, NULL, NULL, 0);
	p->rcq = ibv_create_cq(p->ctx, 2 * MAX_N, NULL, NULL, 0);
	if (!p->scq || !p->rcq)
		die("ibv_create_cq", errno);
	p->a = make_qp(p, p->scq, p->scq);
	p->b = make_qp(p, p->rcq, p->rcq);
	connect_qp(p, p->a, p->b->qp_num);
	connect_qp(p, p->b, p->a->qp_num);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Waits, without touching the CQ, until the device has delivered every
 * message: the last receive buffer holds the last message's pattern. The
 * send CQEs follow the ACK; the extra pause covers them. Polls that still
 * come back empty are counted and the run script takes them out.
 */
static void wait_delivered(struct pair *p, unsigned int n)
{
	volatile uint8_t *last = p->buf + (MAX_N + n - 1) * MSG_SIZE;
	int waited;

	for (waited = 0; waited < WAIT_SECONDS * 20; waited++) {
		if (last[MSG_SIZE - 1] == (uint8_t)(n - 1 + 1))
			break;
		sleep_ms(50);
	}
	sleep_ms(500);
}

int main(int argc, char **argv)
{
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p = { 0 };
	unsigned int n = 256, i, got, empties, rgot;
	int rc;

	if (argc > 1)
		n = strtoul(argv[1], NULL, 0);
	if (n < 1 || n > MAX_N) {
		fprintf(stderr, "usage: fastpath [N]   (1 <= N <= %d)\n",
			MAX_N);
		return 2;
	}
	setup(&p);

	/* Sources: message i carries i + 1 in every byte. */
	for (i = 0; i < n; i++)
		memset(p.buf + i * MSG_SIZE, (int)(i + 1), MSG_SIZE);

	/* Empty polls: nothing was posted yet. */
	CALLGRIND_ZERO_STATS;
	for (i = 0; i < EMPTY_POLLS; i++)
		if (bench_poll_empty(p.scq, &wc) != 0)
			die("poll of an empty CQ returned a completion", EIO);
	CALLGRIND_DUMP_STATS_AT("poll_empty");

	/* Receives on B, one WR per call. */
	CALLGRIND_ZERO_STATS;
	for (i = 0; i < n; i++) {
		sge = (struct ibv_sge){
			.addr = (uintptr_t)(p.buf + (MAX_N + i) * MSG_SIZE),
			.length = MSG_SIZE, .lkey = p.mr->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sge,
					    .num_sge = 1 };
		rc = bench_post_recv(p.b, &rwr, &bad_r);
		if (rc)
			die("ibv_post_recv", rc);
	}
	CALLGRIND_DUMP_STATS_AT("post_recv");

	/* Signaled sends from A, 1 SGE, one WR per call. */
	CALLGRIND_ZERO_STATS;
	for (i = 0; i < n; i++) {
		sge = (struct ibv_sge){
			.addr = (uintptr_t)(p.buf + i * MSG_SIZE),
			.length = MSG_SIZE, .lkey = p.mr->lkey };
		swr = (struct ibv_send_wr){ .wr_id = i, .sg_list = &sge,
					    .num_sge = 1,
					    .opcode = IBV_WR_SEND,
					    .send_flags = IBV_SEND_SIGNALED };
		rc = bench_post_send(p.a, &swr, &bad_s);
		if (rc)
			die("ibv_post_send", rc);
	}
	CALLGRIND_DUMP_STATS_AT("post_send");

	wait_delivered(&p, n);

	/* Send completions, one per call. */
	CALLGRIND_ZERO_STATS;
	got = empties = 0;
	while (got < n) {
		rc = bench_poll_cqe(p.scq, &wc);
		if (rc < 0)
			die("ibv_poll_cq", EIO);
		if (!rc) {
			if (++empties > 100000000u)
				die("send completions missing", ETIMEDOUT);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != got)
			die("bad send completion", EIO);
		got++;
	}
	CALLGRIND_DUMP_STATS_AT("poll_cqe");

	/* Receive completions (not measured): the data arrived intact. */
	for (rgot = 0; rgot < n;) {
		rc = ibv_poll_cq(p.rcq, 1, &wc);
		if (rc < 0 || (rc && wc.status != IBV_WC_SUCCESS))
			die("bad receive completion", EIO);
		rgot += rc;
	}
	for (i = 0; i < n; i++)
		if (p.buf[(MAX_N + i) * MSG_SIZE] != (uint8_t)(i + 1))
			die("received data differs", EIO);

	printf("{\"n\": %u, \"empty_polls\": %d, \"poll_cqe_empties\": %u}\n",
	       n, EMPTY_POLLS, empties);
	return 0;
}
