// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion events and the ACK/RNR timers of the device engine, with the
 * real events.c: each CQ has a completion channel (a socket pair), and the
 * events the device raises are read from it as libibverbs reads them.
 *
 *   - an ARM doorbell is in force when the trapped store returns: a CQE
 *     written after it raises the event (no lost wake-up);
 *   - an arm the device can only apply late (a doorbell rung while the
 *     thread is inside the sim) fires at once for CQEs still pending;
 *   - retry_cnt 7 is seven retries: a vanished peer ends in RETRY_EXC_ERR;
 *   - waiting out RNR NAKs does not spend the ACK-timeout retry count;
 *   - a send doorbell never waits for a busy device: it is queued and run
 *     by whoever holds dev->lock;
 *   - the NOTIFY of a same-host requester that wrote a CQE and took the
 *     CQ's arm raises the event by the CQ's number, also when the QP it
 *     wrote for is gone by then (the CQ outlives it).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#define H_REAL_EVENTS
#include "event_pipe.h"
#include "fabric.h"
#include "ring.h"
#include "engine_harness.h"

static struct harness H;
static struct sim_comp_channel chan_a, chan_b;
static int user_a = -1, user_b = -1;

static struct sim_event_pipe pipe_a, pipe_b;

/* A channel as the kernel layer makes it, its user end non-blocking. */
static void channel_open(struct sim_comp_channel *ch,
			 struct sim_event_pipe *p, int *user)
{
	struct stat st;

	assert_int_equal(sim_event_pipe_open(p), 0);
	assert_int_equal(fcntl(p->user, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fstat(p->user, &st), 0);
	memset(ch, 0, sizeof(*ch));
	ch->fd_user = p->user;
	ch->fd_dev = p->dev;
	ch->dev_ino = st.st_ino;
	ch->refs = 1;
	*user = p->user;
}

static int setup(void **unused)
{
	harness_init(&H);
	harness_qp_pair(&H, IBV_QPT_RC);
	channel_open(&chan_a, &pipe_a, &user_a);
	channel_open(&chan_b, &pipe_b, &user_b);
	harness_lock(&H);
	H.a.cq.cq.channel = &chan_a;
	H.a.cq.cq.user_handle = 0xaaaa;
	H.b.cq.cq.channel = &chan_b;
	H.b.cq.cq.user_handle = 0xbbbb;
	harness_unlock(&H);
	return 0;
}

static int teardown(void **unused)
{
	harness_fini(&H);
	close(user_a);
	close(user_b);
	sim_event_pipe_close(&pipe_a);
	sim_event_pipe_close(&pipe_b);
	return 0;
}

/* Events waiting on a channel now (nothing is waited for). */
static int events_pending(int user)
{
	struct ib_uverbs_comp_event_desc d;
	int n = 0;

	while (read(user, &d, sizeof(d)) == sizeof(d))
		n++;
	return n;
}

/* Waits for one event; a hang guard, not a timing assertion. */
static void wait_event(int user, uint64_t cq_handle)
{
	struct ib_uverbs_comp_event_desc d;
	struct pollfd p = { .fd = user, .events = POLLIN };

	if (poll(&p, 1, 20000) != 1)
		fail_msg("no completion event arrived");
	assert_int_equal(read(user, &d, sizeof(d)), sizeof(d));
	assert_int_equal(d.cq_handle, cq_handle);
}

static void arm(struct h_cq *c, uint32_t bit)
{
	engine_doorbell(&H.uctx, PVRDMA_UAR_CQ_OFFSET, bit | c->cq.cqn);
}

/* What a signal handler of the application does while its thread is in
 * the sim: ring while dev->lock is held by this very thread. */
static void arm_while_in_sim(struct h_cq *c, uint32_t bit)
{
	harness_lock(&H);
	arm(c, bit);
	harness_unlock(&H);
}

/* Any doorbell run in the trap applies what was queued before it. */
static void flush_queued_doorbells(void)
{
	engine_doorbell(&H.uctx, PVRDMA_UAR_SRQ_OFFSET, 0);
}

/* A signaled RDMA WRITE of a: one send CQE on a's CQ, none on b's. */
static void write_a_to_b(uint64_t wr_id, uint32_t flags)
{
	post_send(&H.a, &(struct send_args){
		.wr_id = wr_id, .opcode = PVRDMA_WR_RDMA_WRITE,
		.addr = H.buf_a, .len = 16, .lkey = H.mr_a.lkey,
		.raddr = (uintptr_t)H.buf_b, .rkey = H.mr_b.rkey,
		.flags = IBV_SEND_SIGNALED | flags });
}

static void wait_cqe_pending(struct h_cq *c)
{
	int i;

	for (i = 0; i < 200000 && cq_empty(c); i++)
		usleep(100);
	assert_false(cq_empty(c));
}

static void test_arm_is_in_force_when_the_store_returns(void **unused)
{
	struct pvrdma_cqe c;

	arm(&H.a.cq, SIM_UAR_CQ_ARM);
	/* No hand-off to a device thread: the arm is already there. */
	harness_lock(&H);
	assert_int_equal(H.a.cq.cq.armed, SIM_CQ_ARM_NEXT);
	harness_unlock(&H);

	write_a_to_b(1, 0);
	wait_event(user_a, 0xaaaa);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 1);
	/* One event per arm. */
	write_a_to_b(2, 0);
	poll_one(&H.a.cq, &c);
	assert_int_equal(events_pending(user_a), 0);
}

static void test_every_arm_gets_its_event(void **unused)
{
	struct pvrdma_cqe c;
	int i;

	/* The rc_pingpong -e loop: arm, find nothing, wait, poll. */
	for (i = 0; i < 200; i++) {
		arm(&H.a.cq, SIM_UAR_CQ_ARM);
		assert_true(cq_empty(&H.a.cq));
		write_a_to_b(100 + i, 0);
		wait_event(user_a, 0xaaaa);
		poll_one(&H.a.cq, &c);
		assert_int_equal(c.wr_id, 100 + i);
		assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	}
}

static void test_late_arm_fires_for_a_pending_cqe(void **unused)
{
	struct pvrdma_cqe c;

	write_a_to_b(3, 0);
	wait_cqe_pending(&H.a.cq);
	/* The CQE was written before the arm took effect and no later CQE
	 * comes: only the device noticing the pending one wakes a waiter. */
	arm_while_in_sim(&H.a.cq, SIM_UAR_CQ_ARM);
	wait_event(user_a, 0xaaaa);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 3);
}

static void test_late_solicited_arm_needs_a_solicited_cqe(void **unused)
{
	struct pvrdma_cqe c;

	/* A send completion is not solicited: no event. */
	write_a_to_b(4, 0);
	wait_cqe_pending(&H.a.cq);
	arm_while_in_sim(&H.a.cq, SIM_UAR_CQ_ARM_SOL);
	flush_queued_doorbells();
	assert_int_equal(events_pending(user_a), 0);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 4);
	harness_lock(&H);
	H.a.cq.cq.armed = SIM_CQ_ARM_NONE;
	harness_unlock(&H);

	/* A solicited receive is. */
	post_recv(&H.b, 5, H.buf_b, 64, H.mr_b.lkey);
	post_send(&H.a, &(struct send_args){
		.wr_id = 6, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 8, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SOLICITED });
	wait_cqe_pending(&H.b.cq);
	arm_while_in_sim(&H.b.cq, SIM_UAR_CQ_ARM_SOL);
	wait_event(user_b, 0xbbbb);
	poll_one(&H.b.cq, &c);
	assert_int_equal(c.wr_id, 5);
}

static void test_retry_cnt_7_is_not_infinite(void **unused)
{
	struct pvrdma_cqe c;

	harness_lock(&H);
	H.a.qp.attr.dest_qp_num = 0x777;	/* the peer is gone */
	H.a.qp.attr.retry_cnt = 7;
	H.a.qp.attr.timeout = 1;		/* the 1 ms floor */
	harness_unlock(&H);
	write_a_to_b(7, 0);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 7);
	assert_int_equal(c.status, PVRDMA_WC_RETRY_EXC_ERR);
}

static void test_rnr_waits_spend_no_ack_retries(void **unused)
{
	struct pvrdma_cqe c;

	harness_lock(&H);
	H.a.qp.attr.retry_cnt = 1;
	H.a.qp.attr.timeout = 1;		/* 1 ms ACK timer */
	H.a.qp.attr.rnr_retry = 7;		/* RNR: retry forever */
	H.b.qp.attr.min_rnr_timer = 1;		/* 10 us */
	harness_unlock(&H);
	post_send(&H.a, &(struct send_args){
		.wr_id = 8, .opcode = PVRDMA_WR_SEND, .addr = H.buf_a,
		.len = 8, .lkey = H.mr_a.lkey, .flags = IBV_SEND_SIGNALED });
	/* Many RNR rounds: an RNR wait that ran into the ACK timer would
	 * have spent the single retry and failed the WQE by now. */
	wait_rnr_naks(&H, 5);
	assert_true(cq_empty(&H.a.cq));
	post_recv(&H.b, 9, H.buf_b, 64, H.mr_b.lkey);
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 8);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
}

static atomic_bool posted;
static atomic_bool holder_gave_up;
static atomic_bool holding;

/* Holds dev->lock until the main thread says it posted (or 5 s). */
static void *hold_lock(void *unused)
{
	int i;

	harness_lock(&H);
	atomic_store(&holding, true);
	for (i = 0; i < 5000 && !atomic_load(&posted); i++)
		usleep(1000);
	if (!atomic_load(&posted))
		atomic_store(&holder_gave_up, true);
	harness_unlock(&H);
	return NULL;
}

static void test_send_doorbell_never_waits_for_the_device(void **unused)
{
	struct pvrdma_cqe c;
	pthread_t t;

	atomic_store(&posted, false);
	atomic_store(&holder_gave_up, false);
	atomic_store(&holding, false);
	assert_int_equal(pthread_create(&t, NULL, hold_lock, NULL), 0);
	while (!atomic_load(&holding))
		usleep(100);
	write_a_to_b(10, 0);		/* must return with the lock taken */
	atomic_store(&posted, true);
	pthread_join(t, NULL);
	assert_false(atomic_load(&holder_gave_up));
	/* The holder (or the device thread) ran it. */
	poll_one(&H.a.cq, &c);
	assert_int_equal(c.wr_id, 10);
	assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
}

static void test_notify_raises_the_event_of_its_cq(void **unused)
{
	struct fab_hdr h = {
		.type = FAB_NOTIFY,
		.dst_qpn = 0xfffff0,	/* no such QP (any more) */
		.rkey = H.b.cq.cq.cqn,
	};

	harness_lock(&H);
	engine_rx(H.dev, NULL, &h, NULL);
	harness_unlock(&H);
	wait_event(user_b, 0xbbbb);
	assert_int_equal(events_pending(user_a), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_arm_is_in_force_when_the_store_returns),
		T(test_every_arm_gets_its_event),
		T(test_late_arm_fires_for_a_pending_cqe),
		T(test_late_solicited_arm_needs_a_solicited_cqe),
		T(test_retry_cnt_7_is_not_infinite),
		T(test_rnr_waits_spend_no_ack_retries),
		T(test_send_doorbell_never_waits_for_the_device),
		T(test_notify_raises_the_event_of_its_cq),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
