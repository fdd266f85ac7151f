// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the device publishes for same-host requesters (sim/device/publish.c),
 * read back as a requester reads it (sim/device/view.c):
 *
 *   - an MR is published with its range, access and PD, and withdrawn;
 *     an MR whose pages the device keeps for itself (pinning) is not;
 *   - a QP is published with its PD, remote access flags, state and type,
 *     and withdrawn;
 *   - an RC QP's receive side (its RQ or its SRQ's ring, its receive CQ's,
 *     where each is in the memory file its pin keeps) with the CQ's arm,
 *     which follows the CQ's, and the SRQ's limit; none for a UD QP or a
 *     ring whose pin kept no file;
 *   - a requester that took a CQ's arm gets its event raised by the
 *     target's NOTIFY even when the application armed the CQ again in
 *     between, and that new arm stays for the next CQE;
 *   - a requester killed between the arm it took and the event: the
 *     target raises the event once the process is gone (not while it is
 *     only stopped), and counts an event it was killed sending as sent;
 *     a CQ's destroy does not wait for it;
 *   - a requester that kept a target's channel end raises on it after
 *     the target's readers are gone (the target died): the event is
 *     lost, and the requester is not killed by SIGPIPE.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "direct.h"
#include "engine.h"
#include "event_pipe.h"
#include "fds.h"
#include "publish.h"
#include "fabric.h"
#include "shared.h"
#include "view.h"
#include "../fabric/two_adapters.h"

static struct sim_dev target;
static struct sim_ucontext uctx = { .dev = &target };
static struct sim_pd pd = { .pdn = 9 };

static int setup(void **unused)
{
	target.index = 1;
	two_adapters_open("/tmp/pvrdma-test-publish.XXXXXX");
	return 0;
}

static int teardown(void **unused)
{
	return two_adapters_close();
}

/* The target's segment, as a requester on adapter 0 finds it. */
static struct shared_seg *target_seg(void)
{
	struct fab_link *l = fabric_resolve(port[0], adapter[1].gid[0].raw, 0);
	struct shared_seg *seg = NULL;
	int i;

	assert_non_null(l);
	/* a requester that found none retries after a few operations */
	for (i = 0; i < 1024 && !seg; i++)
		seg = view_peer(l);
	assert_non_null(seg);
	return seg;
}

static void test_mr_and_qp(void **unused)
{
	static uint8_t mem[4096];
	struct sim_mr mr = {
		.pd = &pd, .addr = (uintptr_t)mem, .iova = 0x7000,
		.length = sizeof(mem), .lkey = 5, .rkey = 5,
		.access = IBV_ACCESS_REMOTE_READ,
	};
	struct sim_qp qp = {
		.qpn = 0x44, .type = IBV_QPT_RC, .pd = &pd, .uctx = &uctx,
		.attr = { .state = IBV_QPS_RTS,
			  .qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC },
	};
	struct view_mr m;
	struct view_qp q;
	struct shared_seg *seg;

	sim_dev_shared_open(&target);
	sim_mr_publish(&target, &mr);
	pub_qp(&qp);
	seg = target_seg();
	assert_true(shared_lock(seg));
	assert_true(view_mr_find(seg, 5, &m));
	assert_int_equal(m.addr, (uintptr_t)mem);
	assert_int_equal(m.iova, 0x7000);
	assert_int_equal(m.length, sizeof(mem));
	assert_int_equal(m.access, IBV_ACCESS_REMOTE_READ);
	assert_int_equal(m.pdn, 9);
	assert_true(view_qp_find(seg, 0x44, &q));
	assert_int_equal(q.pdn, 9);
	assert_int_equal(q.access, IBV_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(q.state, IBV_QPS_RTS);
	assert_int_equal(q.type, IBV_QPT_RC);
	shared_unlock(seg);

	sim_mr_withdraw(&target, &mr);
	pub_qp_withdraw(&qp);
	assert_true(shared_lock(seg));
	assert_false(view_mr_find(seg, 5, &m));
	assert_false(view_qp_find(seg, 0x44, &q));
	shared_unlock(seg);

	/* Pages the MR keeps for itself are the device's: not published. */
	mr.pin_lost = true;
	sim_mr_publish(&target, &mr);
	assert_true(shared_lock(seg));
	assert_false(view_mr_find(seg, 5, &m));
	shared_unlock(seg);
}

static void test_recv_side(void **unused)
{
	static uint8_t qmem[3 * 4096], cmem[2 * 4096], smem[2 * 4096];
	struct sim_cq cq = {
		.cqn = 3, .uctx = &uctx,
		.ring = { .state = (struct pvrdma_ring *)(cmem + 8),
			  .elems = cmem + 4096, .nelems = 16,
			  .elem_size = 64 },
		.ring_pin = { .base = cmem, .len = sizeof(cmem), .fd = 100,
			      .ino = 1000, .id = 1 },
		.armed = SIM_CQ_ARM_SOLICITED,
	};
	struct sim_srq srq = {
		.srqn = 4, .uctx = &uctx, .limit = 2,
		.ring = { .state = (struct pvrdma_ring *)(smem + 8),
			  .elems = smem + 4096, .nelems = 8,
			  .elem_size = 128, .max_sge = 4 },
		.ring_pin = { .base = smem, .len = sizeof(smem), .fd = 102,
			      .ino = 1002, .id = 3 },
	};
	struct sim_qp qp = {
		.qpn = 0x55, .qp_handle = 7, .type = IBV_QPT_RC, .pd = &pd,
		.uctx = &uctx, .recv_cq = &cq,
		.rq = { .state = (struct pvrdma_ring *)(qmem + 8),
			.elems = qmem + 2 * 4096, .nelems = 32,
			.elem_size = 64, .max_sge = 2 },
		.ring_pin = { .base = qmem, .len = sizeof(qmem), .fd = 101,
			      .ino = 1001, .id = 2 },
		.attr = { .state = IBV_QPS_RTR, .port_num = 1 },
	};
	struct view_recv r;
	struct view_cq c;
	struct shared_seg *seg;

	sim_dev_shared_open(&target);
	pub_qp(&qp);
	assert_true(cq.shared);
	seg = target_seg();
	assert_true(shared_lock(seg));
	assert_true(view_recv_find(seg, 0x55, &r));
	assert_int_equal(r.rq.fd, 101);
	assert_int_equal(r.rq.ino, 1001);
	assert_int_equal(r.rq.id, 2);
	assert_int_equal(r.rq.map_len, sizeof(qmem));
	assert_int_equal(r.rq.state_off, 8);
	assert_int_equal(r.rq.elems_off, 2 * 4096);
	assert_int_equal(r.rq.nelems, 32);
	assert_int_equal(r.rq.elem_size, 64);
	assert_int_equal(r.rq.max_sge, 2);
	assert_int_equal(r.cq.fd, 100);
	assert_int_equal(r.cq.elems_off, 4096);
	assert_int_equal(r.cqn, 3);
	assert_int_equal(r.qp_handle, 7);
	assert_int_equal(r.port_num, 1);
	assert_false(r.srq);
	assert_true(view_cq_find(seg, 3, &c));
	assert_int_equal(c.armed, SIM_CQ_ARM_SOLICITED);
	shared_unlock(seg);

	/* The CQ's arm follows it. */
	cq.armed = SIM_CQ_ARM_NEXT;
	pub_cq(&cq);
	assert_true(shared_lock(seg));
	assert_true(view_cq_find(seg, 3, &c));
	assert_int_equal(c.armed, SIM_CQ_ARM_NEXT);
	shared_unlock(seg);

	/* With an SRQ: its ring, and its limit. */
	qp.srq = &srq;
	pub_qp(&qp);
	assert_true(shared_lock(seg));
	assert_true(view_recv_find(seg, 0x55, &r));
	assert_true(r.srq);
	assert_int_equal(r.srqn, 4);
	assert_int_equal(r.rq.fd, 102);
	assert_int_equal(r.rq.nelems, 8);
	assert_int_equal(r.rq.max_sge, 4);
	assert_int_equal(view_srq_limit(seg, 4), 2);
	shared_unlock(seg);
	srq.limit = 0;
	pub_srq(&srq);
	assert_true(shared_lock(seg));
	assert_int_equal(view_srq_limit(seg, 4), 0);
	shared_unlock(seg);

	/* A ring whose pin kept no file: nothing to reach. */
	srq.ring_pin.fd = -1;
	pub_qp(&qp);
	assert_true(shared_lock(seg));
	assert_false(view_recv_find(seg, 0x55, &r));
	shared_unlock(seg);

	/* UD: no receive side. */
	qp.srq = NULL;
	qp.type = IBV_QPT_UD;
	pub_qp(&qp);
	assert_true(shared_lock(seg));
	assert_false(view_recv_find(seg, 0x55, &r));
	shared_unlock(seg);
	pub_qp_withdraw(&qp);
}

static unsigned int events;

static void count_event(struct sim_cq *cq, bool solicited)
{
	(void)solicited;
	if (cq->armed == SIM_CQ_ARM_NONE)
		return;
	cq->armed = SIM_CQ_ARM_NONE;
	events++;
}

static void test_notify_after_rearm(void **unused)
{
	static uint8_t cmem[2 * 4096], qmem[2 * 4096];
	struct sim_cq cq = {
		.cqn = 6, .uctx = &uctx,
		.ring = { .state = (struct pvrdma_ring *)(cmem + 8),
			  .elems = cmem + 4096, .nelems = 16,
			  .elem_size = 64 },
		.ring_pin = { .base = cmem, .len = sizeof(cmem), .fd = 100,
			      .ino = 1000, .id = 11 },
		.armed = SIM_CQ_ARM_NEXT,
	};
	struct sim_qp qp = {
		.qpn = 0x66, .type = IBV_QPT_RC, .pd = &pd, .uctx = &uctx,
		.recv_cq = &cq,
		.rq = { .state = (struct pvrdma_ring *)(qmem + 8),
			.elems = qmem + 4096, .nelems = 16, .elem_size = 64 },
		.ring_pin = { .base = qmem, .len = sizeof(qmem), .fd = 101,
			      .ino = 1001, .id = 12 },
		.attr = { .state = IBV_QPS_RTS },
	};
	struct shared_seg *seg;

	sim_device_upcalls.comp_event = count_event;
	sim_dev_shared_open(&target);
	pub_qp(&qp);
	seg = target_seg();

	/* A requester writes a CQE and takes the arm... */
	assert_true(shared_lock(seg));
	view_cq_disarm(seg, 6);
	shared_unlock(seg);
	/* ...the application arms again before the NOTIFY arrives... */
	pub_cq_pull(&cq);
	cq.armed = SIM_CQ_ARM_NEXT;
	pub_cq(&cq);
	/* ...which raises the event of the arm taken, and the new arm
	 * stays: the next requester's CQE has its event too. */
	pub_cq_notified(&cq);
	assert_int_equal(events, 1);
	assert_int_equal(cq.armed, SIM_CQ_ARM_NEXT);
	assert_true(shared_lock(seg));
	view_cq_disarm(seg, 6);
	shared_unlock(seg);
	pub_cq_notified(&cq);
	assert_int_equal(events, 2);
	assert_int_equal(cq.armed, SIM_CQ_ARM_NONE);
	pub_qp_withdraw(&qp);
}

/* A requester in a child process takes the arm of CQ cqn as a SEND's
 * commit does, is sending its event if told so, and stops: never ended,
 * its raise is held until the parent kills it. */
static pid_t requester_takes_arm(struct shared_seg *seg, uint32_t cqn,
				 bool sending)
{
	int raise_idx;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid)
		return pid;
	/* Never left behind stopped by a test that failed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!shared_lock(seg))
		_exit(3);
	raise_idx = view_cq_raise_begin(seg, cqn);
	if (raise_idx < 0)
		_exit(4);
	view_cq_disarm(seg, cqn);
	shared_unlock(seg);
	if (sending)
		view_cq_raise_sending(seg, raise_idx);
	raise(SIGSTOP);
	_exit(5);
}

static void killed_stopped(pid_t pid)
{
	unsigned int before = events;
	siginfo_t si;
	int st;

	assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
	assert_true(WIFSTOPPED(st));
	/* Stopped, it is alive: its raise is left to it. */
	assert_true(view_raises_held(target.index));
	assert_true(pub_raises_recover(&target));
	assert_int_equal(events, before);
	assert_int_equal(kill(pid, SIGKILL), 0);
	/* A zombie, not reaped yet: gone all the same. */
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
}

static uint64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_requester_killed_raising(void **unused)
{
	static uint8_t cmem[2 * 4096], qmem[2 * 4096];
	struct sim_cq cq = {
		.cqn = 8, .uctx = &uctx,
		.ring = { .state = (struct pvrdma_ring *)(cmem + 8),
			  .elems = cmem + 4096, .nelems = 16,
			  .elem_size = 64 },
		.ring_pin = { .base = cmem, .len = sizeof(cmem), .fd = 100,
			      .ino = 1000, .id = 21 },
		.armed = SIM_CQ_ARM_NEXT,
	};
	struct sim_qp qp = {
		.qpn = 0x88, .type = IBV_QPT_RC, .pd = &pd, .uctx = &uctx,
		.recv_cq = &cq,
		.rq = { .state = (struct pvrdma_ring *)(qmem + 8),
			.elems = qmem + 4096, .nelems = 16, .elem_size = 64 },
		.ring_pin = { .base = qmem, .len = sizeof(qmem), .fd = 101,
			      .ino = 1001, .id = 22 },
		.attr = { .state = IBV_QPS_RTS },
	};
	struct engine *eng = engine_of(&target);
	struct shared_seg *seg;
	uint64_t t0;
	pid_t pid;

	(void)unused;
	events = 0;
	sim_device_upcalls.comp_event = count_event;
	assert_int_equal(sim_table_put(&target.cqs, 8, &cq), 0);
	sim_dev_shared_open(&target);
	pub_qp(&qp);
	seg = target_seg();
	assert_false(view_raises_held(target.index));
	assert_false(pub_raises_recover(&target));

	/* Killed before its event went: the target's device raises it,
	 * not as soon as it sees the raise held (one lasts microseconds)
	 * but at the check it sets a timer for. */
	pid = requester_takes_arm(seg, 8, false);
	killed_stopped(pid);
	eng->dev = &target;
	eng->now = now_ns();
	eng->next_deadline = 0;
	dev_run_raise_checks(eng);
	assert_int_equal(events, 0);
	assert_true(eng->next_deadline > eng->now);
	eng->now = eng->next_deadline;
	dev_run_raise_checks(eng);
	assert_int_equal(events, 1);
	assert_false(view_raises_held(target.index));
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(view_cq_events_take(target.index, 8), 0);

	/* Killed sending: counted as sent, and raised again (an event
	 * more is harmless, one less hangs the application). */
	pub_cq_pull(&cq);
	cq.armed = SIM_CQ_ARM_NEXT;
	pub_cq(&cq);
	pid = requester_takes_arm(seg, 8, true);
	killed_stopped(pid);
	assert_false(pub_raises_recover(&target));
	assert_int_equal(events, 2);
	assert_int_equal(view_cq_events_take(target.index, 8), 1);
	assert_int_equal(waitpid(pid, NULL, 0), pid);

	/* The CQ's destroy finds the dead one itself, without waiting
	 * for it. */
	events = 0;
	pid = requester_takes_arm(seg, 8, true);
	killed_stopped(pid);
	t0 = clock_ms();
	assert_int_equal(view_cq_events_take(target.index, 8), 1);
	assert_true(clock_ms() - t0 < 500);
	assert_false(view_raises_held(target.index));
	assert_int_equal(waitpid(pid, NULL, 0), pid);

	pub_qp_withdraw(&qp);
	sim_table_put(&target.cqs, 8, NULL);
}

/* One raise of CQ cqn's event, as a SEND's commit and its caller do. */
static bool requester_raises(struct sim_dev *req, struct shared_seg *seg,
			     uint32_t cqn)
{
	struct view_cq v;
	int raise_idx;

	assert_true(shared_lock(seg));
	raise_idx = direct_event_take(seg, cqn);
	assert_true(raise_idx >= 0);
	view_cq_disarm(seg, cqn);
	assert_true(view_cq_find(seg, cqn, &v));
	shared_unlock(seg);
	return direct_event_raise(req, seg, cqn, &v, raise_idx);
}

static void test_raise_after_readers_gone(void **unused)
{
	static uint8_t cmem[2 * 4096], qmem[2 * 4096];
	static struct sim_dev requester = { .index = 0 };
	struct sim_comp_channel ch = { .id = 31, .refs = 1 };
	struct sim_cq cq = {
		.cqn = 10, .uctx = &uctx, .channel = &ch,
		.ring = { .state = (struct pvrdma_ring *)(cmem + 8),
			  .elems = cmem + 4096, .nelems = 16,
			  .elem_size = 64 },
		.ring_pin = { .base = cmem, .len = sizeof(cmem), .fd = 100,
			      .ino = 1000, .id = 31 },
		.armed = SIM_CQ_ARM_NEXT,
	};
	struct sim_qp qp = {
		.qpn = 0xaa, .type = IBV_QPT_RC, .pd = &pd, .uctx = &uctx,
		.recv_cq = &cq,
		.rq = { .state = (struct pvrdma_ring *)(qmem + 8),
			.elems = qmem + 4096, .nelems = 16, .elem_size = 64 },
		.ring_pin = { .base = qmem, .len = sizeof(qmem), .fd = 101,
			      .ino = 1001, .id = 32 },
		.attr = { .state = IBV_QPS_RTS },
	};
	struct ib_uverbs_comp_event_desc desc;
	struct sim_event_pipe p;
	struct shared_seg *seg;
	struct stat st;

	(void)unused;
	assert_int_equal(sim_event_pipe_open(&p), 0);
	assert_int_equal(fstat(p.dev, &st), 0);
	ch.fd_dev = p.dev;
	ch.dev_ino = st.st_ino;
	assert_int_equal(sim_table_put(&target.cqs, 10, &cq), 0);
	sim_dev_shared_open(&target);
	pub_qp(&qp);
	seg = target_seg();

	/* The requester takes the channel's end and keeps it. */
	assert_true(requester_raises(&requester, seg, 10));
	assert_int_equal(read(p.user, &desc, sizeof(desc)), sizeof(desc));

	/* The target's read ends close, as at its death: the default
	 * action of SIGPIPE would end this process here. */
	close(p.user);
	sim_fd_close(p.drain);
	pub_cq_pull(&cq);
	cq.armed = SIM_CQ_ARM_NEXT;
	pub_cq(&cq);
	assert_true(requester_raises(&requester, seg, 10));

	pub_qp_withdraw(&qp);
	sim_table_put(&target.cqs, 10, NULL);
	sim_fd_close(p.dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mr_and_qp),
		cmocka_unit_test(test_recv_side),
		cmocka_unit_test(test_notify_after_rearm),
		cmocka_unit_test(test_requester_killed_raising),
		cmocka_unit_test(test_raise_after_readers_gone),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
