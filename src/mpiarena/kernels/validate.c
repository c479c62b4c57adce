/*
 * validate.c - one untimed iteration with patterned data after a cell's observations, its
 * result checked on every rank that receives one (a mock-up is checked as the collective it
 * stands in for).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "core.h"

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

/* Index of the first wrong byte of n elements of the sums' type that should hold the sums of
 * arena_summand over ranks lo..hi-1 at elements first, first + 1, ...; or -1. */
static long check_sums(const unsigned char *r, size_t n, size_t first, int lo, int hi)
{
    for (size_t i = 0; i < n; i++)
        if (arena_elem_differs(r, i, arena_summed(first + i, lo, hi)))
            return (long)(i * arena_elem_size());
    return -1;
}

/* What one untimed iteration should deliver: which bench's rule checks a benchmark (a mock-up
 * is checked as the collective it stands in for). */
static int checked_as(int bench)
{
    static const int standin[] = {
        B_ALLREDUCE, B_ALLREDUCE, B_BCAST, B_ALLGATHER, B_ALLGATHER, B_GATHER, B_SCATTER,
        B_REDUCE, B_REDUCE_SCATTER_BLOCK, B_SCAN,
    };
    if (is_mock(bench)) return standin[bench - B_M_ALLREDUCE_RB];
    return bench == B_BCAST_ACK ? B_BCAST : bench;
}

/* One untimed iteration with patterned data; returns a message on failure, or NULL. */
const char *arena_validate(int bench, size_t size, const struct bufs *b, int burst, char *msg,
                           size_t len)
{
    unsigned char *s = b->s, *r = b->r;
    int rank = arena_rank, np = arena_np;
    long bad = -1;
    size_t nsum = arena_sum_elems(size), bsum = arena_sum_block(size);
    int checks = 0, as = checked_as(bench);
    if (is_ext(bench))
        return arena_ext_validate(bench, size, b, msg, len);
    if (bench == B_WTIME || bench == B_BARRIER) /* no data: their buffers hold none */
        return NULL;
    memset(r, 0, b->rstride);
    switch (as) {
    case B_SCATTER:
        for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, j);
        break;
    case B_ALLTOALL:
        for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, (long)rank * np + j);
        break;
    case B_BCAST:
        if (rank == 0) fill(r, size, 0);
        break;
    case B_REDUCE: case B_ALLREDUCE: case B_SCAN: case B_EXSCAN: case B_REDUCE_SCATTER_BLOCK: {
        int padded = as == B_REDUCE_SCATTER_BLOCK || bench == B_M_ALLREDUCE_RSB; /* np blocks */
        for (size_t i = 0; i < (padded ? bsum * (size_t)np : nsum); i++)
            arena_elem_set(s, i, arena_summand(i, rank));
        break;
    }
    default:
        if (bench == B_M_ALLGATHER_A2A) /* an alltoall of np copies of this rank's block */
            for (int j = 0; j < np; j++) fill(s + (size_t)j * size, size, rank);
        else
            fill(s, size, rank);
        break;
    }
    arena_loop_calls(bench, size, 1, b, (struct bench_args){burst, 0});
    arena_fault_corrupt(r, size, b->rstride); /* tests: a self-test of the checker */
    if (bench == B_M_SCATTER_B) /* rank i's block of the root's broadcast send buffer */
        r = (rank == 0 ? s : r) + (size_t)rank * size;
    switch (as) {
    case B_PINGPONG: case B_SENDRECV: case B_BIBW:
        if (rank < 2) { bad = check(r, size, rank == 0 ? 1 : 0); checks = 1; }
        break;
    case B_PING:
        if (rank == 1) { bad = check(r, size, 0); checks = 1; }
        break;
    case B_BCAST: case B_SCATTER:
        bad = check(r, size, as == B_SCATTER ? rank : 0); checks = 1;
        break;
    case B_GATHER: case B_ALLGATHER:
        if (rank == 0 || as == B_ALLGATHER)
            for (int j = 0; j < np && bad < 0; j++) { bad = check(r + (size_t)j * size, size, j); checks = 1; }
        break;
    case B_ALLTOALL:
        for (int j = 0; j < np && bad < 0; j++) { bad = check(r + (size_t)j * size, size, (long)j * np + rank); checks = 1; }
        break;
    case B_REDUCE: case B_ALLREDUCE:
        if (rank == 0 || as == B_ALLREDUCE) { checks = 1; bad = check_sums(r, nsum, 0, 0, np); }
        break;
    case B_SCAN: checks = 1; bad = check_sums(r, nsum, 0, 0, rank + 1); break;
    case B_EXSCAN: /* rank 0's result is undefined */
        if (rank > 0) { checks = 1; bad = check_sums(r, nsum, 0, 0, rank); }
        break;
    case B_REDUCE_SCATTER_BLOCK:
        checks = 1;
        bad = check_sums(r, bsum, (size_t)rank * bsum, 0, np);
        break;
    default: break;
    }
    if (!checks || bad < 0)
        return NULL;
    snprintf(msg, len, "rank %d received wrong data at byte %ld of %zu", rank, bad, size);
    return msg;
}
