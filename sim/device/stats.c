// SPDX-License-Identifier: BSD-2-Clause
/*
 * Adapter statistics as text: one "<adapter>.<counter> <value>" line per
 * counter, in a fixed order, so scripts and benchmarks can grep them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "engine.h"
#include "libc.h"
#include "view.h"

#define STAT(name) { #name, offsetof(struct sim_stats, name) }

static const struct {
	const char *name;
	size_t offset;
} stat_fields[] = {
	STAT(db_qp_send),
	STAT(db_qp_recv),
	STAT(db_srq_recv),
	STAT(db_cq_arm),
	STAT(db_cq_arm_sol),
	STAT(db_cq_poll),
	STAT(db_bad),
	STAT(send_wqes),
	STAT(recv_wqes),
	STAT(cqes),
	STAT(bytes_tx),
	STAT(bytes_rx),
	STAT(error_cqes),
	STAT(retransmits),
	STAT(comp_events),
	STAT(async_events),
	STAT(single_copy),
	STAT(peer_events),
	STAT(rx_no_qp),
	STAT(naks),
	STAT(rx_stray_reads),
};

/* What the RoCE v2 wire counted at the adapter's port (--wire roce). */
static void wire_stats_print(int fd, struct sim_dev *dev)
{
	struct engine *eng = engine_of(dev);
	struct fab_wire_counts c;

	if (!eng || !eng->port || !fabric_wire_counts(eng->port, &c))
		return;
	dprintf(fd, "%s.roce_rx_packets %lu\n", dev->cfg.ibdev, c.rx_packets);
	dprintf(fd, "%s.roce_rx_bad_icrc %lu\n", dev->cfg.ibdev,
		c.rx_bad_icrc);
	dprintf(fd, "%s.roce_rx_malformed %lu\n", dev->cfg.ibdev,
		c.rx_malformed);
	dprintf(fd, "%s.roce_rx_bad_pkey %lu\n", dev->cfg.ibdev,
		c.rx_bad_pkey);
	dprintf(fd, "%s.roce_tx_packets %lu\n", dev->cfg.ibdev, c.tx_packets);
	dprintf(fd, "%s.roce_rx_placed %lu\n", dev->cfg.ibdev, c.rx_placed);
}

void sim_stats_print(int fd)
{
	unsigned int i, f;

	for (i = 0; i < sim_global.num_adapters && i < SIM_MAX_ADAPTERS; i++) {
		struct sim_dev *dev = &sim_devs[i];
		uint64_t direct_tx, direct_rx, direct_recvs, direct_cqes;

		/* Bytes of operations same-host requesters executed against
		 * this adapter crossed it all the same; the receives their
		 * SENDs took and the CQEs they wrote are its too. */
		view_counts(dev->index, &direct_tx, &direct_rx);
		view_recv_counts(dev->index, &direct_recvs, &direct_cqes);
		for (f = 0; f < sizeof(stat_fields) / sizeof(stat_fields[0]);
		     f++) {
			atomic_ulong *c = (atomic_ulong *)((char *)&dev->stats +
						stat_fields[f].offset);
			unsigned long v = atomic_load_explicit(
				c, memory_order_relaxed);

			if (stat_fields[f].offset ==
			    offsetof(struct sim_stats, bytes_tx))
				v += direct_tx;
			else if (stat_fields[f].offset ==
				 offsetof(struct sim_stats, bytes_rx))
				v += direct_rx;
			else if (stat_fields[f].offset ==
				 offsetof(struct sim_stats, recv_wqes))
				v += direct_recvs;
			else if (stat_fields[f].offset ==
				 offsetof(struct sim_stats, cqes))
				v += direct_cqes;
			dprintf(fd, "%s.%s %lu\n", dev->cfg.ibdev,
				stat_fields[f].name, v);
		}
		wire_stats_print(fd, dev);
	}
}

/* "%p" in the file name becomes the pid, "%%" a percent sign. */
static int expand_name(const char *pattern, char *out, size_t len)
{
	size_t n = 0;
	int w;

	for (; *pattern; pattern++) {
		if (pattern[0] == '%' && pattern[1] == 'p') {
			w = snprintf(out + n, len - n, "%d", (int)getpid());
			if (w < 0 || (size_t)w >= len - n)
				return -ENAMETOOLONG;
			n += w;
			pattern++;
			continue;
		}
		if (pattern[0] == '%' && pattern[1] == '%')
			pattern++;
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		out[n++] = *pattern;
	}
	out[n] = '\0';
	return 0;
}

void sim_stats_dump(void)
{
	char path[sizeof(sim_global.stats_file) + 32];
	int fd;

	if (!sim_global.stats_file[0]) {
		sim_stats_print(STDERR_FILENO);
		return;
	}
	if (expand_name(sim_global.stats_file, path, sizeof(path))) {
		fprintf(stderr, "pvrdma-sim: stats file name too long\n");
		return;
	}
	fd = sim_libc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			   0644);
	if (fd < 0) {
		fprintf(stderr, "pvrdma-sim: stats file %s: %s\n", path,
			strerror(errno));
		return;
	}
	sim_stats_print(fd);
	sim_libc.close(fd);
}
