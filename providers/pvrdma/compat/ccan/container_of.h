/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: container_of as rdma-core's
 * ccan/container_of.h names it: the struct a member pointer lies in.
 */
#ifndef PVRDMA_COMPAT_CCAN_CONTAINER_OF_H
#define PVRDMA_COMPAT_CCAN_CONTAINER_OF_H

#include <stddef.h>

#define container_of(member_ptr, containing_type, member)		\
	((containing_type *)((char *)(member_ptr) -			\
			     offsetof(containing_type, member)))

/* The same, typed by a variable of the containing type. */
#define container_of_var(member_ptr, container_var, member)		\
	container_of(member_ptr, __typeof__(*(container_var)), member)

#endif
