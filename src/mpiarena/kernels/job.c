/*
 * job.c - the job as start-up found it (driver.c sets it once, every file reads it): this
 * rank, the rank count, the thread level granted and the resident memory after init.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

int arena_rank, arena_np;
char arena_thread_level[32];
double arena_rss_init;
