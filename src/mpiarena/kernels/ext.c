/*
 * ext.c - the core's side of ext.h's benchmarks (MPI beyond MPI-1): each step of a cell asked
 * of the benchmark's group in the family's core (mpi_ext.c; ext_none.c says what a family
 * lacks).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "core.h"

#define EXT_GROUP(ID, NAME, GROUP, FLAGS) GROUP,
static const enum ext_group groups[XB_COUNT] = {ARENA_EXT_BENCHES(EXT_GROUP)};
#undef EXT_GROUP

/* The group of core benchmark b; NULL with why (into msg) where the family has none. */
static const struct ext_ops *ops_of(int b, char *msg, size_t len)
{
    return arena_ext_group(groups[b - B_EXT], msg, len);
}

static const struct ext_ops *ops(int b)
{
    char why[8];
    return ops_of(b, why, sizeof why);
}

const char *arena_ext_unrunnable(int bench, size_t size, char *msg, size_t len)
{
    const struct ext_ops *o = ops_of(bench, msg, len);
    if (!o) return msg;
    if (!o->call && !o->run) {
        snprintf(msg, len, "%s are not measured by this core yet",
                 arena_ext_group_title(groups[bench - B_EXT]));
        return msg;
    }
    return o->unrunnable ? o->unrunnable(bench - B_EXT, size, arena_np, msg, len) : NULL;
}

void arena_ext_buffers(int bench, size_t size, size_t *sn, size_t *rn)
{
    const struct ext_ops *o = ops(bench);
    *sn = *rn = size;
    if (o && o->buffers) o->buffers(bench - B_EXT, size, arena_np, sn, rn);
}

void arena_ext_setup(int bench, size_t size, int burst, const struct bufs *b)
{
    const struct ext_ops *o = ops(bench);
    if (o && o->setup) o->setup(bench - B_EXT, size, burst, b);
}

void arena_ext_call(int bench, size_t size, unsigned char *s, unsigned char *r)
{
    ops(bench)->call(bench - B_EXT, size, s, r);
}

double arena_ext_run(int bench, size_t size, long k, const struct bufs *b)
{
    return ops(bench)->run(bench - B_EXT, size, k, b);
}

const char *arena_ext_validate(int bench, size_t size, const struct bufs *b, char *msg,
                               size_t len)
{
    const struct ext_ops *o = ops(bench);
    return o && o->validate ? o->validate(bench - B_EXT, size, b, msg, len) : NULL;
}

void arena_ext_teardown(int bench)
{
    const struct ext_ops *o = ops(bench);
    if (o && o->teardown) o->teardown(bench - B_EXT);
}
