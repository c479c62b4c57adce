/*
 * mpi_type.h - the MPI datatype of each element type of the sums (arena.h's arena_type), for
 * the MPI module and ext.h's MPI groups.
 */
#ifndef MPI_TYPE_H
#define MPI_TYPE_H

#include <mpi.h>

#include "arena.h"

static inline MPI_Datatype arena_mpi_type(enum arena_type t)
{
    switch (t) {
    case ARENA_TYPE_CHAR: return MPI_CHAR;
    case ARENA_TYPE_FLOAT: return MPI_FLOAT;
    case ARENA_TYPE_DOUBLE: return MPI_DOUBLE;
    default: return MPI_INT;
    }
}

#endif
