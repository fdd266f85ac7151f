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
 *   write                              uverbs commands (EBADF when
 *                                      opened read-only)
 *   read, readv, pread, __read_chk     EINVAL, EBADF, ESPIPE: the files
 *                                      have no read method
 *   ioctl                              ENOTTY: libibverbs keeps to write();
 *                                      on other fds, interface requests
 *                                      also see the ports' netdevs
 *                                      (netdev.c, with getifaddrs & co.)
 *   mmap/munmap/mremap                 the UAR page
 *   munmap, mmap MAP_FIXED, mremap,    registered memory keeps the pages
 *   madvise(DONTNEED/FREE/REMOVE)      it loses (sim_mr_pin_give_up)
 *   close*, dup*, fcntl(F_DUPFD*)      the file's lifetime
 *   socket(AF_NETLINK, NETLINK_RDMA)   unsupported: libibverbs scans sysfs
 *   syscall()                          the same, for the raw system calls
 *   every libc way to set a signal's   SIGSEGV and SIGBUS stay the doorbell
 *   action or a thread's mask          trap's (doorbell.c): the
 *                                      application's view is kept there
 *   pthread_create, exec*,             the view carried where the kernel
 *   timer_create, mq_notify            carries a mask
 *
 * An open uverbs file lives as long as an fd or a UAR mapping of it does,
 * as a kernel file held by its VMAs: after close_range() the data path
 * works and control commands get EBADF. An fd is taken for a uverbs file
 * only while it still names the same open file (device and inode of its
 * memfd), so a number closed where the sim could not see it is forgotten,
 * not confused with the next file to get it. The sim's own fds are kept
 * out of the application's way (fds.c). A mapping of the uverbs file made
 * behind the sim's back becomes a UAR at its first store (SIGBUS fixup).
 *
 * The write/mmap path looks fds up in an array of atomic pointers, without
 * locks. The real functions are resolved lazily with dlsym(RTLD_NEXT) so
 * that calls made before the constructor (by other constructors) work.
 */
#undef _FORTIFY_SOURCE		/* we define open() & co. ourselves */

#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mqueue.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/netlink.h>
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
#include <sys/uio.h>
#include <sys/xattr.h>

#include "cm.h"
#include "netdev.h"
#include "options.h"
#include "sim.h"
#include "sys.h"

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
REAL(ssize_t, readv, int, const struct iovec *, int)
REAL(ssize_t, pread, int, void *, size_t, off_t)
REAL(ssize_t, pread64, int, void *, size_t, off64_t)
REAL(ssize_t, __read_chk, int, void *, size_t, size_t)
REAL(int, ioctl, int, unsigned long, ...)
REAL(int, close, int)
REAL(int, close_range, unsigned int, unsigned int, int)
REAL(void, closefrom, int)
REAL(int, dup, int)
REAL(int, dup2, int, int)
REAL(int, dup3, int, int, int)
REAL(int, fcntl, int, int, ...)
REAL(int, fcntl64, int, int, ...)
REAL(int, socket, int, int, int)
REAL(long, syscall, long, ...)

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
	return sim_sys_mmap(addr, len, prot, flags, fd, off);
}

static int libc_munmap(void *addr, size_t len)
{
	return sim_sys_munmap(addr, len);
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
	atomic_uint refs;		/* fds and UAR mappings */
	int acc_mode;			/* O_RDONLY, O_WRONLY or O_RDWR */
	dev_t st_dev;			/* the memfd: what its fds name */
	ino_t st_ino;
	struct host_file *next;		/* all of them, for reuse */
	bool in_use;
};

static _Atomic(struct host_file *) fd_table[FD_TABLE_SIZE];
static _Atomic(struct host_file *) host_files;
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
	for (hf = atomic_load(&host_files); hf; hf = hf->next)
		if (!hf->in_use)
			break;
	if (!hf) {
		hf = calloc(1, sizeof(*hf));
		if (hf) {
			hf->next = atomic_load(&host_files);
			atomic_store(&host_files, hf);
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

/* The number no longer names hf's file: forget it (once). */
static void fd_forget(int fd, struct host_file *hf)
{
	if (atomic_compare_exchange_strong(&fd_table[fd], &hf, NULL))
		host_file_put(hf);
}

static bool stat_is_file(const struct stat *st, const struct host_file *hf)
{
	return st->st_dev == hf->st_dev && st->st_ino == hf->st_ino;
}

/*
 * fd's uverbs file, if fd still names it. A number closed where the sim
 * could not see it (and perhaps reused) is forgotten.
 */
static struct host_file *fd_file(int fd)
{
	struct host_file *hf = fd_lookup(fd);
	struct stat st;

	if (!hf)
		return NULL;
	if (!sim_sys(SYS_fstat, fd, &st, 0) && stat_is_file(&st, hf))
		return hf;
	fd_forget(fd, hf);
	return NULL;
}

/* The same, given what fstat() just said of fd. */
static struct host_file *fd_file_stat(int fd, struct host_file *hf,
				      const struct stat *st)
{
	if (!hf || stat_is_file(st, hf))
		return hf;
	fd_forget(fd, hf);
	return NULL;
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

/*
 * fd now names hf's open file, known by what fstat says of it; hf holds
 * the one reference of the fd. What the number named before was closed
 * unseen.
 */
static int fd_install(int fd, struct host_file *hf)
{
	struct stat st;

	if (!sim_sys(SYS_fstat, fd, &st, 0)) {
		hf->st_dev = st.st_dev;
		hf->st_ino = st.st_ino;
	}
	atomic_store(&hf->refs, 1);
	host_file_put(atomic_exchange_explicit(&fd_table[fd], hf,
					       memory_order_acq_rel));
	return fd;
}

struct ucma_file *sim_ucma_file_of_fd(int fd)
{
	struct host_file *hf = fd_file(fd);	/* still that open file */

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
	hf->acc_mode = flags & O_ACCMODE;
	return fd_install(fd, hf);
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
	hf->acc_mode = flags & O_ACCMODE;
	hf->dev = &sim_devs[index];
	return fd_install(fd, hf);
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
	struct host_file *hf = fd_file(fd);
	ssize_t ret;

	if (!hf)
		return get_write()(fd, buf, len);
	if (hf->acc_mode == O_RDONLY) {
		errno = EBADF;	/* the VFS: not open for writing */
		return -1;
	}
	/* -1 with errno set, as write() returns; a negative errno too. */
	ret = hf->ucma ? ucma_write(hf->ucma, fd, buf, len) :
			 uverbs_write(hf->file, buf, len);
	if (ret < -1) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/*
 * Neither ib_uverbs nor rdma_ucm has a read method (events come through
 * write() commands): the VFS answers EINVAL, or EBADF to a file not open
 * for reading, and ESPIPE to a positioned read of these stream files.
 * The fd underneath (an eventfd, a memfd) must never answer instead.
 */
static ssize_t no_read(const struct host_file *hf, bool positioned)
{
	errno = hf->acc_mode == O_WRONLY ? EBADF :
		positioned ? ESPIPE : EINVAL;
	return -1;
}

ssize_t read(int fd, void *buf, size_t len)
{
	struct host_file *hf = fd_file(fd);

	return hf ? no_read(hf, false) : get_read()(fd, buf, len);
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	struct host_file *hf = fd_file(fd);

	return hf ? no_read(hf, false) :
		    get___read_chk()(fd, buf, len, buflen);
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	struct host_file *hf = fd_file(fd);

	return hf ? no_read(hf, false) : get_readv()(fd, iov, iovcnt);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	struct host_file *hf = fd_file(fd);

	return hf ? no_read(hf, true) : get_pread()(fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off64_t off)
{
	struct host_file *hf = fd_file(fd);

	return hf ? no_read(hf, true) : get_pread64()(fd, buf, len, off);
}

int ioctl(int fd, unsigned long request, ...)
{
	void *arg;
	va_list ap;

	if (fd_file(fd)) {
		/* No ioctl ABI: libibverbs falls back to write() for good. */
		errno = ENOTTY;
		return -1;
	}
	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	/* Interface requests also see the adapters' netdevs (netdev.c). */
	return sim_netdev_ioctl(get_ioctl(), fd, request, arg);
}

/*
 * UAR mappings and the file each holds open. Looked up by munmap() and
 * mremap() of any range, and by the SIGBUS fixup (a fault in provider
 * code, never inside these functions, so the lock is free there).
 */
#define UAR_MAPS	1024

static struct uar_map {
	uintptr_t addr;
	struct host_file *hf;
} uar_maps[UAR_MAPS];
static unsigned int uar_maps_used;	/* high-water mark */
static pthread_mutex_t uar_maps_lock = PTHREAD_MUTEX_INITIALIZER;

static struct host_file *uar_map_take(uintptr_t lo, uintptr_t hi,
				      void **addr);

/* Takes a reference to hf for the mapping at addr. */
static int uar_map_add(void *addr, struct host_file *hf)
{
	struct host_file *stale;
	unsigned int i;
	void *uar;
	int ret = -1;

	/* A mapping at the same address was unmapped unseen. */
	while ((stale = uar_map_take((uintptr_t)addr,
				     (uintptr_t)addr + 1, &uar))) {
		uverbs_munmap(stale->file, uar, SIM_PAGE_SIZE);
		host_file_put(stale);
	}
	pthread_mutex_lock(&uar_maps_lock);
	for (i = 0; i < UAR_MAPS; i++) {
		if (uar_maps[i].hf)
			continue;
		uar_maps[i].addr = (uintptr_t)addr;
		uar_maps[i].hf = hf;
		atomic_fetch_add(&hf->refs, 1);
		if (i >= uar_maps_used)
			uar_maps_used = i + 1;
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&uar_maps_lock);
	return ret;
}

/* Removes a UAR mapping in [lo, hi) and returns its file (the caller
 * owns the reference), or NULL when there is none. */
static struct host_file *uar_map_take(uintptr_t lo, uintptr_t hi,
				      void **addr)
{
	struct host_file *hf = NULL;
	unsigned int i;

	pthread_mutex_lock(&uar_maps_lock);
	for (i = 0; i < uar_maps_used; i++) {
		if (!uar_maps[i].hf || uar_maps[i].addr < lo ||
		    uar_maps[i].addr >= hi)
			continue;
		hf = uar_maps[i].hf;
		*addr = (void *)uar_maps[i].addr;
		uar_maps[i].hf = NULL;
		break;
	}
	pthread_mutex_unlock(&uar_maps_lock);
	return hf;
}

static bool uar_map_any(uintptr_t lo, uintptr_t hi)
{
	unsigned int i;
	bool any = false;

	pthread_mutex_lock(&uar_maps_lock);
	for (i = 0; i < uar_maps_used && !any; i++)
		any = uar_maps[i].hf && uar_maps[i].addr >= lo &&
		      uar_maps[i].addr < hi;
	pthread_mutex_unlock(&uar_maps_lock);
	return any;
}

/* [addr, addr + len) as page bounds; false if it wraps. */
static bool page_range(const void *addr, size_t len, uintptr_t *lo,
		       uintptr_t *hi)
{
	uintptr_t a = (uintptr_t)addr;

	if (len > UINTPTR_MAX - a - SIM_PAGE_SIZE)
		return false;
	*lo = a & ~(uintptr_t)(SIM_PAGE_SIZE - 1);
	*hi = (a + len + SIM_PAGE_SIZE - 1) & ~(uintptr_t)(SIM_PAGE_SIZE - 1);
	return true;
}

/* Every UAR in the range goes, as the kernel unmaps it; the last
 * mapping or fd of a file closes it. */
static void uars_release(const void *addr, size_t len)
{
	struct host_file *hf;
	uintptr_t lo, hi;
	void *uar;

	if (!len || !page_range(addr, len, &lo, &hi))
		return;
	while ((hf = uar_map_take(lo, hi, &uar))) {
		uverbs_munmap(hf->file, uar, SIM_PAGE_SIZE);
		host_file_put(hf);
	}
}

/* mmap of a uverbs file: the context's UAR page (pvrdma_mmap). */
static void *uar_mmap(struct host_file *hf, void *addr, size_t len, int prot,
		      int flags, off_t off)
{
	void *p;

	/* Whatever a fixed mapping replaces goes first. */
	if ((flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE)) {
		uars_release(addr, len);
		if (len == SIM_PAGE_SIZE &&
		    !((uintptr_t)addr & (SIM_PAGE_SIZE - 1)))
			sim_sys(SYS_munmap, addr, len, 0);
	}
	p = uverbs_mmap(hf->file, addr, len, prot, flags, off);
	if (p == MAP_FAILED)
		return p;
	if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && p != addr) {
		uverbs_munmap(hf->file, p, SIM_PAGE_SIZE);
		errno = flags & MAP_FIXED_NOREPLACE ? EEXIST : ENOMEM;
		return MAP_FAILED;
	}
	if (uar_map_add(p, hf)) {
		uverbs_munmap(hf->file, p, SIM_PAGE_SIZE);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return p;
}

static void *host_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	struct host_file *hf = NULL;

	if ((flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE))
		sim_mr_pin_give_up(addr, len);
	if (fd >= 0 && !(flags & MAP_ANONYMOUS))
		hf = fd_file(fd);
	if (hf && hf->ucma) {
		errno = ENODEV;		/* rdma_ucm has no mmap */
		return MAP_FAILED;
	}
	if (hf)
		return uar_mmap(hf, addr, len, prot, flags, off);
	if ((flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE))
		uars_release(addr, len);
	return sim_sys_mmap(addr, len, prot, flags, fd, off);
}

static int host_munmap(void *addr, size_t len)
{
	if (!((uintptr_t)addr & (SIM_PAGE_SIZE - 1))) {
		sim_mr_pin_give_up(addr, len);
		uars_release(addr, len);
	}
	return sim_sys_munmap(addr, len);
}

/*
 * A UAR is one VM_DONTEXPAND page: it cannot grow (EFAULT), nor be part
 * of a larger range; it may move. Ranges moved over a UAR replace it.
 */
static void *host_mremap(void *old, size_t old_len, size_t new_len,
			 int flags, void *new_addr)
{
	uintptr_t lo, hi, page = (uintptr_t)old;
	struct host_file *hf;
	void *uar, *p;

	if (!page_range(old, old_len ? old_len : 1, &lo, &hi))
		return sim_sys_mremap(old, old_len, new_len, flags, new_addr);
	if (!(page & (SIM_PAGE_SIZE - 1)) && uar_map_any(lo, hi)) {
		if (hi - lo != SIM_PAGE_SIZE || new_len > SIM_PAGE_SIZE ||
		    old_len > SIM_PAGE_SIZE) {
			errno = EFAULT;
			return MAP_FAILED;
		}
		if (!(flags & MREMAP_FIXED) || new_addr == old)
			return old;
		/* Moved: the context's UAR at the new address instead. */
		hf = uar_map_take(lo, hi, &uar);
		if (!hf)
			return sim_sys_mremap(old, old_len, new_len, flags,
					    new_addr);
		uverbs_munmap(hf->file, uar, SIM_PAGE_SIZE);
		uars_release(new_addr, SIM_PAGE_SIZE);
		sim_sys(SYS_munmap, new_addr, SIM_PAGE_SIZE, 0);
		p = uverbs_mmap(hf->file, new_addr, SIM_PAGE_SIZE,
				PROT_READ | PROT_WRITE, MAP_SHARED, 0);
		if (p != new_addr || uar_map_add(p, hf)) {
			if (p != MAP_FAILED)
				uverbs_munmap(hf->file, p, SIM_PAGE_SIZE);
			host_file_put(hf);
			errno = ENOMEM;
			return MAP_FAILED;
		}
		host_file_put(hf);	/* uar_map_add took its own */
		return p;
	}
	/* Registered memory keeps its pages (sim_mr_pin_give_up) when the
	 * mapping moves or shrinks; growing in place keeps them anyway. */
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		sim_mr_pin_give_up(old, old_len);
		if (flags & MREMAP_FIXED)
			sim_mr_pin_give_up(new_addr, new_len);
	} else if (new_len < old_len) {
		sim_mr_pin_give_up((char *)old + new_len, old_len - new_len);
	} else if ((flags & MREMAP_MAYMOVE) && new_len > old_len) {
		p = sim_sys_mremap(old, old_len, new_len, 0, NULL);
		if (p != MAP_FAILED)
			return p;
		sim_mr_pin_give_up(old, old_len);
	}
	if (flags & MREMAP_FIXED)
		uars_release(new_addr, new_len);
	return sim_sys_mremap(old, old_len, new_len, flags, new_addr);
}

/*
 * The mapping wrappers. mmap/mmap64/munmap/mremap and syscall()'s
 * SYS_mmap/SYS_munmap/SYS_mremap all land in host_mmap/host_munmap/
 * host_mremap: a hook on the application's mappings (memory registration
 * pinning pages) goes there, before the libc call for pages that go
 * (munmap, mremap, a MAP_FIXED mmap), after it for a new mapping. Calls
 * that reach libc past the preload (UCX's hooks) are not seen at all.
 */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return host_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
	     off64_t off)
{
	return host_mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	return host_munmap(addr, len);
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	return host_mremap(old, old_len, new_len, flags, new_addr);
}

static int host_madvise(void *addr, size_t len, int advice)
{
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_FREE:
	case MADV_REMOVE:
#ifdef MADV_DONTNEED_LOCKED
	case MADV_DONTNEED_LOCKED:
#endif
		sim_mr_pin_give_up(addr, len);
		break;
	default:
		break;
	}
	return sim_sys_madvise(addr, len, advice);
}

int madvise(void *addr, size_t len, int advice)
{
	return host_madvise(addr, len, advice);
}

/*
 * A page of the uverbs backing file, mapped where the sim did not see it:
 * the file has no pages, so its first access raises SIGBUS. Found in
 * /proc/self/maps (raw reads only: this runs in the signal handler), it
 * becomes the context's UAR in place and the access restarts, as it
 * would have run on the device's page from the start.
 */
struct maps_line {
	uintptr_t start, end;
	bool writable;
	unsigned long long off;
	unsigned int dev_major, dev_minor;
	unsigned long long ino;
};

static const char *parse_hex(const char *p, unsigned long long *v)
{
	unsigned long long x = 0;
	int d;

	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		x = x * 16 + (unsigned int)d;
	}
	*v = x;
	return p;
}

static bool parse_maps_line(const char *p, struct maps_line *m)
{
	unsigned long long a, b, maj, min, ino = 0;

	p = parse_hex(p, &a);
	if (*p++ != '-')
		return false;
	p = parse_hex(p, &b);
	if (*p++ != ' ' || !p[0] || !p[1])
		return false;
	m->writable = p[1] == 'w';
	p += 4;
	if (*p++ != ' ')
		return false;
	p = parse_hex(p, &m->off);
	if (*p++ != ' ')
		return false;
	p = parse_hex(p, &maj);
	if (*p++ != ':')
		return false;
	p = parse_hex(p, &min);
	if (*p++ != ' ')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		ino = ino * 10 + (unsigned int)(*p - '0');
	m->start = (uintptr_t)a;
	m->end = (uintptr_t)b;
	m->dev_major = (unsigned int)maj;
	m->dev_minor = (unsigned int)min;
	m->ino = ino;
	return true;
}

/* The maps line that covers addr. */
static bool maps_find(uintptr_t addr, struct maps_line *out)
{
	char buf[4096 + 512];
	size_t have = 0;
	bool found = false;
	long fd, n;

	fd = sim_sys(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	for (;;) {
		char *line = buf, *nl;

		n = sim_sys(SYS_read, fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			struct maps_line m;

			*nl = 0;
			if (parse_maps_line(line, &m) && m.start <= addr &&
			    addr < m.end) {
				*out = m;
				found = true;
				break;
			}
			line = nl + 1;
		}
		if (found)
			break;
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have >= sizeof(buf) - 1)
			have = 0;	/* no line is this long */
	}
	sim_sys(SYS_close, fd, 0, 0);
	return found;
}

static bool uar_bus_fixup(void *addr)
{
	uintptr_t page = (uintptr_t)addr & ~(uintptr_t)(SIM_PAGE_SIZE - 1);
	struct host_file *hf;
	struct maps_line m;
	void *p;

	if (!maps_find(page, &m) || !m.writable)
		return false;
	for (hf = atomic_load(&host_files); hf; hf = hf->next) {
		if (!hf->in_use || !hf->file ||
		    major(hf->st_dev) != m.dev_major ||
		    minor(hf->st_dev) != m.dev_minor || hf->st_ino != m.ino)
			continue;
		/* What was at this address before went unseen. */
		uars_release((void *)page, SIM_PAGE_SIZE);
		sim_sys(SYS_munmap, page, SIM_PAGE_SIZE, 0);
		p = uverbs_mmap(hf->file, (void *)page, SIM_PAGE_SIZE,
				PROT_READ | PROT_WRITE, MAP_SHARED,
				(off_t)(m.off + (page - m.start)));
		if (p == (void *)page && !uar_map_add(p, hf))
			return true;
		if (p != MAP_FAILED)
			uverbs_munmap(hf->file, p, SIM_PAGE_SIZE);
		return false;
	}
	return false;
}

/* ---- fds: uverbs files, the sim's own ---- */

int close(int fd)
{
	struct host_file *hf = NULL;

	if (sim_fd_is_own(fd)) {
		/* Not in the application's table. */
		errno = EBADF;
		return -1;
	}
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

typedef int (*close_range_fn)(unsigned int, unsigned int, int);

static int raw_close_range(unsigned int first, unsigned int last, int flags)
{
	long ret = sim_sys(SYS_close_range, first, last, flags);

	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return 0;
}

/*
 * close_range() of the application: the sim's own fds in the range stay
 * open (the call goes around them). CLOSE_RANGE_CLOEXEC only marks the
 * fds: they stay open here, and an exec'd image starts without the sim's
 * table anyway. UNSHARE alone still closes the range (in the table this
 * process keeps). Arguments the kernel refuses change nothing.
 */
static int app_close_range(unsigned int first, unsigned int last, int flags,
			   close_range_fn fn)
{
	unsigned int lo = first;
	int own, ret;

	if (first > last || (flags & ~CLOSE_RANGE_FLAGS))
		return fn(first, last, flags);
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		untrack_fd_range(first, last);
	for (;;) {
		own = sim_fd_next_own(lo, last);
		if (own < 0)
			return fn(lo, last, flags);
		if ((unsigned int)own > lo) {
			ret = fn(lo, (unsigned int)own - 1, flags);
			if (ret)
				return ret;
		}
		if ((unsigned int)own >= last)
			return 0;
		lo = (unsigned int)own + 1;
	}
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	return app_close_range(first, last, flags, get_close_range());
}

/* glibc's closefrom() takes a negative lowfd for 0. */
void closefrom(int lowfd)
{
	if (app_close_range(lowfd < 0 ? 0 : lowfd, ~0U, 0, raw_close_range))
		get_closefrom()(lowfd);		/* no close_range(2) */
}

/* A dup'ed uverbs fd is the same open file, as in the kernel. */
static int dup_track(int oldfd, int newfd)
{
	struct host_file *hf = fd_file(oldfd), *prev;

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

/* The sim's fds are not the application's to replace. */
static bool dup_target_ok(int newfd)
{
	if (!sim_fd_is_own(newfd))
		return true;
	errno = EBUSY;
	return false;
}

int dup2(int oldfd, int newfd)
{
	if (!dup_target_ok(newfd))
		return -1;
	return dup_track(oldfd, get_dup2()(oldfd, newfd));
}

int dup3(int oldfd, int newfd, int flags)
{
	if (!dup_target_ok(newfd))
		return -1;
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

/* ---- signals: SIGSEGV and SIGBUS stay the doorbell trap's ---- */

/*
 * Every entry point that sets an action or a mask is answered here for
 * the owned signals (doorbell.c keeps the application's view of them)
 * and passed on without them for the rest: the kernel never holds an
 * owned signal blocked, in any thread, nor an action of the application
 * for one. Masks other signals' handlers run with (sa_mask) never hold
 * them either; what such an sa_mask said is remembered for the answers.
 */
REAL(int, sigaction, int, const struct sigaction *, struct sigaction *)
REAL(sighandler_t, signal, int, sighandler_t)
REAL(sighandler_t, sysv_signal, int, sighandler_t)
REAL(sighandler_t, sigset, int, sighandler_t)
REAL(int, sighold, int)
REAL(int, sigrelse, int)
REAL(int, sigignore, int)
REAL(int, siginterrupt, int, int)
REAL(int, sigprocmask, int, const sigset_t *, sigset_t *)
REAL(int, pthread_sigmask, int, const sigset_t *, sigset_t *)
REAL(int, sigsuspend, const sigset_t *)
REAL(int, sigpending, sigset_t *)
REAL(int, ppoll, struct pollfd *, nfds_t, const struct timespec *,
     const sigset_t *)
REAL(int, pselect, int, fd_set *, fd_set *, fd_set *,
     const struct timespec *, const sigset_t *)
REAL(int, epoll_pwait, int, struct epoll_event *, int, int, const sigset_t *)
REAL(int, epoll_pwait2, int, struct epoll_event *, int,
     const struct timespec *, const sigset_t *)
REAL(int, setcontext, const ucontext_t *)
REAL(int, swapcontext, ucontext_t *, const ucontext_t *)
REAL(void, siglongjmp, sigjmp_buf, int)
REAL(void, __longjmp_chk, sigjmp_buf, int)

/* Owned signals each handler's sa_mask held, by signal. */
static atomic_uint app_samask_owned[NSIG];

static bool sig_valid(int sig)
{
	return sig > 0 && sig < NSIG;
}

static int app_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old, bool libc_checks)
{
	struct sigaction copy;
	unsigned int bits = 0;
	int ret;

	if (sim_doorbell_trap_installed() && sim_signal_owned(sig))
		return sim_signal_app_action(sig, act, old);
	if (libc_checks && !sig_valid(sig)) {
		errno = EINVAL;
		return -1;
	}
	if (act) {
		copy = *act;
		bits = sim_signal_bits(&copy.sa_mask);
		sim_signal_strip(&copy.sa_mask);
		act = &copy;
	}
	ret = get_sigaction()(sig, act, old);
	if (ret || !sig_valid(sig))
		return ret;
	if (old)
		sim_signal_add_bits(&old->sa_mask,
				    atomic_load(&app_samask_owned[sig]));
	if (act)
		atomic_store(&app_samask_owned[sig], bits);
	return 0;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return app_sigaction(sig, act, old, false);
}

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return app_sigaction(sig, act, old, false);
}

/* signal() and its kin: an action with the given flags, no mask. */
static sighandler_t set_handler(int sig, sighandler_t handler, int flags)
{
	struct sigaction act, old;

	if (handler == SIG_ERR || !sig_valid(sig)) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);	/* as glibc's signal() */
	if (app_sigaction(sig, &act, &old, true))
		return SIG_ERR;
	return old.sa_handler;
}

/* BSD semantics, as glibc's signal() gives. */
sighandler_t signal(int sig, sighandler_t handler)
{
	if (!sim_signal_owned(sig))
		return get_signal()(sig, handler);
	return set_handler(sig, handler, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t handler);
sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

sighandler_t ssignal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (!sim_signal_owned(sig))
		return get_sysv_signal()(sig, handler);
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

sighandler_t __sysv_signal(int sig, sighandler_t handler);
sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return sysv_signal(sig, handler);
}

static unsigned int owned_bit(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	return sim_signal_bits(&set);
}

int sighold(int sig)
{
	if (!sim_signal_owned(sig))
		return get_sighold()(sig);
	sim_signal_set_blocked(sim_signal_blocked() | owned_bit(sig));
	return 0;
}

int sigrelse(int sig)
{
	if (!sim_signal_owned(sig))
		return get_sigrelse()(sig);
	sim_signal_set_blocked(sim_signal_blocked() & ~owned_bit(sig));
	return 0;
}

int sigignore(int sig)
{
	struct sigaction act = { .sa_handler = SIG_IGN };

	if (!sim_signal_owned(sig))
		return get_sigignore()(sig);
	sigemptyset(&act.sa_mask);
	return app_sigaction(sig, &act, NULL, true);
}

/* System V sigset(): SIG_HOLD blocks; anything else unblocks. */
sighandler_t sigset(int sig, sighandler_t disp)
{
	unsigned int bit, was;
	struct sigaction act, old;

	if (!sim_signal_owned(sig))
		return get_sigset()(sig, disp);
	bit = owned_bit(sig);
	was = sim_signal_blocked();
	if (disp == SIG_HOLD) {
		if (app_sigaction(sig, NULL, &old, true))
			return SIG_ERR;
		sim_signal_set_blocked(was | bit);
		return was & bit ? SIG_HOLD : old.sa_handler;
	}
	if (disp == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = disp;
	sigemptyset(&act.sa_mask);
	if (app_sigaction(sig, &act, &old, true))
		return SIG_ERR;
	sim_signal_set_blocked(was & ~bit);
	return was & bit ? SIG_HOLD : old.sa_handler;
}

int siginterrupt(int sig, int interrupt)
{
	struct sigaction act;

	if (!sim_signal_owned(sig))
		return get_siginterrupt()(sig, interrupt);
	if (app_sigaction(sig, NULL, &act, true))
		return -1;
	if (interrupt)
		act.sa_flags &= ~SA_RESTART;
	else
		act.sa_flags |= SA_RESTART;
	return app_sigaction(sig, &act, NULL, true);
}

/* The old BSD sigvec() (a compat symbol old binaries still bind to). */
struct sim_sigvec {
	sighandler_t sv_handler;
	int sv_mask;
	int sv_flags;
};
#define SIM_SV_ONSTACK		1
#define SIM_SV_INTERRUPT	2
#define SIM_SV_RESETHAND	4

int sigvec(int sig, const struct sim_sigvec *vec, struct sim_sigvec *ovec);
int sigvec(int sig, const struct sim_sigvec *vec, struct sim_sigvec *ovec)
{
	struct sigaction act, old;
	unsigned long w;

	if (vec) {
		memset(&act, 0, sizeof(act));
		act.sa_handler = vec->sv_handler;
		sigemptyset(&act.sa_mask);
		w = (unsigned int)vec->sv_mask;
		memcpy(&act.sa_mask, &w, sizeof(w));
		if (vec->sv_flags & SIM_SV_ONSTACK)
			act.sa_flags |= SA_ONSTACK;
		if (!(vec->sv_flags & SIM_SV_INTERRUPT))
			act.sa_flags |= SA_RESTART;
		if (vec->sv_flags & SIM_SV_RESETHAND)
			act.sa_flags |= SA_RESETHAND;
	}
	if (app_sigaction(sig, vec ? &act : NULL, &old, true))
		return -1;
	if (ovec) {
		memcpy(&w, &old.sa_mask, sizeof(w));
		ovec->sv_handler = old.sa_handler;
		ovec->sv_mask = (int)w;
		ovec->sv_flags = (old.sa_flags & SA_ONSTACK ? SIM_SV_ONSTACK :
				  0) |
				 (old.sa_flags & SA_RESTART ? 0 :
				  SIM_SV_INTERRUPT) |
				 (old.sa_flags & SA_RESETHAND ?
				  SIM_SV_RESETHAND : 0);
	}
	return 0;
}

/*
 * A thread's mask: the owned signals go to the view, the rest to the
 * kernel; what the application reads back is both. Returns 0 or an errno.
 */
static int mask_change(int how, const sigset_t *set, sigset_t *old,
		       bool pthread_style)
{
	unsigned int view = sim_signal_blocked(), next = view, bits;
	sigset_t copy;
	int ret;

	if (set) {
		bits = sim_signal_bits(set);
		switch (how) {
		case SIG_BLOCK:
			next = view | bits;
			break;
		case SIG_UNBLOCK:
			next = view & ~bits;
			break;
		case SIG_SETMASK:
			next = bits;
			break;
		default:
			return EINVAL;
		}
		copy = *set;
		sim_signal_strip(&copy);
		set = &copy;
	}
	if (pthread_style) {
		ret = get_pthread_sigmask()(how, set, old);
	} else {
		ret = get_sigprocmask()(how, set, old);
		if (ret)
			ret = errno;
	}
	if (ret)
		return ret;
	if (old)
		sim_signal_add_bits(old, view);
	if (set)
		sim_signal_set_blocked(next);
	return 0;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int ret = mask_change(how, set, old, false);

	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return mask_change(how, set, old, true);
}

/* The BSD int masks: signals 1..32. */
static int bsd_mask(int how, int mask)
{
	sigset_t set, old;
	unsigned long w = (unsigned int)mask;
	int i, out = 0;

	sigemptyset(&set);
	memcpy(&set, &w, sizeof(w));
	if (sigprocmask(how, &set, &old))
		return -1;
	for (i = 1; i <= 32; i++)
		if (sigismember(&old, i) == 1)
			out |= 1 << (i - 1);
	return out;
}

int sigblock(int mask)
{
	return bsd_mask(SIG_BLOCK, mask);
}

int sigsetmask(int mask)
{
	return bsd_mask(SIG_SETMASK, mask);
}

int siggetmask(void)
{
	return bsd_mask(SIG_BLOCK, 0);
}

/*
 * Waits under a temporary mask: owned signals stay deliverable in the
 * kernel, the view holds the temporary mask meanwhile.
 */
struct wait_mask {
	unsigned int saved;
	bool set;
	sigset_t copy;
};

static const sigset_t *wait_mask_enter(struct wait_mask *w,
				       const sigset_t *mask)
{
	w->saved = sim_signal_blocked();
	w->set = mask != NULL;
	if (!mask)
		return NULL;
	w->copy = *mask;
	sim_signal_strip(&w->copy);
	sim_signal_set_blocked(sim_signal_bits(mask));
	return &w->copy;
}

static int wait_mask_leave(struct wait_mask *w, int ret)
{
	int err = errno;

	if (w->set)
		sim_signal_set_blocked(w->saved);
	errno = err;
	return ret;
}

#define WITH_MASK(mask, call)						\
	({								\
		struct wait_mask w_;					\
		const sigset_t *m_ = wait_mask_enter(&w_, (mask));	\
		wait_mask_leave(&w_, (call));				\
	})

int sigsuspend(const sigset_t *mask)
{
	return WITH_MASK(mask, get_sigsuspend()(m_));
}

int __sigsuspend(const sigset_t *mask);
int __sigsuspend(const sigset_t *mask)
{
	return sigsuspend(mask);
}

/* sigpause(): the BSD form takes a mask, the XPG form a signal. */
int __sigpause(int sig_or_mask, int is_sig);
int __sigpause(int sig_or_mask, int is_sig)
{
	sigset_t set;

	if (is_sig) {
		if (sigprocmask(SIG_BLOCK, NULL, &set) ||
		    sigdelset(&set, sig_or_mask))
			return -1;
	} else {
		unsigned long w = (unsigned int)sig_or_mask;

		sigemptyset(&set);
		memcpy(&set, &w, sizeof(w));
	}
	return sigsuspend(&set);
}

/* <signal.h> names the XPG form sigpause: the BSD symbol by its name. */
int bsd_sigpause(int mask) __asm__("sigpause");
int bsd_sigpause(int mask)
{
	return __sigpause(mask, 0);
}

int __xpg_sigpause(int sig);
int __xpg_sigpause(int sig)
{
	return __sigpause(sig, 1);
}

int sigpending(sigset_t *set)
{
	int ret = get_sigpending()(set);

	if (!ret)
		sim_signal_add_bits(set, sim_signal_pending());
	return ret;
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
	  const sigset_t *mask)
{
	return WITH_MASK(mask, get_ppoll()(fds, n, ts, m_));
}

int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		const sigset_t *mask, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		const sigset_t *mask, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();		/* what glibc's check does */
	return ppoll(fds, n, ts, mask);
}

int pselect(int n, fd_set *r, fd_set *w, fd_set *e,
	    const struct timespec *ts, const sigset_t *mask)
{
	return WITH_MASK(mask, get_pselect()(n, r, w, e, ts, m_));
}

int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
		const sigset_t *mask)
{
	return WITH_MASK(mask, get_epoll_pwait()(epfd, ev, max, timeout, m_));
}

int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
		 const struct timespec *ts, const sigset_t *mask)
{
	return WITH_MASK(mask, get_epoll_pwait2()(epfd, ev, max, ts, m_));
}

/*
 * A new thread starts with its creator's mask, or the one its attributes
 * give (pthread_attr_setsigmask_np): the owned signals of it go to the
 * new thread's view, never to the kernel. Attributes' owned signals are
 * remembered by address (a few attribute objects carry masks at once).
 */
REAL(int, pthread_create, pthread_t *, const pthread_attr_t *,
     void *(*)(void *), void *)
REAL(int, pthread_attr_setsigmask_np, pthread_attr_t *, const sigset_t *)
REAL(int, pthread_attr_getsigmask_np, const pthread_attr_t *, sigset_t *)
REAL(int, pthread_attr_destroy, pthread_attr_t *)

#define ATTR_MASKS	64

static struct {
	const pthread_attr_t *attr;
	unsigned int bits;
} attr_masks[ATTR_MASKS];
static pthread_mutex_t attr_masks_lock = PTHREAD_MUTEX_INITIALIZER;

static void attr_bits_set(const pthread_attr_t *attr, unsigned int bits)
{
	int i, free_slot = -1;

	pthread_mutex_lock(&attr_masks_lock);
	for (i = 0; i < ATTR_MASKS; i++) {
		if (attr_masks[i].attr == attr) {
			attr_masks[i].attr = NULL;
			free_slot = i;
		} else if (!attr_masks[i].attr && free_slot < 0) {
			free_slot = i;
		}
	}
	if (bits && free_slot >= 0) {
		attr_masks[free_slot].attr = attr;
		attr_masks[free_slot].bits = bits;
	}
	pthread_mutex_unlock(&attr_masks_lock);
}

static unsigned int attr_bits(const pthread_attr_t *attr)
{
	unsigned int bits = 0;
	int i;

	pthread_mutex_lock(&attr_masks_lock);
	for (i = 0; i < ATTR_MASKS; i++)
		if (attr_masks[i].attr == attr)
			bits = attr_masks[i].bits;
	pthread_mutex_unlock(&attr_masks_lock);
	return bits;
}

int pthread_attr_setsigmask_np(pthread_attr_t *attr, const sigset_t *set)
{
	sigset_t copy;
	int ret;

	if (!set) {
		ret = get_pthread_attr_setsigmask_np()(attr, NULL);
		if (!ret)
			attr_bits_set(attr, 0);
		return ret;
	}
	copy = *set;
	sim_signal_strip(&copy);
	ret = get_pthread_attr_setsigmask_np()(attr, &copy);
	if (!ret)
		attr_bits_set(attr, sim_signal_bits(set));
	return ret;
}

int pthread_attr_getsigmask_np(const pthread_attr_t *attr, sigset_t *set)
{
	int ret = get_pthread_attr_getsigmask_np()(attr, set);

	if (!ret)
		sim_signal_add_bits(set, attr_bits(attr));
	return ret;
}

int pthread_attr_destroy(pthread_attr_t *attr)
{
	attr_bits_set(attr, 0);
	return get_pthread_attr_destroy()(attr);
}

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	unsigned int blocked;
};

static void *thread_start(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;

	free(p);
	sim_signal_set_blocked(ts.blocked);
	return ts.fn(ts.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	unsigned int blocked = sim_signal_blocked();
	struct thread_start *ts;
	sigset_t set;
	int ret;

	if (attr && get_pthread_attr_getsigmask_np() &&
	    !get_pthread_attr_getsigmask_np()(attr, &set))
		blocked = attr_bits(attr);
	if (!blocked)		/* nothing to carry over: no wrapper */
		return get_pthread_create()(thread, attr, fn, arg);
	ts = malloc(sizeof(*ts));
	if (!ts)
		return EAGAIN;
	ts->fn = fn;
	ts->arg = arg;
	ts->blocked = blocked;
	ret = get_pthread_create()(thread, attr, thread_start, ts);
	if (ret)
		free(ts);
	return ret;
}

/*
 * glibc runs a SIGEV_THREAD notification (timers, message queues) on a
 * thread of its own that blocks every signal in the kernel; the function
 * is wrapped so that it runs with the owned signals unblocked there (the
 * view blocks them, as glibc meant).
 */
REAL(int, timer_create, clockid_t, struct sigevent *, timer_t *)
REAL(int, timer_delete, timer_t)
REAL(int, mq_notify, int, const struct sigevent *)

struct notify_call {
	void (*fn)(union sigval);
	union sigval value;
	timer_t timer;
	bool once;			/* mq_notify: one notification */
	struct notify_call *next;
};

#define TIMER_GRAVEYARD	64

static struct notify_call *timer_calls;
static struct notify_call *timer_graveyard[TIMER_GRAVEYARD];
static unsigned int timer_graveyard_next;
static pthread_mutex_t timer_calls_lock = PTHREAD_MUTEX_INITIALIZER;

static void notify_start(union sigval v)
{
	struct notify_call *nc = v.sival_ptr, call = *nc;
	unsigned long owned = 0;
	sigset_t set;

	sigemptyset(&set);
	sim_signal_add_bits(&set, (1u << SIM_OWNED_SIGNALS) - 1);
	memcpy(&owned, &set, sizeof(owned));
	sim_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&owned, 0,
		 SIM_KSIGSET_SIZE, 0, 0);
	sim_signal_set_blocked((1u << SIM_OWNED_SIGNALS) - 1);
	if (call.once)
		free(nc);
	call.fn(call.value);
}

static struct notify_call *notify_wrap(const struct sigevent *sev,
				       struct sigevent *copy, bool once)
{
	struct notify_call *nc;

	if (!sev || sev->sigev_notify != SIGEV_THREAD ||
	    !sev->sigev_notify_function)
		return NULL;
	nc = calloc(1, sizeof(*nc));
	if (!nc)
		return NULL;
	nc->fn = sev->sigev_notify_function;
	nc->value = sev->sigev_value;
	nc->once = once;
	*copy = *sev;
	copy->sigev_notify_function = notify_start;
	copy->sigev_value.sival_ptr = nc;
	return nc;
}

int timer_create(clockid_t clock, struct sigevent *sev, timer_t *timer)
{
	struct sigevent copy;
	struct notify_call *nc = notify_wrap(sev, &copy, false);
	int ret;

	ret = get_timer_create()(clock, nc ? &copy : sev, timer);
	if (!nc)
		return ret;
	if (ret) {
		free(nc);
		return ret;
	}
	nc->timer = *timer;
	pthread_mutex_lock(&timer_calls_lock);
	nc->next = timer_calls;
	timer_calls = nc;
	pthread_mutex_unlock(&timer_calls_lock);
	return 0;
}

int timer_delete(timer_t timer)
{
	struct notify_call **pp, *nc = NULL;
	int ret = get_timer_delete()(timer);

	if (ret)
		return ret;
	pthread_mutex_lock(&timer_calls_lock);
	for (pp = &timer_calls; *pp; pp = &(*pp)->next) {
		if ((*pp)->timer == timer) {
			nc = *pp;
			*pp = nc->next;
			break;
		}
	}
	/* A notification of the timer may still be starting: what it
	 * reads is freed only a few deletions later. */
	if (nc) {
		free(timer_graveyard[timer_graveyard_next]);
		timer_graveyard[timer_graveyard_next] = nc;
		timer_graveyard_next = (timer_graveyard_next + 1) %
				       TIMER_GRAVEYARD;
	}
	pthread_mutex_unlock(&timer_calls_lock);
	return 0;
}

int mq_notify(int mqd, const struct sigevent *sev)
{
	struct sigevent copy;
	struct notify_call *nc = notify_wrap(sev, &copy, true);
	int ret = get_mq_notify()(mqd, nc ? &copy : sev);

	if (ret)
		free(nc);
	return ret;
}

/*
 * exec keeps the thread's mask: the view's owned signals are blocked in
 * the kernel for the new image (whose sim takes them back into its view
 * at start-up), and unblocked again if exec fails.
 */
REAL(int, execve, const char *, char *const[], char *const[])
REAL(int, execv, const char *, char *const[])
REAL(int, execvp, const char *, char *const[])
REAL(int, execvpe, const char *, char *const[], char *const[])
REAL(int, fexecve, int, char *const[], char *const[])

static unsigned long exec_block(void)
{
	unsigned long w = 0;
	sigset_t set;

	if (!sim_signal_blocked())
		return 0;
	sigemptyset(&set);
	sim_signal_add_bits(&set, sim_signal_blocked());
	memcpy(&w, &set, sizeof(w));
	sim_sys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&w, 0,
		 SIM_KSIGSET_SIZE, 0, 0);
	return w;
}

static int exec_failed(unsigned long w, int ret)
{
	int err = errno;

	if (w)
		sim_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&w, 0,
			 SIM_KSIGSET_SIZE, 0, 0);
	errno = err;
	return ret;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execve()(path, argv, envp));
}

int execv(const char *path, char *const argv[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execv()(path, argv));
}

int execvp(const char *file, char *const argv[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execvp()(file, argv));
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_execvpe()(file, argv, envp));
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	unsigned long w = exec_block();

	return exec_failed(w, get_fexecve()(fd, argv, envp));
}

/* The list forms, as glibc builds them: argv from the arguments. */
#define EXEC_LIST(first, argv, want_env, envp)				\
	do {								\
		va_list ap_;						\
		size_t n_ = 1;						\
		va_start(ap_, first);					\
		while (va_arg(ap_, char *))				\
			n_++;						\
		va_end(ap_);						\
		argv = alloca((n_ + 1) * sizeof(char *));		\
		argv[0] = (char *)(first);				\
		va_start(ap_, first);					\
		for (size_t i_ = 1; i_ <= n_; i_++)			\
			argv[i_] = va_arg(ap_, char *);			\
		if (want_env)						\
			envp = va_arg(ap_, char **);			\
		va_end(ap_);						\
	} while (0)

int execl(const char *path, const char *arg, ...)
{
	char **argv, **envp = NULL;

	EXEC_LIST(arg, argv, false, envp);
	(void)envp;
	return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...)
{
	char **argv, **envp = NULL;

	EXEC_LIST(arg, argv, false, envp);
	(void)envp;
	return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = NULL;

	EXEC_LIST(arg, argv, true, envp);
	return execve(path, argv, envp);
}

/* A context switch sets the mask its context holds. */
int setcontext(const ucontext_t *ucp)
{
	ucontext_t copy = *ucp;

	sim_signal_strip(&copy.uc_sigmask);
	sim_signal_set_blocked(sim_signal_bits(&ucp->uc_sigmask));
	return get_setcontext()(&copy);
}

int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
	unsigned int saved = sim_signal_blocked();
	ucontext_t copy = *ucp;
	int ret;

	sim_signal_strip(&copy.uc_sigmask);
	sim_signal_set_blocked(sim_signal_bits(&ucp->uc_sigmask));
	ret = get_swapcontext()(oucp, &copy);
	/* Back in oucp (or failed): its view was the one saved. */
	sim_signal_set_blocked(saved);
	return ret;
}

/* A long jump restores the mask its sigsetjmp() saved, if it saved one. */
static void jump_mask(const struct __jmp_buf_tag *env)
{
	if (env->__mask_was_saved)
		sim_signal_set_blocked(sim_signal_bits(&env->__saved_mask));
}

void siglongjmp(sigjmp_buf env, int val)
{
	jump_mask(env);
	get_siglongjmp()(env, val);
	__builtin_unreachable();
}

void longjmp(jmp_buf env, int val)
{
	siglongjmp(env, val);
}

void _longjmp(jmp_buf env, int val)
{
	siglongjmp(env, val);
}

void __longjmp_chk(sigjmp_buf env, int val);
void __longjmp_chk(sigjmp_buf env, int val)
{
	jump_mask(env);
	get___longjmp_chk()(env, val);
	__builtin_unreachable();
}
/*
 * ---- syscall(): the raw system calls, answered as the calls above ----
 *
 * A program (or a library: UCX's hooks) that makes these calls with
 * glibc's syscall() gets what the libc call would have given it. Inline
 * system calls cannot be seen: doorbell.c's safety net and SIGBUS fixup
 * cover the actions and mappings they could change.
 */

static long raw_sigprocmask(int how, const unsigned long *set,
			    unsigned long *old, long size)
{
	sigset_t s, o;
	int ret;

	if (size != SIM_KSIGSET_SIZE)
		return get_syscall()(SYS_rt_sigprocmask, how, set, old, size);
	if (set) {
		sigemptyset(&s);
		memcpy(&s, set, SIM_KSIGSET_SIZE);
	}
	/* How the kernel reads it: the rest checked by the kernel. */
	if (set && how != SIG_BLOCK && how != SIG_UNBLOCK &&
	    how != SIG_SETMASK) {
		errno = EINVAL;
		return -1;
	}
	ret = mask_change(how, set ? &s : NULL, old ? &o : NULL, true);
	if (ret) {
		errno = ret;
		return -1;
	}
	if (old)
		memcpy(old, &o, SIM_KSIGSET_SIZE);
	return 0;
}

static long raw_sigaction(int sig, const struct sim_ksigaction *kact,
			  struct sim_ksigaction *kold, long size)
{
	struct sigaction act, old;
	struct sim_ksigaction copy;
	unsigned long w;

	if (size != SIM_KSIGSET_SIZE || !sig_valid(sig))
		return get_syscall()(SYS_rt_sigaction, sig, kact, kold, size);
	if (!sim_doorbell_trap_installed() || !sim_signal_owned(sig)) {
		unsigned int bits = 0;
		sigset_t set;
		long ret;

		if (kact) {
			copy = *kact;
			sigemptyset(&set);
			memcpy(&set, &copy.mask, SIM_KSIGSET_SIZE);
			bits = sim_signal_bits(&set);
			sim_signal_strip(&set);
			memcpy(&copy.mask, &set, SIM_KSIGSET_SIZE);
			kact = &copy;
		}
		ret = get_syscall()(SYS_rt_sigaction, sig, kact, kold, size);
		if (!ret && kold) {
			sigemptyset(&set);
			w = atomic_load(&app_samask_owned[sig]);
			sim_signal_add_bits(&set, (unsigned int)w);
			memcpy(&w, &set, sizeof(w));
			kold->mask |= w;
		}
		if (!ret && kact)
			atomic_store(&app_samask_owned[sig], bits);
		return ret;
	}
	if (kact) {
		memset(&act, 0, sizeof(act));
		act.sa_handler = (sighandler_t)kact->handler;
		act.sa_flags = (int)(kact->flags & ~0x04000000ul);
		sigemptyset(&act.sa_mask);
		memcpy(&act.sa_mask, &kact->mask, SIM_KSIGSET_SIZE);
	}
	sim_signal_app_action(sig, kact ? &act : NULL, &old);
	if (kold) {
		memset(kold, 0, sizeof(*kold));
		kold->handler = (void *)old.sa_handler;
		kold->flags = (unsigned int)old.sa_flags;
		memcpy(&kold->mask, &old.sa_mask, SIM_KSIGSET_SIZE);
	}
	return 0;
}

/* The masks a raw wait takes: owned signals out, the view meanwhile. */
static long raw_wait_mask(long nr, long a1, long a2, long a3, long a4,
			  long a5, long a6, const unsigned long *kmask,
			  int mask_arg)
{
	unsigned int saved = sim_signal_blocked();
	unsigned long copy;
	sigset_t set;
	long args[6] = { a1, a2, a3, a4, a5, a6 }, ret;
	int err;

	if (!kmask)
		return get_syscall()(nr, a1, a2, a3, a4, a5, a6);
	copy = *kmask;
	sigemptyset(&set);
	memcpy(&set, &copy, sizeof(copy));
	sim_signal_set_blocked(sim_signal_bits(&set));
	sim_signal_strip(&set);
	memcpy(&copy, &set, sizeof(copy));
	args[mask_arg] = (long)&copy;
	ret = get_syscall()(nr, args[0], args[1], args[2], args[3], args[4],
			    args[5]);
	err = errno;
	sim_signal_set_blocked(saved);
	errno = err;
	return ret;
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	switch (nr) {
	case SYS_rt_sigprocmask:
		return raw_sigprocmask((int)a[0], (const unsigned long *)a[1],
				       (unsigned long *)a[2], a[3]);
	case SYS_rt_sigaction:
		return raw_sigaction((int)a[0],
				     (const struct sim_ksigaction *)a[1],
				     (struct sim_ksigaction *)a[2], a[3]);
	case SYS_rt_sigsuspend:
		return raw_wait_mask(nr, a[0], a[1], a[2], a[3], a[4], a[5],
				     (const unsigned long *)a[0], 0);
	case SYS_ppoll:
		return raw_wait_mask(nr, a[0], a[1], a[2], a[3], a[4], a[5],
				     (const unsigned long *)a[3], 3);
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return raw_wait_mask(nr, a[0], a[1], a[2], a[3], a[4], a[5],
				     (const unsigned long *)a[4], 4);
	case SYS_mmap:
		return (long)host_mmap((void *)a[0], (size_t)a[1], (int)a[2],
				       (int)a[3], (int)a[4], (off_t)a[5]);
	case SYS_munmap:
		return host_munmap((void *)a[0], (size_t)a[1]);
	case SYS_mremap:
		return (long)host_mremap((void *)a[0], (size_t)a[1],
					 (size_t)a[2], (int)a[3],
					 (void *)a[4]);
	case SYS_madvise:	/* not madvise(): a memory hook may own it */
		return host_madvise((void *)a[0], (size_t)a[1], (int)a[2]);
	case SYS_close:
		return close((int)a[0]);
	case SYS_close_range:
		return app_close_range((unsigned int)a[0],
					      (unsigned int)a[1], (int)a[2],
					      raw_close_range);
	case SYS_dup:
		return dup((int)a[0]);
	case SYS_dup2:
		return dup2((int)a[0], (int)a[1]);
	case SYS_dup3:
		return dup3((int)a[0], (int)a[1], (int)a[2]);
	case SYS_fcntl:
		return fcntl((int)a[0], (int)a[1], a[2]);
	case SYS_ioctl:
		return ioctl((int)a[0], (unsigned long)a[1], a[2]);
	case SYS_write:
		return write((int)a[0], (const void *)a[1], (size_t)a[2]);
	case SYS_open:
		return open((const char *)a[0], (int)a[1],
				   (mode_t)a[2]);
	case SYS_openat:
		return openat((int)a[0], (const char *)a[1], (int)a[2],
				     (mode_t)a[3]);
	case SYS_fstat:
		return fstat((int)a[0], (struct stat *)a[1]);
	case SYS_newfstatat:
		return fstatat((int)a[0], (const char *)a[1],
				      (struct stat *)a[2], (int)a[3]);
	default:
		return get_syscall()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
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
	sim_signal_set_bus_fixup(uar_bus_fixup);
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
