/* MPIX_Comm_agree and MPIX_Comm_iagree, many in a row, while chosen ranks die at chosen
 * agreements (run by mpi_ft.sh, with fault tolerance on):
 *
 *   mpi_agree COUNT SEED KILLS
 *
 * Agreement i (0 <= i < COUNT) has every rank contribute all ones, except rank i % size, which
 * clears bit i % 31. KILLS victims, drawn from SEED, each die at a drawn agreement: before it
 * (raise(SIGKILL) instead of calling it) or inside it (after starting MPIX_Comm_iagree and
 * testing it once). After an agreement in error a survivor acknowledges the failures and goes
 * on. Every survivor checks each result: the flag is the AND of its contributors (so bit
 * i % 31 is clear when rank i % size lived to contribute), the error MPI_SUCCESS or
 * MPIX_ERR_PROC_FAILED. At the end the survivors shrink and compare what each saw: every
 * agreement must have given every survivor the same flag and the same error (the survivors come
 * from MPIX_Comm_ishrink, under way beside an MPIX_Comm_iagree whose AND is checked too, and
 * whose error, MPIX_ERR_PROC_FAILED when a rank died inside the last agreement after its part
 * was in, must be the same everywhere). Without
 * fault tolerance (KILLS 0) the agreements are coll/base's. Rank 0 of the survivors prints "agree:
 * COUNT agreements, K failures, E in error, uniform". A survivor that finds otherwise prints
 * "agree: FAIL
 * ..." and calls MPI_Abort (which ends the job even with fault tolerance on). */
#include <mpi-ext.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned next(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_agree COUNT SEED KILLS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int count = atoi(argv[1]), kills = atoi(argv[3]);
    unsigned seed = (unsigned)atoi(argv[2]);
    if (count < 1 || kills < 0 || kills >= size) {
        if (rank == 0)
            fprintf(stderr, "mpi_agree: COUNT >= 1 and 0 <= KILLS < size\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The victims (any rank, rank 0 too: the tree's root and the first coordinator), when, and
     * how. The same draw at every rank. */
    int *die_at = malloc(sizeof(int) * (size_t)size),
        *die_inside = calloc((size_t)size, sizeof(int));
    for (int r = 0; r < size; ++r)
        die_at[r] = -1;
    for (int k = 0; k < kills; ++k) {
        int v;
        do
            v = (int)(next(&seed) % (unsigned)size);
        while (die_at[v] >= 0);
        die_at[v] = (int)(next(&seed) % (unsigned)count);
        die_inside[v] = (int)(next(&seed) % 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Each agreement's flag and error class, and the final iagree's (index count). */
    int *flags = malloc(sizeof(int) * (size_t)(count + 1)),
        *errs = malloc(sizeof(int) * (size_t)(count + 1));
    int in_error = 0;
    for (int i = 0; i < count; ++i) {
        const int mine = rank == i % size ? ~(1 << (i % 31)) : ~0;
        int flag = mine, rc;
        if (die_at[rank] == i && !die_inside[rank])
            raise(SIGKILL);
        if (die_at[rank] == i) {
            MPI_Request req;
            int done = 0;
            MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req);
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            raise(SIGKILL);
        }
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        int eclass = rc;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &eclass);
        if (eclass != MPI_SUCCESS && eclass != MPIX_ERR_PROC_FAILED) {
            printf("agree: FAIL rank %d: agreement %d returned error class %d\n", rank, i, eclass);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* The AND of the contributors: every bit but i % 31 set; that one clear if the rank
         * clearing it contributed, which it did if it lives. */
        const int contributed = die_at[i % size] < 0 || die_at[i % size] > i;
        if ((flag | (1 << (i % 31))) != ~0 || (contributed && flag == ~0)) {
            printf("agree: FAIL rank %d: agreement %d gave flag %#x\n", rank, i, (unsigned)flag);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        flags[i] = flag;
        errs[i] = eclass;
        if (eclass != MPI_SUCCESS) {
            ++in_error;
            MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        }
    }
    /* The survivors, by the non-blocking shrink, with the program's own MPIX_Comm_iagree
     * under way beside it (each has its own agreements), both waited on by MPI_Testall. */
    MPI_Comm alive;
    MPI_Request req[2];
    int done = 0, last = rank % 2 ? ~0 : ~2, want = ~0;
    for (int r = 0; r < size; r += 2)
        if (die_at[r] < 0) /* an even rank lives: it cleared bit 1 */
            want = ~2;
    if (MPIX_Comm_ishrink(MPI_COMM_WORLD, &alive, &req[0]) != MPI_SUCCESS ||
        MPIX_Comm_iagree(MPI_COMM_WORLD, &last, &req[1]) != MPI_SUCCESS) {
        printf("agree: FAIL rank %d: ishrink or iagree\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The shrink must succeed. The iagree may report a failure no agreement reported yet (a
     * rank that died inside the last one after its part was in): MPIX_ERR_PROC_FAILED, the
     * same at every survivor (compared below with the others). */
    MPI_Status st[2];
    int trc = MPI_SUCCESS;
    while (!done && (trc == MPI_SUCCESS || trc == MPI_ERR_IN_STATUS))
        trc = MPI_Testall(2, req, &done, st);
    const int shrink_rc = trc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR : trc;
    int iagree_class = trc == MPI_ERR_IN_STATUS ? st[1].MPI_ERROR : trc;
    if (iagree_class != MPI_SUCCESS)
        MPI_Error_class(iagree_class, &iagree_class);
    if (!done || shrink_rc != MPI_SUCCESS || alive == MPI_COMM_NULL ||
        (iagree_class != MPI_SUCCESS && iagree_class != MPIX_ERR_PROC_FAILED) || last != want) {
        printf("agree: FAIL rank %d: ishrink and iagree: testall %d (shrink %d, iagree class %d), "
               "shrunk %s, flag %#x (want %#x)\n",
               rank, trc, shrink_rc, iagree_class, alive == MPI_COMM_NULL ? "no" : "yes",
               (unsigned)last, (unsigned)want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    flags[count] = last;
    errs[count] = iagree_class;
    int n, me;
    MPI_Comm_size(alive, &n);
    MPI_Comm_rank(alive, &me);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(alive, &eh);
    if (eh != MPI_ERRORS_RETURN) { /* the shrunk communicator keeps MPI_COMM_WORLD's */
        printf("agree: FAIL rank %d: the shrunk communicator's error handler\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Everyone's results at everyone, compared with the first survivor's. */
    const int k = count + 1; /* results per survivor */
    int *all = malloc(sizeof(int) * 2 * (size_t)k * (size_t)n),
        *both = malloc(sizeof(int) * 2 * (size_t)k);
    memcpy(both, flags, sizeof(int) * (size_t)k);
    memcpy(both + k, errs, sizeof(int) * (size_t)k);
    if (MPI_Allgather(both, 2 * k, MPI_INT, all, 2 * k, MPI_INT, alive) != MPI_SUCCESS) {
        printf("agree: FAIL rank %d: allgather\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 1; r < n; ++r)
        for (int i = 0; i < 2 * k; ++i)
            if (all[(size_t)r * 2 * (size_t)k + (size_t)i] != all[i]) {
                printf("agree: FAIL rank %d: survivors %d and 0 disagree on agreement %d's %s\n",
                       rank, r, i % k, i < k ? "flag" : "error");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    if (me == 0)
        printf("agree: %d agreements, %d failures, %d in error, uniform\n", count, size - n,
               in_error);
    free(all);
    free(both);
    free(flags);
    free(errs);
    free(die_at);
    free(die_inside);
    MPI_Comm_free(&alive);
    MPI_Finalize();
    return 0;
}
