/*
 * app_program.c - a fixed amount of MPI work for the `mpiarena app` benchmarks.
 *
 * Usage: mpiexec -n NP app_program ROUNDS [COMPUTE [BYTES]]
 *
 * ROUNDS rounds, each COMPUTE dependent multiply-adds per rank (no sleep: fixed work), then an
 * MPI_Sendrecv of BYTES bytes around the ring and an MPI_Allreduce of one double. Rank 0
 * prints a checksum (so the work cannot be optimised away) and the seconds between MPI_Init
 * and MPI_Finalize. ROUNDS 100, COMPUTE 0: a short launch; COMPUTE 0 and many ROUNDS: a
 * communication-heavy one; large COMPUTE: mostly computation.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    double began = MPI_Wtime();
    long rounds = argc > 1 ? atol(argv[1]) : 100;
    long compute = argc > 2 ? atol(argv[2]) : 0;
    int bytes = argc > 3 ? atoi(argv[3]) : 8;
    if (rounds < 0 || compute < 0 || bytes < 1) {
        fprintf(stderr, "usage: app_program ROUNDS [COMPUTE [BYTES]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *out = malloc((size_t)bytes), *in = malloc((size_t)bytes);
    if (!out || !in) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(out, rank + 1, (size_t)bytes);
    memset(in, 0, (size_t)bytes);
    double x = 1.0 + rank, sum = 0.0;
    for (long r = 0; r < rounds; r++) {
        for (long j = 0; j < compute; j++) x = x * 0.999999 + 1.0;
        MPI_Sendrecv(out, bytes, MPI_BYTE, (rank + 1) % size, 0, in, bytes, MPI_BYTE,
                     (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double mine = x + in[0], all;
        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += all;
    }
    if (rank == 0) printf("checksum %.6g seconds %.6f\n", sum, MPI_Wtime() - began);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
