/*
 * timing_loop.c - the loop method (`sync=loop`): k calls back to back, the loop's time divided
 * by k (calls may overlap: a bcast root does not wait for its leaves). Every benchmark can be
 * timed so; bcast-ack, the cost benchmarks, the application kernels and ext.h's EXT_SELF
 * benchmarks time themselves.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

/* One iteration of a timer, point-to-point or collective benchmark on buffers s and r (t: a
 * mock-up's intermediate buffer). */
static void one_call(int bench, size_t size, unsigned char *s, unsigned char *r,
                     unsigned char *t, int burst)
{
    if (bench <= B_BIBW)
        arena_p2p_call(bench, size, s, r, burst);
    else
        arena_coll_call(bench, size, s, r, t);
}

/* Run k iterations of the benchmark back to back; return seconds per iteration on this rank
 * (msgrate and threads: per message). */
double arena_loop_calls(int bench, size_t size, long k, const struct bufs *b,
                        struct bench_args a)
{
    unsigned char *s, *r;
    long slot = 0;
    int active = !is_pair(bench) || arena_rank < 2;
    if (is_app(bench))
        return arena_run_app(bench, size, k);
    if (bench == B_BCAST_ACK)
        return arena_bcast_ack(size, k, b);
    if (ext_flags(bench) & EXT_SELF)
        return active ? arena_ext_run(bench, size, k, b) : 0;
    double t0 = M->now();
    if (active && is_cost(bench)) {
        arena_run_cost(bench, size, k, b, a);
    } else if (active) {
        for (long i = 0; i < k; i++) {
            arena_slot_bufs(b, &slot, &s, &r);
            one_call(bench, size, s, r, b->t, a.burst);
        }
        arena_p2p_end(bench);
    }
    double per = (M->now() - t0) / (double)k;
    if (bench == B_MSGRATE) return per / a.burst;
    if (bench == B_THREADS) return per / ((double)a.burst * (double)size);
    return per;
}
