/*
 * driver.c - mpiarena's measurement driver, shared by every transport module.
 *
 * Rank 0 reads one command per line from the control stream (stdin, or --control PATH)
 * and relays it to the other ranks; all ranks then run the cell: warm-up, calibration of
 * the iteration count k so an observation lasts at least `target` seconds, then up to
 * `obs` observations, each preceded by the driver's own dissemination barrier. Every
 * rank's time per iteration is sent back to rank 0, which prints raw lines:
 *
 *   hello   FAMILY NP TICK THREAD_LEVEL MEASURED_RESOLUTION
 *   version ESCAPED_LIBRARY_VERSION
 *   rank    R HOST PID CPUS INIT_SECONDS LAUNCH_TO_INIT_SECONDS
 *   obs     CELL I K T_RANK0 T_RANK1 ...
 *   done    CELL ok|na|invalid MESSAGE
 *   finalize R SECONDS          (every rank, after the library is shut down)
 *
 * Commands: `cell id=N bench=NAME size=BYTES obs=N target=S max=S window=W offcache=0|1
 * validate=0|1` and `quit`. End of input means quit. No statistics are computed here.
 * ARENA_BIND=core binds rank r to the r-th allowed CPU (modulo), for launchers that cannot.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"

#define M (&arena_module_impl)
#define KMAX (1L << 24)
#define LINE 4096
#define OFFCACHE_BYTES (64L << 20)

enum bench {
    B_WTIME, B_PINGPONG, B_PING, B_SENDRECV, B_BIBW,
    B_BARRIER, B_BCAST, B_SCATTER, B_GATHER, B_REDUCE, B_ALLREDUCE, B_ALLGATHER, B_ALLTOALL,
    B_COUNT
};
static const char *bench_names[B_COUNT] = {
    "wtime", "pingpong", "ping", "sendrecv", "bibw",
    "barrier", "bcast", "scatter", "gather", "reduce", "allreduce", "allgather", "alltoall",
};

enum step_kind { STEP_RUN, STEP_OBS, STEP_END };
enum cmd_kind { CMD_CELL, CMD_QUIT };

struct cmd {
    int64_t id, size;
    int32_t kind, bench, nobs, window, offcache, validate;
    double target, max_time;
};

struct step {
    int64_t k;
    int32_t kind, idx;
};

struct bufs {
    unsigned char *s, *r; /* first slot of each, page-aligned */
    void *s_mem, *r_mem;  /* what malloc gave (LAM replaces malloc/free but not aligned_alloc) */
    size_t sstride, rstride;
    long nslots;
};

static int rank, np;

static double realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int is_p2p(int b) { return b >= B_PINGPONG && b <= B_BIBW; }
static int is_coll(int b) { return b >= B_BARRIER; }
static enum arena_coll coll_of(int b) { return (enum arena_coll)(b - B_BARRIER); }

/* Bytes of the send and receive buffer a benchmark needs per slot. */
static void buffer_sizes(int b, size_t size, size_t *sn, size_t *rn)
{
    size_t ints = (size + 3) / 4 * 4;
    size_t all = size * (size_t)np;
    switch (b) {
    case B_WTIME: case B_BARRIER: *sn = *rn = 0; break;
    case B_SCATTER: *sn = all; *rn = size; break;
    case B_GATHER: case B_ALLGATHER: *sn = size; *rn = all; break;
    case B_ALLTOALL: *sn = *rn = all; break;
    case B_REDUCE: case B_ALLREDUCE: *sn = *rn = ints; break;
    default: *sn = *rn = size; break;
    }
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static void bufs_alloc(struct bufs *b, int bench, size_t size, int offcache)
{
    size_t sn, rn;
    buffer_sizes(bench, size, &sn, &rn);
    b->sstride = round_up(sn ? sn : 1, 4096);
    b->rstride = round_up(rn ? rn : 1, 4096);
    b->nslots = 1;
    if (offcache) {
        size_t per = b->sstride > b->rstride ? b->sstride : b->rstride;
        b->nslots = (long)(OFFCACHE_BYTES / per);
        if (b->nslots < 2)
            b->nslots = 2;
    }
    b->s_mem = malloc(b->sstride * (size_t)b->nslots + 4096);
    b->r_mem = malloc(b->rstride * (size_t)b->nslots + 4096);
    if (!b->s_mem || !b->r_mem)
        M->abort("out of memory for benchmark buffers");
    b->s = (unsigned char *)round_up((size_t)b->s_mem, 4096);
    b->r = (unsigned char *)round_up((size_t)b->r_mem, 4096);
    memset(b->s, 1, b->sstride * (size_t)b->nslots);
    memset(b->r, 0, b->rstride * (size_t)b->nslots);
}

static void bufs_free(struct bufs *b)
{
    free(b->s_mem);
    free(b->r_mem);
}

/* The driver's own barrier, identical for every library: dissemination over send/recv. */
static void arena_barrier(void)
{
    unsigned char token = 0;
    for (int d = 1; d < np; d <<= 1) {
        M->send(&token, 1, (rank + d) % np);
        M->recv(&token, 1, (rank - d + np) % np);
    }
}

/* Run k iterations of the benchmark; return seconds per iteration on this rank. */
static double run(int bench, size_t size, long k, const struct bufs *b, int window)
{
    volatile double sink = 0;
    unsigned char ack = 0;
    long slot = 0;
    int peer = rank == 0 ? 1 : 0;
    int active = !is_p2p(bench) || rank < 2;
    double t0 = M->now();
    if (active) {
        for (long i = 0; i < k; i++) {
            unsigned char *s = b->s + (size_t)slot * b->sstride;
            unsigned char *r = b->r + (size_t)slot * b->rstride;
            if (++slot == b->nslots)
                slot = 0;
            switch (bench) {
            case B_WTIME: sink += M->now(); break;
            case B_PINGPONG:
                if (rank == 0) { M->send(s, size, 1); M->recv(r, size, 1); }
                else { M->recv(r, size, 0); M->send(s, size, 0); }
                break;
            case B_PING:
                if (rank == 0) M->send(s, size, 1);
                else M->recv(r, size, 0);
                break;
            case B_SENDRECV: M->sendrecv(s, r, size, peer); break;
            case B_BIBW: M->window(s, r, size, peer, window); break;
            case B_BCAST: M->coll(ARENA_BCAST, r, r, size); break;
            default: M->coll(coll_of(bench), s, r, size); break;
            }
        }
        if (bench == B_PING) { /* the stream ends when the receiver says it has all */
            if (rank == 0) M->recv(&ack, 1, 1);
            else M->send(&ack, 1, 0);
        }
    }
    (void)sink;
    return (M->now() - t0) / (double)k;
}

static unsigned char pat(long src, size_t i)
{
    return (unsigned char)((src * 131 + (long)i * 7 + (long)(i >> 8) * 13 + 1) & 0xff);
}

static void fill(unsigned char *p, size_t n, long src)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pat(src, i);
}

/* Index of the first wrong byte, or -1. */
static long check(const unsigned char *p, size_t n, long src)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(src, i))
            return (long)i;
    return -1;
}

static int reduce_value(size_t i, int r) { return (int)(i % 1000) + r; }

/* One untimed iteration with patterned data; returns a message on failure, or NULL. */
static const char *validate(int bench, size_t size, const struct bufs *b, int window, char *msg,
                            size_t len)
{
    unsigned char *s = b->s, *r = b->r;
    long bad = -1;
    int *si = (int *)s, *ri = (int *)r;
    size_t nint = (size + 3) / 4;
    int checks = 0;
    memset(r, 0, b->rstride);
    switch (bench) {
    case B_SCATTER:
        for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, j);
        break;
    case B_ALLTOALL:
        for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, (long)rank * np + j);
        break;
    case B_BCAST:
        if (rank == 0) fill(r, size, 0);
        break;
    case B_REDUCE: case B_ALLREDUCE:
        for (size_t i = 0; i < nint; i++) si[i] = reduce_value(i, rank);
        break;
    default: fill(s, size, rank); break;
    }
    run(bench, size, 1, b, window);
    const char *fault = getenv("ARENA_FAULT"); /* self-test of the checker */
    if (fault && strcmp(fault, "corrupt") == 0 && size > 0)
        r[size / 2] ^= 0x5a;
    switch (bench) {
    case B_PINGPONG: case B_SENDRECV: case B_BIBW:
        if (rank < 2) { bad = check(r, size, rank == 0 ? 1 : 0); checks = 1; }
        break;
    case B_PING:
        if (rank == 1) { bad = check(r, size, 0); checks = 1; }
        break;
    case B_BCAST: case B_SCATTER:
        bad = check(r, size, bench == B_BCAST ? 0 : rank); checks = 1;
        break;
    case B_GATHER: case B_ALLGATHER:
        if (rank == 0 || bench == B_ALLGATHER)
            for (int j = 0; j < np && bad < 0; j++) { bad = check(r + (size_t)j * size, size, j); checks = 1; }
        break;
    case B_ALLTOALL:
        for (int j = 0; j < np && bad < 0; j++) { bad = check(r + (size_t)j * size, size, (long)j * np + rank); checks = 1; }
        break;
    case B_REDUCE: case B_ALLREDUCE:
        if (rank == 0 || bench == B_ALLREDUCE) {
            checks = 1;
            for (size_t i = 0; i < nint && bad < 0; i++)
                if (ri[i] != np * (int)(i % 1000) + np * (np - 1) / 2) bad = (long)i * 4;
        }
        break;
    default: break;
    }
    if (!checks || bad < 0)
        return NULL;
    snprintf(msg, len, "rank %d received wrong data at byte %ld of %zu", rank, bad, size);
    return msg;
}

static void relay_step(struct step *st)
{
    if (rank == 0)
        for (int p = 1; p < np; p++) M->send(st, sizeof *st, p);
    else
        M->recv(st, sizeof *st, 0);
}

/* Rank 0 decides each step (warm-up, calibration, observations, end); all ranks follow. */
static long run_steps(const struct cmd *c, const struct bufs *b, double *times, int64_t *k)
{
    struct step st = {1, STEP_RUN, 0};
    long nobs = 0, rounds = 0;
    int confirmed = 0; /* k must reach the target twice in a row: one hiccup must not fix it */
    double start = M->now();
    for (;;) {
        relay_step(&st);
        if (st.kind == STEP_END)
            break;
        arena_barrier();
        double t = run(c->bench, (size_t)c->size, st.k, b, c->window);
        if (st.kind == STEP_OBS) {
            times[nobs++] = t;
            *k = st.k;
        }
        if (rank != 0)
            continue;
        rounds++;
        if (st.kind == STEP_RUN && rounds > 1 && t * (double)st.k < c->target && st.k < KMAX) {
            double grow = c->target / (t * (double)st.k > 1e-9 ? t * (double)st.k : 1e-9) * 1.25;
            grow = grow < 2 ? 2 : grow > 1024 ? 1024 : grow;
            st.k = (int64_t)((double)st.k * grow);
            st.k = st.k > KMAX ? KMAX : st.k;
            confirmed = 0;
        } else if (st.kind == STEP_RUN && rounds > 1 && !confirmed && st.k < KMAX) {
            confirmed = 1;
        } else if (st.kind == STEP_RUN && rounds > 1) {
            st.kind = STEP_OBS;
        } else if (st.kind == STEP_OBS) {
            st.idx++;
            if (st.idx >= c->nobs || M->now() - start > c->max_time)
                st.kind = STEP_END;
        }
    }
    return nobs;
}

static void escape_print(const char *tag, const char *s)
{
    fputs(tag, stdout);
    fputc('\t', stdout);
    for (; *s; s++) {
        if (*s == '\n') fputs("\\n", stdout);
        else if (*s == '\t') fputc(' ', stdout);
        else if (*s == '\\') fputs("\\\\", stdout);
        else fputc(*s, stdout);
    }
    fputc('\n', stdout);
}

static void run_cell(const struct cmd *c)
{
    char msg[256] = "";
    const char *why = NULL;
    if (c->bench < 0) why = "unknown benchmark";
    else if (is_p2p(c->bench) && np < 2) why = "needs at least 2 ranks";
    else if (is_p2p(c->bench) && c->size == 0 && !M->zero_byte_messages)
        why = "a byte stream has no 0-byte message";
    else if (is_coll(c->bench) && !M->has_coll(coll_of(c->bench), (size_t)c->size))
        why = "not expressible in this family";
    else if (c->size < 0 || c->nobs < 1 || c->window < 1) why = "bad cell parameters";
    if (why) {
        if (rank == 0) printf("done\t%lld\tna\t%s\n", (long long)c->id, why);
        return;
    }
    struct bufs b;
    bufs_alloc(&b, c->bench, (size_t)c->size, c->offcache);
    double *times = calloc((size_t)c->nobs, sizeof *times);
    int64_t k = 0;
    if (!times)
        M->abort("out of memory for observations");
    long n = run_steps(c, &b, times, &k);
    const char *bad = c->validate ? validate(c->bench, (size_t)c->size, &b, c->window, msg, sizeof msg) : NULL;
    if (rank == 0) {
        double **all = calloc((size_t)np, sizeof *all);
        char peer_msg[256];
        all[0] = times;
        for (int p = 1; p < np; p++) {
            all[p] = calloc((size_t)c->nobs, sizeof **all);
            M->recv(all[p], (size_t)n * sizeof **all, p);
            M->recv(peer_msg, sizeof peer_msg, p);
            if (!bad && peer_msg[0]) { snprintf(msg, sizeof msg, "%s", peer_msg); bad = msg; }
        }
        for (long i = 0; i < n; i++) {
            printf("obs\t%lld\t%ld\t%lld", (long long)c->id, i, (long long)k);
            for (int p = 0; p < np; p++) printf("\t%.9e", all[p][i]);
            putchar('\n');
        }
        printf("done\t%lld\t%s\t%s\n", (long long)c->id, bad ? "invalid" : "ok", bad ? bad : "");
        for (int p = 1; p < np; p++) free(all[p]);
        free(all);
    } else {
        char out[256] = "";
        if (bad) snprintf(out, sizeof out, "%s", bad);
        M->send(times, (size_t)n * sizeof *times, 0);
        M->send(out, sizeof out, 0);
    }
    free(times);
    bufs_free(&b);
}

static int bench_index(const char *name)
{
    for (int i = 0; i < B_COUNT; i++)
        if (strcmp(name, bench_names[i]) == 0) return i;
    return -1;
}

/* Parse one control line; returns 0 on success. */
static int parse_cmd(char *line, struct cmd *c)
{
    memset(c, 0, sizeof *c);
    c->nobs = 10;
    c->window = 64;
    c->target = 1e-3;
    c->max_time = 10;
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok) return -1;
    if (strcmp(tok, "quit") == 0) { c->kind = CMD_QUIT; return 0; }
    if (strcmp(tok, "cell") != 0) return -1;
    c->kind = CMD_CELL;
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq++ = 0;
        if (!strcmp(tok, "id")) c->id = atoll(eq);
        else if (!strcmp(tok, "bench")) c->bench = bench_index(eq);
        else if (!strcmp(tok, "size")) c->size = atoll(eq);
        else if (!strcmp(tok, "obs")) c->nobs = atoi(eq);
        else if (!strcmp(tok, "target")) c->target = atof(eq);
        else if (!strcmp(tok, "max")) c->max_time = atof(eq);
        else if (!strcmp(tok, "window")) c->window = atoi(eq);
        else if (!strcmp(tok, "offcache")) c->offcache = atoi(eq);
        else if (!strcmp(tok, "validate")) c->validate = atoi(eq);
        else return -1;
    }
    return 0;
}

static double measured_resolution(void)
{
    double best = 1.0;
    for (int i = 0; i < 100; i++) {
        double a = M->now(), b2;
        while ((b2 = M->now()) == a) {}
        if (b2 - a < best) best = b2 - a;
    }
    return best;
}

static void cpu_list(char *out, size_t len)
{
    cpu_set_t set;
    size_t used = 0;
    out[0] = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) { snprintf(out, len, "?"); return; }
    for (int c = 0; c < CPU_SETSIZE && used + 8 < len; c++)
        if (CPU_ISSET(c, &set))
            used += (size_t)snprintf(out + used, len - used, used ? ",%d" : "%d", c);
}

/* Bind this rank to one allowed CPU, ranks taking them in turn. */
static void bind_to_core(void)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    int n = CPU_COUNT(&allowed), want = rank % (n ? n : 1);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed) && want-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
}

/* Each rank's host, pid, CPU binding and start-up times, printed by rank 0. */
static void report_ranks(double init_s, double since_launch)
{
    char line[512], host[128], cpus[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    cpu_list(cpus, sizeof cpus);
    snprintf(line, sizeof line, "rank\t%d\t%s\t%ld\t%s\t%.9e\t%.9e", rank, host, (long)getpid(), cpus,
             init_s, since_launch);
    if (rank != 0) { M->send(line, sizeof line, 0); return; }
    puts(line);
    for (int p = 1; p < np; p++) {
        M->recv(line, sizeof line, p);
        puts(line);
    }
}

static void serve(FILE *control)
{
    char line[LINE];
    struct cmd c;
    for (;;) {
        if (rank == 0) {
            fflush(stdout);
            if (!fgets(line, sizeof line, control)) { memset(&c, 0, sizeof c); c.kind = CMD_QUIT; }
            else if (parse_cmd(line, &c) != 0) { printf("error\tbad command: %s", line); continue; }
            for (int p = 1; p < np; p++) M->send(&c, sizeof c, p);
        } else {
            M->recv_idle(&c, sizeof c, 0);
        }
        if (c.kind == CMD_QUIT) return;
        run_cell(&c);
    }
}

int main(int argc, char **argv)
{
    char buf[8192], level[32];
    FILE *control = stdin;
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--library-version")) {
            M->library_version(buf, sizeof buf);
            escape_print("version", buf);
            return 0;
        }
        if (!strcmp(argv[i], "--control") && i + 1 < argc) {
            control = fopen(argv[++i], "r");
            if (!control) { perror("arena: --control"); return 2; }
        }
    }
    const char *t0env = getenv("ARENA_T0");
    double before = realtime();
    M->init(&argc, &argv, &rank, &np, level, sizeof level);
    double after = realtime();
    const char *bind = getenv("ARENA_BIND");
    if (bind && !strcmp(bind, "core")) bind_to_core();
    if (rank == 0) {
        printf("hello\t%s\t%d\t%.9e\t%s\t%.9e\n", M->family, np, M->tick(), level, measured_resolution());
        M->library_version(buf, sizeof buf);
        escape_print("version", buf);
    }
    report_ranks(after - before, t0env ? after - atof(t0env) : -1.0);
    serve(control);
    fflush(stdout);
    double f0 = realtime();
    M->finalize();
    printf("finalize\t%d\t%.9e\n", rank, realtime() - f0);
    fflush(stdout);
    return 0;
}
