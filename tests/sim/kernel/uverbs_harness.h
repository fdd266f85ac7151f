/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel model's uverbs tests' shared set-up: one adapter on a fake
 * device (fake_device.h), raw commands laid out as libibverbs lays them
 * out (header, core request, vendor udata), and the objects most tests
 * need. Each test file uses some of the helpers (hence "unused").
 */
#ifndef TEST_UVERBS_HARNESS_H
#define TEST_UVERBS_HARNESS_H

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

#include "fake_device.h"
#include "uverbs_internal.h"
#include "vfs_write.h"

static __attribute__((unused)) struct sim_dev dev;

__attribute__((unused))
static void dev_setup(unsigned int hw, bool namespaces)
{
	free(dev.pds.slot);
	free(dev.mrs.slot);
	free(dev.cqs.slot);
	free(dev.qps.slot);
	free(dev.srqs.slot);
	free(dev.qp_by_qp_handle.slot);
	memset(&dev, 0, sizeof(dev));
	pthread_mutex_init(&dev.lock, NULL);
	dev.cfg.hw_version = hw;
	dev.cfg.namespaces = namespaces;
	dev.cfg.mtu = IBV_MTU_1024;
	dev.gid_count = 1;
	fake_device_install();
}

/* A legacy command: header, core request (starting with .response when
 * there is one), vendor request; the response buffer is core + vendor. */
__attribute__((unused))
static ssize_t cmd(struct sim_file *f, uint32_t command, void *core,
		   size_t core_len, const void *udata, size_t udata_len,
		   void *resp, size_t resp_len)
{
	uint8_t buf[1024];
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	size_t len = sizeof(*hdr) + core_len + udata_len;

	if (resp)
		*(uint64_t *)core = (uintptr_t)resp;
	hdr->command = command;
	hdr->in_words = (uint16_t)(len / 4);
	hdr->out_words = (uint16_t)(resp_len / 4);
	memcpy(buf + sizeof(*hdr), core, core_len);
	if (udata_len)
		memcpy(buf + sizeof(*hdr) + core_len, udata, udata_len);
	errno = 0;
	return vfs_write(f, buf, len);
}

static __attribute__((unused)) int last_async_fd = -1;

__attribute__((unused))
static struct sim_file *open_ctx(void)
{
	struct ib_uverbs_get_context c = { 0 };
	struct {
		struct ib_uverbs_get_context_resp r;
		struct pvrdma_alloc_ucontext_resp u;
	} resp;
	struct sim_file *f = uverbs_open(&dev, 1000);

	assert_non_null(f);
	memset(&resp, 0xa5, sizeof(resp));
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c),
			     NULL, 0, &resp, sizeof(resp)), 8 + sizeof(c));
	assert_int_equal(resp.r.num_comp_vectors, 1);
	assert_true(fcntl((int)resp.r.async_fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(resp.u.qp_tab_size, SIM_MAX_QP);
	last_async_fd = (int)resp.r.async_fd;
	return f;
}

__attribute__((unused))
static uint32_t alloc_pd(struct sim_file *f, uint32_t *pdn)
{
	struct ib_uverbs_alloc_pd c = { 0 };
	struct {
		struct ib_uverbs_alloc_pd_resp r;
		struct pvrdma_alloc_pd_resp u;
	} resp;

	assert_true(cmd(f, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), NULL, 0,
			&resp, sizeof(resp)) > 0);
	if (pdn)
		*pdn = resp.u.pdn;
	return resp.r.pd_handle;
}

__attribute__((unused))
static void *page_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* CREATE_CQ with a ring buffer of `pages` pages; returns the errno. */
__attribute__((unused))
static int create_cq(struct sim_file *f, uint32_t cqe, int channel,
		     size_t pages, uint32_t *handle, uint32_t *cqn,
		     uint32_t *granted)
{
	struct ib_uverbs_create_cq c = { 0 };
	struct pvrdma_create_cq u = { 0 };
	struct {
		struct ib_uverbs_create_cq_resp r;
		struct pvrdma_create_cq_resp u;
	} resp;

	c.user_handle = 0xc0ffee00u + cqe;
	c.cqe = cqe;
	c.comp_channel = channel;
	u.buf_addr = (uintptr_t)page_buf(pages * SIM_PAGE_SIZE);
	u.buf_size = (uint32_t)(pages * SIM_PAGE_SIZE);
	if (cmd(f, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), &u, sizeof(u),
		&resp, sizeof(resp)) < 0)
		return errno;
	if (handle)
		*handle = resp.r.cq_handle;
	if (cqn)
		*cqn = resp.u.cqn;
	if (granted)
		*granted = resp.r.cqe;
	return 0;
}

struct qp_out {
	uint32_t handle, qpn, qp_handle;
};

/* CREATE_QP as the upstream provider sizes its buffers unless told
 * otherwise; returns the errno. */
__attribute__((unused))
static int create_qp(struct sim_file *f, uint8_t type, uint32_t pd,
		     uint32_t cq, uint32_t wr, size_t sbuf, size_t rbuf,
		     struct qp_out *out)
{
	struct ib_uverbs_create_qp c = { 0 };
	struct pvrdma_create_qp u = { 0 };
	struct {
		struct ib_uverbs_create_qp_resp r;
		struct pvrdma_create_qp_resp u;
	} resp;

	c.user_handle = 0x9900;
	c.pd_handle = pd;
	c.send_cq_handle = cq;
	c.recv_cq_handle = cq;
	c.max_send_wr = wr;
	c.max_recv_wr = wr;
	c.max_send_sge = 1;
	c.max_recv_sge = 1;
	c.qp_type = type;
	/* SQ: state page + wr WQEs of 128 bytes; RQ: wr WQEs of 32. */
	if (!sbuf)
		sbuf = SIM_PAGE_SIZE + ((wr * 128 + SIM_PAGE_SIZE - 1) &
					~(size_t)(SIM_PAGE_SIZE - 1));
	if (!rbuf)
		rbuf = (wr * 32 + SIM_PAGE_SIZE - 1) &
		       ~(size_t)(SIM_PAGE_SIZE - 1);
	u.sbuf_addr = (uintptr_t)page_buf(sbuf);
	u.sbuf_size = (uint32_t)sbuf;
	u.rbuf_addr = (uintptr_t)page_buf(rbuf);
	u.rbuf_size = (uint32_t)rbuf;
	if (cmd(f, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), &u, sizeof(u),
		&resp, sizeof(resp)) < 0)
		return errno;
	if (out) {
		out->handle = resp.r.qp_handle;
		out->qpn = resp.r.qpn;
		out->qp_handle = resp.u.qp_handle;
	}
	return 0;
}

__attribute__((unused))
static int modify_qp(struct sim_file *f, uint32_t qp, int mask,
		     struct ib_uverbs_modify_qp *m)
{
	struct ib_uverbs_modify_qp c = *m;

	c.qp_handle = qp;
	c.attr_mask = (uint32_t)mask;
	errno = 0;
	{
		uint8_t buf[256];
		struct ib_uverbs_cmd_hdr *hdr = (void *)buf;

		hdr->command = IB_USER_VERBS_CMD_MODIFY_QP;
		hdr->in_words = (sizeof(*hdr) + sizeof(c)) / 4;
		hdr->out_words = 0;
		memcpy(buf + sizeof(*hdr), &c, sizeof(c));
		if (vfs_write(f, buf, sizeof(*hdr) + sizeof(c)) < 0)
			return errno;
	}
	return 0;
}

#endif /* TEST_UVERBS_HARNESS_H */
