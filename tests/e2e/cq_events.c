// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion events through a completion channel, between two processes:
 *
 *   1. ibv_req_notify_cq(cq, 0), then three receives complete: exactly one
 *      event, and none after it until the CQ is armed again.
 *   2. Armed again, one more receive: exactly one event.
 *   3. Armed for solicited completions only: an unsolicited send completes
 *      without an event; a following solicited send fires exactly one.
 *   4. Armed, a receive completes (its event raised, not read yet), armed
 *      again, one more receive: two events. The device disarmed the CQ when
 *      it raised the first, whether or not anyone has read it.
 *
 * The server owns the CQ under test; the client sends when told to, and tells
 * the server when its send has completed (so the receive CQE exists). "No
 * event" is checked after the receive CQE is visible, with a grace period
 * that only matters if the device is broken.
 *
 *   cq_events --server --port P [--dev D]
 *   cq_events --client --port P [--dev D]
 */
#include "e2e_common.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE	4096
#define MSG_LEN		64
#define NUM_RECVS	8
#define NO_EVENT_GRACE_MS 300

struct side {
	struct e2e_dev d;
	struct ibv_comp_channel *channel;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct e2e_peer me, peer;
	int sock;
	unsigned int events;	/* got, to be acked before destroy */
	unsigned int recvs;	/* receive completions seen */
};

/* The recv CQ's user context: echoed back by ibv_get_cq_event. */
static int recv_cq_tag;

static void setup(struct side *s, const struct e2e_args *args)
{
	e2e_open(&s->d, args->dev, args->gid_index);
	s->channel = ibv_create_comp_channel(s->d.ctx);
	E2E_CHECK(s->channel, "ibv_create_comp_channel: %s", strerror(errno));
	s->send_cq = ibv_create_cq(s->d.ctx, 16, NULL, NULL, 0);
	s->recv_cq = ibv_create_cq(s->d.ctx, 16, &recv_cq_tag, s->channel, 0);
	E2E_CHECK(s->send_cq && s->recv_cq, "ibv_create_cq: %s",
		  strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&s->buf, 4096, BUF_SIZE),
		  "out of memory");
	memset(s->buf, 0, BUF_SIZE);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	s->qp = e2e_create_qp(&s->d, IBV_QPT_RC, s->send_cq, s->recv_cq,
			      NUM_RECVS, 1);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
	s->me.rc_qpn = s->qp->qp_num;
	s->me.psn = args->server ? 0x100 : 0x200;
	memcpy(s->me.gid, s->d.gid.raw, 16);
}

static void arm(struct side *s, bool solicited_only)
{
	int ret = ibv_req_notify_cq(s->recv_cq, solicited_only);

	E2E_CHECK(!ret, "ibv_req_notify_cq(%d): %s", solicited_only,
		  strerror(ret));
}

/* True if an event is readable on the channel within timeout_ms. */
static bool event_pending(struct side *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = s->channel->fd, .events = POLLIN };
	int n = poll(&pfd, 1, timeout_ms);

	E2E_CHECK(n >= 0, "poll on the completion channel: %s",
		  strerror(errno));
	return n == 1;
}

static void expect_one_event(struct side *s, const char *what)
{
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;

	E2E_CHECK(event_pending(s, E2E_WAIT_SECONDS * 1000),
		  "%s: no completion event", what);
	E2E_CHECK(!ibv_get_cq_event(s->channel, &ev_cq, &ev_ctx),
		  "%s: ibv_get_cq_event: %s", what, strerror(errno));
	s->events++;
	E2E_CHECK(ev_cq == s->recv_cq, "%s: event names another CQ", what);
	E2E_CHECK(ev_ctx == &recv_cq_tag, "%s: event lost the CQ context",
		  what);
	printf("%s: got one event\n", what);
}

static void expect_no_event(struct side *s, const char *what)
{
	E2E_CHECK(!event_pending(s, NO_EVENT_GRACE_MS),
		  "%s: completion event fired, but it must not", what);
	printf("%s: no event, as required\n", what);
}

static void post_recvs(struct side *s)
{
	unsigned int i;

	for (i = 0; i < NUM_RECVS; i++) {
		struct ibv_sge sge = {
			(uintptr_t)s->buf + i * MSG_LEN, MSG_LEN, s->mr->lkey
		};
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1
		}, *bad;
		int ret = ibv_post_recv(s->qp, &wr, &bad);

		E2E_CHECK(!ret, "ibv_post_recv: %s", strerror(ret));
	}
}

/* Waits for the next n receive completions, checking each. */
static void take_recvs(struct side *s, unsigned int n, const char *what)
{
	struct e2e_wc_expect exp = {
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.qp_num = s->qp->qp_num,
		.check_len = true,
		.byte_len = MSG_LEN,
	};
	struct ibv_wc wc;

	while (n--) {
		exp.wr_id = s->recvs++;
		e2e_poll_one(s->recv_cq, &wc, what);
		e2e_check_wc(&wc, &exp, what);
	}
}

static int server(struct side *s)
{
	struct ibv_wc wc;

	post_recvs(s);
	e2e_exchange(s->sock, &s->me, &s->peer);
	e2e_rc_connect(&s->d, s->qp, s->me.psn, &s->peer, NULL);

	/* 1: one event for three completions. */
	arm(s, false);
	e2e_sync(s->sock, "go1");
	e2e_sync(s->sock, "sent1");
	expect_one_event(s, "armed, 3 receives");
	take_recvs(s, 3, "phase 1 receive");
	expect_no_event(s, "after the first event, not re-armed");

	/* 2: re-armed, one more completion, one more event. */
	arm(s, false);
	e2e_sync(s->sock, "go2");
	e2e_sync(s->sock, "sent2");
	expect_one_event(s, "re-armed, 1 receive");
	take_recvs(s, 1, "phase 2 receive");
	expect_no_event(s, "phase 2, not re-armed");

	/* 3: solicited only. */
	arm(s, true);
	e2e_sync(s->sock, "go3");
	e2e_sync(s->sock, "sent3");
	take_recvs(s, 1, "unsolicited receive");
	expect_no_event(s, "solicited-only arm, unsolicited send");
	e2e_sync(s->sock, "go4");
	e2e_sync(s->sock, "sent4");
	expect_one_event(s, "solicited-only arm, solicited send");
	take_recvs(s, 1, "solicited receive");
	expect_no_event(s, "phase 3, not re-armed");

	/* 4: re-armed while the event of the last arm is still unread. */
	arm(s, false);
	e2e_sync(s->sock, "go5");
	e2e_sync(s->sock, "sent5");
	arm(s, false);
	e2e_sync(s->sock, "go6");
	e2e_sync(s->sock, "sent6");
	expect_one_event(s, "armed, 1 receive, event left unread");
	expect_one_event(s, "re-armed with an unread event, 1 receive");
	take_recvs(s, 2, "phase 4 receive");
	expect_no_event(s, "phase 4, not re-armed");

	E2E_CHECK(!e2e_poll_now(s->recv_cq, &wc),
		  "unexpected receive completion");
	ibv_ack_cq_events(s->recv_cq, s->events);
	E2E_CHECK(s->events == 5, "%u events, want 5", s->events);
	e2e_sync(s->sock, "done");
	printf("cq_events server: all checks passed\n");
	return 0;
}

static void client_send(struct side *s, unsigned int count, bool solicited)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, MSG_LEN, s->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED |
			      (solicited ? IBV_SEND_SOLICITED : 0),
	}, *bad;
	struct e2e_wc_expect exp = {
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_SEND,
		.qp_num = s->qp->qp_num,
	};
	static uint64_t wr_id = 0x500;
	struct ibv_wc wc;
	int ret;

	while (count--) {
		wr.wr_id = exp.wr_id = wr_id++;
		ret = ibv_post_send(s->qp, &wr, &bad);
		E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
		e2e_poll_one(s->send_cq, &wc, "client send");
		e2e_check_wc(&wc, &exp, "client send");
	}
}

static int client(struct side *s)
{
	e2e_exchange(s->sock, &s->me, &s->peer);
	e2e_rc_connect(&s->d, s->qp, s->me.psn, &s->peer, NULL);

	e2e_sync(s->sock, "go1");
	client_send(s, 3, false);
	e2e_sync(s->sock, "sent1");
	e2e_sync(s->sock, "go2");
	client_send(s, 1, false);
	e2e_sync(s->sock, "sent2");
	e2e_sync(s->sock, "go3");
	client_send(s, 1, false);
	e2e_sync(s->sock, "sent3");
	e2e_sync(s->sock, "go4");
	client_send(s, 1, true);
	e2e_sync(s->sock, "sent4");
	e2e_sync(s->sock, "go5");
	client_send(s, 1, false);
	e2e_sync(s->sock, "sent5");
	e2e_sync(s->sock, "go6");
	client_send(s, 1, false);
	e2e_sync(s->sock, "sent6");
	e2e_sync(s->sock, "done");
	printf("cq_events client: all checks passed\n");
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
	setup(&s, &args);
	s.sock = e2e_channel_open(&args);
	ret = args.server ? server(&s) : client(&s);

	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(s.mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.send_cq), "ibv_destroy_cq failed");
	E2E_CHECK(!ibv_destroy_cq(s.recv_cq), "ibv_destroy_cq failed");
	E2E_CHECK(!ibv_destroy_comp_channel(s.channel),
		  "ibv_destroy_comp_channel failed");
	e2e_close(&s.d);
	free(s.buf);
	return ret;
}
