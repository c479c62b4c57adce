/*
 * mod_pvm.c - the PVM module. The task mpiarena starts is rank 0; it spawns ARENA_NP-1 copies
 * of itself and tells each the table of task ids. Ranks join the group "arena" in rank order,
 * so group instance numbers equal ranks. Settings (read by rank 0 and passed on):
 *   ARENA_PVM_ROUTE=direct     task-to-task TCP links (PvmRouteDirect) instead of via pvmd
 *   ARENA_PVM_ENCODING=xdr|raw|inplace   PvmDataDefault (XDR), PvmDataRaw, PvmDataInPlace
 * Collectives: barrier (pvm_barrier), bcast (pvm_mcast), scatter, gather, reduce (PvmSum of
 * the job's type: PVM_INT, PVM_FLOAT or PVM_DOUBLE; PvmSum has no PVM_BYTE, so char sums are
 * n/a); allreduce, allgather and alltoall have no PVM call and are reported n/a, as are 0-byte
 * scatter, gather and reduce (PVM refuses a count of 0).
 */
#define _GNU_SOURCE
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"

#define GROUP "arena"
#define MAXTASKS 1024
enum { TAG_SETUP = 9001, TAG_JOIN = 9002, TAG_DATA = 9003, TAG_BURST = 9004, TAG_COLL = 9005,
       TAG_EXIT = 9006 };

static int tids[MAXTASKS];
static int me, ntasks, encoding = PvmDataDefault;

static void fail(const char *what, int code)
{
    fprintf(stderr, "arena(pvm): %s failed (%d)\n", what, code);
    fflush(stderr);
    exit(3);
}

static int setting_encoding(const char *s)
{
    if (!s || !strcmp(s, "xdr")) return PvmDataDefault;
    if (!strcmp(s, "raw")) return PvmDataRaw;
    if (!strcmp(s, "inplace")) return PvmDataInPlace;
    fprintf(stderr, "arena(pvm): ARENA_PVM_ENCODING must be xdr, raw or inplace\n");
    exit(2);
}

/* Start tasks 1..ntasks-1: where pvmd likes, or task r on the r-th host of ARENA_PVM_HOSTS
 * (a comma-separated list for ranks 0..ntasks-1, as a cluster placement gives it). */
static void spawn(char *exe, char **args)
{
    const char *list = getenv("ARENA_PVM_HOSTS");
    if (!list) {
        int got = ntasks > 1 ? pvm_spawn(exe, args, PvmTaskDefault, "", ntasks - 1, tids + 1) : 0;
        if (got != ntasks - 1)
            fail("pvm_spawn", got < 0 ? got : tids[got + 1]);
        return;
    }
    char hosts[4096], *save = NULL;
    snprintf(hosts, sizeof hosts, "%s", list);
    char *host = strtok_r(hosts, ",", &save); /* rank 0's: this task */
    for (int r = 1; r < ntasks; r++) {
        host = strtok_r(NULL, ",", &save);
        if (!host)
            fail("ARENA_PVM_HOSTS names fewer hosts than tasks", r);
        int got = pvm_spawn(exe, args, PvmTaskHost, host, 1, tids + r);
        if (got != 1)
            fail("pvm_spawn", got < 0 ? got : tids[r]);
    }
}

static void pvm_init_(int *argc, char ***argv, int *rank, int *np, char *level, size_t len)
{
    (void)argc;
    int settings[3];
    snprintf(level, len, "n/a");
    if (pvm_mytid() < 0)
        fail("pvm_mytid (is pvmd running?)", pvm_mytid());
    pvm_setopt(PvmAutoErr, 0);
    if (pvm_parent() == PvmNoParent) {
        const char *want = getenv("ARENA_NP");
        ntasks = want ? atoi(want) : 2;
        if (ntasks < 1 || ntasks > MAXTASKS)
            fail("ARENA_NP out of range", ntasks);
        settings[0] = ntasks;
        settings[1] = getenv("ARENA_PVM_ROUTE") && !strcmp(getenv("ARENA_PVM_ROUTE"), "direct");
        settings[2] = setting_encoding(getenv("ARENA_PVM_ENCODING"));
        tids[0] = pvm_mytid();
        setenv("PVM_EXPORT", "ARENA_FAULT:ARENA_BIND:MPIARENA_JOB:ARENA_T0:ARENA_DATATYPE", 1);
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            fail("readlink /proc/self/exe", (int)n);
        exe[n] = 0;
        spawn(exe, *argv + 1);
        for (int r = 1; r < ntasks; r++) {
            pvm_initsend(PvmDataDefault);
            pvm_pkint(settings, 3, 1);
            pvm_pkint(tids, ntasks, 1);
            pvm_send(tids[r], TAG_SETUP);
        }
    } else {
        pvm_recv(pvm_parent(), TAG_SETUP);
        pvm_upkint(settings, 3, 1);
        ntasks = settings[0];
        pvm_upkint(tids, ntasks, 1);
    }
    for (me = 0; me < ntasks && tids[me] != pvm_mytid(); me++) {}
    if (settings[1])
        pvm_setopt(PvmRoute, PvmRouteDirect);
    encoding = settings[2];
    /* join in rank order so that group instance numbers equal ranks */
    if (me > 0)
        pvm_recv(tids[me - 1], TAG_JOIN);
    int inst = pvm_joingroup(GROUP);
    if (inst != me)
        fail("pvm_joingroup gave an instance other than the rank", inst);
    if (me + 1 < ntasks) {
        pvm_initsend(PvmDataDefault);
        pvm_send(tids[me + 1], TAG_JOIN);
    }
    pvm_barrier(GROUP, ntasks);
    /* a task that dies must not leave the others waiting forever: pvmd tells us */
    int others[MAXTASKS], n = 0;
    for (int r = 0; r < ntasks; r++)
        if (r != me)
            others[n++] = tids[r];
    if (n > 0)
        pvm_notify(PvmTaskExit, TAG_EXIT, n, others);
    *rank = me;
    *np = ntasks;
}

static void pvm_finalize_(void)
{
    pvm_barrier(GROUP, ntasks);
    pvm_lvgroup(GROUP);
    pvm_exit();
}

static void pvm_abort_(const char *why)
{
    fprintf(stderr, "arena(pvm): %s\n", why);
    for (int r = 0; r < ntasks; r++)
        if (r != me)
            pvm_kill(tids[r]);
    pvm_exit();
    exit(3);
}

static void pvm_library_version_(char *buf, size_t len)
{
    snprintf(buf, len, "PVM %s", PVM_VER);
}

static void send_tag(const void *buf, size_t n, int peer, int tag)
{
    pvm_initsend(encoding);
    pvm_pkbyte((char *)buf, (int)n, 1);
    int rc = pvm_send(tids[peer], tag);
    if (rc < 0)
        fail("pvm_send", rc);
}

static void recv_tag(void *buf, size_t n, int peer, int tag)
{
    struct timeval patience = {0, 200000};
    for (;;) {
        int rc = pvm_trecv(tids[peer], tag, &patience);
        if (rc > 0)
            break;
        if (rc < 0)
            fail("pvm_trecv", rc);
        if (pvm_probe(-1, TAG_EXIT) > 0) {
            fprintf(stderr, "arena(pvm): rank %d: another task exited\n", me);
            fflush(stderr);
            exit(4);
        }
    }
    pvm_upkbyte(buf, (int)n, 1);
}

static void pvm_send_(const void *buf, size_t n, int peer) { send_tag(buf, n, peer, TAG_DATA); }
static void pvm_recv_(void *buf, size_t n, int peer) { recv_tag(buf, n, peer, TAG_DATA); }

/* PVM sends are buffered, so send-then-receive cannot deadlock. */
static void pvm_sendrecv_(const void *sbuf, void *rbuf, size_t n, int peer)
{
    send_tag(sbuf, n, peer, TAG_DATA);
    recv_tag(rbuf, n, peer, TAG_DATA);
}

static void pvm_burst(const void *sbuf, void *rbuf, size_t n, int peer, int w)
{
    for (int i = 0; i < w; i++)
        send_tag(sbuf, n, peer, TAG_BURST);
    for (int i = 0; i < w; i++)
        recv_tag(rbuf, n, peer, TAG_BURST);
}

static int pvm_has_coll_(enum arena_coll op, size_t size)
{
    /* pvm_scatter, pvm_gather and pvm_reduce refuse a count of 0 (PvmBadParam) */
    if (op == ARENA_SCATTER || op == ARENA_GATHER || op == ARENA_REDUCE ||
        op == ARENA_REDUCE_DOUBLE)
        return size > 0;
    return op == ARENA_BARRIER || op == ARENA_BCAST;
}

static enum arena_type sums = ARENA_TYPE_INT; /* the reductions' element type */

static const char *pvm_reduce_as_(enum arena_type t)
{
    sums = t;
    return t == ARENA_TYPE_CHAR ? "PVM has no sum of chars: pvm_reduce's PvmSum takes every "
                                  "type but PVM_BYTE (its manual page)" : NULL;
}

static int pvm_type(enum arena_type t)
{
    return t == ARENA_TYPE_FLOAT ? PVM_FLOAT : t == ARENA_TYPE_DOUBLE ? PVM_DOUBLE : PVM_INT;
}

static void pvm_coll_(enum arena_coll op, const void *sbuf, void *rbuf, size_t size)
{
    int n = (int)size, rc = 0;
    switch (op) {
    case ARENA_BARRIER: rc = pvm_barrier(GROUP, ntasks); break;
    case ARENA_BCAST:
        if (me == 0) {
            pvm_initsend(encoding);
            pvm_pkbyte(rbuf, n, 1);
            if (ntasks > 1)
                rc = pvm_mcast(tids + 1, ntasks - 1, TAG_COLL);
        } else {
            recv_tag(rbuf, size, 0, TAG_COLL);
        }
        break;
    case ARENA_SCATTER:
        rc = pvm_scatter(rbuf, (void *)sbuf, n, PVM_BYTE, TAG_COLL, GROUP, 0);
        break;
    case ARENA_GATHER:
        rc = pvm_gather(rbuf, (void *)sbuf, n, PVM_BYTE, TAG_COLL, GROUP, 0);
        break;
    case ARENA_REDUCE: /* pvm_reduce works in place: the copy is part of the cost */
        memcpy(rbuf, sbuf, arena_elems(size, sums) * arena_type_size(sums));
        rc = pvm_reduce(PvmSum, rbuf, (int)arena_elems(size, sums), pvm_type(sums), TAG_COLL,
                        GROUP, 0);
        break;
    case ARENA_REDUCE_DOUBLE:
        memcpy(rbuf, sbuf, (size + 7) / 8 * 8);
        rc = pvm_reduce(PvmSum, rbuf, (n + 7) / 8, PVM_DOUBLE, TAG_COLL, GROUP, 0);
        break;
    default: break;
    }
    if (rc < 0)
        fail("collective", rc);
}

const arena_module arena_module_impl = {
    .family = "pvm",
    .init = pvm_init_,
    .finalize = pvm_finalize_,
    .abort = pvm_abort_,
    .now = arena_monotonic,
    .tick = arena_monotonic_tick,
    .library_version = pvm_library_version_,
    .send = pvm_send_,
    .recv = pvm_recv_,
    .recv_idle = pvm_recv_,
    .sendrecv = pvm_sendrecv_,
    .burst = pvm_burst,
    .has_coll = pvm_has_coll_,
    .reduce_as = pvm_reduce_as_,
    .no_config = "not an MPI library",
    .zero_byte_messages = 1,
    .coll = pvm_coll_,
};
