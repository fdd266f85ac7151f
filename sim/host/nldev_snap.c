// SPDX-License-Identifier: BSD-2-Clause
/*
 * Snapshots of a process's adapters for RDMA netlink (nldev_snap.h).
 * Each process under the sim has adapters of its own, and `rdma` runs in
 * a process of its own: so that it lists the QPs and counters of the
 * programs it runs beside, as on a host where they share the device,
 * every process with an open adapter publishes a snapshot in the rundir,
 * refreshed by a thread every SNAP_PERIOD_MS (written to a new file and
 * renamed, so a reader sees one whole snapshot). A process that is gone
 * is skipped and its file removed.
 */
#include "preload.h"

#include <time.h>

#include "nldev_snap.h"
#include "view.h"
#include "spawn.h"

#define SNAP_PERIOD_MS	100

const char *const snap_counter_names[SNAP_COUNTERS] = {
	"rdma_sends", "rdma_recvs", "tx_bytes", "rx_bytes", "completions",
	"req_cqe_error", "local_ack_timeout_err", "doorbells",
};

static size_t snap_body_size(uint32_t nobjs)
{
	return sizeof(struct snap) + nobjs * sizeof(struct snap_obj);
}

/* With the trailer's copy of seq. */
static size_t snap_size(uint32_t nobjs)
{
	return snap_body_size(nobjs) + sizeof(uint64_t);
}

static uint64_t stat_of(atomic_ulong *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* The port's counters: the sim's statistics (stats.c), with what
 * same-host requesters did through the adapter. */
static void take_counters(struct sim_dev *dev, uint64_t c[SNAP_COUNTERS])
{
	struct sim_stats *s = &dev->stats;
	uint64_t dtx, drx, drecvs, dcqes;

	view_counts(dev->index, &dtx, &drx);
	view_recv_counts(dev->index, &drecvs, &dcqes);
	c[0] = stat_of(&s->send_wqes);
	c[1] = stat_of(&s->recv_wqes) + drecvs;
	c[2] = stat_of(&s->bytes_tx) + dtx;
	c[3] = stat_of(&s->bytes_rx) + drx;
	c[4] = stat_of(&s->cqes) + dcqes;
	c[5] = stat_of(&s->error_cqes);
	c[6] = stat_of(&s->retransmits);
	c[7] = stat_of(&s->db_qp_send) + stat_of(&s->db_qp_recv) +
	       stat_of(&s->db_srq_recv) + stat_of(&s->db_cq_arm) +
	       stat_of(&s->db_cq_arm_sol) + stat_of(&s->db_cq_poll);
}

static void take_obj(struct snap_obj *o, enum snap_kind k, void *p)
{
	const struct sim_qp *qp = p;
	const struct sim_cq *cq = p;
	const struct sim_pd *pd = p;
	const struct sim_mr *mr = p;
	const struct sim_srq *srq = p;

	switch (k) {
	case SNAP_QP:
		o->num = qp->qpn;
		o->type = qp->type;
		o->state = qp->attr.state;
		o->port = qp->attr.port_num;
		o->path_mig = qp->attr.path_mig_state;
		o->sq_psn = qp->attr.sq_psn;
		o->rq_psn = qp->attr.rq_psn;
		o->rqpn = qp->attr.dest_qp_num;
		o->pdn = qp->pd ? qp->pd->pdn : 0;
		break;
	case SNAP_CQ:
		o->num = cq->cqn;
		o->cqe = cq->ring.nelems;
		o->usecnt = cq->refs;
		break;
	case SNAP_PD:
		o->num = pd->pdn;
		o->pdn = pd->pdn;
		o->usecnt = pd->refs;
		break;
	case SNAP_MR:
		o->num = mr->lkey;
		o->rkey = mr->rkey;
		o->len = mr->length;
		o->pdn = mr->pd ? mr->pd->pdn : 0;
		break;
	default:
		o->num = srq->srqn;
		o->pdn = srq->pd ? srq->pd->pdn : 0;
		break;
	}
}

static struct sim_table *kind_table(struct sim_dev *dev, enum snap_kind k)
{
	struct sim_table *t[SNAP_KINDS] = { &dev->pds, &dev->cqs, &dev->qps,
					    &dev->mrs, &dev->srqs };

	return t[k];
}

/* Marked by commands, taken by readers (snap_take) and the publisher:
 * once a command, a set-up of N objects would take them N times. */
static atomic_bool objects_changed = true;

void snap_objects_changed(void)
{
	atomic_store_explicit(&objects_changed, true, memory_order_release);
}

/*
 * Each adapter's objects under its dev->lock, as the kernel's commands
 * take it. A doorbell a trap queues meanwhile is the device thread's,
 * which the trap wakes (device/dispatch.c), as when a command of another
 * thread holds the lock.
 */
static void take_objects(struct snap *s)
{
	unsigned int i, k;
	uint32_t n;

	s->nobjs = 0;
	for (i = 0; i < sim_global.num_adapters; i++) {
		struct sim_dev *dev = &sim_devs[i];

		pthread_mutex_lock(&dev->lock);
		for (k = 0; k < SNAP_KINDS; k++) {
			struct sim_table *t = kind_table(dev, k);

			for (n = 0; n < t->size && s->nobjs < SNAP_MAX_OBJS;
			     n++) {
				struct snap_obj *o = &s->obj[s->nobjs];

				if (!t->slot[n])
					continue;
				memset(o, 0, sizeof(*o));
				o->kind = k;
				o->dev = i;
				take_obj(o, k, t->slot[n]);
				s->nobjs++;
			}
		}
		pthread_mutex_unlock(&dev->lock);
	}
}

/* Into s, of snap_size(SNAP_MAX_OBJS) bytes: all but the objects. */
static void take_counters_into(struct snap *s)
{
	unsigned int i;

	memset(s, 0, snap_size(SNAP_MAX_OBJS));
	s->pid = getpid();
	for (i = 0; i < sim_global.num_adapters; i++)
		take_counters(&sim_devs[i], s->counters[i]);
}

struct snap *snap_take(void)
{
	struct snap *s = malloc(snap_size(SNAP_MAX_OBJS));

	if (s) {
		take_counters_into(s);
		take_objects(s);
	}
	return s;
}

/* ---- publication ---- */

static pid_t publisher_pid;

static int snap_path(pid_t pid, const char *suffix, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/nldev-%d.snap%s", sim_global.rundir,
			 (int)pid, suffix);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The snapshot's file, opened once and kept high (sim_fd_own): a thread
 * that made a file now and then would take the lowest free number under
 * the application, as no kernel does. */
static int snap_fd = -1;
static pid_t snap_fd_pid;

static uint64_t *snap_trailer(struct snap *s)
{
	return (uint64_t *)&s->obj[s->nobjs];
}

/* Rewritten in place, its length last: readers check seq (snap_read). */
static void publish(struct snap *s)
{
	size_t len = snap_size(s->nobjs);

	s->seq++;
	*snap_trailer(s) = s->seq;
	if (sim_sys6(SYS_pwrite64, snap_fd, (long)s, (long)len, 0, 0, 0) ==
	    (long)len)
		sim_sys(SYS_ftruncate, snap_fd, len, 0);
}

static void unpublish(void)
{
	char path[PATH_MAX];

	if (publisher_pid == getpid() && !snap_path(getpid(), "", path,
						     sizeof(path)))
		sim_sys(SYS_unlink, path, 0, 0);
}

/* Two buffers, the last published and the new one, swapped. */
static void *publisher(void *arg)
{
	struct timespec period = { 0, SNAP_PERIOD_MS * 1000000L };
	struct snap *last = arg, *s = malloc(snap_size(SNAP_MAX_OBJS)), *t;

	if (!s) {
		free(last);
		return NULL;
	}
	last->nobjs = UINT32_MAX;
	last->seq = 0;
	for (;;) {
		take_counters_into(s);
		if (atomic_exchange(&objects_changed, false) ||
		    last->nobjs == UINT32_MAX) {
			take_objects(s);
		} else {
			s->nobjs = last->nobjs;
			memcpy(s->obj, last->obj, s->nobjs * sizeof(s->obj[0]));
		}
		s->seq = last->seq;
		if (last->nobjs != s->nobjs ||
		    memcmp(last, s, snap_body_size(s->nobjs))) {
			publish(s);
			t = last, last = s, s = t;
		}
		sim_sys(SYS_nanosleep, &period, NULL, 0);
	}
	return NULL;
}

static int open_snap_file(const char *path)
{
	long fd = sim_sys6(SYS_openat, AT_FDCWD, (long)path,
			   O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600, 0, 0);

	return fd < 0 ? -1 : sim_fd_own((int)fd);
}

void snap_publish_start(void)
{
	static bool exit_hook;
	char path[PATH_MAX];
	struct snap *last;
	pthread_t t;

	if (publisher_pid == getpid() || !sim_global.rundir[0])
		return;
	publisher_pid = getpid();
	if (!exit_hook)
		atexit(unpublish);
	exit_hook = true;
	last = malloc(snap_size(SNAP_MAX_OBJS));
	if (snap_fd >= 0 && snap_fd_pid != getpid()) {
		sim_fd_close(snap_fd);	/* the parent's, inherited */
		snap_fd = -1;
	}
	if (snap_fd < 0 && !snap_path(getpid(), "", path, sizeof(path))) {
		snap_fd = open_snap_file(path);
		snap_fd_pid = getpid();
	}
	if (!last || snap_fd < 0 ||
	    sim_thread_create(&t, NULL, publisher, last)) {
		free(last);
		publisher_pid = 0;
		return;
	}
	pthread_detach(t);
}

/* ---- reading the others' ---- */

static struct snap *snap_read(const char *path, pid_t pid)
{
	size_t max = snap_size(SNAP_MAX_OBJS);
	struct snap *s = malloc(max);
	long fd = sim_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	unsigned int tries;
	long n = -1;

	for (tries = 0; fd >= 0 && s && tries < 8; tries++) {
		n = sim_sys6(SYS_pread64, fd, (long)s, (long)max, 0, 0, 0);
		if (n >= (long)sizeof(*s) && s->nobjs <= SNAP_MAX_OBJS &&
		    (size_t)n >= snap_size(s->nobjs) &&
		    *snap_trailer(s) == s->seq)
			break;	/* whole: not rewritten while read */
		n = -1;
	}
	if (fd >= 0)
		sim_sys(SYS_close, fd, 0, 0);
	if (!s || n < 0 || s->pid != pid) {
		free(s);
		return NULL;
	}
	return s;
}

void snap_for_each_peer(void (*fn)(const struct snap *s, void *arg),
			void *arg)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct snap *s;
	DIR *d = get_opendir()(sim_global.rundir);
	char *end;
	long pid;

	if (!d)
		return;
	while ((e = get_readdir()(d))) {
		if (strncmp(e->d_name, "nldev-", 6))
			continue;
		pid = strtol(e->d_name + 6, &end, 10);
		if (strcmp(end, ".snap") || pid <= 0 || pid == getpid() ||
		    snprintf(path, sizeof(path), "%s/%s", sim_global.rundir,
			     e->d_name) >= (int)sizeof(path))
			continue;
		if (kill((pid_t)pid, 0) && errno == ESRCH) {
			sim_sys(SYS_unlink, path, 0, 0);
			continue;
		}
		s = snap_read(path, (pid_t)pid);
		if (s)
			fn(s, arg);
		free(s);
	}
	get_closedir()(d);
}
