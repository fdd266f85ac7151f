// SPDX-License-Identifier: BSD-2-Clause
/*
 * Every opcode the device supports, between two processes, with the data and
 * every field of every completion checked on both sides:
 *
 *   RC: send (gather 3 SGEs, scatter 2), send with immediate (solicited),
 *       RDMA write (4 KiB, and 300 KiB + 7 B), RDMA write with immediate,
 *       RDMA read, compare-and-swap (hit and miss), fetch-and-add, an
 *       unsignaled send followed by a signaled one, a zero-length send
 *   UD: send and send with immediate (GRH, src_qp)
 *
 * The client is the requester; the server posts the receives, checks what
 * landed in its memory and tells the client whether it agrees. Either side
 * exits non-zero if anything differs.
 *
 *   data_integrity --server --port P [--dev D]
 *   data_integrity --client --port P [--dev D]
 */
#include "e2e_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layout of the registered buffer, the same on both sides. */
#define BUF_SIZE	(BIG_OFF + BIG_LEN + 4096)
#define RECV_OFF	0		/* RC receive slots, 1 KiB each */
#define RECV_SLOT	1024
#define RECV_SLOTS	8
#define SEND_OFF	8192		/* client: sources of sends/writes */
#define WRITE_OFF	16384		/* server: RDMA write target */
#define WRITE_LEN	4096
#define WIMM_OFF	(WRITE_OFF + WRITE_LEN)	/* write-with-imm target */
#define WIMM_LEN	1000
#define READ_OFF	24576		/* server: source; client: target */
#define READ_LEN	2048
#define ATOMIC_OFF	32768		/* server: the 8-byte target */
#define RESULT_OFF	(ATOMIC_OFF + 64)	/* client: atomic results */
#define UD_OFF		40960		/* UD receive slots */
#define UD_SLOT		2048
#define UD_SLOTS	4
#define GRH_LEN		40
/* A WRITE of many runs of packets at any path MTU, of a length that
 * leaves its last packet padded: client source and server target. */
#define BIG_OFF		65536
#define BIG_LEN		(300 * 1024 + 7)

#define POISON		0xee
#define ATOMIC_INIT	0x1111222233334444ULL
#define ATOMIC_SWAP	0xaaaabbbbccccddddULL
#define ATOMIC_ADD	0x10ULL

#define IMM_SEND	0xdeadbeefu
#define IMM_WRITE	0x12345678u
#define IMM_UD		0xcafef00du

/* Receive wr_ids: RC slot i is RECV_WRID + i, UD slot i is UD_WRID + i. */
#define RECV_WRID	0x2000u
#define UD_WRID		0x3000u

struct side {
	struct e2e_dev d;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *rc, *ud;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct e2e_peer me, peer;
	int sock;
};

/* What the client sends in each RC send, so the server can check it. */
static const struct {
	uint32_t len;
	unsigned int seed;
} rc_sends[] = {
	{ 600, 1 },	/* 0: 3-SGE gather, lands in 2 scatter SGEs */
	{ 64, 2 },	/* 1: send with immediate, solicited */
	{ 0, 0 },	/* 2: consumed by the RDMA write with immediate */
	{ 32, 3 },	/* 3: unsignaled send */
	{ 48, 4 },	/* 4: signaled send right after it */
	{ 0, 5 },	/* 5: zero-length send */
};
#define NUM_RC_RECVS	(sizeof(rc_sends) / sizeof(rc_sends[0]))

static const struct {
	uint32_t len;
	unsigned int seed;
	bool imm;
} ud_sends[] = {
	{ 200, 6, false },
	{ 100, 7, true },
};
#define NUM_UD_RECVS	(sizeof(ud_sends) / sizeof(ud_sends[0]))

static void setup(struct side *s, const struct e2e_args *args)
{
	e2e_open(&s->d, args->dev, args->gid_index);
	s->send_cq = ibv_create_cq(s->d.ctx, 64, NULL, NULL, 0);
	s->recv_cq = ibv_create_cq(s->d.ctx, 64, NULL, NULL, 0);
	E2E_CHECK(s->send_cq && s->recv_cq, "ibv_create_cq: %s",
		  strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&s->buf, 4096, BUF_SIZE),
		  "out of memory");
	memset(s->buf, POISON, BUF_SIZE);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	E2E_CHECK(s->mr->lkey && s->mr->rkey, "MR keys are zero");

	s->rc = e2e_create_qp(&s->d, IBV_QPT_RC, s->send_cq, s->recv_cq,
			      16, 4);
	s->ud = e2e_create_qp(&s->d, IBV_QPT_UD, s->send_cq, s->recv_cq,
			      16, 4);
	E2E_CHECK(s->rc->qp_num != s->ud->qp_num, "two QPs share QPN %u",
		  s->rc->qp_num);
	e2e_qp_to_init(s->rc, IBV_QPT_RC);
	e2e_qp_to_init(s->ud, IBV_QPT_UD);

	s->me.rc_qpn = s->rc->qp_num;
	s->me.ud_qpn = s->ud->qp_num;
	s->me.psn = args->server ? 0x1234 : 0x4321;
	s->me.rkey = s->mr->rkey;
	s->me.addr = (uintptr_t)s->buf;
	memcpy(s->me.gid, s->d.gid.raw, 16);
}

static void connect_qps(struct side *s)
{
	e2e_exchange(s->sock, &s->me, &s->peer);
	e2e_rc_connect(&s->d, s->rc, s->me.psn, &s->peer, NULL);
	e2e_ud_ready(s->ud, s->me.psn);
}

static void post_recv(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sge,
		      int num_sge)
{
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = num_sge,
	}, *bad = NULL;
	int ret = ibv_post_recv(qp, &wr, &bad);

	E2E_CHECK(!ret, "ibv_post_recv: %s", strerror(ret));
}

static void server_post_recvs(struct side *s)
{
	uint32_t lkey = s->mr->lkey;
	unsigned int i;

	/* RC: each slot is two SGEs with a gap between them. */
	for (i = 0; i < RECV_SLOTS; i++) {
		uint8_t *slot = s->buf + RECV_OFF + i * RECV_SLOT;
		struct ibv_sge sge[2] = {
			{ (uintptr_t)slot, 256, lkey },
			{ (uintptr_t)slot + 512, 512, lkey },
		};

		post_recv(s->rc, RECV_WRID + i, sge, 2);
	}
	for (i = 0; i < UD_SLOTS; i++) {
		struct ibv_sge sge = {
			(uintptr_t)s->buf + UD_OFF + i * UD_SLOT, UD_SLOT, lkey
		};

		post_recv(s->ud, UD_WRID + i, &sge, 1);
	}
}

/* The bytes of an RC receive slot, put back together from its 2 SGEs. */
static void gather_slot(const uint8_t *slot, uint8_t *out, uint32_t len)
{
	uint32_t first = len < 256 ? len : 256;

	memcpy(out, slot, first);
	if (len > 256)
		memcpy(out + 256, slot + 512, len - 256);
}

static void server_check_rc_recv(struct side *s, unsigned int i)
{
	struct e2e_wc_expect exp = {
		.wr_id = RECV_WRID + i,
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.qp_num = s->rc->qp_num,
		.check_len = true,
		.byte_len = rc_sends[i].len,
	};
	const uint8_t *slot = s->buf + RECV_OFF + i * RECV_SLOT;
	uint8_t data[RECV_SLOT];
	struct ibv_wc wc;
	char what[48];
	unsigned int k;

	if (i == 1) {
		exp.wc_flags = IBV_WC_WITH_IMM;
		exp.imm_data = htonl(IMM_SEND);
	} else if (i == 2) {
		exp.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		exp.wc_flags = IBV_WC_WITH_IMM;
		exp.imm_data = htonl(IMM_WRITE);
		exp.byte_len = WIMM_LEN;
	}
	snprintf(what, sizeof(what), "server RC recv %u", i);
	e2e_poll_one(s->recv_cq, &wc, what);
	e2e_check_wc(&wc, &exp, what);

	if (i == 2) {
		/* A write with immediate puts nothing in the receive buffer. */
		for (k = 0; k < RECV_SLOT; k++)
			E2E_CHECK(slot[k] == POISON,
				  "write-with-imm touched receive slot byte %u",
				  k);
		return;
	}
	gather_slot(slot, data, rc_sends[i].len);
	E2E_CHECK(e2e_pattern_ok(data, rc_sends[i].len, rc_sends[i].seed),
		  "%s: payload differs from what was sent", what);
	/* The gap between the SGEs and the bytes past the data: untouched. */
	for (k = 0; k < RECV_SLOT; k++) {
		bool in_data = k < 256 ? k < rc_sends[i].len :
			    k >= 512 && k - 256 < rc_sends[i].len;

		if (!in_data)
			E2E_CHECK(slot[k] == POISON,
				  "%s: byte %u outside the data written",
				  what, k);
	}
}

/*
 * Where the GRH area names the sender: RoCE v2 over IPv4 (an IPv4-mapped
 * RoCE v2 GID) leaves bytes 0-19 zero and puts the IPv4 header in 20-39,
 * its source address at 32; RoCE v1 puts the sender's GID at byte 8.
 */
static bool grh_source_ok(struct side *s, const uint8_t *grh)
{
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_gid_entry e;

	if (!ibv_query_gid_ex(s->d.ctx, 1, s->d.gid_index, &e, 0) &&
	    e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
	    !memcmp(e.gid.raw, v4_prefix, sizeof(v4_prefix)))
		return grh[20] == 0x45 && !memcmp(grh + 32, s->peer.gid + 12, 4);
	return !memcmp(grh + 8, s->peer.gid, 16);
}

static void server_check_ud_recv(struct side *s, unsigned int i)
{
	struct e2e_wc_expect exp = {
		.wr_id = UD_WRID + i,
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.qp_num = s->ud->qp_num,
		.wc_flags = IBV_WC_GRH,
		.check_len = true,
		.byte_len = ud_sends[i].len + GRH_LEN,
		.check_src_qp = true,
		.src_qp = s->peer.ud_qpn,
	};
	const uint8_t *slot = s->buf + UD_OFF + i * UD_SLOT;
	struct ibv_wc wc;
	char what[48];

	if (ud_sends[i].imm) {
		exp.wc_flags |= IBV_WC_WITH_IMM;
		exp.imm_data = htonl(IMM_UD);
	}
	snprintf(what, sizeof(what), "server UD recv %u", i);
	e2e_poll_one(s->recv_cq, &wc, what);
	e2e_check_wc(&wc, &exp, what);
	E2E_CHECK(e2e_pattern_ok(slot + GRH_LEN, ud_sends[i].len,
				 ud_sends[i].seed),
		  "%s: payload differs from what was sent", what);
	E2E_CHECK(grh_source_ok(s, slot),
		  "%s: the GRH's source is not the sender", what);
}

static int server(struct side *s)
{
	uint64_t atomic_final = ATOMIC_SWAP + ATOMIC_ADD;
	uint8_t verdict = 1;
	struct ibv_wc wc;
	unsigned int i;
	uint64_t v;

	e2e_pattern(s->buf + READ_OFF, READ_LEN, 9);
	memcpy(s->buf + ATOMIC_OFF, &(uint64_t){ ATOMIC_INIT }, 8);
	server_post_recvs(s);
	connect_qps(s);
	e2e_sync(s->sock, "ready");

	for (i = 0; i < NUM_RC_RECVS; i++)
		server_check_rc_recv(s, i);
	for (i = 0; i < NUM_UD_RECVS; i++)
		server_check_ud_recv(s, i);
	e2e_sync(s->sock, "sent");

	/* Nothing more: no extra receive, and no send completions at all. */
	E2E_CHECK(!e2e_poll_now(s->recv_cq, &wc),
		  "unexpected receive completion wr_id 0x%llx",
		  (unsigned long long)wc.wr_id);
	E2E_CHECK(!e2e_poll_now(s->send_cq, &wc),
		  "unexpected send completion on a QP that sent nothing");

	E2E_CHECK(e2e_pattern_ok(s->buf + WRITE_OFF, WRITE_LEN, 10),
		  "RDMA write: target memory differs");
	E2E_CHECK(e2e_pattern_ok(s->buf + BIG_OFF, BIG_LEN, 12),
		  "RDMA write of %u bytes: target memory differs", BIG_LEN);
	E2E_CHECK(s->buf[BIG_OFF + BIG_LEN] == POISON,
		  "RDMA write of %u bytes wrote past its length", BIG_LEN);
	E2E_CHECK(e2e_pattern_ok(s->buf + WIMM_OFF, WIMM_LEN, 11),
		  "RDMA write with immediate: target memory differs");
	E2E_CHECK(s->buf[WIMM_OFF + WIMM_LEN] == POISON,
		  "RDMA write with immediate wrote past its length");
	E2E_CHECK(e2e_pattern_ok(s->buf + READ_OFF, READ_LEN, 9),
		  "RDMA read changed the memory it read");
	memcpy(&v, s->buf + ATOMIC_OFF, 8);
	E2E_CHECK(v == atomic_final, "atomics: target is 0x%llx, want 0x%llx",
		  (unsigned long long)v, (unsigned long long)atomic_final);
	E2E_CHECK(s->buf[ATOMIC_OFF + 8] == POISON,
		  "atomics wrote past their 8 bytes");

	verdict = 0;
	e2e_send_all(s->sock, &verdict, 1);
	printf("data_integrity server: all checks passed\n");
	return 0;
}

static void post_send(struct side *s, struct ibv_qp *qp,
		      struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	int ret = ibv_post_send(qp, wr, &bad);

	E2E_CHECK(!ret, "ibv_post_send(wr_id 0x%llx): %s",
		  (unsigned long long)wr->wr_id, strerror(ret));
}

static void expect_send_cqe(struct side *s, uint64_t wr_id,
			    enum ibv_wc_opcode opcode, struct ibv_qp *qp,
			    int byte_len, const char *what)
{
	struct e2e_wc_expect exp = {
		.wr_id = wr_id,
		.status = IBV_WC_SUCCESS,
		.opcode = opcode,
		.qp_num = qp->qp_num,
		.check_len = byte_len >= 0,
		.byte_len = byte_len,
	};
	struct ibv_wc wc;

	e2e_poll_one(s->send_cq, &wc, what);
	e2e_check_wc(&wc, &exp, what);
}

static struct ibv_sge sge_at(struct side *s, size_t off, uint32_t len)
{
	return (struct ibv_sge){ (uintptr_t)s->buf + off, len, s->mr->lkey };
}

static void client_rc_sends(struct side *s)
{
	struct ibv_sge sge[3];
	struct ibv_send_wr wr;
	uint8_t *src = s->buf + SEND_OFF;

	/* 0: 600 bytes gathered from 3 SGEs out of order in memory. */
	e2e_pattern(src, 600, rc_sends[0].seed);
	memmove(src + 1000, src + 300, 300);	/* third piece moved away */
	sge[0] = sge_at(s, SEND_OFF, 100);
	sge[1] = sge_at(s, SEND_OFF + 100, 200);
	sge[2] = sge_at(s, SEND_OFF + 1000, 300);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1001;
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	post_send(s, s->rc, &wr);
	expect_send_cqe(s, 0x1001, IBV_WC_SEND, s->rc, -1, "RC send");

	/* 1: send with immediate, solicited. */
	e2e_pattern(src, 64, rc_sends[1].seed);
	sge[0] = sge_at(s, SEND_OFF, 64);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1002;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr.imm_data = htonl(IMM_SEND);
	post_send(s, s->rc, &wr);
	expect_send_cqe(s, 0x1002, IBV_WC_SEND, s->rc, -1,
			"RC send with immediate");
}

static void client_rdma(struct side *s)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	/* RDMA write. */
	e2e_pattern(s->buf + SEND_OFF, WRITE_LEN, 10);
	sge = sge_at(s, SEND_OFF, WRITE_LEN);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1003;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = s->peer.addr + WRITE_OFF;
	wr.wr.rdma.rkey = s->peer.rkey;
	post_send(s, s->rc, &wr);
	expect_send_cqe(s, 0x1003, IBV_WC_RDMA_WRITE, s->rc, -1, "RDMA write");

	/* A long RDMA write. */
	e2e_pattern(s->buf + BIG_OFF, BIG_LEN, 12);
	sge = sge_at(s, BIG_OFF, BIG_LEN);
	wr.wr_id = 0x1008;
	wr.wr.rdma.remote_addr = s->peer.addr + BIG_OFF;
	post_send(s, s->rc, &wr);
	expect_send_cqe(s, 0x1008, IBV_WC_RDMA_WRITE, s->rc, -1,
			"long RDMA write");

	/* RDMA write with immediate: consumes receive slot 2. */
	e2e_pattern(s->buf + SEND_OFF, WIMM_LEN, 11);
	sge = sge_at(s, SEND_OFF, WIMM_LEN);
	wr.wr_id = 0x1004;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(IMM_WRITE);
	wr.wr.rdma.remote_addr = s->peer.addr + WIMM_OFF;
	post_send(s, s->rc, &wr);
	expect_send_cqe(s, 0x1004, IBV_WC_RDMA_WRITE, s->rc, -1,
			"RDMA write with immediate");

	/* RDMA read of the server's pattern. */
	sge = sge_at(s, READ_OFF, READ_LEN);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1005;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = s->peer.addr + READ_OFF;
	wr.wr.rdma.rkey = s->peer.rkey;
	post_send(s, s->rc, &wr);
	expect_send_cqe(s, 0x1005, IBV_WC_RDMA_READ, s->rc, READ_LEN,
			"RDMA read");
	E2E_CHECK(e2e_pattern_ok(s->buf + READ_OFF, READ_LEN, 9),
		  "RDMA read: data differs from the server's memory");
	E2E_CHECK(s->buf[READ_OFF + READ_LEN] == POISON,
		  "RDMA read wrote past its length");
}

static void client_atomic(struct side *s, uint64_t wr_id,
			  enum ibv_wr_opcode op, uint64_t compare_add,
			  uint64_t swap, uint64_t want_old, const char *what)
{
	size_t off = RESULT_OFF + (wr_id & 0xf) * 8;
	struct ibv_sge sge = sge_at(s, off, 8);
	struct ibv_send_wr wr;
	uint64_t old;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = s->peer.addr + ATOMIC_OFF;
	wr.wr.atomic.rkey = s->peer.rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	post_send(s, s->rc, &wr);
	expect_send_cqe(s, wr_id, op == IBV_WR_ATOMIC_CMP_AND_SWP ?
			IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD, s->rc, 8, what);
	memcpy(&old, s->buf + off, 8);
	E2E_CHECK(old == want_old, "%s returned 0x%llx, want 0x%llx", what,
		  (unsigned long long)old, (unsigned long long)want_old);
}

static void client_signaling(struct side *s)
{
	struct ibv_sge sge[2];
	struct ibv_send_wr wr[2];

	/* An unsignaled send chained to a signaled one: one CQE only. */
	e2e_pattern(s->buf + SEND_OFF, 32, rc_sends[3].seed);
	e2e_pattern(s->buf + SEND_OFF + 64, 48, rc_sends[4].seed);
	sge[0] = sge_at(s, SEND_OFF, 32);
	sge[1] = sge_at(s, SEND_OFF + 64, 48);
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0x1009;
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].next = &wr[1];
	wr[1].wr_id = 0x100a;
	wr[1].sg_list = &sge[1];
	wr[1].num_sge = 1;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	post_send(s, s->rc, &wr[0]);
	expect_send_cqe(s, 0x100a, IBV_WC_SEND, s->rc, -1,
			"signaled send after an unsignaled one");

	/* A zero-length send still consumes a receive and completes. */
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0x100b;
	wr[0].num_sge = 0;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	post_send(s, s->rc, &wr[0]);
	expect_send_cqe(s, 0x100b, IBV_WC_SEND, s->rc, -1,
			"zero-length send");
}

static void client_ud(struct side *s)
{
	struct ibv_ah *ah = e2e_create_ah(&s->d, s->peer.gid);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	unsigned int i;

	for (i = 0; i < NUM_UD_RECVS; i++) {
		e2e_pattern(s->buf + SEND_OFF, ud_sends[i].len,
			    ud_sends[i].seed);
		sge = sge_at(s, SEND_OFF, ud_sends[i].len);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x1100 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (ud_sends[i].imm) {
			wr.opcode = IBV_WR_SEND_WITH_IMM;
			wr.imm_data = htonl(IMM_UD);
		} else {
			wr.opcode = IBV_WR_SEND;
		}
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = s->peer.ud_qpn;
		wr.wr.ud.remote_qkey = 0x11111111;
		post_send(s, s->ud, &wr);
		expect_send_cqe(s, 0x1100 + i, IBV_WC_SEND, s->ud, -1,
				ud_sends[i].imm ? "UD send with immediate" :
						  "UD send");
	}
	E2E_CHECK(!ibv_destroy_ah(ah), "ibv_destroy_ah failed");
}

static int client(struct side *s)
{
	struct ibv_wc wc;
	uint8_t verdict;

	connect_qps(s);
	e2e_sync(s->sock, "ready");

	client_rc_sends(s);
	client_rdma(s);
	client_atomic(s, 0x1006, IBV_WR_ATOMIC_CMP_AND_SWP, ATOMIC_INIT,
		      ATOMIC_SWAP, ATOMIC_INIT, "compare-and-swap (equal)");
	client_atomic(s, 0x1007, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 5,
		      ATOMIC_SWAP, "compare-and-swap (not equal)");
	client_atomic(s, 0x1008, IBV_WR_ATOMIC_FETCH_AND_ADD, ATOMIC_ADD, 0,
		      ATOMIC_SWAP, "fetch-and-add");
	client_signaling(s);
	client_ud(s);

	E2E_CHECK(!e2e_poll_now(s->send_cq, &wc),
		  "unexpected send completion wr_id 0x%llx",
		  (unsigned long long)wc.wr_id);
	E2E_CHECK(!e2e_poll_now(s->recv_cq, &wc),
		  "unexpected receive completion on the requester");
	e2e_sync(s->sock, "sent");
	E2E_CHECK(e2e_recv_all(s->sock, &verdict, 1) && verdict == 0,
		  "the server found differences (see its output)");
	printf("data_integrity client: all checks passed\n");
	return 0;
}

static void teardown(struct side *s)
{
	E2E_CHECK(!ibv_destroy_qp(s->rc), "ibv_destroy_qp(RC) failed");
	E2E_CHECK(!ibv_destroy_qp(s->ud), "ibv_destroy_qp(UD) failed");
	E2E_CHECK(!ibv_dereg_mr(s->mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s->send_cq), "ibv_destroy_cq failed");
	E2E_CHECK(!ibv_destroy_cq(s->recv_cq), "ibv_destroy_cq failed");
	e2e_close(&s->d);
	free(s->buf);
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side s;
	int ret;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single, "needs --server or --client");
	memset(&s, 0, sizeof(s));
	setup(&s, &args);
	s.sock = e2e_channel_open(&args);
	ret = args.server ? server(&s) : client(&s);
	teardown(&s);
	return ret;
}
