/*
 * buffers.c - a cell's send and receive buffers, page-aligned, in slots that rotate when the
 * cell is off-cache; the process's memory.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define OFFCACHE_BYTES (64L << 20)

/* Bytes of the send and receive buffer a benchmark needs per slot. */
static void buffer_sizes(int b, size_t size, size_t *sn, size_t *rn)
{
    size_t np = (size_t)arena_np;
    size_t sums = arena_sum_bytes(size), blk = arena_sum_block(size) * arena_elem_size();
    size_t all = size * np;
    if (is_ext(b)) {
        arena_ext_buffers(b, size, sn, rn);
        return;
    }
    switch (b) {
    case B_WTIME: case B_BARRIER: *sn = *rn = 0; break;
    case B_SCATTER: *sn = all; *rn = size; break;
    case B_GATHER: case B_ALLGATHER: *sn = size; *rn = all; break;
    case B_ALLTOALL: *sn = *rn = all; break;
    case B_REDUCE: case B_ALLREDUCE: case B_SCAN: case B_EXSCAN: case B_M_ALLREDUCE_RB:
    case B_M_REDUCE_AR: case B_M_SCAN_ER: *sn = *rn = sums; break;
    case B_REDUCE_SCATTER_BLOCK: case B_M_RSB_RS: *sn = blk * np; *rn = blk; break;
    case B_M_ALLREDUCE_RSB: *sn = *rn = blk * np; break;
    case B_M_BCAST_SA: *sn = 0; *rn = (size + np - 1) / np * np; break;
    case B_M_ALLGATHER_GB: case B_M_GATHER_AG: *sn = size; *rn = all; break;
    case B_M_ALLGATHER_A2A: case B_M_SCATTER_B: *sn = *rn = all; break;
    case B_MEMORY: *sn = *rn = all; break;
    case B_OVERLAP: *sn = *rn = all > sums ? all : sums; break;
    case B_CPU: *sn = *rn = 1; break;
    case B_THREADS: *sn = 8; *rn = 64 * size; break;
    case B_APP_PI: case B_APP_MATVEC: case B_APP_MATMUL: case B_APP_ROWMM: case B_APP_PRIMES:
    case B_APP_MD: case B_APP_STENCIL: *sn = *rn = 0; break; /* the kernels allocate their own */
    default: *sn = *rn = size; break;
    }
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* From the module's shared memory where it has some, else the heap. */
static void *buffer(size_t n)
{
    return M->alloc ? arena_checked(M->alloc(n), "benchmark buffers")
                    : arena_xmalloc(n, "benchmark buffers");
}

void arena_bufs_alloc(struct bufs *b, int bench, size_t size, int offcache)
{
    size_t sn, rn;
    buffer_sizes(bench, size, &sn, &rn);
    b->sstride = round_up(sn ? sn : 1, 4096);
    b->rstride = round_up(rn ? rn : 1, 4096);
    b->nslots = 1;
    if (offcache) {
        size_t per = b->sstride > b->rstride ? b->sstride : b->rstride;
        b->nslots = (long)(OFFCACHE_BYTES / per);
        if (b->nslots < 2)
            b->nslots = 2;
    }
    b->s_mem = buffer(b->sstride * (size_t)b->nslots + 4096);
    b->r_mem = buffer(b->rstride * (size_t)b->nslots + 4096);
    b->s = (unsigned char *)round_up((size_t)b->s_mem, 4096);
    b->r = (unsigned char *)round_up((size_t)b->r_mem, 4096);
    memset(b->s, 1, b->sstride * (size_t)b->nslots);
    memset(b->r, 0, b->rstride * (size_t)b->nslots);
    b->t = is_mock(bench)
        ? arena_xcalloc(b->sstride > b->rstride ? b->sstride : b->rstride, 1, "benchmark buffers")
        : NULL;
}

void arena_bufs_free(struct bufs *b)
{
    if (M->release) {
        M->release(b->s_mem);
        M->release(b->r_mem);
    } else {
        free(b->s_mem);
        free(b->r_mem);
    }
    free(b->t);
}

/* Resident and peak resident bytes of this process (VmRSS, VmHWM). */
void arena_resident(double *rss, double *peak)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    *rss = *peak = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6)) *rss = atof(line + 6) * 1024;
        else if (!strncmp(line, "VmHWM:", 6)) *peak = atof(line + 6) * 1024;
    }
    fclose(f);
}

/* Give freed heap back and restart the peak, so that a cell's memory is its own. */
void arena_memory_fresh(void)
{
    malloc_trim(0);
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}
