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
	char buf[256];
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
	char path[PATH_MAX], buf[256];
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

/* The adapter's PCI function: vendor, device, modalias that providers match. */
static int write_pci(const char *root, const struct sim_dev *dev, char *pci,
		     size_t len)
{
	int ret, n;

	n = snprintf(pci, len, "%s/devices/pci0000:00/0000:0b:%02x.0", root,
		     dev->index);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	ret = mkdirf("%s/devices", root);
	ret = ret ?: mkdirf("%s/devices/pci0000:00", root);
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
 * its class/net link. */
static int write_netdev(const char *root, const char *pci,
			const struct sim_dev *dev)
{
	char net[PATH_MAX], target[PATH_MAX], name[IFNAMSIZ];
	int ret, n;

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
	ret = ret ?: mkdirf("%s/class/net", root);
	snprintf(target, sizeof(target),
		 "../../devices/pci0000:00/0000:0b:%02x.0/net/%s", dev->index,
		 name);
	snprintf(net, sizeof(net), "%s/class/net", root);
	ret = ret ?: symlinkf(target, net, name);
	return ret;
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

static int write_adapter(const char *root, const struct sim_dev *dev)
{
	char pci[PATH_MAX], ibdir[PATH_MAX], uvdir[PATH_MAX], text[64];
	char target[PATH_MAX];
	const char *name = dev->cfg.ibdev;
	int ret;

	ret = write_pci(root, dev, pci, sizeof(pci));
	ret = ret ?: write_netdev(root, pci, dev);
	if (ret)
		return ret;

	snprintf(ibdir, sizeof(ibdir), "%s/class/infiniband/%s", root, name);
	ret = mkdirf("%s", ibdir);
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
	snprintf(target, sizeof(target),
		 "../../../devices/pci0000:00/0000:0b:%02x.0", dev->index);
	ret = ret ?: symlinkf(target, ibdir, "device");
	ret = ret ?: write_port(ibdir, dev);
	if (ret)
		return ret;

	snprintf(uvdir, sizeof(uvdir), "%s/class/infiniband_verbs/uverbs%u",
		 root, dev->index);
	ret = mkdirf("%s", uvdir);
	ret = ret ?: attr(uvdir, "ibdev", "%s\n", name);
	ret = ret ?: attr(uvdir, "abi_version", "%d\n",
			  PVRDMA_UVERBS_ABI_VERSION);
	ret = ret ?: attr(uvdir, "dev", "%d:%d\n", SIM_UVERBS_MAJOR,
			  SIM_UVERBS_MINOR_BASE + dev->index);
	ret = ret ?: symlinkf(target, uvdir, "device");
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
