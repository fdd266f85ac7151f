// SPDX-License-Identifier: BSD-2-Clause
/*
 * SIOCETHTOOL on a simulated netdev (pvrdma<N>, netdev.c): the answers of
 * the vmxnet3 driver whose netdev a PVRDMA function shares on a VM, as
 * Linux 6.1's ethtool core passes them on (net/ethtool/ioctl.c). The
 * bus address is the function the sysfs view pairs the netdev with
 * (sysfs.c). Driver info, link state and link settings are modelled;
 * any other command gets EOPNOTSUPP, as for an operation a driver lacks.
 * ifaddrs.c calls this only after the kernel did not know the name.
 */
#include "preload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "netdev.h"
#include "uaccess.h"

/* vmxnet3_int.h of Linux 6.1. */
#define VMXNET3_DRIVER_NAME	"vmxnet3"
#define VMXNET3_DRIVER_VERSION	"1.7.0.0-k"
#define VMXNET3_MAX_QUEUES	8

/* The driver's statistics and register dump (vmxnet3_ethtool.c): per
 * Tx queue 11 device and 9 driver counters, per Rx queue 11 and 4, one
 * global; 9 BAR1 registers, a count and one per interrupt, and a count
 * and 17 (Tx) or 23 (Rx) registers a queue. */
#define VMXNET3_STATS(q)	((11 + 9) * (q) + (11 + 4) * (q) + 1)
#define VMXNET3_REGS_LEN(q)	((9 + 1 + ((q) + 1) + 1 + 17 * (q) + \
				  1 + 23 * (q)) * 4)

/* As vmxnet3 sizes its queues: one a vCPU, at most 8, a power of two. */
static unsigned int vmxnet3_queues(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int q = 1;

	while (q * 2 <= VMXNET3_MAX_QUEUES && (long)q * 2 <= cpus)
		q *= 2;
	return q;
}

static int put(uint64_t user, const void *v, size_t len)
{
	return sim_copy_to_user(user, v, len) ? -EFAULT : 0;
}

static int get_drvinfo(const struct sim_dev *dev, uint64_t user)
{
	struct ethtool_drvinfo info;
	unsigned int q = vmxnet3_queues();

	memset(&info, 0, sizeof(info));
	info.cmd = ETHTOOL_GDRVINFO;
	snprintf(info.driver, sizeof(info.driver), VMXNET3_DRIVER_NAME);
	snprintf(info.version, sizeof(info.version), VMXNET3_DRIVER_VERSION);
	sim_sysfs_pci_bdf(dev, info.bus_info);
	info.n_stats = VMXNET3_STATS(q);
	info.regdump_len = VMXNET3_REGS_LEN(q);
	return put(user, &info, sizeof(info));
}

/* vmxnet3's link: 10G and 1G full duplex over twisted pair supported,
 * TP advertised, no autonegotiation; the speed the port reports
 * (sysfs.c's net/<ifname>/speed). */
#define NETDEV_SPEED	40000

static int get_legacy_settings(uint64_t user)
{
	struct ethtool_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.cmd = ETHTOOL_GSET;
	cmd.supported = SUPPORTED_10000baseT_Full | SUPPORTED_1000baseT_Full |
			SUPPORTED_TP;
	cmd.advertising = ADVERTISED_TP;
	ethtool_cmd_speed_set(&cmd, NETDEV_SPEED);
	cmd.duplex = DUPLEX_FULL;
	cmd.port = PORT_TP;
	cmd.transceiver = XCVR_INTERNAL;
	cmd.autoneg = AUTONEG_DISABLE;
	return put(user, &cmd, sizeof(cmd));
}

#define MASK_NU32	((__ETHTOOL_LINK_MODE_MASK_NBITS + 31) / 32)

static void set_mode(uint32_t *mask, unsigned int bit)
{
	mask[bit / 32] |= 1u << (bit % 32);
}

/* ETHTOOL_GLINKSETTINGS: a caller with the wrong mask size is told the
 * right one (negated), as the kernel's handshake does. */
static int get_link_settings(uint64_t user)
{
	struct ethtool_link_settings base;
	uint32_t masks[3 * MASK_NU32] = { 0 };
	int ret;

	if (sim_copy_from_user(&base, user, sizeof(base)))
		return -EFAULT;
	if (base.link_mode_masks_nwords != MASK_NU32) {
		memset(&base, 0, sizeof(base));
		base.cmd = ETHTOOL_GLINKSETTINGS;
		base.link_mode_masks_nwords = -(int8_t)MASK_NU32;
		return put(user, &base, sizeof(base));
	}
	memset(&base, 0, sizeof(base));
	base.cmd = ETHTOOL_GLINKSETTINGS;
	base.speed = NETDEV_SPEED;
	base.duplex = DUPLEX_FULL;
	base.port = PORT_TP;
	base.autoneg = AUTONEG_DISABLE;
	base.link_mode_masks_nwords = MASK_NU32;
	set_mode(masks, ETHTOOL_LINK_MODE_10000baseT_Full_BIT);
	set_mode(masks, ETHTOOL_LINK_MODE_1000baseT_Full_BIT);
	set_mode(masks, ETHTOOL_LINK_MODE_TP_BIT);
	set_mode(masks + MASK_NU32, ETHTOOL_LINK_MODE_TP_BIT);
	/* The masks follow the fixed part, as the kernel lays them out. */
	ret = put(user, &base, sizeof(base));
	return ret ?: put(user + sizeof(base), masks, sizeof(masks));
}

int sim_netdev_ethtool(const struct sim_dev *dev, uint64_t user)
{
	struct ethtool_value link = { .cmd = ETHTOOL_GLINK, .data = 1 };
	uint32_t cmd;

	if (sim_copy_from_user(&cmd, user, sizeof(cmd)))
		return -EFAULT;
	switch (cmd) {
	case ETHTOOL_GDRVINFO:
		return get_drvinfo(dev, user);
	case ETHTOOL_GLINK:
		return put(user, &link, sizeof(link));
	case ETHTOOL_GSET:
		return get_legacy_settings(user);
	case ETHTOOL_GLINKSETTINGS:
		return get_link_settings(user);
	default:
		return -EOPNOTSUPP;
	}
}
