// SPDX-License-Identifier: BSD-2-Clause
/*
 * End-to-end checks of what libpvrdma offers beyond the upstream provider,
 * run under `pvrdma-sim --provider pvrdma --adapters 2`: two adapters in
 * one process, an RC QP on each, connected to each other.
 *
 *   ext_verbs inline   IBV_SEND_INLINE and ibv_wr_set_inline_data: the
 *                      buffer is overwritten right after posting and its
 *                      lkey is bogus; the receiver sees the original bytes
 *   ext_verbs wr       ibv_create_qp_ex + every ibv_wr_* opcode, data
 *                      checked; a batch is one doorbell; abort and errors
 *   ext_verbs cq_ex    ibv_create_cq_ex: every field through read_*
 *   ext_verbs td       thread + parent domains (custom allocator): no lock
 *                      taken, one thread per domain pair under load
 *
 * Links libpvrdma.so.1 for the pvrdmadv counters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <infiniband/pvrdmadv.h>
#include <infiniband/verbs.h>

#include "e2e_common.h"

#define BUF_SIZE 4096
#define DEPTH 64

struct side {
	struct e2e_dev dev;
	struct ibv_pd *pd;		/* dev.pd, or a parent domain */
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;		/* when created with create_cq_ex */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct pvrdmadv_counters counters(struct side *s)
{
	struct pvrdmadv_counters c;
	int ret;

	memset(&c, 0, sizeof(c));
	ret = pvrdmadv_query_counters(s->dev.ctx, &c, sizeof(c));
	E2E_CHECK(!ret, "pvrdmadv_query_counters: %s", strerror(ret));
	return c;
}

static void side_open(struct side *s, const char *name)
{
	memset(s, 0, sizeof(*s));
	e2e_open(&s->dev, name, 0);
	E2E_CHECK(pvrdmadv_is_supported(s->dev.ctx),
		  "%s is not driven by libpvrdma", name);
	s->pd = s->dev.pd;
	s->buf = aligned_alloc(4096, BUF_SIZE);
	E2E_CHECK(s->buf, "no memory");
	memset(s->buf, 0, BUF_SIZE);
	s->mr = ibv_reg_mr(s->dev.pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
}

static void side_cq(struct side *s, bool ex)
{
	if (!ex) {
		s->cq = ibv_create_cq(s->dev.ctx, 2 * DEPTH, NULL, NULL, 0);
		E2E_CHECK(s->cq, "ibv_create_cq: %s", strerror(errno));
		return;
	}
	struct ibv_cq_init_attr_ex a = {
		.cqe = 2 * DEPTH,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
			    IBV_WC_EX_WITH_DLID_PATH_BITS,
	};

	if (s->pd != s->dev.pd) {
		a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
		a.parent_domain = s->pd;
	}
	s->cqx = ibv_create_cq_ex(s->dev.ctx, &a);
	E2E_CHECK(s->cqx, "ibv_create_cq_ex: %s", strerror(errno));
	s->cq = ibv_cq_ex_to_cq(s->cqx);
}

static void side_qp(struct side *s, uint32_t max_inline, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = s->cq, .recv_cq = s->cq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = max_inline },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;

	if (ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ops;
	}
	s->qp = ibv_create_qp_ex(s->dev.ctx, &a);
	E2E_CHECK(s->qp, "ibv_create_qp_ex: %s", strerror(errno));
	E2E_CHECK(a.cap.max_inline_data == max_inline,
		  "granted max_inline_data %u, asked %u",
		  a.cap.max_inline_data, max_inline);
	E2E_CHECK(!ibv_query_qp(s->qp, &qa, IBV_QP_CAP, &ia),
		  "ibv_query_qp");
	E2E_CHECK(ia.cap.max_inline_data == max_inline,
		  "query_qp says max_inline_data %u, not %u",
		  ia.cap.max_inline_data, max_inline);
	s->qpx = ibv_qp_to_qp_ex(s->qp);
	E2E_CHECK(!ops == !s->qpx, "ibv_qp_to_qp_ex: %p with ops %#llx",
		  (void *)s->qpx, (unsigned long long)ops);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
}

static void connect_pair(struct side *a, struct side *b)
{
	struct e2e_peer pa = { .rc_qpn = a->qp->qp_num, .psn = 1 };
	struct e2e_peer pb = { .rc_qpn = b->qp->qp_num, .psn = 2 };

	memcpy(pa.gid, a->dev.gid.raw, 16);
	memcpy(pb.gid, b->dev.gid.raw, 16);
	e2e_rc_connect(&a->dev, a->qp, pa.psn, &pb, NULL);
	e2e_rc_connect(&b->dev, b->qp, pb.psn, &pa, NULL);
}

static void post_recv(struct side *s, uint64_t wr_id, uint32_t off,
		      uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(s->qp, &wr, &bad);

	E2E_CHECK(!ret, "ibv_post_recv: %s", strerror(ret));
}

static void expect(struct side *s, uint64_t wr_id, enum ibv_wc_opcode op,
		   const char *what)
{
	struct ibv_wc wc;

	e2e_poll_one(s->cq, &wc, what);
	E2E_CHECK(wc.status == IBV_WC_SUCCESS, "%s: status %s", what,
		  ibv_wc_status_str(wc.status));
	E2E_CHECK(wc.wr_id == wr_id && wc.opcode == op,
		  "%s: wr_id %llu opcode %d, expected %llu %d", what,
		  (unsigned long long)wc.wr_id, wc.opcode,
		  (unsigned long long)wr_id, op);
}

/* ---- inline ---- */

static void run_inline(void)
{
	struct side a, b;
	uint8_t data[64], orig[64];
	struct pvrdmadv_counters c0, c1;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	int ret;

	side_open(&a, "vmw_pvrdma0");
	side_open(&b, "vmw_pvrdma1");
	side_cq(&a, false);
	side_cq(&b, false);
	side_qp(&a, 64, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	side_qp(&b, 0, 0);
	connect_pair(&a, &b);
	c0 = counters(&a);

	/* 1. SEND inline from a stack buffer with a bogus lkey, then
	 *    scribbled over before the device could have read it */
	e2e_pattern(data, sizeof(data), 7);
	memcpy(orig, data, sizeof(data));
	post_recv(&b, 100, 0, 256);
	sge = (struct ibv_sge){ (uintptr_t)data, sizeof(data), 0xdeadbeef };
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
	ret = ibv_post_send(a.qp, &wr, &bad);
	E2E_CHECK(!ret, "inline post_send: %s", strerror(ret));
	memset(data, 0xee, sizeof(data));
	expect(&a, 1, IBV_WC_SEND, "inline send");
	expect(&b, 100, IBV_WC_RECV, "inline recv");
	E2E_CHECK(!memcmp(b.buf, orig, sizeof(orig)),
		  "receiver saw the overwritten bytes, not the posted ones");

	/* 2. RDMA WRITE inline, two pieces, bogus lkeys */
	{
		uint8_t p1[20], p2[30];
		struct ibv_sge sg2[2] = {
			{ (uintptr_t)p1, sizeof(p1), 0x1111 },
			{ (uintptr_t)p2, sizeof(p2), 0x2222 },
		};

		memset(p1, 0x5a, sizeof(p1));
		memset(p2, 0xa5, sizeof(p2));
		wr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = sg2,
			.num_sge = 2, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
		wr.wr.rdma.remote_addr = (uintptr_t)b.buf + 1024;
		wr.wr.rdma.rkey = b.mr->rkey;
		ret = ibv_post_send(a.qp, &wr, &bad);
		E2E_CHECK(!ret, "inline write: %s", strerror(ret));
		memset(p1, 0, sizeof(p1));
		memset(p2, 0, sizeof(p2));
		expect(&a, 2, IBV_WC_RDMA_WRITE, "inline write");
		for (int i = 0; i < 50; i++)
			E2E_CHECK(b.buf[1024 + i] == (i < 20 ? 0x5a : 0xa5),
				  "inline write byte %d is %#x", i,
				  b.buf[1024 + i]);
	}

	/* 3. too long for the QP: EINVAL, nothing posted */
	{
		uint8_t big[65] = { 0 };

		sge = (struct ibv_sge){ (uintptr_t)big, sizeof(big), 0 };
		wr = (struct ibv_send_wr){ .wr_id = 3, .sg_list = &sge,
			.num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
		ret = ibv_post_send(a.qp, &wr, &bad);
		E2E_CHECK(ret == EINVAL && bad == &wr,
			  "65 bytes inline on a 64-byte QP: %s",
			  strerror(ret));
	}

	/* 4. ibv_wr_set_inline_data */
	e2e_pattern(data, sizeof(data), 9);
	memcpy(orig, data, sizeof(data));
	post_recv(&b, 101, 512, 256);
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 4;
	a.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(a.qpx);
	ibv_wr_set_inline_data(a.qpx, data, sizeof(data));
	ret = ibv_wr_complete(a.qpx);
	E2E_CHECK(!ret, "ibv_wr_complete (inline): %s", strerror(ret));
	memset(data, 0, sizeof(data));
	expect(&a, 4, IBV_WC_SEND, "wr inline send");
	expect(&b, 101, IBV_WC_RECV, "wr inline recv");
	E2E_CHECK(!memcmp(b.buf + 512, orig, sizeof(orig)),
		  "wr inline: receiver saw other bytes");

	c1 = counters(&a);
	E2E_CHECK(c1.inline_wqes - c0.inline_wqes == 3,
		  "inline_wqes went up by %llu, expected 3",
		  (unsigned long long)(c1.inline_wqes - c0.inline_wqes));
	printf("inline: ok\n");
}

/* ---- wr ---- */

#define ALL_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_WRITE | \
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_READ | \
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static void run_wr(void)
{
	struct side a, b;
	struct pvrdmadv_counters c0, c1;
	struct ibv_wc wc;
	uint64_t *remote64, *local64;
	int ret;

	side_open(&a, "vmw_pvrdma0");
	side_open(&b, "vmw_pvrdma1");
	side_cq(&a, false);
	side_cq(&b, false);
	side_qp(&a, 0, ALL_RC_OPS);
	side_qp(&b, 0, 0);
	connect_pair(&a, &b);

	/* send, send_imm, write, write_imm in ONE batch: one doorbell */
	e2e_pattern(a.buf, 1024, 3);
	post_recv(&b, 200, 0, 256);
	post_recv(&b, 201, 256, 256);
	post_recv(&b, 202, 2048, 8);	/* consumed by write_imm */
	c0 = counters(&a);
	ibv_wr_start(a.qpx);
	a.qpx->wr_flags = IBV_SEND_SIGNALED;
	a.qpx->wr_id = 10;
	ibv_wr_send(a.qpx);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf, 100);
	a.qpx->wr_id = 11;
	ibv_wr_send_imm(a.qpx, htonl(0xabcd1234));
	{
		struct ibv_sge sg[2] = {
			{ (uintptr_t)a.buf + 100, 50, a.mr->lkey },
			{ (uintptr_t)a.buf + 150, 50, a.mr->lkey },
		};

		ibv_wr_set_sge_list(a.qpx, 2, sg);
	}
	a.qpx->wr_id = 12;
	ibv_wr_rdma_write(a.qpx, b.mr->rkey, (uintptr_t)b.buf + 1024);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf + 200, 300);
	a.qpx->wr_id = 13;
	ibv_wr_rdma_write_imm(a.qpx, b.mr->rkey, (uintptr_t)b.buf + 1324,
			      htonl(77));
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf + 500, 12);
	ret = ibv_wr_complete(a.qpx);
	E2E_CHECK(!ret, "ibv_wr_complete: %s", strerror(ret));
	c1 = counters(&a);
	E2E_CHECK(c1.db_qp_send - c0.db_qp_send == 1 &&
		  c1.send_wqes - c0.send_wqes == 4,
		  "a batch of 4 WRs rang %llu doorbells for %llu WQEs",
		  (unsigned long long)(c1.db_qp_send - c0.db_qp_send),
		  (unsigned long long)(c1.send_wqes - c0.send_wqes));
	expect(&a, 10, IBV_WC_SEND, "wr send");
	expect(&a, 11, IBV_WC_SEND, "wr send_imm");
	expect(&a, 12, IBV_WC_RDMA_WRITE, "wr write");
	expect(&a, 13, IBV_WC_RDMA_WRITE, "wr write_imm");
	e2e_poll_one(b.cq, &wc, "recv of send");
	E2E_CHECK(wc.wr_id == 200 && wc.byte_len == 100 &&
		  !(wc.wc_flags & IBV_WC_WITH_IMM), "recv of send");
	e2e_poll_one(b.cq, &wc, "recv of send_imm");
	E2E_CHECK(wc.wr_id == 201 && wc.byte_len == 100 &&
		  (wc.wc_flags & IBV_WC_WITH_IMM) &&
		  wc.imm_data == htonl(0xabcd1234), "recv of send_imm");
	e2e_poll_one(b.cq, &wc, "recv of write_imm");
	E2E_CHECK(wc.wr_id == 202 && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		  wc.imm_data == htonl(77) && wc.byte_len == 12,
		  "recv of write_imm: opcode %d len %u", wc.opcode,
		  wc.byte_len);
	E2E_CHECK(!memcmp(b.buf, a.buf, 100) &&
		  !memcmp(b.buf + 256, a.buf + 100, 100) &&
		  !memcmp(b.buf + 1024, a.buf + 200, 312),
		  "data of send/send_imm/write/write_imm differ");

	/* read */
	e2e_pattern(b.buf + 3000, 64, 11);
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 20;
	ibv_wr_rdma_read(a.qpx, b.mr->rkey, (uintptr_t)b.buf + 3000);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf + 3000, 64);
	E2E_CHECK(!ibv_wr_complete(a.qpx), "read complete");
	expect(&a, 20, IBV_WC_RDMA_READ, "wr read");
	E2E_CHECK(e2e_pattern_ok(a.buf + 3000, 64, 11), "read data");

	/* atomics */
	remote64 = (uint64_t *)(b.buf + 3584);
	local64 = (uint64_t *)(a.buf + 3584);
	*remote64 = 5;
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 30;
	ibv_wr_atomic_cmp_swp(a.qpx, b.mr->rkey, (uintptr_t)remote64, 5, 9);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)local64, 8);
	a.qpx->wr_id = 31;
	ibv_wr_atomic_fetch_add(a.qpx, b.mr->rkey, (uintptr_t)remote64, 3);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)(local64 + 1), 8);
	E2E_CHECK(!ibv_wr_complete(a.qpx), "atomics complete");
	expect(&a, 30, IBV_WC_COMP_SWAP, "cmp_swp");
	expect(&a, 31, IBV_WC_FETCH_ADD, "fetch_add");
	E2E_CHECK(local64[0] == 5 && local64[1] == 9 && *remote64 == 12,
		  "atomics: old %llu, %llu, now %llu",
		  (unsigned long long)local64[0],
		  (unsigned long long)local64[1],
		  (unsigned long long)*remote64);

	/* abort: nothing reaches the device */
	c0 = counters(&a);
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 40;
	ibv_wr_send(a.qpx);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf, 8);
	ibv_wr_abort(a.qpx);
	c1 = counters(&a);
	E2E_CHECK(c1.db_qp_send == c0.db_qp_send, "abort rang a doorbell");
	E2E_CHECK(e2e_poll_now(a.cq, &wc) == 0, "abort produced a completion");

	/* an error anywhere fails the whole batch */
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 41;
	ibv_wr_send(a.qpx);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf, 8);
	ibv_wr_send(a.qpx);
	{
		struct ibv_sge sg[3] = { 0 };

		ibv_wr_set_sge_list(a.qpx, 3, sg);	/* max_send_sge 2 */
	}
	ret = ibv_wr_complete(a.qpx);
	E2E_CHECK(ret == EINVAL, "batch with 3 SGEs: %s", strerror(ret));
	E2E_CHECK(counters(&a).db_qp_send == c0.db_qp_send,
		  "failed batch rang a doorbell");

	/* opcodes not in send_ops_flags are refused */
	ibv_destroy_qp(b.qp);
	side_qp(&b, 0, IBV_QP_EX_WITH_SEND);
	e2e_qp_to_init(b.qp, IBV_QPT_RC);
	ibv_wr_start(b.qpx);
	ibv_wr_rdma_write(b.qpx, 1, 0);
	ibv_wr_set_sge(b.qpx, b.mr->lkey, (uintptr_t)b.buf, 8);
	ret = ibv_wr_complete(b.qpx);
	E2E_CHECK(ret == EINVAL, "write on a send-only qp_ex: %s",
		  strerror(ret));
	printf("wr: ok\n");
}

/* ---- cq_ex ---- */

static void run_cq_ex(void)
{
	struct side a, b;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_init_attr_ex bad_attr = {
		.cqe = 4, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	int ret, n;

	side_open(&a, "vmw_pvrdma0");
	side_open(&b, "vmw_pvrdma1");
	errno = 0;
	E2E_CHECK(!ibv_create_cq_ex(a.dev.ctx, &bad_attr) &&
		  errno == EOPNOTSUPP,
		  "completion timestamps: %s", strerror(errno));
	bad_attr.wc_flags = IBV_WC_EX_WITH_FLOW_TAG;
	errno = 0;
	E2E_CHECK(!ibv_create_cq_ex(a.dev.ctx, &bad_attr) &&
		  errno == EOPNOTSUPP, "flow tag: %s", strerror(errno));
	side_cq(&a, true);
	side_cq(&b, true);
	side_qp(&a, 0, 0);
	side_qp(&b, 0, 0);
	connect_pair(&a, &b);

	ret = ibv_start_poll(b.cqx, &pa);
	E2E_CHECK(ret == ENOENT, "start_poll on an empty CQ: %d", ret);

	e2e_pattern(a.buf, 333, 5);
	post_recv(&b, 300, 0, 1024);
	post_recv(&b, 301, 1024, 1024);
	for (n = 0; n < 2; n++) {
		struct ibv_sge sge = { (uintptr_t)a.buf, 333, a.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 50 + n, .sg_list = &sge,
			.num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED,
			.imm_data = htonl(0x1000 + n) }, *bad;

		ret = ibv_post_send(a.qp, &wr, &bad);
		E2E_CHECK(!ret, "post_send: %s", strerror(ret));
	}

	/* sender side: two SEND completions */
	for (n = 0; n < 2;) {
		ret = ibv_start_poll(a.cqx, &pa);
		if (ret == ENOENT)
			continue;
		E2E_CHECK(!ret, "start_poll: %d", ret);
		do {
			E2E_CHECK(a.cqx->status == IBV_WC_SUCCESS &&
				  a.cqx->wr_id == (uint64_t)(50 + n) &&
				  ibv_wc_read_opcode(a.cqx) == IBV_WC_SEND &&
				  ibv_wc_read_qp_num(a.cqx) == a.qp->qp_num,
				  "send completion %d", n);
			n++;
		} while (n < 2 && !ibv_next_poll(a.cqx));
		ibv_end_poll(a.cqx);
	}

	/* receiver: every field */
	for (n = 0; n < 2;) {
		ret = ibv_start_poll(b.cqx, &pa);
		if (ret == ENOENT)
			continue;
		E2E_CHECK(!ret, "start_poll: %d", ret);
		do {
			unsigned int fl = ibv_wc_read_wc_flags(b.cqx);

			E2E_CHECK(b.cqx->status == IBV_WC_SUCCESS &&
				  b.cqx->wr_id == (uint64_t)(300 + n),
				  "recv %d: status %d wr_id %llu", n,
				  b.cqx->status,
				  (unsigned long long)b.cqx->wr_id);
			E2E_CHECK(ibv_wc_read_opcode(b.cqx) == IBV_WC_RECV,
				  "opcode");
			E2E_CHECK(ibv_wc_read_vendor_err(b.cqx) == 0,
				  "vendor_err");
			E2E_CHECK(ibv_wc_read_byte_len(b.cqx) == 333,
				  "byte_len %u", ibv_wc_read_byte_len(b.cqx));
			E2E_CHECK((fl & IBV_WC_WITH_IMM) &&
				  ibv_wc_read_imm_data(b.cqx) ==
				  htonl(0x1000 + n), "imm");
			E2E_CHECK(ibv_wc_read_qp_num(b.cqx) == b.qp->qp_num,
				  "qp_num");
			E2E_CHECK(ibv_wc_read_src_qp(b.cqx) == a.qp->qp_num ||
				  ibv_wc_read_src_qp(b.cqx) == 0,
				  "src_qp %u", ibv_wc_read_src_qp(b.cqx));
			/* RoCE: no LIDs, SL 0, no path bits */
			E2E_CHECK(ibv_wc_read_slid(b.cqx) == 0 &&
				  ibv_wc_read_sl(b.cqx) == 0 &&
				  ibv_wc_read_dlid_path_bits(b.cqx) == 0,
				  "slid/sl/dlid_path_bits");
			E2E_CHECK(e2e_pattern_ok(b.buf + 1024 * n, 333, 5),
				  "data %d", n);
			n++;
		} while (n < 2 && !ibv_next_poll(b.cqx));
		ibv_end_poll(b.cqx);
	}
	E2E_CHECK(ibv_start_poll(b.cqx, &pa) == ENOENT, "CQ not empty");
	printf("cq_ex: ok\n");
}

/* ---- td ---- */

static int allocs, frees;

static void *my_alloc(struct ibv_pd *pd, void *ctx, size_t size,
		      size_t align, uint64_t type)
{
	void *p = NULL;

	if ((type >> 32) != 10 || posix_memalign(&p, align, size))
		return NULL;
	__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
	return p;
}

static void my_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	__atomic_add_fetch(&frees, 1, __ATOMIC_RELAXED);
	free(ptr);
}

struct td_pair {
	struct side a, b;
	struct ibv_td *td_a, *td_b;
	pthread_t thread;
	int id;
};

#define TD_MSGS 2000

static void *td_traffic(void *arg)
{
	struct td_pair *p = arg;
	int i, posted_recv = 0;

	for (i = 0; i < DEPTH; i++)
		post_recv(&p->b, posted_recv++, 64 * (i % 32), 64);
	for (i = 0; i < TD_MSGS; i++) {
		struct ibv_sge sge = { (uintptr_t)p->a.buf + 64 * (i % 32), 64,
				       p->a.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge,
			.num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;
		int ret;

		e2e_pattern(p->a.buf + 64 * (i % 32), 64, i * 4 + p->id);
		ret = ibv_post_send(p->a.qp, &wr, &bad);
		E2E_CHECK(!ret, "td post_send: %s", strerror(ret));
		e2e_poll_one(p->a.cq, &wc, "td send");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i,
			  "td send %d", i);
		e2e_poll_one(p->b.cq, &wc, "td recv");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS &&
			  e2e_pattern_ok(p->b.buf + 64 * (wc.wr_id % 32), 64,
					 i * 4 + p->id),
			  "td recv %d: data", i);
		post_recv(&p->b, posted_recv, 64 * (posted_recv % 32), 64);
		posted_recv++;
	}
	return NULL;
}

static struct ibv_pd *parent(struct side *s, struct ibv_td **td)
{
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct ibv_pd *pd;

	*td = ibv_alloc_td(s->dev.ctx, &ta);
	E2E_CHECK(*td, "ibv_alloc_td: %s", strerror(errno));
	pa.pd = s->dev.pd;
	pa.td = *td;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	pa.alloc = my_alloc;
	pa.free = my_free;
	pd = ibv_alloc_parent_domain(s->dev.ctx, &pa);
	E2E_CHECK(pd, "ibv_alloc_parent_domain: %s", strerror(errno));
	return pd;
}

static void run_td(void)
{
	struct td_pair p[2];
	int i;

	/* one context per side and pair: its counters see only td objects */
	for (i = 0; i < 2; i++) {
		p[i].id = i;
		side_open(&p[i].a, "vmw_pvrdma0");
		side_open(&p[i].b, "vmw_pvrdma1");
		p[i].a.pd = parent(&p[i].a, &p[i].td_a);
		p[i].b.pd = parent(&p[i].b, &p[i].td_b);
		side_cq(&p[i].a, true);
		side_cq(&p[i].b, true);
		side_qp(&p[i].a, 0, 0);
		side_qp(&p[i].b, 0, 0);
		connect_pair(&p[i].a, &p[i].b);
	}
	E2E_CHECK(allocs >= 4 * 3, "custom allocator called %d times", allocs);
	for (i = 0; i < 2; i++)
		E2E_CHECK(!pthread_create(&p[i].thread, NULL, td_traffic,
					  &p[i]), "pthread_create");
	for (i = 0; i < 2; i++)
		pthread_join(p[i].thread, NULL);
	for (i = 0; i < 2; i++) {
		struct pvrdmadv_counters ca = counters(&p[i].a);
		struct pvrdmadv_counters cb = counters(&p[i].b);

		E2E_CHECK(ca.post_send == TD_MSGS && cb.cqes == TD_MSGS,
			  "td counters: %llu sends, %llu recv CQEs",
			  (unsigned long long)ca.post_send,
			  (unsigned long long)cb.cqes);
		E2E_CHECK(ca.lock_acquisitions == 0 &&
			  cb.lock_acquisitions == 0,
			  "thread-domain objects took %llu + %llu locks",
			  (unsigned long long)ca.lock_acquisitions,
			  (unsigned long long)cb.lock_acquisitions);
	}
	E2E_CHECK(ibv_dealloc_td(p[0].td_a) == EBUSY,
		  "dealloc of a td in use must be EBUSY");

	/* control: the same traffic without a thread domain locks */
	{
		struct td_pair q;

		memset(&q, 0, sizeof(q));
		q.id = 2;
		side_open(&q.a, "vmw_pvrdma0");
		side_open(&q.b, "vmw_pvrdma1");
		side_cq(&q.a, true);
		side_cq(&q.b, true);
		side_qp(&q.a, 0, 0);
		side_qp(&q.b, 0, 0);
		connect_pair(&q.a, &q.b);
		td_traffic(&q);
		E2E_CHECK(counters(&q.a).lock_acquisitions >= TD_MSGS,
			  "objects without a td took %llu locks",
			  (unsigned long long)
			  counters(&q.a).lock_acquisitions);
	}

	for (i = 0; i < 2; i++) {
		struct side *ss[2] = { &p[i].a, &p[i].b };
		struct ibv_td *tds[2] = { p[i].td_a, p[i].td_b };

		for (int k = 0; k < 2; k++) {
			E2E_CHECK(!ibv_destroy_qp(ss[k]->qp), "destroy qp");
			E2E_CHECK(!ibv_destroy_cq(ss[k]->cq), "destroy cq");
			E2E_CHECK(!ibv_dealloc_pd(ss[k]->pd), "dealloc parent");
			E2E_CHECK(!ibv_dealloc_td(tds[k]), "dealloc td");
		}
	}
	E2E_CHECK(frees == allocs, "custom allocator: %d allocs, %d frees",
		  allocs, frees);
	printf("td: ok\n");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s inline|wr|cq_ex|td\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "inline"))
		run_inline();
	else if (!strcmp(argv[1], "wr"))
		run_wr();
	else if (!strcmp(argv[1], "cq_ex"))
		run_cq_ex();
	else if (!strcmp(argv[1], "td"))
		run_td();
	else
		return 2;
	return 0;
}
