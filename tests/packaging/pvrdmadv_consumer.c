// SPDX-License-Identifier: BSD-2-Clause
/*
 * An application of the pvrdmadv API as a user builds it: only the
 * installed <infiniband/pvrdmadv.h> and "pkg-config --cflags --libs
 * libpvrdma". It opens the first RDMA device and asks libpvrdma.so.1 about
 * it.
 *
 * pvrdmadv_consumer pvrdma      the device must be driven by libpvrdma:
 *                               every call succeeds
 * pvrdmadv_consumer vmw_pvrdma  driven by another provider: every call
 *                               answers EOPNOTSUPP
 *
 * Prints "<file holding pvrdmadv_query_device> <what was checked>", so the
 * caller sees which libpvrdma.so.1 the dynamic loader took. Exit status 0
 * when the answers are the expected ones, 1 otherwise, 2 without a device.
 */
#define _GNU_SOURCE		/* dladdr() */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/pvrdmadv.h>
#include <infiniband/verbs.h>

static const char *library_of(void *symbol)
{
	Dl_info info;

	if (!dladdr(symbol, &info) || !info.dli_fname)
		return "unknown";
	return info.dli_fname;
}

static int check_supported(struct ibv_context *ctx)
{
	struct pvrdmadv_device_attr attr;
	struct pvrdmadv_counters counters;
	const uint64_t want = PVRDMADV_DEVICE_ATTR_MIN_HW_VERSION |
			      PVRDMADV_DEVICE_ATTR_MAX_INLINE |
			      PVRDMADV_DEVICE_ATTR_CQ_POLL_DB;
	int ret;

	if (!pvrdmadv_is_supported(ctx)) {
		fprintf(stderr, "pvrdmadv_is_supported: 0\n");
		return 1;
	}
	memset(&attr, 0xa5, sizeof(attr));
	ret = pvrdmadv_query_device(ctx, &attr, sizeof(attr));
	if (ret) {
		fprintf(stderr, "pvrdmadv_query_device: %s\n", strerror(ret));
		return 1;
	}
	if ((attr.comp_mask & want) != want ||
	    (attr.min_hw_version != 13 && attr.min_hw_version != 14)) {
		fprintf(stderr,
			"pvrdmadv_query_device: comp_mask 0x%llx, min_hw_version %u\n",
			(unsigned long long)attr.comp_mask,
			attr.min_hw_version);
		return 1;
	}
	ret = pvrdmadv_query_counters(ctx, &counters, sizeof(counters));
	if (ret) {
		fprintf(stderr, "pvrdmadv_query_counters: %s\n",
			strerror(ret));
		return 1;
	}
	printf("%s min_hw_version=%u max_inline_data=%u\n",
	       library_of((void *)pvrdmadv_query_device),
	       attr.min_hw_version, attr.max_inline_data);
	return 0;
}

static int check_unsupported(struct ibv_context *ctx)
{
	struct pvrdmadv_device_attr attr;
	struct pvrdmadv_counters counters;
	int ret;

	if (pvrdmadv_is_supported(ctx)) {
		fprintf(stderr, "pvrdmadv_is_supported: 1\n");
		return 1;
	}
	ret = pvrdmadv_query_device(ctx, &attr, sizeof(attr));
	if (ret != EOPNOTSUPP) {
		fprintf(stderr, "pvrdmadv_query_device: %d, not EOPNOTSUPP\n",
			ret);
		return 1;
	}
	ret = pvrdmadv_query_counters(ctx, &counters, sizeof(counters));
	if (ret != EOPNOTSUPP) {
		fprintf(stderr,
			"pvrdmadv_query_counters: %d, not EOPNOTSUPP\n", ret);
		return 1;
	}
	printf("%s EOPNOTSUPP\n", library_of((void *)pvrdmadv_query_device));
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int num, ret;

	if (argc != 2 || (strcmp(argv[1], "pvrdma") &&
			  strcmp(argv[1], "vmw_pvrdma"))) {
		fprintf(stderr, "usage: %s pvrdma|vmw_pvrdma\n", argv[0]);
		return 1;
	}
	list = ibv_get_device_list(&num);
	if (!list || num == 0) {
		fprintf(stderr, "pvrdmadv_consumer: no RDMA device\n");
		if (list)
			ibv_free_device_list(list);
		return 2;
	}
	ctx = ibv_open_device(list[0]);
	if (!ctx) {
		perror(ibv_get_device_name(list[0]));
		ibv_free_device_list(list);
		return 1;
	}
	if (!strcmp(argv[1], "pvrdma"))
		ret = check_supported(ctx);
	else
		ret = check_unsupported(ctx);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ret;
}
