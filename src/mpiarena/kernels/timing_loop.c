/*
 * timing_loop.c - the loop method (`sync=loop`): k calls back to back, the loop's time divided
 * by k (calls may overlap: a bcast root does not wait for its leaves). Every benchmark can be
 * timed so; bcast-ack, the cost benchmarks and the application kernels time themselves.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

/* Run k iterations of the benchmark back to back; return seconds per iteration on this rank
 * (msgrate and threads: per message). */
double arena_loop_calls(int bench, size_t size, long k, const struct bufs *b, int window,
                        double hold)
{
    unsigned char *s, *r;
    long slot = 0;
    int active = !is_pair(bench) || arena_rank < 2;
    if (is_app(bench))
        return arena_run_app(bench, size, k);
    if (bench == B_BCAST_ACK)
        return arena_bcast_ack(size, k, b);
    double t0 = M->now();
    if (active && bench >= B_CPU) {
        arena_run_cost(bench, size, k, b, window, hold);
    } else if (active) {
        for (long i = 0; i < k; i++) {
            arena_slot_bufs(b, &slot, &s, &r);
            arena_one_call(bench, size, s, r, b->t, window);
        }
        arena_p2p_end(bench);
    }
    double per = (M->now() - t0) / (double)k;
    if (bench == B_MSGRATE) return per / window;
    if (bench == B_THREADS) return per / ((double)window * (double)size);
    return per;
}
