// SPDX-License-Identifier: BSD-2-Clause
/*
 * What stat() and its kin, access() and the xattr calls show of the
 * device nodes: a devtmpfs character device, crw-rw-rw-, no labels; and
 * of a path under /sys, what the sim's tree or the host's sysfs shows
 * (sys_overlay.h). The many libc variants are generated from one list.
 * See preload.h.
 */
#include "preload.h"

#include "sys_overlay.h"

/*
 * The path a call of (dirfd, path) hands libc: its /sys name resolved
 * (sys_overlay.h), with w a struct sys_ov_walk of the caller's; the
 * caller returns fail when the walk fails (errno set).
 */
#define SYS_PATH(dirfd, path, nofollow, w, fail)			\
	do {								\
		if (sys_ov_maybe(dirfd, path)) {			\
			path = sys_ov_path(dirfd, path, nofollow, &w);	\
			if (!path)					\
				return fail;				\
		}							\
	} while (0)

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
	struct sys_ov_walk w;
	struct stat st;
	int ret;

	if (statat_fake(dirfd, path, flags, &st, &ret)) {
		if (!ret)
			stat_to_statx(&st, stx);
		return ret;
	}
	SYS_PATH(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, w, -1);
	return get_statx()(dirfd, path, flags, mask, stx);
}

/*
 * Every stat entry point of libc, from one list: by path, by fd, or
 * fstatat-style; with the version argument of the pre-2.33 __xstat family
 * that old binaries still call (VER) or without (NOVER). struct stat64 is
 * struct stat on x86-64.
 */
#define NOVER_PARAM
#define NOVER_ARG
#define VER_PARAM	int ver,
#define VER_ARG		ver,

#define SIM_STAT_FUNCS(PATH, FD, AT)					\
	PATH(stat, struct stat, NOVER, false)				\
	PATH(stat64, struct stat64, NOVER, false)			\
	PATH(lstat, struct stat, NOVER, true)				\
	PATH(lstat64, struct stat64, NOVER, true)			\
	FD(fstat, struct stat, NOVER)					\
	FD(fstat64, struct stat64, NOVER)				\
	AT(fstatat, struct stat, NOVER)					\
	AT(fstatat64, struct stat64, NOVER)				\
	PATH(__xstat, struct stat, VER, false)				\
	PATH(__xstat64, struct stat64, VER, false)			\
	PATH(__lxstat, struct stat, VER, true)				\
	PATH(__lxstat64, struct stat64, VER, true)			\
	FD(__fxstat, struct stat, VER)					\
	FD(__fxstat64, struct stat64, VER)				\
	AT(__fxstatat, struct stat, VER)				\
	AT(__fxstatat64, struct stat64, VER)

/* A device path: the node's stat. */
#define STAT_PATH(name, type, v, nofollow)				\
	int name(v##_PARAM const char *path, type *st);			\
	int name(v##_PARAM const char *path, type *st)			\
	{								\
		int idx = uverbs_index(path);				\
		struct sys_ov_walk w;					\
									\
		if (idx >= 0) {						\
			uverbs_stat(idx, (struct stat *)st);		\
			return 0;					\
		}							\
		SYS_PATH(AT_FDCWD, path, nofollow, w, -1);		\
		return get_##name()(v##_ARG path, st);			\
	}

/* An open device file: its memfd's stat with the device's identity. */
#define STAT_FD(name, type, v)						\
	int name(v##_PARAM int fd, type *st);				\
	int name(v##_PARAM int fd, type *st)				\
	{								\
		struct host_file *hf = fd_lookup(fd);			\
		int ret = get_##name()(v##_ARG fd, st);			\
									\
		if (!ret &&						\
		    (hf = fd_file_stat(fd, hf, (struct stat *)st)))	\
			patch_fd_stat(hf, (struct stat *)st);		\
		return ret;						\
	}

#define STAT_AT(name, type, v)						\
	int name(v##_PARAM int dirfd, const char *path, type *st,	\
		 int flags);						\
	int name(v##_PARAM int dirfd, const char *path, type *st,	\
		 int flags)						\
	{								\
		struct sys_ov_walk w;					\
		int ret;						\
									\
		if (statat_fake(dirfd, path, flags, (struct stat *)st,	\
				&ret))					\
			return ret;					\
		SYS_PATH(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, w, -1); \
		return get_##name()(v##_ARG dirfd, path, st, flags);	\
	}

SIM_STAT_FUNCS(STAT_PATH, STAT_FD, STAT_AT)

/* The node is crw-rw-rw-: every access mode is granted. */
int access(const char *path, int mode)
{
	struct sys_ov_walk w;

	if (uverbs_index(path) >= 0)
		return 0;
	SYS_PATH(AT_FDCWD, path, false, w, -1);
	return get_access()(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	struct sys_ov_walk w;

	if (uverbs_index(path) >= 0)
		return 0;
	SYS_PATH(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, w, -1);
	return get_faccessat()(dirfd, path, mode, flags);
}

int euidaccess(const char *path, int mode)
{
	struct sys_ov_walk w;

	if (uverbs_index(path) >= 0)
		return 0;
	SYS_PATH(AT_FDCWD, path, false, w, -1);
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
	struct sys_ov_walk w;

	if (uverbs_index(path) >= 0) {
		errno = ENODATA;
		return -1;
	}
	SYS_PATH(AT_FDCWD, path, false, w, -1);
	return get_getxattr()(path, name, value, size);
}

ssize_t lgetxattr(const char *path, const char *name, void *value,
		  size_t size)
{
	struct sys_ov_walk w;

	if (uverbs_index(path) >= 0) {
		errno = ENODATA;
		return -1;
	}
	SYS_PATH(AT_FDCWD, path, true, w, -1);
	return get_lgetxattr()(path, name, value, size);
}

ssize_t listxattr(const char *path, char *list, size_t size)
{
	struct sys_ov_walk w;

	if (uverbs_index(path) >= 0)
		return 0;
	SYS_PATH(AT_FDCWD, path, false, w, -1);
	return get_listxattr()(path, list, size);
}

ssize_t llistxattr(const char *path, char *list, size_t size)
{
	struct sys_ov_walk w;

	if (uverbs_index(path) >= 0)
		return 0;
	SYS_PATH(AT_FDCWD, path, true, w, -1);
	return get_llistxattr()(path, list, size);
}
