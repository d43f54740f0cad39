/* coll_stale: large allreduces through coll/sm's large slots, each followed by a reduce that fits
 * half a slot (folded at the root, whose readiness is a stamp per half), ROUNDS times. The
 * allreduce's data is one value per round, swept so that in some run of rounds it equals the
 * generation the next reduce stamps with: data written over a stamp's place by the allreduce
 * must not pass for the reduce's stamp (it did, when the second half's stamp lay inside the
 * whole slot's data: the root then read a part that was not there yet). Run with
 * --mca coll_sm_large_way slots; every result is checked, errors return (MPI_ERRORS_RETURN).
 * Rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdlib.h>

#define PROGRAM "coll_stale"
#include "test_program.h"

/* BIG ints: more than half of coll/sm's default large slot (1 MiB), so the allreduce writes
 * over the second half's header; SMALL ints: a reduce within half a slot, above the small
 * slots. Each round takes three generations (the allreduce's two arrivals, the reduce), so a
 * value of 3 * round + k meets the reduce's generation for one k; k sweeps -120..119 in steps
 * held for 20 rounds each (10 of them with the reduce on the second half). */
enum { ROUNDS = 4800, BIG = 160 * 1024, SMALL = 1024, HOLD = 20, SWEEP = 120 };

int main(int argc, char **argv)
{
    int n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *big = malloc(sizeof(int) * BIG), *sum = malloc(sizeof(int) * BIG);
    int small[SMALL], out[SMALL];
    if (!big || !sum)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < ROUNDS; ++i) {
        const int v = 3 * i + i / HOLD - SWEEP;
        for (int k = 0; k < BIG; ++k)
            big[k] = v;
        CHECK(MPI_Allreduce(big, sum, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS,
              "round %d: allreduce failed", i);
        CHECK(sum[0] == n * v && sum[BIG - 1] == n * v, "round %d: allreduce gave %d, not %d", i,
              sum[0], n * v);
        for (int k = 0; k < SMALL; ++k)
            small[k] = rank * 7 + i + k;
        const int rc = MPI_Reduce(small, out, SMALL, MPI_INT, MPI_SUM, i % n, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS, "round %d: reduce failed (%d)", i, rc);
        if (rank == i % n)
            for (int k = 0; k < SMALL; ++k)
                CHECK(out[k] == 7 * n * (n - 1) / 2 + n * (i + k),
                      "round %d: reduce element %d is %d, not %d", i, k, out[k],
                      7 * n * (n - 1) / 2 + n * (i + k));
    }
    free(big);
    free(sum);
    return finish("4800 large allreduces each followed by a reduce within half a slot, every "
                  "value right");
}
