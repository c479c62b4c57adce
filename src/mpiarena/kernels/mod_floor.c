/*
 * mod_floor.c - the machine floor: two processes (rank 0 forks rank 1) sharing one mapping,
 * passing messages as cheaply as this machine allows, so that a library's figure can be set
 * against what the hardware costs.
 *
 * - A message of up to FLOOR_INLINE bytes travels inside one cache line of a ring the sender
 *   alone writes (the receiver polls it): a ping-pong is the round trip of one line between
 *   the two cores.
 * - A longer one is copied once, by the receiver, straight from the sender's buffer (the
 *   cell's buffers come from the shared mapping, `alloc`): memcpy of the message, with the
 *   benchmark's own buffers, reuse and cache state. The sender returns once it is copied.
 * - reduce and allreduce at 2 ranks: each rank publishes its buffer; below FLOOR_SPLIT the
 *   one(s) summing read the other's in place and sum all of it with the run's element type
 *   (one exchange and one core's reduction), from FLOOR_SPLIT on each rank sums half and the
 *   one(s) needing the whole result copy the other half.
 * No other collective is expressible. Messages from memory outside the mapping (the driver's
 * own, on the stack) go through a bounce buffer.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"

#define FLOOR_LINE 64
#define FLOOR_DEPTH 16                    /* messages in flight per direction */
#define FLOOR_INLINE 40                   /* payload bytes inside a message's line */
#define FLOOR_SHARED_INLINE 32            /* a reduction's bytes inside its line */
#define FLOOR_SPLIT (1UL << 20)           /* from here: each rank sums half, copies the other */
#define FLOOR_BOUNCE (1UL << 20)          /* the driver's own messages, copied in */
#define FLOOR_HEAP (1UL << 30)            /* each rank's cell buffers (reserved, not touched) */

/* One message: written by its sender, polled by its receiver. */
struct slot {
    _Alignas(FLOOR_LINE) _Atomic uint64_t seq; /* the message's number, 1 up; set last */
    uint64_t n;
    const void *src; /* n > FLOOR_INLINE: the sender's buffer */
    unsigned char data[FLOOR_INLINE];
};

/* One collective call's contribution, alternate lines by call number. */
struct share {
    _Alignas(FLOOR_LINE) _Atomic uint64_t seq;
    uint64_t n;
    const void *src; /* n > FLOOR_SHARED_INLINE: the rank's send buffer */
    void *dst;       /* n >= FLOOR_SPLIT: its receive buffer, half of it summed by it */
    unsigned char data[FLOOR_SHARED_INLINE];
};

/* Everything one rank writes; the other only reads it. */
struct side {
    struct slot ring[FLOOR_DEPTH];
    _Alignas(FLOOR_LINE) _Atomic uint64_t consumed; /* the peer's messages taken */
    _Alignas(FLOOR_LINE) _Atomic uint64_t done;     /* the last call whose peer data is read */
    _Alignas(FLOOR_LINE) _Atomic uint64_t copied;   /* the last call whose peer half is copied */
    struct share share[2];
    _Alignas(FLOOR_LINE) unsigned char bounce[FLOOR_BOUNCE];
};

static struct side *sides;   /* [2], shared */
static unsigned char *heaps; /* [2][FLOOR_HEAP], shared, untouched until used */
static int me;
static pid_t child = -1;
static uint64_t sent, taken, calls, peer_consumed;
static size_t heap_top, heap_live;
static enum arena_type sum_type = ARENA_TYPE_INT;

#define MINE (&sides[me])
#define PEERS (&sides[1 - me])

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void floor_abort(const char *why)
{
    fprintf(stderr, "arena(floor): %s\n", why);
    if (child > 0)
        kill(child, SIGKILL);
    exit(3);
}

static void floor_init(int *argc, char ***argv, int *rank, int *np, char *level, size_t len)
{
    (void)argc, (void)argv;
    snprintf(level, len, "n/a");
    *np = 2;
    const char *want = getenv("ARENA_NP");
    if (want && atoi(want) != 2) {
        fprintf(stderr, "arena(floor): the machine floor runs with exactly 2 processes\n");
        exit(2);
    }
    size_t total = 2 * sizeof(struct side) + 2 * FLOOR_HEAP;
    void *at = mmap(NULL, total, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED)
        floor_abort("mmap of the shared region failed");
    sides = at;
    heaps = (unsigned char *)at + 2 * sizeof(struct side);
    fflush(stdout);
    child = fork();
    if (child < 0)
        floor_abort("fork failed");
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(3);
    }
    me = *rank = child == 0 ? 1 : 0;
}

static void floor_finalize(void)
{
    if (child > 0)
        waitpid(child, NULL, 0);
}

static void floor_library_version(char *buf, size_t len)
{
    struct utsname u;
    uname(&u);
    snprintf(buf, len, "the machine floor: shared memory, one cache line or one copy per "
             "message (Linux %s)", u.release);
}

static int in_heap(const void *p, size_t n)
{
    const unsigned char *c = p;
    return c >= heaps && c + n <= heaps + 2 * FLOOR_HEAP;
}

/* Publish message `sent + 1`; return its number. */
static uint64_t post(const void *buf, size_t n)
{
    uint64_t s = sent + 1;
    while (s - peer_consumed > FLOOR_DEPTH) {
        peer_consumed = atomic_load_explicit(&PEERS->consumed, memory_order_acquire);
        relax();
    }
    struct slot *slot = &MINE->ring[s % FLOOR_DEPTH];
    slot->n = n;
    if (n <= FLOOR_INLINE) {
        memcpy(slot->data, buf, n);
    } else if (in_heap(buf, n)) {
        slot->src = buf;
    } else {
        if (n > FLOOR_BOUNCE)
            floor_abort("a message from outside the shared buffers is too long");
        memcpy(MINE->bounce, buf, n); /* the bounce is free: every earlier message is taken */
        slot->src = MINE->bounce;
    }
    atomic_store_explicit(&slot->seq, s, memory_order_release);
    sent = s;
    return s;
}

/* Until the peer has taken message s (a message by reference holds the sender's buffer). */
static void taken_by_peer(uint64_t s, size_t n)
{
    if (n <= FLOOR_INLINE)
        return;
    while (peer_consumed < s) {
        peer_consumed = atomic_load_explicit(&PEERS->consumed, memory_order_acquire);
        relax();
    }
}

static void take(void *buf, size_t n, int idle)
{
    uint64_t want = taken + 1;
    const struct slot *slot = &PEERS->ring[want % FLOOR_DEPTH];
    struct timespec nap = {0, 50000};
    while (atomic_load_explicit(&slot->seq, memory_order_acquire) != want) {
        if (idle)
            nanosleep(&nap, NULL);
        else
            relax();
    }
    if (slot->n != n)
        floor_abort("message length differs from the receive's");
    memcpy(buf, n <= FLOOR_INLINE ? (const void *)slot->data : slot->src, n);
    taken = want;
    atomic_store_explicit(&MINE->consumed, want, memory_order_release);
}

static void floor_send(const void *buf, size_t n, int peer)
{
    (void)peer;
    taken_by_peer(post(buf, n), n);
}

static void floor_recv(void *buf, size_t n, int peer)
{
    (void)peer;
    take(buf, n, 0);
}

static void floor_recv_idle(void *buf, size_t n, int peer)
{
    (void)peer;
    take(buf, n, 1);
}

static void floor_sendrecv(const void *sbuf, void *rbuf, size_t n, int peer)
{
    (void)peer;
    uint64_t s = post(sbuf, n);
    take(rbuf, n, 0);
    taken_by_peer(s, n);
}

static void floor_burst(const void *sbuf, void *rbuf, size_t n, int peer, int w)
{
    for (int i = 0; i < w; i++)
        floor_sendrecv(sbuf, rbuf, n, peer);
}

static int floor_has_coll(enum arena_coll op, size_t size)
{
    (void)size;
    return op == ARENA_REDUCE || op == ARENA_ALLREDUCE;
}

static const char *floor_reduce_as(enum arena_type t)
{
    sum_type = t;
    return NULL;
}

/* Vectorised as a library's reduction operators are (GCC's -O2 leaves this loop scalar). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
static void sum_into(void *restrict out, const void *restrict a, const void *restrict b,
                     size_t elems)
{
#define SUM(T) do { T *restrict o = out; const T *restrict x = a, *restrict y = b; \
        for (size_t i = 0; i < elems; i++) o[i] = (T)(x[i] + y[i]); } while (0)
    switch (sum_type) {
    case ARENA_TYPE_CHAR: SUM(signed char); break;
    case ARENA_TYPE_FLOAT: SUM(float); break;
    case ARENA_TYPE_DOUBLE: SUM(double); break;
    default: SUM(int); break;
    }
#undef SUM
}

static void wait_for(const _Atomic uint64_t *at, uint64_t g)
{
    while (atomic_load_explicit(at, memory_order_acquire) < g)
        relax();
}

/* From FLOOR_SPLIT on: each rank sums its half of the elements into its receive buffer, reading
 * the peer's send buffer in place; the one(s) needing the whole result copy the peer's half. */
static void split_sum(enum arena_coll op, const struct share *theirs, const void *sbuf,
                      void *rbuf, size_t elems, uint64_t g)
{
    size_t each = arena_type_size(sum_type), half = elems / 2;
    size_t lo = me == 0 ? 0 : half, hi = me == 0 ? half : elems;
    const unsigned char *s0 = me == 0 ? sbuf : theirs->src, *s1 = me == 0 ? theirs->src : sbuf;
    sum_into((unsigned char *)rbuf + lo * each, s0 + lo * each, s1 + lo * each, hi - lo);
    atomic_store_explicit(&MINE->done, g, memory_order_release);
    if (op == ARENA_ALLREDUCE || me == 0) {
        size_t plo = me == 0 ? half : 0, phi = me == 0 ? elems : half;
        wait_for(&PEERS->done, g);
        memcpy((unsigned char *)rbuf + plo * each,
               (const unsigned char *)theirs->dst + plo * each, (phi - plo) * each);
        atomic_store_explicit(&MINE->copied, g, memory_order_release);
    }
    if (op == ARENA_ALLREDUCE || me == 1)
        wait_for(&PEERS->copied, g);
    else
        wait_for(&PEERS->done, g);
}

/* reduce (root 0) or allreduce of `size` bytes' elements at 2 ranks. */
static void floor_coll(enum arena_coll op, const void *sbuf, void *rbuf, size_t size)
{
    size_t n = arena_elems(size, sum_type) * arena_type_size(sum_type);
    if (n == 0)
        return; /* nothing to sum: a library may return at once, and the floor does */
    uint64_t g = ++calls;
    int sums = op == ARENA_ALLREDUCE || me == 0, read_by_peer = op == ARENA_ALLREDUCE || me == 1;
    struct share *mine = &MINE->share[g % 2];
    const struct share *theirs = &PEERS->share[g % 2];
    /* this line last held call g - 2: the peer is past it once it has posted call g - 1 */
    if (g > 1)
        wait_for(&PEERS->share[(g - 1) % 2].seq, g - 1);
    mine->n = n;
    if (n <= FLOOR_SHARED_INLINE)
        memcpy(mine->data, sbuf, n);
    else if (in_heap(sbuf, n) && (n < FLOOR_SPLIT || in_heap(rbuf, n)))
        mine->src = sbuf, mine->dst = rbuf;
    else
        floor_abort("a reduction's buffer is outside the shared buffers");
    atomic_store_explicit(&mine->seq, g, memory_order_release);
    if (n >= FLOOR_SPLIT) {
        wait_for(&theirs->seq, g);
        split_sum(op, theirs, sbuf, rbuf, n / arena_type_size(sum_type), g);
        return;
    }
    if (sums) {
        wait_for(&theirs->seq, g);
        const void *other = n <= FLOOR_SHARED_INLINE ? (const void *)theirs->data : theirs->src;
        sum_into(rbuf, me == 0 ? sbuf : other, me == 0 ? other : sbuf,
                 n / arena_type_size(sum_type));
        atomic_store_explicit(&MINE->done, g, memory_order_release);
    }
    if (read_by_peer && n > FLOOR_SHARED_INLINE)
        wait_for(&PEERS->done, g);
}

/* The cell's buffers: from this rank's part of the shared mapping, handed out in turn and
 * given back to the system when none is held (before start-up, as --baseline: the heap). */
static void *floor_alloc(size_t n)
{
    if (!heaps)
        return malloc(n);
    size_t at = (heap_top + FLOOR_LINE - 1) / FLOOR_LINE * FLOOR_LINE;
    if (at + n > FLOOR_HEAP)
        return NULL;
    heap_top = at + n;
    heap_live++;
    return heaps + (size_t)me * FLOOR_HEAP + at;
}

static void floor_release(void *p)
{
    if (p && !in_heap(p, 1)) {
        free(p);
        return;
    }
    if (!p || --heap_live > 0)
        return;
    size_t used = (heap_top + 4095) / 4096 * 4096;
    madvise(heaps + (size_t)me * FLOOR_HEAP, used, MADV_REMOVE);
    heap_top = 0;
}

const arena_module arena_module_impl = {
    .family = "floor",
    .init = floor_init,
    .finalize = floor_finalize,
    .abort = floor_abort,
    .now = arena_monotonic,
    .tick = arena_monotonic_tick,
    .library_version = floor_library_version,
    .send = floor_send,
    .recv = floor_recv,
    .recv_idle = floor_recv_idle,
    .sendrecv = floor_sendrecv,
    .burst = floor_burst,
    .has_coll = floor_has_coll,
    .reduce_as = floor_reduce_as,
    .no_config = "not a library: the machine floor",
    .zero_byte_messages = 1,
    .coll = floor_coll,
    .alloc = floor_alloc,
    .release = floor_release,
};
