// SPDX-License-Identifier: BSD-2-Clause
/*
 * The open device files by fd, and what the application does to its fds:
 * close*, dup*, fcntl(F_DUPFD*) carry or end a file's lifetime; the sim's
 * own fds stay out of its reach. See preload.h.
 */
#include "preload.h"

_Atomic(struct host_file *) fd_table[FD_TABLE_SIZE];

_Atomic(struct host_file *) host_files;

static pthread_mutex_t host_files_lock = PTHREAD_MUTEX_INITIALIZER;

/* An application thread may be inside host_file_get() (its open() of a
 * device file, which allocates through the application's allocator) while
 * another forks. */
void host_files_fork_init(void)
{
	host_lock_fork_safe(&host_files_lock);
}

struct host_file *host_file_get(void)
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

void host_file_release(struct host_file *hf)
{
	pthread_mutex_lock(&host_files_lock);
	hf->file = NULL;
	hf->ucma = NULL;
	hf->in_use = false;
	pthread_mutex_unlock(&host_files_lock);
}

void host_file_put(struct host_file *hf)
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
struct host_file *fd_file(int fd)
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

struct host_file *fd_file_hold(int fd)
{
	struct host_file *hf = fd_file(fd);
	unsigned int refs;

	if (!hf)
		return NULL;
	refs = atomic_load(&hf->refs);
	do {
		if (!refs)
			return NULL;	/* its last reference is going */
	} while (!atomic_compare_exchange_weak(&hf->refs, &refs, refs + 1));
	/* closed (and perhaps the entry reused) before the reference */
	if (atomic_load(&fd_table[fd]) != hf) {
		host_file_put(hf);
		return NULL;
	}
	return hf;
}

/* The same, given what fstat() just said of fd. */
struct host_file *fd_file_stat(int fd, struct host_file *hf,
			       const struct stat *st)
{
	if (!hf || stat_is_file(st, hf))
		return hf;
	fd_forget(fd, hf);
	return NULL;
}

/*
 * fd now names hf's open file, known by what fstat says of it; hf holds
 * the one reference of the fd. What the number named before was closed
 * unseen.
 */
int fd_install(int fd, struct host_file *hf)
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

struct ucma_file *ucma_file_of_fd(int fd)
{
	struct host_file *hf = fd_file(fd);	/* still that open file */

	return hf ? hf->ucma : NULL;
}

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

int raw_close_range(unsigned int first, unsigned int last, int flags)
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
int app_close_range(unsigned int first, unsigned int last, int flags,
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
