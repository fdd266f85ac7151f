// SPDX-License-Identifier: BSD-2-Clause
/*
 * Registered memory as the device sees it.
 *
 * Protection: every byte the device reads or writes on behalf of a WQE or
 * a remote request is first checked against the memory region its key
 * names (key, protection domain, bounds, access rights), as an HCA does
 * against its MPT.
 *
 * Pinning: the kernel pins the pages of an MR when it is registered
 * (ib_umem_get: the range must be mapped, and writable when an access
 * flag lets the device write), and the MR keeps those pages until it is
 * deregistered, whatever the application does with its mappings. The
 * kernel layer checks the range the same way at registration
 * (sim_mr_pin_check, kernel/pin.c), and when the application
 * is about to give up pages an MR covers (munmap, mmap MAP_FIXED over them,
 * mremap that moves or shrinks, madvise that frees them) the content of
 * those pages moves into device-owned storage, the MR's shadow: from then
 * on the MR's accesses to them go there, and the application's new mapping
 * at that address is never touched by the device. Pages the application
 * kept are still shared with it, as pinned pages are.
 *
 * Fast path: an MR whose pages the application never gave up has no
 * shadow, and a check yields one pointer into the application's memory,
 * as it did before pinning existed. Only an MR with a shadow is walked
 * page by page, and an access that spans kept and given-up pages becomes
 * several pieces.
 *
 * Everything here runs with dev->lock held, except the hook, which takes
 * each adapter's lock itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "device.h"
#include "sys.h"

/* A direct-mapped cache of key -> handle per adapter (dev->lock held): a
 * hit is re-validated through the table, so a deregistered MR is never
 * returned. */
#define MR_CACHE_SIZE	256u

struct mr_cache_entry {
	uint32_t key;
	uint32_t handle;
	bool valid;
};

static struct mr_cache_entry mr_cache[SIM_MAX_ADAPTERS][2][MR_CACHE_SIZE];

/* The pages of an MR the application gave up, kept by the device. */
struct sim_mr_shadow {
	uint64_t first;		/* address of the MR's first page */
	uint64_t npages;	/* pages the MR spans */
	uint8_t *mem;		/* npages pages, device-owned */
	uint64_t *given_up;	/* bitmap: page i lives in mem */
};

#define PAGE_MASK_U64	((uint64_t)SIM_PAGE_SIZE - 1)

static uint64_t page_down(uint64_t a)
{
	return a & ~PAGE_MASK_U64;
}

static uint64_t page_up(uint64_t a)
{
	return (a + PAGE_MASK_U64) & ~PAGE_MASK_U64;
}

static bool mr_has_key(const struct sim_mr *mr, uint32_t key, bool remote)
{
	return remote ? mr->rkey == key : mr->lkey == key;
}

static struct sim_mr *mr_lookup(struct sim_dev *dev, uint32_t key,
				bool remote)
{
	struct mr_cache_entry *ce = NULL;
	struct sim_mr *mr;
	uint32_t i;

	if (dev->index < SIM_MAX_ADAPTERS) {
		ce = &mr_cache[dev->index][remote][key % MR_CACHE_SIZE];
		if (ce->valid && ce->key == key) {
			mr = sim_table_get(&dev->mrs, ce->handle);
			if (mr && mr_has_key(mr, key, remote))
				return mr;
			ce->valid = false;
		}
	}
	for (i = 0; i < dev->mrs.size; i++) {
		mr = dev->mrs.slot[i];
		if (mr && mr_has_key(mr, key, remote)) {
			if (ce) {
				ce->key = key;
				ce->handle = i;
				ce->valid = true;
			}
			return mr;
		}
	}
	return NULL;
}

static bool shadow_has(const struct sim_mr_shadow *s, uint64_t page)
{
	return s->given_up[page / 64] & (1ull << (page % 64));
}

/*
 * Where [va, va + len) of mr is, as pieces: the application's memory for
 * pages it kept, the shadow for pages it gave up. Returns false when more
 * than max pieces would be needed.
 */
static bool mr_pieces(const struct sim_mr *mr, uint64_t va, uint64_t len,
		      struct iovec *iov, int max, int *n)
{
	const struct sim_mr_shadow *s = mr->shadow;
	uint64_t end = va + len, page, run_end;
	bool in_shadow;
	int k = 0;

	if (mr->pin_lost)
		return false;
	if (!s) {
		if (max < 1)
			return false;
		iov[0].iov_base = (void *)(uintptr_t)va;
		iov[0].iov_len = len;
		*n = 1;
		return true;
	}
	while (va < end) {
		page = (va - s->first) / SIM_PAGE_SIZE;
		in_shadow = shadow_has(s, page);
		run_end = s->first + (page + 1) * SIM_PAGE_SIZE;
		while (run_end < end &&
		       shadow_has(s, (run_end - s->first) / SIM_PAGE_SIZE) ==
		       in_shadow)
			run_end += SIM_PAGE_SIZE;
		if (run_end > end)
			run_end = end;
		if (k == max)
			return false;
		iov[k].iov_base = in_shadow ?
			(void *)(s->mem + (va - s->first)) :
			(void *)(uintptr_t)va;
		iov[k].iov_len = run_end - va;
		k++;
		va = run_end;
	}
	*n = k;
	return true;
}

/*
 * Checks that [addr, addr + len) may be accessed through key: a process
 * address for an lkey, the MR's I/O address for an rkey, with the
 * IBV_ACCESS_* bits need_access (0: local read). iov: where the bytes
 * are, in at most *iovcnt pieces (0 for len 0: IB checks no key then).
 */
enum sim_access_result sim_mr_map(struct sim_dev *dev, struct sim_pd *pd,
				  uint32_t key, bool remote, uint64_t addr,
				  uint64_t len, int need_access,
				  struct iovec *iov, int *iovcnt)
{
	struct sim_mr *mr;
	uint64_t base, off;
	int max = *iovcnt;

	*iovcnt = 0;
	if (len == 0)
		return SIM_ACCESS_OK;

	mr = mr_lookup(dev, key, remote);
	if (!mr || mr->pd != pd)
		return SIM_ACCESS_BAD_KEY;

	base = remote ? mr->iova : mr->addr;
	if (addr < base)
		return SIM_ACCESS_BAD_RANGE;
	off = addr - base;
	if (off > mr->length || len > mr->length - off)
		return SIM_ACCESS_BAD_RANGE;

	if ((mr->access & need_access) != need_access)
		return SIM_ACCESS_DENIED;

	if (!mr_pieces(mr, mr->addr + off, len, iov, max, iovcnt))
		return SIM_ACCESS_FAULT;
	return SIM_ACCESS_OK;
}

/* sim_mr_map() for an access the device makes through one pointer. */
enum sim_access_result sim_mr_check(struct sim_dev *dev, struct sim_pd *pd,
				    uint32_t key, bool remote, uint64_t addr,
				    uint64_t len, int need_access,
				    uint8_t **host_ptr)
{
	enum sim_access_result r;
	struct iovec iov;
	int n = 1;

	r = sim_mr_map(dev, pd, key, remote, addr, len, need_access, &iov,
		       &n);
	*host_ptr = r == SIM_ACCESS_OK && n ? iov.iov_base : NULL;
	return r;
}

/* ---- pinning ---- */

/* The span of every MR registered so far (it only grows), so that the
 * many unmaps that touch no registered memory return at once. */
static _Atomic uint64_t pinned_lo = UINT64_MAX;
static _Atomic uint64_t pinned_hi;
static atomic_ulong pinned_mrs;

void sim_mr_pin_track(struct sim_mr *mr)
{
	uint64_t lo = page_down(mr->addr), hi = page_up(mr->addr + mr->length);
	uint64_t cur;

	cur = atomic_load(&pinned_lo);
	while (lo < cur && !atomic_compare_exchange_weak(&pinned_lo, &cur, lo))
		;
	cur = atomic_load(&pinned_hi);
	while (hi > cur && !atomic_compare_exchange_weak(&pinned_hi, &cur, hi))
		;
	atomic_fetch_add(&pinned_mrs, 1);
}

/* The shadow is the device's memory: mapped and unmapped with the system
 * calls themselves, never through the application's hooks. */
static void shadow_unmap(void *mem, size_t len)
{
	sim_sys_munmap(mem, len);
}

void sim_mr_pin_release(struct sim_mr *mr)
{
	struct sim_mr_shadow *s = mr->shadow;

	atomic_fetch_sub(&pinned_mrs, 1);
	if (!s)
		return;
	if (s->mem)
		shadow_unmap(s->mem, s->npages * SIM_PAGE_SIZE);
	free(s->given_up);
	free(s);
	mr->shadow = NULL;
}

static bool app_pages_read(void *dst, uint64_t va, size_t len)
{
	struct iovec src = { .iov_base = (void *)(uintptr_t)va,
			     .iov_len = len };

	return sim_app_read(dst, &src, 1, len);
}

static struct sim_mr_shadow *shadow_get(struct sim_mr *mr)
{
	struct sim_mr_shadow *s = mr->shadow;
	void *mem;

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->first = page_down(mr->addr);
	s->npages = (page_up(mr->addr + mr->length) - s->first) /
		    SIM_PAGE_SIZE;
	s->given_up = calloc((s->npages + 63) / 64, sizeof(uint64_t));
	mem = sim_sys_mmap(NULL, s->npages * SIM_PAGE_SIZE,
			   PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!s->given_up || mem == MAP_FAILED) {
		if (mem != MAP_FAILED)
			shadow_unmap(mem, s->npages * SIM_PAGE_SIZE);
		free(s->given_up);
		free(s);
		return NULL;
	}
	s->mem = mem;
	mr->shadow = s;
	return s;
}

/* The application gives up [start, end) (whole pages inside the MR). */
static void mr_give_up(struct sim_mr *mr, uint64_t start, uint64_t end)
{
	struct sim_mr_shadow *s = shadow_get(mr);
	uint64_t page, first, last, va, run, off, total;

	if (!s) {
		/* Nowhere to keep the pages: the MR can no longer reach
		 * them, and must never reach the new mapping instead. */
		mr->pin_lost = true;
		return;
	}
	first = (start - s->first) / SIM_PAGE_SIZE;
	last = (end - s->first) / SIM_PAGE_SIZE;
	for (page = first; page < last; page += run) {
		run = 1;
		if (shadow_has(s, page))
			continue;
		while (page + run < last && !shadow_has(s, page + run))
			run++;
		va = s->first + page * SIM_PAGE_SIZE;
		total = run * SIM_PAGE_SIZE;
		/* The device's fault-safe read (dma.c). When part of the
		 * run cannot be read (already gone, PROT_NONE), the run
		 * goes page by page: such pages keep zeros. */
		if (!app_pages_read(s->mem + page * SIM_PAGE_SIZE, va, total))
			for (off = 0; off < total; off += SIM_PAGE_SIZE)
				app_pages_read(s->mem + page * SIM_PAGE_SIZE +
					       off, va + off, SIM_PAGE_SIZE);
		for (va = page; va < page + run; va++)
			s->given_up[va / 64] |= 1ull << (va % 64);
	}
}

void sim_mr_pin_give_up(const void *addr, size_t len)
{
	uint64_t start = page_down((uintptr_t)addr), end, ms, me;
	unsigned int i;
	uint32_t k;

	/* An unaligned address fails every one of those calls (EINVAL). */
	if (!len || ((uintptr_t)addr & PAGE_MASK_U64) ||
	    !atomic_load(&pinned_mrs))
		return;
	end = (uintptr_t)addr + len;
	if (end < (uintptr_t)addr)
		end = UINT64_MAX;
	end = page_up(end);
	if (!end)
		end = ~PAGE_MASK_U64;
	if (end <= atomic_load(&pinned_lo) || start >= atomic_load(&pinned_hi))
		return;
	for (i = 0; i < sim_global.num_adapters && i < SIM_MAX_ADAPTERS; i++) {
		struct sim_dev *dev = &sim_devs[i];

		/* EDEADLK: a handler interrupted this thread inside the
		 * device; nothing can be kept safely then. */
		if (pthread_mutex_lock(&dev->lock))
			continue;
		for (k = 0; k < dev->mrs.size; k++) {
			struct sim_mr *mr = dev->mrs.slot[k];

			if (!mr)
				continue;
			ms = page_down(mr->addr);
			me = page_up(mr->addr + mr->length);
			if (ms < start)
				ms = start;
			if (me > end)
				me = end;
			if (ms < me) {
				/* Same-host requesters stop writing to the
				 * pages before they are copied aside. */
				sim_mr_withdraw(dev, mr);
				mr_give_up(mr, ms, me);
			}
		}
		pthread_mutex_unlock(&dev->lock);
	}
}
