/*
 * Point-to-point through Weft's MPI, with data checks, on any number of
 * ranks >= 2: order between a pair, ANY_SOURCE / ANY_TAG, truncation, every
 * send mode (blocking, non-blocking, persistent), zero-byte and large
 * messages, sendrecv(_replace), probe / iprobe / mprobe / improbe, cancel,
 * the Wait/Test families, communicators from dup, split, split_type and
 * create, groups, attributes, names, error classes under MPI_ERRORS_RETURN.
 * Rank 0 prints one summary line; a failure prints what and aborts.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        ++checks;                                                                                  \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "mpi_p2p rank %d, line %d: ", me, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static unsigned char pat(int src, int seq, size_t k) { return (unsigned char)(src * 31 + seq * 7 + k); }

static void fill(unsigned char *b, size_t n, int src, int seq)
{
    for (size_t k = 0; k < n; ++k)
        b[k] = pat(src, seq, k);
}

static int same(const unsigned char *b, size_t n, int src, int seq)
{
    for (size_t k = 0; k < n; ++k)
        if (b[k] != pat(src, seq, k))
            return 0;
    return 1;
}

/* Many messages 0 -> 1 with one tag arrive in order, across protocols. */
static void test_order(void)
{
    const int n = 40;
    const size_t sizes[] = {0, 1, 100, 5000, 70000, 300000};
    unsigned char *buf = malloc(300000);
    if (me == 0) {
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)n);
        unsigned char **bufs = malloc(sizeof(unsigned char *) * (size_t)n);
        for (int i = 0; i < n; ++i) {
            size_t len = sizes[i % 6];
            bufs[i] = malloc(len + 1);
            fill(bufs[i], len, 0, i);
            OK(MPI_Isend(bufs[i], (int)len, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &reqs[i]));
        }
        OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; ++i)
            free(bufs[i]);
        free(bufs);
        free(reqs);
    } else if (me == 1) {
        for (int i = 0; i < n; ++i) {
            MPI_Status st;
            int count;
            OK(MPI_Recv(buf, 300000, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
            OK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK((size_t)count == sizes[i % 6], "message %d: %d bytes, expected %zu", i, count,
                  sizes[i % 6]);
            CHECK(same(buf, (size_t)count, 0, i), "message %d arrived out of order or corrupt", i);
        }
    }
    free(buf);
}

/* Everyone sends to rank 0 with its rank as tag; rank 0 takes them with
 * ANY_SOURCE / ANY_TAG and checks each status. */
static void test_wildcards(void)
{
    if (me != 0) {
        int v = me * 100;
        OK(MPI_Send(&v, 1, MPI_INT, 0, me, MPI_COMM_WORLD));
        return;
    }
    int seen = 0;
    for (int i = 1; i < np; ++i) {
        int v;
        MPI_Status st;
        OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_TAG == st.MPI_SOURCE, "tag %d from source %d", st.MPI_TAG, st.MPI_SOURCE);
        CHECK(v == st.MPI_SOURCE * 100, "value %d from %d", v, st.MPI_SOURCE);
        seen |= 1 << st.MPI_SOURCE;
    }
    CHECK(seen == ((1 << np) - 2), "not every rank was heard: mask %x", seen);
}

/* A message longer than the receive buffer: MPI_ERR_TRUNCATE. */
static void test_truncate(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (me == 0) {
        char big[100000];
        memset(big, 7, sizeof big);
        OK(MPI_Send(big, 10, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
        OK(MPI_Send(big, (int)sizeof big, MPI_BYTE, 1, 10, MPI_COMM_WORLD));
    } else if (me == 1) {
        char small[4];
        MPI_Status st;
        int rc = MPI_Recv(small, 4, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &st);
        int cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "eager truncation gave class %d", cls);
        CHECK(small[0] == 7 && small[3] == 7, "truncated data not delivered");
        rc = MPI_Recv(small, 4, MPI_BYTE, 0, 10, MPI_COMM_WORLD, &st);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "rendezvous truncation gave class %d", cls);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Every send mode, blocking and not, small and large, and zero bytes. */
static void test_modes(void)
{
    static char attach[1 << 20];
    void *detached;
    int dsize;
    OK(MPI_Buffer_attach(attach, sizeof attach));
    const int peer = me ^ 1;
    const size_t sizes[] = {0, 8, 60000, 200000};
    if (peer >= np) {
        /* No partner (odd size): still take part in every barrier. */
        for (int i = 0; i < 8 * 4; ++i)
            OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Buffer_detach(&detached, &dsize));
        return;
    }
    for (int mode = 0; mode < 8; ++mode) {
        for (int s = 0; s < 4; ++s) {
            size_t len = sizes[s];
            unsigned char *out = malloc(len + 1), *in = malloc(len + 1);
            fill(out, len, me, mode * 10 + s);
            MPI_Request rreq, sreq = MPI_REQUEST_NULL;
            MPI_Status st;
            int tag = 1000 + mode * 10 + s;
            OK(MPI_Irecv(in, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rreq));
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* the receive is posted: MPI_Rsend is legal */
            switch (mode) {
            case 0: OK(MPI_Send(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
            case 1: OK(MPI_Bsend(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
            case 2: OK(MPI_Ssend(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
            case 3: OK(MPI_Rsend(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
            case 4: OK(MPI_Isend(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sreq)); break;
            case 5: OK(MPI_Ibsend(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sreq)); break;
            case 6: OK(MPI_Issend(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sreq)); break;
            case 7: OK(MPI_Irsend(out, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sreq)); break;
            }
            OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            OK(MPI_Wait(&rreq, &st));
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK((size_t)count == len && st.MPI_SOURCE == peer && st.MPI_TAG == tag,
                  "mode %d size %zu: count %d source %d tag %d", mode, len, count, st.MPI_SOURCE,
                  st.MPI_TAG);
            CHECK(same(in, len, peer, mode * 10 + s), "mode %d size %zu: data wrong", mode, len);
            free(out);
            free(in);
        }
    }
    OK(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == attach && dsize == (int)sizeof attach, "detach gave a different buffer");
}

/* A synchronous send completes only once the receive is matched. */
static void test_ssend_waits(void)
{
    if (np < 2 || me > 1)
        return;
    int v = 42;
    if (me == 0) {
        MPI_Request r;
        int flag = 0;
        OK(MPI_Issend(&v, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &r));
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.2) {
            if (MPI_Test(&r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag)
                CHECK(0, "MPI_Issend completed (or failed) before the receive was posted");
        }
        OK(MPI_Send(&v, 1, MPI_INT, 1, 78, MPI_COMM_WORLD));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        int a, b;
        OK(MPI_Recv(&b, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&a, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(a == 42 && b == 42, "ssend values %d %d", a, b);
    }
}

static void test_probe_and_mprobe(void)
{
    const int peer = me ^ 1;
    if (peer >= np)
        return;
    int data[300];
    for (int i = 0; i < 300; ++i)
        data[i] = me * 1000 + i;
    OK(MPI_Send(data, 300, MPI_INT, peer, 31, MPI_COMM_WORLD));
    OK(MPI_Send(data, 3, MPI_INT, peer, 32, MPI_COMM_WORLD));
    MPI_Status st;
    OK(MPI_Probe(peer, 31, MPI_COMM_WORLD, &st));
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 300 && st.MPI_TAG == 31, "probe: count %d tag %d", count, st.MPI_TAG);
    int flag = 0;
    while (!flag)
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 32, MPI_COMM_WORLD, &flag, &st));
    CHECK(st.MPI_SOURCE == peer, "iprobe source %d", st.MPI_SOURCE);
    MPI_Message msg;
    OK(MPI_Mprobe(peer, 31, MPI_COMM_WORLD, &msg, &st));
    int in[300];
    OK(MPI_Mrecv(in, 300, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && in[299] == peer * 1000 + 299, "mrecv data");
    flag = 0;
    while (!flag)
        OK(MPI_Improbe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    MPI_Request r;
    OK(MPI_Imrecv(in, 3, MPI_INT, &msg, &r));
    OK(MPI_Wait(&r, &st));
    CHECK(in[2] == peer * 1000 + 2 && st.MPI_TAG == 32, "imrecv data");
    /* Probing MPI_PROC_NULL answers at once. */
    OK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "probe of MPI_PROC_NULL");
}

static void test_cancel_and_persistent(void)
{
    MPI_Request r;
    MPI_Status st;
    int v = 0, flag;
    OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r));
    OK(MPI_Cancel(&r));
    OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "an unmatched receive was not cancelled");

    const int peer = me ^ 1;
    if (peer >= np)
        return;
    int out = 0, in = -1;
    MPI_Request reqs[2];
    OK(MPI_Send_init(&out, 1, MPI_INT, peer, 55, MPI_COMM_WORLD, &reqs[0]));
    OK(MPI_Recv_init(&in, 1, MPI_INT, peer, 55, MPI_COMM_WORLD, &reqs[1]));
    for (int i = 0; i < 5; ++i) {
        out = me * 10 + i;
        OK(MPI_Startall(2, reqs));
        OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        CHECK(in == peer * 10 + i, "persistent round %d got %d", i, in);
        CHECK(reqs[0] != MPI_REQUEST_NULL, "a persistent request was freed by Waitall");
    }
    OK(MPI_Request_free(&reqs[0]));
    OK(MPI_Request_free(&reqs[1]));
}

static void test_wait_families(void)
{
    /* Ring exchange with Waitany / Waitsome / Testall. */
    const int next = (me + 1) % np, prev = (me + np - 1) % np;
    int out[4] = {me, me + 1, me + 2, me + 3}, in[4] = {-1, -1, -1, -1};
    MPI_Request reqs[8];
    for (int i = 0; i < 4; ++i) {
        OK(MPI_Irecv(&in[i], 1, MPI_INT, prev, 60 + i, MPI_COMM_WORLD, &reqs[i]));
        OK(MPI_Isend(&out[i], 1, MPI_INT, next, 60 + i, MPI_COMM_WORLD, &reqs[4 + i]));
    }
    int done = 0, idx;
    while (done < 2) {
        OK(MPI_Waitany(8, reqs, &idx, MPI_STATUS_IGNORE));
        CHECK(idx != MPI_UNDEFINED, "waitany gave undefined");
        ++done;
    }
    int outcount, indices[8];
    while (done < 8) {
        OK(MPI_Waitsome(8, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
        CHECK(outcount != MPI_UNDEFINED, "waitsome undefined with %d done", done);
        done += outcount;
    }
    int flag;
    OK(MPI_Testall(8, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "testall on finished requests");
    for (int i = 0; i < 4; ++i)
        CHECK(in[i] == prev + i, "ring value %d: %d", i, in[i]);
    OK(MPI_Waitany(8, reqs, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED, "waitany on null requests gave %d", idx);
}

static void test_sendrecv(void)
{
    const int next = (me + 1) % np, prev = (me + np - 1) % np;
    int out = me, in = -1;
    MPI_Status st;
    OK(MPI_Sendrecv(&out, 1, MPI_INT, next, 70, &in, 1, MPI_INT, prev, 70, MPI_COMM_WORLD, &st));
    CHECK(in == prev && st.MPI_SOURCE == prev, "sendrecv got %d", in);
    int v = me;
    OK(MPI_Sendrecv_replace(&v, 1, MPI_INT, next, 71, prev, 71, MPI_COMM_WORLD, &st));
    CHECK(v == prev, "sendrecv_replace got %d", v);
    OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL status");
}

static void test_communicators(void)
{
    MPI_Comm dup, half, shared, created;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int result;
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
    /* Traffic on dup does not match traffic on world. */
    const int peer = me ^ 1;
    if (peer < np) {
        int a = 1, b = 2, x = 0, y = 0;
        MPI_Request r[2];
        OK(MPI_Irecv(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Irecv(&y, 1, MPI_INT, peer, 5, dup, &r[1]));
        OK(MPI_Send(&b, 1, MPI_INT, peer, 5, dup));
        OK(MPI_Send(&a, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(x == 1 && y == 2, "world/dup crossed: %d %d", x, y);
    }
    /* Split into even and odd, reversed order by key. */
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, np - me, &half));
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    CHECK(hs == (np + 1 - me % 2) / 2, "split size %d", hs);
    int above = 0; /* key np - me orders the ranks of a parity from the highest */
    for (int r = me + 2; r < np; r += 2)
        ++above;
    CHECK(hr == above, "split rank %d, expected %d", hr, above);
    int sum = 0, mine = me;
    /* A linear sum over the new communicator with point-to-point. */
    if (hr == 0) {
        sum = mine;
        for (int i = 1; i < hs; ++i) {
            int v;
            OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, half, MPI_STATUS_IGNORE));
            sum += v;
        }
        int want = 0;
        for (int r = me % 2; r < np; r += 2)
            want += r;
        CHECK(sum == want, "sum over split %d, expected %d", sum, want);
    } else {
        OK(MPI_Send(&mine, 1, MPI_INT, 0, 3, half));
    }
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    int ss;
    MPI_Comm_size(shared, &ss);
    CHECK(ss >= 1 && ss <= np, "split_type size %d", ss);
    /* Create from a group of the first half. */
    MPI_Group world_group, first;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int range[1][3] = {{0, (np - 1) / 2, 1}};
    OK(MPI_Group_range_incl(world_group, 1, range, &first));
    OK(MPI_Comm_create(MPI_COMM_WORLD, first, &created));
    if (me <= (np - 1) / 2) {
        int cs;
        CHECK(created != MPI_COMM_NULL, "comm_create left a member out");
        MPI_Comm_size(created, &cs);
        CHECK(cs == (np - 1) / 2 + 1, "created size %d", cs);
        OK(MPI_Comm_free(&created));
    } else {
        CHECK(created == MPI_COMM_NULL, "comm_create gave a non-member a communicator");
    }
    int translated[1], zero[1] = {0};
    OK(MPI_Group_translate_ranks(first, 1, zero, world_group, translated));
    CHECK(translated[0] == 0, "translate_ranks %d", translated[0]);
    OK(MPI_Group_free(&first));
    OK(MPI_Group_free(&world_group));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Comm_set_name(dup, "my dup"));
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "my dup") == 0 && len == 6, "comm name '%s'", name);
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "world name '%s'", name);
    int *ub, flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *ub >= 32767, "MPI_TAG_UB");
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&shared));
    CHECK(dup == MPI_COMM_NULL, "freed handle not MPI_COMM_NULL");
}

static void test_error_classes(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int v = 0, cls;
#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        MPI_Error_class(rc_, &cls);                                                                \
        CHECK(cls == (want), "%s gave class %d, expected %s", #call, cls, #want);                  \
    } while (0)
    EXPECT(MPI_Send(&v, 1, MPI_INT, np + 5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(&v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Recv(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TAG);
    EXPECT(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Comm_rank(MPI_COMM_NULL, &v), MPI_ERR_COMM);
    EXPECT(MPI_Irecv(&v, 1, MPI_INT, np, 0, MPI_COMM_WORLD, NULL), MPI_ERR_RANK);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    OK(MPI_Error_string(MPI_ERR_RANK, msg, &len));
    CHECK(len > 0 && strstr(msg, "rank") != NULL, "error string '%s'", msg);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d",
          provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np >= 2, "run with at least 2 ranks");
    /* A barrier between tests keeps one test's messages out of the next
     * one's wildcard receives. */
    void (*tests[])(void) = {test_order,           test_wildcards,
                             test_truncate,        test_modes,
                             test_ssend_waits,     test_probe_and_mprobe,
                             test_cancel_and_persistent, test_wait_families,
                             test_sendrecv,        test_communicators,
                             test_error_classes};
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; ++t) {
        tests[t]();
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    OK(MPI_Finalize());
    int fin;
    MPI_Finalized(&fin);
    CHECK(fin, "MPI_Finalized is false after MPI_Finalize");
    if (me == 0)
        printf("mpi_p2p: %d ranks, %d checks passed\n", np, checks);
    return 0;
}
