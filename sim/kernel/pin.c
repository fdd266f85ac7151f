// SPDX-License-Identifier: BSD-2-Clause
/*
 * Pinning the pages of a ring for the device.
 *
 * vmw_pvrdma pins the pages of every ring buffer it is given (ib_umem_get,
 * EFAULT for a page that cannot be pinned writable) and hands the device a
 * page directory; from then on the device reads WQEs and writes CQEs in
 * those physical pages, whatever the process later does with its mapping:
 * an munmap, mprotect or a new mapping at the same address leaves the
 * device's pages alone, and the device never faults in the application.
 *
 * The model does the same with two mappings of one memory file: the
 * application's pages (private memory) are moved into a memfd, which is
 * mapped back at the very same address with the same content, and mapped
 * a second time for the device. Pages that are already shared memory (a
 * ring page inside another ring's buffer, as when a QP's ring-state page
 * lies in a CQ's buffer, or the application's own shared memory) are not
 * moved: the device's mapping gets a second view of them (mremap with an
 * old size of 0), so both rings see the one page as hardware would.
 * With no descriptor free for the memory file (the kernel needs none to
 * pin), the memory is shared memory of no file, mapped the same two ways.
 *
 * The device's mapping lives until the object is destroyed; the
 * application's mapping is the application's, as a pinned page stays the
 * process's after the kernel unpins it. The memfd's pages live as long as
 * some mapping of them. Its fd is kept until the object is destroyed, so
 * that a same-host requester can map the rings too (pidfd_getfd: the
 * device serves every process of the host), when the file is the whole
 * view (no page aliased) and a descriptor is free from PIN_FD_FLOOR (or
 * half the process's limit, if that is lower) on: the application's own
 * descriptors, allocated lowest first, keep those below, and a ring
 * without one is reached only through the fabric. The floor is not
 * higher: the kernel sizes a process's descriptor table by its highest
 * descriptor, and copies it at each fork. The kernel takes none of the
 * application's descriptors for a ring, so the kept files are bounded:
 * only numbers below the floor plus an eighth of the limit (at most
 * PIN_FD_MAX) are taken, and the application keeps the rest of its limit
 * whatever it creates. A kept file is the sim's own descriptor (fds.h),
 * out of reach of the application's close() and dup2(), and closed only
 * while its number still names it. The file is sealed at its size, so
 * that no one can shrink it under a requester's mapping. All mappings
 * are made with raw system calls, so that the sim's own mmap/munmap
 * interposition never sees them. A process-wide lock orders pins of
 * different adapters.
 *
 * Between reading a private page and mapping its copy back, a store to it
 * by another thread would be lost: rings are the application's to set up
 * before it asks for the object, as with any buffer handed to a kernel.
 *
 * An MR's pages are checked as ib_umem_get would pin them
 * (sim_mr_pin_check); the device keeps them (device/mr.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fds.h"
#include "kernel.h"
#include "pin.h"
#include "sys.h"
#include "uaccess.h"

#define PAGE_MASK_LOW	((uint64_t)SIM_PAGE_SIZE - 1)

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	return sim_sys_mmap(addr, len, prot, flags, fd, off);
}

static void sys_munmap(void *addr, size_t len)
{
	sim_sys_munmap(addr, len);
}

#define PIN_FD_FLOOR	4096
/* At most this many kept files, and at most an eighth of the limit. */
#define PIN_FD_MAX	4096

static _Atomic uint64_t pin_ids;

/* Keeps fd, the whole view's memory file, at a descriptor from the floor
 * on, within the bound; -1 when there is none or the file is not whole. */
static void pin_keep_fd(struct sim_pin *pin, int fd, bool whole)
{
	struct rlimit rl;
	struct stat st;
	rlim_t floor, span;
	long kept;

	pin->fd = -1;
	pin->id = atomic_fetch_add(&pin_ids, 1) + 1;
	if (!whole || sim_sys(SYS_getrlimit, RLIMIT_NOFILE, &rl, 0) ||
	    rl.rlim_cur < 64 || sim_sys(SYS_fstat, fd, &st, 0))
		return;
	floor = rl.rlim_cur / 2 < PIN_FD_FLOOR ? rl.rlim_cur / 2 :
						 PIN_FD_FLOOR;
	span = rl.rlim_cur / 8 < PIN_FD_MAX ? rl.rlim_cur / 8 : PIN_FD_MAX;
	kept = sim_sys(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (long)floor);
	if (kept < 0)
		return;
	/* The lowest free number from the floor: past the bound, the kept
	 * files (and the application's own up there) have their share. */
	if ((rlim_t)kept >= floor + span) {
		sim_sys(SYS_close, kept, 0, 0);
		return;
	}
	/* The sim's from now on: the application's close() and dup2()
	 * cannot take the number from under it. */
	pin->fd = sim_fd_adopt((int)kept);
	pin->dev = st.st_dev;
	pin->ino = st.st_ino;
}

/* The kept file, if its number still names it: one closed by an inline
 * system call and reused is the application's file now. */
static void pin_drop_fd(struct sim_pin *pin)
{
	struct stat st;

	if (!sim_sys(SYS_fstat, pin->fd, &st, 0) &&
	    (uint64_t)st.st_dev == pin->dev &&
	    (uint64_t)st.st_ino == pin->ino)
		sim_fd_close(pin->fd);
	else
		sim_fd_abandon(pin->fd);
}

/* The pages covering a range: [*start, *start + *len). */
static int range_pages(const struct sim_pin_range *r, uint64_t *start,
		       uint64_t *len)
{
	uint64_t end;

	if (!r->len)
		return -EINVAL;
	if (r->addr + r->len < r->addr ||
	    r->addr + r->len > UINT64_MAX - PAGE_MASK_LOW)
		return -EFAULT;
	*start = r->addr & ~PAGE_MASK_LOW;
	end = (r->addr + r->len + PAGE_MASK_LOW) & ~PAGE_MASK_LOW;
	*len = end - *start;
	return 0;
}

/*
 * Page `page` of the application, if it is shared memory, becomes page
 * `dst` of the device's mapping: true. False when it is private memory
 * (it must be moved), with *err set when it is not mapped at all.
 */
static bool alias_shared_page(uint64_t page, uint8_t *dst, int *err)
{
	void *dup = sim_sys_mremap((void *)(uintptr_t)page, 0,
				   SIM_PAGE_SIZE, MREMAP_MAYMOVE, NULL);

	*err = 0;
	if (dup == MAP_FAILED) {
		/* EINVAL: private memory, nothing to share. Anything else
		 * (no mapping, I/O memory) cannot be pinned. */
		if (errno != EINVAL)
			*err = -EFAULT;
		return false;
	}
	if (sim_sys_mremap(dup, SIM_PAGE_SIZE, SIM_PAGE_SIZE,
			   MREMAP_MAYMOVE | MREMAP_FIXED, dst) == MAP_FAILED) {
		sys_munmap(dup, SIM_PAGE_SIZE);
		*err = -ENOMEM;
		return false;
	}
	return true;
}

/* Pages [off, off + len) of the device's view, mapped at addr in place
 * of what was there: from the file fd, or from the view itself when
 * there is no file. 0 or -1. */
static int map_back(uint64_t addr, size_t len, int fd, uint8_t *view,
		    size_t off)
{
	void *at = (void *)(uintptr_t)addr;

	if (fd >= 0)
		return sys_mmap(at, len, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_FIXED, fd, (off_t)off) ==
		       MAP_FAILED ? -1 : 0;
	/* An old size of 0: a second mapping of the same shared pages. */
	return sim_sys_mremap(view + off, 0, len,
			      MREMAP_MAYMOVE | MREMAP_FIXED, at) ==
	       MAP_FAILED ? -1 : 0;
}

/*
 * One range of the ring's pages into the device's view at off, and the
 * view's pages back at the range's address: pages of shared memory are
 * aliased (shared[] says which), private ones copied. 0 or -errno.
 */
static int pin_range(uint64_t start, uint64_t len, size_t off, int fd,
		     uint8_t *view, bool *shared)
{
	size_t n = len / SIM_PAGE_SIZE, k, run;
	int ret;

	/* Pages that are shared memory already are aliased. */
	for (k = 0; k < n; k++) {
		size_t pg = off / SIM_PAGE_SIZE + k;

		shared[pg] = alias_shared_page(start + k * SIM_PAGE_SIZE,
					       view + pg * SIM_PAGE_SIZE, &ret);
		if (ret)
			return ret;
	}
	/* ib_umem_get: every page readable and writable by the process.
	 * Reading fills the device's copy of the private pages; writing the
	 * same bytes back proves the mapping writable. */
	if (sim_copy_from_user(view + off, start, len) ||
	    sim_copy_to_user(start, view + off, len))
		return -EFAULT;
	/* The private pages now become the memfd's, at the same address and
	 * with the same content. */
	for (k = 0; k < n; k += run) {
		size_t pg = off / SIM_PAGE_SIZE + k;

		for (run = 0; k + run < n && !shared[pg + run]; run++)
			;
		if (!run) {
			run = 1;	/* a shared page stays */
			continue;
		}
		/* The pages already replaced hold what they held: the
		 * application sees no change. */
		if (map_back(start + k * SIM_PAGE_SIZE, run * SIM_PAGE_SIZE,
			     fd, view, pg * SIM_PAGE_SIZE))
			return -ENOMEM;
	}
	return 0;
}

int sim_pin_rings(struct sim_pin *pin, const struct sim_pin_range *ranges,
		  unsigned int nranges)
{
	uint64_t start[2], len[2];
	size_t total = 0, npages, k;
	bool *shared = NULL;
	uint8_t *view;
	unsigned int i, r, order[2] = { 0, 1 };
	bool whole = true;
	int fd, ret;

	pin->base = NULL;
	pin->len = 0;
	pin->fd = -1;
	if (nranges < 1 || nranges > 2)
		return -EINVAL;
	for (i = 0; i < nranges; i++) {
		ret = range_pages(&ranges[i], &start[i], &len[i]);
		if (ret)
			return ret;
		if (len[i] > SIZE_MAX - total)
			return -ENOMEM;
		total += len[i];
	}
	npages = total / SIM_PAGE_SIZE;
	/* The memory file holds the ranges in address order: buffers that
	 * are neighbours in the process (a QP's receive buffer mapped just
	 * below its send buffer) stay one mapping there, not two. */
	if (nranges == 2 && start[1] < start[0]) {
		order[0] = 1;
		order[1] = 0;
	}
	pin->off[order[0]] = 0;
	if (nranges == 2)
		pin->off[order[1]] = len[order[0]];

	/* ib_umem_get: every page mapped and writable by the process, as
	 * it is now, before the device's own mappings can land anywhere (a
	 * range the process does not have must not find them there). */
	for (i = 0; i < nranges; i++)
		if (sim_app_pin((void *)(uintptr_t)start[i], len[i], true))
			return -EFAULT;

	fd = (int)sim_sys(SYS_memfd_create, "pvrdma-ring",
			  MFD_CLOEXEC | MFD_ALLOW_SEALING, 0);
	if (fd >= 0 && sim_sys(SYS_ftruncate, fd, total, 0)) {
		sim_sys(SYS_close, fd, 0, 0);
		return -ENOMEM;
	}
	/* Its size for good: whoever holds the file (the application finds
	 * it in its fd table) cannot shrink it under a mapping, where a
	 * same-host requester would fault. Unsealed, it is not kept. */
	if (fd >= 0 && sim_sys(SYS_fcntl, fd, F_ADD_SEALS,
			       F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		whole = false;
	/* No descriptor free (the kernel needs none for a ring): shared
	 * memory of no file, which only this process reaches. */
	if (fd < 0)
		view = sys_mmap(NULL, total, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	else
		view = sys_mmap(NULL, total, PROT_READ | PROT_WRITE,
				MAP_SHARED, fd, 0);
	shared = calloc(npages, sizeof(*shared));
	if (view == MAP_FAILED || !shared) {
		ret = -ENOMEM;
		goto err;
	}

	pthread_mutex_lock(&pin_lock);
	/* Range by range, so that a receive buffer sharing pages with the
	 * send buffer finds them already moved and shares them too. */
	for (r = 0; r < nranges; r++) {
		i = order[r];
		ret = pin_range(start[i], len[i], pin->off[i], fd, view, shared);
		if (ret)
			goto err_unlock;
	}
	pthread_mutex_unlock(&pin_lock);
	/* A fork()ed child gets no device. */
	sim_sys_madvise(view, total, MADV_DONTFORK);
	for (k = 0; k < npages; k++)
		whole &= !shared[k];
	free(shared);
	pin_keep_fd(pin, fd, whole && fd >= 0);
	if (fd >= 0)
		sim_sys(SYS_close, fd, 0, 0);
	pin->base = view;
	pin->len = total;
	pin->pid = sim_self_pid();
	return 0;

err_unlock:
	pthread_mutex_unlock(&pin_lock);
err:
	if (view != MAP_FAILED)
		sys_munmap(view, total);
	free(shared);
	if (fd >= 0)
		sim_sys(SYS_close, fd, 0, 0);
	return ret;
}

void sim_unpin(struct sim_pin *pin)
{
	/* The parent's pin, in a fork()ed child: the kept file is the
	 * child's copy to close, the view is not the child's to unmap. */
	bool mapped = pin->base && pin->pid == sim_self_pid();

	/* An object that was never pinned (calloc'ed) has no fd. */
	if (pin->base && pin->fd >= 0)
		pin_drop_fd(pin);
	if (mapped)
		sys_munmap(pin->base, pin->len);
	pin->base = NULL;
	pin->len = 0;
	pin->fd = -1;
}

/* ---- registered memory (REG_MR) ---- */

static bool access_writes(int access)
{
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
}

/*
 * ib_umem_get pins the pages with FOLL_WRITE when the MR lets the device
 * write, else for reading: a page that is not mapped, or not writable
 * (readable) as the access needs, fails the pin with EFAULT; so does a
 * doorbell page, which is device memory (VM_IO | VM_PFNMAP) and never
 * pinned.
 */
int sim_mr_pin_check(uint64_t addr, uint64_t len, int access)
{
	uint64_t page;

	for (page = addr & ~(uint64_t)(SIM_PAGE_SIZE - 1); page < addr + len;
	     page += SIM_PAGE_SIZE)
		if (sim_kernel_host.is_uar((void *)(uintptr_t)page))
			return -EFAULT;
	return -sim_app_pin((void *)(uintptr_t)addr, len,
			    access_writes(access));
}
