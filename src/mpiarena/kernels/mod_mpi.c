/*
 * mod_mpi.c - the MPI module: every primitive maps to one MPI call on a duplicate of
 * MPI_COMM_WORLD, all with MPI_BYTE except the reductions (MPI_SUM of the job's type:
 * MPI_INT, MPI_CHAR, MPI_FLOAT or MPI_DOUBLE, reduce_as).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "mpi_type.h"

static MPI_Comm comm = MPI_COMM_NULL;
static enum arena_type sums = ARENA_TYPE_INT; /* the reductions' element type */
static const char *level_names[] = {"single", "funneled", "serialized", "multiple"};

/* ARENA_THREAD_LEVEL=single|funneled|serialized|multiple asks MPI_Init_thread for that
 * level; unset, MPI_Init. What the library granted is reported either way. */
static void start_library(int *argc, char ***argv)
{
    const char *want = getenv("ARENA_THREAD_LEVEL");
    const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                          MPI_THREAD_MULTIPLE};
    int provided;
    if (!want || !*want) {
        MPI_Init(argc, argv);
        return;
    }
    for (int i = 0; i < 4; i++)
        if (!strcmp(want, level_names[i])) {
            MPI_Init_thread(argc, argv, levels[i], &provided);
            return;
        }
    fprintf(stderr, "arena: ARENA_THREAD_LEVEL=%s is not single, funneled, serialized or "
            "multiple\n", want);
    exit(2);
}

static void mpi_init(int *argc, char ***argv, int *rank, int *np, char *level, size_t len)
{
    int provided = MPI_THREAD_SINGLE;
    start_library(argc, argv);
#ifdef ARENA_SMPI /* SimGrid's SMPI sets up each communicator of a library selector's for about a
                     minute at 1024 ranks: the core simulated has the world to itself */
    comm = MPI_COMM_WORLD;
#else
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
#endif
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, np);
#if MPI_VERSION >= 2 || defined(LAM_MPI)
    MPI_Query_thread(&provided);
#endif
    int idx = provided == MPI_THREAD_MULTIPLE     ? 3
              : provided == MPI_THREAD_SERIALIZED ? 2
              : provided == MPI_THREAD_FUNNELED   ? 1
                                                  : 0;
    snprintf(level, len, "%s", level_names[idx]);
}

static void mpi_finalize(void)
{
#ifndef ARENA_SMPI
    MPI_Comm_free(&comm);
#endif
    MPI_Finalize();
}

static void mpi_abort(const char *why)
{
    fprintf(stderr, "arena: %s\n", why);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static double mpi_now(void) { return MPI_Wtime(); }
static double mpi_tick(void) { return MPI_Wtick(); }

static void mpi_library_version(char *buf, size_t len)
{
#if MPI_VERSION >= 3
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    snprintf(buf, len, "%s", v);
#elif defined(LAM_MPI)
    snprintf(buf, len, "LAM/MPI %d.%d.%d (MPI %d.%d)", LAM_MAJOR_VERSION, LAM_MINOR_VERSION,
             LAM_RELEASE_VERSION, MPI_VERSION, MPI_SUBVERSION);
#else
    snprintf(buf, len, "MPI %d.%d", MPI_VERSION, MPI_SUBVERSION);
#endif
}

static void mpi_send(const void *buf, size_t n, int peer)
{
    MPI_Send((void *)buf, (int)n, MPI_BYTE, peer, 0, comm);
}

static void mpi_recv(void *buf, size_t n, int peer)
{
    MPI_Recv(buf, (int)n, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
}

static void mpi_recv_idle(void *buf, size_t n, int peer)
{
    MPI_Request req;
    int done = 0;
    long nap_ns = 50000; /* back off from 50 us to 20 ms so idle jobs cost no CPU */
    MPI_Irecv(buf, (int)n, MPI_BYTE, peer, 0, comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        struct timespec ts = {0, nap_ns};
        nanosleep(&ts, NULL);
        if (nap_ns < 20000000L)
            nap_ns *= 2;
    }
}

static void mpi_sendrecv(const void *sbuf, void *rbuf, size_t n, int peer)
{
    MPI_Sendrecv((void *)sbuf, (int)n, MPI_BYTE, peer, 0, rbuf, (int)n, MPI_BYTE, peer, 0, comm,
                 MPI_STATUS_IGNORE);
}

#define MAX_BURST 1024
static void mpi_burst(const void *sbuf, void *rbuf, size_t n, int peer, int w)
{
    static MPI_Request reqs[2 * MAX_BURST];
    static MPI_Status stats[2 * MAX_BURST]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads it */
    if (w > MAX_BURST)
        w = MAX_BURST;
    for (int i = 0; i < w; i++)
        MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, 1, comm, &reqs[i]);
    for (int i = 0; i < w; i++)
        MPI_Isend((void *)sbuf, (int)n, MPI_BYTE, peer, 1, comm, &reqs[w + i]);
    MPI_Waitall(2 * w, reqs, stats);
}

/* MPI_Reduce_scatter_block and MPI_Reduce_local are MPI 2.2; MPI_Exscan is MPI 2.0 (LAM 7.1,
 * MPI 1.2, has it too). */
#if MPI_VERSION > 2 || (MPI_VERSION == 2 && MPI_SUBVERSION >= 2)
#define HAVE_MPI22 1
#else
#define HAVE_MPI22 0
#endif
#if MPI_VERSION >= 2 || defined(LAM_MPI)
#define HAVE_EXSCAN 1
#else
#define HAVE_EXSCAN 0
#endif

static int mpi_has_coll(enum arena_coll op, size_t size)
{
    (void)size;
    if (op == ARENA_REDUCE_SCATTER_BLOCK || op == ARENA_REDUCE_LOCAL)
        return HAVE_MPI22;
    if (op == ARENA_EXSCAN)
        return HAVE_EXSCAN;
    return op < ARENA_NCOLL;
}

/* MPICH and Open MPI sum all four types; LAM ends the job at a sum of MPI_CHAR (MPI 1.2's
 * MPI_SUM takes integers and floating point, and MPI_CHAR is neither). */
static const char *mpi_reduce_as(enum arena_type t)
{
    sums = t;
#if defined(LAM_MPI)
    static char why[160];
    if (t == ARENA_TYPE_CHAR) {
        snprintf(why, sizeof why, "LAM/MPI %d.%d.%d has no sum of MPI_CHAR (MPI 1.2 sums "
                 "integers and floating point, not characters)", LAM_MAJOR_VERSION,
                 LAM_MINOR_VERSION, LAM_RELEASE_VERSION);
        return why;
    }
#endif
    return NULL;
}

static void mpi_coll(enum arena_coll op, const void *sbuf, void *rbuf, size_t size)
{
    void *s = (void *)sbuf;
    int n = (int)size, e = (int)arena_elems(size, sums);
    MPI_Datatype type = arena_mpi_type(sums);
    switch (op) {
    case ARENA_BARRIER: MPI_Barrier(comm); break;
    case ARENA_BCAST: MPI_Bcast(rbuf, n, MPI_BYTE, 0, comm); break;
    case ARENA_SCATTER: MPI_Scatter(s, n, MPI_BYTE, rbuf, n, MPI_BYTE, 0, comm); break;
    case ARENA_GATHER: MPI_Gather(s, n, MPI_BYTE, rbuf, n, MPI_BYTE, 0, comm); break;
    case ARENA_REDUCE: MPI_Reduce(s, rbuf, e, type, MPI_SUM, 0, comm); break;
    case ARENA_ALLREDUCE: MPI_Allreduce(s, rbuf, e, type, MPI_SUM, comm); break;
    case ARENA_ALLGATHER: MPI_Allgather(s, n, MPI_BYTE, rbuf, n, MPI_BYTE, comm); break;
    case ARENA_ALLTOALL: MPI_Alltoall(s, n, MPI_BYTE, rbuf, n, MPI_BYTE, comm); break;
    case ARENA_SCAN: MPI_Scan(s, rbuf, e, type, MPI_SUM, comm); break;
#if HAVE_EXSCAN
    case ARENA_EXSCAN: MPI_Exscan(s, rbuf, e, type, MPI_SUM, comm); break;
#endif
#if HAVE_MPI22
    case ARENA_REDUCE_SCATTER_BLOCK: {
        int np;
        MPI_Comm_size(comm, &np);
        MPI_Reduce_scatter_block(s, rbuf, (int)arena_block(size, np, sums), type, MPI_SUM,
                                 comm);
        break;
    }
    case ARENA_REDUCE_LOCAL: MPI_Reduce_local(s, rbuf, e, type, MPI_SUM); break;
#endif
    case ARENA_REDUCE_DOUBLE:
        MPI_Reduce(s, rbuf, (n + 7) / 8, MPI_DOUBLE, MPI_SUM, 0, comm);
        break;
    default: break;
    }
}

static MPI_Request pending[2];
static int npending;

static int mpi_start(enum arena_nb op, const void *sbuf, void *rbuf, size_t size, int peer)
{
    void *s = (void *)sbuf;
    int n = (int)size;
    switch (op) {
    case ARENA_NB_SEND: MPI_Isend(s, n, MPI_BYTE, peer, 2, comm, &pending[npending++]); return 1;
    case ARENA_NB_RECV: MPI_Irecv(rbuf, n, MPI_BYTE, peer, 2, comm, &pending[npending++]); return 1;
    case ARENA_NB_EXCHANGE:
        MPI_Irecv(rbuf, n, MPI_BYTE, peer, 2, comm, &pending[npending++]);
        MPI_Isend(s, n, MPI_BYTE, peer, 2, comm, &pending[npending++]);
        return 1;
#if MPI_VERSION >= 3 && !defined(LAM_MPI)
    case ARENA_NB_ALLREDUCE:
        MPI_Iallreduce(s, rbuf, (int)arena_elems(size, sums), arena_mpi_type(sums), MPI_SUM,
                       comm, &pending[npending++]);
        return 1;
    case ARENA_NB_ALLTOALL:
        MPI_Ialltoall(s, n, MPI_BYTE, rbuf, n, MPI_BYTE, comm, &pending[npending++]);
        return 1;
#endif
    default: return 0;
    }
}

static void mpi_wait(void)
{
    MPI_Status stats[2];
    MPI_Waitall(npending, pending, stats);
    npending = 0;
}

static void mpi_stream(const void *sbuf, void *rbuf, size_t n, int peer, int w, int tag,
                       int sending)
{
    MPI_Request reqs[MAX_BURST];
    MPI_Status stats[MAX_BURST];
    unsigned char ack = 0;
    if (w > MAX_BURST)
        w = MAX_BURST;
    for (int i = 0; i < w; i++) {
        if (sending) MPI_Isend((void *)sbuf, (int)n, MPI_BYTE, peer, tag, comm, &reqs[i]);
        else MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, tag, comm, &reqs[i]);
    }
    MPI_Waitall(w, reqs, stats);
    if (sending) MPI_Recv(&ack, 1, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
    else MPI_Send(&ack, 1, MPI_BYTE, peer, tag, comm);
}

#if MPI_VERSION >= 3 && !defined(LAM_MPI) && !defined(ARENA_SMPI) /* SMPI: no MPI_T */
static const char *scope_name(int scope)
{
    switch (scope) {
    case MPI_T_SCOPE_CONSTANT: return "constant";
    case MPI_T_SCOPE_READONLY: return "readonly";
    case MPI_T_SCOPE_LOCAL: return "local";
    case MPI_T_SCOPE_GROUP: return "group";
    case MPI_T_SCOPE_GROUP_EQ: return "group_eq";
    case MPI_T_SCOPE_ALL: return "all";
    case MPI_T_SCOPE_ALL_EQ: return "all_eq";
    default: return "unknown";
    }
}

/* One integer element of a cvar as read, widened. */
static int int_at(const void *data, MPI_Datatype type, int i, long long *v)
{
    if (type == MPI_INT) *v = ((const int *)data)[i];
    else if (type == MPI_UNSIGNED) *v = ((const unsigned *)data)[i];
    else if (type == MPI_LONG) *v = ((const long *)data)[i];
    else if (type == MPI_UNSIGNED_LONG) *v = (long long)((const unsigned long *)data)[i];
    else if (type == MPI_LONG_LONG) *v = ((const long long *)data)[i];
    else if (type == MPI_UNSIGNED_LONG_LONG)
        *v = (long long)((const unsigned long long *)data)[i];
    else if (type == MPI_COUNT) *v = (long long)((const MPI_Count *)data)[i];
    else return 0;
    return 1;
}

/* The name MPI_T gives an enum's value, or NULL. */
static const char *enum_name(MPI_T_enum en, long long v, char *name, int len)
{
    int num = 0, value, nl = len;
    char ename[256];
    if (MPI_T_enum_get_info(en, &num, ename, &nl) != MPI_SUCCESS) return NULL;
    for (int j = 0; j < num; j++) {
        nl = len;
        if (MPI_T_enum_get_item(en, j, &value, name, &nl) == MPI_SUCCESS && value == v)
            return name;
    }
    return NULL;
}

/* A read cvar's count elements as text: strings as they are, booleans true or false, numbers
 * joined by commas, enums by their names where MPI_T gives them; another type: "?". */
static void format_cvar(const void *data, int count, MPI_Datatype type, MPI_T_enum en,
                        char *out, size_t len)
{
    size_t used = 0;
    long long v;
    char item[256];
    out[0] = 0;
    if (type == MPI_CHAR) {
        snprintf(out, len, "%.*s", count, (const char *)data);
        return;
    }
    if (type == MPI_C_BOOL && count == 1) {
        snprintf(out, len, "%s", *(const _Bool *)data ? "true" : "false");
        return;
    }
    for (int i = 0; i < count && used + 1 < len; i++) {
        const char *sep = i ? "," : "";
        const char *named = NULL;
        if (type == MPI_DOUBLE)
            used += (size_t)snprintf(out + used, len - used, "%s%.17g", sep,
                                     ((const double *)data)[i]);
        else if (!int_at(data, type, i, &v)) {
            snprintf(out, len, "?");
            return;
        } else if (en != MPI_T_ENUM_NULL && (named = enum_name(en, v, item, sizeof item)))
            used += (size_t)snprintf(out + used, len - used, "%s%s", sep, named);
        else
            used += (size_t)snprintf(out + used, len - used, "%s%lld", sep, v);
    }
}

/* Read one cvar into value ("?" if it cannot be); a cvar bound to a communicator is read on
 * MPI_COMM_WORLD, one bound to any other object is not read. */
static void read_cvar(int i, MPI_Datatype type, MPI_T_enum en, int bind, char *value,
                      size_t len)
{
    MPI_T_cvar_handle h;
    MPI_Comm world = MPI_COMM_WORLD;
    int count = 0;
    snprintf(value, len, "?");
    if (bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM) return;
    if (MPI_T_cvar_handle_alloc(i, bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL, &h,
                                &count) != MPI_SUCCESS)
        return;
    if (count > 0) {
        void *data = arena_xcalloc((size_t)count + 1, sizeof(long long), "a control variable");
        if (MPI_T_cvar_read(h, data) == MPI_SUCCESS) format_cvar(data, count, type, en, value, len);
        free(data);
    }
    MPI_T_cvar_handle_free(&h);
}

/* The tool interface stays initialized from the first `config` to the process's end, never
 * finalized: MPICH 4.1-5.0.1 free their string control variables in MPI_T_finalize while MPI
 * still reads them (a rank's fifth collective on a communicator then dies in strcmp(NULL):
 * pmodels/mpich#7954, impls/crashes/), and Open MPI 4.1 dies in an MPI_T_finalize after
 * MPI_Finalize (open-mpi/ompi#11485). */
static int mpi_config(arena_cvar_fn emit, char *why, size_t len)
{
    int provided, n = 0, emitted = 0;
    static int started;
    static char value[4096];
    if (!started && MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        snprintf(why, len, "MPI_T_init_thread failed");
        return -1;
    }
    started = 1;
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[8];
        int nl = sizeof name, dl = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum en;
        if (MPI_T_cvar_get_info(i, name, &nl, &verbosity, &type, &en, desc, &dl, &bind,
                                &scope) != MPI_SUCCESS)
            continue; /* an index the library no longer uses */
        read_cvar(i, type, en, bind, value, sizeof value);
        emit(name, value, scope_name(scope));
        emitted++;
    }
    return emitted;
}
#endif

const arena_module arena_module_impl = {
    .family = "mpi",
    .init = mpi_init,
    .finalize = mpi_finalize,
    .abort = mpi_abort,
    .now = mpi_now,
    .tick = mpi_tick,
    .library_version = mpi_library_version,
    .send = mpi_send,
    .recv = mpi_recv,
    .recv_idle = mpi_recv_idle,
    .sendrecv = mpi_sendrecv,
    .burst = mpi_burst,
    .has_coll = mpi_has_coll,
    .zero_byte_messages = 1,
    .reduce_as = mpi_reduce_as,
    .coll = mpi_coll,
    .start = mpi_start,
    .wait = mpi_wait,
    .stream = mpi_stream,
#if MPI_VERSION >= 3 && !defined(LAM_MPI) && !defined(ARENA_SMPI)
    .config = mpi_config,
#elif defined(ARENA_SMPI)
    .no_config = "SimGrid's SMPI has no MPI_T tool interface",
#elif defined(LAM_MPI)
    .no_config = "LAM/MPI 7.1.4 implements MPI 1.2: no MPI_T tool interface",
#else
    .no_config = "an MPI library before MPI 3.0: no MPI_T tool interface",
#endif
};
