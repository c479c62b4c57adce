/*
 * ext_none.c - ext.h's groups in a family without them (PVM, raw TCP): none, and why.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "core.h"

const struct ext_ops *arena_ext_group(enum ext_group g, char *why, size_t len)
{
    snprintf(why, len, "the %s family has no %s", M->family, arena_ext_group_title(g));
    return NULL;
}
