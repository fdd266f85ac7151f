// SPDX-License-Identifier: BSD-2-Clause
/*
 * Memory shared with the device: the ring buffers of QPs, CQs and SRQs
 * and the inline bounce slots. Under a parent domain with allocators the
 * application provides it (it may answer IBV_ALLOCATOR_USE_DEFAULT).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/pvrdmadv.h>

#include "pvrdma.h"

_Static_assert(PVRDMADV_RES_TYPE_CQ >> 32 == RDMA_DRIVER_VMW_PVRDMA,
	       "pvrdmadv resource types carry the driver id");

/* Page-aligned, zeroed, and kept out of fork()ed children (the device
 * keeps writing into it). */
void *pvrdma_alloc_ring_buf(size_t size)
{
	void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (buf == MAP_FAILED)
		return NULL;
	ret = ibv_dontfork_range(buf, size);
	if (ret) {
		munmap(buf, size);
		errno = ret;
		return NULL;
	}
	return buf;
}

void pvrdma_free_ring_buf(void *buf, size_t size)
{
	ibv_dofork_range(buf, size);
	munmap(buf, size);
}

/* Returns 0 or an errno; buf is zeroed memory of size bytes. */
int pvrdma_buf_alloc(struct pvrdma_buf *buf, struct pvrdma_pd *pd,
		     size_t size, size_t align, uint64_t resource_type)
{
	buf->size = size;
	buf->custom = NULL;
	buf->resource_type = resource_type;
	if (pd && pd->alloc && pd->free) {
		void *p = pd->alloc(&pd->ibv_pd, pd->pd_context, size, align,
				    resource_type);

		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			int ret;

			if (!p || ((uintptr_t)p & (align - 1))) {
				if (p)
					pd->free(&pd->ibv_pd, pd->pd_context,
						 p, resource_type);
				return ENOMEM;
			}
			ret = ibv_dontfork_range(p, size);
			if (ret) {
				pd->free(&pd->ibv_pd, pd->pd_context, p,
					 resource_type);
				return ret;
			}
			memset(p, 0, size);
			buf->addr = p;
			buf->custom = pd;
			/* its free() is called at destroy: keep it alive */
			__atomic_add_fetch(&pd->refs, 1, __ATOMIC_ACQ_REL);
			return 0;
		}
	}
	buf->addr = pvrdma_alloc_ring_buf(size);
	return buf->addr ? 0 : (errno ? errno : ENOMEM);
}

void pvrdma_buf_free(struct pvrdma_buf *buf)
{
	if (!buf->addr)
		return;
	if (buf->custom) {
		ibv_dofork_range(buf->addr, buf->size);
		buf->custom->free(&buf->custom->ibv_pd,
				  buf->custom->pd_context, buf->addr,
				  buf->resource_type);
		__atomic_sub_fetch(&buf->custom->refs, 1, __ATOMIC_ACQ_REL);
	} else {
		pvrdma_free_ring_buf(buf->addr, buf->size);
	}
	buf->addr = NULL;
}
