// SPDX-License-Identifier: BSD-2-Clause
/*
 * An MPI program as MPI users run them over libpvrdma: point-to-point
 * latency and bandwidth between ranks 0 and 1 from 1 B to 4 MiB, then
 * MPI_Allreduce and MPI_Alltoall over all ranks, every byte received
 * checked against what was sent. Prints an OSU-style table:
 *
 *   # Size    Latency (us)   p50 (us)   Bandwidth (MB/s)
 *
 * where latency is half a ping-pong round trip (the mean, as OSU's
 * osu_latency reports it, and the median round trip halved, which a few
 * descheduled round trips on a loaded machine do not move) and bandwidth
 * a window of non-blocking sends acknowledged by one message back.
 *
 *   mpi_check [--min-size BYTES] [--max-size BYTES] [--iters N]
 *             [--all-pairs] [--alltoall-time BYTES]
 *
 * Sizes go from --min-size (default 1) to --max-size, doubling.
 * --all-pairs: then a ping-pong between every pair of ranks, all pairs of
 * a round at once, of PAIR_SIZES bytes, --iters round trips each (at most
 * 5), every message checked. --alltoall-time: nothing but --iters
 * alltoalls of BYTES a pair, timed ("alltoall BYTES B, N ranks: T us"),
 * the last one checked.
 *
 * Exits 0 when every check passed ("mpi_check: passed" on rank 0), 1 on a
 * data mismatch; an MPI error aborts the job.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE_DEFAULT	(4u << 20)
#define WINDOW			16
#define TAG_DATA		1
#define TAG_ACK			2

static int rank, nranks;
static unsigned long failures;

/* The byte a message of seed `seed` carries at offset i. */
static uint8_t pattern_byte(unsigned int seed, size_t i)
{
	return (uint8_t)(seed * 131u + i * 7u + (i >> 8) * 13u + 1u);
}

static void fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pattern_byte(seed, i);
}

static void check(const uint8_t *buf, size_t len, unsigned int seed,
		  const char *what)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != pattern_byte(seed, i)) {
			fprintf(stderr,
				"FAIL rank %d: %s of %zu bytes: byte %zu is %#x, want %#x\n",
				rank, what, len, i, buf[i],
				pattern_byte(seed, i));
			failures++;
			return;
		}
	}
}

static unsigned int iters_for(size_t size, unsigned int iters)
{
	if (size >= (1u << 20))
		return iters / 20 ? iters / 20 : 1;
	if (size >= (64u << 10))
		return iters / 5 ? iters / 5 : 1;
	return iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Half the round trip of a ping-pong between ranks 0 and 1, in us: the
 * mean, and in *p50 the median. rtt has room for iters values. */
static double pingpong(uint8_t *sbuf, uint8_t *rbuf, size_t size,
		       unsigned int iters, double *rtt, double *p50)
{
	unsigned int i, seed = (unsigned int)size;
	double t0 = 0, t = 0;
	int peer = !rank;

	fill(sbuf, size, seed + rank);
	for (i = 0; i < iters + 1; i++) {
		if (i == 1)
			t0 = MPI_Wtime();	/* the first one warms up */
		if (i >= 1)
			t = MPI_Wtime();
		memset(rbuf, 0, size);
		if (rank == 0) {
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, TAG_DATA,
				 MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, TAG_DATA,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, TAG_DATA,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, TAG_DATA,
				 MPI_COMM_WORLD);
		}
		if (i >= 1)
			rtt[i - 1] = MPI_Wtime() - t;
		if (i == 0 || i == iters)
			check(rbuf, size, seed + peer, "ping-pong message");
	}
	t = MPI_Wtime() - t0;
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	*p50 = rtt[iters / 2] * 1e6 / 2;
	return t * 1e6 / iters / 2;
}

/* Rank 0 sends windows of WINDOW messages, rank 1 acknowledges each. */
static double bandwidth(uint8_t *sbuf, uint8_t *rbuf, size_t size,
			unsigned int iters)
{
	MPI_Request req[WINDOW];
	unsigned int i, seed = (unsigned int)size * 3u;
	double t0 = 0, t;
	int w, ack = 0;

	if (rank == 0)
		fill(sbuf, size, seed);
	for (i = 0; i < iters + 1; i++) {
		if (i == 1)
			t0 = MPI_Wtime();
		if (rank == 0) {
			for (w = 0; w < WINDOW; w++)
				MPI_Isend(sbuf, (int)size, MPI_BYTE, 1,
					  TAG_DATA, MPI_COMM_WORLD, &req[w]);
			MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			for (w = 0; w < WINDOW; w++)
				MPI_Irecv(rbuf + (size_t)w * size, (int)size,
					  MPI_BYTE, 0, TAG_DATA,
					  MPI_COMM_WORLD, &req[w]);
			MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
			if (i == 0 || i == iters)
				for (w = 0; w < WINDOW; w++)
					check(rbuf + (size_t)w * size, size,
					      seed, "bandwidth message");
			MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK,
				 MPI_COMM_WORLD);
		}
	}
	t = MPI_Wtime() - t0;
	return (double)size * WINDOW * iters / t / 1e6;
}

/* Allreduce of `count` ints: element i of rank r is r * 1000 + i. */
static void allreduce(unsigned int count)
{
	long long *in = malloc(count * sizeof(*in));
	long long *out = malloc(count * sizeof(*out));
	unsigned int i;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < count; i++)
		in[i] = (long long)rank * 1000 + i;
	MPI_Allreduce(in, out, (int)count, MPI_LONG_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	for (i = 0; i < count; i++) {
		long long want = 1000LL * nranks * (nranks - 1) / 2 +
				 (long long)nranks * i;

		if (out[i] != want) {
			fprintf(stderr,
				"FAIL rank %d: allreduce of %u: element %u is %lld, want %lld\n",
				rank, count, i, out[i], want);
			failures++;
			break;
		}
	}
	free(in);
	free(out);
}

/* Alltoall of `count` bytes a pair: the block for rank d from rank s
 * carries seed s * 64 + d. */
static void alltoall(unsigned int count)
{
	uint8_t *in = malloc((size_t)count * nranks);
	uint8_t *out = malloc((size_t)count * nranks);
	int r;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (r = 0; r < nranks; r++)
		fill(in + (size_t)r * count, count,
		     (unsigned int)(rank * 64 + r));
	memset(out, 0, (size_t)count * nranks);
	MPI_Alltoall(in, (int)count, MPI_BYTE, out, (int)count, MPI_BYTE,
		     MPI_COMM_WORLD);
	for (r = 0; r < nranks; r++)
		check(out + (size_t)r * count, count,
		      (unsigned int)(r * 64 + rank), "alltoall block");
	free(in);
	free(out);
}

#define PAIR_SIZES	3
static const size_t pair_sizes[PAIR_SIZES] = { 8, 4096, 262144 };

/* Round trips of `size` bytes with `peer`: the lower rank starts; each
 * side checks every message it got. */
static void pair_pingpong(int peer, uint8_t *sbuf, uint8_t *rbuf,
			  size_t size, unsigned int iters)
{
	unsigned int i, seed = (unsigned int)size * 5u;
	int r;

	fill(sbuf, size, seed + rank);
	for (i = 0; i < iters; i++) {
		memset(rbuf, 0, size);
		for (r = 0; r < 2; r++) {
			if ((rank < peer) == (r == 0))
				MPI_Send(sbuf, (int)size, MPI_BYTE, peer,
					 TAG_DATA, MPI_COMM_WORLD);
			else
				MPI_Recv(rbuf, (int)size, MPI_BYTE, peer,
					 TAG_DATA, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
		}
		check(rbuf, size, seed + peer, "pair ping-pong message");
	}
}

/* Every pair of ranks, a round-robin tournament: in each round every rank
 * has one partner (or none, with an odd count), so all pairs of a round
 * run at once. */
static void all_pairs(uint8_t *sbuf, uint8_t *rbuf, unsigned int iters)
{
	int slots = nranks + (nranks & 1), round, peer, pairs = 0;
	unsigned int s;

	if (iters > 5)
		iters = 5;
	for (round = 0; round < slots - 1; round++) {
		/* Rank slots-1 stays; the others turn. */
		if (rank == slots - 1)
			peer = round;
		else if (rank == round)
			peer = slots - 1;
		else
			peer = ((2 * round - rank) % (slots - 1) +
				(slots - 1)) % (slots - 1);
		if (peer < nranks && peer != rank) {
			for (s = 0; s < PAIR_SIZES; s++)
				pair_pingpong(peer, sbuf, rbuf, pair_sizes[s],
					      iters);
			pairs++;
		}
	}
	MPI_Allreduce(MPI_IN_PLACE, &pairs, 1, MPI_INT, MPI_SUM,
		      MPI_COMM_WORLD);
	if (rank == 0)
		printf("# all pairs: %d pairs, %u round trips of each size\n",
		       pairs / 2, iters);
}

/* The mean time of an alltoall of `count` bytes a pair, in us. */
static void alltoall_time(unsigned int count, unsigned int iters)
{
	double t0 = 0, t;
	unsigned int i;

	for (i = 0; i < iters + 2; i++) {
		if (i == 2) {	/* two to warm up */
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == 0)
				printf("# alltoall: %u timed\n", iters);
			fflush(stdout);
			t0 = MPI_Wtime();
		}
		alltoall(count);
	}
	t = (MPI_Wtime() - t0) / iters;
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
		      MPI_COMM_WORLD);
	if (rank == 0)
		printf("alltoall %u B, %d ranks: %.1f us\n", count, nranks,
		       t * 1e6);
}

struct opts {
	size_t min_size, max_size;
	unsigned int iters, alltoall_bytes;
	bool all_pairs;
};

static bool parse(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){ .min_size = 1, .max_size = MAX_SIZE_DEFAULT,
			    .iters = 200 };
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min-size") && i + 1 < argc)
			o->min_size = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max-size") && i + 1 < argc)
			o->max_size = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			o->iters = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--alltoall-time") && i + 1 < argc)
			o->alltoall_bytes =
				(unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--all-pairs"))
			o->all_pairs = true;
		else
			return false;
	}
	return true;
}

/* Ranks 0 and 1: latency and bandwidth from min_size to max_size. */
static void point_to_point(const struct opts *o, uint8_t *sbuf,
			   uint8_t *rbuf, double *rtt)
{
	size_t size;

	if (rank == 0)
		printf("# mpi_check: %d ranks, ranks 0 and 1 point to point\n"
		       "# %-10s %14s %10s %18s\n", nranks, "Size",
		       "Latency (us)", "p50 (us)", "Bandwidth (MB/s)");
	for (size = o->min_size; size <= o->max_size; size *= 2) {
		unsigned int n = iters_for(size, o->iters);
		double lat = 0, p50 = 0, bw = 0;

		if (rank < 2) {
			lat = pingpong(sbuf, rbuf, size, n, rtt, &p50);
			bw = bandwidth(sbuf, rbuf, size, n);
		}
		if (rank == 0)
			printf("%-12zu %14.2f %10.2f %18.2f\n", size, lat, p50,
			       bw);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	size_t buf_size;
	unsigned long total;
	uint8_t *sbuf, *rbuf;
	struct opts o;
	double *rtt;
	size_t size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (!parse(argc, argv, &o)) {
		if (rank == 0)
			fprintf(stderr,
				"usage: mpi_check [--min-size BYTES] [--max-size BYTES] [--iters N] [--all-pairs] [--alltoall-time BYTES]\n");
		MPI_Finalize();
		return 2;
	}
	if (nranks < 2 || !o.iters || !o.min_size || o.min_size > o.max_size) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs 2 ranks or more\n");
		MPI_Finalize();
		return 2;
	}
	buf_size = o.max_size;
	if (o.all_pairs && buf_size < pair_sizes[PAIR_SIZES - 1])
		buf_size = pair_sizes[PAIR_SIZES - 1];
	sbuf = malloc(buf_size);
	rbuf = malloc(buf_size * WINDOW);
	rtt = malloc(o.iters * sizeof(*rtt));
	if (!sbuf || !rbuf || !rtt)
		MPI_Abort(MPI_COMM_WORLD, 2);

	if (o.alltoall_bytes) {
		alltoall_time(o.alltoall_bytes, o.iters);
	} else {
		point_to_point(&o, sbuf, rbuf, rtt);
		for (size = 1; size <= 65536; size *= 16) {
			allreduce((unsigned int)size);
			alltoall((unsigned int)size);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			printf("# allreduce, alltoall of 1 .. 65536 elements: done\n");
		if (o.all_pairs)
			all_pairs(sbuf, rbuf, o.iters);
	}

	MPI_Allreduce(&failures, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %s\n", total ? "FAILED" : "passed");
	free(sbuf);
	free(rbuf);
	free(rtt);
	MPI_Finalize();
	return total ? 1 : 0;
}
