/*
 * mpi_vcoll.c - ext.h's G_VCOLL benchmarks: not measured yet.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

const struct ext_ops arena_ext_vcoll = {0};
