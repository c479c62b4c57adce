/*
 * clock.c - a global clock for the window method: each rank's CLOCK_MONOTONIC mapped onto
 * rank 0's by a fitted offset and linear drift (Hunold and Carpen-Amarie's HCA, 2015, fits the
 * same model; here every rank fits against rank 0 directly, as in Jones and Koenig, which
 * costs O(p) ping-pongs instead of O(log p) rounds and is no concern at a machine's ranks).
 *
 * The driver asks at every window cell; rank 0 grants a refresh when the last is REFRESH
 * seconds old (or there is none). A refresh adds one fit point per rank, an offset
 * measurement: EXCHANGES ping-pongs with rank 0, the one with the shortest round trip giving
 * offset = (t_send + t_back) / 2 - t_rank0 at local time (t_send + t_back) / 2. Each rank fits
 * offset = a + b t by least squares over its last FIT_POINTS points; the drift b is fitted once
 * they span DRIFT_SPAN seconds (a slope from points milliseconds apart is noise that
 * extrapolation would multiply) and is 0 until then.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "arena.h"

#define FIT_POINTS 64
#define EXCHANGES 32
#define DRIFT_SPAN 2.0
#define REFRESH 1.0

static struct {
    double x[FIT_POINTS], y[FIT_POINTS];
    int n, next;
    double a, b;  /* offset(t) = a + b t, seconds; 0 on rank 0 */
    double rtt;   /* rank 0: the longest of the ranks' shortest round trips at the last refresh */
    double last;  /* rank 0: when the last refresh was (CLOCK_MONOTONIC), 0 before the first */
} clk;

/* Rank 0 answers EXCHANGES pings of rank r with its time; rank r keeps the best exchange as a
 * fit point and returns its round trip. Only ranks 0 and r call it. */
static double fit_point(const arena_module *m, int rank, int r)
{
    double t = 0, best = INFINITY;
    for (int e = 0; e < EXCHANGES; e++) {
        if (rank == 0) {
            m->recv(&t, sizeof t, r);
            t = arena_monotonic();
            m->send(&t, sizeof t, r);
            continue;
        }
        double t1 = arena_monotonic();
        m->send(&t1, sizeof t1, 0);
        m->recv(&t, sizeof t, 0);
        double t2 = arena_monotonic();
        if (t2 - t1 < best) {
            best = t2 - t1;
            clk.x[clk.next] = (t1 + t2) / 2;
            clk.y[clk.next] = (t1 + t2) / 2 - t;
        }
    }
    if (rank != 0) {
        clk.next = (clk.next + 1) % FIT_POINTS;
        clk.n += clk.n < FIT_POINTS;
    }
    return best;
}

/* Least squares over the kept points; the drift only once they span DRIFT_SPAN. */
static void fit(void)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < clk.n; i++) {
        mx += clk.x[i] / clk.n;
        my += clk.y[i] / clk.n;
        lo = clk.x[i] < lo ? clk.x[i] : lo;
        hi = clk.x[i] > hi ? clk.x[i] : hi;
    }
    for (int i = 0; i < clk.n; i++) {
        sxx += (clk.x[i] - mx) * (clk.x[i] - mx);
        sxy += (clk.x[i] - mx) * (clk.y[i] - my);
    }
    clk.b = hi - lo >= DRIFT_SPAN && sxx > 0 ? sxy / sxx : 0;
    clk.a = my - clk.b * mx;
}

/* Rank 0 decides whether a refresh is due and tells the others. */
static int due(const arena_module *m, int rank, int np)
{
    int yes = clk.last == 0 || arena_monotonic() - clk.last >= REFRESH;
    if (rank != 0) {
        m->recv(&yes, sizeof yes, 0);
        return yes;
    }
    for (int r = 1; r < np; r++)
        m->send(&yes, sizeof yes, r);
    return yes;
}

void arena_clock_refresh(const arena_module *m, int rank, int np)
{
    if (!due(m, rank, np))
        return;
    clk.rtt = 0;
    clk.last = arena_monotonic();
    for (int r = 1; r < np; r++) {
        double rtt = rank == 0 || rank == r ? fit_point(m, rank, r) : 0;
        if (rank == r) {
            fit();
            m->send(&rtt, sizeof rtt, 0);
        } else if (rank == 0) {
            m->recv(&rtt, sizeof rtt, r);
            clk.rtt = rtt > clk.rtt ? rtt : clk.rtt;
        }
    }
}

double arena_clock_offset(double t) { return clk.a + clk.b * t; }
double arena_clock_drift(void) { return clk.b; }
double arena_clock_rtt(void) { return clk.rtt; }

double arena_global_now(void)
{
    double t = arena_monotonic();
    return t - (clk.a + clk.b * t);
}
