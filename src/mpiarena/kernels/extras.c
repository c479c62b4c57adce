/*
 * extras.c - the figures an observation carries besides its time (enum extra): what the
 * timing method or benchmark that ran noted for the current observation, and which of them
 * the current cell has. Called by every file that notes one; calls nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

static const char *const names[X_COUNT] = {
    "cpu", "rss_init", "rss", "peak",
    "pure", "compute", "overlapped", "pure_iallreduce", "compute_iallreduce",
    "overlapped_iallreduce", "pure_ialltoall", "compute_ialltoall", "overlapped_ialltoall",
    "transfer", "after",
    "t_send", "t_recv", "t_sendrecv", "t_scatter", "t_reduce",
    "pi_error", "checksum_error", "primes", "energy_drift",
    "late", "clock_offset", "clock_drift",
    "prtt1", "prttn", "prttd", "delay", "o_s", "o_r", "prtt_n",
};

static double now[X_COUNT]; /* this observation's extras, set by the loop that ran */
static int set[X_COUNT];    /* which extras the current cell has */

void arena_note(enum extra x, double v)
{
    now[x] = v;
    set[x] = 1;
}

double arena_noted(enum extra x) { return now[x]; }

int arena_in_cell(enum extra x) { return set[x]; }

const char *arena_extra_name(enum extra x) { return names[x]; }

void arena_extras_new_cell(void)
{
    for (int x = 0; x < X_COUNT; x++)
        set[x] = 0;
}
