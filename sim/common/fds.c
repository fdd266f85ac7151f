// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sim's own fds: fabric sockets, epoll, eventfd, the device ends of
 * event socketpairs, the CM agent's sockets and eventfd. A kernel device
 * holds none of these in the process's fd table, but the sim has no other
 * table to put them in, so they are kept out of the application's way
 * instead:
 *
 *  - each moves to the top of the fd space (below RLIMIT_NOFILE and 16384),
 *    where an application that takes the lowest free numbers does not
 *    reach;
 *  - the preload library hides them from the application: close(),
 *    close_range(), closefrom() (and their raw system calls) leave them
 *    open and report nothing of them, and dup2()/dup3() onto one fail
 *    with EBUSY (as the kernel answers a dup2 that races with an open of
 *    the same number).
 *
 * Most move themselves (sim_fd_own()); a few the sim places where it wants
 * them (the ring files kept from the middle of the fd space up, see
 * kernel/pin.c) and marks there (sim_fd_adopt()).
 *
 * The sim closes them with sim_fd_close() only. The set is a bitmap read
 * without locks; fds at or above SIM_FD_BITMAP_FDS are never the sim's
 * (an fd that cannot move below it stays where it was, still marked).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "fds.h"
#include "sys.h"

#define WORD_BITS	(8 * sizeof(unsigned long))

static _Atomic(unsigned long) own[SIM_FD_BITMAP_FDS / WORD_BITS];
static atomic_int own_base;		/* 0: not computed yet */

/*
 * Where the sim's fds go: a quarter of the soft limit, at most 1024, from
 * the top, so the application's lowest-free numbers rarely meet them; but
 * below FD_TOP whatever the limit, as the kernel sizes a process's fd
 * table (and copies it at fork) to the highest number in use.
 */
#define FD_TOP		16384
static int base_fd(void)
{
	int base = atomic_load_explicit(&own_base, memory_order_relaxed);
	struct rlimit rl;
	unsigned long soft;

	if (base)
		return base;
	if (sim_sys6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&rl, 0, 0))
		rl.rlim_cur = 1024;
	soft = rl.rlim_cur;
	if (soft > FD_TOP)
		soft = FD_TOP;
	if (soft < 64)
		base = 3;
	else if (soft / 4 > 1024)
		base = (int)(soft - 1024);
	else
		base = (int)(soft - soft / 4);
	atomic_store_explicit(&own_base, base, memory_order_relaxed);
	return base;
}

static void mark(int fd, bool on)
{
	unsigned long bit = 1ul << (fd % WORD_BITS);

	if (on)
		atomic_fetch_or(&own[fd / WORD_BITS], bit);
	else
		atomic_fetch_and(&own[fd / WORD_BITS], ~bit);
}

bool sim_fd_is_own(int fd)
{
	if (fd < 0 || fd >= SIM_FD_BITMAP_FDS)
		return false;
	return atomic_load_explicit(&own[fd / WORD_BITS],
				    memory_order_relaxed) &
	       (1ul << (fd % WORD_BITS));
}

int sim_fd_own(int fd)
{
	long moved;

	if (fd < 0)
		return fd;
	if (fd < base_fd()) {
		moved = sim_sys(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base_fd());
		if (moved >= 0 && moved < SIM_FD_BITMAP_FDS) {
			sim_sys(SYS_close, fd, 0, 0);
			fd = (int)moved;
		} else if (moved >= 0) {
			sim_sys(SYS_close, moved, 0, 0);
		}
	}
	if (fd < SIM_FD_BITMAP_FDS)
		mark(fd, true);
	return fd;
}

int sim_fd_adopt(int fd)
{
	if (fd >= 0 && fd < SIM_FD_BITMAP_FDS)
		mark(fd, true);
	return fd;
}

void sim_fd_abandon(int fd)
{
	if (fd >= 0 && fd < SIM_FD_BITMAP_FDS)
		mark(fd, false);
}

int sim_fd_close(int fd)
{
	long ret;

	if (fd >= 0 && fd < SIM_FD_BITMAP_FDS)
		mark(fd, false);
	ret = sim_sys(SYS_close, fd, 0, 0);
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return 0;
}

int sim_fd_next_own(unsigned int from, unsigned int last)
{
	unsigned int fd = from;

	if (last >= SIM_FD_BITMAP_FDS)
		last = SIM_FD_BITMAP_FDS - 1;
	while (fd <= last) {
		unsigned long w = atomic_load_explicit(&own[fd / WORD_BITS],
						       memory_order_relaxed);

		w &= ~0ul << (fd % WORD_BITS);
		if (w) {
			fd = fd - fd % WORD_BITS + __builtin_ctzl(w);
			return fd <= last ? (int)fd : -1;
		}
		fd = fd - fd % WORD_BITS + WORD_BITS;
	}
	return -1;
}
