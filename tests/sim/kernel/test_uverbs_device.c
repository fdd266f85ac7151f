// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device commands of the uverbs ABI (uverbs_device.c, device_attr.c):
 * device and port queries, PDs and MRs, completion channels.
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

static void test_query_device_and_port(void **state)
{
	struct ib_uverbs_query_device q = { 0 };
	struct ib_uverbs_query_port p = { 0 };
	struct ib_uverbs_query_port_resp pr;
	uint8_t big[sizeof(struct ib_uverbs_query_device_resp) + 16];
	struct ib_uverbs_query_device_resp *r = (void *)big;
	struct sim_file *f;
	size_t i;

	dev_setup(13, false);
	f = open_ctx();
	memset(big, 0xff, sizeof(big));
	assert_true(cmd(f, IB_USER_VERBS_CMD_QUERY_DEVICE, &q, sizeof(q),
			NULL, 0, big, sizeof(big)) > 0);
	assert_int_equal(r->vendor_id, 0x15ad);
	assert_int_equal(r->vendor_part_id, 0x0820);
	assert_int_equal(r->max_qp, SIM_MAX_QP);
	assert_int_equal(r->phys_port_cnt, 1);
	assert_int_equal(r->max_srq, 0);	/* HWv13 */
	assert_int_equal(r->max_srq_wr, 0);
	/* What one page table maps, less the ring-state page, in entries of
	 * 128 (send WQE), 32 (receive WQE) and 64 bytes (CQE). */
	assert_int_equal(r->max_qp_wr, 8192);
	assert_int_equal(r->max_cqe, 16384);
	/* The kernel zeroes what it did not fill of the user's buffer. */
	for (i = sizeof(*r); i < sizeof(big); i++)
		assert_int_equal(big[i], 0);

	p.port_num = 1;
	assert_true(cmd(f, IB_USER_VERBS_CMD_QUERY_PORT, &p, sizeof(p), NULL,
			0, &pr, sizeof(pr)) > 0);
	assert_int_equal(pr.state, IBV_PORT_ACTIVE);
	assert_int_equal(pr.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(pr.active_mtu, IBV_MTU_1024);
	assert_int_equal(pr.max_mtu, IBV_MTU_4096);
	p.port_num = 2;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_QUERY_PORT, &p, sizeof(p),
			     NULL, 0, &pr, sizeof(pr)), -1);
	assert_int_equal(errno, EINVAL);
	uverbs_close(f);

	dev_setup(14, false);
	f = open_ctx();
	assert_true(cmd(f, IB_USER_VERBS_CMD_QUERY_DEVICE, &q, sizeof(q),
			NULL, 0, big, sizeof(big)) > 0);
	assert_int_equal(r->max_srq, SIM_MAX_SRQ);
	assert_int_equal(r->max_srq_wr, 32768);
	uverbs_close(f);

	/* The limits are options. */
	dev_setup(14, false);
	dev.cfg.max_qp_wr = 100;
	dev.cfg.max_srq_wr = 200;
	dev.cfg.max_cqe = 300;
	f = open_ctx();
	assert_true(cmd(f, IB_USER_VERBS_CMD_QUERY_DEVICE, &q, sizeof(q),
			NULL, 0, big, sizeof(big)) > 0);
	assert_int_equal(r->max_qp_wr, 100);
	assert_int_equal(r->max_srq_wr, 200);
	assert_int_equal(r->max_cqe, 300);
	uverbs_close(f);
}

static void test_ex_query_device(void **state)
{
	uint8_t buf[128] = { 0 };
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	struct ib_uverbs_ex_cmd_hdr *ex = (void *)(buf + sizeof(*hdr));
	struct ib_uverbs_ex_query_device_resp resp;
	size_t len = sizeof(*hdr) + sizeof(*ex) + 8;
	struct sim_file *f;

	dev_setup(18, false);
	f = open_ctx();
	hdr->command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
		       IB_USER_VERBS_EX_CMD_QUERY_DEVICE;
	hdr->in_words = 1;
	hdr->out_words = sizeof(resp) / 8;
	ex->response = (uintptr_t)&resp;
	memset(&resp, 0xff, sizeof(resp));
	assert_int_equal(vfs_write(f, buf, len), (ssize_t)len);
	assert_int_equal(resp.base.vendor_id, 0x15ad);
	assert_int_equal(resp.response_length, sizeof(resp));
	assert_int_equal(resp.comp_mask, 0);
	/* Reserved header word. */
	ex->cmd_hdr_reserved = 1;
	assert_int_equal(vfs_write(f, buf, len), -1);
	assert_int_equal(errno, EINVAL);
	ex->cmd_hdr_reserved = 0;
	/* Vendor data the driver does not take. */
	ex->provider_out_words = 1;
	assert_int_equal(vfs_write(f, buf, len), -1);
	assert_int_equal(errno, EINVAL);
	uverbs_close(f);
}

static void test_pd_mr_ownership(void **state)
{
	struct ib_uverbs_reg_mr m = { 0 };
	struct ib_uverbs_reg_mr_resp mr;
	struct ib_uverbs_dealloc_pd d = { 0 };
	struct sim_file *f, *g;
	uint32_t pd, pdn, pd2;
	void *mem = page_buf(2 * SIM_PAGE_SIZE);

	dev_setup(18, false);
	f = open_ctx();
	g = open_ctx();
	pd = alloc_pd(f, &pdn);
	assert_int_equal(pd, 0);		/* uverbs handles start at 0 */
	assert_int_equal(pdn, 1);
	pd2 = alloc_pd(g, &pdn);
	assert_int_equal(pd2, 0);		/* per file */
	assert_int_equal(pdn, 2);		/* per device */

	m.start = (uintptr_t)mem;
	m.hca_va = (uintptr_t)mem;
	m.length = 2 * SIM_PAGE_SIZE;
	m.pd_handle = pd;
	m.access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	assert_true(cmd(f, IB_USER_VERBS_CMD_REG_MR, &m, sizeof(m), NULL, 0,
			&mr, sizeof(mr)) > 0);
	assert_int_equal(mr.mr_handle, 1);
	assert_int_equal(mr.lkey, mr.rkey);
	assert_ptr_equal(sim_table_get(&dev.mrs, mr.lkey) != NULL, true);
	/* Remote write without local write. */
	m.access_flags = IBV_ACCESS_REMOTE_WRITE;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_REG_MR, &m, sizeof(m), NULL,
			     0, &mr, sizeof(mr)), -1);
	assert_int_equal(errno, EINVAL);
	/* Memory that is not there. */
	m.access_flags = 0;
	m.start = m.hca_va = 0x10000;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_REG_MR, &m, sizeof(m), NULL,
			     0, &mr, sizeof(mr)), -1);
	assert_int_equal(errno, EFAULT);
	/* Another file's handle space holds no MR 1 and no PD 5. */
	m.start = m.hca_va = (uintptr_t)mem;
	m.pd_handle = 5;
	assert_int_equal(cmd(g, IB_USER_VERBS_CMD_REG_MR, &m, sizeof(m), NULL,
			     0, &mr, sizeof(mr)), -1);
	assert_int_equal(errno, EINVAL);
	{
		struct ib_uverbs_dereg_mr dm = { .mr_handle = 1 };

		assert_int_equal(cmd(g, IB_USER_VERBS_CMD_DEREG_MR, &dm,
				     sizeof(dm), NULL, 0, NULL, 0), -1);
		assert_int_equal(errno, ENOENT);
	}
	/* A PD in use cannot go. */
	d.pd_handle = pd;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_DEALLOC_PD, &d, sizeof(d),
			     NULL, 0, NULL, 0), -1);
	assert_int_equal(errno, EBUSY);
	uverbs_close(f);
	/* Closing the file took everything of it off the device. */
	assert_null(sim_table_get(&dev.pds, 1));
	assert_non_null(sim_table_get(&dev.pds, 2));
	uverbs_close(g);
	assert_null(sim_table_get(&dev.pds, 2));
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A channel the application destroyed (closed its fd) and no CQ uses is
 * let go: making and destroying channels does not leak the sim's ends. */
static void test_comp_channel_churn(void **state)
{
	struct ib_uverbs_create_comp_channel cc = { 0 };
	struct ib_uverbs_create_comp_channel_resp ccr;
	struct sim_file *f;
	int i, before, kept;
	uint32_t h;

	dev_setup(18, false);
	f = open_ctx();
	/* One channel stays in use by a CQ with its fd closed: kept. */
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &cc,
			     sizeof(cc), NULL, 0, &ccr, sizeof(ccr)),
			 8 + sizeof(cc));
	kept = (int)ccr.fd;
	assert_int_equal(create_cq(f, 4, kept, 2, &h, NULL, NULL), 0);
	close(kept);
	before = open_fds();
	for (i = 0; i < 100; i++) {
		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
				     &cc, sizeof(cc), NULL, 0, &ccr,
				     sizeof(ccr)), 8 + sizeof(cc));
		close((int)ccr.fd);
	}
	/* the last channel is let go by the next make: its two ends */
	assert_true(open_fds() <= before + 2);
	uverbs_close(f);
	close(last_async_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_device_and_port),
		cmocka_unit_test(test_ex_query_device),
		cmocka_unit_test(test_pd_mr_ownership),
		cmocka_unit_test(test_comp_channel_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
