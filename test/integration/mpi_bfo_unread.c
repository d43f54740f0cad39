/*
 * For mpi_bfo_real.sh: messages the receiver's host has acknowledged but the receiving
 * process has not read yet when the connection is reset must still arrive.
 * mpi_bfo_unread GO_FILE COUNT BYTES.
 *
 * Rank 0 sends COUNT eager messages of BYTES bytes to rank 1, waits until btl/tcp has counted
 * them as arrived (the peer's kernel acknowledged them), and prints "mpi_bfo_unread: sent".
 * Rank 1 makes no MPI call meanwhile: it waits for GO_FILE to exist (the test resets the
 * connections first), then sends rank 0 one message (a write on the broken connection
 * before any read from it) and receives the COUNT messages, checking every byte. Prints
 * "mpi_bfo_unread: COUNT messages intact" or what was wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char byte_at(int msg, int i) { return (unsigned char)(msg * 37 + i * 11 + 5); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc < 4) {
        if (rank == 0)
            fprintf(stderr, "mpi_bfo_unread: 2 ranks; arguments GO_FILE COUNT BYTES\n");
        MPI_Finalize();
        return 1;
    }
    const char *go = argv[1];
    const int count = atoi(argv[2]), bytes = atoi(argv[3]);
    unsigned char *buf = malloc((size_t)count * (size_t)bytes + 1);
    int bad = 0, word = 0;
    /* Both ranks' rails connect before the test starts. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Request *reqs = malloc(sizeof *reqs * (size_t)count);
        for (int m = 0; m < count; ++m) {
            for (int i = 0; i < bytes; ++i)
                buf[(size_t)m * bytes + i] = byte_at(m, i);
            MPI_Isend(buf + (size_t)m * bytes, bytes, MPI_BYTE, 1, m, MPI_COMM_WORLD, &reqs[m]);
        }
        MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
        free(reqs);
        /* Progress for half a second: btl/tcp completes the fragments as the peer's kernel
         * acknowledges them. */
        const double until = MPI_Wtime() + 0.5;
        while (MPI_Wtime() < until) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
        printf("mpi_bfo_unread: sent\n");
        fflush(stdout);
        MPI_Recv(&word, 1, MPI_INT, 1, count, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = word != 12345;
    } else {
        for (int waited = 0; access(go, F_OK) != 0; waited += 10) {
            if (waited > 60000) {
                fprintf(stderr, "mpi_bfo_unread: %s never appeared\n", go);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            usleep(10000);
        }
        word = 12345;
        MPI_Send(&word, 1, MPI_INT, 0, count, MPI_COMM_WORLD);
        for (int m = 0; m < count && !bad; ++m) {
            memset(buf, 0xee, (size_t)bytes);
            MPI_Recv(buf, bytes, MPI_BYTE, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < bytes; ++i)
                if (buf[i] != byte_at(m, i)) {
                    fprintf(stderr, "mpi_bfo_unread: message %d byte %d is %u, expected %u\n", m, i,
                            buf[i], byte_at(m, i));
                    bad = 1;
                    break;
                }
        }
    }
    int all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0 && !all_bad)
        printf("mpi_bfo_unread: %d messages intact\n", count);
    free(buf);
    MPI_Finalize();
    return all_bad;
}
