/*
 * mpi_ext.c - ext.h's groups in the MPI family's cores: one file each, written against MPI;
 * each says itself where a library lacks what it needs (LAM/MPI 7.1.4 is MPI 1.2 with parts of
 * MPI-2; MPI_Allreduce_init and the like are MPI 4.0).
 */
#include "ext.h"

extern const struct ext_ops arena_ext_rma, arena_ext_nbc, arena_ext_vcoll, arena_ext_neighbor,
    arena_ext_persist, arena_ext_dtype, arena_ext_io;

const struct ext_ops *arena_ext_group(enum ext_group g, char *why, size_t len)
{
    static const struct ext_ops *const groups[G_COUNT] = {
        [G_RMA] = &arena_ext_rma, [G_NBC] = &arena_ext_nbc, [G_VCOLL] = &arena_ext_vcoll,
        [G_NEIGHBOR] = &arena_ext_neighbor, [G_PERSIST] = &arena_ext_persist,
        [G_DTYPE] = &arena_ext_dtype, [G_IO] = &arena_ext_io,
    };
    (void)why, (void)len;
    return groups[g];
}
