// SPDX-License-Identifier: BSD-2-Clause
/*
 * The views the device publishes for the adapters of its host (view.h has
 * the model), laid out in the area of the adapter's same-host segment
 * (sim/fabric/shared.h: the file, its lock, the copy slots).
 *
 * A table entry is valid while its key (MR) or valid flag (QP) is set; the
 * owner changes entries only under the segment lock, so a requester
 * holding the lock sees whole entries. MRs sit at their key (keys are
 * 1..65536), QPs at their QPN modulo the table size; a QP whose slot
 * another live QP holds is simply not published (its requesters use the
 * wire). A QP's receive side is valid with its QP; CQs and SRQs sit at
 * their number modulo their table's size (numbers are below it), reached
 * only through a QP that names them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine.h"
#include "shared.h"
#include "sys.h"
#include "view.h"

#define VIEW_VERSION	2u
#define VIEW_QP_SLOTS	65536u
#define VIEW_MR_SLOTS	VIEW_MR_KEYS
#define VIEW_CQ_SLOTS	65536u
#define VIEW_SRQ_SLOTS	65536u
/* Requesters at once between an arm they took and its event; one more
 * finds none free and leaves the SEND to the fabric. */
#define VIEW_RAISES	64u

/* The MR and QP entries each carry a sequence count (odd while the owner
 * changes it), so that a requester may read one without the lock and
 * tell a torn read. */
struct mr_entry {
	uint32_t key;		/* 0: free */
	uint32_t pdn;
	int32_t access;
	_Atomic uint32_t seq;
	uint64_t iova;
	uint64_t addr;
	uint64_t length;
};

struct qp_entry {
	uint32_t qpn;
	uint32_t pdn;
	int32_t access;
	uint8_t state;
	uint8_t type;
	uint8_t valid;
	uint8_t recv_valid;	/* recv holds the receive side */
	uint8_t min_rnr_timer;
	_Atomic uint32_t seq;
	struct view_recv recv;
};

struct cq_entry {
	uint32_t cqn;
	uint8_t valid;
	uint8_t armed;
	uint8_t overflowed;
	uint8_t has_chan;
	int32_t chan_fd;
	/* Completion events requesters raised and the owner has not yet
	 * counted. */
	_Atomic uint32_t peer_events;
	uint64_t chan_id;
	uint64_t chan_ino;
	uint64_t cq_handle;
};

/* A requester between the arm of a CQ it took and that arm's event:
 * taken under the lock, given back without it, or by the owner once the
 * requester's process is gone. */
enum raise_phase { RAISE_TAKEN = 1, RAISE_SENDING };

struct raise_entry {
	_Atomic int32_t pid;		/* 0: free */
	_Atomic uint32_t phase;
	uint32_t cqn;
	int32_t tid;			/* the requester's thread */
};

struct srq_entry {
	uint32_t srqn;
	uint32_t limit;
	uint32_t valid;
};

struct view_area {
	/* Bytes this adapter sent (READ data) and received (WRITE data) in
	 * operations same-host requesters executed against it: its
	 * statistics count them as if they had crossed its link. */
	_Atomic uint64_t direct_tx;
	_Atomic uint64_t direct_rx;
	/* Receives it took and CQEs it wrote for them (SENDs). */
	_Atomic uint64_t direct_recv_wqes;
	_Atomic uint64_t direct_cqes;
	_Atomic uint32_t raises_held;
	struct raise_entry raise[VIEW_RAISES];
	struct qp_entry qp[VIEW_QP_SLOTS];
	struct mr_entry mr[VIEW_MR_SLOTS];
	struct cq_entry cq[VIEW_CQ_SLOTS];
	struct srq_entry srq[VIEW_SRQ_SLOTS];
};

static const struct shared_area view_layout = {
	.len = sizeof(struct view_area),
	.version = VIEW_VERSION,
};

static struct view_area *area(struct shared_seg *seg)
{
	return shared_area_of(seg);
}

struct shared_seg *view_own(unsigned int adapter)
{
	return shared_own(adapter, &view_layout);
}

struct shared_seg *view_peer(struct fab_link *link)
{
	return shared_peer(link, &view_layout);
}

/* The adapter's own segment, locked; NULL when it has none. */
static struct shared_seg *own_locked(unsigned int adapter)
{
	struct shared_seg *seg = view_own(adapter);

	return seg && shared_lock(seg) ? seg : NULL;
}

/* An entry's sequence count: odd while the owner changes it (under the
 * lock); a reader without the lock keeps what it read only if the count
 * was even and did not move. The first read is sequentially consistent:
 * a requester that announced a copy (shared_copy_enter) and an owner that
 * withdraws an MR, then fences (shared_copy_fence), cannot both miss the
 * other. */
static void seq_begin(_Atomic uint32_t *seq)
{
	atomic_fetch_add_explicit(seq, 1, memory_order_seq_cst);
}

static void seq_end(_Atomic uint32_t *seq)
{
	atomic_fetch_add_explicit(seq, 1, memory_order_release);
}

static uint32_t seq_read_begin(_Atomic uint32_t *seq)
{
	return atomic_load_explicit(seq, memory_order_seq_cst);
}

static bool seq_read_ok(_Atomic uint32_t *seq, uint32_t begin)
{
	atomic_thread_fence(memory_order_acquire);
	return !(begin & 1) &&
	       atomic_load_explicit(seq, memory_order_relaxed) == begin;
}

static struct mr_entry *mr_slot(struct shared_seg *seg, uint32_t key)
{
	return &area(seg)->mr[key % VIEW_MR_SLOTS];
}

static struct qp_entry *qp_slot(struct shared_seg *seg, uint32_t qpn)
{
	return &area(seg)->qp[qpn % VIEW_QP_SLOTS];
}

void view_mr_publish(unsigned int adapter, uint32_t rkey,
		       const struct view_mr *mr)
{
	struct mr_entry *m;
	struct shared_seg *seg;

	if (!rkey || !(seg = own_locked(adapter)))
		return;
	m = mr_slot(seg, rkey);
	seq_begin(&m->seq);
	m->pdn = mr->pdn;
	m->access = mr->access;
	m->iova = mr->iova;
	m->addr = mr->addr;
	m->length = mr->length;
	m->key = rkey;
	seq_end(&m->seq);
	shared_unlock(seg);
}

void view_mr_withdraw(unsigned int adapter, uint32_t rkey)
{
	struct shared_seg *seg = own_locked(adapter);
	struct mr_entry *m;

	if (!seg)
		return;
	m = mr_slot(seg, rkey);
	if (m->key == rkey) {
		seq_begin(&m->seq);
		m->key = 0;
		seq_end(&m->seq);
	}
	shared_unlock(seg);
	/* Copies that may still reach it, made without the lock. */
	shared_copy_fence(seg);
}

void view_qp_publish(unsigned int adapter, uint32_t qpn,
		       const struct view_qp *qp)
{
	struct shared_seg *seg = own_locked(adapter);
	struct qp_entry *q;

	if (!seg)
		return;
	q = qp_slot(seg, qpn);
	if (!q->valid || q->qpn == qpn) {
		seq_begin(&q->seq);
		q->qpn = qpn;
		q->pdn = qp->pdn;
		q->access = qp->access;
		q->state = qp->state;
		q->type = qp->type;
		q->min_rnr_timer = qp->min_rnr_timer;
		q->valid = 1;
		seq_end(&q->seq);
	}
	shared_unlock(seg);
}

void view_qp_withdraw(unsigned int adapter, uint32_t qpn)
{
	struct shared_seg *seg = own_locked(adapter);
	struct qp_entry *q;

	if (!seg)
		return;
	q = qp_slot(seg, qpn);
	if (q->valid && q->qpn == qpn) {
		seq_begin(&q->seq);
		q->valid = q->recv_valid = 0;
		seq_end(&q->seq);
	}
	shared_unlock(seg);
}

void view_recv_publish(unsigned int adapter, uint32_t qpn,
			 const struct view_recv *recv)
{
	struct shared_seg *seg = own_locked(adapter);
	struct qp_entry *q;

	if (!seg)
		return;
	q = qp_slot(seg, qpn);
	if (q->valid && q->qpn == qpn) {
		seq_begin(&q->seq);
		q->recv_valid = 0;
		if (recv) {
			q->recv = *recv;
			q->recv_valid = 1;
		}
		seq_end(&q->seq);
	}
	shared_unlock(seg);
}

static struct cq_entry *cq_slot(struct shared_seg *seg, uint32_t cqn)
{
	return &area(seg)->cq[cqn % VIEW_CQ_SLOTS];
}

static struct srq_entry *srq_slot(struct shared_seg *seg, uint32_t srqn)
{
	return &area(seg)->srq[srqn % VIEW_SRQ_SLOTS];
}

void view_cq_publish(unsigned int adapter, uint32_t cqn,
		       const struct view_cq *cq)
{
	struct shared_seg *seg = own_locked(adapter);
	struct cq_entry *c;

	if (!seg)
		return;
	c = cq_slot(seg, cqn);
	if (!c->valid || c->cqn != cqn)
		atomic_store(&c->peer_events, 0);
	c->cqn = cqn;
	c->armed = cq->armed;
	c->overflowed = cq->overflowed;
	c->has_chan = cq->has_chan;
	c->chan_fd = cq->chan_fd;
	c->chan_id = cq->chan_id;
	c->chan_ino = cq->chan_ino;
	c->cq_handle = cq->cq_handle;
	c->valid = 1;
	shared_unlock(seg);
}

int view_cq_arm_of(unsigned int adapter, uint32_t cqn)
{
	struct shared_seg *seg = own_locked(adapter);
	struct cq_entry *c;
	int armed = -1;

	if (!seg)
		return -1;
	c = cq_slot(seg, cqn);
	if (c->valid && c->cqn == cqn)
		armed = c->armed;
	shared_unlock(seg);
	return armed;
}

/* How long the owner waits for a requester between an arm it took and
 * its event: a requester stopped right there delays a CQ's destroy this
 * long, no more; one killed there, only until its process is gone. */
#define VIEW_RAISE_WAIT_NS	1000000000ull

/* The thread has exited (a zombie, or reaped): it sends nothing more.
 * The thread's own state: a process whose first thread ended is a zombie
 * to /proc/PID/stat while its other threads run. */
static bool raiser_gone(pid_t pid, pid_t tid)
{
	enum sim_task_run run = sim_task_run(pid, tid);

	if (run == SIM_TASK_UNKNOWN)
		return sim_sys(SYS_kill, pid, 0, 0) == -ESRCH;
	return run == SIM_TASK_GONE;
}

/* Frees the raise of a requester that is gone (lock held). One that died
 * sending counts as sent: a SIGKILL acts when the system call returns,
 * and its event is then in the channel (read, or taken back with the
 * CQ); only a death in the few instructions before the call misleads. */
static bool raise_reap(struct shared_seg *seg, struct raise_entry *r)
{
	int32_t pid = atomic_load(&r->pid);
	struct cq_entry *c;

	if (!pid || !raiser_gone(pid, r->tid))
		return false;
	c = cq_slot(seg, r->cqn);
	if (atomic_load(&r->phase) == RAISE_SENDING && c->valid &&
	    c->cqn == r->cqn)
		atomic_fetch_add(&c->peer_events, 1);
	if (atomic_compare_exchange_strong(&r->pid, &pid, 0))
		atomic_fetch_sub(&area(seg)->raises_held, 1);
	return true;
}

/* Whether a raise of CQ cqn is held by a process that still runs. */
static bool raise_live(struct shared_seg *seg, uint32_t cqn)
{
	struct raise_entry *r;
	bool live = false;
	unsigned int i;

	if (!atomic_load(&area(seg)->raises_held))
		return false;
	if (!shared_lock(seg))
		return false;
	for (i = 0; i < VIEW_RAISES; i++) {
		r = &area(seg)->raise[i];
		if (atomic_load(&r->pid) && r->cqn == cqn &&
		    !raise_reap(seg, r))
			live = true;
	}
	shared_unlock(seg);
	return live;
}

uint32_t view_cq_events_take(unsigned int adapter, uint32_t cqn)
{
	struct shared_seg *seg = view_own(adapter);
	struct cq_entry *c;
	uint64_t until;

	if (!seg)
		return 0;
	c = cq_slot(seg, cqn);
	if (!c->valid || c->cqn != cqn)
		return 0;
	/* Its QPs are withdrawn (no requester finds the CQ any more): the
	 * events already on their way arrive before it goes. */
	until = now_ns() + VIEW_RAISE_WAIT_NS;
	while (raise_live(seg, cqn) && now_ns() < until)
		sched_yield();
	return atomic_exchange(&c->peer_events, 0);
}

bool view_raises_held(unsigned int adapter)
{
	struct shared_seg *seg = shared_own_made(adapter);

	return seg && atomic_load_explicit(&area(seg)->raises_held,
					   memory_order_relaxed);
}

unsigned int view_raises_reap(unsigned int adapter, uint32_t *cqns,
			      unsigned int max)
{
	struct shared_seg *seg = own_locked(adapter);
	struct raise_entry *r;
	unsigned int i, n = 0;

	if (!seg)
		return 0;
	for (i = 0; i < VIEW_RAISES && n < max; i++) {
		r = &area(seg)->raise[i];
		if (atomic_load(&r->pid) && raise_reap(seg, r))
			cqns[n++] = r->cqn;
	}
	shared_unlock(seg);
	return n;
}

void view_srq_publish(unsigned int adapter, uint32_t srqn, uint32_t limit)
{
	struct shared_seg *seg = own_locked(adapter);
	struct srq_entry *q;

	if (!seg)
		return;
	q = srq_slot(seg, srqn);
	q->srqn = srqn;
	q->limit = limit;
	q->valid = 1;
	shared_unlock(seg);
}


void view_own_fence(unsigned int adapter)
{
	struct shared_seg *seg = view_own(adapter);

	if (seg)
		shared_copy_fence(seg);
}

bool view_own_lock(unsigned int adapter)
{
	return own_locked(adapter) != NULL;
}

void view_own_unlock(unsigned int adapter)
{
	struct shared_seg *seg = view_own(adapter);

	if (seg)
		shared_unlock(seg);
}

void view_recv_counts(unsigned int adapter, uint64_t *recv_wqes,
			uint64_t *cqes)
{
	struct shared_seg *seg = shared_own_made(adapter);

	*recv_wqes = *cqes = 0;
	if (!seg)
		return;
	*recv_wqes = atomic_load_explicit(&area(seg)->direct_recv_wqes,
					  memory_order_relaxed);
	*cqes = atomic_load_explicit(&area(seg)->direct_cqes, memory_order_relaxed);
}

void view_counts(unsigned int adapter, uint64_t *tx, uint64_t *rx)
{
	struct shared_seg *seg = shared_own_made(adapter);

	*tx = *rx = 0;
	if (!seg)
		return;
	*tx = atomic_load_explicit(&area(seg)->direct_tx, memory_order_relaxed);
	*rx = atomic_load_explicit(&area(seg)->direct_rx, memory_order_relaxed);
}

void view_count(struct shared_seg *seg, uint64_t tx, uint64_t rx)
{
	if (tx)
		atomic_fetch_add_explicit(&area(seg)->direct_tx, tx,
					  memory_order_relaxed);
	if (rx)
		atomic_fetch_add_explicit(&area(seg)->direct_rx, rx,
					  memory_order_relaxed);
}


bool view_qp_find(struct shared_seg *seg, uint32_t qpn,
		    struct view_qp *out)
{
	struct qp_entry *q = qp_slot(seg, qpn);
	uint32_t seq = seq_read_begin(&q->seq);
	bool found = q->valid && q->qpn == qpn;

	out->pdn = q->pdn;
	out->access = q->access;
	out->state = q->state;
	out->type = q->type;
	out->min_rnr_timer = q->min_rnr_timer;
	return seq_read_ok(&q->seq, seq) && found;
}

bool view_mr_find(struct shared_seg *seg, uint32_t rkey,
		    struct view_mr *out)
{
	struct mr_entry *m = mr_slot(seg, rkey);
	uint32_t seq = seq_read_begin(&m->seq);
	bool found = rkey && m->key == rkey;

	out->addr = m->addr;
	out->iova = m->iova;
	out->length = m->length;
	out->access = m->access;
	out->pdn = m->pdn;
	return seq_read_ok(&m->seq, seq) && found;
}

bool view_recv_find(struct shared_seg *seg, uint32_t qpn,
		      struct view_recv *out)
{
	struct qp_entry *q = qp_slot(seg, qpn);
	uint32_t seq = seq_read_begin(&q->seq);
	bool found = q->valid && q->qpn == qpn && q->recv_valid;

	*out = q->recv;
	return seq_read_ok(&q->seq, seq) && found;
}

bool view_cq_find(struct shared_seg *seg, uint32_t cqn,
		    struct view_cq *out)
{
	const struct cq_entry *c = cq_slot(seg, cqn);

	if (!c->valid || c->cqn != cqn)
		return false;
	out->armed = c->armed;
	out->overflowed = c->overflowed;
	out->has_chan = c->has_chan;
	out->chan_fd = c->chan_fd;
	out->chan_id = c->chan_id;
	out->chan_ino = c->chan_ino;
	out->cq_handle = c->cq_handle;
	return true;
}

void view_cq_disarm(struct shared_seg *seg, uint32_t cqn)
{
	struct cq_entry *c = cq_slot(seg, cqn);

	if (c->valid && c->cqn == cqn)
		c->armed = 0;
}

int view_cq_raise_begin(struct shared_seg *seg, uint32_t cqn)
{
	struct raise_entry *r;
	unsigned int i;

	for (i = 0; i < VIEW_RAISES; i++) {
		r = &area(seg)->raise[i];
		if (atomic_load_explicit(&r->pid, memory_order_relaxed))
			continue;
		r->cqn = cqn;
		r->tid = sim_self_tid();
		atomic_store_explicit(&r->phase, RAISE_TAKEN,
				      memory_order_relaxed);
		atomic_store(&r->pid, sim_self_pid());
		atomic_fetch_add(&area(seg)->raises_held, 1);
		return (int)i;
	}
	return -1;
}

void view_cq_raise_sending(struct shared_seg *seg, int raise)
{
	atomic_store(&area(seg)->raise[raise].phase, RAISE_SENDING);
}

void view_cq_raise_end(struct shared_seg *seg, uint32_t cqn, int raise,
		       bool raised)
{
	struct raise_entry *r = &area(seg)->raise[raise];
	struct cq_entry *c = cq_slot(seg, cqn);
	int32_t self = sim_self_pid();

	if (raised)
		atomic_fetch_add(&c->peer_events, 1);
	if (atomic_compare_exchange_strong(&r->pid, &self, 0))
		atomic_fetch_sub(&area(seg)->raises_held, 1);
}

void view_cq_rearm(struct shared_seg *seg, uint32_t cqn, uint8_t armed)
{
	struct cq_entry *c;

	if (!shared_lock(seg))
		return;
	c = cq_slot(seg, cqn);
	if (c->valid && c->cqn == cqn && !c->armed)
		c->armed = armed;
	shared_unlock(seg);
}

uint32_t view_srq_limit(struct shared_seg *seg, uint32_t srqn)
{
	const struct srq_entry *q = srq_slot(seg, srqn);

	return q->valid && q->srqn == srqn ? q->limit : 0;
}

void view_count_recv(struct shared_seg *seg)
{
	atomic_fetch_add_explicit(&area(seg)->direct_recv_wqes, 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&area(seg)->direct_cqes, 1, memory_order_relaxed);
}
