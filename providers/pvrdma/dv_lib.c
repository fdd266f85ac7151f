// SPDX-License-Identifier: BSD-2-Clause
/*
 * libpvrdma.so.1: the pvrdmadv API applications link (-lpvrdma).
 *
 * libibverbs loads the provider itself (libpvrdma-rdmav34.so) with dlopen,
 * privately, so applications cannot link to it. This small library finds
 * the provider behind an ibv_context instead: the context's device carries
 * the provider's struct verbs_device_ops, which libpvrdma follows with its
 * own table (dv_ops.h). Contexts of other providers get EOPNOTSUPP.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "dv_ops.h"

#define PVRDMADV_EXPORT __attribute__((visibility("default")))

/*
 * Ours only if the device's ops are the object libpvrdma-rdmav34.so exports
 * as verbs_provider_pvrdma. The ops name alone cannot tell: rdma-core's
 * vmw_pvrdma names its ops "pvrdma" too, and reading our table past the end
 * of another provider's ops would read memory that is not ours.
 */
static const struct pvrdma_dv_ops *dv_ops(struct ibv_context *ctx)
{
	const struct pvrdma_device_ops_ext *ext;
	const struct verbs_device *vdev;
	Dl_info info;

	if (!ctx || !ctx->device)
		return NULL;
	/* every libibverbs device (PABI 34) is a struct verbs_device */
	vdev = (const struct verbs_device *)ctx->device;
	if (!vdev->ops || !dladdr(vdev->ops, &info) || !info.dli_sname ||
	    info.dli_saddr != (const void *)vdev->ops ||
	    strcmp(info.dli_sname, PVRDMA_DV_OPS_SYMBOL))
		return NULL;
	ext = (const struct pvrdma_device_ops_ext *)vdev->ops;
	if (ext->dv.magic != PVRDMA_DV_MAGIC ||
	    ext->dv.size < sizeof(struct pvrdma_dv_ops))
		return NULL;
	return &ext->dv;
}

PVRDMADV_EXPORT int pvrdmadv_is_supported(struct ibv_context *ctx)
{
	return dv_ops(ctx) != NULL;
}

PVRDMADV_EXPORT int pvrdmadv_query_counters(struct ibv_context *ctx,
					    struct pvrdmadv_counters *out,
					    size_t outlen)
{
	const struct pvrdma_dv_ops *ops;

	if (!ctx || !out)
		return EINVAL;
	ops = dv_ops(ctx);
	if (!ops)
		return EOPNOTSUPP;
	return ops->query_counters(ctx, out, outlen);
}

PVRDMADV_EXPORT int pvrdmadv_query_device(struct ibv_context *ctx,
					  struct pvrdmadv_device_attr *out,
					  size_t outlen)
{
	const struct pvrdma_dv_ops *ops;

	if (!ctx || !out)
		return EINVAL;
	ops = dv_ops(ctx);
	if (!ops)
		return EOPNOTSUPP;
	return ops->query_device(ctx, out, outlen);
}
