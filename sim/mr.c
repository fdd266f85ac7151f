// SPDX-License-Identifier: BSD-2-Clause
/*
 * Memory protection checks of the device: every byte the device reads or
 * writes on behalf of a WQE or a remote request is first checked against
 * the memory region its key names (key, protection domain, bounds, access
 * rights), as an HCA does against its MPT.
 */
#include "sim.h"

/*
 * Keys are looked up by scanning the MR table; a small direct-mapped cache
 * of key -> handle per adapter makes the common case one probe. The cache
 * holds handles, not pointers, and every hit is re-validated through the
 * table, so a deregistered MR can never be returned. Callers hold dev->lock.
 */
#define MR_CACHE_SIZE	256u

struct mr_cache_entry {
	uint32_t key;
	uint32_t handle;
	bool valid;
};

static struct mr_cache_entry mr_cache[SIM_MAX_ADAPTERS][2][MR_CACHE_SIZE];

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

/*
 * Checks that [addr, addr + len) may be accessed through key: addr is a
 * process virtual address for a local key (lkey), the MR's I/O virtual
 * address for a remote key (rkey). need_access holds the IBV_ACCESS_* bits
 * the access requires (0: local read, always allowed). On success
 * *host_ptr is where the bytes are in this process (NULL for len 0, which
 * IB lets through without checking the key).
 */
enum sim_access_result sim_mr_check(struct sim_dev *dev, struct sim_pd *pd,
				    uint32_t key, bool remote, uint64_t addr,
				    uint64_t len, int need_access,
				    uint8_t **host_ptr)
{
	struct sim_mr *mr;
	uint64_t base, off;

	*host_ptr = NULL;
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

	*host_ptr = (uint8_t *)(uintptr_t)(mr->addr + off);
	return SIM_ACCESS_OK;
}
