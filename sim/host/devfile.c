// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device nodes: open*() of /dev/infiniband/uverbsN and rdma_cm, and
 * the file operations on them (write: the commands; read: no such method;
 * ioctl: ENOTTY, so libibverbs keeps to write()); socket() of RDMA
 * netlink. See preload.h.
 */
#include "preload.h"

#include "netdev.h"
#include "nldev_snap.h"
#include "rtnetlink.h"
#include "sys_overlay.h"

/* The adapter index of "/dev/infiniband/uverbsN", RDMA_CM_INDEX for
 * "/dev/infiniband/rdma_cm", or -1. */
int uverbs_index(const char *path)
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
	snap_publish_start();	/* its objects, for RDMA netlink */
	return fd_install(fd, hf);
}

/* path is under prefix (a directory's name). */
static bool path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return n && !strncmp(path, prefix, n) &&
	       (path[n] == '/' || !path[n]);
}

/* The path of a device file or of the sysfs tree (by SYSFS_PATH or by
 * its own name). */
static bool sim_path(const char *path)
{
	return path && (!strncmp(path, "/dev/infiniband/", 16) ||
			path_under(path, sim_global.sysfs_path) ||
			path_under(path, sim_global.sysfs_root));
}

/* What open*() of path opens of the sim's (uverbs_index()). A fork()ed
 * child gets adapters of its own before it first looks at them. */
static int open_index(const char *path)
{
	if (sim_path(path))
		sim_identity_check();
	return uverbs_index(path);
}

/*
 * The kernel fails reading gid_attrs of an unused GID slot with EINVAL,
 * which libibverbs relies on; the tree leaves those files out, and their
 * ENOENT becomes that EINVAL here.
 */
static int fix_sysfs_errno(int ret, const char *path)
{
	if (ret < 0 && errno == ENOENT && path &&
	    (path_under(path, sim_global.sysfs_path) ||
	     path_under(path, sim_global.sysfs_root)) &&
	    strstr(path, "/gid_attrs/"))
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
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(AT_FDCWD, path))
		return sys_ov_open(AT_FDCWD, path, flags, mode);
	return fix_sysfs_errno(get_open()(path, flags, mode), path);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(AT_FDCWD, path))
		return sys_ov_open(AT_FDCWD, path, flags, mode);
	return fix_sysfs_errno(get_open64()(path, flags, mode), path);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(dirfd, path))
		return sys_ov_open(dirfd, path, flags, mode);
	return fix_sysfs_errno(get_openat()(dirfd, path, flags, mode), path);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(dirfd, path))
		return sys_ov_open(dirfd, path, flags, mode);
	return fix_sysfs_errno(get_openat64()(dirfd, path, flags, mode),
			       path);
}

int __open_2(const char *path, int flags);

int __open_2(const char *path, int flags)
{
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(AT_FDCWD, path))
		return sys_ov_open(AT_FDCWD, path, flags, 0);
	return fix_sysfs_errno(get___open_2()(path, flags), path);
}

int __open64_2(const char *path, int flags);

int __open64_2(const char *path, int flags)
{
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(AT_FDCWD, path))
		return sys_ov_open(AT_FDCWD, path, flags, 0);
	return fix_sysfs_errno(get___open64_2()(path, flags), path);
}

int __openat_2(int dirfd, const char *path, int flags);

int __openat_2(int dirfd, const char *path, int flags)
{
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(dirfd, path))
		return sys_ov_open(dirfd, path, flags, 0);
	return fix_sysfs_errno(get___openat_2()(dirfd, path, flags), path);
}

int __openat64_2(int dirfd, const char *path, int flags);

int __openat64_2(int dirfd, const char *path, int flags)
{
	int idx = open_index(path);

	if (idx >= 0)
		return open_uverbs(idx, flags);
	if (sys_ov_maybe(dirfd, path))
		return sys_ov_open(dirfd, path, flags, 0);
	return fix_sysfs_errno(get___openat64_2()(dirfd, path, flags), path);
}

/*
 * A command runs with a reference to its file, as under the kernel's
 * fdget(): another thread's close() of the fd meanwhile (a program tearing
 * down while its rdma_cm thread waits in rdma_get_cm_event) leaves the
 * file until the command returns, instead of freeing it under the command.
 */
ssize_t write(int fd, const void *buf, size_t len)
{
	struct host_file *hf = fd_file_hold(fd);
	bool ucma;
	ssize_t ret;

	if (!hf)
		return get_write()(fd, buf, len);
	if (hf->acc_mode == O_RDONLY) {
		host_file_put(hf);
		errno = EBADF;	/* the VFS: not open for writing */
		return -1;
	}
	/* A forked child's command on its parent's file: the objects it
	 * makes are the child's adapter's, not the parent's. */
	sim_identity_check();
	ucma = hf->ucma;
	ret = ucma ? ucma_write(hf->ucma, buf, len) :
		     uverbs_write(hf->file, buf, len);
	host_file_put(hf);
	if (!ucma)
		snap_objects_changed();	/* for RDMA netlink */
	if (ret < 0) {
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
	/* Interface requests also see the adapters' netdevs (ifaddrs.c). */
	return sim_netdev_ioctl(get_ioctl(), fd, request, arg);
}

/* RDMA netlink is the sim's (nldev.c), with the adapters in it. */
int socket(int domain, int type, int protocol)
{
	int fd;

	if (domain == AF_NETLINK && protocol == NETLINK_RDMA)
		return nldev_socket(type);
	fd = get_socket()(domain, type, protocol);
	if (domain == AF_NETLINK && protocol == NETLINK_ROUTE)
		rtnl_track(fd);	/* the simulated netdevs in its dumps */
	return fd;
}
