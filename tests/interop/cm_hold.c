// SPDX-License-Identifier: BSD-2-Clause
/*
 * libinterop_cm_hold.so, preloaded into a client program: its Nth
 * rdma_resolve_addr() (INTEROP_CM_HOLD_CALL, counted from 1) waits until
 * the file INTEROP_CM_HOLD_FILE exists, at most INTEROP_CM_HOLD_SECONDS
 * (default 60), then goes on as called.
 *
 * perftest's -R server opens the listener of its test connection only
 * after an exchange over its first rdma_cm connection; a client not
 * slowed as the server is (a TCG guest) resolves and sends its REQ
 * before that, and the peer's CM rightly rejects it (reason 8). The test
 * harness creates the file once the server's listener is seen, so the
 * client starts that connection as it would behind a server of its own
 * speed. Nothing else of the program changes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

typedef int (*resolve_addr_fn)(struct rdma_cm_id *, struct sockaddr *,
			       struct sockaddr *, int);

static unsigned int calls;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Until FILE exists or LIMIT seconds passed; how long that was. */
static double hold(const char *file, double limit)
{
	const struct timespec step = { 0, 20 * 1000 * 1000 };
	double start = now();

	while (access(file, F_OK) != 0 && now() - start < limit)
		nanosleep(&step, NULL);
	return now() - start;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		      struct sockaddr *dst_addr, int timeout_ms)
{
	resolve_addr_fn next =
		(resolve_addr_fn)dlsym(RTLD_NEXT, "rdma_resolve_addr");
	const char *file = getenv("INTEROP_CM_HOLD_FILE");
	const char *call = getenv("INTEROP_CM_HOLD_CALL");
	const char *secs = getenv("INTEROP_CM_HOLD_SECONDS");

	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	calls++;
	if (file && call && calls == strtoul(call, NULL, 10)) {
		double limit = secs ? strtod(secs, NULL) : 60.0;
		double waited = hold(file, limit);

		fprintf(stderr, "cm_hold: rdma_resolve_addr call %u held %.2f s%s\n",
			calls, waited,
			access(file, F_OK) == 0 ? "" : " (no signal: timed out)");
	}
	return next(id, src_addr, dst_addr, timeout_ms);
}
