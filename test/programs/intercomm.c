/* intercomm: making communicators from intercommunicators, and the calls that make communicators
 * of part of a group. MPI_COMM_WORLD is split into two groups of unequal size (a third and the
 * rest), joined by MPI_Intercomm_create; then MPI_Comm_dup, MPI_Comm_split (by parity, keys
 * reversed) and MPI_Comm_create (the even local ranks of each group) on the intercommunicator,
 * MPI_Intercomm_merge both ways, MPI_Comm_create_group (two at once, told apart by their tags)
 * and MPI_Comm_idup (non-blocking: two at once, started in opposite orders). Every result's groups
 * are checked, as world ranks, against the rule computed here, and each new communicator carries a
 * message. Any number of ranks (the intercommunicator needs 2). */
#include <mpi.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "intercomm"
#include "test_program.h"

static int size;

/* The world ranks of a communicator's local (remote = 0) or remote group, in its order. */
static int group_world(MPI_Comm c, int remote, int *out)
{
    MPI_Group g, world;
    int n;
    if (remote)
        MPI_Comm_remote_group(c, &g);
    else
        MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(g, &n);
    int *idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; ++i)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, world, out);
    free(idx);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    return n;
}

/* Check that c's group (remote or local) is exactly want[0..n). */
static void expect_group(MPI_Comm c, int remote, const int *want, int n, const char *what)
{
    int got[64];
    const int m = group_world(c, remote, got);
    CHECK(m == n, "%s: %s group of %d, expected %d", what, remote ? "remote" : "local", m, n);
    for (int i = 0; i < m && i < n; ++i)
        CHECK(got[i] == want[i], "%s: %s rank %d is world %d, expected %d", what,
              remote ? "remote" : "local", i, got[i], want[i]);
}

/* A message across intercommunicator c: local rank 0 of each group to remote rank 0. */
static void ping(MPI_Comm c, int my_first_world, int their_first_world, const char *what)
{
    int lr;
    MPI_Comm_rank(c, &lr);
    if (lr != 0)
        return;
    int got = -1;
    MPI_Sendrecv(&my_first_world, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, c, MPI_STATUS_IGNORE);
    CHECK(got == their_first_world, "%s: remote leader said %d, expected %d", what, got,
          their_first_world);
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* MPI_Comm_create_group, two at once: the even world ranks (tag 7) and the odd ones (tag 8),
     * every other rank of each in reverse order. */
    {
        MPI_Group world, g;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int mem[64], n = 0;
        for (int r = size - 1; r >= 0; --r)
            if (r % 2 == rank % 2)
                mem[n++] = r;
        MPI_Group_incl(world, n, mem, &g);
        MPI_Comm c = MPI_COMM_NULL;
        CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, rank % 2 ? 8 : 7, &c) == MPI_SUCCESS,
              "MPI_Comm_create_group failed");
        if (c != MPI_COMM_NULL) {
            expect_group(c, 0, mem, n, "create_group");
            int sum = 0;
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
            int want = 0;
            for (int i = 0; i < n; ++i)
                want += mem[i];
            CHECK(sum == want, "create_group: allreduce %d, expected %d", sum, want);
            MPI_Comm_free(&c);
        }
        /* A process outside the group gets MPI_COMM_NULL; a negative tag is refused. */
        MPI_Comm none = MPI_COMM_WORLD;
        MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 9, &none);
        CHECK(none == MPI_COMM_NULL, "create_group of the empty group");
        CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, -1, &c) == MPI_ERR_TAG,
              "create_group with tag -1");
        MPI_Group_free(&g);
        MPI_Group_free(&world);
    }

    /* MPI_Comm_idup: really non-blocking (rank 0 sends to rank 1 between its idup and the wait,
     * rank 1 receives that before it calls idup), two at once started in opposite orders by
     * even and odd ranks, and an attribute copied by MPI_COMM_DUP_FN. */
    {
        MPI_Comm a, b, da = MPI_COMM_NULL, db = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &b); /* reversed */
        int key, value = 4711, *got = NULL, flag = 0;
        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
        MPI_Comm_set_attr(a, key, &value);
        MPI_Request r[2];
        int token = 0;
        if (rank == 1)
            MPI_Recv(&token, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank % 2 == 0) {
            MPI_Comm_idup(a, &da, &r[0]);
            MPI_Comm_idup(b, &db, &r[1]);
        } else {
            MPI_Comm_idup(b, &db, &r[1]);
            MPI_Comm_idup(a, &da, &r[0]);
        }
        if (rank == 0 && size > 1) {
            token = 99;
            MPI_Send(&token, 1, MPI_INT, 1, 21, MPI_COMM_WORLD);
        }
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        CHECK(rank != 1 || token == 99, "idup: the message around it");
        CHECK(da != MPI_COMM_NULL && db != MPI_COMM_NULL, "idup gave MPI_COMM_NULL");
        if (da != MPI_COMM_NULL && db != MPI_COMM_NULL) {
            int all[64], rev[64];
            for (int i = 0; i < size; ++i)
                all[i] = i, rev[i] = size - 1 - i;
            expect_group(da, 0, all, size, "idup");
            expect_group(db, 0, rev, size, "idup of the reversed");
            MPI_Comm_get_attr(da, key, &got, &flag);
            CHECK(flag && got == &value, "idup: the attribute was not copied");
            int sa = 0, sb = 0;
            MPI_Allreduce(&rank, &sa, 1, MPI_INT, MPI_SUM, da);
            MPI_Allreduce(&rank, &sb, 1, MPI_INT, MPI_SUM, db);
            CHECK(sa == size * (size - 1) / 2 && sb == sa, "idup: allreduces %d %d", sa, sb);
            MPI_Comm_free(&da);
            MPI_Comm_free(&db);
        }
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
        MPI_Comm_free_keyval(&key);
    }

    if (size >= 2) {
        const int nlow = size / 3 > 0 ? size / 3 : 1, low = rank < nlow;
        int mine[64], theirs[64], nm = 0, nt = 0;
        for (int r = 0; r < size; ++r) {
            if ((r < nlow) == low)
                mine[nm++] = r;
            else
                theirs[nt++] = r;
        }
        MPI_Comm half, ic;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? nlow : 0, 11, &ic);
        expect_group(ic, 0, mine, nm, "intercomm");
        expect_group(ic, 1, theirs, nt, "intercomm");

        /* idup of the intercommunicator. */
        MPI_Comm di;
        MPI_Request ri;
        MPI_Comm_idup(ic, &di, &ri);
        MPI_Wait(&ri, MPI_STATUS_IGNORE);
        expect_group(di, 0, mine, nm, "idup (inter)");
        expect_group(di, 1, theirs, nt, "idup (inter)");
        ping(di, mine[0], theirs[0], "idup (inter)");
        MPI_Comm_free(&di);

        /* dup: the same groups, a new context. */
        MPI_Comm d;
        CHECK(MPI_Comm_dup(ic, &d) == MPI_SUCCESS, "MPI_Comm_dup of an intercommunicator failed");
        int flag = 0;
        MPI_Comm_test_inter(d, &flag);
        CHECK(flag, "the dup is not an intercommunicator");
        expect_group(d, 0, mine, nm, "dup");
        expect_group(d, 1, theirs, nt, "dup");
        ping(d, mine[0], theirs[0], "dup");

        /* split by parity of world rank, keys reversed: each side's members of one parity,
         * highest world rank first; MPI_COMM_NULL where the other group has none. */
        MPI_Comm s;
        CHECK(MPI_Comm_split(ic, rank % 2, -rank, &s) == MPI_SUCCESS,
              "MPI_Comm_split of an intercommunicator failed");
        int wl[64], wr[64], nl = 0, nr = 0;
        for (int i = nm - 1; i >= 0; --i)
            if (mine[i] % 2 == rank % 2)
                wl[nl++] = mine[i];
        for (int i = nt - 1; i >= 0; --i)
            if (theirs[i] % 2 == rank % 2)
                wr[nr++] = theirs[i];
        if (nr == 0) {
            CHECK(s == MPI_COMM_NULL, "split: no remote member of my color, yet a communicator");
        } else {
            CHECK(s != MPI_COMM_NULL, "split: MPI_COMM_NULL where both sides have members");
            if (s != MPI_COMM_NULL) {
                expect_group(s, 0, wl, nl, "split");
                expect_group(s, 1, wr, nr, "split");
                ping(s, wl[0], wr[0], "split");
            }
        }
        if (s != MPI_COMM_NULL)
            MPI_Comm_free(&s);

        /* create: the even local ranks of each group. */
        MPI_Group lg, sub;
        MPI_Comm_group(ic, &lg);
        int evens[64], ne = 0, tevens[64], nte = 0;
        for (int i = 0; i < nm; i += 2)
            evens[ne++] = i;
        MPI_Group_incl(lg, ne, evens, &sub);
        for (int i = 0; i < nt; i += 2)
            tevens[nte++] = theirs[i];
        int ewl[64];
        for (int i = 0; i < ne; ++i)
            ewl[i] = mine[evens[i]];
        MPI_Comm cr;
        CHECK(MPI_Comm_create(ic, sub, &cr) == MPI_SUCCESS,
              "MPI_Comm_create on an intercommunicator failed");
        int lr;
        MPI_Comm_rank(ic, &lr);
        if (lr % 2 == 0) {
            CHECK(cr != MPI_COMM_NULL, "create: a member got MPI_COMM_NULL");
            if (cr != MPI_COMM_NULL) {
                expect_group(cr, 0, ewl, ne, "create");
                expect_group(cr, 1, tevens, nte, "create");
                ping(cr, ewl[0], tevens[0], "create");
            }
        } else {
            CHECK(cr == MPI_COMM_NULL, "create: a non-member got a communicator");
        }
        if (cr != MPI_COMM_NULL)
            MPI_Comm_free(&cr);
        MPI_Group_free(&sub);
        MPI_Group_free(&lg);

        /* merge: the group passing high = 0 first; with both high, the group of the lower
         * leader (the low third) first. Either way world order here. */
        for (int both = 0; both < 2; ++both) {
            MPI_Comm m;
            const int high = both ? 1 : !low;
            CHECK(MPI_Intercomm_merge(d, high, &m) == MPI_SUCCESS, "MPI_Intercomm_merge failed");
            int all[64];
            for (int r = 0; r < size; ++r)
                all[r] = r;
            expect_group(m, 0, all, size, both ? "merge (both high)" : "merge");
            int sum = 0;
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, m);
            CHECK(sum == size * (size - 1) / 2, "merge: allreduce %d", sum);
            MPI_Comm_free(&m);
        }
        /* The high group first when the low third passes high. */
        MPI_Comm m;
        MPI_Intercomm_merge(d, low, &m);
        int order[64], k = 0;
        for (int r = nlow; r < size; ++r)
            order[k++] = r;
        for (int r = 0; r < nlow; ++r)
            order[k++] = r;
        expect_group(m, 0, order, size, "merge (high group first)");
        MPI_Comm_free(&m);
        CHECK(MPI_Intercomm_merge(half, 0, &m) == MPI_ERR_COMM, "merge of an intracommunicator");

        MPI_Comm_free(&d);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&half);
    }

    return finish(
        "MPI_Comm_dup, _idup, _split and _create on an intercommunicator of unequal groups, "
        "MPI_Intercomm_merge both ways, MPI_Comm_create_group (two at once): every group right");
}
