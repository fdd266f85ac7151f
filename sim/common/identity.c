// SPDX-License-Identifier: BSD-2-Clause
/*
 * An adapter's identity, each fact derived in one place: the MAC (from the
 * pid, or the --mac base), the node GUID (EUI-64 of the MAC), the GIDs (the
 * link-local address of the MAC, the IPv4-mapped address) and the per-process
 * 127.x IPv4 address, and the way back (the MAC of a GID, for neighbour
 * resolution). Also sim_global, the configuration every layer reads.
 */
#include <arpa/inet.h>
#include <string.h>

#include "common.h"

struct sim_global sim_global;

/* VMware's OUIs: every PVRDMA/vmxnet3 MAC starts with one of them. */
static const uint8_t vmware_oui[][3] = {
	{ 0x00, 0x50, 0x56 }, { 0x00, 0x0c, 0x29 }, { 0x00, 0x05, 0x69 },
};

/*
 * Linux pids are below 2^22 (PID_MAX_LIMIT), so pid and the adapter index
 * modulo 4 fill the 24 bits after the OUI; adapters 4 to 7 take VMware's
 * second OUI, 8 and 9 its third. No two processes, and no two adapters,
 * ever share a MAC on one host.
 */
void sim_derive_mac(pid_t pid, unsigned int index, uint8_t mac[6])
{
	uint32_t low = (((uint32_t)pid << 2) | (index & 3)) & 0xffffff;

	memcpy(mac, vmware_oui[(index / 4) % 3], 3);
	mac[3] = low >> 16;
	mac[4] = low >> 8;
	mac[5] = low;
}


/* The node GUID the device reports: OUI, ff:fe, then the NIC bytes. */
uint64_t sim_node_guid_from_mac(const uint8_t mac[6])
{
	uint8_t b[8] = { mac[0], mac[1], mac[2], 0xff, 0xfe,
			 mac[3], mac[4], mac[5] };
	uint64_t guid;

	memcpy(&guid, b, sizeof(guid));
	return guid;		/* b[] is already network order */
}

/*
 * The default RoCE GID: the port's IPv6 link-local address, whose interface
 * identifier is the modified EUI-64 of the MAC (universal/local bit
 * flipped, as addrconf makes it: fe80::250:56ff:fe..).
 */
void sim_gid_from_mac(const uint8_t mac[6], union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	gid->raw[8] = mac[0] ^ 0x02;
	gid->raw[9] = mac[1];
	gid->raw[10] = mac[2];
	gid->raw[11] = 0xff;
	gid->raw[12] = 0xfe;
	gid->raw[13] = mac[3];
	gid->raw[14] = mac[4];
	gid->raw[15] = mac[5];
}

/* ::ffff:a.b.c.d, the GID of an IPv4 address on a RoCE port. */
void sim_gid_from_ipv4(uint32_t ipv4, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &ipv4, 4);
}

/*
 * The per-process IPv4 address: 127.<the MAC's last three bytes>. It stays
 * inside loopback, and the MAC can be recovered from it, which is what
 * address resolution on the simulated fabric needs. 0 when the result
 * would be the network or broadcast address.
 */
uint32_t sim_ipv4_from_mac(const uint8_t mac[6])
{
	uint32_t low = (uint32_t)mac[3] << 16 | mac[4] << 8 | mac[5];

	if (low == 0 || low == 0xffffff)
		return 0;
	return htonl(127u << 24 | low);
}

/*
 * The MAC behind a GID of a simulated adapter: the way back of
 * sim_gid_from_mac() (the EUI-64 of a link-local GID) and of
 * sim_gid_from_ipv4(sim_ipv4_from_mac()) (127.a.b.c is 00:50:56:a:b:c).
 * False for any other GID.
 */
bool sim_mac_from_gid(const uint8_t gid[16], uint8_t mac[6])
{
	static const uint8_t link_local[8] = { 0xfe, 0x80 };
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *g = gid;

	if (!memcmp(g, link_local, 8) && g[11] == 0xff && g[12] == 0xfe) {
		mac[0] = g[8] ^ 0x02;
		mac[1] = g[9];
		mac[2] = g[10];
		memcpy(&mac[3], &g[13], 3);
		return true;
	}
	if (!memcmp(g, v4_mapped, 12) && g[12] == 127) {
		/* only adapters 0 to 3 (the first OUI) have one */
		memcpy(mac, vmware_oui[0], 3);
		memcpy(&mac[3], &g[13], 3);
		return true;
	}
	return false;
}
