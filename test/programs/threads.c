/* threads: MPI_THREAD_MULTIPLE (MPI-3.1 12.4). MPI_Init_thread grants it; MPI_Query_thread says
 * so and MPI_Is_thread_main is true in the main thread only. Then NT threads per rank call MPI
 * at once, each:
 * - a ring on MPI_COMM_WORLD on its own tag: blocking sends and non-blocking receives, eager
 *   (64 B) and rendezvous (256 KiB) in turn, every byte checked (it names sender, thread and
 *   round);
 * - receives from MPI_ANY_SOURCE on its own tag, one message from every rank, while every
 *   thread of every rank sends them;
 * - MPI_Sendrecv with its peers, MPI_Iprobe/MPI_Recv and MPI_Test loops;
 * - a flood of 2000 blocking 1 KiB sends before any receive (the rails fill and sends queue),
 *   each thread's messages in order;
 * - collectives (allreduce, bcast, barrier) on a communicator of its own (dup'd by the main
 *   thread first, in order), the results checked;
 * - communicators made from that one, all threads at once, each checked with an allreduce of
 *   values of its own: dup, split, MPI_Comm_create_group (on the thread's tag), and (at 2 ranks
 *   or more) an intercommunicator of the even and the odd ranks with its dup, split and merge.
 * Run at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "threads"
#include "test_program.h"

enum { NT = 4, ROUNDS = 12, SMALL = 64, LARGE = 256 << 10 };

static int size, next, prev;
static MPI_Comm comms[NT];
static pthread_mutex_t report = PTHREAD_MUTEX_INITIALIZER;

static unsigned char byte_of(int src, int t, int round, int i)
{
    return (unsigned char)(src * 131 + t * 37 + round * 11 + i * 7);
}

/* A check inside a thread: counted under a lock, reported once per thread. */
#define TCHECK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            pthread_mutex_lock(&report);                                                           \
            CHECK(0, __VA_ARGS__);                                                                 \
            pthread_mutex_unlock(&report);                                                         \
        }                                                                                          \
    } while (0)

static void *work(void *arg)
{
    const int t = (int)(long)arg;
    int flag = 1;
    MPI_Is_thread_main(&flag);
    TCHECK(!flag, "thread %d: MPI_Is_thread_main says it is the main thread", t);
    unsigned char *out = malloc(LARGE), *in = malloc(LARGE);

    /* The ring, eager and rendezvous in turn. */
    for (int round = 0; round < ROUNDS; ++round) {
        const int n = round % 2 ? LARGE : SMALL;
        for (int i = 0; i < n; ++i)
            out[i] = byte_of(rank, t, round, i);
        memset(in, 0, (size_t)n);
        MPI_Request req;
        MPI_Irecv(in, n, MPI_BYTE, prev, t, MPI_COMM_WORLD, &req);
        MPI_Send(out, n, MPI_BYTE, next, t, MPI_COMM_WORLD);
        MPI_Status st;
        MPI_Wait(&req, &st);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        TCHECK(count == n && st.MPI_SOURCE == prev && st.MPI_TAG == t,
               "thread %d round %d: status count %d source %d tag %d", t, round, count,
               st.MPI_SOURCE, st.MPI_TAG);
        int bad = -1;
        for (int i = 0; i < n && bad < 0; ++i)
            if (in[i] != byte_of(prev, t, round, i))
                bad = i;
        TCHECK(bad < 0, "thread %d round %d: byte %d of %d damaged", t, round, bad, n);
    }

    /* MPI_ANY_SOURCE on this thread's tag: one message from every rank. */
    {
        const int tag = 100 + t;
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)size);
        int *vals = malloc(sizeof(int) * (size_t)size);
        for (int r = 0; r < size; ++r)
            MPI_Irecv(&vals[r], 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &reqs[r]);
        for (int r = 0; r < size; ++r) {
            int v = rank * 1000 + t;
            MPI_Send(&v, 1, MPI_INT, r, tag, MPI_COMM_WORLD);
        }
        MPI_Waitall(size, reqs, MPI_STATUSES_IGNORE);
        long sum = 0, want = 0;
        for (int r = 0; r < size; ++r) {
            sum += vals[r];
            want += r * 1000 + t;
        }
        TCHECK(sum == want, "thread %d: ANY_SOURCE values sum to %ld, want %ld", t, sum, want);
        free(reqs);
        free(vals);
    }

    /* Sendrecv, then a probe loop and a test loop. */
    {
        const int tag = 200 + t;
        int mine = rank * 10 + t, got = -1;
        MPI_Sendrecv(&mine, 1, MPI_INT, next, tag, &got, 1, MPI_INT, prev, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        TCHECK(got == prev * 10 + t, "thread %d: sendrecv got %d, want %d", t, got, prev * 10 + t);
        MPI_Request sreq;
        MPI_Isend(&mine, 1, MPI_INT, next, tag + 100, MPI_COMM_WORLD, &sreq);
        int found = 0;
        MPI_Status st;
        while (!found)
            MPI_Iprobe(prev, tag + 100, MPI_COMM_WORLD, &found, &st);
        got = -1;
        MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        TCHECK(got == prev * 10 + t, "thread %d: probed message %d, want %d", t, got,
               prev * 10 + t);
        int done = 0;
        while (!done)
            MPI_Test(&sreq, &done, MPI_STATUS_IGNORE);
    }

    /* Collectives on this thread's own communicator. */
    for (int round = 0; round < ROUNDS; ++round) {
        int v = rank + t + round, sum = -1;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comms[t]);
        const int want = size * (size - 1) / 2 + size * (t + round);
        TCHECK(sum == want, "thread %d round %d: allreduce %d, want %d", t, round, sum, want);
        int b = rank == round % size ? 7 * t + round : -1;
        MPI_Bcast(&b, 1, MPI_INT, round % size, comms[t]);
        TCHECK(b == 7 * t + round, "thread %d round %d: bcast %d", t, round, b);
        MPI_Barrier(comms[t]);
    }
    /* A flood: every thread sends FLOOD blocking messages of 1 KiB to the next rank before
     * receiving any, so the rails fill and sends queue behind each other; each thread's
     * messages arrive whole and in order. */
    {
        enum { FLOOD = 2000, KB = 1024 };
        const int tag = 300 + t;
        for (int i = 0; i < FLOOD; ++i) {
            memset(out, 0, KB);
            memcpy(out, &i, sizeof i);
            out[KB - 1] = (unsigned char)(t + i);
            MPI_Send(out, KB, MPI_BYTE, next, tag, MPI_COMM_WORLD);
        }
        int bad = -1;
        for (int i = 0; i < FLOOD; ++i) {
            int got = -1;
            MPI_Recv(in, KB, MPI_BYTE, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            memcpy(&got, in, sizeof got);
            if ((got != i || in[KB - 1] != (unsigned char)(t + i)) && bad < 0)
                bad = i;
        }
        TCHECK(bad < 0, "thread %d: flood message %d lost, damaged or out of order", t, bad);
    }

    /* Communicators made at once by every thread, each from its own: a dup and a split, then
     * an allreduce on each (the values differ per thread and round: two communicators that
     * shared a context id would mix them). */
    for (int round = 0; round < ROUNDS; ++round) {
        MPI_Comm dup, split;
        MPI_Comm_dup(comms[t], &dup);
        MPI_Comm_split(comms[t], rank % 2, rank, &split);
        const int v = 1000 * t + round;
        int sum = -1, ssize = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, dup);
        TCHECK(sum == size * v, "thread %d round %d: allreduce on a dup %d, want %d", t, round, sum,
               size * v);
        MPI_Comm_size(split, &ssize);
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, split);
        TCHECK(sum == ssize * v, "thread %d round %d: allreduce on a split %d, want %d", t, round,
               sum, ssize * v);
        /* MPI_Comm_create_group of the even ranks, on the thread's tag. */
        MPI_Group world_group, evens;
        MPI_Comm_group(comms[t], &world_group);
        int range[1][3] = {{0, size - 1, 2}};
        MPI_Group_range_incl(world_group, 1, range, &evens);
        MPI_Comm cg = MPI_COMM_NULL;
        MPI_Comm_create_group(comms[t], evens, t, &cg);
        TCHECK((cg != MPI_COMM_NULL) == (rank % 2 == 0),
               "thread %d round %d: create_group gave %s at rank %d", t, round,
               cg == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator", rank);
        if (cg != MPI_COMM_NULL) {
            MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, cg);
            TCHECK(sum == (size + 1) / 2 * v,
                   "thread %d round %d: allreduce on create_group's %d, want %d", t, round, sum,
                   (size + 1) / 2 * v);
            MPI_Comm_free(&cg);
        }
        MPI_Group_free(&evens);
        MPI_Group_free(&world_group);
        if (size > 1) {
            /* The even and the odd ranks joined: an intercommunicator, its dup, its split and
             * its merge, each checked. */
            MPI_Comm inter, idup, isplit, merged;
            MPI_Intercomm_create(split, 0, comms[t], rank % 2 ? 0 : 1, t, &inter);
            int rsize = 0;
            MPI_Comm_remote_size(inter, &rsize);
            TCHECK(rsize == (rank % 2 ? (size + 1) / 2 : size / 2),
                   "thread %d round %d: remote size %d", t, round, rsize);
            MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
            TCHECK(sum == rsize * v, "thread %d round %d: allreduce on an intercomm %d, want %d", t,
                   round, sum, rsize * v);
            MPI_Comm_dup(inter, &idup);
            MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, idup);
            TCHECK(sum == rsize * v,
                   "thread %d round %d: allreduce on an intercomm's dup %d, want %d", t, round, sum,
                   rsize * v);
            /* Colors 0 1 1 0 0 1 1 ... by rank: in both groups when size > 3. */
            MPI_Comm_split(inter, ((rank + 1) / 2) % 2, rank, &isplit);
            if (isplit != MPI_COMM_NULL) {
                MPI_Comm_remote_size(isplit, &rsize);
                MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, isplit);
                TCHECK(sum == rsize * v,
                       "thread %d round %d: allreduce on an intercomm's split %d, want %d", t,
                       round, sum, rsize * v);
                MPI_Comm_free(&isplit);
            }
            MPI_Intercomm_merge(inter, rank % 2, &merged);
            int mrank = -1;
            MPI_Comm_rank(merged, &mrank);
            TCHECK(mrank == (rank % 2 ? (size + 1) / 2 + rank / 2 : rank / 2),
                   "thread %d round %d: rank %d in the merged communicator", t, round, mrank);
            MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, merged);
            TCHECK(sum == size * v, "thread %d round %d: allreduce on a merge %d, want %d", t,
                   round, sum, size * v);
            MPI_Comm_free(&merged);
            MPI_Comm_free(&idup);
            MPI_Comm_free(&inter);
        }
        MPI_Comm_free(&dup);
        MPI_Comm_free(&split);
    }
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d, not MULTIPLE", provided);
    int level = -1, main_flag = 0;
    MPI_Query_thread(&level);
    CHECK(level == MPI_THREAD_MULTIPLE, "MPI_Query_thread says %d", level);
    MPI_Is_thread_main(&main_flag);
    CHECK(main_flag, "MPI_Is_thread_main is false in the main thread");
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    for (int t = 0; t < NT; ++t)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t threads[NT];
    for (int t = 0; t < NT; ++t)
        pthread_create(&threads[t], NULL, work, (void *)(long)t);
    for (int t = 0; t < NT; ++t)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < NT; ++t)
        MPI_Comm_free(&comms[t]);
    return finish("4 threads per rank: rings, ANY_SOURCE, probes and collectives at once, "
                  "every result right");
}
