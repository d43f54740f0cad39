/*
 * mpi_revoke: MPIX_Comm_revoke (ULFM), for mpi_ft.sh. At least 3 ranks; every rank prints one
 * line per case, "rank R: CASE: ok" or "rank R: CASE: FAILED (...)", and "mpi_revoke: rank R
 * done". Every communicator returns errors (MPI_ERRORS_RETURN).
 *   pending    receives posted on a communicator and never matched (one eager, one of 1 MiB)
 *              end with MPIX_ERR_REVOKED when rank 0 revokes it; MPIX_Comm_is_revoked then
 *              says so at every rank; later sends, receives and a barrier on it return
 *              MPIX_ERR_REVOKED; MPI_Comm_dup, _split, _create and MPI_Intercomm_create from it
 *              too
 *   refused    a 1 MiB send that rank 2 never receives ends with MPIX_ERR_REVOKED at rank 1 when
 *              rank 2 revokes (its rendezvous is refused); an eager send before it completed
 *   matched    a 4 MiB message whose receive matched before rank 1 revoked arrives whole
 *   inter      an intercommunicator (even and odd ranks): receives pending on it end with
 *              MPIX_ERR_REVOKED at every rank of both groups when one rank revokes it
 *   storm      every rank revokes the same communicator at once
 *   probe      a blocking MPI_Probe, and an MPI_Mprobe, for messages nobody sends end with
 *              MPIX_ERR_REVOKED when rank 0 revokes (fault tolerance or not)
 *   collective a bcast from rank 0, a barrier, an allreduce and an alltoall under way at the
 *              other ranks end with MPIX_ERR_REVOKED when rank 0 revokes instead of joining
 *   gap        rank 0 streams eager messages to rank 2, which revokes after the first: those
 *              arriving after the revoke are dropped in their turn, and MPIX_Comm_shrink of the
 *              revoked communicator (whose messages from rank 0 come after them) completes,
 *              with every rank, and an allreduce on it adds up (with fault tolerance on and off)
 * The cases are separated by barriers on MPI_COMM_WORLD. With the argument "world", rank 0
 * then revokes MPI_COMM_WORLD itself before MPI_Finalize, which must still complete.
 */
#include <mpi-ext.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int cls(int rc)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static void report(const char *name, int ok, const char *why)
{
    if (ok)
        printf("rank %d: %s: ok\n", rank, name);
    else
        printf("rank %d: %s: FAILED (%s)\n", rank, name, why);
}

static MPI_Comm dup_world(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

static void pending(void)
{
    MPI_Comm c = dup_world();
    static char big[1 << 20];
    int small = 0, ok = 1, flag = 0;
    char why[200] = "";
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (rank != 0) {
        MPI_Irecv(&small, 1, MPI_INT, 0, 1, c, &r[0]);
        MPI_Irecv(big, sizeof big, MPI_BYTE, 0, 2, c, &r[1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPIX_Comm_revoke(c);
    for (int i = 0; i < 2 && rank != 0; ++i) {
        const int rc = MPI_Wait(&r[i], MPI_STATUS_IGNORE);
        if (cls(rc) != MPIX_ERR_REVOKED) {
            ok = 0;
            snprintf(why, sizeof why, "wait %d gave class %d", i, cls(rc));
        }
    }
    /* Every rank learns of it (rank 0's notice, passed on). */
    do
        MPIX_Comm_is_revoked(c, &flag);
    while (!flag);
    if (cls(MPI_Send(&small, 1, MPI_INT, (rank + 1) % size, 3, c)) != MPIX_ERR_REVOKED ||
        cls(MPI_Recv(&small, 1, MPI_INT, (rank + 1) % size, 3, c, MPI_STATUS_IGNORE)) !=
            MPIX_ERR_REVOKED ||
        cls(MPI_Barrier(c)) != MPIX_ERR_REVOKED) {
        ok = 0;
        snprintf(why, sizeof why, "an operation after the revoke did not return REVOKED");
    }
    MPI_Comm d;
    MPI_Group g;
    MPI_Comm_group(c, &g);
    if (cls(MPI_Comm_dup(c, &d)) != MPIX_ERR_REVOKED ||
        cls(MPI_Comm_split(c, 0, rank, &d)) != MPIX_ERR_REVOKED ||
        cls(MPI_Comm_create(c, g, &d)) != MPIX_ERR_REVOKED ||
        cls(MPI_Intercomm_create(c, 0, MPI_COMM_WORLD, 0, 99, &d)) != MPIX_ERR_REVOKED) {
        ok = 0;
        snprintf(why, sizeof why,
                 "MPI_Comm_dup, _split, _create or MPI_Intercomm_create of a "
                 "revoked communicator");
    }
    MPI_Group_free(&g);
    report("pending", ok, why);
    MPI_Comm_free(&c);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void refused(void)
{
    MPI_Comm c = dup_world();
    static char big[1 << 20];
    int small = 7, ok = 1;
    char why[200] = "";
    MPI_Request r[2];
    if (rank == 1) {
        MPI_Isend(&small, 1, MPI_INT, 2, 1, c, &r[0]);
        MPI_Isend(big, sizeof big, MPI_BYTE, 2, 2, c, &r[1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2)
        MPIX_Comm_revoke(c);
    if (rank == 1) {
        const int a = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        const int b = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        if (a != MPI_SUCCESS || cls(b) != MPIX_ERR_REVOKED) {
            ok = 0;
            snprintf(why, sizeof why, "eager send class %d, rendezvous send class %d", cls(a),
                     cls(b));
        }
    }
    report("refused", ok, why);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&c);
}

static void matched(void)
{
    MPI_Comm c = dup_world();
    const size_t n = 4u << 20;
    char *buf = malloc(n);
    int ok = 1;
    char why[200] = "";
    if (rank == 2) {
        for (size_t i = 0; i < n; ++i)
            buf[i] = (char)(i * 7 + 3);
        const int rc = MPI_Send(buf, (int)n, MPI_BYTE, 1, 4, c);
        if (rc != MPI_SUCCESS) {
            ok = 0;
            snprintf(why, sizeof why, "send class %d", cls(rc));
        }
    } else if (rank == 1) {
        MPI_Request r;
        memset(buf, 0, n);
        MPI_Probe(2, 4, c, MPI_STATUS_IGNORE); /* it arrived: the receive matches at once */
        MPI_Irecv(buf, (int)n, MPI_BYTE, 2, 4, c, &r);
        MPIX_Comm_revoke(c);
        const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i)
            bad += buf[i] != (char)(i * 7 + 3);
        if (rc != MPI_SUCCESS || bad) {
            ok = 0;
            snprintf(why, sizeof why, "receive class %d, %zu bytes wrong", cls(rc), bad);
        }
    }
    report("matched", ok, why);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&c);
}

static void inter(void)
{
    MPI_Comm half, ic;
    int v = 0, ok = 1, flag = 0;
    char why[200] = "";
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    /* Leaders: rank 0 of each half (world ranks 0 and 1). */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &ic);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, 0, 5, ic, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1)
        MPIX_Comm_revoke(ic);
    const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    do
        MPIX_Comm_is_revoked(ic, &flag);
    while (!flag);
    if (cls(rc) != MPIX_ERR_REVOKED) {
        ok = 0;
        snprintf(why, sizeof why, "wait class %d", cls(rc));
    }
    report("inter", ok, why);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
}

static void storm(void)
{
    MPI_Comm c = dup_world();
    int flag = 0, v = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    /* Another rank's notice may come first: then the receive itself is refused. */
    int rc = MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 6, c, &r);
    MPIX_Comm_revoke(c);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPIX_Comm_is_revoked(c, &flag);
    report("storm", flag && cls(rc) == MPIX_ERR_REVOKED, "not revoked");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&c);
}

static void probe(void)
{
    MPI_Comm c = dup_world();
    int rc = MPI_SUCCESS, rc2 = MPI_SUCCESS;
    MPI_Message m;
    if (rank == 0)
        MPIX_Comm_revoke(c);
    else if (rank == 1)
        rc = MPI_Mprobe(0, 9, c, &m, MPI_STATUS_IGNORE);
    else
        rc = MPI_Probe(MPI_ANY_SOURCE, 9, c, MPI_STATUS_IGNORE);
    if (rank != 0) /* and once revoked, at once */
        rc2 = MPI_Probe(0, 9, c, MPI_STATUS_IGNORE);
    char why[100];
    snprintf(why, sizeof why, "classes %d and %d", cls(rc), cls(rc2));
    report("probe", rank == 0 || (cls(rc) == MPIX_ERR_REVOKED && cls(rc2) == MPIX_ERR_REVOKED),
           why);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&c);
}

/* Collectives under way when rank 0 revokes instead of joining them: each ends with
 * MPIX_ERR_REVOKED (a small bcast from rank 0, then a barrier, an allreduce and an alltoall
 * of 8 bytes: the sizes coll/sm serves on one host). */
static void collective(void)
{
    MPI_Comm c = dup_world();
    MPI_Barrier(c); /* coll/sm sets up at the first call, with every rank */
    int rc[4] = {MPI_SUCCESS, MPI_SUCCESS, MPI_SUCCESS, MPI_SUCCESS};
    if (rank == 0) {
        MPIX_Comm_revoke(c);
    } else {
        int v = rank, sum = 0, a[64], b[64];
        memset(a, 0, sizeof a);
        rc[0] = MPI_Bcast(&v, 1, MPI_INT, 0, c);
        rc[1] = MPI_Barrier(c);
        rc[2] = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c);
        rc[3] = MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, c);
    }
    char why[100];
    snprintf(why, sizeof why, "bcast, barrier, allreduce, alltoall classes %d %d %d %d", cls(rc[0]),
             cls(rc[1]), cls(rc[2]), cls(rc[3]));
    int ok = 1;
    for (int i = 0; i < 4; ++i)
        ok &= rank == 0 || cls(rc[i]) == MPIX_ERR_REVOKED;
    report("collective", ok, why);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&c);
}

static void gap(void)
{
    MPI_Comm c = dup_world(), s = MPI_COMM_NULL;
    int n = 0, sum = 0, sent = 0;
    static char msg[2048]; /* eager; 2000 of them fill the transports' buffers */
    if (rank == 0) {
        for (int i = 0; i < 2000; ++i, ++sent)
            if (MPI_Send(msg, sizeof msg, MPI_BYTE, 2, 8, c) != MPI_SUCCESS)
                break;
    } else if (rank == 2) {
        MPI_Recv(msg, sizeof msg, MPI_BYTE, 0, 8, c, MPI_STATUS_IGNORE);
        MPIX_Comm_revoke(c);
    }
    int rc = MPIX_Comm_shrink(c, &s);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
        MPI_Comm_size(s, &n);
        rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s);
    }
    char why[120];
    snprintf(why, sizeof why, "shrink/allreduce class %d, size %d, sum %d (rank 0 sent %d)",
             cls(rc), n, sum, sent);
    report("gap", rc == MPI_SUCCESS && n == size && sum == size * (size - 1) / 2, why);
    MPI_Barrier(MPI_COMM_WORLD);
    if (s != MPI_COMM_NULL)
        MPI_Comm_free(&s);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 3) {
        if (rank == 0)
            fprintf(stderr, "mpi_revoke: run it on 3 ranks or more\n");
        MPI_Finalize();
        return 2;
    }
    pending();
    refused();
    matched();
    inter();
    storm();
    probe();
    collective();
    gap();
    if (argc > 1 && strcmp(argv[1], "world") == 0 && rank == 0)
        MPIX_Comm_revoke(MPI_COMM_WORLD);
    printf("mpi_revoke: rank %d done\n", rank);
    MPI_Finalize();
    return 0;
}
