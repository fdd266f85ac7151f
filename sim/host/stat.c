// SPDX-License-Identifier: BSD-2-Clause
/*
 * What stat() and its kin, access() and the xattr calls show of the
 * device nodes: a devtmpfs character device, crw-rw-rw-, no labels. The
 * many libc variants are generated from one list. See preload.h.
 */
#include "preload.h"

static dev_t uverbs_rdev(unsigned int index)
{
	if (index == RDMA_CM_INDEX)
		return makedev(RDMA_CM_MAJOR, RDMA_CM_MINOR);
	return makedev(SIM_UVERBS_MAJOR, SIM_UVERBS_MINOR_BASE + index);
}

/* What stat() of a devtmpfs node crw-rw-rw- root root shows. */
static void uverbs_stat(unsigned int index, struct stat *st)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(0, 5);
	st->st_ino = 1000 + index;
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_rdev = uverbs_rdev(index);
	st->st_blksize = 4096;
	st->st_atim = now;
	st->st_mtim = now;
	st->st_ctim = now;
}

/* An open uverbs fd: its memfd's stat with the device's identity. */
static void patch_fd_stat(struct host_file *hf, struct stat *st)
{
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = uverbs_rdev(hf->ucma ? RDMA_CM_INDEX : hf->dev->index);
	st->st_size = 0;
	st->st_blocks = 0;
}

/* On x86-64 struct stat and struct stat64 are the same layout. */
_Static_assert(sizeof(struct stat) == sizeof(struct stat64),
	       "stat64 differs from stat");

int stat(const char *path, struct stat *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, st);
		return 0;
	}
	return get_stat()(path, st);
}

int stat64(const char *path, struct stat64 *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, (struct stat *)st);
		return 0;
	}
	return get_stat64()(path, st);
}

int lstat(const char *path, struct stat *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, st);
		return 0;
	}
	return get_lstat()(path, st);
}

int lstat64(const char *path, struct stat64 *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, (struct stat *)st);
		return 0;
	}
	return get_lstat64()(path, st);
}

int fstat(int fd, struct stat *st)
{
	struct host_file *hf = fd_lookup(fd);
	int ret = get_fstat()(fd, st);

	if (!ret && (hf = fd_file_stat(fd, hf, st)))
		patch_fd_stat(hf, st);
	return ret;
}

int fstat64(int fd, struct stat64 *st)
{
	struct host_file *hf = fd_lookup(fd);
	int ret = get_fstat64()(fd, st);

	if (!ret && (hf = fd_file_stat(fd, hf, (struct stat *)st)))
		patch_fd_stat(hf, (struct stat *)st);
	return ret;
}

/* fstatat-style lookup: a device path, or an fd with AT_EMPTY_PATH. */
static bool statat_fake(int dirfd, const char *path, int flags,
			struct stat *st, int *ret)
{
	int idx = uverbs_index(path);
	struct host_file *hf;

	if (idx >= 0) {
		uverbs_stat(idx, st);
		*ret = 0;
		return true;
	}
	if ((flags & AT_EMPTY_PATH) && path && !path[0] &&
	    (hf = fd_file(dirfd))) {
		*ret = get_fstat()(dirfd, st);
		if (!*ret)
			patch_fd_stat(hf, st);
		return true;
	}
	return false;
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	int ret;

	if (statat_fake(dirfd, path, flags, st, &ret))
		return ret;
	return get_fstatat()(dirfd, path, st, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	int ret;

	if (statat_fake(dirfd, path, flags, (struct stat *)st, &ret))
		return ret;
	return get_fstatat64()(dirfd, path, st, flags);
}

static void stat_to_statx(const struct stat *st, struct statx *stx)
{
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_blksize = st->st_blksize;
	stx->stx_nlink = st->st_nlink;
	stx->stx_uid = st->st_uid;
	stx->stx_gid = st->st_gid;
	stx->stx_mode = st->st_mode;
	stx->stx_ino = st->st_ino;
	stx->stx_size = st->st_size;
	stx->stx_blocks = st->st_blocks;
	stx->stx_atime.tv_sec = st->st_atim.tv_sec;
	stx->stx_atime.tv_nsec = st->st_atim.tv_nsec;
	stx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
	stx->stx_mtime.tv_nsec = st->st_mtim.tv_nsec;
	stx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
	stx->stx_ctime.tv_nsec = st->st_ctim.tv_nsec;
	stx->stx_rdev_major = major(st->st_rdev);
	stx->stx_rdev_minor = minor(st->st_rdev);
	stx->stx_dev_major = major(st->st_dev);
	stx->stx_dev_minor = minor(st->st_dev);
}

int statx(int dirfd, const char *path, int flags, unsigned int mask,
	  struct statx *stx)
{
	struct stat st;
	int ret;

	if (statat_fake(dirfd, path, flags, &st, &ret)) {
		if (!ret)
			stat_to_statx(&st, stx);
		return ret;
	}
	return get_statx()(dirfd, path, flags, mask, stx);
}

/* The pre-2.33 glibc entry points old binaries still call. */
int __xstat(int ver, const char *path, struct stat *st);

int __xstat(int ver, const char *path, struct stat *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, st);
		return 0;
	}
	return get___xstat()(ver, path, st);
}

int __xstat64(int ver, const char *path, struct stat64 *st);

int __xstat64(int ver, const char *path, struct stat64 *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, (struct stat *)st);
		return 0;
	}
	return get___xstat64()(ver, path, st);
}

int __lxstat(int ver, const char *path, struct stat *st);

int __lxstat(int ver, const char *path, struct stat *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, st);
		return 0;
	}
	return get___lxstat()(ver, path, st);
}

int __lxstat64(int ver, const char *path, struct stat64 *st);

int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	int idx = uverbs_index(path);

	if (idx >= 0) {
		uverbs_stat(idx, (struct stat *)st);
		return 0;
	}
	return get___lxstat64()(ver, path, st);
}

int __fxstat(int ver, int fd, struct stat *st);

int __fxstat(int ver, int fd, struct stat *st)
{
	struct host_file *hf = fd_lookup(fd);
	int ret = get___fxstat()(ver, fd, st);

	if (!ret && (hf = fd_file_stat(fd, hf, st)))
		patch_fd_stat(hf, st);
	return ret;
}

int __fxstat64(int ver, int fd, struct stat64 *st);

int __fxstat64(int ver, int fd, struct stat64 *st)
{
	struct host_file *hf = fd_lookup(fd);
	int ret = get___fxstat64()(ver, fd, st);

	if (!ret && (hf = fd_file_stat(fd, hf, (struct stat *)st)))
		patch_fd_stat(hf, (struct stat *)st);
	return ret;
}

int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags);

int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags)
{
	int ret;

	if (statat_fake(dirfd, path, flags, st, &ret))
		return ret;
	return get___fxstatat()(ver, dirfd, path, st, flags);
}

int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags);

int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags)
{
	int ret;

	if (statat_fake(dirfd, path, flags, (struct stat *)st, &ret))
		return ret;
	return get___fxstatat64()(ver, dirfd, path, st, flags);
}

/* The node is crw-rw-rw-: every access mode is granted. */
int access(const char *path, int mode)
{
	if (uverbs_index(path) >= 0)
		return 0;
	return get_access()(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	if (uverbs_index(path) >= 0)
		return 0;
	return get_faccessat()(dirfd, path, mode, flags);
}

int euidaccess(const char *path, int mode)
{
	if (uverbs_index(path) >= 0)
		return 0;
	return get_euidaccess()(path, mode);
}

int eaccess(const char *path, int mode)
{
	return euidaccess(path, mode);
}

/* A devtmpfs node without labels or ACLs. */
ssize_t getxattr(const char *path, const char *name, void *value,
		 size_t size)
{
	if (uverbs_index(path) >= 0) {
		errno = ENODATA;
		return -1;
	}
	return get_getxattr()(path, name, value, size);
}

ssize_t lgetxattr(const char *path, const char *name, void *value,
		  size_t size)
{
	if (uverbs_index(path) >= 0) {
		errno = ENODATA;
		return -1;
	}
	return get_lgetxattr()(path, name, value, size);
}

ssize_t listxattr(const char *path, char *list, size_t size)
{
	if (uverbs_index(path) >= 0)
		return 0;
	return get_listxattr()(path, list, size);
}

ssize_t llistxattr(const char *path, char *list, size_t size)
{
	if (uverbs_index(path) >= 0)
		return 0;
	return get_llistxattr()(path, list, size);
}
