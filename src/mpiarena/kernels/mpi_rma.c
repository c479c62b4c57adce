/*
 * mpi_rma.c - ext.h's G_RMA benchmarks: not measured yet.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

const struct ext_ops arena_ext_rma = {0};
