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

enum step_kind { STEP_RUN, STEP_OBS, STEP_END };

#define LOOKS 3 /* warm-ups that may check an earlier launch's k (see check_hint) */

/* Where rank 0's time in a cell went: steps that warmed up or calibrated, steps that observed
 * (their barriers and relays included), and the observations' timed calls (k x time per call). */
struct spent {
    double calibrating, observing, timed;
};

/* A cell's observations on this rank: time per call, and each extra (xs[x * nobs + i]). */
struct observations {
    double *times, *xs;
    long n;
    int64_t k; /* the calls per observation */
};

struct step {
    int64_t k;
    int32_t kind, idx;
    double start, len; /* window method: the first window's start (global clock), its length */
};

/* One step's calls as this rank timed them. */
struct step_time {
    double per_call; /* seconds per call, the cell's planted factor applied */
    double began;    /* when the calls began (monotonic clock) */
    double wall;     /* seconds of the whole step on this rank, the method's own waits included */
};

/* What rank 0 decides the next step from. */
struct calibration {
    int looks;      /* warm-ups left to check an earlier launch's k (see check_hint) */
    int confirmed;  /* k reached the target once: a second time fixes it */
    long rounds;    /* steps decided */
    double started; /* when the cell began (the library's clock) */
};

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
    struct bench_args args = c->args;
    if (c->sync == SYNC_WINDOW && st->kind == STEP_OBS)
        return arena_window_calls(c->bench, size, st->k, b, st->start, st->len);
    if (c->sync != SYNC_LOOP)
        return arena_barrier_calls(c->bench, size, st->k, b);
    if (st->kind != STEP_OBS)
        args.hold = 0;
    return arena_loop_calls(c->bench, size, st->k, b, args);
}

/* One step on this rank: the driver's barrier, then the calls timed, the cell's planted
 * slowdown `factor` (faults.c, 1 outside tests) applied; the CPU share of the calls noted. */
static struct step_time run_step(const struct cmd *c, const struct bufs *b,
                                 const struct step *st, double factor)
{
    arena_barrier();
    double w0 = arena_monotonic(), c0 = cpu_seconds();
    double t = timed(c, b, st), wall = arena_monotonic() - w0;
    arena_note(X_CPU, (cpu_seconds() - c0) / wall);
    return (struct step_time){t * factor, w0, wall};
}

/* The window method's figure of a step. A calibration step's is the slowest rank's (it sizes
 * the window). An observation that kept no call (NaN) is redone, its calls counted in the next
 * one's late share (*wiped); one that kept calls notes its late share, clock offset and drift. */
static double window_figure(const struct step *st, struct step_time tm, double *wiped)
{
    if (st->kind != STEP_OBS)
        return arena_slowest(tm.per_call);
    if (isnan(tm.per_call)) {
        *wiped += (double)st->k;
        return tm.per_call;
    }
    double k1 = (double)st->k;
    arena_note(X_LATE, (arena_noted(X_LATE) * k1 + *wiped) / (k1 + *wiped));
    arena_note(X_CLOCK_OFFSET, arena_clock_offset(tm.began));
    arena_note(X_CLOCK_DRIFT, arena_clock_drift());
    *wiped = 0;
    return tm.per_call;
}

/* Keep an observation's time per call t and its extras. */
static void keep(const struct cmd *c, struct observations *obs, const struct step *st, double t,
                 struct spent *spent)
{
    for (int x = 0; x < X_COUNT; x++)
        obs->xs[(size_t)x * (size_t)c->nobs + (size_t)obs->n] = arena_noted((enum extra)x);
    obs->times[obs->n++] = t;
    obs->k = st->k;
    spent->timed += t * (double)st->k;
}

/* The warm-up that checks an earlier launch's k: the k is kept where its calls would last a
 * quarter to 4 targets here (it reached the target twice there, and the same k runs the same
 * loop in every launch: launch levels differ up to 3x on this kind of machine), and where it was
 * KMIN or fewer (it does not shrink). A warm-up that read them longer is run again, up to
 * LOOKS in all, before it counts, as its first call may have paid for the cell's cold start:
 * MPICH's 4 KiB pingpong (92 calls) and 256 KiB reduce (2) read over 4 targets in every later
 * launch and calibrated again, 2 steps of a target or more each; a second look kept k in all of
 * them. A third, as a quarter target's warm-up (hundreds of microseconds) that the scheduler
 * preempts once (a timeslice: milliseconds) also reads over 4 targets: a test's second look did,
 * in 1 of 10 fresh clones' runs. Otherwise calibration starts from this step's time per call. */
static void check_hint(const struct cmd *c, struct calibration *cal, struct step *st, double tk)
{
    double at_k = tk * (double)c->k;
    cal->looks--;
    if (at_k >= c->target / 4 && (at_k <= 4 * c->target || c->k <= KMIN)) {
        st->k = c->k;
        st->kind = STEP_OBS;
    } else if (at_k > 4 * c->target && cal->looks > 0) {
        return; /* the same warm-up again */
    } else {
        cal->looks = 0;
        double k1 = c->target * 1.25 / (tk > 1e-12 ? tk : 1e-12);
        st->k = k1 < 1 ? 1 : k1 > (double)KMAX ? KMAX : (int64_t)k1;
    }
}

/* A calibration step after the first: k grows until its calls last the target, then must
 * reach it twice in a row (one hiccup must not fix it) before the observations begin. */
static void calibrate(const struct cmd *c, struct calibration *cal, struct step *st, double tk)
{
    double at_k = tk * (double)st->k;
    if (at_k < c->target && st->k < KMAX) {
        double grow = c->target / (at_k > 1e-9 ? at_k : 1e-9) * 1.25;
        grow = grow < 2 ? 2 : grow > 1024 ? 1024 : grow;
        st->k = (int64_t)((double)st->k * grow);
        st->k = st->k > KMAX ? KMAX : st->k;
        cal->confirmed = 0;
    } else if (!cal->confirmed && st->k > 1 && st->k < KMAX) {
        cal->confirmed = 1; /* (one call that lasts the target needs no second look) */
    } else {
        st->kind = STEP_OBS;
        st->k = st->k < KMIN && tk <= c->target ? KMIN : st->k;
    }
}

/* Rank 0, after a step: the next step, from the step's figure t (rank 0's time per call; a
 * window method's calibration step: the slowest rank's) and wall, its seconds. */
static void next_step(const struct cmd *c, struct calibration *cal, struct step *st, double t,
                      double wall)
{
    cal->rounds++;
    if (c->sync == SYNC_WINDOW)
        arena_next_window(st->kind == STEP_RUN, &st->start, &st->len, &t);
    /* the barrier method sizes k by the step's wall time, its barriers included: timed alone,
     * an oversubscribed call of microseconds behind a barrier of milliseconds grew k until an
     * observation took seconds, far past the cell's time limit */
    double tk = c->sync == SYNC_BARRIER ? wall / (double)st->k : t;
    if (st->kind == STEP_OBS) {
        st->idx += !isnan(t);
        if (st->idx >= c->nobs || M->now() - cal->started > c->max_time)
            st->kind = STEP_END;
    } else if (cal->looks > 0) {
        check_hint(c, cal, st, tk);
    } else if (cal->rounds > 1) {
        calibrate(c, cal, st, tk);
    }
}

/* Rank 0 decides each step (warm-up, calibration, observations, end); all ranks follow.
 * `factor` is the cell's planted slowdown (faults.c), 1 outside tests. */
static void run_steps(const struct cmd *c, const struct bufs *b, struct observations *obs,
                      double factor, struct spent *spent)
{
    struct calibration cal = {c->k > 0 && c->k <= KMAX ? LOOKS : 0, 0, 0, M->now()};
    /* an earlier launch's k is checked on a warm-up of a quarter of its calls */
    struct step st = {cal.looks ? (c->k + 3) / 4 : 1, STEP_RUN, 0, 0, 0};
    double wiped = 0; /* window method: calls of observations that kept none */
    int first = 1;    /* the cell's first step: a planted cold start applies (faults.c) */
    if (c->sync == SYNC_WINDOW)
        arena_clock_refresh(M, arena_rank, arena_np);
    for (;;) {
        double step_began = arena_monotonic();
        relay_step(&st);
        if (st.kind == STEP_END)
            return;
        int observing = st.kind == STEP_OBS;
        struct step_time tm = run_step(c, b, &st, factor * (first ? arena_fault_cold() : 1));
        first = 0;
        double t = c->sync == SYNC_WINDOW ? window_figure(&st, tm, &wiped) : tm.per_call;
        if (observing && !isnan(t))
            keep(c, obs, &st, t, spent);
        if (arena_rank != 0)
            continue;
        if (!observing && (c->bench == B_CPU || is_app(c->bench))) {
            st.kind = STEP_OBS; /* k = 1; this warm-up is left out of spent */
            continue;
        }
        next_step(c, &cal, &st, t, tm.wall);
        *(observing ? &spent->observing : &spent->calibrating) += arena_monotonic() - step_began;
    }
}

static void print_extras(const struct cmd *c, long i, double **xs)
{
    for (int x = 0; x < X_COUNT; x++) {
        if (!arena_in_cell((enum extra)x))
            continue;
        printf("extra\t%lld\t%ld\t%s", (long long)c->id, i, arena_extra_name((enum extra)x));
        for (int p = 0; p < arena_np; p++)
            printf("\t%.9e", xs[p][(size_t)x * (size_t)c->nobs + (size_t)i]);
        putchar('\n');
    }
}

/* Rank 0: every rank's observations and extras, printed; the first wrong answer any rank
 * reports ends the cell invalid. */
static void report(const struct cmd *c, const struct observations *obs, const char *bad,
                   const struct spent *spent)
{
    size_t nx = (size_t)X_COUNT * (size_t)c->nobs;
    double **all = arena_xcalloc((size_t)arena_np, sizeof *all, "observations");
    double **allx = arena_xcalloc((size_t)arena_np, sizeof *allx, "observations");
    char peer_msg[256], msg[256];
    all[0] = obs->times;
    allx[0] = obs->xs;
    for (int p = 1; p < arena_np; p++) {
        all[p] = arena_xcalloc((size_t)c->nobs, sizeof **all, "observations");
        allx[p] = arena_xcalloc(nx, sizeof **allx, "observations");
        M->recv(all[p], (size_t)obs->n * sizeof **all, p);
        M->recv(allx[p], nx * sizeof **allx, p);
        M->recv(peer_msg, sizeof peer_msg, p);
        if (!bad && peer_msg[0]) { snprintf(msg, sizeof msg, "%s", peer_msg); bad = msg; }
    }
    for (long i = 0; i < obs->n; i++) {
        printf("obs\t%lld\t%ld\t%lld", (long long)c->id, i, (long long)obs->k);
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
    arena_extras_new_cell();
    arena_app_reset();
    if (c->bench == B_MEMORY)
        arena_memory_fresh();
    struct bufs b;
    arena_bufs_alloc(&b, c->bench, (size_t)c->size, c->offcache);
    b.s = arena_fault_send_buffer(c->bench, b.s);
    if (is_ext(c->bench))
        arena_ext_setup(c->bench, (size_t)c->size, c->args.burst, &b);
    size_t nx = (size_t)X_COUNT * (size_t)c->nobs;
    struct observations obs = {arena_xcalloc((size_t)c->nobs, sizeof *obs.times, "observations"),
                               arena_xcalloc(nx, sizeof *obs.xs, "observations"), 0, 0};
    struct spent spent = {0, 0, 0};
    run_steps(c, &b, &obs, arena_fault_factor(c->bench, c->size), &spent);
    const char *bad = c->validate && !is_app(c->bench)
        ? arena_validate(c->bench, (size_t)c->size, &b, c->args.burst, msg, sizeof msg) : NULL;
    if (!bad && arena_app_bad()[0]) bad = arena_app_bad();
    if (is_ext(c->bench)) { /* when every rank is done with the cell (a rank may still check
                              * a file), and before its end is printed (its files gone by then) */
        arena_barrier();
        arena_ext_teardown(c->bench);
    }
    if (arena_rank == 0) {
        report(c, &obs, bad, &spent);
    } else {
        char out[256] = "";
        if (bad) snprintf(out, sizeof out, "%s", bad);
        M->send(obs.times, (size_t)obs.n * sizeof *obs.times, 0);
        M->send(obs.xs, nx * sizeof *obs.xs, 0);
        M->send(out, sizeof out, 0);
    }
    free(obs.times);
    free(obs.xs);
    arena_bufs_free(&b);
}
