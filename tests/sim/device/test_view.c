// SPDX-License-Identifier: BSD-2-Clause
/*
 * The views a target publishes (sim/device/view.c) in its same-host segment
 * (sim/fabric/shared.c), seen from a requester:
 * two adapters of this process, the second publishing, the first looking at
 * it through the fabric link between them.
 *
 *   - no segment before the target published anything, nor through a
 *     descriptor in the run directory that is damaged or names anything
 *     but a sealed memory file holding a segment; the segment cannot be
 *     truncated under a requester's mapping;
 *   - an MR is found with its range, access and PD, and is gone once
 *     withdrawn (what of an MR is published is the device's choice:
 *     tests/sim/device/test_publish.c);
 *   - a QP is found with its responder state, follows its changes, and is
 *     gone once withdrawn; a QP whose slot another live QP holds is not
 *     published (its requesters use the socket fabric) and leaves the
 *     holder alone;
 *   - the segment names this process and its lock can be taken; a
 *     requester gives up on a lock held too long by another thread; the
 *     owner may publish from inside the lock it holds (it nests);
 *   - a QP's receive side is found while the QP is, and not once
 *     withdrawn (with the QP, or alone); a CQ's arm and overflow and an
 *     SRQ's limit as published, a requester's disarm clearing the arm;
 *   - an MR's withdrawal fences the copies of requesters that are stopped
 *     without waiting for them, and a killed requester's slot is reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <infiniband/verbs.h>

#include "fabric.h"
#include "shared.h"
#include "view.h"
#include "../fabric/two_adapters.h"


static int setup(void **unused)
{
	two_adapters_open("/tmp/pvrdma-test-shared.XXXXXX");
	return 0;
}

static int teardown(void **unused)
{
	return two_adapters_close();
}

static struct fab_link *link_to_target(void)
{
	struct fab_link *l = fabric_resolve(port[0], adapter[1].gid[0].raw, 0);

	assert_non_null(l);
	return l;
}

static void descriptor_path(char *path, size_t len)
{
	snprintf(path, len, "%s/fabric-%d-1.mem", sim_global.rundir,
		 (int)getpid());
}

static void write_descriptor(const char *text)
{
	char path[400];
	FILE *f;

	descriptor_path(path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Every try a requester makes in SHM_RETRY_EVERY (256) lookups finds no
 * segment. */
static void assert_no_segment(void)
{
	for (int i = 0; i < 256; i++)
		assert_null(view_peer(link_to_target()));
}

/* The descriptor in the run directory names the owner's pid and the fd of
 * its segment. A requester maps only a sealed memory file holding the
 * segment of the live process named: not an empty or damaged descriptor
 * (as a process that has just begun to write it leaves it), a number that
 * is no open file, a regular file that could shrink under the mapping, or
 * a sealed memory file without a segment in it. */
static void test_bad_descriptors(void **unused)
{
	const off_t size = 256 << 20;	/* more than a segment, sparse */
	char text[64], path[400];
	int file, memfd;

	snprintf(path, sizeof(path), "%s/not-a-segment", sim_global.rundir);
	file = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(file >= 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ftruncate(file, size), 0);
	memfd = memfd_create("pvrdma-segment",
			     MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(memfd >= 0);
	assert_int_equal(ftruncate(memfd, size), 0);
	assert_int_equal(fcntl(memfd, F_ADD_SEALS,
			       F_SEAL_SHRINK | F_SEAL_GROW), 0);

	write_descriptor("");
	assert_no_segment();
	write_descriptor("12 ");
	assert_no_segment();
	snprintf(text, sizeof(text), "%d %d", (int)getpid(), memfd);
	write_descriptor(text);		/* cut short: no newline */
	assert_no_segment();
	snprintf(text, sizeof(text), "%d 1048575\n", (int)getpid());
	write_descriptor(text);
	assert_no_segment();
	snprintf(text, sizeof(text), "%d %d\n", (int)getpid(), file);
	write_descriptor(text);
	assert_no_segment();
	snprintf(text, sizeof(text), "%d %d\n", (int)getpid(), memfd);
	write_descriptor(text);
	assert_no_segment();

	descriptor_path(path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	close(file);
	close(memfd);
}

/* The segment cannot be truncated, by its owner's application or anyone
 * it hands the descriptor to: requesters keep it mapped. */
static void test_segment_sealed(void **unused)
{
	char path[400], text[64];
	struct shared_seg *seg = NULL;
	int pid, fd;
	FILE *f;

	for (int i = 0; i < 1024 && !seg; i++)
		seg = view_peer(link_to_target());
	assert_non_null(seg);
	descriptor_path(path, sizeof(path));
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_int_equal(sscanf(text, "%d %d", &pid, &fd), 2);
	assert_int_equal(pid, getpid());
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_true(shared_lock(seg));
	shared_unlock(seg);
}

static void test_publish_lookup(void **unused)
{
	static uint8_t mem[8192];
	const unsigned int target = 1;
	const struct view_mr mr = {
		.addr = (uintptr_t)mem, .iova = 0x40000,
		.length = sizeof(mem), .pdn = 7,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	struct view_qp qp = { .type = IBV_QPT_RC, .pdn = 7 };
	const struct view_qp other = { .type = IBV_QPT_RC, .pdn = 7,
					      .state = IBV_QPS_RTS };
	struct view_mr m;
	struct view_qp q;
	struct shared_seg *seg;

	/* Nothing published yet: no segment to find. */
	assert_null(view_peer(link_to_target()));

	view_mr_publish(target, 42, &mr);
	qp.state = IBV_QPS_RTR;
	qp.access = IBV_ACCESS_REMOTE_WRITE;
	view_qp_publish(target, 0x123, &qp);

	/* A requester that missed retries after a while, not at once. */
	seg = NULL;
	for (int i = 0; i < 1024 && !seg; i++)
		seg = view_peer(link_to_target());
	assert_non_null(seg);
	assert_int_equal(shared_pid(seg), getpid());
	assert_true(shared_lock(seg));

	assert_true(view_mr_find(seg, 42, &m));
	assert_int_equal(m.addr, (uintptr_t)mem);
	assert_int_equal(m.iova, 0x40000);
	assert_int_equal(m.length, sizeof(mem));
	assert_int_equal(m.access, mr.access);
	assert_int_equal(m.pdn, 7);
	assert_false(view_mr_find(seg, 43, &m));
	assert_false(view_mr_find(seg, 0, &m));

	assert_true(view_qp_find(seg, 0x123, &q));
	assert_int_equal(q.state, IBV_QPS_RTR);
	assert_int_equal(q.type, IBV_QPT_RC);
	assert_int_equal(q.access, IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(q.pdn, 7);
	shared_unlock(seg);

	/* Changes are seen; a QP of the same slot does not displace it. */
	qp.state = IBV_QPS_ERR;
	view_qp_publish(target, 0x123, &qp);
	view_qp_publish(target, 0x123 + 65536, &other);
	assert_true(shared_lock(seg));
	assert_true(view_qp_find(seg, 0x123, &q));
	assert_int_equal(q.state, IBV_QPS_ERR);
	assert_false(view_qp_find(seg, 0x123 + 65536, &q));
	shared_unlock(seg);
	/* Withdrawing the one not published leaves the holder. */
	view_qp_withdraw(target, 0x123 + 65536);
	assert_true(shared_lock(seg));
	assert_true(view_qp_find(seg, 0x123, &q));
	shared_unlock(seg);

	view_mr_withdraw(target, 42);
	view_qp_withdraw(target, 0x123);
	assert_true(shared_lock(seg));
	assert_false(view_mr_find(seg, 42, &m));
	assert_false(view_qp_find(seg, 0x123, &q));
	shared_unlock(seg);

	/* Key 0 names no MR: never published. */
	view_mr_publish(target, 0, &mr);
	assert_true(shared_lock(seg));
	assert_false(view_mr_find(seg, 0, &m));
	shared_unlock(seg);

	/* Atomics of the target's own responder take the same lock. */
	assert_true(view_own_lock(target));
	view_own_unlock(target);
	assert_true(shared_lock(seg));
	shared_unlock(seg);

	/* A requester does not wait for good on a lock another thread
	 * holds. */
	assert_true(view_own_lock(target));
	assert_false(trylock_elsewhere(seg));
	view_own_unlock(target);
	assert_true(trylock_elsewhere(seg));

	/* The owner publishes from inside its own lock. */
	assert_true(view_own_lock(target));
	view_qp_publish(target, 0x123, &qp);
	view_own_unlock(target);
	assert_true(trylock_elsewhere(seg));
}

static void test_recv_side(void **state)
{
	struct view_recv r = {
		.rq = { .id = 7, .ino = 70, .map_len = 8192, .state_off = 8,
			.elems_off = 4096, .fd = 600, .nelems = 16,
			.elem_size = 64, .max_sge = 2 },
		.cq = { .id = 8, .ino = 80, .map_len = 8192, .fd = 601,
			.nelems = 32, .elem_size = 64 },
		.cqn = 5, .qp_handle = 9, .port_num = 1,
	}, got;
	struct view_qp qp = { .pdn = 3, .state = IBV_QPS_RTS,
				     .type = IBV_QPT_RC };
	struct view_cq cq = { .armed = 1 }, cqv;
	unsigned int target = 1;
	struct shared_seg *seg;

	(void)state;
	view_qp_publish(target, 0x456, &qp);
	seg = view_peer(link_to_target());
	assert_non_null(seg);
	/* No receive side for a QP that is not there. */
	view_recv_publish(target, 0x457, &r);
	view_recv_publish(target, 0x456, &r);
	view_cq_publish(target, 5, &cq);
	view_srq_publish(target, 4, 12);
	assert_true(shared_lock(seg));
	assert_false(view_recv_find(seg, 0x457, &got));
	assert_true(view_recv_find(seg, 0x456, &got));
	assert_memory_equal(&got, &r, sizeof(r));
	assert_true(view_cq_find(seg, 5, &cqv));
	assert_int_equal(cqv.armed, 1);
	assert_false(cqv.overflowed);
	view_cq_disarm(seg, 5);
	assert_true(view_cq_find(seg, 5, &cqv));
	assert_int_equal(cqv.armed, 0);
	assert_false(view_cq_find(seg, 6, &cqv));
	assert_int_equal(view_srq_limit(seg, 4), 12);
	assert_int_equal(view_srq_limit(seg, 5), 0);
	shared_unlock(seg);

	/* Withdrawn alone, then with the QP. */
	view_recv_publish(target, 0x456, NULL);
	assert_true(shared_lock(seg));
	assert_false(view_recv_find(seg, 0x456, &got));
	shared_unlock(seg);
	view_recv_publish(target, 0x456, &r);
	view_qp_withdraw(target, 0x456);
	view_qp_publish(target, 0x456, &qp);
	assert_true(shared_lock(seg));
	assert_false(view_recv_find(seg, 0x456, &got));
	shared_unlock(seg);
}

/* A requester in a child process: claims its copy slot, announces a
 * copy to mem, arms the slot if armed, tells the parent where the slot's
 * pieces are (the segment is mapped at the same place in both) and stops
 * itself; once continued, exits 0 if arming (then) went as it should:
 * before the stop when armed, never after a fence. */
static pid_t requester_stops(struct shared_seg *seg, uint8_t *mem,
			     bool armed, struct iovec **slot)
{
	struct view_mr m;
	struct shared_copy *c;
	struct iovec *iov;
	int fds[2];
	pid_t pid;
	bool ok;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid) {
		close(fds[1]);
		assert_int_equal(read(fds[0], slot, sizeof(*slot)),
				 sizeof(*slot));
		close(fds[0]);
		return pid;
	}
	c = shared_copy_claim(link_to_target());
	if (!c)
		_exit(3);
	shared_copy_enter(c);
	iov = shared_copy_iov(c);
	if (!view_mr_find(seg, 50, &m))
		_exit(4);
	iov[0].iov_base = mem;
	iov[0].iov_len = 100;
	iov[1].iov_base = mem + 100;
	iov[1].iov_len = 100;
	ok = armed && shared_copy_arm(c);
	if (write(fds[1], &iov, sizeof(iov)) != sizeof(iov))
		_exit(6);
	raise(SIGSTOP);
	if (!armed)
		ok = !shared_copy_arm(c);	/* fenced meanwhile */
	shared_copy_leave(c);
	_exit(ok ? 0 : 5);
}

static void wait_stopped_child(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
	assert_true(WIFSTOPPED(st));
}

static void continue_child_ok(pid_t pid)
{
	int st;

	assert_int_equal(kill(pid, SIGCONT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* An MR withdrawn while a requester that is stopped has a copy to it
 * armed, or only announced: the withdrawal does not wait for it, the
 * armed copy's pieces are emptied (it will move nothing), the announced
 * one cannot be armed any more; a requester that died leaves its slot to
 * the next. */
static void test_copy_fence(void **unused)
{
	static uint8_t mem[4096];
	const unsigned int target = 1;
	const struct view_mr mr = {
		.addr = (uintptr_t)mem, .iova = (uintptr_t)mem,
		.length = sizeof(mem), .pdn = 7,
		.access = IBV_ACCESS_REMOTE_WRITE,
	};
	struct shared_seg *seg;
	struct iovec *iov, *again;
	pid_t pid;
	int st;

	(void)unused;
	view_mr_publish(target, 50, &mr);
	seg = view_peer(link_to_target());
	assert_non_null(seg);

	pid = requester_stops(seg, mem, true, &iov);
	wait_stopped_child(pid);
	assert_int_equal(iov[0].iov_len, 100);
	assert_int_equal(iov[1].iov_len, 100);
	view_mr_withdraw(target, 50);		/* returns: not waited for */
	assert_int_equal(iov[0].iov_len, 0);
	assert_int_equal(iov[1].iov_len, 0);
	continue_child_ok(pid);

	view_mr_publish(target, 50, &mr);
	pid = requester_stops(seg, mem, false, &iov);
	wait_stopped_child(pid);
	view_mr_withdraw(target, 50);
	continue_child_ok(pid);

	/* Killed mid-copy: its slot is the next requester's. */
	view_mr_publish(target, 50, &mr);
	pid = requester_stops(seg, mem, true, &iov);
	wait_stopped_child(pid);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	view_mr_withdraw(target, 50);
	view_mr_publish(target, 50, &mr);
	pid = requester_stops(seg, mem, true, &again);
	assert_ptr_equal(again, iov);
	wait_stopped_child(pid);
	continue_child_ok(pid);
	view_mr_withdraw(target, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_descriptors),
		cmocka_unit_test(test_publish_lookup),
		cmocka_unit_test(test_segment_sealed),
		cmocka_unit_test(test_recv_side),
		cmocka_unit_test(test_copy_fence),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
