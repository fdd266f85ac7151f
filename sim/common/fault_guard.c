// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fault guard (fault_guard.h): the device touching application memory
 * in place, where a copy through process_vm_readv/writev costs a page
 * walk and a pin of each page, and for a packet on the RoCE wire a second
 * copy besides the one its socket makes.
 *
 * A guarded function runs after a sigsetjmp(env, 0) whose buffer this
 * thread's guard pointer names; the SIGSEGV/SIGBUS handler of the host
 * (host/doorbell.c) asks sim_fault_guard_catch() first, which leaves a
 * fault of guarded code by libc's siglongjmp to it (through the gateway:
 * the host answers the application's). Nothing else is restored:
 * the handler runs with SA_NODEFER and an empty sa_mask, so the kernel
 * blocked nothing for it, and the frame of the abandoned handler holds
 * nothing the guarded code's caller needs back (the thread's FPU state is
 * the caller-saved part the ABI lets any call change). Guards nest: a
 * guarded body inside the doorbell trap that interrupted another (an
 * application's signal handler ringing a doorbell) keeps the outer one.
 * On the application's alternate stack, the nested fault's frame goes
 * below the trap's, and the jump leaves it as a return would.
 */
#include <setjmp.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "fault_guard.h"
#include "libc.h"
#include "sys.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUARD_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GUARD_ASAN 1
#endif

#ifdef GUARD_ASAN
/* The frames left by the jump unpoisoned, as its longjmp interceptor
 * does (the gateway's jump is libc's own). */
void __asan_handle_no_return(void);
#endif

/* Bytes of the application read a system call at a time when no handler
 * catches for the guard: small, the trap may run on a small stack. */
#define FOLD_BOUNCE	512

static __thread sigjmp_buf *guard_env
	__attribute__((tls_model("initial-exec")));
static atomic_bool guard_enabled;

void sim_fault_guard_enable(bool on)
{
	atomic_store(&guard_enabled, on);
}

bool sim_fault_guard_enabled(void)
{
	return atomic_load_explicit(&guard_enabled, memory_order_relaxed);
}

/*
 * The kernel blocks nothing for the handler (SA_NODEFER), so nothing is
 * left blocked by leaving it; were SIGSEGV or SIGBUS blocked all the same
 * (a handler installed behind the host's back), the next fault of the
 * thread would kill the process however handled: they are unblocked.
 */
static void guard_mask_check(void)
{
	unsigned long cur = 0;
	unsigned long faults = 1ul << (SIGSEGV - 1) | 1ul << (SIGBUS - 1);

	if (!sim_sys6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&cur,
		      SIM_KSIGSET_SIZE, 0, 0) && (cur & faults))
		sim_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&faults, 0,
			 SIM_KSIGSET_SIZE, 0, 0);
}

bool sim_fault_guard_run(void (*fn)(void *arg), void *arg)
{
	sigjmp_buf env;
	sigjmp_buf *outer = guard_env;	/* not changed after sigsetjmp */

	if (sigsetjmp(env, 0)) {
		guard_env = outer;
		guard_mask_check();
		return false;
	}
	guard_env = &env;
	atomic_signal_fence(memory_order_seq_cst);
	fn(arg);
	atomic_signal_fence(memory_order_seq_cst);
	guard_env = outer;
	return true;
}

void sim_fault_guard_catch(int sig, const siginfo_t *si)
{
	sigjmp_buf *env = guard_env;

	if (!env || si->si_code <= 0 || (sig != SIGSEGV && sig != SIGBUS))
		return;
#ifdef GUARD_ASAN
	__asan_handle_no_return();
#endif
	sim_libc.siglongjmp(*env, 1);
	__builtin_unreachable();
}

/* A copy between our pieces and the application's. */
struct copy_job {
	const struct iovec *dst, *src;
	int ndst, nsrc;
	bool app_dst;			/* the application's side is dst */
	volatile size_t done;		/* read after a fault */
};

static size_t to_page_end(const void *p)
{
	return SIM_PAGE_SIZE - ((uintptr_t)p & (SIM_PAGE_SIZE - 1));
}

static void copy_body(void *arg)
{
	struct copy_job *j = arg;
	size_t doff = 0, soff = 0, n, room;
	int di = 0, si = 0;

	while (di < j->ndst && si < j->nsrc) {
		uint8_t *d = (uint8_t *)j->dst[di].iov_base + doff;
		const uint8_t *s = (const uint8_t *)j->src[si].iov_base + soff;
		size_t dl = j->dst[di].iov_len - doff;
		size_t sl = j->src[si].iov_len - soff;

		if (!dl) {
			di++;
			doff = 0;
			continue;
		}
		if (!sl) {
			si++;
			soff = 0;
			continue;
		}
		n = dl < sl ? dl : sl;
		room = to_page_end(j->app_dst ? (const void *)d : s);
		if (n > room)
			n = room;
		memcpy(d, s, n);
		j->done += n;
		doff += n;
		soff += n;
	}
}

static size_t vm_copy(const struct iovec *dst, int ndst,
		      const struct iovec *src, int nsrc, bool app_dst)
{
	ssize_t got;

	if (ndst <= 0 || nsrc <= 0)
		return 0;
	do {
		got = app_dst ?
		      process_vm_writev(sim_self_pid(), src, nsrc, dst, ndst,
					0) :
		      process_vm_readv(sim_self_pid(), dst, ndst, src, nsrc,
				       0);
	} while (got < 0 && errno == EINTR);
	return got > 0 ? (size_t)got : 0;
}

static size_t guarded_copy(const struct iovec *dst, int ndst,
			   const struct iovec *src, int nsrc, bool app_dst)
{
	struct copy_job j = { .dst = dst, .ndst = ndst, .src = src,
			      .nsrc = nsrc, .app_dst = app_dst };

	if (!sim_fault_guard_enabled())
		return vm_copy(dst, ndst, src, nsrc, app_dst);
	sim_fault_guard_run(copy_body, &j);
	return j.done;
}

size_t sim_app_copy_in(const struct iovec *dst, int ndst,
		       const struct iovec *src, int nsrc)
{
	return guarded_copy(dst, ndst, src, nsrc, true);
}

size_t sim_app_copy_out(const struct iovec *dst, int ndst,
			const struct iovec *src, int nsrc)
{
	return guarded_copy(dst, ndst, src, nsrc, false);
}

struct fold_job {
	sim_fold32_fn fold;
	struct sim_fold32_run *runs;
	int n;
	volatile int done;	/* read after a fault left the body */
};

static void fold_run(sim_fold32_fn fold, struct sim_fold32_run *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		r->acc = fold(r->acc, r->src[i].iov_base, r->src[i].iov_len);
}

static void fold_body(void *arg)
{
	struct fold_job *j = arg;

	for (; j->done < j->n; j->done++) {
		fold_run(j->fold, &j->runs[j->done]);
		/* the run's value is in memory before it counts as done */
		__asm__ volatile("" ::: "memory");
	}
}

/* With no handler to catch for the guard: the bytes a bounce at a time. */
static bool fold_bounced(sim_fold32_fn fold, struct sim_fold32_run *r)
{
	uint8_t bounce[FOLD_BOUNCE];
	struct iovec to = { .iov_base = bounce };
	struct iovec from;
	size_t off, n;
	int i;

	for (i = 0; i < r->n; i++) {
		for (off = 0; off < r->src[i].iov_len; off += n) {
			n = r->src[i].iov_len - off;
			if (n > sizeof(bounce))
				n = sizeof(bounce);
			from.iov_base = (uint8_t *)r->src[i].iov_base + off;
			from.iov_len = to.iov_len = n;
			if (vm_copy(&to, 1, &from, 1, false) != n)
				return false;
			r->acc = fold(r->acc, bounce, n);
		}
	}
	return true;
}

int sim_app_fold32_runs(sim_fold32_fn fold, struct sim_fold32_run *runs,
			int n)
{
	struct fold_job j = { .fold = fold, .runs = runs, .n = n };

	if (sim_fault_guard_enabled()) {
		sim_fault_guard_run(fold_body, &j);
		return j.done;
	}
	while (j.done < n && fold_bounced(fold, &runs[j.done]))
		j.done++;
	return j.done;
}

bool sim_app_fold32(uint32_t *acc, sim_fold32_fn fold,
		    const struct iovec *src, int n)
{
	struct sim_fold32_run r = { .acc = *acc, .src = src, .n = n };
	bool ok = sim_app_fold32_runs(fold, &r, 1) == 1;

	*acc = r.acc;
	return ok;
}
