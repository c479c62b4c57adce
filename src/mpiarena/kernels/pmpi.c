/*
 * pmpi.c - the per-call profiler: a PMPI interposition library, preloaded into an MPI program's
 * ranks. Each wrapper counts its calls and sums the time spent in the PMPI call. At
 * MPI_Finalize every rank writes one line per function it used to
 * $ARENA_PROFILE_DIR/rank-<rank>.tsv: "function<TAB>calls<TAB>seconds"; rank 0 also writes the
 * library's version string (MPI-3 and later) to $ARENA_PROFILE_DIR/version.txt, so that what
 * ran can be checked against what the program was built with.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* MPI-3 headers take send buffers as const void *; MPI-1 (LAM) and MPI-2 do not */
#if MPI_VERSION >= 3 && !defined(LAM_MPI)
#define SEND_CONST const
#else
#define SEND_CONST
#endif

#define FUNCTIONS(X)                                                                           \
    X(Init) X(Init_thread) X(Finalize) X(Send) X(Recv) X(Isend) X(Irecv) X(Wait) X(Waitall)     \
    X(Sendrecv) X(Probe) X(Iprobe) X(Barrier) X(Bcast) X(Scatter) X(Gather) X(Reduce)           \
    X(Allreduce) X(Allgather) X(Alltoall) X(Comm_split) X(Comm_free)

#define AS_ENUM(name) F_##name,
#define AS_NAME(name) "MPI_" #name,
enum { FUNCTIONS(AS_ENUM) NFUNCTIONS };
static const char *names[NFUNCTIONS] = {FUNCTIONS(AS_NAME)};
static long long calls[NFUNCTIONS];
static double seconds[NFUNCTIONS];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* calls the library makes of its own MPI_ functions (LAM's MPI_Finalize calls MPI_Barrier)
 * are part of the outer call: only the program's own calls are counted */
static _Thread_local int depth __attribute__((tls_model("initial-exec")));

/* Two clock reads cost about 80 ns here, a quarter of a small MPI call at 2 ranks. A function's
 * first SAMPLE_FROM calls are all timed; after that, while its mean time per timed call stays
 * under CHEAP, one call in SAMPLE (picked at random: no aliasing with a program's own period)
 * is timed and the seconds are scaled by calls over timed calls. Calls are always counted
 * exactly; a function whose calls take longer is timed at every call. */
enum { SAMPLE = 64, SAMPLE_FROM = 64 };
#define CHEAP 2e-6
static long long timed[NFUNCTIONS];
static unsigned int draw = 2463534242u;

static int time_this(int f)
{
    if (timed[f] < SAMPLE_FROM || seconds[f] > CHEAP * (double)timed[f])
        return 1;
    draw ^= draw << 13; /* xorshift32 */
    draw ^= draw >> 17;
    draw ^= draw << 5;
    return draw % SAMPLE == 0;
}

/* time one PMPI call into slot f (or only count it: see time_this) and return its result */
#define TIMED(f, call)                                                                         \
    do {                                                                                       \
        if (depth)                                                                             \
            return (call);                                                                     \
        depth++;                                                                               \
        calls[f]++;                                                                            \
        int rc_;                                                                               \
        if (time_this(f)) {                                                                    \
            double t0_ = now();                                                                \
            rc_ = (call);                                                                      \
            seconds[f] += now() - t0_;                                                         \
            timed[f]++;                                                                        \
        } else {                                                                               \
            rc_ = (call);                                                                      \
        }                                                                                      \
        depth--;                                                                               \
        return rc_;                                                                            \
    } while (0)

static void write_profile(int rank)
{
    const char *dir = getenv("ARENA_PROFILE_DIR");
    char path[4096];
    if (!dir || !*dir)
        return;
    snprintf(path, sizeof path, "%s/rank-%d.tsv", dir, rank);
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        return;
    }
    for (int f = 0; f < NFUNCTIONS; f++)
        if (calls[f])
            fprintf(out, "%s\t%lld\t%.9f\n", names[f], calls[f],
                    timed[f] ? seconds[f] * (double)calls[f] / (double)timed[f] : 0.0);
    fclose(out);
}

static void write_version(void)
{
#if MPI_VERSION >= 3 && !defined(LAM_MPI)
    const char *dir = getenv("ARENA_PROFILE_DIR");
    char path[4096], version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (!dir || !*dir || PMPI_Get_library_version(version, &len) != MPI_SUCCESS)
        return;
    snprintf(path, sizeof path, "%s/version.txt", dir);
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        return;
    }
    fwrite(version, 1, (size_t)len, out);
    fclose(out);
#endif
}

int MPI_Init(int *argc, char ***argv) { TIMED(F_Init, PMPI_Init(argc, argv)); }

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    TIMED(F_Init_thread, PMPI_Init_thread(argc, argv, required, provided));
}

int MPI_Finalize(void)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        write_version();
    depth++;
    double t0 = now();
    int rc = PMPI_Finalize();
    seconds[F_Finalize] += now() - t0;
    depth--;
    calls[F_Finalize]++;
    timed[F_Finalize]++;
    write_profile(rank);
    return rc;
}

int MPI_Send(SEND_CONST void *buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm)
{
    TIMED(F_Send, PMPI_Send(buf, count, type, dest, tag, comm));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    TIMED(F_Recv, PMPI_Recv(buf, count, type, source, tag, comm, status));
}

int MPI_Isend(SEND_CONST void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    TIMED(F_Isend, PMPI_Isend(buf, count, type, dest, tag, comm, request));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    TIMED(F_Irecv, PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    TIMED(F_Wait, PMPI_Wait(request, status));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    TIMED(F_Waitall, PMPI_Waitall(count, requests, statuses));
}

int MPI_Sendrecv(SEND_CONST void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    TIMED(F_Sendrecv, PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                    recvcount, recvtype, source, recvtag, comm, status));
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    TIMED(F_Probe, PMPI_Probe(source, tag, comm, status));
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    TIMED(F_Iprobe, PMPI_Iprobe(source, tag, comm, flag, status));
}

int MPI_Barrier(MPI_Comm comm) { TIMED(F_Barrier, PMPI_Barrier(comm)); }

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    TIMED(F_Bcast, PMPI_Bcast(buf, count, type, root, comm));
}

int MPI_Scatter(SEND_CONST void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    TIMED(F_Scatter, PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  root, comm));
}

int MPI_Gather(SEND_CONST void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    TIMED(F_Gather, PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                root, comm));
}

int MPI_Reduce(SEND_CONST void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    TIMED(F_Reduce, PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
}

int MPI_Allreduce(SEND_CONST void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    TIMED(F_Allreduce, PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm));
}

int MPI_Allgather(SEND_CONST void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    TIMED(F_Allgather, PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, comm));
}

int MPI_Alltoall(SEND_CONST void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    TIMED(F_Alltoall, PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                    recvtype, comm));
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    TIMED(F_Comm_split, PMPI_Comm_split(comm, color, key, newcomm));
}

int MPI_Comm_free(MPI_Comm *comm) { TIMED(F_Comm_free, PMPI_Comm_free(comm)); }
