/*
 * mpi_nbc.c - ext.h's G_NBC benchmarks: MPI-3's non-blocking collectives, every rank taking
 * part, on a duplicate of MPI_COMM_WORLD. The data are the blocking collectives' (mod_mpi.c):
 * ibcast from and ireduce to rank 0, the reductions MPI_SUM of the job's type (job.c), ialltoall
 * and iallgather size bytes per rank.
 *   OP                 one MPI_I<op>, then MPI_Wait: an iteration, timed by the core
 *   OP-overlap         OSU's overlap (osu_ibcast...), timed here: every iteration after the
 *                      driver's barrier (untimed), first k of start + wait alone (pure, per
 *                      rank), then k of start, a busy loop lasting this rank's pure time, wait
 *                      (overlapped). Nothing is called during the loop: whatever moves, the
 *                      library moves in the background.
 *   OP-overlap-test    the same, the loop stopping for MPI_Test after each sixteenth of it
 *                      (OSU's -t 16): progress driven by the program.
 * Extras on every rank, seconds per iteration: pure, compute (the loop alone, the time inside
 * MPI_Test left out as OSU does) and overlapped (start to the end of the wait, MPI_Test
 * included: polling is a cost the overlap must pay for). benchmarks.py makes the overlap of them.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "mpi_type.h"

#if MPI_VERSION >= 3 && !defined(LAM_MPI)
#define HAVE_NBC 1
#else
#define HAVE_NBC 0
#endif

#define PROBES 16 /* MPI_Test calls through the compute of an -overlap-test iteration */

enum op { IBARRIER, IBCAST, IREDUCE, IALLREDUCE, IALLTOALL, IALLGATHER };
enum variant { LATENCY, OVERLAP, OVERLAP_TEST };

/* ext.h lists each operation's three benchmarks together, in enum op's order. */
_Static_assert(XB_IBCAST == XB_IBARRIER + 3 && XB_IALLGATHER_OVL_TEST == XB_IBARRIER + 17,
               "ext.h's NBC_OPS order");

static const char *const calls[] = {"MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce",
                                    "MPI_Iallreduce", "MPI_Ialltoall", "MPI_Iallgather"};

static MPI_Comm comm = MPI_COMM_NULL;
static MPI_Request req;
static double last_pure; /* the overlap benchmarks' pure time, reused by their check */

static enum op op_of(int b) { return (enum op)((b - XB_IBARRIER) / 3); }
static enum variant variant_of(int b) { return (enum variant)((b - XB_IBARRIER) % 3); }

static const char *nbc_unrunnable(int b, size_t size, int np, char *msg, size_t len)
{
    (void)size, (void)np;
#if defined(LAM_MPI)
    snprintf(msg, len, "LAM/MPI %d.%d.%d has no %s: it implements MPI 1.2, non-blocking "
             "collectives are MPI 3.0", LAM_MAJOR_VERSION, LAM_MINOR_VERSION,
             LAM_RELEASE_VERSION, calls[op_of(b)]);
    return msg;
#elif !HAVE_NBC
    snprintf(msg, len, "this library implements MPI %d.%d: %s is MPI 3.0", MPI_VERSION,
             MPI_SUBVERSION, calls[op_of(b)]);
    return msg;
#else
    (void)b, (void)msg, (void)len;
    return NULL;
#endif
}

static void nbc_buffers(int b, size_t size, int np, size_t *sn, size_t *rn)
{
    size_t summed = arena_sum_bytes(size), all = size * (size_t)np;
    switch (op_of(b)) {
    case IBARRIER: *sn = *rn = 0; break;
    case IBCAST: *sn = 0; *rn = size; break;
    case IREDUCE: case IALLREDUCE: *sn = *rn = summed; break;
    case IALLTOALL: *sn = *rn = all; break;
    case IALLGATHER: *sn = size; *rn = all; break;
    }
}

static void nbc_setup(int b, size_t size, int burst, const struct bufs *bufs)
{
    (void)b, (void)size, (void)burst, (void)bufs;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
}

/* Start op on s and r (bcast: r, as mod_mpi.c's). */
static void start(enum op op, size_t size, unsigned char *s, unsigned char *r)
{
#if HAVE_NBC
    int n = (int)size, e = (int)arena_sum_elems(size);
    MPI_Datatype type = arena_mpi_type(arena_datatype);
    switch (op) {
    case IBARRIER: MPI_Ibarrier(comm, &req); break;
    case IBCAST: MPI_Ibcast(r, n, MPI_BYTE, 0, comm, &req); break;
    case IREDUCE: MPI_Ireduce(s, r, e, type, MPI_SUM, 0, comm, &req); break;
    case IALLREDUCE: MPI_Iallreduce(s, r, e, type, MPI_SUM, comm, &req); break;
    case IALLTOALL: MPI_Ialltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, &req); break;
    case IALLGATHER: MPI_Iallgather(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, &req); break;
    }
#else
    (void)op, (void)size, (void)s, (void)r; /* unrunnable: never reached */
#endif
}

static void finish(void) { MPI_Wait(&req, MPI_STATUS_IGNORE); }

static void nbc_call(int b, size_t size, unsigned char *s, unsigned char *r)
{
    start(op_of(b), size, s, r);
    finish();
}

/* Busy for d seconds without calling the library (bench_cost.c's loop, bounded by the clock as
 * OSU's is, in batches of 8 dependent flops, some 10 ns, so that it overshoots d little even
 * split in 16); with probes, in that many equal parts, MPI_Test on the request after each. The
 * seconds spent in MPI_Test. */
static double compute(double d, int probes)
{
    volatile double x = 1;
    double tested = 0;
    int parts = probes > 0 ? probes : 1, done;
    for (int p = 0; p < parts; p++) {
        double end = arena_monotonic() + d / parts;
        while (arena_monotonic() < end)
            for (int i = 0; i < 8; i++) x = x * 1.0000001 + 1e-9;
        if (probes > 0) {
            double t0 = M->now();
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            tested += M->now() - t0;
        }
    }
    return tested;
}

/* One overlapped iteration: start, compute for d, wait. The seconds of compute, MPI_Test left
 * out. */
static double overlapped(int b, size_t size, unsigned char *s, unsigned char *r, double d)
{
    start(op_of(b), size, s, r);
    double c0 = M->now(), tested = compute(d, variant_of(b) == OVERLAP_TEST ? PROBES : 0);
    double busy = M->now() - c0 - tested;
    finish();
    return busy;
}

/* k iterations alone, then k overlapped by a compute of their mean length; each after the
 * driver's barrier, timed alone. */
static double nbc_run(int b, size_t size, long k, const struct bufs *bufs)
{
    double pure = 0, busy = 0, ovl = 0;
    unsigned char *s, *r;
    long slot = 0;
    for (long i = 0; i < k; i++) {
        arena_slot_bufs(bufs, &slot, &s, &r);
        arena_barrier();
        double t0 = M->now();
        nbc_call(b, size, s, r);
        pure += M->now() - t0;
    }
    last_pure = pure /= (double)k;
    for (long i = 0; i < k; i++) {
        arena_slot_bufs(bufs, &slot, &s, &r);
        arena_barrier();
        double t0 = M->now();
        busy += overlapped(b, size, s, r, pure);
        ovl += M->now() - t0;
    }
    arena_note(X_PURE, pure);
    arena_note(X_COMPUTE, busy / (double)k);
    arena_note(X_OVERLAPPED, ovl / (double)k);
    return ovl / (double)k;
}

static unsigned char pattern(long from, size_t i)
{
    return (unsigned char)((from * 131 + (long)i * 7 + (long)(i >> 8) * 13 + 1) & 0xff);
}

static void fill(unsigned char *p, size_t n, long from)
{
    for (size_t i = 0; i < n; i++) p[i] = pattern(from, i);
}

/* The first wrong byte of p (n bytes patterned from `from`), or -1. */
static long wrong(const unsigned char *p, size_t n, long from)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(from, i)) return (long)i;
    return -1;
}

/* The first wrong byte of n elements of the sums' type that should hold the sums over every
 * rank of arena_summand, or -1. */
static long wrong_sums(const unsigned char *v, size_t n, int np)
{
    for (size_t i = 0; i < n; i++)
        if (arena_elem_differs(v, i, arena_summed(i, 0, np)))
            return (long)(i * arena_elem_size());
    return -1;
}

/* One iteration (overlapped as the benchmark's are) with patterned data; every rank that
 * receives checks what it received. */
static const char *nbc_validate(int b, size_t size, const struct bufs *bufs, char *msg,
                                size_t len)
{
    int rank = arena_rank, np = arena_np;
    enum op op = op_of(b);
    unsigned char *s = bufs->s, *r = bufs->r;
    size_t sn, rn, nsum = arena_sum_elems(size);
    long bad = -1;
    nbc_buffers(b, size, np, &sn, &rn);
    memset(r, 0, rn);
    if (op == IBCAST && rank == 0) fill(r, size, 0);
    if (op == IREDUCE || op == IALLREDUCE)
        for (size_t i = 0; i < nsum; i++) arena_elem_set(s, i, arena_summand(i, rank));
    if (op == IALLTOALL)
        for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, (long)rank * np + j);
    if (op == IALLGATHER) fill(s, size, rank);
    if (variant_of(b) == LATENCY) nbc_call(b, size, s, r);
    else overlapped(b, size, s, r, last_pure);
    arena_fault_corrupt(r, size, bufs->rstride); /* tests: a self-test of the check */
    switch (op) {
    case IBARRIER: break;
    case IBCAST: bad = wrong(r, size, 0); break;
    case IREDUCE: if (rank == 0) bad = wrong_sums(r, nsum, np); break;
    case IALLREDUCE: bad = wrong_sums(r, nsum, np); break;
    case IALLTOALL:
        for (int j = 0; j < np && bad < 0; j++)
            if ((bad = wrong(r + (size_t)j * size, size, (long)j * np + rank)) >= 0)
                bad += (long)((size_t)j * size);
        break;
    case IALLGATHER:
        for (int j = 0; j < np && bad < 0; j++)
            if ((bad = wrong(r + (size_t)j * size, size, j)) >= 0) bad += (long)((size_t)j * size);
        break;
    }
    if (bad < 0) return NULL;
    snprintf(msg, len, "rank %d received wrong data from %s at byte %ld of %zu", rank,
             calls[op], bad, rn);
    return msg;
}

static void nbc_teardown(int b)
{
    (void)b;
    MPI_Comm_free(&comm);
}

const struct ext_ops arena_ext_nbc = {
    .unrunnable = nbc_unrunnable,
    .buffers = nbc_buffers,
    .setup = nbc_setup,
    .call = nbc_call,
    .run = nbc_run,
    .validate = nbc_validate,
    .teardown = nbc_teardown,
};
