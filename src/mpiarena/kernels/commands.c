/*
 * commands.c - the control protocol (driver.c's header): one line parsed into a command, and
 * whether the cell it asks for can run with this library at this rank count.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const char *sync_names[SYNC_COUNT] = {"loop", "barrier", "window"};

static int sync_index(const char *name)
{
    for (int i = 0; i < SYNC_COUNT; i++)
        if (strcmp(name, sync_names[i]) == 0) return i;
    return -1;
}

/* Parse one control line; returns 0 on success. */
int arena_parse_cmd(char *line, struct cmd *c)
{
    memset(c, 0, sizeof *c);
    c->nobs = 10;
    c->args.burst = 64;
    c->target = 1e-3;
    c->max_time = 10;
    c->args.hold = 1;
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok) return -1;
    if (strcmp(tok, "quit") == 0) { c->kind = CMD_QUIT; return 0; }
    if (strcmp(tok, "config") == 0) { c->kind = CMD_CONFIG; return 0; }
    if (strcmp(tok, "cell") != 0) return -1;
    c->kind = CMD_CELL;
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq++ = 0;
        if (!strcmp(tok, "id")) c->id = atoll(eq);
        else if (!strcmp(tok, "bench")) c->bench = arena_bench_index(eq);
        else if (!strcmp(tok, "size")) c->size = atoll(eq);
        else if (!strcmp(tok, "obs")) c->nobs = atoi(eq);
        else if (!strcmp(tok, "target")) c->target = atof(eq);
        else if (!strcmp(tok, "max")) c->max_time = atof(eq);
        else if (!strcmp(tok, "window")) c->args.burst = atoi(eq);
        else if (!strcmp(tok, "offcache")) c->offcache = atoi(eq);
        else if (!strcmp(tok, "validate")) c->validate = atoi(eq);
        else if (!strcmp(tok, "hold")) c->args.hold = atof(eq);
        else if (!strcmp(tok, "sync")) c->sync = sync_index(eq);
        else if (!strcmp(tok, "k")) c->k = atoll(eq);
        else return -1;
    }
    return 0;
}

/* Why a cell cannot run here (written into msg), or NULL. */
const char *arena_unrunnable(const struct cmd *c, char *msg, size_t len)
{
    int b = c->bench, np = arena_np;
    int sized = is_p2p(b) || b == B_MSGRATE || b == B_PROGRESS || b == B_OVERLAP || b == B_LOGGP;
    if (b < 0) return "unknown benchmark";
    if (is_pair(b) && np < 2) return "needs at least 2 ranks";
    if (is_ext(b) && arena_ext_unrunnable(b, (size_t)(c->size > 0 ? c->size : 0), msg, len))
        return msg;
    if (b == B_BCAST_ACK && np < 2) return "needs at least 2 ranks: a non-root rank acknowledges";
    if (sized && c->size == 0 && !M->zero_byte_messages) return "a byte stream has no 0-byte message";
    if (is_mock(b) && arena_mock_unrunnable(b, (size_t)c->size, msg, len)) return msg;
    if (b >= B_REDUCE_SCATTER_BLOCK && b <= B_EXSCAN && !M->has_coll(coll_of(b), 1)) {
        snprintf(msg, len, "this library has no %s", arena_bench_names[b]);
        return msg;
    }
    if (is_coll(b) && !is_mock(b) && !M->has_coll(coll_of(b), (size_t)c->size))
        return c->size == 0 && M->has_coll(coll_of(b), 1)
            ? "this family cannot express a 0-byte message in this collective"
            : "not expressible in this family";
    if (is_sum(b) && arena_datatype_refused) return arena_datatype_refused;
    if (c->size < 0 || c->nobs < 1 || c->args.burst < 1 || c->args.hold < 0) return "bad cell parameters";
    if (c->sync < 0) return "unknown timing method: sync is loop, barrier or window";
    if (c->sync != SYNC_LOOP && !is_synced(b))
        return "the barrier and window methods time collectives only (not bcast-ack)";
    if ((b == B_OVERLAP || b == B_PROGRESS) && !M->start)
        return "this family has no non-blocking operations";
    if (b == B_THREADS && !M->stream) return "this family has no thread-safe message streams";
    if (is_app(b)) return arena_app_unrunnable((enum arena_app)(b - B_APP_PI), (long)c->size, np);
    if (b == B_THREADS && (c->size < 1 || c->size > MAX_THREADS))
        return "threads: the size is the number of threads per rank, 1 to 64";
    if (b == B_THREADS && strcmp(arena_thread_level, "multiple") != 0) {
        snprintf(msg, len, "threads need MPI_THREAD_MULTIPLE but the library granted %s "
                 "(ask for it with ARENA_THREAD_LEVEL=multiple)", arena_thread_level);
        return msg;
    }
    return NULL;
}
