// SPDX-License-Identifier: BSD-2-Clause
/*
 * Bad pointers in the uverbs write() ABI: a command buffer, response
 * buffer or vendor udata that is unmapped, read-only or a kernel address
 * is answered with EFAULT (the kernel's copy_from_user/copy_to_user), or
 * EINVAL where vmw_pvrdma answers a failed udata copy so, and nothing is
 * left half-created: the object whose answer could not be written is
 * gone again.
 *
 * Ring buffers in the vmw_pvrdma udata are pinned as ib_umem_get pins
 * them: EFAULT for pages that are not mapped readable and writable (the
 * UAR page, read-only, PROT_NONE, unmapped, kernel); once created, the
 * device works on its own mapping of the pages, which an munmap, an
 * mprotect or a new mapping at the same address does not touch, and a
 * page shared by two rings is one page for both.
 *
 * And what the application leaves unread: taking a destroyed object's
 * events back out of a crowded channel ends, and keeps the rest in order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_device.h"
#include "ring.h"
#include "uverbs_internal.h"
#include "vfs_write.h"

#define KERNEL_ADDR	0xffff888000000000ull

static struct sim_dev dev;
static int async_fd = -1;

/* Two pages: the first read-write, the second inaccessible (PROT_NONE,
 * so that no later mapping lands there), so a buffer can end exactly
 * where usable memory ends. */
static uint8_t *edge;
/* One read-only page. */
static uint8_t *rdonly;

static void dev_setup(void)
{
	free(dev.pds.slot);
	free(dev.mrs.slot);
	free(dev.cqs.slot);
	free(dev.qps.slot);
	free(dev.srqs.slot);
	free(dev.qp_by_qp_handle.slot);
	memset(&dev, 0, sizeof(dev));
	pthread_mutex_init(&dev.lock, NULL);
	dev.cfg.hw_version = 18;
	dev.cfg.mtu = IBV_MTU_1024;
	dev.gid_count = 1;
	fake_device_install();
}

static int setup(void **state)
{
	edge = mmap(NULL, 2 * SIM_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(edge != MAP_FAILED);
	assert_int_equal(mprotect(edge + SIM_PAGE_SIZE, SIM_PAGE_SIZE,
				  PROT_NONE), 0);
	rdonly = mmap(NULL, SIM_PAGE_SIZE, PROT_READ,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(rdonly != MAP_FAILED);
	return 0;
}

/*
 * A legacy command laid out as libibverbs lays it out, placed so that it
 * ends at `end` (NULL: an ordinary buffer): header, core request (starting
 * with .response when resp is set), vendor request.
 */
static ssize_t cmd_at(struct sim_file *f, uint8_t *end, uint32_t command,
		      const void *core, size_t core_len, const void *udata,
		      size_t udata_len, uint64_t resp, size_t resp_len)
{
	static uint8_t local[1024];
	size_t len = sizeof(struct ib_uverbs_cmd_hdr) + core_len + udata_len;
	uint8_t *buf = end ? end - len : local;
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (uint16_t)(len / 4),
		.out_words = (uint16_t)(resp_len / 4),
	};

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), core, core_len);
	if (resp)
		memcpy(buf + sizeof(hdr), &resp, sizeof(resp));
	if (udata_len)
		memcpy(buf + sizeof(hdr) + core_len, udata, udata_len);
	errno = 0;
	return vfs_write(f, buf, len);
}

static struct sim_file *open_ctx(void)
{
	struct ib_uverbs_get_context c = { 0 };
	struct {
		struct ib_uverbs_get_context_resp r;
		struct pvrdma_alloc_ucontext_resp u;
	} resp;
	struct sim_file *f = uverbs_open(&dev, 1000);

	assert_non_null(f);
	/* GET_CONTEXT whose answer cannot be written: no context. */
	assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_GET_CONTEXT, &c,
				sizeof(c), NULL, 0, KERNEL_ADDR,
				sizeof(resp)), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_GET_CONTEXT, &c,
				sizeof(c), NULL, 0, (uintptr_t)&resp,
				sizeof(resp)), 8 + sizeof(c));
	async_fd = (int)resp.r.async_fd;
	return f;
}

static void close_ctx(struct sim_file *f)
{
	uverbs_close(f);
	close(async_fd);
}

static uint32_t alloc_pd(struct sim_file *f)
{
	struct ib_uverbs_alloc_pd c = { 0 };
	struct {
		struct ib_uverbs_alloc_pd_resp r;
		struct pvrdma_alloc_pd_resp u;
	} resp;

	assert_true(cmd_at(f, NULL, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c),
			   NULL, 0, (uintptr_t)&resp, sizeof(resp)) > 0);
	return resp.r.pd_handle;
}

static void *ring(size_t pages)
{
	void *p = mmap(NULL, pages * SIM_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

struct cq_resp {
	struct ib_uverbs_create_cq_resp r;
	struct pvrdma_create_cq_resp u;
};

/* CREATE_CQ of 4 CQEs with its answer written at resp; the errno. */
static int create_cq(struct sim_file *f, uint8_t *end, uint64_t resp,
		     uint32_t *handle)
{
	struct ib_uverbs_create_cq c = { .cqe = 4, .comp_channel = -1 };
	struct pvrdma_create_cq u = { 0 };

	u.buf_addr = (uintptr_t)ring(2);
	u.buf_size = 2 * SIM_PAGE_SIZE;
	if (cmd_at(f, end, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), &u,
		   sizeof(u), resp, sizeof(struct cq_resp)) < 0)
		return errno;
	if (handle)
		*handle = ((struct cq_resp *)(uintptr_t)resp)->r.cq_handle;
	return 0;
}

static int destroy_cq(struct sim_file *f, uint32_t handle)
{
	struct ib_uverbs_destroy_cq c = { .cq_handle = handle };
	struct ib_uverbs_destroy_cq_resp r;

	if (cmd_at(f, NULL, IB_USER_VERBS_CMD_DESTROY_CQ, &c, sizeof(c), NULL,
		   0, (uintptr_t)&r, sizeof(r)) < 0)
		return errno;
	return 0;
}

/* The command buffer itself: NULL, unmapped, a kernel address, or
 * cut short by the end of memory. */
static void test_bad_request(void **state)
{
	struct ib_uverbs_query_device q = { 0 };
	struct ib_uverbs_query_device_resp r;
	struct ib_uverbs_cmd_hdr hdr = {
		.command = IB_USER_VERBS_CMD_QUERY_DEVICE,
		.in_words = (sizeof(hdr) + sizeof(q)) / 4,
		.out_words = sizeof(r) / 4,
	};
	struct sim_file *f;

	dev_setup();
	f = open_ctx();
	errno = 0;
	assert_int_equal(vfs_write(f, NULL, 16), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(vfs_write(f, edge + SIM_PAGE_SIZE, 16), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(vfs_write(f, (void *)(uintptr_t)KERNEL_ADDR, 16),
			 -1);
	assert_int_equal(errno, EFAULT);
	/* The header is readable, the .response that follows is not. */
	memcpy(edge + SIM_PAGE_SIZE - sizeof(hdr), &hdr, sizeof(hdr));
	assert_int_equal(vfs_write(f, edge + SIM_PAGE_SIZE - sizeof(hdr),
				      sizeof(hdr) + sizeof(q)), -1);
	assert_int_equal(errno, EFAULT);
	/* An extended header cut off after the base header. */
	hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
		      IB_USER_VERBS_EX_CMD_QUERY_DEVICE;
	memcpy(edge + SIM_PAGE_SIZE - sizeof(hdr), &hdr, sizeof(hdr));
	assert_int_equal(vfs_write(f, edge + SIM_PAGE_SIZE - sizeof(hdr),
				      64), -1);
	assert_int_equal(errno, EFAULT);
	/* The request runs on beyond what the kernel knows, into memory
	 * that cannot be read. */
	{
		size_t len = sizeof(hdr) + sizeof(q);
		uint8_t *buf = edge + SIM_PAGE_SIZE - len;

		hdr.command = IB_USER_VERBS_CMD_QUERY_DEVICE;
		hdr.in_words = (uint16_t)((len + 8) / 4);
		q.response = (uintptr_t)&r;
		memcpy(buf, &hdr, sizeof(hdr));
		memcpy(buf + sizeof(hdr), &q, sizeof(q));
		assert_int_equal(vfs_write(f, buf, len + 8), -1);
		assert_int_equal(errno, EFAULT);
		q.response = 0;
	}
	/* Still answering. */
	assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_QUERY_DEVICE, &q,
				sizeof(q), NULL, 0, (uintptr_t)&r, sizeof(r)),
			 8 + sizeof(q));
	close_ctx(f);
}

/* Responses nowhere, read-only or kernel: EFAULT, and what the command
 * created is destroyed again (the next one gets the same handle). */
static void test_bad_response(void **state)
{
	struct ib_uverbs_query_device q = { 0 };
	struct ib_uverbs_query_port p = { .port_num = 1 };
	struct cq_resp good;
	uint64_t bad[] = {
		(uintptr_t)(edge + SIM_PAGE_SIZE), (uintptr_t)rdonly,
		KERNEL_ADDR, 1,
	};
	struct sim_file *f;
	uint32_t handle, first;
	size_t i;

	dev_setup();
	f = open_ctx();
	assert_int_equal(create_cq(f, NULL, (uintptr_t)&good, &first), 0);
	assert_int_equal(destroy_cq(f, first), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_QUERY_DEVICE,
					&q, sizeof(q), NULL, 0, bad[i],
					sizeof(struct
					       ib_uverbs_query_device_resp)),
				 -1);
		assert_int_equal(errno, EFAULT);
		assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_QUERY_PORT,
					&p, sizeof(p), NULL, 0, bad[i],
					sizeof(struct
					       ib_uverbs_query_port_resp)),
				 -1);
		assert_int_equal(errno, EFAULT);
		/* vmw_pvrdma copies its udata (after the core response)
		 * first: EINVAL. */
		assert_int_equal(create_cq(f, NULL, bad[i], NULL), EINVAL);
	}
	/* The core response fits, the vendor part runs into unmapped
	 * memory: vmw_pvrdma destroys the CQ and answers EINVAL. */
	assert_int_equal(create_cq(f, NULL, (uintptr_t)(edge + SIM_PAGE_SIZE -
					sizeof(struct ib_uverbs_create_cq_resp)),
				   NULL), EINVAL);
	/* None of them left a CQ behind. */
	assert_int_equal(create_cq(f, NULL, (uintptr_t)&good, &handle), 0);
	assert_int_equal(handle, first);
	assert_int_equal(destroy_cq(f, handle), 0);
	/* A destroy whose answer cannot be written still destroyed. */
	assert_int_equal(create_cq(f, NULL, (uintptr_t)&good, &handle), 0);
	{
		struct ib_uverbs_destroy_cq c = { .cq_handle = handle };

		assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_DESTROY_CQ,
					&c, sizeof(c), NULL, 0, KERNEL_ADDR,
					sizeof(struct
					       ib_uverbs_destroy_cq_resp)),
				 -1);
		assert_int_equal(errno, EFAULT);
		assert_int_equal(destroy_cq(f, handle), ENOENT);
	}
	close_ctx(f);
}

/* The vendor request cut short by unmapped memory, and the QP and SRQ
 * forms of a vendor response that cannot be written. */
static void test_bad_udata(void **state)
{
	struct ib_uverbs_create_cq c = { .cqe = 4, .comp_channel = -1 };
	struct pvrdma_create_cq u = { 0 };
	struct cq_resp good;
	struct sim_file *f;
	uint32_t pd, cq, handle;

	dev_setup();
	f = open_ctx();
	pd = alloc_pd(f);
	u.buf_addr = (uintptr_t)ring(2);
	u.buf_size = 2 * SIM_PAGE_SIZE;
	/* The udata's last bytes lie past the end of memory (the command
	 * says it is longer than what is mapped). */
	{
		size_t len = sizeof(struct ib_uverbs_cmd_hdr) + sizeof(c) +
			     sizeof(u);
		uint8_t *buf = edge + SIM_PAGE_SIZE - len + 8;
		struct ib_uverbs_cmd_hdr hdr = {
			.command = IB_USER_VERBS_CMD_CREATE_CQ,
			.in_words = (uint16_t)(len / 4),
			.out_words = sizeof(good) / 4,
		};

		c.response = (uintptr_t)&good;
		memcpy(buf, &hdr, sizeof(hdr));
		memcpy(buf + sizeof(hdr), &c, sizeof(c));
		memcpy(buf + sizeof(hdr) + sizeof(c), &u, sizeof(u) - 8);
		errno = 0;
		assert_int_equal(vfs_write(f, buf, len), -1);
		assert_int_equal(errno, EFAULT);
	}
	assert_int_equal(create_cq(f, NULL, (uintptr_t)&good, &cq), 0);

	/* QP: vendor response (qpn, qp_handle) into unmapped memory. */
	{
		struct ib_uverbs_create_qp qc = {
			.pd_handle = pd, .send_cq_handle = cq,
			.recv_cq_handle = cq, .max_send_wr = 4,
			.max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
			.qp_type = IBV_QPT_RC,
		};
		struct pvrdma_create_qp qu = { 0 };
		struct {
			struct ib_uverbs_create_qp_resp r;
			struct pvrdma_create_qp_resp u;
		} qr;
		uint64_t at = (uintptr_t)(edge + SIM_PAGE_SIZE - sizeof(qr.r));

		qu.sbuf_addr = (uintptr_t)ring(2);
		qu.sbuf_size = 2 * SIM_PAGE_SIZE;
		qu.rbuf_addr = (uintptr_t)ring(1);
		qu.rbuf_size = SIM_PAGE_SIZE;
		assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_QP,
					&qc, sizeof(qc), &qu, sizeof(qu), at,
					sizeof(qr)), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_QP,
					&qc, sizeof(qc), &qu, sizeof(qu),
					(uintptr_t)rdonly, sizeof(qr)), -1);
		assert_true(errno == EINVAL || errno == EFAULT);
		/* Nothing left: the CQ has no QP holding it. */
		assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_QP,
					&qc, sizeof(qc), &qu, sizeof(qu),
					(uintptr_t)&qr, sizeof(qr)),
				 8 + sizeof(qc) + sizeof(qu));
		handle = qr.r.qp_handle;
		{
			struct ib_uverbs_destroy_qp d = {
				.qp_handle = handle,
			};
			struct ib_uverbs_destroy_qp_resp dr;

			assert_true(cmd_at(f, NULL,
					   IB_USER_VERBS_CMD_DESTROY_QP, &d,
					   sizeof(d), NULL, 0, (uintptr_t)&dr,
					   sizeof(dr)) > 0);
		}
		assert_int_equal(destroy_cq(f, cq), 0);
	}

	/* SRQ: vendor response (srqn) into unmapped memory. */
	{
		struct ib_uverbs_create_srq sc = {
			.pd_handle = pd, .max_wr = 4, .max_sge = 1,
		};
		struct pvrdma_create_srq su = { 0 };
		struct {
			struct ib_uverbs_create_srq_resp r;
			struct pvrdma_create_srq_resp u;
		} sr;
		uint64_t at = (uintptr_t)(edge + SIM_PAGE_SIZE - sizeof(sr.r));
		struct ib_uverbs_dealloc_pd d = { .pd_handle = pd };

		su.buf_addr = (uintptr_t)ring(2);
		su.buf_size = 2 * SIM_PAGE_SIZE;
		assert_int_equal(cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_SRQ,
					&sc, sizeof(sc), &su, sizeof(su), at,
					sizeof(sr)), -1);
		assert_int_equal(errno, EINVAL);
		/* The PD is held by nothing. */
		assert_true(cmd_at(f, NULL, IB_USER_VERBS_CMD_DEALLOC_PD, &d,
				   sizeof(d), NULL, 0, 0, 0) > 0);
	}
	close_ctx(f);
}


/* CREATE_CQ of `cqe` entries on the buffer at addr; the errno. */
static int create_cq_at(struct sim_file *f, uint32_t cqe, uint64_t addr,
			uint32_t size, struct cq_resp *resp)
{
	struct ib_uverbs_create_cq c = { .cqe = cqe, .comp_channel = -1 };
	struct pvrdma_create_cq u = { .buf_addr = addr, .buf_size = size };

	if (cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), &u,
		   sizeof(u), (uintptr_t)resp, sizeof(*resp)) < 0)
		return errno;
	return 0;
}

struct qp_resp {
	struct ib_uverbs_create_qp_resp r;
	struct pvrdma_create_qp_resp u;
};

/* CREATE_QP, 4 WRs of 1 SGE each way, on the given buffers; the errno. */
static int create_qp_at(struct sim_file *f, uint32_t pd, uint32_t cq,
			uint64_t sbuf, uint32_t ssize, uint64_t rbuf,
			uint32_t rsize, struct qp_resp *resp)
{
	struct ib_uverbs_create_qp c = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
		.max_recv_sge = 1, .qp_type = IBV_QPT_RC,
	};
	struct pvrdma_create_qp u = {
		.sbuf_addr = sbuf, .sbuf_size = ssize,
		.rbuf_addr = rbuf, .rbuf_size = rsize,
	};

	if (cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), &u,
		   sizeof(u), (uintptr_t)resp, sizeof(*resp)) < 0)
		return errno;
	return 0;
}

/* Rings the device cannot pin: EFAULT, and nothing is created. */
static void test_ring_unpinnable(void **state)
{
	const uint32_t size = 2 * SIM_PAGE_SIZE;
	struct cq_resp resp;
	struct sim_file *f;
	uint8_t *none, *ro, *gone;
	void *uar;

	dev_setup();
	f = open_ctx();
	none = ring(2);
	assert_int_equal(mprotect(none, size, PROT_NONE), 0);
	ro = ring(2);
	assert_int_equal(mprotect(ro, size, PROT_READ), 0);
	gone = ring(2);
	uar = uverbs_mmap(f, NULL, SIM_PAGE_SIZE, PROT_WRITE, MAP_SHARED, 0);
	assert_true(uar != MAP_FAILED);

	assert_int_equal(create_cq_at(f, 4, (uintptr_t)none, size, &resp),
			 EFAULT);
	assert_int_equal(create_cq_at(f, 4, (uintptr_t)ro, size, &resp),
			 EFAULT);
	/* Unmapped last: a mapping made meanwhile (the first UAR starts a
	 * thread, its stack goes where there is room) could fill the hole. */
	munmap(gone, size);
	assert_int_equal(create_cq_at(f, 4, (uintptr_t)gone, size, &resp),
			 EFAULT);
	assert_int_equal(create_cq_at(f, 4, KERNEL_ADDR, size, &resp),
			 EFAULT);
	assert_int_equal(create_cq_at(f, 4, (uintptr_t)uar, size, &resp),
			 EFAULT);
	/* Only the second page (the CQEs) read-only. */
	{
		uint8_t *half = ring(2);

		assert_int_equal(mprotect(half + SIM_PAGE_SIZE, SIM_PAGE_SIZE,
					  PROT_READ), 0);
		assert_int_equal(create_cq_at(f, 4, (uintptr_t)half, size,
					      &resp), EFAULT);
	}
	/* The read-only buffer is still read-only and unchanged. */
	assert_int_equal(ro[8], 0);
	/* None of them left a CQ behind: the first CQ number is free. */
	assert_int_equal(create_cq_at(f, 4, (uintptr_t)ring(2), size, &resp),
			 0);
	assert_int_equal(resp.u.cqn, 1);
	close_ctx(f);
}

/* After CREATE_CQ the device's pages are its own: the application may
 * unmap, protect or replace its mapping, the device still writes. */
static void test_ring_pinned(void **state)
{
	const uint32_t size = 2 * SIM_PAGE_SIZE;
	struct cq_resp resp;
	struct sim_file *f;
	struct sim_cq *cq;
	uint8_t *buf, *again;

	dev_setup();
	f = open_ctx();
	buf = ring(2);
	buf[SIM_PAGE_SIZE] = 0x77;	/* content survives the pinning */
	assert_int_equal(create_cq_at(f, 4, (uintptr_t)buf, size, &resp), 0);
	cq = sim_table_get(&dev.cqs, resp.u.cqn);
	assert_non_null(cq);
	/* The device's view is not the application's address, but it is
	 * the same memory. */
	assert_true((uint8_t *)cq->ring.state < buf ||
		    (uint8_t *)cq->ring.state >= buf + size);
	assert_int_equal(cq->ring.elems[0], 0x77);
	cq->ring.state->prod_tail = 3;
	assert_int_equal(((struct pvrdma_ring *)(buf + 8))->prod_tail, 3);
	buf[8 + 4] = 2;
	assert_int_equal(cq->ring.state->cons_head, 2);

	/* Protected: the device still writes, the application sees it
	 * once it may look again. */
	assert_int_equal(mprotect(buf, size, PROT_NONE), 0);
	cq->ring.elems[1] = 0x55;
	assert_int_equal(mprotect(buf, size, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(buf[SIM_PAGE_SIZE + 1], 0x55);

	/* Unmapped, and new memory at the same address: the device writes
	 * its own pages, the new mapping stays zero. */
	munmap(buf, size);
	cq->ring.elems[2] = 0x66;
	again = mmap(buf, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_true(again == buf);
	cq->ring.elems[3] = 0x44;
	assert_int_equal(again[SIM_PAGE_SIZE + 2], 0);
	assert_int_equal(again[SIM_PAGE_SIZE + 3], 0);
	assert_int_equal(cq->ring.elems[2], 0x66);
	assert_int_equal(destroy_cq(f, resp.r.cq_handle), 0);
	munmap(again, size);
	close_ctx(f);
}

/* A misaligned buffer: the device's directory starts at the page, so
 * the ring state is at offset 8 of the page, not of the address. A QP
 * whose ring-state page is its CQ's first page shares it with the CQ. */
static void test_ring_layout_and_sharing(void **state)
{
	const uint32_t size = 2 * SIM_PAGE_SIZE;
	struct cq_resp resp;
	struct qp_resp qresp;
	struct sim_file *f;
	struct sim_cq *cq;
	struct sim_qp *qp;
	uint8_t *buf, *rbuf;
	uint32_t pd;

	dev_setup();
	f = open_ctx();
	pd = alloc_pd(f);
	buf = ring(3);
	assert_int_equal(create_cq_at(f, 4, (uintptr_t)buf + 100,
				      size, &resp), 0);
	cq = sim_table_get(&dev.cqs, resp.u.cqn);
	assert_non_null(cq);
	cq->ring.state->prod_tail = 1;
	assert_int_equal(((struct pvrdma_ring *)(buf + 8))->prod_tail, 1);
	cq->ring.state->prod_tail = 0;

	/* The QP's send buffer is the CQ's buffer; its receive buffer
	 * shares the send buffer's last page. */
	rbuf = ring(1);
	assert_int_equal(create_qp_at(f, pd, resp.r.cq_handle, (uintptr_t)buf,
				      2 * SIM_PAGE_SIZE, (uintptr_t)rbuf,
				      SIM_PAGE_SIZE, &qresp), 0);
	qp = sim_table_get(&dev.qp_by_qp_handle, qresp.u.qp_handle);
	assert_non_null(qp);
	/* One page, three views: the QP's receive ring state is the CQ's
	 * ring state, as the hardware would see it. */
	qp->rq.state->prod_tail = 5;
	assert_int_equal(cq->ring.state->prod_tail, 5);
	assert_int_equal(((struct pvrdma_ring *)(buf + 8))->prod_tail, 5);
	qp->sq.elems[0] = 0x31;
	assert_int_equal(cq->ring.elems[0], 0x31);
	assert_int_equal(buf[SIM_PAGE_SIZE], 0x31);
	qp->rq.elems[7] = 0x32;
	assert_int_equal(rbuf[7], 0x32);

	/* Send and receive buffers on the same fresh pages: the receive
	 * ring's first page is the send ring's second (its SQ WQEs). */
	{
		struct qp_resp q2;
		struct sim_qp *qp2;
		uint8_t *both = ring(2);

		assert_int_equal(create_qp_at(f, pd, resp.r.cq_handle,
					      (uintptr_t)both,
					      2 * SIM_PAGE_SIZE,
					      (uintptr_t)both + SIM_PAGE_SIZE,
					      SIM_PAGE_SIZE, &q2), 0);
		qp2 = sim_table_get(&dev.qp_by_qp_handle, q2.u.qp_handle);
		assert_non_null(qp2);
		qp2->rq.elems[3] = 0x47;
		assert_int_equal(qp2->sq.elems[3], 0x47);
		assert_int_equal(both[SIM_PAGE_SIZE + 3], 0x47);
		both[SIM_PAGE_SIZE + 5] = 0x48;
		assert_int_equal(qp2->sq.elems[5], 0x48);
		assert_int_equal(qp2->rq.elems[5], 0x48);
	}
	close_ctx(f);
}

/* More unread completion events than the model once held aside: taking
 * back a destroyed CQ's events must end, and keep the others in order.
 * An alarm turns a hang into a failure. */
static void test_event_reclaim_many(void **state)
{
	struct ib_uverbs_create_comp_channel cc = { 0 };
	struct ib_uverbs_create_comp_channel_resp ccr;
	struct ib_uverbs_create_cq c = { .cqe = 4 };
	struct pvrdma_create_cq u = { .buf_size = 2 * SIM_PAGE_SIZE };
	struct ib_uverbs_comp_event_desc desc;
	struct cq_resp ra, rb;
	struct sim_file *f;
	struct sim_cq *a, *b;
	unsigned int i, sent = 0;

	dev_setup();
	f = open_ctx();
	assert_true(cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL,
			   &cc, sizeof(cc), NULL, 0, (uintptr_t)&ccr,
			   sizeof(ccr)) > 0);
	/* What is left is read without waiting. */
	assert_int_equal(fcntl((int)ccr.fd, F_SETFL, O_NONBLOCK), 0);
	c.comp_channel = (int32_t)ccr.fd;
	c.user_handle = 0xa;
	u.buf_addr = (uintptr_t)ring(2);
	assert_true(cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c),
			   &u, sizeof(u), (uintptr_t)&ra, sizeof(ra)) > 0);
	c.user_handle = 0xb;
	u.buf_addr = (uintptr_t)ring(2);
	assert_true(cmd_at(f, NULL, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c),
			   &u, sizeof(u), (uintptr_t)&rb, sizeof(rb)) > 0);
	a = sim_table_get(&dev.cqs, ra.u.cqn);
	b = sim_table_get(&dev.cqs, rb.u.cqn);
	assert_non_null(a);
	assert_non_null(b);
	/* As many events of A as the pipe takes, one of B. */
	b->armed = SIM_CQ_ARM_NEXT;
	sim_event_comp(b, false);
	for (i = 0; i < 4096; i++) {
		a->armed = SIM_CQ_ARM_NEXT;
		sim_event_comp(a, false);
		if (a->comp_events_reported == sent)
			break;
		sent = a->comp_events_reported;
	}
	/* more than reclaim() first holds aside (64), twice over */
	assert_true(sent > 128);

	alarm(60);
	assert_int_equal(destroy_cq(f, rb.r.cq_handle), 0);
	alarm(0);
	/* A's events are all there, B's is gone. */
	for (i = 0; i < sent; i++) {
		assert_int_equal(read((int)ccr.fd, &desc, sizeof(desc)),
				 sizeof(desc));
		assert_int_equal(desc.cq_handle, 0xa);
	}
	assert_int_equal(read((int)ccr.fd, &desc, sizeof(desc)),
			 -1);
	assert_int_equal(destroy_cq(f, ra.r.cq_handle), 0);
	close_ctx(f);
	close((int)ccr.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_request),
		cmocka_unit_test(test_bad_response),
		cmocka_unit_test(test_bad_udata),
		cmocka_unit_test(test_ring_unpinnable),
		cmocka_unit_test(test_ring_pinned),
		cmocka_unit_test(test_ring_layout_and_sharing),
		cmocka_unit_test(test_event_reclaim_many),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
