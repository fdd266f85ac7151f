// SPDX-License-Identifier: BSD-2-Clause
/*
 * libpvrdma-sim.so: the libc entry points libibverbs uses on a uverbs
 * device, answered as ib_uverbs would answer them. Loaded with LD_PRELOAD
 * by the launcher; everything that is not about a simulated adapter goes
 * straight to libc.
 *
 *   open*("/dev/infiniband/uverbsN")  a memfd registered as the uverbs file
 *   open*("/dev/infiniband/rdma_cm")  an eventfd registered as an rdma_ucm
 *                                      file (ucma.c; readable with events)
 *   stat/fstat/statx on those          a character device 231:(192+N)
 *   access, xattrs of the device node  crw-rw-rw-, no labels
 *   write                              uverbs commands
 *   ioctl                              ENOTTY: libibverbs keeps to write()
 *   mmap/munmap                        the UAR page
 *   close*, dup*, fcntl(F_DUPFD*)      the file's lifetime
 *   socket(AF_NETLINK, NETLINK_RDMA)   unsupported: libibverbs scans sysfs
 *   sigaction/signal(SIGSEGV)          recorded for the doorbell trap
 *
 * The write/mmap path looks fds up in an array of atomic pointers, without
 * locks. The real functions are resolved lazily with dlsym(RTLD_NEXT) so
 * that calls made before the constructor (by other constructors) work.
 */
#undef _FORTIFY_SOURCE		/* we define open() & co. ourselves */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/netlink.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "cm.h"
#include "options.h"
#include "sim.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

#define UVERBS_PATH	"/dev/infiniband/uverbs"
#define RDMA_CM_PATH	"/dev/infiniband/rdma_cm"
/* uverbs_index() of the rdma_cm node: past every adapter's. */
#define RDMA_CM_INDEX	SIM_MAX_ADAPTERS
#define RDMA_CM_MAJOR	10	/* a misc device */
#define RDMA_CM_MINOR	58
#define FD_TABLE_SIZE	65536	/* fds above are never uverbs files */

struct sim_libc sim_libc;

/* ---- the real libc ---- */

/* dlsym once per symbol; races only store the same value twice. */
#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	static ret (*get_##name(void))(__VA_ARGS__)			\
	{								\
		ret (*f)(__VA_ARGS__) =					\
			__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE); \
		if (!f) {						\
			f = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name); \
			__atomic_store_n(&real_##name, f, __ATOMIC_RELEASE); \
		}							\
		return f;						\
	}

/* Symbols only kept for old binaries (compat versions): ask by version. */
#define REAL_COMPAT(ret, name, ...)					\
	static ret (*real_##name)(__VA_ARGS__);				\
	static ret (*get_##name(void))(__VA_ARGS__)			\
	{								\
		ret (*f)(__VA_ARGS__) =					\
			__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE); \
		if (!f) {						\
			f = (ret (*)(__VA_ARGS__))dlvsym(RTLD_NEXT, #name, \
							"GLIBC_2.2.5");	\
			__atomic_store_n(&real_##name, f, __ATOMIC_RELEASE); \
		}							\
		return f;						\
	}

REAL(int, open, const char *, int, ...)
REAL(int, open64, const char *, int, ...)
REAL(int, openat, int, const char *, int, ...)
REAL(int, openat64, int, const char *, int, ...)
REAL(int, __open_2, const char *, int)
REAL(int, __open64_2, const char *, int)
REAL(int, __openat_2, int, const char *, int)
REAL(int, __openat64_2, int, const char *, int)
REAL(int, stat, const char *, struct stat *)
REAL(int, stat64, const char *, struct stat64 *)
REAL(int, lstat, const char *, struct stat *)
REAL(int, lstat64, const char *, struct stat64 *)
REAL(int, fstat, int, struct stat *)
REAL(int, fstat64, int, struct stat64 *)
REAL(int, fstatat, int, const char *, struct stat *, int)
REAL(int, fstatat64, int, const char *, struct stat64 *, int)
REAL(int, statx, int, const char *, int, unsigned int, struct statx *)
REAL_COMPAT(int, __xstat, int, const char *, struct stat *)
REAL_COMPAT(int, __xstat64, int, const char *, struct stat64 *)
REAL_COMPAT(int, __lxstat, int, const char *, struct stat *)
REAL_COMPAT(int, __lxstat64, int, const char *, struct stat64 *)
REAL_COMPAT(int, __fxstat, int, int, struct stat *)
REAL_COMPAT(int, __fxstat64, int, int, struct stat64 *)
REAL_COMPAT(int, __fxstatat, int, int, const char *, struct stat *, int)
REAL_COMPAT(int, __fxstatat64, int, int, const char *, struct stat64 *, int)
REAL(ssize_t, write, int, const void *, size_t)
REAL(ssize_t, read, int, void *, size_t)
REAL(int, ioctl, int, unsigned long, ...)
REAL(void *, mmap, void *, size_t, int, int, int, off_t)
REAL(void *, mmap64, void *, size_t, int, int, int, off64_t)
REAL(int, munmap, void *, size_t)
REAL(int, close, int)
REAL(int, close_range, unsigned int, unsigned int, int)
REAL(void, closefrom, int)
REAL(int, dup, int)
REAL(int, dup2, int, int)
REAL(int, dup3, int, int, int)
REAL(int, fcntl, int, int, ...)
REAL(int, fcntl64, int, int, ...)
REAL(int, socket, int, int, int)
REAL(int, sigaction, int, const struct sigaction *, struct sigaction *)
REAL(sighandler_t, signal, int, sighandler_t)

/* Wrappers with the exact sim_libc signatures (no varargs). */
static int libc_close(int fd)
{
	return get_close()(fd);
}

static ssize_t libc_write(int fd, const void *buf, size_t len)
{
	return get_write()(fd, buf, len);
}

static ssize_t libc_read(int fd, void *buf, size_t len)
{
	return get_read()(fd, buf, len);
}

static void *libc_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	return get_mmap()(addr, len, prot, flags, fd, off);
}

static int libc_munmap(void *addr, size_t len)
{
	return get_munmap()(addr, len);
}

static void fill_sim_libc(void)
{
	sim_libc.close = libc_close;
	sim_libc.write = libc_write;
	sim_libc.read = libc_read;
	sim_libc.mmap = libc_mmap;
	sim_libc.munmap = libc_munmap;
}

/* ---- open uverbs files ---- */

/* One open of a uverbs device; dup'ed fds share it. Never freed, so a
 * racing lookup can never touch freed memory. */
struct host_file {
	struct sim_file *file;
	struct ucma_file *ucma;		/* an rdma_cm file instead */
	struct sim_dev *dev;
	atomic_uint refs;
	struct host_file *next;		/* all of them, for reuse */
	bool in_use;
};

static _Atomic(struct host_file *) fd_table[FD_TABLE_SIZE];
static struct host_file *host_files;
static pthread_mutex_t host_files_lock = PTHREAD_MUTEX_INITIALIZER;

static inline struct host_file *fd_lookup(int fd)
{
	if ((unsigned int)fd >= FD_TABLE_SIZE)
		return NULL;
	return atomic_load_explicit(&fd_table[fd], memory_order_acquire);
}

static struct host_file *host_file_get(void)
{
	struct host_file *hf;

	pthread_mutex_lock(&host_files_lock);
	for (hf = host_files; hf; hf = hf->next)
		if (!hf->in_use)
			break;
	if (!hf) {
		hf = calloc(1, sizeof(*hf));
		if (hf) {
			hf->next = host_files;
			host_files = hf;
		}
	}
	if (hf)
		hf->in_use = true;
	pthread_mutex_unlock(&host_files_lock);
	return hf;
}

static void host_file_release(struct host_file *hf)
{
	pthread_mutex_lock(&host_files_lock);
	hf->file = NULL;
	hf->ucma = NULL;
	hf->in_use = false;
	pthread_mutex_unlock(&host_files_lock);
}

static void host_file_put(struct host_file *hf)
{
	if (!hf || atomic_fetch_sub(&hf->refs, 1) != 1)
		return;
	if (hf->ucma)
		ucma_close(hf->ucma);
	else
		uverbs_close(hf->file);
	host_file_release(hf);
}

/* The adapter index of "/dev/infiniband/uverbsN", RDMA_CM_INDEX for
 * "/dev/infiniband/rdma_cm", or -1. */
static int uverbs_index(const char *path)
{
	const char *p;

	if (path && !strcmp(path, RDMA_CM_PATH) && sim_global.num_adapters)
		return RDMA_CM_INDEX;
	if (!path || strncmp(path, UVERBS_PATH, sizeof(UVERBS_PATH) - 1))
		return -1;
	p = path + sizeof(UVERBS_PATH) - 1;
	if (p[0] < '0' || p[0] > '9' || p[1])
		return -1;
	if ((unsigned int)(p[0] - '0') >= sim_global.num_adapters)
		return -1;
	return p[0] - '0';
}

struct ucma_file *sim_ucma_file_of_fd(int fd)
{
	struct host_file *hf = fd_lookup(fd);

	return hf ? hf->ucma : NULL;
}

static int open_rdma_cm(int flags)
{
	struct host_file *hf;
	struct ucma_file *f;
	int fd;

	fd = eventfd(0, (flags & O_CLOEXEC ? EFD_CLOEXEC : 0) |
			(flags & O_NONBLOCK ? EFD_NONBLOCK : 0));
	if (fd < 0)
		return -1;
	hf = fd < FD_TABLE_SIZE ? host_file_get() : NULL;
	f = hf ? ucma_open(fd) : NULL;
	if (!f) {
		int err = fd >= FD_TABLE_SIZE ? EMFILE :
			  hf ? ENODEV : ENOMEM;

		if (hf)
			host_file_release(hf);
		get_close()(fd);
		errno = err;
		return -1;
	}
	hf->ucma = f;
	atomic_store(&hf->refs, 1);
	atomic_store_explicit(&fd_table[fd], hf, memory_order_release);
	return fd;
}

static int open_uverbs(int index, int flags)
{
	char name[32];
	struct host_file *hf;
	struct sim_file *f;
	int fd;

	if (index == RDMA_CM_INDEX)
		return open_rdma_cm(flags);
	snprintf(name, sizeof(name), "uverbs%d", index);
	fd = memfd_create(name, flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (fd >= FD_TABLE_SIZE) {
		get_close()(fd);
		errno = EMFILE;
		return -1;
	}
	hf = host_file_get();
	if (!hf) {
		get_close()(fd);
		errno = ENOMEM;
		return -1;
	}
	errno = 0;
	f = uverbs_open(&sim_devs[index], fd);
	if (!f) {
		int err = errno ? errno : ENODEV;

		host_file_release(hf);
		get_close()(fd);
		errno = err;
		return -1;
	}
	hf->file = f;
	hf->dev = &sim_devs[index];
	atomic_store(&hf->refs, 1);
	atomic_store_explicit(&fd_table[fd], hf, memory_order_release);
	return fd;
}

/*
 * The kernel fails reading gid_attrs of an unused GID slot with EINVAL,
 * which libibverbs relies on; the tree leaves those files out, and their
 * ENOENT becomes that EINVAL here.
 */
static int fix_sysfs_errno(int ret, const char *path)
{
	size_t n = strlen(sim_global.sysfs_root);

	if (ret < 0 && errno == ENOENT && n && path &&
	    !strncmp(path, sim_global.sysfs_root, n) &&
	    strstr(path + n, "/gid_attrs/"))
		errno = EINVAL;
	return ret;
}

static bool open_needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define OPEN_MODE(flags, last)						\
	({								\
		mode_t m_ = 0;						\
		if (open_needs_mode(flags)) {				\
			va_list ap_;					\
			va_start(ap_, last);				\
			m_ = va_arg(ap_, mode_t);			\
			va_end(ap_);					\
		}							\
		m_;							\
	})

int open(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get_open()(path, flags, mode), path);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get_open64()(path, flags, mode), path);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get_openat()(dirfd, path, flags, mode), path);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get_openat64()(dirfd, path, flags, mode),
			       path);
}

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get___open_2()(path, flags), path);
}

int __open64_2(const char *path, int flags);
int __open64_2(const char *path, int flags)
{
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get___open64_2()(path, flags), path);
}

int __openat_2(int dirfd, const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags)
{
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get___openat_2()(dirfd, path, flags), path);
}

int __openat64_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags)
{
	int idx = uverbs_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	return fix_sysfs_errno(get___openat64_2()(dirfd, path, flags), path);
}

/* ---- stat ---- */

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

	if (!ret && hf)
		patch_fd_stat(hf, st);
	return ret;
}

int fstat64(int fd, struct stat64 *st)
{
	struct host_file *hf = fd_lookup(fd);
	int ret = get_fstat64()(fd, st);

	if (!ret && hf)
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
	    (hf = fd_lookup(dirfd))) {
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

	if (!ret && hf)
		patch_fd_stat(hf, st);
	return ret;
}

int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstat64(int ver, int fd, struct stat64 *st)
{
	struct host_file *hf = fd_lookup(fd);
	int ret = get___fxstat64()(ver, fd, st);

	if (!ret && hf)
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

/* ---- access and extended attributes of the device node ---- */

REAL(int, access, const char *, int)
REAL(int, faccessat, int, const char *, int, int)
REAL(int, euidaccess, const char *, int)
REAL(ssize_t, getxattr, const char *, const char *, void *, size_t)
REAL(ssize_t, lgetxattr, const char *, const char *, void *, size_t)
REAL(ssize_t, listxattr, const char *, char *, size_t)
REAL(ssize_t, llistxattr, const char *, char *, size_t)

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

/* ---- the uverbs file operations ---- */

ssize_t write(int fd, const void *buf, size_t len)
{
	struct host_file *hf = fd_lookup(fd);
	ssize_t ret;

	if (!hf)
		return get_write()(fd, buf, len);
	/* -1 with errno set, as write() returns; a negative errno too. */
	ret = hf->ucma ? ucma_write(hf->ucma, fd, buf, len) :
			 uverbs_write(hf->file, buf, len);
	if (ret < -1) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

int ioctl(int fd, unsigned long request, ...)
{
	void *arg;
	va_list ap;

	if (fd_lookup(fd)) {
		/* No ioctl ABI: libibverbs falls back to write() for good. */
		errno = ENOTTY;
		return -1;
	}
	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	return get_ioctl()(fd, request, arg);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct host_file *hf = fd >= 0 ? fd_lookup(fd) : NULL;

	if (hf && hf->ucma) {
		errno = ENODEV;		/* rdma_ucm has no mmap */
		return MAP_FAILED;
	}
	if (hf)
		return uverbs_mmap(hf->file, addr, len, prot, flags, off);
	return get_mmap()(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
	     off64_t off)
{
	struct host_file *hf = fd >= 0 ? fd_lookup(fd) : NULL;

	if (hf && hf->ucma) {
		errno = ENODEV;		/* rdma_ucm has no mmap */
		return MAP_FAILED;
	}
	if (hf)
		return uverbs_mmap(hf->file, addr, len, prot, flags, off);
	return get_mmap64()(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	struct sim_ucontext *uctx = len ? sim_uar_lookup(addr) : NULL;
	struct host_file *hf;
	int ret = 0;

	if (!uctx || ((uintptr_t)addr & (SIM_PAGE_SIZE - 1)))
		return get_munmap()(addr, len);
	hf = fd_lookup(uctx->cmd_fd);
	if (hf && hf->file) {
		ret = uverbs_munmap(hf->file, addr, SIM_PAGE_SIZE);
		if (ret < 0 && ret != -1) {
			errno = -ret;
			ret = -1;
		}
	} else {
		sim_uar_unmap(addr);
	}
	/* The rest of a range that started with the UAR page. */
	if (!ret && len > SIM_PAGE_SIZE)
		ret = get_munmap()((char *)addr + SIM_PAGE_SIZE,
				   len - SIM_PAGE_SIZE);
	return ret;
}

int close(int fd)
{
	struct host_file *hf = NULL;

	if ((unsigned int)fd < FD_TABLE_SIZE && fd_lookup(fd))
		hf = atomic_exchange(&fd_table[fd], NULL);
	host_file_put(hf);
	return get_close()(fd);
}

/*
 * Forgets the uverbs fds in [first, last] before libc closes them, so that
 * a number the kernel hands out again is not taken for a uverbs file; the
 * last fd of an open file closes it, as close() does.
 */
static void untrack_fd_range(unsigned int first, unsigned int last)
{
	unsigned int fd;

	if (first >= FD_TABLE_SIZE)
		return;
	if (last >= FD_TABLE_SIZE)
		last = FD_TABLE_SIZE - 1;
	for (fd = first; fd <= last; fd++)
		if (atomic_load_explicit(&fd_table[fd], memory_order_relaxed))
			host_file_put(atomic_exchange(&fd_table[fd], NULL));
}

#define CLOSE_RANGE_FLAGS (CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)

/*
 * CLOSE_RANGE_CLOEXEC only marks the fds: they stay open here, and an
 * exec'd image starts without the sim's table anyway. UNSHARE alone still
 * closes the range (in the table this process keeps). Arguments the
 * kernel refuses change nothing.
 */
int close_range(unsigned int first, unsigned int last, int flags)
{
	if (first <= last && !(flags & ~CLOSE_RANGE_FLAGS) &&
	    !(flags & CLOSE_RANGE_CLOEXEC))
		untrack_fd_range(first, last);
	return get_close_range()(first, last, flags);
}

/* glibc's closefrom() takes a negative lowfd for 0. */
void closefrom(int lowfd)
{
	untrack_fd_range(lowfd < 0 ? 0 : lowfd, ~0U);
	get_closefrom()(lowfd);
}

/* A dup'ed uverbs fd is the same open file, as in the kernel. */
static int dup_track(int oldfd, int newfd)
{
	struct host_file *hf = fd_lookup(oldfd), *prev;

	if (newfd < 0 || newfd == oldfd)
		return newfd;
	if (hf && newfd >= FD_TABLE_SIZE) {
		get_close()(newfd);
		errno = EMFILE;
		return -1;
	}
	if (hf)
		atomic_fetch_add(&hf->refs, 1);
	if ((unsigned int)newfd < FD_TABLE_SIZE) {
		prev = atomic_exchange(&fd_table[newfd], hf);
		host_file_put(prev);	/* dup2 closed what newfd was */
	}
	return newfd;
}

int dup(int fd)
{
	return dup_track(fd, get_dup()(fd));
}

int dup2(int oldfd, int newfd)
{
	return dup_track(oldfd, get_dup2()(oldfd, newfd));
}

int dup3(int oldfd, int newfd, int flags)
{
	return dup_track(oldfd, get_dup3()(oldfd, newfd, flags));
}

/*
 * fcntl's third argument is an int or a pointer depending on cmd; like
 * glibc, take it as a pointer-sized word and pass it on unchanged.
 */
#define FCNTL_ARG(last)							\
	({								\
		va_list ap_;						\
		void *a_;						\
		va_start(ap_, last);					\
		a_ = va_arg(ap_, void *);				\
		va_end(ap_);						\
		a_;							\
	})

static bool fcntl_dups(int cmd)
{
	return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
}

int fcntl(int fd, int cmd, ...)
{
	void *arg = FCNTL_ARG(cmd);
	int ret = get_fcntl()(fd, cmd, arg);

	return fcntl_dups(cmd) ? dup_track(fd, ret) : ret;
}

int fcntl64(int fd, int cmd, ...)
{
	void *arg = FCNTL_ARG(cmd);
	int ret = get_fcntl64()(fd, cmd, arg);

	return fcntl_dups(cmd) ? dup_track(fd, ret) : ret;
}

/* As on a kernel without RDMA netlink: libibverbs then reads sysfs. */
int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return get_socket()(domain, type, protocol);
}

/* ---- SIGSEGV belongs to the doorbell trap ---- */

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig == SIGSEGV && sim_doorbell_trap_installed())
		return sim_doorbell_app_sigaction(act, old);
	return get_sigaction()(sig, act, old);
}

sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;

	if (sig != SIGSEGV || !sim_doorbell_trap_installed())
		return get_signal()(sig, handler);
	if (handler == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	/* BSD semantics, as glibc's signal() gives. */
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	sim_doorbell_app_sigaction(&act, &old);
	return old.sa_handler;
}

/* ---- the simulated Ethernet segment's neighbour table ---- */

/*
 * Providers resolve a RoCE destination's MAC (for the address vector)
 * with ibv_resolve_eth_l2_from_gid(), which asks the kernel's neighbour
 * table over rtnetlink. No host interface owns the simulated addresses,
 * so the sim answers for them: a link-local GID carries the MAC in its
 * EUI-64, and a per-process IPv4 address 127.a.b.c belongs to the
 * adapter 00:50:56:a:b:c (config.c makes both from the same bytes).
 * Other GIDs go to libibverbs' own resolver.
 */
typedef int (*resolve_fn)(struct ibv_context *, struct ibv_ah_attr *,
			  uint8_t *, uint16_t *);
typedef int (*query_gid_fn)(struct ibv_context *, uint8_t, int,
			    union ibv_gid *);

static bool sim_gid_to_mac(const uint8_t *g, uint8_t mac[6])
{
	static const uint8_t link_local[8] = { 0xfe, 0x80 };
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(g, link_local, 8) && g[11] == 0xff && g[12] == 0xfe) {
		mac[0] = g[8] ^ 0x02;
		mac[1] = g[9];
		mac[2] = g[10];
		memcpy(&mac[3], &g[13], 3);
		return true;
	}
	if (!memcmp(g, v4_mapped, 12) && g[12] == 127) {
		mac[0] = 0x00;
		mac[1] = 0x50;
		mac[2] = 0x56;
		memcpy(&mac[3], &g[13], 3);
		return true;
	}
	return false;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
				struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid)
{
	static _Atomic(resolve_fn) real_resolve;
	query_gid_fn query_gid;
	union ibv_gid sgid;
	resolve_fn f;

	if (!attr || !attr->is_global)
		return -EINVAL;
	/*
	 * Looked up, not linked: the library is preloaded into processes
	 * that never load libibverbs, and must bind even with LD_BIND_NOW.
	 */
	query_gid = (query_gid_fn)dlsym(RTLD_DEFAULT, "ibv_query_gid");
	if (!query_gid || query_gid(context, attr->port_num,
				    attr->grh.sgid_index, &sgid))
		return -EINVAL;
	if (sim_gid_to_mac(attr->grh.dgid.raw, eth_mac)) {
		if (vid)
			*vid = 0xffff;		/* no VLAN */
		return 0;
	}
	f = atomic_load(&real_resolve);
	if (!f) {
		f = (resolve_fn)dlsym(RTLD_NEXT, "ibv_resolve_eth_l2_from_gid");
		if (!f)
			return -EHOSTUNREACH;
		atomic_store(&real_resolve, f);
	}
	return f(context, attr, eth_mac, vid);
}

/* ---- start-up ---- */

static void load_provider(void)
{
	const char *path = getenv(SIM_ENV_PROVIDER);

	if (!path || !*path)
		return;
	/* Registers with libibverbs before any device scan. */
	if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "pvrdma-sim: cannot load provider %s: %s\n",
			path, dlerror());
		_exit(2);
	}
}

__attribute__((constructor)) static void sim_init(void)
{
	int ret;

	fill_sim_libc();
	if (sim_config_load())
		_exit(2);
	ret = sim_sysfs_write();
	if (ret)
		_exit(2);
	ret = sim_doorbell_trap_install();
	if (ret) {
		fprintf(stderr, "pvrdma-sim: cannot install doorbell trap: %s\n",
			strerror(-ret));
		_exit(2);
	}
	load_provider();
	if (sim_global.stats_at_exit)
		atexit(sim_stats_dump);
}
