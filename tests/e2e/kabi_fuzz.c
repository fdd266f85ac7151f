// SPDX-License-Identifier: BSD-2-Clause
/*
 * A deterministic fuzzer of the kernel ABI, run under pvrdma-sim as any
 * application is: raw write() commands on a uverbs file it opened itself,
 * over every command number (legacy and extended, known and unknown), with
 * random headers, sizes and handles, pointers of every kind (valid, NULL,
 * unmapped, read-only, PROT_NONE, straddling the end of memory, kernel,
 * program text, the UAR page, misaligned, random) for the command buffer,
 * the response and the vmw_pvrdma udata (ring buffers included), mutated
 * bytes, doorbells for whatever it created, and ring memory it scribbles
 * on, remaps and unmaps behind the device's back. Every answer must be a
 * byte count or -1 with an errno; the process must not die.
 *
 * Then the device must still work: a new context, two RC QPs connected to
 * each other, a SEND with its payload checked.
 *
 *   kabi_fuzz [--seed N] [--count N] [--dev NAME]
 *
 * Registrations are only given read-write memory or addresses the kernel
 * refuses outright: what a registration over read-only memory does to
 * traffic is memory-region pinning, not the command ABI.
 */
#include "e2e_common.h"
#include "fuzz_rng.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/vmw_pvrdma-abi.h>

#define PAGE		4096u
#define POOL_BUFS	16u
#define POOL_PAGES	8u		/* pages per pool buffer */
#define POOL_BYTES	((size_t)POOL_BUFS * POOL_PAGES * PAGE)
#define KERNEL_ADDR	0xffff888000000000ull
/* Below mmap_min_addr: never mapped. */
#define UNMAPPED_ADDR	0x1000ull
#define REOPEN_EVERY	4000u		/* commands per uverbs file */
#define MAX_KEEP	64u

static bool verbose;		/* KABI_FUZZ_VERBOSE: each command */
static uint8_t port_gid[16];	/* GID 0: fuzzed QPs may reach each other */

struct fuzz {
	const char *dev_path;
	int fd;
	bool have_ctx;
	uint8_t *pool;		/* POOL_BUFS buffers, read-write */
	uint8_t *rings;		/* POOL_BUFS more, for rings (disturbed) */
	uint8_t *rdonly;	/* a read-only page */
	uint8_t *none;		/* a PROT_NONE page */
	uint8_t *edge;		/* read-write page, then a PROT_NONE one */
	void *uar;
	uint32_t handles[MAX_KEEP];	/* uverbs handles answered */
	uint32_t typed[4][MAX_KEEP];	/* PDs, CQs, QPs, SRQs */
	unsigned int ntyped[4];
	uint32_t dev_ids[MAX_KEEP];	/* QP handles / CQNs / SRQNs */
	unsigned int nhandles, nids;
	unsigned long ok, failed;
	unsigned long errnos[160];
	unsigned long answered[2][64];	/* legacy, extended */
};

/* Data: responses, registrations, commands. Never protected, so that
 * what the device moves into registered memory always has a place. */
static uint8_t *pool_buf(struct fuzz *z, unsigned int i)
{
	return z->pool + (size_t)(i % POOL_BUFS) * POOL_PAGES * PAGE;
}

/* Rings: scribbled on, protected, replaced behind the device's back. */
static uint8_t *ring_buf(struct fuzz *z, unsigned int i)
{
	return z->rings + (size_t)(i % POOL_BUFS) * POOL_PAGES * PAGE;
}

enum ptr_kind {
	PTR_VALID, PTR_NULL, PTR_UNMAPPED, PTR_RDONLY, PTR_NONE, PTR_EDGE,
	PTR_KERNEL, PTR_TEXT, PTR_UAR, PTR_MISALIGNED, PTR_RANDOM,
	PTR_KINDS
};

/* An address for `len` bytes: mostly valid memory, else anything. */
static uint64_t pick_ptr(struct fuzz *z, size_t len, unsigned int valid_pct,
			 bool ring)
{
	enum ptr_kind k = chance(valid_pct) ? PTR_VALID :
			  (enum ptr_kind)below(PTR_KINDS);
	uint64_t p = ring ? (uintptr_t)ring_buf(z, below(POOL_BUFS)) :
			    (uintptr_t)pool_buf(z, below(POOL_BUFS));

	switch (k) {
	case PTR_VALID:
		return p;
	case PTR_NULL:
		return 0;
	case PTR_UNMAPPED:
		return UNMAPPED_ADDR + below(PAGE);
	case PTR_RDONLY:
		return (uintptr_t)z->rdonly + below(64) * 8;
	case PTR_NONE:
		return (uintptr_t)z->none + below(PAGE);
	case PTR_EDGE:
		return (uintptr_t)z->edge + PAGE -
		       (len ? below((uint32_t)(len < PAGE ? len : PAGE)) : 0);
	case PTR_KERNEL:
		return KERNEL_ADDR + below(1u << 20) * 8;
	case PTR_TEXT:
		return (uintptr_t)&rnd;
	case PTR_UAR:
		return z->uar ? (uintptr_t)z->uar : 0;
	case PTR_MISALIGNED:
		return p + 1 + below(PAGE - 1);
	default:
		return rnd();
	}
}

enum { H_PD, H_CQ, H_QP, H_SRQ };

/* Mostly a handle of the right kind, else any. */
static uint32_t pick_typed(struct fuzz *z, int type)
{
	if (z->ntyped[type] && chance(85))
		return z->typed[type][below(z->ntyped[type])];
	return chance(50) ? below(8) : (uint32_t)rnd();
}

static uint32_t pick_handle(struct fuzz *z)
{
	if (z->nhandles && chance(80))
		return z->handles[below(z->nhandles)];
	return chance(50) ? below(8) : (uint32_t)rnd();
}

static void keep(uint32_t *arr, unsigned int *n, uint32_t v)
{
	if (*n < MAX_KEEP)
		arr[(*n)++] = v;
	else
		arr[below(MAX_KEEP)] = v;
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t r = 1;

	while (r < v && r < 0x80000000u)
		r <<= 1;
	return r;
}

/* The commands this device implements, with their kernel sizes. */
struct known_cmd {
	uint32_t cmd;
	bool ex;
	size_t req, resp;
};

#define L(c, rq, rs) { IB_USER_VERBS_CMD_##c, false, sizeof(rq), rs }
#define X(c, rq, rs) { IB_USER_VERBS_EX_CMD_##c, true, sizeof(rq), rs }
static const struct known_cmd known[] = {
	L(QUERY_DEVICE, struct ib_uverbs_query_device,
	  sizeof(struct ib_uverbs_query_device_resp)),
	L(QUERY_PORT, struct ib_uverbs_query_port,
	  sizeof(struct ib_uverbs_query_port_resp)),
	L(ALLOC_PD, struct ib_uverbs_alloc_pd,
	  sizeof(struct ib_uverbs_alloc_pd_resp) +
	  sizeof(struct pvrdma_alloc_pd_resp)),
	L(DEALLOC_PD, struct ib_uverbs_dealloc_pd, 0),
	L(REG_MR, struct ib_uverbs_reg_mr,
	  sizeof(struct ib_uverbs_reg_mr_resp)),
	L(DEREG_MR, struct ib_uverbs_dereg_mr, 0),
	L(CREATE_COMP_CHANNEL, struct ib_uverbs_create_comp_channel,
	  sizeof(struct ib_uverbs_create_comp_channel_resp)),
	L(CREATE_CQ, struct ib_uverbs_create_cq, 0),
	L(DESTROY_CQ, struct ib_uverbs_destroy_cq,
	  sizeof(struct ib_uverbs_destroy_cq_resp)),
	L(POLL_CQ, struct ib_uverbs_poll_cq,
	  sizeof(struct ib_uverbs_poll_cq_resp)),
	L(REQ_NOTIFY_CQ, struct ib_uverbs_req_notify_cq, 0),
	L(CREATE_QP, struct ib_uverbs_create_qp, 0),
	L(QUERY_QP, struct ib_uverbs_query_qp,
	  sizeof(struct ib_uverbs_query_qp_resp)),
	L(MODIFY_QP, struct ib_uverbs_modify_qp, 0),
	L(DESTROY_QP, struct ib_uverbs_destroy_qp,
	  sizeof(struct ib_uverbs_destroy_qp_resp)),
	L(CREATE_SRQ, struct ib_uverbs_create_srq, 0),
	L(MODIFY_SRQ, struct ib_uverbs_modify_srq, 0),
	L(QUERY_SRQ, struct ib_uverbs_query_srq,
	  sizeof(struct ib_uverbs_query_srq_resp)),
	L(DESTROY_SRQ, struct ib_uverbs_destroy_srq,
	  sizeof(struct ib_uverbs_destroy_srq_resp)),
	L(DESTROY_AH, struct ib_uverbs_destroy_ah, 0),
	L(GET_CONTEXT, struct ib_uverbs_get_context,
	  sizeof(struct ib_uverbs_get_context_resp)),
	X(QUERY_DEVICE, struct ib_uverbs_ex_query_device,
	  sizeof(struct ib_uverbs_ex_query_device_resp)),
	X(CREATE_CQ, struct ib_uverbs_ex_create_cq, 0),
	X(CREATE_QP, struct ib_uverbs_ex_create_qp, 0),
	X(MODIFY_QP, struct ib_uverbs_ex_modify_qp, 0),
};
#undef L
#undef X

/* Legacy commands whose request starts with .response. */
static bool has_response(uint32_t cmd)
{
	switch (cmd) {
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DESTROY_AH:
	case IB_USER_VERBS_CMD_DEREG_MR:
	case IB_USER_VERBS_CMD_REQ_NOTIFY_CQ:
	case IB_USER_VERBS_CMD_MODIFY_QP:
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
		return false;
	default:
		return true;
	}
}

/* A ring buffer: mostly a pool buffer the right size, else anything. */
static void pick_ring(struct fuzz *z, uint64_t need, __u64 *addr,
		      __u32 *size)
{
	*addr = pick_ptr(z, need, 75, true);
	if (need > POOL_PAGES * PAGE)
		need = POOL_PAGES * PAGE;
	*size = chance(85) ? (uint32_t)((need + PAGE - 1) & ~(PAGE - 1)) :
		(chance(50) ? (uint32_t)rnd() : below(4 * PAGE));
}

/* The core request and the udata of one command, plausible but random. */
static size_t fill_request(struct fuzz *z, uint32_t cmd, bool ex,
			   uint8_t *core, size_t *core_len, uint8_t *udata,
			   size_t *udata_len, size_t *resp_len)
{
	uint32_t *w = (uint32_t *)core;
	size_t i;

	/* Defaults: random words, random lengths. */
	*core_len = 8 * below(20);
	*udata_len = chance(30) ? 8 * below(8) : 0;
	*resp_len = 8 * below(40);
	for (i = 0; i < 256 / 4; i++)
		w[i] = chance(60) ? below(16) : (uint32_t)rnd();
	for (i = 0; i < 64; i++)
		udata[i] = (uint8_t)rnd();

	switch (ex ? 0x100 | cmd : cmd) {
	case IB_USER_VERBS_CMD_CREATE_CQ:
	case 0x100 | IB_USER_VERBS_EX_CMD_CREATE_CQ: {
		struct ib_uverbs_create_cq *c = (void *)core;
		struct pvrdma_create_cq *u = (void *)udata;
		uint32_t cqe = chance(80) ? 1 + below(128) : (uint32_t)rnd();

		memset(c, 0, sizeof(*c));
		c->user_handle = rnd();
		c->cqe = cqe;
		c->comp_vector = chance(90) ? 0 : below(4);
		c->comp_channel = chance(80) ? -1 : (int32_t)below(64);
		pick_ring(z, PAGE + (uint64_t)pow2_at_least(cqe) * 64,
			  &u->buf_addr, &u->buf_size);
		*core_len = ex ? sizeof(struct ib_uverbs_ex_create_cq) :
				 sizeof(*c);
		*udata_len = sizeof(*u);
		*resp_len = sizeof(struct ib_uverbs_ex_create_cq_resp) +
			    sizeof(struct pvrdma_create_cq_resp);
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_QP:
	case 0x100 | IB_USER_VERBS_EX_CMD_CREATE_QP: {
		struct ib_uverbs_create_qp *c = (void *)core;
		struct pvrdma_create_qp *u = (void *)udata;
		uint32_t swr = 1 + below(32), rwr = 1 + below(32);
		uint32_t ssge = 1 + below(4), rsge = 1 + below(4);

		memset(c, 0, sizeof(struct ib_uverbs_ex_create_qp));
		memset(u, 0, sizeof(*u));
		c->user_handle = rnd();
		c->pd_handle = pick_typed(z, H_PD);
		c->send_cq_handle = pick_typed(z, H_CQ);
		c->recv_cq_handle = chance(70) ? c->send_cq_handle :
						 pick_typed(z, H_CQ);
		c->srq_handle = pick_typed(z, H_SRQ);
		c->is_srq = chance(20);
		c->max_send_wr = chance(90) ? swr : (uint32_t)rnd();
		c->max_recv_wr = chance(90) ? rwr : (uint32_t)rnd();
		c->max_send_sge = ssge;
		c->max_recv_sge = rsge;
		c->qp_type = chance(85) ? (chance(80) ? IBV_QPT_RC :
					   IBV_QPT_UD) : (uint8_t)below(16);
		pick_ring(z, PAGE + (uint64_t)pow2_at_least(swr) *
			  pow2_at_least(16 * (uint32_t)
					sizeof(struct pvrdma_sq_wqe_hdr) / 16 +
					16 * ssge),
			  &u->sbuf_addr, &u->sbuf_size);
		pick_ring(z, (uint64_t)pow2_at_least(rwr) *
			  pow2_at_least((uint32_t)
					sizeof(struct pvrdma_rq_wqe_hdr) +
					16 * rsge),
			  &u->rbuf_addr, &u->rbuf_size);
		/* Now and then the send ring inside another ring. */
		if (chance(5))
			u->sbuf_addr = u->rbuf_addr;
		*core_len = ex ? sizeof(struct ib_uverbs_ex_create_qp) :
				 sizeof(*c);
		*udata_len = sizeof(*u);
		*resp_len = sizeof(struct ib_uverbs_ex_create_qp_resp) +
			    sizeof(struct pvrdma_create_qp_resp);
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_SRQ: {
		struct ib_uverbs_create_srq *c = (void *)core;
		struct pvrdma_create_srq *u = (void *)udata;
		uint32_t wr = 1 + below(32), sge = 1 + below(4);

		memset(c, 0, sizeof(*c));
		c->user_handle = rnd();
		c->pd_handle = pick_typed(z, H_PD);
		c->max_wr = chance(90) ? wr : (uint32_t)rnd();
		c->max_sge = sge;
		c->srq_limit = below(4);
		pick_ring(z, PAGE + (uint64_t)pow2_at_least(wr) *
			  pow2_at_least((uint32_t)
					sizeof(struct pvrdma_rq_wqe_hdr) +
					16 * sge),
			  &u->buf_addr, &u->buf_size);
		*core_len = sizeof(*c);
		*udata_len = sizeof(*u);
		*resp_len = sizeof(struct ib_uverbs_create_srq_resp) +
			    sizeof(struct pvrdma_create_srq_resp);
		break;
	}
	case IB_USER_VERBS_CMD_REG_MR: {
		struct ib_uverbs_reg_mr *c = (void *)core;

		memset(c, 0, sizeof(*c));
		/* read-write memory or what the kernel refuses at once */
		c->start = chance(80) ? (uintptr_t)pool_buf(z, below(POOL_BUFS))
					+ below(PAGE) :
			   (chance(50) ? KERNEL_ADDR : UNMAPPED_ADDR);
		c->length = chance(90) ? 1 + below(POOL_PAGES * PAGE / 2) :
					 rnd();
		c->hca_va = chance(80) ? c->start : rnd();
		c->pd_handle = pick_typed(z, H_PD);
		c->access_flags = below(32);
		*core_len = sizeof(*c);
		*resp_len = sizeof(struct ib_uverbs_reg_mr_resp);
		break;
	}
	case IB_USER_VERBS_CMD_MODIFY_QP:
	case 0x100 | IB_USER_VERBS_EX_CMD_MODIFY_QP: {
		struct ib_uverbs_modify_qp *c = (void *)core;

		/* The masks of the usual transitions, or anything. */
		static const uint32_t masks[] = {
			IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS,
			IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER,
			IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				IBV_QP_MAX_QP_RD_ATOMIC,
			IBV_QP_STATE,
		};
		unsigned int t = below(4);

		memset(c, 0, sizeof(*c));
		c->qp_handle = pick_typed(z, H_QP);
		c->attr_mask = chance(70) ? masks[t] :
			       (chance(50) ? (uint32_t)rnd() & 0x1fffff :
				(1u << below(21)) | 1u);
		c->qp_state = chance(70) ? (t == 3 ? (chance(50) ?
			IBV_QPS_ERR : IBV_QPS_RESET) : IBV_QPS_INIT + t) :
			below(8);
		c->cur_qp_state = below(8);
		c->qp_access_flags = below(16);
		c->max_dest_rd_atomic = below(2);
		c->max_rd_atomic = below(2);
		c->timeout = below(32);
		c->retry_cnt = below(8);
		c->rnr_retry = below(8);
		c->min_rnr_timer = below(32);
		c->dest.hop_limit = 1;
		if (chance(80))
			memcpy(c->dest.dgid, port_gid, 16);
		c->port_num = chance(90) ? 1 : (uint8_t)rnd();
		c->dest.port_num = chance(90) ? 1 : (uint8_t)rnd();
		c->dest.is_global = chance(90);
		c->dest.sgid_index = below(3);
		c->dest_qp_num = z->nids ? z->dev_ids[below(z->nids)] :
					   (uint32_t)rnd();
		c->path_mtu = below(7);
		*core_len = sizeof(*c);
		*resp_len = ex ? sizeof(struct ib_uverbs_ex_modify_qp_resp) :
				 0;
		break;
	}
	default: {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (known[i].cmd == cmd && known[i].ex == ex) {
				*core_len = (known[i].req + 7) & ~(size_t)7;
				*resp_len = known[i].resp;
				*udata_len = 0;
			}
		}
		/* Handles where most commands keep them. */
		w[0] = pick_handle(z);
		w[2] = pick_handle(z);
		w[3] = pick_handle(z);
		break;
	}
	}
	/* The extended CREATE_CQ/CREATE_QP are the legacy ones without
	 * .response, plus words at the end. */
	if (ex && (cmd == IB_USER_VERBS_EX_CMD_CREATE_CQ ||
		   cmd == IB_USER_VERBS_EX_CMD_CREATE_QP)) {
		size_t extra = cmd == IB_USER_VERBS_EX_CMD_CREATE_CQ ? 12 : 16;

		memmove(core, core + 8, 256 - 8);
		memset(core + *core_len - extra, 0, extra);
	}
	/* Mutations: a byte here and there, a length off by a word. */
	if (chance(10))
		core[below((uint32_t)(*core_len ? *core_len : 1))] =
			(uint8_t)rnd();
	if (chance(10))
		udata[below(64)] = (uint8_t)rnd();
	if (chance(5) && *core_len >= 8)
		*core_len -= 8;
	if (chance(5))
		*core_len += 8;
	if (chance(5))
		*resp_len = 8 * below(40);
	return *core_len;
}

/* Places the command at a kind of address and writes it. */
static ssize_t send_cmd(struct fuzz *z, const uint8_t *cmd, size_t len,
			size_t claimed)
{
	uint8_t *at = pool_buf(z, POOL_BUFS - 1) + POOL_PAGES * PAGE / 2;

	switch (chance(90) ? 0 : below(6)) {
	case 1:
		return write(z->fd, NULL, claimed);
	case 2:
		return write(z->fd, (void *)(uintptr_t)KERNEL_ADDR, claimed);
	case 3:
		return write(z->fd, z->none, claimed);
	case 4:
		/* cut short by the end of memory */
		if (len > PAGE)
			break;
		memcpy(z->edge + PAGE - len, cmd, len);
		return write(z->fd, z->edge + PAGE - len + (len ? below(8) : 0),
			     claimed);
	case 5:
		/* a read-only command is fine to read */
		if (len > PAGE)
			break;
		mprotect(z->rdonly, PAGE, PROT_READ | PROT_WRITE);
		memcpy(z->rdonly, cmd, len);
		mprotect(z->rdonly, PAGE, PROT_READ);
		return write(z->fd, z->rdonly, claimed);
	default:
		break;
	}
	memcpy(at, cmd, len);
	return write(z->fd, at, claimed);
}

/* Answers may sit at any (misaligned) address. */
static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* What a successful answer tells: handles to reuse, fds to close. */
static void harvest(struct fuzz *z, uint32_t cmd, bool ex, uint64_t resp,
		    size_t core_resp)
{
	uint8_t *lo = z->pool, *hi = z->pool + POOL_BYTES;
	uint8_t *r = (uint8_t *)(uintptr_t)resp;

	if (r < lo || r + 64 > hi)
		return;		/* not ours to read */
	if (ex && cmd == IB_USER_VERBS_EX_CMD_CREATE_CQ) {
		uint32_t cq = load32(r + offsetof(struct ib_uverbs_ex_create_cq_resp,
						  base.cq_handle));

		keep(z->handles, &z->nhandles, cq);
		keep(z->typed[H_CQ], &z->ntyped[H_CQ], cq);
		return;
	}
	if (ex && cmd == IB_USER_VERBS_EX_CMD_CREATE_QP) {
		uint32_t qp = load32(r + offsetof(struct ib_uverbs_ex_create_qp_resp,
						  base.qp_handle));

		keep(z->handles, &z->nhandles, qp);
		keep(z->typed[H_QP], &z->ntyped[H_QP], qp);
		keep(z->dev_ids, &z->nids,
		     load32(r + offsetof(struct ib_uverbs_ex_create_qp_resp,
					 base.qpn)));
		return;
	}
	if (ex)
		return;
	switch (cmd) {
	case IB_USER_VERBS_CMD_ALLOC_PD:
	case IB_USER_VERBS_CMD_CREATE_CQ:
	case IB_USER_VERBS_CMD_CREATE_QP:
	case IB_USER_VERBS_CMD_CREATE_SRQ:
	case IB_USER_VERBS_CMD_REG_MR:
		keep(z->handles, &z->nhandles, load32(r));
		if (cmd == IB_USER_VERBS_CMD_ALLOC_PD)
			keep(z->typed[H_PD], &z->ntyped[H_PD], load32(r));
		if (cmd == IB_USER_VERBS_CMD_CREATE_CQ)
			keep(z->typed[H_CQ], &z->ntyped[H_CQ], load32(r));
		if (cmd == IB_USER_VERBS_CMD_CREATE_QP)
			keep(z->typed[H_QP], &z->ntyped[H_QP], load32(r));
		if (cmd == IB_USER_VERBS_CMD_CREATE_SRQ)
			keep(z->typed[H_SRQ], &z->ntyped[H_SRQ],
			     load32(r));
		if (cmd == IB_USER_VERBS_CMD_CREATE_CQ)
			keep(z->dev_ids, &z->nids,
			     load32(r + sizeof(struct
					       ib_uverbs_create_cq_resp)));
		if (cmd == IB_USER_VERBS_CMD_CREATE_QP && core_resp >=
		    sizeof(struct ib_uverbs_create_qp_resp) + 8)
			keep(z->dev_ids, &z->nids,
			     load32(r + sizeof(struct
					       ib_uverbs_create_qp_resp) + 4));
		break;
	case IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL:
		if (load32(r) > 2 && (int)load32(r) != z->fd)
			close((int)load32(r));
		break;
	default:
		break;
	}
}

static void reopen(struct fuzz *z)
{
	if (z->fd >= 0) {
		if (z->uar)
			munmap(z->uar, PAGE);
		close(z->fd);
	}
	z->uar = NULL;
	z->nhandles = 0;
	z->nids = 0;
	memset(z->ntyped, 0, sizeof(z->ntyped));
	z->have_ctx = false;
	z->fd = open(z->dev_path, O_RDWR | O_CLOEXEC);
	E2E_CHECK(z->fd >= 0, "open %s: %s", z->dev_path, strerror(errno));
}

/* The context most commands need, and the UAR page. */
static void get_context(struct fuzz *z)
{
	struct {
		struct ib_uverbs_cmd_hdr h;
		struct ib_uverbs_get_context c;
	} cmd = { { IB_USER_VERBS_CMD_GET_CONTEXT, sizeof(cmd) / 4, 0 }, {} };
	struct {
		struct ib_uverbs_get_context_resp r;
		struct pvrdma_alloc_ucontext_resp u;
	} resp;
	void *uar;

	cmd.h.out_words = sizeof(resp) / 4;
	cmd.c.response = (uintptr_t)&resp;
	if (write(z->fd, &cmd, sizeof(cmd)) == sizeof(cmd)) {
		close((int)resp.r.async_fd);
	} else {
		/* a fuzzed GET_CONTEXT got there first */
		E2E_CHECK(errno == EINVAL, "GET_CONTEXT: %s",
			  strerror(errno));
	}
	z->have_ctx = true;
	uar = mmap(NULL, PAGE, PROT_WRITE, MAP_SHARED, z->fd, 0);
	z->uar = uar == MAP_FAILED ? NULL : uar;
}

/* Doorbells for what exists (and what does not). */
static void ring_doorbell(struct fuzz *z)
{
	static const uint32_t offs[] = {
		PVRDMA_UAR_QP_OFFSET, PVRDMA_UAR_CQ_OFFSET,
		PVRDMA_UAR_SRQ_OFFSET,
	};
	uint32_t id = z->nids && chance(80) ? z->dev_ids[below(z->nids)] :
		      below(64);
	uint32_t v = (id & PVRDMA_UAR_HANDLE_MASK) |
		     ((uint32_t)below(4) << 30);

	if (!z->uar)
		return;
	*(volatile uint32_t *)((uint8_t *)z->uar + offs[below(3)]) = v;
}

/* Ring memory changes under the device: scribbles, remaps, unmaps. */
static void disturb_rings(struct fuzz *z)
{
	uint8_t *b = ring_buf(z, below(POOL_BUFS));
	uint32_t pg = below(POOL_PAGES);
	void *p;

	switch (below(4)) {
	case 0:	/* a fresh page where the old one was */
		p = mmap(b + pg * PAGE, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		E2E_CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
		break;
	case 1:	/* protected for a while */
		mprotect(b + pg * PAGE, PAGE, PROT_READ);
		break;
	case 2:
		mprotect(b + pg * PAGE, PAGE, PROT_READ | PROT_WRITE);
		break;
	default: {	/* ring indices and WQEs: anything */
		uint32_t *w;
		int i;

		if (mprotect(b + pg * PAGE, PAGE, PROT_READ | PROT_WRITE))
			break;
		w = (uint32_t *)(b + pg * PAGE);
		for (i = 0; i < 8; i++)
			w[below(PAGE / 4)] = chance(50) ? below(64) :
							  (uint32_t)rnd();
		/* the ring indices at the start of a state page */
		if (chance(70))
			w[below(4)] = chance(80) ? below(64) :
						   (uint32_t)rnd();
		break;
	}
	}
}

static void fuzz_one(struct fuzz *z)
{
	static uint8_t buf[2048];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	uint8_t core[256], udata[64];
	size_t core_len, udata_len, resp_len, len, claimed, hdr_len;
	uint32_t cmd;
	uint64_t resp;
	bool ex;
	ssize_t n;

	if (chance(3)) {
		if (verbose)
			fprintf(stderr, "doorbell\n");
		ring_doorbell(z);
		return;
	}
	if (chance(2)) {
		if (verbose)
			fprintf(stderr, "disturb\n");
		disturb_rings(z);
		return;
	}
	if (chance(85)) {
		const struct known_cmd *k =
			&known[below(sizeof(known) / sizeof(known[0]))];

		cmd = k->cmd;
		ex = k->ex;
	} else {
		ex = chance(20);
		cmd = chance(90) ? below(ex ? 12 : 40) : below(256);
	}
	fill_request(z, cmd, ex, core, &core_len, udata, &udata_len,
		     &resp_len);
	resp = pick_ptr(z, resp_len, 80, false);

	memset(buf, 0, sizeof(buf));
	if (ex) {
		struct ib_uverbs_ex_cmd_hdr *x = (void *)(h + 1);

		h->command = IB_USER_VERBS_CMD_FLAG_EXTENDED | cmd;
		h->in_words = (uint16_t)(core_len / 8);
		h->out_words = (uint16_t)(resp_len / 8);
		x->response = resp;
		x->provider_in_words = (uint16_t)(udata_len / 8);
		x->provider_out_words = chance(80) ? 1 : (uint16_t)below(4);
		x->cmd_hdr_reserved = chance(95) ? 0 : (uint32_t)rnd();
		hdr_len = sizeof(*h) + sizeof(*x);
	} else {
		h->command = cmd;
		if (has_response(cmd))
			memcpy(core, &resp, sizeof(resp));
		h->out_words = (uint16_t)(resp_len / 4);
		hdr_len = sizeof(*h);
	}
	memcpy(buf + hdr_len, core, core_len);
	memcpy(buf + hdr_len + core_len, udata, udata_len);
	len = hdr_len + core_len + udata_len;
	if (!ex)
		h->in_words = (uint16_t)(len / 4);
	if (chance(3))
		h->in_words = (uint16_t)rnd();
	if (chance(3))
		h->out_words = (uint16_t)rnd();
	if (chance(2))
		h->command ^= 1u << below(32);
	claimed = chance(95) ? len : below(2 * (uint32_t)len + 8);
	if (claimed > len && claimed > sizeof(buf))
		claimed = len;

	if (verbose)
		fprintf(stderr, "cmd %#x in %u out %u len %zu claimed %zu "
			"resp %#" PRIx64 "\n", h->command, h->in_words,
			h->out_words, len, claimed, resp);
	errno = 0;
	n = send_cmd(z, buf, len, claimed);
	if (n >= 0) {
		E2E_CHECK((size_t)n == claimed, "command %#x answered %zd of %zu",
			  h->command, n, claimed);
		z->ok++;
		z->answered[!!(h->command & IB_USER_VERBS_CMD_FLAG_EXTENDED)]
			   [h->command & 63]++;
		/* Only an answer to the command meant is read: closing
		 * what another command left there would close fds at
		 * random, the sim's own among them. */
		if (h->command == ((ex ? IB_USER_VERBS_CMD_FLAG_EXTENDED : 0) |
				   cmd))
			harvest(z, cmd, ex, resp, resp_len);
	} else {
		E2E_CHECK(errno > 0 && errno < 160, "command %#x: errno %d",
			  h->command, errno);
		z->failed++;
		z->errnos[errno]++;
	}
}

/* The device afterwards: a fresh context, two RC QPs talking. */
static void traffic_check(const char *dev_name)
{
	struct e2e_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *mr;
	struct e2e_peer pa = { 0 }, pb = { 0 };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { 0 }, *bad_r;
	struct ibv_send_wr swr = { 0 }, *bad_s;
	struct ibv_wc wc;
	uint8_t *buf = calloc(1, 8192);
	int i;

	E2E_CHECK(buf, "calloc");
	e2e_open(&d, dev_name, 0);
	cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
	E2E_CHECK(cq, "ibv_create_cq: %s", strerror(errno));
	qa = e2e_create_qp(&d, IBV_QPT_RC, cq, cq, 8, 1);
	qb = e2e_create_qp(&d, IBV_QPT_RC, cq, cq, 8, 1);
	mr = ibv_reg_mr(d.pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	pa.rc_qpn = qa->qp_num;
	pa.psn = 100;
	memcpy(pa.gid, d.gid.raw, 16);
	pb = pa;
	pb.rc_qpn = qb->qp_num;
	pb.psn = 200;
	e2e_qp_to_init(qa, IBV_QPT_RC);
	e2e_qp_to_init(qb, IBV_QPT_RC);
	e2e_rc_connect(&d, qa, pa.psn, &pb, NULL);
	e2e_rc_connect(&d, qb, pb.psn, &pa, NULL);

	for (i = 0; i < 4; i++) {
		sge = (struct ibv_sge){ (uintptr_t)buf + 4096, 4096,
					mr->lkey };
		rwr.wr_id = 1;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		E2E_CHECK(!ibv_post_recv(qb, &rwr, &bad_r), "post_recv");
		e2e_pattern(buf, 4096, (unsigned int)i);
		sge = (struct ibv_sge){ (uintptr_t)buf, 4096, mr->lkey };
		swr.wr_id = 2;
		swr.sg_list = &sge;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		E2E_CHECK(!ibv_post_send(qa, &swr, &bad_s), "post_send");
		e2e_poll_one(cq, &wc, "first completion");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS, "status %d",
			  wc.status);
		e2e_poll_one(cq, &wc, "second completion");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS, "status %d",
			  wc.status);
		E2E_CHECK(e2e_pattern_ok(buf + 4096, 4096, (unsigned int)i),
			  "payload %d differs", i);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	e2e_close(&d);
	free(buf);
}

int main(int argc, char **argv)
{
	struct fuzz z = { .fd = -1 };
	unsigned long count = 100000, i;
	uint64_t seed = 1;
	const char *dev_name = NULL;
	char path[96];
	int a, e;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = strtoull(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--count") && a + 1 < argc)
			count = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--dev") && a + 1 < argc)
			dev_name = argv[++a];
		else
			E2E_CHECK(0, "usage: kabi_fuzz [--seed N] "
				  "[--count N] [--dev NAME]");
	}
	rng_state = seed;
	verbose = getenv("KABI_FUZZ_VERBOSE") != NULL;
	/* The uverbs file of the device, as libibverbs finds it. */
	{
		struct ibv_device **list = ibv_get_device_list(NULL);
		struct ibv_device *dev = NULL;

		E2E_CHECK(list && list[0], "no RDMA device");
		for (a = 0; list[a]; a++)
			if (!dev_name ||
			    !strcmp(ibv_get_device_name(list[a]), dev_name))
				dev = list[a];
		E2E_CHECK(dev, "device not found");
		snprintf(path, sizeof(path), "/dev/infiniband/%s",
			 dev->dev_name);
		{
			struct ibv_context *ctx = ibv_open_device(dev);
			union ibv_gid gid;

			E2E_CHECK(ctx, "ibv_open_device: %s",
				  strerror(errno));
			E2E_CHECK(!ibv_query_gid(ctx, 1, 0, &gid),
				  "ibv_query_gid");
			memcpy(port_gid, gid.raw, 16);
			ibv_close_device(ctx);
		}
		ibv_free_device_list(list);
	}
	z.dev_path = path;

	/*
	 * Each pool ends in a PROT_NONE page. The device writes as much as
	 * a command says it may, as the kernel does: an answer or a ring
	 * running past a pool must meet the guard, not the program's (or
	 * the sim's) own memory, which a kernel would overwrite just the
	 * same.
	 */
	z.pool = mmap(NULL, POOL_BYTES + PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	z.rings = mmap(NULL, POOL_BYTES + PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	z.rdonly = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	z.none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	/* read-write, then PROT_NONE */
	z.edge = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	E2E_CHECK(z.pool != MAP_FAILED && z.rings != MAP_FAILED &&
		  z.rdonly != MAP_FAILED &&
		  z.none != MAP_FAILED && z.edge != MAP_FAILED, "mmap");
	mprotect(z.edge + PAGE, PAGE, PROT_NONE);
	mprotect(z.pool + POOL_BYTES, PAGE, PROT_NONE);
	mprotect(z.rings + POOL_BYTES, PAGE, PROT_NONE);

	for (i = 0; i < count; i++) {
		if (i % REOPEN_EVERY == 0)
			reopen(&z);
		if (!z.have_ctx && chance(95))
			get_context(&z);
		fuzz_one(&z);
	}
	if (z.uar)
		munmap(z.uar, PAGE);
	close(z.fd);

	printf("kabi_fuzz: seed %" PRIu64 ", %lu commands: %lu answered, "
	       "%lu refused\n", seed, count, z.ok, z.failed);
	for (e = 1; e < 160; e++)
		if (z.errnos[e])
			printf("  %-12s %lu\n", e2e_errno_name(e), z.errnos[e]);
	for (e = 0; e < 128; e++)
		if (z.answered[e / 64][e % 64])
			printf("  %s command %2d answered %lu\n",
			       e / 64 ? "extended" : "legacy", e % 64,
			       z.answered[e / 64][e % 64]);
	traffic_check(dev_name);
	printf("kabi_fuzz: traffic after the fuzzing: passed\n");
	return 0;
}
