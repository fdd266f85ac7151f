// SPDX-License-Identifier: BSD-2-Clause
/*
 * The segment of same-host shared device state (see shared.h for the
 * model): the owner's side, which creates it lazily at its first published
 * object and removes it at exit, and a requester's side, which maps a
 * peer's segment once per link and checks that it belongs to the live
 * process it names.
 *
 * A table entry is valid while its key (MR) or valid flag (QP) is set; the
 * owner changes entries only under the segment lock, so a requester holding
 * the lock sees whole entries. MRs sit at their key (keys are 1..65536), QPs
 * at their QPN modulo the table size; a QP whose slot another live QP holds
 * is simply not published (its requesters use the socket fabric). A QP's
 * receive side is valid with its QP; CQs and SRQs sit at their number
 * modulo their table's size (numbers are below it), reached only through
 * a QP that names them.
 *
 * The segment is a sealed memory file (F_SEAL_SHRINK | F_SEAL_GROW) that
 * its owner keeps open as one of the sim's own descriptors; the run
 * directory holds only a descriptor of it (its pid and fd number, beside
 * the adapter's socket), which a requester reads and then takes the file
 * with pidfd_getfd: the ptrace access check process_vm_writev makes too.
 * No process can shrink the file under a requester's mapping (a regular
 * file in the run directory could be truncated by any program of the
 * user, and the requester would fault inside the sim), and a descriptor
 * file that is damaged, stale or names anything but a sealed segment of
 * the live process it names only costs the fast path: the requester
 * uses the socket fabric.
 *
 * The device reaches these files through system calls, never through the
 * application's interposed libc.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"
#include "fds.h"
#include "shared.h"
#include "shared_layout.h"
#include "sys.h"

/* ---- the process's start time: a pid and a start time name a process */

static uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	long fd, n;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = sim_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = sim_sys(SYS_read, fd, buf, sizeof(buf) - 1);
	sim_sys(SYS_close, fd, 0, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* The name may hold anything: fields count from its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* ") state" is field 3; starttime is field 22. */
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

static void seg_path(char *buf, size_t len, pid_t pid, unsigned int index)
{
	snprintf(buf, len, "%s/fabric-%d-%u.mem", sim_global.rundir, (int)pid,
		 index);
}

/* ---- the owner ---- */

struct own_seg {
	struct shared_seg *seg;
	pid_t pid;			/* the process that made it */
	int fd;				/* the sim's, while fd_kept */
	bool fd_kept;
	char path[300];
};

static struct own_seg own[SIM_MAX_ADAPTERS];
static pthread_once_t own_exit_once = PTHREAD_ONCE_INIT;

static void own_at_exit(void)
{
	unsigned int i;

	for (i = 0; i < SIM_MAX_ADAPTERS; i++)
		if (own[i].seg && own[i].pid == sim_self_pid())
			unlink(own[i].path);
}

static void own_exit_register(void)
{
	atexit(own_at_exit);
}

/* A new segment's memory file, sealed at its size, mapped at *seg; the
 * sim's descriptor of it, or -1. */
static int seg_create(struct shared_seg **seg)
{
	long fd = sim_sys(SYS_memfd_create, "pvrdma-segment",
			  MFD_CLOEXEC | MFD_ALLOW_SEALING, 0);
	void *view;

	if (fd < 0)
		return -1;
	if (sim_sys(SYS_ftruncate, fd, sizeof(struct shared_seg), 0) ||
	    sim_sys(SYS_fcntl, fd, F_ADD_SEALS,
		    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto err;
	view = sim_sys_mmap(NULL, sizeof(**seg), PROT_READ | PROT_WRITE,
			    MAP_SHARED, (int)fd, 0);
	if (view == MAP_FAILED)
		goto err;
	fd = sim_fd_own((int)fd);
	*seg = view;
	return (int)fd;
err:
	sim_sys(SYS_close, fd, 0, 0);
	return -1;
}

/* Names the segment in the run directory: "<pid> <fd>", replaced whole. */
static bool seg_describe(const struct own_seg *o)
{
	char tmp[320], text[32];
	long fd;
	int n;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o->path) >= (int)sizeof(tmp))
		return false;
	n = snprintf(text, sizeof(text), "%d %d\n", (int)o->pid, o->fd);
	fd = sim_sys6(SYS_openat, AT_FDCWD, (long)tmp,
		      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600, 0, 0);
	if (fd < 0)
		return false;
	if (sim_sys(SYS_write, fd, text, n) != n) {
		sim_sys(SYS_close, fd, 0, 0);
		unlink(tmp);
		return false;
	}
	sim_sys(SYS_close, fd, 0, 0);
	if (sim_sys(SYS_rename, tmp, o->path, 0)) {
		unlink(tmp);
		return false;
	}
	return true;
}

/* The segment of the adapter in this process, made at its first use (the
 * adapter's lock held). A forked child makes its own: its parent's is not
 * its, and the child lets go of the parent's mapping and descriptor. */
static struct shared_seg *own_seg(unsigned int adapter)
{
	struct own_seg *o;
	struct shared_seg *seg = NULL;
	pthread_mutexattr_t a;
	pid_t pid = sim_self_pid();

	if (adapter >= SIM_MAX_ADAPTERS || !sim_global.rundir[0])
		return NULL;
	o = &own[adapter];
	if (o->pid == pid)
		return o->seg;
	if (o->seg)
		sim_sys_munmap(o->seg, sizeof(*o->seg));
	if (o->fd_kept)
		sim_fd_close(o->fd);
	o->pid = pid;
	o->seg = NULL;
	o->fd_kept = false;
	seg_path(o->path, sizeof(o->path), pid, adapter);
	o->fd = seg_create(&seg);
	if (o->fd < 0)
		return NULL;
	o->fd_kept = true;
	o->seg = seg;
	seg->version = SHM_VERSION;
	seg->pid = pid;
	seg->start_time = proc_start_time(pid);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	/* The owner publishes a change (a QP in error) from inside the
	 * lock it holds around a receive. */
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&seg->lock, &a);
	pthread_mutexattr_destroy(&a);
	atomic_store_explicit(&seg->magic, SHM_MAGIC, memory_order_release);
	pthread_once(&own_exit_once, own_exit_register);
	/* Not found, its requesters use the socket fabric. */
	if (!seg_describe(o))
		fprintf(stderr, "pvrdma-sim: cannot publish %s: %s\n",
			o->path, strerror(errno));
	return seg;
}

/* The adapter's own segment if this process opened it (statistics must
 * not create one). */
static const struct shared_seg *own_seg_opened(unsigned int adapter)
{
	if (adapter >= SIM_MAX_ADAPTERS || own[adapter].pid != sim_self_pid())
		return NULL;
	return own[adapter].seg;
}

void shared_open(unsigned int adapter)
{
	own_seg(adapter);
}

bool shared_lock(struct shared_seg *seg)
{
	int r = pthread_mutex_lock(&seg->lock);

	/* A process died holding it: its update was one entry, written
	 * before any copy, so the tables are whole. */
	if (r == EOWNERDEAD)
		r = pthread_mutex_consistent(&seg->lock);
	return r == 0;
}

/* A busy target lock is waited for a little, never for good: its holder
 * may be a process that was stopped with it. */
#define SHM_TRY_SPINS	4096u
#define SHM_TRY_YIELDS	64u

bool shared_trylock(struct shared_seg *seg)
{
	unsigned int spins, yields;
	int r;

	for (yields = 0; yields < SHM_TRY_YIELDS; yields++) {
		for (spins = 0; spins < SHM_TRY_SPINS; spins++) {
			r = pthread_mutex_trylock(&seg->lock);
			if (r == EOWNERDEAD)
				r = pthread_mutex_consistent(&seg->lock);
			if (r != EBUSY)
				return r == 0;
			__builtin_ia32_pause();
		}
		sched_yield();
	}
	return false;
}

void shared_unlock(struct shared_seg *seg)
{
	pthread_mutex_unlock(&seg->lock);
}

/* The adapter's own segment, locked; NULL when it has none. */
static struct shared_seg *own_locked(unsigned int adapter)
{
	struct shared_seg *seg = own_seg(adapter);

	return seg && shared_lock(seg) ? seg : NULL;
}

/*
 * An entry's sequence count: the owner makes it odd, changes the entry and
 * makes it even again (under the lock, so owners never race); a reader
 * without the lock keeps what it read only if the count was even and did
 * not move. The first read is sequentially consistent: a requester that
 * announced a copy before it (shared_copy_enter) and an owner that
 * withdraws an MR and then looks for copies (shared_copy_fence) cannot
 * both miss the other.
 */
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

static struct shm_mr *mr_slot(struct shared_seg *seg, uint32_t key)
{
	return &seg->mr[key % SHM_MR_SLOTS];
}

static struct shm_qp *qp_slot(struct shared_seg *seg, uint32_t qpn)
{
	return &seg->qp[qpn % SHM_QP_SLOTS];
}

void shared_mr_publish(unsigned int adapter, uint32_t rkey,
		       const struct shared_mr_view *mr)
{
	struct shm_mr *m;
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

void shared_mr_withdraw(unsigned int adapter, uint32_t rkey)
{
	struct shared_seg *seg = own_locked(adapter);
	struct shm_mr *m;

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

void shared_qp_publish(unsigned int adapter, uint32_t qpn,
		       const struct shared_qp_view *qp)
{
	struct shared_seg *seg = own_locked(adapter);
	struct shm_qp *q;

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

void shared_qp_withdraw(unsigned int adapter, uint32_t qpn)
{
	struct shared_seg *seg = own_locked(adapter);
	struct shm_qp *q;

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

void shared_recv_publish(unsigned int adapter, uint32_t qpn,
			 const struct shared_recv_view *recv)
{
	struct shared_seg *seg = own_locked(adapter);
	struct shm_qp *q;

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

static struct shm_cq *cq_slot(struct shared_seg *seg, uint32_t cqn)
{
	return &seg->cq[cqn % SHM_CQ_SLOTS];
}

static struct shm_srq *srq_slot(struct shared_seg *seg, uint32_t srqn)
{
	return &seg->srq[srqn % SHM_SRQ_SLOTS];
}

void shared_cq_publish(unsigned int adapter, uint32_t cqn,
		       const struct shared_cq_view *cq)
{
	struct shared_seg *seg = own_locked(adapter);
	struct shm_cq *c;

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

int shared_cq_arm_of(unsigned int adapter, uint32_t cqn)
{
	struct shared_seg *seg = own_locked(adapter);
	struct shm_cq *c;
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
 * its event: a requester stopped or killed right there delays a CQ's
 * destroy this long, no more. */
#define SHM_RAISE_WAIT_NS	1000000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint32_t shared_cq_events_take(unsigned int adapter, uint32_t cqn)
{
	struct shared_seg *seg = own_seg(adapter);
	struct shm_cq *c;
	uint64_t until;

	if (!seg)
		return 0;
	c = cq_slot(seg, cqn);
	if (!c->valid || c->cqn != cqn)
		return 0;
	/* Its QPs are withdrawn (no requester finds the CQ any more): the
	 * events already on their way arrive before it goes. */
	until = mono_ns() + SHM_RAISE_WAIT_NS;
	while (atomic_load(&c->raising) && mono_ns() < until)
		sched_yield();
	return atomic_exchange(&c->peer_events, 0);
}

void shared_srq_publish(unsigned int adapter, uint32_t srqn, uint32_t limit)
{
	struct shared_seg *seg = own_locked(adapter);
	struct shm_srq *q;

	if (!seg)
		return;
	q = srq_slot(seg, srqn);
	q->srqn = srqn;
	q->limit = limit;
	q->valid = 1;
	shared_unlock(seg);
}

void shared_own_fence(unsigned int adapter)
{
	struct shared_seg *seg = own_seg(adapter);

	if (seg)
		shared_copy_fence(seg);
}

bool shared_own_lock(unsigned int adapter)
{
	return own_locked(adapter) != NULL;
}

void shared_own_unlock(unsigned int adapter)
{
	struct shared_seg *seg = own_seg(adapter);

	if (seg)
		shared_unlock(seg);
}

void shared_recv_counts(unsigned int adapter, uint64_t *recv_wqes,
			uint64_t *cqes)
{
	const struct shared_seg *seg = own_seg_opened(adapter);

	*recv_wqes = *cqes = 0;
	if (!seg)
		return;
	*recv_wqes = atomic_load_explicit(&seg->direct_recv_wqes,
					  memory_order_relaxed);
	*cqes = atomic_load_explicit(&seg->direct_cqes, memory_order_relaxed);
}

void shared_counts(unsigned int adapter, uint64_t *tx, uint64_t *rx)
{
	const struct shared_seg *seg = own_seg_opened(adapter);

	*tx = *rx = 0;
	if (!seg)
		return;
	*tx = atomic_load_explicit(&seg->direct_tx, memory_order_relaxed);
	*rx = atomic_load_explicit(&seg->direct_rx, memory_order_relaxed);
}

void shared_count(struct shared_seg *seg, uint64_t tx, uint64_t rx)
{
	if (tx)
		atomic_fetch_add_explicit(&seg->direct_tx, tx,
					  memory_order_relaxed);
	if (rx)
		atomic_fetch_add_explicit(&seg->direct_rx, rx,
					  memory_order_relaxed);
}

/* ---- a requester ---- */

/* The descriptor file of a peer's segment: its pid and fd number. */
static bool peer_describe(const char *path, pid_t *pid, int *fd)
{
	char text[32], end;
	long f, n;
	int p;

	f = sim_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	n = sim_sys(SYS_read, f, text, sizeof(text) - 1);
	sim_sys(SYS_close, f, 0, 0);
	if (n <= 0)
		return false;
	text[n] = 0;
	if (sscanf(text, "%d %d%c", &p, fd, &end) != 3 || end != '\n' ||
	    p <= 0 || *fd < 0)
		return false;
	*pid = p;
	return true;
}

/* A copy of fd of process pid, if it is a memory file sealed against
 * shrinking and long enough to be a segment; else -1. */
static long peer_segment_file(pid_t pid, int fd)
{
	long pidfd, copy, seals;
	struct stat st;

	pidfd = sim_sys(SYS_pidfd_open, pid, 0, 0);
	if (pidfd < 0)
		return -1;
	copy = sim_sys(SYS_pidfd_getfd, pidfd, fd, 0);
	sim_sys(SYS_close, pidfd, 0, 0);
	if (copy < 0)
		return -1;
	seals = sim_sys(SYS_fcntl, copy, F_GET_SEALS, 0);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) ||
	    sim_sys(SYS_fstat, copy, &st, 0) ||
	    (uint64_t)st.st_size < sizeof(struct shared_seg)) {
		sim_sys(SYS_close, copy, 0, 0);
		return -1;
	}
	return copy;
}

/* Maps the segment named by a peer's socket path (".sock" -> ".mem"). */
static struct shared_seg *peer_map(const char *sock_path)
{
	char path[320];
	struct shared_seg *seg;
	size_t n = strlen(sock_path);
	pid_t pid;
	long fd;
	int remote_fd;

	if (n < 5 || n + 1 > sizeof(path) ||
	    strcmp(sock_path + n - 5, ".sock"))
		return NULL;
	memcpy(path, sock_path, n - 5);
	strcpy(path + n - 5, ".mem");
	if (!peer_describe(path, &pid, &remote_fd))
		return NULL;
	fd = peer_segment_file(pid, remote_fd);
	if (fd < 0)
		return NULL;
	seg = sim_sys_mmap(NULL, sizeof(*seg), PROT_READ | PROT_WRITE,
			   MAP_SHARED, (int)fd, 0);
	sim_sys(SYS_close, fd, 0, 0);
	if (seg == MAP_FAILED)
		return NULL;
	/* A segment not finished yet, of another layout, of another process
	 * than the descriptor names (the number reused for another file),
	 * or of a process that is gone (its pid maybe someone else's now). */
	if (atomic_load_explicit(&seg->magic, memory_order_acquire) !=
	    SHM_MAGIC || seg->version != SHM_VERSION || seg->pid != pid ||
	    !seg->start_time || proc_start_time(seg->pid) != seg->start_time) {
		sim_sys_munmap(seg, sizeof(*seg));
		return NULL;
	}
	return seg;
}

struct shared_seg *shared_peer(struct fab_link *link)
{
	void **slot = fabric_link_shared_slot(link);
	struct peer_seg *p;
	const char *path;

	if (!slot)
		return NULL;
	p = *slot;
	if (p && p->seg)
		return p->seg;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		*slot = p;
	} else if (++p->misses % SHM_RETRY_EVERY) {
		return NULL;
	}
	path = fabric_link_peer_path(link);
	if (path && path[0])
		p->seg = peer_map(path);
	return p->seg;
}

void shared_frame_sent(struct fab_link *link)
{
	struct shared_seg *seg = shared_peer(link);

	if (seg)
		atomic_fetch_add_explicit(&seg->frames_in, 1,
					  memory_order_release);
}

bool shared_frames_in(unsigned int adapter, uint64_t *count)
{
	const struct shared_seg *seg = own_seg_opened(adapter);

	if (!seg)
		return false;
	*count = atomic_load_explicit(&seg->frames_in, memory_order_acquire);
	return true;
}

pid_t shared_pid(const struct shared_seg *seg)
{
	return seg->pid;
}

bool shared_qp_find(struct shared_seg *seg, uint32_t qpn,
		    struct shared_qp_view *out)
{
	struct shm_qp *q = qp_slot(seg, qpn);
	uint32_t seq = seq_read_begin(&q->seq);
	bool found = q->valid && q->qpn == qpn;

	out->pdn = q->pdn;
	out->access = q->access;
	out->state = q->state;
	out->type = q->type;
	out->min_rnr_timer = q->min_rnr_timer;
	return seq_read_ok(&q->seq, seq) && found;
}

bool shared_mr_find(struct shared_seg *seg, uint32_t rkey,
		    struct shared_mr_view *out)
{
	struct shm_mr *m = mr_slot(seg, rkey);
	uint32_t seq = seq_read_begin(&m->seq);
	bool found = rkey && m->key == rkey;

	out->addr = m->addr;
	out->iova = m->iova;
	out->length = m->length;
	out->access = m->access;
	out->pdn = m->pdn;
	return seq_read_ok(&m->seq, seq) && found;
}

bool shared_recv_find(struct shared_seg *seg, uint32_t qpn,
		      struct shared_recv_view *out)
{
	struct shm_qp *q = qp_slot(seg, qpn);
	uint32_t seq = seq_read_begin(&q->seq);
	bool found = q->valid && q->qpn == qpn && q->recv_valid;

	*out = q->recv;
	return seq_read_ok(&q->seq, seq) && found;
}

bool shared_cq_find(struct shared_seg *seg, uint32_t cqn,
		    struct shared_cq_view *out)
{
	const struct shm_cq *c = cq_slot(seg, cqn);

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

void shared_cq_disarm(struct shared_seg *seg, uint32_t cqn)
{
	struct shm_cq *c = cq_slot(seg, cqn);

	if (c->valid && c->cqn == cqn)
		c->armed = 0;
}

void shared_cq_raise_begin(struct shared_seg *seg, uint32_t cqn)
{
	atomic_fetch_add(&cq_slot(seg, cqn)->raising, 1);
}

void shared_cq_raise_end(struct shared_seg *seg, uint32_t cqn, bool raised)
{
	struct shm_cq *c = cq_slot(seg, cqn);

	if (raised)
		atomic_fetch_add(&c->peer_events, 1);
	atomic_fetch_sub_explicit(&c->raising, 1, memory_order_release);
}

void shared_cq_rearm(struct shared_seg *seg, uint32_t cqn, uint8_t armed)
{
	struct shm_cq *c;

	if (!shared_lock(seg))
		return;
	c = cq_slot(seg, cqn);
	if (c->valid && c->cqn == cqn && !c->armed)
		c->armed = armed;
	shared_unlock(seg);
}

uint32_t shared_srq_limit(struct shared_seg *seg, uint32_t srqn)
{
	const struct shm_srq *q = srq_slot(seg, srqn);

	return q->valid && q->srqn == srqn ? q->limit : 0;
}

void shared_count_recv(struct shared_seg *seg)
{
	atomic_fetch_add_explicit(&seg->direct_recv_wqes, 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&seg->direct_cqes, 1, memory_order_relaxed);
}
