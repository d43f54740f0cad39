/* coll_mismatch: an allgather and an alltoall above coll/sm's small slots whose rank 0 sends
 * fewer bytes than the others expect (an erroneous call, which every rank must refuse alike with
 * MPI_ERR_TRUNCATE, and none may wait for ever over), 200 times in a row, each followed by the
 * same call with the right counts, whose data must arrive intact: a rank that refused must not
 * run ahead into the next call while another still checks the refused one. Errors return
 * (MPI_ERRORS_RETURN). coll_mismatch strict: every rank must report MPI_ERR_TRUNCATE for the
 * short calls (coll/sm's slots and single copy compare every rank's count); without it, success
 * is taken too (handed to point-to-point, a short send is no error at any rank: coll_sm_large_way
 * auto hands some calls down while it learns). Run at any number of ranks; rank 0 prints the
 * verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdlib.h>

#define PROGRAM "coll_mismatch"
#include "test_program.h"

enum { ROUNDS = 200, L = 1024 }; /* 4 KiB blocks: above the small slots */

int main(int argc, char **argv)
{
    int n, cls;
    MPI_Init(&argc, &argv);
    const int strict = argc > 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *a = malloc(sizeof(int) * (size_t)n * L), *b = malloc(sizeof(int) * (size_t)n * L);
    for (int i = 0; i < ROUNDS; ++i) {
        const int short_count = rank == 0 ? L / 2 : L; /* rank 0 sends half a block */
        int rc = MPI_Allgather(a, short_count, MPI_INT, b, L, MPI_INT, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(n == 1 || cls == MPI_ERR_TRUNCATE || (!strict && cls == MPI_SUCCESS),
              "round %d: short allgather gave class %d", i, cls);
        rc = MPI_Alltoall(a, short_count, MPI_INT, b, L, MPI_INT, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(n == 1 || cls == MPI_ERR_TRUNCATE || (!strict && cls == MPI_SUCCESS),
              "round %d: short alltoall gave class %d", i, cls);
        for (int r = 0; r < n; ++r)
            for (int k = 0; k < L; ++k)
                a[r * L + k] = rank * 100000 + r * 1000 + i + k;
        CHECK(MPI_Alltoall(a, L, MPI_INT, b, L, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS,
              "round %d: alltoall failed", i);
        for (int r = 0; r < n; ++r)
            for (int k = 0; k < L; ++k)
                CHECK(b[r * L + k] == r * 100000 + rank * 1000 + i + k,
                      "round %d: alltoall from %d element %d is %d", i, r, k, b[r * L + k]);
        CHECK(MPI_Allgather(a, L, MPI_INT, b, L, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS,
              "round %d: allgather failed", i);
        for (int r = 0; r < n; ++r)
            CHECK(b[r * L] == r * 100000 + i, "round %d: allgather block %d is %d", i, r, b[r * L]);
    }
    free(a);
    free(b);
    return finish(strict ? "200 short allgathers and alltoalls refused at every rank, each "
                           "followed by a right one, every value right"
                         : "200 short allgathers and alltoalls, each followed by a right one, "
                           "every value right");
}
