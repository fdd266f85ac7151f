// SPDX-License-Identifier: BSD-2-Clause
/* Handle tables: the kernel's idr, as the uverbs objects need it. */
#include <errno.h>
#include <stdlib.h>

#include "sim.h"

void *sim_table_get(struct sim_table *t, uint32_t handle)
{
	if (handle >= t->size)
		return NULL;
	return t->slot[handle];
}

/* Takes the lowest free handle at or above t->first. */
int sim_table_add(struct sim_table *t, void *obj, uint32_t *handle)
{
	uint32_t i;

	for (i = t->first; i < t->size; i++) {
		if (!t->slot[i]) {
			t->slot[i] = obj;
			*handle = i;
			return 0;
		}
	}
	if (t->size >= (1u << 24))
		return ENOSPC;

	/* The new slot is the first one past both the old end and t->first. */
	uint32_t free_slot = t->size > t->first ? t->size : t->first;
	uint32_t nsize = t->size ? t->size : 64;

	while (nsize <= free_slot)
		nsize *= 2;
	if (nsize > (1u << 24))
		return ENOSPC;

	void **n = realloc(t->slot, nsize * sizeof(*n));

	if (!n)
		return ENOMEM;
	for (i = t->size; i < nsize; i++)
		n[i] = NULL;
	t->slot = n;
	t->size = nsize;
	i = free_slot;
	t->slot[i] = obj;
	*handle = i;
	return 0;
}

void sim_table_del(struct sim_table *t, uint32_t handle)
{
	if (handle < t->size)
		t->slot[handle] = NULL;
}
