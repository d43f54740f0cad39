/* cancel_send: MPI_Cancel of sends (MPI-3.1 3.8.4). Each rank sends to the next (itself at one
 * rank) and cancels:
 * - eager, rendezvous (1 MiB), synchronous and buffered sends nobody receives: each cancel
 *   succeeds (MPI_Test_cancelled true), and the receiver never sees the message (a probe after
 *   a barrier finds nothing; the stream case below checks that later messages of a tag with
 *   cancelled ones arrive in order);
 * - a send whose message was received already: the cancel fails, the data arrived intact;
 * - a persistent send: cancelled once, then started again and received (by a persistent
 *   receive that completes inside MPI_Start: MPI_Wait reports its status all the same);
 * - a send cancelled and then freed with MPI_Request_free, and messages sent after all of
 *   these: they arrive in order (the sequence numbers stay right);
 * - a cancel after a send's completion was reported (by MPI_Wait for a persistent one, by
 *   MPI_Request_get_status for an eager one): no effect, the message arrives;
 * - 2^16 + 8 messages waiting unreceived, then one more sent and cancelled: that one goes,
 *   the rest arrive in order (a cancel does not take an older message of the same 16-bit
 *   sequence number).
 * Run at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdlib.h>
#include <string.h>

#define PROGRAM "cancel_send"
#include "test_program.h"

enum { SMALL = 64, LARGE = 1 << 20 };

static int size, next, prev;

static void fill(char *buf, int n, int seed)
{
    for (int i = 0; i < n; ++i)
        buf[i] = (char)(seed * 31 + i * 7);
}

static int intact(const char *buf, int n, int seed)
{
    for (int i = 0; i < n; ++i)
        if (buf[i] != (char)(seed * 31 + i * 7))
            return 0;
    return 1;
}

/* Nothing of tag is waiting here from prev. */
static void nothing_waits(int tag, const char *what)
{
    int flag = 1;
    MPI_Iprobe(prev, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "%s: a cancelled message of tag %d is still there to receive", what, tag);
}

/* Send n bytes with `mode` to next on tag, cancel it, and check that it was cancelled and
 * that prev's message of the same kind is nowhere to be received. */
static void cancel_unmatched(char mode, int n, int tag, const char *what)
{
    char *buf = malloc((size_t)n);
    fill(buf, n, tag);
    MPI_Request req;
    switch (mode) {
    case 's': MPI_Isend(buf, n, MPI_BYTE, next, tag, MPI_COMM_WORLD, &req); break;
    case 'y': MPI_Issend(buf, n, MPI_BYTE, next, tag, MPI_COMM_WORLD, &req); break;
    case 'b': MPI_Ibsend(buf, n, MPI_BYTE, next, tag, MPI_COMM_WORLD, &req); break;
    }
    CHECK(MPI_Cancel(&req) == MPI_SUCCESS, "%s: MPI_Cancel failed", what);
    MPI_Status st;
    CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS, "%s: MPI_Wait failed", what);
    int flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "%s: the unmatched send was not cancelled", what);
    CHECK(req == MPI_REQUEST_NULL, "%s: the request was not freed", what);
    MPI_Barrier(MPI_COMM_WORLD);
    nothing_waits(tag, what);
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    int attached_size = 2 * LARGE + 4 * MPI_BSEND_OVERHEAD;
    char *attached = malloc((size_t)attached_size);
    MPI_Buffer_attach(attached, attached_size);

    cancel_unmatched('s', SMALL, 1, "eager Isend");
    cancel_unmatched('s', LARGE, 2, "rendezvous Isend");
    cancel_unmatched('y', SMALL, 3, "synchronous Issend");
    cancel_unmatched('b', SMALL, 4, "buffered Ibsend");
    cancel_unmatched('b', LARGE, 5, "buffered Ibsend of 1 MiB");

    /* Received before the cancel: not cancelled, and the data is whole. */
    for (int large = 0; large < 2; ++large) {
        const int n = large ? LARGE : SMALL;
        const char *what = large ? "rendezvous received" : "eager received";
        char *out = malloc((size_t)n), *in = calloc(1, (size_t)n);
        fill(out, n, 10 + large);
        MPI_Request rreq, sreq;
        MPI_Irecv(in, n, MPI_BYTE, prev, 10 + large, MPI_COMM_WORLD, &rreq);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Isend(out, n, MPI_BYTE, next, 10 + large, MPI_COMM_WORLD, &sreq);
        MPI_Status st;
        MPI_Wait(&rreq, &st);
        CHECK(intact(in, n, 10 + large), "%s: the data arrived damaged", what);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Cancel(&sreq);
        MPI_Wait(&sreq, &st);
        int flag = 1;
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag, "%s: a send already received reports itself cancelled", what);
        free(out);
        free(in);
    }

    /* Persistent: cancelled, then started again and received. */
    {
        char out[SMALL], in[SMALL];
        fill(out, SMALL, 20);
        MPI_Request preq;
        MPI_Send_init(out, SMALL, MPI_BYTE, next, 20, MPI_COMM_WORLD, &preq);
        MPI_Start(&preq);
        MPI_Cancel(&preq);
        MPI_Status st;
        MPI_Wait(&preq, &st);
        int flag = 0;
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag, "persistent send: not cancelled");
        CHECK(preq != MPI_REQUEST_NULL, "persistent send: the request went away");
        MPI_Barrier(MPI_COMM_WORLD);
        nothing_waits(20, "persistent send");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&preq);
        MPI_Wait(&preq, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag, "persistent send: the restarted send reports itself cancelled");
        /* Reported done: a cancel now has nothing to act on (the message stays to be received,
         * and the request stays inactive). */
        MPI_Cancel(&preq);
        MPI_Wait(&preq, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag, "persistent send: cancelled after its completion was reported");
        /* A persistent receive of a message that is there already completes inside MPI_Start;
         * MPI_Wait still reports its status. */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Request rreq;
        MPI_Recv_init(in, SMALL, MPI_BYTE, prev, 20, MPI_COMM_WORLD, &rreq);
        MPI_Start(&rreq);
        MPI_Wait(&rreq, &st);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 20 && count == SMALL,
              "persistent receive: status source %d tag %d count %d, want %d, 20, %d",
              st.MPI_SOURCE, st.MPI_TAG, count, prev, SMALL);
        CHECK(intact(in, SMALL, 20), "persistent send: the restarted send's data is damaged");
        MPI_Request_free(&preq);
        MPI_Request_free(&rreq);
    }

    /* Reported complete by MPI_Request_get_status (an eager send completes locally): a cancel
     * after that does nothing, and the message arrives. */
    {
        char out[SMALL], in[SMALL];
        fill(out, SMALL, 25);
        MPI_Request req;
        MPI_Isend(out, SMALL, MPI_BYTE, next, 25, MPI_COMM_WORLD, &req);
        int flag = 0, polls = 0;
        MPI_Status st;
        while (!flag && polls++ < 10000000)
            MPI_Request_get_status(req, &flag, &st);
        CHECK(flag, "get_status: an eager send never completed locally");
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag, "get_status: cancelled after MPI_Request_get_status reported it complete");
        MPI_Recv(in, SMALL, MPI_BYTE, prev, 25, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(intact(in, SMALL, 25), "get_status: the data arrived damaged");
    }

    /* Cancelled and freed at once (it may or may not be cancelled: nothing to wait on), then
     * a stream on the same tag after cancelled ones: every message received is one that was
     * not cancelled, in order. */
    {
        char a[SMALL];
        fill(a, SMALL, 30);
        MPI_Request req;
        MPI_Isend(a, SMALL, MPI_BYTE, next, 31, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Request_free(&req);
        int vals[8], got[4];
        MPI_Request reqs[8];
        for (int i = 0; i < 8; ++i) {
            vals[i] = i;
            MPI_Isend(&vals[i], 1, MPI_INT, next, 30, MPI_COMM_WORLD, &reqs[i]);
        }
        for (int i = 0; i < 8; i += 2)
            MPI_Cancel(&reqs[i]);
        MPI_Status sts[8];
        MPI_Waitall(8, reqs, sts);
        for (int i = 0; i < 8; ++i) {
            int flag = 0;
            MPI_Test_cancelled(&sts[i], &flag);
            CHECK(flag == (i % 2 == 0), "stream: message %d %s", i,
                  flag ? "cancelled, and should not be" : "not cancelled");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 4; ++i) {
            got[i] = -1;
            MPI_Recv(&got[i], 1, MPI_INT, prev, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(got[i] == 2 * i + 1, "stream: received %d where %d was due", got[i], 2 * i + 1);
        }
        nothing_waits(30, "stream");
        /* The freed one, if it was not cancelled, is there to take. */
        int flag = 0;
        MPI_Iprobe(prev, 31, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            char in[SMALL];
            MPI_Recv(in, SMALL, MPI_BYTE, prev, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(intact(in, SMALL, 30), "freed send: received damaged");
        }
    }

    /* More messages waiting than sequence numbers (2^16): the cancel names its message, not
     * an older one with the same 16-bit number. */
    {
        enum { MANY = 65536 + 8 };
        for (int i = 0; i < MANY; ++i)
            MPI_Send(&i, 1, MPI_INT, next, 40, MPI_COMM_WORLD);
        int last = MANY;
        MPI_Request req;
        MPI_Isend(&last, 1, MPI_INT, next, 40, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Status st;
        MPI_Wait(&req, &st);
        int flag = 0;
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag, "many waiting: the last send was not cancelled");
        MPI_Barrier(MPI_COMM_WORLD);
        int bad = -1;
        for (int i = 0; i < MANY; ++i) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, prev, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v != i && bad < 0)
                bad = i;
        }
        CHECK(bad < 0, "many waiting: message %d of %d lost or out of order", bad, MANY);
        nothing_waits(40, "many waiting");
    }

    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    free(attached);
    return finish("sends cancelled while unmatched, not once received, order kept");
}
