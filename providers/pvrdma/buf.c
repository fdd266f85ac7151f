// SPDX-License-Identifier: BSD-2-Clause
/* Memory shared with the device: the ring buffers of QPs, CQs and SRQs. */
#include <errno.h>
#include <sys/mman.h>

#include "pvrdma.h"

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
