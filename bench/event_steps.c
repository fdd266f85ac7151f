// SPDX-License-Identifier: BSD-2-Clause
/*
 * event_steps --server|--client --port P --expect ITERS   (under pvrdma-sim)
 *
 * Where the time of one event-driven message goes, seen from the
 * application: the ping-pong of ib_send_lat -e (2 B SEND, one
 * completion channel for a send and a receive CQ, every send signaled,
 * each completion waited for with ibv_get_cq_event), with a timestamp
 * between each two verbs. Per iteration and side:
 *
 *   wait    ibv_get_cq_event() blocked (receive event)
 *   arm     ibv_ack_cq_events() + ibv_req_notify_cq(receive CQ): a trap
 *   poll    ibv_poll_cq(receive CQ)
 *   recv    ibv_post_recv(): a trap
 *   send    ibv_post_send(): a trap, which raises the peer's event
 *   sevent  ibv_get_cq_event() of the send CQ (already raised)
 *   sarm    ibv_req_notify_cq(send CQ): a trap
 *   spoll   ibv_poll_cq(send CQ)
 *
 * and across the two processes (one clock): "wake", from the start of
 * one side's post_send to the return of the other's ibv_get_cq_event.
 * The one-way time is half the client's round trip. The server prints one
 * JSON line of medians (and p99 of the one-way time), in µs.
 */
#include "e2e_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

enum step {
	S_WAIT0, S_WAIT, S_ARM, S_POLL, S_RECV, S_SEND0, S_SEND, S_SEVENT,
	S_SARM, S_SPOLL, S_COUNT
};

static const char *const step_name[S_COUNT] = {
	"", "wait", "arm", "poll", "recv", "", "send", "sevent", "sarm",
	"spoll",
};

#define DEPTH	64

struct side {
	struct e2e_dev d;
	struct ibv_comp_channel *chan;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[2 * DEPTH];
	double (*t)[S_COUNT];	/* per iteration, ns */
	bool got[2];		/* an event read: send CQ, receive CQ */
	long iters;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + DEPTH, 2, s->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	E2E_CHECK(!ibv_post_recv(s->qp, &wr, &bad), "ibv_post_recv");
}

/* The event of CQ want; the other CQ's, read first, is kept (the peer
 * may answer before this side's trap raised its own send event). */
static void wait_event(struct side *s, struct ibv_cq *want)
{
	struct ibv_cq *cq;
	void *ctx;

	while (!s->got[want == s->rcq]) {
		E2E_CHECK(!ibv_get_cq_event(s->chan, &cq, &ctx),
			  "get_cq_event: %s", strerror(errno));
		E2E_CHECK(cq == s->rcq || cq == s->scq, "a strange CQ");
		ibv_ack_cq_events(cq, 1);
		s->got[cq == s->rcq] = true;
	}
	s->got[want == s->rcq] = false;
}

static void poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	E2E_CHECK(ibv_poll_cq(cq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS,
		  "no good completion after its event");
}

static void iteration(struct side *s, double *t, bool receive)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 2, s->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (receive) {
		t[S_WAIT0] = now_ns();
		wait_event(s, s->rcq);
		t[S_WAIT] = now_ns();
		E2E_CHECK(!ibv_req_notify_cq(s->rcq, 0), "arm");
		t[S_ARM] = now_ns();
		poll_one(s->rcq);
		t[S_POLL] = now_ns();
		post_recv(s);
		t[S_RECV] = now_ns();
	}
	t[S_SEND0] = now_ns();
	E2E_CHECK(!ibv_post_send(s->qp, &wr, &bad), "ibv_post_send");
	t[S_SEND] = now_ns();
	wait_event(s, s->scq);
	t[S_SEVENT] = now_ns();
	E2E_CHECK(!ibv_req_notify_cq(s->scq, 0), "arm");
	t[S_SARM] = now_ns();
	poll_one(s->scq);
	t[S_SPOLL] = now_ns();
}

static double quantile(double *v, long n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(long)(q * (double)(n - 1))] / 1e3;
}

/* Median of t[i][to] - t[i][from] over the timed iterations. */
static double step_median(double (*t)[S_COUNT], long from_i, long n,
			  int from, int to, double *tmp)
{
	long i;

	for (i = 0; i < n; i++)
		tmp[i] = t[from_i + i][to] - t[from_i + i][from];
	return quantile(tmp, n, 0.5);
}

static void report(struct side *srv, double (*cli)[S_COUNT])
{
	long skip = srv->iters / 10, n = srv->iters - skip - 1, i;
	double *tmp = calloc((size_t)srv->iters, sizeof(*tmp));
	int k;

	E2E_CHECK(tmp, "out of memory");
	printf("{\"iters\": %ld", n);
	for (k = S_WAIT; k < S_COUNT; k++) {
		if (!*step_name[k])
			continue;
		printf(", \"server_%s\": %.3f", step_name[k],
		       step_median(srv->t, skip, n, k - 1, k, tmp));
		printf(", \"client_%s\": %.3f", step_name[k],
		       step_median(cli, skip, n, k - 1, k, tmp));
	}
	/* client sends i, server wakes i; server sends i, client wakes i+1 */
	for (i = 0; i < n; i++)
		tmp[i] = srv->t[skip + i][S_WAIT] - cli[skip + i][S_SEND0];
	printf(", \"wake_c2s\": %.3f", quantile(tmp, n, 0.5));
	for (i = 0; i < n; i++)
		tmp[i] = cli[skip + i + 1][S_WAIT] - srv->t[skip + i][S_SEND0];
	printf(", \"wake_s2c\": %.3f", quantile(tmp, n, 0.5));
	for (i = 0; i < n; i++)
		tmp[i] = (cli[skip + i + 1][S_SEND0] - cli[skip + i][S_SEND0]) /
			 2;
	printf(", \"one_way\": %.3f", quantile(tmp, n, 0.5));
	printf(", \"one_way_p99\": %.3f}\n", quantile(tmp, n, 0.99));
	free(tmp);
}

static void setup(struct side *s, const struct e2e_args *args, int sock)
{
	struct e2e_peer me = { .psn = 0x10 }, peer;

	e2e_open(&s->d, args->dev, args->gid_index);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, sizeof(s->buf),
			   IBV_ACCESS_LOCAL_WRITE);
	s->chan = ibv_create_comp_channel(s->d.ctx);
	E2E_CHECK(s->mr && s->chan, "mr, channel: %s", strerror(errno));
	s->scq = ibv_create_cq(s->d.ctx, DEPTH, NULL, s->chan, 0);
	s->rcq = ibv_create_cq(s->d.ctx, DEPTH, NULL, s->chan, 0);
	E2E_CHECK(s->scq && s->rcq, "CQs: %s", strerror(errno));
	s->qp = e2e_create_qp(&s->d, IBV_QPT_RC, s->scq, s->rcq, DEPTH, 1);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
	me.rc_qpn = s->qp->qp_num;
	memcpy(me.gid, s->d.gid.raw, 16);
	e2e_exchange(sock, &me, &peer);
	e2e_rc_connect(&s->d, s->qp, me.psn, &peer, NULL);
	E2E_CHECK(!ibv_req_notify_cq(s->scq, 0) &&
		  !ibv_req_notify_cq(s->rcq, 0), "arm");
	for (int i = 0; i < DEPTH / 2; i++)
		post_recv(s);
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side s;
	double (*cli)[S_COUNT];
	size_t bytes;
	long i;
	int sock;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single && args.expect > 10,
		  "needs --server|--client --port P --expect ITERS");
	memset(&s, 0, sizeof(s));
	s.iters = args.expect;
	bytes = (size_t)s.iters * sizeof(*s.t);
	s.t = calloc(1, bytes);
	E2E_CHECK(s.t, "out of memory");
	sock = e2e_channel_open(&args);
	setup(&s, &args, sock);
	e2e_sync(sock, "go");
	for (i = 0; i < s.iters; i++)
		iteration(&s, s.t[i], args.server || i > 0);
	if (!args.server) {
		/* the server's last send: its event is the client's last */
		wait_event(&s, s.rcq);
		e2e_send_all(sock, s.t, bytes);
		return 0;
	}
	cli = calloc(1, bytes);
	E2E_CHECK(cli && e2e_recv_all(sock, cli, bytes), "the client's times");
	report(&s, cli);
	return 0;
}
