// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdma-sim [options] -- PROGRAM [ARGS...]
 *
 * Runs PROGRAM on simulated PVRDMA adapters: checks the options, passes
 * them on as PVRDMA_SIM_* variables, adds libpvrdma-sim.so to LD_PRELOAD
 * and execs PROGRAM in place, so PROGRAM keeps the launcher's pid and its
 * exit status is the launcher's.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "host.h"

#ifndef PVRDMA_SIM_VERSION
#define PVRDMA_SIM_VERSION "0.1.0"
#endif

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH ""
#endif

#define SIM_LIB_NAME		"libpvrdma-sim.so"
#define PVRDMA_PROVIDER_NAME	"libpvrdma-rdmav34.so"
#define VMW_PROVIDER_NAME	"libvmw_pvrdma-rdmav34.so"

static const char *prog = "pvrdma-sim";

static void usage(FILE *out)
{
	fprintf(out,
"Usage: %s [OPTIONS] -- PROGRAM [ARGS...]\n"
"Run PROGRAM on simulated VMware PVRDMA adapters.\n"
"\n"
"  --provider pvrdma|vmw_pvrdma|PATH  provider to load (default: pvrdma\n"
"                            if built, else libibverbs' installed ones)\n"
"  --adapters N              adapters per process, 1..10 (default 1)\n"
"  --hw-version 13|14|18     virtual hardware version (default 18)\n"
"  --roce 1|2                RoCE mode (default 2 from hw 14, else 1)\n"
"  --namespaces on|off       QP handles apart from QPNs (default on for\n"
"                            hw 18; needs hw >= 17)\n"
"  --max-ud-qps N            UD QPs per adapter (default 3)\n"
"  --max-qp-wr N, --max-srq-wr N, --max-cqe N\n"
"                            queue depth limits (default 8192, 32768, 16384)\n"
"  --mtu 256|512|1024|2048|4096  active MTU (default 1024)\n"
"  --mac XX:XX:XX:XX:XX:XX   MAC of the first adapter, the others count up\n"
"                            (default: per process, 00:50:56 + pid)\n"
"  --ipv4 auto|off|A.B.C.D   IPv4 address of the first adapter, the others\n"
"                            count up (default auto: one in 127.0.0.0/8);\n"
"                            outside 127/8 an address of this host, where\n"
"                            adapters on other hosts reach it over TCP\n"
"                            (another address: a warning, no TCP)\n"
"  --netdev IFNAME           take the IPv4 address of interface IFNAME\n"
"  --tcp-port N              TCP port of the adapters for other hosts\n"
"                            (default 4791)\n"
"  --wire sim|roce           how adapters reach other hosts: the sim's\n"
"                            frames over TCP (default) or RoCE v2 (UDP\n"
"                            4791), as native RDMA endpoints speak it\n"
"  --rundir DIR              sockets and sysfs trees (default\n"
"                            $XDG_RUNTIME_DIR/pvrdma-sim or\n"
"                            /tmp/pvrdma-sim-UID)\n"
"  --stats                   print adapter statistics at exit (stderr)\n"
"  --stats-file FILE         append them to FILE instead (%%p = pid)\n"
"  --no-single-copy          one-sided operations between processes of\n"
"                            this host take the socket fabric, as where\n"
"                            single-copy access is refused\n"
"  --async-mode              the device polls the rings and links of an\n"
"                            active adapter on a host thread (vSphere 8\n"
"                            vrdma.asyncMode): lower latency, more CPU\n"
"  -h, --help                this text\n"
"  --version                 the version\n", prog);
}

static __attribute__((noreturn)) void bad(const char *opt, const char *val,
					  const char *why)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, opt, val, why);
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	exit(2);
}

static void set(const char *name, const char *value)
{
	if (setenv(name, value, 1)) {
		fprintf(stderr, "%s: setenv %s: %s\n", prog, name,
			strerror(errno));
		exit(2);
	}
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The directory the launcher runs from, from /proc/self/exe. */
static void self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0) {
		snprintf(buf, len, ".");
		return;
	}
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
}

/* Build tree (bin/ + lib/) first, then the installed layouts. */
static bool find_sim_lib(const char *bindir, char *out, size_t len)
{
	static const char *const rel[] = {
		"../lib/" SIM_LIB_NAME,
		"../lib/" MULTIARCH "/pvrdma-sim/" SIM_LIB_NAME,
		"../lib64/pvrdma-sim/" SIM_LIB_NAME,
		"../lib/pvrdma-sim/" SIM_LIB_NAME,
	};
	char path[2 * PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", bindir, rel[i]);
		if (readable(path) && realpath(path, out) && strlen(out) < len)
			return true;
	}
	return false;
}

static bool find_in(const char *const *dirs, size_t n, const char *name,
		    char *out)
{
	char path[2 * PATH_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		if (!dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		if (readable(path) && realpath(path, out))
			return true;
	}
	return false;
}

/* Our provider: beside the sim library, or in libibverbs' directory. */
static bool find_pvrdma(const char *simlib, char *out)
{
	char dir[PATH_MAX], parent[PATH_MAX + 8], ibv[PATH_MAX + 16];
	const char *dirs[3];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", simlib);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	snprintf(parent, sizeof(parent), "%s/..", dir);
	snprintf(ibv, sizeof(ibv), "%s/../libibverbs", dir);
	dirs[0] = dir;
	dirs[1] = parent;
	dirs[2] = ibv;
	return find_in(dirs, 3, PVRDMA_PROVIDER_NAME, out);
}

/* The upstream provider from rdma-core's ibverbs-providers. */
static bool find_vmw_pvrdma(char *out)
{
	static const char *const dirs[] = {
		"/usr/lib/" MULTIARCH "/libibverbs",
		"/usr/lib64/libibverbs",
		"/usr/lib/libibverbs",
		"/usr/local/lib/" MULTIARCH "/libibverbs",
		"/usr/local/lib64/libibverbs",
		"/usr/local/lib/libibverbs",
	};

	return find_in(dirs, sizeof(dirs) / sizeof(dirs[0]),
		       VMW_PROVIDER_NAME, out);
}

/* Relative names would change meaning when a child changes directory. */
static void set_absolute(const char *name, const char *path, const char *opt)
{
	char cwd[PATH_MAX], buf[2 * PATH_MAX + 2];

	if (!*path)
		bad(opt, "\"\"", "empty path");
	if (path[0] == '/') {
		set(name, path);
		return;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		bad(opt, path, "cannot resolve against the current directory");
	snprintf(buf, sizeof(buf), "%s/%s", cwd, path);
	set(name, buf);
}

static void add_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;

	if (old && *old) {
		/* After what is there: a sanitizer runtime must stay first. */
		if (asprintf(&val, "%s:%s", old, lib) < 0)
			exit(2);
	} else {
		val = strdup(lib);
		if (!val)
			exit(2);
	}
	set("LD_PRELOAD", val);
	free(val);
}

static const char *const config_env[] = {
	SIM_ENV_ADAPTERS, SIM_ENV_HW_VERSION, SIM_ENV_ROCE, SIM_ENV_NAMESPACES,
	SIM_ENV_MAX_UD_QPS, SIM_ENV_MTU, SIM_ENV_MAC, SIM_ENV_IPV4,
	SIM_ENV_STATS, SIM_ENV_STATS_FILE, SIM_ENV_PROVIDER,
	SIM_ENV_MAX_QP_WR, SIM_ENV_MAX_SRQ_WR, SIM_ENV_MAX_CQE,
	SIM_ENV_NETDEV, SIM_ENV_TCP_PORT,
	SIM_ENV_SINGLE_COPY, SIM_ENV_ASYNC_MODE, SIM_ENV_WIRE,
};

/* Every process under this launcher must agree on the run directory. */
static void set_default_rundir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char buf[PATH_MAX];

	if (getenv(SIM_ENV_RUNDIR) && *getenv(SIM_ENV_RUNDIR))
		return;
	if (xdg && *xdg)
		snprintf(buf, sizeof(buf), "%s/pvrdma-sim", xdg);
	else
		snprintf(buf, sizeof(buf), "/tmp/pvrdma-sim-%u",
			 (unsigned int)getuid());
	set(SIM_ENV_RUNDIR, buf);
}

enum {
	OPT_PROVIDER = 256, OPT_ADAPTERS, OPT_HW, OPT_ROCE, OPT_NAMESPACES,
	OPT_MAX_UD, OPT_MTU, OPT_MAC, OPT_IPV4, OPT_RUNDIR, OPT_STATS,
	OPT_STATS_FILE, OPT_VERSION, OPT_MAX_QP_WR, OPT_MAX_SRQ_WR,
	OPT_MAX_CQE, OPT_NETDEV, OPT_TCP_PORT, OPT_NO_SINGLE_COPY,
	OPT_ASYNC_MODE, OPT_WIRE,
};

static const struct option long_opts[] = {
	{ "provider", required_argument, NULL, OPT_PROVIDER },
	{ "adapters", required_argument, NULL, OPT_ADAPTERS },
	{ "hw-version", required_argument, NULL, OPT_HW },
	{ "roce", required_argument, NULL, OPT_ROCE },
	{ "namespaces", required_argument, NULL, OPT_NAMESPACES },
	{ "max-ud-qps", required_argument, NULL, OPT_MAX_UD },
	{ "max-qp-wr", required_argument, NULL, OPT_MAX_QP_WR },
	{ "max-srq-wr", required_argument, NULL, OPT_MAX_SRQ_WR },
	{ "max-cqe", required_argument, NULL, OPT_MAX_CQE },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "mac", required_argument, NULL, OPT_MAC },
	{ "ipv4", required_argument, NULL, OPT_IPV4 },
	{ "netdev", required_argument, NULL, OPT_NETDEV },
	{ "tcp-port", required_argument, NULL, OPT_TCP_PORT },
	{ "wire", required_argument, NULL, OPT_WIRE },
	{ "rundir", required_argument, NULL, OPT_RUNDIR },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "stats-file", required_argument, NULL, OPT_STATS_FILE },
	{ "no-single-copy", no_argument, NULL, OPT_NO_SINGLE_COPY },
	{ "async-mode", no_argument, NULL, OPT_ASYNC_MODE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* What the command line chose that the environment does not say alone. */
struct launch {
	const char *provider, *roce_arg, *ns_arg;
	unsigned int hw;
};

/* An option of the adapters' settings: checked, then passed on in the
 * environment. False if c is none of them. */
static bool take_adapter_option(int c)
{
	unsigned int u;
	bool ipv4_auto;
	enum ibv_mtu mtu;
	uint8_t mac[6];
	uint32_t ipv4;

	switch (c) {
	case OPT_ADAPTERS:
		if (sim_opt_uint(optarg, 1, SIM_MAX_ADAPTERS, &u))
			bad("--adapters", optarg, "expected 1..10");
		set(SIM_ENV_ADAPTERS, optarg);
		return true;
	case OPT_MAX_UD:
		if (sim_opt_uint(optarg, 0, SIM_MAX_QP, &u))
			bad("--max-ud-qps", optarg,
			    "expected 0..32768");
		set(SIM_ENV_MAX_UD_QPS, optarg);
		return true;
	case OPT_MAX_QP_WR:
	case OPT_MAX_SRQ_WR:
	case OPT_MAX_CQE:
		if (sim_opt_uint(optarg, 1, SIM_QUEUE_LIMIT_MAX, &u))
			bad(c == OPT_MAX_QP_WR ? "--max-qp-wr" :
			    c == OPT_MAX_SRQ_WR ? "--max-srq-wr" :
			    "--max-cqe", optarg, "expected 1..262144");
		set(c == OPT_MAX_QP_WR ? SIM_ENV_MAX_QP_WR :
		    c == OPT_MAX_SRQ_WR ? SIM_ENV_MAX_SRQ_WR :
		    SIM_ENV_MAX_CQE, optarg);
		return true;
	case OPT_MTU:
		if (sim_opt_mtu(optarg, &mtu))
			bad("--mtu", optarg,
			    "expected 256, 512, 1024, 2048 or 4096");
		set(SIM_ENV_MTU, optarg);
		return true;
	case OPT_MAC:
		if (sim_opt_mac(optarg, mac))
			bad("--mac", optarg,
			    "expected a unicast XX:XX:XX:XX:XX:XX");
		set(SIM_ENV_MAC, optarg);
		return true;
	case OPT_IPV4:
		if (sim_opt_ipv4(optarg, &ipv4, &ipv4_auto))
			bad("--ipv4", optarg,
			    "expected auto, off or a unicast address");
		if (getenv(SIM_ENV_NETDEV))
			bad("--ipv4", optarg,
			    "--ipv4 and --netdev exclude each other");
		set(SIM_ENV_IPV4, optarg);
		return true;
	case OPT_NETDEV:
		u = (unsigned int)sim_iface_ipv4(optarg, &ipv4, NULL);
		if (u)
			bad("--netdev", optarg, strerror((int)u));
		if (getenv(SIM_ENV_IPV4))
			bad("--netdev", optarg,
			    "--ipv4 and --netdev exclude each other");
		set(SIM_ENV_NETDEV, optarg);
		return true;
	case OPT_TCP_PORT:
		if (sim_opt_tcp_port(optarg, &u))
			bad("--tcp-port", optarg, "expected 1..65535");
		set(SIM_ENV_TCP_PORT, optarg);
		return true;
	case OPT_WIRE: {
		enum sim_wire w;

		if (sim_opt_wire(optarg, &w))
			bad("--wire", optarg, "expected roce or sim");
		set(SIM_ENV_WIRE, optarg);
		return true;
	}
	default:
		return false;
	}
}

/* One option: -1 to go on, or the launcher's exit status. */
static int take_option(int c, struct launch *l, char **argv)
{
	unsigned int roce;
	bool namespaces;

	if (take_adapter_option(c))
		return -1;
	switch (c) {
	case OPT_PROVIDER:
		l->provider = optarg;
		break;
	case OPT_HW:
		if (sim_opt_hw_version(optarg, &l->hw))
			bad("--hw-version", optarg,
			    "expected 13, 14 or 18");
		set(SIM_ENV_HW_VERSION, optarg);
		break;
	case OPT_ROCE:
		if (sim_opt_roce(optarg, &roce))
			bad("--roce", optarg, "expected 1 or 2");
		l->roce_arg = optarg;
		break;
	case OPT_NAMESPACES:
		if (sim_opt_bool(optarg, &namespaces))
			bad("--namespaces", optarg,
			    "expected on or off");
		l->ns_arg = optarg;
		break;
	case OPT_RUNDIR:
		set_absolute(SIM_ENV_RUNDIR, optarg, "--rundir");
		break;
	case OPT_STATS:
		set(SIM_ENV_STATS, "1");
		break;
	case OPT_NO_SINGLE_COPY:
		set(SIM_ENV_SINGLE_COPY, "off");
		break;
	case OPT_ASYNC_MODE:
		set(SIM_ENV_ASYNC_MODE, "on");
		break;
	case OPT_STATS_FILE:
		set_absolute(SIM_ENV_STATS_FILE, optarg,
			     "--stats-file");
		break;
	case 'h':
		usage(stdout);
		return 0;
	case OPT_VERSION:
		printf("pvrdma-sim %s\n", PVRDMA_SIM_VERSION);
		return 0;
	default:	/* ':' an option without its value, or '?' */
		fprintf(stderr, c == ':' ?
			"%s: option '%s' needs a value\n" :
			"%s: unrecognized option '%s'\n",
			prog, argv[optind - 1]);
		fprintf(stderr,
			"Try '%s --help' for more information.\n",
			prog);
		return 2;
	}
	return -1;
}

/* Modes default from the hardware version; explicit ones must fit. */
static int set_modes(const struct launch *l)
{
	unsigned int roce;
	bool namespaces;
	const char *why;

	roce = sim_opt_default_roce(l->hw);
	if (l->roce_arg)
		sim_opt_roce(l->roce_arg, &roce);
	namespaces = sim_opt_default_namespaces(l->hw);
	if (l->ns_arg)
		sim_opt_bool(l->ns_arg, &namespaces);
	why = sim_opt_conflict(l->hw, roce, namespaces);
	if (why) {
		fprintf(stderr, "%s: %s (hardware version %u)\n", prog, why,
			l->hw);
		return 2;
	}
	set(SIM_ENV_ROCE, roce == 2 ? "2" : "1");
	set(SIM_ENV_NAMESPACES, namespaces ? "on" : "off");
	return 0;
}

/* SIM_ENV_PROVIDER for --provider (or its absence). */
static void choose_provider(const char *provider, const char *simlib)
{
	char prov[PATH_MAX];

	if (!provider) {
		/* Ours when it is built; otherwise libibverbs' own drivers. */
		if (find_pvrdma(simlib, prov))
			set(SIM_ENV_PROVIDER, prov);
		else
			unsetenv(SIM_ENV_PROVIDER);
	} else if (!strcmp(provider, "pvrdma")) {
		if (!find_pvrdma(simlib, prov))
			bad("--provider", provider,
			    "cannot find " PVRDMA_PROVIDER_NAME);
		set(SIM_ENV_PROVIDER, prov);
	} else if (!strcmp(provider, "vmw_pvrdma")) {
		if (!find_vmw_pvrdma(prov))
			bad("--provider", provider,
			    "cannot find " VMW_PROVIDER_NAME
			    " (package ibverbs-providers)");
		set(SIM_ENV_PROVIDER, prov);
	} else {
		if (!strchr(provider, '/'))
			bad("--provider", provider,
			    "expected pvrdma, vmw_pvrdma or a path");
		if (!readable(provider) || !realpath(provider, prov))
			bad("--provider", provider, strerror(errno));
		set(SIM_ENV_PROVIDER, prov);
	}
}

int main(int argc, char **argv)
{
	struct launch l = { .hw = SIM_HW_VERSION_DEFAULT };
	char bindir[PATH_MAX], simlib[PATH_MAX];
	int c, ret;

	/*
	 * The configuration comes from this command line only, not from a
	 * launcher further up; the run directory is kept so that nested
	 * launchers share one fabric.
	 */
	for (c = 0; c < (int)(sizeof(config_env) / sizeof(config_env[0]));
	     c++)
		unsetenv(config_env[c]);

	opterr = 0;	/* our own messages, named as the others are */
	while ((c = getopt_long(argc, argv, "+:h", long_opts, NULL)) != -1) {
		ret = take_option(c, &l, argv);
		if (ret >= 0)
			return ret;
	}
	if (set_modes(&l))
		return 2;

	if (optind >= argc) {
		fprintf(stderr, "%s: no program to run\n", prog);
		fprintf(stderr, "Try '%s --help' for more information.\n",
			prog);
		return 2;
	}

	self_dir(bindir, sizeof(bindir));
	if (!find_sim_lib(bindir, simlib, sizeof(simlib))) {
		fprintf(stderr, "%s: cannot find %s near %s\n", prog,
			SIM_LIB_NAME, bindir);
		return 2;
	}

	choose_provider(l.provider, simlib);
	set_default_rundir();
	add_preload(simlib);
	execvp(argv[optind], argv + optind);
	c = errno;
	fprintf(stderr, "%s: cannot run %s: %s\n", prog, argv[optind],
		strerror(c));
	return c == ENOENT ? 127 : 126;
}
