// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fault-safe user copies. The kernel's copy_*_user fix up a fault and
 * return what was not copied; in a process the same is had from
 * process_vm_readv/process_vm_writev on our own pid: the kernel walks the
 * page tables with the mapping's protections (no write through a
 * read-only mapping, nothing above the user address limit) and reports
 * EFAULT or a short count instead of delivering SIGSEGV. The caller needs
 * no ptrace rights on itself, and nothing is left in the application's fd
 * space or signal state.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"
#include "uaccess.h"

static int user_copy(uint64_t user, void *local, size_t len, int write)
{
	pid_t self = sim_self_pid();
	size_t done = 0;

	if (!len)
		return 0;
	/* Address arithmetic must not wrap: the kernel's access_ok(). */
	if (user + len < user || user + len > (uint64_t)SSIZE_MAX)
		return -EFAULT;
	while (done < len) {
		struct iovec lio = {
			.iov_base = (char *)local + done,
			.iov_len = len - done,
		};
		struct iovec rio = {
			.iov_base = (void *)(uintptr_t)(user + done),
			.iov_len = len - done,
		};
		ssize_t n;

		n = write ? process_vm_writev(self, &lio, 1, &rio, 1, 0) :
			    process_vm_readv(self, &lio, 1, &rio, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)	/* a short count, then the fault itself */
			return -EFAULT;
		done += (size_t)n;
	}
	return 0;
}

int sim_copy_from_user(void *dst, uint64_t src, size_t len)
{
	return user_copy(src, dst, len, 0);
}

int sim_copy_to_user(uint64_t dst, const void *src, size_t len)
{
	return user_copy(dst, (void *)(uintptr_t)src, len, 1);
}

int sim_clear_user(uint64_t dst, size_t len)
{
	static const uint8_t zeros[256];
	int ret;

	while (len) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);

		ret = sim_copy_to_user(dst, zeros, n);
		if (ret)
			return ret;
		dst += n;
		len -= n;
	}
	return 0;
}
