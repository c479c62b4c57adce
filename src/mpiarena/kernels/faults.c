/*
 * faults.c - the test-only hooks, read from the environment once at start-up and decided
 * before any timed region: a cell's planted slowdown is one factor the cell applies to each
 * step's figure after timing it, a late rank's delays are written into its release times
 * before the window method's calls begin. Outside tests none is set and each hook is a no-op.
 *   ARENA_FAULT=crash:BENCH     the last rank dies when asked for BENCH, so tests can see a
 *                               failed cell end its launch and the variant's other cells go on
 *                               in a fresh one
 *   ARENA_FAULT=segv:BENCH      the same, by a segmentation fault (crash.c's handler reports it)
 *   ARENA_FAULT=libsegv:BENCH   the same, inside the library: the last rank hands it a send
 *                               buffer at an unmapped address
 *   ARENA_FAULT=corrupt         every rank corrupts the data its validation call received
 *   ARENA_PLANT_SLOW=F          every timed figure of a random half of the launches times F
 *                               (the coin is a bit of the launch time ARENA_T0, which every
 *                               rank of a launch shares): a launch-level effect
 *   ARENA_PLANT_SLOW_BENCH=BENCH:SIZE:F  every timed figure of the cells of BENCH at SIZE
 *                               bytes times F: a self-consistency violation at one size
 *   ARENA_LATE_RANK=R           rank R reaches every 5th window half a window late
 *   ARENA_PLANT_COLD=F          the first step of every cell (its warm-up) reads F times slow:
 *                               a cold start
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

static struct {
    int crash_bench;       /* the bench at which this rank dies, or -1 */
    int segv;              /* it dies of SIGSEGV, not exit status 3 */
    int libsegv;           /* it dies inside the library, of a bad send buffer */
    int corrupt;
    double launch;         /* this launch's planted factor */
    int slow_bench;        /* the planted cell's bench, or -1 */
    long long slow_size;
    double slow_factor;
    int late;              /* this rank arrives late */
    double cold;           /* a cell's first step's planted factor */
} fault = {-1, 0, 0, 0, 1.0, -1, 0, 1.0, 0, 1.0};

void arena_faults_init(const char *t0env)
{
    const char *what = getenv("ARENA_FAULT"), *slow = getenv("ARENA_PLANT_SLOW");
    const char *cell = getenv("ARENA_PLANT_SLOW_BENCH"), *late = getenv("ARENA_LATE_RANK");
    const char *cold = getenv("ARENA_PLANT_COLD");
    char name[64];
    fault.segv = what && !strncmp(what, "segv:", 5);
    fault.libsegv = what && !strncmp(what, "libsegv:", 8);
    if (what && (!strncmp(what, "crash:", 6) || fault.segv || fault.libsegv) &&
        arena_rank == arena_np - 1)
        fault.crash_bench = arena_bench_index(strchr(what, ':') + 1);
    fault.corrupt = what && !strcmp(what, "corrupt");
    if (slow && *slow && t0env && ((unsigned long long)(atof(t0env) * 1e6) >> 4) & 1)
        fault.launch = atof(slow);
    if (cell && sscanf(cell, "%63[^:]:%lld:%lf", name, &fault.slow_size, &fault.slow_factor) == 3)
        fault.slow_bench = arena_bench_index(name);
    fault.late = late && *late && atoi(late) == arena_rank;
    fault.cold = cold && *cold ? atof(cold) : 1.0;
}

void arena_fault_crash(int bench)
{
    if (bench >= 0 && bench == fault.crash_bench && fault.segv)
        raise(SIGSEGV);
    if (bench >= 0 && bench == fault.crash_bench && !fault.libsegv)
        _exit(3);
}

unsigned char *arena_fault_send_buffer(int bench, unsigned char *s)
{
    return bench >= 0 && bench == fault.crash_bench && fault.libsegv ? (unsigned char *)64 : s;
}

double arena_fault_factor(int bench, int64_t size)
{
    int slow = bench >= 0 && bench == fault.slow_bench && size == fault.slow_size;
    return fault.launch * (slow ? fault.slow_factor : 1.0);
}

double arena_fault_cold(void)
{
    return fault.cold;
}

void arena_fault_corrupt(unsigned char *r, size_t size, size_t rstride)
{
    if (fault.corrupt && size > 0 && size / 2 < rstride)
        r[size / 2] ^= 0x5a;
}

/* The late rank reaches every 5th call half a window after its release, so the call is late. */
void arena_fault_late(double *release, unsigned char *late, long k, double len)
{
    if (!fault.late)
        return;
    for (long i = 0; i < k; i += 5) {
        release[i] += len / 2;
        late[i] = 1;
    }
}
