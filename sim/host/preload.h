/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma-sim.so: the libc entry points libibverbs uses on a uverbs
 * device, answered as ib_uverbs would answer them. Loaded with LD_PRELOAD
 * by the launcher; everything that is not about a simulated adapter goes
 * straight to libc. What its files share (nothing outside the preload
 * library includes this):
 *
 *   preload.c    the constructor: configuration, sysfs tree, the trap,
 *                the kernel model's host services, the libc gateway
 *   real.c       libc's own functions behind the names answered here
 *   fd_table.c   open device files by fd: close*, dup*, fcntl(F_DUPFD*)
 *                and the file's lifetime
 *   devfile.c    open*("/dev/infiniband/uverbsN") (a memfd registered as
 *                the uverbs file), open*("/dev/infiniband/rdma_cm") (an
 *                eventfd registered as an rdma_ucm file), write (the
 *                commands; EBADF when opened read-only), read and its
 *                variants (EINVAL/EBADF/ESPIPE: no read method), ioctl
 *                (ENOTTY: libibverbs keeps to write(); on other fds
 *                interface requests see the netdevs, ifaddrs.c),
 *                socket(AF_NETLINK, NETLINK_RDMA) (nldev.c) and
 *                NETLINK_ROUTE (rtnetlink.c)
 *   stat.c       stat/fstat/statx and access/xattrs of those nodes: a
 *                character device 231:(192+N), crw-rw-rw-, no labels
 *   mmap.c       mmap/munmap/mremap of the UAR page; munmap, mmap
 *                MAP_FIXED, mremap and madvise(DONTNEED/FREE/REMOVE) of
 *                registered memory keep the pages it loses
 *   sigcalls.c   every libc way to set a signal's action or a thread's
 *                mask: SIGSEGV and SIGBUS stay the doorbell trap's
 *                (doorbell.c), the application's view is kept in
 *                signals.c
 *   threads.c    pthread_create, timer_create, mq_notify: the view
 *   exec.c       exec*, setcontext, longjmp: carried where the kernel
 *                carries a mask
 *   syscall.c    syscall(): the same, for the raw system calls
 *   neigh.c      the simulated Ethernet segment's neighbour table
 *   ifaddrs.c    getifaddrs, if_nametoindex & co. and interface ioctls:
 *                the ports' netdevs (netdev.c) added to the host's
 *   ethtool.c    SIOCETHTOOL on those netdevs: vmxnet3's driver info,
 *                link state and settings
 *   sys_overlay.c  sysfs at its real paths: the walk that picks the
 *                tree's file or the host's for a path under /sys
 *   sys_dirs.c   open, directory streams (merged listings), scandir,
 *                realpath, readlink, chdir/getcwd, fopen under /sys
 *   sys_walk.c   nftw/ftw and glob under /sys
 *   nl_sock.c    netlink sockets the sim answers (a socket pair), and
 *                the socket calls on them (bind, send*, recv*, ...)
 *   nldev.c      RDMA netlink: devices, ports, system, chardevs,
 *                resources, counters
 *   nldev_snap.c snapshots of each process's objects and counters in
 *                the rundir, for rdma resource and rdma statistic
 *   rtnetlink.c  route netlink dumps and queries with the netdevs in
 *
 * An open uverbs file lives as long as an fd or a UAR mapping of it does,
 * as a kernel file held by its VMAs: after close_range() the data path
 * works and control commands get EBADF. An fd is taken for a uverbs file
 * only while it still names the same open file (device and inode of its
 * memfd), so a number closed where the sim could not see it is forgotten,
 * not confused with the next file to get it. The sim's own fds are kept
 * out of the application's way (common/fds.c). A mapping of the uverbs
 * file made behind the sim's back becomes a UAR at its first store
 * (SIGBUS fixup).
 *
 * The write/mmap path looks fds up in an array of atomic pointers, without
 * locks.
 */
#undef _FORTIFY_SOURCE		/* we define open() & co. ourselves */

#ifndef PVRDMA_SIM_PRELOAD_H
#define PVRDMA_SIM_PRELOAD_H

#include <alloca.h>
#include <dirent.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mqueue.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <poll.h>
#include <setjmp.h>
#include <ucontext.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "fds.h"
#include "host.h"
#include "libc.h"
#include "options.h"
#include "real.h"
#include "sys.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif
#define UVERBS_PATH	"/dev/infiniband/uverbs"
#define RDMA_CM_PATH	"/dev/infiniband/rdma_cm"
#define RDMA_CM_INDEX	SIM_MAX_ADAPTERS
#define RDMA_CM_MAJOR	10	/* a misc device */
#define RDMA_CM_MINOR	58
#define FD_TABLE_SIZE	65536	/* fds above are never uverbs files */

/* One open of a uverbs device; dup'ed fds share it. Never freed, so a
 * racing lookup can never touch freed memory. */
struct host_file {
	struct sim_file *file;
	struct ucma_file *ucma;		/* an rdma_cm file instead */
	struct sim_dev *dev;
	atomic_uint refs;		/* fds and UAR mappings */
	int acc_mode;			/* O_RDONLY, O_WRONLY or O_RDWR */
	dev_t st_dev;			/* the memfd: what its fds name */
	ino_t st_ino;
	struct host_file *next;		/* all of them, for reuse */
	bool in_use;
};

extern _Atomic(struct host_file *) fd_table[FD_TABLE_SIZE];
extern _Atomic(struct host_file *) host_files;
extern atomic_uint app_samask_owned[NSIG];

static inline struct host_file *fd_lookup(int fd)
{
	if ((unsigned int)fd >= FD_TABLE_SIZE)
		return NULL;
	return atomic_load_explicit(&fd_table[fd], memory_order_acquire);
}

/* ---- fd_table.c ---- */
typedef int (*close_range_fn)(unsigned int, unsigned int, int);
struct host_file *host_file_get(void);
void host_file_release(struct host_file *hf);
void host_file_put(struct host_file *hf);
struct host_file *fd_file(int fd);
/* fd_file() with a reference held for a system call on the file, as the
 * kernel's fdget() holds one: a close() by another thread meanwhile leaves
 * the file open until the call's host_file_put(). NULL where fd names no
 * device file, or one being closed. */
struct host_file *fd_file_hold(int fd);
struct host_file *fd_file_stat(int fd, struct host_file *hf,
			       const struct stat *st);
int fd_install(int fd, struct host_file *hf);
struct ucma_file *ucma_file_of_fd(int fd);
int raw_close_range(unsigned int first, unsigned int last, int flags);
int app_close_range(unsigned int first, unsigned int last, int flags,
		    close_range_fn fn);
/* fork() waits for the lock of the open device files (host_lock_fork_safe).
 * Once, from the constructor. */
void host_files_fork_init(void);

/* ---- devfile.c ---- */
int uverbs_index(const char *path);

/* ---- nldev.c ---- */
/* socket(AF_NETLINK, type, NETLINK_RDMA), answered as the kernel's nldev. */
int nldev_socket(int type);

/* ---- mmap.c ---- */
void *host_mmap(void *addr, size_t len, int prot, int flags, int fd,
		off_t off);
int host_munmap(void *addr, size_t len);
void *host_mremap(void *old, size_t old_len, size_t new_len,
		  int flags, void *new_addr);
int host_madvise(void *addr, size_t len, int advice);
bool uar_bus_fixup(void *addr);
/* As host_files_fork_init(), for the lock of the UAR mappings. */
void uar_maps_fork_init(void);

/* ---- preload.c ---- */
/* fork() waits for lock, and the child makes it anew (before the
 * constructor registers the fork handlers of all such locks). */
void host_lock_fork_safe(pthread_mutex_t *lock);

/* ---- sigcalls.c ---- */
bool sig_valid(int sig);
int mask_change(int how, const sigset_t *set, sigset_t *old,
		bool pthread_style);

#endif /* PVRDMA_SIM_PRELOAD_H */
