/* The communication of HPL's LU factorisation, for the per-call profiler (seed 003, Table 1).
 *
 * A standalone MPI program: ranks form a P x Q grid split into row and column communicators
 * (MPI_Comm_split). For each block column k, the ranks of the owning grid column compute a
 * panel, which travels along every grid row in HPL's increasing ring (MPI_Irecv + MPI_Wait,
 * then MPI_Send to the next), row blocks are swapped within each grid column (MPI_Send and
 * MPI_Recv, as HPL's pivoting does), and every rank updates its trailing matrix. The
 * communicators are freed at the end (MPI_Comm_free).
 *
 * usage: hpl_pattern [N [NB]]   matrix order (default 1000) and block size (default 64)
 * Prints the trailing matrix's checksum from rank 0, which is the same for every library.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int grid_rows(int np)
{
    int p = 1;
    for (int d = 1; d * d <= np; d++)
        if (np % d == 0)
            p = d;
    return p;
}

static void ring_bcast(double *panel, int count, int root, MPI_Comm row)
{
    int me, size;
    MPI_Comm_rank(row, &me);
    MPI_Comm_size(row, &size);
    if (size == 1)
        return;
    int next = (me + 1) % size, prev = (me + size - 1) % size;
    if (me != root) {
        MPI_Request req;
        MPI_Irecv(panel, count, MPI_DOUBLE, prev, 1, row, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    if (next != root)
        MPI_Send(panel, count, MPI_DOUBLE, next, 1, row);
}

static void swap_rows(double *block, double *spare, int count, MPI_Comm col)
{
    int me, size;
    MPI_Comm_rank(col, &me);
    MPI_Comm_size(col, &size);
    if (size == 1)
        return;
    int peer = me ^ 1;
    if (peer >= size)
        return;
    if (me & 1) {
        MPI_Recv(spare, count, MPI_DOUBLE, peer, 2, col, MPI_STATUS_IGNORE);
        MPI_Send(block, count, MPI_DOUBLE, peer, 2, col);
    } else {
        MPI_Send(block, count, MPI_DOUBLE, peer, 2, col);
        MPI_Recv(spare, count, MPI_DOUBLE, peer, 2, col, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int n = argc > 1 ? atoi(argv[1]) : 1000, nb = argc > 2 ? atoi(argv[2]) : 64;
    if (n < 1 || nb < 1 || nb > n) {
        if (rank == 0)
            fprintf(stderr, "usage: hpl_pattern [N [NB]] with 1 <= NB <= N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int p = grid_rows(np), q = np / p, myrow = rank / q, mycol = rank % q;
    MPI_Comm row, col;
    MPI_Comm_split(MPI_COMM_WORLD, myrow, mycol, &row);
    MPI_Comm_split(MPI_COMM_WORLD, mycol, myrow, &col);

    int mloc = (n + p - 1) / p, nloc = (n + q - 1) / q;
    double *a = malloc(sizeof(double) * (size_t)mloc * (size_t)nloc);
    double *panel = malloc(sizeof(double) * (size_t)mloc * (size_t)nb);
    double *spare = malloc(sizeof(double) * (size_t)nb * (size_t)nloc);
    if (!a || !panel || !spare)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < (long)mloc * nloc; i++)
        a[i] = 1.0 / (double)(1 + (i + rank) % 97);

    for (int k = 0; k * nb < n; k++) {
        int owner = k % q, first = k / q * nb; /* trailing local columns from here */
        if (mycol == owner)
            for (long i = 0; i < (long)mloc * nb; i++)
                panel[i] = a[(i % mloc) * nloc + (first + i / mloc) % nloc] * 0.5;
        ring_bcast(panel, mloc * nb, owner, row);
        /* on a single grid row (2 ranks) rows swap along it, so the pattern keeps its Recv */
        swap_rows(a, spare, nb * nloc < mloc * nloc ? nb * nloc : mloc * nloc, p > 1 ? col : row);
        for (int i = 0; i < mloc; i++)
            for (int j = first; j < nloc; j++) {
                double s = 0;
                for (int l = 0; l < nb; l++)
                    s += panel[(size_t)l * (size_t)mloc + (size_t)i] * 1e-3;
                a[(size_t)i * (size_t)nloc + (size_t)j] -= s;
            }
    }
    double local = 0, total = 0;
    for (long i = 0; i < (long)mloc * nloc; i++)
        local += a[i];
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("checksum %.6e\n", total);
    free(a);
    free(panel);
    free(spare);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Finalize();
    return 0;
}
