/*
 * ring: a token goes around the ring of ranks ten times, each rank adding
 * one; rank 0 checks the total. mpirun -np 4 examples/ring
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, token = 0;
    const int laps = 10;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int lap = 0; lap < laps; ++lap) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += 1;
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += 1;
            MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        printf("ring: %d ranks, %d laps, token %d (expected %d)\n", size, laps, token, laps * size);
        if (token != laps * size)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}
