/*
 * A sender that outruns its receiver: rank 0 sends N eager messages of S bytes with MPI_Send
 * while rank 1 sleeps, then rank 1 receives them all and checks each one. MPI_Send may return
 * once its buffer can be reused, but a library that keeps a copy of every message the
 * receiver has no room for yet grows without bound; Weft's blocking sends wait for room
 * instead. Rank 0 reports how much its peak memory grew over the sends.
 *   mpi_flow N S LIMIT_MIB
 * Prints "mpi_flow: N messages of S bytes intact, the sender grew by X MiB (limit L)" and
 * exits 1 if a message is wrong or the growth is over LIMIT_MIB.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static long peak_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 mpi_flow N S LIMIT_MIB\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int n = atoi(argv[1]);
    const size_t s = (size_t)atol(argv[2]);
    const long limit = atol(argv[3]);
    unsigned char *buf = malloc(s);
    memset(buf, 0, s);
    MPI_Barrier(MPI_COMM_WORLD);
    long grew = 0;
    if (rank == 0) {
        const long before = peak_kib();
        for (int i = 0; i < n; ++i) {
            memset(buf, (unsigned char)i, s);
            memcpy(buf, &i, sizeof i);
            MPI_Send(buf, (int)s, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        }
        grew = (peak_kib() - before) / 1024;
    } else {
        sleep(1);
        for (int i = 0; i < n; ++i) {
            MPI_Recv(buf, (int)s, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int got;
            memcpy(&got, buf, sizeof got);
            if (got != i || buf[s - 1] != (unsigned char)i) {
                if (bad++ < 5)
                    fprintf(stderr, "mpi_flow: message %d: holds %d, last byte %u\n", i, got,
                            buf[s - 1]);
            }
        }
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_flow: %d messages of %zu bytes %s, the sender grew by %ld MiB (limit %ld)\n", n,
               s, all ? "NOT intact" : "intact", grew, limit);
        if (grew > limit)
            all = 1;
    }
    free(buf);
    MPI_Finalize();
    return all ? 1 : 0;
}
