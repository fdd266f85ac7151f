/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: min/max of rdma-core's
 * ccan/minmax.h; both operands are evaluated once and must be of one
 * type (max_t converts them first).
 */
#ifndef PVRDMA_COMPAT_CCAN_MINMAX_H
#define PVRDMA_COMPAT_CCAN_MINMAX_H

#define MINMAX_ASSERT_COMPATIBLE(a, b)					\
	_Static_assert(__builtin_types_compatible_p(a, b),		\
		       "min/max of different types")

#define min(a, b)							\
	({								\
		__typeof__(a) _a = (a);					\
		__typeof__(b) _b = (b);					\
		MINMAX_ASSERT_COMPATIBLE(__typeof__(_a), __typeof__(_b)); \
		_a < _b ? _a : _b;					\
	})

#define max(a, b)							\
	({								\
		__typeof__(a) _a = (a);					\
		__typeof__(b) _b = (b);					\
		MINMAX_ASSERT_COMPATIBLE(__typeof__(_a), __typeof__(_b)); \
		_a > _b ? _a : _b;					\
	})

#define max_t(t, a, b)	max((t)(a), (t)(b))

#endif
