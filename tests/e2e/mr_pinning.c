// SPDX-License-Identifier: BSD-2-Clause
/*
 * Registered memory is pinned, as the kernel pins it:
 *
 *   reg-check  (one process) ibv_reg_mr fails with EFAULT where pinning
 *              would: read-only, PROT_NONE or program text with an access
 *              that lets the device write (LOCAL_WRITE, REMOTE_WRITE),
 *              PROT_NONE or unmapped memory with any access; read-only
 *              memory and program text register without write access.
 *   unmap      (two processes) the server registers three regions, then
 *              gives their pages up: A is unmapped and a new mapping put
 *              at its address, B is unmapped and left so, C is emptied
 *              with MADV_DONTNEED; a receive posted into B before is still
 *              there. The client RDMA READs the old content of each, RDMA
 *              WRITEs A and B and reads it back, and SENDs into the
 *              receive in B. The server must not crash, its receive
 *              completes, and its new mapping at A and the emptied C are
 *              untouched by all of it.
 *   remap      (two processes) mremap: D shrinks to its first page, whose
 *              later writes by the server the MR still sees, while its
 *              second page keeps the old content; E grows and must move:
 *              its MR keeps the old content, and the client's RDMA WRITE
 *              never reaches the server's moved mapping.
 *   behind     (one process, two adapters: the device copies in memory)
 *              registered memory made inaccessible behind the pinning's
 *              back (mprotect PROT_NONE, as glibc's own munmap of a freed
 *              chunk would): an RDMA WRITE, READ, atomic and SEND into it,
 *              and a SEND from it, each on a fresh QP pair, end in a
 *              completion (success, or the access error the device
 *              reports), never in a signal or a hang. With two processes
 *              (the fabric's sockets): an RDMA WRITE into it succeeds or
 *              fails with a remote access error, never breaks the link.
 *
 *   mr_pinning --mode reg-check
 *   mr_pinning --mode behind            (pvrdma-sim --adapters 2)
 *   mr_pinning --server|--client --port P --mode behind
 *   mr_pinning --server|--client --port P --mode unmap|remap
 */
#include "e2e_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE		4096u
#define A_LEN		(4 * PAGE)
#define B_LEN		(2 * PAGE)
#define C_LEN		(2 * PAGE)
#define RECV_OFF	PAGE		/* the receive: second page of B */
#define MSG_LEN		256u
#define NEW_BYTE	0xa5		/* what the server's new mapping holds */

static void *map_pages(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	E2E_CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

static void expect_reg(struct ibv_pd *pd, void *addr, size_t len, int access,
		       int err, const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (!err) {
		E2E_CHECK(mr, "%s: ibv_reg_mr failed: %s", what,
			  e2e_errno_name(errno));
		E2E_CHECK(!ibv_dereg_mr(mr), "%s: ibv_dereg_mr failed", what);
		return;
	}
	E2E_CHECK(!mr, "%s: ibv_reg_mr succeeded, expected %s", what,
		  e2e_errno_name(err));
	E2E_CHECK(errno == err, "%s: ibv_reg_mr failed with %s, expected %s",
		  what, e2e_errno_name(errno), e2e_errno_name(err));
}

static int reg_check(const struct e2e_args *args)
{
	const int lw = IBV_ACCESS_LOCAL_WRITE;
	const int rw = lw | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct e2e_dev d;
	uint8_t *rwm, *ro, *none, *gone, *text;

	e2e_open(&d, args->dev, args->gid_index);
	rwm = map_pages(2 * PAGE, PROT_READ | PROT_WRITE);
	ro = map_pages(2 * PAGE, PROT_READ);
	none = map_pages(2 * PAGE, PROT_NONE);
	/*
	 * Unmapped memory that stays unmapped: from address 0, whose page
	 * vm.mmap_min_addr keeps out of reach of any mapping. A hole left
	 * by munmap would not do: any mapping of the process (the
	 * sanitizers' allocator, the sim's own) may fill it before
	 * ibv_reg_mr looks at it.
	 */
	gone = NULL;
	text = (uint8_t *)((uintptr_t)&reg_check & ~(uintptr_t)(PAGE - 1));

	expect_reg(d.pd, rwm, 2 * PAGE, rw, 0, "read-write memory");
	expect_reg(d.pd, ro, 2 * PAGE, 0, 0, "read-only, no access");
	expect_reg(d.pd, ro, 2 * PAGE, IBV_ACCESS_REMOTE_READ, 0,
		   "read-only, REMOTE_READ");
	expect_reg(d.pd, text, PAGE, IBV_ACCESS_REMOTE_READ, 0,
		   "program text, REMOTE_READ");
	expect_reg(d.pd, ro, 2 * PAGE, lw, EFAULT, "read-only, LOCAL_WRITE");
	expect_reg(d.pd, ro + 100, 200, rw, EFAULT,
		   "read-only, REMOTE_WRITE");
	expect_reg(d.pd, none, 2 * PAGE, lw, EFAULT, "PROT_NONE, LOCAL_WRITE");
	expect_reg(d.pd, none, 2 * PAGE, 0, EFAULT, "PROT_NONE, no access");
	expect_reg(d.pd, text, PAGE, lw, EFAULT, "program text, LOCAL_WRITE");
	expect_reg(d.pd, gone, 2 * PAGE, 0, EFAULT, "unmapped memory");
	/* one bad page is enough */
	expect_reg(d.pd, rwm + PAGE - 1, 2, lw, 0, "read-write, 2 pages");
	E2E_CHECK(!mprotect(rwm + PAGE, PAGE, PROT_READ), "mprotect: %s",
		  strerror(errno));
	expect_reg(d.pd, rwm, 2 * PAGE, lw, EFAULT,
		   "second page read-only, LOCAL_WRITE");

	munmap(rwm, 2 * PAGE);
	munmap(ro, 2 * PAGE);
	munmap(none, 2 * PAGE);
	e2e_close(&d);
	printf("mr_pinning reg-check: passed\n");
	return 0;
}

/* What the client needs to reach the server's three regions. */
struct regions {
	uint64_t addr[3];
	uint32_t rkey[3];
	uint32_t len[3];
};

/*
 * No transport timeout: every request here gets its answer (data, ACK or
 * NAK) however slow a loaded host is, and the e2e hang guard still ends a
 * run that never gets one.
 */
static const struct e2e_rc_opts rc_opts = { .no_timeout = true };

struct side {
	struct e2e_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int sock;
	struct e2e_peer me, peer;
};

static void side_setup(struct side *s, const struct e2e_args *args,
		       struct ibv_mr *mr)
{
	s->cq = ibv_create_cq(s->d.ctx, 16, NULL, NULL, 0);
	E2E_CHECK(s->cq, "ibv_create_cq: %s", strerror(errno));
	s->qp = e2e_create_qp(&s->d, IBV_QPT_RC, s->cq, s->cq, 8, 1);
	e2e_qp_to_init(s->qp, IBV_QPT_RC);
	s->me.rc_qpn = s->qp->qp_num;
	s->me.psn = args->server ? 0x123 : 0x456;
	s->me.rkey = mr->rkey;
	s->me.addr = (uintptr_t)mr->addr;
	memcpy(s->me.gid, s->d.gid.raw, 16);
	s->sock = e2e_channel_open(args);
	e2e_exchange(s->sock, &s->me, &s->peer);
	e2e_rc_connect(&s->d, s->qp, s->me.psn, &s->peer, &rc_opts);
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

static int unmap_server(const struct e2e_args *args)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	struct side s;
	struct regions r;
	struct ibv_mr *mr[3];
	uint8_t *a, *b, *c, *again;
	struct ibv_wc wc;
	int i;

	memset(&s, 0, sizeof(s));
	e2e_open(&s.d, args->dev, args->gid_index);
	a = map_pages(A_LEN, PROT_READ | PROT_WRITE);
	b = map_pages(B_LEN, PROT_READ | PROT_WRITE);
	c = map_pages(C_LEN, PROT_READ | PROT_WRITE);
	e2e_pattern(a, A_LEN, 1);
	e2e_pattern(b, B_LEN, 2);
	e2e_pattern(c, C_LEN, 3);
	mr[0] = ibv_reg_mr(s.d.pd, a, A_LEN, access);
	mr[1] = ibv_reg_mr(s.d.pd, b, B_LEN, access);
	mr[2] = ibv_reg_mr(s.d.pd, c, C_LEN, access);
	for (i = 0; i < 3; i++) {
		E2E_CHECK(mr[i], "ibv_reg_mr: %s", strerror(errno));
		r.addr[i] = (uintptr_t)mr[i]->addr;
		r.rkey[i] = mr[i]->rkey;
		r.len[i] = mr[i]->length;
	}
	side_setup(&s, args, mr[0]);

	{
		struct ibv_sge sge = {
			(uintptr_t)b + RECV_OFF, MSG_LEN, mr[1]->lkey
		};
		struct ibv_recv_wr wr = {
			.wr_id = 7, .sg_list = &sge, .num_sge = 1
		}, *bad;

		E2E_CHECK(!ibv_post_recv(s.qp, &wr, &bad),
			  "ibv_post_recv failed");
	}

	/* The pages go; the MRs must keep them. */
	E2E_CHECK(!munmap(a, A_LEN), "munmap A: %s", strerror(errno));
	again = mmap(a, A_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	E2E_CHECK(again == a, "mmap MAP_FIXED: %s", strerror(errno));
	memset(a, NEW_BYTE, A_LEN);
	E2E_CHECK(!munmap(b, B_LEN), "munmap B: %s", strerror(errno));
	E2E_CHECK(!madvise(c, C_LEN, MADV_DONTNEED), "madvise: %s",
		  strerror(errno));
	E2E_CHECK(all_bytes(c, C_LEN, 0), "MADV_DONTNEED left data");

	e2e_send_all(s.sock, &r, sizeof(r));
	e2e_sync(s.sock, "given-up");

	e2e_poll_one(s.cq, &wc, "receive into unmapped memory");
	E2E_CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 &&
		  wc.byte_len == MSG_LEN,
		  "receive: status %s wr_id %llu len %u",
		  ibv_wc_status_str(wc.status),
		  (unsigned long long)wc.wr_id, wc.byte_len);
	e2e_sync(s.sock, "done");
	E2E_CHECK(all_bytes(a, A_LEN, NEW_BYTE),
		  "the new mapping at A was written by the device");
	E2E_CHECK(all_bytes(c, C_LEN, 0),
		  "the emptied pages of C were written by the device");

	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	for (i = 0; i < 3; i++)
		E2E_CHECK(!ibv_dereg_mr(mr[i]), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.cq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	munmap(a, A_LEN);
	munmap(c, C_LEN);
	printf("mr_pinning server (unmap): passed\n");
	return 0;
}

/* One RDMA READ or WRITE of len bytes between buf and the peer's region;
 * returns its completion status. */
static enum ibv_wc_status rdma_status(struct side *s, struct ibv_mr *mr,
				      enum ibv_wr_opcode op, uint64_t raddr,
				      uint32_t rkey, uint32_t len,
				      const char *what)
{
	struct ibv_sge sge = { (uintptr_t)mr->addr, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;

	E2E_CHECK(!ibv_post_send(s->qp, &wr, &bad), "%s: post failed", what);
	e2e_poll_one(s->cq, &wc, what);
	return wc.status;
}

static void rdma(struct side *s, struct ibv_mr *mr, enum ibv_wr_opcode op,
		 uint64_t raddr, uint32_t rkey, uint32_t len, const char *what)
{
	enum ibv_wc_status st = rdma_status(s, mr, op, raddr, rkey, len, what);

	E2E_CHECK(st == IBV_WC_SUCCESS, "%s: %s", what,
		  ibv_wc_status_str(st));
}

static int unmap_client(const struct e2e_args *args)
{
	struct side s;
	struct regions r;
	struct ibv_mr *mr;
	uint8_t *buf;
	int i;

	memset(&s, 0, sizeof(s));
	e2e_open(&s.d, args->dev, args->gid_index);
	buf = map_pages(A_LEN, PROT_READ | PROT_WRITE);
	mr = ibv_reg_mr(s.d.pd, buf, A_LEN, IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	side_setup(&s, args, mr);
	E2E_CHECK(e2e_recv_all(s.sock, &r, sizeof(r)),
		  "server went away before sending its regions");
	e2e_sync(s.sock, "given-up");

	/* The old content of every region the server gave up. */
	for (i = 0; i < 3; i++) {
		memset(buf, 0, A_LEN);
		rdma(&s, mr, IBV_WR_RDMA_READ, r.addr[i], r.rkey[i], r.len[i],
		     "RDMA READ of given-up memory");
		E2E_CHECK(e2e_pattern_ok(buf, r.len[i], i + 1),
			  "region %d: RDMA READ did not return the content "
			  "it had when it was registered", i);
	}
	/* Writes land in the pages the MRs kept, and stay there. */
	for (i = 0; i < 2; i++) {
		e2e_pattern(buf, r.len[i], 10 + i);
		rdma(&s, mr, IBV_WR_RDMA_WRITE, r.addr[i], r.rkey[i],
		     i ? PAGE : r.len[i], "RDMA WRITE to given-up memory");
		memset(buf, 0, A_LEN);
		rdma(&s, mr, IBV_WR_RDMA_READ, r.addr[i], r.rkey[i], PAGE,
		     "RDMA READ after the write");
		E2E_CHECK(e2e_pattern_ok(buf, PAGE, 10 + i),
			  "region %d: the write did not stay", i);
	}
	/* A SEND into the receive the server posted in B before it went. */
	e2e_pattern(buf, MSG_LEN, 20);
	{
		struct ibv_sge sge = { (uintptr_t)buf, MSG_LEN, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 2, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_wc wc;

		E2E_CHECK(!ibv_post_send(s.qp, &wr, &bad), "send failed");
		e2e_poll_one(s.cq, &wc, "SEND");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS, "SEND: %s",
			  ibv_wc_status_str(wc.status));
	}
	memset(buf, 0, A_LEN);
	rdma(&s, mr, IBV_WR_RDMA_READ, r.addr[1] + RECV_OFF, r.rkey[1],
	     MSG_LEN, "RDMA READ of the receive buffer");
	E2E_CHECK(e2e_pattern_ok(buf, MSG_LEN, 20),
		  "the SEND did not land in the receive buffer the MR kept");
	e2e_sync(s.sock, "done");

	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.cq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	munmap(buf, A_LEN);
	printf("mr_pinning client (unmap): passed\n");
	return 0;
}

/* ---- behind: two adapters of this process ---- */

struct pair {
	struct e2e_dev *d[2];
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
};

static void pair_up(struct pair *p, struct e2e_dev d[2])
{
	struct e2e_peer peer[2];
	int i;

	memset(peer, 0, sizeof(peer));
	for (i = 0; i < 2; i++) {
		p->d[i] = &d[i];
		p->cq[i] = ibv_create_cq(d[i].ctx, 8, NULL, NULL, 0);
		E2E_CHECK(p->cq[i], "ibv_create_cq: %s", strerror(errno));
		p->qp[i] = e2e_create_qp(&d[i], IBV_QPT_RC, p->cq[i],
					 p->cq[i], 4, 1);
		e2e_qp_to_init(p->qp[i], IBV_QPT_RC);
		peer[i].rc_qpn = p->qp[i]->qp_num;
		peer[i].psn = 0x100 * (i + 1);
		memcpy(peer[i].gid, d[i].gid.raw, 16);
	}
	for (i = 0; i < 2; i++)
		e2e_rc_connect(&d[i], p->qp[i], peer[i].psn, &peer[!i],
			       &rc_opts);
}

static void pair_down(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		E2E_CHECK(!ibv_destroy_qp(p->qp[i]), "ibv_destroy_qp failed");
		E2E_CHECK(!ibv_destroy_cq(p->cq[i]), "ibv_destroy_cq failed");
	}
}

static bool status_in(enum ibv_wc_status st, const enum ibv_wc_status *ok,
		      int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (st == ok[i])
			return true;
	return false;
}

static int behind(const struct e2e_args *args)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	static const enum ibv_wc_status remote_ok[] = {
		IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_OP_ERR,
	};
	static const enum ibv_wc_status local_ok[] = {
		IBV_WC_SUCCESS, IBV_WC_LOC_PROT_ERR,
	};
	static const struct {
		const char *what;
		enum ibv_wr_opcode op;
		bool local_gone;	/* the requester's buffer is gone */
	} ops[] = {
		{ "RDMA WRITE into it", IBV_WR_RDMA_WRITE, false },
		{ "RDMA READ of it", IBV_WR_RDMA_READ, false },
		{ "atomic on it", IBV_WR_ATOMIC_FETCH_AND_ADD, false },
		{ "SEND into a receive in it", IBV_WR_SEND, false },
		{ "SEND from it", IBV_WR_SEND, true },
	};
	struct e2e_dev d[2];
	struct ibv_mr *mr[2];
	uint8_t *buf[2];
	struct pair p;
	struct ibv_wc wc;
	unsigned int k;
	int i;

	(void)args;
	e2e_open(&d[0], "vmw_pvrdma0", 0);
	e2e_open(&d[1], "vmw_pvrdma1", 0);
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		bool gone = ops[k].local_gone;
		struct ibv_sge sge;
		struct ibv_send_wr wr, *bad;
		struct ibv_recv_wr rwr, *rbad;

		pair_up(&p, d);
		for (i = 0; i < 2; i++) {
			buf[i] = map_pages(PAGE, PROT_READ | PROT_WRITE);
			mr[i] = ibv_reg_mr(d[i].pd, buf[i], PAGE, access);
			E2E_CHECK(mr[i], "ibv_reg_mr: %s", strerror(errno));
		}
		/* The responder's buffer (or for "from it" the requester's)
		 * goes away where no hook sees it. */
		E2E_CHECK(!mprotect(buf[gone ? 0 : 1], PAGE, PROT_NONE),
			  "mprotect: %s", strerror(errno));

		memset(&sge, 0, sizeof(sge));
		sge.addr = (uintptr_t)buf[1];
		sge.length = 64;
		sge.lkey = mr[1]->lkey;
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 9;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		if (ops[k].op == IBV_WR_SEND)
			E2E_CHECK(!ibv_post_recv(p.qp[1], &rwr, &rbad),
				  "ibv_post_recv failed");

		sge.addr = (uintptr_t)buf[0];
		sge.length = ops[k].op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 64;
		sge.lkey = mr[0]->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = ops[k].op;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (ops[k].op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = (uintptr_t)buf[1];
			wr.wr.atomic.rkey = mr[1]->rkey;
			wr.wr.atomic.compare_add = 1;
		} else {
			wr.wr.rdma.remote_addr = (uintptr_t)buf[1];
			wr.wr.rdma.rkey = mr[1]->rkey;
		}
		E2E_CHECK(!ibv_post_send(p.qp[0], &wr, &bad),
			  "%s: ibv_post_send failed", ops[k].what);
		e2e_poll_one(p.cq[0], &wc, ops[k].what);
		E2E_CHECK(gone ? status_in(wc.status, local_ok, 2) :
			  status_in(wc.status, remote_ok, 3),
			  "%s: unexpected status %s", ops[k].what,
			  ibv_wc_status_str(wc.status));
		printf("%s: %s\n", ops[k].what, ibv_wc_status_str(wc.status));

		pair_down(&p);
		for (i = 0; i < 2; i++) {
			E2E_CHECK(!ibv_dereg_mr(mr[i]), "ibv_dereg_mr failed");
			munmap(buf[i], PAGE);
		}
	}
	e2e_close(&d[0]);
	e2e_close(&d[1]);
	printf("mr_pinning behind: passed\n");
	return 0;
}

/* ---- remap ---- */

/* What the client reads of D: the page the server kept and rewrote, then
 * the page mremap took away. */
static void remap_d_expect(uint8_t *exp)
{
	e2e_pattern(exp, 2 * PAGE, 4);
	e2e_pattern(exp, PAGE, 40);
}

static int remap_server(const struct e2e_args *args)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	struct side s;
	struct regions r;
	struct ibv_mr *mr[2];
	uint8_t *d, *e, *moved;
	int i;

	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	e2e_open(&s.d, args->dev, args->gid_index);
	d = map_pages(2 * PAGE, PROT_READ | PROT_WRITE);
	e = map_pages(2 * PAGE, PROT_READ | PROT_WRITE);
	e2e_pattern(d, 2 * PAGE, 4);
	e2e_pattern(e, PAGE, 5);
	mr[0] = ibv_reg_mr(s.d.pd, d, 2 * PAGE, access);
	mr[1] = ibv_reg_mr(s.d.pd, e, PAGE, access);
	for (i = 0; i < 2; i++) {
		E2E_CHECK(mr[i], "ibv_reg_mr: %s", strerror(errno));
		r.addr[i] = (uintptr_t)mr[i]->addr;
		r.rkey[i] = mr[i]->rkey;
		r.len[i] = mr[i]->length;
	}
	side_setup(&s, args, mr[0]);

	E2E_CHECK(mremap(d, 2 * PAGE, PAGE, 0) == d, "mremap D: %s",
		  strerror(errno));
	e2e_pattern(d, PAGE, 40);	/* still shared with the MR */
	/* E's second page is taken: growing E must move it. */
	moved = mremap(e, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
	E2E_CHECK(moved != MAP_FAILED && moved != e, "mremap E: %s",
		  moved == e ? "did not move" : strerror(errno));
	E2E_CHECK(e2e_pattern_ok(moved, PAGE, 5), "mremap E lost its data");
	memset(moved, NEW_BYTE, 2 * PAGE);

	e2e_send_all(s.sock, &r, sizeof(r));
	e2e_sync(s.sock, "given-up");
	e2e_sync(s.sock, "done");
	E2E_CHECK(all_bytes(moved, 2 * PAGE, NEW_BYTE),
		  "the moved mapping of E was written by the device");

	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	for (i = 0; i < 2; i++)
		E2E_CHECK(!ibv_dereg_mr(mr[i]), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.cq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	munmap(d, PAGE);
	munmap(e + PAGE, PAGE);
	munmap(moved, 2 * PAGE);
	printf("mr_pinning server (remap): passed\n");
	return 0;
}

static int remap_client(const struct e2e_args *args)
{
	uint8_t exp[2 * PAGE];
	struct side s;
	struct regions r;
	struct ibv_mr *mr;
	uint8_t *buf;

	memset(&s, 0, sizeof(s));
	e2e_open(&s.d, args->dev, args->gid_index);
	buf = map_pages(2 * PAGE, PROT_READ | PROT_WRITE);
	mr = ibv_reg_mr(s.d.pd, buf, 2 * PAGE, IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	side_setup(&s, args, mr);
	E2E_CHECK(e2e_recv_all(s.sock, &r, sizeof(r)),
		  "server went away before sending its regions");
	e2e_sync(s.sock, "given-up");

	rdma(&s, mr, IBV_WR_RDMA_READ, r.addr[0], r.rkey[0], 2 * PAGE,
	     "RDMA READ of D");
	remap_d_expect(exp);
	E2E_CHECK(!memcmp(buf, exp, PAGE),
		  "D: the page mremap kept is not shared with the MR");
	E2E_CHECK(!memcmp(buf + PAGE, exp + PAGE, PAGE),
		  "D: the page mremap took away lost its content");

	memset(buf, 0, PAGE);
	rdma(&s, mr, IBV_WR_RDMA_READ, r.addr[1], r.rkey[1], PAGE,
	     "RDMA READ of E");
	E2E_CHECK(e2e_pattern_ok(buf, PAGE, 5),
		  "E: the MR lost the content of the moved page");
	e2e_pattern(buf, PAGE, 11);
	rdma(&s, mr, IBV_WR_RDMA_WRITE, r.addr[1], r.rkey[1], PAGE,
	     "RDMA WRITE to E");
	memset(buf, 0, PAGE);
	rdma(&s, mr, IBV_WR_RDMA_READ, r.addr[1], r.rkey[1], PAGE,
	     "RDMA READ of E after the write");
	E2E_CHECK(e2e_pattern_ok(buf, PAGE, 11), "E: the write did not stay");
	e2e_sync(s.sock, "done");

	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.cq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	munmap(buf, 2 * PAGE);
	printf("mr_pinning client (remap): passed\n");
	return 0;
}

/*
 * behind, two processes: the server's memory goes away behind the pinning
 * (PROT_NONE); the client's RDMA WRITE lands (as on the pinned pages of a
 * real adapter) or fails with a remote access error, and the link between
 * the two stays up: the fabric's readv gets EFAULT, not a signal.
 */
static int behind_pair(const struct e2e_args *args)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	enum ibv_wc_status st;
	struct ibv_mr *mr;
	struct side s;
	uint8_t *buf;

	memset(&s, 0, sizeof(s));
	e2e_open(&s.d, args->dev, args->gid_index);
	buf = map_pages(PAGE, PROT_READ | PROT_WRITE);
	mr = ibv_reg_mr(s.d.pd, buf, PAGE, access);
	E2E_CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	side_setup(&s, args, mr);
	if (args->server) {
		E2E_CHECK(!mprotect(buf, PAGE, PROT_NONE), "mprotect: %s",
			  strerror(errno));
		e2e_sync(s.sock, "gone");
		e2e_sync(s.sock, "done");
	} else {
		e2e_sync(s.sock, "gone");
		e2e_pattern(buf, PAGE, 5);
		st = rdma_status(&s, mr, IBV_WR_RDMA_WRITE, s.peer.addr,
				 s.peer.rkey, PAGE, "RDMA WRITE");
		E2E_CHECK(st == IBV_WC_SUCCESS || st == IBV_WC_REM_ACCESS_ERR,
			  "RDMA WRITE into memory gone behind the pinning: "
			  "%s", ibv_wc_status_str(st));
		printf("RDMA WRITE into it: %s\n", ibv_wc_status_str(st));
		e2e_sync(s.sock, "done");
	}
	E2E_CHECK(!ibv_destroy_qp(s.qp), "ibv_destroy_qp failed");
	E2E_CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr failed");
	E2E_CHECK(!ibv_destroy_cq(s.cq), "ibv_destroy_cq failed");
	e2e_close(&s.d);
	printf("mr_pinning %s (behind): passed\n",
	       args->server ? "server" : "client");
	return 0;
}

int main(int argc, char **argv)
{
	struct e2e_args args;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(args.mode, "needs --mode");
	if (!strcmp(args.mode, "reg-check"))
		return reg_check(&args);
	if (!strcmp(args.mode, "behind"))
		return args.single ? behind(&args) : behind_pair(&args);
	E2E_CHECK(!args.single, "mode %s needs --server or --client",
		  args.mode);
	if (!strcmp(args.mode, "remap"))
		return args.server ? remap_server(&args) :
				     remap_client(&args);
	E2E_CHECK(!strcmp(args.mode, "unmap"), "unknown mode %s", args.mode);
	return args.server ? unmap_server(&args) : unmap_client(&args);
}
