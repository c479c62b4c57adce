/*
 * sync.c - the driver's own synchronisation of the ranks, the same for every library and
 * outside any timed call: its barrier, and the slowest rank's figure gathered to rank 0.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

/* The driver's own barrier: dissemination over send/recv. */
void arena_barrier(void)
{
    unsigned char token = 0;
    int rank = arena_rank, np = arena_np;
    for (int d = 1; d < np; d <<= 1) {
        M->send(&token, 1, (rank + d) % np);
        M->recv(&token, 1, (rank - d + np) % np);
    }
}

/* Rank 0 gets the largest t of all ranks; the others keep their own. */
double arena_slowest(double t)
{
    double theirs;
    if (arena_rank != 0) {
        M->send(&t, sizeof t, 0);
        return t;
    }
    for (int p = 1; p < arena_np; p++) {
        M->recv(&theirs, sizeof theirs, p);
        t = theirs > t ? theirs : t;
    }
    return t;
}
