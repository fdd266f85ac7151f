// SPDX-License-Identifier: BSD-2-Clause
/*
 * The GMPs a process owes the wire when it ends (fabric.h): Linux's CM
 * sends a DREQ or a REJ for each connection of a process that dies,
 * whatever killed it, because the kernel outlives the process and
 * destroys its ids as its rdma_cm file closes. Of the sim, only what the
 * process leaves behind outlives it: the watch, a small process started
 * with the first GMP owed. It shares the process's memory (CLONE_VM),
 * where the process keeps the owed datagrams built whole (headers, MAD,
 * ICRC), and sleeps on a pipe whose write end only the process holds
 * (close-on-exec, closed in fork()ed children). When the process is gone
 * (killed, crashed, exited, or replaced by exec) the pipe's last writer
 * is gone with it, and so are all its threads: the table they shared is
 * still and whole. The watch sends each datagram set from a socket of
 * its own at the adapter's address, once (nothing is left to hear the
 * answer, so nothing is resent), and exits.
 *
 * The watch runs on a stack of its own and with the TLS of the thread
 * that made it, so it calls nothing but the kernel (sys.h); it is not
 * instrumented by a sanitizer, whose runtime keeps per-thread state. It
 * leaves the process's session, blocks every signal and closes every fd
 * but its own, so that what is aimed at the process (a terminal's ^C, a
 * kill of its process group, a peer waiting for its sockets to close)
 * does not meet it; it is made by a short-lived clone that exits at once,
 * so that its parent is init, as a daemon's, and the process's wait()
 * never sees it.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "link.h"
#include "sys.h"

#ifndef SYS_close_range
#define SYS_close_range	436
#endif

#define WATCH_STACK	(64u << 10)
/* The part of the stack the clone that starts the watch uses. */
#define SPAWN_STACK	(16u << 10)
#define WATCH_NAME	"pvrdma-sim-cm"

#define WATCH_CODE	__attribute__((no_sanitize_address, noinline))

struct exit_gmp {
	uint16_t len;			/* 0: none owed */
	uint8_t index;			/* the adapter */
	uint32_t daddr;
	uint8_t b[ROCE_GSI_DATAGRAM_LEN];
};

/* What the watch keeps, set before it starts and not changed while it
 * lives (it reads it in the memory it shares with the process). */
struct watch {
	int rfd;			/* the pipe's read end */
	int sock[SIM_MAX_ADAPTERS];	/* -1: none */
	uint16_t sport[SIM_MAX_ADAPTERS];
	unsigned long fd_limit;		/* RLIMIT_NOFILE: the fds to close */
	long pid;			/* the spawning clone's result */
};

static pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	pid_t owner;			/* whose watch runs; 0: none */
	pid_t failed;			/* whose watch could not start */
	int wfd;			/* the pipe's write end */
	struct watch w;
	struct exit_gmp gmp[FAB_GSI_EXIT_SLOTS];
} ex;

/* ---- the watch: system calls only ---- */

static WATCH_CODE void watch_close(unsigned long lo, unsigned long hi,
				   unsigned long limit)
{
	unsigned long fd;

	if (!sim_sys(SYS_close_range, lo, hi, 0))
		return;
	for (fd = lo; fd <= hi && fd < limit; fd++)
		sim_sys(SYS_close, fd, 0, 0);
}

/* Closes every fd but the watch's own. */
static WATCH_CODE void watch_close_others(const struct watch *w)
{
	unsigned long lo = 0, next;
	unsigned int i;

	for (;;) {
		next = ~0ul;
		if ((unsigned long)w->rfd >= lo)
			next = (unsigned long)w->rfd;
		for (i = 0; i < SIM_MAX_ADAPTERS; i++)
			if (w->sock[i] >= 0 &&
			    (unsigned long)w->sock[i] >= lo &&
			    (unsigned long)w->sock[i] < next)
				next = (unsigned long)w->sock[i];
		if (next > lo)
			watch_close(lo, next == ~0ul ? ~0u : next - 1,
				    w->fd_limit);
		if (next == ~0ul)
			return;
		lo = next + 1;
	}
}

static WATCH_CODE int watch_main(void *arg)
{
	const struct watch *w = arg;
	unsigned long all = ~0ul;
	unsigned int i;
	long r;
	char c;

	sim_sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, 0,
		 sizeof(all), 0, 0);
	sim_sys(SYS_setsid, 0, 0, 0);
	sim_sys6(SYS_prctl, PR_SET_NAME, (long)WATCH_NAME, 0, 0, 0, 0);
	watch_close_others(w);
	do
		r = sim_sys(SYS_read, w->rfd, &c, 1);
	while (r > 0 || r == -EINTR);
	if (r < 0)	/* not the process's end: it may live */
		sim_sys(SYS_exit, 1, 0, 0);
	for (i = 0; i < FAB_GSI_EXIT_SLOTS; i++) {
		const struct exit_gmp *g = &ex.gmp[i];
		struct sockaddr_in to = { .sin_family = AF_INET,
					  .sin_port = htons(ROCE_UDP_PORT),
					  .sin_addr.s_addr = g->daddr };

		if (!g->len || g->index >= SIM_MAX_ADAPTERS ||
		    w->sock[g->index] < 0)
			continue;
		sim_sys6(SYS_sendto, w->sock[g->index], (long)g->b, g->len,
			 MSG_DONTWAIT, (long)&to, sizeof(to));
	}
	sim_sys(SYS_exit, 0, 0, 0);
	return 0;
}

/* The clone that starts the watch and exits, leaving it to init. */
static WATCH_CODE int watch_spawn(void *stack)
{
	ex.w.pid = clone(watch_main, stack, CLONE_VM | SIGCHLD, &ex.w);
	sim_sys(SYS_exit, 0, 0, 0);
	return 0;
}

/* ---- the process ---- */

static void watch_forget(struct watch *w, bool wfd)
{
	unsigned int i;

	if (w->rfd >= 0)
		sim_fd_close(w->rfd);
	for (i = 0; i < SIM_MAX_ADAPTERS; i++)
		if (w->sock[i] >= 0)
			sim_fd_close(w->sock[i]);
	if (wfd)
		sim_fd_close(ex.wfd);
}

/* fork(): the child's copy of the write end would keep the watch of its
 * parent waiting; the child owes nothing of its parent's. */
static void exit_fork_prepare(void)
{
	pthread_mutex_lock(&exit_lock);
}

static void exit_fork_parent(void)
{
	pthread_mutex_unlock(&exit_lock);
}

static void exit_fork_child(void)
{
	unsigned int i;

	if (ex.owner)
		sim_fd_close(ex.wfd);
	ex.owner = 0;
	ex.failed = 0;
	for (i = 0; i < FAB_GSI_EXIT_SLOTS; i++)
		ex.gmp[i].len = 0;
	pthread_mutex_unlock(&exit_lock);
}

/* The watch's sockets: one at the address of each port on the RoCE wire,
 * at any port. */
static void watch_sockets(struct watch *w)
{
	unsigned int i;

	for (i = 0; i < SIM_MAX_ADAPTERS; i++) {
		struct fab_port *port = fab_local_port(i);

		w->sock[i] = -1;
		if (port && port->roce_fd >= 0)
			w->sock[i] = roce_sport_socket(port->adapter.ipv4, 0,
						       &w->sport[i]);
	}
}

/* Starts this process's watch (exit_lock held); false if it cannot. */
static bool watch_start(void)
{
	struct watch w = { .rfd = -1 };
	struct rlimit rl;
	sigset_t all, old;
	int p[2] = { -1, -1 };
	uint8_t *stack;
	long pid;

	if (ex.owner == getpid())
		return true;
	if (ex.failed == getpid())
		return false;
	ex.failed = getpid();
	if (sim_sys(SYS_pipe2, p, O_CLOEXEC, 0))
		return false;
	w.rfd = sim_fd_own(p[0]);
	ex.wfd = sim_fd_own(p[1]);
	watch_sockets(&w);
	w.fd_limit = 1024;
	if (!sim_sys6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&rl, 0, 0))
		w.fd_limit = rl.rlim_cur < SIM_FD_BITMAP_FDS ? rl.rlim_cur :
			     SIM_FD_BITMAP_FDS;
	stack = sim_sys_mmap(NULL, WATCH_STACK, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		watch_forget(&w, true);
		return false;
	}
	ex.w = w;
	ex.w.pid = -1;
	/* No handler of the program's runs in either clone. */
	sigfillset(&all);
	sim_libc.pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(watch_spawn, stack + WATCH_STACK, CLONE_VM | CLONE_VFORK,
		    stack + WATCH_STACK - SPAWN_STACK);
	sim_libc.pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0)
		sim_sys6(SYS_wait4, pid, 0, __WALL, 0, 0, 0);
	/* The watch has its copies; the stack is its until it ends. */
	watch_forget(&w, ex.w.pid <= 0);
	if (ex.w.pid <= 0) {
		sim_sys(SYS_munmap, stack, WATCH_STACK, 0);
		return false;
	}
	ex.owner = getpid();
	return true;
}

int fabric_gsi_exit_fork_handlers(void)
{
	static bool registered;
	int ret;

	if (registered)
		return 0;
	ret = pthread_atfork(exit_fork_prepare, exit_fork_parent,
			     exit_fork_child);
	registered = !ret;
	return ret;
}

bool fabric_gsi_exit_set(unsigned int slot, unsigned int index,
			 uint32_t daddr, const uint8_t *mad, size_t len)
{
	struct fab_port *port = index < SIM_MAX_ADAPTERS ?
				fab_local_port(index) : NULL;
	struct exit_gmp *g;
	bool ok;

	if (slot >= FAB_GSI_EXIT_SLOTS || !port || port->roce_fd < 0 ||
	    len != 256)
		return false;
	pthread_mutex_lock(&exit_lock);
	ok = watch_start() && ex.w.sock[index] >= 0;
	g = &ex.gmp[slot];
	g->len = 0;
	if (ok) {
		g->index = (uint8_t)index;
		g->daddr = daddr;
		g->len = (uint16_t)roce_gsi_datagram(port->adapter.ipv4,
						     ex.w.sport[index], daddr,
						     0, mad, g->b);
	}
	pthread_mutex_unlock(&exit_lock);
	return ok;
}

void fabric_gsi_exit_clear(unsigned int slot)
{
	if (slot >= FAB_GSI_EXIT_SLOTS)
		return;
	pthread_mutex_lock(&exit_lock);
	ex.gmp[slot].len = 0;
	pthread_mutex_unlock(&exit_lock);
}
