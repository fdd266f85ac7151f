// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a process may do around an RDMA device with masks, handlers, fds
 * and mappings, as it may on a kernel: doorbells keep working, and the
 * application's own signals and files behave as the kernel makes them.
 * One process, two RC QPs of one context connected to each other; each
 * mode does its thing, then sends messages both ways and checks them:
 *
 *   mask-thread     a thread that blocks every signal (pthread_sigmask with
 *                   a full set) posts and polls; it reads its mask back;
 *                   so do threads started with every signal blocked by
 *                   their creator or by pthread_attr_setsigmask_np
 *   raw-mask        the same with syscall(SYS_rt_sigprocmask)
 *   timer-thread    a timer's SIGEV_THREAD callback (glibc runs it with
 *                   every signal blocked) posts and polls
 *   exec-mask       a program that blocks SIGSEGV execs itself: the new
 *                   image starts with it blocked, and its doorbells work
 *   sigset          SIGSEGV handler installed with sigset(); the program's
 *                   own fault still reaches it; a fault while it holds
 *                   SIGSEGV (sighold, sigprocmask) kills the process; a
 *                   raised one waits (sigpending) until unblocked
 *   raw-action      SIGSEGV handler installed with syscall(SYS_rt_sigaction)
 *   inline-action   SIGSEGV handler installed by an inline system call no
 *                   library can see (it returns from faults that are not
 *                   its own, as most handlers do): doorbells work again
 *                   once the sim takes SIGSEGV back, own faults reach it
 *   close-range     close_range(3, ~0U, 0) with the device open: the data
 *                   path works, control verbs get EBADF, and a new file at
 *                   a closed number gets nothing of the device's
 *   closefrom       the same with closefrom(3)
 *   raw-close-range the same with syscall(SYS_close_range)
 *   close-range-pair (--server/--client) two processes close every fd
 *                   but their side channel, fill the freed numbers with
 *                   sockets and pipes, and exchange messages: the sim's own
 *                   fds (fabric, epoll, eventfd, event sockets) carry on and
 *                   nothing of the device lands in the program's new files
 *   fd-reuse        a uverbs fd closed with syscall(SYS_close_range), one
 *                   closed by an inline system call nothing can see: the
 *                   file opened next at the number is that file, writes go
 *                   to it
 *   ring-fds        the ring memory files the device keeps in the fd
 *                   table: closed and replaced (dup2) by the program, half
 *                   through libc (EBADF, EBUSY: they are the device's),
 *                   half by inline system calls (they succeed); traffic
 *                   carries on, and the files the program put at those
 *                   numbers stay open when the device lets go of its rings
 *   uar-map         the program maps the UAR itself, with mmap and with
 *                   syscall(SYS_mmap): pvrdma_mmap's rules (one page), a
 *                   store traps, mremap cannot grow it but moves it
 *   fork-uar        a fork()ed child has no UAR page, as the kernel
 *                   gives it none: its store there kills it with SIGSEGV
 *                   instead of ringing the parent's device; the parent's
 *                   doorbells and traffic carry on
 *   mmap-hook       the provider's mmap/munmap patched (as UCX patches
 *                   them) to libc's, found with dlsym(RTLD_NEXT) from a
 *                   library loaded after the preload (libe2e_mmap_hook.so)
 *   mmap-hook-raw   the same hooks issuing syscall(SYS_mmap/SYS_munmap)
 *
 *   host_rules --mode M [--server|--client --port P]
 */
#include "e2e_common.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* sigset(), sighold() & co. are what this program tests. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define MSGS		64
#define MSG_LEN		256

struct loop {
	struct e2e_dev d;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint8_t *buf;		/* [QP][send, recv][MSG_LEN] */
};

static uint8_t *slot(struct loop *l, int qp, int recv)
{
	return l->buf + (qp * 2 + recv) * MSG_LEN;
}

static void loop_open(struct loop *l)
{
	struct e2e_peer peer;
	int i;

	e2e_open(&l->d, NULL, 0);
	l->buf = calloc(4, MSG_LEN);
	E2E_CHECK(l->buf, "calloc");
	l->mr = ibv_reg_mr(l->d.pd, l->buf, 4 * MSG_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(l->mr, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		l->cq[i] = ibv_create_cq(l->d.ctx, 16, NULL, NULL, 0);
		E2E_CHECK(l->cq[i], "ibv_create_cq: %s", strerror(errno));
		l->qp[i] = e2e_create_qp(&l->d, IBV_QPT_RC, l->cq[i], l->cq[i],
					 8, 1);
		e2e_qp_to_init(l->qp[i], IBV_QPT_RC);
	}
	for (i = 0; i < 2; i++) {
		memset(&peer, 0, sizeof(peer));
		peer.rc_qpn = l->qp[!i]->qp_num;
		peer.psn = 100 + !i;
		memcpy(peer.gid, l->d.gid.raw, 16);
		e2e_rc_connect(&l->d, l->qp[i], 100 + i, &peer, NULL);
	}
}

static void loop_close(struct loop *l)
{
	int i;

	for (i = 0; i < 2; i++) {
		E2E_CHECK(!ibv_destroy_qp(l->qp[i]), "ibv_destroy_qp");
		E2E_CHECK(!ibv_destroy_cq(l->cq[i]), "ibv_destroy_cq");
	}
	E2E_CHECK(!ibv_dereg_mr(l->mr), "ibv_dereg_mr");
	e2e_close(&l->d);
	free(l->buf);
}

/* One message from QP `from` to the other, checked at both ends. */
static void loop_send(struct loop *l, int from, unsigned int seed)
{
	int to = !from;
	struct ibv_sge rsge = {
		.addr = (uintptr_t)slot(l, to, 1), .length = MSG_LEN,
		.lkey = l->mr->lkey,
	};
	struct ibv_sge ssge = {
		.addr = (uintptr_t)slot(l, from, 0), .length = MSG_LEN,
		.lkey = l->mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = seed, .sg_list = &rsge,
				   .num_sge = 1 }, *bad_rwr;
	struct ibv_send_wr swr = { .wr_id = seed, .sg_list = &ssge,
				   .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bad_swr;
	struct ibv_wc wc;

	e2e_pattern(slot(l, from, 0), MSG_LEN, seed);
	memset(slot(l, to, 1), 0, MSG_LEN);
	E2E_CHECK(!ibv_post_recv(l->qp[to], &rwr, &bad_rwr), "post_recv");
	E2E_CHECK(!ibv_post_send(l->qp[from], &swr, &bad_swr), "post_send");
	e2e_poll_one(l->cq[from], &wc, "send completion");
	E2E_CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == seed,
		  "send: status %d wr_id %llu", wc.status,
		  (unsigned long long)wc.wr_id);
	e2e_poll_one(l->cq[to], &wc, "receive completion");
	E2E_CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == seed &&
		  wc.byte_len == MSG_LEN, "recv: status %d wr_id %llu len %u",
		  wc.status, (unsigned long long)wc.wr_id, wc.byte_len);
	E2E_CHECK(e2e_pattern_ok(slot(l, to, 1), MSG_LEN, seed),
		  "message %u arrived corrupted", seed);
}

static void loop_traffic(struct loop *l, unsigned int base)
{
	unsigned int i;

	for (i = 0; i < MSGS; i++)
		loop_send(l, i & 1, base + i);
}

/* ---- signals ---- */

static bool segv_blocked_now(void)
{
	sigset_t cur;

	E2E_CHECK(!pthread_sigmask(SIG_BLOCK, NULL, &cur), "pthread_sigmask");
	return sigismember(&cur, SIGSEGV) == 1;
}

static void *masked_worker(void *arg)
{
	struct loop *l = arg;
	sigset_t all;

	sigfillset(&all);
	E2E_CHECK(!pthread_sigmask(SIG_SETMASK, &all, NULL),
		  "pthread_sigmask");
	E2E_CHECK(segv_blocked_now(), "the thread's mask lost SIGSEGV");
	loop_traffic(l, 1000);
	return NULL;
}

/* Started with every signal blocked (by its creator or attributes). */
static void *born_masked_worker(void *arg)
{
	struct loop *l = arg;

	E2E_CHECK(segv_blocked_now(), "the new thread's mask lacks SIGSEGV");
	loop_traffic(l, 1100);
	return NULL;
}

static void run_thread(void *(*fn)(void *), pthread_attr_t *attr,
		       struct loop *l)
{
	pthread_t t;

	E2E_CHECK(!pthread_create(&t, attr, fn, l), "pthread_create");
	E2E_CHECK(!pthread_join(t, NULL), "pthread_join");
}

static void mode_mask_thread(struct loop *l)
{
	pthread_attr_t attr;
	sigset_t all, old;

	run_thread(masked_worker, NULL, l);
	E2E_CHECK(!segv_blocked_now(), "the main thread's mask changed");

	/* The common server pattern: block all, then start the workers. */
	sigfillset(&all);
	E2E_CHECK(!pthread_sigmask(SIG_SETMASK, &all, &old), "sigmask");
	run_thread(born_masked_worker, NULL, l);
	E2E_CHECK(!pthread_sigmask(SIG_SETMASK, &old, NULL), "sigmask");

	E2E_CHECK(!pthread_attr_init(&attr), "pthread_attr_init");
	E2E_CHECK(!pthread_attr_setsigmask_np(&attr, &all),
		  "pthread_attr_setsigmask_np");
	E2E_CHECK(!pthread_attr_getsigmask_np(&attr, &old) &&
		  sigismember(&old, SIGSEGV) == 1,
		  "the attributes' mask lost SIGSEGV");
	run_thread(born_masked_worker, &attr, l);
	pthread_attr_destroy(&attr);
	E2E_CHECK(!segv_blocked_now(), "the main thread's mask changed");
}

static void mode_raw_mask(struct loop *l)
{
	uint64_t all = ~0ull, cur = 0;

	E2E_CHECK(!syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8),
		  "rt_sigprocmask: %s", strerror(errno));
	E2E_CHECK(!syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8),
		  "rt_sigprocmask: %s", strerror(errno));
	E2E_CHECK(cur & (1ull << (SIGSEGV - 1)), "raw mask lost SIGSEGV");
	loop_traffic(l, 2000);
	E2E_CHECK(!syscall(SYS_rt_sigprocmask, SIG_SETMASK, &(uint64_t){ 0 },
			   NULL, 8), "rt_sigprocmask");
}

static struct loop *timer_loop;
static volatile sig_atomic_t timer_done;

static void timer_callback(union sigval v)
{
	loop_traffic(timer_loop, 1500);
	timer_done = 1;
}

static void mode_timer_thread(struct loop *l)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t timer;
	int i;

	timer_loop = l;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = timer_callback;
	E2E_CHECK(!timer_create(CLOCK_MONOTONIC, &sev, &timer),
		  "timer_create: %s", strerror(errno));
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 1000000;
	E2E_CHECK(!timer_settime(timer, 0, &its, NULL), "timer_settime");
	for (i = 0; i < E2E_WAIT_SECONDS * 100 && !timer_done; i++)
		usleep(10000);
	E2E_CHECK(timer_done, "the timer's callback did not finish");
	E2E_CHECK(!timer_delete(timer), "timer_delete");
}

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t faults;
static void *volatile fault_addr;

static void fault_handler(int sig)
{
	faults++;
	siglongjmp(fault_jmp, 1);
}

static void fault_info_handler(int sig, siginfo_t *si, void *ctx)
{
	faults++;
	fault_addr = si->si_addr;
	siglongjmp(fault_jmp, 1);
}

static volatile uint32_t *no_access_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	E2E_CHECK(p != MAP_FAILED, "mmap");
	return p;
}

/* The program's own fault reaches its handler, once. */
static void expect_own_fault_handled(void)
{
	volatile uint32_t *page = no_access_page();

	faults = 0;
	if (!sigsetjmp(fault_jmp, 1))
		*page = 1;
	E2E_CHECK(faults == 1, "own fault reached the handler %d times",
		  (int)faults);
	munmap((void *)page, 4096);
}

/* In a child: how blocking SIGSEGV then faulting ends. */
static int child_fault_blocked(bool with_sighold)
{
	struct rlimit no_core = { 0, 0 };
	volatile uint32_t *page;
	sigset_t set;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	E2E_CHECK(pid >= 0, "fork");
	if (!pid) {
		setrlimit(RLIMIT_CORE, &no_core);
		page = no_access_page();
		if (with_sighold) {
			sighold(SIGSEGV);
		} else {
			sigemptyset(&set);
			sigaddset(&set, SIGSEGV);
			sigprocmask(SIG_BLOCK, &set, NULL);
		}
		if (!sigsetjmp(fault_jmp, 1))
			*page = 1;
		_exit(faults ? 3 : 4);
	}
	E2E_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	return status;
}

static void mode_sigset(struct loop *l)
{
	int status;

	E2E_CHECK(sigset(SIGSEGV, fault_handler) != SIG_ERR, "sigset");
	loop_traffic(l, 3000);
	expect_own_fault_handled();
	loop_traffic(l, 3100);

	status = child_fault_blocked(true);
	E2E_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
		  "fault with SIGSEGV held: status %#x, want death by SIGSEGV",
		  status);
	status = child_fault_blocked(false);
	E2E_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
		  "fault with SIGSEGV blocked: status %#x, want death by "
		  "SIGSEGV", status);
	/* A sent SIGSEGV waits while blocked, and comes on unblocking. */
	{
		sigset_t segv, pending;

		sigemptyset(&segv);
		sigaddset(&segv, SIGSEGV);
		E2E_CHECK(!sigprocmask(SIG_BLOCK, &segv, NULL), "block");
		faults = 0;
		E2E_CHECK(!raise(SIGSEGV), "raise");
		E2E_CHECK(!faults, "a blocked SIGSEGV was delivered");
		E2E_CHECK(!sigpending(&pending) &&
			  sigismember(&pending, SIGSEGV) == 1,
			  "sigpending does not show SIGSEGV");
		loop_traffic(l, 3150);
		if (!sigsetjmp(fault_jmp, 1))
			sigprocmask(SIG_UNBLOCK, &segv, NULL);
		E2E_CHECK(faults == 1, "unblocked SIGSEGV delivered %d times",
			  (int)faults);
		E2E_CHECK(!segv_blocked_now(), "SIGSEGV still blocked");
	}
	/* Holding and releasing it around traffic changes nothing. */
	E2E_CHECK(sigset(SIGSEGV, SIG_HOLD) == fault_handler, "sigset hold");
	loop_traffic(l, 3200);
	E2E_CHECK(!sigrelse(SIGSEGV), "sigrelse");
	expect_own_fault_handled();
}

/* The kernel's struct sigaction on x86-64. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static void mode_raw_action(struct loop *l)
{
	struct ksigaction ka, cur, glibc;
	volatile uint32_t *page = no_access_page();

	/* Borrow glibc's restorer: a raw action needs one on x86-64. */
	E2E_CHECK(signal(SIGUSR1, SIG_IGN) != SIG_ERR, "signal");
	E2E_CHECK(!syscall(SYS_rt_sigaction, SIGUSR1, NULL, &glibc, 8),
		  "rt_sigaction");
	memset(&ka, 0, sizeof(ka));
	ka.handler = (void *)fault_info_handler;
	ka.flags = SA_SIGINFO | 0x04000000ul;	/* SA_RESTORER */
	ka.restorer = glibc.restorer;
	E2E_CHECK(!syscall(SYS_rt_sigaction, SIGSEGV, &ka, NULL, 8),
		  "rt_sigaction: %s", strerror(errno));
	E2E_CHECK(!syscall(SYS_rt_sigaction, SIGSEGV, NULL, &cur, 8) &&
		  cur.handler == (void *)fault_info_handler,
		  "rt_sigaction does not read back the handler");
	loop_traffic(l, 4000);
	faults = 0;
	if (!sigsetjmp(fault_jmp, 1))
		*page = 1;
	E2E_CHECK(faults == 1 && fault_addr == (void *)page,
		  "own fault: %d calls, at %p (page %p)", (int)faults,
		  fault_addr, (void *)page);
	loop_traffic(l, 4100);
}

static volatile uint32_t *own_page;
static volatile sig_atomic_t foreign_faults;

/* Escapes from its own faults; returns from the others (they repeat). */
static void selective_handler(int sig, siginfo_t *si, void *ctx)
{
	if (si->si_addr == (void *)own_page) {
		faults++;
		siglongjmp(fault_jmp, 1);
	}
	foreign_faults++;
}

static long inline_rt_sigaction(int sig, const struct ksigaction *act,
				struct ksigaction *old)
{
	register long r10 __asm__("r10") = 8;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"((long)SYS_rt_sigaction), "D"((long)sig),
			   "S"(act), "d"(old), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

static void mode_inline_action(struct loop *l)
{
	struct ksigaction ka, glibc;

	own_page = no_access_page();
	E2E_CHECK(signal(SIGUSR1, SIG_IGN) != SIG_ERR, "signal");
	E2E_CHECK(!syscall(SYS_rt_sigaction, SIGUSR1, NULL, &glibc, 8),
		  "rt_sigaction");
	memset(&ka, 0, sizeof(ka));
	ka.handler = (void *)selective_handler;
	ka.flags = SA_SIGINFO | SA_NODEFER | 0x04000000ul;
	ka.restorer = glibc.restorer;
	E2E_CHECK(!inline_rt_sigaction(SIGSEGV, &ka, NULL),
		  "inline rt_sigaction");
	loop_traffic(l, 8000);
	printf("doorbell faults the handler saw: %d\n", (int)foreign_faults);
	faults = 0;
	if (!sigsetjmp(fault_jmp, 1))
		*own_page = 1;
	E2E_CHECK(faults == 1, "own fault reached the handler %d times",
		  (int)faults);
	loop_traffic(l, 8100);
}

/* ---- fds ---- */

/* Closes every fd from 3 on, the three ways a program can. */
static void close_all(const char *how)
{
	if (!strcmp(how, "close-range"))
		E2E_CHECK(!close_range(3, ~0U, 0), "close_range: %s",
			  strerror(errno));
	else if (!strcmp(how, "closefrom"))
		closefrom(3);
	else
		E2E_CHECK(!syscall(SYS_close_range, 3, ~0U, 0),
			  "SYS_close_range: %s", strerror(errno));
}

static void mode_close_all(struct loop *l, const char *how)
{
	struct ibv_device_attr attr;
	struct ibv_cq *cq;
	int p[2], ret;
	char c;

	loop_traffic(l, 5000);
	close_all(how);

	/* The device's mappings hold the file: the data path works. */
	loop_traffic(l, 5100);

	/* Control verbs reach a closed fd. */
	ret = ibv_query_device(l->d.ctx, &attr);
	E2E_CHECK(ret == EBADF, "ibv_query_device after %s: %d (%s), want "
		  "EBADF", how, ret, e2e_errno_name(ret));
	errno = 0;
	cq = ibv_create_cq(l->d.ctx, 4, NULL, NULL, 0);
	E2E_CHECK(!cq && errno == EBADF, "ibv_create_cq after %s: %p, "
		  "errno %s", how, (void *)cq, e2e_errno_name(errno));

	/* New files at the freed numbers get nothing of the device. */
	E2E_CHECK(!pipe2(p, O_NONBLOCK), "pipe2");
	E2E_CHECK(p[0] == 3 || p[1] == 3, "pipe at %d/%d, 3 was closed",
		  p[0], p[1]);
	loop_traffic(l, 5200);
	E2E_CHECK(read(p[0], &c, 1) == -1 && errno == EAGAIN,
		  "the device wrote into the application's pipe");
	E2E_CHECK(write(p[1], "x", 1) == 1 && read(p[0], &c, 1) == 1 &&
		  c == 'x', "pipe at a closed device number does not work");
	close(p[0]);
	close(p[1]);
}

#define REUSE_FILES	16

struct pair {
	struct e2e_dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* [2][MSGS][MSG_LEN]: sends, receives */
	int files[2 * REUSE_FILES][2];
};

static uint8_t *pair_slot(struct pair *p, int recv, int i)
{
	return p->buf + ((size_t)recv * MSGS + i) * MSG_LEN;
}

static void mode_pair(const struct e2e_args *args)
{
	/* Static: what cannot be destroyed any more stays reachable. */
	static struct pair p;
	struct e2e_peer me, peer;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *bad_rwr;
	struct ibv_send_wr swr, *bad_swr;
	struct ibv_wc wc;
	unsigned int mine = args->server ? 1000 : 2000;
	unsigned int theirs = args->server ? 2000 : 1000;
	int sock, i, sends = 0, recvs = 0;
	char c;

	sock = e2e_channel_open(args);
	e2e_open(&p.d, NULL, 0);
	p.buf = calloc(2 * MSGS, MSG_LEN);
	E2E_CHECK(p.buf, "calloc");
	p.mr = ibv_reg_mr(p.d.pd, p.buf, 2 * MSGS * MSG_LEN,
			  IBV_ACCESS_LOCAL_WRITE);
	E2E_CHECK(p.mr, "ibv_reg_mr: %s", strerror(errno));
	p.cq = ibv_create_cq(p.d.ctx, 2 * MSGS, NULL, NULL, 0);
	E2E_CHECK(p.cq, "ibv_create_cq: %s", strerror(errno));
	p.qp = e2e_create_qp(&p.d, IBV_QPT_RC, p.cq, p.cq, MSGS, 1);
	e2e_qp_to_init(p.qp, IBV_QPT_RC);
	memset(&me, 0, sizeof(me));
	me.rc_qpn = p.qp->qp_num;
	me.psn = mine;
	memcpy(me.gid, p.d.gid.raw, 16);
	e2e_exchange(sock, &me, &peer);
	e2e_rc_connect(&p.d, p.qp, me.psn, &peer, NULL);
	for (i = 0; i < MSGS; i++) {
		sge.addr = (uintptr_t)pair_slot(&p, 1, i);
		sge.length = MSG_LEN;
		sge.lkey = p.mr->lkey;
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		E2E_CHECK(!ibv_post_recv(p.qp, &rwr, &bad_rwr), "post_recv");
	}
	e2e_sync(sock, "ready");

	/* Every fd but the side channel, then new files at the numbers. */
	if (sock > 3)
		E2E_CHECK(!close_range(3, sock - 1, 0), "close_range: %s",
			  strerror(errno));
	E2E_CHECK(!close_range(sock + 1, ~0U, 0), "close_range: %s",
		  strerror(errno));
	for (i = 0; i < REUSE_FILES; i++) {
		E2E_CHECK(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0,
				      p.files[i]), "socketpair");
		E2E_CHECK(!pipe2(p.files[REUSE_FILES + i], O_NONBLOCK),
			  "pipe2");
	}
	e2e_sync(sock, "closed");

	for (i = 0; i < MSGS; i++) {
		e2e_pattern(pair_slot(&p, 0, i), MSG_LEN, mine + i);
		sge.addr = (uintptr_t)pair_slot(&p, 0, i);
		sge.length = MSG_LEN;
		sge.lkey = p.mr->lkey;
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = i;
		swr.sg_list = &sge;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		E2E_CHECK(!ibv_post_send(p.qp, &swr, &bad_swr), "post_send");
		e2e_poll_one(p.cq, &wc, "completion");
		do {
			E2E_CHECK(wc.status == IBV_WC_SUCCESS,
				  "completion status %d", wc.status);
			if (wc.opcode == IBV_WC_SEND) {
				sends++;
				continue;
			}
			E2E_CHECK(e2e_pattern_ok(pair_slot(&p, 1, wc.wr_id),
						 MSG_LEN, theirs + wc.wr_id),
				  "message %llu arrived corrupted",
				  (unsigned long long)wc.wr_id);
			recvs++;
		} while (e2e_poll_now(p.cq, &wc));
	}
	while (sends < MSGS || recvs < MSGS) {
		e2e_poll_one(p.cq, &wc, "completion");
		E2E_CHECK(wc.status == IBV_WC_SUCCESS, "completion status %d",
			  wc.status);
		if (wc.opcode == IBV_WC_SEND) {
			sends++;
			continue;
		}
		E2E_CHECK(e2e_pattern_ok(pair_slot(&p, 1, wc.wr_id), MSG_LEN,
					 theirs + wc.wr_id),
			  "message %llu arrived corrupted",
			  (unsigned long long)wc.wr_id);
		recvs++;
	}
	for (i = 0; i < 2 * REUSE_FILES; i++)
		E2E_CHECK(read(p.files[i][0], &c, 1) == -1 &&
			  read(p.files[i][1], &c, 1) == -1,
			  "the device wrote into the program's file %d/%d",
			  p.files[i][0], p.files[i][1]);
	e2e_sync(sock, "done");
	printf("%s %s: passed\n", args->mode,
	       args->server ? "server" : "client");
}

/* A close the sim cannot see: straight into the kernel. */
static long inline_close(int fd)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_close),
			 "D"((long)fd) : "rcx", "r11", "memory");
	return ret;
}

/* The number, given to a new file, is that file: /dev/null. */
static void expect_plain_file_at(int fd)
{
	struct stat st;
	int nfd;

	nfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	E2E_CHECK(nfd == fd, "/dev/null opened at %d, not %d", nfd, fd);
	E2E_CHECK(!fstat(nfd, &st) && S_ISCHR(st.st_mode) &&
		  st.st_rdev == makedev(1, 3),
		  "fd %d does not show /dev/null", fd);
	E2E_CHECK(write(nfd, "y", 1) == 1, "write to /dev/null reusing fd "
		  "%d: %s", fd, strerror(errno));
	E2E_CHECK(!close(nfd), "close");
}

static void mode_fd_reuse(struct loop *l)
{
	int fd;

	fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);
	E2E_CHECK(fd >= 0, "open uverbs0: %s", strerror(errno));
	E2E_CHECK(!syscall(SYS_close_range, fd, fd, 0), "SYS_close_range");
	expect_plain_file_at(fd);

	fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);
	E2E_CHECK(fd >= 0, "open uverbs0: %s", strerror(errno));
	E2E_CHECK(!inline_close(fd), "inline close");
	expect_plain_file_at(fd);
	loop_traffic(l, 6000);
}

static long inline_dup2(int oldfd, int newfd)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_dup2),
			 "D"((long)oldfd), "S"((long)newfd)
			 : "rcx", "r11", "memory");
	return ret;
}

#define MAX_RING_FDS	16

static void mode_ring_fds(struct loop *l)
{
	int fds[MAX_RING_FDS], mine[MAX_RING_FDS], null;
	unsigned int i, n, taken = 0;
	struct stat st;

	e2e_fd_table(&n, fds, MAX_RING_FDS);
	if (n > MAX_RING_FDS)
		n = MAX_RING_FDS;
	E2E_CHECK(n >= 2, "%u ring files in the fd table", n);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	E2E_CHECK(null >= 0, "open /dev/null: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		bool ok;

		if (i & 1) {
			inline_close(fds[i]);
			ok = inline_dup2(null, fds[i]) == fds[i];
		} else {
			/* the device's, as the sim's other descriptors */
			E2E_CHECK(close(fds[i]) == -1 && errno == EBADF,
				  "close(%d) of a ring file: %s", fds[i],
				  strerror(errno));
			ok = dup2(null, fds[i]) == fds[i];
			E2E_CHECK(!ok && errno == EBUSY, "dup2 onto ring "
				  "file %d: %s", fds[i], strerror(errno));
		}
		if (ok)
			mine[taken++] = fds[i];
	}
	printf("%u ring files, %u numbers taken by the program\n", n, taken);
	loop_traffic(l, 7000);
	loop_close(l);
	for (i = 0; i < taken; i++) {
		E2E_CHECK(!fstat(mine[i], &st) && S_ISCHR(st.st_mode) &&
			  st.st_rdev == makedev(1, 3),
			  "fd %d is no longer the program's /dev/null",
			  mine[i]);
		E2E_CHECK(write(mine[i], "y", 1) == 1, "write to fd %d: %s",
			  mine[i], strerror(errno));
		close(mine[i]);
	}
	close(null);
}

/* ---- mappings ---- */

/* A store no doorbell decodes into work: QP handle 0, no SEND/RECV. */
static void harmless_doorbell(void *uar)
{
	*(volatile uint32_t *)uar = 0;
}

static void mode_uar_map(struct loop *l)
{
	int fd = l->d.ctx->cmd_fd;
	void *p, *q, *r;

	errno = 0;
	p = mmap(NULL, 8192, PROT_WRITE, MAP_SHARED, fd, 0);
	E2E_CHECK(p == MAP_FAILED && errno == EINVAL,
		  "two-page UAR mapping: %p, errno %s", p,
		  e2e_errno_name(errno));
	p = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fd, 0);
	E2E_CHECK(p != MAP_FAILED, "UAR mmap: %s", strerror(errno));
	harmless_doorbell(p);

	errno = 0;
	q = mremap(p, 4096, 8192, MREMAP_MAYMOVE);
	E2E_CHECK(q == MAP_FAILED && errno == EFAULT,
		  "growing a UAR: %p, errno %s", q, e2e_errno_name(errno));
	r = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	E2E_CHECK(r != MAP_FAILED, "mmap");
	q = mremap(p, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, r);
	E2E_CHECK(q == r, "moving a UAR: %p, %s", q, strerror(errno));
	harmless_doorbell(q);
	E2E_CHECK(!munmap(q, 4096), "munmap");

	p = (void *)syscall(SYS_mmap, NULL, 4096, PROT_WRITE, MAP_SHARED, fd,
			    0);
	E2E_CHECK(p != MAP_FAILED, "SYS_mmap of the UAR: %s",
		  strerror(errno));
	harmless_doorbell(p);
	E2E_CHECK(!syscall(SYS_munmap, p, 4096), "SYS_munmap");
	loop_traffic(l, 6500);
}

static void mode_fork_uar(struct loop *l)
{
	struct rlimit no_core = { 0, 0 };
	int status;
	pid_t pid;
	void *p;

	p = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, l->d.ctx->cmd_fd, 0);
	E2E_CHECK(p != MAP_FAILED, "UAR mmap: %s", strerror(errno));
	harmless_doorbell(p);
	fflush(NULL);
	pid = fork();
	E2E_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		setrlimit(RLIMIT_CORE, &no_core);	/* an expected crash */
		harmless_doorbell(p);
		_exit(0);
	}
	E2E_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
#ifdef __SANITIZE_ADDRESS__
	/* AddressSanitizer reports the SEGV and exits 1 instead. */
	E2E_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		  "the child's store to the UAR: status 0x%x, want ASan's SEGV",
		  status);
#else
	E2E_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
		  "the child's store to the UAR: status 0x%x, want SIGSEGV",
		  status);
#endif
	harmless_doorbell(p);
	E2E_CHECK(!munmap(p, 4096), "munmap");
	loop_traffic(l, 6600);
}

typedef int (*hook_install_fn)(const char *object, int raw);

static void mode_mmap_hook(struct loop *l, bool raw)
{
	char path[PATH_MAX];
	hook_install_fn install;
	ssize_t n;
	void *h;
	int patched;

	n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	E2E_CHECK(n > 0, "readlink");
	path[n] = 0;
	strcpy(strrchr(path, '/') + 1, "libe2e_mmap_hook.so");
	/* Loaded after the preload, as UCX's libucm is. */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	E2E_CHECK(h, "dlopen %s: %s", path, dlerror());
	install = (hook_install_fn)dlsym(h, "e2e_mmap_hook_install");
	E2E_CHECK(install, "no e2e_mmap_hook_install");
	patched = install("-rdmav", raw);
	E2E_CHECK(patched > 0, "no mmap call of the provider patched");
	printf("patched %d mmap/munmap slots of the provider\n", patched);

	/* The provider maps its UAR through the hook now. */
	loop_open(l);
	loop_traffic(l, 7000);
	loop_close(l);
	loop_open(l);
	loop_traffic(l, 7100);
}

/* The exec'd image: SIGSEGV came blocked, doorbells work regardless. */
static void mode_exec_child(void)
{
	static struct loop l;
	sigset_t segv;

	E2E_CHECK(segv_blocked_now(), "SIGSEGV unblocked across exec");
	loop_open(&l);
	loop_traffic(&l, 9000);
	sigemptyset(&segv);
	sigaddset(&segv, SIGSEGV);
	E2E_CHECK(!sigprocmask(SIG_UNBLOCK, &segv, NULL), "sigprocmask");
	E2E_CHECK(!segv_blocked_now(), "SIGSEGV still blocked");
	loop_traffic(&l, 9100);
	loop_close(&l);
}

static void mode_exec_mask(void)
{
	char self[PATH_MAX];
	sigset_t segv;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	E2E_CHECK(n > 0, "readlink");
	self[n] = 0;
	sigemptyset(&segv);
	sigaddset(&segv, SIGSEGV);
	E2E_CHECK(!sigprocmask(SIG_BLOCK, &segv, NULL), "sigprocmask");
	execl(self, self, "--mode", "exec-child", (char *)NULL);
	E2E_CHECK(0, "execl %s: %s", self, strerror(errno));
}

int main(int argc, char **argv)
{
	/* Static: the objects a mode cannot destroy (EBADF) stay reachable. */
	static struct loop l;
	struct e2e_args args;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(args.mode, "--mode is required");
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!args.single) {
		mode_pair(&args);
		return 0;
	}
	if (!strcmp(args.mode, "exec-mask"))
		mode_exec_mask();
	if (!strcmp(args.mode, "exec-child")) {
		mode_exec_child();
		printf("exec-mask: passed\n");
		return 0;
	}
	if (!strncmp(args.mode, "mmap-hook", 9)) {
		mode_mmap_hook(&l, !strcmp(args.mode, "mmap-hook-raw"));
		loop_close(&l);
		printf("%s: passed\n", args.mode);
		return 0;
	}
	loop_open(&l);
	if (!strcmp(args.mode, "mask-thread"))
		mode_mask_thread(&l);
	else if (!strcmp(args.mode, "raw-mask"))
		mode_raw_mask(&l);
	else if (!strcmp(args.mode, "timer-thread"))
		mode_timer_thread(&l);
	else if (!strcmp(args.mode, "sigset"))
		mode_sigset(&l);
	else if (!strcmp(args.mode, "raw-action"))
		mode_raw_action(&l);
	else if (!strcmp(args.mode, "inline-action"))
		mode_inline_action(&l);
	else if (!strcmp(args.mode, "close-range") ||
		 !strcmp(args.mode, "closefrom") ||
		 !strcmp(args.mode, "raw-close-range"))
		mode_close_all(&l, args.mode);
	else if (!strcmp(args.mode, "fd-reuse"))
		mode_fd_reuse(&l);
	else if (!strcmp(args.mode, "ring-fds"))
		mode_ring_fds(&l);
	else if (!strcmp(args.mode, "uar-map"))
		mode_uar_map(&l);
	else if (!strcmp(args.mode, "fork-uar"))
		mode_fork_uar(&l);
	else
		E2E_CHECK(0, "unknown mode %s", args.mode);
	/* Everything the modes closed, the device still tears down. */
	if (strcmp(args.mode, "close-range") &&
	    strcmp(args.mode, "closefrom") &&
	    strcmp(args.mode, "raw-close-range") &&
	    strcmp(args.mode, "ring-fds"))
		loop_close(&l);
	printf("%s: passed\n", args.mode);
	return 0;
}
