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
 *
 * Sizes go from --min-size (default 1) to --max-size, doubling.
 *
 * Exits 0 when every check passed ("mpi_check: passed" on rank 0), 1 on a
 * data mismatch; an MPI error aborts the job.
 */
#include <mpi.h>
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

int main(int argc, char **argv)
{
	size_t min_size = 1, max_size = MAX_SIZE_DEFAULT, size;
	unsigned int iters = 200;
	unsigned long total;
	uint8_t *sbuf, *rbuf;
	double *rtt;
	int i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min-size") && i + 1 < argc)
			min_size = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max-size") && i + 1 < argc)
			max_size = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = (unsigned int)strtoul(argv[++i], NULL, 0);
		else {
			if (rank == 0)
				fprintf(stderr,
					"usage: mpi_check [--min-size BYTES] [--max-size BYTES] [--iters N]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (nranks < 2 || !iters || !min_size || min_size > max_size) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs 2 ranks or more\n");
		MPI_Finalize();
		return 2;
	}
	sbuf = malloc(max_size);
	rbuf = malloc(max_size * WINDOW);
	rtt = malloc(iters * sizeof(*rtt));
	if (!sbuf || !rbuf || !rtt)
		MPI_Abort(MPI_COMM_WORLD, 2);

	if (rank == 0)
		printf("# mpi_check: %d ranks, ranks 0 and 1 point to point\n"
		       "# %-10s %14s %10s %18s\n", nranks, "Size",
		       "Latency (us)", "p50 (us)", "Bandwidth (MB/s)");
	for (size = min_size; size <= max_size; size *= 2) {
		unsigned int n = iters_for(size, iters);
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
	for (size = 1; size <= 65536; size *= 16) {
		allreduce((unsigned int)size);
		alltoall((unsigned int)size);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("# allreduce, alltoall of 1 .. 65536 elements: done\n");

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
