/* coll_stream: small collectives back to back, as a solver's inner loop calls them: bcast from
 * a root that moves every time, reduce to another, with allgather, alltoall, barrier and
 * allreduce mixed in, 5000 rounds, every value checked. On one host coll/sm serves them, and its
 * rooted operations do not wait for every rank: a root may run ahead of slow readers, and must
 * never write a slot before they have read what it held (a broken guard shows as wrong values
 * or a truncation here).
 * Run at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
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
    int *g = malloc(sizeof(int) * (size_t)n), *a = malloc(sizeof(int) * (size_t)n),
        *b = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < ROUNDS; ++i) {
        int v = rank == i % n ? i : -1;
        MPI_Bcast(&v, 1, MPI_INT, i % n, MPI_COMM_WORLD);
        CHECK(v == i, "round %d: bcast from %d gave %d", i, i % n, v);
        const int root = (i + 1) % n;
        int s = rank + i, sum = -1;
        MPI_Reduce(&s, &sum, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        CHECK(rank != root || sum == n * (n - 1) / 2 + n * i, "round %d: reduce at %d gave %d", i,
              root, sum);
        if (i % 3 == 0) {
            const int mine = rank * 1000 + i;
            MPI_Allgather(&mine, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD);
            for (int r = 0; r < n; ++r)
                CHECK(g[r] == r * 1000 + i, "round %d: allgather block %d is %d", i, r, g[r]);
        }
        if (i % 5 == 0) {
            for (int r = 0; r < n; ++r)
                a[r] = rank * 100 + r + i;
            MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
            for (int r = 0; r < n; ++r)
                CHECK(b[r] == r * 100 + rank + i, "round %d: alltoall from %d is %d", i, r, b[r]);
        }
        if (i % 7 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        if (i % 11 == 0) {
            int one = 1, total = 0;
            MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK(total == n, "round %d: allreduce gave %d", i, total);
        }
    }
    free(g);
    free(a);
    free(b);
    return finish("5000 rounds of bcast and reduce from moving roots, allgather, alltoall, "
                  "barrier and allreduce, every value right");
}
