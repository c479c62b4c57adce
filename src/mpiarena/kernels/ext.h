/*
 * ext.h - benchmarks of MPI beyond point-to-point and the MPI-1 collectives: one-sided
 * communication, non-blocking collectives and their overlap, vector and neighbourhood
 * collectives, persistent collectives, derived datatypes and MPI-IO.
 *
 * Each group is one file written against MPI (mpi_rma.c, mpi_nbc.c, mpi_vcoll.c,
 * mpi_neighbor.c, mpi_persist.c, mpi_dtype.c, mpi_io.c), built into the MPI family's cores only
 * (mpi_ext.c gives the core its groups); other families' cores link ext_none.c, which says
 * what they lack. ext.c is the core's side: it asks the group for each step of a cell.
 *
 * ARENA_EXT_BENCHES lists them: X(ID, name, group, flags). The names are the benchmarks'
 * names in the store and on the command line (benchmarks.py lists them again, with what each
 * means); a synchronisation mode or a variant of the layout is part of the name.
 */
#ifndef EXT_H
#define EXT_H

#include <stddef.h>

enum ext_group { G_RMA, G_NBC, G_VCOLL, G_NEIGHBOR, G_PERSIST, G_DTYPE, G_IO, G_COUNT };

#define EXT_PAIR 1 /* run by ranks 0 and 1 only */
#define EXT_SELF 2 /* times itself (ext_ops.run), noting extras: a cost benchmark */

#define RMA_SYNCS(X, OP, NAME, FL) \
    X(OP##_FENCE, NAME "-fence", G_RMA, FL) X(OP##_LOCK, NAME "-lock", G_RMA, FL) \
    X(OP##_LOCKALL, NAME "-lockall", G_RMA, FL) X(OP##_PSCW, NAME "-pscw", G_RMA, FL)
#define NBC_OPS(X, OP, NAME) \
    X(OP, NAME, G_NBC, 0) X(OP##_OVL, NAME "-overlap", G_NBC, EXT_SELF) \
    X(OP##_OVL_TEST, NAME "-overlap-test", G_NBC, EXT_SELF)

#define ARENA_EXT_BENCHES(X) \
    RMA_SYNCS(X, PUT, "put", EXT_PAIR) RMA_SYNCS(X, GET, "get", EXT_PAIR) \
    RMA_SYNCS(X, ACC, "accumulate", EXT_PAIR) RMA_SYNCS(X, GACC, "get_accumulate", EXT_PAIR) \
    RMA_SYNCS(X, FOP, "fetch_and_op", EXT_PAIR) RMA_SYNCS(X, CAS, "compare_and_swap", EXT_PAIR) \
    RMA_SYNCS(X, PUT_BW, "put-bw", EXT_PAIR) RMA_SYNCS(X, GET_BW, "get-bw", EXT_PAIR) \
    NBC_OPS(X, IBARRIER, "ibarrier") NBC_OPS(X, IBCAST, "ibcast") \
    NBC_OPS(X, IREDUCE, "ireduce") NBC_OPS(X, IALLREDUCE, "iallreduce") \
    NBC_OPS(X, IALLTOALL, "ialltoall") NBC_OPS(X, IALLGATHER, "iallgather") \
    X(ALLGATHERV, "allgatherv", G_VCOLL, 0) X(ALLGATHERV_SKEW, "allgatherv-skew", G_VCOLL, 0) \
    X(ALLTOALLV, "alltoallv", G_VCOLL, 0) X(ALLTOALLV_SKEW, "alltoallv-skew", G_VCOLL, 0) \
    X(GATHERV, "gatherv", G_VCOLL, 0) X(GATHERV_SKEW, "gatherv-skew", G_VCOLL, 0) \
    X(SCATTERV, "scatterv", G_VCOLL, 0) X(SCATTERV_SKEW, "scatterv-skew", G_VCOLL, 0) \
    X(NEIGHBOR_ALLGATHER, "neighbor_allgather", G_NEIGHBOR, 0) \
    X(NEIGHBOR_ALLTOALL, "neighbor_alltoall", G_NEIGHBOR, 0) X(HALO, "halo", G_NEIGHBOR, 0) \
    X(BCAST_INIT, "bcast_init", G_PERSIST, 0) X(REDUCE_INIT, "reduce_init", G_PERSIST, 0) \
    X(ALLREDUCE_INIT, "allreduce_init", G_PERSIST, 0) \
    X(ALLTOALL_INIT, "alltoall_init", G_PERSIST, 0) \
    X(PINGPONG_VECTOR, "pingpong-vector", G_DTYPE, EXT_PAIR) \
    X(PINGPONG_INDEXED, "pingpong-indexed", G_DTYPE, EXT_PAIR) \
    X(BCAST_VECTOR, "bcast-vector", G_DTYPE, 0) X(BCAST_INDEXED, "bcast-indexed", G_DTYPE, 0) \
    X(IO_WRITE_COLL, "io-write-coll", G_IO, 0) X(IO_WRITE_INDEP, "io-write-indep", G_IO, 0) \
    X(IO_WRITE_COLL_STRIDED, "io-write-coll-strided", G_IO, 0) \
    X(IO_WRITE_INDEP_STRIDED, "io-write-indep-strided", G_IO, 0) \
    X(IO_READ_COLL, "io-read-coll", G_IO, 0) X(IO_READ_INDEP, "io-read-indep", G_IO, 0) \
    X(IO_READ_COLL_STRIDED, "io-read-coll-strided", G_IO, 0) \
    X(IO_READ_INDEP_STRIDED, "io-read-indep-strided", G_IO, 0)

/* The benchmarks, numbered from 0 within this list (the core adds B_EXT). */
#define EXT_ID(ID, NAME, GROUP, FLAGS) XB_##ID,
enum ext_bench { ARENA_EXT_BENCHES(EXT_ID) XB_COUNT };
#undef EXT_ID

/* Benchmark xb's EXT_ flags, from the list. */
static inline int arena_ext_bench_flags(enum ext_bench xb)
{
#define EXT_FLAGS(ID, NAME, GROUP, FLAGS) FLAGS,
    static const int flags[XB_COUNT] = {ARENA_EXT_BENCHES(EXT_FLAGS)};
#undef EXT_FLAGS
    return flags[xb];
}

/* The groups' titles, for messages ("one-sided communication"...). */
static inline const char *arena_ext_group_title(enum ext_group g)
{
    static const char *const titles[G_COUNT] = {
        "one-sided communication", "non-blocking collectives", "vector collectives",
        "neighbourhood collectives", "persistent collectives", "derived datatypes", "MPI-IO",
    };
    return titles[g];
}

struct bufs;

/* What a group does for one of its benchmarks b (an ext_bench) in each step of a cell. Only
 * call is required; every function is called on every rank (a pair benchmark's call and run
 * on ranks 0 and 1 only). */
struct ext_ops {
    /* Why b cannot run at this size and rank count with this library (written into msg), or
     * NULL. Every rank must answer alike. */
    const char *(*unrunnable)(int b, size_t size, int np, char *msg, size_t len);
    /* Bytes per slot of the send and receive buffers the core allocates (unset: size each). */
    void (*buffers)(int b, size_t size, int np, size_t *sn, size_t *rn);
    /* Outside any timed part, collective: windows, datatypes, communicators, requests or
     * files over the cell's buffers (every slot of them); burst is the cell's (operations per
     * iteration of a benchmark that makes several, as bibw's: struct bench_args). */
    void (*setup)(int b, size_t size, int burst, const struct bufs *bufs);
    /* One iteration on one slot's buffers. */
    void (*call)(int b, size_t size, unsigned char *s, unsigned char *r);
    /* EXT_SELF: k iterations timed by the group itself, extras noted (arena_note); returns
     * seconds per iteration on this rank. */
    double (*run)(int b, size_t size, long k, const struct bufs *bufs);
    /* One untimed iteration with patterned data, its result checked on this rank: why it is
     * wrong (written into msg), or NULL. Unset: not checked. */
    const char *(*validate)(int b, size_t size, const struct bufs *bufs, char *msg, size_t len);
    /* After the cell, collective: free what setup made. */
    void (*teardown)(int b);
};

/* The family's side (mpi_ext.c, ext_none.c): a group's operations, or NULL with why this
 * family has none written into why. */
const struct ext_ops *arena_ext_group(enum ext_group g, char *why, size_t len);

#endif
