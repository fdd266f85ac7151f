// SPDX-License-Identifier: BSD-2-Clause
/*
 * A target that serves many requesters at once on one host, each on its own
 * RC QP, CQ and MR, and the requesters it serves. Used by the same-host
 * stall test (same_host_stall.sh) and by the soak (tests/soak/soak.sh).
 *
 *   same_host_hub --server --port P [--expect N]
 *	serves clients until N have come and gone (0: until SIGTERM). Each
 *	client gets a QP, a CQ and a registered buffer of its own, made when
 *	it connects and destroyed when its TCP channel closes (also when the
 *	client was killed). Every SEND it receives it answers with a SEND of
 *	the same first 8 bytes. On SIGUSR1 it prints one status line:
 *	"hub: clients C fds F rings R served S" (its open descriptors and the
 *	sim's ring files among them), so that a caller can check that killed
 *	clients left nothing behind.
 *   same_host_hub --client --port P --mode writer --expect SECONDS
 *	streams 4 MiB RDMA WRITEs (4 outstanding) into its buffer at the
 *	hub for SECONDS or until SIGUSR1, then reads the first MiB back and
 *	checks it.
 *   same_host_hub --client --port P --mode pinger --expect MS
 *	ping-pongs 64-byte SENDs with the hub for 60 s or until SIGUSR1;
 *	fails if a round trip takes MS milliseconds or more (the bound a
 *	stopped requester may hold the hub up by), prints the largest.
 *   same_host_hub --client --port P --mode mixed --expect OPS
 *	OPS random operations (WRITE lists, READs checked against what it
 *	wrote, FETCH_AND_ADDs checked against its own count, SEND ping-pongs),
 *	seeded by its pid.
 */
#include "e2e_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS	64
#define WRITE_LEN	(1u << 20)
#define WRITE_LIST	4u
#define WRITE_DEPTH	4u
/* The client's area at the hub: its WRITE slots, then its counter. */
#define ATOMIC_OFF	(WRITE_LIST * WRITE_LEN)
#define RDMA_LEN	(ATOMIC_OFF + 4096)
#define MSG_LEN		64u
#define RECVS		16u
#define BUF_LEN		(RDMA_LEN + RECVS * MSG_LEN + MSG_LEN)
#define PING_SECONDS	60

struct client {
	int sock;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	bool broken;		/* its QP failed: no more replies */
};

static volatile sig_atomic_t status_asked, stop_asked;

static void on_usr1(int sig)
{
	(void)sig;
	status_asked = 1;
}

static void on_term(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *at,
		     uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)at, .length = MSG_LEN, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_one(struct ibv_qp *qp, enum ibv_wr_opcode op,
		    struct ibv_sge *sge, uint64_t raddr, uint32_t rkey,
		    uint64_t id)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* ---- the hub ---- */

static void client_drop(struct client *c)
{
	if (c->qp)
		E2E_CHECK(!ibv_destroy_qp(c->qp), "destroy QP");
	if (c->cq)
		E2E_CHECK(!ibv_destroy_cq(c->cq), "destroy CQ");
	if (c->mr)
		E2E_CHECK(!ibv_dereg_mr(c->mr), "dereg MR");
	free(c->buf);
	close(c->sock);
	memset(c, 0, sizeof(*c));
	c->sock = -1;
}

/* A new client: its objects, the exchange, its receives. false: it went
 * away before it was set up (its objects are gone again). */
static bool client_setup(struct e2e_dev *d, struct client *c, int sock)
{
	struct e2e_peer mine = { 0 }, theirs;
	unsigned int i;

	c->sock = sock;
	c->buf = calloc(1, BUF_LEN);
	E2E_CHECK(c->buf, "no memory");
	c->cq = ibv_create_cq(d->ctx, 2 * RECVS + 8, NULL, NULL, 0);
	E2E_CHECK(c->cq, "create CQ: %s", strerror(errno));
	c->qp = e2e_create_qp(d, IBV_QPT_RC, c->cq, c->cq, RECVS + 4, 1);
	c->mr = ibv_reg_mr(d->pd, c->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	E2E_CHECK(c->mr, "reg MR: %s", strerror(errno));
	e2e_qp_to_init(c->qp, IBV_QPT_RC);
	mine.rc_qpn = c->qp->qp_num;
	mine.psn = 1;
	mine.rkey = c->mr->rkey;
	mine.addr = (uintptr_t)c->buf;
	memcpy(mine.gid, d->gid.raw, 16);
	if (!e2e_recv_all(sock, &theirs, sizeof(theirs))) {
		client_drop(c);
		return false;
	}
	e2e_send_all(sock, &mine, sizeof(mine));
	e2e_rc_connect(d, c->qp, mine.psn, &theirs, NULL);
	for (i = 0; i < RECVS; i++)
		E2E_CHECK(!post_recv(c->qp, c->mr, c->buf + RDMA_LEN +
				     i * MSG_LEN, i), "post recv");
	return true;
}

/* Answers each SEND with a SEND of its first 8 bytes. */
static void client_poll(struct client *c)
{
	uint8_t *reply = c->buf + RDMA_LEN + RECVS * MSG_LEN;
	struct ibv_sge sge = {
		.addr = (uintptr_t)reply, .length = MSG_LEN,
		.lkey = c->mr->lkey,
	};
	struct ibv_wc wc;
	uint8_t *msg;

	while (!c->broken && e2e_poll_now(c->cq, &wc)) {
		if (wc.status != IBV_WC_SUCCESS) {
			c->broken = true;	/* the client is gone */
			break;
		}
		if (wc.opcode != IBV_WC_RECV)
			continue;
		msg = c->buf + RDMA_LEN + wc.wr_id * MSG_LEN;
		memcpy(reply, msg, 8);
		if (post_recv(c->qp, c->mr, msg, wc.wr_id) ||
		    post_one(c->qp, IBV_WR_SEND, &sge, 0, 0, RECVS))
			c->broken = true;
	}
}

static int hub_listen(int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	E2E_CHECK(s >= 0, "socket: %s", strerror(errno));
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	E2E_CHECK(!bind(s, (struct sockaddr *)&sa, sizeof(sa)),
		  "bind port %d: %s", port, strerror(errno));
	E2E_CHECK(!listen(s, MAX_CLIENTS), "listen: %s", strerror(errno));
	return s;
}

static void hub_status(const struct client *cl, long served)
{
	unsigned int i, n = 0, rings, fds = e2e_fd_table(&rings, NULL, 0);

	for (i = 0; i < MAX_CLIENTS; i++)
		n += cl[i].sock >= 0;
	printf("hub: clients %u fds %u rings %u served %ld\n", n, fds, rings,
	       served);
}

/* One pass: new clients, gone clients, completions. */
static void hub_pass(struct e2e_dev *d, int ls, struct client *cl,
		     long *served)
{
	struct pollfd pf[MAX_CLIENTS + 1];
	unsigned int i, n = 0, map[MAX_CLIENTS];
	char junk[64];
	int s, one = 1;

	pf[n++] = (struct pollfd){ .fd = ls, .events = POLLIN };
	for (i = 0; i < MAX_CLIENTS; i++) {
		if (cl[i].sock < 0)
			continue;
		map[n - 1] = i;
		pf[n++] = (struct pollfd){ .fd = cl[i].sock, .events = POLLIN };
	}
	if (poll(pf, n, 1) <= 0)
		goto completions;
	for (i = 1; i < n; i++) {
		if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		/* The channel carries nothing after the exchange: EOF. */
		if (read(pf[i].fd, junk, sizeof(junk)) <= 0) {
			client_drop(&cl[map[i - 1]]);
			(*served)++;
		}
	}
	if (pf[0].revents & POLLIN) {
		s = accept(ls, NULL, NULL);
		for (i = 0; s >= 0 && i < MAX_CLIENTS && cl[i].sock >= 0; i++)
			;
		if (s >= 0 && i == MAX_CLIENTS) {
			close(s);
		} else if (s >= 0) {
			setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			if (!client_setup(d, &cl[i], s))
				(*served)++;
		}
	}
completions:
	for (i = 0; i < MAX_CLIENTS; i++)
		if (cl[i].sock >= 0)
			client_poll(&cl[i]);
}

static int hub(const struct e2e_args *args)
{
	static struct client cl[MAX_CLIENTS];
	struct e2e_dev d;
	long served = 0;
	unsigned int i;
	int ls;

	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < MAX_CLIENTS; i++)
		cl[i].sock = -1;
	e2e_open(&d, args->dev, args->gid_index);
	ls = hub_listen(args->port);
	printf("hub: listening on %d\n", args->port);
	while (!stop_asked && (!args->expect || served < args->expect)) {
		hub_pass(&d, ls, cl, &served);
		if (status_asked) {
			status_asked = 0;
			hub_status(cl, served);
		}
	}
	for (i = 0; i < MAX_CLIENTS; i++)
		if (cl[i].sock >= 0)
			client_drop(&cl[i]);
	close(ls);
	e2e_close(&d);
	printf("hub: done, %ld clients served\n", served);
	return 0;
}

/* ---- the clients ---- */

struct conn {
	struct e2e_dev d;
	int sock;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct e2e_peer hub;
};

static void conn_open(const struct e2e_args *args, struct conn *c)
{
	struct e2e_peer mine = { 0 };

	e2e_open(&c->d, args->dev, args->gid_index);
	c->buf = calloc(1, BUF_LEN);
	E2E_CHECK(c->buf, "no memory");
	c->cq = ibv_create_cq(c->d.ctx, 64, NULL, NULL, 0);
	E2E_CHECK(c->cq, "create CQ: %s", strerror(errno));
	c->qp = e2e_create_qp(&c->d, IBV_QPT_RC, c->cq, c->cq, 32, 1);
	c->mr = ibv_reg_mr(c->d.pd, c->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(c->mr, "reg MR: %s", strerror(errno));
	e2e_qp_to_init(c->qp, IBV_QPT_RC);
	c->sock = e2e_channel_open(args);
	mine.rc_qpn = c->qp->qp_num;
	mine.psn = 1;
	memcpy(mine.gid, c->d.gid.raw, 16);
	e2e_send_all(c->sock, &mine, sizeof(mine));
	E2E_CHECK(e2e_recv_all(c->sock, &c->hub, sizeof(c->hub)),
		  "the hub closed the channel");
	e2e_rc_connect(&c->d, c->qp, mine.psn, &c->hub, NULL);
}

static void conn_close(struct conn *c)
{
	E2E_CHECK(!ibv_destroy_qp(c->qp), "destroy QP");
	E2E_CHECK(!ibv_destroy_cq(c->cq), "destroy CQ");
	E2E_CHECK(!ibv_dereg_mr(c->mr), "dereg MR");
	close(c->sock);
	free(c->buf);
	e2e_close(&c->d);
}

static void wait_ok(struct conn *c, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;

	e2e_poll_one(c->cq, &wc, what);
	E2E_CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == op,
		  "%s: status %s opcode %d", what,
		  ibv_wc_status_str(wc.status), wc.opcode);
}

/* One SEND to the hub and its answer; the round trip in ms. */
static double ping(struct conn *c, uint64_t seq)
{
	uint8_t *out = c->buf + RDMA_LEN, *in = out + MSG_LEN;
	struct ibv_sge sge = {
		.addr = (uintptr_t)out, .length = MSG_LEN, .lkey = c->mr->lkey,
	};
	struct ibv_wc wc;
	bool sent = false, got = false;
	double t0 = now_ms();

	E2E_CHECK(!post_recv(c->qp, c->mr, in, 1), "post recv");
	memcpy(out, &seq, 8);
	E2E_CHECK(!post_one(c->qp, IBV_WR_SEND, &sge, 0, 0, 2), "post send");
	while (!sent || !got) {
		e2e_poll_one(c->cq, &wc, "ping");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS, "ping: %s",
			  ibv_wc_status_str(wc.status));
		sent |= wc.opcode == IBV_WC_SEND;
		got |= wc.opcode == IBV_WC_RECV;
	}
	E2E_CHECK(!memcmp(in, &seq, 8), "ping %lu: wrong answer",
		  (unsigned long)seq);
	return now_ms() - t0;
}

static int pinger(const struct e2e_args *args)
{
	struct conn c;
	double rt, worst = 0, end;
	uint64_t seq = 0;

	signal(SIGUSR1, on_term);
	conn_open(args, &c);
	printf("pinger: ping-ponging\n");
	end = now_ms() + PING_SECONDS * 1e3;
	while (!stop_asked && now_ms() < end) {
		rt = ping(&c, ++seq);
		if (rt > worst)
			worst = rt;
		E2E_CHECK(rt < args->expect, "round trip %lu took %.0f ms, "
			  "the bound is %ld ms", (unsigned long)seq, rt,
			  args->expect);
	}
	printf("pinger: %lu round trips, the largest %.1f ms\n",
	       (unsigned long)seq, worst);
	conn_close(&c);
	printf("pinger: passed\n");
	return 0;
}

/* WRITEs of list WRITE_LIST x WRITE_LEN, each of the pattern of seed. */
static void write_list(struct conn *c, unsigned int seed)
{
	struct ibv_sge sge[WRITE_LIST];
	struct ibv_send_wr wr[WRITE_LIST], *bad;
	unsigned int i;

	e2e_pattern(c->buf, WRITE_LEN, seed);
	for (i = 0; i < WRITE_LIST; i++) {
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)c->buf,
					   .length = WRITE_LEN,
					   .lkey = c->mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < WRITE_LIST ? &wr[i + 1] : NULL,
		};
		wr[i].wr.rdma.remote_addr = c->hub.addr + i * WRITE_LEN;
		wr[i].wr.rdma.rkey = c->hub.rkey;
	}
	E2E_CHECK(!ibv_post_send(c->qp, wr, &bad), "post WRITE list");
	for (i = 0; i < WRITE_LIST; i++)
		wait_ok(c, IBV_WC_RDMA_WRITE, "WRITE");
}

/* READs [off, off + len) of the hub's area back and checks the pattern. */
static void read_check(struct conn *c, uint64_t off, uint32_t len,
		       unsigned int seed)
{
	uint8_t *to = c->buf + WRITE_LEN;
	struct ibv_sge sge = { .addr = (uintptr_t)to, .length = len,
			       .lkey = c->mr->lkey };

	memset(to, 0, len);
	E2E_CHECK(!post_one(c->qp, IBV_WR_RDMA_READ, &sge, c->hub.addr + off,
			    c->hub.rkey, 9), "post READ");
	wait_ok(c, IBV_WC_RDMA_READ, "READ");
	E2E_CHECK(e2e_pattern_ok(to, len, seed), "READ back: not what was "
		  "written (seed %u)", seed);
}

/* One WRITE of all the slots of the hub's area. */
static void write_one(struct conn *c, unsigned int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf,
			       .length = WRITE_LIST * WRITE_LEN,
			       .lkey = c->mr->lkey };

	E2E_CHECK(!post_one(c->qp, IBV_WR_RDMA_WRITE, &sge, c->hub.addr,
			    c->hub.rkey, i), "post WRITE");
}

/* WRITEs back to back, WRITE_DEPTH of them outstanding: the adapter is
 * always in the middle of one. */
static int writer(const struct e2e_args *args)
{
	struct conn c;
	struct ibv_wc wc;
	double end;
	unsigned int posted = 0, done = 0;

	signal(SIGUSR1, on_term);
	conn_open(args, &c);
	e2e_pattern(c.buf, WRITE_LIST * WRITE_LEN, 5);
	for (; posted < WRITE_DEPTH; posted++)
		write_one(&c, posted);
	printf("writer: streaming\n");
	end = now_ms() + args->expect * 1e3;
	while (done < posted) {
		e2e_poll_one(c.cq, &wc, "WRITE");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS &&
			  wc.opcode == IBV_WC_RDMA_WRITE, "WRITE: %s",
			  ibv_wc_status_str(wc.status));
		done++;
		if (!stop_asked && now_ms() < end)
			write_one(&c, posted++);
	}
	read_check(&c, 0, WRITE_LEN, 5);
	printf("writer: %u WRITEs of %u bytes\n", done,
	       WRITE_LIST * WRITE_LEN);
	conn_close(&c);
	printf("writer: passed\n");
	return 0;
}

static void fetch_add(struct conn *c, uint64_t want)
{
	uint64_t *orig = (uint64_t *)(c->buf + WRITE_LEN);
	struct ibv_sge sge = { .addr = (uintptr_t)orig, .length = 8,
			       .lkey = c->mr->lkey };

	E2E_CHECK(!post_one(c->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge,
			    c->hub.addr + ATOMIC_OFF, c->hub.rkey, 8),
		  "post FETCH_AND_ADD");
	wait_ok(c, IBV_WC_FETCH_ADD, "FETCH_AND_ADD");
	E2E_CHECK(*orig == want, "FETCH_AND_ADD: %lu, want %lu",
		  (unsigned long)*orig, (unsigned long)want);
}

static int mixed(const struct e2e_args *args)
{
	struct conn c;
	unsigned int seed = 0, r;
	uint64_t adds = 0;
	long i;

	srand((unsigned int)getpid());
	conn_open(args, &c);
	for (i = 0; i < args->expect; i++) {
		r = (unsigned int)rand() % 4;
		if (r == 0) {
			write_list(&c, ++seed);
		} else if (r == 1 && seed) {
			read_check(&c, (uint64_t)(rand() % WRITE_LIST) *
				   WRITE_LEN, WRITE_LEN, seed);
		} else if (r == 2) {
			fetch_add(&c, adds++);
		} else {
			ping(&c, (uint64_t)i);
		}
	}
	conn_close(&c);
	printf("mixed: %ld operations passed\n", args->expect);
	return 0;
}

int main(int argc, char **argv)
{
	struct e2e_args args;

	e2e_parse_args(argc, argv, &args);
	if (args.server)
		return hub(&args);
	E2E_CHECK(!args.single && args.mode, "--client needs a --mode");
	if (!strcmp(args.mode, "writer"))
		return writer(&args);
	if (!strcmp(args.mode, "pinger"))
		return pinger(&args);
	if (!strcmp(args.mode, "mixed"))
		return mixed(&args);
	E2E_CHECK(0, "--mode writer, pinger or mixed");
	return 1;
}
