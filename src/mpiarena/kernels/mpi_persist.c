/*
 * mpi_persist.c - ext.h's G_PERSIST benchmarks (MPI 4.0's persistent collectives):
 * MPI_Bcast_init (from rank 0), MPI_Reduce_init (to rank 0) and MPI_Allreduce_init summing
 * the job's type (job.c), MPI_Alltoall_init of size bytes per pair of ranks; the request
 * made in setup, then MPI_Start and MPI_Wait per iteration, on the same buffers as the
 * blocking bcast, reduce, allreduce and alltoall.
 * A persistent request binds its buffers: setup makes one request per slot of the cell's
 * buffers (one slot, or many with off-cache rotation), and an iteration starts the request of
 * the slot it is given.
 * MPICH 4.0.2 and 5.0.2 have them (MPI_VERSION 4 and 5); Open MPI 4.1.4 (MPI 3.1) has them as
 * MPIX_Bcast_init and the like in <mpi-ext.h> (its pcollreq extension), measured here as
 * they are; LAM/MPI 7.1.4 (MPI 1.2) has none.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mpi_type.h"

#if MPI_VERSION >= 4
#define PCOLL(name) MPI_##name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PCOLL(name) MPIX_##name##_init
#endif

static MPI_Comm comm = MPI_COMM_NULL;
static MPI_Request *reqs; /* one per slot */
static long nreqs;
static const struct bufs *slots;

static const char *persist_unrunnable(int b, size_t size, int np, char *msg, size_t len)
{
    (void)b, (void)size, (void)np;
#if defined(PCOLL)
    (void)msg, (void)len;
    return NULL;
#else
    snprintf(msg, len, "%s has no MPI_Bcast_init and the like (MPI 4.0): MPI %d.%d",
#if defined(LAM_MPI)
             "LAM/MPI 7.1.4",
#elif defined(OPEN_MPI)
             "this Open MPI (no pcollreq extension)",
#else
             "this library",
#endif
             MPI_VERSION, MPI_SUBVERSION);
    return msg;
#endif
}

static void persist_buffers(int b, size_t size, int np, size_t *sn, size_t *rn)
{
    switch (b) {
    case XB_BCAST_INIT: *sn = 0; *rn = size; break;
    case XB_ALLTOALL_INIT: *sn = *rn = size * (size_t)np; break;
    default: *sn = *rn = arena_sum_bytes(size); break;
    }
}

#if defined(PCOLL)
static void make(int b, size_t size, unsigned char *s, unsigned char *r, MPI_Request *req)
{
    int n = (int)size, e = (int)arena_sum_elems(size);
    MPI_Datatype type = arena_mpi_type(arena_datatype);
    switch (b) {
    case XB_BCAST_INIT: PCOLL(Bcast)(r, n, MPI_BYTE, 0, comm, MPI_INFO_NULL, req); break;
    case XB_REDUCE_INIT:
        PCOLL(Reduce)(s, r, e, type, MPI_SUM, 0, comm, MPI_INFO_NULL, req);
        break;
    case XB_ALLREDUCE_INIT:
        PCOLL(Allreduce)(s, r, e, type, MPI_SUM, comm, MPI_INFO_NULL, req);
        break;
    default: PCOLL(Alltoall)(s, n, MPI_BYTE, r, n, MPI_BYTE, comm, MPI_INFO_NULL, req); break;
    }
}
#endif

static void persist_setup(int b, size_t size, int burst, const struct bufs *bufs)
{
    (void)burst;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    slots = bufs;
    nreqs = bufs->nslots;
    reqs = arena_xcalloc((size_t)nreqs, sizeof *reqs, "persistent requests");
#if defined(PCOLL)
    for (long i = 0; i < nreqs; i++)
        make(b, size, bufs->s + (size_t)i * bufs->sstride, bufs->r + (size_t)i * bufs->rstride,
             &reqs[i]);
#else
    (void)b, (void)size;
#endif
}

/* The request bound to the slot whose receive buffer is r. */
static void persist_call(int b, size_t size, unsigned char *s, unsigned char *r)
{
    MPI_Request *req = &reqs[(size_t)(r - slots->r) / slots->rstride];
    (void)b, (void)size, (void)s;
    MPI_Start(req);
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

static unsigned char pattern(int from, int to, size_t i)
{
    return (unsigned char)(from * 131 + to * 37 + (long)i * 7 + (long)(i >> 8) * 13 + 1);
}

/* Slot 0's request once with patterned data: bcast's bytes from rank 0, the sums of
 * arena_summand(i, rank) over the ranks (at rank 0 for reduce), alltoall's block from each
 * rank. */
static const char *persist_validate(int b, size_t size, const struct bufs *bufs, char *msg,
                                    size_t len)
{
    int rank = arena_rank, np = arena_np;
    unsigned char *s = bufs->s, *r = bufs->r;
    size_t nsum = arena_sum_elems(size), sn, rn;
    persist_buffers(b, size, np, &sn, &rn);
    memset(r, 0, rn);
    for (size_t i = 0; b == XB_BCAST_INIT && rank == 0 && i < size; i++) r[i] = pattern(0, -1, i);
    for (size_t i = 0; (b == XB_REDUCE_INIT || b == XB_ALLREDUCE_INIT) && i < nsum; i++)
        arena_elem_set(s, i, arena_summand(i, rank));
    for (int j = 0; b == XB_ALLTOALL_INIT && j < np; j++)
        for (size_t i = 0; i < size; i++) s[(size_t)j * size + i] = pattern(rank, j, i);
    persist_call(b, size, s, r);
    arena_fault_corrupt(r, size, bufs->rstride); /* tests: a self-test of the checker */
    long bad = -1;
    if (b == XB_BCAST_INIT) {
        for (size_t i = 0; i < size && bad < 0; i++)
            if (r[i] != pattern(0, -1, i)) bad = (long)i;
    } else if (b == XB_ALLTOALL_INIT) {
        for (size_t i = 0; i < size * (size_t)np && bad < 0; i++)
            if (r[i] != pattern((int)(i / size), rank, i % size)) bad = (long)i;
    } else if (b == XB_ALLREDUCE_INIT || rank == 0) {
        for (size_t i = 0; i < nsum && bad < 0; i++)
            if (arena_elem_differs(r, i, arena_summed(i, 0, np)))
                bad = (long)(i * arena_elem_size());
    }
    if (bad < 0) return NULL;
    snprintf(msg, len, "rank %d received wrong data at byte %ld of %zu", rank, bad, rn);
    return msg;
}

static void persist_teardown(int b)
{
    (void)b;
#if defined(PCOLL)
    for (long i = 0; i < nreqs; i++)
        MPI_Request_free(&reqs[i]);
#endif
    free(reqs);
    reqs = NULL;
    MPI_Comm_free(&comm);
}

const struct ext_ops arena_ext_persist = {
    .unrunnable = persist_unrunnable,
    .buffers = persist_buffers,
    .setup = persist_setup,
    .call = persist_call,
    .validate = persist_validate,
    .teardown = persist_teardown,
};
