/*
 * Point-to-point benchmark, built unchanged against Weft, Open MPI and MPICH
 * (contrib/bench-p2p.sh): ping-pong latency (half round trip) and streaming
 * bandwidth between ranks 0 and 1, and the 8-byte message rate.
 *   p2p_bench lat SIZE [ITERATIONS] | bw SIZE [ITERATIONS] | rate
 * Prints one number: microseconds, MB/s (10^6 bytes) or messages/s. Without ITERATIONS a run
 * is timed for at least 0.2 s (P2P_BENCH_SECONDS), after a warm-up (measure()).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every kind of step needs: the two ranks, the buffers and the message size. */
static int rank;
static char *buf, *rbuf;
static size_t size;

/* One ping-pong (rank 0 sends first). */
static void lat_steps(int n)
{
    for (int i = 0; i < n; ++i) {
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
}

/* A window of `window` messages of len bytes from rank 0 to rank 1 (from consecutive places of
 * `from` and into `to` when step is len, else all from one buffer into one), then rank 1's
 * one-byte answer. */
static void window_steps(int n, int window, char *from, char *to, size_t len, size_t step)
{
    MPI_Request reqs[128];
    for (int i = 0; i < n; ++i) {
        for (int w = 0; w < window; ++w) {
            if (rank == 0)
                MPI_Isend(from + step * (size_t)w, (int)len, MPI_BYTE, 1, w, MPI_COMM_WORLD,
                          &reqs[w]);
            else if (rank == 1)
                MPI_Irecv(to + step * (size_t)w, (int)len, MPI_BYTE, 0, w, MPI_COMM_WORLD,
                          &reqs[w]);
        }
        if (rank <= 1)
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
        char ack = 0;
        if (rank == 0)
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (rank == 1)
            MPI_Send(&ack, 1, MPI_BYTE, 0, 999, MPI_COMM_WORLD);
    }
}

static void bw_steps(int n) { window_steps(n, 64, buf, rbuf, size, 0); }

static char small[8 * 128];
static void rate_steps(int n) { window_steps(n, 128, small, small, 8, 8); }

/* Rank 0 tells rank 1 the next batch: msg[0] steps, timed if msg[1] (the last). */
static void tell(int msg[2])
{
    if (rank == 0)
        MPI_Send(msg, 2, MPI_INT, 1, 998, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(msg, 2, MPI_INT, 0, 998, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Seconds per step on rank 0: `given` steps if given > 0 (after a tenth of them, at least 2,
 * untimed); else `iters` steps, or as many more as take `least` seconds, after a warm-up in
 * doubling batches that stops once a batch took a tenth of that (how long a step takes). Runs
 * of a few milliseconds (a 64 KiB ping-pong 1000 times, a 1 MiB one 100 times) measured the
 * host's moments more than the implementation: one preempted vCPU or kernel thread in such a
 * run moved its figure by 10-20% (128 B ping-pongs of Weft and Open MPI on a KVM guest, 10000
 * round trips: 0.096-0.131 us between rounds; 500000, a tenth of a second: within 1%). */
static double measure(void (*steps)(int), int given, int iters, double least)
{
    int msg[2] = {given > 0 ? (given / 10 > 2 ? given / 10 : 2) : 1, 0};
    double per = 0;
    if (rank > 1)
        return 0; /* (other ranks wait in MPI_Finalize) */
    for (;;) {
        tell(msg);
        const double t0 = MPI_Wtime();
        steps(msg[0]);
        const double t = MPI_Wtime() - t0;
        per = t / msg[0];
        if (msg[1])
            return per;
        if (rank == 0) {
            if (given > 0) {
                msg[0] = given;
                msg[1] = 1;
            } else if (t >= least / 10 || msg[0] >= (1 << 24)) {
                const double want = per > 0 ? least / per : iters;
                msg[0] = want < iters ? iters : want > (1 << 30) ? (1 << 30) : (int)want;
                msg[1] = 1;
            } else {
                msg[0] *= 2;
            }
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int nranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2) {
        fprintf(stderr, "p2p_bench: runs between ranks 0 and 1: start 2 ranks (mpirun -np 2)\n");
        MPI_Finalize();
        return 1;
    }
    const char *what = argc > 1 ? argv[1] : "lat";
    size = argc > 2 ? (size_t)atol(argv[2]) : 0;
    const int given = argc > 3 ? atoi(argv[3]) : 0;
    /* Timed for at least this long (P2P_BENCH_SECONDS: another figure). */
    const char *secs = getenv("P2P_BENCH_SECONDS");
    const double least = secs && atof(secs) > 0 ? atof(secs) : 0.2;
    /* Page-aligned, as benchmarks usually are: the copies' speed then does not depend on
     * where the heap happens to put the buffer. */
    if (posix_memalign((void **)&buf, 4096, size ? size : 1) != 0 ||
        posix_memalign((void **)&rbuf, 4096, size ? size : 1) != 0)
        return 1;
    memset(buf, 1, size ? size : 1);
    memset(rbuf, 2, size ? size : 1);
    double result = 0;
    if (strcmp(what, "lat") == 0) {
        const int iters = size >= (1 << 20) ? 100 : size >= 65536 ? 1000 : 10000;
        result = measure(lat_steps, given, iters, least) * 1e6 / 2;
    } else if (strcmp(what, "bw") == 0) {
        /* Windows of 64 messages: below 1 MiB, enough of them to move 1 GiB, at least 100 and
         * at most 8000 (with 100, an 8-byte run lasted 0.3 ms and a 16 KiB one 20 ms, too short
         * to measure anything but the host's noise; with 256 MiB, 8-16 KiB runs of 10 ms
         * still varied by 20% between runs); 10 from 1 MiB. */
        const size_t moves = (size_t)1 << 30, most = 8000, fewest = 100;
        const size_t fill = moves / ((size ? size : 1) * 64);
        const int iters = size >= (1 << 20) ? 10
                                            : (int)(fill > most     ? most
                                                    : fill < fewest ? fewest
                                                                    : fill);
        result = (double)size * 64 / measure(bw_steps, given, iters, least) / 1e6;
    } else {
        result = 128 / measure(rate_steps, given, 500, least);
    }
    if (rank == 0)
        printf("%.3f\n", result);
    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
