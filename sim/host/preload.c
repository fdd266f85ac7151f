// SPDX-License-Identifier: BSD-2-Clause
/*
 * The preload library's constructor: configuration, sysfs tree, doorbell
 * trap, the kernel model's host services and the libc gateway of every
 * layer; and the provider the launcher asked for. See preload.h.
 */
#include "preload.h"

#include "sys_overlay.h"

static void load_provider(void)
{
	const char *path = getenv(SIM_ENV_PROVIDER);

	if (!path || !*path)
		return;
	/* Registers with libibverbs before any device scan. */
	if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "pvrdma-sim: cannot load provider %s: %s\n",
			path, dlerror());
		_exit(2);
	}
}

/* The gateway of every layer (libc.h): libc's own file calls; the threads
 * of the sim are made and masked as the application's are, so the
 * signals the trap owns stay unblocked in them. */
static void sim_libc_fill(void)
{
	sim_libc.open = get_open();
	sim_libc.close = get_close();
	sim_libc.read = get_read();
	sim_libc.readv = get_readv();
	sim_libc.ioctl = get_ioctl();
	sim_libc.stat = get_stat();
	sim_libc.lstat = get_lstat();
	sim_libc.fstat = get_fstat();
	sim_libc.fcntl = get_fcntl();
	sim_libc.socket = get_socket();
	sim_libc.getifaddrs = get_getifaddrs();
	sim_libc.bind = get_bind();
	sim_libc.connect = get_connect();
	sim_libc.getsockname = get_getsockname();
	sim_libc.getpeername = get_getpeername();
	sim_libc.setsockopt = get_setsockopt();
	sim_libc.getsockopt = get_getsockopt();
	sim_libc.sendto = get_sendto();
	sim_libc.sendmsg = get_sendmsg();
	sim_libc.recvfrom = get_recvfrom();
	sim_libc.recvmsg = get_recvmsg();
	sim_libc.opendir = get_opendir();
	sim_libc.readdir = get_readdir();
	sim_libc.closedir = get_closedir();
	sim_libc.readlink = get_readlink();
	sim_libc.ppoll = get_ppoll();
	sim_libc.pthread_create = pthread_create;
	sim_libc.pthread_sigmask = pthread_sigmask;
	sim_libc.siglongjmp = get_siglongjmp();
}

/*
 * Host locks an application thread may hold while another forks: fork()
 * waits for each and the child makes them anew (nothing is taken under
 * them, so their handlers' order does not matter).
 */
#define HOST_FORK_LOCKS	2	/* host_files_lock, uar_maps_lock */
static pthread_mutex_t *host_fork_locks[HOST_FORK_LOCKS];
static unsigned int host_fork_nlocks;

void host_lock_fork_safe(pthread_mutex_t *lock)
{
	if (host_fork_nlocks < HOST_FORK_LOCKS)
		host_fork_locks[host_fork_nlocks++] = lock;
}

static void host_locks_fork_prepare(void)
{
	unsigned int i;

	for (i = 0; i < host_fork_nlocks; i++)
		pthread_mutex_lock(host_fork_locks[i]);
}

static void host_locks_fork_parent(void)
{
	unsigned int i = host_fork_nlocks;

	while (i--)
		pthread_mutex_unlock(host_fork_locks[i]);
}

static void host_locks_fork_child(void)
{
	unsigned int i;

	for (i = 0; i < host_fork_nlocks; i++)
		pthread_mutex_init(host_fork_locks[i], NULL);
}

static bool is_uar(const void *addr)
{
	return sim_uar_lookup(addr) != NULL;
}

__attribute__((constructor)) static void sim_init(void)
{
	int ret;

	sim_libc_fill();
	host_files_fork_init();
	uar_maps_fork_init();
	/* Here, where no sim lock is held: glibc registers fork handlers
	 * under the lock it runs them with. */
	pthread_atfork(host_locks_fork_prepare, host_locks_fork_parent,
		       host_locks_fork_child);
	sim_kernel_init(&(struct sim_kernel_host){
		.uar_map = sim_uar_map, .uar_unmap = sim_uar_unmap,
		.is_uar = is_uar, .ucma_file_of_fd = ucma_file_of_fd,
		.iface_mtu_changed = sim_sysfs_iface_mtu });
	sim_signal_set_bus_fixup(uar_bus_fixup);
	if (sim_config_load())
		_exit(2);
	ret = sim_sysfs_write();
	if (ret)
		_exit(2);
	sys_ov_tree_written();
	ret = sim_doorbell_trap_install();
	if (ret) {
		fprintf(stderr, "pvrdma-sim: cannot install doorbell trap: %s\n",
			strerror(-ret));
		_exit(2);
	}
	load_provider();
	if (sim_global.stats_at_exit)
		atexit(sim_stats_dump);
}
