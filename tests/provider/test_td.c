// SPDX-License-Identifier: BSD-2-Clause
/*
 * td.c: thread and parent domain checks, and a PD or parent domain still
 * in use is EBUSY.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include <infiniband/pvrdmadv.h>

#include "pvrdma.h"

static void test_parent_domain_checks(void **state)
{
	struct pvrdma_context ctx = {};
	struct ibv_context *ibctx = &ctx.vctx.context;
	struct pvrdma_pd pd = { .ibv_pd = { .context = ibctx, .handle = 7 },
				.pdn = 3 };
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_parent_domain_init_attr a = { .pd = &pd.ibv_pd };
	struct ibv_td *td = pvrdma_alloc_td(ibctx, &ta);
	struct ibv_pd *p;

	assert_non_null(td);
	a.td = td;
	a.comp_mask = 1u << 7;
	errno = 0;
	assert_null(pvrdma_alloc_parent_domain(ibctx, &a));
	assert_int_equal(errno, EOPNOTSUPP);
	a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;	/* no fns */
	a.alloc = NULL;
	a.free = (void *)free;
	errno = 0;
	assert_null(pvrdma_alloc_parent_domain(ibctx, &a));
	assert_int_equal(errno, EINVAL);
	a.comp_mask = 0;
	p = pvrdma_alloc_parent_domain(ibctx, &a);
	assert_non_null(p);
	/* commands and AHs see the protection domain */
	assert_int_equal(p->handle, 7);
	assert_int_equal(to_ppd(p)->pdn, 3);
	assert_ptr_equal(pvrdma_pd_td(p), to_ptd(td));
	assert_ptr_equal(pvrdma_pd_protection(p), &pd);
	assert_null(pvrdma_pd_td(&pd.ibv_pd));
	/* no parent of a parent */
	a.pd = p;
	errno = 0;
	assert_null(pvrdma_alloc_parent_domain(ibctx, &a));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pvrdma_dealloc_td(td), EBUSY);
	assert_int_equal(pvrdma_dealloc_pd(p), 0);
	assert_int_equal(pvrdma_dealloc_td(td), 0);
}

static void *pd_test_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			size_t alignment, uint64_t resource_type)
{
	(void)pd;
	(void)pd_context;
	(void)resource_type;
	return aligned_alloc(alignment, size);
}

static void pd_test_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		      uint64_t resource_type)
{
	(void)pd;
	(void)pd_context;
	(void)resource_type;
	free(ptr);
}

/* A PD or parent domain still in use is EBUSY: the parent domain's free()
 * is what gives the ring buffers back at destroy, and a parent domain
 * names its PD to the kernel by handle. */
static void test_parent_domain_busy(void **state)
{
	struct pvrdma_context ctx = {};
	struct ibv_context *ibctx = &ctx.vctx.context;
	struct pvrdma_pd pd = { .ibv_pd = { .context = ibctx, .handle = 7 } };
	struct ibv_parent_domain_init_attr a = {
		.pd = &pd.ibv_pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
		.alloc = pd_test_alloc,
		.free = pd_test_free,
	};
	struct pvrdma_buf buf = {};
	struct ibv_pd *p;

	(void)state;
	p = pvrdma_alloc_parent_domain(ibctx, &a);
	assert_non_null(p);
	/* the PD it wraps cannot go first (checked before any command) */
	assert_int_equal(pvrdma_dealloc_pd(&pd.ibv_pd), EBUSY);
	assert_int_equal(pvrdma_buf_alloc(&buf, to_ppd(p), 8192, 4096,
					  PVRDMADV_RES_TYPE_CQ), 0);
	assert_ptr_equal(buf.custom, to_ppd(p));
	assert_int_equal(pvrdma_dealloc_pd(p), EBUSY);
	pvrdma_buf_free(&buf);
	assert_int_equal(pvrdma_dealloc_pd(p), 0);
	assert_int_equal(pd.refs, 0);	/* ordinary PD free to go */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parent_domain_checks),
		cmocka_unit_test(test_parent_domain_busy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
