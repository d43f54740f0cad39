/* A rank that returns from main after MPI_Init without calling MPI_Finalize (rank argv[1],
 * default 1); the others finalize. For mpirun_cli.sh: how mpirun says it, with and without
 * fault tolerance. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == (argc > 1 ? atoi(argv[1]) : 1))
        return 0;
    MPI_Finalize();
    return 0;
}
