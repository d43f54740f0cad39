/*
 * msgrate: pairs of ranks (0-1, 2-3, ...) stream small messages in windows
 * and report the aggregate message rate. mpirun -np 4 examples/msgrate [bytes]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int bytes = argc > 1 ? atoi(argv[1]) : 8, window = 64, iters = 200;
    char *buf = calloc((size_t)window, (size_t)bytes + 1);
    MPI_Request reqs[64];
    const int peer = rank ^ 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (peer < size) {
        for (int i = 0; i < iters; ++i) {
            for (int w = 0; w < window; ++w) {
                if (rank % 2 == 0)
                    MPI_Isend(buf + w * bytes, bytes, MPI_BYTE, peer, w, MPI_COMM_WORLD, &reqs[w]);
                else
                    MPI_Irecv(buf + w * bytes, bytes, MPI_BYTE, peer, w, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            char ack = 0;
            if (rank % 2 == 0)
                MPI_Recv(&ack, 1, MPI_BYTE, peer, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(&ack, 1, MPI_BYTE, peer, 999, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("msgrate: %d-byte messages, %d pairs: %.0f messages/s per pair\n", bytes, size / 2,
               (double)window * iters / t);
    free(buf);
    MPI_Finalize();
    return 0;
}
