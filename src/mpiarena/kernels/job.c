/*
 * job.c - the job as start-up found it (driver.c sets it once, every file reads it): this
 * rank, the rank count, the thread level granted, the resident memory after init, and the
 * element type of the sums (ARENA_DATATYPE=int|char|float|double; unset: int, and the datatype
 * benchmarks' blocks MPI_BYTE) with why the family cannot sum it, if it cannot.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

int arena_rank, arena_np;
char arena_thread_level[32];
double arena_rss_init;
enum arena_type arena_datatype = ARENA_TYPE_INT;
int arena_datatype_asked;
const char *arena_datatype_refused;
