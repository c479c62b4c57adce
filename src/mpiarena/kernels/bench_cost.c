/*
 * bench_cost.c - the cost benchmarks, k iterations each, run by ranks 0 and 1 (memory and
 * overlap: every rank); each notes its extras:
 *   cpu       rank 1 blocked in a receive while rank 0 sleeps `hold` s (k = 1); size ignored
 *   memory    one alltoall (pingpong where there is none); rss_init (after init), rss and peak
 *             (VmRSS, VmHWM; heap trimmed and peak reset at the start of the cell), bytes
 *   overlap   per operation (exchange with peer; MPI_Iallreduce, MPI_Ialltoall where the
 *             library has them): pure (post + wait), compute (a loop as long as pure, no
 *             library call) and overlapped (post + compute + wait), seconds per iteration
 *   progress  rank 0 posts a send, rank 1 a receive of size bytes, both compute 4x the
 *             transfer time without library calls, then wait: transfer (post + wait alone)
 *             and after (the wait after the compute), seconds
 *   threads   size = T threads per rank (MPI_THREAD_MULTIPLE), each streaming bursts of
 *             8-byte messages on its own tag; time per message
 *   msgrate   bursts of W non-blocking sends of size bytes, acknowledged; time per message
 *   loggp     LogGP's round trips and overheads: bench_loggp.c
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>

#include "core.h"

static const enum arena_nb overlap_ops[3] = {ARENA_NB_EXCHANGE, ARENA_NB_ALLREDUCE,
                                             ARENA_NB_ALLTOALL};

/* Compute for d seconds without calling the library. */
static void compute(double d)
{
    volatile double x = 1;
    double end = arena_monotonic() + d;
    while (arena_monotonic() < end)
        for (int i = 0; i < 64; i++) x = x * 1.0000001 + 1e-9;
}

/* Ranks 0 and 1 meet: a 1-byte round trip. */
static void pair_sync(void)
{
    unsigned char t = 0;
    if (arena_rank == 0) { M->send(&t, 1, 1); M->recv(&t, 1, 1); }
    else { M->recv(&t, 1, 0); M->send(&t, 1, 0); }
}

/* Rank 1 blocks in a receive while rank 0 sleeps `hold` seconds. */
static void blocked_receive(double hold)
{
    unsigned char one = 1;
    if (arena_rank == 0) {
        struct timespec ts = {(time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9)};
        nanosleep(&ts, NULL);
        M->send(&one, 1, 1);
    } else {
        M->recv(&one, 1, 0);
    }
}

/* The memory benchmark's work: an alltoall, or a pingpong where the family has none. */
static void exchange_all(size_t size, const struct bufs *b)
{
    if (M->has_coll(ARENA_ALLTOALL, size)) M->coll(ARENA_ALLTOALL, b->s, b->r, size);
    else if (arena_rank == 0) { M->send(b->s, size, 1); M->recv(b->r, size, 1); }
    else if (arena_rank == 1) { M->recv(b->r, size, 0); M->send(b->s, size, 0); }
}

/* One overlap operation k times: alone, the compute alone, then overlapped (OSU, IMB-NBC). */
static void overlap_op(int op, size_t size, long k, const struct bufs *b, enum extra x)
{
    int peer = arena_rank == 0 ? 1 : 0;
    if (overlap_ops[op] == ARENA_NB_EXCHANGE && arena_rank >= 2) {
        arena_note(x, 0), arena_note(x + 1, 0), arena_note(x + 2, 0);
        return;
    }
    double t0 = M->now();
    for (long i = 0; i < k; i++) {
        if (!M->start(overlap_ops[op], b->s, b->r, size, peer))
            return;
        M->wait();
    }
    double pure = (M->now() - t0) / (double)k;
    t0 = M->now();
    for (long i = 0; i < k; i++)
        compute(pure);
    double alone = (M->now() - t0) / (double)k;
    t0 = M->now();
    for (long i = 0; i < k; i++) {
        M->start(overlap_ops[op], b->s, b->r, size, peer);
        compute(pure);
        M->wait();
    }
    arena_note(x, pure), arena_note(x + 1, alone), arena_note(x + 2, (M->now() - t0) / (double)k);
}

/* A send (rank 0) and receive (rank 1) alone, then posted before 4x that much compute. */
static void progress_loop(size_t size, long k, const struct bufs *b)
{
    int rank = arena_rank;
    enum arena_nb op = rank == 0 ? ARENA_NB_SEND : ARENA_NB_RECV;
    double transfer = 0, after = 0;
    for (long i = 0; i < k; i++) {
        pair_sync();
        double t0 = M->now();
        M->start(op, b->s, b->r, size, 1 - rank);
        M->wait();
        transfer += M->now() - t0;
    }
    transfer /= (double)k;
    for (long i = 0; i < k; i++) {
        pair_sync();
        M->start(op, b->s, b->r, size, 1 - rank);
        compute(4 * transfer);
        double t0 = M->now();
        M->wait();
        after += M->now() - t0;
    }
    arena_note(X_TRANSFER, transfer), arena_note(X_AFTER, after / (double)k);
}

struct stream_arg {
    const struct bufs *b;
    long k;
    int burst, thread;
};

static void *stream_thread(void *p)
{
    const struct stream_arg *a = p;
    for (long i = 0; i < a->k; i++)
        M->stream(a->b->s, a->b->r + 64 * (size_t)a->thread, 8, 1 - arena_rank, a->burst,
                  10 + a->thread, arena_rank == 0);
    return NULL;
}

/* n threads per rank, each streaming bursts of 8-byte messages on its own tag. */
static void threads_loop(int n, long k, const struct bufs *b, int burst)
{
    pthread_t th[MAX_THREADS];
    struct stream_arg args[MAX_THREADS];
    for (int t = 0; t < n; t++) {
        args[t] = (struct stream_arg){b, k, burst, t};
        if (t > 0 && pthread_create(&th[t], NULL, stream_thread, &args[t]) != 0)
            M->abort("cannot start a thread");
    }
    stream_thread(&args[0]);
    for (int t = 1; t < n; t++)
        pthread_join(th[t], NULL);
}

/* A burst of sends from rank 0 to rank 1, acknowledged (OSU's and Sandia's message rate). */
static void msgrate_burst(size_t size, const struct bufs *b, int burst)
{
    unsigned char ack = 0;
    int rank = arena_rank;
    if (M->stream) {
        M->stream(b->s, b->r, size, 1 - rank, burst, 3, rank == 0);
        return;
    }
    for (int i = 0; i < burst; i++) {
        if (rank == 0) M->send(b->s, size, 1);
        else M->recv(b->r, size, 0);
    }
    if (rank == 0) M->recv(&ack, 1, 1);
    else M->send(&ack, 1, 0);
}

/* k iterations of a cost benchmark; its extras are noted. */
void arena_run_cost(int bench, size_t size, long k, const struct bufs *b, struct bench_args a)
{
    double rss, peak;
    switch (bench) {
    case B_CPU: for (long i = 0; i < k; i++) blocked_receive(a.hold); break;
    case B_MEMORY:
        for (long i = 0; i < k; i++) exchange_all(size, b);
        arena_resident(&rss, &peak);
        arena_note(X_RSS_INIT, arena_rss_init), arena_note(X_RSS, rss), arena_note(X_PEAK, peak);
        break;
    case B_OVERLAP:
        for (int op = 0; op < 3; op++) overlap_op(op, size, k, b, (enum extra)(X_PURE + 3 * op));
        break;
    case B_PROGRESS: progress_loop(size, k, b); break;
    case B_THREADS: threads_loop((int)size, k, b, a.burst); break;
    case B_LOGGP: arena_run_loggp(size, k, b); break;
    default: for (long i = 0; i < k; i++) msgrate_burst(size, b, a.burst); break;
    }
}
