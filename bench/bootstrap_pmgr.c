/*
 * Bootstrap benchmark, Weft's side: from mpirun's start (BENCH_T0_NS, the
 * launcher script's clock in ns) to every rank past the bootstrap and a
 * 64-byte allgather. Rank 0 prints the slowest rank's time in milliseconds.
 */
#include <pmgr_collective_client.h>

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
    int np, me, id;
    if (!t0s || pmgr_init(&argc, &argv, &np, &me, &id) != PMGR_SUCCESS ||
        pmgr_open() != PMGR_SUCCESS)
        return 1;
    char mine[64] = {0}, *all = malloc(64 * (size_t)np);
    mine[0] = (char)me;
    if (pmgr_allgather(mine, 64, all) != PMGR_SUCCESS)
        return 1;
    int64_t elapsed = now_ns() - strtoll(t0s, NULL, 10);
    int ms = (int)(elapsed / 1000), max = 0; /* microseconds */
    if (pmgr_allreducemaxint(&ms, &max) != PMGR_SUCCESS)
        return 1;
    if (me == 0)
        printf("%.1f\n", max / 1000.0);
    free(all);
    pmgr_close();
    pmgr_finalize();
    return 0;
}
