/* Calling MPI after MPI_Finalize is an error with a clear message, not a
 * crash: MPI_Send must return an error and say why. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int v = 1, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    int rc = MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "MPI_Send after MPI_Finalize succeeded\n");
        return 1;
    }
    rc = MPI_Init(&argc, &argv);
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init after MPI_Finalize succeeded\n");
        return 1;
    }
    if (rank == 0)
        printf("after finalize: MPI_Send and MPI_Init refused\n");
    return 0;
}
