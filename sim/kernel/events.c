// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion and asynchronous events, in the kernel's wire formats
 * (struct ib_uverbs_comp_event_desc / ib_uverbs_async_event_desc): one
 * packet per event on the channel's pipe (event_pipe.c), one datagram per
 * event on the context's socket.
 *
 * The destroy commands report how many events of an object the
 * application received. The kernel counts an event when it is read and
 * drops the unread ones with the object; here an event is counted when
 * sent, and the unread ones are taken back out of the socket when their
 * object goes (reclaim), which gives the same numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "sys.h"
#include "uverbs_internal.h"

static bool send_event(int fd, const void *desc, size_t len)
{
	ssize_t n;

	do {
		n = sim_libc.sendto(fd, desc, len, MSG_DONTWAIT | MSG_NOSIGNAL,
				    NULL, 0);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

void sim_event_comp(struct sim_cq *cq, bool solicited)
{
	struct ib_uverbs_comp_event_desc desc;
	int saved = errno;

	if (cq->armed == SIM_CQ_ARM_NONE)
		return;
	if (cq->armed == SIM_CQ_ARM_SOLICITED && !solicited)
		return;
	/* An arm is good for one event. */
	cq->armed = SIM_CQ_ARM_NONE;
	if (!cq->channel || cq->channel->user_closed)
		return;
	memset(&desc, 0, sizeof(desc));
	desc.cq_handle = cq->user_handle;
	if (sim_event_post(cq->channel->fd_dev, &desc, sizeof(desc))) {
		cq->comp_events_reported++;
		atomic_fetch_add_explicit(&cq->uctx->dev->stats.comp_events, 1,
					  memory_order_relaxed);
	}
	errno = saved;
}

void sim_event_async(struct sim_ucontext *uctx, uint64_t element,
		     enum ibv_event_type type, uint32_t *reported)
{
	struct ib_uverbs_async_event_desc desc;
	int saved = errno;

	if (!uctx || uctx->closing)
		return;
	memset(&desc, 0, sizeof(desc));
	desc.element = element;
	desc.event_type = (uint32_t)type;
	if (send_event(uctx->async_fd_dev, &desc, sizeof(desc))) {
		if (reported)
			(*reported)++;
		atomic_fetch_add_explicit(&uctx->dev->stats.async_events, 1,
					  memory_order_relaxed);
	}
	errno = saved;
}

/* Is fd still the file we gave out (the application may have closed it
 * and the number may now be another file)? */
static bool same_file(int fd, dev_t st_dev, ino_t st_ino)
{
	struct stat st;

	return fd >= 0 && !sim_libc.fstat(fd, &st) && st.st_dev == st_dev &&
	       st.st_ino == st_ino;
}

/* An unread event out of the queue without waiting: from the channel's
 * pipe through the sim's own read end, from the context's socket. */
static bool take_event(int fd, bool pipe, void *desc, size_t len)
{
	if (pipe)
		return sim_sys(SYS_read, fd, desc, len) == (long)len;
	return sim_libc.recvfrom(fd, desc, len, MSG_DONTWAIT, NULL, NULL) ==
	       (ssize_t)len;
}

static bool put_event(int fd, bool pipe, const void *desc, size_t len)
{
	return pipe ? sim_event_post(fd, desc, len) :
		      send_event(fd, desc, len);
}

/*
 * Takes every unread event out of the queue (take_fd), puts back those
 * not for `match` (dev_fd), in their order, and returns how many were.
 * All the others are held until the queue is empty: one put back while
 * reading would be read again, forever.
 */
static uint32_t reclaim(int take_fd, int dev_fd, bool pipe, size_t len,
			bool (*is_match)(const void *desc, uint64_t key),
			uint64_t key)
{
	uint8_t desc[sizeof(struct ib_uverbs_async_event_desc)];
	uint8_t *keep = NULL, *grown;
	size_t nkeep = 0, cap = 0, i;
	uint32_t dropped = 0;

	while (take_event(take_fd, pipe, desc, len)) {
		if (is_match(desc, key)) {
			dropped++;
			continue;
		}
		if (nkeep == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(keep, cap * len);
			if (!grown) {
				/* No room to hold the rest: this one goes
				 * back behind them rather than be lost. */
				put_event(dev_fd, pipe, desc, len);
				break;
			}
			keep = grown;
		}
		memcpy(keep + nkeep++ * len, desc, len);
	}
	for (i = 0; i < nkeep; i++)
		put_event(dev_fd, pipe, keep + i * len, len);
	free(keep);
	return dropped;
}

static bool comp_match(const void *d, uint64_t key)
{
	const struct ib_uverbs_comp_event_desc *desc = d;

	return desc->cq_handle == key;
}

static bool async_match(const void *d, uint64_t key)
{
	const struct ib_uverbs_async_event_desc *desc = d;

	return desc->element == key &&
	       desc->event_type != IBV_EVENT_PORT_ACTIVE &&
	       desc->event_type != IBV_EVENT_PORT_ERR &&
	       desc->event_type != IBV_EVENT_LID_CHANGE &&
	       desc->event_type != IBV_EVENT_PKEY_CHANGE &&
	       desc->event_type != IBV_EVENT_GID_CHANGE &&
	       desc->event_type != IBV_EVENT_SM_CHANGE &&
	       desc->event_type != IBV_EVENT_CLIENT_REREGISTER &&
	       desc->event_type != IBV_EVENT_DEVICE_FATAL;
}

uint32_t sim_event_comp_reclaim(struct uverbs_channel *chan,
				uint64_t cq_user_handle)
{
	if (chan->ch.user_closed ||
	    !same_file(chan->ch.fd_user, chan->st_dev, chan->st_ino)) {
		chan->ch.user_closed = true;
		return 0;
	}
	return reclaim(chan->fd_drain, chan->ch.fd_dev, true,
		       sizeof(struct ib_uverbs_comp_event_desc), comp_match,
		       cq_user_handle);
}

uint32_t sim_event_async_reclaim(struct sim_file *f, uint64_t element)
{
	struct sim_ucontext *uctx = f->uctx;

	if (!uctx || !same_file(uctx->async_fd_user, f->async_st_dev,
				  f->async_st_ino))
		return 0;
	return reclaim(uctx->async_fd_user, uctx->async_fd_dev, false,
		       sizeof(struct ib_uverbs_async_event_desc), async_match,
		       element);
}
