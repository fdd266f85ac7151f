// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion channels as the real fds a program serves with poll, epoll,
 * O_NONBLOCK and fork, between two processes. The server owns armed CQs,
 * the client sends (on one host its adapter writes the server's CQEs in
 * one copy and raises their events itself):
 *
 *   many      --expect N (default 1000) RC QPs each way, each server QP
 *             with its own receive CQ and channel, all channels in one
 *             epoll set: one send each, and each channel is reported
 *             readable and yields exactly one event naming its CQ.
 *   nonblock  an O_NONBLOCK channel: ibv_get_cq_event() fails with EAGAIN
 *             while nothing completed and after the event was read, and
 *             poll() and select() see the event that came between.
 *   blocking  the server blocks in ibv_get_cq_event() while the client
 *             sends, ROUNDS times: one event a round, re-armed each time.
 *   fork      the server arms, forks, and its child blocks on the channel
 *             fd it inherited: the child gets the event (the fd is one
 *             file in both), the parent nothing.
 *   idle      --expect S: the server blocks on an armed CQ, the client
 *             waits S seconds before it sends (bench: what both processes
 *             spend while nothing happens).
 *
 *   cq_channels --server|--client --port P --mode MODE [--expect N]
 */
#include "e2e_common.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG_LEN		64
#define ROUNDS		20
#define NO_EVENT_MS	300

struct side {
	struct e2e_dev d;
	const struct e2e_args *args;
	unsigned int n;			/* QPs */
	struct ibv_comp_channel **chan;	/* server: one per QP */
	struct ibv_cq **cq;		/* server: receive CQ per QP */
	struct ibv_cq *scq;		/* send CQ of every QP */
	struct ibv_qp **qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	int sock;
};

static void raise_nofile(unsigned int need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void setup(struct side *s)
{
	bool server = s->args->server;
	unsigned int i;

	e2e_open(&s->d, s->args->dev, s->args->gid_index);
	s->chan = calloc(s->n, sizeof(*s->chan));
	s->cq = calloc(s->n, sizeof(*s->cq));
	s->qp = calloc(s->n, sizeof(*s->qp));
	s->buf = calloc(s->n, MSG_LEN);
	E2E_CHECK(s->chan && s->cq && s->qp && s->buf, "out of memory");
	s->mr = ibv_reg_mr(s->d.pd, s->buf, (size_t)s->n * MSG_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	s->scq = ibv_create_cq(s->d.ctx, s->n < 64 ? 64 : s->n, NULL, NULL, 0);
	E2E_CHECK(s->scq, "ibv_create_cq: %s", strerror(errno));
	for (i = 0; i < s->n; i++) {
		if (server) {
			s->chan[i] = ibv_create_comp_channel(s->d.ctx);
			E2E_CHECK(s->chan[i], "channel %u: %s", i,
				  strerror(errno));
			/* the CQ's context: its index */
			s->cq[i] = ibv_create_cq(s->d.ctx, 4,
						 (void *)(uintptr_t)i,
						 s->chan[i], 0);
		} else {
			s->cq[i] = s->scq;
		}
		E2E_CHECK(s->cq[i], "CQ %u: %s", i, strerror(errno));
		s->qp[i] = e2e_create_qp(&s->d, IBV_QPT_RC, s->scq, s->cq[i],
					 ROUNDS + 2, 1);
		e2e_qp_to_init(s->qp[i], IBV_QPT_RC);
	}
}

/* Each side's QP numbers, in order, and connects QP i to the peer's i. */
static void connect_all(struct side *s)
{
	uint32_t *mine = calloc(s->n, 4), *theirs = calloc(s->n, 4);
	struct e2e_peer me = { 0 }, peer;
	unsigned int i;

	E2E_CHECK(mine && theirs, "out of memory");
	for (i = 0; i < s->n; i++)
		mine[i] = s->qp[i]->qp_num;
	me.psn = 0x100;
	memcpy(me.gid, s->d.gid.raw, 16);
	e2e_exchange(s->sock, &me, &peer);
	e2e_send_all(s->sock, mine, (size_t)s->n * 4);
	E2E_CHECK(e2e_recv_all(s->sock, theirs, (size_t)s->n * 4),
		  "the peer's QP numbers");
	for (i = 0; i < s->n; i++) {
		peer.rc_qpn = theirs[i];
		e2e_rc_connect(&s->d, s->qp[i], me.psn, &peer, NULL);
	}
	free(mine);
	free(theirs);
}

static void post_recv(struct side *s, unsigned int i)
{
	struct ibv_sge sge = {
		(uintptr_t)s->buf + (size_t)i * MSG_LEN, MSG_LEN, s->mr->lkey
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 },
		*bad;
	int ret = ibv_post_recv(s->qp[i], &wr, &bad);

	E2E_CHECK(!ret, "ibv_post_recv: %s", strerror(ret));
}

static void arm(struct side *s, unsigned int i)
{
	int ret = ibv_req_notify_cq(s->cq[i], 0);

	E2E_CHECK(!ret, "ibv_req_notify_cq: %s", strerror(ret));
}

/* One event from channel i, naming CQ i; then its receive completion. */
static void take_event(struct side *s, unsigned int i, const char *what)
{
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *ctx;

	E2E_CHECK(!ibv_get_cq_event(s->chan[i], &cq, &ctx),
		  "%s: ibv_get_cq_event: %s", what, strerror(errno));
	E2E_CHECK(cq == s->cq[i] && ctx == (void *)(uintptr_t)i,
		  "%s: the event names another CQ", what);
	ibv_ack_cq_events(cq, 1);
	e2e_poll_one(s->cq[i], &wc, what);
	E2E_CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == i,
		  "%s: receive completion %s, wr_id %llu", what,
		  ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	E2E_CHECK(n >= 0, "poll: %s", strerror(errno));
	return n == 1;
}

/* The client: sends on QP i when told "i" (all of them for many). */
static void send_one(struct side *s, unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, MSG_LEN, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int ret = ibv_post_send(s->qp[i], &wr, &bad);

	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
	e2e_poll_one(s->scq, &wc, "client send");
	E2E_CHECK(wc.status == IBV_WC_SUCCESS, "client send: %s",
		  ibv_wc_status_str(wc.status));
}

static void client(struct side *s)
{
	uint32_t cmd;

	/* The server says which QP sends next; ~0u ends. */
	while (e2e_recv_all(s->sock, &cmd, sizeof(cmd)) && cmd != ~0u) {
		if (cmd == s->n + 1) {
			sleep(s->args->expect > 0 ? s->args->expect : 10);
			send_one(s, 0);
		} else if (cmd == s->n) {
			unsigned int i;

			for (i = 0; i < s->n; i++)
				send_one(s, i);
		} else {
			E2E_CHECK(cmd < s->n, "bad command %u", cmd);
			send_one(s, cmd);
		}
		e2e_send_all(s->sock, &cmd, sizeof(cmd));
	}
}

/* Has the client send (on QP i, or on every QP for s->n) and waits
 * until its sends completed: the CQEs are written. */
static void have_sent(struct side *s, uint32_t i)
{
	uint32_t back;

	e2e_send_all(s->sock, &i, sizeof(i));
	E2E_CHECK(e2e_recv_all(s->sock, &back, sizeof(back)) && back == i,
		  "the client did not send");
}

/* Has the client send on QP i without waiting for it. */
static void ask_send(struct side *s, uint32_t i)
{
	e2e_send_all(s->sock, &i, sizeof(i));
}

static void ask_done(struct side *s, uint32_t i)
{
	uint32_t back;

	E2E_CHECK(e2e_recv_all(s->sock, &back, sizeof(back)) && back == i,
		  "the client did not send");
}

static void mode_many(struct side *s)
{
	struct epoll_event ev, *got;
	unsigned int i, events = 0, left;
	uint8_t *seen = calloc(s->n, 1);
	int ep = epoll_create1(EPOLL_CLOEXEC), n, k;

	got = calloc(64, sizeof(*got));
	E2E_CHECK(ep >= 0 && seen && got, "epoll_create1: %s",
		  strerror(errno));
	for (i = 0; i < s->n; i++) {
		post_recv(s, i);
		arm(s, i);
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		E2E_CHECK(!epoll_ctl(ep, EPOLL_CTL_ADD, s->chan[i]->fd, &ev),
			  "epoll_ctl: %s", strerror(errno));
	}
	E2E_CHECK(epoll_wait(ep, got, 64, 0) == 0,
		  "a channel is readable before anything completed");
	ask_send(s, s->n);
	for (left = s->n; left;) {
		n = epoll_wait(ep, got, 64, E2E_WAIT_SECONDS * 1000);
		E2E_CHECK(n > 0, "epoll_wait: %d of %u channels had no event",
			  left, s->n);
		for (k = 0; k < n; k++) {
			i = got[k].data.u32;
			E2E_CHECK(i < s->n && !seen[i],
				  "channel %u reported again", i);
			take_event(s, i, "many");
			seen[i] = 1;
			events++;
			left--;
		}
	}
	ask_done(s, s->n);
	E2E_CHECK(epoll_wait(ep, got, 64, NO_EVENT_MS) == 0,
		  "a channel has a second event");
	printf("many: %u channels, one event each through epoll\n", events);
	close(ep);
	free(seen);
	free(got);
}

static void mode_nonblock(struct side *s)
{
	int fd = s->chan[0]->fd, fl = fcntl(fd, F_GETFL);
	struct ibv_cq *cq;
	fd_set rd;
	void *ctx;
	struct timeval tv = { .tv_sec = E2E_WAIT_SECONDS };

	E2E_CHECK(fl >= 0 && !fcntl(fd, F_SETFL, fl | O_NONBLOCK),
		  "O_NONBLOCK: %s", strerror(errno));
	post_recv(s, 0);
	arm(s, 0);
	errno = 0;
	E2E_CHECK(ibv_get_cq_event(s->chan[0], &cq, &ctx) && errno == EAGAIN,
		  "nothing completed: ibv_get_cq_event must fail with "
		  "EAGAIN (errno %s)", e2e_errno_name(errno));
	have_sent(s, 0);
	FD_ZERO(&rd);
	FD_SET(fd, &rd);
	E2E_CHECK(select(fd + 1, &rd, NULL, NULL, &tv) == 1,
		  "select() does not see the event");
	E2E_CHECK(readable(fd, E2E_WAIT_SECONDS * 1000),
		  "poll() does not see the event");
	take_event(s, 0, "nonblock");
	errno = 0;
	E2E_CHECK(ibv_get_cq_event(s->chan[0], &cq, &ctx) && errno == EAGAIN,
		  "the event was read: ibv_get_cq_event must fail with EAGAIN "
		  "(errno %s)", e2e_errno_name(errno));
	printf("nonblock: EAGAIN, one event seen by select and poll, "
	       "EAGAIN\n");
}

static void mode_blocking(struct side *s)
{
	unsigned int r;

	for (r = 0; r < ROUNDS; r++) {
		post_recv(s, 0);
		arm(s, 0);
		/* Blocked in read() on the channel while the client sends:
		 * the event wakes it. */
		ask_send(s, 0);
		take_event(s, 0, "blocking");
		ask_done(s, 0);
	}
	E2E_CHECK(!readable(s->chan[0]->fd, NO_EVENT_MS),
		  "an event more than the arms");
	printf("blocking: %u events, one an arm\n", ROUNDS);
}

static void mode_idle(struct side *s)
{
	post_recv(s, 0);
	arm(s, 0);
	ask_send(s, s->n + 1);
	take_event(s, 0, "idle");
	ask_done(s, s->n + 1);
	printf("idle: one event after %ld s\n",
	       s->args->expect > 0 ? s->args->expect : 10);
}

static void mode_fork(struct side *s)
{
	int status;
	pid_t pid;

	post_recv(s, 0);
	arm(s, 0);
	fflush(stdout);
	pid = fork();
	E2E_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		/* The child: the channel fd it inherited gets the event. */
		struct ibv_cq *cq;
		void *ctx;

		if (!readable(s->chan[0]->fd, E2E_WAIT_SECONDS * 1000))
			_exit(2);
		if (ibv_get_cq_event(s->chan[0], &cq, &ctx) ||
		    cq != s->cq[0])
			_exit(3);
		_exit(0);
	}
	have_sent(s, 0);
	E2E_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s",
		  strerror(errno));
	E2E_CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
		  "the child did not get the event on its channel (status "
		  "%#x)", status);
	E2E_CHECK(!readable(s->chan[0]->fd, NO_EVENT_MS),
		  "the parent's channel has an event the child read");
	/* The child read it from the one file: the CQ's count has it, and
	 * its destroy waits until it is acked here. */
	ibv_ack_cq_events(s->cq[0], 1);
	printf("fork: the child got the event on the inherited channel\n");
}

static void teardown(struct side *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		E2E_CHECK(!ibv_destroy_qp(s->qp[i]), "ibv_destroy_qp");
		if (s->chan[i]) {
			E2E_CHECK(!ibv_destroy_cq(s->cq[i]), "ibv_destroy_cq");
			E2E_CHECK(!ibv_destroy_comp_channel(s->chan[i]),
				  "ibv_destroy_comp_channel");
		}
	}
	E2E_CHECK(!ibv_destroy_cq(s->scq), "ibv_destroy_cq");
	E2E_CHECK(!ibv_dereg_mr(s->mr), "ibv_dereg_mr");
	e2e_close(&s->d);
	free(s->chan);
	free(s->cq);
	free(s->qp);
	free(s->buf);
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side s;
	const char *mode;
	uint32_t end = ~0u;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single && args.mode, "needs --server|--client, --mode");
	mode = args.mode;
	memset(&s, 0, sizeof(s));
	s.args = &args;
	s.n = !strcmp(mode, "many") ? (args.expect > 0 ? args.expect : 1000) :
				       1;
	/* Each QP: a channel's two ends, ring files, the CQ's. */
	raise_nofile(8 * s.n + 256);
	setup(&s);
	s.sock = e2e_channel_open(&args);
	connect_all(&s);
	if (!args.server) {
		client(&s);
	} else {
		if (!strcmp(mode, "many"))
			mode_many(&s);
		else if (!strcmp(mode, "nonblock"))
			mode_nonblock(&s);
		else if (!strcmp(mode, "blocking"))
			mode_blocking(&s);
		else if (!strcmp(mode, "fork"))
			mode_fork(&s);
		else if (!strcmp(mode, "idle"))
			mode_idle(&s);
		else
			E2E_CHECK(0, "unknown mode %s", mode);
		e2e_send_all(s.sock, &end, sizeof(end));
	}
	teardown(&s);
	printf("cq_channels %s %s: all checks passed\n", mode,
	       args.server ? "server" : "client");
	return 0;
}
