// SPDX-License-Identifier: BSD-2-Clause
/*
 * libpvrdma's extensions against in-memory queues: the ibv_wr_* builders
 * (one doorbell per batch, nothing on abort or error), inline data through
 * bounce slots, thread-domain locks that are never taken, extended CQ
 * polling, and the attribute checks of create_cq_ex / create_qp_ex /
 * parent domains.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <arpa/inet.h>

#include <infiniband/pvrdmadv.h>

#include "fake_queues.h"

#define ALL_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_WRITE | \
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_READ | \
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct pvrdma_sq_wqe_hdr *sq_hdr(struct fake_qp *f, uint32_t slot)
{
	return (struct pvrdma_sq_wqe_hdr *)fake_sq_wqe(f, slot);
}

static struct pvrdma_sge *sq_sge(struct fake_qp *f, uint32_t slot)
{
	return (struct pvrdma_sge *)(sq_hdr(f, slot) + 1);
}

static struct fake_qp *ex_qp(uint32_t cnt, uint64_t ops)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, cnt, 2);

	pvrdma_qp_ex_init_ops(&f->qp, ops);
	return f;
}

static void test_wr_batch_one_doorbell(void **state)
{
	struct fake_qp *f = ex_qp(8, ALL_RC_OPS);
	struct ibv_qp_ex *x = &f->qp.vqp.qp_ex;
	struct ibv_sge sg[2] = { { 0x1000, 10, 1 }, { 0x2000, 20, 2 } };

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 7, 0x3000, 30);
	x->wr_id = 2;
	ibv_wr_send_imm(x, htonl(5));
	ibv_wr_set_sge_list(x, 2, sg);
	x->wr_id = 3;
	ibv_wr_rdma_write_imm(x, 0x99, 0xabc, htonl(6));
	ibv_wr_set_sge(x, 7, 0x3000, 1);
	x->wr_id = 4;
	ibv_wr_rdma_read(x, 0x98, 0xdef);
	ibv_wr_set_sge(x, 7, 0x3000, 1);
	x->wr_id = 5;
	ibv_wr_atomic_cmp_swp(x, 0x97, 0x10, 3, 4);
	ibv_wr_set_sge(x, 7, 0x3000, 8);
	x->wr_id = 6;
	ibv_wr_atomic_fetch_add(x, 0x96, 0x18, 9);
	ibv_wr_set_sge(x, 7, 0x3000, 8);
	x->wr_id = 7;
	ibv_wr_rdma_write(x, 0x95, 0x20);
	ibv_wr_set_sge(x, 7, 0x3000, 8);
	/* nothing visible before complete */
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(ibv_wr_complete(x), 0);
	assert_int_equal(f->rs.tx.prod_tail, 7);
	assert_int_equal(f->doorbell, 0x42 | PVRDMA_DB_QP_SEND);
	assert_int_equal(fake_wq_stats(&f->qp.sq).posts, 1);
	assert_int_equal(fake_wq_stats(&f->qp.sq).wqes, 7);

	assert_int_equal(sq_hdr(f, 0)->opcode, PVRDMA_WR_SEND);
	assert_int_equal(sq_hdr(f, 0)->wr_id, 1);
	assert_int_equal(sq_hdr(f, 0)->send_flags, IBV_SEND_SIGNALED);
	assert_int_equal(sq_hdr(f, 0)->num_sge, 1);
	assert_int_equal(sq_sge(f, 0)->addr, 0x3000);
	assert_int_equal(sq_hdr(f, 1)->opcode, PVRDMA_WR_SEND_WITH_IMM);
	assert_int_equal(sq_hdr(f, 1)->ex.imm_data, htonl(5));
	assert_int_equal(sq_hdr(f, 1)->num_sge, 2);
	assert_int_equal(sq_sge(f, 1)[1].lkey, 2);
	assert_int_equal(sq_hdr(f, 2)->opcode, PVRDMA_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(sq_hdr(f, 2)->wr.rdma.rkey, 0x99);
	assert_int_equal(sq_hdr(f, 2)->wr.rdma.remote_addr, 0xabc);
	assert_int_equal(sq_hdr(f, 3)->opcode, PVRDMA_WR_RDMA_READ);
	assert_int_equal(sq_hdr(f, 4)->opcode, PVRDMA_WR_ATOMIC_CMP_AND_SWP);
	assert_int_equal(sq_hdr(f, 4)->wr.atomic.compare_add, 3);
	assert_int_equal(sq_hdr(f, 4)->wr.atomic.swap, 4);
	assert_int_equal(sq_hdr(f, 5)->opcode, PVRDMA_WR_ATOMIC_FETCH_AND_ADD);
	assert_int_equal(sq_hdr(f, 5)->wr.atomic.compare_add, 9);
	assert_int_equal(sq_hdr(f, 6)->opcode, PVRDMA_WR_RDMA_WRITE);
	fake_qp_free(f);
}

static void test_wr_abort_and_errors(void **state)
{
	struct fake_qp *f = ex_qp(4, IBV_QP_EX_WITH_SEND);
	struct ibv_qp_ex *x = &f->qp.vqp.qp_ex;
	struct ibv_sge sg[3] = { { 0 } };
	int i;

	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	ibv_wr_abort(x);
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->doorbell, 0);

	/* opcode not in send_ops_flags */
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 1, 2);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	/* too many SGEs (max_sge 2): the whole batch fails */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 3, sg);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	/* inline on a QP without inline room */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, sg, 4);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	/* ring full: 5 WRs on 4 slots */
	ibv_wr_start(x);
	for (i = 0; i < 5; i++) {
		ibv_wr_send(x);
		ibv_wr_set_sge(x, 1, 2, 3);
	}
	assert_int_equal(ibv_wr_complete(x), ENOMEM);
	/* before RTS */
	f->qp.ibv_qp.state = IBV_QPS_RTR;
	ibv_wr_start(x);
	ibv_wr_send(x);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(fake_wq_stats(&f->qp.sq).posts, 0);
	fake_qp_free(f);
}

/* Inline: the data is in the slot, the user's buffer and lkey are not
 * referenced, and the user may scribble right after the post. */
static void test_inline_bounce(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 2);
	uint8_t slots[4 * 64], a[10], b[6];
	struct ibv_sge sg[2] = { { (uintptr_t)a, 10, 0xbad },
				 { (uintptr_t)b, 6, 0xbad } };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sg, .num_sge = 2,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE }, *bad;
	struct pvrdma_sge *sge;

	f->qp.max_inline_data = 64;
	f->qp.inl.slots = slots;
	f->qp.inl.slot_shift = 6;
	f->qp.inl.lkey = 0x77;
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	fake_sq_advance(f, 2);				/* slot 2 */
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad), 0);
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	sge = sq_sge(f, 2);
	assert_int_equal(sq_hdr(f, 2)->num_sge, 1);
	assert_int_equal(sq_hdr(f, 2)->send_flags & IBV_SEND_INLINE, 0);
	assert_ptr_equal((void *)(uintptr_t)sge->addr, slots + 2 * 64);
	assert_int_equal(sge->length, 16);
	assert_int_equal(sge->lkey, 0x77);
	assert_memory_equal(slots + 128, "aaaaaaaaaabbbbbb", 16);
	assert_int_equal(fake_wq_stats(&f->qp.sq).inline_wqes, 1);

	/* too long, or inline on a read: EINVAL */
	sg[0].length = 60;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad), EINVAL);
	sg[0].length = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad), EINVAL);

	/* the wr_* form, into the slot of the next WQE (slot 3) */
	pvrdma_qp_ex_init_ops(&f->qp, IBV_QP_EX_WITH_SEND);
	memset(a, 'z', sizeof(a));
	ibv_wr_start(&f->qp.vqp.qp_ex);
	ibv_wr_send(&f->qp.vqp.qp_ex);
	ibv_wr_set_inline_data(&f->qp.vqp.qp_ex, a, 10);
	assert_int_equal(ibv_wr_complete(&f->qp.vqp.qp_ex), 0);
	assert_ptr_equal((void *)(uintptr_t)sq_sge(f, 3)->addr,
			 slots + 3 * 64);
	assert_memory_equal(slots + 192, "zzzzzzzzzz", 10);
	fake_qp_free(f);
}

/* Thread domain: the lock is a no-op, the general case counts takes. */
static void test_thread_domain_takes_no_lock(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 8, 1);
	struct ibv_sge sge = { 0x1000, 8, 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad),
				 0);
	assert_int_equal(fake_wq_stats(&f->qp.sq).lock_acquisitions, 3);

	fake_qp_free(f);

	f = fake_qp_new(IBV_QPT_RC, 8, 1);
	fake_qp_single_thread(f);
	/* a spinlock held elsewhere would hang a locking post */
	pvrdma_spin_lock(&f->qp.sq.lock);
	for (i = 0; i < 3; i++)
		assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad),
				 0);
	pvrdma_spin_unlock(&f->qp.sq.lock);
	assert_int_equal(fake_wq_stats(&f->qp.sq).lock_acquisitions, 0);
	assert_int_equal(fake_wq_stats(&f->qp.sq).wqes, 3);
	assert_int_equal(fake_wq_stats(&f->qp.sq).posts, 3);
	fake_qp_free(f);
}

/* ---- extended CQ on an in-memory ring ---- */

#define NCQE 8

struct fake_cqx {
	struct pvrdma_context ctx;
	struct pvrdma_cq cq;
	struct pvrdma_ring_state rs;
	struct pvrdma_cqe cqes[NCQE];
	struct pvrdma_qp *table[16];
	struct pvrdma_qp qp;
	uint32_t doorbell;
};

static struct fake_cqx *fake_cqx_new(void)
{
	struct fake_cqx *f = pvrdma_calloc_aligned(_Alignof(struct fake_cqx),
						   sizeof(*f));

	f->ctx.qp_table = (struct pvrdma_qp *_Atomic *)f->table;
	f->ctx.qp_table_mask = 15;
	pthread_mutex_init(&f->ctx.qp_table_lock, NULL);
	f->cq.ring = &f->rs.rx;
	f->cq.cqes = f->cqes;
	f->cq.cqe_cnt = NCQE;
	f->cq.idx_mask = 2 * NCQE - 1;
	f->cq.cqn = 5;
	f->cq.doorbell = &f->doorbell;
	f->cq.ctx = &f->ctx;
	pvrdma_lock_init(&f->cq.lock, false);
	pvrdma_cq_init_fast(&f->cq);
	f->qp.qp_handle = 3;
	f->qp.ibv_qp.qp_num = 0x300;
	assert_int_equal(pvrdma_qp_table_add(&f->ctx, &f->qp), 0);
	pvrdma_cq_ex_init_ops(&f->cq, IBV_WC_EX_WITH_BYTE_LEN |
			      IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			      IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID |
			      IBV_WC_EX_WITH_SL |
			      IBV_WC_EX_WITH_DLID_PATH_BITS);
	return f;
}

static void test_cq_ex_poll(void **state)
{
	struct fake_cqx *f = fake_cqx_new();
	struct ibv_cq_ex *x = &f->cq.ibv_cq_ex;
	struct ibv_poll_cq_attr attr = { 0 };
	int i;

	assert_int_equal(ibv_start_poll(x, &attr), ENOENT);
	/* ENOENT let go of the lock: taking it again must not hang */
	assert_false(f->cq.lock.single_thread);
	pvrdma_spin_lock(&f->cq.lock);
	pvrdma_spin_unlock(&f->cq.lock);

	for (i = 0; i < 2; i++)
		f->cqes[i] = (struct pvrdma_cqe) {
			.wr_id = 10 + i, .qp = 3,
			.opcode = PVRDMA_WC_RECV_RDMA_WITH_IMM,
			.status = i ? PVRDMA_WC_REM_ACCESS_ERR :
				      PVRDMA_WC_SUCCESS,
			.byte_len = 100 + i, .imm_data = htonl(7),
			.src_qp = 0x55, .wc_flags = PVRDMA_WC_WITH_IMM,
			.slid = 9, .sl = 2, .dlid_path_bits = 1,
			.vendor_err = i * 3,
		};
	f->rs.rx.prod_tail = 2;
	assert_int_equal(ibv_start_poll(x, &attr), 0);
	assert_int_equal(x->wr_id, 10);
	assert_int_equal(x->status, IBV_WC_SUCCESS);
	assert_int_equal(ibv_wc_read_opcode(x), IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(ibv_wc_read_byte_len(x), 100);
	assert_int_equal(ibv_wc_read_imm_data(x), htonl(7));
	assert_int_equal(ibv_wc_read_qp_num(x), 0x300);
	assert_int_equal(ibv_wc_read_src_qp(x), 0x55);
	assert_int_equal(ibv_wc_read_wc_flags(x), IBV_WC_WITH_IMM);
	assert_int_equal(ibv_wc_read_slid(x), 9);
	assert_int_equal(ibv_wc_read_sl(x), 2);
	assert_int_equal(ibv_wc_read_dlid_path_bits(x), 1);
	assert_int_equal(ibv_wc_read_vendor_err(x), 0);
	assert_int_equal(ibv_next_poll(x), 0);
	assert_int_equal(x->wr_id, 11);
	assert_int_equal(x->status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(ibv_wc_read_vendor_err(x), 3);
	/* the consumer index moves at end_poll only */
	assert_int_equal(f->rs.rx.cons_head, 0);
	assert_int_equal(ibv_next_poll(x), ENOENT);
	ibv_end_poll(x);
	assert_int_equal(f->rs.rx.cons_head, 2);
	assert_int_equal(ibv_start_poll(x, &attr), ENOENT);
	assert_int_equal(fake_cq_stats(&f->cq).cqes, 2);
	assert_int_equal(fake_cq_stats(&f->cq).polls, 3);
	pvrdma_lock_destroy(&f->cq.lock);
	pthread_mutex_destroy(&f->ctx.qp_table_lock);
	free(f);
}

static void test_cq_ex_refuses_what_device_lacks(void **state)
{
	uint64_t bad[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG,
		IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_cq_init_attr_ex a = { .cqe = 4 };
	size_t i;

	a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
		     IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
		     IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
		     IBV_WC_EX_WITH_DLID_PATH_BITS;
	assert_int_equal(pvrdma_cq_ex_check(&a), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a.wc_flags = bad[i];
		assert_int_equal(pvrdma_cq_ex_check(&a), EOPNOTSUPP);
	}
	a.wc_flags = 0;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	assert_int_equal(pvrdma_cq_ex_check(&a), EOPNOTSUPP);
}

static void test_qp_ex_ops_by_type(void **state)
{
	struct pvrdma_context ctx = { .limits.atomic_cap = IBV_ATOMIC_HCA };

	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_RC,
						ALL_RC_OPS), 0);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_RC,
						IBV_QP_EX_WITH_BIND_MW),
			 EOPNOTSUPP);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_RC,
						IBV_QP_EX_WITH_TSO),
			 EOPNOTSUPP);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_UD,
						IBV_QP_EX_WITH_SEND |
						IBV_QP_EX_WITH_SEND_WITH_IMM),
			 0);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_UD,
						IBV_QP_EX_WITH_RDMA_WRITE),
			 EOPNOTSUPP);
	ctx.limits.atomic_cap = IBV_ATOMIC_NONE;
	assert_int_equal(pvrdma_qp_ex_check_ops(
				 &ctx, IBV_QPT_RC,
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD),
			 EOPNOTSUPP);
}

static void test_parent_domain_checks(void **state)
{
	struct pvrdma_context ctx = {};
	struct ibv_context *ibctx = &ctx.vctx.context;
	struct pvrdma_pd pd = { .ibv_pd = { .context = ibctx, .handle = 7 },
				.pdn = 3 };
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr a = { .pd = &pd.ibv_pd };
	struct ibv_td *td = pvrdma_alloc_td(ibctx, &ta);
	struct ibv_pd *p;

	assert_non_null(td);
	a.td = td;
	a.comp_mask = 1u << 7;
	errno = 0;
	assert_null(pvrdma_alloc_parent_domain(ibctx, &a));
	assert_int_equal(errno, EOPNOTSUPP);
	a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;	/* no fns */
	a.alloc = NULL;
	a.free = (void *)free;
	errno = 0;
	assert_null(pvrdma_alloc_parent_domain(ibctx, &a));
	assert_int_equal(errno, EINVAL);
	a.comp_mask = 0;
	p = pvrdma_alloc_parent_domain(ibctx, &a);
	assert_non_null(p);
	/* commands and AHs see the protection domain */
	assert_int_equal(p->handle, 7);
	assert_int_equal(to_ppd(p)->pdn, 3);
	assert_ptr_equal(pvrdma_pd_td(p), to_ptd(td));
	assert_ptr_equal(pvrdma_pd_protection(p), &pd);
	assert_null(pvrdma_pd_td(&pd.ibv_pd));
	/* no parent of a parent */
	a.pd = p;
	errno = 0;
	assert_null(pvrdma_alloc_parent_domain(ibctx, &a));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pvrdma_dealloc_td(td), EBUSY);
	assert_int_equal(pvrdma_dealloc_pd(p), 0);
	assert_int_equal(pvrdma_dealloc_td(td), 0);
}

static void *pd_test_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			size_t alignment, uint64_t resource_type)
{
	(void)pd;
	(void)pd_context;
	(void)resource_type;
	return aligned_alloc(alignment, size);
}

static void pd_test_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		      uint64_t resource_type)
{
	(void)pd;
	(void)pd_context;
	(void)resource_type;
	free(ptr);
}

/* A PD or parent domain still in use is EBUSY: the parent domain's free()
 * is what gives the ring buffers back at destroy, and a parent domain
 * names its PD to the kernel by handle. */
static void test_parent_domain_busy(void **state)
{
	struct pvrdma_context ctx = {};
	struct ibv_context *ibctx = &ctx.vctx.context;
	struct pvrdma_pd pd = { .ibv_pd = { .context = ibctx, .handle = 7 } };
	struct ibv_parent_domain_init_attr a = {
		.pd = &pd.ibv_pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
		.alloc = pd_test_alloc,
		.free = pd_test_free,
	};
	struct pvrdma_buf buf = {};
	struct ibv_pd *p;

	(void)state;
	p = pvrdma_alloc_parent_domain(ibctx, &a);
	assert_non_null(p);
	/* the PD it wraps cannot go first (checked before any command) */
	assert_int_equal(pvrdma_dealloc_pd(&pd.ibv_pd), EBUSY);
	assert_int_equal(pvrdma_buf_alloc(&buf, to_ppd(p), 8192, 4096,
					  PVRDMADV_RES_TYPE_CQ), 0);
	assert_ptr_equal(buf.custom, to_ppd(p));
	assert_int_equal(pvrdma_dealloc_pd(p), EBUSY);
	pvrdma_buf_free(&buf);
	assert_int_equal(pvrdma_dealloc_pd(p), 0);
	assert_int_equal(pd.refs, 0);	/* ordinary PD free to go */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wr_batch_one_doorbell),
		cmocka_unit_test(test_wr_abort_and_errors),
		cmocka_unit_test(test_inline_bounce),
		cmocka_unit_test(test_thread_domain_takes_no_lock),
		cmocka_unit_test(test_cq_ex_poll),
		cmocka_unit_test(test_cq_ex_refuses_what_device_lacks),
		cmocka_unit_test(test_qp_ex_ops_by_type),
		cmocka_unit_test(test_parent_domain_checks),
		cmocka_unit_test(test_parent_domain_busy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
