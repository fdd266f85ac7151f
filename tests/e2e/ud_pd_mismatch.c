// SPDX-License-Identifier: BSD-2-Clause
/*
 * A UD send whose address handle belongs to another protection domain than
 * the QP must fail, not be delivered: the WR completes with
 * IBV_WC_LOC_QP_OP_ERR (what rxe's requester gives when the AH's PD is not
 * the QP's) and the QP goes to the error state.
 *
 * One process, three UD QPs on one adapter: A and C send, B receives. A
 * sends once with an AH of its own PD (delivered), once with an AH of
 * another PD (fails). C then sends with a good AH: B's next message must be
 * C's, which proves A's bad datagram never arrived without waiting for it.
 *
 *   ud_pd_mismatch
 */
#include "e2e_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_LEN		64
#define GRH_LEN		40
#define QKEY		0x11111111

struct ud_ep {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static void ud_ep_init(struct ud_ep *ep, struct e2e_dev *d)
{
	ep->cq = ibv_create_cq(d->ctx, 8, NULL, NULL, 0);
	E2E_CHECK(ep->cq, "ibv_create_cq: %s", strerror(errno));
	ep->qp = e2e_create_qp(d, IBV_QPT_UD, ep->cq, ep->cq, 4, 1);
	e2e_qp_to_init(ep->qp, IBV_QPT_UD);
	e2e_ud_ready(ep->qp, 0);
}

static void ud_ep_fini(struct ud_ep *ep)
{
	E2E_CHECK(!ibv_destroy_qp(ep->qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_destroy_cq(ep->cq), "ibv_destroy_cq failed");
}

static void ud_post(struct ud_ep *ep, struct ibv_mr *mr, uint8_t *buf,
		    struct ibv_ah *ah, uint32_t dst_qpn, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf, MSG_LEN, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = dst_qpn,
			   .remote_qkey = QKEY },
	}, *bad;
	int ret;

	memset(buf, (int)wr_id, MSG_LEN);
	ret = ibv_post_send(ep->qp, &wr, &bad);
	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
}

static void recv_post(struct ud_ep *ep, struct ibv_mr *mr, uint8_t *buf,
		      uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf, GRH_LEN + MSG_LEN, mr->lkey };
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1
	}, *bad;
	int ret = ibv_post_recv(ep->qp, &wr, &bad);

	E2E_CHECK(!ret, "ibv_post_recv: %s", strerror(ret));
}

static void expect_recv(struct ud_ep *b, const uint8_t *buf,
			const struct ud_ep *from, uint64_t wr_id, int fill,
			const char *what)
{
	struct e2e_wc_expect exp = {
		.wr_id = wr_id,
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.qp_num = b->qp->qp_num,
		.wc_flags = IBV_WC_GRH,
		.check_len = true,
		.byte_len = GRH_LEN + MSG_LEN,
		.check_src_qp = true,
		.src_qp = from->qp->qp_num,
	};
	struct ibv_wc wc;
	int i;

	e2e_poll_one(b->cq, &wc, what);
	e2e_check_wc(&wc, &exp, what);
	for (i = 0; i < MSG_LEN; i++)
		E2E_CHECK(buf[GRH_LEN + i] == fill, "%s: byte %d is 0x%x, "
			  "want 0x%x", what, i, buf[GRH_LEN + i], fill);
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct e2e_dev d;
	struct ibv_pd *other_pd;
	struct ibv_ah *good_ah, *bad_ah;
	struct ibv_ah_attr ah_attr;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ud_ep a, b, c;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint8_t *buf;
	struct e2e_wc_expect exp;

	e2e_parse_args(argc, argv, &args);
	e2e_open(&d, args.dev, args.gid_index);
	other_pd = ibv_alloc_pd(d.ctx);
	E2E_CHECK(other_pd, "ibv_alloc_pd: %s", strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&buf, 4096, 4096), "no memory");
	memset(buf, 0, 4096);
	mr = ibv_reg_mr(d.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	ud_ep_init(&a, &d);
	ud_ep_init(&b, &d);
	ud_ep_init(&c, &d);
	good_ah = e2e_create_ah(&d, d.gid.raw);
	e2e_fill_ah_attr(&d, d.gid.raw, &ah_attr);
	bad_ah = ibv_create_ah(other_pd, &ah_attr);
	E2E_CHECK(bad_ah, "ibv_create_ah (other PD): %s", strerror(errno));

	recv_post(&b, mr, buf + 1024, 1);
	recv_post(&b, mr, buf + 2048, 2);

	/* The same AH attributes in the QP's own PD: delivered. */
	ud_post(&a, mr, buf, good_ah, b.qp->qp_num, 0xa1);
	memset(&exp, 0, sizeof(exp));
	exp.wr_id = 0xa1;
	exp.status = IBV_WC_SUCCESS;
	exp.opcode = IBV_WC_SEND;
	exp.qp_num = a.qp->qp_num;
	e2e_poll_one(a.cq, &wc, "send with an AH of the QP's PD");
	e2e_check_wc(&wc, &exp, "send with an AH of the QP's PD");
	expect_recv(&b, buf + 1024, &a, 1, 0xa1, "first datagram");

	/* An AH of another PD: a local QP operation error. */
	ud_post(&a, mr, buf, bad_ah, b.qp->qp_num, 0xa2);
	exp.wr_id = 0xa2;
	exp.status = IBV_WC_LOC_QP_OP_ERR;
	e2e_poll_one(a.cq, &wc, "send with an AH of another PD");
	e2e_check_wc(&wc, &exp, "send with an AH of another PD");
	E2E_CHECK(!ibv_query_qp(a.qp, &attr, IBV_QP_STATE, &init),
		  "ibv_query_qp failed");
	E2E_CHECK(attr.qp_state == IBV_QPS_ERR,
		  "QP state %d after the error, want ERR", attr.qp_state);

	/* B's next datagram is C's: A's never came. */
	ud_post(&c, mr, buf + 512, good_ah, b.qp->qp_num, 0xc1);
	exp.wr_id = 0xc1;
	exp.status = IBV_WC_SUCCESS;
	exp.qp_num = c.qp->qp_num;
	e2e_poll_one(c.cq, &wc, "send from the third QP");
	e2e_check_wc(&wc, &exp, "send from the third QP");
	expect_recv(&b, buf + 2048, &c, 2, 0xc1, "second datagram");

	E2E_CHECK(!ibv_destroy_ah(good_ah), "ibv_destroy_ah failed");
	E2E_CHECK(!ibv_destroy_ah(bad_ah), "ibv_destroy_ah failed");
	ud_ep_fini(&a);
	ud_ep_fini(&b);
	ud_ep_fini(&c);
	E2E_CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_dealloc_pd(other_pd), "ibv_dealloc_pd failed");
	e2e_close(&d);
	free(buf);
	printf("ud_pd_mismatch: passed\n");
	return 0;
}
