/*
 * bench_p2p.c - the timer and point-to-point benchmarks, one iteration at a time: wtime (a read
 * of the library's clock), pingpong, ping (a stream from rank 0 to rank 1, acknowledged at its
 * end), sendrecv and bibw (a burst of W non-blocking exchanges, the cell's `burst`), run by ranks 0 and 1.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

static volatile double sink; /* the wtime benchmark's clock readings go here */

void arena_p2p_call(int bench, size_t size, unsigned char *s, unsigned char *r, int burst)
{
    int rank = arena_rank, peer = rank == 0 ? 1 : 0;
    switch (bench) {
    case B_WTIME: sink += M->now(); break;
    case B_PINGPONG:
        if (rank == 0) { M->send(s, size, 1); M->recv(r, size, 1); }
        else { M->recv(r, size, 0); M->send(s, size, 0); }
        break;
    case B_PING:
        if (rank == 0) M->send(s, size, 1);
        else M->recv(r, size, 0);
        break;
    case B_SENDRECV: M->sendrecv(s, r, size, peer); break;
    case B_BIBW: M->burst(s, r, size, peer, burst); break;
    default: break;
    }
}

/* After a loop of iterations: the ping stream ends when the receiver says it has all. */
void arena_p2p_end(int bench)
{
    unsigned char ack = 0;
    if (bench != B_PING)
        return;
    if (arena_rank == 0) M->recv(&ack, 1, 1);
    else M->send(&ack, 1, 0);
}
