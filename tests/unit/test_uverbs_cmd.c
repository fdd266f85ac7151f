// SPDX-License-Identifier: BSD-2-Clause
/*
 * The uverbs write() ABI of the sim, driven with raw command buffers laid
 * out as libibverbs lays them out: headers, sizes, errnos, handles and
 * the vendor udata of vmw_pvrdma.
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

#include "fake_device.h"
#include "uverbs_internal.h"

static struct sim_dev dev;

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
	return uverbs_write(f, buf, len);
}

static int last_async_fd = -1;

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

static void *page_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* CREATE_CQ with a ring buffer of `pages` pages; returns the errno. */
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
		if (uverbs_write(f, buf, sizeof(*hdr) + sizeof(c)) < 0)
			return errno;
	}
	return 0;
}

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
	assert_int_equal(uverbs_write(f, buf, 4), -1);
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
	assert_int_equal(uverbs_write(f, buf, 16), -1);
	assert_int_equal(errno, EINVAL);
	/* Request shorter than the command's struct. */
	hdr->command = IB_USER_VERBS_CMD_ALLOC_PD;
	hdr->in_words = 3;
	assert_int_equal(uverbs_write(f, buf, 12), -1);
	assert_int_equal(errno, ENOSPC);
	/* Response buffer smaller than the response. */
	hdr->command = IB_USER_VERBS_CMD_QUERY_DEVICE;
	hdr->in_words = 4;
	hdr->out_words = 4;
	assert_int_equal(uverbs_write(f, buf, 16), -1);
	assert_int_equal(errno, ENOSPC);
	/* Unknown flag bits, unknown and unsupported commands. */
	hdr->command = 0x40000000u | IB_USER_VERBS_CMD_QUERY_DEVICE;
	assert_int_equal(uverbs_write(f, buf, 16), -1);
	assert_int_equal(errno, EINVAL);
	hdr->command = 0x7f;
	hdr->in_words = 2;
	hdr->out_words = 0;
	assert_int_equal(uverbs_write(f, buf, 8), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	hdr->command = IB_USER_VERBS_CMD_RESIZE_CQ;
	assert_int_equal(uverbs_write(f, buf, 8), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	hdr->command = IB_USER_VERBS_CMD_CREATE_AH;
	assert_int_equal(uverbs_write(f, buf, 8), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	hdr->command = IB_USER_VERBS_CMD_ATTACH_MCAST;
	assert_int_equal(uverbs_write(f, buf, 8), -1);
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
	assert_int_equal(uverbs_write(f, buf, len), (ssize_t)len);
	assert_int_equal(resp.base.vendor_id, 0x15ad);
	assert_int_equal(resp.response_length, sizeof(resp));
	assert_int_equal(resp.comp_mask, 0);
	/* Reserved header word. */
	ex->cmd_hdr_reserved = 1;
	assert_int_equal(uverbs_write(f, buf, len), -1);
	assert_int_equal(errno, EINVAL);
	ex->cmd_hdr_reserved = 0;
	/* Vendor data the driver does not take. */
	ex->provider_out_words = 1;
	assert_int_equal(uverbs_write(f, buf, len), -1);
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

static void test_cq_sizes_and_events(void **state)
{
	struct ib_uverbs_create_comp_channel cc = { 0 };
	struct ib_uverbs_create_comp_channel_resp ccr;
	struct ib_uverbs_req_notify_cq n = { 0 };
	struct ib_uverbs_destroy_cq d = { 0 };
	struct ib_uverbs_destroy_cq_resp dr;
	struct ib_uverbs_comp_event_desc ev;
	struct sim_file *f;
	struct sim_cq *cq;
	uint32_t h, cqn, granted;

	dev_setup(18, false);
	f = open_ctx();
	/* 5 entries become 8: the state page and 8 CQEs fit in 2 pages. */
	assert_int_equal(create_cq(f, 5, -1, 2, &h, &cqn, &granted), 0);
	assert_int_equal(granted, 8);
	assert_int_equal(cqn, 1);
	/* 100 entries of 64 bytes do not fit in 2 pages. */
	assert_int_equal(create_cq(f, 100, -1, 2, NULL, NULL, NULL), EINVAL);
	assert_int_equal(create_cq(f, 0, -1, 2, NULL, NULL, NULL), EINVAL);
	assert_int_equal(create_cq(f, 16384 + 1, -1, 2, NULL, NULL,
				   NULL), EINVAL);
	/* Not a channel of this file. */
	assert_int_equal(create_cq(f, 4, 0, 2, NULL, NULL, NULL), EBADF);
	/* Vendor data too short to hold the ring address. */
	{
		struct ib_uverbs_create_cq c = { .cqe = 4, .comp_channel = -1 };
		uint8_t u[8] = { 0 }, resp[16];

		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_CQ, &c,
				     sizeof(c), u, sizeof(u), resp,
				     sizeof(resp)), -1);
		assert_int_equal(errno, EFAULT);
	}

	assert_true(cmd(f, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &cc,
			sizeof(cc), NULL, 0, &ccr, sizeof(ccr)) > 0);
	assert_int_equal(create_cq(f, 16, (int)ccr.fd, 2, &h, &cqn, NULL), 0);
	cq = sim_table_get(&dev.cqs, cqn);
	assert_non_null(cq);
	/* Unarmed: no event. Armed: one, then disarmed. */
	sim_event_comp(cq, false);
	n.cq_handle = h;
	assert_true(cmd(f, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &n, sizeof(n),
			NULL, 0, NULL, 0) > 0);
	sim_event_comp(cq, false);
	sim_event_comp(cq, false);
	assert_int_equal(recv((int)ccr.fd, &ev, sizeof(ev), MSG_DONTWAIT),
			 sizeof(ev));
	assert_int_equal(ev.cq_handle, cq->user_handle);
	assert_int_equal(recv((int)ccr.fd, &ev, sizeof(ev), MSG_DONTWAIT), -1);
	/* Solicited-only arm ignores an unsolicited completion. */
	n.solicited_only = 1;
	assert_true(cmd(f, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &n, sizeof(n),
			NULL, 0, NULL, 0) > 0);
	sim_event_comp(cq, false);
	assert_int_equal(cq->comp_events_reported, 1);
	sim_event_comp(cq, true);
	assert_int_equal(cq->comp_events_reported, 2);
	/* That second event is never read: destroy reports only the first,
	 * and the unread one is gone with the CQ. */
	sim_event_async(cq->uctx, cq->user_handle, IBV_EVENT_CQ_ERR,
			&cq->async_events_reported);
	d.cq_handle = h;
	assert_true(cmd(f, IB_USER_VERBS_CMD_DESTROY_CQ, &d, sizeof(d), NULL,
			0, &dr, sizeof(dr)) > 0);
	assert_int_equal(dr.comp_events_reported, 1);
	assert_int_equal(dr.async_events_reported, 0);
	assert_int_equal(recv((int)ccr.fd, &ev, sizeof(ev), MSG_DONTWAIT), -1);
	assert_null(sim_table_get(&dev.cqs, cqn));
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_DESTROY_CQ, &d, sizeof(d),
			     NULL, 0, &dr, sizeof(dr)), -1);
	assert_int_equal(errno, ENOENT);
	uverbs_close(f);
	close((int)ccr.fd);
}

static void test_qp_create_rules(void **state)
{
	struct sim_file *f;
	struct qp_out q;
	uint32_t pd, cq;
	struct sim_qp *qp;
	int i;

	dev_setup(13, false);
	f = open_ctx();
	pd = alloc_pd(f, NULL);
	assert_int_equal(create_cq(f, 64, -1, 2, &cq, NULL, NULL), 0);

	assert_int_equal(create_qp(f, IBV_QPT_UC, pd, cq, 4, 0, 0, NULL),
			 EOPNOTSUPP);
	assert_int_equal(create_qp(f, IBV_QPT_XRC_RECV, pd, cq, 4, 0, 0,
				   NULL), EINVAL);
	assert_int_equal(create_qp(f, 1 /* GSI */, pd, cq, 4, 0, 0, NULL),
			 EINVAL);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd + 7, cq, 4, 0, 0, NULL),
			 EINVAL);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq,
				   8192 + 1, 0, 0, NULL), EINVAL);
	/* 64 send WQEs of 128 bytes need 2 pages after the state page. */
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 64,
				   2 * SIM_PAGE_SIZE, 0, NULL), EINVAL);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 256, 0,
				   SIM_PAGE_SIZE, NULL), EINVAL);

	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 64, 0, 0, &q), 0);
	/* Without namespaces the QPN is the device's QP handle. */
	assert_int_equal(q.qpn, q.qp_handle);
	assert_true(q.qp_handle >= 2 && q.qp_handle < SIM_MAX_QP);
	qp = sim_table_get(&dev.qp_by_qp_handle, q.qp_handle);
	assert_non_null(qp);
	assert_int_equal(qp->sq.nelems, 64);
	assert_int_equal(qp->sq.elem_size, 128);
	assert_int_equal(qp->rq.nelems, 64);
	assert_int_equal(qp->rq.elem_size, 32);
	assert_ptr_equal((uint8_t *)qp->rq.state, (uint8_t *)qp->sq.state + 8);
	assert_ptr_equal(qp->sq.elems, (uint8_t *)qp->sq.state +
			 SIM_PAGE_SIZE);

	/* Three UD QPs, not four. */
	for (i = 0; i < 3; i++)
		assert_int_equal(create_qp(f, IBV_QPT_UD, pd, cq, 4, 0, 0,
					   NULL), 0);
	assert_int_equal(create_qp(f, IBV_QPT_UD, pd, cq, 4, 0, 0, NULL),
			 ENOMEM);

	/* No SRQs on HWv13. */
	{
		struct ib_uverbs_create_srq c = { .pd_handle = pd,
						  .max_wr = 4, .max_sge = 1 };
		uint8_t u[16] = { 0 }, resp[24];

		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c,
				     sizeof(c), u, sizeof(u), resp,
				     sizeof(resp)), -1);
		assert_int_equal(errno, EOPNOTSUPP);
	}
	/* The CQ is in use. */
	{
		struct ib_uverbs_destroy_cq d = { .cq_handle = cq };
		struct ib_uverbs_destroy_cq_resp dr;

		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_DESTROY_CQ, &d,
				     sizeof(d), NULL, 0, &dr, sizeof(dr)), -1);
		assert_int_equal(errno, EBUSY);
	}
	uverbs_close(f);
	assert_int_equal(dev.num_ud_qps, 0);
	assert_null(sim_table_get(&dev.qp_by_qp_handle, q.qp_handle));
}

static void test_qp_namespaces(void **state)
{
	struct sim_file *f;
	struct qp_out q;
	uint32_t pd, cq;

	dev_setup(18, true);
	f = open_ctx();
	pd = alloc_pd(f, NULL);
	assert_int_equal(create_cq(f, 64, -1, 2, &cq, NULL, NULL), 0);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 4, 0, 0, &q), 0);
	assert_int_not_equal(q.qpn, q.qp_handle);
	assert_true(q.qp_handle < SIM_MAX_QP);
	assert_non_null(sim_table_get(&dev.qps, q.qpn));
	uverbs_close(f);
}

static void test_qp_modify_query_destroy(void **state)
{
	struct ib_uverbs_modify_qp m;
	struct ib_uverbs_query_qp qq = { 0 };
	struct ib_uverbs_query_qp_resp qr;
	struct ib_uverbs_destroy_qp d = { 0 };
	struct ib_uverbs_destroy_qp_resp dr;
	struct ib_uverbs_async_event_desc ev;
	struct sim_file *f;
	struct sim_qp *qp;
	struct qp_out q;
	uint32_t pd, cq;
	int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		  IBV_QP_MIN_RNR_TIMER;
	int async_fd;

	dev_setup(18, false);
	f = open_ctx();
	async_fd = last_async_fd;
	pd = alloc_pd(f, NULL);
	assert_int_equal(create_cq(f, 64, -1, 2, &cq, NULL, NULL), 0);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 4, 0, 0, &q), 0);
	qp = sim_table_get(&dev.qp_by_qp_handle, q.qp_handle);

	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	/* Missing the access flags. */
	assert_int_equal(modify_qp(f, q.handle, init & ~IBV_QP_ACCESS_FLAGS,
				   &m), EINVAL);
	/* Bad port, bad P_Key index. */
	m.port_num = 2;
	assert_int_equal(modify_qp(f, q.handle, init, &m), EINVAL);
	m.port_num = 1;
	m.pkey_index = 128;
	assert_int_equal(modify_qp(f, q.handle, init, &m), EINVAL);
	m.pkey_index = 0;
	/* Straight to RTS. */
	m.qp_state = IBV_QPS_RTS;
	assert_int_equal(modify_qp(f, q.handle, IBV_QP_STATE, &m), EINVAL);
	assert_int_equal(qp->attr.state, IBV_QPS_RESET);
	m.qp_state = IBV_QPS_INIT;
	assert_int_equal(modify_qp(f, q.handle, init, &m), 0);
	assert_int_equal(qp->attr.state, IBV_QPS_INIT);

	/* RTR with an MTU beyond the port's: nothing is applied. */
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_4096 + 1;
	m.dest_qp_num = 77;
	m.rq_psn = 5;
	m.min_rnr_timer = 12;
	m.max_dest_rd_atomic = 1;
	m.dest.is_global = 1;
	m.dest.port_num = 1;
	m.dest.hop_limit = 64;
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), EINVAL);
	assert_int_equal(qp->attr.state, IBV_QPS_INIT);
	assert_int_equal(qp->attr.dest_qp_num, 0);
	m.path_mtu = IBV_MTU_1024;
	m.max_dest_rd_atomic = 200;
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), EINVAL);
	m.max_dest_rd_atomic = 1;
	m.dest.sgid_index = 5;		/* no such GID */
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), EINVAL);
	m.dest.sgid_index = 0;
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), 0);

	qq.qp_handle = q.handle;
	{
		uint8_t resp[sizeof(qr)];

		assert_true(cmd(f, IB_USER_VERBS_CMD_QUERY_QP, &qq, sizeof(qq),
				NULL, 0, resp, sizeof(resp)) > 0);
		memcpy(&qr, resp, sizeof(qr));
	}
	assert_int_equal(qr.qp_state, IBV_QPS_RTR);
	assert_int_equal(qr.dest_qp_num, 77);
	assert_int_equal(qr.path_mtu, IBV_MTU_1024);
	assert_int_equal(qr.dest.hop_limit, 64);
	assert_int_equal(qr.max_send_wr, 4);
	assert_int_equal(qr.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);

	/* Two async events: the first read, the second not. */
	sim_event_async(qp->uctx, qp->user_handle, IBV_EVENT_QP_FATAL,
			&qp->async_events_reported);
	assert_true(async_fd >= 0);
	assert_int_equal(recv(async_fd, &ev, sizeof(ev), MSG_DONTWAIT),
			 sizeof(ev));
	assert_int_equal(ev.event_type, IBV_EVENT_QP_FATAL);
	assert_int_equal(ev.element, qp->user_handle);
	sim_event_async(qp->uctx, qp->user_handle, IBV_EVENT_QP_LAST_WQE_REACHED,
			&qp->async_events_reported);
	d.qp_handle = q.handle;
	assert_true(cmd(f, IB_USER_VERBS_CMD_DESTROY_QP, &d, sizeof(d), NULL,
			0, &dr, sizeof(dr)) > 0);
	assert_int_equal(dr.events_reported, 1);
	assert_int_equal(recv(async_fd, &ev, sizeof(ev), MSG_DONTWAIT), -1);
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_QUERY_QP, &qq, sizeof(qq),
			     NULL, 0, &qr, sizeof(qr)), -1);
	assert_int_equal(errno, EINVAL);
	uverbs_close(f);
}

static void test_srq(void **state)
{
	struct ib_uverbs_create_srq c = { 0 };
	struct pvrdma_create_srq u = { 0 };
	struct {
		struct ib_uverbs_create_srq_resp r;
		struct pvrdma_create_srq_resp u;
	} resp;
	struct ib_uverbs_destroy_srq d = { 0 };
	struct ib_uverbs_destroy_srq_resp dr;
	struct sim_file *f;
	struct sim_srq *srq;

	dev_setup(14, false);
	f = open_ctx();
	c.pd_handle = alloc_pd(f, NULL);
	c.max_wr = 16;
	c.max_sge = 1;
	c.srq_limit = 4;
	u.buf_addr = (uintptr_t)page_buf(2 * SIM_PAGE_SIZE);
	u.buf_size = SIM_PAGE_SIZE;		/* no room for WQEs */
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c),
			     &u, sizeof(u), &resp, sizeof(resp)), -1);
	assert_int_equal(errno, EINVAL);
	c.max_wr = 32768 + 1;
	u.buf_size = 2 * SIM_PAGE_SIZE;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c),
			     &u, sizeof(u), &resp, sizeof(resp)), -1);
	assert_int_equal(errno, EINVAL);
	c.max_wr = 16;
	assert_true(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c), &u,
			sizeof(u), &resp, sizeof(resp)) > 0);
	assert_int_equal(resp.r.max_wr, 16);
	srq = sim_table_get(&dev.srqs, resp.u.srqn);
	assert_non_null(srq);
	assert_int_equal(srq->ring.nelems, 16);
	assert_int_equal(srq->ring.elem_size, 32);
	assert_int_equal(srq->limit, 4);
	d.srq_handle = resp.r.srq_handle;
	assert_true(cmd(f, IB_USER_VERBS_CMD_DESTROY_SRQ, &d, sizeof(d), NULL,
			0, &dr, sizeof(dr)) > 0);
	assert_int_equal(dr.events_reported, 0);
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
	assert_true(open_fds() <= before + 1);
	uverbs_close(f);
	close(last_async_fd);
}

/* A ring buffer of almost 4 GiB needs more pages than the page directory
 * holds: refused, not wrapped around to a small page count. */
static void test_ring_size_no_wrap(void **state)
{
	struct ib_uverbs_create_cq c = { .cqe = 4, .comp_channel = -1 };
	struct pvrdma_create_cq u = { 0 };
	struct {
		struct ib_uverbs_create_cq_resp r;
		struct pvrdma_create_cq_resp u;
	} resp;
	const size_t len = 0x100000000ull;
	struct sim_file *f;
	void *p;

	dev_setup(18, false);
	f = open_ctx();
	p = mmap(NULL, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(p != MAP_FAILED);
	u.buf_addr = (uintptr_t)p;
	u.buf_size = 0xffffffffu;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c),
			     &u, sizeof(u), &resp, sizeof(resp)), -1);
	assert_int_equal(errno, EINVAL);
	munmap(p, len);
	uverbs_close(f);
	close(last_async_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_query_device_and_port),
		cmocka_unit_test(test_ex_query_device),
		cmocka_unit_test(test_pd_mr_ownership),
		cmocka_unit_test(test_cq_sizes_and_events),
		cmocka_unit_test(test_qp_create_rules),
		cmocka_unit_test(test_qp_namespaces),
		cmocka_unit_test(test_qp_modify_query_destroy),
		cmocka_unit_test(test_srq),
		cmocka_unit_test(test_uar_mmap),
		cmocka_unit_test(test_comp_channel_churn),
		cmocka_unit_test(test_ring_size_no_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
