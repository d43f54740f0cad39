/* allreduce_check: allreduces whose results every rank checks, for trying a coll component
 * (examples/coll_component): sums and maxima of ints and doubles, in place and not, on
 * MPI_COMM_WORLD and on a split of it, and one too large for coll/example, which declines it. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int failures;

static void expect(int ok, const char *what, int rank)
{
    if (!ok) {
        fprintf(stderr, "allreduce_check: rank %d: %s is wrong\n", rank, what);
        ++failures;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, checks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int ints[3] = {rank + 1, -rank, 7}, isum[3];
    MPI_Allreduce(ints, isum, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(isum[0] == size * (size + 1) / 2 && isum[1] == -size * (size - 1) / 2 &&
               isum[2] == 7 * size,
           "an int sum", rank);
    ++checks;

    double d[2] = {rank * 0.5, -rank * 1.0};
    MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    expect(d[0] == (size - 1) * 0.5 && d[1] == 0.0, "an in-place double maximum", rank);
    ++checks;

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank = 0, hsize = 0, one = 1, n = 0;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, half);
    expect(n == hsize, "a count on a split communicator", rank);
    ++checks;
    MPI_Comm_free(&half);

    /* 512 KiB, above coll_example_max_bytes: the module below it serves it. */
    const int big = 128 * 1024;
    int *in = malloc(sizeof(int) * big), *out = malloc(sizeof(int) * big);
    for (int i = 0; i < big; ++i)
        in[i] = i % 1000 + rank;
    MPI_Allreduce(in, out, big, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int right = 1;
    for (int i = 0; i < big; ++i)
        right &= out[i] == size * (i % 1000) + size * (size - 1) / 2;
    expect(right, "a large int sum", rank);
    ++checks;
    free(in);
    free(out);

    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("allreduce_check: %d ranks, %d checks, %s\n", size, checks,
               all_failures ? "WRONG RESULTS" : "all right");
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
