// SPDX-License-Identifier: BSD-2-Clause
/*
 * Stress between two processes: THREADS posting threads on each side, each
 * with its own RC QP, stream a mix of SEND, RDMA WRITE and RDMA READ at the
 * peer while they receive the peer's stream on the same QP. Every payload
 * is a pseudo-random fill of its (thread, index) seed, every SEND carries
 * its index: nothing may be lost, duplicated, reordered or corrupted, and
 * every WR must complete successfully.
 *
 * Each thread has its own QP (and CQs) rather than all sharing one: the
 * device then has THREADS QPs with requests, responses and pending ACKs in
 * flight at once on one adapter (the engine's per-QP lists), and the
 * threads ring their doorbells concurrently; a shared QP serialises the
 * posting threads on the provider's SQ lock and exercises less of the
 * device.
 *
 * Element i of a thread's stream (i counts WRs, the "messages"):
 *   i % 4 == 0  SEND of a message with header {index, length}
 *   i % 4 == 1  RDMA WRITE into the peer's write slot (i / 4) % WRITE_SLOTS
 *   i % 4 == 2  SEND whose receiver checks the WRITE just before it (RC
 *               executes in order: the data is there)
 *   i % 4 == 3  RDMA READ of one of the peer's fixed regions, checked
 *
 *   stress --server|--client --port P [--expect MESSAGES] [--mode sigstop]
 *          [--dev D]
 *
 * MESSAGES (default 200000) is what each side sends in all, split evenly
 * over the threads. With --mode sigstop the client stops the server
 * process with SIGSTOP for PAUSE_MS once a quarter of its stream is done,
 * then continues it: a pause well inside timeout x retry_cnt, which both
 * directions must ride out with nothing lost (STRESS_PAUSE_MS in the
 * client's environment sets the pause; the retry budget is ~8.6 s).
 */
#include "e2e_common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS		4
#define SQ_DEPTH	128
#define RQ_DEPTH	256
#define MSG_MAX		512
#define WRITE_SLOTS	512	/* > RQ_DEPTH: see write_slot_free() */
#define WRITE_MAX	512
#define READ_REGIONS	16
#define READ_LEN	256
#define PAUSE_MS	2000

/* One thread's area of the buffer; the same layout on both sides. */
struct area {
	uint8_t recv[RQ_DEPTH][MSG_MAX];
	uint8_t send[SQ_DEPTH][MSG_MAX];
	uint8_t write_in[WRITE_SLOTS][WRITE_MAX];	/* the peer writes */
	uint8_t write_src[SQ_DEPTH][WRITE_MAX];
	uint8_t read_src[READ_REGIONS][READ_LEN];	/* the peer reads */
	uint8_t read_dst[SQ_DEPTH][READ_LEN];
};

struct msg_hdr {
	uint64_t index;
	uint32_t len;
	uint32_t pad;
};

struct peer_info {
	uint32_t qpn[THREADS];
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	uint8_t gid[16];
};

struct side;

struct worker {
	struct side *s;
	unsigned int t;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct area *a;
	uint64_t peer_area;		/* the peer's area of thread t */
	uint64_t posted, done;
	uint64_t progress;		/* done, for the main thread */
	/* The peer's elements accounted for: the next SEND expected. */
	uint64_t recvd;
	pthread_t tid;
};

struct side {
	struct e2e_dev d;
	struct ibv_mr *mr;
	struct area *areas;
	struct peer_info me, peer;
	bool server;
	uint64_t per_thread;		/* WRs each thread posts */
	struct worker w[THREADS];
};

/* splitmix64: a fill no stale or shifted copy of another can pass */
static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t seed_of(bool server, unsigned int t, uint64_t i)
{
	return ((uint64_t)server << 63) ^ ((uint64_t)t << 48) ^ i;
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed, v = 0;
	size_t k;

	for (k = 0; k < len; k++) {
		if (!(k & 7))
			v = mix(&x);
		p[k] = (uint8_t)(v >> (8 * (k & 7)));
	}
}

static bool fill_ok(const uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed, v = 0;
	size_t k;

	for (k = 0; k < len; k++) {
		if (!(k & 7))
			v = mix(&x);
		if (p[k] != (uint8_t)(v >> (8 * (k & 7))))
			return false;
	}
	return true;
}

static size_t msg_len(uint64_t i)
{
	return sizeof(struct msg_hdr) + (i * 37) % (MSG_MAX -
						   sizeof(struct msg_hdr) + 1);
}

static size_t write_len(uint64_t i)
{
	return 1 + (i * 53) % WRITE_MAX;
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void post_recv(struct worker *w, unsigned int slot)
{
	struct ibv_sge sge = {
		(uintptr_t)w->a->recv[slot], MSG_MAX, w->s->mr->lkey
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot, .sg_list = &sge, .num_sge = 1
	}, *bad;
	int ret = ibv_post_recv(w->qp, &wr, &bad);

	E2E_CHECK(!ret, "thread %u: ibv_post_recv: %s", w->t, strerror(ret));
}

static void post_one(struct worker *w)
{
	struct side *s = w->s;
	uint64_t i = w->posted;
	unsigned int slot = i % SQ_DEPTH;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge = { .lkey = s->mr->lkey };
	struct msg_hdr *h;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	switch (i % 4) {
	case 0:
	case 2:
		h = (struct msg_hdr *)w->a->send[slot];
		h->index = i;
		h->len = msg_len(i);
		h->pad = 0;
		fill((uint8_t *)(h + 1), h->len - sizeof(*h),
		     seed_of(s->server, w->t, i));
		sge.addr = (uintptr_t)h;
		sge.length = h->len;
		wr.opcode = IBV_WR_SEND;
		break;
	case 1:
		sge.addr = (uintptr_t)w->a->write_src[slot];
		sge.length = write_len(i);
		fill(w->a->write_src[slot], sge.length,
		     seed_of(s->server, w->t, i));
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = w->peer_area +
			offsetof(struct area, write_in) +
			(i / 4 % WRITE_SLOTS) * WRITE_MAX;
		wr.wr.rdma.rkey = s->peer.rkey;
		break;
	default:
		sge.addr = (uintptr_t)w->a->read_dst[slot];
		sge.length = READ_LEN;
		memset(w->a->read_dst[slot], 0, READ_LEN);
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = w->peer_area +
			offsetof(struct area, read_src) +
			(i / 4 % READ_REGIONS) * READ_LEN;
		wr.wr.rdma.rkey = s->peer.rkey;
		break;
	}
	ret = ibv_post_send(w->qp, &wr, &bad);
	E2E_CHECK(!ret, "thread %u: ibv_post_send of WR %llu: %s", w->t,
		  (unsigned long long)i, strerror(ret));
	w->posted++;
}

static void send_done(struct worker *w, const struct ibv_wc *wc)
{
	uint64_t i = w->done;
	static const enum ibv_wc_opcode op[4] = {
		IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_RDMA_READ
	};

	E2E_CHECK(wc->status == IBV_WC_SUCCESS,
		  "thread %u: WR %llu: status %s", w->t,
		  (unsigned long long)wc->wr_id,
		  ibv_wc_status_str(wc->status));
	E2E_CHECK(wc->wr_id == i, "thread %u: completion of WR %llu, want "
		  "%llu", w->t, (unsigned long long)wc->wr_id,
		  (unsigned long long)i);
	E2E_CHECK(wc->opcode == op[i % 4], "thread %u: WR %llu: opcode %d",
		  w->t, (unsigned long long)i, wc->opcode);
	if (i % 4 == 3) {
		/* the peer's regions hold the fill of the peer's seeds */
		E2E_CHECK(fill_ok(w->a->read_dst[i % SQ_DEPTH], READ_LEN,
				  seed_of(!w->s->server, w->t,
					  ~(uint64_t)(i / 4 % READ_REGIONS))),
			  "thread %u: READ %llu: wrong data", w->t,
			  (unsigned long long)i);
	}
	w->done++;
}

/* One of the peer's SENDs arrived: it must be the next one. */
static void recv_done(struct worker *w, const struct ibv_wc *wc)
{
	struct side *s = w->s;
	uint64_t want = w->recvd;	/* 0 or 2 mod 4 */
	const struct msg_hdr *h;
	unsigned int slot;

	E2E_CHECK(wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV &&
		  wc->wr_id < RQ_DEPTH,
		  "thread %u: receive: status %s opcode %d wr_id %llu", w->t,
		  ibv_wc_status_str(wc->status), wc->opcode,
		  (unsigned long long)wc->wr_id);
	slot = wc->wr_id;
	h = (const struct msg_hdr *)w->a->recv[slot];
	E2E_CHECK(h->index == want,
		  "thread %u: message %llu arrived, want %llu (lost, "
		  "duplicated or reordered)", w->t,
		  (unsigned long long)h->index, (unsigned long long)want);
	E2E_CHECK(wc->byte_len == msg_len(want) && h->len == msg_len(want),
		  "thread %u: message %llu: %u bytes, want %zu", w->t,
		  (unsigned long long)want, wc->byte_len, msg_len(want));
	E2E_CHECK(fill_ok((const uint8_t *)(h + 1), h->len - sizeof(*h),
			  seed_of(!s->server, w->t, want)),
		  "thread %u: message %llu: payload corrupted", w->t,
		  (unsigned long long)want);
	if (want % 4 == 2) {
		uint64_t wi = want - 1;

		E2E_CHECK(fill_ok(w->a->write_in[wi / 4 % WRITE_SLOTS],
				  write_len(wi), seed_of(!s->server, w->t, wi)),
			  "thread %u: WRITE %llu: wrong data", w->t,
			  (unsigned long long)wi);
	}
	/* The next SEND is two elements on: a WRITE or a READ between,
	 * which complete no receive. */
	w->recvd += 2;
	post_recv(w, slot);
}

/*
 * A thread's WRITE of element i reuses the peer's slot of element
 * i - 4 * WRITE_SLOTS. RC executes in order, so when it lands, every SEND
 * before it was delivered, each into a receive the peer reposts only once
 * it checked it: with WRITE_SLOTS > RQ_DEPTH, the peer checked the old
 * slot's WRITE (announced by the SEND right after it) long before.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t peer_msgs = w->s->per_thread;	/* the peer's elements */
	uint64_t last = now_s(), mark = 0;
	struct ibv_wc wc[32];
	int n, k;

	while (w->done < w->s->per_thread || w->recvd < peer_msgs) {
		bool work = false;

		while (w->posted < w->s->per_thread &&
		       w->posted - w->done < SQ_DEPTH) {
			post_one(w);
			work = true;
		}
		n = ibv_poll_cq(w->scq, 32, wc);
		E2E_CHECK(n >= 0, "ibv_poll_cq: %d", n);
		for (k = 0; k < n; k++)
			send_done(w, &wc[k]);
		__atomic_store_n(&w->progress, w->done, __ATOMIC_RELAXED);
		work |= n > 0;
		n = ibv_poll_cq(w->rcq, 32, wc);
		E2E_CHECK(n >= 0, "ibv_poll_cq: %d", n);
		for (k = 0; k < n; k++)
			recv_done(w, &wc[k]);
		work |= n > 0;
		if (w->done + w->recvd != mark) {
			mark = w->done + w->recvd;
			last = now_s();
		} else if (!work) {
			E2E_CHECK(now_s() - last < E2E_WAIT_SECONDS,
				  "thread %u: no progress for %d s: %llu of "
				  "%llu WRs done, %llu of %llu peer elements",
				  w->t, E2E_WAIT_SECONDS,
				  (unsigned long long)w->done,
				  (unsigned long long)w->s->per_thread,
				  (unsigned long long)w->recvd,
				  (unsigned long long)peer_msgs);
			sched_yield();
		}
	}
	return NULL;
}

static void setup(struct side *s, const struct e2e_args *args)
{
	unsigned int t, r;

	e2e_open(&s->d, args->dev, args->gid_index);
	E2E_CHECK(!posix_memalign((void **)&s->areas, 4096,
				  THREADS * sizeof(struct area)),
		  "out of memory");
	memset(s->areas, 0, THREADS * sizeof(struct area));
	s->mr = ibv_reg_mr(s->d.pd, s->areas, THREADS * sizeof(struct area),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	E2E_CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	for (t = 0; t < THREADS; t++) {
		struct worker *w = &s->w[t];

		w->s = s;
		w->t = t;
		w->a = &s->areas[t];
		for (r = 0; r < READ_REGIONS; r++)
			fill(w->a->read_src[r], READ_LEN,
			     seed_of(s->server, t, ~(uint64_t)r));
		w->scq = ibv_create_cq(s->d.ctx, SQ_DEPTH, NULL, NULL, 0);
		w->rcq = ibv_create_cq(s->d.ctx, RQ_DEPTH, NULL, NULL, 0);
		E2E_CHECK(w->scq && w->rcq, "ibv_create_cq: %s",
			  strerror(errno));
		w->qp = e2e_create_qp(&s->d, IBV_QPT_RC, w->scq, w->rcq,
				      RQ_DEPTH, 1);
		e2e_qp_to_init(w->qp, IBV_QPT_RC);
		for (r = 0; r < RQ_DEPTH; r++)
			post_recv(w, r);
		s->me.qpn[t] = w->qp->qp_num;
	}
	s->me.psn = s->server ? 0xabc : 0xfff000;
	s->me.rkey = s->mr->rkey;
	s->me.addr = (uintptr_t)s->areas;
	memcpy(s->me.gid, s->d.gid.raw, 16);
}

static void connect_all(struct side *s)
{
	struct e2e_rc_opts opts = {
		/* ~1 s a try: a peer the loaded host did not schedule for a
		 * while is resent to, never given up on. */
		.timeout = 18,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.set_rnr_retry = true,
		.min_rnr_timer = 1,
	};
	struct e2e_peer p;
	unsigned int t;

	memset(&p, 0, sizeof(p));
	p.psn = s->peer.psn;
	memcpy(p.gid, s->peer.gid, 16);
	for (t = 0; t < THREADS; t++) {
		p.rc_qpn = s->peer.qpn[t];
		e2e_rc_connect(&s->d, s->w[t].qp, s->me.psn, &p, &opts);
		s->w[t].peer_area = s->peer.addr + t * sizeof(struct area);
	}
}

/* Stops the server once a quarter of our stream is done, for the pause. */
static void pause_peer(struct side *s, pid_t pid)
{
	const char *env = getenv("STRESS_PAUSE_MS");
	uint64_t pause_ms = env ? strtoull(env, NULL, 0) : PAUSE_MS;
	uint64_t done, start;
	unsigned int t;

	do {
		usleep(1000);
		for (done = 0, t = 0; t < THREADS; t++)
			done += __atomic_load_n(&s->w[t].progress,
						__ATOMIC_RELAXED);
	} while (done < s->per_thread * THREADS / 4);
	E2E_CHECK(!kill(pid, SIGSTOP), "kill: %s", strerror(errno));
	printf("stopped the server after %llu WRs\n",
	       (unsigned long long)done);
	start = now_s();
	usleep(pause_ms * 1000);
	E2E_CHECK(!kill(pid, SIGCONT), "kill: %s", strerror(errno));
	printf("continued the server after %llu s\n",
	       (unsigned long long)(now_s() - start));
}

int main(int argc, char **argv)
{
	struct e2e_args args;
	struct side *s;
	unsigned int t;
	uint64_t sent = 0, recvd = 0, start;
	bool sigstop;
	pid_t peer_pid;
	int sock, ret;

	e2e_parse_args(argc, argv, &args);
	E2E_CHECK(!args.single, "needs --server or --client");
	sigstop = args.mode && !strcmp(args.mode, "sigstop");
	E2E_CHECK(!args.mode || sigstop, "unknown mode %s", args.mode);
	s = calloc(1, sizeof(*s));
	E2E_CHECK(s, "out of memory");
	s->server = args.server;
	s->per_thread = (args.expect > 0 ? (uint64_t)args.expect : 200000) /
			THREADS;
	s->per_thread -= s->per_thread % 4;	/* whole groups of four */
	setup(s, &args);
	sock = e2e_channel_open(&args);
	e2e_send_all(sock, &s->me, sizeof(s->me));
	E2E_CHECK(e2e_recv_all(sock, &s->peer, sizeof(s->peer)),
		  "peer went away");
	connect_all(s);
	peer_pid = getpid();
	e2e_send_all(sock, &peer_pid, sizeof(peer_pid));
	E2E_CHECK(e2e_recv_all(sock, &peer_pid, sizeof(peer_pid)),
		  "peer went away");
	e2e_sync(sock, "connected");

	start = now_s();
	for (t = 0; t < THREADS; t++) {
		ret = pthread_create(&s->w[t].tid, NULL, worker_main,
				     &s->w[t]);
		E2E_CHECK(!ret, "pthread_create: %s", strerror(ret));
	}
	if (sigstop && !s->server)
		pause_peer(s, peer_pid);
	for (t = 0; t < THREADS; t++) {
		pthread_join(s->w[t].tid, NULL);
		sent += s->w[t].done;
		recvd += s->w[t].recvd;
	}
	printf("stress %s: %llu messages sent, %llu of the peer's checked, "
	       "in %llu s\n", s->server ? "server" : "client",
	       (unsigned long long)sent, (unsigned long long)recvd,
	       (unsigned long long)(now_s() - start));
	e2e_sync(sock, "done");

	for (t = 0; t < THREADS; t++) {
		E2E_CHECK(!ibv_destroy_qp(s->w[t].qp), "ibv_destroy_qp failed");
		E2E_CHECK(!ibv_destroy_cq(s->w[t].scq) &&
			  !ibv_destroy_cq(s->w[t].rcq),
			  "ibv_destroy_cq failed");
	}
	E2E_CHECK(!ibv_dereg_mr(s->mr), "ibv_dereg_mr failed");
	e2e_close(&s->d);
	free(s->areas);
	free(s);
	printf("stress %s: passed\n", args.server ? "server" : "client");
	return 0;
}
