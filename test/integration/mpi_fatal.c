/* Under the default MPI_ERRORS_ARE_FATAL an invalid rank ends the job with
 * a message naming the call, the class and the communicator. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Send(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
    printf("MPI_Send to an invalid rank returned under MPI_ERRORS_ARE_FATAL\n");
    MPI_Finalize();
    return 0;
}
