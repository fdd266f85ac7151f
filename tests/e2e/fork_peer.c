// SPDX-License-Identifier: BSD-2-Clause
/*
 * A fork()ed child is an RDMA peer of its parent, as every process under
 * the sim is a virtual machine with an adapter of its own: the child gets
 * a MAC, node GUID and GIDs of its own (what ibv_query_gid and the device
 * list say), the parent keeps its own and stays reachable at them, and
 * the two exchange RDMA WRITEs and SENDs over RC QPs. The child closes
 * the device file it inherited once it has rings and a UAR of its own,
 * which may lie where its parent's were: they must stay the child's. The
 * parent's device was busy before the fork (a loopback pair carried a
 * SEND) and carries one again after the child is gone: what the child did
 * left the parent's links alone.
 *
 *   fork_peer
 */
#include "e2e_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define BUF_SIZE	8192u
#define MSG_LEN		100u
#define WRITE_OFF	4096u

struct side {
	struct e2e_dev dev;
	struct ibv_cq *cq;		/* sends */
	struct ibv_cq *rcq;		/* receives */
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* What one side tells the other, besides its QP and memory. */
struct identity {
	uint8_t gid0[16];
	uint8_t gid1[16];
	uint64_t guid;
};

static void side_open(struct side *s)
{
	e2e_open(&s->dev, NULL, 1);
	s->cq = ibv_create_cq(s->dev.ctx, 64, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->dev.ctx, 64, NULL, NULL, 0);
	E2E_CHECK(s->cq && s->rcq, "create CQs: %s", strerror(errno));
	s->buf = aligned_alloc(4096, BUF_SIZE);
	E2E_CHECK(s->buf, "buffer");
	memset(s->buf, 0, BUF_SIZE);
	s->mr = ibv_reg_mr(s->dev.pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	E2E_CHECK(s->mr, "register MR: %s", strerror(errno));
}

static void side_close(struct side *s, struct ibv_qp **qps, int n)
{
	while (n--)
		E2E_CHECK(!ibv_destroy_qp(qps[n]), "destroy QP");
	E2E_CHECK(!ibv_dereg_mr(s->mr) && !ibv_destroy_cq(s->cq) &&
		  !ibv_destroy_cq(s->rcq), "destroy MR and CQs");
	free(s->buf);
	e2e_close(&s->dev);
}

static void identity_of(struct side *s, struct identity *id)
{
	union ibv_gid g;
	struct ibv_device **list;
	int n, i;

	E2E_CHECK(!ibv_query_gid(s->dev.ctx, 1, 0, &g), "query GID 0");
	memcpy(id->gid0, g.raw, 16);
	E2E_CHECK(!ibv_query_gid(s->dev.ctx, 1, 1, &g), "query GID 1");
	memcpy(id->gid1, g.raw, 16);
	/* The device list as a program made now sees it. */
	list = ibv_get_device_list(&n);
	E2E_CHECK(list && n > 0, "device list: %s", strerror(errno));
	id->guid = 0;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]),
			    ibv_get_device_name(s->dev.ctx->device)))
			id->guid = ibv_get_device_guid(list[i]);
	ibv_free_device_list(list);
	E2E_CHECK(id->guid, "no GUID for %s",
		  ibv_get_device_name(s->dev.ctx->device));
}

static struct ibv_qp *rc_qp(struct side *s, struct e2e_peer *me,
			    uint32_t psn)
{
	struct ibv_qp *qp = e2e_create_qp(&s->dev, IBV_QPT_RC, s->cq, s->rcq,
					  16, 1);

	e2e_qp_to_init(qp, IBV_QPT_RC);
	memset(me, 0, sizeof(*me));
	me->rc_qpn = qp->qp_num;
	me->psn = psn;
	me->rkey = s->mr->rkey;
	me->addr = (uintptr_t)s->buf;
	memcpy(me->gid, s->dev.gid.raw, 16);
	return qp;
}

static void post_recv(struct side *s, struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, MSG_LEN, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	E2E_CHECK(!ibv_post_recv(qp, &wr, &bad), "post receive");
}

/* A WRITE of pattern seed to the peer's WRITE_OFF, then a SEND of it. */
static void write_and_send(struct side *s, struct ibv_qp *qp,
			   const struct e2e_peer *peer, unsigned int seed)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + 2 * WRITE_OFF - MSG_LEN,
			       MSG_LEN, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	e2e_pattern(s->buf + 2 * WRITE_OFF - MSG_LEN, MSG_LEN, seed);
	wr.wr.rdma.remote_addr = peer->addr + WRITE_OFF;
	wr.wr.rdma.rkey = peer->rkey;
	E2E_CHECK(!ibv_post_send(qp, &wr, &bad), "post WRITE");
	e2e_poll_one(s->cq, &wc, "the WRITE");
	E2E_CHECK(wc.status == IBV_WC_SUCCESS, "WRITE: %s",
		  ibv_wc_status_str(wc.status));
	wr.opcode = IBV_WR_SEND;
	wr.wr_id = 2;
	E2E_CHECK(!ibv_post_send(qp, &wr, &bad), "post SEND");
	e2e_poll_one(s->cq, &wc, "the SEND");
	E2E_CHECK(wc.status == IBV_WC_SUCCESS, "SEND: %s",
		  ibv_wc_status_str(wc.status));
}

/* Waits for the peer's SEND and checks it and the peer's WRITE. */
static void received(struct side *s, unsigned int seed, const char *who)
{
	struct ibv_wc wc;

	e2e_poll_one(s->rcq, &wc, "the peer's SEND");
	E2E_CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		  wc.byte_len == MSG_LEN, "%s: receive %s", who,
		  ibv_wc_status_str(wc.status));
	E2E_CHECK(e2e_pattern_ok(s->buf, MSG_LEN, seed),
		  "%s: the SEND's data", who);
	E2E_CHECK(e2e_pattern_ok(s->buf + WRITE_OFF, MSG_LEN, seed),
		  "%s: the WRITE's data", who);
}

/* The parent's own pair, connected to each other: a WRITE and a SEND
 * from a to b. */
static void loopback(struct side *s, struct ibv_qp *a, struct ibv_qp *b,
		     unsigned int seed)
{
	struct e2e_peer pb = { .rc_qpn = b->qp_num, .rkey = s->mr->rkey,
			       .addr = (uintptr_t)s->buf };

	memset(s->buf, 0, BUF_SIZE);
	post_recv(s, b, 9);
	write_and_send(s, a, &pb, seed);
	received(s, seed, "parent's loopback");
}

static void connect_pair(struct side *s, struct ibv_qp *a, struct ibv_qp *b)
{
	struct e2e_peer pa = { .rc_qpn = a->qp_num, .psn = 1 };
	struct e2e_peer pb = { .rc_qpn = b->qp_num, .psn = 1 };

	memcpy(pa.gid, s->dev.gid.raw, 16);
	memcpy(pb.gid, s->dev.gid.raw, 16);
	e2e_rc_connect(&s->dev, a, 1, &pb, NULL);
	e2e_rc_connect(&s->dev, b, 1, &pa, NULL);
}

static void peer_exchange(int sock, struct side *s, struct ibv_qp *qp,
			  const struct e2e_peer *me, const struct identity *id,
			  struct e2e_peer *peer, struct identity *peer_id,
			  unsigned int send_seed, unsigned int recv_seed,
			  const char *who)
{
	e2e_send_all(sock, id, sizeof(*id));
	E2E_CHECK(e2e_recv_all(sock, peer_id, sizeof(*peer_id)),
		  "%s: the peer's identity", who);
	E2E_CHECK(memcmp(id->gid0, peer_id->gid0, 16) &&
		  memcmp(id->gid1, peer_id->gid1, 16),
		  "%s: parent and child have the same GIDs", who);
	E2E_CHECK(id->guid != peer_id->guid,
		  "%s: parent and child have the same node GUID", who);
	e2e_exchange(sock, me, peer);
	e2e_rc_connect(&s->dev, qp, me->psn, peer, NULL);
	memset(s->buf, 0, BUF_SIZE);
	post_recv(s, qp, 7);
	e2e_sync(sock, "ready");
	write_and_send(s, qp, peer, send_seed);
	received(s, recv_seed, who);
	e2e_sync(sock, "done");
}

int main(void)
{
	struct identity id, peer_id;
	struct e2e_peer me, peer;
	struct ibv_qp *a, *b, *qp;
	struct side s;
	int sv[2], status;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	side_open(&s);
	a = rc_qp(&s, &me, 1);
	b = rc_qp(&s, &me, 1);
	connect_pair(&s, a, b);
	loopback(&s, a, b, 11);
	identity_of(&s, &id);
	E2E_CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");

	pid = fork();
	E2E_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		struct side c;

		close(sv[0]);
		side_open(&c);
		identity_of(&c, &id);
		qp = rc_qp(&c, &me, 2);
		/* The parent's device file is the parent's: the child lets
		 * go of its copy, which must leave the child's own rings
		 * alone (they may lie where the parent's were). */
		E2E_CHECK(!ibv_close_device(s.dev.ctx),
			  "child: close the parent's device");
		peer_exchange(sv[1], &c, qp, &me, &id, &peer, &peer_id, 22,
			      33, "child");
		printf("child: own GIDs and GUID, traffic with the parent\n");
		_exit(0);
	}
	close(sv[1]);
	qp = rc_qp(&s, &me, 3);
	peer_exchange(sv[0], &s, qp, &me, &id, &peer, &peer_id, 33, 22,
		      "parent");
	E2E_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		  !WEXITSTATUS(status), "the child failed");
	/* Still the parent's own identity, and its device still works. */
	identity_of(&s, &peer_id);
	E2E_CHECK(!memcmp(id.gid0, peer_id.gid0, 16) &&
		  !memcmp(id.gid1, peer_id.gid1, 16) &&
		  id.guid == peer_id.guid, "the parent's identity changed");
	loopback(&s, a, b, 44);
	side_close(&s, (struct ibv_qp *[]){ a, b, qp }, 3);
	printf("a fork()ed child is a peer with its own identity: passed\n");
	return 0;
}
