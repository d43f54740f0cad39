/*
 * Collective benchmark, built unchanged against Weft, Open MPI and MPICH
 * (contrib/bench-coll.sh): the time of one MPI_Barrier, MPI_Allreduce or MPI_Reduce
 * (MPI_DOUBLE, MPI_SUM, root 0), MPI_Bcast (MPI_BYTE from rank 0), MPI_Allgather or
 * MPI_Alltoall (MPI_BYTE) on MPI_COMM_WORLD, for any number of ranks.
 *   coll_bench barrier | allreduce SIZE | reduce SIZE | bcast SIZE | allgather SIZE
 *              | alltoall SIZE
 * SIZE is in bytes, as OSU's benchmarks count it: (all)reduce reduces SIZE/8 doubles (SIZE 8
 * is one double); allgather gathers SIZE bytes from each rank; alltoall sends SIZE bytes to
 * each rank.
 * Prints one number on rank 0: microseconds per operation, the slowest rank's average.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n operations of the kind op ('b'arrier, 'a'llreduce, 'r'educe, bcast 'c', allgather 'g',
 * alltoall 't'). */
static void run(int op, int n, char *buf, char *out, size_t size)
{
    const int count = (int)(size / sizeof(double));
    for (int i = 0; i < n; ++i) {
        if (op == 'b')
            MPI_Barrier(MPI_COMM_WORLD);
        else if (op == 'a')
            MPI_Allreduce(buf, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else if (op == 'r')
            MPI_Reduce(buf, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (op == 'g')
            MPI_Allgather(buf, (int)size, MPI_BYTE, out, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        else if (op == 't')
            MPI_Alltoall(buf, (int)size, MPI_BYTE, out, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        else
            MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *what = argc > 1 ? argv[1] : "barrier";
    const size_t size = argc > 2 ? (size_t)atol(argv[2]) : 0;
    const int op = strcmp(what, "barrier") == 0     ? 'b'
                   : strcmp(what, "allreduce") == 0 ? 'a'
                   : strcmp(what, "reduce") == 0    ? 'r'
                   : strcmp(what, "bcast") == 0     ? 'c'
                   : strcmp(what, "allgather") == 0 ? 'g'
                   : strcmp(what, "alltoall") == 0  ? 't'
                                                    : 0;
    if (op == 0) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_bench barrier | allreduce SIZE | reduce SIZE | bcast SIZE "
                            "| allgather SIZE | alltoall SIZE\n");
        MPI_Finalize();
        return 1;
    }
    /* Page-aligned, as benchmarks usually are: the copies' speed then does not depend on
     * where the heap happens to put the buffers. Allreduce reads one and writes the other;
     * allgather and alltoall have a block per rank. */
    const size_t len = (size ? size : 1) * (op == 'g' || op == 't' ? (size_t)nranks : 1);
    char *buf = NULL, *out = NULL;
    if (posix_memalign((void **)&buf, 4096, len) != 0 ||
        posix_memalign((void **)&out, 4096, len) != 0)
        return 1;
    memset(buf, 1, len);
    memset(out, 0, len);
    for (size_t i = 0; i < size / sizeof(double); ++i) /* small sums, never a NaN */
        ((double *)buf)[i] = 1.0;
    /* Enough iterations for a stable time: barrier and small sizes 20000, 64 KiB 2000, and
     * more where those take less than a quarter of a second (2000 bcasts of 64 KiB take a few
     * milliseconds, and one stall of the machine, a kernel thread taking a core for a moment,
     * would double such a figure). The warm-up (a tenth) lets every implementation set up its
     * connections and pick its algorithms; it runs in doubling batches, each followed by the
     * slowest rank's time, so every rank agrees on a rough time per operation. An operation
     * so slow that the count would take more than 2 s (oversubscribed ranks that spin without
     * yielding take milliseconds each) gets fewer iterations, at least 10: the run stays
     * bounded. */
    int iters = size >= (1 << 20) ? 200 : size >= 65536 ? 2000 : 20000;
    const int warm = iters / 10;
    const double budget = 2.0, warm_budget = 0.2, least = 0.25;
    double warm_time = 0, per_op = 0;
    for (int done = 0, batch = 1; done < warm; done += batch, batch *= 2) {
        if (batch > warm - done)
            batch = warm - done;
        double t = MPI_Wtime();
        run(op, batch, buf, out, size);
        t = MPI_Wtime() - t;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        per_op = t / batch;
        warm_time += t;
        if (warm_time >= warm_budget)
            break;
    }
    if (per_op * iters > budget)
        iters = per_op * 10 > budget ? 10 : (int)(budget / per_op);
    else if (per_op > 0 && per_op * iters < least)
        iters = (int)(least / per_op);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    run(op, iters, buf, out, size);
    /* Every rank's average; the slowest one is the operation's time (a root that leaves a
     * bcast early has not finished the operation for the others). The operations run back to
     * back, so successive bcasts may overlap: that figure is the time per bcast in a stream,
     * not one isolated bcast's latency. */
    double mine = (MPI_Wtime() - t0) * 1e6 / iters, result = 0;
    MPI_Reduce(&mine, &result, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.3f\n", result);
    free(buf);
    free(out);
    MPI_Finalize();
    return 0;
}
