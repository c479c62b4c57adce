/*
 * timing_window.c - the window method (`sync=window`, collectives only, not bcast-ack): every
 * call released at a common start time on a global clock (clock.c: each rank's offset and drift
 * to rank 0, refreshed at a window cell when a second old); rank 0 picks the first start (now +
 * a margin) and the window length (twice the slowest rank's time per call under the barrier
 * method during calibration, plus round trips and 2 us; k is chosen so that k windows last
 * `target`). A call's time is its exit minus its window's start on the global clock; a call that
 * any rank reached after its start is dropped. The rank's mean over the kept calls, and extras
 * `late` (the share of calls dropped; an observation that kept none is taken again, its calls
 * counted in the next one's share), `clock_offset` (the fitted offset at the observation,
 * seconds) and `clock_drift` (seconds per second; rank 0: 0). ARENA_LATE_RANK=R (tests, faults.c)
 * makes rank R arrive half a window late at every 5th call.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>

#include "core.h"

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
    if (arena_rank != 0) {
        M->send(late, (size_t)k, 0);
        M->recv(late, (size_t)k, 0);
        return;
    }
    unsigned char *theirs = arena_xmalloc((size_t)k, "late flags");
    for (int p = 1; p < arena_np; p++) {
        M->recv(theirs, (size_t)k, p);
        for (long i = 0; i < k; i++) late[i] |= theirs[i];
    }
    free(theirs);
    for (int p = 1; p < arena_np; p++) M->send(late, (size_t)k, p);
}

/* k calls of a collective released at start, start + len, ... on the global clock; a call's
 * time is its exit minus its window's start. Calls that any rank reached late are dropped and
 * their share noted; returns the mean over the kept calls on this rank (NaN if none). A step's
 * first call is released at `start` and not timed, the timed windows WARM_WINDOWS later, so that
 * no observation starts on a call that follows the driver's barrier and step relay. On the
 * quiet VM one such call a step still read 500-900 us at allreduce 1 MiB against 240-270 us
 * for 32 a step: what k changes is more than the first call (KMIN, core.h; docs/statistics.md,
 * "What moves a level between runs"). */
#define WARM_WINDOWS 4
double arena_window_calls(int bench, size_t size, long k, const struct bufs *b, double start,
                          double len)
{
    unsigned char *late = arena_xcalloc((size_t)k, 1, "window timings"), *s, *r;
    double *t = arena_xmalloc((size_t)k * sizeof *t, "window timings"), sum = 0;
    long slot = 0, kept = 0;
    arena_slot_bufs(b, &slot, &s, &r);
    (void)wait_until(start);
    arena_coll_call(bench, size, s, r, b->t);
    start += WARM_WINDOWS * len;
    for (long i = 0; i < k; i++) /* when each call is released; t[i] becomes its time */
        t[i] = start + (double)i * len;
    arena_fault_late(t, late, k, len);
    for (long i = 0; i < k; i++) {
        double at = start + (double)i * len;
        arena_slot_bufs(b, &slot, &s, &r);
        late[i] |= (unsigned char)wait_until(t[i]);
        arena_coll_call(bench, size, s, r, b->t);
        t[i] = arena_global_now() - at;
    }
    share_late(late, k);
    for (long i = 0; i < k; i++)
        if (!late[i]) { sum += t[i]; kept++; }
    arena_note(X_LATE, (double)(k - kept) / (double)k);
    free(late);
    free(t);
    return kept ? sum / (double)kept : NAN;
}

/* Rank 0, after a step: in a calibration step, the window's length *len from the slowest
 * rank's time per call (*t), which becomes *t (k is calibrated on what an observation's call
 * costs: its window); the next observation's start *start a margin from now that covers
 * relaying it and the barrier. */
void arena_next_window(int calibrating, double *start, double *len, double *t)
{
    double rtt = arena_clock_rtt();
    if (calibrating)
        *t = *len = 2 * *t + 4 * rtt + 2e-6;
    *start = arena_global_now() + 2e-4 + 20 * arena_np * rtt;
}
