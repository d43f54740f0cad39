/* intercoll: every collective on an intercommunicator (MPI-3.1 5.2.2), blocking and not.
 *
 * MPI_COMM_WORLD splits into a low group (ranks below n/3, at least one) and a high group (the
 * rest), of unequal sizes where the world allows, joined by MPI_Intercomm_create. Each
 * collective runs in both directions: each group in turn holds the root (MPI_ROOT at the root,
 * MPI_PROC_NULL at the rest of its group, whose buffers must stay untouched), and the
 * all-to-all kinds give each group the other group's data (the reductions: the reduction of
 * the other group's contributions). A strided type (two ints with a gap between them) takes
 * part on one side of bcast, gather, allgather, alltoallw, allreduce and reduce. Values come
 * from world ranks and are checked against references computed here. Scan and exscan, and
 * MPI_IN_PLACE, must be refused; an ibarrier and an iallreduce must return before the other
 * group enters. At 1 rank there is no second group: only the success line. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "intercoll"
#include "test_program.h"

#define GAP      (-777) /* what untouched ints hold */
#define MAXN     8      /* ranks in a group, at most */
#define BUF      512    /* ints in every test buffer */
#define RS_TOTAL 12     /* elements of reduce_scatter's vectors */

static int size, nlow, high, lsize, rsize, lrank;
static MPI_Comm inter;
static MPI_Datatype strided; /* 2 ints, the second 2 ints after the first (extent 3 ints) */

/* World ranks of the local group's rank r and of the remote group's rank r. */
static int wl(int r) { return high ? nlow + r : r; }
static int wrem(int r) { return high ? r : nlow + r; }

static int val(int w, int i) { return w * 1000 + i; }
/* What world rank `from` sends world rank `to` in the all-to-all kinds. */
static int pair(int from, int to, int i) { return from * 10000 + to * 100 + i; }
/* alltoallv: ints sent by local rank a of one group to local rank b of the other. */
static int cnt(int a, int b) { return (a + 2 * b) % 3 + 1; }

static void fill(int *b, int v)
{
    for (int i = 0; i < BUF; ++i)
        b[i] = v;
}
static int untouched(const int *b)
{
    for (int i = 0; i < BUF; ++i)
        if (b[i] != GAP)
            return 0;
    return 1;
}

/* Run a collective: the blocking call, or the non-blocking one (which names `rq`) and a wait. */
#define RUN(nb, what, blocking, nonblocking)                                                       \
    do {                                                                                           \
        int e_;                                                                                    \
        if (nb) {                                                                                  \
            MPI_Request rq = MPI_REQUEST_NULL;                                                     \
            e_ = (nonblocking);                                                                    \
            CHECK(e_ == MPI_SUCCESS, "%s: I-call returned %d", what, e_);                          \
            e_ = MPI_Wait(&rq, MPI_STATUS_IGNORE);                                                 \
        } else {                                                                                   \
            e_ = (blocking);                                                                       \
        }                                                                                          \
        CHECK(e_ == MPI_SUCCESS, "%s (%s) returned %d", what, nb ? "non-blocking" : "blocking",    \
              e_);                                                                                 \
    } while (0)

/* The root argument for a collective whose root is rank `root` of group `rg` (0 low, 1 high). */
static int root_arg(int rg, int root)
{
    if (rg != high)
        return root;
    return lrank == root ? MPI_ROOT : MPI_PROC_NULL;
}

static void rooted(int nb, int rg)
{
    const int in_root_group = rg == high;
    const int root = (in_root_group ? lsize : rsize) - 1; /* the root group's last rank */
    const int ra = root_arg(rg, root);
    const int is_root = ra == MPI_ROOT, idle = ra == MPI_PROC_NULL;
    const int rootw = in_root_group ? wl(root) : wrem(root);
    static int a[BUF], b[BUF];
    char what[64];

    /* bcast: 5 ints; the receivers take them as a strided type on odd world ranks. */
    snprintf(what, sizeof what, "bcast from group %d", rg);
    fill(a, GAP);
    if (is_root)
        for (int i = 0; i < 6; ++i)
            a[i] = val(rank, i);
    if (!in_root_group && rank % 2)
        RUN(nb, what, MPI_Bcast(a, 3, strided, ra, inter),
            MPI_Ibcast(a, 3, strided, ra, inter, &rq));
    else
        RUN(nb, what, MPI_Bcast(a, 6, MPI_INT, ra, inter),
            MPI_Ibcast(a, 6, MPI_INT, ra, inter, &rq));
    if (idle)
        CHECK(untouched(a), "%s: an MPI_PROC_NULL rank's buffer changed", what);
    else if (!in_root_group) {
        for (int i = 0; i < 6; ++i) {
            const int at = rank % 2 ? (i / 2) * 3 + (i % 2) * 2 : i;
            CHECK(a[at] == val(rootw, i), "%s: int %d is %d, expected %d", what, i, a[at],
                  val(rootw, i));
        }
        if (rank % 2)
            for (int e = 0; e < 3; ++e)
                CHECK(a[e * 3 + 1] == GAP, "%s: a gap of the strided type changed", what);
    }

    /* reduce: 2 strided elements (4 ints) summed over the other group. */
    snprintf(what, sizeof what, "reduce to group %d", rg);
    fill(a, GAP);
    fill(b, GAP);
    for (int i = 0; i < 4; ++i)
        a[i] = val(rank, i);
    if (is_root)
        RUN(nb, what, MPI_Reduce(a, b, 2, strided, MPI_SUM, ra, inter),
            MPI_Ireduce(a, b, 2, strided, MPI_SUM, ra, inter, &rq));
    else {
        /* the senders' strided elements: ints 0, 2, 3, 5 of a */
        int s[6] = {a[0], GAP, a[1], a[2], GAP, a[3]};
        RUN(nb, what, MPI_Reduce(s, b, 2, strided, MPI_SUM, ra, inter),
            MPI_Ireduce(s, b, 2, strided, MPI_SUM, ra, inter, &rq));
    }
    if (is_root) {
        for (int i = 0; i < 4; ++i) {
            int want = 0;
            for (int r = 0; r < rsize; ++r)
                want += val(wrem(r), i);
            const int at = (i / 2) * 3 + (i % 2) * 2;
            CHECK(b[at] == want, "%s: int %d is %d, expected %d", what, i, b[at], want);
        }
        CHECK(b[1] == GAP && b[4] == GAP, "%s: a gap of the strided type changed", what);
    } else {
        CHECK(untouched(b), "%s: a non-root's receive buffer changed", what);
    }

    /* gather: 2 ints from every process of the other group; the root takes them strided. */
    snprintf(what, sizeof what, "gather to group %d", rg);
    fill(a, GAP);
    for (int i = 0; i < 2; ++i)
        a[i] = val(rank, i);
    fill(b, GAP);
    RUN(nb, what, MPI_Gather(a, 2, MPI_INT, b, 1, strided, ra, inter),
        MPI_Igather(a, 2, MPI_INT, b, 1, strided, ra, inter, &rq));
    if (is_root) {
        for (int r = 0; r < rsize; ++r) {
            CHECK(b[3 * r] == val(wrem(r), 0) && b[3 * r + 2] == val(wrem(r), 1) &&
                      b[3 * r + 1] == GAP,
                  "%s: block %d is %d %d %d", what, r, b[3 * r], b[3 * r + 1], b[3 * r + 2]);
        }
    } else {
        CHECK(untouched(b), "%s: a non-root's receive buffer changed", what);
    }

    /* gatherv: r + 1 ints from remote rank r, blocks 10 ints apart. */
    snprintf(what, sizeof what, "gatherv to group %d", rg);
    int counts[MAXN], displs[MAXN];
    for (int r = 0; r < MAXN; ++r) {
        counts[r] = r + 1;
        displs[r] = 10 * r;
    }
    fill(a, GAP);
    for (int i = 0; i < lrank + 1; ++i)
        a[i] = val(rank, i);
    fill(b, GAP);
    RUN(nb, what, MPI_Gatherv(a, lrank + 1, MPI_INT, b, counts, displs, MPI_INT, ra, inter),
        MPI_Igatherv(a, lrank + 1, MPI_INT, b, counts, displs, MPI_INT, ra, inter, &rq));
    if (is_root) {
        for (int r = 0; r < rsize; ++r)
            for (int i = 0; i < 10; ++i) {
                const int want = i <= r ? val(wrem(r), i) : GAP;
                CHECK(b[10 * r + i] == want, "%s: block %d int %d is %d, expected %d", what, r, i,
                      b[10 * r + i], want);
            }
    } else {
        CHECK(untouched(b), "%s: a non-root's receive buffer changed", what);
    }

    /* scatter: block r (3 ints) to remote rank r. */
    snprintf(what, sizeof what, "scatter from group %d", rg);
    fill(a, GAP);
    if (is_root)
        for (int i = 0; i < 3 * rsize; ++i)
            a[i] = val(rank, i);
    fill(b, GAP);
    RUN(nb, what, MPI_Scatter(a, 3, MPI_INT, b, 3, MPI_INT, ra, inter),
        MPI_Iscatter(a, 3, MPI_INT, b, 3, MPI_INT, ra, inter, &rq));
    if (in_root_group) {
        CHECK(untouched(b), "%s: a root group's receive buffer changed", what);
    } else {
        for (int i = 0; i < 3; ++i)
            CHECK(b[i] == val(rootw, 3 * lrank + i), "%s: int %d is %d, expected %d", what, i, b[i],
                  val(rootw, 3 * lrank + i));
        CHECK(b[3] == GAP, "%s: wrote past the block", what);
    }

    /* scatterv: r + 1 ints to remote rank r, from 10 r. */
    snprintf(what, sizeof what, "scatterv from group %d", rg);
    fill(a, GAP);
    if (is_root)
        for (int i = 0; i < BUF; ++i)
            a[i] = val(rank, i);
    fill(b, GAP);
    RUN(nb, what, MPI_Scatterv(a, counts, displs, MPI_INT, b, lrank + 1, MPI_INT, ra, inter),
        MPI_Iscatterv(a, counts, displs, MPI_INT, b, lrank + 1, MPI_INT, ra, inter, &rq));
    if (in_root_group) {
        CHECK(untouched(b), "%s: a root group's receive buffer changed", what);
    } else {
        for (int i = 0; i <= lrank + 1; ++i) {
            const int want = i <= lrank ? val(rootw, 10 * lrank + i) : GAP;
            CHECK(b[i] == want, "%s: int %d is %d, expected %d", what, i, b[i], want);
        }
    }
}

static void all(int nb)
{
    static int a[BUF], b[BUF];
    const char *what;

    what = "barrier";
    RUN(nb, what, MPI_Barrier(inter), MPI_Ibarrier(inter, &rq));

    /* allreduce: 2 strided elements (4 ints) summed over the other group. The non-blocking
     * form frees its (duplicated) datatype before the wait. */
    what = "allreduce";
    fill(a, GAP);
    fill(b, GAP);
    const int pos[4] = {0, 2, 3, 5};
    for (int i = 0; i < 4; ++i)
        a[pos[i]] = val(rank, i);
    if (nb) {
        MPI_Datatype t;
        MPI_Type_dup(strided, &t);
        MPI_Request rq;
        int e = MPI_Iallreduce(a, b, 2, t, MPI_SUM, inter, &rq);
        MPI_Type_free(&t);
        CHECK(e == MPI_SUCCESS, "iallreduce returned %d", e);
        e = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        CHECK(e == MPI_SUCCESS, "iallreduce's wait returned %d", e);
    } else {
        RUN(0, what, MPI_Allreduce(a, b, 2, strided, MPI_SUM, inter), MPI_SUCCESS);
    }
    for (int i = 0; i < 4; ++i) {
        int want = 0;
        for (int r = 0; r < rsize; ++r)
            want += val(wrem(r), i);
        CHECK(b[pos[i]] == want, "%s: int %d is %d, expected %d", what, i, b[pos[i]], want);
    }
    CHECK(b[1] == GAP && b[4] == GAP && b[6] == GAP, "%s: a gap changed", what);

    /* allreduce with MAX over ints: the other group's largest world rank. */
    what = "allreduce max";
    int mine = rank, got = -1;
    RUN(nb, what, MPI_Allreduce(&mine, &got, 1, MPI_INT, MPI_MAX, inter),
        MPI_Iallreduce(&mine, &got, 1, MPI_INT, MPI_MAX, inter, &rq));
    CHECK(got == wrem(rsize - 1), "%s: %d, expected %d", what, got, wrem(rsize - 1));

    /* allgather: 2 ints from every process of the other group, taken strided. */
    what = "allgather";
    fill(a, GAP);
    a[0] = val(rank, 0);
    a[1] = val(rank, 1);
    fill(b, GAP);
    RUN(nb, what, MPI_Allgather(a, 2, MPI_INT, b, 1, strided, inter),
        MPI_Iallgather(a, 2, MPI_INT, b, 1, strided, inter, &rq));
    for (int r = 0; r < rsize; ++r)
        CHECK(b[3 * r] == val(wrem(r), 0) && b[3 * r + 2] == val(wrem(r), 1) && b[3 * r + 1] == GAP,
              "%s: block %d is %d %d %d", what, r, b[3 * r], b[3 * r + 1], b[3 * r + 2]);
    CHECK(b[3 * rsize] == GAP, "%s: wrote past the blocks", what);

    /* allgatherv: r + 1 ints from remote rank r, in reverse order of blocks 9 ints apart. */
    what = "allgatherv";
    int counts[MAXN], displs[MAXN];
    for (int r = 0; r < rsize; ++r) {
        counts[r] = r + 1;
        displs[r] = 9 * (rsize - 1 - r);
    }
    fill(a, GAP);
    for (int i = 0; i <= lrank; ++i)
        a[i] = val(rank, i);
    fill(b, GAP);
    RUN(nb, what, MPI_Allgatherv(a, lrank + 1, MPI_INT, b, counts, displs, MPI_INT, inter),
        MPI_Iallgatherv(a, lrank + 1, MPI_INT, b, counts, displs, MPI_INT, inter, &rq));
    for (int r = 0; r < rsize; ++r)
        for (int i = 0; i < 9; ++i) {
            const int want = i <= r ? val(wrem(r), i) : GAP;
            CHECK(b[displs[r] + i] == want, "%s: block %d int %d is %d, expected %d", what, r, i,
                  b[displs[r] + i], want);
        }

    /* alltoall: block r (2 ints) to remote rank r. */
    what = "alltoall";
    fill(a, GAP);
    for (int r = 0; r < rsize; ++r)
        for (int i = 0; i < 2; ++i)
            a[2 * r + i] = pair(rank, wrem(r), i);
    fill(b, GAP);
    RUN(nb, what, MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, inter),
        MPI_Ialltoall(a, 2, MPI_INT, b, 2, MPI_INT, inter, &rq));
    for (int r = 0; r < rsize; ++r)
        for (int i = 0; i < 2; ++i)
            CHECK(b[2 * r + i] == pair(wrem(r), rank, i), "%s: from %d int %d is %d, expected %d",
                  what, r, i, b[2 * r + i], pair(wrem(r), rank, i));
    CHECK(b[2 * rsize] == GAP, "%s: wrote past the blocks", what);

    /* alltoallv: cnt(me, r) ints to remote rank r, from 4 r; cnt(r, me) from it, at 5 r. */
    what = "alltoallv";
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
    fill(a, GAP);
    for (int r = 0; r < rsize; ++r) {
        sc[r] = cnt(lrank, r);
        sd[r] = 4 * r;
        rc[r] = cnt(r, lrank);
        rd[r] = 5 * r;
        for (int i = 0; i < sc[r]; ++i)
            a[sd[r] + i] = pair(rank, wrem(r), i);
    }
    fill(b, GAP);
    RUN(nb, what, MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, inter),
        MPI_Ialltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, inter, &rq));
    for (int r = 0; r < rsize; ++r)
        for (int i = 0; i < 5; ++i) {
            const int want = i < rc[r] ? pair(wrem(r), rank, i) : GAP;
            CHECK(b[rd[r] + i] == want, "%s: from %d int %d is %d, expected %d", what, r, i,
                  b[rd[r] + i], want);
        }

    /* alltoallw: 2 ints to each remote rank; from odd remote ranks taken as one strided
     * element, from even ones as 2 ints; byte displacements. */
    what = "alltoallw";
    MPI_Datatype st[MAXN], rt[MAXN];
    fill(a, GAP);
    for (int r = 0; r < rsize; ++r) {
        sc[r] = 2;
        sd[r] = (int)(2 * r * sizeof(int));
        st[r] = MPI_INT;
        rc[r] = r % 2 ? 1 : 2;
        rd[r] = (int)(4 * r * sizeof(int));
        rt[r] = r % 2 ? strided : MPI_INT;
        a[2 * r] = pair(rank, wrem(r), 0);
        a[2 * r + 1] = pair(rank, wrem(r), 1);
    }
    fill(b, GAP);
    RUN(nb, what, MPI_Alltoallw(a, sc, sd, st, b, rc, rd, rt, inter),
        MPI_Ialltoallw(a, sc, sd, st, b, rc, rd, rt, inter, &rq));
    for (int r = 0; r < rsize; ++r) {
        const int *p = b + 4 * r, second = r % 2 ? 2 : 1;
        CHECK(p[0] == pair(wrem(r), rank, 0) && p[second] == pair(wrem(r), rank, 1) &&
                  p[3] == GAP && (r % 2 == 0 || p[1] == GAP),
              "%s: from %d: %d %d %d %d", what, r, p[0], p[1], p[2], p[3]);
    }

    /* reduce_scatter: RS_TOTAL elements in both groups, spread over the local group as evenly
     * as it goes; each gets its part of the other group's sum. */
    what = "reduce_scatter";
    int at = 0, my_at = 0;
    for (int i = 0; i < lsize; ++i) {
        counts[i] = RS_TOTAL / lsize + (i < RS_TOTAL % lsize);
        if (i == lrank)
            my_at = at;
        at += counts[i];
    }
    fill(a, GAP);
    for (int j = 0; j < RS_TOTAL; ++j)
        a[j] = val(rank, j);
    fill(b, GAP);
    RUN(nb, what, MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, inter),
        MPI_Ireduce_scatter(a, b, counts, MPI_INT, MPI_SUM, inter, &rq));
    for (int i = 0; i <= counts[lrank]; ++i) {
        int want = GAP;
        if (i < counts[lrank]) {
            want = 0;
            for (int r = 0; r < rsize; ++r)
                want += val(wrem(r), my_at + i);
        }
        CHECK(b[i] == want, "%s: int %d is %d, expected %d", what, i, b[i], want);
    }

    /* reduce_scatter_block: recvcount is the other group's size, so that both groups' vectors
     * have lsize * rsize elements. */
    what = "reduce_scatter_block";
    const int total = lsize * rsize;
    fill(a, GAP);
    for (int j = 0; j < total; ++j)
        a[j] = val(rank, j);
    fill(b, GAP);
    RUN(nb, what, MPI_Reduce_scatter_block(a, b, rsize, MPI_INT, MPI_SUM, inter),
        MPI_Ireduce_scatter_block(a, b, rsize, MPI_INT, MPI_SUM, inter, &rq));
    for (int i = 0; i <= rsize; ++i) {
        int want = GAP;
        if (i < rsize) {
            want = 0;
            for (int r = 0; r < rsize; ++r)
                want += val(wrem(r), lrank * rsize + i);
        }
        CHECK(b[i] == want, "%s: int %d is %d, expected %d", what, i, b[i], want);
    }
}

/* The non-blocking forms return before the other group has entered: world rank 0 starts an
 * ibarrier and an iallreduce while the high group waits for its word to enter (a call that ran
 * to completion would never return). */
static void progressed(void)
{
    MPI_Request rq[2];
    int go = 1, mine = rank, got = -1, done = 0;
    if (high)
        MPI_Recv(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ibarrier(inter, &rq[0]);
    MPI_Iallreduce(&mine, &got, 1, MPI_INT, MPI_MAX, inter, &rq[1]);
    if (rank == 0) {
        MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE);
        CHECK(!done, "ibarrier and iallreduce completed before the other group entered");
        for (int r = nlow; r < size; ++r)
            MPI_Send(&go, 1, MPI_INT, r, 99, MPI_COMM_WORLD);
    }
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    CHECK(got == wrem(rsize - 1), "iallreduce after the word: %d, expected %d", got,
          wrem(rsize - 1));
}

/* What MPI does not define on an intercommunicator must be refused. */
static void refused(void)
{
    int x = 1, y = 0;
    MPI_Request rq;
    int e = MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter), cls = 0;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_Scan on an intercommunicator gave class %d", cls);
    e = MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, inter);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_Exscan on an intercommunicator gave class %d", cls);
    e = MPI_Iscan(&x, &y, 1, MPI_INT, MPI_SUM, inter, &rq);
    CHECK(e != MPI_SUCCESS, "MPI_Iscan on an intercommunicator succeeded");
    e = MPI_Iexscan(&x, &y, 1, MPI_INT, MPI_SUM, inter, &rq);
    CHECK(e != MPI_SUCCESS, "MPI_Iexscan on an intercommunicator succeeded");
    e = MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, &y, 1, MPI_INT, inter);
    CHECK(e != MPI_SUCCESS, "MPI_Allgather with MPI_IN_PLACE on an intercommunicator succeeded");
    e = MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, &y, 1, MPI_INT, inter);
    CHECK(e != MPI_SUCCESS, "MPI_Alltoall with MPI_IN_PLACE on an intercommunicator succeeded");
    e = MPI_Reduce_scatter_block(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, inter);
    CHECK(e != MPI_SUCCESS,
          "MPI_Reduce_scatter_block with MPI_IN_PLACE on an intercommunicator succeeded");
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    if (size > 1) {
        nlow = size / 3 > 0 ? size / 3 : 1;
        high = rank >= nlow;
        MPI_Comm local;
        MPI_Comm_split(MPI_COMM_WORLD, high, rank, &local);
        int e = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, high ? 0 : nlow, 7, &inter);
        CHECK(e == MPI_SUCCESS, "MPI_Intercomm_create returned %d", e);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        MPI_Comm_size(inter, &lsize);
        MPI_Comm_remote_size(inter, &rsize);
        MPI_Comm_rank(inter, &lrank);
        CHECK(lsize == (high ? size - nlow : nlow) && rsize == size - lsize,
              "group sizes %d and %d", lsize, rsize);

        MPI_Datatype v;
        MPI_Type_vector(2, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 3 * (MPI_Aint)sizeof(int), &strided);
        MPI_Type_commit(&strided);
        MPI_Type_free(&v);

        for (int nb = 0; nb < 2; ++nb) {
            for (int rg = 0; rg < 2; ++rg)
                rooted(nb, rg);
            all(nb);
        }
        progressed();
        refused();

        MPI_Type_free(&strided);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    int any = 0;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && any == 0 && size == 1)
        printf("intercoll: 1 ranks: no second group to make an intercommunicator with\n");
    else if (rank == 0 && any == 0)
        printf("intercoll: %d ranks: groups of %d and %d, every collective on an "
               "intercommunicator right in both directions, blocking and not (progressed by "
               "the request), with MPI_ROOT, MPI_PROC_NULL and a strided type; scan, exscan "
               "and MPI_IN_PLACE refused\n",
               size, nlow, size - nlow);
    MPI_Finalize();
    return any != 0;
}
