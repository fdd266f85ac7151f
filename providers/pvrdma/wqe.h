/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Work requests -> WQEs, inlined into the fast path (post.c) and wrapped
 * as plain functions in wqe.c for the unit tests.
 *
 * A WQE is written as whole 8- and 16-byte words rather than field by
 * field: the header is 80 bytes, so a field-wise build with zeroed gaps
 * costs three times the stores. Every byte of the header is written
 * (unused fields zero) so nothing of an earlier WQE in the slot reaches
 * the device; an SGE is 16 bytes in both layouts and moves as one.
 */
#ifndef PVRDMA_WQE_H
#define PVRDMA_WQE_H

#include <stddef.h>
#include <string.h>

#include "pvrdma.h"

/* Send flags the device understands; it takes them with the IB values. */
#define PVRDMA_SEND_FLAGS_OK (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			      IBV_SEND_SOLICITED | IBV_SEND_INLINE)
/* The ones that need nothing but copying: anything else is the slow
 * path (inline data, or an error). */
#define PVRDMA_SEND_FLAGS_PLAIN (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
				 IBV_SEND_SOLICITED)

_Static_assert(IBV_SEND_FENCE == 1 && IBV_SEND_SIGNALED == 2 &&
	       IBV_SEND_SOLICITED == 4 && IBV_SEND_INLINE == 8,
	       "the device takes send flags with their IB values");
_Static_assert(sizeof(struct pvrdma_sge) == sizeof(struct ibv_sge) &&
	       offsetof(struct pvrdma_sge, addr) ==
	       offsetof(struct ibv_sge, addr) &&
	       offsetof(struct pvrdma_sge, length) ==
	       offsetof(struct ibv_sge, length) &&
	       offsetof(struct pvrdma_sge, lkey) ==
	       offsetof(struct ibv_sge, lkey),
	       "an ibv_sge is a pvrdma_sge: SGEs are copied whole");
_Static_assert(sizeof(struct pvrdma_sq_wqe_hdr) == 80, "SQ WQE header ABI");
_Static_assert(sizeof(struct pvrdma_rq_wqe_hdr) == 16, "RQ WQE header ABI");
/* The word layout the encoders below write. */
_Static_assert(offsetof(struct pvrdma_sq_wqe_hdr, num_sge) == 8 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, total_len) == 12 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, opcode) == 16 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, send_flags) == 20 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, ex) == 24 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, reserved) == 28 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, wr) == 32 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, wr.rdma.rkey) == 40 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, wr.atomic.compare_add) ==
	       40 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, wr.atomic.swap) == 48 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, wr.atomic.rkey) == 56 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, wr.ud.remote_qkey) == 36 &&
	       offsetof(struct pvrdma_sq_wqe_hdr, wr.ud.av) == 40 &&
	       sizeof(struct pvrdma_av) == 40 &&
	       offsetof(struct pvrdma_rq_wqe_hdr, num_sge) == 8 &&
	       offsetof(struct pvrdma_rq_wqe_hdr, total_len) == 12,
	       "SQ/RQ WQE header layout");

/* The device numbers the user opcodes as verbs does: no mapping. */
#define PVRDMA_SAME_WR(o) ((int)PVRDMA_WR_##o == (int)IBV_WR_##o)
_Static_assert(PVRDMA_SAME_WR(RDMA_WRITE) &&
	       PVRDMA_SAME_WR(RDMA_WRITE_WITH_IMM) && PVRDMA_SAME_WR(SEND) &&
	       PVRDMA_SAME_WR(SEND_WITH_IMM) && PVRDMA_SAME_WR(RDMA_READ) &&
	       PVRDMA_SAME_WR(ATOMIC_CMP_AND_SWP) &&
	       PVRDMA_SAME_WR(ATOMIC_FETCH_AND_ADD),
	       "WR opcodes of user QPs are the verbs opcodes");
#undef PVRDMA_SAME_WR

/* Opcodes the device executes for user QPs, as bits of ibv_wr_opcode. */
#define PVRDMA_WR_BIT(op)	(1u << (op))
#define PVRDMA_WR_SEND_OPS	(PVRDMA_WR_BIT(IBV_WR_SEND) | \
				 PVRDMA_WR_BIT(IBV_WR_SEND_WITH_IMM))
#define PVRDMA_WR_RDMA_OPS	(PVRDMA_WR_BIT(IBV_WR_RDMA_WRITE) | \
				 PVRDMA_WR_BIT(IBV_WR_RDMA_WRITE_WITH_IMM) | \
				 PVRDMA_WR_BIT(IBV_WR_RDMA_READ))
#define PVRDMA_WR_ATOMIC_OPS	(PVRDMA_WR_BIT(IBV_WR_ATOMIC_CMP_AND_SWP) | \
				 PVRDMA_WR_BIT(IBV_WR_ATOMIC_FETCH_AND_ADD))
#define PVRDMA_WR_IMM_OPS	(PVRDMA_WR_BIT(IBV_WR_SEND_WITH_IMM) | \
				 PVRDMA_WR_BIT(IBV_WR_RDMA_WRITE_WITH_IMM))
/* Ops that move no local data to the peer: never inline. */
#define PVRDMA_WR_NO_INLINE_OPS	(PVRDMA_WR_BIT(IBV_WR_RDMA_READ) | \
				 PVRDMA_WR_ATOMIC_OPS)
_Static_assert(IBV_WR_ATOMIC_FETCH_AND_ADD < 32 && IBV_WR_RDMA_READ < 32,
	       "opcode bits fit a word");

/*
 * May qp post this WR with no further look: opcode allowed on the QP,
 * SGE count within the queue's, SGE list present, plain flags, and an AH
 * on UD. false sends it to the full check (pvrdma_check_send_wr), which
 * says what is wrong or that it is fine but inline.
 */
static inline bool pvrdma_send_wr_plain(const struct pvrdma_qp *qp,
					const struct ibv_send_wr *wr,
					bool ud)
{
	uint32_t op = (uint32_t)wr->opcode;

	if (op >= 32 || !((qp->send_opcodes >> op) & 1))
		return false;
	if ((uint32_t)wr->num_sge > qp->sq.max_sge)	/* negative too */
		return false;
	if (!wr->sg_list && wr->num_sge)
		return false;
	if (wr->send_flags & ~(unsigned int)PVRDMA_SEND_FLAGS_PLAIN)
		return false;
	return !ud || wr->wr.ud.ah;
}

/* 8-byte words of a WQE; may alias the ABI structs they are written to. */
typedef uint64_t __attribute__((may_alias)) pvrdma_word;
typedef struct {
	uint64_t lo, hi;
} __attribute__((may_alias, aligned(8))) pvrdma_dword;

static inline void pvrdma_copy_sges(void *dst, const struct ibv_sge *src,
				    uint32_t n)
{
	pvrdma_dword *d = dst;
	const pvrdma_dword *s = (const pvrdma_dword *)src;
	uint32_t i;

	/* one SGE is the common case: no loop for it */
	if (__builtin_expect(n == 1, 1)) {
		d[0] = s[0];
		return;
	}
	for (i = 0; i < n; i++)
		d[i] = s[i];
}

/*
 * Header and SGEs of a checked WR. UD is known per QP (ud), the remote
 * fields depend on the opcode class; flags are the WR's send flags less
 * IBV_SEND_INLINE: the device has no inline format (inline data is the
 * caller's, see pvrdma_encode_inline).
 */
static inline void pvrdma_encode_send(struct pvrdma_sq_wqe_hdr *hdr,
				      const struct ibv_send_wr *wr, bool ud,
				      unsigned int flags)
{
	pvrdma_word *w = (pvrdma_word *)hdr;
	uint32_t op = (uint32_t)wr->opcode;
	uint32_t bit = PVRDMA_WR_BIT(op);
	uint32_t imm = 0;

	if (bit & PVRDMA_WR_IMM_OPS)
		imm = wr->imm_data;		/* already big-endian */
	w[0] = wr->wr_id;
	w[1] = (uint32_t)wr->num_sge;		/* total_len 0 */
	w[2] = op |		/* = the device's opcode (asserted above) */
	       (uint64_t)flags << 32;
	w[3] = imm;				/* reserved 0 */
	if (ud) {
		const struct pvrdma_av *av = &((const struct pvrdma_ah *)
					       wr->wr.ud.ah)->av;

		w[4] = wr->wr.ud.remote_qpn |
		       (uint64_t)wr->wr.ud.remote_qkey << 32;
		/* the AV fills the rest of the header */
		((pvrdma_dword *)&w[5])[0] = ((const pvrdma_dword *)av)[0];
		((pvrdma_dword *)&w[5])[1] = ((const pvrdma_dword *)av)[1];
		w[9] = ((const pvrdma_word *)av)[4];
	} else if (bit & PVRDMA_WR_SEND_OPS) {
		w[4] = w[5] = w[6] = w[7] = w[8] = w[9] = 0;
	} else if (bit & PVRDMA_WR_RDMA_OPS) {
		w[4] = wr->wr.rdma.remote_addr;
		w[5] = wr->wr.rdma.rkey;	/* reserved 0 */
		w[6] = w[7] = w[8] = w[9] = 0;
	} else {				/* atomics */
		w[4] = wr->wr.atomic.remote_addr;
		w[5] = wr->wr.atomic.compare_add;
		w[6] = op == IBV_WR_ATOMIC_CMP_AND_SWP ? wr->wr.atomic.swap
						       : 0;
		w[7] = wr->wr.atomic.rkey;	/* reserved 0 */
		w[8] = w[9] = 0;
	}
	pvrdma_copy_sges(hdr + 1, wr->sg_list, (uint32_t)wr->num_sge);
}

static inline void pvrdma_encode_recv(void *wqe, const struct ibv_recv_wr *wr)
{
	pvrdma_word *w = wqe;

	w[0] = wr->wr_id;
	w[1] = (uint32_t)wr->num_sge;		/* total_len 0 */
	pvrdma_copy_sges(w + 2, wr->sg_list, (uint32_t)wr->num_sge);
}

static inline bool pvrdma_recv_wr_ok(const struct pvrdma_wq *rq,
				     const struct ibv_recv_wr *wr)
{
	return (uint32_t)wr->num_sge <= rq->max_sge &&
	       (wr->sg_list || !wr->num_sge);
}

#endif /* PVRDMA_WQE_H */
