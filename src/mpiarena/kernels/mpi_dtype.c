/*
 * mpi_dtype.c - ext.h's G_DTYPE benchmarks: `size` bytes of payload described by a derived
 * datatype instead of a contiguous buffer, so that each library's datatype engine shows beside
 * pingpong and bcast of the same payload.
 *   vector   size/8 blocks of 8 bytes, one every 16 bytes (MPI_Type_vector: a column of
 *            doubles in a two-column matrix)
 *   indexed  the same blocks at irregular offsets within each 16 bytes, 16 i + 4 (i^2 mod 3)
 *            (MPI_Type_indexed: no stride for the library to find)
 * A block is 8 MPI_BYTE, or, where ARENA_DATATYPE names the job's type (job.c), 8 bytes of that
 * type (8 MPI_CHAR, 2 MPI_INT, 2 MPI_FLOAT, 1 MPI_DOUBLE).
 * Both ends use the type; the buffers span 2 size bytes. pingpong-*: rank 0 sends, rank 1
 * receives and sends back; bcast-*: from rank 0. A size that is not a multiple of 8 is n/a.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mpi_type.h"

#define BLOCK 8

static MPI_Comm comm = MPI_COMM_NULL;
static MPI_Datatype type = MPI_DATATYPE_NULL;

static int indexed(int b) { return b == XB_PINGPONG_INDEXED || b == XB_BCAST_INDEXED; }
static int pingpong(int b) { return b == XB_PINGPONG_VECTOR || b == XB_PINGPONG_INDEXED; }

/* Offset of block i in the buffer. */
static size_t block_at(int b, size_t i)
{
    return 2 * BLOCK * i + (indexed(b) ? 4 * ((i * i) % 3) : 0);
}

static const char *dtype_unrunnable(int b, size_t size, int np, char *msg, size_t len)
{
    (void)b, (void)np;
    if (size % BLOCK == 0) return NULL;
    snprintf(msg, len, "the type is made of %d-byte blocks: the size must be a multiple of %d",
             BLOCK, BLOCK);
    return msg;
}

static void dtype_buffers(int b, size_t size, int np, size_t *sn, size_t *rn)
{
    (void)b, (void)np;
    *sn = *rn = 2 * size;
}

static void dtype_setup(int b, size_t size, int burst, const struct bufs *bufs)
{
    int n = (int)(size / BLOCK);
    int each = arena_datatype_asked ? (int)arena_elem_size() : 1; /* bytes of an element */
    MPI_Datatype element = arena_datatype_asked ? arena_mpi_type(arena_datatype) : MPI_BYTE;
    (void)burst, (void)bufs;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (indexed(b)) { /* byte displacements: a block may start off its element's alignment */
        int *lens = arena_xcalloc((size_t)n + 1, sizeof *lens, "a datatype");
        MPI_Aint *at = arena_xcalloc((size_t)n + 1, sizeof *at, "a datatype");
        for (int i = 0; i < n; i++)
            lens[i] = BLOCK / each, at[i] = (MPI_Aint)block_at(b, (size_t)i);
        MPI_Type_create_hindexed(n, lens, at, element, &type);
        free(lens);
        free(at);
    } else {
        MPI_Type_vector(n, BLOCK / each, 2 * BLOCK / each, element, &type);
    }
    MPI_Type_commit(&type);
}

static void dtype_call(int b, size_t size, unsigned char *s, unsigned char *r)
{
    int count = size ? 1 : 0;
    if (!pingpong(b)) {
        MPI_Bcast(r, count, type, 0, comm);
    } else if (arena_rank == 0) {
        MPI_Send(s, count, type, 1, 0, comm);
        MPI_Recv(r, count, type, 1, 0, comm, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(r, count, type, 0, 0, comm, MPI_STATUS_IGNORE);
        MPI_Send(s, count, type, 0, 0, comm);
    }
}

static unsigned char pattern(int from, size_t i) { return (unsigned char)(from * 89 + i * 7 + 1); }

/* One call with every block of the sender's buffer patterned: the receiver's blocks must hold
 * the sender's bytes and the gaps between them stay as they were (zero). */
static const char *dtype_validate(int b, size_t size, const struct bufs *bufs, char *msg,
                                  size_t len)
{
    int rank = arena_rank, from = pingpong(b) ? 1 - rank : 0;
    size_t span = 2 * size;
    unsigned char *s = bufs->s, *r = bufs->r;
    if (pingpong(b) && rank > 1) return NULL;
    memset(r, 0, span);
    for (size_t i = 0; i < span; i++)
        s[i] = pattern(rank, i);
    if (!pingpong(b) && rank == 0)
        memcpy(r, s, span);
    dtype_call(b, size, s, r);
    if (!pingpong(b) && rank == 0) return NULL; /* the root's buffer is the source */
    arena_fault_corrupt(r, span, bufs->rstride); /* tests: a self-test of the checker */
    unsigned char *want = arena_xcalloc(span, 1, "a check");
    for (size_t i = 0; i < size / BLOCK; i++)
        for (size_t j = block_at(b, i); j < block_at(b, i) + BLOCK; j++)
            want[j] = pattern(from, j);
    long bad = -1;
    for (size_t i = 0; i < span && bad < 0; i++)
        if (r[i] != want[i]) bad = (long)i;
    free(want);
    if (bad < 0) return NULL;
    snprintf(msg, len, "rank %d received wrong data at byte %ld of the %zu the type spans", rank,
             bad, span);
    return msg;
}

static void dtype_teardown(int b)
{
    (void)b;
    MPI_Type_free(&type);
    MPI_Comm_free(&comm);
}

const struct ext_ops arena_ext_dtype = {
    .unrunnable = dtype_unrunnable,
    .buffers = dtype_buffers,
    .setup = dtype_setup,
    .call = dtype_call,
    .validate = dtype_validate,
    .teardown = dtype_teardown,
};
