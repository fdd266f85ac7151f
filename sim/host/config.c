// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sim's configuration: the launcher's PVRDMA_SIM_* environment turned
 * into sim_global and the adapters (sim_devs), each with its MAC; the rest
 * of its identity follows from the MAC (device/dev.c, common/identity.c).
 *
 * Every value has a default so the library also works when preloaded by
 * hand. Identities are made per process: a program that forks or execs
 * children under one launcher gives every process adapters of its own, as
 * every VM on a host has its own PVRDMA NIC.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "libc.h"
#include "options.h"
#include "sys.h"
#include "host.h"

/* How the adapters' identities were made (sim_config_load), for a forked
 * child to make its own the same way (sim_identity_check). */
static bool identity_mac_given, identity_ipv4_auto;
static _Atomic pid_t identity_pid, identity_maker;
static bool identity_fork_handler;
/* This thread makes them: the sim's own opens of the new tree pass. */
static _Thread_local bool identity_making;

/* A child forked while a thread made its parent's identity has no maker:
 * that thread is not in it (and its pid may come back in a descendant). */
static void identity_fork_child(void)
{
	atomic_store(&identity_maker, 0);
}

/* The next MAC as a 48-bit number: --mac names the first adapter's. */
static void mac_add(const uint8_t in[6], unsigned int n, uint8_t out[6])
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 6; i++)
		v = v << 8 | in[i];
	v = (v + n) & 0xffffffffffffull;
	for (i = 5; i >= 0; i--) {
		out[i] = v & 0xff;
		v >>= 8;
	}
}

/* The loopback address comes from the MAC's last three bytes, which
 * adapters 4 and on share with 0 to 3: they get one only from --ipv4. */
static uint32_t auto_ipv4(unsigned int index, const uint8_t mac[6])
{
	return index < 4 ? sim_ipv4_from_mac(mac) : 0;
}

static int bad_env(const char *name, const char *value, const char *why)
{
	fprintf(stderr, "pvrdma-sim: %s=\"%s\": %s\n", name, value, why);
	return -EINVAL;
}

/* Creates dir (and missing parents) 0700; an existing one must be ours. */
static int make_private_dir(const char *dir)
{
	char path[sizeof(sim_global.rundir)];
	struct stat st;
	char *p;

	if (strlen(dir) >= sizeof(path))
		return -ENAMETOOLONG;
	strcpy(path, dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	return 0;
}

static int default_rundir(char *buf, size_t len)
{
	const char *env = getenv(SIM_ENV_RUNDIR);
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/pvrdma-sim", xdg);
	else
		n = snprintf(buf, len, "/tmp/pvrdma-sim-%u",
			     (unsigned int)getuid());
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * The active MTU of a port on a host's interface. Without --mtu it is the
 * one the interface carries, as a RoCE NIC's (and rxe's) follows its
 * netdev; sim_dev_port_mtu() reads it again when a program asks. An
 * explicit --mtu stays, except on the RoCE wire where no packet of it
 * could leave (don't fragment): there it is cut to what fits, said once.
 */
static void iface_mtu_configure(struct sim_config *c, bool given,
				uint8_t wire)
{
	int bytes = sim_iface_mtu(c->netdev);
	enum ibv_mtu fits;

	if (!bytes)
		return;
	fits = sim_ib_mtu_of_iface(bytes);
	if (!given) {
		c->mtu = fits;
		c->mtu_follows_iface = true;
		return;
	}
	if (wire != SIM_WIRE_ROCE || c->mtu <= fits)
		return;
	fprintf(stderr, "pvrdma-sim: %s: --mtu %u does not fit %s (MTU %d) "
		"with the RoCE headers: active MTU %u\n", c->ibdev,
		128u << c->mtu, c->netdev, bytes, 128u << fits);
	c->mtu = fits;
}

/* What the environment sets for every adapter alike. */
struct adapter_opts {
	unsigned int hw, roce, max_ud;
	unsigned int max_qp_wr, max_srq_wr, max_cqe;	/* 0: the default */
	enum ibv_mtu mtu;
	uint8_t mac[6];		/* set when mac_given */
	bool mtu_given, mac_given, ipv4_auto, namespaces;
	uint32_t ipv4;
};

static int load_adapter_opts(struct sim_global *g, struct adapter_opts *o)
{
	const char *v, *why;
	int ret;

	memset(o, 0, sizeof(*o));
	o->hw = SIM_HW_VERSION_DEFAULT;
	o->mtu = SIM_MTU_DEFAULT;
	o->ipv4_auto = true;
	v = getenv(SIM_ENV_ADAPTERS);
	if (v && sim_opt_uint(v, 1, SIM_MAX_ADAPTERS, &g->num_adapters))
		return bad_env(SIM_ENV_ADAPTERS, v, "expected 1..10");
	v = getenv(SIM_ENV_HW_VERSION);
	if (v && sim_opt_hw_version(v, &o->hw))
		return bad_env(SIM_ENV_HW_VERSION, v, "expected 13, 14 or 18");
	o->roce = sim_opt_default_roce(o->hw);
	v = getenv(SIM_ENV_ROCE);
	if (v && sim_opt_roce(v, &o->roce))
		return bad_env(SIM_ENV_ROCE, v, "expected 1 or 2");
	o->namespaces = sim_opt_default_namespaces(o->hw);
	v = getenv(SIM_ENV_NAMESPACES);
	if (v && sim_opt_bool(v, &o->namespaces))
		return bad_env(SIM_ENV_NAMESPACES, v, "expected on or off");
	why = sim_opt_conflict(o->hw, o->roce, o->namespaces);
	if (why) {
		fprintf(stderr, "pvrdma-sim: %s\n", why);
		return -EINVAL;
	}
	o->max_ud = SIM_MAX_UD_QP_DEFAULT;
	v = getenv(SIM_ENV_MAX_UD_QPS);
	if (v && sim_opt_uint(v, 0, SIM_MAX_QP, &o->max_ud))
		return bad_env(SIM_ENV_MAX_UD_QPS, v, "expected 0..32768");
	v = getenv(SIM_ENV_MAX_QP_WR);
	if (v && sim_opt_uint(v, 1, SIM_QUEUE_LIMIT_MAX, &o->max_qp_wr))
		return bad_env(SIM_ENV_MAX_QP_WR, v, "expected 1..262144");
	v = getenv(SIM_ENV_MAX_SRQ_WR);
	if (v && sim_opt_uint(v, 1, SIM_QUEUE_LIMIT_MAX, &o->max_srq_wr))
		return bad_env(SIM_ENV_MAX_SRQ_WR, v, "expected 1..262144");
	v = getenv(SIM_ENV_MAX_CQE);
	if (v && sim_opt_uint(v, 1, SIM_QUEUE_LIMIT_MAX, &o->max_cqe))
		return bad_env(SIM_ENV_MAX_CQE, v, "expected 1..262144");
	v = getenv(SIM_ENV_MTU);
	if (v && sim_opt_mtu(v, &o->mtu))
		return bad_env(SIM_ENV_MTU, v,
			       "expected 256, 512, 1024, 2048 or 4096");
	o->mtu_given = v != NULL;
	v = getenv(SIM_ENV_MAC);
	if (v) {
		if (sim_opt_mac(v, o->mac))
			return bad_env(SIM_ENV_MAC, v,
				       "expected a unicast XX:XX:XX:XX:XX:XX");
		o->mac_given = true;
	}
	v = getenv(SIM_ENV_IPV4);
	if (v && sim_opt_ipv4(v, &o->ipv4, &o->ipv4_auto))
		return bad_env(SIM_ENV_IPV4, v,
			       "expected auto, off or a unicast address");
	v = getenv(SIM_ENV_NETDEV);
	if (v && *v) {
		ret = sim_iface_ipv4(v, &o->ipv4, NULL);
		if (ret)
			return bad_env(SIM_ENV_NETDEV, v, strerror(ret));
		o->ipv4_auto = false;
	}
	return 0;
}

static int load_global_opts(struct sim_global *g)
{
	const char *v;
	int ret;

	g->tcp_port = SIM_TCP_PORT_DEFAULT;
	v = getenv(SIM_ENV_TCP_PORT);
	if (v) {
		unsigned int port;

		if (sim_opt_tcp_port(v, &port))
			return bad_env(SIM_ENV_TCP_PORT, v, "expected 1..65535");
		g->tcp_port = (uint16_t)port;
	}

	ret = default_rundir(g->rundir, sizeof(g->rundir));
	if (ret) {
		fprintf(stderr, "pvrdma-sim: run directory name too long\n");
		return ret;
	}
	ret = make_private_dir(g->rundir);
	if (ret) {
		fprintf(stderr, "pvrdma-sim: run directory %s: %s\n",
			g->rundir, strerror(-ret));
		return ret;
	}

	v = getenv(SIM_ENV_SINGLE_COPY);
	if (v) {
		bool on;

		if (sim_opt_bool(v, &on))
			return bad_env(SIM_ENV_SINGLE_COPY, v,
				       "expected on or off");
		g->single_copy_off = !on;
	}
	v = getenv(SIM_ENV_WIRE);
	if (v) {
		enum sim_wire w;

		if (sim_opt_wire(v, &w))
			return bad_env(SIM_ENV_WIRE, v, "expected roce or sim");
		g->wire = (uint8_t)w;
	}
	v = getenv(SIM_ENV_ASYNC_MODE);
	if (v && sim_opt_bool(v, &g->async_mode))
		return bad_env(SIM_ENV_ASYNC_MODE, v, "expected on or off");
	v = getenv(SIM_ENV_STATS);
	if (v && sim_opt_bool(v, &g->stats_at_exit))
		return bad_env(SIM_ENV_STATS, v, "expected on or off");
	v = getenv(SIM_ENV_STATS_FILE);
	if (v && *v) {
		if (strlen(v) >= sizeof(g->stats_file))
			return bad_env(SIM_ENV_STATS_FILE, v, "name too long");
		strcpy(g->stats_file, v);
		g->stats_at_exit = true;
	}

	return 0;
}

/* Each adapter's configuration: its name, MAC, address and netdev. */
static void adapters_configure(struct sim_global *g,
			       const struct adapter_opts *o)
{
	unsigned int i;

	for (i = 0; i < g->num_adapters; i++) {
		struct sim_config *c = &g->adapter[i];

		snprintf(c->ibdev, sizeof(c->ibdev), "vmw_pvrdma%u", i);
		c->hw_version = o->hw;
		c->roce = o->roce;
		c->namespaces = o->namespaces;
		c->max_ud_qps = o->max_ud;
		c->max_qp_wr = o->max_qp_wr;
		c->max_srq_wr = o->max_srq_wr;
		c->max_cqe = o->max_cqe;
		c->mtu = o->mtu;
		if (o->mac_given)
			mac_add(o->mac, i, c->mac);
		else
			sim_derive_mac(getpid(), i, c->mac);
		if (o->ipv4_auto)
			c->ipv4 = auto_ipv4(i, c->mac);
		else if (o->ipv4 && (ntohl(o->ipv4) & 0xffffff) + i < 0xffffff)
			c->ipv4 = htonl(ntohl(o->ipv4) + i);
		/* An address outside 127/8 belongs to the host's interface
		 * that has it, the port's netdev then (none: the adapter
		 * cannot listen there, and keeps a simulated netdev). */
		c->netdev[0] = 0;
		if (c->ipv4 && ntohl(c->ipv4) >> 24 != 127 &&
		    sim_iface_ipv4(NULL, &c->ipv4, c->netdev))
			c->netdev[0] = 0;
		c->mtu_follows_iface = false;
		if (c->netdev[0])
			iface_mtu_configure(c, o->mtu_given, g->wire);
	}
}

int sim_config_load(void)
{
	struct sim_global *g = &sim_global;
	struct adapter_opts o;
	unsigned int i;
	int ret;

	memset(g, 0, sizeof(*g));
	g->num_adapters = 1;
	ret = load_adapter_opts(g, &o);
	if (ret)
		return ret;
	ret = load_global_opts(g);
	if (ret)
		return ret;
	adapters_configure(g, &o);

	for (i = 0; i < SIM_MAX_ADAPTERS; i++) {
		struct sim_dev *dev = &sim_devs[i];

		memset(dev, 0, sizeof(*dev));
		dev->index = i;
		sim_dev_lock_init(dev);
		if (i >= g->num_adapters)
			continue;
		dev->cfg = g->adapter[i];
		atomic_store(&dev->active_mtu, dev->cfg.mtu);
		if (dev->cfg.mtu_follows_iface)
			atomic_store(&dev->iface_mtu,
				     sim_iface_mtu(dev->cfg.netdev));
		sim_dev_init_identity(dev);
	}
	identity_mac_given = o.mac_given;
	identity_ipv4_auto = o.ipv4_auto;
	atomic_store(&identity_pid, getpid());
	if (!identity_fork_handler) {
		identity_fork_handler = true;
		pthread_atfork(NULL, NULL, identity_fork_child);
	}
	return 0;
}

/* A forked child's adapters: MACs (and the addresses made from them) of
 * its own pid, as an exec'd one makes them, unless --mac or --ipv4 named
 * them; a device that forgot its parent's links; a sysfs tree of its own. */
static void fork_identity(void)
{
	struct sim_global *g = &sim_global;
	unsigned int i;

	for (i = 0; i < g->num_adapters; i++) {
		struct sim_config *c = &g->adapter[i];

		if (!identity_mac_given)
			sim_derive_mac(getpid(), i, c->mac);
		if (identity_ipv4_auto)
			c->ipv4 = auto_ipv4(i, c->mac);
		sim_dev_reidentify(&sim_devs[i], c->mac, c->ipv4);
	}
	if (sim_sysfs_write())
		fprintf(stderr, "pvrdma-sim: process %d: no sysfs tree of its "
			"own: it sees its parent's adapters\n", (int)getpid());
}

void sim_identity_check(void)
{
	pid_t self, maker, made;

	made = atomic_load_explicit(&identity_pid, memory_order_acquire);
	/* Not configured yet (an open before the preload's constructor) or
	 * this process's own. */
	if (identity_making || !made || made == (self = getpid()))
		return;
	/* One thread of the child makes it; the others wait for it. A maker
	 * of another pid is an ancestor's, caught by the fork mid-way. */
	maker = atomic_load(&identity_maker);
	if (maker != self &&
	    atomic_compare_exchange_strong(&identity_maker, &maker, self)) {
		identity_making = true;
		fork_identity();
		identity_making = false;
		atomic_store_explicit(&identity_pid, self,
				      memory_order_release);
		return;
	}
	while (atomic_load_explicit(&identity_pid, memory_order_acquire) !=
	       self)
		sched_yield();
}
