/*
 * core.h - what the driver's files share (arena.h is the interface to a transport module).
 *
 * The files, each using only files listed below it (tests/test_kernel_calls.py checks that no
 * file reaches back up a chain of files that reaches it):
 * driver.c      main: start-up, the rank lines, the serve loop
 * cell.c        one cell: warm-up, calibration, observations, the lines rank 0 prints
 * commands.c    the control protocol: parsing a command, whether its cell can run here
 * validate.c    one untimed iteration with patterned data, checked
 * timing_*.c    the timing methods: loop, barrier, window (see each file), and clock.c, the
 *               window method's global clock
 * bench_*.c     the benchmark groups: p2p (and wtime), coll (and mock-ups, bcast-ack),
 *               cost (cpu, memory, overlap, progress, threads, msgrate), loggp (LogGP's
 *               round trips), app (apps.c's kernels)
 * buffers.c     a cell's buffers (off-cache slots), memory figures
 * ext.c         MPI beyond MPI-1 (one-sided, non-blocking collectives...): each step of a
 *               cell asked of the family's group (ext.h), whose files come next
 * sync.c        the driver's own barrier, the slowest rank's figure
 * extras.c      the figures an observation carries besides its time (arena_note)
 * faults.c      the test-only hooks, decided before any timed region
 * crash.c       a rank that dies on a signal: its backtrace and cell, on stderr
 * benchmarks.c  the benchmarks' names
 * job.c         the job: rank, rank count, thread level, memory after init, the sums'
 *               element type
 * and below them all the family's module (arena.h; apps.c, the application kernels, uses
 * only the module).
 *
 * Every symbol with external linkage is prefixed arena_: the core links against libraries
 * (LAM, PVM) that export short unprefixed names, and an executable's definition wins.
 */
#ifndef CORE_H
#define CORE_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ext.h"

#define M (&arena_module_impl)
#define KMAX (1L << 24)
/* The fewest calls an observation times where one call lasts no longer than the target (cpu
 * and the application kernels aside: one each). A collective's time per call depended on how
 * many calls ran back to back: MPICH 4.0.2's allreduce of 1 MiB read 500-900 us one call a step
 * and 240-270 us 32 a step here, and a call of about the target calibrated to k = 1-4, a knife
 * edge a run's first launch fixed for the whole run (docs/statistics.md, "What moves a level
 * between runs"). Longer calls keep their calibrated k: 8 of PVM's took the quick suite's
 * whole budget. */
#define KMIN 8
#define MAX_THREADS 64

enum bench {
    B_WTIME, B_PINGPONG, B_PING, B_SENDRECV, B_BIBW,
    B_BARRIER, B_BCAST, B_SCATTER, B_GATHER, B_REDUCE, B_ALLREDUCE, B_ALLGATHER, B_ALLTOALL,
    B_REDUCE_SCATTER_BLOCK, B_SCAN, B_EXSCAN, /* B_BARRIER..B_EXSCAN: arena_coll's order */
    B_BCAST_ACK, /* a collective, but not in arena_coll's order: see is_coll and coll_of */
    /* Mock-ups (self-consistency guidelines): see bench_coll.c */
    B_M_ALLREDUCE_RB, B_M_ALLREDUCE_RSB, B_M_BCAST_SA, B_M_ALLGATHER_GB, B_M_ALLGATHER_A2A,
    B_M_GATHER_AG, B_M_SCATTER_B, B_M_REDUCE_AR, B_M_RSB_RS, B_M_SCAN_ER,
    B_CPU, B_MEMORY, B_OVERLAP, B_PROGRESS, B_THREADS, B_MSGRATE, B_LOGGP,
    B_APP_PI, B_APP_MATVEC, B_APP_MATMUL, B_APP_ROWMM, B_APP_PRIMES, B_APP_MD, B_APP_STENCIL,
    B_EXT, /* ext.h's benchmarks: B_EXT + their ext_bench */
    B_COUNT = B_EXT + XB_COUNT
};
extern const char *const arena_bench_names[B_COUNT];

/* Figures an observation carries besides its time (see driver.c's header). */
enum extra {
    X_CPU, X_RSS_INIT, X_RSS, X_PEAK,
    X_PURE, X_COMPUTE, X_OVERLAPPED, X_PURE_AR, X_COMPUTE_AR, X_OVERLAPPED_AR,
    X_PURE_A2A, X_COMPUTE_A2A, X_OVERLAPPED_A2A, X_TRANSFER, X_AFTER,
    X_T_SEND, X_T_RECV, X_T_SENDRECV, X_T_SCATTER, X_T_REDUCE, /* in arena_call's order */
    X_PI_ERROR, X_CHECKSUM_ERROR, X_PRIMES, X_ENERGY_DRIFT,
    X_LATE, X_CLOCK_OFFSET, X_CLOCK_DRIFT,
    X_PRTT1, X_PRTTN, X_PRTTD, X_DELAY, X_O_S, X_O_R, X_PRTT_N, /* loggp */
    X_COUNT
};

enum cmd_kind { CMD_CELL, CMD_QUIT, CMD_CONFIG };
enum sync { SYNC_LOOP, SYNC_BARRIER, SYNC_WINDOW, SYNC_COUNT };

/* What a cell asks of the benchmarks that take more than a size. */
struct bench_args {
    int burst;   /* operations per iteration: bibw's exchanges, msgrate's sends per
                  * acknowledgement, threads' messages per stream, put-bw's and get-bw's per
                  * epoch (the command's `window=`) */
    double hold; /* cpu: seconds rank 0 sleeps while rank 1 waits (0 outside observations) */
};

struct cmd {
    int64_t id, size, k;
    int32_t kind, bench, nobs, offcache, validate, sync;
    double target, max_time;
    struct bench_args args;
};

struct bufs {
    unsigned char *s, *r; /* first slot of each, page-aligned */
    void *s_mem, *r_mem;  /* what malloc gave (LAM replaces malloc/free but not aligned_alloc) */
    unsigned char *t;     /* a mock-up's intermediate result (not rotated), or NULL */
    size_t sstride, rstride;
    long nslots;
};

/* job.c: the job, set once at start-up (driver.c). */
extern int arena_rank, arena_np;
extern char arena_thread_level[32];
extern double arena_rss_init;
extern enum arena_type arena_datatype; /* the sums' element type (ARENA_DATATYPE; int) */
extern int arena_datatype_asked;       /* ARENA_DATATYPE set: the datatype benchmarks' blocks
                                        * are of it too (else MPI_BYTE) */
extern const char *arena_datatype_refused; /* why the family cannot sum it, or NULL */

/* Bytes of one element of the sums; elements a sum of `size` bytes adds up (rounded up), the
 * bytes they span, and a reduce_scatter_block's elements per rank. */
static inline size_t arena_elem_size(void) { return arena_type_size(arena_datatype); }
static inline size_t arena_sum_elems(size_t size) { return arena_elems(size, arena_datatype); }
static inline size_t arena_sum_bytes(size_t size)
{
    return arena_sum_elems(size) * arena_elem_size();
}
static inline size_t arena_sum_block(size_t size)
{
    return arena_block(size, arena_np, arena_datatype);
}

/* What rank r adds at element i of a checked sum, and the sum over ranks lo..hi-1: chars stay 0
 * or 1, so that no sum over fewer than 128 ranks overflows (Open MPI 4.1.4 saturates a char sum
 * that does, MPICH wraps it). */
static inline long arena_summand(size_t i, int r)
{
    return arena_datatype == ARENA_TYPE_CHAR ? (long)((i + (size_t)r) % 2) : (long)(i % 1000) + r;
}

static inline long arena_summed(size_t i, int lo, int hi)
{
    long sum = 0;
    for (int r = lo; r < hi; r++)
        sum += arena_summand(i, r);
    return sum;
}

/* Element i of a buffer of the sums' type set to v (char: its low byte). */
static inline void arena_elem_set(unsigned char *p, size_t i, long v)
{
    switch (arena_datatype) {
    case ARENA_TYPE_CHAR: p[i] = (unsigned char)(v & 0xff); break;
    case ARENA_TYPE_FLOAT: ((float *)p)[i] = (float)v; break;
    case ARENA_TYPE_DOUBLE: ((double *)p)[i] = (double)v; break;
    default: ((int *)p)[i] = (int)v; break;
    }
}

/* Whether element i differs from v (char: its low byte). */
static inline int arena_elem_differs(const unsigned char *p, size_t i, long v)
{
    switch (arena_datatype) {
    case ARENA_TYPE_CHAR: return p[i] != (unsigned char)(v & 0xff);
    case ARENA_TYPE_FLOAT: return ((const float *)p)[i] != (float)v;
    case ARENA_TYPE_DOUBLE: return ((const double *)p)[i] != (double)v;
    default: return ((const int *)p)[i] != (int)v;
    }
}

static inline int is_p2p(int b) { return b >= B_PINGPONG && b <= B_BIBW; }
static inline int is_ext(int b) { return b >= B_EXT && b < B_COUNT; }
static inline int is_cost(int b) { return b >= B_CPU && b <= B_LOGGP; }
/* An ext.h benchmark's EXT_ flags, 0 for any other. */
static inline int ext_flags(int b) { return is_ext(b) ? arena_ext_bench_flags(b - B_EXT) : 0; }
static inline int is_mock(int b) { return b >= B_M_ALLREDUCE_RB && b <= B_M_SCAN_ER; }
/* Collectives: B_BARRIER..B_EXSCAN map one to one onto arena_coll; bcast-ack is a bcast; a
 * mock-up is timed as the collective it stands in for. */
static inline int is_coll(int b)
{
    return (b >= B_BARRIER && b <= B_EXSCAN) || b == B_BCAST_ACK || is_mock(b);
}
/* Collectives that the barrier and window methods can time one call at a time (an ext.h
 * benchmark of all ranks that the core times). */
static inline int is_synced(int b)
{
    return (is_coll(b) && b != B_BCAST_ACK) || (is_ext(b) && !(ext_flags(b) & (EXT_PAIR | EXT_SELF)));
}
/* Benchmarks run by ranks 0 and 1 only. */
static inline int is_pair(int b)
{
    return is_p2p(b) || b == B_CPU || (b >= B_PROGRESS && b <= B_LOGGP) ||
           (ext_flags(b) & EXT_PAIR);
}
static inline int is_app(int b) { return b >= B_APP_PI && b <= B_APP_STENCIL; }
/* Benchmarks that sum through the module (coll's reductions): those a family that cannot sum
 * the job's type leaves n/a. */
static inline int is_sum(int b)
{
    return b == B_REDUCE || b == B_ALLREDUCE || (b >= B_REDUCE_SCATTER_BLOCK && b <= B_EXSCAN) ||
           b == B_M_ALLREDUCE_RB || b == B_M_ALLREDUCE_RSB || b == B_M_REDUCE_AR ||
           b == B_M_RSB_RS || b == B_M_SCAN_ER;
}
static inline enum arena_coll coll_of(int b)
{
    return b == B_BCAST_ACK ? ARENA_BCAST : (enum arena_coll)(b - B_BARRIER);
}

/* benchmarks.c: a benchmark's index in arena_bench_names, or -1 */
int arena_bench_index(const char *name);

/* commands.c */
int arena_parse_cmd(char *line, struct cmd *c);
const char *arena_unrunnable(const struct cmd *c, char *msg, size_t len);

/* cell.c */
void arena_run_cell(const struct cmd *c);

/* extras.c: the current observation's extras */
void arena_note(enum extra x, double v); /* an extra of the current observation */
double arena_noted(enum extra x);        /* its value now */
int arena_in_cell(enum extra x);         /* whether the current cell noted it */
const char *arena_extra_name(enum extra x);
void arena_extras_new_cell(void);        /* none noted in the cell yet */

/* sync.c */
void arena_barrier(void);
double arena_slowest(double t);

/* buffers.c */
void arena_bufs_alloc(struct bufs *b, int bench, size_t size, int offcache);
void arena_bufs_free(struct bufs *b);
/* The buffers of the iteration in *slot; *slot moves on to the next (off-cache rotation). */
static inline void arena_slot_bufs(const struct bufs *b, long *slot, unsigned char **s,
                                   unsigned char **r)
{
    *s = b->s + (size_t)*slot * b->sstride;
    *r = b->r + (size_t)*slot * b->rstride;
    if (++*slot == b->nslots)
        *slot = 0;
}
void arena_resident(double *rss, double *peak);
void arena_memory_fresh(void);

/* timing_*.c: seconds per call on this rank, each method its own way */
double arena_loop_calls(int bench, size_t size, long k, const struct bufs *b,
                        struct bench_args a);
double arena_barrier_calls(int bench, size_t size, long k, const struct bufs *b);
double arena_window_calls(int bench, size_t size, long k, const struct bufs *b, double start,
                          double len);
void arena_next_window(int calibrating, double *start, double *len, double *t);

/* bench_*.c: one iteration, or k of a benchmark that times itself */
void arena_p2p_call(int bench, size_t size, unsigned char *s, unsigned char *r, int burst);
void arena_p2p_end(int bench);
void arena_coll_call(int bench, size_t size, unsigned char *s, unsigned char *r,
                     unsigned char *t);
double arena_bcast_ack(size_t size, long k, const struct bufs *b);
const char *arena_mock_unrunnable(int b, size_t size, char *msg, size_t len);
void arena_run_cost(int bench, size_t size, long k, const struct bufs *b, struct bench_args a);
void arena_run_loggp(size_t size, long k, const struct bufs *b);
double arena_run_app(int bench, size_t size, long k);
const char *arena_app_bad(void); /* why the cell's kernel answered wrong, or "" */
void arena_app_reset(void);

/* ext.c: an ext.h benchmark's steps, asked of its group (ext.h: struct ext_ops) */
const char *arena_ext_unrunnable(int bench, size_t size, char *msg, size_t len);
void arena_ext_buffers(int bench, size_t size, size_t *sn, size_t *rn);
void arena_ext_setup(int bench, size_t size, int burst, const struct bufs *b);
void arena_ext_call(int bench, size_t size, unsigned char *s, unsigned char *r);
double arena_ext_run(int bench, size_t size, long k, const struct bufs *b);
const char *arena_ext_validate(int bench, size_t size, const struct bufs *b, char *msg,
                               size_t len);
void arena_ext_teardown(int bench);

/* validate.c */
const char *arena_validate(int bench, size_t size, const struct bufs *b, int burst, char *msg,
                           size_t len);

/* crash.c: the signal handler that reports a dying rank's backtrace and cell */
void arena_crash_install(void);              /* after the library's start: ours wins */
void arena_crash_cell(int bench, int64_t size); /* the cell served now */

/* faults.c: test-only hooks, read from the environment once at start-up */
void arena_faults_init(const char *t0env);
void arena_fault_crash(int bench);            /* before a cell: the last rank may die */
unsigned char *arena_fault_send_buffer(int bench, unsigned char *s); /* or an unmapped one */
double arena_fault_factor(int bench, int64_t size); /* a cell's planted slowdown, or 1 */
double arena_fault_cold(void);               /* a cell's first step's planted factor, or 1 */
void arena_fault_corrupt(unsigned char *r, size_t size, size_t rstride); /* after a check's call */
void arena_fault_late(double *release, unsigned char *late, long k, double len);

#endif
