/*
 * bench_coll.c - the collectives, one call at a time, root 0; their mock-ups; and bcast-ack.
 *
 * Mock-ups (`allreduce=reduce+bcast`, ...: the self-consistency guidelines) are collectives
 * built from the library's other calls on the collective's buffers and sizes (mockup_call);
 * they are timed and validated as the collective they stand in for. The definitions of which
 * mock-up stands in for which collective live in guidelines.py.
 * bcast-ack (no extras) is Nevin's broadcast after Nupairoj and Ni: for each non-root rank in
 * turn, k broadcasts each followed by that rank's acknowledgement to the root, timed at the
 * root; rank 0 reports the slowest leaf's time per iteration, the other ranks 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "core.h"

/* What each mock-up is made of (the library's own calls, in order). */
static const enum arena_coll mock_parts[][2] = {
    [B_M_ALLREDUCE_RB - B_M_ALLREDUCE_RB] = {ARENA_REDUCE, ARENA_BCAST},
    [B_M_ALLREDUCE_RSB - B_M_ALLREDUCE_RB] = {ARENA_REDUCE_SCATTER_BLOCK, ARENA_ALLGATHER},
    [B_M_BCAST_SA - B_M_ALLREDUCE_RB] = {ARENA_SCATTER, ARENA_ALLGATHER},
    [B_M_ALLGATHER_GB - B_M_ALLREDUCE_RB] = {ARENA_GATHER, ARENA_BCAST},
    [B_M_ALLGATHER_A2A - B_M_ALLREDUCE_RB] = {ARENA_ALLTOALL, ARENA_ALLTOALL},
    [B_M_GATHER_AG - B_M_ALLREDUCE_RB] = {ARENA_ALLGATHER, ARENA_ALLGATHER},
    [B_M_SCATTER_B - B_M_ALLREDUCE_RB] = {ARENA_BCAST, ARENA_BCAST},
    [B_M_REDUCE_AR - B_M_ALLREDUCE_RB] = {ARENA_ALLREDUCE, ARENA_ALLREDUCE},
    [B_M_RSB_RS - B_M_ALLREDUCE_RB] = {ARENA_REDUCE, ARENA_SCATTER},
    [B_M_SCAN_ER - B_M_ALLREDUCE_RB] = {ARENA_EXSCAN, ARENA_REDUCE_LOCAL},
};

static const char *coll_name(enum arena_coll op)
{
    return op == ARENA_REDUCE_LOCAL ? "reduce_local" : arena_bench_names[B_BARRIER + (int)op];
}

/* Why a mock-up cannot run here: the parts this library lacks, or cannot run at 0 bytes
 * (written into msg); or NULL. */
const char *arena_mock_unrunnable(int b, size_t size, char *msg, size_t len)
{
    const enum arena_coll *parts = mock_parts[b - B_M_ALLREDUCE_RB];
    size_t at = M->has_coll(parts[0], 1) && M->has_coll(parts[1], 1) ? size : 1;
    int lacks0 = !M->has_coll(parts[0], at);
    int lacks1 = parts[1] != parts[0] && !M->has_coll(parts[1], at);
    if (!lacks0 && !lacks1)
        return NULL;
    snprintf(msg, len, "%s %s%s%s", at ? "needs" : "cannot express a 0-byte message in",
             lacks0 ? coll_name(parts[0]) : "", lacks0 && lacks1 ? " and " : "",
             lacks1 ? coll_name(parts[1]) : "");
    if (at)
        snprintf(msg + strlen(msg), len - strlen(msg), ", which this library lacks");
    return msg;
}

/* One mock-up: the collective `size` stands for, built from the library's other calls, with
 * the same result on the same buffers (validate checks it); t holds an intermediate result.
 * Where a part needs a vector split in np blocks, the vector is padded to a multiple of np. */
static void mockup_call(int bench, size_t size, unsigned char *s, unsigned char *r,
                        unsigned char *t)
{
    int rank = arena_rank, np = arena_np;
    size_t sums = arena_sum_bytes(size), blk = arena_sum_block(size) * arena_elem_size();
    size_t all = size * (size_t)np, piece = (size + (size_t)np - 1) / (size_t)np;
    switch (bench) {
    case B_M_ALLREDUCE_RB: M->coll(ARENA_REDUCE, s, r, size); M->coll(ARENA_BCAST, r, r, sums); break;
    case B_M_ALLREDUCE_RSB:
        M->coll(ARENA_REDUCE_SCATTER_BLOCK, s, t, size);
        M->coll(ARENA_ALLGATHER, t, r, blk);
        break;
    case B_M_BCAST_SA: M->coll(ARENA_SCATTER, r, t, piece); M->coll(ARENA_ALLGATHER, t, r, piece); break;
    case B_M_ALLGATHER_GB: M->coll(ARENA_GATHER, s, r, size); M->coll(ARENA_BCAST, r, r, all); break;
    case B_M_ALLGATHER_A2A: M->coll(ARENA_ALLTOALL, s, r, size); break; /* s: np copies */
    case B_M_GATHER_AG: M->coll(ARENA_ALLGATHER, s, r, size); break;
    case B_M_SCATTER_B: /* the root's send buffer to every rank; rank i's block is at i * size */
        M->coll(ARENA_BCAST, rank == 0 ? s : r, rank == 0 ? s : r, all);
        break;
    case B_M_REDUCE_AR: M->coll(ARENA_ALLREDUCE, s, r, size); break;
    case B_M_RSB_RS:
        M->coll(ARENA_REDUCE, s, t, blk * (size_t)np);
        M->coll(ARENA_SCATTER, t, r, blk);
        break;
    case B_M_SCAN_ER: /* rank 0's exscan result is undefined: its scan is its own vector */
        M->coll(ARENA_EXSCAN, s, r, size);
        if (rank == 0) memcpy(r, s, sums);
        else M->coll(ARENA_REDUCE_LOCAL, s, r, size);
        break;
    default: break;
    }
}

/* One collective call, or one mock-up, of `size` on buffers s and r (or one iteration of an
 * ext.h benchmark). */
void arena_coll_call(int bench, size_t size, unsigned char *s, unsigned char *r,
                     unsigned char *t)
{
    if (is_ext(bench)) arena_ext_call(bench, size, s, r);
    else if (bench == B_BCAST) M->coll(ARENA_BCAST, r, r, size);
    else if (is_mock(bench)) mockup_call(bench, size, s, r, t);
    else M->coll(coll_of(bench), s, r, size);
}

/* Nevin's broadcast (1996, after Nupairoj and Ni): for each non-root rank in turn, all ranks
 * meet, then k iterations of a broadcast from rank 0 followed by that leaf's acknowledgement to
 * the root; the other leaves only broadcast. The root's time per iteration, the worst over the
 * leaves, estimates when the last rank has the data; it is returned on rank 0 and 0 elsewhere,
 * so the collectives' reduction (the slowest rank) reports rank 0's figure. The acknowledgement
 * is a 0-byte message where the family has one, else 1 byte (a byte stream has no 0-byte
 * message). */
double arena_bcast_ack(size_t size, long k, const struct bufs *b)
{
    unsigned char ack = 0;
    size_t ack_bytes = M->zero_byte_messages ? 0 : 1;
    double worst = 0;
    int rank = arena_rank;
    for (int leaf = 1; leaf < arena_np; leaf++) {
        long slot = 0;
        arena_barrier();
        double t0 = M->now();
        for (long i = 0; i < k; i++) {
            unsigned char *r = b->r + (size_t)slot * b->rstride;
            if (++slot == b->nslots)
                slot = 0;
            M->coll(ARENA_BCAST, r, r, size);
            if (rank == 0) M->recv(&ack, ack_bytes, leaf);
            else if (rank == leaf) M->send(&ack, ack_bytes, 0);
        }
        double per = (M->now() - t0) / (double)k;
        if (per > worst)
            worst = per;
    }
    return rank == 0 ? worst : 0;
}
