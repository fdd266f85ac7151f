// SPDX-License-Identifier: BSD-2-Clause
/* The QP state machine: every RC/UD transition with its required
 * attributes passes; a missing required or an extra attribute fails. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "uverbs_internal.h"

struct case_ {
	enum ibv_qp_state cur, next;
	int rc_req, rc_opt, ud_req, ud_opt;
};

#define S IBV_QP_STATE
#define RC_PATH (IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | \
		 IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE)

static const struct case_ valid[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT,
	  IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0,
	  IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0 },
	{ IBV_QPS_INIT, IBV_QPS_INIT,
	  0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	  0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY },
	{ IBV_QPS_INIT, IBV_QPS_RTR,
	  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
	  0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
	{ IBV_QPS_RTR, IBV_QPS_RTS,
	  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, RC_PATH,
	  IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ IBV_QPS_RTS, IBV_QPS_RTS, 0, RC_PATH,
	  0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ IBV_QPS_RTS, IBV_QPS_SQD, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY,
	  0, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	{ IBV_QPS_SQD, IBV_QPS_RTS, 0, RC_PATH,
	  0, IBV_QP_CUR_STATE | IBV_QP_QKEY },
	{ IBV_QPS_SQD, IBV_QPS_SQD, 0,
	  IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
	  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
	  IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
	  0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY },
};

static void test_required_and_optional(void **state)
{
	size_t i;
	int bit;

	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		const struct case_ *c = &valid[i];

		/* Exactly the required ones, then with all optional ones. */
		assert_true(sim_qp_transition_ok(c->cur, c->next, IBV_QPT_RC,
						 S | c->rc_req));
		assert_true(sim_qp_transition_ok(c->cur, c->next, IBV_QPT_RC,
						 S | c->rc_req | c->rc_opt));
		assert_true(sim_qp_transition_ok(c->cur, c->next, IBV_QPT_UD,
						 S | c->ud_req));
		assert_true(sim_qp_transition_ok(c->cur, c->next, IBV_QPT_UD,
						 S | c->ud_req | c->ud_opt));
		/* Each required attribute left out fails. */
		for (bit = 1; bit < (1 << 21); bit <<= 1) {
			if (c->rc_req & bit)
				assert_false(sim_qp_transition_ok(
					c->cur, c->next, IBV_QPT_RC,
					S | (c->rc_req & ~bit)));
			if (c->ud_req & bit)
				assert_false(sim_qp_transition_ok(
					c->cur, c->next, IBV_QPT_UD,
					S | (c->ud_req & ~bit)));
			/* Each attribute neither required nor optional
			 * fails. */
			if (bit != S && !((c->rc_req | c->rc_opt) & bit))
				assert_false(sim_qp_transition_ok(
					c->cur, c->next, IBV_QPT_RC,
					S | c->rc_req | bit));
			if (bit != S && !((c->ud_req | c->ud_opt) & bit))
				assert_false(sim_qp_transition_ok(
					c->cur, c->next, IBV_QPT_UD,
					S | c->ud_req | bit));
		}
	}
}

static void test_reset_and_error_from_anywhere(void **state)
{
	enum ibv_qp_state s;

	for (s = IBV_QPS_RESET; s <= IBV_QPS_ERR; s++) {
		if (s != IBV_QPS_SQE) {
			assert_true(sim_qp_transition_ok(s, IBV_QPS_RESET,
							 IBV_QPT_RC, S));
			assert_true(sim_qp_transition_ok(s, IBV_QPS_ERR,
							 IBV_QPT_RC, S));
		}
		assert_true(sim_qp_transition_ok(s, IBV_QPS_RESET,
						 IBV_QPT_UD, S));
		assert_true(sim_qp_transition_ok(s, IBV_QPS_ERR, IBV_QPT_UD,
						 S));
		/* ... but carrying attributes there is wrong. */
		assert_false(sim_qp_transition_ok(s, IBV_QPS_RESET, IBV_QPT_UD,
						  S | IBV_QP_QKEY));
	}
}

static void test_invalid_transitions(void **state)
{
	static const enum ibv_qp_state bad[][2] = {
		{ IBV_QPS_RESET, IBV_QPS_RTR }, { IBV_QPS_RESET, IBV_QPS_RTS },
		{ IBV_QPS_RESET, IBV_QPS_SQD }, { IBV_QPS_INIT, IBV_QPS_RTS },
		{ IBV_QPS_INIT, IBV_QPS_SQD }, { IBV_QPS_RTR, IBV_QPS_INIT },
		{ IBV_QPS_RTR, IBV_QPS_RTR }, { IBV_QPS_RTS, IBV_QPS_INIT },
		{ IBV_QPS_RTS, IBV_QPS_RTR }, { IBV_QPS_ERR, IBV_QPS_INIT },
		{ IBV_QPS_ERR, IBV_QPS_RTS }, { IBV_QPS_SQD, IBV_QPS_INIT },
	};
	size_t i;
	int all = (1 << 21) - 1;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(sim_qp_transition_ok(bad[i][0], bad[i][1],
						  IBV_QPT_RC, all));
		assert_false(sim_qp_transition_ok(bad[i][0], bad[i][1],
						  IBV_QPT_UD, all));
	}
	/* SQE -> RTS exists for UD only. */
	assert_true(sim_qp_transition_ok(IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_UD,
					 S));
	assert_false(sim_qp_transition_ok(IBV_QPS_SQE, IBV_QPS_RTS,
					  IBV_QPT_RC, S));
	/* Out of range states and types the device lacks. */
	assert_false(sim_qp_transition_ok(IBV_QPS_ERR + 1, IBV_QPS_RESET,
					  IBV_QPT_RC, S));
	assert_false(sim_qp_transition_ok(IBV_QPS_RESET, IBV_QPS_INIT,
					  IBV_QPT_UC, S | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	/* CUR_STATE may not be asserted from RESET or INIT. */
	assert_false(sim_qp_transition_ok(IBV_QPS_INIT, IBV_QPS_INIT,
					  IBV_QPT_RC, S | IBV_QP_CUR_STATE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_required_and_optional),
		cmocka_unit_test(test_reset_and_error_from_anywhere),
		cmocka_unit_test(test_invalid_transitions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
