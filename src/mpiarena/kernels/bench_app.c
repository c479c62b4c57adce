/*
 * bench_app.c - the application kernels (app-pi, app-matvec, app-matmul, app-rowmm,
 * app-primes, app-md, app-stencil: apps.c; size = the problem size) run once per observation
 * (k = 1) and report the run's wall time, t_send, t_recv, t_sendrecv, t_scatter, t_reduce
 * (seconds inside each kind of call they make) and their correctness figure (pi_error,
 * checksum_error, primes, energy_drift; rank 0's, NaN elsewhere); a wrong answer ends the cell
 * `invalid`.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "core.h"

/* The correctness figure of each application kernel, in arena_app's order. */
static const enum extra app_check[ARENA_NAPP] = {
    X_PI_ERROR, X_CHECKSUM_ERROR, X_CHECKSUM_ERROR, X_CHECKSUM_ERROR, X_PRIMES, X_ENERGY_DRIFT,
    X_CHECKSUM_ERROR,
};

static char app_bad[160]; /* rank 0: why an application kernel's answer was wrong this cell */

void arena_app_reset(void) { app_bad[0] = 0; }

const char *arena_app_bad(void) { return app_bad; }

/* k runs of an application kernel (apps.c): its wall time per run; the time per call kind and
 * the correctness figure of the last run are noted, a wrong answer kept for the cell. */
double arena_run_app(int bench, size_t size, long k)
{
    struct arena_app_out o;
    enum arena_app app = (enum arena_app)(bench - B_APP_PI);
    double wall = 0;
    for (long i = 0; i < k; i++) {
        arena_app_run(app, (long)size, arena_rank, arena_np, &o);
        wall += o.wall;
        if (o.bad[0] && !app_bad[0]) snprintf(app_bad, sizeof app_bad, "%s", o.bad);
    }
    for (int call = 0; call < ARENA_NCALL; call++)
        if (arena_app_calls[app] & 1u << call)
            arena_note((enum extra)(X_T_SEND + call), o.calls[call]);
    arena_note(app_check[app], o.check);
    return wall / (double)k;
}
