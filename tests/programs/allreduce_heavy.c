/*
 * allreduce_heavy.c - a program whose time is mostly MPI_Allreduce of 64 KiB to 1 MiB: the
 * planted case of `mpiarena app --tune` (tests/test_app_tune.py, bench/app_tune.py).
 *
 * Usage: mpiexec -n NP allreduce_heavy STEPS [KIB]
 *
 * STEPS allreduces of KIB KiB of doubles (default 256), each step's vector changed by the
 * previous result so no step can be skipped; rank 0 prints a checksum and the seconds per step.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long steps = argc > 1 ? atol(argv[1]) : 200;
    long kib = argc > 2 ? atol(argv[2]) : 256;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (steps < 1 || kib < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: allreduce_heavy STEPS [KIB]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int count = (int)(kib * 1024 / sizeof(double));
    double *in = malloc(sizeof(double) * (size_t)count);
    double *out = malloc(sizeof(double) * (size_t)count);
    if (in == NULL || out == NULL)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int i = 0; i < count; i++)
        in[i] = rank + i * 1e-6;
    double t0 = MPI_Wtime();
    for (long s = 0; s < steps; s++) {
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        in[s % count] = out[(s * 7) % count] * 1e-3;
    }
    double per = (MPI_Wtime() - t0) / (double)steps;
    if (rank == 0)
        printf("checksum %.6e\nTime per step: %.9f\n", out[0] + out[count - 1], per);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
