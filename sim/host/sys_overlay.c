// SPDX-License-Identifier: BSD-2-Clause
/*
 * sysfs at its real paths: the walk that decides, for a path under /sys,
 * whether the kernel is handed the tree's file or the host's
 * (sys_overlay.h). The walk uses raw system calls, so nothing it does
 * comes back to the names the preload library answers.
 *
 * Relative paths are seen when the working directory (tracked through
 * chdir/fchdir, sys_dirs.c) or the directory fd is under /sys or the
 * tree; the fd's name comes from /proc/self/fd.
 */
#include "preload.h"

#include "sys_overlay.h"

#define SYS_DIR		"/sys"
#define SYS_LEN		4
#define MAX_HOPS	40	/* the kernel's limit of symlinks in a walk */

_Atomic bool sys_ov_cwd_under_sys;
_Atomic bool sys_ov_ready;

/* path is dir itself or below it (dir without a trailing slash). */
static bool path_in(const char *path, const char *dir, size_t n)
{
	return n && !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

static bool tree_ready(void)
{
	return sim_global.num_adapters && sim_global.sysfs_root[0];
}

static long raw_lstat(const char *path, struct stat *st)
{
	return sim_sys6(SYS_newfstatat, AT_FDCWD, (long)path, (long)st,
			AT_SYMLINK_NOFOLLOW, 0, 0);
}

/* "<root><canon minus /sys>": the tree's name of a canonical path. */
static int tree_name(const char *canon, char *out, size_t len)
{
	int n = snprintf(out, len, "%s%s", sim_global.sysfs_root,
			 canon + SYS_LEN);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Where canon is, and its lstat there (the host's for a merged
 * directory, the tree's where the tree wins). */
static enum sys_ov_where classify(const char *canon, struct stat *st,
				  char tree[PATH_MAX])
{
	struct stat hst;
	bool in_tree, in_host;

	in_tree = !tree_name(canon, tree, PATH_MAX) && !raw_lstat(tree, st);
	in_host = !raw_lstat(canon, &hst);
	if (in_tree && in_host && S_ISDIR(st->st_mode) &&
	    S_ISDIR(hst.st_mode)) {
		*st = hst;
		return SYS_OV_MERGED;
	}
	if (in_tree)
		return SYS_OV_TREE;
	if (in_host) {
		*st = hst;
		return SYS_OV_HOST;
	}
	return SYS_OV_NONE;
}

/* rest = prefix "/" rest. */
static int prepend(char *rest, const char *prefix)
{
	size_t p = strlen(prefix), r = strlen(rest);

	if (p + 1 + r + 1 > PATH_MAX)
		return -ENAMETOOLONG;
	memmove(rest + p + 1, rest, r + 1);
	memcpy(rest, prefix, p);
	rest[p] = '/';
	return 0;
}

static int join(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PATH_MAX, "%s%s%s", a, *b ? "/" : "", b);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Takes the next component off rest into name; false at the end. */
static bool next_name(char *rest, char name[NAME_MAX + 1], bool *last)
{
	char *p = rest, *e;
	size_t n;

	while (*p == '/')
		p++;
	if (!*p)
		return false;
	e = strchrnul(p, '/');
	n = (size_t)(e - p);
	if (n > NAME_MAX)
		n = NAME_MAX;	/* the kernel's ENAMETOOLONG comes later */
	memcpy(name, p, n);
	name[n] = 0;
	memmove(rest, e, strlen(e) + 1);
	for (p = rest; *p == '/'; p++)
		;
	*last = !*p;
	return true;
}

/* Follows the symlink at canon (found at where) onto rest. 1: go on
 * with canon's parent; 0: the target leaves /sys (w->real set). */
static int follow(struct sys_ov_walk *w, const char *parent,
		  const char *tree, enum sys_ov_where where, char *rest)
{
	char target[PATH_MAX];
	long n;
	int ret;

	n = sim_sys6(SYS_readlinkat, AT_FDCWD,
		     (long)(where == SYS_OV_TREE ? tree : w->canon),
		     (long)target, PATH_MAX - 1, 0, 0);
	if (n < 0)
		return (int)n;
	target[n] = 0;
	if (target[0] != '/') {
		strcpy(w->canon, parent);
		return prepend(rest, target) ?: 1;
	}
	if (!path_in(target, SYS_DIR, SYS_LEN)) {
		w->where = SYS_OV_OUTSIDE;
		return join(w->real, target, rest) ?: 0;
	}
	strcpy(w->canon, SYS_DIR);
	ret = prepend(rest, target + SYS_LEN);
	return ret ?: 1;
}

/* The walk from /sys along rest (an absolute path's part after /sys). */
static int walk(char *rest, bool nofollow, bool slash, struct sys_ov_walk *w)
{
	char name[NAME_MAX + 1], parent[PATH_MAX], tree[PATH_MAX];
	enum sys_ov_where where = SYS_OV_MERGED;
	struct stat st;
	int hops = 0, ret;
	bool last;

	strcpy(w->canon, SYS_DIR);
	while (next_name(rest, name, &last)) {
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			*strrchr(w->canon, '/') = 0;
			if (strlen(w->canon) < SYS_LEN) {
				w->where = SYS_OV_OUTSIDE;
				return join(w->real, w->canon[0] ? w->canon :
					    "/", rest) ?: 1;
			}
			where = classify(w->canon, &st, tree);
			continue;
		}
		strcpy(parent, w->canon);
		if (strlen(parent) + 1 + strlen(name) >= PATH_MAX)
			return -ENAMETOOLONG;
		strcat(strcat(w->canon, "/"), name);
		ret = classify(w->canon, &st, tree);
		if (ret == SYS_OV_NONE) {
			/* Where the parent is, the kernel says what is not. */
			ret = where == SYS_OV_TREE ?
			      tree_name(w->canon, parent, PATH_MAX) :
			      join(parent, w->canon, "");
			w->where = SYS_OV_NONE;
			ret = ret ?: join(w->real, parent, rest + (*rest == '/'));
			return ret ?: 1;
		}
		where = ret;
		if (S_ISLNK(st.st_mode) && (!last || !nofollow || slash)) {
			if (++hops > MAX_HOPS)
				return -ELOOP;
			ret = follow(w, parent, tree, where, rest);
			if (ret <= 0)
				return ret ?: 1;
			where = classify(w->canon, &st, tree);
		}
	}
	w->where = where;
	ret = where == SYS_OV_TREE ? tree_name(w->canon, w->real, PATH_MAX) :
	      join(w->real, w->canon, "");
	if (!ret && slash && strlen(w->real) + 1 < PATH_MAX)
		strcat(w->real, "/");
	return ret ?: 1;
}

static int cwd_canon(char out[PATH_MAX])
{
	long n = sim_sys(SYS_getcwd, out, PATH_MAX, 0);

	if (n < 0)
		return (int)n;
	sys_ov_tree_to_canon(out, PATH_MAX);
	return path_in(out, SYS_DIR, SYS_LEN) ? 1 : 0;
}

/* The absolute /sys path (dirfd, path) names, if it names one. */
static int absolute(int dirfd, const char *path, char out[PATH_MAX])
{
	char base[PATH_MAX];
	int ret;

	if (path[0] == '/') {
		if (!path_in(path, SYS_DIR, SYS_LEN))
			return 0;
		return join(out, path, "") ?: 1;
	}
	if (dirfd == AT_FDCWD) {
		if (!atomic_load_explicit(&sys_ov_cwd_under_sys,
					  memory_order_relaxed))
			return 0;
		ret = cwd_canon(base);
		if (ret <= 0)
			return ret;
	} else if (sys_ov_fd_canon(dirfd, base) == SYS_OV_OUTSIDE) {
		return 0;
	}
	return join(out, base, path) ?: 1;
}

int sys_ov_resolve(int dirfd, const char *path, bool nofollow,
		   struct sys_ov_walk *w)
{
	char rest[PATH_MAX];
	size_t len;
	int ret;

	if (!path || !path[0] || !tree_ready())
		return 0;
	/* The cheap test first: this runs on every open of the process. */
	if (path[0] == '/' && strncmp(path, SYS_DIR, SYS_LEN))
		return 0;
	sim_identity_check();	/* a forked child's own tree */
	ret = absolute(dirfd, path, rest);
	if (ret <= 0)
		return ret;
	len = strlen(rest);
	memmove(rest, rest + SYS_LEN, len - SYS_LEN + 1);
	return walk(rest, nofollow, len > 1 && path[strlen(path) - 1] == '/',
		    w);
}

const char *sys_ov_path(int dirfd, const char *path, bool nofollow,
			struct sys_ov_walk *w)
{
	int ret = sys_ov_resolve(dirfd, path, nofollow, w);

	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	return ret ? w->real : path;
}

enum sys_ov_where sys_ov_fd_canon(int fd, char canon[PATH_MAX])
{
	char proc[32];
	long n;

	if (fd < 0 || !tree_ready())
		return SYS_OV_OUTSIDE;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = sim_sys6(SYS_readlinkat, AT_FDCWD, (long)proc, (long)canon,
		     PATH_MAX - 1, 0, 0);
	if (n <= 0)
		return SYS_OV_OUTSIDE;
	canon[n] = 0;
	if (path_in(canon, SYS_DIR, SYS_LEN))
		return SYS_OV_HOST;
	sys_ov_tree_to_canon(canon, PATH_MAX);
	return path_in(canon, SYS_DIR, SYS_LEN) ? SYS_OV_TREE :
						   SYS_OV_OUTSIDE;
}

bool sys_ov_tree_dir(const char *canon, char tree[PATH_MAX])
{
	struct stat st;

	return tree_ready() && path_in(canon, SYS_DIR, SYS_LEN) &&
	       !tree_name(canon, tree, PATH_MAX) &&
	       !sim_sys6(SYS_newfstatat, AT_FDCWD, (long)tree, (long)&st, 0,
			 0, 0) && S_ISDIR(st.st_mode);
}

/* The length of the tree prefix of path: this process's tree or another
 * one of the rundir (a parent's, whose directories a child inherits). */
static size_t tree_prefix(const char *path)
{
	const char *rundir = sim_global.rundir, *p;
	size_t n = strlen(rundir);

	if (!n || strncmp(path, rundir, n) || strncmp(path + n, "/sysfs-", 7))
		return 0;
	for (p = path + n + 7; *p >= '0' && *p <= '9'; p++)
		;
	return p > path + n + 7 && (*p == '/' || !*p) ? (size_t)(p - path) : 0;
}

void sys_ov_tree_to_canon(char *path, size_t len)
{
	size_t n;

	if (!tree_ready() || !(n = tree_prefix(path)) ||
	    strlen(path) - n + SYS_LEN >= len)
		return;
	memmove(path + SYS_LEN, path + n, strlen(path + n) + 1);
	memcpy(path, SYS_DIR, SYS_LEN);
}

void sys_ov_cwd_changed(void)
{
	char cwd[PATH_MAX];

	atomic_store(&sys_ov_cwd_under_sys,
		     tree_ready() && cwd_canon(cwd) == 1);
}

void sys_ov_tree_written(void)
{
	atomic_store(&sys_ov_ready, tree_ready());
	sys_ov_cwd_changed();
}
