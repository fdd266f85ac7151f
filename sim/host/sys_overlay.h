/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sysfs at its real paths (sys_overlay.c): the sim's tree (sysfs.c) laid
 * over the host's /sys. A path under /sys is walked a component at a time
 * and its symlinks followed as the kernel follows them; at each step the
 * tree's entry wins over the host's, and a directory both have is the
 * host's, listed with the tree's names added (sys_dirs.c). Only the
 * preload library includes this.
 */
#ifndef PVRDMA_SIM_SYS_OVERLAY_H
#define PVRDMA_SIM_SYS_OVERLAY_H

#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

enum sys_ov_where {
	SYS_OV_OUTSIDE,		/* not under /sys: real is the path itself */
	SYS_OV_HOST,		/* the host's alone */
	SYS_OV_TREE,		/* the tree's (wins over the host's) */
	SYS_OV_MERGED,		/* a directory both have: the host's */
	SYS_OV_NONE,		/* neither has it: real gives the errno */
};

struct sys_ov_walk {
	char real[PATH_MAX];	/* what to hand the kernel (absolute) */
	char canon[PATH_MAX];	/* the path as /sys names it, no symlinks */
	enum sys_ov_where where;
};

extern _Atomic bool sys_ov_cwd_under_sys;
extern _Atomic bool sys_ov_ready;

/* Whether (dirfd, path) may name something under /sys: the cheap test
 * every open and stat of the process makes. */
static inline bool sys_ov_maybe(int dirfd, const char *path)
{
	if (!path || !atomic_load_explicit(&sys_ov_ready, memory_order_relaxed))
		return false;
	if (path[0] == '/')
		return !strncmp(path, "/sys", 4) && (path[4] == '/' || !path[4]);
	if (!path[0])
		return false;
	return dirfd != AT_FDCWD ||
	       atomic_load_explicit(&sys_ov_cwd_under_sys,
				    memory_order_relaxed);
}

/* openat() of (dirfd, path) under /sys: the tree's file or the host's. */
int sys_ov_open(int dirfd, const char *path, int flags, mode_t mode);

/*
 * Resolves (dirfd, path) as openat() would (nofollow: the last component
 * as O_NOFOLLOW/lstat). 0: not a path of /sys (nothing in w); 1: w says
 * where it is; a negative errno (ELOOP, ENAMETOOLONG).
 */
int sys_ov_resolve(int dirfd, const char *path, bool nofollow,
		   struct sys_ov_walk *w);

/*
 * The path to hand libc for (dirfd, path): path itself when it is not
 * under /sys, else w->real (absolute, so dirfd no longer matters). NULL
 * with errno set when the walk fails.
 */
const char *sys_ov_path(int dirfd, const char *path, bool nofollow,
			struct sys_ov_walk *w);

/* The /sys name of what fd is open on: SYS_OV_HOST if it is in the
 * host's sysfs, SYS_OV_TREE if in the tree, else SYS_OV_OUTSIDE. */
enum sys_ov_where sys_ov_fd_canon(int fd, char canon[PATH_MAX]);

/* The tree's directory at canonical path canon, if it has one. */
bool sys_ov_tree_dir(const char *canon, char tree[PATH_MAX]);

/* A path inside the tree, renamed to its /sys name in place. */
void sys_ov_tree_to_canon(char *path, size_t len);

/* After a change of working directory: whether relative paths may now
 * name something under /sys. */
void sys_ov_cwd_changed(void);
/* Once the tree is written (or written anew in a forked child). */
void sys_ov_tree_written(void);

#endif /* PVRDMA_SIM_SYS_OVERLAY_H */
