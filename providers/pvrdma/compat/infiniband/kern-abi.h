/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: the uverbs write-ABI command buffers
 * of rdma-core's libibverbs/kern-abi.h that libpvrdma uses.
 *
 * libibverbs takes a command as the 8-byte uverbs header followed by the
 * kernel's request struct, with the provider's udata right after it;
 * responses are the kernel's struct, udata right after. DECLARE_CMD names
 * the core buffers, DECLARE_DRV_CMD the provider's wrappers with its
 * udata (drv_payload). rdma-core's version also lays the kernel fields out
 * loose in the struct; libpvrdma reaches them only as core_payload and
 * drv_payload, which both versions have.
 */
#ifndef PVRDMA_COMPAT_INFINIBAND_KERN_ABI_H
#define PVRDMA_COMPAT_INFINIBAND_KERN_ABI_H

#include <assert.h>
#include <linux/types.h>

#include <rdma/ib_user_verbs.h>

#define IBV_ABI_REQ(_enum) _ABI_REQ_STRUCT_##_enum
#define IBV_KABI_REQ(_enum) _KABI_REQ_STRUCT_##_enum
#define IBV_KABI_RESP(_enum) _KABI_RESP_STRUCT_##_enum
#define IBV_ABI_ALIGN(_enum) _ABI_ALIGN_##_enum

#define DECLARE_CMDX(_enum, _name, _kabi, _kabi_resp)			\
	struct _name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct _kabi core_payload;				\
	};								\
	typedef struct _name IBV_ABI_REQ(_enum);			\
	typedef struct _kabi IBV_KABI_REQ(_enum);			\
	typedef struct _kabi_resp IBV_KABI_RESP(_enum);			\
	enum { IBV_ABI_ALIGN(_enum) = 4 };				\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(struct ib_uverbs_cmd_hdr) +		\
		      sizeof(struct _kabi), "uverbs command " #_name)

#define DECLARE_CMD(_enum, _name, _kabi)				\
	DECLARE_CMDX(_enum, _name, _kabi, _kabi##_resp)

/* A driver command without udata in one direction names this. */
struct empty {};

/* The provider's command and response: the core's, then its udata, with
 * no padding in between or after (checked). */
#define DECLARE_DRV_CMD(_name, _enum, _kabi_req, _kabi_resp)		\
	struct _name {							\
		IBV_ABI_REQ(_enum) ibv_cmd;				\
		struct _kabi_req drv_payload;				\
	};								\
	struct _name##_resp {						\
		IBV_KABI_RESP(_enum) ibv_resp;				\
		struct _kabi_resp drv_payload;				\
	};								\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(IBV_ABI_REQ(_enum)) +			\
		      sizeof(struct _kabi_req), "udata of " #_name);	\
	static_assert(sizeof(struct _name) %				\
		      IBV_ABI_ALIGN(_enum) == 0, "alignment of " #_name); \
	static_assert(sizeof(struct _name##_resp) ==			\
		      sizeof(IBV_KABI_RESP(_enum)) +			\
		      sizeof(struct _kabi_resp),			\
		      "udata of " #_name "_resp");			\
	static_assert(sizeof(struct _name##_resp) %			\
		      IBV_ABI_ALIGN(_enum) == 0,			\
		      "alignment of " #_name "_resp")

DECLARE_CMD(IB_USER_VERBS_CMD_GET_CONTEXT, ibv_get_context,
	    ib_uverbs_get_context);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_PORT, ibv_query_port,
	    ib_uverbs_query_port);
DECLARE_CMD(IB_USER_VERBS_CMD_ALLOC_PD, ibv_alloc_pd, ib_uverbs_alloc_pd);
DECLARE_CMD(IB_USER_VERBS_CMD_REG_MR, ibv_reg_mr, ib_uverbs_reg_mr);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_CQ, ibv_create_cq,
	    ib_uverbs_create_cq);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_QP, ibv_create_qp,
	    ib_uverbs_create_qp);
DECLARE_CMDX(IB_USER_VERBS_CMD_MODIFY_QP, ibv_modify_qp,
	     ib_uverbs_modify_qp, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_QP, ibv_query_qp, ib_uverbs_query_qp);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_SRQ, ibv_create_srq,
	    ib_uverbs_create_srq);
DECLARE_CMDX(IB_USER_VERBS_CMD_MODIFY_SRQ, ibv_modify_srq,
	     ib_uverbs_modify_srq, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_SRQ, ibv_query_srq,
	    ib_uverbs_query_srq);

#endif /* PVRDMA_COMPAT_INFINIBAND_KERN_ABI_H */
