// SPDX-License-Identifier: BSD-2-Clause
/*
 * The simulated Ethernet segment's neighbour table: the MAC behind a GID,
 * for libibverbs' address resolution. See preload.h.
 */
#include "preload.h"

/*
 * Providers resolve a RoCE destination's MAC (for the address vector)
 * with ibv_resolve_eth_l2_from_gid(), which asks the kernel's neighbour
 * table over rtnetlink. No host interface owns the simulated addresses,
 * so the sim answers for them: a link-local GID carries the MAC in its
 * EUI-64, and a per-process IPv4 address 127.a.b.c belongs to the
 * adapter 00:50:56:a:b:c (identity.c makes both from the same bytes and
 * reads them back: sim_mac_from_gid()).
 * Other GIDs go to libibverbs' own resolver.
 */
typedef int (*resolve_fn)(struct ibv_context *, struct ibv_ah_attr *,
			  uint8_t *, uint16_t *);

typedef int (*query_gid_fn)(struct ibv_context *, uint8_t, int,
			    union ibv_gid *);

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
				struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid)
{
	static _Atomic(resolve_fn) real_resolve;
	query_gid_fn query_gid;
	union ibv_gid sgid;
	resolve_fn f;

	if (!attr || !attr->is_global)
		return -EINVAL;
	/*
	 * Looked up, not linked: the library is preloaded into processes
	 * that never load libibverbs, and must bind even with LD_BIND_NOW.
	 */
	query_gid = (query_gid_fn)dlsym(RTLD_DEFAULT, "ibv_query_gid");
	if (!query_gid || query_gid(context, attr->port_num,
				    attr->grh.sgid_index, &sgid))
		return -EINVAL;
	if (sim_mac_from_gid(attr->grh.dgid.raw, eth_mac)) {
		if (vid)
			*vid = 0xffff;		/* no VLAN */
		return 0;
	}
	f = atomic_load(&real_resolve);
	if (!f) {
		f = (resolve_fn)dlsym(RTLD_NEXT, "ibv_resolve_eth_l2_from_gid");
		if (!f)
			return -EHOSTUNREACH;
		atomic_store(&real_resolve, f);
	}
	return f(context, attr, eth_mac, vid);
}
