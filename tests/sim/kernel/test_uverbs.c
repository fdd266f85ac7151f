// SPDX-License-Identifier: BSD-2-Clause
/*
 * The uverbs write() ABI of the sim (uverbs.c), driven with raw command
 * buffers laid out as libibverbs lays them out: headers, sizes, errnos,
 * and the UAR mapping of a context.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "uverbs_harness.h"

static void test_header_checks(void **state)
{
	struct ib_uverbs_query_device q = { 0 };
	struct ib_uverbs_query_device_resp r;
	uint8_t buf[64] = { 0 };
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	struct sim_file *f;

	dev_setup(18, false);
	f = uverbs_open(&dev, 1000);
	/* Shorter than a header. */
	assert_int_equal(vfs_write(f, buf, 4), -1);
	assert_int_equal(errno, EINVAL);
	/* No context yet. */
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_QUERY_DEVICE, &q, sizeof(q),
			     NULL, 0, &r, sizeof(r)), -1);
	assert_int_equal(errno, EINVAL);
	uverbs_close(f);

	f = open_ctx();
	/* A second context on one file. */
	{
		struct ib_uverbs_get_context c = { 0 };
		uint8_t resp[16];

		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_GET_CONTEXT, &c,
				     sizeof(c), NULL, 0, resp, sizeof(resp)),
				 -1);
		assert_int_equal(errno, EINVAL);
	}
	/* in_words must match the write size. */
	hdr->command = IB_USER_VERBS_CMD_QUERY_DEVICE;
	hdr->in_words = 3;
	hdr->out_words = sizeof(r) / 4;
	*(uint64_t *)(buf + 8) = (uintptr_t)&r;
	assert_int_equal(vfs_write(f, buf, 16), -1);
	assert_int_equal(errno, EINVAL);
	/* Request shorter than the command's struct. */
	hdr->command = IB_USER_VERBS_CMD_ALLOC_PD;
	hdr->in_words = 3;
	assert_int_equal(vfs_write(f, buf, 12), -1);
	assert_int_equal(errno, ENOSPC);
	/* Response buffer smaller than the response. */
	hdr->command = IB_USER_VERBS_CMD_QUERY_DEVICE;
	hdr->in_words = 4;
	hdr->out_words = 4;
	assert_int_equal(vfs_write(f, buf, 16), -1);
	assert_int_equal(errno, ENOSPC);
	/* Unknown flag bits, unknown and unsupported commands. */
	hdr->command = 0x40000000u | IB_USER_VERBS_CMD_QUERY_DEVICE;
	assert_int_equal(vfs_write(f, buf, 16), -1);
	assert_int_equal(errno, EINVAL);
	hdr->command = 0x7f;
	hdr->in_words = 2;
	hdr->out_words = 0;
	assert_int_equal(vfs_write(f, buf, 8), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	hdr->command = IB_USER_VERBS_CMD_RESIZE_CQ;
	assert_int_equal(vfs_write(f, buf, 8), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	hdr->command = IB_USER_VERBS_CMD_CREATE_AH;
	assert_int_equal(vfs_write(f, buf, 8), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	hdr->command = IB_USER_VERBS_CMD_ATTACH_MCAST;
	assert_int_equal(vfs_write(f, buf, 8), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	/* Nonzero bytes beyond what the kernel knows of a request. */
	{
		uint8_t core[16] = { 0 };

		core[12] = 1;
		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_QUERY_DEVICE, core,
				     sizeof(core), NULL, 0, &r, sizeof(r)), -1);
		assert_int_equal(errno, EOPNOTSUPP);
	}
	uverbs_close(f);
}

static void test_uar_mmap(void **state)
{
	struct sim_file *f;
	void *uar;

	dev_setup(18, false);
	f = uverbs_open(&dev, 1000);
	/* No context, no UAR. */
	assert_true(uverbs_mmap(f, NULL, SIM_PAGE_SIZE, PROT_WRITE, MAP_SHARED,
				0) == MAP_FAILED);
	assert_int_equal(errno, EINVAL);
	uverbs_close(f);
	f = open_ctx();
	assert_true(uverbs_mmap(f, NULL, 2 * SIM_PAGE_SIZE, PROT_WRITE,
				MAP_SHARED, 0) == MAP_FAILED);
	assert_int_equal(errno, EINVAL);
	uar = uverbs_mmap(f, NULL, SIM_PAGE_SIZE, PROT_WRITE, MAP_SHARED, 0);
	assert_true(uar != MAP_FAILED);
	assert_int_equal(uverbs_munmap(f, uar, SIM_PAGE_SIZE), 0);
	assert_int_equal(uverbs_munmap(f, uar, SIM_PAGE_SIZE), -1);
	uverbs_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_uar_mmap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
