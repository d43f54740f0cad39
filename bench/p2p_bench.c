/*
 * Point-to-point benchmark, built unchanged against Weft, Open MPI and MPICH
 * (contrib/bench-p2p.sh): ping-pong latency (half round trip) and streaming
 * bandwidth between ranks 0 and 1, and the 8-byte message rate.
 *   p2p_bench lat SIZE [ITERATIONS] | bw SIZE [ITERATIONS] | rate
 * Prints one number: microseconds, MB/s (10^6 bytes) or messages/s.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *what = argc > 1 ? argv[1] : "lat";
    const size_t size = argc > 2 ? (size_t)atol(argv[2]) : 0;
    /* Page-aligned, as benchmarks usually are: the copies' speed then does not depend on
     * where the heap happens to put the buffer. */
    char *buf = NULL, *rbuf = NULL;
    if (posix_memalign((void **)&buf, 4096, size ? size : 1) != 0 ||
        posix_memalign((void **)&rbuf, 4096, size ? size : 1) != 0)
        return 1;
    memset(buf, 1, size ? size : 1);
    memset(rbuf, 2, size ? size : 1);
    double result = 0;
    if (strcmp(what, "lat") == 0) {
        const int given = argc > 3 ? atoi(argv[3]) : 0; /* more for a steadier figure */
        const int iters = given > 0           ? given
                          : size >= (1 << 20) ? 100
                          : size >= 65536     ? 1000
                                              : 10000,
                  warm = iters / 10;
        double t0 = 0;
        for (int i = 0; i < iters + warm; ++i) {
            if (i == warm)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        result = (MPI_Wtime() - t0) * 1e6 / iters / 2;
    } else if (strcmp(what, "bw") == 0) {
        /* Windows of 64 messages: below 1 MiB, enough of them to move 1 GiB, at least 100 and
         * at most 8000 (with 100, an 8-byte run lasted 0.3 ms and a 16 KiB one 20 ms, too short
         * to measure anything but the host's noise; with 256 MiB, 8-16 KiB runs of 10 ms
         * still varied by 20% between runs); 10 from 1 MiB. */
        const int given = argc > 3 ? atoi(argv[3]) : 0, window = 64;
        const size_t moves = (size_t)1 << 30, most = 8000, least = 100;
        const size_t fill = moves / ((size ? size : 1) * window);
        const int iters = given > 0           ? given
                          : size >= (1 << 20) ? 10
                                              : (int)(fill > most    ? most
                                                      : fill < least ? least
                                                                     : fill),
                  warm = iters / 10 > 2 ? iters / 10 : 2;
        MPI_Request reqs[64];
        double t0 = 0;
        for (int i = 0; i < iters + warm; ++i) {
            if (i == warm)
                t0 = MPI_Wtime();
            for (int w = 0; w < window; ++w) {
                if (rank == 0)
                    MPI_Isend(buf, (int)size, MPI_BYTE, 1, w, MPI_COMM_WORLD, &reqs[w]);
                else if (rank == 1)
                    MPI_Irecv(rbuf, (int)size, MPI_BYTE, 0, w, MPI_COMM_WORLD, &reqs[w]);
            }
            if (rank <= 1)
                MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            char ack = 0;
            if (rank == 0)
                MPI_Recv(&ack, 1, MPI_BYTE, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (rank == 1)
                MPI_Send(&ack, 1, MPI_BYTE, 0, 999, MPI_COMM_WORLD);
        }
        result = (double)size * window * iters / (MPI_Wtime() - t0) / 1e6;
    } else {
        const int window = 128, iters = 500;
        MPI_Request reqs[128];
        char small[8 * 128];
        double t0 = 0;
        for (int i = 0; i < iters + 20; ++i) {
            if (i == 20)
                t0 = MPI_Wtime();
            for (int w = 0; w < window; ++w) {
                if (rank == 0)
                    MPI_Isend(small + 8 * w, 8, MPI_BYTE, 1, w, MPI_COMM_WORLD, &reqs[w]);
                else if (rank == 1)
                    MPI_Irecv(small + 8 * w, 8, MPI_BYTE, 0, w, MPI_COMM_WORLD, &reqs[w]);
            }
            if (rank <= 1)
                MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            char ack = 0;
            if (rank == 0)
                MPI_Recv(&ack, 1, MPI_BYTE, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (rank == 1)
                MPI_Send(&ack, 1, MPI_BYTE, 0, 999, MPI_COMM_WORLD);
        }
        result = (double)window * iters / (MPI_Wtime() - t0);
    }
    if (rank == 0)
        printf("%.3f\n", result);
    free(buf);
    MPI_Finalize();
    return 0;
}
