// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sysfs tree a kernel with vmw_pvrdma loaded would show, written under
 * <rundir>/sysfs-<pid>/ for the simulated adapters, and SYSFS_PATH pointed
 * at it. libibverbs finds devices, node GUIDs, GIDs, GID types and P_Keys
 * there; the contents follow drivers/infiniband/core/sysfs.c and
 * vmw_pvrdma's attributes.
 *
 * SYSFS_PATH names the tree through a descriptor of the sim's,
 * /proc/self/fd/<fd>: libibverbs keeps the path it read once, and a
 * fork()ed child, which gets adapters of its own (config.c), writes its
 * own tree and points the same descriptor at it, so that the same path
 * shows each process its own adapters.
 *
 * A GID slot the port does not use reads as all zeros, as in the kernel.
 * Its gid_attrs/types and gid_attrs/ndevs files are absent here; the
 * kernel fails reading them with EINVAL, and devfile.c turns the ENOENT
 * of an open under gid_attrs/ into that EINVAL.
 *
 * Each port's IP interface is its own Ethernet netdev "pvrdma<N>"
 * (netdev.c) when its address is a simulated one (127/8), else the
 * host's interface that holds the address (--ipv4 or --netdev, adapters
 * across hosts): gid_attrs/ndevs names it, the PCI function has it under
 * net/, as a NIC's driver shows its netdev, and class/net links to it.
 * The rdma_cm
 * character device (ucma.c) has its class/misc entry and ABI version.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <rdma/rdma_user_cm.h>

#include "fds.h"
#include "host.h"
#include "libc.h"
#include "netdev.h"
#include "sys.h"

#define PVRDMA_PCI_VENDOR	0x15ad
#define PVRDMA_PCI_DEVICE	0x0820
#define PVRDMA_PCI_CLASS	0x020700	/* network, InfiniBand */
#define PVRDMA_HW_REV		1		/* the driver's PVRDMA_REV_ID */
#define PVRDMA_BOARD_ID		1
#define PVRDMA_DRV_VERSION	"1.0.1.0-k"
#define PVRDMA_PKEY_TABLE_LEN	128		/* query_port's pkey_tbl_len */

/* Only the process that wrote the tree removes it (not forked children). */
static pid_t tree_owner;

static int mkdirf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static int writef(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int mkdirf(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int writef(const char *path, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	ssize_t w;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EOVERFLOW;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	w = write(fd, buf, n);
	close(fd);
	return w == n ? 0 : -EIO;
}

/* Writes "<dir>/<name>" from a format. */
static int attr(const char *dir, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int attr(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX], buf[1024];
	va_list ap;
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EOVERFLOW;
	return writef(path, "%s", buf);
}

static int symlinkf(const char *target, const char *dir, const char *name)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (symlink(target, path) && errno != EEXIST)
		return -errno;
	return 0;
}

/* "fe80:0000:...": eight groups of four hex digits, as the kernel's %pI6. */
static void gid_text(const union ibv_gid *gid, char *buf, size_t len)
{
	int i, n = 0;

	for (i = 0; i < 8; i++)
		n += snprintf(buf + n, len - n, "%s%02x%02x", i ? ":" : "",
			      gid->raw[2 * i], gid->raw[2 * i + 1]);
}

static void guid_text(uint64_t guid_be, char *buf, size_t len)
{
	const uint8_t *b = (const uint8_t *)&guid_be;

	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
}

/*
 * Where adapter N sits: function 1 (function 0 is the vmxnet3 NIC it is
 * paired with on a VM) of its own bus 0x0b+N behind root port 00:15+N.0,
 * as vSphere places PCIe devices. "devices/pci0000:00/<port>/<bdf>".
 */
void sim_sysfs_pci_bdf(const struct sim_dev *dev, char bdf[16])
{
	snprintf(bdf, 16, "0000:%02x:00.1", 0x0b + dev->index);
}

static void pci_names(const struct sim_dev *dev, char bdf[16],
		      char rel[PATH_MAX])
{
	sim_sysfs_pci_bdf(dev, bdf);
	snprintf(rel, PATH_MAX, "devices/pci0000:00/0000:00:%02x.0/%s",
		 0x15 + dev->index, bdf);
}

/* The CPUs a device is local to on a VM without vNUMA: all the host's
 * online ones, as a mask (32 bits a word, highest first) and a list. */
static void local_cpus(char *mask, size_t mlen, char *list, size_t llen)
{
	char buf[256];
	unsigned long words[32] = { 0 };
	unsigned int a, b, i, last = 0, nwords;
	char *p = buf;
	ssize_t n = 0;
	int fd = sim_libc.open("/sys/devices/system/cpu/online",
			       O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		sim_libc.close(fd);
	}
	if (n <= 0)
		n = snprintf(buf, sizeof(buf), "0\n");
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	snprintf(list, llen, "%s\n", buf);
	while (*p) {
		a = b = (unsigned int)strtoul(p, &p, 10);
		if (*p == '-')
			b = (unsigned int)strtoul(p + 1, &p, 10);
		for (i = a; i <= b && i < 32 * 32; i++) {
			words[i / 32] |= 1ul << (i % 32);
			last = i;
		}
		if (*p != ',')
			break;
		p++;
	}
	nwords = last / 32 + 1;
	for (n = 0, i = nwords; i-- > 0;)
		n += snprintf(mask + n, mlen - n, i ? "%08lx," : "%08lx\n",
			      words[i]);
	if (nwords == 1)	/* as the kernel prints fewer than 32 CPUs */
		snprintf(mask, mlen, "%lx\n", words[0]);
}

/* QEMU's PVRDMA model: BAR0 the MSI-X table (16 KiB, table at 0, PBA at
 * 0x2000, 3 vectors), BAR1 the registers (64 bytes), BAR2 the UARs (a
 * 4 KiB page for each of 512 contexts). Addresses are the sim's. */
#define PCI_BAR_MEM_FLAGS	0x40200		/* IORESOURCE_MEM | SIZEALIGN */
#define PVRDMA_MSIX_VECTORS	3

static void bar_layout(const struct sim_dev *dev, uint64_t start[3],
		       uint64_t size[3])
{
	uint64_t base = 0xfd000000ull - 0x400000ull * dev->index;

	size[0] = 16 * 1024, size[1] = 64, size[2] = 0x1000 * 512;
	start[2] = base - size[2];
	start[0] = base;
	start[1] = base + size[0];
}

/* "resource": start, end, flags of each of the function's regions. */
static int write_resource(const char *pci, const struct sim_dev *dev)
{
	char text[13 * 60];
	uint64_t start[3], size[3];
	int i, n = 0;

	bar_layout(dev, start, size);
	for (i = 0; i < 13; i++) {
		unsigned long long a = 0, e = 0, f = 0;

		if (i < 3) {
			a = start[i];
			e = start[i] + size[i] - 1;
			f = PCI_BAR_MEM_FLAGS;
		}
		n += snprintf(text + n, sizeof(text) - n,
			      "0x%016llx 0x%016llx 0x%016llx\n", a, e, f);
	}
	return attr(pci, "resource", "%s", text);
}

/* "config": the type 0 header and the MSI-X capability, as lspci and
 * pcilib read them. */
static int write_config(const char *pci, const struct sim_dev *dev)
{
	uint8_t c[256] = { 0 };
	uint64_t start[3], size[3];
	char path[PATH_MAX];
	int fd, i;
	ssize_t w;

#define PUT16(off, v) (c[off] = (v) & 0xff, c[(off) + 1] = (v) >> 8)
#define PUT32(off, v) (PUT16(off, (v) & 0xffff), PUT16((off) + 2, (v) >> 16))
	bar_layout(dev, start, size);
	PUT16(0x00, PVRDMA_PCI_VENDOR);
	PUT16(0x02, PVRDMA_PCI_DEVICE);
	PUT16(0x04, 0x0406);		/* memory, bus master, no INTx */
	PUT16(0x06, 0x0010);		/* a capability list */
	PUT32(0x08, (PVRDMA_PCI_CLASS << 8) | PVRDMA_HW_REV);
	for (i = 0; i < 3; i++)
		PUT32(0x10 + 4 * i, (uint32_t)start[i]);
	PUT16(0x2c, PVRDMA_PCI_VENDOR);
	PUT16(0x2e, PVRDMA_PCI_DEVICE);
	c[0x34] = 0x40;
	c[0x3d] = 1;			/* INTA, unused under MSI-X */
	c[0x40] = 0x11;			/* MSI-X, the last capability */
	PUT16(0x42, 0x8000 | (PVRDMA_MSIX_VECTORS - 1));
	PUT32(0x44, 0x0000);		/* table: BAR0 + 0 */
	PUT32(0x48, 0x2000);		/* PBA: BAR0 + 0x2000 */
#undef PUT32
#undef PUT16
	if ((size_t)snprintf(path, sizeof(path), "%s/config", pci) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	w = write(fd, c, sizeof(c));
	close(fd);
	return w == (ssize_t)sizeof(c) ? 0 : -EIO;
}

/* The adapter's PCI function: vendor, device, modalias that providers
 * match; where it is and what drives it. */
static int write_pci(const char *root, const struct sim_dev *dev, char *pci,
		     size_t len)
{
	char bdf[16], rel[PATH_MAX], port[PATH_MAX], link[PATH_MAX + 16];
	char mask[300], list[300];
	int ret, n;

	pci_names(dev, bdf, rel);
	n = snprintf(pci, len, "%s/%s", root, rel);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	snprintf(port, sizeof(port), "%.*s", (int)(strrchr(pci, '/') - pci),
		 pci);
	ret = mkdirf("%s/devices", root);
	ret = ret ?: mkdirf("%s/devices/pci0000:00", root);
	ret = ret ?: mkdirf("%s", port);
	ret = ret ?: mkdirf("%s", pci);
	ret = ret ?: attr(pci, "vendor", "0x%04x\n", PVRDMA_PCI_VENDOR);
	ret = ret ?: attr(pci, "device", "0x%04x\n", PVRDMA_PCI_DEVICE);
	ret = ret ?: attr(pci, "subsystem_vendor", "0x%04x\n",
			  PVRDMA_PCI_VENDOR);
	ret = ret ?: attr(pci, "subsystem_device", "0x%04x\n",
			  PVRDMA_PCI_DEVICE);
	ret = ret ?: attr(pci, "class", "0x%06x\n", PVRDMA_PCI_CLASS);
	ret = ret ?: attr(pci, "revision", "0x%02x\n", PVRDMA_HW_REV);
	ret = ret ?: attr(pci, "modalias",
			  "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n",
			  PVRDMA_PCI_VENDOR, PVRDMA_PCI_DEVICE,
			  PVRDMA_PCI_VENDOR, PVRDMA_PCI_DEVICE,
			  PVRDMA_PCI_CLASS >> 16, (PVRDMA_PCI_CLASS >> 8) & 0xff,
			  PVRDMA_PCI_CLASS & 0xff);
	ret = ret ?: attr(pci, "uevent", "DRIVER=vmw_pvrdma\n"
			  "PCI_CLASS=%X\nPCI_ID=%04X:%04X\n"
			  "PCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\n",
			  PVRDMA_PCI_CLASS, PVRDMA_PCI_VENDOR,
			  PVRDMA_PCI_DEVICE, PVRDMA_PCI_VENDOR,
			  PVRDMA_PCI_DEVICE, bdf);
	/* A VM without vNUMA: no node, every CPU local. */
	local_cpus(mask, sizeof(mask), list, sizeof(list));
	ret = ret ?: attr(pci, "numa_node", "-1\n");
	ret = ret ?: attr(pci, "local_cpus", "%s", mask);
	ret = ret ?: attr(pci, "local_cpulist", "%s", list);
	ret = ret ?: attr(pci, "irq", "%u\n", 16 + dev->index);
	ret = ret ?: attr(pci, "enable", "1\n");
	ret = ret ?: attr(pci, "dma_mask_bits", "64\n");
	ret = ret ?: attr(pci, "consistent_dma_mask_bits", "64\n");
	ret = ret ?: write_resource(pci, dev);
	ret = ret ?: write_config(pci, dev);
	ret = ret ?: symlinkf("../../../../bus/pci/drivers/vmw_pvrdma", pci,
			      "driver");
	ret = ret ?: symlinkf("../../../../bus/pci", pci, "subsystem");
	/* bus/pci/devices/<bdf> and the driver's own link to it. */
	ret = ret ?: mkdirf("%s/bus", root);
	ret = ret ?: mkdirf("%s/bus/pci", root);
	ret = ret ?: mkdirf("%s/bus/pci/devices", root);
	ret = ret ?: mkdirf("%s/bus/pci/drivers", root);
	ret = ret ?: mkdirf("%s/bus/pci/drivers/vmw_pvrdma", root);
	snprintf(link, sizeof(link), "../../../%s", rel);
	snprintf(port, sizeof(port), "%s/bus/pci/devices", root);
	ret = ret ?: symlinkf(link, port, bdf);
	snprintf(link, sizeof(link), "../../../../%s", rel);
	snprintf(port, sizeof(port), "%s/bus/pci/drivers/vmw_pvrdma", root);
	ret = ret ?: symlinkf(link, port, bdf);
	return ret;
}

/* The host's own value of an attribute of its interface ifname, or dflt
 * (a line each). */
static void host_netdev_attr(const char *ifname, const char *name,
			     const char *dflt, char *buf, size_t len)
{
	char path[128];
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, name);
	fd = sim_libc.open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		sim_libc.close(fd);
	}
	if (n <= 0)
		n = snprintf(buf, len, "%s\n", dflt);
	buf[(size_t)n < len ? (size_t)n : len - 1] = 0;
}

/* The attributes of the host's interface that holds the port's address
 * (an adapter across hosts): what the host says of it. */
static int write_host_netdev(const char *net, const char *ifname)
{
	static const char *const copied[][2] = {
		{ "ifindex", "1" }, { "iflink", "1" },
		{ "type", "1" },	/* ARPHRD_ETHER */
		{ "address", "00:00:00:00:00:00" },
		{ "broadcast", "ff:ff:ff:ff:ff:ff" }, { "addr_len", "6" },
		{ "mtu", "1500" }, { "flags", "0x1003" },
		{ "operstate", "unknown" },
	};
	char value[64];
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < sizeof(copied) / sizeof(copied[0]); i++) {
		host_netdev_attr(ifname, copied[i][0], copied[i][1], value,
				 sizeof(value));
		ret = attr(net, copied[i][0], "%s", value);
	}
	return ret;
}

/* The simulated netdev pvrdma<N> (netdev.c). */
static int write_sim_netdev(const char *net, const struct sim_dev *dev)
{
	const uint8_t *mac = dev->cfg.mac;
	unsigned int ifindex = sim_netdev_ifindex(dev);
	int ret;

	ret = attr(net, "ifindex", "%u\n", ifindex);
	ret = ret ?: attr(net, "iflink", "%u\n", ifindex);
	ret = ret ?: attr(net, "type", "1\n");	/* ARPHRD_ETHER */
	ret = ret ?: attr(net, "address",
			  "%02x:%02x:%02x:%02x:%02x:%02x\n",
			  mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	ret = ret ?: attr(net, "broadcast", "ff:ff:ff:ff:ff:ff\n");
	ret = ret ?: attr(net, "addr_len", "6\n");
	ret = ret ?: attr(net, "mtu", "%u\n", sim_netdev_mtu(dev));
	ret = ret ?: attr(net, "flags", "0x%x\n",
			  IFF_UP | IFF_BROADCAST | IFF_RUNNING |
			  IFF_MULTICAST);
	ret = ret ?: attr(net, "operstate", "up\n");
	return ret;
}

/* A new file in place of the old at once: a reader sees one or the
 * other, never one half written. */
void sim_sysfs_iface_mtu(const struct sim_dev *dev, int bytes)
{
	char net[PATH_MAX], bdf[16], rel[PATH_MAX], from[PATH_MAX + 16];
	char to[PATH_MAX + 16];
	int n;

	if (!sim_global.sysfs_root[0] || sim_netdev_simulated(dev))
		return;
	pci_names(dev, bdf, rel);
	n = snprintf(net, sizeof(net), "%s/%s/net/%s", sim_global.sysfs_root,
		     rel, dev->cfg.netdev);
	if (n < 0 || (size_t)n >= sizeof(net))
		return;
	snprintf(from, sizeof(from), "%s/.mtu.%d", net, (int)sim_self_tid());
	snprintf(to, sizeof(to), "%s/mtu", net);
	if (writef(from, "%d\n", bytes) || rename(from, to))
		unlink(from);
}

/* The port's netdev: pvrdma<N>, or the host's interface with its
 * address. */
static void port_netdev_name(const struct sim_dev *dev, char name[IFNAMSIZ])
{
	if (sim_netdev_simulated(dev))
		sim_netdev_name(dev, name);
	else
		snprintf(name, IFNAMSIZ, "%s", dev->cfg.netdev);
}

/* device/net/<ifname>: the netdev the port's addresses belong to, and
 * its class/net link (for a host's interface, its attributes as the host
 * shows them, its device the adapter's function). */
static int write_netdev(const char *root, const char *pci,
			const struct sim_dev *dev)
{
	char net[PATH_MAX], target[PATH_MAX + 32], name[IFNAMSIZ];
	char bdf[16], rel[PATH_MAX];
	int ret, n;

	pci_names(dev, bdf, rel);
	port_netdev_name(dev, name);
	n = snprintf(net, sizeof(net), "%s/net/%s", pci, name);
	if (n < 0 || (size_t)n >= sizeof(net))
		return -ENAMETOOLONG;
	ret = mkdirf("%s/net", pci);
	ret = ret ?: mkdirf("%s", net);
	if (sim_netdev_simulated(dev))
		ret = ret ?: write_sim_netdev(net, dev);
	else
		ret = ret ?: write_host_netdev(net, name);
	ret = ret ?: attr(net, "carrier", "1\n");
	/* What query_port reports: 4X QDR (device_attr.c). */
	ret = ret ?: attr(net, "speed", "40000\n");
	ret = ret ?: attr(net, "dev_id", "0x0\n");
	ret = ret ?: attr(net, "dev_port", "0\n");
	snprintf(target, sizeof(target), "../../../%s", bdf);
	ret = ret ?: symlinkf(target, net, "device");
	ret = ret ?: mkdirf("%s/class/net", root);
	if (ret)
		return ret;
	snprintf(target, sizeof(target), "../../%s/net/%s", rel, name);
	snprintf(net, sizeof(net), "%s/class/net", root);
	return symlinkf(target, net, name);
}

static const char *gid_type_name(uint8_t type)
{
	return type == SIM_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1";
}

/* ports/1: an active Ethernet (RoCE) port, its GID and P_Key tables. */
static int write_port(const char *ibdir, const struct sim_dev *dev)
{
	char port[PATH_MAX], dir[PATH_MAX + 32], text[64], ifname[IFNAMSIZ];
	unsigned int i;
	int ret, n;

	port_netdev_name(dev, ifname);
	n = snprintf(port, sizeof(port), "%s/ports/1", ibdir);
	if (n < 0 || (size_t)n >= sizeof(port))
		return -ENAMETOOLONG;
	ret = mkdirf("%s/ports", ibdir);
	ret = ret ?: mkdirf("%s", port);
	ret = ret ?: attr(port, "state", "4: ACTIVE\n");
	ret = ret ?: attr(port, "phys_state", "5: LinkUp\n");
	ret = ret ?: attr(port, "link_layer", "Ethernet\n");
	/* What query_port reports: 4X QDR (device_attr.c). */
	ret = ret ?: attr(port, "rate", "40 Gb/sec (4X QDR)\n");
	ret = ret ?: attr(port, "lid", "0x0\n");
	ret = ret ?: attr(port, "sm_lid", "0x0\n");
	ret = ret ?: attr(port, "sm_sl", "0\n");
	ret = ret ?: attr(port, "lid_mask_count", "0\n");
	/* CM supported, IP-based GIDs: what a RoCE port advertises. */
	ret = ret ?: attr(port, "cap_mask", "0x04010000\n");
	if (ret)
		return ret;

	snprintf(dir, sizeof(dir), "%s/gids", port);
	ret = mkdirf("%s", dir);
	for (i = 0; !ret && i < SIM_GID_TABLE_LEN; i++) {
		char name[16];

		gid_text(&dev->gid[i], text, sizeof(text));
		snprintf(name, sizeof(name), "%u", i);
		ret = attr(dir, name, "%s\n", text);
	}

	ret = ret ?: mkdirf("%s/gid_attrs", port);
	ret = ret ?: mkdirf("%s/gid_attrs/types", port);
	ret = ret ?: mkdirf("%s/gid_attrs/ndevs", port);
	for (i = 0; !ret && i < dev->gid_count; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%u", i);
		snprintf(dir, sizeof(dir), "%s/gid_attrs/types", port);
		ret = attr(dir, name, "%s\n", gid_type_name(dev->gid_type[i]));
		snprintf(dir, sizeof(dir), "%s/gid_attrs/ndevs", port);
		ret = ret ?: attr(dir, name, "%s\n", ifname);
	}

	/* The default P_Key in slot 0, the rest of the table empty. */
	snprintf(dir, sizeof(dir), "%s/pkeys", port);
	ret = ret ?: mkdirf("%s", dir);
	for (i = 0; !ret && i < PVRDMA_PKEY_TABLE_LEN; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%u", i);
		ret = attr(dir, name, "0x%04x\n", i ? 0 : 0xffff);
	}
	return ret;
}

/* <class>/<name>: the link to the device's own directory under its PCI
 * function, as the kernel's device classes show them. */
static int class_link(const char *root, const char *class,
		      const struct sim_dev *dev, const char *name)
{
	char dir[PATH_MAX], target[PATH_MAX + 64], bdf[16], rel[PATH_MAX];

	pci_names(dev, bdf, rel);
	snprintf(dir, sizeof(dir), "%s/class/%s", root, class);
	snprintf(target, sizeof(target), "../../%s/%s/%s", rel, class, name);
	return symlinkf(target, dir, name);
}

static int write_ibdev(const char *pci, const struct sim_dev *dev,
		       char *ibdir, size_t len)
{
	const char *name = dev->cfg.ibdev;
	char text[64];
	int ret;

	snprintf(ibdir, len, "%s/infiniband", pci);
	ret = mkdirf("%s", ibdir);
	if ((size_t)snprintf(ibdir, len, "%s/infiniband/%s", pci, name) >= len)
		return -ENAMETOOLONG;
	ret = ret ?: mkdirf("%s", ibdir);
	ret = ret ?: attr(ibdir, "node_type", "1: CA\n");
	guid_text(dev->node_guid, text, sizeof(text));
	ret = ret ?: attr(ibdir, "node_guid", "%s\n", text);
	ret = ret ?: attr(ibdir, "sys_image_guid", "%s\n", text);
	ret = ret ?: attr(ibdir, "fw_ver", "%u.%u.%u\n",
			  (unsigned int)(SIM_FW_VER >> 32),
			  (unsigned int)(SIM_FW_VER >> 16) & 0xffff,
			  (unsigned int)SIM_FW_VER & 0xffff);
	ret = ret ?: attr(ibdir, "hw_rev", "%d\n", PVRDMA_HW_REV);
	ret = ret ?: attr(ibdir, "board_id", "%d\n", PVRDMA_BOARD_ID);
	ret = ret ?: attr(ibdir, "hca_type", "VMW_PVRDMA-%s\n",
			  PVRDMA_DRV_VERSION);
	ret = ret ?: attr(ibdir, "node_desc", "pvrdma-sim %s\n", name);
	snprintf(text, sizeof(text), "../../../%s", strrchr(pci, '/') + 1);
	ret = ret ?: symlinkf(text, ibdir, "device");
	return ret;
}

static int write_adapter(const char *root, const struct sim_dev *dev)
{
	char pci[PATH_MAX], ibdir[PATH_MAX + 64], uvdir[PATH_MAX + 64];
	char uverbs[16];
	int ret;

	ret = write_pci(root, dev, pci, sizeof(pci));
	ret = ret ?: write_netdev(root, pci, dev);
	ret = ret ?: write_ibdev(pci, dev, ibdir, sizeof(ibdir));
	ret = ret ?: write_port(ibdir, dev);
	ret = ret ?: class_link(root, "infiniband", dev, dev->cfg.ibdev);
	if (ret)
		return ret;

	snprintf(uverbs, sizeof(uverbs), "uverbs%u", dev->index);
	ret = mkdirf("%s/infiniband_verbs", pci);
	snprintf(uvdir, sizeof(uvdir), "%s/infiniband_verbs/%s", pci, uverbs);
	ret = ret ?: mkdirf("%s", uvdir);
	ret = ret ?: attr(uvdir, "ibdev", "%s\n", dev->cfg.ibdev);
	ret = ret ?: attr(uvdir, "abi_version", "%d\n",
			  PVRDMA_UVERBS_ABI_VERSION);
	ret = ret ?: attr(uvdir, "dev", "%d:%d\n", SIM_UVERBS_MAJOR,
			  SIM_UVERBS_MINOR_BASE + dev->index);
	snprintf(uverbs, sizeof(uverbs), "%s", strrchr(pci, '/') + 1);
	snprintf(ibdir, sizeof(ibdir), "../../../%s", uverbs);
	ret = ret ?: symlinkf(ibdir, uvdir, "device");
	snprintf(uverbs, sizeof(uverbs), "uverbs%u", dev->index);
	ret = ret ?: class_link(root, "infiniband_verbs", dev, uverbs);
	return ret;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_own_tree(void)
{
	if (getpid() == tree_owner && sim_global.sysfs_root[0])
		remove_tree(sim_global.sysfs_root);
}

/* Trees of processes that died without running atexit (exec, signals). */
static void remove_stale_trees(const char *rundir)
{
	struct dirent *de;
	DIR *d = opendir(rundir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		char *end;
		long pid;

		if (strncmp(de->d_name, "sysfs-", 6))
			continue;
		pid = strtol(de->d_name + 6, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", rundir, de->d_name);
		remove_tree(path);
	}
	closedir(d);
}

/* SYSFS_PATH, through the sim's descriptor of root (kept at its number
 * in a forked child). Without one, the tree's own name. */
static int sysfs_path_set(const char *root)
{
	struct sim_global *g = &sim_global;
	long fd = sim_sys(SYS_openat, AT_FDCWD, root,
			  O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && g->sysfs_path[0] && sim_fd_is_own(g->sysfs_fd)) {
		if (sim_sys(SYS_dup3, fd, g->sysfs_fd, O_CLOEXEC) < 0) {
			sim_sys(SYS_close, fd, 0, 0);
			fd = -1;
		} else {
			sim_sys(SYS_close, fd, 0, 0);
			fd = g->sysfs_fd;
		}
	} else if (fd >= 0) {
		fd = sim_fd_own((int)fd);
	}
	g->sysfs_path[0] = 0;
	if (fd >= 0) {
		char probe[64];

		g->sysfs_fd = (int)fd;
		snprintf(probe, sizeof(probe), "/proc/self/fd/%d/class",
			 (int)fd);
		/* Without /proc the tree's own name it is. */
		if (!sim_sys(SYS_faccessat, AT_FDCWD, probe, F_OK))
			snprintf(g->sysfs_path, sizeof(g->sysfs_path),
				 "/proc/self/fd/%d", (int)fd);
	}
	if (setenv("SYSFS_PATH", g->sysfs_path[0] ? g->sysfs_path : root, 1))
		return -errno;
	return 0;
}

int sim_sysfs_write(void)
{
	char *root = sim_global.sysfs_root;
	unsigned int i;
	int ret, n;

	remove_stale_trees(sim_global.rundir);
	n = snprintf(root, sizeof(sim_global.sysfs_root), "%s/sysfs-%d",
		     sim_global.rundir, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(sim_global.sysfs_root)) {
		root[0] = '\0';
		return -ENAMETOOLONG;
	}
	/* An exec'd image reuses its pid: start from an empty tree. */
	remove_tree(root);
	if (!tree_owner)
		atexit(remove_own_tree);
	tree_owner = getpid();

	ret = mkdirf("%s", root);
	ret = ret ?: mkdirf("%s/class", root);
	ret = ret ?: mkdirf("%s/class/infiniband", root);
	ret = ret ?: mkdirf("%s/class/infiniband_verbs", root);
	ret = ret ?: attr(root, "class/infiniband_verbs/abi_version", "%d\n",
			  IB_USER_VERBS_ABI_VERSION);
	ret = ret ?: mkdirf("%s/class/misc", root);
	ret = ret ?: mkdirf("%s/class/misc/rdma_cm", root);
	ret = ret ?: attr(root, "class/misc/rdma_cm/abi_version", "%d\n",
			  RDMA_USER_CM_ABI_VERSION);
	ret = ret ?: attr(root, "class/misc/rdma_cm/dev", "10:58\n");
	ret = ret ?: mkdirf("%s/class/infiniband_ucma", root);
	ret = ret ?: attr(root, "class/infiniband_ucma/abi_version", "%d\n",
			  RDMA_USER_CM_ABI_VERSION);
	for (i = 0; !ret && i < sim_global.num_adapters; i++)
		ret = write_adapter(root, &sim_devs[i]);
	if (ret) {
		fprintf(stderr, "pvrdma-sim: cannot write sysfs tree %s: %s\n",
			root, strerror(-ret));
		remove_tree(root);
		return ret;
	}
	return sysfs_path_set(root);
}
