// SPDX-License-Identifier: BSD-2-Clause
/* Number tables: the kernel's idr and the device's object numbers. */
#include <errno.h>
#include <stdlib.h>

#include "common.h"

void *sim_table_get(struct sim_table *t, uint32_t handle)
{
	if (handle >= t->size)
		return NULL;
	return t->slot[handle];
}

/* Files obj under number idx, growing the table as needed. */
int sim_table_put(struct sim_table *t, uint32_t idx, void *obj)
{
	if (idx >= t->size) {
		uint32_t n = t->size ? t->size : 64;
		void **s;
		uint32_t i;

		while (n <= idx)
			n *= 2;
		s = realloc(t->slot, (size_t)n * sizeof(*s));
		if (!s)
			return ENOMEM;
		for (i = t->size; i < n; i++)
			s[i] = NULL;
		t->slot = s;
		t->size = n;
	}
	if (t->slot[idx])
		return EEXIST;
	t->slot[idx] = obj;
	return 0;
}

/*
 * Takes the next free number at or after *next in [first, last], wrapping,
 * so a number just freed is not handed out again at once (as a device's
 * allocator does).
 */
int sim_table_alloc(struct sim_table *t, uint32_t first, uint32_t last,
		    uint32_t *next, void *obj, uint32_t *idx)
{
	uint32_t n = *next, tries;

	if (n < first || n > last)
		n = first;
	for (tries = 0; tries <= last - first; tries++) {
		if (!sim_table_get(t, n)) {
			int ret = sim_table_put(t, n, obj);

			if (ret)
				return ret;
			*idx = n;
			*next = n == last ? first : n + 1;
			return 0;
		}
		n = n == last ? first : n + 1;
	}
	return ENOMEM;
}

void sim_table_del(struct sim_table *t, uint32_t handle)
{
	if (handle < t->size)
		t->slot[handle] = NULL;
}
