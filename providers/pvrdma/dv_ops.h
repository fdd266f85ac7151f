/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How libpvrdma.so.1 (the pvrdmadv API that applications link) reaches the
 * provider that libibverbs loaded: an ibv_context's device points to its
 * struct verbs_device_ops; ours is followed by this table, recognised by
 * the provider name and a magic number. Private to this source tree: both
 * sides are built and shipped together.
 */
#ifndef PVRDMA_DV_OPS_H
#define PVRDMA_DV_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/pvrdma_verbs_provider.h>
#include <infiniband/pvrdmadv.h>

#define PVRDMA_DV_MAGIC 0x70766476u	/* "pvdv" */
#define PVRDMA_DV_PROVIDER_NAME "pvrdma"
/* the dynamic symbol of our verbs_device_ops (main.c) */
#define PVRDMA_DV_OPS_SYMBOL "verbs_provider_pvrdma"

struct pvrdma_dv_ops {
	uint32_t magic;
	uint32_t size;			/* of this struct: fields are appended */
	int (*query_counters)(struct ibv_context *ctx,
			      struct pvrdmadv_counters *out, size_t outlen);
	int (*query_device)(struct ibv_context *ctx,
			    struct pvrdmadv_device_attr *out, size_t outlen);
};

struct pvrdma_device_ops_ext {
	struct verbs_device_ops ops;	/* first: what libibverbs reads */
	struct pvrdma_dv_ops dv;
};

#endif /* PVRDMA_DV_OPS_H */
