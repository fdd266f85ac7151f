// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device's accesses to application memory.
 *
 * A real adapter reaches registered memory through the pages the kernel
 * pinned: nothing the application does to its mappings makes a DMA fault.
 * The sim reaches it through the application's own address space, so each
 * copy that is not already a system call (the fabric's sendmsg and readv
 * are) is made where a bad page cannot raise a signal in the device:
 * reads through process_vm_readv on this process, which answers EFAULT
 * for a page that is gone or not accessible; writes (placing what a
 * packet brought) under the fault guard (fault_guard.c), a memcpy that
 * comes back with the bytes copied before the bad page, with no page walk
 * nor pin per copy. mr.c keeps registered pages in place (its pinning
 * hooks); these copies cover what no hook sees (glibc's own munmap of a
 * freed chunk, mprotect, raw system calls), and the device then fails
 * the operation as a real one fails a bad access: an error completion,
 * never a signal.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"
#include "fault_guard.h"
#include "sys.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

bool sim_app_read(void *dst, const struct iovec *src, int n, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	size_t want = 0;
	ssize_t got;
	int i;

	for (i = 0; i < n; i++)
		want += src[i].iov_len;
	if (want > len)
		want = len;
	if (!want)
		return true;
	do {
		got = process_vm_readv(sim_self_pid(), &local, 1, src, n, 0);
	} while (got < 0 && errno == EINTR);
	return got >= 0 && (size_t)got == want;
}

bool sim_app_write(const struct iovec *dst, int n, const void *src,
		   size_t len)
{
	struct iovec local = { .iov_base = (void *)src, .iov_len = len };
	size_t want = 0;
	int i;

	for (i = 0; i < n; i++)
		want += dst[i].iov_len;
	if (want > len)
		want = len;
	local.iov_len = want;
	return !want || sim_app_copy_in(dst, n, &local, 1) == want;
}

size_t sim_app_scatter(const struct iovec *dst, int ndst,
		       const struct iovec *src, int nsrc)
{
	return sim_app_copy_in(dst, ndst, src, nsrc);
}

/*
 * Faulting pages in with MADV_POPULATE_{WRITE,READ} applies the rules of a
 * pin (mapped, and writable or readable as asked; breaks copy-on-write as
 * a writable pin does) without touching the content. A kernel without it
 * (before 5.14) says EINVAL for the advice even on a page we know is good:
 * the checks are then skipped.
 */
static bool populate_supported(void)
{
	static atomic_int works = -1;	/* unknown yet */
	static char probe_page[SIM_PAGE_SIZE]
		__attribute__((aligned(SIM_PAGE_SIZE)));
	long r;

	if (works < 0) {
		do {
			r = sim_sys(SYS_madvise, probe_page, SIM_PAGE_SIZE,
				    MADV_POPULATE_WRITE);
		} while (r == -EINTR);
		works = !r;
	}
	return works;
}

int sim_app_pin(void *addr, size_t len, bool write)
{
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(SIM_PAGE_SIZE - 1);
	uintptr_t end = ((uintptr_t)addr + len + SIM_PAGE_SIZE - 1) &
			~(uintptr_t)(SIM_PAGE_SIZE - 1);
	long r;

	if (!populate_supported())
		return 0;
	do {
		r = sim_sys(SYS_madvise, start, end - start,
			    write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	} while (r == -EINTR);
	return r ? EFAULT : 0;
}

bool sim_app_writable(void *p, size_t len)
{
	return !sim_app_pin(p, len, true);
}
