// SPDX-License-Identifier: BSD-2-Clause
/*
 * A completion channel is a pipe in packet mode (O_DIRECT): each event is
 * one write and comes out of one read whole, as the kernel's event file
 * gives one event per read. A pipe rather than a datagram socket because
 * an event is raised on the path of every event-driven message: a pipe's
 * write and read cost a third of a datagram's send and receive (no socket
 * buffer, no credentials to attach and drop), and they wake the reader the
 * same way. It stays a real file: poll, epoll, select, O_NONBLOCK and
 * fork behave as they do on any fd.
 *
 * The sim keeps the write end, non-blocking (a device never waits for a
 * reader), and a second read end of its own, non-blocking too, opened
 * anew through /proc so that it is a file of its own: the unread events
 * of a destroyed CQ are drained through it, whatever the application's
 * file flags, and the pipe keeps a reader after the application closed
 * its end, so that a write never raises SIGPIPE.
 *
 * Each event takes a slot of the pipe: it starts with EVENT_PIPE_SLOTS
 * (a process may have many channels, and the pages a user's pipes hold
 * are limited) and doubles when full, up to the largest pipe an
 * unprivileged process may have; an event that finds it full then is
 * lost, as one the kernel could not queue.
 */

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"
#include "event_pipe.h"
#include "fds.h"
#include "sys.h"

#define EVENT_PIPE_SLOTS	4
#define EVENT_PIPE_MAX_BYTES	(1 << 20)	/* fs.pipe-max-size's default */

long sim_event_pipe_reader(int fd)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return sim_sys(SYS_open, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
}

int sim_event_pipe_open(struct sim_event_pipe *p)
{
	int fds[2];
	long ret, fd;

	ret = sim_sys(SYS_pipe2, fds, O_DIRECT | O_CLOEXEC, 0);
	if (ret)
		return ret == -EMFILE || ret == -ENFILE ? (int)ret : -ENOMEM;
	/* Smaller than the default: it grows when events pile up. */
	sim_sys(SYS_fcntl, fds[1], F_SETPIPE_SZ,
		EVENT_PIPE_SLOTS * SIM_PAGE_SIZE);
	fd = sim_event_pipe_reader(fds[0]);
	if (fd < 0 || sim_sys(SYS_fcntl, fds[1], F_SETFL,
			      O_DIRECT | O_NONBLOCK)) {
		if (fd >= 0)
			sim_sys(SYS_close, fd, 0, 0);
		sim_sys(SYS_close, fds[0], 0, 0);
		sim_sys(SYS_close, fds[1], 0, 0);
		return fd == -EMFILE || fd == -ENFILE ? (int)fd : -ENOMEM;
	}
	p->user = fds[0];
	p->dev = sim_fd_own(fds[1]);
	p->drain = sim_fd_own((int)fd);
	return 0;
}

void sim_event_pipe_close(struct sim_event_pipe *p)
{
	sim_fd_close(p->dev);
	sim_fd_close(p->drain);
	p->dev = p->drain = -1;
}

bool sim_event_post(int fd, const void *desc, size_t len)
{
	bool grown = false;
	long n, size;

	for (;;) {
		n = sim_sys(SYS_write, fd, desc, len);
		if (n == -EINTR)
			continue;
		if (n != -EAGAIN || grown)
			break;
		grown = true;
		size = sim_sys(SYS_fcntl, fd, F_GETPIPE_SZ, 0);
		if (size <= 0 || size >= EVENT_PIPE_MAX_BYTES ||
		    sim_sys(SYS_fcntl, fd, F_SETPIPE_SZ, 2 * size) < 0)
			break;
	}
	return n == (long)len;
}
