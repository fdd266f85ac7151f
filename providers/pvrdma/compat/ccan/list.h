/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma out of an rdma-core tree: the doubly linked list of rdma-core's
 * ccan/list.h, the operations libpvrdma uses. A head is a node that links
 * the first and last entries; an entry embeds a list_node.
 */
#ifndef PVRDMA_COMPAT_CCAN_LIST_H
#define PVRDMA_COMPAT_CCAN_LIST_H

#include <ccan/container_of.h>

struct list_node {
	struct list_node *next, *prev;
};

struct list_head {
	struct list_node n;
};

static inline void list_head_init(struct list_head *h)
{
	h->n.next = h->n.prev = &h->n;
}

static inline void list_add_tail(struct list_head *h, struct list_node *n)
{
	n->next = &h->n;
	n->prev = h->n.prev;
	h->n.prev->next = n;
	h->n.prev = n;
}

/* Unlinks n, which must be on a list. */
static inline void list_del(struct list_node *n)
{
	n->next->prev = n->prev;
	n->prev->next = n->next;
}

#define list_for_each(h, i, member)					\
	for (i = container_of_var((h)->n.next, i, member);		\
	     &(i)->member != &(h)->n;					\
	     i = container_of_var((i)->member.next, i, member))

#endif
