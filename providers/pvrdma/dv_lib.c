// SPDX-License-Identifier: BSD-2-Clause
/*
 * libpvrdma.so.1: the pvrdmadv API applications link (-lpvrdma).
 *
 * libibverbs loads the provider itself (libpvrdma-rdmav34.so) with dlopen,
 * privately, so applications cannot link to it. This small library finds
 * it as the dynamic linker knows it, by its soname, without loading it:
 * a device is ours when its ops are the provider's struct
 * verbs_device_ops (is_pvrdma_dev, as mlx5dv checks its own devices), and
 * then it is a struct pvrdma_device whose dv table leads to the provider.
 * Contexts of other providers, the upstream vmw_pvrdma among them, get
 * EOPNOTSUPP; so does every context while the provider is not loaded.
 */
#include <dlfcn.h>
#include <errno.h>

#include "pvrdma.h"

#define PVRDMADV_EXPORT __attribute__((visibility("default")))

/* The provider's registered ops, or NULL if no libpvrdma-rdmav34.so is
 * loaded in this process (then no device can be ours). */
static const struct verbs_device_ops *provider_ops(void)
{
	const struct verbs_device_ops *ops;
	void *provider;

	provider = dlopen(PVRDMA_PROVIDER_SONAME, RTLD_LAZY | RTLD_NOLOAD);
	if (!provider)
		return NULL;
	ops = dlsym(provider, PVRDMA_DV_OPS_SYMBOL);
	/* libibverbs holds the provider for the life of the process: the
	 * ops outlive this reference */
	dlclose(provider);
	return ops;
}

static bool is_pvrdma_dev(struct ibv_device *device)
{
	const struct verbs_device_ops *ops = provider_ops();

	return ops && verbs_get_device(device)->ops == ops;
}

static const struct pvrdma_dv_ops *dv_ops(struct ibv_context *ctx)
{
	if (!ctx || !ctx->device || !is_pvrdma_dev(ctx->device))
		return NULL;
	return to_pdev(ctx->device)->dv;
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
