// SPDX-License-Identifier: BSD-2-Clause
/*
 * sysfs at its real paths, the calls that walk trees (sys_overlay.h):
 * libc's nftw/ftw and glob read directories with internal calls the
 * preload library cannot see, so a walk or a pattern under /sys is made
 * here over the interposed stat, opendir and readdir; anything else is
 * libc's. FTW_CHDIR is not honoured under /sys (paths stay absolute).
 */
#include "preload.h"

#include "sys_overlay.h"

struct dir_id {
	dev_t dev;
	ino_t ino;
};

struct tree_walk {
	__nftw_func_t nfn;
	__ftw_func_t fn;		/* ftw(): the three-argument callback */
	int flags;
	char path[PATH_MAX];
	struct dir_id *seen;		/* every directory visited, as glibc */
	size_t nseen, cap;
};

static int seen_add(struct tree_walk *t, const struct stat *st)
{
	struct dir_id *grown;
	size_t i;

	for (i = 0; i < t->nseen; i++)
		if (t->seen[i].dev == st->st_dev &&
		    t->seen[i].ino == st->st_ino)
			return 1;
	if (t->nseen == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		grown = realloc(t->seen, t->cap * sizeof(*grown));
		if (!grown)
			return -1;
		t->seen = grown;
	}
	t->seen[t->nseen++] = (struct dir_id){ st->st_dev, st->st_ino };
	return 0;
}

static int call(struct tree_walk *t, const struct stat *st, int type,
		int base, int level)
{
	struct FTW f = { .base = base, .level = level };

	if (t->fn)
		return t->fn(t->path, st,
			     type == FTW_SL || type == FTW_SLN ? FTW_NS : type);
	return t->nfn(t->path, st, type, &f);
}

/* The value that ends the walk (0 goes on) of a callback's ret. */
static int stops(const struct tree_walk *t, int ret)
{
	if (!(t->flags & FTW_ACTIONRETVAL))
		return ret;
	return ret == FTW_STOP ? ret : 0;
}

static int visit(struct tree_walk *t, size_t len, int base, int level);

/* The entries of the directory at t->path (len long). */
static int visit_children(struct tree_walk *t, size_t len, int level)
{
	struct dirent *e;
	DIR *d = opendir(t->path);
	int ret = 0;

	if (!d)
		return -2;
	while (!ret && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (len + 1 + n >= PATH_MAX)
			continue;
		t->path[len] = '/';
		memcpy(t->path + len + 1, e->d_name, n + 1);
		ret = visit(t, len + 1 + n, (int)len + 1, level + 1);
		t->path[len] = 0;
		if ((t->flags & FTW_ACTIONRETVAL) && ret == FTW_SKIP_SIBLINGS)
			ret = 0, e = NULL;
		if (!e)
			break;
	}
	closedir(d);
	return ret;
}

static int visit_dir(struct tree_walk *t, const struct stat *st, size_t len,
		     int base, int level)
{
	int ret = 0, kids;

	if (seen_add(t, st))
		return 0;
	if (!(t->flags & FTW_DEPTH)) {
		ret = call(t, st, FTW_D, base, level);
		if ((t->flags & FTW_ACTIONRETVAL) &&
		    (ret == FTW_SKIP_SUBTREE || ret == FTW_SKIP_SIBLINGS))
			return ret == FTW_SKIP_SIBLINGS ? ret : 0;
		if ((ret = stops(t, ret)))
			return ret;
	}
	kids = visit_children(t, len, level);
	if (kids == -2)
		return (t->flags & FTW_DEPTH) ? call(t, st, FTW_DNR, base, level)
					      : 0;
	if (kids)
		return kids;
	if (t->flags & FTW_DEPTH)
		return stops(t, call(t, st, FTW_DP, base, level));
	return 0;
}

static int visit(struct tree_walk *t, size_t len, int base, int level)
{
	bool phys = t->flags & FTW_PHYS;
	struct stat st;
	int type;

	if ((phys ? lstat : stat)(t->path, &st)) {
		type = !phys && !lstat(t->path, &st) ? FTW_SLN : FTW_NS;
		return stops(t, call(t, &st, type, base, level));
	}
	if (S_ISDIR(st.st_mode))
		return visit_dir(t, &st, len, base, level);
	type = S_ISLNK(st.st_mode) ? FTW_SL : FTW_F;
	return stops(t, call(t, &st, type, base, level));
}

static int walk_tree(struct tree_walk *t, const char *path)
{
	size_t len = strlen(path);
	const char *slash;
	int ret;

	if (len >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(t->path, path, len + 1);
	while (len > 1 && t->path[len - 1] == '/')
		t->path[--len] = 0;
	slash = strrchr(t->path, '/');
	ret = visit(t, len, slash ? (int)(slash - t->path) + 1 : 0, 0);
	free(t->seen);
	return ret == -2 ? -1 : ret;
}

int nftw(const char *path, __nftw_func_t fn, int nopenfd, int flags)
{
	struct tree_walk t = { .nfn = fn, .flags = flags };

	if (!sys_ov_maybe(AT_FDCWD, path))
		return get_nftw()(path, fn, nopenfd, flags);
	return walk_tree(&t, path);
}

int nftw64(const char *path, __nftw64_func_t fn, int nopenfd, int flags)
{
	return nftw(path, (__nftw_func_t)fn, nopenfd, flags);
}

int ftw(const char *path, __ftw_func_t fn, int nopenfd)
{
	struct tree_walk t = { .fn = fn };

	if (!sys_ov_maybe(AT_FDCWD, path))
		return get_ftw()(path, fn, nopenfd);
	return walk_tree(&t, path);
}

int ftw64(const char *path, __ftw64_func_t fn, int nopenfd)
{
	return ftw(path, (__ftw_func_t)fn, nopenfd);
}

static void *glob_opendir(const char *path)
{
	return opendir(path);
}

static struct dirent *glob_readdir(void *d)
{
	return readdir(d);
}

static void glob_closedir(void *d)
{
	closedir(d);
}

/* A pattern under /sys: libc's glob over the interposed directory calls. */
int glob(const char *pattern, int flags, int (*errfunc)(const char *, int),
	 glob_t *g)
{
	if (!sys_ov_maybe(AT_FDCWD, pattern) || (flags & GLOB_ALTDIRFUNC))
		return get_glob()(pattern, flags, errfunc, g);
	g->gl_opendir = glob_opendir;
	g->gl_readdir = glob_readdir;
	g->gl_closedir = glob_closedir;
	g->gl_stat = stat;
	g->gl_lstat = lstat;
	return get_glob()(pattern, flags | GLOB_ALTDIRFUNC, errfunc, g);
}

/* glob64_t is glob_t on x86-64. */
int glob64(const char *pattern, int flags,
	   int (*errfunc)(const char *, int), glob64_t *g)
{
	return glob(pattern, flags, errfunc, (glob_t *)g);
}
