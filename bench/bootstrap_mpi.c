/*
 * Bootstrap benchmark, the reference side (built with Open MPI's and MPICH's
 * mpicc): from the launcher's start (BENCH_T0_NS) to every rank past MPI_Init
 * and a 64-byte MPI_Allgather. Rank 0 prints the slowest rank's time in ms.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *t0s = getenv("BENCH_T0_NS");
    int np, me;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char mine[64] = {0}, *all = malloc(64 * (size_t)np);
    mine[0] = (char)me;
    MPI_Allgather(mine, 64, MPI_CHAR, all, 64, MPI_CHAR, MPI_COMM_WORLD);
    long long us = t0s ? (now_ns() - strtoll(t0s, NULL, 10)) / 1000 : -1, max = 0;
    MPI_Reduce(&us, &max, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%.1f\n", max / 1000.0);
    free(all);
    MPI_Finalize();
    return 0;
}
