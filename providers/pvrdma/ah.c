// SPDX-License-Identifier: BSD-2-Clause
/*
 * Address handles. PVRDMA is RoCE only and its user AHs never reach the
 * kernel: the provider builds the device's address vector (struct
 * pvrdma_av) itself and copies it into every UD WQE. The destination MAC
 * comes from the GID: a link-local GID embeds it (modified EUI-64); with
 * IP-based GIDs the neighbour table is asked (ibv_resolve_eth_l2_from_gid).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "pvrdma.h"

_Static_assert(sizeof(struct pvrdma_av) == 40, "address vector ABI");

bool pvrdma_gid_is_link_local(const union ibv_gid *gid)
{
	return gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80;
}

bool pvrdma_gid_is_multicast(const union ibv_gid *gid)
{
	return gid->raw[0] == 0xff;
}

/* ::ffff:a.b.c.d, how RoCE v2 carries an IPv4 address in a GID. */
bool pvrdma_gid_is_v4mapped(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};

	return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

/*
 * MAC of a link-local GID whose interface id is a modified EUI-64
 * (bytes 8-10 and 13-15, the universal/local bit flipped back, ff:fe in
 * between). Returns EINVAL for any other GID.
 */
int pvrdma_mac_from_gid(const union ibv_gid *gid, uint8_t mac[6])
{
	if (!pvrdma_gid_is_link_local(gid) ||
	    gid->raw[11] != 0xff || gid->raw[12] != 0xfe)
		return EINVAL;
	mac[0] = gid->raw[8] ^ 0x02;
	mac[1] = gid->raw[9];
	mac[2] = gid->raw[10];
	mac[3] = gid->raw[13];
	mac[4] = gid->raw[14];
	mac[5] = gid->raw[15];
	return 0;
}

/* Everything but the MAC, as the device expects it. */
void pvrdma_av_init(struct pvrdma_av *av, uint32_t pdn,
		    const struct ibv_ah_attr *attr)
{
	memset(av, 0, sizeof(*av));
	av->port_pd = pdn | ((uint32_t)attr->port_num << 24);
	/* bit 7: the AV is valid / has a GRH (as the kernel driver sets) */
	av->src_path_bits = attr->src_path_bits | 0x80;
	av->gid_index = attr->grh.sgid_index;
	av->hop_limit = attr->grh.hop_limit;
	av->sl_tclass_flowlabel = ((uint32_t)attr->grh.traffic_class << 20) |
				  (attr->grh.flow_label & 0xfffff);
	memcpy(av->dgid, attr->grh.dgid.raw, sizeof(av->dgid));
}

static int resolve_dmac(struct ibv_context *context,
			const struct pvrdma_port_info *port,
			struct ibv_ah_attr *attr, uint8_t mac[6])
{
	int ret;

	if (!(port->port_cap_flags & IBV_PORT_IP_BASED_GIDS))
		return pvrdma_mac_from_gid(&attr->grh.dgid, mac);

	ret = ibv_resolve_eth_l2_from_gid(context, attr, mac, NULL);
	if (!ret)
		return 0;
	/* no neighbour entry, but the GID itself names the MAC */
	if (!pvrdma_mac_from_gid(&attr->grh.dgid, mac))
		return 0;
	return ret < 0 ? -ret : EHOSTUNREACH;
}

struct ibv_ah *pvrdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct pvrdma_context *ctx = to_pctx(pd->context);
	const struct pvrdma_port_info *port;
	struct pvrdma_ah *ah;
	int ret;

	if (!attr || attr->port_num < 1 ||
	    attr->port_num > ctx->limits.phys_port_cnt) {
		errno = EINVAL;
		return NULL;
	}
	port = &ctx->ports[attr->port_num - 1];
	/* RoCE: every packet has a GRH; multicast needs a kernel AH */
	if (!attr->is_global || port->link_layer != IBV_LINK_LAYER_ETHERNET ||
	    attr->grh.sgid_index >= port->gid_tbl_len ||
	    pvrdma_gid_is_multicast(&attr->grh.dgid)) {
		errno = EINVAL;
		return NULL;
	}

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	pvrdma_av_init(&ah->av, to_ppd(pd)->pdn, attr);
	ret = resolve_dmac(pd->context, port, attr, ah->av.dmac);
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	return &ah->ibv_ah;
}

int pvrdma_destroy_ah(struct ibv_ah *ah)
{
	free(to_pah(ah));
	return 0;
}
