/*
 * mpi_rma.c - ext.h's G_RMA benchmarks: one-sided communication from rank 0 (the origin) to
 * rank 1 (the target) over a window on a communicator of those two ranks only.
 *   <op>-<sync>       one operation per epoch; time per iteration = one epoch
 *   put-bw-<sync>     the cell's `burst` operations in one epoch; time per epoch
 *   get-bw-<sync>
 * Operations: put, get (size bytes), accumulate and get_accumulate (MPI_SUM of the job's
 * type, job.c), fetch_and_op (one 8-byte integer, sum) and compare_and_swap (one 8-byte integer).
 * Synchronisation, per iteration:
 *   fence    the op then MPI_Win_fence on both ranks (the fence that closes one epoch opens the
 *            next; setup opens the first)
 *   lock     origin: MPI_Win_lock(exclusive, target), op, MPI_Win_unlock; the target is passive
 *   lockall  origin: op, MPI_Win_flush (MPI_Win_lock_all in setup, unlock_all in teardown)
 *   pscw     target: MPI_Win_post, MPI_Win_wait; origin: MPI_Win_start, op, MPI_Win_complete
 * OSU's fence and pscw latencies are half of a put there and one back; these are one way.
 * The window spans every receive slot, so an op's target displacement follows the slot. Its
 * memory, ARENA_RMA_WINDOW: allocate (MPI_Win_allocate, the default), create (MPI_Win_create
 * over the core's receive buffers) or dynamic (MPI_Win_create_dynamic, the receive buffers
 * attached, the target's address sent to the origin).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mpi_type.h"

#if defined(LAM_MPI)
#define HAVE_LOCK 0 /* MPI_Win_lock is declared in LAM's mpi.h but liblam has none */
#define LIBRARY "LAM/MPI 7.1.4"
#else
#define HAVE_LOCK 1
#define LIBRARY "this library"
#endif
#define HAVE_MPI3 (MPI_VERSION >= 3)

enum rma_op { PUT, GET, ACC, GACC, FOP, CAS };
enum rma_sync { FENCE, LOCK, LOCKALL, PSCW };
enum win_mode { ALLOCATE, CREATE, DYNAMIC };

static MPI_Comm comm = MPI_COMM_NULL; /* ranks 0 and 1 */
static MPI_Win win;
static MPI_Group peer = MPI_GROUP_NULL; /* the other rank, for PSCW */
static unsigned char *mem;              /* this rank's window memory */
static MPI_Aint base;                   /* the target's displacement of its first slot */
static const unsigned char *slot0;      /* the first receive slot: offsets of the others */
static int ops_per_epoch;

/* Benchmarks in ext.h's order: 6 ops then put-bw and get-bw, 4 syncs each. */
static enum rma_op op_of(int b)
{
    return b >= XB_GET_BW_FENCE ? GET : b >= XB_PUT_BW_FENCE ? PUT : (enum rma_op)(b / 4);
}
static enum rma_sync sync_of(int b) { return (enum rma_sync)(b % 4); }
static int in_bursts(int b) { return b >= XB_PUT_BW_FENCE; }

static enum win_mode mode(void)
{
    static int m = -1;
    if (m < 0) {
        const char *v = getenv("ARENA_RMA_WINDOW");
        m = v && !strcmp(v, "create") ? CREATE : v && !strcmp(v, "dynamic") ? DYNAMIC : ALLOCATE;
    }
    return (enum win_mode)m;
}

/* Open MPI 4's osc/rdma over btl/vader (its choice between ranks of one node) kills the target
 * on a 64-bit MPI_Compare_and_swap (open-mpi/ompi#7967, #11349): run only where the variant
 * steers clear of one of them (OMPI_MCA_osc=sm, pt2pt or ucx; a btl list without vader). */
static int cas_crashes(void)
{
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
    const char *osc = getenv("OMPI_MCA_osc"), *btl = getenv("OMPI_MCA_btl");
    int no_rdma = osc && (osc[0] == '^' ? strstr(osc, "rdma") != NULL : !strstr(osc, "rdma"));
    int no_vader = btl && (btl[0] == '^' ? strstr(btl, "vader") != NULL : !strstr(btl, "vader"));
    return !no_rdma && !no_vader;
#else
    return 0;
#endif
}

/* Open MPI's osc/sm makes MPI_Win_allocate windows only: forced (OMPI_MCA_osc=sm), any other
 * window aborts the job at MPI_Win_create. */
static int sm_only(void)
{
#if defined(OPEN_MPI)
    const char *osc = getenv("OMPI_MCA_osc");
    return osc && !strcmp(osc, "sm");
#else
    return 0;
#endif
}

static const char *rma_unrunnable(int b, size_t size, int np, char *msg, size_t len)
{
    static const char *const opname[] = {"MPI_Put", "MPI_Get", "MPI_Accumulate",
                                         "MPI_Get_accumulate", "MPI_Fetch_and_op",
                                         "MPI_Compare_and_swap"};
    enum rma_op o = op_of(b);
    enum rma_sync s = sync_of(b);
    (void)np;
    if ((o == FOP || o == CAS) && size != 8) {
        snprintf(msg, len, "%s moves one 8-byte integer: the size must be 8", opname[o]);
        return msg;
    }
    if (!HAVE_MPI3 && (o == GACC || o == FOP || o == CAS))
        snprintf(msg, len, "%s has no %s (MPI-3.0): MPI-2's put, get and accumulate only",
                 LIBRARY, opname[o]);
    else if (o == CAS && cas_crashes())
        snprintf(msg, len, "Open MPI 4's osc/rdma over btl/vader segfaults the target on a 64-bit "
                 "MPI_Compare_and_swap (open-mpi/ompi#7967, #11349); OMPI_MCA_osc=sm, pt2pt or "
                 "ucx runs it");
    else if (sm_only() && mode() != ALLOCATE)
        snprintf(msg, len, "Open MPI's osc/sm (OMPI_MCA_osc=sm) makes MPI_Win_allocate windows "
                 "only");
    else if (!HAVE_LOCK && s == LOCK)
        snprintf(msg, len, "%s has no MPI_Win_lock (in mpi.h, not in the library): MPI-2's "
                 "fence and post-start-complete-wait only", LIBRARY);
    else if (!HAVE_MPI3 && s == LOCKALL)
        snprintf(msg, len, "%s has no MPI_Win_lock_all or MPI_Win_flush (MPI-3.0)", LIBRARY);
    else if (!HAVE_MPI3 && mode() == ALLOCATE)
        snprintf(msg, len, "%s has no MPI_Win_allocate (MPI-3.0): ARENA_RMA_WINDOW=create "
                 "measures its MPI-2 windows", LIBRARY);
    else if (!HAVE_MPI3 && mode() == DYNAMIC)
        snprintf(msg, len, "%s has no MPI_Win_create_dynamic (MPI-3.0)", LIBRARY);
    else
        return NULL;
    return msg;
}

static void rma_buffers(int b, size_t size, int np, size_t *sn, size_t *rn)
{
    (void)np;
    switch (op_of(b)) {
    case ACC: case GACC: *sn = *rn = arena_sum_bytes(size); break;
    case FOP: *sn = *rn = 8; break;
    case CAS: *sn = 16, *rn = 8; break; /* the new value, then the one compared */
    default: *sn = *rn = size; break;
    }
}

static void rma_setup(int b, size_t size, int burst, const struct bufs *bufs)
{
    MPI_Aint span = (MPI_Aint)((size_t)bufs->nslots * bufs->rstride);
    int other = 1 - arena_rank;
    MPI_Group all;
    (void)size;
    MPI_Comm_split(MPI_COMM_WORLD, arena_rank < 2 ? 0 : MPI_UNDEFINED, arena_rank, &comm);
    if (comm == MPI_COMM_NULL) return;
    slot0 = bufs->r;
    ops_per_epoch = in_bursts(b) ? burst : 1;
    base = 0;
    mem = bufs->r;
#if HAVE_MPI3
    if (mode() == ALLOCATE) {
        MPI_Win_allocate(span, 1, MPI_INFO_NULL, comm, &mem, &win);
        memset(mem, 0, (size_t)span);
    } else if (mode() == DYNAMIC) {
        MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win);
        MPI_Win_attach(win, mem, span);
        MPI_Get_address(mem, &base);
        MPI_Bcast(&base, 1, MPI_AINT, 1, comm); /* the target's address to the origin */
    } else
#endif
        MPI_Win_create(mem, span, 1, MPI_INFO_NULL, comm, &win);
    MPI_Comm_group(comm, &all);
    MPI_Group_incl(all, 1, &other, &peer);
    MPI_Group_free(&all);
    switch (sync_of(b)) {
    case FENCE: MPI_Win_fence(MPI_MODE_NOPRECEDE, win); break;
#if HAVE_MPI3
    case LOCKALL: if (arena_rank == 0) MPI_Win_lock_all(0, win); break;
#endif
    default: break;
    }
}

/* One operation from the origin's slot buffers s and r to the target's slot at disp. */
static void one_op(enum rma_op o, size_t size, unsigned char *s, unsigned char *r, MPI_Aint disp)
{
    int n = (int)arena_sum_elems(size);
    MPI_Datatype type = arena_mpi_type(arena_datatype);
    switch (o) {
    case PUT: MPI_Put(s, (int)size, MPI_BYTE, 1, disp, (int)size, MPI_BYTE, win); break;
    case GET: MPI_Get(r, (int)size, MPI_BYTE, 1, disp, (int)size, MPI_BYTE, win); break;
    case ACC: MPI_Accumulate(s, n, type, 1, disp, n, type, MPI_SUM, win); break;
#if HAVE_MPI3
    case GACC:
        MPI_Get_accumulate(s, n, type, r, n, type, 1, disp, n, type, MPI_SUM, win);
        break;
    case FOP: MPI_Fetch_and_op(s, r, MPI_INT64_T, 1, disp, MPI_SUM, win); break;
    case CAS: MPI_Compare_and_swap(s, s + 8, r, MPI_INT64_T, 1, disp, win); break;
#endif
    default: break;
    }
}

static void rma_call(int b, size_t size, unsigned char *s, unsigned char *r)
{
    enum rma_sync sy = sync_of(b);
    MPI_Aint disp = base + (MPI_Aint)(r - slot0);
    int origin = arena_rank == 0;
    if (sy == PSCW && origin) MPI_Win_start(peer, 0, win);
    if (sy == PSCW && !origin) MPI_Win_post(peer, 0, win);
#if HAVE_LOCK
    if (sy == LOCK && origin) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
#endif
    if (origin)
        for (int i = 0; i < ops_per_epoch; i++)
            one_op(op_of(b), size, s, r, disp);
    switch (sy) {
    case FENCE: MPI_Win_fence(0, win); break;
    case PSCW:
        if (origin) MPI_Win_complete(win);
        else MPI_Win_wait(win);
        break;
#if HAVE_LOCK
    case LOCK: if (origin) MPI_Win_unlock(1, win); break;
#endif
#if HAVE_MPI3
    case LOCKALL: if (origin) MPI_Win_flush(1, win); break;
#endif
    default: break;
    }
}

/* The target's own access to its window memory outside the origin's epochs: passive modes
 * lock it (shared, beside the origin's lock_all) so that the copies agree. */
static void own_access(int b, int begin)
{
#if HAVE_LOCK
    if (sync_of(b) == LOCK || sync_of(b) == LOCKALL) {
        if (begin) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        else MPI_Win_unlock(1, win);
    }
#else
    (void)b, (void)begin;
#endif
}

static unsigned char pattern(size_t i) { return (unsigned char)(i * 7 + (i >> 8) * 13 + 5); }
/* The target's value and the origin's operand at element i (chars: a sum below 128). */
static int chars(void) { return arena_datatype == ARENA_TYPE_CHAR; }
static long before(size_t i) { return (long)(i % (chars() ? 64 : 1000)); }
static long added(size_t i) { return (long)((chars() ? 1 : 7) * (i % 13) + 1); }

/* The first of n bytes where got differs from want, or -1. */
static long differs(const void *got, const void *want, size_t n)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i]) return (long)i;
    return -1;
}

/* One untimed iteration on slot 0 with patterned data: the target's memory (put, the
 * accumulates, the atomics) and the origin's result (get, get_accumulate, the atomics). */
static const char *rma_validate(int b, size_t size, const struct bufs *bufs, char *msg,
                                size_t len)
{
    enum rma_op o = op_of(b);
    size_t n = arena_sum_elems(size);
    size_t span = o == FOP || o == CAS ? 8 : o == ACC || o == GACC ? arena_sum_bytes(size) : size;
    unsigned char *s = bufs->s, *r = bufs->r, *t = mem;
    unsigned char *tw = arena_xcalloc(span, 1, "a check");
    unsigned char *rw = arena_xcalloc(span, 1, "a check");
    int64_t v[2] = {40, 2}; /* the target's value, the origin's operand */
    long bad = -1;
    const char *where = "";
    if (comm == MPI_COMM_NULL) goto out;
    for (size_t i = 0; i < size; i++) /* what the target should hold and the origin get */
        tw[i] = o == PUT || o == GET ? pattern(i) : 0, rw[i] = o == GET ? pattern(i) : 0;
    if (o == ACC || o == GACC)
        for (size_t i = 0; i < n; i++) {
            arena_elem_set(tw, i, before(i) + added(i));
            if (o == GACC) arena_elem_set(rw, i, before(i));
        }
    if (o == FOP || o == CAS) {
        int64_t now = o == FOP ? v[0] + v[1] : 99;
        memcpy(tw, &now, 8);
        memcpy(rw, &v[0], 8);
    }
    if (arena_rank == 1) {
        own_access(b, 1);
        for (size_t i = 0; i < span; i++) t[i] = o == GET ? pattern(i) : 0;
        if (o == ACC || o == GACC)
            for (size_t i = 0; i < n; i++) arena_elem_set(t, i, before(i));
        if (o == FOP || o == CAS) memcpy(t, &v[0], 8);
        own_access(b, 0);
    } else {
        memset(r, 0, span);
        for (size_t i = 0; i < size; i++) s[i] = pattern(i);
        if (o == ACC || o == GACC)
            for (size_t i = 0; i < n; i++) arena_elem_set(s, i, added(i));
        if (o == FOP) memcpy(s, &v[1], 8);
        if (o == CAS) memcpy(s, &(int64_t){99}, 8), memcpy(s + 8, &v[0], 8);
    }
    if (sync_of(b) == FENCE) MPI_Win_fence(0, win); /* the local stores before the op */
    else MPI_Barrier(comm);
    int save = ops_per_epoch;
    ops_per_epoch = 1;
    rma_call(b, size, s, r);
    ops_per_epoch = save;
    if (sync_of(b) == LOCK || sync_of(b) == LOCKALL) MPI_Barrier(comm); /* the origin is done */
    if (arena_rank == 1) {
        own_access(b, 1);
        arena_fault_corrupt(t, span, span); /* tests: a self-test of the checker */
        bad = differs(t, tw, span), where = "the target's window";
        own_access(b, 0);
    } else if (o != PUT && o != ACC) {
        arena_fault_corrupt(r, span, span);
        bad = differs(r, rw, span), where = "the origin's result";
    }
out:
    free(tw);
    free(rw);
    if (bad < 0) return NULL;
    snprintf(msg, len, "%s holds a wrong byte at %ld of %zu", where, bad, span);
    return msg;
}

static void rma_teardown(int b)
{
    if (comm == MPI_COMM_NULL) return;
    switch (sync_of(b)) {
    case FENCE: MPI_Win_fence(MPI_MODE_NOSUCCEED, win); break;
#if HAVE_MPI3
    case LOCKALL: if (arena_rank == 0) MPI_Win_unlock_all(win); break;
#endif
    default: break;
    }
#if HAVE_MPI3
    if (mode() == DYNAMIC) MPI_Win_detach(win, mem);
#endif
    MPI_Win_free(&win);
    MPI_Group_free(&peer);
    MPI_Comm_free(&comm);
}

const struct ext_ops arena_ext_rma = {
    .unrunnable = rma_unrunnable,
    .buffers = rma_buffers,
    .setup = rma_setup,
    .call = rma_call,
    .validate = rma_validate,
    .teardown = rma_teardown,
};
