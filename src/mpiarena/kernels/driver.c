/*
 * driver.c - mpiarena's measurement driver, shared by every transport module: start-up and the
 * serve loop. core.h lists the other files of the driver.
 *
 * Rank 0 reads one command per line from the control stream (stdin, or --control PATH)
 * and relays it to the other ranks; all ranks then run the cell (cell.c): warm-up, calibration
 * of the iteration count k so an observation lasts at least `target` seconds, then up to
 * `obs` observations, each preceded by the driver's own dissemination barrier. Every
 * rank's time per iteration is sent back to rank 0, which prints raw lines:
 *
 *   hello   FAMILY NP TICK THREAD_LEVEL MEASURED_RESOLUTION
 *   version ESCAPED_LIBRARY_VERSION
 *   rank    R HOST PID CPUS INIT_SECONDS LAUNCH_TO_INIT_SECONDS NUMA_NODE (-1: unknown)
 *   obs     CELL I K T_RANK0 T_RANK1 ...
 *   extra   CELL I NAME V_RANK0 V_RANK1 ...   (after its obs line: figures besides time)
 *   spent   CELL CALIBRATING OBSERVING TIMED  (rank 0's seconds in the cell: warm-up and
 *           calibration steps, observation steps, the observations' timed calls)
 *   done    CELL ok|na|invalid MESSAGE
 *   finalize R SECONDS          (every rank, after the library is shut down)
 *   cvar    NAME VALUE SCOPE    (answering `config`, escaped like version; VALUE ? if unread)
 *   config  ok N | unavailable REASON
 *
 * Commands (commands.c): `cell id=N bench=NAME size=BYTES obs=N target=S max=S window=W
 * offcache=0|1 validate=0|1 hold=S sync=loop|barrier|window [k=K]` (`window` is the burst of
 * the benchmarks that make several operations per iteration, not the window method: core.h's
 * struct bench_args), `config` (the library's
 * control variables, rank 0 only, never inside a cell) and `quit`. End of input
 * means quit. No statistics are computed here. `k` is the iteration count an earlier launch
 * calibrated for the same cell: a warm-up of a quarter of its calls checks it (twice where the
 * first read it slow), and the observations follow at k where k calls would last a quarter to
 * 4 targets (else calibration starts again from the warm-up's time per call: cell.c).
 * ARENA_BIND=core binds rank r to the r-th allowed CPU (modulo), for launchers that cannot.
 * ARENA_DATATYPE=int|char|float|double is the element type of every sum (job.c).
 *
 * How an observation's calls are timed (`sync`): timing_loop.c, timing_barrier.c,
 * timing_window.c. Every observation carries `cpu`: the rank's CPU seconds (user + system,
 * getrusage, every thread) per wall second of the loop. The benchmarks: bench_p2p.c,
 * bench_coll.c (collectives, mock-ups, bcast-ack), bench_cost.c (cpu, memory, overlap,
 * progress, threads, msgrate and their extras), bench_loggp.c (LogGP's round trips),
 * bench_app.c (the application kernels).
 * `arena --baseline BENCH SIZE NP` runs no library: it allocates and touches the buffers a
 * cell would, and prints `baseline RSS_START RSS PEAK` (bytes), the memory baseline.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#define LINE 4096

/* ARENA_DATATYPE=int|char|float|double: the sums' element type (job.c), read once; another
 * value ends the job before the library starts, as ARENA_THREAD_LEVEL's does. */
static void read_datatype(void)
{
    static const char *const names[ARENA_NTYPE] = {"int", "char", "float", "double"};
    const char *want = getenv("ARENA_DATATYPE");
    if (!want || !*want) return;
    for (int t = 0; t < ARENA_NTYPE; t++)
        if (!strcmp(want, names[t])) {
            arena_datatype = (enum arena_type)t;
            arena_datatype_asked = 1;
            return;
        }
    fprintf(stderr, "arena: ARENA_DATATYPE=%s is not int, char, float or double\n", want);
    exit(2);
}

static double realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* s with newlines and backslashes escaped and tabs made spaces, as the raw lines carry it. */
static void escape_put(const char *s)
{
    for (; *s; s++) {
        if (*s == '\n') fputs("\\n", stdout);
        else if (*s == '\t') fputc(' ', stdout);
        else if (*s == '\\') fputs("\\\\", stdout);
        else fputc(*s, stdout);
    }
}

static void escape_print(const char *tag, const char *s)
{
    fputs(tag, stdout);
    fputc('\t', stdout);
    escape_put(s);
    fputc('\n', stdout);
}

static void print_cvar(const char *name, const char *value, const char *scope)
{
    fputs("cvar\t", stdout);
    escape_put(name);
    fputc('\t', stdout);
    escape_put(value);
    fputc('\t', stdout);
    escape_put(scope);
    fputc('\n', stdout);
}

/* The `config` command: rank 0 prints the library's control variables, then how many or why
 * there are none; the other ranks do nothing. */
static void report_config(void)
{
    char why[256] = "";
    if (arena_rank != 0) return;
    if (!M->config) {
        escape_print("config\tunavailable", M->no_config ? M->no_config : "no tool interface");
        return;
    }
    int n = M->config(print_cvar, why, sizeof why);
    if (n < 0) escape_print("config\tunavailable", why);
    else printf("config\tok\t%d\n", n);
}

static double measured_resolution(void)
{
    double best = 1.0;
    for (int i = 0; i < 100; i++) {
        double a = M->now(), b2;
        while ((b2 = M->now()) == a) {}
        if (b2 - a < best) best = b2 - a;
    }
    return best;
}

static void cpu_list(char *out, size_t len)
{
    cpu_set_t set;
    size_t used = 0;
    out[0] = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) { snprintf(out, len, "?"); return; }
    for (int c = 0; c < CPU_SETSIZE && used + 8 < len; c++)
        if (CPU_ISSET(c, &set))
            used += (size_t)snprintf(out + used, len - used, used ? ",%d" : "%d", c);
}

/* Bind this rank to one allowed CPU, ranks taking them in turn. */
static void bind_to_core(void)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    int n = CPU_COUNT(&allowed), want = arena_rank % (n ? n : 1);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed) && want-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
}

/* The NUMA node this rank runs on now (getcpu(2)), or -1. */
static int numa_node(void)
{
    unsigned cpu, node;
    return getcpu(&cpu, &node) == 0 ? (int)node : -1;
}

/* Each rank's host, pid, CPU binding, start-up times and NUMA node, printed by rank 0. */
static void report_ranks(double init_s, double since_launch)
{
    char line[512], host[128], cpus[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    cpu_list(cpus, sizeof cpus);
    snprintf(line, sizeof line, "rank\t%d\t%s\t%ld\t%s\t%.9e\t%.9e\t%d", arena_rank, host,
             (long)getpid(), cpus, init_s, since_launch, numa_node());
    if (arena_rank != 0) { M->send(line, sizeof line, 0); return; }
    puts(line);
    for (int p = 1; p < arena_np; p++) {
        M->recv(line, sizeof line, p);
        puts(line);
    }
}

static void serve(FILE *control)
{
    char line[LINE];
    struct cmd c;
    for (;;) {
        if (arena_rank == 0) {
            fflush(stdout);
            if (!fgets(line, sizeof line, control)) { memset(&c, 0, sizeof c); c.kind = CMD_QUIT; }
            else if (arena_parse_cmd(line, &c) != 0) {
                printf("error\tbad command: %s", line);
                continue;
            }
            for (int p = 1; p < arena_np; p++) M->send(&c, sizeof c, p);
        } else {
            M->recv_idle(&c, sizeof c, 0);
        }
        if (c.kind == CMD_CONFIG) {
            report_config();
            continue;
        }
        if (c.kind == CMD_QUIT) { /* every rank has the word before any finalizes: an eager */
            arena_barrier();      /* send may need its sender's progress to leave the node */
            return;
        }
        arena_crash_cell(c.bench, c.size);
        arena_fault_crash(c.bench);
        arena_run_cell(&c);
        arena_crash_cell(-1, 0);
    }
}

/* The memory baseline: no library, the buffers a cell of bench at size and np would use. */
static int baseline(const char *bench, const char *size, const char *ranks)
{
    double start, rss, peak;
    struct bufs b;
    int which = arena_bench_index(bench);
    arena_resident(&start, &peak);
    arena_np = atoi(ranks);
    if (which < 0 || arena_np < 1 || atoll(size) < 0) {
        fprintf(stderr, "arena: --baseline BENCH SIZE NP\n");
        return 2;
    }
    arena_bufs_alloc(&b, which, (size_t)atoll(size), 0);
    memcpy(b.r, b.s, b.sstride < b.rstride ? b.sstride : b.rstride);
    arena_resident(&rss, &peak);
    printf("baseline\t%.0f\t%.0f\t%.0f\n", start, rss, peak);
    arena_bufs_free(&b);
    return 0;
}

int main(int argc, char **argv)
{
    char buf[8192];
    double unused;
    FILE *control = stdin;
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--library-version")) {
            M->library_version(buf, sizeof buf);
            escape_print("version", buf);
            return 0;
        }
        if (!strcmp(argv[i], "--baseline") && i + 3 < argc)
            return baseline(argv[i + 1], argv[i + 2], argv[i + 3]);
        if (!strcmp(argv[i], "--control") && i + 1 < argc) {
            control = fopen(argv[++i], "r");
            if (!control) { perror("arena: --control"); return 2; }
        }
    }
    const char *t0env = getenv("ARENA_T0");
    read_datatype();
    double before = realtime();
    M->init(&argc, &argv, &arena_rank, &arena_np, arena_thread_level, sizeof arena_thread_level);
    double after = realtime();
    arena_datatype_refused = M->reduce_as(arena_datatype);
    arena_crash_install();
    arena_faults_init(t0env);
    arena_resident(&arena_rss_init, &unused);
    const char *bind = getenv("ARENA_BIND");
    if (bind && !strcmp(bind, "core")) bind_to_core();
    if (arena_rank == 0) {
        printf("hello\t%s\t%d\t%.9e\t%s\t%.9e\n", M->family, arena_np, M->tick(),
               arena_thread_level, measured_resolution());
        M->library_version(buf, sizeof buf);
        escape_print("version", buf);
    }
    report_ranks(after - before, t0env ? after - atof(t0env) : -1.0);
    serve(control);
    fflush(stdout);
    double f0 = realtime();
    M->finalize();
    printf("finalize\t%d\t%.9e\n", arena_rank, realtime() - f0);
    fflush(stdout);
    return 0;
}
