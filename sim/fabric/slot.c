// SPDX-License-Identifier: BSD-2-Clause
/*
 * Address slots: processes of one host whose adapters have the same
 * address outside 127/8 (the ranks of an MPI job on a node, each with the
 * node's address) share it as the adapters of one NIC share its address.
 * Each adapter takes the first free slot k of its address: it listens at
 * --tcp-port + 2k (its CM agent's port, + 1, stays the first slot's) and
 * numbers its QPs in slot k's range (k << FAB_SLOT_SHIFT), so the QPN a
 * peer was given says at which port its adapter listens, and the run
 * directory's GID registry files slot k's GIDs apart (".k"). A GID and a
 * QPN, all that a verbs peer knows of a remote QP, thus name the adapter.
 *
 * The kernel asks for the QPN range before the first QP, before the device
 * opens its port: the slot's listening socket is taken then and kept here
 * until the port takes it over. An adapter whose QPNs are its QP handles
 * (no QP namespaces) never asks, and takes the first slot or none.
 */
#include "link.h"

static struct {
	bool held;
	int fd;
	uint32_t ipv4;
	unsigned int slot;
} reserved[SIM_MAX_ADAPTERS];

uint16_t fab_tcp_port(void)
{
	return sim_global.tcp_port ? sim_global.tcp_port :
				     (uint16_t)SIM_TCP_PORT_DEFAULT;
}

uint16_t fab_slot_port(unsigned int slot)
{
	return (uint16_t)(fab_tcp_port() + 2 * slot);
}

unsigned int fab_gid_slot(const uint8_t gid[16], uint32_t qpn)
{
	uint32_t a;

	if (!fab_tcp_gid_addr(gid, &a))
		return 0;
	return (qpn >> FAB_SLOT_SHIFT) % FAB_SLOTS;
}

/* The slot of the adapter `index` at ipv4, its socket reserved. */
static unsigned int reserve(unsigned int index, uint32_t ipv4)
{
	unsigned int slot;
	int fd;

	if (index >= SIM_MAX_ADAPTERS || !fab_tcp_addr(ipv4))
		return 0;
	if (reserved[index].held && reserved[index].ipv4 == ipv4)
		return reserved[index].slot;
	fd = fab_tcp_listen_slot(ipv4, fab_tcp_port(), FAB_SLOTS, &slot);
	if (fd < 0)
		return 0;
	reserved[index].held = true;
	reserved[index].fd = fd;
	reserved[index].ipv4 = ipv4;
	reserved[index].slot = slot;
	return slot;
}

void fabric_qpn_range(unsigned int index, uint32_t ipv4, uint32_t *first,
		      uint32_t *last)
{
	struct fab_port *port = fab_local_port(index);
	uint32_t base;

	if (!fab_tcp_addr(ipv4))
		return;
	if (port && port->adapter.ipv4 == ipv4)
		base = port->tcp_slot;	/* open: its slot is settled */
	else
		base = reserve(index, ipv4);
	base <<= FAB_SLOT_SHIFT;
	*first = base | (*first & FAB_SLOT_QPN_MASK);
	*last = base | FAB_SLOT_QPN_MASK;
}

int fab_slot_take(unsigned int index, uint32_t ipv4, unsigned int *slot)
{
	int fd;

	if (index < SIM_MAX_ADAPTERS && reserved[index].held &&
	    reserved[index].ipv4 == ipv4) {
		reserved[index].held = false;
		*slot = reserved[index].slot;
		return reserved[index].fd;
	}
	/* QPNs not numbered by slot (no QP namespaces): the first slot
	 * only, or peers would take this adapter's QPNs for another's. */
	fd = fab_tcp_listen_slot(ipv4, fab_tcp_port(), 1, slot);
	if (fd < 0)
		*slot = 0;
	return fd;
}
