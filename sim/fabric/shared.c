// SPDX-License-Identifier: BSD-2-Clause
/*
 * The same-host segment (see shared.h for the model): the owner's side,
 * which makes it at its first use and removes it at exit, and the side of
 * the others, which map a peer's segment once per link and check that it
 * belongs to the live process it names.
 *
 * The segment is a sealed memory file (F_SEAL_SHRINK | F_SEAL_GROW) that
 * its owner keeps open as one of the sim's own descriptors; the run
 * directory holds only a descriptor of it (its pid and fd number, beside
 * the adapter's socket), which a requester reads and then takes the file
 * with pidfd_getfd: the ptrace access check process_vm_writev makes too.
 * No process can shrink the file under a requester's mapping (a regular
 * file in the run directory could be truncated by any program of the
 * user, and the requester would fault inside the sim), and a descriptor
 * file that is damaged, stale or names anything but a sealed segment of
 * the live process it names only costs the fast path: the peer is not
 * reached through a segment.
 *
 * These files are reached through system calls, never through the
 * application's interposed libc.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"
#include "fds.h"
#include "shared.h"
#include "shared_layout.h"
#include "sys.h"

_Static_assert(sizeof(struct shared_seg) <= SHARED_AREA_OFF,
	       "the header and copy slots end before the area");

/* ---- the process's start time: a pid and a start time name a process */

static uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	long fd, n;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = sim_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = sim_sys(SYS_read, fd, buf, sizeof(buf) - 1);
	sim_sys(SYS_close, fd, 0, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* The name may hold anything: fields count from its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* ") state" is field 3; starttime is field 22. */
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

static void seg_path(char *buf, size_t len, pid_t pid, unsigned int index)
{
	snprintf(buf, len, "%s/fabric-%d-%u.mem", sim_global.rundir, (int)pid,
		 index);
}

/* ---- the owner ---- */

struct own_seg {
	struct shared_seg *seg;
	size_t size;			/* mapped */
	pid_t pid;			/* the process that made it */
	int fd;				/* the sim's, while fd_kept */
	bool fd_kept;
	char path[300];
};

static struct own_seg own[SIM_MAX_ADAPTERS];
static pthread_once_t own_exit_once = PTHREAD_ONCE_INIT;

static void own_at_exit(void)
{
	unsigned int i;

	for (i = 0; i < SIM_MAX_ADAPTERS; i++)
		if (own[i].seg && own[i].pid == sim_self_pid())
			unlink(own[i].path);
}

static void own_exit_register(void)
{
	atexit(own_at_exit);
}

/* A new segment's memory file, sealed at size, mapped at *seg; the
 * sim's descriptor of it, or -1. */
static int seg_create(struct shared_seg **seg, size_t size)
{
	long fd = sim_sys(SYS_memfd_create, "pvrdma-segment",
			  MFD_CLOEXEC | MFD_ALLOW_SEALING, 0);
	void *view;

	if (fd < 0)
		return -1;
	if (sim_sys(SYS_ftruncate, fd, size, 0) ||
	    sim_sys(SYS_fcntl, fd, F_ADD_SEALS,
		    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto err;
	view = sim_sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    (int)fd, 0);
	if (view == MAP_FAILED)
		goto err;
	fd = sim_fd_own((int)fd);
	*seg = view;
	return (int)fd;
err:
	sim_sys(SYS_close, fd, 0, 0);
	return -1;
}

/* Names the segment in the run directory: "<pid> <fd>", replaced whole. */
static bool seg_describe(const struct own_seg *o)
{
	char tmp[320], text[32];
	long fd;
	int n;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o->path) >= (int)sizeof(tmp))
		return false;
	n = snprintf(text, sizeof(text), "%d %d\n", (int)o->pid, o->fd);
	fd = sim_sys6(SYS_openat, AT_FDCWD, (long)tmp,
		      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600, 0, 0);
	if (fd < 0)
		return false;
	if (sim_sys(SYS_write, fd, text, n) != n) {
		sim_sys(SYS_close, fd, 0, 0);
		unlink(tmp);
		return false;
	}
	sim_sys(SYS_close, fd, 0, 0);
	if (sim_sys(SYS_rename, tmp, o->path, 0)) {
		unlink(tmp);
		return false;
	}
	return true;
}

/* The segment of the adapter in this process, made at its first use (the
 * adapter's lock held). A forked child makes its own: its parent's is not
 * its, and the child lets go of the parent's mapping and descriptor. */
struct shared_seg *shared_own(unsigned int adapter,
			      const struct shared_area *area)
{
	struct own_seg *o;
	struct shared_seg *seg = NULL;
	pthread_mutexattr_t a;
	pid_t pid = sim_self_pid();

	if (adapter >= SIM_MAX_ADAPTERS || !sim_global.rundir[0])
		return NULL;
	o = &own[adapter];
	if (o->pid == pid)
		return o->seg;
	if (o->seg)
		sim_sys_munmap(o->seg, o->size);
	if (o->fd_kept)
		sim_fd_close(o->fd);
	o->pid = pid;
	o->seg = NULL;
	o->fd_kept = false;
	seg_path(o->path, sizeof(o->path), pid, adapter);
	o->size = SHARED_AREA_OFF + area->len;
	o->fd = seg_create(&seg, o->size);
	if (o->fd < 0)
		return NULL;
	o->fd_kept = true;
	o->seg = seg;
	seg->version = SHM_VERSION;
	seg->area_len = area->len;
	seg->area_version = area->version;
	seg->pid = pid;
	seg->start_time = proc_start_time(pid);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	/* The owner changes what the lock guards from inside the lock
	 * it holds already: it nests. */
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&seg->lock, &a);
	pthread_mutexattr_destroy(&a);
	atomic_store_explicit(&seg->magic, SHM_MAGIC, memory_order_release);
	pthread_once(&own_exit_once, own_exit_register);
	/* Not found, its peers do without it. */
	if (!seg_describe(o))
		fprintf(stderr, "pvrdma-sim: cannot publish %s: %s\n",
			o->path, strerror(errno));
	return seg;
}

struct shared_seg *shared_own_made(unsigned int adapter)
{
	if (adapter >= SIM_MAX_ADAPTERS || own[adapter].pid != sim_self_pid())
		return NULL;
	return own[adapter].seg;
}

bool shared_lock(struct shared_seg *seg)
{
	int r = pthread_mutex_lock(&seg->lock);

	/* A process died holding it: what it guards is the layer above's
	 * to keep whole (each update one entry). */
	if (r == EOWNERDEAD)
		r = pthread_mutex_consistent(&seg->lock);
	return r == 0;
}

/* A busy target lock is waited for a little, never for good: its holder
 * may be a process that was stopped with it. */
#define SHM_TRY_SPINS	4096u
#define SHM_TRY_YIELDS	64u

bool shared_trylock(struct shared_seg *seg)
{
	unsigned int spins, yields;
	int r;

	for (yields = 0; yields < SHM_TRY_YIELDS; yields++) {
		for (spins = 0; spins < SHM_TRY_SPINS; spins++) {
			r = pthread_mutex_trylock(&seg->lock);
			if (r == EOWNERDEAD)
				r = pthread_mutex_consistent(&seg->lock);
			if (r != EBUSY)
				return r == 0;
			__builtin_ia32_pause();
		}
		sched_yield();
	}
	return false;
}

void shared_unlock(struct shared_seg *seg)
{
	pthread_mutex_unlock(&seg->lock);
}

/* ---- a requester ---- */

/* The descriptor file of a peer's segment: its pid and fd number. */
static bool peer_describe(const char *path, pid_t *pid, int *fd)
{
	char text[32], end;
	long f, n;
	int p;

	f = sim_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	n = sim_sys(SYS_read, f, text, sizeof(text) - 1);
	sim_sys(SYS_close, f, 0, 0);
	if (n <= 0)
		return false;
	text[n] = 0;
	if (sscanf(text, "%d %d%c", &p, fd, &end) != 3 || end != '\n' ||
	    p <= 0 || *fd < 0)
		return false;
	*pid = p;
	return true;
}

/* A copy of fd of process pid, if it is a memory file sealed against
 * shrinking and long enough for a header; else -1. *size: its size. */
static long peer_segment_file(pid_t pid, int fd, size_t *size)
{
	long pidfd, copy, seals;
	struct stat st;

	pidfd = sim_sys(SYS_pidfd_open, pid, 0, 0);
	if (pidfd < 0)
		return -1;
	copy = sim_sys(SYS_pidfd_getfd, pidfd, fd, 0);
	sim_sys(SYS_close, pidfd, 0, 0);
	if (copy < 0)
		return -1;
	seals = sim_sys(SYS_fcntl, copy, F_GET_SEALS, 0);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) ||
	    sim_sys(SYS_fstat, copy, &st, 0) ||
	    (uint64_t)st.st_size < SHARED_AREA_OFF) {
		sim_sys(SYS_close, copy, 0, 0);
		return -1;
	}
	*size = (size_t)st.st_size;
	return copy;
}

/* Maps the segment named by a peer's socket path (".sock" -> ".mem"),
 * with the area its owner laid out. */
static struct shared_seg *peer_map(const char *sock_path)
{
	size_t n = strlen(sock_path), size;
	char path[320];
	struct shared_seg *seg;
	pid_t pid;
	long fd;
	int remote_fd;

	if (n < 5 || n + 1 > sizeof(path) ||
	    strcmp(sock_path + n - 5, ".sock"))
		return NULL;
	memcpy(path, sock_path, n - 5);
	strcpy(path + n - 5, ".mem");
	if (!peer_describe(path, &pid, &remote_fd))
		return NULL;
	fd = peer_segment_file(pid, remote_fd, &size);
	if (fd < 0)
		return NULL;
	seg = sim_sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   (int)fd, 0);
	sim_sys(SYS_close, fd, 0, 0);
	if (seg == MAP_FAILED)
		return NULL;
	/* A segment not finished yet, of another layout, of another process
	 * than the descriptor names (the number reused for another file),
	 * or of a process that is gone (its pid maybe someone else's now). */
	if (atomic_load_explicit(&seg->magic, memory_order_acquire) !=
	    SHM_MAGIC || seg->version != SHM_VERSION ||
	    seg->area_len > size - SHARED_AREA_OFF || seg->pid != pid ||
	    !seg->start_time || proc_start_time(seg->pid) != seg->start_time) {
		sim_sys_munmap(seg, size);
		return NULL;
	}
	return seg;
}

/* The peer's area is of the layout asked for (NULL: any). */
static bool area_fits(const struct shared_seg *seg,
		      const struct shared_area *area)
{
	return !area || (seg->area_len == area->len &&
			 seg->area_version == area->version);
}

struct shared_seg *shared_peer(struct fab_link *link,
			       const struct shared_area *area)
{
	void **slot = fabric_link_shared_slot(link);
	struct peer_seg *p;
	const char *path;

	if (!slot)
		return NULL;
	p = *slot;
	if (p && p->seg)
		return area_fits(p->seg, area) ? p->seg : NULL;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		*slot = p;
	} else if (++p->misses % SHM_RETRY_EVERY) {
		return NULL;
	}
	path = fabric_link_peer_path(link);
	if (path && path[0])
		p->seg = peer_map(path);
	return p->seg && area_fits(p->seg, area) ? p->seg : NULL;
}

pid_t shared_pid(const struct shared_seg *seg)
{
	return seg->pid;
}
