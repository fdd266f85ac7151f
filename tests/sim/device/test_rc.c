// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device engine with two RC QPs on one adapter, built by hand: rings in
 * malloc'ed memory, MRs in the table, WQEs written as the provider writes
 * them, doorbells rung through engine_doorbell(). Checks what a user sees:
 * CQEs and data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "fabric.h"
#include "link.h"
#include "ring.h"
#include "engine_harness.h"

static struct harness H;

static int setup(void **unused)
{
	harness_init(&H);
	harness_qp_pair(&H, IBV_QPT_RC);
	return 0;
}

static int teardown(void **unused)
{
	harness_fini(&H);
	return 0;
}

static void test_send_recv_imm(void **unused)
{
	struct pvrdma_cqe c;

	memset(H.buf_a, 0x5a, 100);
	post_recv(&H.b, 7, H.buf_b, 256, H.mr_b.lkey);
	post_send(&H.a, &(struct send_args){
		.wr_id = 1, .opcode = PVRDMA_WR_SEND_WITH_IMM,
		.addr = H.buf_a, .len = 100, .lkey = H.mr_a.lkey,
		.imm = 0x01020304, .flags = IBV_SEND_SIGNALED });

	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.wr_id, 1);
	assert_int_equal(c.opcode, PVRDMA_WC_SEND);
	assert_int_equal(c.qp, H.a.qp.qp_handle);

	poll_one(&H.b.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.wr_id, 7);
	assert_int_equal(c.opcode, PVRDMA_WC_RECV);
	assert_int_equal(c.byte_len, 100);
	assert_int_equal(c.imm_data, 0x01020304);
	assert_true(c.wc_flags & PVRDMA_WC_WITH_IMM);
	assert_int_equal(c.qp, H.b.qp.qp_handle);
	assert_int_equal(c.src_qp, H.a.qp.qpn);
	assert_memory_equal(H.buf_b, H.buf_a, 100);
	assert_int_equal(H.b.qp.attr.state, IBV_QPS_RTS);
}

static void test_unsignaled_has_no_cqe(void **unused)
{
	struct pvrdma_cqe c;

	post_send(&H.a, &(struct send_args){
		.wr_id = 1, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b, .rkey = H.mr_b.rkey });
	post_send(&H.a, &(struct send_args){
		.wr_id = 2, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b, .rkey = H.mr_b.rkey,
		.flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 2);
	assert_true(cq_empty(&H.a.cq));
}

static void test_rdma_write_and_write_imm(void **unused)
{
	struct pvrdma_cqe c;
	size_t i;

	for (i = 0; i < 4096; i++)
		H.buf_a[i] = i * 7;
	post_send(&H.a, &(struct send_args){
		.wr_id = 2, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 4096, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b + 100, .rkey = H.mr_b.rkey,
		.flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.opcode, PVRDMA_WC_RDMA_WRITE);
	assert_memory_equal(H.buf_b + 100, H.buf_a, 4096);
	assert_true(cq_empty(&H.b.cq));	/* a plain write is silent */

	/* With immediate: consumes a receive, byte_len = write length. */
	post_recv(&H.b, 9, H.buf_b, 16, H.mr_b.lkey);
	post_send(&H.a, &(struct send_args){
		.wr_id = 3, .opcode = PVRDMA_WR_RDMA_WRITE_WITH_IMM,
		.addr = H.buf_a, .len = 1000, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b + 5000, .rkey = H.mr_b.rkey,
		.imm = 0xabcd, .flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.wr_id, 9);
	assert_int_equal(c.opcode, PVRDMA_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(c.byte_len, 1000);
	assert_int_equal(c.imm_data, 0xabcd);
	assert_memory_equal(H.buf_b + 5000, H.buf_a, 1000);
}

static void test_rdma_read(void **unused)
{
	struct pvrdma_cqe c;

	memset(H.buf_b + 64, 0xc3, 512);
	memset(H.buf_a, 0, 512);
	post_send(&H.a, &(struct send_args){
		.wr_id = 4, .opcode = PVRDMA_WR_RDMA_READ,
		.addr = H.buf_a, .len = 512, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b + 64, .rkey = H.mr_b.rkey,
		.flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.opcode, PVRDMA_WC_RDMA_READ);
	assert_int_equal(c.byte_len, 512);
	assert_memory_equal(H.buf_a, H.buf_b + 64, 512);
}

static void test_atomics(void **unused)
{
	uint64_t *remote = (uint64_t *)(H.buf_b + 8);
	uint64_t *result = (uint64_t *)H.buf_a;
	struct pvrdma_cqe c;

	*remote = 40;
	post_send(&H.a, &(struct send_args){
		.wr_id = 5, .opcode = PVRDMA_WR_ATOMIC_FETCH_AND_ADD,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)remote, .rkey = H.mr_b.rkey,
		.compare_add = 2, .flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.opcode, PVRDMA_WC_FETCH_ADD);
	assert_int_equal(*result, 40);
	assert_int_equal(*remote, 42);

	post_send(&H.a, &(struct send_args){
		.wr_id = 6, .opcode = PVRDMA_WR_ATOMIC_CMP_AND_SWP,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)remote, .rkey = H.mr_b.rkey,
		.compare_add = 42, .swap = 1000, .flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.opcode, PVRDMA_WC_COMP_SWAP);
	assert_int_equal(*result, 42);
	assert_int_equal(*remote, 1000);

	/* Compare fails: memory unchanged, original value returned. */
	post_send(&H.a, &(struct send_args){
		.wr_id = 7, .opcode = PVRDMA_WR_ATOMIC_CMP_AND_SWP,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)remote, .rkey = H.mr_b.rkey,
		.compare_add = 1, .swap = 5, .flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(*result, 1000);
	assert_int_equal(*remote, 1000);
}

static void test_bad_rkey_errors_and_flushes(void **unused)
{
	struct pvrdma_cqe c;

	post_recv(&H.b, 11, H.buf_b, 64, H.mr_b.lkey);
	post_send(&H.a, &(struct send_args){
		.wr_id = 8, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 64, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b, .rkey = H.mr_b.rkey + 1000 });
	/* An error completes even an unsignaled WQE. */
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 8);
	assert_int_equal(c.status, PVRDMA_WC_REM_ACCESS_ERR);
	/* The responder went to error: its receive is flushed. */
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.wr_id, 11);
	assert_int_equal(c.status, PVRDMA_WC_WR_FLUSH_ERR);
	harness_lock(&H);
	assert_int_equal(H.a.qp.attr.state, IBV_QPS_ERR);
	assert_int_equal(H.b.qp.attr.state, IBV_QPS_ERR);
	harness_unlock(&H);

	/* A QP in error flushes what is posted afterwards. */
	post_send(&H.a, &(struct send_args){
		.wr_id = 12, .opcode = PVRDMA_WR_SEND,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 12);
	assert_int_equal(c.status, PVRDMA_WC_WR_FLUSH_ERR);
}

static void test_remote_write_needs_qp_access(void **unused)
{
	struct pvrdma_cqe c;

	harness_lock(&H);
	H.b.qp.attr.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	harness_unlock(&H);
	post_send(&H.a, &(struct send_args){
		.wr_id = 13, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 64, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b, .rkey = H.mr_b.rkey,
		.flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_REM_ACCESS_ERR);
}

static void test_local_errors(void **unused)
{
	struct pvrdma_cqe c;

	/* A bad lkey: local protection error. */
	post_send(&H.a, &(struct send_args){
		.wr_id = 14, .opcode = PVRDMA_WR_SEND,
		.addr = H.buf_a, .len = 8, .lkey = 0xdead });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 14);
	assert_int_equal(c.status, PVRDMA_WC_LOC_PROT_ERR);
	harness_lock(&H);
	assert_int_equal(H.a.qp.attr.state, IBV_QPS_ERR);
	harness_unlock(&H);
}

static void test_bad_opcode(void **unused)
{
	struct pvrdma_cqe c;

	post_send(&H.a, &(struct send_args){
		.wr_id = 15, .opcode = PVRDMA_WR_BIND_MW,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 15);
	assert_int_equal(c.status, PVRDMA_WC_LOC_QP_OP_ERR);
}

static void test_recv_too_small(void **unused)
{
	struct pvrdma_cqe c;

	post_recv(&H.b, 16, H.buf_b, 10, H.mr_b.lkey);
	post_send(&H.a, &(struct send_args){
		.wr_id = 17, .opcode = PVRDMA_WR_SEND,
		.addr = H.buf_a, .len = 100, .lkey = H.mr_a.lkey });
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.wr_id, 16);
	assert_int_equal(c.status, PVRDMA_WC_LOC_LEN_ERR);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 17);
	assert_int_equal(c.status, PVRDMA_WC_REM_INV_REQ_ERR);
}

static void test_rnr_then_recv_arrives(void **unused)
{
	struct pvrdma_cqe c;
	uint32_t head0 = __atomic_load_n(&H.a.qp.sq.state->cons_head,
					 __ATOMIC_ACQUIRE);

	/* No receive yet: the requester retries until one is posted. */
	harness_lock(&H);
	H.a.qp.attr.rnr_retry = 7;	/* infinite */
	harness_unlock(&H);
	post_send(&H.a, &(struct send_args){
		.wr_id = 18, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 32, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	wait_rnr_naks(&H, 2);
	assert_true(cq_empty(&H.a.cq));
	/* The device still reads the WQE's buffers at each resend, so its
	 * SQ slot is not handed back to the provider yet. */
	assert_int_equal(__atomic_load_n(&H.a.qp.sq.state->cons_head,
					 __ATOMIC_ACQUIRE), head0);
	post_recv(&H.b, 19, H.buf_b, 64, H.mr_b.lkey);
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.wr_id, 19);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.wr_id, 18);
	/* retired: the slot is the provider's again */
	assert_int_equal(__atomic_load_n(&H.a.qp.sq.state->cons_head,
					 __ATOMIC_ACQUIRE),
			 sim_ring_idx_next(head0, H.a.qp.sq.nelems));
}

static void test_rnr_retry_exceeded(void **unused)
{
	struct pvrdma_cqe c;

	harness_lock(&H);
	H.a.qp.attr.rnr_retry = 2;
	harness_unlock(&H);
	post_send(&H.a, &(struct send_args){
		.wr_id = 20, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 32, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	post_send(&H.a, &(struct send_args){
		.wr_id = 21, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 32, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 20);
	assert_int_equal(c.status, PVRDMA_WC_RNR_RETRY_EXC_ERR);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 21);
	assert_int_equal(c.status, PVRDMA_WC_WR_FLUSH_ERR);
}

static void test_unreachable_peer_retry_exceeded(void **unused)
{
	struct pvrdma_cqe c;

	harness_lock(&H);
	H.a.qp.attr.dest_qp_num = 0x777;	/* no such QP */
	H.a.qp.attr.retry_cnt = 1;
	H.a.qp.attr.timeout = 1;		/* the 1 ms floor */
	harness_unlock(&H);
	post_send(&H.a, &(struct send_args){
		.wr_id = 22, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b, .rkey = H.mr_b.rkey,
		.flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 22);
	assert_int_equal(c.status, PVRDMA_WC_RETRY_EXC_ERR);
}

/*
 * A peer no link leads to (its host went away): the request is lost
 * without a packet anywhere that would wake the device thread, which sleeps
 * with no timer armed. The timer the posting thread arms must reach that
 * sleep, or the WR never completes.
 */
static void test_lost_request_times_out_asleep(void **unused)
{
	struct pvrdma_cqe c;

	harness_lock(&H);
	H.a.qp.attr.ah_attr.grh.dgid.raw[15] = 0x99;	/* nobody's GID */
	H.a.qp.attr.retry_cnt = 1;
	H.a.qp.attr.timeout = 1;		/* the 1 ms floor */
	h_modify(&H, &H.a.qp, IBV_QPS_RESET);	/* connect it there */
	h_modify(&H, &H.a.qp, IBV_QPS_INIT);
	h_modify(&H, &H.a.qp, IBV_QPS_RTR);
	h_modify(&H, &H.a.qp, IBV_QPS_RTS);
	harness_unlock(&H);
	usleep(100000);		/* the device thread goes to sleep */
	post_send(&H.a, &(struct send_args){
		.wr_id = 23, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 8, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 23);
	assert_int_equal(c.status, PVRDMA_WC_RETRY_EXC_ERR);
}

static void test_many_in_flight_in_order(void **unused)
{
	struct pvrdma_cqe c;
	uint32_t i;

	for (i = 0; i < 12; i++)
		post_recv(&H.b, 100 + i, H.buf_b + 64 * i, 64, H.mr_b.lkey);
	for (i = 0; i < 12; i++) {
		H.buf_a[64 * i] = i;
		post_send(&H.a, &(struct send_args){
			.wr_id = 200 + i, .opcode = PVRDMA_WR_SEND,
			.addr = H.buf_a + 64 * i, .len = 64,
			.lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	}
	for (i = 0; i < 12; i++) {
		poll_one(&H.a.cq, &c);
		assert_int_equal(c.wr_id, 200 + i);
		assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
		poll_one(&H.b.cq, &c);
		assert_int_equal(c.wr_id, 100 + i);
		assert_int_equal(H.buf_b[64 * i], i);
	}
}

/*
 * Doorbells rung while the device is busy (dev->lock held) are queued and
 * run by the holder when it lets the lock go; runs of the same doorbell
 * popped together are one run. Every WQE they announced executes once, in
 * order, whatever other doorbells are queued between them.
 */
static void test_queued_doorbells_run_every_wqe(void **unused)
{
	struct pvrdma_cqe c;
	uint32_t i;

	harness_lock(&H);
	for (i = 0; i < 12; i++) {
		if (i % 4 == 0)
			post_recv(&H.b, 100 + i / 4, H.buf_b + 256 * (i / 4),
				  256, H.mr_b.lkey);
		H.buf_a[64 * i] = i;
		post_send(&H.a, &(struct send_args){
			.wr_id = 200 + i, .opcode = PVRDMA_WR_RDMA_WRITE,
			.addr = H.buf_a + 64 * i, .len = 64,
			.lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED,
			.raddr = (uintptr_t)H.buf_b + 4096 + 64 * i,
			.rkey = H.mr_b.rkey });
	}
	post_send(&H.a, &(struct send_args){
		.wr_id = 300, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 8, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	assert_true(cq_empty(&H.a.cq));
	harness_unlock(&H);

	for (i = 0; i < 12; i++) {
		poll_one(&H.a.cq, &c);
		assert_int_equal(c.wr_id, 200 + i);
		assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
		assert_int_equal(H.buf_b[4096 + 64 * i], i);
	}
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 300);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.wr_id, 100);
	assert_true(cq_empty(&H.a.cq));
}

/*
 * Requests arriving as a requester's resend would bring them, straight
 * into the responder (QP b, expecting PSN 1000 from a). Responses go to no
 * link: only the responder's side effects are checked.
 */
static void inject(uint8_t opcode, uint32_t psn, const void *payload,
		   uint32_t len, uint64_t raddr, uint64_t add)
{
	struct fab_hdr h = {
		.magic = FAB_MAGIC, .type = FAB_REQ, .opcode = opcode,
		.src_qpn = H.a.qp.qpn, .dst_qpn = H.b.qp.qpn, .psn = psn,
		.rkey = H.mr_b.rkey, .len = len, .remote_addr = raddr,
		.atomic_a = add,
	};
	struct fab_rx rx = { .mem = payload, .left = len };

	if (opcode == PVRDMA_WR_RDMA_READ) {
		h.len = 0;
		h.read_len = len;
		rx.left = 0;
	}
	harness_lock(&H);
	engine_rx(H.dev, NULL, &h, &rx);
	harness_unlock(&H);
}

/* A READ of len bytes at the start of QP b's buffer under rkey. */
static void inject_read_rkey(uint32_t psn, uint32_t rkey, uint32_t len)
{
	struct fab_hdr h = {
		.magic = FAB_MAGIC, .type = FAB_REQ,
		.opcode = PVRDMA_WR_RDMA_READ,
		.src_qpn = H.a.qp.qpn, .dst_qpn = H.b.qp.qpn, .psn = psn,
		.rkey = rkey, .read_len = len,
		.remote_addr = (uintptr_t)H.buf_b,
	};
	struct fab_rx rx = { 0 };

	harness_lock(&H);
	engine_rx(H.dev, NULL, &h, &rx);
	harness_unlock(&H);
}

/* A duplicate SEND is acknowledged, never delivered again; a duplicate
 * atomic answers with the result of its first execution, even when other
 * atomics executed after it. */
static void test_duplicates_execute_once(void **unused)
{
	uint64_t *remote = (uint64_t *)(H.buf_b + 1024);
	static const uint8_t msg[8] = "payload";
	struct pvrdma_cqe c;
	int round;

	post_recv(&H.b, 1, H.buf_b, 64, H.mr_b.lkey);
	post_recv(&H.b, 2, H.buf_b + 64, 64, H.mr_b.lkey);
	*remote = 0;
	for (round = 0; round < 3; round++) {
		/* the first round executes, the next two are resends */
		inject(PVRDMA_WR_SEND, 1000, msg, sizeof(msg), 0, 0);
		inject(PVRDMA_WR_ATOMIC_FETCH_AND_ADD, 1001, NULL, 0,
		       (uintptr_t)remote, 1);
		inject(PVRDMA_WR_RDMA_READ, 1002, NULL, 8,
		       (uintptr_t)H.buf_b + 512, 0);
		inject(PVRDMA_WR_ATOMIC_FETCH_AND_ADD, 1003, NULL, 0,
		       (uintptr_t)remote, 10);
	}
	assert_int_equal(*remote, 11);
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.wr_id, 1);
	assert_int_equal(c.byte_len, sizeof(msg));
	assert_true(cq_empty(&H.b.cq));
	assert_int_equal(H.b.qp.attr.state, IBV_QPS_RTS);

	/* the stream goes on where it was */
	inject(PVRDMA_WR_SEND, 1004, msg, sizeof(msg), 0, 0);
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.wr_id, 2);
	assert_true(cq_empty(&H.b.cq));
}

/*
 * Requests at old PSNs that the requester never sent (a stray or forged
 * packet: a READ no executed READ covers, with an rkey that fails; a
 * misaligned atomic) are dropped: the QP goes on. A resend of a READ
 * executed, or of its rest, is answered again.
 */
static void test_stray_old_requests_leave_the_qp(void **unused)
{
	static const uint8_t msg[8] = "payload";
	struct sim_stats *st = &H.dev->stats;
	unsigned long tx, stray;
	struct pvrdma_cqe c;

	post_recv(&H.b, 1, H.buf_b, 64, H.mr_b.lkey);
	inject(PVRDMA_WR_RDMA_READ, 1000, NULL, 2048,
	       (uintptr_t)H.buf_b + 1024, 0);
	tx = atomic_load(&st->bytes_tx);
	stray = atomic_load(&st->rx_stray_reads);
	/* the READ again, whole, and its rest from a later offset */
	inject(PVRDMA_WR_RDMA_READ, 1000, NULL, 2048,
	       (uintptr_t)H.buf_b + 1024, 0);
	inject(PVRDMA_WR_RDMA_READ, 1000, NULL, 1024,
	       (uintptr_t)H.buf_b + 2048, 0);
	assert_int_equal(atomic_load(&st->bytes_tx), tx + 2048 + 1024);
	/* PSNs no READ executed, a range past the READ's, a bad rkey */
	inject(PVRDMA_WR_RDMA_READ, 999, NULL, 8, (uintptr_t)H.buf_b, 0);
	inject(PVRDMA_WR_RDMA_READ, 1000, NULL, 2048,
	       (uintptr_t)H.buf_b + 2048, 0);
	inject_read_rkey(500, H.mr_b.rkey + 7, 64);
	inject(PVRDMA_WR_ATOMIC_FETCH_AND_ADD, 998, NULL, 0,
	       (uintptr_t)H.buf_b + 3, 1);
	assert_int_equal(atomic_load(&st->bytes_tx), tx + 2048 + 1024);
	assert_int_equal(atomic_load(&st->rx_stray_reads), stray + 3);
	assert_int_equal(H.b.qp.attr.state, IBV_QPS_RTS);

	inject(PVRDMA_WR_SEND, 1001, msg, sizeof(msg), 0, 0);
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	assert_int_equal(c.wr_id, 1);
}

/* A port that only watches what the responder sends it. */
static unsigned int watched_acks;

static void watch_rx(void *owner, struct fab_link *from,
		     const struct fab_hdr *hdr, struct fab_rx *rx)
{
	if (hdr->type == FAB_ACK)
		watched_acks++;
}

/*
 * A round that reads a long stream of WRITEs (as a TCP link delivers up to
 * a burst of large frames in one round) acknowledges them on the way, not
 * only at its end: the requester's ACK timer must not run out while the
 * responder is still reading.
 */
static void test_long_round_acks_on_the_way(void **unused)
{
	static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
	static const union ibv_gid watch_gid = {
		.raw = { 0xfe, 0x80, [15] = 5 } };
	static const unsigned int watch_gid_count = 1;
	static struct fab_port *watch;
	struct fab_link *to;
	struct pvrdma_cqe c;
	uint32_t i, n = 40;

	/* the adapter's engine is running: its port sends the ACKs */
	post_recv(&H.b, 1, H.buf_b, 64, H.mr_b.lkey);
	post_send(&H.a, &(struct send_args){
		.wr_id = 1, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 8, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	poll_one(&H.a.cq, &c);
	poll_one(&H.b.cq, &c);

	if (!watch)
		watch = fabric_open(&(struct fab_adapter){
			.index = 5, .gid = &watch_gid,
			.gid_count = &watch_gid_count, .lock = &watch_lock,
			.rx = watch_rx, .name = "watch" });
	assert_non_null(watch);
	to = fabric_resolve(watch, watch_gid.raw, 0);
	assert_non_null(to);

	/* a's next PSN after the SEND, as the responder expects it */
	harness_lock(&H);
	for (i = 0; i < n; i++) {
		struct fab_hdr h = {
			.magic = FAB_MAGIC, .type = FAB_REQ,
			.opcode = PVRDMA_WR_RDMA_WRITE,
			.src_qpn = H.a.qp.qpn, .dst_qpn = H.b.qp.qpn,
			.psn = 1001 + i, .rkey = H.mr_b.rkey, .len = H_BUF,
			.remote_addr = (uintptr_t)H.buf_b,
		};
		struct fab_rx rx = { .mem = H.buf_a, .left = H_BUF };

		engine_rx(H.dev, to, &h, &rx);
	}
	/* before the round ends: ACKs every ACK_COALESCE_MAX bytes */
	watched_acks = 0;
	while (fabric_poll(watch, 0))
		;
	harness_unlock(&H);
	assert_int_equal(watched_acks, n * H_BUF / (1u << 20));
}

/* An ACK frame for a's QP from the peer it sends to (a QP nobody has). */
static void ack_to_a(uint8_t kind, uint32_t psn)
{
	struct fab_hdr h = {
		.magic = FAB_MAGIC, .type = FAB_ACK, .opcode = kind,
		.src_qpn = 0x777, .dst_qpn = H.a.qp.qpn, .psn = psn,
	};
	struct fab_rx rx = { 0 };

	harness_lock(&H);
	engine_rx(H.dev, NULL, &h, &rx);
	harness_unlock(&H);
}

/*
 * The partial ACKs of a message still arriving restart its requester's
 * timer and complete nothing: a message that takes seven ACK timeouts to
 * cross, with no retry to spare, still completes once its last ACK comes.
 */
static void test_partial_acks_keep_a_long_request_alive(void **unused)
{
	struct pvrdma_cqe c;
	int i;

	harness_lock(&H);
	H.a.qp.attr.dest_qp_num = 0x777;	/* nobody answers by itself */
	H.a.qp.attr.retry_cnt = 0;
	H.a.qp.attr.timeout = 14;		/* 67 ms: room for a loaded machine */
	harness_unlock(&H);
	post_send(&H.a, &(struct send_args){
		.wr_id = 30, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b, .rkey = H.mr_b.rkey,
		.flags = IBV_SEND_SIGNALED });
	for (i = 0; i < 50; i++) {	/* 500 ms */
		usleep(10000);
		ack_to_a(FAB_ACK_PARTIAL, 1000);
		assert_true(cq_empty(&H.a.cq));
	}
	ack_to_a(FAB_ACK_DONE, 1000);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 30);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
}

struct payload_writer {
	int fd;
	const uint8_t *data;
	size_t len;
};

static void *write_payload(void *arg)
{
	struct payload_writer *w = arg;
	size_t off = 0;
	ssize_t n;

	while (off < w->len) {
		n = write(w->fd, w->data + off, w->len - off);
		if (n <= 0)
			break;
		off += n;
	}
	return NULL;
}

/*
 * A long WRITE arriving over a socket is acknowledged in parts as it is
 * read, a partial ACK per MiB but the last, then whole: the requester's
 * timer hears from the responder all along, as from the ACKs of the middle
 * packets on the wire.
 */
static void test_long_payload_acked_in_parts(void **unused)
{
	static struct fab_link link;	/* the responder may keep a pointer */
	const size_t len = (5u << 20) / 2;	/* 2.5 MiB */
	uint8_t *src = malloc(len), *dst = aligned_alloc(4096, len);
	struct sim_mr mr = H.mr_b;
	struct payload_writer w;
	struct fab_hdr h = {
		.magic = FAB_MAGIC, .type = FAB_REQ,
		.opcode = PVRDMA_WR_RDMA_WRITE,
		.src_qpn = H.a.qp.qpn, .dst_qpn = H.b.qp.qpn, .psn = 1000,
		.rkey = 0x3001, .len = len,
	};
	struct fab_rx rx = { .left = len };
	unsigned int partial = 0, done = 0;
	struct fab_hdr ack;
	pthread_t writer;
	int sv[2], i;
	size_t k;

	assert_non_null(src);
	assert_non_null(dst);
	for (k = 0; k < len; k++)
		src[k] = (uint8_t)(k * 7 + 1);
	memset(dst, 0, len);
	mr.addr = mr.iova = (uintptr_t)dst;
	mr.length = len;
	mr.lkey = mr.handle = 0x3000;
	mr.rkey = 0x3001;
	h.remote_addr = (uintptr_t)dst;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(&link, 0, sizeof(link));
	link.kind = LINK_SOCK;
	link.fd = sv[0];
	rx.link = &link;
	w = (struct payload_writer){ .fd = sv[1], .data = src, .len = len };
	assert_int_equal(pthread_create(&writer, NULL, write_payload, &w), 0);

	harness_lock(&H);
	sim_table_put(&H.dev->mrs, mr.handle, &mr);
	engine_rx(H.dev, &link, &h, &rx);
	sim_table_del(&H.dev->mrs, mr.handle);
	harness_unlock(&H);
	pthread_join(writer, NULL);
	assert_memory_equal(dst, src, len);

	/* what the responder answered, in order */
	shutdown(sv[0], SHUT_WR);
	while (read(sv[1], &ack, sizeof(ack)) == sizeof(ack)) {
		assert_int_equal(ack.type, FAB_ACK);
		assert_int_equal(ack.psn, 1000);
		if (ack.opcode == FAB_ACK_PARTIAL) {
			assert_int_equal(done, 0);
			partial++;
		} else {
			done++;
		}
	}
	assert_int_equal(partial, 2);
	assert_int_equal(done, 1);
	for (i = 0; i < 2; i++)
		close(sv[i]);
	free(src);
	free(dst);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_send_recv_imm),
		T(test_long_round_acks_on_the_way),
		T(test_unsignaled_has_no_cqe),
		T(test_rdma_write_and_write_imm),
		T(test_rdma_read),
		T(test_atomics),
		T(test_bad_rkey_errors_and_flushes),
		T(test_remote_write_needs_qp_access),
		T(test_local_errors),
		T(test_bad_opcode),
		T(test_recv_too_small),
		T(test_rnr_then_recv_arrives),
		T(test_rnr_retry_exceeded),
		T(test_unreachable_peer_retry_exceeded),
		T(test_lost_request_times_out_asleep),
		T(test_many_in_flight_in_order),
		T(test_duplicates_execute_once),
	T(test_stray_old_requests_leave_the_qp),
		T(test_queued_doorbells_run_every_wqe),
		T(test_partial_acks_keep_a_long_request_alive),
		T(test_long_payload_acked_in_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
