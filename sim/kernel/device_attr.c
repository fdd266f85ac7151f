// SPDX-License-Identifier: BSD-2-Clause
/*
 * Device and port attributes of the simulated adapter, as vmw_pvrdma
 * builds them: most fields are the device's capabilities (the DSR caps the
 * hypervisor fills), a few the driver fixes itself (vendor_part_id from
 * the PCI id, PORT_ACTIVE_EVENT | RC_RNR_NAK_GEN added to the device's
 * flags, CM_SUP and IP-based GIDs on the port, Ethernet link layer). The
 * queue depth limits are derived in options.h from what the device can map
 * of a ring; the launcher's options may change them.
 */
#include <string.h>

#include "options.h"
#include "uverbs_internal.h"

#define SIM_VENDOR_ID		0x15ad	/* VMware */
#define SIM_VENDOR_PART_ID	0x0820	/* PVRDMA */
#define SIM_HW_VER		0x1
#define SIM_MAX_MR_SIZE		0xffffffffull
#define SIM_PAGE_SIZE_CAP	0x1000ull	/* 4 KiB page directories */
#define SIM_MAX_QP_RD_ATOM	16u
#define SIM_MAX_QP_INIT_RD_ATOM	16u
#define SIM_MAX_PKEYS		128u
#define SIM_LOCAL_CA_ACK_DELAY	15u
#define SIM_MAX_MSG_SZ		0x80000000u
#define SIM_PORT_WIDTH_4X	2u
#define SIM_PORT_SPEED_QDR	4u	/* 10 Gb/s a lane */
#define SIM_PORT_PHYS_LINKUP	5u
#define SIM_PORT_CM_SUP		(1u << 16)
#define SIM_PORT_IP_BASED_GIDS	(1u << 26)

/* Only the HWv14 device and later have SRQs. */
uint32_t sim_dev_max_srq(const struct sim_dev *dev)
{
	return dev->cfg.hw_version >= 14 ? SIM_MAX_SRQ : 0;
}

uint32_t sim_dev_max_qp_wr(const struct sim_dev *dev)
{
	return dev->cfg.max_qp_wr ? dev->cfg.max_qp_wr :
				    sim_default_max_qp_wr();
}

/* Zero without SRQs, as max_srq. */
uint32_t sim_dev_max_srq_wr(const struct sim_dev *dev)
{
	if (!sim_dev_max_srq(dev))
		return 0;
	return dev->cfg.max_srq_wr ? dev->cfg.max_srq_wr :
				     sim_default_max_srq_wr();
}

uint32_t sim_dev_max_cqe(const struct sim_dev *dev)
{
	return dev->cfg.max_cqe ? dev->cfg.max_cqe : sim_default_max_cqe();
}

uint32_t sim_dev_max_pkeys(void)
{
	return SIM_MAX_PKEYS;
}

uint32_t sim_dev_max_qp_rd_atom(void)
{
	return SIM_MAX_QP_RD_ATOM;
}

uint32_t sim_dev_max_qp_init_rd_atom(void)
{
	return SIM_MAX_QP_INIT_RD_ATOM;
}

void sim_device_attr_fill(const struct sim_dev *dev,
			  struct ib_uverbs_query_device_resp *r)
{
	bool srq = sim_dev_max_srq(dev) != 0;

	memset(r, 0, sizeof(*r));
	r->fw_ver = SIM_FW_VER;
	r->node_guid = dev->node_guid;
	r->sys_image_guid = dev->node_guid;
	r->max_mr_size = SIM_MAX_MR_SIZE;
	r->page_size_cap = SIM_PAGE_SIZE_CAP;
	r->vendor_id = SIM_VENDOR_ID;
	r->vendor_part_id = SIM_VENDOR_PART_ID;
	r->hw_ver = SIM_HW_VER;
	r->max_qp = SIM_MAX_QP;
	r->max_qp_wr = sim_dev_max_qp_wr(dev);
	r->device_cap_flags = IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_RC_RNR_NAK_GEN;
	r->max_sge = SIM_MAX_SGE;
	r->max_sge_rd = SIM_MAX_SGE;
	r->max_cq = SIM_MAX_CQ;
	r->max_cqe = sim_dev_max_cqe(dev);
	r->max_mr = SIM_MAX_MR;
	r->max_pd = SIM_MAX_PD;
	r->max_qp_rd_atom = SIM_MAX_QP_RD_ATOM;
	r->max_qp_init_rd_atom = SIM_MAX_QP_INIT_RD_ATOM;
	r->atomic_cap = IBV_ATOMIC_HCA;
	r->max_ah = SIM_MAX_AH;
	r->max_srq = srq ? SIM_MAX_SRQ : 0;
	r->max_srq_wr = sim_dev_max_srq_wr(dev);
	r->max_srq_sge = srq ? SIM_MAX_SRQ_SGE : 0;
	r->max_pkeys = SIM_MAX_PKEYS;
	r->local_ca_ack_delay = SIM_LOCAL_CA_ACK_DELAY;
	r->phys_port_cnt = 1;
}

enum ibv_mtu sim_port_mtu(struct sim_dev *dev)
{
	int before = atomic_load(&dev->iface_mtu);
	enum ibv_mtu mtu = sim_dev_port_mtu(dev);
	int now = atomic_load(&dev->iface_mtu);

	if (now != before && sim_kernel_host.iface_mtu_changed)
		sim_kernel_host.iface_mtu_changed(dev, now);
	return mtu;
}

void sim_port_attr_fill(struct sim_dev *dev,
			struct ib_uverbs_query_port_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->state = IBV_PORT_ACTIVE;
	r->max_mtu = IBV_MTU_4096;
	r->active_mtu = sim_port_mtu(dev);
	r->gid_tbl_len = SIM_GID_TABLE_LEN;
	r->port_cap_flags = SIM_PORT_CM_SUP | SIM_PORT_IP_BASED_GIDS;
	r->max_msg_sz = SIM_MAX_MSG_SZ;
	r->pkey_tbl_len = SIM_MAX_PKEYS;
	r->max_vl_num = 1;
	r->active_width = SIM_PORT_WIDTH_4X;
	r->active_speed = SIM_PORT_SPEED_QDR;
	r->phys_state = SIM_PORT_PHYS_LINKUP;
	r->link_layer = IBV_LINK_LAYER_ETHERNET;
}
