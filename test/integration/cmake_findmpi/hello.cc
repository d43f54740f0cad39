// A C++ MPI program, built with mpicxx and through CMake's FindMPI.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // Every rank sends its rank to rank 0, which checks the sum.
    if (rank == 0) {
        long sum = 0;
        for (int i = 1; i < size; ++i) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum += v;
        }
        std::printf("hello_cxx: %d ranks, sum %ld (expected %ld)\n", size, sum,
                    long(size) * (size - 1) / 2);
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
