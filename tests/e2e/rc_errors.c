// SPDX-License-Identifier: BSD-2-Clause
/*
 * RC error completions a requester must see, between two processes. The
 * mode picks the fault; the requester (client) checks the error completion,
 * that the QP went to the error state, and that a WR posted behind the bad
 * one is flushed:
 *
 *   bad-rkey     RDMA write with an rkey the responder never gave out
 *                -> IBV_WC_REM_ACCESS_ERR
 *   bad-range    RDMA write past the end of the responder's MR
 *                -> IBV_WC_REM_ACCESS_ERR
 *   no-access    RDMA write to an MR registered without REMOTE_WRITE
 *                -> IBV_WC_REM_ACCESS_ERR
 *   bad-lkey     send from a local buffer with a wrong lkey
 *                -> IBV_WC_LOC_PROT_ERR
 *   rnr          send while the responder has no receive posted and
 *                rnr_retry is 1 -> IBV_WC_RNR_RETRY_EXC_ERR
 *   peer-killed  the responder process dies (SIGKILL) after connecting; a
 *                send must end in an error completion, not hang
 *
 *   rc_errors --server --port P --mode M [--dev D]
 *   rc_errors --client --port P --mode M [--dev D]
 */
#include "e2e_common.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE	8192
#define MSG_LEN		128

struct side {
	struct e2e_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_mr *ro_mr;	/* server: registered without REMOTE_WRITE */
	uint8_t *buf;
	struct e2e_peer me, peer;
	uint32_t ro_rkey;	/* client: the peer's ro_mr rkey */
	uint64_t ro_addr;
	int sock;
	const char *mode;
};

static bool mode_is(const struct side *s, const char *m)
{
	return !strcmp(s->mode, m);
}

static void setup(struct side *s, const struct e2e_args *args)
{
	e2e_open(&s->d, args->dev, args->gid_index);
	s->cq = ibv_create_cq(s->d.ctx, 16, NULL, NULL, 0);
	E2E_CHECK(s->cq, "ibv_create_cq: %s", strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&s->buf, 4096, BUF_SIZE),
		  "out of memory");
	memset(s->buf, 0x5a, BUF_SIZE);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, BUF_SIZE / 2,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	s->ro_mr = ibv_reg_mr(s->d.pd, s->buf + BUF_SIZE / 2, BUF_SIZE / 2,
			      IBV_ACCESS_REMOTE_READ);
	E2E_CHECK(s->ro_mr, "ibv_reg_mr (read-only): %s", strerror(errno));
	s->qp = e2e_create_qp(&s->d, IBV_QPT_RC, s->cq, s->cq, 8, 1);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
	s->me.rc_qpn = s->qp->qp_num;
	s->me.psn = args->server ? 0x777 : 0x999;
	s->me.rkey = s->mr->rkey;
	s->me.addr = (uintptr_t)s->buf;
	memcpy(s->me.gid, s->d.gid.raw, 16);
}

static void connect_qp(struct side *s)
{
	struct e2e_rc_opts opts = {
		/* 4.096 us * 2^8 ~ 1 ms per try: a dead peer is found fast. */
		.timeout = 8,
		.retry_cnt = 2,
		.rnr_retry = 1,
		.min_rnr_timer = 1,
		.set_rnr_retry = true,
		/*
		 * Where the responder answers with a NAK, the requester must
		 * wait for it however slow the host: a transport timeout
		 * would race with the NAK on a loaded machine.
		 */
		.no_timeout = !mode_is(s, "peer-killed"),
	};
	uint64_t ro[2] = { s->ro_mr->rkey, (uintptr_t)s->ro_mr->addr };

	e2e_exchange(s->sock, &s->me, &s->peer);
	e2e_send_all(s->sock, ro, sizeof(ro));
	E2E_CHECK(e2e_recv_all(s->sock, ro, sizeof(ro)),
		  "peer went away before sending its MR");
	s->ro_rkey = ro[0];
	s->ro_addr = ro[1];
	e2e_rc_connect(&s->d, s->qp, s->me.psn, &s->peer, &opts);
}

static int server(struct side *s)
{
	struct ibv_wc wc;

	if (mode_is(s, "bad-lkey")) {
		/* The receive is there: only the sender's lkey is wrong. */
		struct ibv_sge sge = {
			(uintptr_t)s->buf, MSG_LEN, s->mr->lkey
		};
		struct ibv_recv_wr wr = {
			.wr_id = 1, .sg_list = &sge, .num_sge = 1
		}, *bad;

		E2E_CHECK(!ibv_post_recv(s->qp, &wr, &bad),
			  "ibv_post_recv failed");
	}
	connect_qp(s);
	e2e_sync(s->sock, "connected");
	if (mode_is(s, "peer-killed")) {
		printf("rc_errors server: dying now\n");
		fflush(NULL);
		raise(SIGKILL);
	}
	e2e_sync(s->sock, "done");
	/* The responder completes nothing: no receive was consumed. */
	E2E_CHECK(!e2e_poll_now(s->cq, &wc),
		  "unexpected completion wr_id 0x%llx status %s",
		  (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	printf("rc_errors server (%s): done\n", s->mode);
	return 0;
}

static void client_post(struct side *s, enum ibv_wr_opcode op,
			struct ibv_sge *sge, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge good = { (uintptr_t)s->buf, MSG_LEN, s->mr->lkey };
	struct ibv_send_wr wr[2], *bad = NULL;
	int ret;

	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0xbad;
	wr[0].sg_list = sge;
	wr[0].num_sge = 1;
	wr[0].opcode = op;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = raddr;
	wr[0].wr.rdma.rkey = rkey;
	wr[0].next = &wr[1];
	/* Behind the failing WR: must be flushed, not executed. */
	wr[1].wr_id = 0x600d;
	wr[1].sg_list = &good;
	wr[1].num_sge = 1;
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	wr[1].wr.rdma.remote_addr = s->peer.addr;
	wr[1].wr.rdma.rkey = s->peer.rkey;
	ret = ibv_post_send(s->qp, wr, &bad);
	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
}

static void client_expect(struct side *s, enum ibv_wc_status want,
			  bool any_error)
{
	struct e2e_wc_expect exp = {
		.wr_id = 0xbad,
		.status = want,
		.qp_num = s->qp->qp_num,
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;

	e2e_poll_one(s->cq, &wc, "the failing WR");
	if (any_error) {
		printf("failing WR: status %s\n",
		       ibv_wc_status_str(wc.status));
		E2E_CHECK(wc.status != IBV_WC_SUCCESS &&
			  wc.status != IBV_WC_WR_FLUSH_ERR,
			  "send to a dead peer: status %s, want an error",
			  ibv_wc_status_str(wc.status));
		exp.status = wc.status;
	}
	e2e_check_wc(&wc, &exp, "the failing WR");

	exp.wr_id = 0x600d;
	exp.status = IBV_WC_WR_FLUSH_ERR;
	e2e_poll_one(s->cq, &wc, "the WR behind it");
	e2e_check_wc(&wc, &exp, "the WR behind it");
	E2E_CHECK(!e2e_poll_now(s->cq, &wc), "extra completion wr_id 0x%llx",
		  (unsigned long long)wc.wr_id);

	E2E_CHECK(!ibv_query_qp(s->qp, &attr, IBV_QP_STATE, &init),
		  "ibv_query_qp failed");
	E2E_CHECK(attr.qp_state == IBV_QPS_ERR,
		  "QP state %d after an error completion, want ERR (%d)",
		  attr.qp_state, IBV_QPS_ERR);
}

static int client(struct side *s)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, MSG_LEN, s->mr->lkey };
	uint8_t byte;

	connect_qp(s);
	e2e_sync(s->sock, "connected");

	if (mode_is(s, "bad-rkey")) {
		client_post(s, IBV_WR_RDMA_WRITE, &sge, s->peer.addr,
			    s->peer.rkey ^ 0x5a5a00);
		client_expect(s, IBV_WC_REM_ACCESS_ERR, false);
	} else if (mode_is(s, "bad-range")) {
		/* The MR is BUF_SIZE / 2 long: start 64 bytes before its end. */
		client_post(s, IBV_WR_RDMA_WRITE, &sge,
			    s->peer.addr + BUF_SIZE / 2 - 64, s->peer.rkey);
		client_expect(s, IBV_WC_REM_ACCESS_ERR, false);
	} else if (mode_is(s, "no-access")) {
		client_post(s, IBV_WR_RDMA_WRITE, &sge, s->ro_addr,
			    s->ro_rkey);
		client_expect(s, IBV_WC_REM_ACCESS_ERR, false);
	} else if (mode_is(s, "bad-lkey")) {
		sge.lkey ^= 0x5a5a00;
		client_post(s, IBV_WR_SEND, &sge, 0, 0);
		client_expect(s, IBV_WC_LOC_PROT_ERR, false);
	} else if (mode_is(s, "rnr")) {
		client_post(s, IBV_WR_SEND, &sge, 0, 0);
		client_expect(s, IBV_WC_RNR_RETRY_EXC_ERR, false);
	} else if (mode_is(s, "peer-killed")) {
		/* EOF on the side channel: the peer process is gone. */
		E2E_CHECK(!e2e_recv_all(s->sock, &byte, 1),
			  "the peer sent data instead of dying");
		client_post(s, IBV_WR_SEND, &sge, 0, 0);
		client_expect(s, IBV_WC_SUCCESS, true);
		printf("rc_errors client (%s): passed\n", s->mode);
		return 0;
	} else {
		E2E_CHECK(0, "unknown mode %s", s->mode);
	}
	e2e_sync(s->sock, "done");
	printf("rc_errors client (%s): passed\n", s->mode);
	return 0;
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side s;
	int ret;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single && args.mode,
		  "needs --server or --client, and --mode");
	memset(&s, 0, sizeof(s));
	s.mode = args.mode;
	setup(&s, &args);
	s.sock = e2e_channel_open(&args);
	ret = args.server ? server(&s) : client(&s);

	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(s.mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_dereg_mr(s.ro_mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.cq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	free(s.buf);
	return ret;
}
