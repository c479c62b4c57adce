/*
 * bench_loggp.c - LogGP's parametrised round trips as Netgauge's loggp pattern takes them
 * (Hoefler, Lichei and Rehm, "Low-Overhead LogGP Parameter Assessment for Modern
 * Interconnection Networks", 2007), run by ranks 0 and 1 at one size s. First d, the mean of
 * k/8 + 1 rounds of PRTT(1,0,s), then k times one round of each, interleaved, each timed alone:
 *   prtt1  PRTT(1,0,s): rank 0 sends one message, rank 1 sends one back
 *   prttn  PRTT(n,0,s): rank 0 sends n messages back to back, rank 1 one back when it has all
 *   prttd  PRTT(n,d,s): the same with d spun before every send but the first; o_s is rank 0's
 *          time inside those delayed sends
 *   o_r    rank 0 sends n messages back to back, rank 1 spins d before every receive but the
 *          first (the message is there by then) and o_r is its time inside those receives
 * Each figure is seconds per round (o_s, o_r: per call), the mean over the k rounds; `delay`
 * is d and `prtt_n` is n (LOGGP_N, Netgauge's). Both ranks note every figure; one a rank does
 * not time is 0 there (o_s on rank 1, o_r on rank 0). The analysis derives L, o_s, o_r, g(s)
 * and G (analysis/loggp.py).
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

#define LOGGP_N 10

static void spin(double d)
{
    double end = M->now() + d;
    while (M->now() < end) {}
}

/* One round: rank 0 sends n messages, spinning `gap` s before each but the first; rank 1
 * receives them, spinning `wait` s before each but the first, then sends one back. Returns the
 * seconds per call inside the calls made after a spin (0 without spins). */
static double round_trip(size_t size, const struct bufs *b, int n, double gap, double wait)
{
    int rank = arena_rank;
    double pause = rank == 0 ? gap : wait, inside = 0;
    for (int i = 0; i < n; i++) {
        int delayed = i > 0 && pause > 0;
        if (delayed)
            spin(pause);
        double t0 = M->now();
        if (rank == 0) M->send(b->s, size, 1);
        else M->recv(b->r, size, 0);
        if (delayed)
            inside += M->now() - t0;
    }
    if (rank == 0) M->recv(b->r, size, 1);
    else M->send(b->s, size, 0);
    return inside / (n > 1 ? n - 1 : 1);
}

/* One round timed: its seconds, and in *inside round_trip's figure. */
static double timed(size_t size, const struct bufs *b, int n, double gap, double wait,
                    double *inside)
{
    double t0 = M->now();
    *inside = round_trip(size, b, n, gap, wait);
    return M->now() - t0;
}

void arena_run_loggp(size_t size, long k, const struct bufs *b)
{
    double t[4] = {0, 0, 0, 0}, in[4] = {0, 0, 0, 0}, d = 0, x;
    long first = k / 8 + 1;
    for (long i = 0; i < first; i++)
        d += timed(size, b, 1, 0, 0, &x) / (double)first;
    if (arena_rank == 0) M->send(&d, sizeof d, 1); /* rank 1 spins rank 0's d */
    else M->recv(&d, sizeof d, 0);
    for (long i = 0; i < k; i++) { /* interleaved: a slow spell hits every pattern alike */
        t[0] += timed(size, b, 1, 0, 0, &x), in[0] += x;
        t[1] += timed(size, b, LOGGP_N, 0, 0, &x), in[1] += x;
        t[2] += timed(size, b, LOGGP_N, d, 0, &x), in[2] += x;
        t[3] += timed(size, b, LOGGP_N, 0, d, &x), in[3] += x;
    }
    double per = 1 / (double)k;
    arena_note(X_PRTT1, t[0] * per), arena_note(X_PRTTN, t[1] * per);
    arena_note(X_PRTTD, t[2] * per), arena_note(X_DELAY, d);
    arena_note(X_O_S, in[2] * per), arena_note(X_O_R, in[3] * per);
    arena_note(X_PRTT_N, LOGGP_N);
}
