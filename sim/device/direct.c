// SPDX-License-Identifier: BSD-2-Clause
/*
 * One-sided operations against a target adapter on this host, executed by
 * the requester on the thread that rang the doorbell, the way the
 * hypervisor's device places data between two VMs of one host with a
 * memcpy: the target's published state (sim/fabric/shared.c) is checked as
 * its responder would check a request (QP type and state, the QP's remote
 * access flags, the rkey's MR: PD, bounds, access), then the bytes move
 * with one process_vm_writev/readv between the two address spaces, under
 * the target segment's lock so that the target cannot deregister or move
 * the memory mid-copy. No thread of the target runs.
 *
 * Only success is decided here. Anything else (a check that fails, a copy
 * the kernel refuses or cuts short, a target that is gone) hands the WR to
 * the fabric unchanged, where the target's responder and the requester's
 * timers give it the exact semantics of the IB spec: remote access errors
 * that move both QPs to the error state, RETRY_EXC_ERR for a dead target.
 * A WRITE or READ cut short is repeated whole by the fabric (both are
 * idempotent); an atomic is only written back after its read succeeded.
 *
 * Where the system refuses single-copy access between processes (EPERM: a
 * container without ptrace rights, or --no-single-copy, which makes the
 * sim behave as if it were refused) the sim says so once and every
 * operation takes the fabric.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>

#include "direct.h"
#include "fabric.h"
#include "shared.h"

static atomic_bool refused;

static void refuse(const char *why)
{
	if (!atomic_exchange(&refused, true))
		fprintf(stderr, "pvrdma-sim: same-host single copy %s: "
			"one-sided operations take the socket fabric\n", why);
}

static bool enabled(void)
{
	if (atomic_load_explicit(&refused, memory_order_relaxed))
		return false;
	if (sim_global.single_copy_off) {
		refuse("turned off (--no-single-copy)");
		return false;
	}
	return true;
}

/* The local SGEs, as the fabric path maps them; false: let it fail. */
static bool local_map(struct sim_qp *qp, const struct sim_send_wr *wr,
		      int need, struct iovec *iov, int *n)
{
	uint32_t i;
	int k;

	*n = 0;
	for (i = 0; i < wr->num_sge; i++) {
		if (!wr->sge[i].length)
			continue;
		k = SIM_MAX_IOV - *n;
		if (sim_mr_map(qp->uctx->dev, qp->pd, wr->sge[i].lkey, false,
			       wr->sge[i].addr, wr->sge[i].length, need,
			       iov + *n, &k))
			return false;
		*n += k;
	}
	return true;
}

/* A responder takes requests in RTR, RTS, SQD and SQE (engine.c). */
static bool target_qp_ok(const struct shared_qp_view *q, int need)
{
	if (q->type != IBV_QPT_RC)
		return false;
	if (q->state != IBV_QPS_RTR && q->state != IBV_QPS_RTS &&
	    q->state != IBV_QPS_SQD && q->state != IBV_QPS_SQE)
		return false;
	return (q->access & need) == need;
}

/* Where [addr, addr + len) of the rkey's MR is in the target. */
static bool target_range(struct shared_seg *seg,
			 const struct shared_qp_view *q, uint32_t rkey,
			 uint64_t addr, uint64_t len, int need,
			 struct iovec *remote)
{
	struct shared_mr_view m;
	uint64_t off;

	if (!shared_mr_find(seg, rkey, &m) || m.pdn != q->pdn)
		return false;
	if (addr < m.iova)
		return false;
	off = addr - m.iova;
	if (off > m.length || len > m.length - off)
		return false;
	if ((m.access & need) != need)
		return false;
	remote->iov_base = (void *)(uintptr_t)(m.addr + off);
	remote->iov_len = len;
	return true;
}

/* A copy that moved less than asked, or an error: EPERM turns the path
 * off for good; anything else leaves this WR to the fabric. */
static bool copied(ssize_t got, uint64_t want)
{
	if (got >= 0 && (uint64_t)got == want)
		return true;
	if (got < 0 && errno == EPERM)
		refuse("refused by the system (EPERM)");
	return false;
}

static ssize_t pvm(bool write, pid_t pid, const struct iovec *local, int n,
		   const struct iovec *remote)
{
	ssize_t got;

	do {
		got = write ? process_vm_writev(pid, local, n, remote, 1, 0) :
			      process_vm_readv(pid, local, n, remote, 1, 0);
	} while (got < 0 && errno == EINTR);
	return got;
}

static bool atomic_exec(pid_t pid, const struct sim_send_wr *wr,
			const struct iovec *remote, uint64_t *orig)
{
	struct iovec v = { .iov_base = orig, .iov_len = 8 };
	uint64_t val;

	if (!copied(pvm(false, pid, &v, 1, remote), 8))
		return false;
	if (wr->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP)
		val = *orig == wr->compare_add ? wr->swap : *orig;
	else
		val = *orig + wr->compare_add;
	if (val == *orig && wr->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP)
		return true;	/* compare failed: nothing to write */
	v.iov_base = &val;
	return copied(pvm(true, pid, &v, 1, remote), 8);
}

bool direct_execute(struct sim_qp *qp, struct fab_link *link,
		    const struct sim_send_wr *wr, uint32_t *status)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct iovec local[SIM_MAX_IOV], remote;
	struct shared_qp_view q;
	struct shared_seg *seg;
	int need, local_need, n;
	bool atomic = false, write = false, done = false;
	uint64_t len = wr->total_len, orig = 0;

	switch (wr->opcode) {
	case PVRDMA_WR_RDMA_WRITE:
		need = IBV_ACCESS_REMOTE_WRITE;
		local_need = 0;
		write = true;
		break;
	case PVRDMA_WR_RDMA_READ:
		need = IBV_ACCESS_REMOTE_READ;
		local_need = IBV_ACCESS_LOCAL_WRITE;
		break;
	case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
	case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
		if (wr->remote_addr & 7)
			return false;	/* the responder's INV_REQ */
		need = IBV_ACCESS_REMOTE_ATOMIC;
		local_need = IBV_ACCESS_LOCAL_WRITE;
		atomic = true;
		len = 8;
		break;
	default:
		return false;
	}
	if (qp->type != IBV_QPT_RC || !enabled())
		return false;
	seg = shared_peer(link);
	if (!seg || !local_map(qp, wr, local_need, local, &n))
		return false;
	if (!shared_lock(seg))
		return false;
	if (!shared_qp_find(seg, qp->attr.dest_qp_num & 0xffffff, &q) ||
	    !target_qp_ok(&q, need))
		goto out;
	if (!len) {
		/* IB lets a zero-length access through without its key. */
		done = true;
		goto out;
	}
	if (!target_range(seg, &q, wr->rkey, wr->remote_addr, len, need,
			  &remote))
		goto out;
	if (atomic)
		done = atomic_exec(shared_pid(seg), wr, &remote, &orig);
	else
		done = copied(pvm(write, shared_pid(seg), local, n, &remote),
			      len);
out:
	shared_unlock(seg);
	if (!done)
		return false;
	*status = PVRDMA_WC_SUCCESS;
	/* The original value of an atomic lands in the local SGE(s); it
	 * executed, so it is never sent again: a local buffer that went
	 * away fails the WR here, as the fabric's completer would. */
	if (atomic && !sim_app_write(local, n, &orig, sizeof(orig))) {
		*status = PVRDMA_WC_LOC_PROT_ERR;
		return true;
	}
	if (write)
		atomic_fetch_add_explicit(&dev->stats.bytes_tx, len,
					  memory_order_relaxed);
	else if (!atomic)
		atomic_fetch_add_explicit(&dev->stats.bytes_rx, len,
					  memory_order_relaxed);
	atomic_fetch_add_explicit(&dev->stats.single_copy, 1,
				  memory_order_relaxed);
	return true;
}
