/*
 * mpi_io.c - ext.h's G_IO benchmarks: every rank writes (or reads) `size` bytes per call of one
 * file that the job's ranks share, through the library's MPI-IO (ROMIO in MPICH and LAM/MPI;
 * in Open MPI 4.1 OMPIO by default, ROMIO with OMPI_MCA_io=romio321).
 *   contiguous  rank r's bytes are one block at offset r*size: MPI_File_{write,read}_at(_all)
 *   strided     a file view (MPI_File_set_view, displacement r*piece, filetype a call's
 *               pieces of min(4 KiB, size) bytes, an MPI_Type_vector of stride np pieces,
 *               resized to span np times as many): rank r's bytes are pieces number r, r+np,
 *               r+2np... so the ranks' pieces interleave
 * A call on buffer slot k (ext.h) moves its rank's bytes k calls further on in the file (one
 * filetype further on, with the view), so an off-cache cell (--off-cache: slots rotate) has
 * each slot its own region of the file, and neither its buffers nor the file's pages are in
 * the CPU's caches (as IMB-IO, whose calls move on through the file); otherwise every call
 * moves the same bytes again.
 * The file stays in the page cache and nothing in the timed part syncs it (no MPI_File_sync):
 * the figure is each library's MPI-IO path down to the kernel's page cache (and its collective
 * buffering, for the _all calls), not a disk's.
 *
 * The file is made per cell in ARENA_IO_DIR, a directory of the run's scratch directory that
 * the runner removes with the run (its watchdog even when mpiarena is killed), or the one a
 * variant's environment names (another file system); a bare core without the setting uses
 * /tmp. Outside the run's directory a killed job leaves its file. Rank 0's directory is
 * the job's: the ranks must all see it (one file system), else every cell is n/a; an emulated
 * cluster's nodes share this machine's disk (only /tmp and /dev/shm are their own), so there
 * the file is one and collective buffering's traffic crosses the emulated link. setup opens
 * the file on the group's own communicator (a read benchmark's contents written first, by
 * rank 0 with pwrite); teardown closes it and deletes it (MPI_File_delete on rank 0).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

#define PIECE 4096
#define NAME_MAX_LEN 512

static MPI_Comm comm = MPI_COMM_NULL;
static MPI_File fh = MPI_FILE_NULL;
static MPI_Datatype view = MPI_DATATYPE_NULL;
static size_t piece;               /* a strided cell's piece; 0: contiguous */
static size_t span;                /* a rank's bytes of a call in the file: whole pieces */
static const unsigned char *first; /* the first send slot, and the slots' stride: a call's slot */
static size_t stride;
static char dir[NAME_MAX_LEN];     /* rank 0's directory, the job's */
static char path[NAME_MAX_LEN + 64];
static long owner = -1;            /* rank 0's pid: the files' names are the job's own */
static int cells;                  /* cells so far in this job: one file each */
static int shared = -1;            /* every rank sees dir: 1, not shared: 2, not writable: 3 */

static int reading(int b) { return b >= XB_IO_READ_COLL; }
static int collective(int b)
{
    return b == XB_IO_WRITE_COLL || b == XB_IO_WRITE_COLL_STRIDED || b == XB_IO_READ_COLL ||
           b == XB_IO_READ_COLL_STRIDED;
}
static int strided(int b)
{
    return b == XB_IO_WRITE_COLL_STRIDED || b == XB_IO_WRITE_INDEP_STRIDED ||
           b == XB_IO_READ_COLL_STRIDED || b == XB_IO_READ_INDEP_STRIDED;
}

/* Where rank r's byte j lies in the file, counting on through the calls (slot k's from k*span). */
static size_t file_offset(int r, size_t size, size_t j)
{
    if (!piece) return (j / size * (size_t)arena_np + (size_t)r) * size + j % size;
    return (j / piece * (size_t)arena_np + (size_t)r) * piece + j % piece;
}

/* What the file holds at offset `at`, for validation: no two nearby pieces alike. */
static unsigned char pattern(size_t at)
{
    return (unsigned char)(((uint64_t)at * 0x9E3779B97F4A7C15ull) >> 56);
}

/* A call on the file failed: the job ends, saying which and why. */
static void fail(const char *call, const char *said)
{
    char why[MPI_MAX_ERROR_STRING + NAME_MAX_LEN + 64];
    snprintf(why, sizeof why, "%s on %s failed: %s", call, path, said);
    M->abort(why);
}

static void check(int rc, const char *call)
{
    char said[MPI_MAX_ERROR_STRING] = "";
    int n = 0;
    if (rc == MPI_SUCCESS) return;
    MPI_Error_string(rc, said, &n);
    fail(call, said);
}

/* Once per job, on every rank: rank 0's directory for the files, and whether every rank can
 * write there and sees the same directory (a file rank 0 made in it). */
static void find_dir(void)
{
    char probe[NAME_MAX_LEN + 64];
    int mine = 1, worst = 1;
    if (arena_rank == 0) {
        const char *env = getenv("ARENA_IO_DIR");
        snprintf(dir, sizeof dir, "%s", env && *env ? env : "/tmp");
        if (!(env && *env))
            fprintf(stderr, "arena: ARENA_IO_DIR unset: MPI-IO files go to /tmp\n");
        owner = (long)getpid();
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&owner, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(probe, sizeof probe, "%s/.io-probe-%ld", dir, owner);
    if (arena_rank == 0) {
        int fd = open(probe, O_CREAT | O_EXCL | O_WRONLY, 0600);
        mine = fd < 0 ? 3 : 1;
        if (fd >= 0) close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (arena_rank != 0)
        mine = access(probe, F_OK) != 0 ? 2 : access(dir, W_OK | X_OK) != 0 ? 3 : 1;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (arena_rank == 0) unlink(probe);
    shared = worst;
}

static const char *io_unrunnable(int b, size_t size, int np, char *msg, size_t len)
{
    (void)b, (void)np;
    if (size > INT_MAX) {
        snprintf(msg, len, "a call moves at most INT_MAX bytes (an int count of MPI_BYTE)");
        return msg;
    }
    if (shared < 0) find_dir();
    if (shared == 1) return NULL;
    snprintf(msg, len, shared == 3 ? "a rank cannot create files in %s"
             : "the ranks do not share %s (hosts without a common file system)", dir);
    return msg;
}

/* type with its extent set to `extent` bytes, so that a view tiles it. */
static MPI_Datatype resized(MPI_Datatype type, MPI_Aint extent)
{
    MPI_Datatype out;
#if defined(LAM_MPI)
    /* LAM's ROMIO 1.2.4 cannot flatten a resized type: MPI-1's upper-bound marker instead */
    int lens[2] = {1, 1};
    MPI_Aint at[2] = {0, extent};
    MPI_Datatype types[2] = {type, MPI_UB};
    MPI_Type_struct(2, lens, at, types, &out);
#else
    MPI_Type_create_resized(type, 0, extent, &out);
#endif
    return out;
}

/* Rank 0 writes the whole file's pattern, for a read benchmark, before anyone opens it. */
static void fill_file(size_t len)
{
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = arena_xcalloc(CHUNK, 1, "a file's contents");
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) fail("open", strerror(errno));
    for (size_t at = 0; at < len; at += CHUNK) {
        size_t n = len - at < CHUNK ? len - at : CHUNK;
        for (size_t i = 0; i < n; i++) buf[i] = pattern(at + i);
        if (pwrite(fd, buf, n, (off_t)at) != (ssize_t)n) fail("pwrite", strerror(errno));
    }
    close(fd);
    free(buf);
}

static void io_setup(int b, size_t size, int burst, const struct bufs *bufs)
{
    (void)burst;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    piece = strided(b) ? (size < PIECE ? size : PIECE) : 0;
    span = piece ? (size + piece - 1) / piece * piece : size; /* a short last piece: a gap */
    first = bufs->s, stride = bufs->sstride;
    snprintf(path, sizeof path, "%s/io-%ld-%d-%s", dir, owner, ++cells,
             arena_bench_names[B_EXT + b]);
    if (reading(b) && arena_rank == 0)
        fill_file(span * (size_t)bufs->nslots * (size_t)arena_np);
    MPI_Barrier(comm);
    check(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
          "MPI_File_open");
    if (!piece) return;
    MPI_Datatype pieces;
    MPI_Type_vector((int)(span / piece), (int)piece, (int)piece * arena_np, MPI_BYTE, &pieces);
    view = resized(pieces, (MPI_Aint)(span * (size_t)arena_np));
    MPI_Type_commit(&view);
    MPI_Type_free(&pieces);
    check(MPI_File_set_view(fh, (MPI_Offset)(piece * (size_t)arena_rank), MPI_BYTE, view,
                            "native", MPI_INFO_NULL), "MPI_File_set_view");
}

static void io_call(int b, size_t size, unsigned char *s, unsigned char *r)
{
    MPI_Offset slot = (MPI_Offset)((size_t)(s - first) / stride);
    MPI_Offset at = piece ? slot * (MPI_Offset)span
                          : (slot * arena_np + arena_rank) * (MPI_Offset)size;
    MPI_Status st;
    int n = (int)size;
    if (reading(b) && collective(b))
        check(MPI_File_read_at_all(fh, at, r, n, MPI_BYTE, &st), "MPI_File_read_at_all");
    else if (reading(b))
        check(MPI_File_read_at(fh, at, r, n, MPI_BYTE, &st), "MPI_File_read_at");
    else if (collective(b))
        check(MPI_File_write_at_all(fh, at, s, n, MPI_BYTE, &st), "MPI_File_write_at_all");
    else
        check(MPI_File_write_at(fh, at, s, n, MPI_BYTE, &st), "MPI_File_write_at");
}

/* This rank's bytes from position `at` on, read with pread beside MPI; whether all came. */
static int read_back(unsigned char *r, size_t size, size_t at)
{
    int fd = open(path, O_RDONLY), whole = 1;
    if (fd < 0) fail("open", strerror(errno));
    for (size_t j = 0, n; j < size; j += n) {
        n = piece ? piece - (at + j) % piece : size; /* to the end of a piece */
        n = n < size - j ? n : size - j;
        whole &= pread(fd, r + j, n, (off_t)file_offset(arena_rank, size, at + j)) == (ssize_t)n;
    }
    close(fd);
    return whole;
}

/* One call on the last slot (an off-cache cell's calls move on through the file). A write:
 * patterned bytes, then (after MPI's sync-barrier-sync) this rank's bytes read back where the
 * layout puts them. A read: its bytes compared with what setup wrote there. */
static const char *io_validate(int b, size_t size, const struct bufs *bufs, char *msg,
                               size_t len)
{
    size_t k = (size_t)bufs->nslots - 1, at = k * span;
    unsigned char *s = bufs->s + k * bufs->sstride, *r = bufs->r + k * bufs->rstride;
    long bad = -1;
    memset(r, 0, size);
    if (!reading(b))
        for (size_t j = 0; j < size; j++) s[j] = pattern(file_offset(arena_rank, size, at + j));
    io_call(b, size, s, r);
    if (!reading(b)) {
        check(MPI_File_sync(fh), "MPI_File_sync");
        MPI_Barrier(comm);
        check(MPI_File_sync(fh), "MPI_File_sync");
        if (!read_back(r, size, at)) bad = 0;
    }
    arena_fault_corrupt(r, size, bufs->rstride);
    for (size_t j = 0; j < size && bad < 0; j++)
        if (r[j] != pattern(file_offset(arena_rank, size, at + j))) bad = (long)j;
    if (bad < 0) return NULL;
    snprintf(msg, len, "rank %d: byte %ld of its %zu %s wrong (file offset %zu)", arena_rank,
             bad, size, reading(b) ? "read" : "written, read back,",
             file_offset(arena_rank, size, at + (size_t)bad));
    return msg;
}

static void io_teardown(int b)
{
    (void)b;
    check(MPI_File_close(&fh), "MPI_File_close");
    if (piece) MPI_Type_free(&view);
    if (arena_rank == 0) check(MPI_File_delete(path, MPI_INFO_NULL), "MPI_File_delete");
    MPI_Comm_free(&comm);
}

const struct ext_ops arena_ext_io = {
    .unrunnable = io_unrunnable,
    .setup = io_setup,
    .call = io_call,
    .validate = io_validate,
    .teardown = io_teardown,
};
