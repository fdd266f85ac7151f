// SPDX-License-Identifier: BSD-2-Clause
/*
 * The GID registry of the run directory: gid/<hex>[.<slot>], a symlink to
 * the socket of the adapter that holds the GID, by which processes of one
 * host find each other's ports (fabric_resolve()); and the files of
 * processes that are gone, pruned.
 */
#include <dirent.h>
#include <limits.h>
#include <signal.h>

#include "link.h"

static void gid_hex(const uint8_t gid[16], char out[33])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[gid[i] >> 4];
		out[2 * i + 1] = hex[gid[i] & 15];
	}
	out[32] = 0;
}

bool fab_gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return !memcmp(gid, zero, 16);
}

/* gid/<hex>, or gid/<hex>.<slot> for a slot of a shared address. */
void fab_registry_path(char *buf, size_t len, const uint8_t gid[16],
		       unsigned int slot)
{
	char hex[33];

	gid_hex(gid, hex);
	if (slot)
		snprintf(buf, len, "%s/gid/%s.%u", sim_global.rundir, hex,
			 slot);
	else
		snprintf(buf, len, "%s/gid/%s", sim_global.rundir, hex);
}

/* The slot under which the port files gid. */
unsigned int fab_port_gid_slot(const struct fab_port *port,
			       const uint8_t gid[16])
{
	uint32_t a;

	return fab_tcp_gid_addr(gid, &a) ? port->tcp_slot : 0;
}

/* The process, other than this one, whose socket the registry entry at
 * path names (*alive: it still runs); 0 if none. */
static pid_t entry_pid(const char *path, bool *alive)
{
	char target[512];
	const char *base;
	unsigned int index;
	ssize_t n;
	int pid;

	*alive = false;
	n = sim_libc.readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (sscanf(base, "fabric-%d-%u.sock", &pid, &index) != 2 ||
	    pid <= 0 || pid == getpid())
		return 0;
	*alive = !(kill(pid, 0) && errno == ESRCH);
	return pid;
}

static pid_t entry_owner(const char *path)
{
	bool alive;
	pid_t pid = entry_pid(path, &alive);

	return alive ? pid : 0;
}

/* Publishes each GID of the adapter: an atomic replace of the symlink, so
 * that a stale entry of a dead process is taken over. A live process's
 * entry is not: a GID is one adapter's (the same --mac given to two
 * processes, or to a process that forks one that uses the device). */
void fab_registry_publish(struct fab_port *port)
{
	const struct fab_adapter *ad = &port->adapter;
	char path[512], tmp[600];
	unsigned int i;
	pid_t owner;

	snprintf(path, sizeof(path), "%s/gid", sim_global.rundir);
	mkdir(path, 0777);
	for (i = 0; i < *ad->gid_count && i < SIM_GID_TABLE_LEN; i++) {
		if (fab_gid_is_zero(ad->gid[i].raw))
			continue;
		fab_registry_path(path, sizeof(path), ad->gid[i].raw,
			      fab_port_gid_slot(port, ad->gid[i].raw));
		owner = entry_owner(path);
		if (owner) {
			fprintf(stderr, "pvrdma-sim: %s: GID index %u is the "
				"adapter of process %d already; peers cannot "
				"find this one by it\n",
				ad->name ? ad->name : "adapter", i,
				(int)owner);
			continue;
		}
		snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
		unlink(tmp);
		if (symlink(port->sock_path, tmp) || rename(tmp, path)) {
			fprintf(stderr, "pvrdma-sim: cannot publish %s: %s\n",
				path, strerror(errno));
			unlink(tmp);
		}
	}
}

void fab_registry_withdraw(struct fab_port *port)
{
	const struct fab_adapter *ad = &port->adapter;
	char path[512], target[512];
	unsigned int i;
	ssize_t n;

	for (i = 0; i < *ad->gid_count && i < SIM_GID_TABLE_LEN; i++) {
		fab_registry_path(path, sizeof(path), ad->gid[i].raw,
			      fab_port_gid_slot(port, ad->gid[i].raw));
		n = sim_libc.readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, port->sock_path))
			unlink(path);
	}
}

/* GID registry entries of processes that are gone (a process killed by a
 * signal withdraws none): a GID is taken over when it is published again,
 * but most never are. */
static void prune_dead_entries(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct dirent *de;
	bool alive;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/gid", sim_global.rundir);
	d = sim_libc.opendir(dir);
	if (!d)
		return;
	while ((de = sim_libc.readdir(d)))
		if (de->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
		    (int)sizeof(path) && entry_pid(path, &alive) && !alive)
			unlink(path);
	sim_libc.closedir(d);
}

/* The files of processes that are gone (one killed by a signal leaves its
 * own, nothing else would remove them); a pid alive again is a new
 * process's, whose files are kept. */
void fab_prune_dead_files(void)
{
	struct dirent *de;
	DIR *d = sim_libc.opendir(sim_global.rundir);
	char path[PATH_MAX];
	unsigned int index;
	char suffix[8];
	int pid;

	if (!d)
		return;
	while ((de = sim_libc.readdir(d))) {
		if (sscanf(de->d_name, "fabric-%d-%u.%7s", &pid, &index,
			   suffix) != 3 || pid <= 0 || pid == getpid() ||
		    (strcmp(suffix, "sock") && strcmp(suffix, "mem")))
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", sim_global.rundir,
			     de->d_name) < (int)sizeof(path))
			unlink(path);
	}
	sim_libc.closedir(d);
	prune_dead_entries();
}
