/*
 * arena.h - the interface between the measurement driver and one transport module.
 *
 * The driver (driver.c and the files core.h lists) owns the control protocol, timing loops,
 * buffers and output. A module (mod_mpi.c, mod_pvm.c, mod_tcp.c, mod_floor.c) supplies
 * start-up, a clock and the message-passing primitives of its family, as NetPIPE's modules do.
 * Exactly one module is linked into each build and exports `arena_module`.
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The element type of every sum (ARENA_DATATYPE, read once at start-up: job.c; int unless
 * set). Sizes stay bytes: a reduction of `size` bytes sums arena_elems(size, type) elements,
 * a size that is not a whole number of them rounded up to one more. */
enum arena_type { ARENA_TYPE_INT, ARENA_TYPE_CHAR, ARENA_TYPE_FLOAT, ARENA_TYPE_DOUBLE,
                  ARENA_NTYPE };

static inline size_t arena_type_size(enum arena_type t)
{
    return t == ARENA_TYPE_CHAR ? 1 : t == ARENA_TYPE_FLOAT ? sizeof(float)
         : t == ARENA_TYPE_DOUBLE ? sizeof(double) : sizeof(int);
}

static inline size_t arena_elems(size_t size, enum arena_type t)
{
    return (size + arena_type_size(t) - 1) / arena_type_size(t);
}

/* Collective operations the driver can ask of a module. */
enum arena_coll {
    ARENA_BARRIER,
    ARENA_BCAST,
    ARENA_SCATTER,
    ARENA_GATHER,
    ARENA_REDUCE,
    ARENA_ALLREDUCE,
    ARENA_ALLGATHER,
    ARENA_ALLTOALL,
    ARENA_REDUCE_SCATTER_BLOCK, /* arena_elems elements padded to a multiple of np, sum;
                                 * each rank gets its block (arena_block elements) */
    ARENA_SCAN,         /* arena_elems elements, sum, inclusive prefix */
    ARENA_EXSCAN,       /* the same, exclusive (rank 0's result undefined) */
    ARENA_REDUCE_LOCAL, /* local, no communication: rbuf += sbuf, arena_elems elements */
    ARENA_REDUCE_DOUBLE, /* ceil(size/8) doubles, sum, root 0: the application kernels' */
    ARENA_NCOLL
};

/* Non-blocking operations for the overlap and progress benchmarks. */
enum arena_nb {
    ARENA_NB_SEND,      /* to peer */
    ARENA_NB_RECV,      /* from peer */
    ARENA_NB_EXCHANGE,  /* both at once with peer */
    ARENA_NB_ALLREDUCE, /* arena_elems elements, sum (MPI_Iallreduce) */
    ARENA_NB_ALLTOALL,  /* size bytes per pair (MPI_Ialltoall) */
};

/* One control variable as the library reports it: name, value, scope. */
typedef void (*arena_cvar_fn)(const char *name, const char *value, const char *scope);

typedef struct arena_module {
    const char *family;
    /* Start the library; set *rank and *np; write the thread level granted into level. */
    void (*init)(int *argc, char ***argv, int *rank, int *np, char *level, size_t level_len);
    void (*finalize)(void);
    void (*abort)(const char *why);
    double (*now)(void);  /* seconds, the library's own clock */
    double (*tick)(void); /* the clock's advertised resolution */
    /* Library version string; may be called before init. */
    void (*library_version)(char *buf, size_t len);
    void (*send)(const void *buf, size_t n, int peer);
    void (*recv)(void *buf, size_t n, int peer);
    /* Blocking receive that sleeps between polls, for ranks idle between cells. */
    void (*recv_idle)(void *buf, size_t n, int peer);
    /* Simultaneous exchange of n bytes with peer. */
    void (*sendrecv)(const void *sbuf, void *rbuf, size_t n, int peer);
    /* A burst: post w receives and w non-blocking sends of n bytes each with peer, wait for
     * all. */
    void (*burst)(const void *sbuf, void *rbuf, size_t n, int peer, int w);
    /* Non-zero if the family can express this collective at this size. */
    int (*has_coll)(enum arena_coll op, size_t size);
    /* Non-zero if a 0-byte point-to-point message exists (not on a byte stream). */
    int zero_byte_messages;
    /* Set the element type of the sums that coll and start make (reductions); NULL, or why
     * this family cannot sum it (its reductions are then n/a with that reason). */
    const char *(*reduce_as)(enum arena_type t);
    /* One collective of `size` bytes per rank (reduce: arena_elems elements, sum), root 0.
     * sbuf/rbuf are sized by the driver: np*size where the operation needs it. */
    void (*coll)(enum arena_coll op, const void *sbuf, void *rbuf, size_t size);
    /* Optional (NULL: the family has none). Start one non-blocking operation; return 0 if
     * it cannot be expressed. `wait` completes every operation started. */
    int (*start)(enum arena_nb op, const void *sbuf, void *rbuf, size_t size, int peer);
    void (*wait)(void);
    /* Optional, thread-safe under MPI_THREAD_MULTIPLE: w non-blocking sends (or receives)
     * of n bytes with peer on tag, waited for together, then a 1-byte acknowledgement back. */
    void (*stream)(const void *sbuf, void *rbuf, size_t n, int peer, int w, int tag, int sending);
    /* Optional (NULL: no_config says why there is none). Rank 0, outside any timed part: emit
     * each control variable the library reports (value "?" where it cannot be read); return
     * how many, or -1 with why written. */
    int (*config)(arena_cvar_fn emit, char *why, size_t len);
    const char *no_config;
    /* Optional (NULL: malloc and free). Memory for a cell's buffers that the peer's module can
     * read at the same address (the machine floor copies straight from its peer's buffer);
     * alloc returns NULL when there is none left. */
    void *(*alloc)(size_t n);
    void (*release)(void *p);
} arena_module;

extern const arena_module arena_module_impl;

/* Elements of type t per rank in a reduce_scatter_block of `size` bytes over np ranks. */
static inline size_t arena_block(size_t size, int np, enum arena_type t)
{
    return (arena_elems(size, t) + (size_t)np - 1) / (size_t)np;
}

/* Application kernels (apps.c), written once against the module. */
enum arena_app {
    ARENA_APP_PI, ARENA_APP_MATVEC, ARENA_APP_MATMUL, ARENA_APP_ROWMM, ARENA_APP_PRIMES,
    ARENA_APP_MD, ARENA_APP_STENCIL, ARENA_NAPP
};
/* The kinds of call whose time a kernel reports. */
enum arena_call {
    ARENA_CALL_SEND, ARENA_CALL_RECV, ARENA_CALL_SENDRECV, ARENA_CALL_SCATTER, ARENA_CALL_REDUCE,
    ARENA_NCALL
};
struct arena_app_out {
    double wall;               /* seconds of one run on this rank */
    double calls[ARENA_NCALL]; /* seconds inside each kind of call */
    double check;              /* rank 0: the correctness figure (NaN on other ranks) */
    char bad[160];             /* rank 0: why the answer is wrong; empty when right */
};
extern const unsigned arena_app_calls[ARENA_NAPP]; /* bit k: the kernel makes calls of kind k */
/* Why the kernel cannot run at this size and rank count here, or NULL. */
const char *arena_app_unrunnable(enum arena_app app, long size, int np);
void arena_app_run(enum arena_app app, long size, int rank, int np, struct arena_app_out *out);

/* Memory from malloc's family (LAM replaces it, not aligned_alloc); out of memory ends the job
 * through the module's abort: "out of memory for WHAT" on stderr, non-zero exit. Inline, so
 * that a file allocating uses the module and the module uses no other file. */
static inline void *arena_checked(void *p, const char *what)
{
    if (!p) {
        char why[128];
        snprintf(why, sizeof why, "out of memory for %s", what);
        arena_module_impl.abort(why);
    }
    return p;
}

static inline void *arena_xmalloc(size_t n, const char *what)
{
    return arena_checked(malloc(n ? n : 1), what);
}

/* Zeroed. */
static inline void *arena_xcalloc(size_t n, size_t each, const char *what)
{
    return arena_checked(calloc(n ? n : 1, each ? each : 1), what);
}

/* The clock for modules whose library has none of its own (PVM, raw TCP). */
static inline double arena_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double arena_monotonic_tick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The window method's global clock (clock.c): this rank's CLOCK_MONOTONIC mapped onto rank 0's
 * by a fitted offset and drift. Every rank calls the refresh; when one is due (rank 0 says), it
 * takes ping-pongs with rank 0. */
void arena_clock_refresh(const arena_module *m, int rank, int np);
double arena_global_now(void);
double arena_clock_offset(double t); /* the fitted offset at local time t, seconds */
double arena_clock_drift(void);      /* the fitted drift, seconds per second */
double arena_clock_rtt(void);        /* rank 0: the ranks' slowest shortest round trip */

#endif
