/*
 * Drives each of ob1's protocols with data checks; mpi_p2p.sh reads the
 * protocol trace (--mca pml_ob1_verbose 20) to see that each one ran:
 *   eager immediate   small messages (btl_sendi);
 *   eager prepared    a message to self larger than 256 bytes (btl/self sends
 *                     from the user's buffer in place);
 *   eager allocated   a burst that fills the peer's ring (run with a small
 *                     btl_sm_ring_size): btl_sendi has no room, the copy waits;
 *   pipeline          messages above the eager limit, and MPI_Ssend.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BURST       200
#define BURST_BYTES 1000

static int failures = 0;

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; ++i)
        b[i] = (unsigned char)(seed * 31 + i * 7);
}

static void check(const unsigned char *b, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; ++i)
        if (b[i] != (unsigned char)(seed * 31 + i * 7)) {
            fprintf(stderr, "mpi_protocols: %s: byte %zu wrong\n", what, i);
            ++failures;
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *out = malloc(1 << 20), *in = malloc(1 << 20);

    /* To self: immediate (64 B) and prepared (4000 B). */
    const size_t self_sizes[2] = {64, 4000};
    for (int k = 0; k < 2; ++k) {
        MPI_Request r;
        fill(out, self_sizes[k], k);
        memset(in, 0, self_sizes[k]);
        MPI_Irecv(in, (int)self_sizes[k], MPI_BYTE, rank, 10 + k, MPI_COMM_WORLD, &r);
        MPI_Send(out, (int)self_sizes[k], MPI_BYTE, rank, 10 + k, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(in, self_sizes[k], k, "to self");
    }

    if (size >= 2 && rank < 2) {
        const int peer = 1 - rank;
        if (rank == 0) {
            /* A burst the receiver is not draining yet: the ring fills up. */
            MPI_Request reqs[BURST];
            unsigned char *bufs = malloc((size_t)BURST * BURST_BYTES);
            for (int i = 0; i < BURST; ++i) {
                fill(bufs + (size_t)i * BURST_BYTES, BURST_BYTES, i);
                MPI_Isend(bufs + (size_t)i * BURST_BYTES, BURST_BYTES, MPI_BYTE, peer, 20,
                          MPI_COMM_WORLD, &reqs[i]);
            }
            MPI_Waitall(BURST, reqs, MPI_STATUSES_IGNORE);
            free(bufs);
            /* Above the eager limit, and synchronous: the pipeline. */
            fill(out, 1 << 20, 3);
            MPI_Send(out, 1 << 20, MPI_BYTE, peer, 30, MPI_COMM_WORLD);
            MPI_Ssend(out, 100, MPI_BYTE, peer, 31, MPI_COMM_WORLD);
        } else {
            usleep(300000);
            for (int i = 0; i < BURST; ++i) {
                MPI_Recv(in, BURST_BYTES, MPI_BYTE, peer, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(in, BURST_BYTES, i, "burst (in order)");
            }
            MPI_Recv(in, 1 << 20, MPI_BYTE, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(in, 1 << 20, 3, "pipeline");
            MPI_Recv(in, 100, MPI_BYTE, peer, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(in, 100, 3, "ssend");
        }
    }
    /* Collectives come later: rank 0 adds up the failures itself. */
    int all = failures;
    if (rank == 0) {
        for (int r = 1; r < size; ++r) {
            int f = 0;
            MPI_Recv(&f, 1, MPI_INT, r, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            all += f;
        }
    } else {
        MPI_Send(&failures, 1, MPI_INT, 0, 40, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("mpi_protocols: %d ranks, %s\n", size, all ? "DATA WRONG" : "every message intact");
    free(out);
    free(in);
    MPI_Finalize();
    return all != 0;
}
