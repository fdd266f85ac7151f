// SPDX-License-Identifier: BSD-2-Clause
/*
 * RC reliability between two processes: the requester (client) streams
 * SENDs and RDMA READs at the responder (server); every message must arrive
 * once, in order and intact, and every WR must complete, whatever happens
 * to the responder in between. The mode picks what happens:
 *
 *   send-read-send  one post list of SEND, RDMA READ, SEND, twice: three
 *                   completions each time, in order (the responder once
 *                   wedged its device on the ACK queued behind the READ)
 *   sigstop         the client stops the server process with SIGSTOP for
 *                   PAUSE_MS, well inside timeout x retry_cnt, while it
 *                   streams, then continues it: the stream resumes and
 *                   nothing is lost, duplicated or reordered
 *   sigstop-beyond  the server is stopped before the stream starts and
 *                   the pause outlasts the retry budget: the oldest WR
 *                   completes RETRY_EXC_ERR, the ones behind it flush, and
 *                   once continued the server, which got an in-order
 *                   prefix of the stream, tears down cleanly
 *   sigstop-full    as sigstop-beyond, with 256 KiB RDMA WRITEs instead of
 *                   the SENDs: the requester's link to the stopped peer
 *                   fills up, and its timer must still run out
 *
 *   rc_recovery --server|--client --port P --mode M [--dev D]
 *
 * RC_RECOVERY_PAUSE_MS in the client's environment sets the sigstop pause
 * (the retry budget is about 8.6 s). With RC_RECOVERY_LINK_DOWN and
 * RC_RECOVERY_LINK_UP set (shell commands), the client takes the link to
 * the server down and up with them instead of stopping and continuing the
 * server: the fault of the network between two hosts (multihost.sh).
 */
#include "e2e_common.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG_SIZE	256
#define READ_LEN	512
#define READ_SLOTS	16	/* distinct regions the reads cover */
#define SQ_DEPTH	64
#define RQ_DEPTH	128
#define STREAM_WRS	4000	/* WRs of the sigstop streams */
#define READ_EVERY	8	/* every 8th WR of a stream is a READ */
#define PAUSE_MS	2000	/* RC_RECOVERY_PAUSE_MS overrides */

/* Buffer layout, the same on both sides. */
#define RECV_OFF	0
#define SEND_OFF	(RECV_OFF + RQ_DEPTH * MSG_SIZE)
#define READ_SRC_OFF	(SEND_OFF + SQ_DEPTH * MSG_SIZE)
#define READ_DST_OFF	(READ_SRC_OFF + READ_SLOTS * READ_LEN)
#define BIG_OFF		(READ_DST_OFF + SQ_DEPTH * READ_LEN)
#define BIG_LEN		(256 * 1024)
#define BUF_SIZE	(BIG_OFF + BIG_LEN)

struct msg {
	uint32_t seq;
	uint32_t pad;
	uint8_t body[MSG_SIZE - 8];
};

struct side {
	struct e2e_dev d;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct e2e_peer me, peer;
	int sock;
	const char *mode;
};

/* A client that fails while the server is stopped must not leave it so. */
static pid_t stopped_peer;

/* Stops (or continues) the server, or takes the link down (or up). */
static bool peer_fault(pid_t peer, bool stop)
{
	const char *cmd = getenv(stop ? "RC_RECOVERY_LINK_DOWN" :
					"RC_RECOVERY_LINK_UP");

	if (cmd && *cmd)
		return system(cmd) == 0;
	return !kill(peer, stop ? SIGSTOP : SIGCONT);
}

static void continue_peer(void)
{
	if (stopped_peer)
		peer_fault(stopped_peer, false);
}

static bool mode_is(const struct side *s, const char *m)
{
	return !strcmp(s->mode, m);
}

/* The modes where the pause outlasts the retry budget. */
static bool beyond_budget(const struct side *s)
{
	return mode_is(s, "sigstop-beyond") || mode_is(s, "sigstop-full");
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool is_read(uint64_t i)
{
	return i % READ_EVERY == READ_EVERY - 1;
}

static void setup(struct side *s, const struct e2e_args *args)
{
	unsigned int i;

	e2e_open(&s->d, args->dev, args->gid_index);
	s->scq = ibv_create_cq(s->d.ctx, SQ_DEPTH * 2, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->d.ctx, RQ_DEPTH * 2, NULL, NULL, 0);
	E2E_CHECK(s->scq && s->rcq, "ibv_create_cq: %s", strerror(errno));
	E2E_CHECK(!posix_memalign((void **)&s->buf, 4096, BUF_SIZE),
		  "out of memory");
	memset(s->buf, 0, BUF_SIZE);
	for (i = 0; i < READ_SLOTS; i++)
		e2e_pattern(s->buf + READ_SRC_OFF + i * READ_LEN, READ_LEN,
			    1000 + i);
	s->mr = ibv_reg_mr(s->d.pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	s->qp = e2e_create_qp(&s->d, IBV_QPT_RC, s->scq, s->rcq,
			      RQ_DEPTH > SQ_DEPTH ? RQ_DEPTH : SQ_DEPTH, 1);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
	s->me.rc_qpn = s->qp->qp_num;
	s->me.psn = args->server ? 0x10203 : 0xfffff0;	/* wraps soon */
	s->me.rkey = s->mr->rkey;
	s->me.addr = (uintptr_t)s->buf;
	memcpy(s->me.gid, s->d.gid.raw, 16);
}

static void connect_qp(struct side *s)
{
	struct e2e_rc_opts opts = {
		/* 4.096 us * 2^18 ~ 1.07 s a try, 7 retries: a budget of
		 * about 8.6 s, four times the pause. */
		.timeout = 18,
		.retry_cnt = 7,
		.rnr_retry = 7,		/* a slow receiver is no error */
		.min_rnr_timer = 1,
		.set_rnr_retry = true,
	};

	if (beyond_budget(s)) {
		/* 4.096 us * 2^12 ~ 17 ms a try, 2 retries: ~50 ms. */
		opts.timeout = 12;
		opts.retry_cnt = 2;
	}
	e2e_exchange(s->sock, &s->me, &s->peer);
	e2e_rc_connect(&s->d, s->qp, s->me.psn, &s->peer, &opts);
}

static void post_recv(struct side *s, unsigned int slot)
{
	struct ibv_sge sge = {
		(uintptr_t)s->buf + RECV_OFF + slot * MSG_SIZE, MSG_SIZE,
		s->mr->lkey
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot, .sg_list = &sge, .num_sge = 1
	}, *bad;
	int ret = ibv_post_recv(s->qp, &wr, &bad);

	E2E_CHECK(!ret, "ibv_post_recv: %s", strerror(ret));
}

/* Fills the send WR of stream element i (a SEND of sequence number seq,
 * or a READ) into wr/sge; slot is its SQ-sized buffer slot. */
static void make_wr(struct side *s, uint64_t i, uint32_t seq,
		    struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	unsigned int slot = i % SQ_DEPTH;

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = i;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	sge->lkey = s->mr->lkey;
	if (is_read(i)) {
		sge->addr = (uintptr_t)s->buf + READ_DST_OFF +
			    slot * READ_LEN;
		sge->length = READ_LEN;
		memset((void *)(uintptr_t)sge->addr, 0, READ_LEN);
		wr->opcode = IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = s->peer.addr + READ_SRC_OFF +
			(i / READ_EVERY % READ_SLOTS) * READ_LEN;
		wr->wr.rdma.rkey = s->peer.rkey;
	} else if (mode_is(s, "sigstop-full")) {
		sge->addr = (uintptr_t)s->buf + BIG_OFF;
		sge->length = BIG_LEN;
		wr->opcode = IBV_WR_RDMA_WRITE;
		wr->wr.rdma.remote_addr = s->peer.addr + BIG_OFF;
		wr->wr.rdma.rkey = s->peer.rkey;
	} else {
		struct msg *m = (struct msg *)(s->buf + SEND_OFF +
					       slot * MSG_SIZE);

		m->seq = seq;
		m->pad = 0;
		e2e_pattern(m->body, sizeof(m->body), seq);
		sge->addr = (uintptr_t)m;
		sge->length = MSG_SIZE;
		wr->opcode = IBV_WR_SEND;
	}
}

static void check_send_wc(struct side *s, const struct ibv_wc *wc,
			  uint64_t i)
{
	const uint8_t *dst = s->buf + READ_DST_OFF +
			     (i % SQ_DEPTH) * READ_LEN;

	E2E_CHECK(wc->status == IBV_WC_SUCCESS,
		  "WR %llu: status %s", (unsigned long long)i,
		  ibv_wc_status_str(wc->status));
	E2E_CHECK(wc->wr_id == i, "completion of WR %llu, want WR %llu "
		  "(out of order or lost)", (unsigned long long)wc->wr_id,
		  (unsigned long long)i);
	E2E_CHECK(wc->opcode == (is_read(i) ? IBV_WC_RDMA_READ :
				 mode_is(s, "sigstop-full") ?
				 IBV_WC_RDMA_WRITE : IBV_WC_SEND),
		  "WR %llu: opcode %d", (unsigned long long)i, wc->opcode);
	if (is_read(i))
		E2E_CHECK(e2e_pattern_ok(dst, READ_LEN, 1000 + i / READ_EVERY %
					 READ_SLOTS),
			  "READ %llu: wrong data", (unsigned long long)i);
}

/* Checks one receive completion: the next message of the stream. */
static void check_recv_wc(struct side *s, const struct ibv_wc *wc,
			  uint32_t *next_seq)
{
	const struct msg *m;

	E2E_CHECK(wc->status == IBV_WC_SUCCESS, "receive: status %s",
		  ibv_wc_status_str(wc->status));
	E2E_CHECK(wc->opcode == IBV_WC_RECV && wc->byte_len == MSG_SIZE &&
		  wc->wr_id < RQ_DEPTH,
		  "receive: opcode %d byte_len %u wr_id %llu", wc->opcode,
		  wc->byte_len, (unsigned long long)wc->wr_id);
	m = (const struct msg *)(s->buf + RECV_OFF + wc->wr_id * MSG_SIZE);
	E2E_CHECK(m->seq == *next_seq,
		  "message %u arrived, want %u (lost, duplicated or reordered)",
		  m->seq, *next_seq);
	E2E_CHECK(e2e_pattern_ok(m->body, sizeof(m->body), m->seq),
		  "message %u: payload corrupted", m->seq);
	(*next_seq)++;
	post_recv(s, wc->wr_id);
}

static bool sock_readable(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static void send_read_send_client(struct side *s)
{
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[3];
	struct ibv_wc wc;
	uint64_t round, i;
	int ret;

	for (round = 0; round < 2; round++) {
		e2e_sync(s->sock, "receives posted");
		/* Stream elements 6, 7, 8: SEND, READ, SEND. */
		for (i = 0; i < 3; i++) {
			make_wr(s, 6 + i + round * READ_EVERY,
				2 * round + (i == 2), &wr[i], &sge[i]);
			wr[i].next = i < 2 ? &wr[i + 1] : NULL;
		}
		ret = ibv_post_send(s->qp, wr, &bad);
		E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
		for (i = 0; i < 3; i++) {
			e2e_poll_one(s->scq, &wc, "SEND, READ, SEND");
			check_send_wc(s, &wc, 6 + i + round * READ_EVERY);
		}
	}
}

static void send_read_send_server(struct side *s)
{
	uint32_t next_seq = 0;
	struct ibv_wc wc;
	int round, i;

	post_recv(s, 0);
	post_recv(s, 1);
	for (round = 0; round < 2; round++) {
		e2e_sync(s->sock, "receives posted");
		for (i = 0; i < 2; i++) {
			e2e_poll_one(s->rcq, &wc, "the two SENDs");
			check_recv_wc(s, &wc, &next_seq);
		}
	}
}

/*
 * The stream: posts STREAM_WRS WRs, at most SQ_DEPTH in flight, and checks
 * each completion in order. Stops the peer after a quarter of it (beyond
 * the budget: at once, so that the short timeout never meets a merely slow
 * peer); the pause ends after PAUSE_MS, or, beyond the budget, once the
 * error came.
 */
static void stream_client(struct side *s, pid_t peer_pid)
{
	bool beyond = beyond_budget(s);
	uint64_t posted = 0, done = 0, stopped_at = 0, last_progress;
	uint32_t seq = 0, sends_ok = 0;
	bool stopped = false, resumed = false, failed = false;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[16];
	const char *env = getenv("RC_RECOVERY_PAUSE_MS");
	uint64_t pause_ms = env ? strtoull(env, NULL, 0) : PAUSE_MS;
	int n, k, ret;

	last_progress = now_ms();
	while (done < posted || posted < STREAM_WRS) {
		while (!failed && posted < STREAM_WRS &&
		       posted - done < SQ_DEPTH) {
			make_wr(s, posted, seq, &wr, &sge);
			if (!is_read(posted))
				seq++;
			ret = ibv_post_send(s->qp, &wr, &bad);
			E2E_CHECK(!ret, "ibv_post_send: %s", strerror(ret));
			posted++;
		}
		if (!stopped && posted >= (beyond ? 0 : STREAM_WRS / 4)) {
			stopped_peer = peer_pid;
			atexit(continue_peer);
			E2E_CHECK(peer_fault(peer_pid, true),
				  "stopping the server: %s", strerror(errno));
			stopped = true;
			stopped_at = now_ms();
			printf("stopped the server after %llu WRs\n",
			       (unsigned long long)posted);
		}
		if (stopped && !resumed &&
		    (beyond ? failed : now_ms() - stopped_at >= pause_ms)) {
			E2E_CHECK(peer_fault(peer_pid, false),
				  "continuing the server: %s", strerror(errno));
			stopped_peer = 0;
			resumed = true;
			printf("continued the server after %llu ms, %llu WRs "
			       "done\n",
			       (unsigned long long)(now_ms() - stopped_at),
			       (unsigned long long)done);
		}
		n = ibv_poll_cq(s->scq, 16, wc);
		E2E_CHECK(n >= 0, "ibv_poll_cq: %d", n);
		for (k = 0; k < n; k++, done++) {
			if (beyond && !failed &&
			    wc[k].status == IBV_WC_RETRY_EXC_ERR) {
				E2E_CHECK(stopped, "RETRY_EXC unpaused");
				E2E_CHECK(wc[k].wr_id == done,
					  "error on WR %llu, want %llu",
					  (unsigned long long)wc[k].wr_id,
					  (unsigned long long)done);
				printf("WR %llu: %s after %llu ms\n",
				       (unsigned long long)done,
				       ibv_wc_status_str(wc[k].status),
				       (unsigned long long)(now_ms() -
							    stopped_at));
				failed = true;
				continue;
			}
			if (failed) {
				E2E_CHECK(wc[k].status == IBV_WC_WR_FLUSH_ERR &&
					  wc[k].wr_id == done,
					  "behind the error: WR %llu %s",
					  (unsigned long long)wc[k].wr_id,
					  ibv_wc_status_str(wc[k].status));
				continue;
			}
			check_send_wc(s, &wc[k], done);
			sends_ok += wc[k].opcode == IBV_WC_SEND;
		}
		if (n) {
			last_progress = now_ms();
		} else {
			E2E_CHECK(now_ms() - last_progress <
				  (pause_ms + E2E_WAIT_SECONDS * 1000ull),
				  "no completion for %d s (%llu of %llu done)",
				  E2E_WAIT_SECONDS,
				  (unsigned long long)done,
				  (unsigned long long)posted);
			usleep(100);
		}
		if (failed && done == posted)
			break;
	}
	E2E_CHECK(resumed, "the server was never continued");
	E2E_CHECK(beyond == failed, "%s",
		  beyond ? "no RETRY_EXC_ERR beyond the retry budget" :
			   "an error within the retry budget");
	printf("%llu WRs done, %u SENDs completed\n",
	       (unsigned long long)done, sends_ok);
	e2e_send_all(s->sock, &sends_ok, sizeof(sends_ok));
}

static uint32_t stream_sends(void)
{
	return STREAM_WRS - STREAM_WRS / READ_EVERY;
}

static void stream_server(struct side *s)
{
	bool beyond = beyond_budget(s);
	uint32_t next_seq = 0, sent = 0;
	uint64_t last_progress = now_ms();
	struct ibv_wc wc[16];
	bool told = false;
	int n, k;

	/* Until every SEND came, or, beyond the budget, until the client
	 * says how many it got through. */
	while (beyond ? !told || next_seq < sent :
			next_seq < stream_sends()) {
		n = ibv_poll_cq(s->rcq, 16, wc);
		E2E_CHECK(n >= 0, "ibv_poll_cq: %d", n);
		for (k = 0; k < n; k++)
			check_recv_wc(s, &wc[k], &next_seq);
		if (n) {
			last_progress = now_ms();
			continue;
		}
		if (beyond && !told && sock_readable(s->sock)) {
			E2E_CHECK(e2e_recv_all(s->sock, &sent, sizeof(sent)),
				  "client went away");
			/* What the requester saw complete arrived; the
			 * rest may or may not have. */
			told = true;
			continue;
		}
		/* the pause stops this process too: its clock jumps */
		if (now_ms() - last_progress > 1000ull * E2E_WAIT_SECONDS)
			E2E_CHECK(0, "no message for %d s (%u of %u)",
				  E2E_WAIT_SECONDS, next_seq,
				  beyond ? sent : stream_sends());
		usleep(100);
	}
	if (!beyond)
		E2E_CHECK(e2e_recv_all(s->sock, &sent, sizeof(sent)),
			  "client went away");
	/* What came in late must still be in order. */
	while ((n = ibv_poll_cq(s->rcq, 16, wc)) > 0)
		for (k = 0; k < n; k++)
			check_recv_wc(s, &wc[k], &next_seq);
	printf("%u messages in order, the client completed %u\n", next_seq,
	       sent);
	if (beyond)
		E2E_CHECK(next_seq >= sent && next_seq < stream_sends(),
			  "got %u messages, the client completed %u",
			  next_seq, sent);
	else
		E2E_CHECK(next_seq == sent, "got %u messages, the client "
			  "sent %u", next_seq, sent);
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side s;
	pid_t pid;
	unsigned int i;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single && args.mode,
		  "needs --server or --client, and --mode");
	memset(&s, 0, sizeof(s));
	s.mode = args.mode;
	E2E_CHECK(mode_is(&s, "send-read-send") || mode_is(&s, "sigstop") ||
		  beyond_budget(&s), "unknown mode %s", s.mode);
	setup(&s, &args);
	s.sock = e2e_channel_open(&args);
	if (args.server && !mode_is(&s, "send-read-send"))
		for (i = 0; i < RQ_DEPTH; i++)
			post_recv(&s, i);
	connect_qp(&s);
	pid = getpid();
	e2e_send_all(s.sock, &pid, sizeof(pid));
	E2E_CHECK(e2e_recv_all(s.sock, &pid, sizeof(pid)),
		  "peer went away");
	e2e_sync(s.sock, "connected");

	if (mode_is(&s, "send-read-send")) {
		if (args.server)
			send_read_send_server(&s);
		else
			send_read_send_client(&s);
	} else if (args.server) {
		stream_server(&s);
	} else {
		stream_client(&s, pid);
	}
	e2e_sync(s.sock, "done");

	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(s.mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.scq), "ibv_destroy_cq failed");
	E2E_CHECK(!ibv_destroy_cq(s.rcq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	free(s.buf);
	printf("rc_recovery %s (%s): passed\n",
	       args.server ? "server" : "client", s.mode);
	return 0;
}
