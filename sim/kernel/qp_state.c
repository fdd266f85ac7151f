// SPDX-License-Identifier: BSD-2-Clause
/*
 * The IB spec's QP state machine (IBA 10.3.1, table of "Required" and
 * "Optional" attributes per transition) for the QP types this device has:
 * RC and UD. A transition is good when it exists, every required
 * attribute is in the mask and nothing else is but optional ones.
 */
#include "uverbs_internal.h"

enum { T_RC, T_UD, T_NTYPES };

struct qp_transition {
	bool valid;
	int req[T_NTYPES];
	int opt[T_NTYPES];
};

#define NSTATES (IBV_QPS_ERR + 1)

/* Attributes RTR/RTS/SQD share when an RC path may change on the fly. */
#define RC_PATH_UPDATE (IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | \
			IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | \
			IBV_QP_PATH_MIG_STATE)
#define UD_QKEY_UPDATE (IBV_QP_CUR_STATE | IBV_QP_QKEY)

static const struct qp_transition table[NSTATES][NSTATES] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.req = {
				[T_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS,
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_QKEY,
			},
		},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.opt = {
				[T_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS,
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_QKEY,
			},
		},
		[IBV_QPS_RTR] = {
			.valid = true,
			.req = {
				[T_RC] = IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER,
			},
			.opt = {
				[T_RC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX,
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
			},
		},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.req = {
				[T_RC] = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					 IBV_QP_MAX_QP_RD_ATOMIC,
				[T_UD] = IBV_QP_SQ_PSN,
			},
			.opt = {
				[T_RC] = RC_PATH_UPDATE,
				[T_UD] = UD_QKEY_UPDATE,
			},
		},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[T_RC] = RC_PATH_UPDATE,
				[T_UD] = UD_QKEY_UPDATE,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[T_RC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[T_UD] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
			},
		},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[T_RC] = RC_PATH_UPDATE,
				[T_UD] = UD_QKEY_UPDATE,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[T_RC] = IBV_QP_PORT | IBV_QP_AV |
					 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC |
					 IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX |
					 IBV_QP_MIN_RNR_TIMER |
					 IBV_QP_PATH_MIG_STATE,
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
			},
		},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		/* Only unreliable QPs leave SQE for RTS; RC never gets there. */
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = { [T_UD] = UD_QKEY_UPDATE },
		},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
	},
};

bool sim_qp_transition_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			  enum ibv_qp_type type, int mask)
{
	const struct qp_transition *t;
	int req, opt, tt;

	if ((unsigned int)cur >= NSTATES || (unsigned int)next >= NSTATES)
		return false;
	if (type == IBV_QPT_RC)
		tt = T_RC;
	else if (type == IBV_QPT_UD)
		tt = T_UD;
	else
		return false;
	/* The current state may only be asserted where it can differ from
	 * what the QP thinks (a QP the device moved on its own). */
	if ((mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR &&
	    cur != IBV_QPS_RTS && cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return false;
	t = &table[cur][next];
	if (!t->valid)
		return false;
	if (tt == T_RC && cur == IBV_QPS_SQE)
		return false;
	req = t->req[tt];
	opt = t->opt[tt];
	if ((mask & req) != req)
		return false;
	if (mask & ~(req | opt | IBV_QP_STATE))
		return false;
	return true;
}
