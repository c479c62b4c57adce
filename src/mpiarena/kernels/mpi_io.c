/*
 * mpi_io.c - ext.h's G_IO benchmarks: not measured yet.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

const struct ext_ops arena_ext_io = {0};
