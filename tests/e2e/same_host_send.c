// SPDX-License-Identifier: BSD-2-Clause
/*
 * SENDs to a target that only sleeps: on one host the requester takes the
 * target's posted receive, places the data and writes the target's CQE
 * itself, and the target's completion event wakes it. The server posts
 * its receives, arms its receive CQ and sleeps in ibv_get_cq_event; the
 * client sends one message at a time and waits for the server to say it
 * got it:
 *   - SEND of 100 bytes, SEND_WITH_IMM of 5000, RDMA_WRITE_WITH_IMM of
 *     3000, SEND of 0, SEND of 64 KiB (the receive's two SGEs), an
 *     RDMA_WRITE_WITH_IMM of 0, a solicited SEND into a CQ armed for
 *     solicited completions only;
 *   each CQE as the IB spec has it (opcode, byte_len, imm, src_qp,
 *   qp_num), the data in place, one event for each arm and no more;
 *   - a SEND while no receive is posted, with RNR_BURST - 1 more posted
 *     right behind it: RNR NAKs until the server posts receives, then
 *     all of them arrive in order and succeed. The first took the socket
 *     fabric (the responder's RNR NAK); the ones behind it return to one
 *     copy once it is acknowledged, instead of following it there (the
 *     script counts them);
 *   - a SEND longer than the posted receive: the client's WR ends in
 *     IBV_WC_REM_INV_REQ_ERR, the server's receive in IBV_WC_LOC_LEN_ERR.
 * With --mode srq the server's QP takes its receives from an SRQ, whose
 * limit (3) is reached in the first run of messages: its
 * IBV_EVENT_SRQ_LIMIT_REACHED comes once.
 *
 * Mode churn: CHURN_ROUNDS times the server creates a receive CQ and a QP,
 * the client connects its QP to it and sends one SEND, and the server
 * destroys both: the ring files the server keeps for requesters are closed
 * with their objects (its descriptors are as many as before), and the
 * client's mappings of the server's rings stay bounded (they would grow
 * by two a round if they leaked).
 *
 * The same program passes on the socket fabric (--no-single-copy); its
 * script checks with --stats which path the SENDs took.
 *
 * Mode late: the server's QP has the longest RNR timer (min_rnr_timer
 * 31, 491.52 ms); the client SENDs while the server has no receive
 * posted, and the server posts one 20 ms later. The requester keeps
 * trying the SEND in one copy for as long as the RNR NAK would make it
 * wait, so it lands in one copy as soon as the receive is there (the
 * script wants single_copy 1; a SEND that took the fabric at once would
 * count 0 and wait out the NAK's timer).
 *
 * Mode gone: the client's first empty SEND lands (the server's rings are
 * mapped in the client from then on), the server exits with a receive
 * still posted, and the client's second empty SEND must end in
 * IBV_WC_RETRY_EXC_ERR: no copy tells that the target is gone, yet a SEND
 * to it must not succeed.
 *
 * Mode truncate: after a first SEND (the server's rings and its adapter's
 * shared segment are mapped in the client from then on), the server
 * truncates every ring memory file and segment it finds in its fd table
 * (ftruncate to 0, as any program may do to a descriptor it holds) and
 * its adapter's files in the run directory; the client's second SEND must
 * still complete, and the server's receive with it: the files cannot
 * shrink under the mappings, and a client never faults on the server's
 * rings or segment.
 *
 *   same_host_send --server|--client --port P
 *                  --mode rq|srq|churn|late|gone|truncate
 */
#include "e2e_common.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOT		(80u << 10)	/* one receive's buffer */
#define NSLOTS		10u
#define WRITE_AREA	(NSLOTS * SLOT)
#define BUF_SIZE	(WRITE_AREA + (64u << 10))
#define FIRST_SGE	1000u		/* a receive's first SGE */
#define SHORT_RECV	10u
#define SRQ_LIMIT	3u
#define CHURN_ROUNDS	300u
#define RNR_BURST	9u
#define RNR_LEN		300u
/* Ring mappings a process may have besides the peers' it caches: its own
 * rings, twice each (its mapping and the device's). */
#define MAX_RING_MAPS	96u

struct msg {
	enum ibv_wr_opcode opcode;
	uint32_t len;
	bool solicited;			/* the CQ armed solicited-only */
};

static const struct msg msgs[] = {
	{ IBV_WR_SEND, 100, false },
	{ IBV_WR_SEND_WITH_IMM, 5000, false },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, 3000, false },
	{ IBV_WR_SEND, 0, false },
	{ IBV_WR_SEND, 64u << 10, false },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, 0, false },
	{ IBV_WR_SEND, 200, true },
};
#define NMSGS	(sizeof(msgs) / sizeof(msgs[0]))

struct ctx {
	struct e2e_dev d;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct e2e_peer peer;
	int sock;
};

static uint32_t imm_of(unsigned int i)
{
	return htonl(0x5e000000u + i);
}

static void post_recv(struct ctx *c, unsigned int slot, uint32_t len)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)c->buf + slot * SLOT,
		  .length = len < FIRST_SGE ? len : FIRST_SGE,
		  .lkey = c->mr->lkey },
		{ .addr = (uintptr_t)c->buf + slot * SLOT + FIRST_SGE,
		  .length = len < FIRST_SGE ? 0 : len - FIRST_SGE,
		  .lkey = c->mr->lkey },
	};
	struct ibv_recv_wr wr = {
		.wr_id = 100 + slot, .sg_list = sge, .num_sge = 2,
	}, *bad;
	int ret;

	if (c->srq)
		ret = ibv_post_srq_recv(c->srq, &wr, &bad);
	else
		ret = ibv_post_recv(c->qp, &wr, &bad);
	E2E_CHECK(!ret, "post recv: %s", strerror(ret));
}

/* Sleeps until the receive CQ's event, then takes its one CQE. */
static void wait_event(struct ctx *c, struct ibv_wc *wc, const char *what)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	E2E_CHECK(!ibv_get_cq_event(c->ch, &ev_cq, &ev_ctx),
		  "%s: ibv_get_cq_event: %s", what, strerror(errno));
	E2E_CHECK(ev_cq == c->rcq, "%s: event of another CQ", what);
	ibv_ack_cq_events(c->rcq, 1);
	E2E_CHECK(e2e_poll_now(c->rcq, wc) == 1,
		  "%s: an event without a CQE", what);
}

static void arm(struct ctx *c, bool solicited)
{
	E2E_CHECK(!ibv_req_notify_cq(c->rcq, solicited),
		  "ibv_req_notify_cq: %s", strerror(errno));
}

/* The SRQ's limit was reached once. */
static void srq_limit_event(struct ctx *c)
{
	struct pollfd pfd = { .fd = c->d.ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	E2E_CHECK(poll(&pfd, 1, E2E_WAIT_SECONDS * 1000) == 1,
		  "no SRQ limit event");
	E2E_CHECK(!ibv_get_async_event(c->d.ctx, &ev),
		  "ibv_get_async_event: %s", strerror(errno));
	E2E_CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		  ev.element.srq == c->srq, "async event %s, want "
		  "SRQ_LIMIT_REACHED", ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	E2E_CHECK(poll(&pfd, 1, 0) == 0, "a second async event");
	printf("SRQ limit reached: one event\n");
}

static void server(struct ctx *c)
{
	struct e2e_wc_expect exp;
	struct ibv_wc wc;
	unsigned int i;
	uint8_t *dst;

	for (i = 0; i < NMSGS; i++)
		post_recv(c, i, SLOT);
	if (c->srq) {
		struct ibv_srq_attr sa = { .srq_limit = SRQ_LIMIT };

		E2E_CHECK(!ibv_modify_srq(c->srq, &sa, IBV_SRQ_LIMIT),
			  "ibv_modify_srq: %s", strerror(errno));
	}
	arm(c, msgs[0].solicited);
	e2e_sync(c->sock, "receives posted");
	for (i = 0; i < NMSGS; i++) {
		bool write = msgs[i].opcode == IBV_WR_RDMA_WRITE_WITH_IMM;

		wait_event(c, &wc, "a message to a sleeping target");
		memset(&exp, 0, sizeof(exp));
		exp.wr_id = 100 + i;
		exp.status = IBV_WC_SUCCESS;
		exp.opcode = write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
		exp.qp_num = c->qp->qp_num;
		exp.check_len = true;
		exp.byte_len = msgs[i].len;
		exp.check_src_qp = true;
		exp.src_qp = c->peer.rc_qpn;
		if (msgs[i].opcode != IBV_WR_SEND) {
			exp.wc_flags = IBV_WC_WITH_IMM;
			exp.imm_data = imm_of(i);
		}
		e2e_check_wc(&wc, &exp, "receive");
		dst = write ? c->buf + WRITE_AREA : c->buf + i * SLOT;
		E2E_CHECK(e2e_pattern_ok(dst, msgs[i].len, 40 + i),
			  "message %u: wrong data", i);
		/* Armed again before the next message: exactly one event
		 * each, and a second CQE would have been found above. */
		E2E_CHECK(e2e_poll_now(c->rcq, &wc) == 0,
			  "message %u: more than one CQE", i);
		if (i + 1 < NMSGS)
			arm(c, msgs[i + 1].solicited);
		e2e_sync(c->sock, "got it");
	}
	printf("sleeping target: %zu messages, one event each\n", NMSGS);
	if (c->srq)
		srq_limit_event(c);

	/* RNR: the client sends first, the receives come later. */
	arm(c, false);
	e2e_sync(c->sock, "rnr sent");
	usleep(200 * 1000);
	for (i = 0; i < RNR_BURST; i++)
		post_recv(c, i, SLOT);
	for (i = 0; i < RNR_BURST; i++) {
		if (i)
			e2e_poll_one(c->rcq, &wc, "a SEND behind the RNR");
		else
			wait_event(c, &wc, "a SEND after RNR");
		E2E_CHECK(wc.wr_id == 100 + i && wc.status == IBV_WC_SUCCESS &&
			  wc.byte_len == RNR_LEN &&
			  e2e_pattern_ok(c->buf + i * SLOT, RNR_LEN, 60 + i),
			  "SEND %u after RNR: wr_id %llu status %s byte_len %u",
			  i, (unsigned long long)wc.wr_id,
			  ibv_wc_status_str(wc.status), wc.byte_len);
	}
	e2e_sync(c->sock, "rnr done");
	printf("RNR, then the SEND and the %u behind it\n", RNR_BURST - 1);

	/* A receive too short for the SEND. */
	post_recv(c, 1, SHORT_RECV);
	arm(c, false);
	e2e_sync(c->sock, "short posted");
	wait_event(c, &wc, "a SEND longer than the receive");
	E2E_CHECK(wc.wr_id == 101 && wc.status == IBV_WC_LOC_LEN_ERR,
		  "receive too short: wr_id %llu status %s, want "
		  "LOC_LEN_ERR", (unsigned long long)wc.wr_id,
		  ibv_wc_status_str(wc.status));
	e2e_sync(c->sock, "short done");
	printf("receive too short: LOC_LEN_ERR\n");
}

/* A SEND of the pattern seed, from buf + off. */
static void send_from(struct ctx *c, uint64_t wr_id, enum ibv_wr_opcode op,
		      uint32_t off, uint32_t len, uint32_t imm,
		      bool solicited, unsigned int seed)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf + off, .length = len,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = op, .imm_data = imm,
		.send_flags = IBV_SEND_SIGNALED |
			      (solicited ? IBV_SEND_SOLICITED : 0),
		.wr.rdma = { .remote_addr = c->peer.addr + WRITE_AREA,
			     .rkey = c->peer.rkey },
	}, *bad;
	int ret;

	e2e_pattern(c->buf + off, len, seed);
	ret = ibv_post_send(c->qp, &wr, &bad);
	E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
}

static void send_one(struct ctx *c, uint64_t wr_id, enum ibv_wr_opcode op,
		     uint32_t len, uint32_t imm, bool solicited,
		     unsigned int seed)
{
	send_from(c, wr_id, op, 0, len, imm, solicited, seed);
}

static void sent(struct ctx *c, uint64_t wr_id, enum ibv_wc_status status,
		 const char *what)
{
	struct ibv_wc wc;

	e2e_poll_one(c->scq, &wc, what);
	E2E_CHECK(wc.wr_id == wr_id && wc.status == status,
		  "%s: wr_id %llu status %s, want %s", what,
		  (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		  ibv_wc_status_str(status));
}

static void client(struct ctx *c)
{
	unsigned int i;

	e2e_sync(c->sock, "receives posted");
	for (i = 0; i < NMSGS; i++) {
		send_one(c, i, msgs[i].opcode, msgs[i].len, imm_of(i),
			 msgs[i].solicited, 40 + i);
		sent(c, i, IBV_WC_SUCCESS, "message to a sleeping target");
		e2e_sync(c->sock, "got it");
	}
	for (i = 0; i < RNR_BURST; i++)
		send_from(c, 50 + i, IBV_WR_SEND, i * SLOT, RNR_LEN, 0, false,
			  60 + i);
	e2e_sync(c->sock, "rnr sent");
	for (i = 0; i < RNR_BURST; i++)
		sent(c, 50 + i, IBV_WC_SUCCESS, "SEND after RNR");
	e2e_sync(c->sock, "rnr done");
	e2e_sync(c->sock, "short posted");
	send_one(c, 70, IBV_WR_SEND, 100, 0, false, 61);
	sent(c, 70, IBV_WC_REM_INV_REQ_ERR, "SEND longer than the receive");
	e2e_sync(c->sock, "short done");
	printf("client: every SEND as the IB spec has it\n");
}

/* Descriptors of ring memory (the sim may open sockets as it goes). */
static unsigned int count_fds(void)
{
	unsigned int rings;

	e2e_fd_table(&rings, NULL, 0);
	return rings;
}

static unsigned int count_ring_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned int n = 0;

	E2E_CHECK(f, "/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "pvrdma-ring") != NULL;
	fclose(f);
	return n;
}

static void churn(struct ctx *c, const struct e2e_rc_opts *opts,
		  bool is_server)
{
	struct e2e_peer me = { 0 }, peer;
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	unsigned int round, fds = 0, maps;
	struct ibv_cq *rcq = NULL;
	struct ibv_qp *qp = c->qp;
	struct ibv_wc wc;

	for (round = 0; round < CHURN_ROUNDS; round++) {
		if (is_server) {
			struct ibv_qp_init_attr qa = {
				.send_cq = c->scq, .qp_type = IBV_QPT_RC,
				.cap = { .max_send_wr = 4, .max_recv_wr = 4,
					 .max_send_sge = 1,
					 .max_recv_sge = 1 },
			};

			if (round == 1)
				fds = count_fds();
			rcq = ibv_create_cq(c->d.ctx, 4, NULL, NULL, 0);
			E2E_CHECK(rcq, "ibv_create_cq: %s", strerror(errno));
			qa.recv_cq = rcq;
			qp = ibv_create_qp(c->d.pd, &qa);
			E2E_CHECK(qp, "ibv_create_qp: %s", strerror(errno));
		} else {
			E2E_CHECK(!ibv_modify_qp(qp, &reset, IBV_QP_STATE),
				  "modify to RESET: %s", strerror(errno));
		}
		e2e_qp_to_init(qp, IBV_QPT_RC);
		me.rc_qpn = qp->qp_num;
		me.psn = round;
		me.rkey = c->mr->rkey;
		me.addr = (uintptr_t)c->buf;
		memcpy(me.gid, c->d.gid.raw, 16);
		e2e_exchange(c->sock, &me, &peer);
		e2e_rc_connect(&c->d, qp, me.psn, &peer, opts);
		if (is_server) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)c->buf, .length = 64,
				.lkey = c->mr->lkey,
			};
			struct ibv_recv_wr wr = {
				.wr_id = round, .sg_list = &sge, .num_sge = 1,
			}, *bad;

			E2E_CHECK(!ibv_post_recv(qp, &wr, &bad),
				  "ibv_post_recv: %s", strerror(errno));
		}
		e2e_sync(c->sock, "round");
		if (is_server) {
			e2e_poll_one(rcq, &wc, "a SEND of the round");
			E2E_CHECK(wc.status == IBV_WC_SUCCESS &&
				  wc.wr_id == round && wc.byte_len == 64,
				  "round %u: status %s", round,
				  ibv_wc_status_str(wc.status));
		} else {
			send_one(c, round, IBV_WR_SEND, 64, 0, false, round);
			sent(c, round, IBV_WC_SUCCESS, "a SEND of the round");
		}
		e2e_sync(c->sock, "round done");
		if (is_server) {
			E2E_CHECK(!ibv_destroy_qp(qp), "ibv_destroy_qp: %s",
				  strerror(errno));
			E2E_CHECK(!ibv_destroy_cq(rcq), "ibv_destroy_cq: %s",
				  strerror(errno));
		}
	}
	if (is_server) {
		E2E_CHECK(count_fds() == fds, "%u ring descriptors after %u "
			  "QPs and CQs came and went, %u before", count_fds(),
			  CHURN_ROUNDS, fds);
		printf("churn: %u QPs and CQs, no descriptor kept\n",
		       CHURN_ROUNDS);
	} else {
		maps = count_ring_maps();
		E2E_CHECK(maps <= MAX_RING_MAPS, "%u ring mappings after "
			  "%u peer QPs", maps, CHURN_ROUNDS);
		printf("churn: %u peer QPs, %u ring mappings\n",
		       CHURN_ROUNDS, maps);
	}
}

static void gone(struct ctx *c, bool is_server)
{
	pid_t pid = getpid();
	unsigned int i;
	char byte;

	e2e_send_all(c->sock, &pid, sizeof(pid));
	E2E_CHECK(e2e_recv_all(c->sock, &pid, sizeof(pid)), "peer went away");
	if (is_server) {
		post_recv(c, 0, SLOT);
		post_recv(c, 1, SLOT);
		e2e_sync(c->sock, "posted");
		e2e_sync(c->sock, "first");
		printf("passed: exiting with a receive posted\n");
		fflush(stdout);
		_exit(0);
	}
	e2e_sync(c->sock, "posted");
	send_one(c, 1, IBV_WR_SEND, 0, 0, false, 0);
	sent(c, 1, IBV_WC_SUCCESS, "an empty SEND");
	e2e_sync(c->sock, "first");
	/* The server is gone once its socket closes and it is reaped. */
	E2E_CHECK(!e2e_recv_all(c->sock, &byte, 1), "the server stayed");
	for (i = 0; i < E2E_WAIT_SECONDS * 100 && !kill(pid, 0); i++)
		usleep(10000);
	E2E_CHECK(kill(pid, 0) && errno == ESRCH, "the server stayed");
	send_one(c, 2, IBV_WR_SEND, 0, 0, false, 0);
	sent(c, 2, IBV_WC_RETRY_EXC_ERR, "an empty SEND to a target gone");
	printf("empty SEND to a target gone: RETRY_EXC_ERR\n");
	printf("passed\n");
	exit(0);
}

static void late(struct ctx *c, bool is_server)
{
	struct ibv_wc wc;

	if (is_server) {
		e2e_sync(c->sock, "sent");
		usleep(20 * 1000);
		post_recv(c, 0, SLOT);
		e2e_poll_one(c->rcq, &wc, "the SEND that waited");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS &&
			  wc.byte_len == RNR_LEN &&
			  e2e_pattern_ok(c->buf, RNR_LEN, 80),
			  "late receive: status %s byte_len %u",
			  ibv_wc_status_str(wc.status), wc.byte_len);
		printf("a SEND that waited for its receive\n");
		return;
	}
	send_one(c, 80, IBV_WR_SEND, RNR_LEN, 0, false, 80);
	e2e_sync(c->sock, "sent");
	sent(c, 80, IBV_WC_SUCCESS, "a SEND before its receive");
}

#define MAX_RING_FDS	64

/* ftruncate(0) on every ring file in the fd table: how many shrank. */
static unsigned int truncate_ring_files(unsigned int *found)
{
	int fds[MAX_RING_FDS];
	unsigned int i, n = 0;

	e2e_fd_table(found, fds, MAX_RING_FDS);
	E2E_CHECK(*found <= MAX_RING_FDS, "%u ring files", *found);
	for (i = 0; i < *found; i++)
		n += !ftruncate(fds[i], 0);
	return n;
}

struct shrink_count {
	unsigned int found, shrank;
};

static void truncate_segment_fd(int fd, const char *target, void *arg)
{
	struct shrink_count *f = arg;

	if (!strstr(target, "pvrdma-segment"))
		return;
	f->found++;
	f->shrank += !ftruncate(fd, 0);
}

/* truncate(0) on this process's fabric files in the run directory. */
static void truncate_rundir_files(struct shrink_count *f)
{
	const char *rundir = getenv("PVRDMA_SIM_RUNDIR");
	char prefix[64], path[600];
	struct dirent *de;
	DIR *d;

	E2E_CHECK(rundir && (d = opendir(rundir)), "run directory %s",
		  rundir ? rundir : "not set");
	snprintf(prefix, sizeof(prefix), "fabric-%d-", (int)getpid());
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", rundir, de->d_name);
		f->found++;
		f->shrank += !truncate(path, 0);
	}
	closedir(d);
}

static void truncate_mode(struct ctx *c, bool is_server)
{
	struct shrink_count segs = { 0 }, files = { 0 };
	unsigned int found, shrunk, i;
	struct ibv_wc wc;

	if (is_server) {
		post_recv(c, 0, SLOT);
		post_recv(c, 1, SLOT);
		e2e_sync(c->sock, "posted");
		for (i = 0; i < 2; i++) {
			if (i) {
				shrunk = truncate_ring_files(&found);
				printf("ring files: %u found, %u shrank\n",
				       found, shrunk);
				e2e_fd_walk(truncate_segment_fd, &segs);
				printf("segment files: %u found, %u shrank\n",
				       segs.found, segs.shrank);
				truncate_rundir_files(&files);
				printf("run directory files: %u found, "
				       "%u shrank\n", files.found,
				       files.shrank);
				e2e_sync(c->sock, "truncated");
			}
			e2e_poll_one(c->rcq, &wc, "a SEND");
			E2E_CHECK(wc.status == IBV_WC_SUCCESS &&
				  wc.wr_id == 100 + i && wc.byte_len == 100 &&
				  e2e_pattern_ok(c->buf + i * SLOT, 100, 70 + i),
				  "SEND %u: status %s", i,
				  ibv_wc_status_str(wc.status));
			e2e_sync(c->sock, "received");
		}
		return;
	}
	e2e_sync(c->sock, "posted");
	for (i = 0; i < 2; i++) {
		if (i)
			e2e_sync(c->sock, "truncated");
		send_one(c, i, IBV_WR_SEND, 100, 0, false, 70 + i);
		sent(c, i, IBV_WC_SUCCESS, "a SEND");
		e2e_sync(c->sock, "received");
	}
	printf("client: both SENDs completed\n");
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct e2e_peer me = { 0 };
	struct e2e_rc_opts opts = {
		.rnr_retry = 7,		/* until the receive is there */
		.set_rnr_retry = true,
		.min_rnr_timer = 1,
	};
	struct ctx c = { 0 };
	bool srq;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single, "--server or --client");
	E2E_CHECK(args.mode && (!strcmp(args.mode, "rq") ||
				!strcmp(args.mode, "srq") ||
				!strcmp(args.mode, "churn") ||
				!strcmp(args.mode, "late") ||
				!strcmp(args.mode, "gone") ||
				!strcmp(args.mode, "truncate")),
		  "--mode rq, srq, churn, late, gone or truncate");
	srq = !strcmp(args.mode, "srq");
	if (!strcmp(args.mode, "late"))
		opts.min_rnr_timer = 31;
	if (!strcmp(args.mode, "gone")) {
		/* ~17 ms a try, 2 retries: a target that is gone fails the
		 * SEND in well under a second. */
		opts.timeout = 12;
		opts.retry_cnt = 2;
	}
	e2e_open(&c.d, args.dev, args.gid_index);
	c.ch = ibv_create_comp_channel(c.d.ctx);
	E2E_CHECK(c.ch, "ibv_create_comp_channel: %s", strerror(errno));
	c.scq = ibv_create_cq(c.d.ctx, 16, NULL, NULL, 0);
	c.rcq = ibv_create_cq(c.d.ctx, 16, NULL, c.ch, 0);
	E2E_CHECK(c.scq && c.rcq, "ibv_create_cq: %s", strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&c.buf, 4096, BUF_SIZE),
		  "out of memory");
	memset(c.buf, 0, BUF_SIZE);
	c.mr = ibv_reg_mr(c.d.pd, c.buf, BUF_SIZE,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	E2E_CHECK(c.mr, "ibv_reg_mr: %s", strerror(errno));
	if (srq && args.server) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 16, .max_sge = 2 },
		};

		c.srq = ibv_create_srq(c.d.pd, &sa);
		E2E_CHECK(c.srq, "ibv_create_srq: %s", strerror(errno));
	}
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = c.scq, .recv_cq = c.rcq, .srq = c.srq,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16,
				 .max_send_sge = 2, .max_recv_sge = 2 },
			.qp_type = IBV_QPT_RC,
		};

		c.qp = ibv_create_qp(c.d.pd, &qa);
		E2E_CHECK(c.qp, "ibv_create_qp: %s", strerror(errno));
	}
	e2e_qp_to_init(c.qp, IBV_QPT_RC);
	me.rc_qpn = c.qp->qp_num;
	me.psn = args.server ? 0x333 : 0x444;
	me.rkey = c.mr->rkey;
	me.addr = (uintptr_t)c.buf;
	memcpy(me.gid, c.d.gid.raw, 16);

	c.sock = e2e_channel_open(&args);
	e2e_exchange(c.sock, &me, &c.peer);
	e2e_rc_connect(&c.d, c.qp, me.psn, &c.peer, &opts);
	e2e_sync(c.sock, "connected");
	if (!strcmp(args.mode, "churn"))
		churn(&c, &opts, args.server);
	else if (!strcmp(args.mode, "gone"))
		gone(&c, args.server);
	else if (!strcmp(args.mode, "late"))
		late(&c, args.server);
	else if (!strcmp(args.mode, "truncate"))
		truncate_mode(&c, args.server);
	else if (args.server)
		server(&c);
	else
		client(&c);
	e2e_sync(c.sock, "bye");
	ibv_destroy_qp(c.qp);
	if (c.srq)
		ibv_destroy_srq(c.srq);
	ibv_dereg_mr(c.mr);
	ibv_destroy_cq(c.scq);
	ibv_destroy_cq(c.rcq);
	ibv_destroy_comp_channel(c.ch);
	free(c.buf);
	e2e_close(&c.d);
	close(c.sock);
	printf("passed\n");
	return 0;
}
