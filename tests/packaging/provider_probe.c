// SPDX-License-Identifier: BSD-2-Clause
/*
 * Prints which libibverbs provider drives each RDMA device, as
 * "<device> <provider file name>": the file that holds the poll_cq verb of
 * the opened context. Looking at the context rather than at the libraries
 * in the process tells the provider that claimed the device from one that
 * was merely loaded.
 *
 * Exit status: 0 when every device opened, 1 when one did not, 2 when there
 * is no device at all.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static const char *provider_of(struct ibv_context *ctx)
{
	Dl_info info;
	const char *slash;
	void *verb = (void *)ctx->ops.poll_cq;

	if (!verb || !dladdr(verb, &info) || !info.dli_fname)
		return "unknown";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

int main(void)
{
	struct ibv_device **list;
	int num, i, ret = 0;

	list = ibv_get_device_list(&num);
	if (!list || num == 0) {
		fprintf(stderr, "provider_probe: no RDMA device\n");
		if (list)
			ibv_free_device_list(list);
		return 2;
	}
	for (i = 0; i < num; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);

		if (!ctx) {
			perror(ibv_get_device_name(list[i]));
			ret = 1;
			continue;
		}
		printf("%s %s\n", ibv_get_device_name(list[i]),
		       provider_of(ctx));
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return ret;
}
