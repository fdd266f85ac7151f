// SPDX-License-Identifier: BSD-2-Clause
/*
 * One-sided operations against a target adapter on this host, executed by
 * the requester on the thread that rang the doorbell (for a stream of
 * large transfers, on its device thread: dispatch.c), the way the
 * hypervisor's device places data between two VMs of one host with a
 * memcpy: the target's published views (view.h) are checked as
 * its responder would check a request (QP type and state, the QP's remote
 * access flags, the rkey's MR: PD, bounds, access), then the bytes move
 * with one process_vm_writev/readv between the two address spaces. No
 * thread of the target runs, and no lock is held: the target memory is
 * named in the requester's copy slot (shared.h), which a deregistration
 * or a move of the memory fences, so a requester stopped or killed
 * mid-copy holds up no other process. Atomics run under the target
 * segment's lock, which makes each atomic with respect to every other.
 *
 * Only success is decided here. Anything else (a check that fails, a copy
 * the kernel refuses or cuts short, a target that is gone) hands the WR to
 * the fabric unchanged, where the target's responder and the requester's
 * timers give it the exact semantics of the IB spec: remote access errors
 * that move both QPs to the error state, RETRY_EXC_ERR for a dead target.
 * A WRITE or READ cut short is repeated whole by the fabric (both are
 * idempotent); an atomic is only written back after its read succeeded.
 *
 * RDMA WRITEs that follow one another in the send ring (a post list) go
 * in one process_vm_writev: one system call for up to DIRECT_BATCH of
 * them, each still checked on its own; those the kernel copied whole are
 * done, the first one it did not and everything after it are not. READs
 * that follow one another go likewise in one process_vm_readv.
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
#include "ring.h"
#include "shared.h"
#include "view.h"

/* WRITEs of one system call; pieces of their local memory (the kernel's
 * UIO_MAXIOV caps both iovec arrays). */
#define DIRECT_BATCH	((unsigned int)SHARED_COPY_IOV)
#define DIRECT_MAX_IOV	1024

/* The WRITEs of a batch and their memory: per adapter, used under its
 * dev->lock (not on the stack: a trap may run on a small signal stack). */
struct write_batch {
	struct sim_send_wr wr[DIRECT_BATCH];
	struct iovec local[DIRECT_MAX_IOV];
	struct iovec remote[DIRECT_BATCH];
};

static struct write_batch batches[SIM_MAX_ADAPTERS];

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

/* A responder takes requests in RTR, RTS, SQD and SQE (resp.c). */
bool direct_target_qp_ok(const struct view_qp *q, int need)
{
	if (q->type != IBV_QPT_RC)
		return false;
	if (!sim_qp_state_takes_requests((enum ibv_qp_state)q->state))
		return false;
	return (q->access & need) == need;
}

/* [addr, addr + len) of an MR of the target: by its rkey at an I/O
 * virtual address, or by its lkey at a process address (the device gives
 * an MR one key for both, uverbs_device.c); the MR in the QP's PD, with
 * the access asked for. */
bool direct_target_mr(struct shared_seg *seg, uint32_t pdn, uint32_t key,
		      bool remote, uint64_t addr, uint64_t len, int need,
		      struct iovec *iov)
{
	struct view_mr m;
	uint64_t start, off;

	if (!view_mr_find(seg, key, &m) || m.pdn != pdn ||
	    (m.access & need) != need)
		return false;
	start = remote ? m.iova : m.addr;
	if (addr < start)
		return false;
	off = addr - start;
	if (off > m.length || len > m.length - off)
		return false;
	iov->iov_base = (void *)(uintptr_t)(m.addr + off);
	iov->iov_len = len;
	return true;
}

/* A copy that moved less than asked, or an error: EPERM turns the path
 * off for good; anything else leaves this WR to the fabric. */
bool direct_copied(ssize_t got, uint64_t want)
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

	if (!direct_copied(pvm(false, pid, &v, 1, remote), 8))
		return false;
	if (wr->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP)
		val = *orig == wr->compare_add ? wr->swap : *orig;
	else
		val = *orig + wr->compare_add;
	if (val == *orig && wr->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP)
		return true;	/* compare failed: nothing to write */
	v.iov_base = &val;
	return direct_copied(pvm(true, pid, &v, 1, remote), 8);
}

/* One atomic (the caller holds the target's lock); READs go in batches
 * with the WRITEs (write_batch). */
static bool atomic_direct(struct sim_qp *qp, struct shared_seg *seg,
			  const struct view_qp *q,
			  const struct sim_send_wr *wr, uint64_t *orig,
			  struct iovec *local, int *n)
{
	struct iovec remote;

	if (wr->remote_addr & 7)
		return false;	/* the responder's INV_REQ */
	if (!direct_target_qp_ok(q, IBV_ACCESS_REMOTE_ATOMIC) ||
	    !local_map(qp, wr, IBV_ACCESS_LOCAL_WRITE, local, n))
		return false;
	if (!direct_target_mr(seg, q->pdn, wr->rkey, true, wr->remote_addr,
			      8, IBV_ACCESS_REMOTE_ATOMIC, &remote))
		return false;
	return atomic_exec(shared_pid(seg), wr, &remote, orig);
}

/* Appends n pieces at add (may be iov + len) to iov, merging each one that
 * starts where the last ends; returns the new length. The kernel walks
 * every remote piece on its own: a post list of consecutive small WRITEs
 * costs one piece, not one per WR (16 x 64 B: 1.4 instead of 7.4 us). */
static int iov_append(struct iovec *iov, int len, const struct iovec *add,
		      int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!add[i].iov_len)
			continue;
		if (len && (char *)iov[len - 1].iov_base +
			   iov[len - 1].iov_len == add[i].iov_base)
			iov[len - 1].iov_len += add[i].iov_len;
		else
			iov[len++] = add[i];
	}
	return len;
}

/* Adds wr, a WRITE or a READ as the batch's first, to the batch: false
 * if it cannot go in it. */
static bool batch_add(struct sim_qp *qp, struct shared_seg *seg,
		      const struct view_qp *q, struct write_batch *b,
		      unsigned int k, int *nl, uint64_t *total)
{
	const struct sim_send_wr *wr = &b->wr[k];
	struct iovec *rem = &b->remote[k];
	bool read = b->wr[0].opcode == PVRDMA_WR_RDMA_READ;
	int n;

	if (wr->opcode != b->wr[0].opcode ||
	    *nl + (int)SIM_MAX_IOV > DIRECT_MAX_IOV ||
	    !local_map(qp, wr, read ? IBV_ACCESS_LOCAL_WRITE : 0,
		       b->local + *nl, &n))
		return false;
	if (!wr->total_len) {
		rem->iov_base = NULL;	/* no key checked, nothing moved */
		rem->iov_len = 0;
	} else if (!direct_target_mr(seg, q->pdn, wr->rkey, true,
				     wr->remote_addr, wr->total_len,
				     read ? IBV_ACCESS_REMOTE_READ :
					    IBV_ACCESS_REMOTE_WRITE, rem)) {
		return false;
	}
	*nl = iov_append(b->local, *nl, b->local + *nl, n);
	*total += wr->total_len;
	return true;
}

/*
 * The WRITE at the head of the send ring and the WRITEs behind it, in one
 * copy; or the READs, likewise (a stream of large READs handed to the
 * device thread finds several in the ring). Returns how many are done (0:
 * none, the first takes the fabric).
 */
static unsigned int write_batch(struct sim_qp *qp, struct shared_seg *seg,
				const struct view_qp *q,
				struct write_batch *b, struct shared_copy *c)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct iovec *remote = shared_copy_iov(c);
	unsigned int k = 0, done, nr = 0;
	uint64_t total = 0, upto;
	bool read = b->wr[0].opcode == PVRDMA_WR_RDMA_READ;
	ssize_t got;
	void *elem;
	int nl = 0;

	if (!direct_target_qp_ok(q, read ? IBV_ACCESS_REMOTE_READ :
				    IBV_ACCESS_REMOTE_WRITE))
		return 0;
	for (;;) {
		if (!batch_add(qp, seg, q, b, k, &nl, &total))
			break;
		nr = iov_append(remote, nr, &b->remote[k], 1);
		k++;
		/* WRs already posted behind it, decoded as the fetch
		 * loop decodes them. */
		if (k == DIRECT_BATCH ||
		    sim_ring_peek_at(&qp->sq, k, &elem) != SIM_RING_READY ||
		    sim_wqe_decode_send(&qp->sq, elem, qp->type, &b->wr[k]))
			break;
	}
	/* The pieces are the slot's: from here on an owner that withdraws
	 * an MR empties them rather than wait for this thread. */
	if (!k || !shared_copy_arm(c))
		return 0;
	got = 0;
	if (total) {
		do {
			got = read ? process_vm_readv(shared_pid(seg),
						      b->local, nl, remote,
						      nr, 0) :
				     process_vm_writev(shared_pid(seg),
						       b->local, nl, remote,
						       nr, 0);
		} while (got < 0 && errno == EINTR);
		if (!direct_copied(got, total) && got < 0)
			got = 0;
	}
	/* WRs the kernel copied whole, in order. */
	for (done = 0, upto = 0; done < k; done++) {
		upto += b->wr[done].total_len;
		if (upto > (uint64_t)got)
			break;
	}
	/* The fetch loop counted the first WQE; the others behind it that
	 * are done here it never fetches (those not done, it does). */
	if (done > 1)
		atomic_fetch_add_explicit(&dev->stats.send_wqes, done - 1,
					  memory_order_relaxed);
	return done;
}

unsigned int direct_execute(struct sim_qp *qp, struct fab_link *link,
			    const struct sim_send_wr *wr, uint32_t *status,
			    const struct sim_send_wr **done_wrs,
			    uint64_t *rnr_ns)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct write_batch *b;
	struct iovec local[SIM_MAX_IOV];
	struct view_qp q;
	struct shared_copy *c;
	struct shared_seg *seg;
	unsigned int n_done = 0, i;
	uint64_t orig = 0, bytes = 0;
	int n = 0;

	*rnr_ns = 0;
	if (wr->opcode == PVRDMA_WR_SEND ||
	    wr->opcode == PVRDMA_WR_SEND_WITH_IMM ||
	    wr->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM) {
		*status = PVRDMA_WC_SUCCESS;
		return direct_send_execute(qp, link, wr, done_wrs, rnr_ns);
	}
	if (wr->opcode != PVRDMA_WR_RDMA_WRITE &&
	    wr->opcode != PVRDMA_WR_RDMA_READ &&
	    wr->opcode != PVRDMA_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != PVRDMA_WR_ATOMIC_FETCH_AND_ADD)
		return 0;
	if (qp->type != IBV_QPT_RC || dev->index >= SIM_MAX_ADAPTERS ||
	    !enabled())
		return 0;
	seg = view_peer(link);
	if (!seg)
		return 0;
	b = &batches[dev->index];
	b->wr[0] = *wr;
	if (wr->opcode == PVRDMA_WR_RDMA_WRITE ||
	    wr->opcode == PVRDMA_WR_RDMA_READ) {
		/* No lock: a requester stopped here holds up no one. */
		c = shared_copy_claim(link);
		if (!c)
			return 0;
		shared_copy_enter(c);
		if (view_qp_find(seg, qp->attr.dest_qp_num & 0xffffff, &q))
			n_done = write_batch(qp, seg, &q, b, c);
		shared_copy_leave(c);
	} else if (shared_trylock(seg)) {
		/* Atomics, under the target's lock: two copies that must
		 * not interleave with any other atomic. */
		if (view_qp_find(seg, qp->attr.dest_qp_num & 0xffffff,
				   &q) &&
		    atomic_direct(qp, seg, &q, wr, &orig, local, &n))
			n_done = 1;
		shared_unlock(seg);
	}
	if (!n_done)
		return 0;
	*done_wrs = b->wr;
	*status = PVRDMA_WC_SUCCESS;
	/* The original value of an atomic lands in the local SGE(s); it
	 * executed, so it is never sent again: a local buffer that went
	 * away fails the WR here, as the fabric's completer would. */
	if (wr->opcode != PVRDMA_WR_RDMA_WRITE &&
	    wr->opcode != PVRDMA_WR_RDMA_READ &&
	    !sim_app_write(local, n, &orig, sizeof(orig)))
		*status = PVRDMA_WC_LOC_PROT_ERR;
	for (i = 0; i < n_done; i++)
		bytes += b->wr[i].total_len;
	/* Each adapter counts what crossed it, as on the fabric. */
	if (wr->opcode == PVRDMA_WR_RDMA_WRITE) {
		atomic_fetch_add_explicit(&dev->stats.bytes_tx, bytes,
					  memory_order_relaxed);
		view_count(seg, 0, bytes);
	} else if (wr->opcode == PVRDMA_WR_RDMA_READ) {
		atomic_fetch_add_explicit(&dev->stats.bytes_rx, bytes,
					  memory_order_relaxed);
		view_count(seg, bytes, 0);
	}
	atomic_fetch_add_explicit(&dev->stats.single_copy, n_done,
				  memory_order_relaxed);
	return n_done;
}

bool direct_enabled(void)
{
	return enabled();
}

bool direct_reachable(const struct sim_qp *qp, struct fab_link *link)
{
	return qp->type == IBV_QPT_RC && enabled() && view_peer(link);
}

void direct_refuse(const char *why)
{
	refuse(why);
}
