// SPDX-License-Identifier: BSD-2-Clause
/*
 * SEND, SEND_WITH_IMM and RDMA_WRITE_WITH_IMM against a target adapter of
 * this host, executed by the requester on the thread that rang the
 * doorbell (direct.c does the one-sided operations the same way): it takes
 * the target QP's posted receive from the RQ or SRQ ring, places the data
 * with one process_vm_writev, and writes the target's CQE into its receive
 * CQ exactly as the target's responder would (resp.c), advancing the ring
 * indices with atomic stores. No thread of the target runs, unless its CQ
 * is armed: then the requester takes the arm (as the device disarms a CQ
 * when it writes a CQE the arm covers) and raises the event on the
 * target's channel itself (direct_event.c); where it cannot, a NOTIFY
 * frame on the link has the target's device raise it with its own code.
 *
 * The rings are the target's pinned ring pages (sim/kernel/pin.c): the
 * target keeps each ring's memory file open and publishes where the rings
 * are in it (publish.c); the requester takes the file with pidfd_getfd
 * (the same ptrace access check as process_vm_writev) and maps it, only
 * if the file is sealed against shrinking (the target's application holds
 * it and could truncate it under the mapping). The mappings are cached
 * per adapter, by the ring's id, which the target never reuses: a
 * destroyed and recreated object is a new id, and a slot that is reused
 * unmaps what it held, so the cache holds at most MAP_SETS * MAP_WAYS
 * mappings per adapter whatever the targets create.
 * Two ways a set: the receive ring and the CQ of one SEND may fall in one
 * set, and neither may unmap the other.
 *
 * Every consumer of those receive rings and producer of those CQs on the
 * device side (the target's own responder too) works under the target
 * segment's lock; a published CQ's arm lives in the segment too, set by
 * the target's arm doorbell under the same lock. So a CQE is either
 * written before an arm (the application's poll after arming finds it)
 * or after it (its writer takes the arm and has the event raised), and an
 * arm the application makes before the NOTIFY arrives is a new one.
 *
 * The data moves without that lock (a requester stopped or killed in the
 * copy holds up no one): under it the requester checks the QP and the
 * receive at the head of the RQ and names the target memory in its copy
 * slot (shared.h); it copies; under the lock again it checks that the
 * receive is still the one (the QP's RQ has no other consumer than this
 * requester, whose WRs go one at a time, and the flush of a QP that
 * leaves the responder states fences the copy first), consumes it and
 * writes the CQE into the slot it reserves then: CQEs of one CQ in the
 * order of their commits, each QP's in the order of its WRs. An SRQ's
 * ring has many requesters that take its receives in order: there the
 * copy stays under the lock.
 *
 * Only success is decided here, as in direct.c. A QP that is not ready,
 * no receive posted (the RNR NAK and its retries), a receive too short or
 * with a bad key, a full or overflowed CQ, a receive that would cross the
 * SRQ's limit (the target's device raises that event with its one code
 * path, rare enough to cost nothing), a copy refused or cut short: the WR
 * takes the fabric unchanged, where the target's responder gives it its
 * exact IB semantics. A receive is consumed only after its data is in
 * place: a copy that fails has consumed nothing, and the fabric places
 * the data again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "direct.h"
#include "engine.h"
#include "shared.h"
#include "view.h"
#include "sys.h"

/* Ring mappings an adapter keeps of its peers' rings. */
#define MAP_SETS	32u
#define MAP_WAYS	2u

struct ring_map {
	const struct shared_seg *seg;
	uint64_t id;
	uint64_t ino;
	uint8_t *base;
	size_t len;
};

/* Per adapter, used under its dev->lock. */
static struct ring_map maps[SIM_MAX_ADAPTERS][MAP_SETS][MAP_WAYS];
static struct sim_send_wr done[SIM_MAX_ADAPTERS];

static atomic_bool no_getfd;

/* The file can never be shorter than it is now. */
static bool size_sealed(long fd)
{
	long seals = sim_sys(SYS_fcntl, fd, F_GET_SEALS, 0);

	return seals >= 0 && (seals & F_SEAL_SHRINK);
}

/* The target's ring file, mapped here (NULL: unreachable). */
static uint8_t *ring_file(pid_t pid, const struct view_ring *v)
{
	struct stat st;
	long pidfd, fd;
	void *base;

	if (atomic_load_explicit(&no_getfd, memory_order_relaxed))
		return NULL;
	pidfd = sim_sys(SYS_pidfd_open, pid, 0, 0);
	if (pidfd < 0) {
		if (pidfd == -ENOSYS && !atomic_exchange(&no_getfd, true))
			fprintf(stderr, "pvrdma-sim: no pidfd_open: same-host "
				"SENDs take the socket fabric\n");
		return NULL;
	}
	fd = sim_sys(SYS_pidfd_getfd, pidfd, v->fd, 0);
	sim_sys(SYS_close, pidfd, 0, 0);
	if (fd < 0) {
		if (fd == -EPERM)
			direct_refuse("refused by the system (EPERM)");
		else if (fd == -ENOSYS && !atomic_exchange(&no_getfd, true))
			fprintf(stderr, "pvrdma-sim: no pidfd_getfd: "
				"same-host SENDs take the socket fabric\n");
		return NULL;
	}
	base = MAP_FAILED;
	/* The descriptor may be another file by now (the target closed
	 * the ring's, or the application closed it behind the sim); and a
	 * file its holder can still shrink would fault here, in a process
	 * that did nothing wrong. */
	if (!sim_sys(SYS_fstat, fd, &st, 0) && (uint64_t)st.st_ino == v->ino &&
	    (uint64_t)st.st_size >= v->map_len && size_sealed(fd))
		base = sim_sys_mmap(NULL, v->map_len, PROT_READ | PROT_WRITE,
				    MAP_SHARED, (int)fd, 0);
	sim_sys(SYS_close, fd, 0, 0);
	return base == MAP_FAILED ? NULL : base;
}

static bool map_is(const struct ring_map *m, const struct shared_seg *seg,
		   const struct view_ring *v)
{
	return m->base && m->seg == seg && m->id == v->id &&
	       m->ino == v->ino && m->len == v->map_len;
}

/* The target ring of v as a struct sim_ring of this process, by a mapping
 * other than keep (which stays mapped); *used: the mapping. */
static bool ring_get(unsigned int adapter, struct shared_seg *seg,
		     const struct view_ring *v, size_t min_elem,
		     struct sim_ring *r, const struct ring_map *keep,
		     const struct ring_map **used)
{
	struct ring_map *set = maps[adapter][(v->id ^ v->ino) % MAP_SETS];
	struct ring_map *m;
	unsigned int w;

	/* The view is the target's to write: nothing in it may place a
	 * ring, an index or an element outside the mapping. */
	if (v->state_off > v->map_len ||
	    v->map_len - v->state_off < sizeof(struct pvrdma_ring) ||
	    (v->state_off & 3) || (v->elems_off & 7) ||
	    !v->nelems || (v->nelems & (v->nelems - 1)) ||
	    v->elem_size < min_elem || v->elems_off > v->map_len ||
	    (uint64_t)v->nelems * v->elem_size > v->map_len - v->elems_off)
		return false;
	for (w = 0; w < MAP_WAYS && !map_is(&set[w], seg, v); w++)
		;
	if (w == MAP_WAYS) {
		/* a free way, else the one that is not keep */
		for (w = 0; w < MAP_WAYS && set[w].base; w++)
			;
		if (w == MAP_WAYS)
			w = &set[0] == keep ? 1 : 0;
	}
	m = &set[w];
	*used = m;
	if (m->base && !map_is(m, seg, v)) {
		sim_sys_munmap(m->base, m->len);
		m->base = NULL;
	}
	if (!m->base) {
		m->base = ring_file(shared_pid(seg), v);
		if (!m->base)
			return false;
		m->seg = seg;
		m->id = v->id;
		m->ino = v->ino;
		m->len = v->map_len;
	}
	r->state = (struct pvrdma_ring *)(m->base + v->state_off);
	r->elems = m->base + v->elems_off;
	r->nelems = v->nelems;
	r->elem_size = v->elem_size;
	r->max_sge = v->max_sge;
	return true;
}

/* Where the message goes in the target: the receive's SGEs (each checked
 * as the responder's map_sges checks them), or the WRITE's range. */
static bool target_dst(struct shared_seg *seg,
		       const struct view_qp *q,
		       const struct sim_send_wr *wr,
		       const struct sim_recv_wr *rwr, struct iovec *iov,
		       unsigned int *n)
{
	uint32_t i;

	*n = 0;
	if (wr->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM) {
		if (!wr->total_len)
			return true;	/* no key checked, nothing moved */
		*n = 1;
		return direct_target_mr(seg, q->pdn, wr->rkey, true, wr->remote_addr,
				 wr->total_len, IBV_ACCESS_REMOTE_WRITE, iov);
	}
	if (wr->total_len > rwr->total_len)
		return false;	/* the responder's INV_REQ */
	for (i = 0; i < rwr->num_sge; i++) {
		if (!rwr->sge[i].length)
			continue;
		if (!direct_target_mr(seg, q->pdn, rwr->sge[i].lkey, false,
			       rwr->sge[i].addr, rwr->sge[i].length,
			       IBV_ACCESS_LOCAL_WRITE, &iov[(*n)++]))
			return false;
	}
	return true;
}

/* A SEND's way through the target, from its checks to its CQE. */
struct send_plan {
	uint32_t qpn;
	struct view_qp q;
	struct view_recv r;
	struct sim_ring rq, cq;
	struct sim_recv_wr rwr;
	uint32_t rq_head;	/* the receive taken */
	unsigned int n;		/* pieces of the target memory */
};

/* The target's receive rings of the QP, mapped. */
static bool plan_rings(unsigned int adapter, struct shared_seg *seg,
		       struct send_plan *p)
{
	const struct ring_map *used;

	return ring_get(adapter, seg, &p->r.rq,
			sizeof(struct pvrdma_rq_wqe_hdr), &p->rq, NULL,
			&used) &&
	       ring_get(adapter, seg, &p->r.cq, sizeof(struct pvrdma_cqe),
			&p->cq, used, &used);
}

/*
 * With the target's lock held: the QP, its receive at the head of the
 * ring and where the message goes in the target (the copy slot's pieces).
 * The receive is taken only by commit_locked(): a QP's RQ has one
 * requester, whose WRs go one at a time.
 */
static bool plan_locked(struct sim_qp *qp, struct shared_seg *seg,
			const struct sim_send_wr *wr, struct send_plan *p,
			struct shared_copy *c, uint64_t *rnr_ns)
{
	bool write = wr->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM;
	struct view_cq cqv;
	enum sim_ring_status rs;
	void *elem, *slot;
	uint32_t limit;

	p->qpn = qp->attr.dest_qp_num & 0xffffff;
	if (!view_qp_find(seg, p->qpn, &p->q) ||
	    !direct_target_qp_ok(&p->q, write ? IBV_ACCESS_REMOTE_WRITE : 0))
		return false;
	if (!view_recv_find(seg, p->qpn, &p->r) ||
	    !view_cq_find(seg, p->r.cqn, &cqv) || cqv.overflowed ||
	    !plan_rings(qp->uctx->dev->index, seg, p))
		return false;
	rs = sim_ring_peek(&p->rq, &elem);
	if (rs != SIM_RING_READY) {
		/* RNR, or a ring the target must fail */
		if (rs == SIM_RING_NONE)
			*rnr_ns = 1000ull *
				  dev_rnr_timer_us[p->q.min_rnr_timer & 31];
		return false;
	}
	if (p->r.srq) {
		limit = view_srq_limit(seg, p->r.srqn);
		if (limit && sim_ring_count(&p->rq) - 1 < (int64_t)limit)
			return false;	/* the target raises the event */
	}
	p->rq_head = sim_ring_load(&p->rq.state->cons_head);
	/* The CQ has room now; commit_locked() takes it. */
	return sim_wqe_decode_recv(&p->rq, elem, &p->rwr) == PVRDMA_WC_SUCCESS &&
	       target_dst(seg, &p->q, wr, &p->rwr, shared_copy_iov(c), &p->n) &&
	       sim_ring_reserve(&p->cq, &slot) == SIM_RING_READY;
}

/* The data, into the pieces of the copy slot (none: the target must
 * still be there). */
static bool send_copy(struct shared_seg *seg, struct shared_copy *c,
		      const struct sim_send_wr *wr, const struct local_iov *li,
		      unsigned int n)
{
	ssize_t got;

	if (!shared_copy_arm(c))
		return false;	/* an MR withdrawn since the checks */
	if (!wr->total_len)
		/* No copy to tell that the target is gone: its rings may
		 * still be mapped here, its retry count must run out. */
		return sim_sys(SYS_kill, shared_pid(seg), 0, 0) != -ESRCH;
	do {
		got = process_vm_writev(shared_pid(seg), li->iov, li->n,
					shared_copy_iov(c), n, 0);
	} while (got < 0 && errno == EINTR);
	return direct_copied(got, wr->total_len);
}

/* The target's CQ was armed for the CQE written (cq): the arm's event is
 * owed on CQ cqn, found as v, through the raise taken in its view. */
struct send_notify {
	bool cq;
	int raise;
	uint32_t cqn;
	struct view_cq v;
};

/*
 * With the target's lock held again: the receive is still the one the
 * data went to (the QP neither left the states a responder takes
 * requests in nor was flushed, which fences the copy), and its CQE, in
 * the order of commits; and the event its CQ's arm owes (notify).
 */
static bool commit_locked(struct sim_qp *qp, struct shared_seg *seg,
			  const struct sim_send_wr *wr,
			  const struct fab_hdr *h, struct send_plan *p,
			  struct send_notify *notify)
{
	bool write = wr->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM;
	struct view_recv r;
	struct view_qp q;
	struct view_cq cqv;
	struct pvrdma_cqe c;
	void *slot;

	if (!view_qp_find(seg, p->qpn, &q) ||
	    !direct_target_qp_ok(&q, write ? IBV_ACCESS_REMOTE_WRITE : 0) ||
	    !view_recv_find(seg, p->qpn, &r) || r.rq.id != p->r.rq.id ||
	    r.cq.id != p->r.cq.id || !view_cq_find(seg, r.cqn, &cqv) ||
	    cqv.overflowed || !plan_rings(qp->uctx->dev->index, seg, p) ||
	    sim_ring_load(&p->rq.state->cons_head) != p->rq_head ||
	    sim_ring_reserve(&p->cq, &slot) != SIM_RING_READY)
		return false;
	notify->cq = cqv.armed == SIM_CQ_ARM_NEXT ||
		     (cqv.armed == SIM_CQ_ARM_SOLICITED &&
		      (h->flags & FAB_F_SOLICITED));
	if (notify->cq) {
		/* The arm taken is an event owed, whatever becomes of
		 * this process. */
		notify->raise = direct_event_take(seg, p->r.cqn);
		if (notify->raise < 0) {
			notify->cq = false;
			return false;
		}
		notify->cqn = p->r.cqn;
		notify->v = cqv;
		view_cq_disarm(seg, p->r.cqn);	/* one event an arm */
	}
	dev_recv_cqe_fill(&c, p->r.qp_handle, p->r.port_num, p->rwr.wr_id, h,
		      write ? PVRDMA_WC_RECV_RDMA_WITH_IMM : PVRDMA_WC_RECV,
		      (uint32_t)wr->total_len, 0);
	memcpy(slot, &c, sizeof(c));
	sim_ring_consume(&p->rq);
	sim_ring_produce(&p->cq);	/* release: the CQE is complete */
	view_count_recv(seg);
	view_count(seg, 0, wr->total_len);
	return true;
}

/*
 * The message: true if it was delivered whole (notify: the event owed).
 * The copy is made without the target's lock: a requester stopped in it
 * holds up no one. An SRQ's receives have many requesters,
 * which take them in order: there the copy stays under the lock.
 */
static bool send_message(struct sim_qp *qp, struct shared_seg *seg,
			 struct shared_copy *c, const struct sim_send_wr *wr,
			 const struct fab_hdr *h, const struct local_iov *li,
			 struct send_notify *notify, uint64_t *rnr_ns)
{
	struct send_plan p;
	bool ok;

	shared_copy_enter(c);
	if (!shared_trylock(seg)) {
		shared_copy_leave(c);
		return false;
	}
	ok = plan_locked(qp, seg, wr, &p, c, rnr_ns);
	if (ok && !p.r.srq) {
		shared_unlock(seg);
		ok = send_copy(seg, c, wr, li, p.n);
		shared_copy_leave(c);
		if (!ok || !shared_trylock(seg))
			return false;	/* the fabric places it again */
		ok = commit_locked(qp, seg, wr, h, &p, notify);
	} else if (ok) {
		ok = send_copy(seg, c, wr, li, p.n) &&
		     commit_locked(qp, seg, wr, h, &p, notify);
		shared_copy_leave(c);
	} else {
		shared_copy_leave(c);
	}
	shared_unlock(seg);
	return ok;
}

unsigned int direct_send_execute(struct sim_qp *qp, struct fab_link *link,
				 const struct sim_send_wr *wr,
				 const struct sim_send_wr **done_wrs,
				 uint64_t *rnr_ns)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct engine *eng = engine_of(dev);
	struct shared_copy *c;
	struct shared_seg *seg;
	struct send_notify notify = { .cq = false };
	struct local_iov li;
	struct fab_hdr h, n;

	if (qp->type != IBV_QPT_RC || !eng || !direct_enabled())
		return 0;
	seg = view_peer(link);
	if (!seg)
		return 0;
	/* Local memory the device cannot read fails on the fabric path. */
	if (dev_map_sges(qp, wr->sge, wr->num_sge, 0, &li))
		return 0;
	/* The message as the fabric would carry it: what the CQE says of
	 * its sender. */
	dev_hdr_init(&h, qp, FAB_REQ, qp->attr.ah_attr.grh.sgid_index);
	h.opcode = wr->opcode;
	h.dst_qpn = qp->attr.dest_qp_num;
	h.imm = wr->imm_data;
	h.len = wr->total_len;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		h.flags |= FAB_F_SOLICITED;
	c = shared_copy_claim(link);
	if (!c || !send_message(qp, seg, c, wr, &h, &li, &notify, rnr_ns))
		return 0;
	/* The event, raised here (direct_event.c), else by the target. */
	if (notify.cq &&
	    !direct_event_raise(dev, seg, notify.cqn, &notify.v, notify.raise)) {
		/* The CQ by its number: the QP may be gone by the time the
		 * target reads this, the CQ (shared by others) not. */
		dev_hdr_init(&n, qp, FAB_NOTIFY,
			     qp->attr.ah_attr.grh.sgid_index);
		n.dst_qpn = qp->attr.dest_qp_num;
		n.rkey = notify.cqn;
		n.flags = h.flags;
		if (!fabric_send(eng->port, link, &n, NULL, 0))
			/* No way to tell the target: give the arm back, so
			 * that its own next CQE raises the event. */
			view_cq_rearm(seg, notify.cqn, SIM_CQ_ARM_NEXT);
		view_cq_raise_end(seg, notify.cqn, notify.raise, false);
	}
	atomic_fetch_add_explicit(&dev->stats.bytes_tx, wr->total_len,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&dev->stats.single_copy, 1,
				  memory_order_relaxed);
	done[dev->index] = *wr;
	*done_wrs = &done[dev->index];
	return 1;
}
