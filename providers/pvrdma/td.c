// SPDX-License-Identifier: BSD-2-Clause
/*
 * Thread domains and parent domains.
 *
 * A thread domain is the application's promise that the objects created
 * under it are used by one thread at a time; this device has no per-thread
 * doorbell pages to hand out, so what it buys here is the locks: QPs, CQs
 * and SRQs created under a parent domain with a thread domain take none.
 * A parent domain wraps a PD (commands see the PD's handle), adds the
 * thread domain and optional allocators for the ring buffers.
 */
#include <errno.h>
#include <stdlib.h>

#include "pvrdma.h"

struct ibv_td *pvrdma_alloc_td(struct ibv_context *context,
			       struct ibv_td_init_attr *attr)
{
	struct pvrdma_td *td;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibv_td.context = context;
	return &td->ibv_td;
}

int pvrdma_dealloc_td(struct ibv_td *ibtd)
{
	struct pvrdma_td *td = to_ptd(ibtd);

	if (__atomic_load_n(&td->refs, __ATOMIC_ACQUIRE))
		return EBUSY;
	free(td);
	return 0;
}

#define PVRDMA_PARENT_DOMAIN_MASK (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | \
				   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

struct ibv_pd *pvrdma_alloc_parent_domain(
	struct ibv_context *context, struct ibv_parent_domain_init_attr *attr)
{
	struct pvrdma_pd *pd, *prot;

	if (!attr || !attr->pd || attr->pd->context != context ||
	    (attr->td && attr->td->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~PVRDMA_PARENT_DOMAIN_MASK) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	prot = to_ppd(attr->pd);
	if (prot->protection) {
		errno = EINVAL;		/* a parent domain of a parent domain */
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc != !attr->free)) {
		errno = EINVAL;		/* both or neither */
		return NULL;
	}

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	/* What commands read of a PD: the kernel never hears of parent
	 * domains, it sees the protection domain. */
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = prot->ibv_pd.handle;
	pd->pdn = prot->pdn;
	pd->protection = prot;
	__atomic_add_fetch(&prot->refs, 1, __ATOMIC_ACQ_REL);
	if (attr->td) {
		pd->td = to_ptd(attr->td);
		__atomic_add_fetch(&pd->td->refs, 1, __ATOMIC_ACQ_REL);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	return &pd->ibv_pd;
}
