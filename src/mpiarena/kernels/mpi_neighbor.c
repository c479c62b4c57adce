/*
 * mpi_neighbor.c - ext.h's G_NEIGHBOR benchmarks on a 2-D periodic Cartesian communicator
 * (MPI_Dims_create(np, 2), MPI_Cart_create without reordering), made in setup. A rank has 4
 * neighbours in MPI's order: -1 and +1 along dimension 0, then along dimension 1; along a
 * dimension of 1 rank both are the rank itself, along one of 2 ranks both are the other rank
 * (2 ranks: a 2x1 grid).
 *   neighbor_allgather  MPI_Neighbor_allgather, size bytes from each rank to its 4 neighbours
 *   neighbor_alltoall   MPI_Neighbor_alltoall, size bytes per neighbour (block j to and from
 *                       neighbour j)
 *   halo                the same exchange by hand, as IMB-HALO does it: MPI_Cart_shift per
 *                       dimension, 4 MPI_Irecv then 4 MPI_Isend, MPI_Waitall; a message
 *                       travelling in the - or + direction of a dimension has its own tag, so
 *                       that a neighbour met twice cannot swap blocks; unlike IMB-HALO,
 *                       which skips a dimension of 1 rank, it keeps the messages to the rank
 *                       itself, as the collective has them
 * The neighbourhood collectives are MPI-3: LAM/MPI 7.1.4 runs halo only.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

#define NB 4 /* neighbours */

static MPI_Comm cart = MPI_COMM_NULL;
static int nbr[NB]; /* ranks of the neighbours, MPI's order */
static int dims[2];

static const char *neighbor_unrunnable(int b, size_t size, int np, char *msg, size_t len)
{
    (void)size, (void)np;
#if MPI_VERSION < 3
    if (b != XB_HALO) {
        snprintf(msg, len, "%s has no MPI_Neighbor_%s (MPI-3): MPI %d.%d",
#if defined(LAM_MPI)
                 "LAM/MPI 7.1.4",
#else
                 "this library",
#endif
                 b == XB_NEIGHBOR_ALLGATHER ? "allgather" : "alltoall", MPI_VERSION,
                 MPI_SUBVERSION);
        return msg;
    }
#else
    (void)b, (void)msg, (void)len;
#endif
    return NULL;
}

static void neighbor_buffers(int b, size_t size, int np, size_t *sn, size_t *rn)
{
    (void)np;
    *sn = b == XB_NEIGHBOR_ALLGATHER ? size : NB * size;
    *rn = NB * size;
}

static void neighbor_setup(int b, size_t size, int burst, const struct bufs *bufs)
{
    int periods[2] = {1, 1};
    (void)b, (void)size, (void)burst, (void)bufs;
    dims[0] = dims[1] = 0;
    MPI_Dims_create(arena_np, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(cart, d, 1, &nbr[2 * d], &nbr[2 * d + 1]);
}

static void halo(size_t size, unsigned char *s, unsigned char *r)
{
    MPI_Request req[2 * NB];
    MPI_Status st[2 * NB]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads MPICH's (MPI_Status *)1 */
    int n = (int)size;
    /* block j goes to neighbour j; the message to the - side (j even) travels in direction j
     * and arrives at that neighbour's + side (its block j + 1), and the other way round */
    for (int j = 0; j < NB; j++)
        MPI_Irecv(r + (size_t)j * size, n, MPI_BYTE, nbr[j], j ^ 1, cart, &req[j]);
    for (int j = 0; j < NB; j++)
        MPI_Isend(s + (size_t)j * size, n, MPI_BYTE, nbr[j], j, cart, &req[NB + j]);
    MPI_Waitall(2 * NB, req, st);
}

static void neighbor_call(int b, size_t size, unsigned char *s, unsigned char *r)
{
    int n = (int)size;
#if MPI_VERSION >= 3
    if (b == XB_NEIGHBOR_ALLGATHER)
        MPI_Neighbor_allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, cart);
    else if (b == XB_NEIGHBOR_ALLTOALL)
        MPI_Neighbor_alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, cart);
    else
#endif
        halo(size, s, r);
    (void)b, (void)n;
}

/* Byte i of the block rank `from` sends in direction j (allgather: j = -1, one for all). */
static unsigned char pattern(int from, int j, size_t i)
{
    return (unsigned char)(from * 131 + j * 37 + (long)i * 7 + (long)(i >> 8) * 13 + 1);
}

/* Index of the first byte of got that is not block `dir` of rank from, or -1. */
static long wrong_at(const unsigned char *got, int from, int dir, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (got[i] != pattern(from, dir, i)) return (long)i;
    return -1;
}

/* One call with each block patterned by (sender, direction, offset). Block j must come from
 * neighbour j, sent by it in the opposite direction (j ^ 1; allgather: its one block), also
 * where a dimension of 1 or 2 ranks makes both neighbours along it the same rank (MPI 3.1
 * left that order open, MPI 4.0 asks for it; MPICH 4.0.2 and 5.0.2 and Open MPI 4.1.4 keep it
 * on 2x1 and 2x2 grids). */
static const char *neighbor_validate(int b, size_t size, const struct bufs *bufs, char *msg,
                                     size_t len)
{
    unsigned char *s = bufs->s, *r = bufs->r;
    int nsend = b == XB_NEIGHBOR_ALLGATHER ? 1 : NB;
    memset(r, 0, NB * size);
    for (int j = 0; j < nsend; j++)
        for (size_t i = 0; i < size; i++)
            s[(size_t)j * size + i] = pattern(arena_rank, nsend == 1 ? -1 : j, i);
    neighbor_call(b, size, s, r);
    arena_fault_corrupt(r, size, bufs->rstride); /* tests: a self-test of the checker */
    for (int j = 0; j < NB; j++) {
        const unsigned char *got = r + (size_t)j * size;
        long bad = wrong_at(got, nbr[j], nsend == 1 ? -1 : j ^ 1, size);
        if (bad < 0) continue;
        snprintf(msg, len, "rank %d received wrong data at byte %ld of the block from "
                 "neighbour %d (rank %d) on a %dx%d grid", arena_rank, bad, j, nbr[j], dims[0],
                 dims[1]);
        return msg;
    }
    return NULL;
}

static void neighbor_teardown(int b)
{
    (void)b;
    MPI_Comm_free(&cart);
}

const struct ext_ops arena_ext_neighbor = {
    .unrunnable = neighbor_unrunnable,
    .buffers = neighbor_buffers,
    .setup = neighbor_setup,
    .call = neighbor_call,
    .validate = neighbor_validate,
    .teardown = neighbor_teardown,
};
