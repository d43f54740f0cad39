/* ULFM costs, one launch with one failure (contrib/bench-ft.sh runs it beside Open MPI 5 with
 * ULFM, built from this same source with each MPI's mpicc):
 *
 *   agree   MPIX_Comm_agree on MPI_COMM_WORLD with no failure: mean us per call over
 *           ITERS calls (the slowest rank's mean);
 *   detect  the last rank SIGKILLs itself right after a barrier; every other rank enters a
 *           barrier at once: ms from entering it to its error (detection and notification;
 *           the slowest survivor);
 *   shrink  the first MPIX_Comm_shrink after that failure, us (the slowest survivor);
 *   agree2  MPIX_Comm_agree on the shrunk communicator, us per call.
 *
 * Prints one line, "agree A detect D shrink S agree2 B", from rank 0.
 *   ft_bench [ITERS]      (run with fault tolerance on: mpirun --with-ft ulfm) */
#include <mpi.h>

#include <mpi-ext.h> /* after mpi.h: Open MPI's needs it first */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static double agree_loop(MPI_Comm comm, int iters)
{
    int flag = 1;
    for (int i = 0; i < 20; ++i) /* warm up: connections, first-call costs */
        MPIX_Comm_agree(comm, &flag);
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
        flag = 1;
        if (MPIX_Comm_agree(comm, &flag) != MPI_SUCCESS || flag != 1) {
            fprintf(stderr, "ft_bench: agree failed at call %d\n", i);
            MPI_Abort(comm, 1);
        }
    }
    double mean = (MPI_Wtime() - t0) / iters * 1e6, slowest = 0;
    MPI_Allreduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int iters = argc > 1 ? atoi(argv[1]) : 2000;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "ft_bench: needs 2 or more ranks and ITERS >= 1\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const double agree = agree_loop(MPI_COMM_WORLD, iters);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1)
        raise(SIGKILL);
    const double t0 = MPI_Wtime();
    const int rc = MPI_Barrier(MPI_COMM_WORLD);
    double detect = (MPI_Wtime() - t0) * 1e3;
    int eclass = MPI_SUCCESS;
    MPI_Error_class(rc, &eclass);
    if (eclass != MPIX_ERR_PROC_FAILED && eclass != MPIX_ERR_REVOKED) {
        /* A barrier some survivor left before the failure reached it: the others' error
         * revokes nothing, so wait for the failure here too. */
        int flag = 1;
        MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        detect = (MPI_Wtime() - t0) * 1e3;
    }
    MPI_Comm shrunk;
    const double t1 = MPI_Wtime();
    if (MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk) != MPI_SUCCESS) {
        fprintf(stderr, "ft_bench: shrink failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double shrink = (MPI_Wtime() - t1) * 1e6;
    MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN);
    double in[2] = {detect, shrink}, out[2];
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, shrunk);
    const double agree2 = agree_loop(shrunk, iters);
    if (rank == 0)
        printf("agree %.2f detect %.2f shrink %.1f agree2 %.2f\n", agree, out[0], out[1], agree2);
    MPI_Comm_free(&shrunk);
    MPI_Finalize();
    return 0;
}
