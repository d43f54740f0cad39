/* coll_stream: small collectives back to back, as a solver's inner loop calls them: bcast from
 * a root that moves every time, reduce to another, with allgather, alltoall, barrier and
 * allreduce mixed in, 5000 rounds, every value checked. On one host coll/sm serves them, and its
 * rooted operations do not wait for every rank: a root may run ahead of slow readers, and must
 * never write a slot before they have read what it held (a broken guard shows as wrong values
 * or a truncation here).
 *   coll_stream [L]: allgather, alltoall and allreduce of L ints per block (default 1), and with
 * L > 1 a bcast of L ints every fourth round: at 1024 they take coll/sm's large slots, whose
 * writers must wait for the readers of the last large chunk while the small rooted operations run
 * ahead. Run at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdlib.h>

#define PROGRAM "coll_stream"
#include "test_program.h"

enum { ROUNDS = 5000 };

int main(int argc, char **argv)
{
    int n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const int L = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
    const size_t all = (size_t)n * (size_t)L;
    int *g = malloc(sizeof(int) * all), *a = malloc(sizeof(int) * all),
        *b = malloc(sizeof(int) * all), *mine = malloc(sizeof(int) * (size_t)L),
        *total = malloc(sizeof(int) * (size_t)L), *ones = malloc(sizeof(int) * (size_t)L);
    for (int i = 0; i < ROUNDS; ++i) {
        int v = rank == i % n ? i : -1;
        MPI_Bcast(&v, 1, MPI_INT, i % n, MPI_COMM_WORLD);
        CHECK(v == i, "round %d: bcast from %d gave %d", i, i % n, v);
        if (L > 1 && i % 4 == 0) { /* and a large one from the next root */
            for (int k = 0; k < L; ++k)
                mine[k] = rank == (i + 1) % n ? i + k : -1;
            MPI_Bcast(mine, L, MPI_INT, (i + 1) % n, MPI_COMM_WORLD);
            for (int k = 0; k < L; ++k)
                CHECK(mine[k] == i + k, "round %d: large bcast element %d is %d", i, k, mine[k]);
        }
        const int root = (i + 1) % n;
        int s = rank + i, sum = -1;
        MPI_Reduce(&s, &sum, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        CHECK(rank != root || sum == n * (n - 1) / 2 + n * i, "round %d: reduce at %d gave %d", i,
              root, sum);
        if (i % 3 == 0) {
            for (int k = 0; k < L; ++k)
                mine[k] = rank * 1000 + i + k;
            MPI_Allgather(mine, L, MPI_INT, g, L, MPI_INT, MPI_COMM_WORLD);
            for (int r = 0; r < n; ++r)
                for (int k = 0; k < L; ++k)
                    CHECK(g[r * L + k] == r * 1000 + i + k, "round %d: allgather block %d is %d", i,
                          r, g[r * L + k]);
        }
        if (i % 5 == 0) {
            for (int r = 0; r < n; ++r)
                for (int k = 0; k < L; ++k)
                    a[r * L + k] = rank * 100 + r + i + k;
            MPI_Alltoall(a, L, MPI_INT, b, L, MPI_INT, MPI_COMM_WORLD);
            for (int r = 0; r < n; ++r)
                for (int k = 0; k < L; ++k)
                    CHECK(b[r * L + k] == r * 100 + rank + i + k,
                          "round %d: alltoall from %d is %d", i, r, b[r * L + k]);
        }
        if (i % 7 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        if (i % 11 == 0) {
            for (int k = 0; k < L; ++k)
                ones[k] = 1 + k;
            MPI_Allreduce(ones, total, L, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            for (int k = 0; k < L; ++k)
                CHECK(total[k] == n * (1 + k), "round %d: allreduce gave %d", i, total[k]);
        }
    }
    free(g);
    free(a);
    free(b);
    free(mine);
    free(total);
    free(ones);
    return finish("5000 rounds of bcast and reduce from moving roots, allgather, alltoall, "
                  "barrier and allreduce, every value right");
}
