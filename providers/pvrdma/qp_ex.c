// SPDX-License-Identifier: BSD-2-Clause
/*
 * Extended QPs (ibv_create_qp_ex with send_ops_flags): the ibv_wr_*
 * builders.
 *
 * wr_start takes the SQ lock (none under a thread domain) and keeps it to
 * wr_complete or wr_abort. Each opcode builder opens the next WQE slot and
 * writes its header; the set_* calls that follow fill its address vector
 * and data. Nothing reaches the device before wr_complete, which publishes
 * the whole batch with one producer-index store and ONE doorbell. An error
 * in the batch (ring full, bad SGE count, inline data too long, opcode not
 * in send_ops_flags, missing UD address) makes wr_complete post nothing and
 * return the errno; wr_abort drops the batch.
 */
#include <errno.h>
#include <string.h>

#include "pvrdma.h"

#define PVRDMA_WR_FLAGS_OK (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			    IBV_SEND_SOLICITED | IBV_SEND_INLINE)

#define PVRDMA_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		       IBV_QP_EX_WITH_RDMA_WRITE | \
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		       IBV_QP_EX_WITH_RDMA_READ)
#define PVRDMA_ATOMIC_OPS (IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
#define PVRDMA_UD_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

/* builders write a header (and the opcode's fields) there, no SGE */
_Static_assert(sizeof(((struct pvrdma_qp *)0)->scratch) >=
	       sizeof(struct pvrdma_sq_wqe_hdr), "scratch WQE");

int pvrdma_qp_ex_check_ops(const struct pvrdma_context *ctx,
			   enum ibv_qp_type type, uint64_t ops)
{
	uint64_t ok;

	switch (type) {
	case IBV_QPT_RC:
		ok = PVRDMA_RC_OPS;
		if (ctx->limits.atomic_cap != IBV_ATOMIC_NONE)
			ok |= PVRDMA_ATOMIC_OPS;
		break;
	case IBV_QPT_UD:
		ok = PVRDMA_UD_OPS;
		break;
	default:
		return 0;	/* the QP type check answers */
	}
	return ops & ~ok ? EOPNOTSUPP : 0;
}

static inline struct pvrdma_sge *wqe_sges(struct pvrdma_sq_wqe_hdr *hdr)
{
	return (struct pvrdma_sge *)(hdr + 1);
}

static void batch_fail(struct pvrdma_qp *qp, int err)
{
	struct pvrdma_wr_batch *b = &qp->batch;

	if (!b->err)
		b->err = err;
	/* keep the builders writing somewhere harmless */
	b->cur = (struct pvrdma_sq_wqe_hdr *)qp->scratch;
}

/* The WQE the set_* calls fill, or NULL: batch failed, or no opcode
 * builder was called first (then the batch fails). */
static struct pvrdma_sq_wqe_hdr *wr_cur(struct pvrdma_qp *qp)
{
	if (qp->batch.err)
		return NULL;
	if (qp->batch.cur == (struct pvrdma_sq_wqe_hdr *)qp->scratch) {
		batch_fail(qp, EINVAL);
		return NULL;
	}
	return qp->batch.cur;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct pvrdma_qp *qp = qpx_to_pqp(qpx);
	struct pvrdma_wq *sq = &qp->sq;
	struct pvrdma_wr_batch *b = &qp->batch;

	pvrdma_wq_lock(sq);
	b->prod = sq->prod;
	b->wqes = 0;
	b->err = 0;
	b->need_ud_addr = false;
	b->cur = (struct pvrdma_sq_wqe_hdr *)qp->scratch;
	if ((unsigned int)qp->ibv_qp.state < IBV_QPS_RTS)
		batch_fail(qp, EINVAL);	/* as post_send before RTS */
}

/* Opens the next WQE: checks what the previous one left undone, room,
 * the opcode and flags; writes a clean header. */
static struct pvrdma_sq_wqe_hdr *wr_open(struct pvrdma_qp *qp,
					 enum ibv_wr_opcode op,
					 uint64_t op_flag)
{
	struct pvrdma_wq *sq = &qp->sq;
	struct pvrdma_wr_batch *b = &qp->batch;
	struct pvrdma_sq_wqe_hdr *hdr;
	unsigned int flags = qp->vqp.qp_ex.wr_flags;

	if (b->need_ud_addr)
		batch_fail(qp, EINVAL);	/* the previous UD WR had no AH */
	if (b->wqes)
		b->prod++;
	b->wqes++;
	if (b->err)
		return b->cur;
	if (!(qp->send_ops_flags & op_flag) ||
	    pvrdma_check_wr_opcode(qp, op) || (flags & ~PVRDMA_WR_FLAGS_OK)) {
		batch_fail(qp, EINVAL);
		return b->cur;
	}
	if (b->prod == sq->room_end) {
		int ret = pvrdma_wq_refill(sq, b->prod);

		if (ret) {
			batch_fail(qp, ret);	/* ENOMEM, or EIO */
			return b->cur;
		}
	}
	b->cur_slot = (uint32_t)b->prod & (sq->wqe_cnt - 1);
	hdr = (struct pvrdma_sq_wqe_hdr *)(sq->wqes +
					   ((size_t)b->cur_slot <<
					    sq->wqe_shift));
	*hdr = (struct pvrdma_sq_wqe_hdr) {
		.wr_id = qp->vqp.qp_ex.wr_id,
		.opcode = pvrdma_wr_opcode_to_dev[op],
		.send_flags = flags & ~IBV_SEND_INLINE,
	};
	b->cur = hdr;
	b->need_ud_addr = qp->ibv_qp.qp_type == IBV_QPT_UD;
	return hdr;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_open(qpx_to_pqp(qpx), IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct pvrdma_sq_wqe_hdr *h = wr_open(qpx_to_pqp(qpx),
					      IBV_WR_SEND_WITH_IMM,
					      IBV_QP_EX_WITH_SEND_WITH_IMM);

	h->ex.imm_data = imm;
}

static void wr_rdma(struct pvrdma_sq_wqe_hdr *h, uint32_t rkey,
		    uint64_t addr)
{
	h->wr.rdma.remote_addr = addr;
	h->wr.rdma.rkey = rkey;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t addr)
{
	wr_rdma(wr_open(qpx_to_pqp(qpx), IBV_WR_RDMA_WRITE,
			IBV_QP_EX_WITH_RDMA_WRITE), rkey, addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr, __be32 imm)
{
	struct pvrdma_sq_wqe_hdr *h =
		wr_open(qpx_to_pqp(qpx), IBV_WR_RDMA_WRITE_WITH_IMM,
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);

	wr_rdma(h, rkey, addr);
	h->ex.imm_data = imm;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			 uint64_t addr)
{
	wr_rdma(wr_open(qpx_to_pqp(qpx), IBV_WR_RDMA_READ,
			IBV_QP_EX_WITH_RDMA_READ), rkey, addr);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr, uint64_t compare, uint64_t swap)
{
	struct pvrdma_sq_wqe_hdr *h =
		wr_open(qpx_to_pqp(qpx), IBV_WR_ATOMIC_CMP_AND_SWP,
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);

	h->wr.atomic.remote_addr = addr;
	h->wr.atomic.compare_add = compare;
	h->wr.atomic.swap = swap;
	h->wr.atomic.rkey = rkey;
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t addr, uint64_t add)
{
	struct pvrdma_sq_wqe_hdr *h =
		wr_open(qpx_to_pqp(qpx), IBV_WR_ATOMIC_FETCH_AND_ADD,
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);

	h->wr.atomic.remote_addr = addr;
	h->wr.atomic.compare_add = add;
	h->wr.atomic.rkey = rkey;
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct pvrdma_qp *qp = qpx_to_pqp(qpx);
	struct pvrdma_sq_wqe_hdr *h = wr_cur(qp);

	if (!h)
		return;
	if (!ah) {
		batch_fail(qp, EINVAL);
		return;
	}
	h->wr.ud.remote_qpn = remote_qpn;
	h->wr.ud.remote_qkey = remote_qkey;
	h->wr.ud.av = to_pah(ah)->av;
	qp->batch.need_ud_addr = false;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct pvrdma_qp *qp = qpx_to_pqp(qpx);
	struct pvrdma_sq_wqe_hdr *h = wr_cur(qp);
	struct pvrdma_sge *sge;

	if (!h)
		return;
	sge = wqe_sges(h);
	sge->addr = addr;
	sge->length = length;
	sge->lkey = lkey;
	h->num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sg)
{
	struct pvrdma_qp *qp = qpx_to_pqp(qpx);
	struct pvrdma_sq_wqe_hdr *h = wr_cur(qp);
	struct pvrdma_sge *sge;
	size_t i;

	if (!h)
		return;
	sge = wqe_sges(h);
	if (num_sge > qp->sq.max_sge || (num_sge && !sg)) {
		batch_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_sge; i++) {
		sge[i].addr = sg[i].addr;
		sge[i].length = sg[i].length;
		sge[i].lkey = sg[i].lkey;
	}
	h->num_sge = (uint32_t)num_sge;
}

/* Inline: copied into the WQE's bounce slot (see inline.c). */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *bufs)
{
	struct pvrdma_qp *qp = qpx_to_pqp(qpx);
	struct pvrdma_sq_wqe_hdr *h = wr_cur(qp);
	struct pvrdma_sge *sge;
	uint64_t len = 0;
	uint8_t *slot;
	size_t i;

	if (!h)
		return;
	sge = wqe_sges(h);
	/* inline data moves to the remote side: not for reads/atomics */
	if (h->opcode == PVRDMA_WR_RDMA_READ ||
	    h->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP ||
	    h->opcode == PVRDMA_WR_ATOMIC_FETCH_AND_ADD) {
		batch_fail(qp, EINVAL);
		return;
	}
	if (num_buf && !bufs) {
		batch_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++)
		len += bufs[i].length;
	if (len > qp->max_inline_data) {
		batch_fail(qp, EINVAL);
		return;
	}
	h->num_sge = 0;
	if (!len)
		return;
	slot = pvrdma_inline_slot(qp, qp->batch.cur_slot);
	len = 0;
	for (i = 0; i < num_buf; i++) {
		memcpy(slot + len, bufs[i].addr, bufs[i].length);
		len += bufs[i].length;
	}
	sge->addr = (uintptr_t)slot;
	sge->length = (uint32_t)len;
	sge->lkey = qp->inl.lkey;
	h->num_sge = 1;
	pvrdma_stat_add(&qp->sq.counters.inline_wqes, 1);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
			       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct pvrdma_qp *qp = qpx_to_pqp(qpx);
	struct pvrdma_wr_batch *b = &qp->batch;
	int ret;

	if (b->need_ud_addr)
		batch_fail(qp, EINVAL);
	ret = b->err;
	if (!ret && b->wqes) {
		pvrdma_wq_publish(&qp->sq, b->prod + 1);
		b->wqes = 0;
		pvrdma_wq_unlock(&qp->sq);
	} else {
		b->wqes = 0;
		pvrdma_wq_unlock_idle(&qp->sq);
	}
	return ret;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct pvrdma_qp *qp = qpx_to_pqp(qpx);

	/* nothing was published: the slots are simply free again */
	qp->batch.wqes = 0;
	pvrdma_wq_unlock_idle(&qp->sq);
}

void pvrdma_qp_ex_init_ops(struct pvrdma_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->send_ops_flags = ops;
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	if (qp->ibv_qp.qp_type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = wr_set_ud_addr;
}
