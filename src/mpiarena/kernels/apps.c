/*
 * apps.c - application kernels, written once against the module interface (arena.h), so that
 * every family runs the same code (the programs of seeds 002 and 004):
 *
 *   pi       the trapezoid rule for 4/(1+x^2) on [0,1], size trapezoids, summed by reduce
 *   matvec   y = A x, order size: scatter A's column blocks and x, reduce y (seed 004)
 *   matmul   C = A B, order size: scatter A's column blocks and B's row blocks, reduce C
 *   rowmm    C = A B, order size: rank 0 sends B and row blocks of A, collects C's rows (002)
 *   primes   primes up to size by trial division, the range split in blocks, counts sent back
 *   md       size Lennard-Jones particles (2-D triangular crystal, 8 rows), velocity Verlet,
 *            a slab of columns per rank, halo columns exchanged with both neighbours each step
 *   stencil  Jacobi on a size x size grid, row blocks, halo rows exchanged each sweep
 *
 * Rank 0 generates the data (deterministic formulas), the clock runs from the first message
 * to the answer on rank 0, every call is timed per kind, and rank 0 checks the answer against
 * a serial computation (cached per size) or, for pi, against M_PI. No libm: the core links none.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define M (&arena_module_impl)

const unsigned arena_app_calls[ARENA_NAPP] = {
    [ARENA_APP_PI] = 1u << ARENA_CALL_REDUCE,
    [ARENA_APP_MATVEC] = 1u << ARENA_CALL_SCATTER | 1u << ARENA_CALL_REDUCE,
    [ARENA_APP_MATMUL] = 1u << ARENA_CALL_SCATTER | 1u << ARENA_CALL_REDUCE,
    [ARENA_APP_ROWMM] = 1u << ARENA_CALL_SEND | 1u << ARENA_CALL_RECV,
    [ARENA_APP_PRIMES] = 1u << ARENA_CALL_SEND | 1u << ARENA_CALL_RECV,
    [ARENA_APP_MD] = 1u << ARENA_CALL_SENDRECV | 1u << ARENA_CALL_SEND | 1u << ARENA_CALL_RECV,
    [ARENA_APP_STENCIL] = 1u << ARENA_CALL_SENDRECV | 1u << ARENA_CALL_SEND | 1u << ARENA_CALL_RECV,
};

static int me, nr;     /* this rank and the number of ranks (1 for the serial references) */
static double *spent;  /* seconds per call kind of the current run */

static void *alloc(size_t n) { return arena_xcalloc(n, 1, "an application kernel"); }

/* The module's calls, timed per kind. */
static void send_(const void *b, size_t n, int peer)
{
    double t = M->now();
    M->send(b, n, peer);
    spent[ARENA_CALL_SEND] += M->now() - t;
}

static void recv_(void *b, size_t n, int peer)
{
    double t = M->now();
    M->recv(b, n, peer);
    spent[ARENA_CALL_RECV] += M->now() - t;
}

static void sendrecv_(const void *s, void *r, size_t n, int peer)
{
    double t = M->now();
    M->sendrecv(s, r, n, peer);
    spent[ARENA_CALL_SENDRECV] += M->now() - t;
}

static void scatter_(const void *s, void *r, size_t bytes)
{
    double t = M->now();
    if (nr > 1) M->coll(ARENA_SCATTER, s, r, bytes);
    else memcpy(r, s, bytes);
    spent[ARENA_CALL_SCATTER] += M->now() - t;
}

static void reduce_(const double *s, double *r, size_t n)
{
    double t = M->now();
    if (nr > 1) M->coll(ARENA_REDUCE_DOUBLE, s, r, n * sizeof *s);
    else memcpy(r, s, n * sizeof *s);
    spent[ARENA_CALL_REDUCE] += M->now() - t;
}

/* Sum n doubles onto rank 0 with point-to-point messages (the kernels without collectives). */
static void p2p_sum(double *v, int n)
{
    double x[4];
    if (me != 0) {
        send_(v, (size_t)n * sizeof *v, 0);
        return;
    }
    for (int p = 1; p < nr; p++) {
        recv_(x, (size_t)n * sizeof *x, p);
        for (int i = 0; i < n; i++) v[i] += x[i];
    }
}

/* Exchange n bytes with the rank before and after in a chain of ranks: pairs (0,1), (2,3)...
 * then (1,2), (3,4)... so that no cycle of waiting can form. */
static void halo(const void *lo_s, void *lo_r, const void *hi_s, void *hi_r, size_t n)
{
    for (int phase = 0; phase < 2; phase++) {
        int partner = me % 2 == phase ? me + 1 : me - 1;
        if (partner < 0 || partner >= nr) continue;
        if (partner > me) sendrecv_(hi_s, hi_r, n, partner);
        else sendrecv_(lo_s, lo_r, n, partner);
    }
}

static long block_lo(long n, int r) { return n * r / nr; }

/* ---- pi ---- */
static double f_pi(double x) { return 4.0 / (1.0 + x * x); }

static double pi(long n)
{
    double h = 1.0 / (double)n, part = 0, total = 0;
    long lo = block_lo(n, me), hi = block_lo(n, me + 1);
    double fa = f_pi((double)lo * h);
    for (long i = lo; i < hi; i++) {
        double fb = f_pi((double)(i + 1) * h);
        part += fa + fb;
        fa = fb;
    }
    part *= h / 2;
    reduce_(&part, &total, 1);
    return total;
}

/* ---- the matrices: A(i,j), B(i,j), x(j), exact in binary up to the products' rounding ---- */
static double a_of(long i, long j) { return (double)((i * 7 + j * 3) % 11 - 5) / 8.0; }
static double b_of(long i, long j) { return (double)((i * 5 + j * 2) % 13 - 6) / 16.0; }

/* Weighted checksum of an n x m result and its scale (the same sum of absolute values). */
static void checksum(const double *c, long n, long m, double *sum, double *scale)
{
    *sum = *scale = 0;
    for (long k = 0; k < n * m; k++) {
        double w = 1 + (double)(k % 7) / 8;
        *sum += w * c[k];
        *scale += w * fabs(c[k]);
    }
}

/* The serial product A B (m = n) or A x (m = 1), row-major n x m: the reference. */
static double *serial_product(long n, long m)
{
    double *c = alloc((size_t)(n * m) * sizeof *c);
    for (long i = 0; i < n; i++)
        for (long col = 0; col < m; col++) {
            double s = 0;
            for (long k = 0; k < n; k++) s += a_of(i, k) * b_of(k, col);
            c[i * m + col] = s;
        }
    return c;
}

/* A (n x n) times B (n x m) by scatter and reduce: rank r gets A's columns and B's rows of block
 * r (padded with zeros to nr equal blocks), forms its n x m partial product, and the partial
 * products are summed onto rank 0. Returns C on rank 0 (caller frees), NULL elsewhere. */
static double *scatter_product(long n, long m, double *t0)
{
    long blk = (n + nr - 1) / nr;
    size_t abytes = (size_t)(blk * n) * sizeof(double), bbytes = (size_t)(blk * m) * sizeof(double);
    double *a = NULL, *b = NULL;
    double *al = alloc(abytes), *bl = alloc(bbytes), *part = alloc((size_t)(n * m) * sizeof *part);
    double *c = alloc((size_t)(n * m) * sizeof *c); /* every rank: PVM reduces in place */
    if (me == 0) { /* A column-major, B row-major: a block of either is contiguous */
        a = alloc(abytes * (size_t)nr);
        b = alloc(bbytes * (size_t)nr);
        for (long j = 0; j < n; j++)
            for (long i = 0; i < n; i++) a[j * n + i] = a_of(i, j);
        for (long k = 0; k < n; k++)
            for (long col = 0; col < m; col++) b[k * m + col] = b_of(k, col);
    }
    *t0 = M->now();
    scatter_(a, al, abytes);
    scatter_(b, bl, bbytes);
    for (long k = 0; k < blk; k++)
        for (long i = 0; i < n; i++) {
            double aik = al[k * n + i];
            for (long col = 0; col < m; col++) part[i * m + col] += aik * bl[k * m + col];
        }
    reduce_(part, c, (size_t)(n * m));
    free(a), free(b), free(al), free(bl), free(part);
    if (me == 0) return c;
    free(c);
    return NULL;
}

/* ---- row-block matrix multiply, master and workers (seed 002) ---- */
static double *rowmm(long n, double *t0)
{
    size_t row = (size_t)n * sizeof(double);
    long lo = block_lo(n, me), hi = block_lo(n, me + 1);
    double *a = alloc(row * (size_t)(me == 0 ? n : hi - lo)), *b = alloc(row * (size_t)n);
    double *c = alloc(row * (size_t)(me == 0 ? n : hi - lo));
    if (me == 0)
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++) a[i * n + j] = a_of(i, j), b[i * n + j] = b_of(i, j);
    *t0 = M->now();
    if (me == 0) {
        for (int p = 1; p < nr; p++) {
            long plo = block_lo(n, p), phi = block_lo(n, p + 1);
            send_(b, row * (size_t)n, p);
            send_(a + plo * n, row * (size_t)(phi - plo), p);
        }
    } else {
        recv_(b, row * (size_t)n, 0);
        recv_(a, row * (size_t)(hi - lo), 0);
    }
    for (long i = 0; i < hi - lo; i++)
        for (long k = 0; k < n; k++) {
            double aik = a[i * n + k];
            for (long j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
        }
    if (me == 0)
        for (int p = 1; p < nr; p++) {
            long plo = block_lo(n, p), phi = block_lo(n, p + 1);
            recv_(c + plo * n, row * (size_t)(phi - plo), p);
        }
    else
        send_(c, row * (size_t)(hi - lo), 0);
    free(a), free(b);
    if (me == 0) return c;
    free(c);
    return NULL;
}

/* ---- prime counting ---- */
static int is_prime(long x)
{
    if (x < 2) return 0;
    if (x % 2 == 0) return x == 2;
    for (long d = 3; d * d <= x; d += 2)
        if (x % d == 0) return 0;
    return 1;
}

static double primes(long n)
{
    long lo = 2 + block_lo(n - 1, me), hi = 2 + block_lo(n - 1, me + 1); /* [2, n] */
    double count = 0;
    for (long x = lo; x < hi; x++) count += is_prime(x);
    p2p_sum(&count, 1);
    return count;
}

static long sieve_count(long n)
{
    char *composite = alloc((size_t)n + 1);
    long count = 0;
    for (long x = 2; x <= n; x++) {
        if (composite[x]) continue;
        count++;
        for (long y = x * x; y <= n; y += x) composite[y] = 1;
    }
    free(composite);
    return count;
}

/* ---- molecular dynamics: Lennard-Jones (epsilon = sigma = mass = 1), cut at 2.5, shifted ---- */
#define MD_ROWS 8
#define MD_HALO 3 /* columns of a neighbour within the cut-off: 3 x 1.12 > 2.5 + vibration */
#define MD_STEPS 100
#define MD_DT 0.005
#define MD_A 1.122462048309373 /* 2^(1/6), the pair potential's minimum */
#define MD_RC2 6.25

struct md {
    long cols, lo, hi, width; /* global columns; this rank's [lo, hi); local columns */
    double ly, shift;
    double *pos, *vel, *force; /* local column c holds global column lo - MD_HALO + c */
};

static double *md_at(double *v, long col, int row) { return v + (col * MD_ROWS + row) * 2; }

/* Forces on the rank's particles and their half of the pair energies. */
static double md_forces(struct md *s)
{
    double pe = 0;
    long first = s->lo - MD_HALO < 0 ? 0 : s->lo - MD_HALO;
    long last = s->hi + MD_HALO > s->cols ? s->cols : s->hi + MD_HALO;
    for (long c = MD_HALO; c < MD_HALO + s->hi - s->lo; c++)
        for (int r = 0; r < MD_ROWS; r++) {
            double *p = md_at(s->pos, c, r), fx = 0, fy = 0;
            long g = s->lo - MD_HALO + c;
            long from = g - MD_HALO < first ? first : g - MD_HALO;
            long to = g + MD_HALO + 1 > last ? last : g + MD_HALO + 1;
            for (long g2 = from; g2 < to; g2++)
                for (int r2 = 0; r2 < MD_ROWS; r2++) {
                    if (g2 == g && r2 == r) continue;
                    double *q = md_at(s->pos, g2 - s->lo + MD_HALO, r2);
                    double dx = p[0] - q[0], dy = p[1] - q[1];
                    if (dy > s->ly / 2) dy -= s->ly;
                    else if (dy < -s->ly / 2) dy += s->ly;
                    double r2s = dx * dx + dy * dy;
                    if (r2s >= MD_RC2) continue;
                    double i2 = 1 / r2s, i6 = i2 * i2 * i2;
                    double f = 24 * i6 * (2 * i6 - 1) * i2;
                    fx += f * dx, fy += f * dy;
                    pe += 0.5 * (4 * i6 * (i6 - 1) - s->shift);
                }
            md_at(s->force, c, r)[0] = fx, md_at(s->force, c, r)[1] = fy;
        }
    return pe;
}

static void md_exchange(struct md *s)
{
    size_t n = (size_t)MD_HALO * MD_ROWS * 2 * sizeof(double);
    long own = s->hi - s->lo;
    halo(md_at(s->pos, MD_HALO, 0), md_at(s->pos, 0, 0), md_at(s->pos, own, 0),
         md_at(s->pos, own + MD_HALO, 0), n);
}

/* Total energy (kinetic + potential) summed onto rank 0. */
static double md_energy(struct md *s, double pe)
{
    double e = pe;
    for (long c = MD_HALO; c < MD_HALO + s->hi - s->lo; c++)
        for (int r = 0; r < MD_ROWS; r++) {
            double *v = md_at(s->vel, c, r);
            e += 0.5 * (v[0] * v[0] + v[1] * v[1]);
        }
    p2p_sum(&e, 1);
    return e;
}

/* Runs the dynamics; returns the final energy on rank 0 and the initial one in *e0. */
static double md(long particles, double *e0)
{
    struct md s = {.cols = particles / MD_ROWS, .ly = MD_ROWS * MD_A * 0.8660254037844386};
    double i6 = 1 / (MD_RC2 * MD_RC2 * MD_RC2);
    s.shift = 4 * i6 * (i6 - 1);
    s.lo = block_lo(s.cols, me), s.hi = block_lo(s.cols, me + 1);
    s.width = s.hi - s.lo + 2 * MD_HALO;
    size_t bytes = (size_t)(s.width * MD_ROWS * 2) * sizeof(double);
    s.pos = alloc(bytes), s.vel = alloc(bytes), s.force = alloc(bytes);
    for (long g = s.lo; g < s.hi; g++) /* a triangular crystal, small deterministic velocities */
        for (int r = 0; r < MD_ROWS; r++) {
            long c = g - s.lo + MD_HALO, id = g * MD_ROWS + r;
            double *p = md_at(s.pos, c, r), *v = md_at(s.vel, c, r);
            p[0] = ((double)g + 0.5 * (r & 1)) * MD_A, p[1] = r * MD_A * 0.8660254037844386;
            v[0] = 0.2 * ((double)(id * 37 % 19) / 9 - 1), v[1] = 0.2 * ((double)(id * 53 % 23) / 11 - 1);
        }
    md_exchange(&s);
    *e0 = md_energy(&s, md_forces(&s));
    double pe = 0;
    for (int step = 0; step < MD_STEPS; step++) {
        for (long c = MD_HALO; c < MD_HALO + s.hi - s.lo; c++)
            for (int r = 0; r < MD_ROWS; r++)
                for (int d = 0; d < 2; d++) {
                    md_at(s.vel, c, r)[d] += 0.5 * MD_DT * md_at(s.force, c, r)[d];
                    md_at(s.pos, c, r)[d] += MD_DT * md_at(s.vel, c, r)[d];
                }
        md_exchange(&s);
        pe = md_forces(&s);
        for (long c = MD_HALO; c < MD_HALO + s.hi - s.lo; c++)
            for (int r = 0; r < MD_ROWS; r++)
                for (int d = 0; d < 2; d++)
                    md_at(s.vel, c, r)[d] += 0.5 * MD_DT * md_at(s.force, c, r)[d];
    }
    double e1 = md_energy(&s, pe);
    free(s.pos), free(s.vel), free(s.force);
    return e1;
}

/* ---- 2-D Jacobi stencil: top edge 1, left edge rising, the rest 0; checksum of the grid ---- */
#define STENCIL_SWEEPS 50

static double stencil(long n, double *scale)
{
    long lo = 1 + block_lo(n - 2, me), hi = 1 + block_lo(n - 2, me + 1); /* interior rows */
    long rows = hi - lo + 2;                                              /* with both halos */
    double *u = alloc((size_t)(rows * n) * sizeof *u), *v = alloc((size_t)(rows * n) * sizeof *v);
    for (long i = 0; i < rows; i++) {
        long g = lo - 1 + i;
        u[i * n] = v[i * n] = (double)g / (double)(n - 1);
        if (g == 0)
            for (long j = 0; j < n; j++) u[j] = v[j] = 1;
    }
    for (int sweep = 0; sweep < STENCIL_SWEEPS; sweep++) {
        size_t row = (size_t)n * sizeof *u;
        halo(u + n, u, u + (rows - 2) * n, u + (rows - 1) * n, row);
        for (long i = 1; i < rows - 1; i++)
            for (long j = 1; j < n - 1; j++)
                v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                       u[i * n + j + 1]);
        double *t = u;
        u = v, v = t;
    }
    double sums[2] = {0, 0};
    for (long i = 1; i < rows - 1; i++) /* weights by global position, not by block */
        for (long j = 0; j < n; j++) {
            double w = 1 + (double)(((lo - 1 + i) * n + j) % 7) / 8;
            sums[0] += w * u[i * n + j];
            sums[1] += w * fabs(u[i * n + j]);
        }
    p2p_sum(sums, 2);
    free(u), free(v);
    *scale = sums[1];
    return sums[0];
}

/* ---- the serial references, computed once per size on rank 0 ---- */
static long ref_size[ARENA_NAPP];
static double ref_value[ARENA_NAPP], ref_scale[ARENA_NAPP];

static double reference(enum arena_app app, long size, double *scale)
{
    if (ref_size[app] != size) {
        int keep_me = me, keep_nr = nr;
        double e0, s = 1, v = 0, *c = NULL;
        me = 0, nr = 1; /* the same kernel alone, or an independent serial computation */
        switch (app) {
        case ARENA_APP_MATVEC: c = serial_product(size, 1); checksum(c, size, 1, &v, &s); break;
        case ARENA_APP_MATMUL: case ARENA_APP_ROWMM:
            c = serial_product(size, size);
            checksum(c, size, size, &v, &s);
            break;
        case ARENA_APP_PRIMES: v = (double)sieve_count(size); break;
        case ARENA_APP_MD: v = md(size, &e0); s = fabs(v); break;
        case ARENA_APP_STENCIL: v = stencil(size, &s); break;
        default: break;
        }
        free(c);
        me = keep_me, nr = keep_nr;
        ref_size[app] = size, ref_value[app] = v, ref_scale[app] = s;
    }
    *scale = ref_scale[app];
    return ref_value[app];
}

const char *arena_app_unrunnable(enum arena_app app, long size, int np)
{
    int collective = app == ARENA_APP_PI || app == ARENA_APP_MATVEC || app == ARENA_APP_MATMUL;
    if (collective && np > 1 &&
        (!M->has_coll(ARENA_SCATTER, 8) || !M->has_coll(ARENA_REDUCE_DOUBLE, 8)))
        return "needs scatter and a reduce of doubles, not expressible in this family";
    if (app == ARENA_APP_PI && size < 1) return "pi needs at least 1 trapezoid";
    if ((app == ARENA_APP_MATVEC || app == ARENA_APP_MATMUL || app == ARENA_APP_ROWMM) &&
        (size < 1 || size > 4096))
        return "matrix order 1 to 4096";
    if (app == ARENA_APP_PRIMES && (size < 2 || size > (1L << 30))) return "primes: range end 2 to 2^30";
    if (app == ARENA_APP_MD && size / MD_ROWS / np < MD_HALO)
        return "md: at least 24 particles (3 columns of 8) per rank";
    if (app == ARENA_APP_STENCIL && (size - 2 < np || size > 16384))
        return "stencil: the grid edge must leave a row per rank (and at most 16384)";
    return NULL;
}

void arena_app_run(enum arena_app app, long size, int rank, int np, struct arena_app_out *out)
{
    double t0 = 0, value = 0, scale = 1, e0 = 0, *c = NULL;
    me = rank, nr = np;
    memset(out, 0, sizeof *out);
    spent = out->calls;
    switch (app) {
    case ARENA_APP_PI: t0 = M->now(); value = pi(size); break;
    case ARENA_APP_MATVEC: c = scatter_product(size, 1, &t0); break;
    case ARENA_APP_MATMUL: c = scatter_product(size, size, &t0); break;
    case ARENA_APP_ROWMM: c = rowmm(size, &t0); break;
    case ARENA_APP_PRIMES: t0 = M->now(); value = primes(size); break;
    case ARENA_APP_MD: t0 = M->now(); value = md(size, &e0); break;
    case ARENA_APP_STENCIL: t0 = M->now(); value = stencil(size, &scale); break;
    default: break;
    }
    out->wall = M->now() - t0;
    out->check = NAN;
    if (rank != 0) return;
    const char *fault = getenv("ARENA_FAULT"); /* self-test of the checks: a wrong answer */
    if (fault && strcmp(fault, "corrupt") == 0) {
        value += 0.5;
        if (c) c[0] += 0.5;
    }
    double ref_scale_ = 1, ref = app == ARENA_APP_PI ? M_PI : reference(app, size, &ref_scale_);
    switch (app) {
    case ARENA_APP_PI:
        out->check = value - M_PI; /* the trapezoid rule's error is 1/(6 n^2) */
        if (!(fabs(out->check) <= 1 / ((double)size * (double)size) + 1e-9))
            snprintf(out->bad, sizeof out->bad, "pi is off by %.3e with %ld trapezoids",
                     out->check, size);
        return;
    case ARENA_APP_MATVEC: case ARENA_APP_MATMUL: case ARENA_APP_ROWMM:
        checksum(c, size, app == ARENA_APP_MATVEC ? 1 : size, &value, &scale);
        free(c);
        /* fall through */
    case ARENA_APP_STENCIL:
        out->check = fabs(value - ref) / (ref_scale_ > 0 ? ref_scale_ : 1);
        if (!(out->check < 1e-9))
            snprintf(out->bad, sizeof out->bad, "checksum differs from the serial one by %.3e",
                     out->check);
        return;
    case ARENA_APP_PRIMES:
        out->check = value;
        if (value != ref)
            snprintf(out->bad, sizeof out->bad, "counted %.0f primes up to %ld, a sieve says %.0f",
                     value, size, ref);
        return;
    case ARENA_APP_MD:
        out->check = fabs(value - e0) / fabs(e0);
        if (!(out->check < 1e-3))
            snprintf(out->bad, sizeof out->bad, "energy drifted by %.3e", out->check);
        else if (!(fabs(value - ref) <= 1e-9 * ref_scale_))
            snprintf(out->bad, sizeof out->bad, "final energy %.12g, serial run %.12g", value, ref);
        return;
    default: return;
    }
}
