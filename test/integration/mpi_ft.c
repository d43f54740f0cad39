/*
 * mpi_ft: processes that fail under fault tolerance (mpirun --with-ft ulfm), for mpi_ft.sh.
 *
 * Usage: mpi_ft HOW VICTIM [WHAT [SECONDS]]. Every rank reads the MPIX_FT attribute and prints
 * it. Rank VICTIM fails as HOW says:
 *   kill     it prints "rank V: dying" and sends itself SIGKILL
 *   exit     it prints "rank V: leaving" and exits with status 0 without MPI_Finalize
 *   abort    it calls MPI_Abort(MPI_COMM_WORLD, 7): the job ends, fault tolerance or not
 *   stop     it prints "rank V: stopping" and sends itself SIGSTOP: a hung process, which
 *            only the failure detector (mpi_ft_detector_period) finds
 *   none     nobody fails
 * after SECONDS (default 0.3) when the others wait in MPI_Recv, at once otherwise. The others
 * (MPI_ERRORS_RETURN on MPI_COMM_WORLD) do WHAT:
 *   compute  compute for SECONDS (default 1) without calling MPI
 *   recv     MPI_Recv from the victim, which never sends: it must return MPIX_ERR_PROC_FAILED
 *   send     compute for SECONDS, then MPI_Send 256 KiB to the victim and MPI_Recv from it:
 *            both must return MPIX_ERR_PROC_FAILED (256 KiB: above every BTL's eager limit, a
 *            rendezvous, which needs the victim; an eager send may complete before the failure
 *            is learnt, as MPI allows a buffered send to)
 *   coll     collectives on MPI_COMM_WORLD at once (the victim dies while they wait): barrier,
 *            bcast from the first survivor, reduce to it, allreduce of 1 and of 100000 ints,
 *            allgather, alltoall, then MPI_Comm_dup: each prints "rank R: OP returned CLASS";
 *            none may hang, and those that need the victim cannot succeed
 *   agree    MPIX_Comm_agree while the victim dies (flag 7, 5 at the last survivor):
 *            "agree 1 returned CLASS flag F"; after MPIX_Comm_failure_ack, again with 255:
 *            "agree 2 ..."; then MPIX_Comm_iagree with 3 (1 at the first survivor):
 *            "iagree ..."
 *   interagree  an intercommunicator between the even and the odd ranks of MPI_COMM_WORLD
 *            (made by every rank, the victim too, before it dies); each rank contributes all
 *            ones but bit (its world rank), and must get the AND of the remote group's live
 *            members' flags: MPIX_Comm_agree while the victim dies ("interagree 1 returned
 *            CLASS flag ok|wrong"), after MPIX_Comm_failure_ack again ("interagree 2 ..."), then
 *            MPIX_Comm_iagree ("interiagree ..."; without fault tolerance, "interiagree
 *            unsupported CLASS": coll/base has no non-blocking one on intercommunicators)
 *   intershrink  the same intercommunicator, revoked and shrunk while the victim dies: both
 *            groups' sizes, this rank's place (its group's old order without the victim), an
 *            allreduce of the world ranks (each group gets the other's sum), an agreement and a
 *            barrier on it: "rank R: intershrink: local L, remote M, rank ok|wrong,
 *            sum ok|wrong, agree CLASS, barrier CLASS"
 *   twoshrinks  two duplicates of MPI_COMM_WORLD (made before the victim dies), each shrunk
 *            with MPIX_Comm_ishrink while it dies; even ranks wait for the first then the
 *            second, odd ranks the other way round; then an allreduce on each: "rank R:
 *            twoshrinks: sizes S1 S2, sums ok|wrong, CLASS"
 *   shrinkrace  20 times: MPI_COMM_WORLD's duplicate and a communicator of every rank but 0,
 *            shrunk with MPIX_Comm_ishrink at once, started in opposite orders by odd and even
 *            ranks (different lowest members choose their context ids: they may choose the same
 *            one, and must try again), then an allreduce on each: "rank R: shrinkrace ok|wrong"
 *   shrink   MPIX_Comm_revoke(MPI_COMM_WORLD) and MPIX_Comm_shrink while the victim dies: the
 *            new communicator's size, this rank's place in it (the old order without the
 *            victim), an allreduce of the old ranks and a barrier on it: "rank R: shrink: size
 *            S, rank ok|wrong, sum ok|wrong, barrier CLASS"
 *   longjmp  an error handler on MPI_COMM_WORLD that revokes it and longjmps out; MPI_Recv from
 *            the victim runs it; then MPIX_Comm_shrink and an allreduce on the result:
 *            "rank R: longjmp: handler ran N, revoked F, shrink size S, sum ok|wrong"
 *   rndv     a rendezvous cut in the middle: the victim starts MPI_Isend of 256 MiB to the last
 *            survivor and MPI_Irecv of 256 MiB from the first, drives them with MPI_Test for
 *            SECONDS (default 0.003; the transfers take tens of ms), and dies ("rank V: its
 *            receive done|under way when dying"); the last survivor's MPI_Recv returns
 *            MPIX_ERR_PROC_FAILED, or MPI_SUCCESS with every byte the victim sent when it read
 *            them itself (a single-copy get, which the kernel completes once started), the
 *            first's MPI_Send that or MPI_SUCCESS (its data all written before the victim died):
 *            "rank R: rndv send returned CLASS", "rank R: rndv recv returned CLASS[, data
 *            intact|wrong]"
 *   late     a rendezvous left behind: the victim starts MPI_Isend of 1 MiB to the first
 *            survivor and dies 0.2 s later; the first survivor computes for 1 s (the message
 *            waits unmatched, the failure is learnt), then MPI_Recv of it must return
 *            MPIX_ERR_PROC_FAILED, not wait for the rest: "rank R: late recv returned CLASS"
 *   any      MPI_Irecv from MPI_ANY_SOURCE, then MPI_Wait: MPIX_ERR_PROC_FAILED_PENDING, the
 *            receive left pending; a blocking MPI_Recv from MPI_ANY_SOURCE: MPIX_ERR_PROC_FAILED;
 *            MPIX_Comm_get_failed names the victim and MPIX_Comm_failure_get_acked gives
 *            MPI_GROUP_EMPTY; after MPIX_Comm_failure_ack (and MPIX_Comm_ack_failed) the acked
 *            group names it, and the pending receive completes with the message the lowest
 *            survivor then sends to every survivor; a second pending receive, also stopped
 *            (MPIX_ERR_PROC_FAILED_PENDING), is cancelled: "the other CLASS, then cancel:
 *            cancelled"
 * and print "rank R: <what> returned <error class name>", then call MPI_Finalize, which must
 * not wait for the failed rank, and print "rank R: finalized". Output is printf without fflush:
 * a line is not lost when the rank dies right after it (stdout is line-buffered under mpirun).
 */
#include <mpi-ext.h>

/* The feature macros programs test before they use the extension. */
#if !defined(WEFT_HAVE_MPI_EXT_FTMPI) || !defined(OMPI_HAVE_MPI_EXT_FTMPI) ||                      \
    !defined(MPIX_ERR_PROC_FAILED) || !defined(MPIX_ERR_REVOKED) || !defined(MPIX_FT)
#error "mpi-ext.h lacks a feature macro of the fault-tolerance extension"
#endif
#include <mpi.h>

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void compute(double seconds)
{
    volatile double x = 0;
    const double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 100000; ++i)
            x += i * 1e-9;
}

static jmp_buf jump;
static int handled;

/* Revoke the communicator and leave the failed call by longjmp (ULFM allows both). */
static void revoke_and_jump(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    ++handled;
    MPIX_Comm_revoke(*comm);
    longjmp(jump, 1);
}

/* What follows the jump: no local of the function that called setjmp is used after it. */
static void after_jump(MPI_Errhandler eh, int rank, int size, int victim)
{
    MPI_Comm small = MPI_COMM_NULL;
    int n = 0, revoked = 0, sum = 0, expect = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    MPIX_Comm_is_revoked(MPI_COMM_WORLD, &revoked);
    if (MPIX_Comm_shrink(MPI_COMM_WORLD, &small) == MPI_SUCCESS) {
        MPI_Comm_size(small, &n);
        for (int r = 0; r < size; ++r)
            expect += r == victim ? 0 : r;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, small);
        MPI_Comm_free(&small);
    }
    printf("rank %d: longjmp: handler ran %d, revoked %d, shrink size %d, sum %s\n", rank, handled,
           revoked, n, sum == expect ? "ok" : "wrong");
}

static const char *class_name(int rc)
{
    int cls;
    static char text[MPI_MAX_ERROR_STRING];
    int len;
    if (rc == MPI_SUCCESS)
        return "MPI_SUCCESS";
    MPI_Error_class(rc, &cls);
    if (cls == MPIX_ERR_PROC_FAILED)
        return "MPIX_ERR_PROC_FAILED";
    MPI_Error_string(cls, text, &len);
    return text;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mpi_ft kill|exit|abort|stop|none VICTIM [WHAT [S]]\n");
        return 2;
    }
    const char *how = argv[1];
    const int victim = atoi(argv[2]);
    const char *what = argc > 3 ? argv[3] : "compute";
    const int waits = strcmp(what, "recv") == 0 || strcmp(what, "any") == 0 ||
                      strcmp(what, "coll") == 0 || strcmp(what, "agree") == 0 ||
                      strcmp(what, "shrink") == 0 || strcmp(what, "longjmp") == 0 ||
                      strcmp(what, "interagree") == 0 || strcmp(what, "intershrink") == 0 ||
                      strcmp(what, "twoshrinks") == 0;
    const int rndv = strcmp(what, "rndv") == 0, late = strcmp(what, "late") == 0;
    const double seconds = argc > 4 ? atof(argv[4]) : rndv ? 0.003 : waits ? 0.3 : 1.0;
    const size_t big = (size_t)256 << 20;
    int rank, size, flag = 0, *ft = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &flag);
    printf("rank %d: MPIX_FT %s %d\n", rank, flag ? "set" : "unset", flag && ft ? *ft : -1);
    MPI_Comm inter = MPI_COMM_NULL, dups[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
    if (strcmp(what, "twoshrinks") == 0)
        for (int i = 0; i < 2; ++i) {
            MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]);
            MPI_Comm_set_errhandler(dups[i], MPI_ERRORS_RETURN);
        }
    if (strcmp(what, "interagree") == 0 || strcmp(what, "intershrink") == 0) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        MPI_Comm_free(&half);
    }
    if (rank == victim && strcmp(how, "none") != 0) {
        if (waits)
            compute(seconds);
        if (late) {
            static char msg[1 << 20];
            MPI_Request rq;
            MPI_Isend(msg, sizeof msg, MPI_BYTE, victim == 0 ? 1 : 0, 3, MPI_COMM_WORLD, &rq);
            for (const double end = now() + 0.2; now() < end;) {
                int done = 0;
                MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            }
        }
        if (rndv) {
            const int first = victim == 0 ? 1 : 0, last = victim == size - 1 ? size - 2 : size - 1;
            char *out = malloc(big), *in = malloc(big);
            memset(out, 1, big);
            MPI_Request rq[2];
            int done = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Isend(out, (int)big, MPI_BYTE, last, 1, MPI_COMM_WORLD, &rq[0]);
            MPI_Irecv(in, (int)big, MPI_BYTE, first, 2, MPI_COMM_WORLD, &rq[1]);
            for (const double end = now() + seconds; now() < end;)
                MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE);
            MPI_Request_get_status(rq[1], &done, MPI_STATUS_IGNORE);
            printf("rank %d: its receive %s when dying\n", rank, done ? "done" : "under way");
        }
        if (strcmp(how, "kill") == 0) {
            printf("rank %d: dying\n", rank);
            raise(SIGKILL);
        } else if (strcmp(how, "exit") == 0) {
            printf("rank %d: leaving\n", rank);
            exit(0);
        } else if (strcmp(how, "abort") == 0) {
            MPI_Abort(MPI_COMM_WORLD, 7);
        } else if (strcmp(how, "stop") == 0) {
            printf("rank %d: stopping\n", rank);
            fflush(stdout);
            raise(SIGSTOP);
        }
    } else if (strcmp(what, "recv") == 0) {
        int v = 0;
        const int rc = MPI_Recv(&v, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d: recv returned %s\n", rank, class_name(rc));
    } else if (strcmp(what, "agree") == 0) {
        const int first = victim == 0 ? 1 : 0, last = victim == size - 1 ? size - 2 : size - 1;
        int flag = rank == last ? 5 : 7, rc;
        MPI_Request req;
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        printf("rank %d: agree 1 returned %s flag %d\n", rank, class_name(rc), flag);
        MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        flag = 255;
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        printf("rank %d: agree 2 returned %s flag %d\n", rank, class_name(rc), flag);
        flag = rank == first ? 1 : 3;
        rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        printf("rank %d: iagree returned %s flag %d\n", rank, class_name(rc), flag);
    } else if (strcmp(what, "interagree") == 0) {
        /* The AND of the remote group's live members' contributions (all ones but their bit). */
        int expect = 0x7fffffff, rc;
        const int dead = strcmp(how, "none") == 0 ? -1 : victim;
        for (int r = 0; r < size; ++r)
            if (r % 2 != rank % 2 && r != dead)
                expect &= ~(1 << r);
        for (int round = 1; round <= 3; ++round) {
            int f = 0x7fffffff & ~(1 << rank);
            MPI_Request req;
            if (round < 3) {
                rc = MPIX_Comm_agree(inter, &f);
                printf("rank %d: interagree %d returned %s flag %s\n", rank, round, class_name(rc),
                       f == expect ? "ok" : "wrong");
                MPIX_Comm_failure_ack(inter);
            } else if ((rc = MPIX_Comm_iagree(inter, &f, &req)) != MPI_SUCCESS) {
                printf("rank %d: interiagree unsupported %s\n", rank, class_name(rc));
            } else {
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
                printf("rank %d: interiagree returned %s flag %s\n", rank, class_name(rc),
                       f == expect ? "ok" : "wrong");
            }
        }
        MPI_Comm_free(&inter);
    } else if (strcmp(what, "intershrink") == 0) {
        MPI_Comm small = MPI_COMM_NULL;
        int local = 0, remote = 0, me = -1, sum = -1, expect = 0, place = 0, f = 1, rc, arc = -1;
        const int dead = strcmp(how, "none") == 0 ? -1 : victim;
        int want_local = 0, want_remote = 0;
        for (int r = 0; r < size; ++r) {
            if (r == dead)
                continue;
            if (r % 2 == rank % 2) {
                place += r < rank;
                ++want_local;
            } else {
                expect += r;
                ++want_remote;
            }
        }
        MPIX_Comm_revoke(inter);
        rc = MPIX_Comm_shrink(inter, &small);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_size(small, &local);
            MPI_Comm_remote_size(small, &remote);
            MPI_Comm_rank(small, &me);
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, small);
            arc = MPIX_Comm_agree(small, &f);
            rc = MPI_Barrier(small);
        }
        printf("rank %d: intershrink: local %d, remote %d, rank %s, sum %s, agree %s, barrier %s\n",
               rank, local == want_local ? local : -local, remote == want_remote ? remote : -remote,
               me == place ? "ok" : "wrong", sum == expect ? "ok" : "wrong", class_name(arc),
               class_name(rc));
        if (small != MPI_COMM_NULL)
            MPI_Comm_free(&small);
        MPI_Comm_free(&inter);
    } else if (strcmp(what, "twoshrinks") == 0) {
        MPI_Comm small[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
        MPI_Request req[2];
        int n[2] = {0, 0}, sum[2] = {-1, -1}, expect = 0, rc = MPI_SUCCESS;
        const int dead = strcmp(how, "none") == 0 ? -1 : victim;
        for (int r = 0; r < size; ++r)
            expect += r == dead ? 0 : r;
        for (int i = 0; i < 2 && rc == MPI_SUCCESS; ++i)
            rc = MPIX_Comm_ishrink(dups[i], &small[i], &req[i]);
        for (int k = 0; k < 2 && rc == MPI_SUCCESS; ++k) {
            const int i = rank % 2 ? 1 - k : k;
            rc = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < 2 && rc == MPI_SUCCESS; ++i) {
            MPI_Comm_size(small[i], &n[i]);
            rc = MPI_Allreduce(&rank, &sum[i], 1, MPI_INT, MPI_SUM, small[i]);
        }
        printf("rank %d: twoshrinks: sizes %d %d, sums %s, %s\n", rank, n[0], n[1],
               sum[0] == expect && sum[1] == expect ? "ok" : "wrong", class_name(rc));
        for (int i = 0; i < 2; ++i) {
            if (small[i] != MPI_COMM_NULL)
                MPI_Comm_free(&small[i]);
            MPI_Comm_free(&dups[i]);
        }
    } else if (strcmp(what, "shrinkrace") == 0) {
        int good = 1;
        for (int it = 0; it < 20; ++it) {
            MPI_Comm a, b, sa = MPI_COMM_NULL, sb = MPI_COMM_NULL;
            MPI_Request rq[2];
            int s1 = 0, s2 = 0;
            MPI_Comm_dup(MPI_COMM_WORLD, &a);
            MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 0, rank, &b);
            if (rank == 0) {
                MPIX_Comm_ishrink(a, &sa, &rq[0]);
                MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
            } else if (rank % 2) {
                MPIX_Comm_ishrink(a, &sa, &rq[0]);
                MPIX_Comm_ishrink(b, &sb, &rq[1]);
                MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            } else {
                MPIX_Comm_ishrink(b, &sb, &rq[1]);
                MPIX_Comm_ishrink(a, &sa, &rq[0]);
                MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            }
            MPI_Allreduce(&rank, &s1, 1, MPI_INT, MPI_SUM, sa);
            good &= s1 == size * (size - 1) / 2;
            if (sb != MPI_COMM_NULL) {
                MPI_Allreduce(&rank, &s2, 1, MPI_INT, MPI_SUM, sb);
                good &= s2 == size * (size - 1) / 2;
                MPI_Comm_free(&sb);
                MPI_Comm_free(&b);
            }
            MPI_Comm_free(&sa);
            MPI_Comm_free(&a);
        }
        printf("rank %d: shrinkrace %s\n", rank, good ? "ok" : "wrong");
    } else if (strcmp(what, "shrink") == 0) {
        MPI_Comm small = MPI_COMM_NULL;
        int n = 0, me = -1, sum = 0, expect = 0, rc;
        const int dead = strcmp(how, "none") == 0 ? -1 : victim;
        MPIX_Comm_revoke(MPI_COMM_WORLD);
        rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &small);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_size(small, &n);
            MPI_Comm_rank(small, &me);
            for (int r = 0; r < size; ++r)
                expect += r == dead ? 0 : r;
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, small);
            rc = MPI_Barrier(small);
        }
        printf("rank %d: shrink: size %d, rank %s, sum %s, barrier %s\n", rank, n,
               me == (dead >= 0 && rank > dead ? rank - 1 : rank) ? "ok" : "wrong",
               sum == expect ? "ok" : "wrong", class_name(rc));
        if (small != MPI_COMM_NULL)
            MPI_Comm_free(&small);
    } else if (strcmp(what, "longjmp") == 0) {
        static MPI_Errhandler eh;
        static int v;
        MPI_Comm_create_errhandler(revoke_and_jump, &eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
        if (setjmp(jump) == 0)
            MPI_Recv(&v, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        after_jump(eh, rank, size, victim);
    } else if (strcmp(what, "coll") == 0) {
        const int root = victim == 0 ? 1 : 0, n = 100000;
        int *a = malloc(sizeof(int) * n), *b = malloc(sizeof(int) * n * 1);
        int *all = malloc(sizeof(int) * size), *one = malloc(sizeof(int) * size);
        int v = rank, w = 0, rc;
        MPI_Comm dup;
        for (int i = 0; i < n; ++i)
            a[i] = i;
        for (int i = 0; i < size; ++i)
            one[i] = rank;
        rc = MPI_Barrier(MPI_COMM_WORLD);
        printf("rank %d: barrier returned %s\n", rank, class_name(rc));
        rc = MPI_Bcast(&v, 1, MPI_INT, root, MPI_COMM_WORLD);
        printf("rank %d: bcast returned %s\n", rank, class_name(rc));
        rc = MPI_Reduce(&v, &w, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        printf("rank %d: reduce returned %s\n", rank, class_name(rc));
        rc = MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d: allreduce returned %s\n", rank, class_name(rc));
        rc = MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d: large allreduce returned %s\n", rank, class_name(rc));
        rc = MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        printf("rank %d: allgather returned %s\n", rank, class_name(rc));
        rc = MPI_Alltoall(one, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        printf("rank %d: alltoall returned %s\n", rank, class_name(rc));
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        printf("rank %d: comm_dup returned %s\n", rank, class_name(rc));
        free(a);
        free(b);
        free(all);
        free(one);
    } else if (strcmp(what, "any") == 0) {
        int v = -1, rc, n = 0, world = -1, cmp;
        const int leader = victim == 0 ? 1 : 0;
        MPI_Request req;
        MPI_Group failed, acked, world_group;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Request other;
        int w = -1, cancelled = 0;
        MPI_Status st;
        MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req);
        MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &other);
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        printf("rank %d: wait returned %s, request %s\n", rank, class_name(rc),
               req == MPI_REQUEST_NULL ? "freed" : "pending");
        /* A stopped receive can be cancelled too. */
        rc = MPI_Wait(&other, MPI_STATUS_IGNORE);
        MPI_Cancel(&other);
        MPI_Wait(&other, &st);
        MPI_Test_cancelled(&st, &cancelled);
        printf("rank %d: the other %s, then cancel: %s\n", rank, class_name(rc),
               cancelled && other == MPI_REQUEST_NULL ? "cancelled" : "not cancelled");
        rc = MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d: blocking any-source recv returned %s\n", rank, class_name(rc));
        MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed);
        MPI_Group_size(failed, &n);
        if (n == 1) {
            int zero = 0;
            MPI_Group_translate_ranks(failed, 1, &zero, world_group, &world);
        }
        MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked);
        printf("rank %d: failed group %d (rank %d), acked group %s\n", rank, n, world,
               acked == MPI_GROUP_EMPTY ? "MPI_GROUP_EMPTY" : "not empty");
        MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked);
        MPI_Group_compare(acked, failed, &cmp);
        MPIX_Comm_ack_failed(MPI_COMM_WORLD, 0, &n);
        printf("rank %d: after ack: acked group %s, %d acked\n", rank,
               cmp == MPI_IDENT ? "the failed one" : "different", n);
        MPI_Group_free(&failed);
        if (acked != MPI_GROUP_EMPTY)
            MPI_Group_free(&acked);
        MPI_Group_free(&world_group);
        /* Every survivor is ready; then the leader sends to each one's pending receive. */
        if (rank == leader) {
            for (int r = 0; r < size; ++r)
                if (r != victim && r != leader)
                    MPI_Recv(&n, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int r = 0; r < size; ++r) {
                const int token = 1000 + r;
                if (r != victim)
                    MPI_Send(&token, 1, MPI_INT, r, 5, MPI_COMM_WORLD);
            }
        } else {
            MPI_Send(&rank, 1, MPI_INT, leader, 7, MPI_COMM_WORLD);
        }
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        printf("rank %d: pending receive completed: %s, %s\n", rank, class_name(rc),
               v == 1000 + rank ? "data right" : "data wrong");
    } else if (late) {
        if (rank == (victim == 0 ? 1 : 0)) {
            static char msg[1 << 20];
            compute(1.0);
            const int rc =
                MPI_Recv(msg, sizeof msg, MPI_BYTE, victim, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("rank %d: late recv returned %s\n", rank, class_name(rc));
        }
    } else if (rndv) {
        const int first = victim == 0 ? 1 : 0, last = victim == size - 1 ? size - 2 : size - 1;
        char *buf = rank == first || rank == last ? malloc(big) : NULL;
        if (buf)
            memset(buf, 2, big);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == first) {
            const int rc = MPI_Send(buf, (int)big, MPI_BYTE, victim, 2, MPI_COMM_WORLD);
            printf("rank %d: rndv send returned %s\n", rank, class_name(rc));
        }
        if (rank == last) {
            const int rc =
                MPI_Recv(buf, (int)big, MPI_BYTE, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            size_t i = 0;
            while (rc == MPI_SUCCESS && i < big && buf[i] == 1)
                ++i;
            printf("rank %d: rndv recv returned %s%s\n", rank, class_name(rc),
                   rc != MPI_SUCCESS ? ""
                   : i == big        ? ", data intact"
                                     : ", data wrong");
        }
        free(buf);
    } else if (strcmp(what, "send") == 0) {
        static char buf[262144];
        compute(seconds);
        int rc = MPI_Send(buf, sizeof buf, MPI_BYTE, victim, 0, MPI_COMM_WORLD);
        printf("rank %d: send returned %s\n", rank, class_name(rc));
        rc = MPI_Recv(buf, sizeof buf, MPI_BYTE, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d: recv returned %s\n", rank, class_name(rc));
    } else {
        /* Compute without MPI calls: the failure must not need one to be learnt, nor declare
         * this rank dead. */
        compute(seconds);
    }
    MPI_Finalize();
    printf("rank %d: finalized\n", rank);
    return 0;
}
