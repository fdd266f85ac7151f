// SPDX-License-Identifier: BSD-2-Clause
/*
 * Messages sent on the RoCE v2 wire from memory that faults: the
 * requester's or the responder's registered pages taken away after
 * registration with raw system calls (no hook of the sim sees them; a
 * real adapter's DMA would still reach its pinned pages, the sim's reads
 * must fail instead of faulting). The sending device reads the payload
 * where the application has it (the socket gathers it, the ICRC is
 * computed over it in place), so each case must end in an error
 * completion, never a signal, and the adapter must go on working. (On
 * the sim's own wire a stream's in-place send reads zeros for such pages
 * instead, as fabric_tx.c says: not run there.)
 *
 *   WRITE from a page made PROT_NONE      IBV_WC_LOC_PROT_ERR
 *   SEND from a page unmapped             IBV_WC_LOC_PROT_ERR
 *   READ of a responder's page PROT_NONE  IBV_WC_REM_ACCESS_ERR
 *   WRITE from good memory                IBV_WC_SUCCESS, all in place
 *
 * Each case on a QP pair of its own, of MSG bytes: many packets (the
 * multihost runs take a path MTU of 1024), the bad page in their middle.
 *
 *   send_fault --server --port P [--dev D] [--gid-index G]
 *   send_fault --client --port P [--dev D] [--gid-index G]
 */
#include "e2e_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MSG		65536
#define PAGE		4096
#define BAD_OFF		(8 * PAGE)

enum bad_how { GOOD, BAD_PROT_NONE, BAD_UNMAPPED };

static const struct fault_case {
	const char *what;
	enum ibv_wr_opcode op;
	enum bad_how client_bad;	/* the requester's buffer */
	enum bad_how server_bad;	/* the responder's */
	enum ibv_wc_status want;
} cases[] = {
	{ "WRITE from a page made PROT_NONE", IBV_WR_RDMA_WRITE,
	  BAD_PROT_NONE, GOOD, IBV_WC_LOC_PROT_ERR },
	{ "SEND from a page unmapped", IBV_WR_SEND,
	  BAD_UNMAPPED, GOOD, IBV_WC_LOC_PROT_ERR },
	{ "READ of a responder's page made PROT_NONE", IBV_WR_RDMA_READ,
	  GOOD, BAD_PROT_NONE, IBV_WC_REM_ACCESS_ERR },
	{ "WRITE from good memory", IBV_WR_RDMA_WRITE,
	  GOOD, GOOD, IBV_WC_SUCCESS },
};

/* The kernel's own call: the preloaded library answers syscall(). */
static long raw_syscall3(long nr, long a1, long a2, long a3)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3)
			 : "rcx", "r11", "memory");
	return ret;
}

static void make_bad(uint8_t *page, enum bad_how how)
{
	long r = 0;

	if (how == BAD_PROT_NONE)
		r = raw_syscall3(SYS_mprotect, (long)page, PAGE, PROT_NONE);
	else if (how == BAD_UNMAPPED)
		r = raw_syscall3(SYS_munmap, (long)page, PAGE, 0);
	E2E_CHECK(!r, "raw system call on the page: %s", strerror((int)-r));
}

struct side {
	struct e2e_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct e2e_peer me, peer;
	int sock;
};

static void case_up(struct side *s, const struct e2e_args *args,
		    unsigned int k)
{
	s->cq = ibv_create_cq(s->d.ctx, 8, NULL, NULL, 0);
	E2E_CHECK(s->cq, "ibv_create_cq: %s", strerror(errno));
	s->buf = mmap(NULL, MSG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	E2E_CHECK(s->buf != MAP_FAILED, "mmap: %s", strerror(errno));
	if (args->server)
		memset(s->buf, 0, MSG);
	else
		e2e_pattern(s->buf, MSG, k + 1);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, MSG,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	s->qp = e2e_create_qp(&s->d, IBV_QPT_RC, s->cq, s->cq, 4, 1);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
	s->me.rc_qpn = s->qp->qp_num;
	s->me.psn = (args->server ? 0x1000 : 0x2000) + k;
	s->me.rkey = s->mr->rkey;
	s->me.addr = (uintptr_t)s->buf;
	memcpy(s->me.gid, s->d.gid.raw, 16);
	e2e_exchange(s->sock, &s->me, &s->peer);
	/* no timeout: the NAK is awaited however slow the host */
	e2e_rc_connect(&s->d, s->qp, s->me.psn, &s->peer,
		       &(struct e2e_rc_opts){ .no_timeout = true });
}

static void case_down(struct side *s)
{
	E2E_CHECK(!ibv_destroy_qp(s->qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(s->mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s->cq), "ibv_destroy_cq failed");
	munmap(s->buf, MSG);
}

static void server_case(struct side *s, const struct fault_case *c,
			unsigned int k)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, MSG, s->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad;

	if (c->op == IBV_WR_SEND)
		E2E_CHECK(!ibv_post_recv(s->qp, &rwr, &rbad),
			  "ibv_post_recv failed");
	make_bad(s->buf + BAD_OFF, c->server_bad);
	e2e_sync(s->sock, "ready");
	e2e_sync(s->sock, "done");
	if (c->want == IBV_WC_SUCCESS)
		E2E_CHECK(e2e_pattern_ok(s->buf, MSG, k + 1),
			  "%s: not all in place", c->what);
}

static void client_case(struct side *s, const struct fault_case *c)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, MSG, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = c->op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = s->peer.addr,
			     .rkey = s->peer.rkey },
	}, *bad;
	struct ibv_wc wc;
	int ret;

	make_bad(s->buf + BAD_OFF, c->client_bad);
	e2e_sync(s->sock, "ready");
	ret = ibv_post_send(s->qp, &wr, &bad);
	E2E_CHECK(!ret, "%s: ibv_post_send: %s", c->what, strerror(ret));
	e2e_poll_one(s->cq, &wc, c->what);
	printf("%s: %s\n", c->what, ibv_wc_status_str(wc.status));
	E2E_CHECK(wc.wr_id == 7 && wc.status == c->want,
		  "%s: completed with %s, expected %s", c->what,
		  ibv_wc_status_str(wc.status), ibv_wc_status_str(c->want));
	e2e_sync(s->sock, "done");
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side s;
	unsigned int k;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single, "needs --server or --client");
	memset(&s, 0, sizeof(s));
	s.sock = e2e_channel_open(&args);
	e2e_open(&s.d, args.dev, args.gid_index);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		case_up(&s, &args, k);
		if (args.server)
			server_case(&s, &cases[k], k);
		else
			client_case(&s, &cases[k]);
		case_down(&s);
	}
	e2e_close(&s.d);
	printf("send_fault %s: passed\n", args.server ? "server" : "client");
	return 0;
}
