// SPDX-License-Identifier: BSD-2-Clause
/*
 * The adapters of the process (sim_devs, each one's GID table and node
 * GUID from its configuration) and what the device layer offers
 * the kernel above it: the command channel the driver uses (sim_device,
 * the engine's unless a test puts a fake device in) and the upcalls the
 * driver installs for the device's events (no-ops until it does).
 */
#include <string.h>

#include "device.h"

struct sim_dev sim_devs[SIM_MAX_ADAPTERS];

const struct sim_device_ops *sim_device = &sim_engine_ops;

static void no_comp_event(struct sim_cq *cq, bool solicited)
{
}

static void no_async_event(struct sim_ucontext *uctx, uint64_t element,
			   enum ibv_event_type type, uint32_t *reported)
{
}

struct sim_device_upcalls sim_device_upcalls = {
	.comp_event = no_comp_event,
	.async_event = no_async_event,
};

static void dev_lock_make(struct sim_dev *dev)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&dev->lock, &a);
	pthread_mutexattr_destroy(&a);
}

/*
 * fork(): a device thread holds dev->lock through its rounds (and the
 * fabric's inq_lock and the adapter's shared segment lock only under it).
 * The child has the forking thread alone: a lock another held would stay
 * held for good, and the child's next device call (a close of the uverbs
 * file at its exit) would hang. The kernel's locks are never held in a
 * new process, so fork() waits for each adapter's, and the child makes
 * them anew (an error-checking lock knows its owner by a thread id the
 * child no longer has). In index order, as sim_mr_pin_give_up() takes
 * them one at a time; EDEADLK: a handler forks on a thread inside the
 * device, whose lock stays as it is. Registered at the first adapter's
 * lock, from the preload's constructor: before any other handler of the
 * sim, so these innermost locks are taken last.
 */
static unsigned int fork_locked;	/* bit i: sim_devs[i].lock taken */

static unsigned int fork_adapters(void)
{
	return sim_global.num_adapters < SIM_MAX_ADAPTERS ?
	       sim_global.num_adapters : SIM_MAX_ADAPTERS;
}

static void dev_fork_prepare(void)
{
	unsigned int i, n = fork_adapters();

	fork_locked = 0;
	for (i = 0; i < n; i++)
		if (!pthread_mutex_lock(&sim_devs[i].lock))
			fork_locked |= 1u << i;
}

static void dev_fork_parent(void)
{
	unsigned int i = fork_adapters();

	while (i-- > 0)
		if (fork_locked & (1u << i))
			pthread_mutex_unlock(&sim_devs[i].lock);
}

static void dev_fork_child(void)
{
	unsigned int i, n = fork_adapters();

	for (i = 0; i < n; i++)
		if (fork_locked & (1u << i))
			dev_lock_make(&sim_devs[i]);
}

static void dev_fork_register(void)
{
	pthread_atfork(dev_fork_prepare, dev_fork_parent, dev_fork_child);
}

/*
 * Error-checking: the doorbell trap takes dev->lock on the application's
 * thread, and a signal handler of the application that rings a doorbell
 * while that thread is inside the sim must get EDEADLK, not a deadlock.
 */
void sim_dev_lock_init(struct sim_dev *dev)
{
	static pthread_once_t fork_handlers = PTHREAD_ONCE_INIT;

	pthread_once(&fork_handlers, dev_fork_register);
	dev_lock_make(dev);
}

/*
 * The port's GID table as vmw_pvrdma shows it: the device runs in one RoCE
 * mode, and the kernel gives a RoCE v2 port only RoCE v2 GIDs (and a v1
 * port only v1 GIDs). Slot 0 holds the MAC-based GID, slot 1 the IPv4 one.
 */
void sim_dev_init_identity(struct sim_dev *dev)
{
	uint8_t type = dev->cfg.roce == 2 ? SIM_GID_TYPE_ROCE_V2 :
					    SIM_GID_TYPE_ROCE_V1;

	memset(dev->gid, 0, sizeof(dev->gid));
	memset(dev->gid_type, 0, sizeof(dev->gid_type));
	dev->gid_count = 0;

	sim_gid_from_mac(dev->cfg.mac, &dev->gid[dev->gid_count]);
	dev->gid_type[dev->gid_count++] = type;
	if (dev->cfg.ipv4) {
		sim_gid_from_ipv4(dev->cfg.ipv4, &dev->gid[dev->gid_count]);
		dev->gid_type[dev->gid_count++] = type;
	}
	dev->node_guid = sim_node_guid_from_mac(dev->cfg.mac);
}

void sim_dev_reidentify(struct sim_dev *dev, const uint8_t mac[6],
			uint32_t ipv4)
{
	pthread_mutex_lock(&dev->lock);
	engine_forget(dev);
	memcpy(dev->cfg.mac, mac, 6);
	dev->cfg.ipv4 = ipv4;
	sim_dev_init_identity(dev);
	pthread_mutex_unlock(&dev->lock);
}
