/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * write() of a command to a uverbs file as the application sees it: the
 * kernel model answers len or -errno, the VFS gives -1 and errno.
 */
#ifndef TEST_VFS_WRITE_H
#define TEST_VFS_WRITE_H

#include <errno.h>

#include "kernel.h"

__attribute__((unused))
static ssize_t vfs_write(struct sim_file *f, const void *buf, size_t len)
{
	ssize_t ret = uverbs_write(f, buf, len);

	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#endif /* TEST_VFS_WRITE_H */
