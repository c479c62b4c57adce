/*
 * mpi_vcoll.c - ext.h's G_VCOLL benchmarks: MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv (to
 * rank 0) and MPI_Scatterv (from rank 0) of MPI_BYTE, displacements packed in rank order.
 * Rank i's count c(i) is `size` (even), or under -skew floor(2 size (i+1) / (np+1)) (about
 * size on average: rank np-1 about twice the mean, rank 0 2/(np+1) of it). allgatherv and
 * gatherv: rank i contributes c(i) bytes; scatterv: rank i receives c(i) bytes; alltoallv:
 * rank i sends c(i) bytes to every rank (and so receives c(j) from each rank j).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static MPI_Comm comm = MPI_COMM_NULL;
/* per rank j: c(j) and its packed offset; alltoallv's send side (this rank's c to each) */
static int *counts, *displs, *scounts, *sdispls;

static int skewed(int b)
{
    return b == XB_ALLGATHERV_SKEW || b == XB_ALLTOALLV_SKEW || b == XB_GATHERV_SKEW ||
           b == XB_SCATTERV_SKEW;
}

/* The operation, skew aside. */
static int op_of(int b) { return skewed(b) ? b - 1 : b; }

static size_t count_of(int b, size_t size, int np, int i)
{
    return skewed(b) ? 2 * size * (size_t)(i + 1) / (size_t)(np + 1) : size;
}

static size_t total_of(int b, size_t size, int np)
{
    size_t t = 0;
    for (int i = 0; i < np; i++) t += count_of(b, size, np, i);
    return t;
}

static void vcoll_buffers(int b, size_t size, int np, size_t *sn, size_t *rn)
{
    size_t most = count_of(b, size, np, np - 1), all = total_of(b, size, np);
    switch (op_of(b)) {
    case XB_ALLGATHERV: case XB_GATHERV: *sn = most; *rn = all; break;
    case XB_SCATTERV: *sn = all; *rn = most; break;
    default: *sn = most * (size_t)np; *rn = all; break; /* alltoallv */
    }
}

static void vcoll_setup(int b, size_t size, int burst, const struct bufs *bufs)
{
    int np = arena_np, at = 0;
    (void)burst, (void)bufs;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    counts = arena_xcalloc((size_t)np, sizeof *counts, "counts");
    displs = arena_xcalloc((size_t)np, sizeof *displs, "counts");
    scounts = arena_xcalloc((size_t)np, sizeof *scounts, "counts");
    sdispls = arena_xcalloc((size_t)np, sizeof *sdispls, "counts");
    for (int i = 0; i < np; i++) {
        counts[i] = (int)count_of(b, size, np, i);
        displs[i] = at;
        at += counts[i];
    }
    /* alltoallv's send side: this rank's c(i) to every rank, packed */
    for (int i = 0; i < np; i++)
        scounts[i] = counts[arena_rank], sdispls[i] = i * counts[arena_rank];
}

static void vcoll_call(int b, size_t size, unsigned char *s, unsigned char *r)
{
    int mine = counts[arena_rank];
    (void)size;
    switch (op_of(b)) {
    case XB_ALLGATHERV: MPI_Allgatherv(s, mine, MPI_BYTE, r, counts, displs, MPI_BYTE, comm); break;
    case XB_GATHERV: MPI_Gatherv(s, mine, MPI_BYTE, r, counts, displs, MPI_BYTE, 0, comm); break;
    case XB_SCATTERV: MPI_Scatterv(s, counts, displs, MPI_BYTE, r, mine, MPI_BYTE, 0, comm); break;
    default:
        MPI_Alltoallv(s, scounts, sdispls, MPI_BYTE, r, counts, displs, MPI_BYTE, comm);
        break;
    }
}

static unsigned char pattern(int from, int to, size_t i)
{
    return (unsigned char)(from * 131 + to * 37 + (long)i * 7 + (long)(i >> 8) * 13 + 1);
}

/* One call with each sender's bytes patterned by (sender, receiver, offset; the receiver is
 * -1 where every rank gets the same bytes); every rank that receives checks each piece. */
static const char *vcoll_validate(int b, size_t size, const struct bufs *bufs, char *msg,
                                  size_t len)
{
    int rank = arena_rank, np = arena_np, op = op_of(b);
    unsigned char *s = bufs->s, *r = bufs->r;
    size_t sn, rn;
    vcoll_buffers(b, size, np, &sn, &rn);
    memset(r, 0, rn);
    for (int j = 0; j < np; j++) {
        if (op == XB_SCATTERV)
            for (size_t i = 0; i < (size_t)counts[j]; i++) s[displs[j] + i] = pattern(0, j, i);
        else if (op == XB_ALLTOALLV)
            for (size_t i = 0; i < (size_t)scounts[j]; i++) s[sdispls[j] + i] = pattern(rank, j, i);
    }
    if (op == XB_ALLGATHERV || op == XB_GATHERV)
        for (size_t i = 0; i < (size_t)counts[rank]; i++) s[i] = pattern(rank, -1, i);
    vcoll_call(b, size, s, r);
    arena_fault_corrupt(r, size, bufs->rstride); /* tests: a self-test of the checker */
    if (op == XB_GATHERV && rank != 0) return NULL;
    for (int j = 0; j < np; j++) {
        if (op == XB_SCATTERV && j != rank) continue;
        int from = op == XB_SCATTERV ? 0 : j;
        int to = op == XB_ALLTOALLV || op == XB_SCATTERV ? rank : -1;
        unsigned char *got = op == XB_SCATTERV ? r : r + displs[j];
        for (size_t i = 0; i < (size_t)counts[j]; i++) {
            if (got[i] == pattern(from, to, i)) continue;
            snprintf(msg, len, "rank %d received wrong data at byte %zu of rank %d's %d", rank,
                     i, from, counts[j]);
            return msg;
        }
    }
    return NULL;
}

static void vcoll_teardown(int b)
{
    (void)b;
    free(counts), free(displs), free(scounts), free(sdispls);
    counts = displs = scounts = sdispls = NULL;
    MPI_Comm_free(&comm);
}

const struct ext_ops arena_ext_vcoll = {
    .buffers = vcoll_buffers,
    .setup = vcoll_setup,
    .call = vcoll_call,
    .validate = vcoll_validate,
    .teardown = vcoll_teardown,
};
