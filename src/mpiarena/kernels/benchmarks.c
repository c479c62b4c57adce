/*
 * benchmarks.c - the benchmarks' names, as the control protocol and the store spell them
 * (benchmarks.py lists them again), in enum bench's order.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "core.h"

const char *const arena_bench_names[B_COUNT] = {
    "wtime", "pingpong", "ping", "sendrecv", "bibw",
    "barrier", "bcast", "scatter", "gather", "reduce", "allreduce", "allgather", "alltoall",
    "reduce_scatter_block", "scan", "exscan",
    "bcast-ack",
    "allreduce=reduce+bcast", "allreduce=reduce_scatter_block+allgather",
    "bcast=scatter+allgather", "allgather=gather+bcast", "allgather=alltoall",
    "gather=allgather", "scatter=bcast", "reduce=allreduce", "reduce_scatter_block=reduce+scatter",
    "scan=exscan+reduce_local",
    "cpu", "memory", "overlap", "progress", "threads", "msgrate", "loggp",
    "app-pi", "app-matvec", "app-matmul", "app-rowmm", "app-primes", "app-md", "app-stencil",
#define EXT_NAME(ID, NAME, GROUP, FLAGS) NAME,
    ARENA_EXT_BENCHES(EXT_NAME)
#undef EXT_NAME
};

int arena_bench_index(const char *name)
{
    for (int i = 0; i < B_COUNT; i++)
        if (strcmp(name, arena_bench_names[i]) == 0) return i;
    return -1;
}
