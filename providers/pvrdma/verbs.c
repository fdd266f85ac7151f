// SPDX-License-Identifier: BSD-2-Clause
/*
 * Control verbs that are plain kernel commands: device and port queries,
 * protection domains, memory regions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pvrdma.h"

/* The device reports its firmware as major << 32 | minor << 16 | sub. */
void pvrdma_format_fw_ver(char *buf, size_t len, uint64_t raw)
{
	snprintf(buf, len, "%u.%u.%03u",
		 (unsigned int)((raw >> 32) & 0xffff),
		 (unsigned int)((raw >> 16) & 0xffff),
		 (unsigned int)(raw & 0xffff));
}

int pvrdma_query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;
	pvrdma_format_fw_ver(attr->orig_attr.fw_ver,
			     sizeof(attr->orig_attr.fw_ver), resp.base.fw_ver);
	return 0;
}

int pvrdma_query_port(struct ibv_context *context, uint8_t port,
		      struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *pvrdma_alloc_pd(struct ibv_context *context)
{
	struct pvrdma_cmd_alloc_pd cmd;
	struct pvrdma_cmd_alloc_pd_resp resp = {};
	struct pvrdma_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.drv_payload.pdn;
	return &pd->ibv_pd;
}

int pvrdma_dealloc_pd(struct ibv_pd *pd)
{
	struct pvrdma_pd *ppd = to_ppd(pd);
	int ret;

	/* parent domains on it, or buffers its allocator gave */
	if (__atomic_load_n(&ppd->refs, __ATOMIC_ACQUIRE))
		return EBUSY;
	if (ppd->protection) {		/* a parent domain: ours alone */
		__atomic_sub_fetch(&ppd->protection->refs, 1,
				   __ATOMIC_ACQ_REL);
		if (ppd->td)
			__atomic_sub_fetch(&ppd->td->refs, 1,
					   __ATOMIC_ACQ_REL);
		free(ppd);
		return 0;
	}
	ret = ibv_cmd_dealloc_pd(pd);

	if (ret)
		return ret;	/* EBUSY while MRs/QPs/AHs use it */
	free(to_ppd(pd));
	return 0;
}

struct ibv_mr *pvrdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int pvrdma_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(vmr);
	return 0;
}
