/*
 * ulfm_recover: a job that loses a process and goes on (ULFM; docs/fault-tolerance.md).
 *
 *   mpicc -o ulfm_recover examples/ulfm_recover.c
 *   mpirun --with-ft ulfm -np 4 --oversubscribe ./ulfm_recover
 *
 * Every rank adds its rank into a sum with MPI_Allreduce, ten times. In the fourth round the
 * last rank dies. The others see the collective fail (MPIX_ERR_PROC_FAILED), revoke the
 * communicator so that every survivor stops using it, shrink it to the processes left, and
 * redo the round on the new communicator. mpirun exits 0: a job that recovered is a success.
 */
#include <mpi-ext.h>
#include <mpi.h>

#include <signal.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Comm comm;
    int rank, size, *ft = NULL, flag = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &flag);
    if (!flag || !*ft) {
        printf("run it with mpirun --with-ft ulfm\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int victim = size - 1, world_rank = rank;
    for (int round = 0; round < 10; ++round) {
        if (round == 3 && world_rank == victim && size > 1) {
            printf("rank %d: dying in round %d\n", world_rank, round);
            raise(SIGKILL);
        }
        int sum = 0, err;
        while ((err = MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, comm)) != MPI_SUCCESS) {
            int cls;
            MPI_Error_class(err, &cls);
            if (cls != MPIX_ERR_PROC_FAILED && cls != MPIX_ERR_REVOKED) {
                fprintf(stderr, "rank %d: unexpected error class %d\n", world_rank, cls);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            /* Everyone stops using comm, then the survivors make a new one. */
            MPI_Comm shrunk;
            MPIX_Comm_revoke(comm);
            MPIX_Comm_shrink(comm, &shrunk);
            MPI_Comm_free(&comm);
            comm = shrunk;
            MPI_Comm_size(comm, &size);
            MPI_Comm_rank(comm, &rank);
            if (rank == 0)
                printf("round %d: a process failed; going on with %d\n", round, size);
        }
        if (rank == 0)
            printf("round %d: sum of the ranks left %d\n", round, sum);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
