// SPDX-License-Identifier: BSD-2-Clause
/*
 * libpvrdma: device matching and the context: its UAR page, the device's
 * limits, the QP table that resolves CQE.qp (qp_table.c) and the settings
 * read from the environment. The rings shared with the device are buf.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pvrdma.h"

#define PVRDMA_CQ_POLL_DOORBELL_DEFAULT 4096
/* Inline bounce slots: default largest payload, and the most an
 * administrator may allow (PVRDMA_MAX_INLINE); the memory is slot size
 * times SQ depth per QP that asks for inline data. */
#define PVRDMA_MAX_INLINE_DEFAULT 256
#define PVRDMA_MAX_INLINE_CAP 4096

static void pvrdma_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops pvrdma_ctx_ops = {
	.free_context = pvrdma_free_context,
	.query_device_ex = pvrdma_query_device_ex,
	.query_port = pvrdma_query_port,
	.alloc_pd = pvrdma_alloc_pd,
	.dealloc_pd = pvrdma_dealloc_pd,
	.reg_mr = pvrdma_reg_mr,
	.dereg_mr = pvrdma_dereg_mr,

	.alloc_td = pvrdma_alloc_td,
	.dealloc_td = pvrdma_dealloc_td,
	.alloc_parent_domain = pvrdma_alloc_parent_domain,

	.create_cq = pvrdma_create_cq,
	.create_cq_ex = pvrdma_create_cq_ex,
	.cq_event = pvrdma_cq_event,
	.poll_cq = pvrdma_poll_cq,
	.req_notify_cq = pvrdma_req_notify_cq,
	.destroy_cq = pvrdma_destroy_cq,

	.create_qp = pvrdma_create_qp,
	.create_qp_ex = pvrdma_create_qp_ex,
	.query_qp = pvrdma_query_qp,
	.modify_qp = pvrdma_modify_qp,
	.destroy_qp = pvrdma_destroy_qp,
	.post_send = pvrdma_post_send,
	.post_recv = pvrdma_post_recv,

	.create_srq = pvrdma_create_srq,
	.modify_srq = pvrdma_modify_srq,
	.query_srq = pvrdma_query_srq,
	.destroy_srq = pvrdma_destroy_srq,
	.post_srq_recv = pvrdma_post_srq_recv,

	.create_ah = pvrdma_create_ah,
	.destroy_ah = pvrdma_destroy_ah,
};

static unsigned long env_ulong(const char *name, unsigned long dflt,
			       unsigned long max)
{
	const char *s = getenv(name);
	unsigned long v;
	char *end;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v > max)
		return dflt;
	return v;
}

uint32_t pvrdma_cq_poll_db_interval_from_env(void)
{
	return (uint32_t)env_ulong("PVRDMA_CQ_POLL_DOORBELL",
				   PVRDMA_CQ_POLL_DOORBELL_DEFAULT,
				   UINT32_MAX);
}

/* PVRDMA_MAX_INLINE: 0 turns inline data off; above the cap: default. */
uint32_t pvrdma_max_inline_from_env(void)
{
	return (uint32_t)env_ulong("PVRDMA_MAX_INLINE",
				   PVRDMA_MAX_INLINE_DEFAULT,
				   PVRDMA_MAX_INLINE_CAP);
}

/* ---- context ---- */

static int query_limits(struct pvrdma_context *ctx)
{
	struct ibv_context *ibctx = &ctx->vctx.context;
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	struct ibv_device_attr_ex attr = {};
	struct pvrdma_limits *lim = &ctx->limits;
	unsigned int port;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, NULL, &attr, sizeof(attr),
				       &resp, &resp_size);
	if (ret)
		return ret;
	lim->max_qp_wr = (uint32_t)attr.orig_attr.max_qp_wr;
	lim->max_sge = (uint32_t)attr.orig_attr.max_sge;
	lim->max_cqe = (uint32_t)attr.orig_attr.max_cqe;
	lim->max_srq = (uint32_t)attr.orig_attr.max_srq;
	lim->max_srq_wr = (uint32_t)attr.orig_attr.max_srq_wr;
	lim->max_srq_sge = (uint32_t)attr.orig_attr.max_srq_sge;
	lim->max_qp_rd_atom = (uint32_t)attr.orig_attr.max_qp_rd_atom;
	lim->max_qp_init_rd_atom =
		(uint32_t)attr.orig_attr.max_qp_init_rd_atom;
	lim->max_pkeys = attr.orig_attr.max_pkeys;
	lim->phys_port_cnt = attr.orig_attr.phys_port_cnt;
	lim->atomic_cap = attr.orig_attr.atomic_cap;

	ctx->ports = calloc(lim->phys_port_cnt ? lim->phys_port_cnt : 1,
			    sizeof(*ctx->ports));
	if (!ctx->ports)
		return ENOMEM;
	for (port = 1; port <= lim->phys_port_cnt; port++) {
		struct ibv_port_attr pa = {};
		struct ibv_query_port cmd;

		ret = ibv_cmd_query_port(ibctx, (uint8_t)port, &pa, &cmd,
					 sizeof(cmd));
		if (ret)
			return ret;
		ctx->ports[port - 1] = (struct pvrdma_port_info) {
			.state = pa.state,
			.link_layer = pa.link_layer,
			.port_cap_flags = pa.port_cap_flags,
			.gid_tbl_len = pa.gid_tbl_len,
		};
	}
	return 0;
}

static void free_context_resources(struct pvrdma_context *ctx)
{
	if (ctx->uar)
		munmap(ctx->uar, ctx->uar_size);
	free(ctx->qp_table);
	free(ctx->ports);
	pthread_mutex_destroy(&ctx->qp_table_lock);
	pthread_mutex_destroy(&ctx->objects_lock);
}

static struct verbs_context *pvrdma_alloc_context(struct ibv_device *ibdev,
						  int cmd_fd,
						  void *private_data)
{
	struct pvrdma_context *ctx;
	struct pvrdma_cmd_alloc_ucontext cmd;
	struct pvrdma_cmd_alloc_ucontext_resp resp = {};
	uint32_t tab;
	void *uar;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_VMW_PVRDMA);
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->qp_table_lock, NULL);
	pvrdma_objects_init(ctx);

	ret = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err;
	verbs_set_ops(&ctx->vctx, &pvrdma_ctx_ops);

	ret = query_limits(ctx);
	if (ret)
		goto err;

	/* Table of qp_tab_size slots (power of two, at most 2^16: the
	 * device reports only 16 bits of handle in a CQE). */
	tab = resp.drv_payload.qp_tab_size;
	if (!tab || tab > (1u << PVRDMA_QP_HANDLE_BITS))
		tab = 1u << PVRDMA_QP_HANDLE_BITS;
	tab = (uint32_t)roundup_pow_of_two(tab);
	ctx->qp_table = calloc(tab, sizeof(*ctx->qp_table));
	if (!ctx->qp_table) {
		ret = ENOMEM;
		goto err;
	}
	ctx->qp_table_mask = tab - 1;

	ctx->uar_size = to_pdev(ibdev)->page_size;
	uar = mmap(NULL, ctx->uar_size, PROT_WRITE, MAP_SHARED, cmd_fd, 0);
	if (uar == MAP_FAILED) {
		ret = errno;
		goto err;
	}
	ctx->uar = uar;
	ctx->cq_poll_db_interval = pvrdma_cq_poll_db_interval_from_env();
	ctx->max_inline_data = pvrdma_max_inline_from_env();
	ctx->cq_arm_dedup = env_ulong("PVRDMA_CQ_ARM_DEDUP", 1, 1) != 0;
	return &ctx->vctx;

err:
	free_context_resources(ctx);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void pvrdma_free_context(struct ibv_context *ibctx)
{
	struct pvrdma_context *ctx = to_pctx(ibctx);

	free_context_resources(ctx);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/* ---- device ---- */

static struct verbs_device *pvrdma_alloc_device(struct verbs_sysfs_dev *sd)
{
	struct pvrdma_device *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->page_size = (size_t)sysconf(_SC_PAGESIZE);
	dev->dv = &pvrdma_dv_ops;
	return &dev->vdev;
}

static void pvrdma_uninit_device(struct verbs_device *vdev)
{
	free(to_pdev(&vdev->device));
}

static const struct verbs_match_ent pvrdma_match_table[] = {
	VERBS_DRIVER_ID(RDMA_DRIVER_VMW_PVRDMA),
	VERBS_PCI_MATCH(PVRDMA_PCI_VENDOR_VMWARE, PVRDMA_PCI_DEVICE_PVRDMA,
			NULL),
	{}
};

static const struct verbs_device_ops pvrdma_dev_ops = {
	.name = "pvrdma",
	.match_min_abi_version = PVRDMA_UVERBS_ABI_VERSION,
	.match_max_abi_version = PVRDMA_UVERBS_ABI_VERSION,
	.match_table = pvrdma_match_table,
	.alloc_device = pvrdma_alloc_device,
	.uninit_device = pvrdma_uninit_device,
	.alloc_context = pvrdma_alloc_context,
};
PROVIDER_DRIVER(pvrdma, pvrdma_dev_ops);
