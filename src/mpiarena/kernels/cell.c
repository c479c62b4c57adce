/*
 * cell.c - one cell: rank 0 decides each step (warm-up, calibration of k, observations, end)
 * and every rank follows; each step's calls are timed by the cell's method (timing_*.c). The
 * ranks' figures go to rank 0, which prints the cell's obs, extra and done lines.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core.h"

static const char *extra_names[X_COUNT] = {
    "cpu", "rss_init", "rss", "peak",
    "pure", "compute", "overlapped", "pure_iallreduce", "compute_iallreduce",
    "overlapped_iallreduce", "pure_ialltoall", "compute_ialltoall", "overlapped_ialltoall",
    "transfer", "after",
    "t_send", "t_recv", "t_sendrecv", "t_scatter", "t_reduce",
    "pi_error", "checksum_error", "primes", "energy_drift",
    "late", "clock_offset", "clock_drift",
    "prtt1", "prttn", "prttd", "delay", "o_s", "o_r", "prtt_n",
};

enum step_kind { STEP_RUN, STEP_OBS, STEP_END };

/* Where rank 0's time in a cell went: steps that warmed up or calibrated, steps that observed
 * (their barriers and relays included), and the observations' timed calls (k x time per call). */
struct spent {
    double calibrating, observing, timed;
};

struct step {
    int64_t k;
    int32_t kind, idx;
    double start, len; /* window method: the first window's start (global clock), its length */
};

static double extra_now[X_COUNT]; /* this observation's extras, set by the loop that ran */
static int extra_set[X_COUNT];    /* which extras the current cell has */

void arena_note(enum extra x, double v)
{
    extra_now[x] = v;
    extra_set[x] = 1;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void relay_step(struct step *st)
{
    if (arena_rank == 0)
        for (int p = 1; p < arena_np; p++) M->send(st, sizeof *st, p);
    else
        M->recv(st, sizeof *st, 0);
}

/* One step's calls timed by the cell's method: seconds per call on this rank. The window
 * method's warm-up and calibration run under the barrier method (they size the window). */
static double timed(const struct cmd *c, const struct bufs *b, const struct step *st)
{
    size_t size = (size_t)c->size;
    if (c->sync == SYNC_WINDOW && st->kind == STEP_OBS)
        return arena_window_calls(c->bench, size, st->k, b, st->start, st->len);
    if (c->sync != SYNC_LOOP)
        return arena_barrier_calls(c->bench, size, st->k, b);
    return arena_loop_calls(c->bench, size, st->k, b, c->window,
                            st->kind == STEP_OBS ? c->hold : 0);
}

/* Rank 0 decides each step (warm-up, calibration, observations, end); all ranks follow.
 * `factor` is the cell's planted slowdown (faults.c), 1 outside tests. */
static long run_steps(const struct cmd *c, const struct bufs *b, double *times, double *xs,
                      int64_t *k, double factor, struct spent *spent)
{
    int hinted = c->k > 0 && c->k <= KMAX;
    /* an earlier launch's k is checked on a warm-up of a quarter of its calls */
    struct step st = {hinted ? (c->k + 3) / 4 : 1, STEP_RUN, 0, 0, 0};
    long nobs = 0, rounds = 0;
    /* k must reach the target twice in a row (one hiccup must not fix it) */
    int confirmed = 0;
    int window = c->sync == SYNC_WINDOW;
    double start = M->now(), wiped = 0; /* window: calls of observations that kept none */
    if (window)
        arena_clock_refresh(M, arena_rank, arena_np);
    for (;;) {
        double began = arena_monotonic();
        relay_step(&st);
        if (st.kind == STEP_END)
            break;
        int observing = st.kind == STEP_OBS;
        arena_barrier();
        double w0 = arena_monotonic(), c0 = cpu_seconds();
        double t = timed(c, b, &st), wall = arena_monotonic() - w0;
        arena_note(X_CPU, (cpu_seconds() - c0) / wall);
        t *= factor;
        if (window && st.kind == STEP_OBS && isnan(t)) {
            wiped += (double)st.k; /* no observation: redone, its calls counted as dropped */
        } else if (window && st.kind == STEP_OBS) {
            double k1 = (double)st.k;
            arena_note(X_LATE, (extra_now[X_LATE] * k1 + wiped) / (k1 + wiped));
            arena_note(X_CLOCK_OFFSET, arena_clock_offset(w0));
            arena_note(X_CLOCK_DRIFT, arena_clock_drift());
            wiped = 0;
        } else if (window) {
            t = arena_slowest(t);
        }
        if (st.kind == STEP_OBS && !isnan(t)) {
            for (int x = 0; x < X_COUNT; x++)
                xs[(size_t)x * (size_t)c->nobs + (size_t)nobs] = extra_now[x];
            times[nobs++] = t;
            *k = st.k;
            spent->timed += t * (double)st.k;
        }
        if (arena_rank != 0)
            continue;
        rounds++;
        if (window)
            arena_next_window(st.kind == STEP_RUN, &st.start, &st.len, &t);
        /* the barrier method sizes k by the step's wall time, its barriers included: timed
         * alone, an oversubscribed call of microseconds behind a barrier of milliseconds grew k
         * until an observation took seconds, far past the cell's time limit */
        double tk = c->sync == SYNC_BARRIER ? wall / (double)st.k : t;
        if ((c->bench == B_CPU || is_app(c->bench)) && st.kind == STEP_RUN) { /* k = 1 */
            st.kind = STEP_OBS;
            continue;
        }
        if (st.kind == STEP_RUN && hinted) {
            /* the warm-up: an earlier launch's k is kept where its calls would last a quarter
             * to 4 targets here (it reached the target twice there, and the same k runs the
             * same loop in every launch: launch levels differ up to 3x on this kind of
             * machine), and where one call lasts longer (k = 1 cannot shrink); otherwise
             * calibration starts from this step's time per call */
            double at_k = tk * (double)c->k;
            hinted = 0;
            if (at_k >= c->target / 4 && (at_k <= 4 * c->target || c->k == 1)) {
                st.k = c->k;
                st.kind = STEP_OBS;
            } else {
                double k1 = c->target * 1.25 / (tk > 1e-12 ? tk : 1e-12);
                st.k = k1 < 1 ? 1 : k1 > (double)KMAX ? KMAX : (int64_t)k1;
            }
        } else if (st.kind == STEP_RUN && rounds > 1 && tk * (double)st.k < c->target
                   && st.k < KMAX) {
            double grow = c->target / (tk * (double)st.k > 1e-9 ? tk * (double)st.k : 1e-9)
                * 1.25;
            grow = grow < 2 ? 2 : grow > 1024 ? 1024 : grow;
            st.k = (int64_t)((double)st.k * grow);
            st.k = st.k > KMAX ? KMAX : st.k;
            confirmed = 0;
        } else if (st.kind == STEP_RUN && rounds > 1 && !confirmed && st.k > 1
                   && st.k < KMAX) {
            confirmed = 1; /* (one call that lasts the target needs no second look) */
        } else if (st.kind == STEP_RUN && rounds > 1) {
            st.kind = STEP_OBS;
        } else if (st.kind == STEP_OBS) {
            st.idx += !isnan(t);
            if (st.idx >= c->nobs || M->now() - start > c->max_time)
                st.kind = STEP_END;
        }
        *(observing ? &spent->observing : &spent->calibrating) += arena_monotonic() - began;
    }
    return nobs;
}

static void print_extras(const struct cmd *c, long i, double **xs)
{
    for (int x = 0; x < X_COUNT; x++) {
        if (!extra_set[x])
            continue;
        printf("extra\t%lld\t%ld\t%s", (long long)c->id, i, extra_names[x]);
        for (int p = 0; p < arena_np; p++)
            printf("\t%.9e", xs[p][(size_t)x * (size_t)c->nobs + (size_t)i]);
        putchar('\n');
    }
}

/* Rank 0: every rank's observations and extras, printed; the first wrong answer any rank
 * reports ends the cell invalid. */
static void report(const struct cmd *c, long n, int64_t k, double *times, double *xs,
                   const char *bad, const struct spent *spent)
{
    size_t nx = (size_t)X_COUNT * (size_t)c->nobs;
    double **all = arena_xcalloc((size_t)arena_np, sizeof *all, "observations");
    double **allx = arena_xcalloc((size_t)arena_np, sizeof *allx, "observations");
    char peer_msg[256], msg[256];
    all[0] = times;
    allx[0] = xs;
    for (int p = 1; p < arena_np; p++) {
        all[p] = arena_xcalloc((size_t)c->nobs, sizeof **all, "observations");
        allx[p] = arena_xcalloc(nx, sizeof **allx, "observations");
        M->recv(all[p], (size_t)n * sizeof **all, p);
        M->recv(allx[p], nx * sizeof **allx, p);
        M->recv(peer_msg, sizeof peer_msg, p);
        if (!bad && peer_msg[0]) { snprintf(msg, sizeof msg, "%s", peer_msg); bad = msg; }
    }
    for (long i = 0; i < n; i++) {
        printf("obs\t%lld\t%ld\t%lld", (long long)c->id, i, (long long)k);
        for (int p = 0; p < arena_np; p++) printf("\t%.9e", all[p][i]);
        putchar('\n');
        print_extras(c, i, allx);
    }
    printf("spent\t%lld\t%.6e\t%.6e\t%.6e\n", (long long)c->id, spent->calibrating,
           spent->observing, spent->timed);
    printf("done\t%lld\t%s\t%s\n", (long long)c->id, bad ? "invalid" : "ok", bad ? bad : "");
    for (int p = 1; p < arena_np; p++) free(all[p]), free(allx[p]);
    free(all);
    free(allx);
}

void arena_run_cell(const struct cmd *c)
{
    char msg[256] = "";
    const char *why = arena_unrunnable(c, msg, sizeof msg);
    if (why) {
        if (arena_rank == 0) printf("done\t%lld\tna\t%s\n", (long long)c->id, why);
        return;
    }
    memset(extra_set, 0, sizeof extra_set);
    arena_app_reset();
    if (c->bench == B_MEMORY)
        arena_memory_fresh();
    struct bufs b;
    arena_bufs_alloc(&b, c->bench, (size_t)c->size, c->offcache);
    if (is_ext(c->bench))
        arena_ext_setup(c->bench, (size_t)c->size, c->window, &b);
    size_t nx = (size_t)X_COUNT * (size_t)c->nobs;
    double *times = arena_xcalloc((size_t)c->nobs, sizeof *times, "observations");
    double *xs = arena_xcalloc(nx, sizeof *xs, "observations");
    int64_t k = 0;
    struct spent spent = {0, 0, 0};
    long n = run_steps(c, &b, times, xs, &k, arena_fault_factor(c->bench, c->size), &spent);
    const char *bad = c->validate && !is_app(c->bench)
        ? arena_validate(c->bench, (size_t)c->size, &b, c->window, msg, sizeof msg) : NULL;
    if (!bad && arena_app_bad()[0]) bad = arena_app_bad();
    if (is_ext(c->bench)) { /* when every rank is done with the cell (a rank may still check
                              * a file), and before its end is printed (its files gone by then) */
        arena_barrier();
        arena_ext_teardown(c->bench);
    }
    if (arena_rank == 0) {
        report(c, n, k, times, xs, bad, &spent);
    } else {
        char out[256] = "";
        if (bad) snprintf(out, sizeof out, "%s", bad);
        M->send(times, (size_t)n * sizeof *times, 0);
        M->send(xs, nx * sizeof *xs, 0);
        M->send(out, sizeof out, 0);
    }
    free(times);
    free(xs);
    arena_bufs_free(&b);
}
