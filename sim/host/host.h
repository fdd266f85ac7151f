/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdma-sim host layer: the parts of the host the other files of the
 * host share (sim/host/README.md). The host is the top layer: the
 * launcher, the preload library's libc entry points, the UAR trap (the
 * "hypervisor"), the sysfs tree; nothing below includes this.
 */
#ifndef PVRDMA_SIM_HOST_H
#define PVRDMA_SIM_HOST_H

#include <ucontext.h>

#include "kernel.h"

/* ---- config.c: the launcher's environment -> sim_global, sim_devs ---- */
int sim_config_load(void);
/* In a fork()ed child, at its first use of a device file or the sysfs
 * tree: adapters with identities of its own (config.c). */
void sim_identity_check(void);

/* ---- doorbell.c: the UAR trap and its registry ---- */
int sim_doorbell_trap_install(void);
/* A read-only UAR page whose stores trap into engine_doorbell(uctx, ...)
 * (struct sim_kernel_host.uar_map). */
void *sim_uar_map(struct sim_ucontext *uctx, void *addr_hint);
/* Unmaps uctx's UAR page at uar; nothing if the page is no longer its
 * UAR (unmapped behind the sim's back and the address given again). */
void sim_uar_unmap(struct sim_ucontext *uctx, void *uar);
/* The context whose UAR page holds addr, or NULL. Async-signal-safe. */
struct sim_ucontext *sim_uar_lookup(const void *addr);
/* SIGBUS at addr: true if it was made a UAR (the access restarts). */
typedef bool (*sim_bus_fixup_fn)(void *addr);
void sim_signal_set_bus_fixup(sim_bus_fixup_fn fn);

/* ---- signals.c: the program's view of the signals the trap owns ---- */
bool sim_doorbell_trap_installed(void);
/* ---- trap_resume.c: leaving the trap without rt_sigreturn ---- */
void sim_trap_resume_init(void);
/* Resumes the context uc, the frame of a UAR trap; returns if it cannot
 * (the handler then returns through sigreturn). */
void sim_trap_resume(ucontext_t *uc);

/* sigaction(SIGSEGV, ...) of the application while the trap owns SIGSEGV:
 * records act as the action to chain to and returns the recorded one. */
int sim_doorbell_app_sigaction(const struct sigaction *act,
			       struct sigaction *old);

/*
 * SIGSEGV and SIGBUS, owned by the trap: never blocked in the kernel, the
 * application's actions and per-thread mask recorded instead. Bits of a
 * view: 1 << i for the i-th owned signal.
 */
#define SIM_OWNED_SIGNALS	2
bool sim_signal_owned(int sig);
/* The same for any owned signal. */
int sim_signal_app_action(int sig, const struct sigaction *act,
			  struct sigaction *old);
unsigned int sim_signal_bits(const sigset_t *set);
void sim_signal_add_bits(sigset_t *set, unsigned int bits);
void sim_signal_strip(sigset_t *set);
/* This thread's view: blocked owned signals; setting it delivers a sent
 * one it held back and now unblocks. */
unsigned int sim_signal_blocked(void);
void sim_signal_set_blocked(unsigned int bits);
unsigned int sim_signal_pending(void);
/* Takes back an owned signal whose action was changed unseen. */
void sim_signal_check(void);
/* For tests: runs fn(arg) holding the lock sim_signal_check() takes. */
void sim_signal_locked_call(void (*fn)(void *), void *arg);
/* Makes handler the kernel's action for the owned signals; the actions
 * found become the application's. 0 or -errno. */
int sim_signal_take(void (*handler)(int sig, siginfo_t *si, void *ctx));
/* A fault the trap does not take: the application's action, run as the
 * kernel would have run it. */
void sim_signal_chain(int sig, siginfo_t *si, void *ctx);
/* The safety net, from the first UAR on: only then do traps matter. */
void sim_signal_watch_start(void);

/* ---- sysfs.c ---- */
int sim_sysfs_write(void);
/* The PCI address of adapter dev's function ("0000:0b:00.1"). */
void sim_sysfs_pci_bdf(const struct sim_dev *dev, char bdf[16]);
/* The host interface of dev's port has MTU bytes now: its mtu attribute
 * in the tree says so (sim_kernel_host.iface_mtu_changed). */
void sim_sysfs_iface_mtu(const struct sim_dev *dev, int bytes);

#endif /* PVRDMA_SIM_HOST_H */
