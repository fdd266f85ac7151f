// SPDX-License-Identifier: BSD-2-Clause
/*
 * The adapters of the process (sim_devs, each one's GID table and node
 * GUID from its configuration) and what the device layer offers
 * the kernel above it: the command channel the driver uses (sim_device,
 * the engine's unless a test puts a fake device in) and the upcalls the
 * driver installs for the device's events (no-ops until it does).
 */
#include <stdatomic.h>
#include <string.h>

#include "device.h"
#include "options.h"

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

enum ibv_mtu sim_dev_port_mtu(struct sim_dev *dev)
{
	int bytes;

	if (!dev->cfg.mtu_follows_iface)
		return dev->cfg.mtu;
	/* An interface gone (or renamed) keeps the last MTU it had. */
	bytes = sim_iface_mtu(dev->cfg.netdev);
	if (bytes) {
		atomic_store_explicit(&dev->active_mtu,
				      sim_ib_mtu_of_iface(bytes),
				      memory_order_relaxed);
		atomic_store_explicit(&dev->iface_mtu, bytes,
				      memory_order_relaxed);
	}
	return sim_dev_active_mtu(dev);
}

enum ibv_mtu sim_dev_active_mtu(const struct sim_dev *dev)
{
	return (enum ibv_mtu)atomic_load_explicit(&dev->active_mtu,
						  memory_order_relaxed);
}

enum ibv_mtu sim_dev_wire_mtu(const struct sim_dev *dev)
{
	int bytes;

	if (sim_global.wire != SIM_WIRE_ROCE || !dev->cfg.netdev[0])
		return IBV_MTU_4096;
	bytes = sim_iface_mtu(dev->cfg.netdev);
	return bytes ? sim_ib_mtu_of_iface(bytes) : IBV_MTU_4096;
}
