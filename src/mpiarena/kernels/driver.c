/*
 * driver.c - mpiarena's measurement driver, shared by every transport module.
 *
 * Rank 0 reads one command per line from the control stream (stdin, or --control PATH)
 * and relays it to the other ranks; all ranks then run the cell: warm-up, calibration of
 * the iteration count k so an observation lasts at least `target` seconds, then up to
 * `obs` observations, each preceded by the driver's own dissemination barrier. Every
 * rank's time per iteration is sent back to rank 0, which prints raw lines:
 *
 *   hello   FAMILY NP TICK THREAD_LEVEL MEASURED_RESOLUTION
 *   version ESCAPED_LIBRARY_VERSION
 *   rank    R HOST PID CPUS INIT_SECONDS LAUNCH_TO_INIT_SECONDS
 *   obs     CELL I K T_RANK0 T_RANK1 ...
 *   extra   CELL I NAME V_RANK0 V_RANK1 ...   (after its obs line: figures besides time)
 *   done    CELL ok|na|invalid MESSAGE
 *   finalize R SECONDS          (every rank, after the library is shut down)
 *
 * Commands: `cell id=N bench=NAME size=BYTES obs=N target=S max=S window=W offcache=0|1
 * validate=0|1 hold=S sync=loop|barrier|window [k=K]` and `quit`. End of input means quit. No
 * statistics are computed here. `k` is the iteration count an earlier launch calibrated for the
 * same cell: calibration starts there and needs one round that reaches the target (a launch
 * more than 4x faster than the one that set it calibrates again from there).
 * ARENA_BIND=core binds rank r to the r-th allowed CPU (modulo), for launchers that cannot.
 *
 * How an observation's calls are timed (`sync`; barrier and window: collectives only, not
 * bcast-ack, which times itself):
 *   loop     k calls back to back, the loop's time divided by k (calls may overlap: a bcast
 *            root does not wait for its leaves)
 *   barrier  the driver's own barrier before every call, each call timed alone; the rank's
 *            mean per call (IMB's scheme: the slowest rank's figure is IMB's t_max)
 *   window   every call released at a common start time on a global clock (clock.c: each
 *            rank's offset and drift to rank 0, refreshed at a window cell when a second old);
 *            rank 0 picks the first start (now + a margin) and the window length (twice the
 *            slowest rank's time per call under the barrier method during calibration, plus
 *            round trips and 2 us; k is chosen so that k windows last `target`). A call's time
 *            is its exit minus its window's start on the global clock; a call that any rank
 *            reached after its start is dropped. The rank's mean over the kept calls, and extras
 *            `late` (the share of calls dropped; an observation that kept none is taken again,
 *            its calls counted in the next one's share), `clock_offset` (the fitted offset at
 *            the observation, seconds) and `clock_drift` (seconds per second; rank 0: 0).
 *            ARENA_LATE_RANK=R (tests) makes rank R arrive half a window late at every 5th call.
 *
 * Every observation carries `cpu`: the rank's CPU seconds (user + system, getrusage, every
 * thread) per wall second of the loop. The cost benchmarks add their own extras:
 *   cpu       rank 1 blocked in a receive while rank 0 sleeps `hold` s (k = 1); size ignored
 *   memory    one alltoall (pingpong where there is none); rss_init (after init), rss and peak
 *             (VmRSS, VmHWM; heap trimmed and peak reset at the start of the cell), bytes
 *   overlap   per operation (exchange with peer; MPI_Iallreduce, MPI_Ialltoall where the
 *             library has them): pure (post + wait), compute (a loop as long as pure, no
 *             library call) and overlapped (post + compute + wait), seconds per iteration
 *   progress  rank 0 posts a send, rank 1 a receive of size bytes, both compute 4x the
 *             transfer time without library calls, then wait: transfer (post + wait alone)
 *             and after (the wait after the compute), seconds
 *   threads   size = T threads per rank (MPI_THREAD_MULTIPLE), each streaming windows of
 *             8-byte messages on its own tag; time per message
 *   msgrate   windows of W non-blocking sends of size bytes, acknowledged; time per message
 * bcast-ack (no extras) is Nevin's broadcast after Nupairoj and Ni: for each non-root rank in
 * turn, k broadcasts each followed by that rank's acknowledgement to the root, timed at the
 * root; rank 0 reports the slowest leaf's time per iteration, the other ranks 0.
 * The application kernels (app-pi, app-matvec, app-matmul, app-rowmm, app-primes, app-md,
 * app-stencil: apps.c; size = the problem size) run once per observation (k = 1) and report the
 * run's wall time, t_send, t_recv, t_sendrecv, t_scatter, t_reduce (seconds inside each kind of
 * call they make) and their correctness figure (pi_error, checksum_error, primes, energy_drift;
 * rank 0's, NaN elsewhere); a wrong answer ends the cell `invalid`.
 * `arena --baseline BENCH SIZE NP` runs no library: it allocates and touches the buffers a
 * cell would, and prints `baseline RSS_START RSS PEAK` (bytes), the memory baseline.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"

#define M (&arena_module_impl)
#define KMAX (1L << 24)
#define LINE 4096
#define OFFCACHE_BYTES (64L << 20)
#define MAX_THREADS 64

enum bench {
    B_WTIME, B_PINGPONG, B_PING, B_SENDRECV, B_BIBW,
    B_BARRIER, B_BCAST, B_SCATTER, B_GATHER, B_REDUCE, B_ALLREDUCE, B_ALLGATHER, B_ALLTOALL,
    B_BCAST_ACK, /* a collective, but not in arena_coll's order: see is_coll and coll_of */
    B_CPU, B_MEMORY, B_OVERLAP, B_PROGRESS, B_THREADS, B_MSGRATE,
    B_APP_PI, B_APP_MATVEC, B_APP_MATMUL, B_APP_ROWMM, B_APP_PRIMES, B_APP_MD, B_APP_STENCIL,
    B_COUNT
};
static const char *bench_names[B_COUNT] = {
    "wtime", "pingpong", "ping", "sendrecv", "bibw",
    "barrier", "bcast", "scatter", "gather", "reduce", "allreduce", "allgather", "alltoall",
    "bcast-ack",
    "cpu", "memory", "overlap", "progress", "threads", "msgrate",
    "app-pi", "app-matvec", "app-matmul", "app-rowmm", "app-primes", "app-md", "app-stencil",
};

/* Figures an observation carries besides its time (see the header). */
enum extra {
    X_CPU, X_RSS_INIT, X_RSS, X_PEAK,
    X_PURE, X_COMPUTE, X_OVERLAPPED, X_PURE_AR, X_COMPUTE_AR, X_OVERLAPPED_AR,
    X_PURE_A2A, X_COMPUTE_A2A, X_OVERLAPPED_A2A, X_TRANSFER, X_AFTER,
    X_T_SEND, X_T_RECV, X_T_SENDRECV, X_T_SCATTER, X_T_REDUCE, /* in arena_call's order */
    X_PI_ERROR, X_CHECKSUM_ERROR, X_PRIMES, X_ENERGY_DRIFT,
    X_LATE, X_CLOCK_OFFSET, X_CLOCK_DRIFT,
    X_COUNT
};
static const char *extra_names[X_COUNT] = {
    "cpu", "rss_init", "rss", "peak",
    "pure", "compute", "overlapped", "pure_iallreduce", "compute_iallreduce",
    "overlapped_iallreduce", "pure_ialltoall", "compute_ialltoall", "overlapped_ialltoall",
    "transfer", "after",
    "t_send", "t_recv", "t_sendrecv", "t_scatter", "t_reduce",
    "pi_error", "checksum_error", "primes", "energy_drift",
    "late", "clock_offset", "clock_drift",
};
/* The correctness figure of each application kernel, in arena_app's order. */
static const enum extra app_check[ARENA_NAPP] = {
    X_PI_ERROR, X_CHECKSUM_ERROR, X_CHECKSUM_ERROR, X_CHECKSUM_ERROR, X_PRIMES, X_ENERGY_DRIFT,
    X_CHECKSUM_ERROR,
};
static const enum arena_nb overlap_ops[3] = {ARENA_NB_EXCHANGE, ARENA_NB_ALLREDUCE,
                                             ARENA_NB_ALLTOALL};

enum step_kind { STEP_RUN, STEP_OBS, STEP_END };
enum cmd_kind { CMD_CELL, CMD_QUIT };
enum sync { SYNC_LOOP, SYNC_BARRIER, SYNC_WINDOW, SYNC_COUNT };
static const char *sync_names[SYNC_COUNT] = {"loop", "barrier", "window"};

struct cmd {
    int64_t id, size, k;
    int32_t kind, bench, nobs, window, offcache, validate, sync;
    double target, max_time, hold;
};

struct step {
    int64_t k;
    int32_t kind, idx;
    double start, len; /* window method: the first window's start (global clock), its length */
};

struct bufs {
    unsigned char *s, *r; /* first slot of each, page-aligned */
    void *s_mem, *r_mem;  /* what malloc gave (LAM replaces malloc/free but not aligned_alloc) */
    size_t sstride, rstride;
    long nslots;
};

static int rank, np;
static int late_rank = -1; /* ARENA_LATE_RANK: a rank that arrives late (window method, tests) */
static char thread_level[32];
static double rss_init;
static char app_bad[160]; /* rank 0: why an application kernel's answer was wrong this cell */
static double extra_now[X_COUNT]; /* this observation's extras, set by the loop that ran */
static int extra_set[X_COUNT];    /* which extras the current cell has */
static double planted = 1.0; /* test-only launch effect: see plant_launch_effect */

static void note(enum extra x, double v)
{
    extra_now[x] = v;
    extra_set[x] = 1;
}

static double realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int is_p2p(int b) { return b >= B_PINGPONG && b <= B_BIBW; }
/* Collectives: B_BARRIER..B_ALLTOALL map one to one onto arena_coll; bcast-ack is a bcast. */
static int is_coll(int b) { return (b >= B_BARRIER && b <= B_ALLTOALL) || b == B_BCAST_ACK; }
/* Collectives that the barrier and window methods can time one call at a time. */
static int is_synced(int b) { return is_coll(b) && b != B_BCAST_ACK; }
/* Benchmarks run by ranks 0 and 1 only. */
static int is_pair(int b) { return is_p2p(b) || b == B_CPU || (b >= B_PROGRESS && b <= B_MSGRATE); }
static int is_app(int b) { return b >= B_APP_PI && b < B_COUNT; }
static enum arena_coll coll_of(int b)
{
    return b == B_BCAST_ACK ? ARENA_BCAST : (enum arena_coll)(b - B_BARRIER);
}

/* Bytes of the send and receive buffer a benchmark needs per slot. */
static void buffer_sizes(int b, size_t size, size_t *sn, size_t *rn)
{
    size_t ints = (size + 3) / 4 * 4;
    size_t all = size * (size_t)np;
    switch (b) {
    case B_WTIME: case B_BARRIER: *sn = *rn = 0; break;
    case B_SCATTER: *sn = all; *rn = size; break;
    case B_GATHER: case B_ALLGATHER: *sn = size; *rn = all; break;
    case B_ALLTOALL: *sn = *rn = all; break;
    case B_REDUCE: case B_ALLREDUCE: *sn = *rn = ints; break;
    case B_MEMORY: *sn = *rn = all; break;
    case B_OVERLAP: *sn = *rn = all > ints ? all : ints; break;
    case B_CPU: *sn = *rn = 1; break;
    case B_THREADS: *sn = 8; *rn = 64 * size; break;
    case B_APP_PI: case B_APP_MATVEC: case B_APP_MATMUL: case B_APP_ROWMM: case B_APP_PRIMES:
    case B_APP_MD: case B_APP_STENCIL: *sn = *rn = 0; break; /* the kernels allocate their own */
    default: *sn = *rn = size; break;
    }
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static void bufs_alloc(struct bufs *b, int bench, size_t size, int offcache)
{
    size_t sn, rn;
    buffer_sizes(bench, size, &sn, &rn);
    b->sstride = round_up(sn ? sn : 1, 4096);
    b->rstride = round_up(rn ? rn : 1, 4096);
    b->nslots = 1;
    if (offcache) {
        size_t per = b->sstride > b->rstride ? b->sstride : b->rstride;
        b->nslots = (long)(OFFCACHE_BYTES / per);
        if (b->nslots < 2)
            b->nslots = 2;
    }
    b->s_mem = malloc(b->sstride * (size_t)b->nslots + 4096);
    b->r_mem = malloc(b->rstride * (size_t)b->nslots + 4096);
    if (!b->s_mem || !b->r_mem)
        M->abort("out of memory for benchmark buffers");
    b->s = (unsigned char *)round_up((size_t)b->s_mem, 4096);
    b->r = (unsigned char *)round_up((size_t)b->r_mem, 4096);
    memset(b->s, 1, b->sstride * (size_t)b->nslots);
    memset(b->r, 0, b->rstride * (size_t)b->nslots);
}

static void bufs_free(struct bufs *b)
{
    free(b->s_mem);
    free(b->r_mem);
}

/* The driver's own barrier, identical for every library: dissemination over send/recv. */
static void arena_barrier(void)
{
    unsigned char token = 0;
    for (int d = 1; d < np; d <<= 1) {
        M->send(&token, 1, (rank + d) % np);
        M->recv(&token, 1, (rank - d + np) % np);
    }
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Resident and peak resident bytes of this process (VmRSS, VmHWM). */
static void resident(double *rss, double *peak)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    *rss = *peak = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6)) *rss = atof(line + 6) * 1024;
        else if (!strncmp(line, "VmHWM:", 6)) *peak = atof(line + 6) * 1024;
    }
    fclose(f);
}

/* Give freed heap back and restart the peak, so that a cell's memory is its own. */
static void memory_fresh(void)
{
    malloc_trim(0);
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* Compute for d seconds without calling the library. */
static void compute(double d)
{
    volatile double x = 1;
    double end = arena_monotonic() + d;
    while (arena_monotonic() < end)
        for (int i = 0; i < 64; i++) x = x * 1.0000001 + 1e-9;
}

/* Ranks 0 and 1 meet: a 1-byte round trip. */
static void pair_sync(void)
{
    unsigned char t = 0;
    if (rank == 0) { M->send(&t, 1, 1); M->recv(&t, 1, 1); }
    else { M->recv(&t, 1, 0); M->send(&t, 1, 0); }
}

/* Rank 1 blocks in a receive while rank 0 sleeps `hold` seconds. */
static void blocked_receive(double hold)
{
    unsigned char one = 1;
    if (rank == 0) {
        struct timespec ts = {(time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9)};
        nanosleep(&ts, NULL);
        M->send(&one, 1, 1);
    } else {
        M->recv(&one, 1, 0);
    }
}

/* The memory benchmark's work: an alltoall, or a pingpong where the family has none. */
static void exchange_all(size_t size, const struct bufs *b)
{
    if (M->has_coll(ARENA_ALLTOALL, size)) M->coll(ARENA_ALLTOALL, b->s, b->r, size);
    else if (rank == 0) { M->send(b->s, size, 1); M->recv(b->r, size, 1); }
    else if (rank == 1) { M->recv(b->r, size, 0); M->send(b->s, size, 0); }
}

/* One overlap operation k times: alone, the compute alone, then overlapped (OSU, IMB-NBC). */
static void overlap_op(int op, size_t size, long k, const struct bufs *b, enum extra x)
{
    int peer = rank == 0 ? 1 : 0;
    if (overlap_ops[op] == ARENA_NB_EXCHANGE && rank >= 2) {
        note(x, 0), note(x + 1, 0), note(x + 2, 0);
        return;
    }
    double t0 = M->now();
    for (long i = 0; i < k; i++) {
        if (!M->start(overlap_ops[op], b->s, b->r, size, peer))
            return;
        M->wait();
    }
    double pure = (M->now() - t0) / (double)k;
    t0 = M->now();
    for (long i = 0; i < k; i++)
        compute(pure);
    double alone = (M->now() - t0) / (double)k;
    t0 = M->now();
    for (long i = 0; i < k; i++) {
        M->start(overlap_ops[op], b->s, b->r, size, peer);
        compute(pure);
        M->wait();
    }
    note(x, pure), note(x + 1, alone), note(x + 2, (M->now() - t0) / (double)k);
}

/* A send (rank 0) and receive (rank 1) alone, then posted before 4x that much compute. */
static void progress_loop(size_t size, long k, const struct bufs *b)
{
    enum arena_nb op = rank == 0 ? ARENA_NB_SEND : ARENA_NB_RECV;
    double transfer = 0, after = 0;
    for (long i = 0; i < k; i++) {
        pair_sync();
        double t0 = M->now();
        M->start(op, b->s, b->r, size, 1 - rank);
        M->wait();
        transfer += M->now() - t0;
    }
    transfer /= (double)k;
    for (long i = 0; i < k; i++) {
        pair_sync();
        M->start(op, b->s, b->r, size, 1 - rank);
        compute(4 * transfer);
        double t0 = M->now();
        M->wait();
        after += M->now() - t0;
    }
    note(X_TRANSFER, transfer), note(X_AFTER, after / (double)k);
}

struct stream_arg {
    const struct bufs *b;
    long k;
    int window, thread;
};

static void *stream_thread(void *p)
{
    const struct stream_arg *a = p;
    for (long i = 0; i < a->k; i++)
        M->stream(a->b->s, a->b->r + 64 * (size_t)a->thread, 8, 1 - rank, a->window,
                  10 + a->thread, rank == 0);
    return NULL;
}

/* n threads per rank, each streaming windows of 8-byte messages on its own tag. */
static void threads_loop(int n, long k, const struct bufs *b, int window)
{
    pthread_t th[MAX_THREADS];
    struct stream_arg args[MAX_THREADS];
    for (int t = 0; t < n; t++) {
        args[t] = (struct stream_arg){b, k, window, t};
        if (t > 0 && pthread_create(&th[t], NULL, stream_thread, &args[t]) != 0)
            M->abort("cannot start a thread");
    }
    stream_thread(&args[0]);
    for (int t = 1; t < n; t++)
        pthread_join(th[t], NULL);
}

/* A window of sends from rank 0 to rank 1, acknowledged (OSU's and Sandia's message rate). */
static void msgrate_window(size_t size, const struct bufs *b, int window)
{
    unsigned char ack = 0;
    if (M->stream) {
        M->stream(b->s, b->r, size, 1 - rank, window, 3, rank == 0);
        return;
    }
    for (int i = 0; i < window; i++) {
        if (rank == 0) M->send(b->s, size, 1);
        else M->recv(b->r, size, 0);
    }
    if (rank == 0) M->recv(&ack, 1, 1);
    else M->send(&ack, 1, 0);
}

/* k iterations of a cost benchmark; its extras are noted. */
static void run_cost(int bench, size_t size, long k, const struct bufs *b, int window, double hold)
{
    double rss, peak;
    switch (bench) {
    case B_CPU: for (long i = 0; i < k; i++) blocked_receive(hold); break;
    case B_MEMORY:
        for (long i = 0; i < k; i++) exchange_all(size, b);
        resident(&rss, &peak);
        note(X_RSS_INIT, rss_init), note(X_RSS, rss), note(X_PEAK, peak);
        break;
    case B_OVERLAP:
        for (int op = 0; op < 3; op++) overlap_op(op, size, k, b, (enum extra)(X_PURE + 3 * op));
        break;
    case B_PROGRESS: progress_loop(size, k, b); break;
    case B_THREADS: threads_loop((int)size, k, b, window); break;
    default: for (long i = 0; i < k; i++) msgrate_window(size, b, window); break;
    }
}

/* Nevin's broadcast (1996, after Nupairoj and Ni): for each non-root rank in turn, all ranks
 * meet, then k iterations of a broadcast from rank 0 followed by that leaf's acknowledgement to
 * the root; the other leaves only broadcast. The root's time per iteration, the worst over the
 * leaves, estimates when the last rank has the data; it is returned on rank 0 and 0 elsewhere,
 * so the collectives' reduction (the slowest rank) reports rank 0's figure. The acknowledgement
 * is a 0-byte message where the family has one, else 1 byte (a byte stream has no 0-byte
 * message). */
static double bcast_ack(size_t size, long k, const struct bufs *b)
{
    unsigned char ack = 0;
    size_t ack_bytes = M->zero_byte_messages ? 0 : 1;
    double worst = 0;
    for (int leaf = 1; leaf < np; leaf++) {
        long slot = 0;
        arena_barrier();
        double t0 = M->now();
        for (long i = 0; i < k; i++) {
            unsigned char *r = b->r + (size_t)slot * b->rstride;
            if (++slot == b->nslots)
                slot = 0;
            M->coll(ARENA_BCAST, r, r, size);
            if (rank == 0) M->recv(&ack, ack_bytes, leaf);
            else if (rank == leaf) M->send(&ack, ack_bytes, 0);
        }
        double per = (M->now() - t0) / (double)k;
        if (per > worst)
            worst = per;
    }
    return rank == 0 ? worst : 0;
}

/* k runs of an application kernel (apps.c): its wall time per run; the time per call kind and
 * the correctness figure of the last run are noted, a wrong answer kept for the cell. */
static double run_app(int bench, size_t size, long k)
{
    struct arena_app_out o;
    enum arena_app app = (enum arena_app)(bench - B_APP_PI);
    double wall = 0;
    for (long i = 0; i < k; i++) {
        arena_app_run(app, (long)size, rank, np, &o);
        wall += o.wall;
        if (o.bad[0] && !app_bad[0]) snprintf(app_bad, sizeof app_bad, "%s", o.bad);
    }
    for (int call = 0; call < ARENA_NCALL; call++)
        if (arena_app_calls[app] & 1u << call) note((enum extra)(X_T_SEND + call), o.calls[call]);
    note(app_check[app], o.check);
    return wall / (double)k;
}

static volatile double sink; /* the wtime benchmark's clock readings go here */

/* One iteration of a timer, point-to-point or collective benchmark on buffers s and r. */
static void one_call(int bench, size_t size, unsigned char *s, unsigned char *r, int window)
{
    int peer = rank == 0 ? 1 : 0;
    switch (bench) {
    case B_WTIME: sink += M->now(); break;
    case B_PINGPONG:
        if (rank == 0) { M->send(s, size, 1); M->recv(r, size, 1); }
        else { M->recv(r, size, 0); M->send(s, size, 0); }
        break;
    case B_PING:
        if (rank == 0) M->send(s, size, 1);
        else M->recv(r, size, 0);
        break;
    case B_SENDRECV: M->sendrecv(s, r, size, peer); break;
    case B_BIBW: M->window(s, r, size, peer, window); break;
    case B_BCAST: M->coll(ARENA_BCAST, r, r, size); break;
    default: M->coll(coll_of(bench), s, r, size); break;
    }
}

/* The buffers of the iteration in *slot; *slot moves on to the next (off-cache rotation). */
static void slot_bufs(const struct bufs *b, long *slot, unsigned char **s, unsigned char **r)
{
    *s = b->s + (size_t)*slot * b->sstride;
    *r = b->r + (size_t)*slot * b->rstride;
    if (++*slot == b->nslots)
        *slot = 0;
}

/* Run k iterations of the benchmark back to back; return seconds per iteration on this rank
 * (msgrate and threads: per message). */
static double run(int bench, size_t size, long k, const struct bufs *b, int window, double hold)
{
    unsigned char ack = 0, *s, *r;
    long slot = 0;
    int active = !is_pair(bench) || rank < 2;
    if (is_app(bench))
        return run_app(bench, size, k);
    if (bench == B_BCAST_ACK)
        return bcast_ack(size, k, b);
    double t0 = M->now();
    if (active && bench >= B_CPU) {
        run_cost(bench, size, k, b, window, hold);
    } else if (active) {
        for (long i = 0; i < k; i++) {
            slot_bufs(b, &slot, &s, &r);
            one_call(bench, size, s, r, window);
        }
        if (bench == B_PING) { /* the stream ends when the receiver says it has all */
            if (rank == 0) M->recv(&ack, 1, 1);
            else M->send(&ack, 1, 0);
        }
    }
    double per = (M->now() - t0) / (double)k * planted;
    if (bench == B_MSGRATE) return per / window;
    if (bench == B_THREADS) return per / ((double)window * (double)size);
    return per;
}

/* k calls of a collective, each after the driver's barrier and timed alone: the mean per call
 * on this rank. */
static double barrier_calls(int bench, size_t size, long k, const struct bufs *b)
{
    unsigned char *s, *r;
    long slot = 0;
    double sum = 0;
    for (long i = 0; i < k; i++) {
        slot_bufs(b, &slot, &s, &r);
        arena_barrier();
        double t0 = M->now();
        one_call(bench, size, s, r, 1);
        sum += M->now() - t0;
    }
    return sum / (double)k * planted;
}

/* Wait for time `at` on the global clock; non-zero if it had already passed, or if the wait
 * ended more than a microsecond after it (the rank was interrupted while waiting). */
static int wait_until(double at)
{
    double g = arena_global_now();
    if (g > at)
        return 1;
    while (g < at)
        g = arena_global_now();
    return g > at + 1e-6;
}

/* Every rank learns which of the k calls any rank reached late. */
static void share_late(unsigned char *late, long k)
{
    if (rank != 0) {
        M->send(late, (size_t)k, 0);
        M->recv(late, (size_t)k, 0);
        return;
    }
    unsigned char *theirs = malloc((size_t)k);
    if (!theirs)
        M->abort("out of memory for late flags");
    for (int p = 1; p < np; p++) {
        M->recv(theirs, (size_t)k, p);
        for (long i = 0; i < k; i++) late[i] |= theirs[i];
    }
    free(theirs);
    for (int p = 1; p < np; p++) M->send(late, (size_t)k, p);
}

/* k calls of a collective released at start, start + len, ... on the global clock; a call's
 * time is its exit minus its window's start. Calls that any rank reached late are dropped and
 * their share noted; returns the mean over the kept calls on this rank (NaN if none). */
static double window_calls(int bench, size_t size, long k, const struct bufs *b, double start,
                           double len)
{
    unsigned char *late = calloc((size_t)k, 1), *s, *r;
    double *t = malloc((size_t)k * sizeof *t), sum = 0;
    long slot = 0, kept = 0;
    if (!late || !t)
        M->abort("out of memory for window timings");
    for (long i = 0; i < k; i++) {
        double at = start + (double)i * len;
        slot_bufs(b, &slot, &s, &r);
        if (rank == late_rank && i % 5 == 0)
            wait_until(at + len / 2);
        late[i] = (unsigned char)wait_until(at);
        one_call(bench, size, s, r, 1);
        t[i] = arena_global_now() - at;
    }
    share_late(late, k);
    for (long i = 0; i < k; i++)
        if (!late[i]) { sum += t[i]; kept++; }
    note(X_LATE, (double)(k - kept) / (double)k);
    free(late);
    free(t);
    return kept ? sum / (double)kept * planted : NAN;
}

static unsigned char pat(long src, size_t i)
{
    return (unsigned char)((src * 131 + (long)i * 7 + (long)(i >> 8) * 13 + 1) & 0xff);
}

static void fill(unsigned char *p, size_t n, long src)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pat(src, i);
}

/* Index of the first wrong byte, or -1. */
static long check(const unsigned char *p, size_t n, long src)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(src, i))
            return (long)i;
    return -1;
}

static int reduce_value(size_t i, int r) { return (int)(i % 1000) + r; }

/* One untimed iteration with patterned data; returns a message on failure, or NULL. */
static const char *validate(int bench, size_t size, const struct bufs *b, int window, char *msg,
                            size_t len)
{
    unsigned char *s = b->s, *r = b->r;
    long bad = -1;
    int *si = (int *)s, *ri = (int *)r;
    size_t nint = (size + 3) / 4;
    int checks = 0;
    memset(r, 0, b->rstride);
    switch (bench) {
    case B_SCATTER:
        for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, j);
        break;
    case B_ALLTOALL:
        for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, (long)rank * np + j);
        break;
    case B_BCAST: case B_BCAST_ACK:
        if (rank == 0) fill(r, size, 0);
        break;
    case B_REDUCE: case B_ALLREDUCE:
        for (size_t i = 0; i < nint; i++) si[i] = reduce_value(i, rank);
        break;
    default: fill(s, size, rank); break;
    }
    run(bench, size, 1, b, window, 0);
    const char *fault = getenv("ARENA_FAULT"); /* self-test of the checker */
    if (fault && strcmp(fault, "corrupt") == 0 && size > 0)
        r[size / 2] ^= 0x5a;
    switch (bench) {
    case B_PINGPONG: case B_SENDRECV: case B_BIBW:
        if (rank < 2) { bad = check(r, size, rank == 0 ? 1 : 0); checks = 1; }
        break;
    case B_PING:
        if (rank == 1) { bad = check(r, size, 0); checks = 1; }
        break;
    case B_BCAST: case B_BCAST_ACK: case B_SCATTER:
        bad = check(r, size, bench == B_SCATTER ? rank : 0); checks = 1;
        break;
    case B_GATHER: case B_ALLGATHER:
        if (rank == 0 || bench == B_ALLGATHER)
            for (int j = 0; j < np && bad < 0; j++) { bad = check(r + (size_t)j * size, size, j); checks = 1; }
        break;
    case B_ALLTOALL:
        for (int j = 0; j < np && bad < 0; j++) { bad = check(r + (size_t)j * size, size, (long)j * np + rank); checks = 1; }
        break;
    case B_REDUCE: case B_ALLREDUCE:
        if (rank == 0 || bench == B_ALLREDUCE) {
            checks = 1;
            for (size_t i = 0; i < nint && bad < 0; i++)
                if (ri[i] != np * (int)(i % 1000) + np * (np - 1) / 2) bad = (long)i * 4;
        }
        break;
    default: break;
    }
    if (!checks || bad < 0)
        return NULL;
    snprintf(msg, len, "rank %d received wrong data at byte %ld of %zu", rank, bad, size);
    return msg;
}

static void relay_step(struct step *st)
{
    if (rank == 0)
        for (int p = 1; p < np; p++) M->send(st, sizeof *st, p);
    else
        M->recv(st, sizeof *st, 0);
}

/* One step's calls timed by the cell's method: seconds per call on this rank. The window
 * method's warm-up and calibration run under the barrier method (they size the window). */
static double timed(const struct cmd *c, const struct bufs *b, const struct step *st)
{
    size_t size = (size_t)c->size;
    if (c->sync == SYNC_WINDOW && st->kind == STEP_OBS)
        return window_calls(c->bench, size, st->k, b, st->start, st->len);
    if (c->sync != SYNC_LOOP)
        return barrier_calls(c->bench, size, st->k, b);
    return run(c->bench, size, st->k, b, c->window, st->kind == STEP_OBS ? c->hold : 0);
}

/* Rank 0 gets the largest t of all ranks; the others keep their own. */
static double slowest(double t)
{
    double theirs;
    if (rank != 0) {
        M->send(&t, sizeof t, 0);
        return t;
    }
    for (int p = 1; p < np; p++) {
        M->recv(&theirs, sizeof theirs, p);
        t = theirs > t ? theirs : t;
    }
    return t;
}

/* Rank 0, window method, after a step: the window's length from the slowest rank's time per
 * call (*t) in a calibration step, which becomes *t (k is calibrated on what an observation's
 * call costs: its window); the next observation's start a margin from now that covers relaying
 * it and the barrier. */
static void next_window(struct step *st, double *t)
{
    double rtt = arena_clock_rtt();
    if (st->kind == STEP_RUN)
        *t = st->len = 2 * *t + 4 * rtt + 2e-6;
    st->start = arena_global_now() + 2e-4 + 20 * np * rtt;
}

/* Rank 0 decides each step (warm-up, calibration, observations, end); all ranks follow. */
static long run_steps(const struct cmd *c, const struct bufs *b, double *times, double *xs,
                      int64_t *k)
{
    int hinted = c->k > 0 && c->k <= KMAX;
    struct step st = {hinted ? c->k : 1, STEP_RUN, 0, 0, 0};
    long nobs = 0, rounds = 0;
    /* k must reach the target twice in a row (one hiccup must not fix it); an earlier launch's
     * k has reached it twice already */
    int confirmed = hinted;
    int window = c->sync == SYNC_WINDOW;
    double start = M->now(), wiped = 0; /* window: calls of observations that kept none */
    if (window)
        arena_clock_refresh(M, rank, np);
    for (;;) {
        relay_step(&st);
        if (st.kind == STEP_END)
            break;
        arena_barrier();
        double w0 = arena_monotonic(), c0 = cpu_seconds();
        double t = timed(c, b, &st);
        note(X_CPU, (cpu_seconds() - c0) / (arena_monotonic() - w0));
        if (window && st.kind == STEP_OBS && isnan(t)) {
            wiped += (double)st.k; /* no observation: redone, its calls counted as dropped */
        } else if (window && st.kind == STEP_OBS) {
            double k1 = (double)st.k;
            note(X_LATE, (extra_now[X_LATE] * k1 + wiped) / (k1 + wiped));
            note(X_CLOCK_OFFSET, arena_clock_offset(w0));
            note(X_CLOCK_DRIFT, arena_clock_drift());
            wiped = 0;
        } else if (window) {
            t = slowest(t);
        }
        if (st.kind == STEP_OBS && !isnan(t)) {
            for (int x = 0; x < X_COUNT; x++)
                xs[(size_t)x * (size_t)c->nobs + (size_t)nobs] = extra_now[x];
            times[nobs++] = t;
            *k = st.k;
        }
        if (rank != 0)
            continue;
        rounds++;
        if (window)
            next_window(&st, &t);
        if ((c->bench == B_CPU || is_app(c->bench)) && st.kind == STEP_RUN) { /* k = 1 */
            st.kind = STEP_OBS;
            continue;
        }
        if (st.kind == STEP_RUN && hinted && rounds > 1 && st.k > 1
            && t * (double)st.k > 4 * c->target) {
            double k1 = c->target * 1.25 / (t > 1e-12 ? t : 1e-12);
            st.k = k1 < 1 ? 1 : (int64_t)k1;
            hinted = confirmed = 0;
        } else if (st.kind == STEP_RUN && rounds > 1 && t * (double)st.k < c->target
                   && st.k < KMAX) {
            double grow = c->target / (t * (double)st.k > 1e-9 ? t * (double)st.k : 1e-9) * 1.25;
            grow = grow < 2 ? 2 : grow > 1024 ? 1024 : grow;
            st.k = (int64_t)((double)st.k * grow);
            st.k = st.k > KMAX ? KMAX : st.k;
            confirmed = 0;
        } else if (st.kind == STEP_RUN && rounds > 1 && !confirmed && st.k < KMAX) {
            confirmed = 1;
        } else if (st.kind == STEP_RUN && rounds > 1) {
            st.kind = STEP_OBS;
        } else if (st.kind == STEP_OBS) {
            st.idx += !isnan(t);
            if (st.idx >= c->nobs || M->now() - start > c->max_time)
                st.kind = STEP_END;
        }
    }
    return nobs;
}

static void escape_print(const char *tag, const char *s)
{
    fputs(tag, stdout);
    fputc('\t', stdout);
    for (; *s; s++) {
        if (*s == '\n') fputs("\\n", stdout);
        else if (*s == '\t') fputc(' ', stdout);
        else if (*s == '\\') fputs("\\\\", stdout);
        else fputc(*s, stdout);
    }
    fputc('\n', stdout);
}

/* Why a cell cannot run here (written into msg), or NULL. */
static const char *unrunnable(const struct cmd *c, char *msg, size_t len)
{
    int b = c->bench;
    int sized = is_p2p(b) || b == B_MSGRATE || b == B_PROGRESS || b == B_OVERLAP;
    if (b < 0) return "unknown benchmark";
    if (is_pair(b) && np < 2) return "needs at least 2 ranks";
    if (b == B_BCAST_ACK && np < 2) return "needs at least 2 ranks: a non-root rank acknowledges";
    if (sized && c->size == 0 && !M->zero_byte_messages) return "a byte stream has no 0-byte message";
    if (is_coll(b) && !M->has_coll(coll_of(b), (size_t)c->size))
        return c->size == 0 && M->has_coll(coll_of(b), 1)
            ? "this family cannot express a 0-byte message in this collective"
            : "not expressible in this family";
    if (c->size < 0 || c->nobs < 1 || c->window < 1 || c->hold < 0) return "bad cell parameters";
    if (c->sync < 0) return "unknown timing method: sync is loop, barrier or window";
    if (c->sync != SYNC_LOOP && !is_synced(b))
        return "the barrier and window methods time collectives only (not bcast-ack)";
    if ((b == B_OVERLAP || b == B_PROGRESS) && !M->start)
        return "this family has no non-blocking operations";
    if (b == B_THREADS && !M->stream) return "this family has no thread-safe message streams";
    if (is_app(b)) return arena_app_unrunnable((enum arena_app)(b - B_APP_PI), (long)c->size, np);
    if (b == B_THREADS && (c->size < 1 || c->size > MAX_THREADS))
        return "threads: the size is the number of threads per rank, 1 to 64";
    if (b == B_THREADS && strcmp(thread_level, "multiple") != 0) {
        snprintf(msg, len, "threads need MPI_THREAD_MULTIPLE but the library granted %s "
                 "(ask for it with ARENA_THREAD_LEVEL=multiple)", thread_level);
        return msg;
    }
    return NULL;
}

static void print_extras(const struct cmd *c, long i, double **xs)
{
    for (int x = 0; x < X_COUNT; x++) {
        if (!extra_set[x])
            continue;
        printf("extra\t%lld\t%ld\t%s", (long long)c->id, i, extra_names[x]);
        for (int p = 0; p < np; p++) printf("\t%.9e", xs[p][(size_t)x * (size_t)c->nobs + (size_t)i]);
        putchar('\n');
    }
}

static void run_cell(const struct cmd *c)
{
    char msg[256] = "";
    const char *why = unrunnable(c, msg, sizeof msg);
    if (why) {
        if (rank == 0) printf("done\t%lld\tna\t%s\n", (long long)c->id, why);
        return;
    }
    memset(extra_set, 0, sizeof extra_set);
    app_bad[0] = 0;
    if (c->bench == B_MEMORY)
        memory_fresh();
    struct bufs b;
    bufs_alloc(&b, c->bench, (size_t)c->size, c->offcache);
    size_t nx = (size_t)X_COUNT * (size_t)c->nobs;
    double *times = calloc((size_t)c->nobs, sizeof *times), *xs = calloc(nx, sizeof *xs);
    int64_t k = 0;
    if (!times || !xs)
        M->abort("out of memory for observations");
    long n = run_steps(c, &b, times, xs, &k);
    const char *bad = c->validate && !is_app(c->bench) ? validate(c->bench, (size_t)c->size, &b, c->window, msg, sizeof msg) : NULL;
    if (!bad && app_bad[0]) bad = app_bad;
    if (rank == 0) {
        double **all = calloc((size_t)np, sizeof *all), **allx = calloc((size_t)np, sizeof *allx);
        char peer_msg[256];
        all[0] = times;
        allx[0] = xs;
        for (int p = 1; p < np; p++) {
            all[p] = calloc((size_t)c->nobs, sizeof **all);
            allx[p] = calloc(nx, sizeof **allx);
            M->recv(all[p], (size_t)n * sizeof **all, p);
            M->recv(allx[p], nx * sizeof **allx, p);
            M->recv(peer_msg, sizeof peer_msg, p);
            if (!bad && peer_msg[0]) { snprintf(msg, sizeof msg, "%s", peer_msg); bad = msg; }
        }
        for (long i = 0; i < n; i++) {
            printf("obs\t%lld\t%ld\t%lld", (long long)c->id, i, (long long)k);
            for (int p = 0; p < np; p++) printf("\t%.9e", all[p][i]);
            putchar('\n');
            print_extras(c, i, allx);
        }
        printf("done\t%lld\t%s\t%s\n", (long long)c->id, bad ? "invalid" : "ok", bad ? bad : "");
        for (int p = 1; p < np; p++) free(all[p]), free(allx[p]);
        free(all);
        free(allx);
    } else {
        char out[256] = "";
        if (bad) snprintf(out, sizeof out, "%s", bad);
        M->send(times, (size_t)n * sizeof *times, 0);
        M->send(xs, nx * sizeof *xs, 0);
        M->send(out, sizeof out, 0);
    }
    free(times);
    free(xs);
    bufs_free(&b);
}

static int bench_index(const char *name)
{
    for (int i = 0; i < B_COUNT; i++)
        if (strcmp(name, bench_names[i]) == 0) return i;
    return -1;
}

static int sync_index(const char *name)
{
    for (int i = 0; i < SYNC_COUNT; i++)
        if (strcmp(name, sync_names[i]) == 0) return i;
    return -1;
}

/* Parse one control line; returns 0 on success. */
static int parse_cmd(char *line, struct cmd *c)
{
    memset(c, 0, sizeof *c);
    c->nobs = 10;
    c->window = 64;
    c->target = 1e-3;
    c->max_time = 10;
    c->hold = 1;
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok) return -1;
    if (strcmp(tok, "quit") == 0) { c->kind = CMD_QUIT; return 0; }
    if (strcmp(tok, "cell") != 0) return -1;
    c->kind = CMD_CELL;
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq++ = 0;
        if (!strcmp(tok, "id")) c->id = atoll(eq);
        else if (!strcmp(tok, "bench")) c->bench = bench_index(eq);
        else if (!strcmp(tok, "size")) c->size = atoll(eq);
        else if (!strcmp(tok, "obs")) c->nobs = atoi(eq);
        else if (!strcmp(tok, "target")) c->target = atof(eq);
        else if (!strcmp(tok, "max")) c->max_time = atof(eq);
        else if (!strcmp(tok, "window")) c->window = atoi(eq);
        else if (!strcmp(tok, "offcache")) c->offcache = atoi(eq);
        else if (!strcmp(tok, "validate")) c->validate = atoi(eq);
        else if (!strcmp(tok, "hold")) c->hold = atof(eq);
        else if (!strcmp(tok, "sync")) c->sync = sync_index(eq);
        else if (!strcmp(tok, "k")) c->k = atoll(eq);
        else return -1;
    }
    return 0;
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
    int n = CPU_COUNT(&allowed), want = rank % (n ? n : 1);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed) && want-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
}

/* Each rank's host, pid, CPU binding and start-up times, printed by rank 0. */
static void report_ranks(double init_s, double since_launch)
{
    char line[512], host[128], cpus[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    cpu_list(cpus, sizeof cpus);
    snprintf(line, sizeof line, "rank\t%d\t%s\t%ld\t%s\t%.9e\t%.9e", rank, host, (long)getpid(), cpus,
             init_s, since_launch);
    if (rank != 0) { M->send(line, sizeof line, 0); return; }
    puts(line);
    for (int p = 1; p < np; p++) {
        M->recv(line, sizeof line, p);
        puts(line);
    }
}

/* Test-only: ARENA_FAULT=crash:BENCH makes the last rank die when asked for BENCH, so tests
 * can see a failed cell end its launch and the variant's other cells go on in a fresh one. */
static void planted_crash(int bench)
{
    const char *fault = getenv("ARENA_FAULT");
    if (fault && !strncmp(fault, "crash:", 6) && !strcmp(fault + 6, bench_names[bench]) &&
        rank == np - 1)
        _exit(3);
}

static void serve(FILE *control)
{
    char line[LINE];
    struct cmd c;
    for (;;) {
        if (rank == 0) {
            fflush(stdout);
            if (!fgets(line, sizeof line, control)) { memset(&c, 0, sizeof c); c.kind = CMD_QUIT; }
            else if (parse_cmd(line, &c) != 0) { printf("error\tbad command: %s", line); continue; }
            for (int p = 1; p < np; p++) M->send(&c, sizeof c, p);
        } else {
            M->recv_idle(&c, sizeof c, 0);
        }
        if (c.kind == CMD_QUIT) { /* every rank has the word before any finalizes: an eager */
            arena_barrier();      /* send may need its sender's progress to leave the node */
            return;
        }
        planted_crash(c.bench);
        run_cell(&c);
    }
}

/* The memory baseline: no library, the buffers a cell of bench at size and np would use. */
static int baseline(const char *bench, const char *size, const char *ranks)
{
    double start, rss, peak;
    struct bufs b;
    int which = bench_index(bench);
    resident(&start, &peak);
    np = atoi(ranks);
    if (which < 0 || np < 1 || atoll(size) < 0) {
        fprintf(stderr, "arena: --baseline BENCH SIZE NP\n");
        return 2;
    }
    bufs_alloc(&b, which, (size_t)atoll(size), 0);
    memcpy(b.r, b.s, b.sstride < b.rstride ? b.sstride : b.rstride);
    resident(&rss, &peak);
    printf("baseline\t%.0f\t%.0f\t%.0f\n", start, rss, peak);
    bufs_free(&b);
    return 0;
}

/* Test-only: ARENA_PLANT_SLOW=F multiplies every timed figure of a random half of the launches
 * by F (the coin is a bit of the launch time ARENA_T0, which every rank of a launch shares), so
 * tests can plant a launch-level effect and see the statistics report it. */
static void plant_launch_effect(const char *t0env)
{
    const char *slow = getenv("ARENA_PLANT_SLOW");
    if (slow && *slow && t0env && ((unsigned long long)(atof(t0env) * 1e6) >> 4) & 1)
        planted = atof(slow);
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
    plant_launch_effect(t0env);
    double before = realtime();
    M->init(&argc, &argv, &rank, &np, thread_level, sizeof thread_level);
    double after = realtime();
    resident(&rss_init, &unused);
    const char *bind = getenv("ARENA_BIND"), *late = getenv("ARENA_LATE_RANK");
    if (late && *late) late_rank = atoi(late);
    if (bind && !strcmp(bind, "core")) bind_to_core();
    if (rank == 0) {
        printf("hello\t%s\t%d\t%.9e\t%s\t%.9e\n", M->family, np, M->tick(), thread_level, measured_resolution());
        M->library_version(buf, sizeof buf);
        escape_print("version", buf);
    }
    report_ranks(after - before, t0env ? after - atof(t0env) : -1.0);
    serve(control);
    fflush(stdout);
    double f0 = realtime();
    M->finalize();
    printf("finalize\t%d\t%.9e\n", rank, realtime() - f0);
    fflush(stdout);
    return 0;
}
