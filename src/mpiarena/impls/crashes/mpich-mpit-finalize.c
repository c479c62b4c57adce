/*
 * MPICH 4.1.3-5.0.1 (PyPI's mpich wheels 4.1.3, 4.2.3, 4.3.1, 5.0.0, 5.0.0.post1 and 5.0.1 crash;
 * 5.0.2 and Debian's 4.0.2 do not): a collective dies of SIGSEGV after the MPI tool interface
 * was initialized and finalized while MPI is initialized.
 *
 *   MPI_T_finalize frees the string control variables MPIR_CVAR_BCAST_INTRANODE_TREE_TYPE and
 *   MPIR_CVAR_REDUCE_INTRANODE_TREE_TYPE and sets them NULL, though MPI_Init did not count in
 *   MPI_T's init balance; the rank's fifth collective on a communicator (the shared-memory
 *   release_gather path starts after MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD = 5 calls) then
 *   compares the tree type with strcmp(NULL, "kary"). Any size from 4 B to 1 MiB: MPI_Barrier
 *   dies within its first 3 calls, MPI_Reduce, MPI_Allreduce and MPI_Bcast within their first 6.
 *   Upstream: https://github.com/pmodels/mpich/issues/7954 (fixed by pull request 7955).
 *
 * Build and run with the release's own wrapper and launcher (exit status 11 where it has the bug,
 * 0 where it does not):
 *   PREFIX/bin/mpicc -o mpit-finalize mpich-mpit-finalize.c
 *   PREFIX/bin/mpiexec -n 2 ./mpit-finalize
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, provided, in[128] = {0}, out[128];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_finalize();
    for (int i = 0; i < 10; i++) {
        if (rank == 0) printf("MPI_Allreduce of 512 B, call %d\n", i + 1);
        fflush(stdout);
        MPI_Allreduce(in, out, 128, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0) printf("no crash\n");
    MPI_Finalize();
    return 0;
}
