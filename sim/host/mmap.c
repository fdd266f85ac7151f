// SPDX-License-Identifier: BSD-2-Clause
/*
 * Mappings: the UAR page of a uverbs file (mmap/munmap/mremap), and the
 * calls that take pages from registered memory (munmap, mmap MAP_FIXED,
 * mremap, madvise), which keep them for the MR (sim_mr_pin_give_up). A
 * mapping of the uverbs file made behind the sim's back becomes a UAR at
 * its first store (the SIGBUS fixup). See preload.h.
 */
#include "preload.h"

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

/* An application thread may be inside an mmap or munmap of a UAR page,
 * holding the lock, while another forks. */
void uar_maps_fork_init(void)
{
	host_lock_fork_safe(&uar_maps_lock);
}

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

void *host_mmap(void *addr, size_t len, int prot, int flags, int fd,
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

int host_munmap(void *addr, size_t len)
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
void *host_mremap(void *old, size_t old_len, size_t new_len,
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

/* The mapping wrappers, and syscall()'s, land in host_mmap, host_munmap
 * and host_mremap. Calls that reach libc past the preload (UCX's hooks)
 * are not seen. */
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

int host_madvise(void *addr, size_t len, int advice)
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

bool uar_bus_fixup(void *addr)
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
