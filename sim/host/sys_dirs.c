// SPDX-License-Identifier: BSD-2-Clause
/*
 * sysfs at its real paths, the calls that name files (sys_overlay.h):
 * open, directory streams, scandir, realpath, readlink, chdir/getcwd and
 * fopen. A directory both the host and the tree have is the host's
 * stream, and once the host's entries are read the tree's follow (the
 * names the host lacks), so readdir() of /sys/class lists the host's
 * classes and infiniband. telldir/seekdir positions cover the host's
 * entries only.
 */
#include "preload.h"

#include "sys_overlay.h"

struct merged_dir {
	DIR *dir;			/* NULL: a free slot */
	bool host_done;
	unsigned int next, count;
	struct dirent *extra;		/* the tree's names the host lacks */
};

#define MAX_MERGED_DIRS	64	/* open at once; more list the host's only */

static struct merged_dir merged[MAX_MERGED_DIRS];
static pthread_mutex_t merged_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint merged_count;

int sys_ov_open(int dirfd, const char *path, int flags, mode_t mode)
{
	bool nofollow = (flags & O_NOFOLLOW) ||
			(flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	struct sys_ov_walk w;
	const char *real = sys_ov_path(dirfd, path, nofollow, &w);
	int fd;

	if (!real)
		return -1;
	fd = get_openat()(dirfd, real, flags, mode);
	/* An unused GID slot's attributes: the kernel's EINVAL (sysfs.c). */
	if (fd < 0 && errno == ENOENT && real != path &&
	    w.where == SYS_OV_NONE && strstr(w.canon, "/gid_attrs/") &&
	    !strncmp(w.real, sim_global.sysfs_root,
		     strlen(sim_global.sysfs_root)))
		errno = EINVAL;
	return fd;
}

/* The tree's entries of tree_dir that host (a stream) does not have. */
static struct dirent *tree_extras(DIR *host, const char *tree_dir,
				  unsigned int *count)
{
	struct dirent *extra = NULL, *e, *grown;
	unsigned int n = 0, cap = 0;
	DIR *t = get_opendir()(tree_dir);
	struct stat st;

	if (!t)
		return NULL;
	while ((e = get_readdir()(t))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!sim_sys6(SYS_newfstatat, dirfd(host), (long)e->d_name,
			      (long)&st, AT_SYMLINK_NOFOLLOW, 0, 0))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			grown = realloc(extra, cap * sizeof(*extra));
			if (!grown)
				break;
			extra = grown;
		}
		extra[n] = *e;
		extra[n].d_off = 0;
		n++;
	}
	get_closedir()(t);
	*count = n;
	return extra;
}

static void merge_attach(DIR *d, const char *canon)
{
	char tree[PATH_MAX];
	struct dirent *extra;
	unsigned int count = 0, i;

	if (!sys_ov_tree_dir(canon, tree))
		return;
	extra = tree_extras(d, tree, &count);
	if (!extra)
		return;
	pthread_mutex_lock(&merged_lock);
	for (i = 0; i < MAX_MERGED_DIRS && merged[i].dir; i++)
		;
	if (i < MAX_MERGED_DIRS) {
		merged[i] = (struct merged_dir){ .dir = d, .count = count,
						 .extra = extra };
		atomic_fetch_add(&merged_count, 1);
		extra = NULL;
	}
	pthread_mutex_unlock(&merged_lock);
	free(extra);
}

/* The merged state of d, with merged_lock held; NULL (not held) if none. */
static struct merged_dir *merged_of(DIR *d)
{
	unsigned int i;

	if (!atomic_load_explicit(&merged_count, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&merged_lock);
	for (i = 0; i < MAX_MERGED_DIRS; i++)
		if (merged[i].dir == d)
			return &merged[i];
	pthread_mutex_unlock(&merged_lock);
	return NULL;
}

DIR *opendir(const char *path)
{
	struct sys_ov_walk w;
	const char *real;
	DIR *d;

	if (!sys_ov_maybe(AT_FDCWD, path))
		return get_opendir()(path);
	real = sys_ov_path(AT_FDCWD, path, false, &w);
	if (!real)
		return NULL;
	d = get_opendir()(real);
	if (d && real != path && w.where == SYS_OV_MERGED)
		merge_attach(d, w.canon);
	return d;
}

DIR *fdopendir(int fd)
{
	char canon[PATH_MAX];
	DIR *d = get_fdopendir()(fd);

	if (d && atomic_load_explicit(&sys_ov_ready, memory_order_relaxed) &&
	    sys_ov_fd_canon(fd, canon) == SYS_OV_HOST)
		merge_attach(d, canon);
	return d;
}

struct dirent *readdir(DIR *d)
{
	struct merged_dir *m = merged_of(d);
	struct dirent *e = NULL;

	if (!m)
		return get_readdir()(d);
	if (!m->host_done) {
		e = get_readdir()(d);
		m->host_done = !e;
	}
	if (!e && m->next < m->count)
		e = &m->extra[m->next++];
	pthread_mutex_unlock(&merged_lock);
	return e;
}

/* struct dirent64 is struct dirent on x86-64. */
struct dirent64 *readdir64(DIR *d)
{
	return (struct dirent64 *)readdir(d);
}

/* readdir() copied to the caller's entry (readdir_r is deprecated). */
static int readdir_copy(DIR *d, struct dirent *entry, struct dirent **result)
{
	int err = errno;
	struct dirent *e;

	errno = 0;
	e = readdir(d);
	if (!e && errno)
		return errno;
	errno = err;
	if (e)
		*entry = *e;
	*result = e ? entry : NULL;
	return 0;
}

int readdir_r(DIR *d, struct dirent *entry, struct dirent **result)
{
	return readdir_copy(d, entry, result);
}

int readdir64_r(DIR *d, struct dirent64 *entry, struct dirent64 **result)
{
	return readdir_copy(d, (struct dirent *)entry,
			    (struct dirent **)result);
}

void rewinddir(DIR *d)
{
	struct merged_dir *m = merged_of(d);

	if (m) {
		m->host_done = false;
		m->next = 0;
		pthread_mutex_unlock(&merged_lock);
	}
	get_rewinddir()(d);
}

int closedir(DIR *d)
{
	struct merged_dir *m = merged_of(d);

	if (m) {
		free(m->extra);
		*m = (struct merged_dir){ 0 };
		atomic_fetch_sub(&merged_count, 1);
		pthread_mutex_unlock(&merged_lock);
	}
	return get_closedir()(d);
}

typedef int (*scan_filter_fn)(const struct dirent *);
typedef int (*scan_compar_fn)(const struct dirent **, const struct dirent **);

/* scandir() over the streams above. */
static int scan_stream(DIR *d, struct dirent ***list, scan_filter_fn filter,
		       scan_compar_fn compar)
{
	struct dirent **v = NULL, **grown, *e;
	size_t n = 0, cap = 0;

	while ((e = readdir(d))) {
		if (filter && !filter(e))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown)
				goto nomem;
			v = grown;
		}
		v[n] = malloc(sizeof(*e));
		if (!v[n])
			goto nomem;
		*v[n++] = *e;
	}
	closedir(d);
	if (compar && n)
		qsort(v, n, sizeof(*v),
		      (int (*)(const void *, const void *))compar);
	*list = v;
	return (int)n;
nomem:
	while (n--)
		free(v[n]);
	free(v);
	closedir(d);
	errno = ENOMEM;
	return -1;
}

int scandirat(int dirfd, const char *path, struct dirent ***list,
	      scan_filter_fn filter, scan_compar_fn compar)
{
	struct sys_ov_walk w;
	int ret;
	DIR *d;

	if (!sys_ov_maybe(dirfd, path))
		return get_scandirat()(dirfd, path, list, filter, compar);
	ret = sys_ov_resolve(dirfd, path, false, &w);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	if (!ret)
		return get_scandirat()(dirfd, path, list, filter, compar);
	d = opendir(w.where == SYS_OV_OUTSIDE ? w.real : w.canon);
	return d ? scan_stream(d, list, filter, compar) : -1;
}

int scandir(const char *path, struct dirent ***list, scan_filter_fn filter,
	    scan_compar_fn compar)
{
	if (!sys_ov_maybe(AT_FDCWD, path))
		return get_scandir()(path, list, filter, compar);
	return scandirat(AT_FDCWD, path, list, filter, compar);
}

int scandir64(const char *path, struct dirent64 ***list,
	      int (*filter)(const struct dirent64 *),
	      int (*compar)(const struct dirent64 **,
			    const struct dirent64 **))
{
	return scandir(path, (struct dirent ***)list, (scan_filter_fn)filter,
		       (scan_compar_fn)compar);
}

int scandirat64(int dirfd, const char *path, struct dirent64 ***list,
		int (*filter)(const struct dirent64 *),
		int (*compar)(const struct dirent64 **,
			      const struct dirent64 **))
{
	return scandirat(dirfd, path, (struct dirent ***)list,
			 (scan_filter_fn)filter, (scan_compar_fn)compar);
}

char *realpath(const char *path, char *resolved)
{
	struct sys_ov_walk w;
	int ret;

	if (!sys_ov_maybe(AT_FDCWD, path))
		return get_realpath()(path, resolved);
	ret = sys_ov_resolve(AT_FDCWD, path, false, &w);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	if (!ret || w.where == SYS_OV_OUTSIDE)
		return get_realpath()(ret ? w.real : path, resolved);
	if (w.where == SYS_OV_NONE) {
		errno = ENOENT;
		return NULL;
	}
	if (!resolved)
		return strdup(w.canon);
	return strcpy(resolved, w.canon);
}

char *__realpath_chk(const char *path, char *resolved, size_t len);
char *__realpath_chk(const char *path, char *resolved, size_t len)
{
	return realpath(path, resolved);
}

char *canonicalize_file_name(const char *path)
{
	return realpath(path, NULL);
}

ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
	struct sys_ov_walk w;
	const char *real;

	if (!sys_ov_maybe(dirfd, path))
		return get_readlinkat()(dirfd, path, buf, len);
	real = sys_ov_path(dirfd, path, true, &w);
	return real ? get_readlinkat()(dirfd, real, buf, len) : -1;
}

ssize_t readlink(const char *path, char *buf, size_t len)
{
	if (!sys_ov_maybe(AT_FDCWD, path))
		return get_readlink()(path, buf, len);
	return readlinkat(AT_FDCWD, path, buf, len);
}

ssize_t __readlink_chk(const char *path, char *buf, size_t len,
		       size_t buflen);
ssize_t __readlink_chk(const char *path, char *buf, size_t len,
		       size_t buflen)
{
	return readlink(path, buf, len < buflen ? len : buflen);
}

ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len,
			 size_t buflen);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len,
			 size_t buflen)
{
	return readlinkat(dirfd, path, buf, len < buflen ? len : buflen);
}

int chdir(const char *path)
{
	struct sys_ov_walk w;
	const char *real = path;
	int ret;

	if (sys_ov_maybe(AT_FDCWD, path))
		real = sys_ov_path(AT_FDCWD, path, false, &w);
	if (!real)
		return -1;
	ret = get_chdir()(real);
	if (!ret && atomic_load_explicit(&sys_ov_ready, memory_order_relaxed))
		sys_ov_cwd_changed();
	return ret;
}

int fchdir(int fd)
{
	int ret = get_fchdir()(fd);

	if (!ret && atomic_load_explicit(&sys_ov_ready, memory_order_relaxed))
		sys_ov_cwd_changed();
	return ret;
}

/* Inside the tree, the directory's /sys name (never longer). */
char *getcwd(char *buf, size_t len)
{
	char *cwd = get_getcwd()(buf, len);

	if (cwd && atomic_load_explicit(&sys_ov_cwd_under_sys,
					memory_order_relaxed))
		sys_ov_tree_to_canon(cwd, strlen(cwd) + 1);
	return cwd;
}

char *__getcwd_chk(char *buf, size_t len, size_t buflen);
char *__getcwd_chk(char *buf, size_t len, size_t buflen)
{
	if (len > buflen) {
		errno = ERANGE;
		return NULL;
	}
	return getcwd(buf, len);
}

#define FOPEN(name)							\
	FILE *name(const char *path, const char *mode)			\
	{								\
		struct sys_ov_walk w;					\
		const char *real = path;				\
									\
		if (sys_ov_maybe(AT_FDCWD, path))			\
			real = sys_ov_path(AT_FDCWD, path, false, &w);	\
		return real ? get_##name()(real, mode) : NULL;		\
	}

#define FREOPEN(name)							\
	FILE *name(const char *path, const char *mode, FILE *f)		\
	{								\
		struct sys_ov_walk w;					\
		const char *real = path;				\
									\
		if (sys_ov_maybe(AT_FDCWD, path))			\
			real = sys_ov_path(AT_FDCWD, path, false, &w);	\
		return real || !path ? get_##name()(real, mode, f) : NULL; \
	}

FOPEN(fopen)
FOPEN(fopen64)
FREOPEN(freopen)
FREOPEN(freopen64)
