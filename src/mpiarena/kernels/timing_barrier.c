/*
 * timing_barrier.c - the barrier method (`sync=barrier`, collectives only, not bcast-ack): the
 * driver's barrier (sync.c) before every call, each call timed alone; the rank's mean per call
 * (IMB's scheme: the slowest rank's figure is IMB's t_max).
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

/* k calls of a collective, each after the driver's barrier and timed alone: the mean per call
 * on this rank. */
double arena_barrier_calls(int bench, size_t size, long k, const struct bufs *b)
{
    unsigned char *s, *r;
    long slot = 0;
    double sum = 0;
    for (long i = 0; i < k; i++) {
        arena_slot_bufs(b, &slot, &s, &r);
        arena_barrier();
        double t0 = M->now();
        arena_coll_call(bench, size, s, r, b->t);
        sum += M->now() - t0;
    }
    return sum / (double)k;
}
