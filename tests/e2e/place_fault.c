// SPDX-License-Identifier: BSD-2-Clause
/*
 * A WRITE whose target memory faults in its middle, between three
 * WRITEs of many packets each: the responder fails the packet that
 * faulted and acknowledges nothing after it, however its packets were
 * placed (one copy each, or a run of them with one copy, as the sim does
 * on the RoCE wire).
 *
 * The server registers three regions of REGION bytes, then makes one
 * page in the middle of the second read-only behind the MR's back
 * (mprotect: a real adapter's DMA would not see it; the sim's copy
 * does, and must fail the WRITE as a bad access). The client posts
 * WRITEs A, B and C to the three regions at once, and checks:
 *
 *   A  IBV_WC_SUCCESS       its bytes all at the server
 *   B  IBV_WC_REM_ACCESS_ERR  (an ACK past the fault would complete it
 *                           with success); its bytes before the page
 *                           there, none after it
 *   C  IBV_WC_WR_FLUSH_ERR  none of its bytes at the server
 *
 *   place_fault --server --port P [--dev D] [--gid-index G]
 *   place_fault --client --port P [--dev D] [--gid-index G]
 */
#include "e2e_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define REGION		65536
#define PAGE		4096
/* The page of region B made read-only: its ninth. */
#define BAD_OFF		(8 * PAGE)

struct side {
	struct e2e_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct e2e_peer me, peer;
	int sock;
};

static void setup(struct side *s, const struct e2e_args *args)
{
	e2e_open(&s->d, args->dev, args->gid_index);
	s->cq = ibv_create_cq(s->d.ctx, 16, NULL, NULL, 0);
	E2E_CHECK(s->cq, "ibv_create_cq: %s", strerror(errno));
	s->buf = mmap(NULL, 3 * REGION, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	E2E_CHECK(s->buf != MAP_FAILED, "mmap: %s", strerror(errno));
	if (args->server)
		memset(s->buf, 0, 3 * REGION);
	else
		for (int i = 0; i < 3; i++)
			e2e_pattern(s->buf + i * REGION, REGION, i + 1);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, 3 * REGION,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	s->qp = e2e_create_qp(&s->d, IBV_QPT_RC, s->cq, s->cq, 8, 1);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
	s->me.rc_qpn = s->qp->qp_num;
	s->me.psn = args->server ? 0x4242 : 0xfffff0;	/* wraps in B */
	s->me.rkey = s->mr->rkey;
	s->me.addr = (uintptr_t)s->buf;
	memcpy(s->me.gid, s->d.gid.raw, 16);
	e2e_exchange(s->sock, &s->me, &s->peer);
	/* no timeout: the NAK is awaited however slow the host */
	e2e_rc_connect(&s->d, s->qp, s->me.psn, &s->peer,
		       &(struct e2e_rc_opts){ .no_timeout = true });
}

static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static int server(struct side *s)
{
	uint8_t *b = s->buf + REGION, *want;
	struct ibv_wc wc;

	E2E_CHECK(!mprotect(b + BAD_OFF, PAGE, PROT_READ),
		  "mprotect: %s", strerror(errno));
	e2e_sync(s->sock, "ready");
	e2e_sync(s->sock, "done");
	E2E_CHECK(!mprotect(b + BAD_OFF, PAGE, PROT_READ | PROT_WRITE),
		  "mprotect: %s", strerror(errno));
	E2E_CHECK(e2e_pattern_ok(s->buf, REGION, 1),
		  "WRITE A (completed) is not all in place");
	want = malloc(REGION);
	E2E_CHECK(want, "out of memory");
	e2e_pattern(want, REGION, 2);
	E2E_CHECK(!memcmp(b, want, BAD_OFF),
		  "WRITE B: the bytes before the bad page are not in place");
	free(want);
	E2E_CHECK(all_zero(b + BAD_OFF, REGION - BAD_OFF),
		  "WRITE B: bytes at or after the bad page were written");
	E2E_CHECK(all_zero(s->buf + 2 * REGION, REGION),
		  "WRITE C (flushed) was written");
	E2E_CHECK(!e2e_poll_now(s->cq, &wc),
		  "unexpected completion wr_id 0x%llx status %s",
		  (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	printf("place_fault server: done\n");
	return 0;
}

static int client(struct side *s)
{
	static const enum ibv_wc_status want[3] = {
		IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR,
	};
	struct ibv_sge sge[3];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_wc wc;
	int i, ret;

	e2e_sync(s->sock, "ready");
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)s->buf + i * REGION,
					   REGION, s->mr->lkey };
		wr[i].wr_id = 0xa + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = s->peer.addr + i * REGION;
		wr[i].wr.rdma.rkey = s->peer.rkey;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	ret = ibv_post_send(s->qp, wr, &bad);
	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
	for (i = 0; i < 3; i++) {
		e2e_poll_one(s->cq, &wc, "a WRITE");
		printf("WRITE %c: %s\n", 'A' + i, ibv_wc_status_str(wc.status));
		e2e_check_wc(&wc, &(struct e2e_wc_expect){
				     .wr_id = 0xa + i, .status = want[i],
				     .opcode = IBV_WC_RDMA_WRITE,
				     .qp_num = s->qp->qp_num },
			     "a WRITE");
	}
	E2E_CHECK(!e2e_poll_now(s->cq, &wc), "extra completion wr_id 0x%llx",
		  (unsigned long long)wc.wr_id);
	e2e_sync(s->sock, "done");
	printf("place_fault client: passed\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side s;
	int ret;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single, "needs --server or --client");
	memset(&s, 0, sizeof(s));
	s.sock = e2e_channel_open(&args);
	setup(&s, &args);
	ret = args.server ? server(&s) : client(&s);
	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(s.mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.cq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	munmap(s.buf, 3 * REGION);
	return ret;
}
