/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Touching application memory in place, without a fault reaching the
 * application: a function run under a guard that reads or writes a page
 * that is gone or not accessible returns failure instead of the signal
 * (fault_guard.c). The host's SIGSEGV/SIGBUS handler catches the faults
 * of guarded code first (sim_fault_guard_catch()) and says so with
 * sim_fault_guard_enable(); until then, and in a program with no such
 * handler, the copies below fall back to process_vm_readv/writev.
 *
 * A guarded body takes no lock and allocates nothing: it may be left at
 * any instruction.
 */
#ifndef PVRDMA_SIM_COMMON_FAULT_GUARD_H
#define PVRDMA_SIM_COMMON_FAULT_GUARD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Runs fn(arg) under the guard of this thread: false when it faulted. */
bool sim_fault_guard_run(void (*fn)(void *arg), void *arg);

/*
 * For the process's SIGSEGV and SIGBUS handler, before anything else: a
 * fault the kernel raised (si_code > 0) in guarded code of this thread
 * leaves through the guard and does not return; anything else returns.
 */
void sim_fault_guard_catch(int sig, const siginfo_t *si);

/* A handler that calls sim_fault_guard_catch() is installed (or not). */
void sim_fault_guard_enable(bool on);
bool sim_fault_guard_enabled(void);

/*
 * Copies src into the application's dst pieces (in), or the
 * application's src into dst (out), in order, up to the shorter total:
 * the bytes copied, fewer where an application page faulted. The count
 * is exact as process_vm_writev's is: pieces end at the application's
 * page boundaries, so what precedes the bad page is all copied.
 */
size_t sim_app_copy_in(const struct iovec *dst, int ndst,
		       const struct iovec *src, int nsrc);
size_t sim_app_copy_out(const struct iovec *dst, int ndst,
			const struct iovec *src, int nsrc);

/*
 * Runs a 32-bit running value (a CRC, say) over the application's bytes
 * src[0..n) in order: *acc = fold(*acc, bytes, len) piece by piece. False
 * when a page faulted (*acc is then of no use).
 */
typedef uint32_t (*sim_fold32_fn)(uint32_t acc, const void *p, size_t n);
bool sim_app_fold32(uint32_t *acc, sim_fold32_fn fold,
		    const struct iovec *src, int n);
/* Many such values at once, each over its own bytes, under one guard:
 * how many of them, in order, were run to the end before a page
 * faulted (n: all). */
struct sim_fold32_run {
	uint32_t acc;
	const struct iovec *src;
	int n;
};
int sim_app_fold32_runs(sim_fold32_fn fold, struct sim_fold32_run *runs,
			int n);

#endif /* PVRDMA_SIM_COMMON_FAULT_GUARD_H */
