/*
 * minimal_pingpong.c - the smallest honest MPI ping-pong, the yardstick for mpiarena's harness.
 *
 * Usage: mpiexec -n 2 minimal_pingpong SIZES NOBS [TARGET_SECONDS]
 *   SIZES is a comma-separated list of byte counts (e.g. 8,1048576).
 *
 * MPI_Init, a warm-up, then for each size: k is grown until one timed loop of k round trips
 * lasts at least TARGET_SECONDS (default 1 ms, the same rule as mpiarena's driver), then NOBS
 * observations, each one timed loop of k MPI_Send/MPI_Recv round trips of MPI_BYTE between
 * ranks 0 and 1 on MPI_COMM_WORLD. Rank 0 prints one line per observation:
 *
 *   obs SIZE I K HALF_RTT_RANK0 HALF_RTT_RANK1
 *
 * HALF_RTT_RANKr is rank r's loop time / k / 2, in seconds. Rank 0's is the usual figure;
 * rank 1's is printed too so a reader can reduce both ranks the way mpiarena does.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KMAX (1L << 24)

static int rank;

/* Seconds for k round trips of size bytes, on this rank. */
static double loop(unsigned char *s, unsigned char *r, int size, long k)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < k; i++) {
        if (rank == 0) {
            MPI_Send(s, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(r, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

/* Rank 0 tells rank 1 the k of the next calibration loop (0: the last one was final). */
static long agree(long k)
{
    if (rank == 0)
        MPI_Send(&k, (int)sizeof k, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    else
        MPI_Recv(&k, (int)sizeof k, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return k;
}

static void measure(int size, int nobs, double target)
{
    unsigned char *s = malloc((size_t)size + 1), *r = malloc((size_t)size + 1);
    double *t = calloc((size_t)nobs, sizeof *t), *peer = calloc((size_t)nobs, sizeof *peer);
    if (!s || !r || !t || !peer)
        MPI_Abort(MPI_COMM_WORLD, 3);
    memset(s, 1, (size_t)size + 1);
    memset(r, 0, (size_t)size + 1);
    loop(s, r, size, 10); /* warm-up */
    long k = 1;
    int confirmed = 0;
    for (;;) { /* calibration: grow k until two loops in a row last target seconds */
        double dt = loop(s, r, size, k);
        long next = 0; /* 0: k is final */
        if (rank == 0 && dt < target && k < KMAX) {
            double grow = target / (dt > 1e-9 ? dt : 1e-9) * 1.25;
            grow = grow < 2 ? 2 : grow > 1024 ? 1024 : grow;
            next = (long)((double)k * grow) > KMAX ? KMAX : (long)((double)k * grow);
            confirmed = 0;
        } else if (rank == 0 && !confirmed && k < KMAX) {
            next = k;
            confirmed = 1;
        }
        if (!(next = agree(next)))
            break;
        k = next;
    }
    for (int i = 0; i < nobs; i++)
        t[i] = loop(s, r, size, k) / (double)k / 2;
    if (rank == 1) {
        MPI_Send(t, nobs, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
    } else {
        MPI_Recv(peer, nobs, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < nobs; i++)
            printf("obs\t%d\t%d\t%ld\t%.9e\t%.9e\n", size, i, k, t[i], peer[i]);
        fflush(stdout);
    }
    free(s);
    free(r);
    free(t);
    free(peer);
}

int main(int argc, char **argv)
{
    int np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || np < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s SIZES NOBS [TARGET_SECONDS]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    int nobs = atoi(argv[2]);
    double target = argc > 3 ? atof(argv[3]) : 1e-3;
    if (rank < 2) {
        for (char *p = argv[1]; p && *p;) {
            measure(atoi(p), nobs, target);
            p = strchr(p, ',');
            p = p ? p + 1 : NULL;
        }
    }
    MPI_Finalize();
    return 0;
}
