// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion events of same-host single copies, raised by the requester:
 * a requester that writes a CQE into a target's armed CQ (direct_send.c)
 * puts the event on the target's completion channel itself, as the device
 * would raise its interrupt, so the one process waiting on the channel is
 * woken once, by the thread that did the work. No thread of the target
 * runs for it.
 *
 * The channel is a pipe of the target (sim/kernel, event_pipe.c); its
 * write end is published with the CQ (publish.c). The requester takes that
 * end with pidfd_getfd (the ptrace access check of process_vm_writev,
 * which the copy itself needs) and keeps it, per adapter, by the target's
 * segment and the channel's id, which the target never reuses; the inode
 * and the access mode check that the descriptor still is that write end. The arm is taken under the
 * target's segment lock, the event sent after it: sent under the lock, it
 * would wake the target into that lock (its next arm takes it), most
 * often on this very core. Between the two the CQ is marked as raising:
 * the target's destroy of the CQ waits for it (its QPs are gone, no new
 * requester finds it), so no event names a CQ after its destroy returned,
 * and it counts the events raised (comp_events_reported). Where the
 * descriptor cannot be had, the caller falls back to a NOTIFY frame and
 * the target's device raises the event.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <rdma/ib_user_verbs.h>

#include "direct.h"
#include "event_pipe.h"
#include "engine.h"
#include "fds.h"
#include "shared.h"
#include "view.h"
#include "sys.h"

/* Channel ends an adapter keeps of its peers' channels: few, they sit
 * in the application's descriptor table (with the sim's, high up). */
#define CHAN_SETS	16u
#define CHAN_WAYS	2u

struct chan_end {
	const struct shared_seg *seg;
	uint64_t id;
	uint64_t ino;
	int fd;				/* the sim's; valid while seg is set */
	int reader;			/* the sim's read end of that pipe */
};

/* Per adapter, used under its dev->lock. */
static struct chan_end chans[SIM_MAX_ADAPTERS][CHAN_SETS][CHAN_WAYS];

static void chan_drop(struct chan_end *c)
{
	if (c->seg) {
		sim_fd_close(c->fd);
		sim_fd_close(c->reader);
	}
	c->seg = NULL;
}

/*
 * The device end of the target's channel, as the sim's own fd here, and a
 * read end of the same pipe kept beside it: the target's read ends go with
 * the target, and a write to a pipe with no reader left raises SIGPIPE in
 * the writer, which would end this process for its peer's death. With a
 * reader of its own the write fails as on a full queue.
 */
static int chan_fetch(pid_t pid, const struct view_cq *v, int *reader)
{
	struct stat st;
	long pidfd, fd, rd;

	pidfd = sim_sys(SYS_pidfd_open, pid, 0, 0);
	if (pidfd < 0)
		return -1;
	fd = sim_sys(SYS_pidfd_getfd, pidfd, v->chan_fd, 0);
	sim_sys(SYS_close, pidfd, 0, 0);
	if (fd < 0)
		return -1;
	if (sim_sys(SYS_fstat, fd, &st, 0) || !S_ISFIFO(st.st_mode) ||
	    (uint64_t)st.st_ino != v->chan_ino ||
	    (sim_sys(SYS_fcntl, fd, F_GETFL, 0) & O_ACCMODE) != O_WRONLY) {
		sim_sys(SYS_close, fd, 0, 0);
		return -1;
	}
	rd = sim_event_pipe_reader((int)fd);
	if (rd < 0) {
		sim_sys(SYS_close, fd, 0, 0);
		return -1;
	}
	*reader = sim_fd_own((int)rd);
	return sim_fd_own((int)fd);
}

static int chan_get(unsigned int adapter, struct shared_seg *seg,
		    const struct view_cq *v)
{
	struct chan_end *set = chans[adapter][(v->chan_id ^ v->chan_ino) %
					      CHAN_SETS];
	struct chan_end *c;
	unsigned int w;

	for (w = 0; w < CHAN_WAYS; w++) {
		c = &set[w];
		if (c->seg == seg && c->id == v->chan_id &&
		    c->ino == v->chan_ino)
			return c->fd;
	}
	/* a free way, else the older one goes and the other moves up */
	for (w = 0; w < CHAN_WAYS && set[w].seg; w++)
		;
	if (w == CHAN_WAYS) {
		chan_drop(&set[CHAN_WAYS - 1]);
		memmove(&set[1], &set[0], (CHAN_WAYS - 1) * sizeof(set[0]));
		set[0].seg = NULL;
		w = 0;
	}
	c = &set[w];
	c->fd = chan_fetch(shared_pid(seg), v, &c->reader);
	if (c->fd < 0)
		return -1;
	c->seg = seg;
	c->id = v->chan_id;
	c->ino = v->chan_ino;
	return c->fd;
}

int direct_event_take(struct shared_seg *seg, uint32_t cqn)
{
	return view_cq_raise_begin(seg, cqn);
}

bool direct_event_raise(struct sim_dev *dev, struct shared_seg *seg,
			uint32_t cqn, const struct view_cq *v, int raise)
{
	struct ib_uverbs_comp_event_desc desc = { .cq_handle = v->cq_handle };
	bool sent;
	int fd;

	if (!v->has_chan)
		return false;
	fd = dev->index < SIM_MAX_ADAPTERS ? chan_get(dev->index, seg, v) : -1;
	if (fd < 0)
		return false;
	view_cq_raise_sending(seg, raise);
	sent = sim_event_post(fd, &desc, sizeof(desc));
	/* A queue full of unread events: the target's device would have
	 * lost this event too. */
	view_cq_raise_end(seg, cqn, raise, sent);
	if (sent)
		atomic_fetch_add_explicit(&dev->stats.peer_events, 1,
					  memory_order_relaxed);
	return true;
}

void direct_cq_chan_view(const struct sim_cq *cq, struct view_cq *v)
{
	const struct sim_comp_channel *ch = cq->channel;

	v->has_chan = ch && ch->dev_ino && !ch->user_closed;
	if (!v->has_chan)
		return;
	v->chan_fd = ch->fd_dev;
	v->chan_id = ch->id;
	v->chan_ino = ch->dev_ino;
	v->cq_handle = cq->user_handle;
}

void direct_cq_events_sync(struct sim_cq *cq)
{
	if (!cq->shared)
		return;
	cq->comp_events_reported +=
		view_cq_events_take(cq->uctx->dev->index, cq->cqn);
}
