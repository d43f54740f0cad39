/* grequest: generalized requests (MPI-3.1 12.2) through every completion call. The program
 * completes them before a wait, while a test polls, and from another thread while a wait blocks;
 * MPI_Waitall, _any, _some and MPI_Testall, _any, _some take them mixed with receives;
 * MPI_Request_get_status calls query_fn but not free_fn; MPI_Cancel calls cancel_fn with whether
 * the request is complete; query_fn's status reaches the caller and its error (or free_fn's) is
 * the call's (MPI_ERR_IN_STATUS for the calls on many); free_fn runs exactly once, also for a
 * request freed before it completes. Errors are returned (MPI_ERRORS_RETURN). Run at any number
 * of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRAM "grequest"
#include "test_program.h"

/* One request's callbacks' record and what they answer. */
struct state {
    int queries, frees, cancels, cancel_complete;
    int query_rc, free_rc, cancel_rc;
    int source, tag, bytes, cancelled;
};

static int query_fn(void *extra, MPI_Status *status)
{
    struct state *s = extra;
    ++s->queries;
    status->MPI_SOURCE = s->source;
    status->MPI_TAG = s->tag;
    MPI_Status_set_elements(status, MPI_BYTE, s->bytes);
    MPI_Status_set_cancelled(status, s->cancelled);
    return s->query_rc;
}

static int free_fn(void *extra)
{
    struct state *s = extra;
    ++s->frees;
    return s->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    struct state *s = extra;
    ++s->cancels;
    s->cancel_complete = complete;
    return s->cancel_rc;
}

static void init_state(struct state *s, int source, int tag, int bytes)
{
    memset(s, 0, sizeof *s);
    s->source = source;
    s->tag = tag;
    s->bytes = bytes;
}

static MPI_Request start(struct state *s)
{
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, &r) == MPI_SUCCESS &&
              r != MPI_REQUEST_NULL,
          "MPI_Grequest_start");
    return r;
}

/* status is what query_fn made of s. */
static void expect_status(const MPI_Status *st, const struct state *s, int line)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    CHECK(st->MPI_SOURCE == s->source && st->MPI_TAG == s->tag && count == s->bytes &&
              cancelled == s->cancelled,
          "(from line %d) status source %d tag %d count %d cancelled %d, expected %d %d %d %d",
          line, st->MPI_SOURCE, st->MPI_TAG, count, cancelled, s->source, s->tag, s->bytes,
          s->cancelled);
}

static void single(void)
{
    struct state s;
    MPI_Status st;
    int flag;

    /* Completed before the wait. */
    init_state(&s, 3, 7, 40);
    MPI_Request r = start(&s);
    CHECK(MPI_Grequest_complete(r) == MPI_SUCCESS, "MPI_Grequest_complete");
    CHECK(s.queries == 0 && s.frees == 0, "callbacks ran at MPI_Grequest_complete");
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "MPI_Wait");
    CHECK(s.queries == 1 && s.frees == 1, "MPI_Wait: %d queries, %d frees", s.queries, s.frees);
    expect_status(&st, &s, __LINE__);

    /* MPI_STATUS_IGNORE: query_fn still runs (it gets a status of its own). */
    init_state(&s, 0, 1, 2);
    r = start(&s);
    MPI_Grequest_complete(r);
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && s.queries == 1 && s.frees == 1,
          "MPI_Wait(MPI_STATUS_IGNORE): %d queries, %d frees", s.queries, s.frees);

    /* Polled: not complete until the program says so. */
    init_state(&s, 5, 9, 16);
    r = start(&s);
    for (int i = 0; i < 3; ++i) {
        flag = -1;
        CHECK(MPI_Test(&r, &flag, &st) == MPI_SUCCESS && flag == 0 && r != MPI_REQUEST_NULL,
              "MPI_Test before completion: flag %d", flag);
    }
    CHECK(s.queries == 0 && s.frees == 0, "callbacks ran before completion");
    MPI_Grequest_complete(r);
    CHECK(MPI_Test(&r, &flag, &st) == MPI_SUCCESS && flag == 1 && r == MPI_REQUEST_NULL,
          "MPI_Test after completion: flag %d", flag);
    CHECK(s.queries == 1 && s.frees == 1, "MPI_Test: %d queries, %d frees", s.queries, s.frees);
    expect_status(&st, &s, __LINE__);

    /* MPI_Request_get_status: query_fn each time it is complete, never free_fn. */
    init_state(&s, 2, 4, 8);
    r = start(&s);
    CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_SUCCESS && flag == 0 && s.queries == 0,
          "MPI_Request_get_status before completion: flag %d, %d queries", flag, s.queries);
    MPI_Grequest_complete(r);
    for (int i = 1; i <= 2; ++i) {
        memset(&st, 0, sizeof st);
        CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_SUCCESS && flag == 1 && s.queries == i &&
                  s.frees == 0,
              "MPI_Request_get_status: flag %d, %d queries, %d frees", flag, s.queries, s.frees);
        expect_status(&st, &s, __LINE__);
    }
    CHECK(r != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && s.queries == 3 && s.frees == 1,
          "MPI_Wait after MPI_Request_get_status: %d queries, %d frees", s.queries, s.frees);

    /* MPI_Request_free first: free_fn waits for MPI_Grequest_complete; query_fn never runs. */
    init_state(&s, 0, 0, 0);
    r = start(&s);
    MPI_Request keep = r;
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL && s.frees == 0,
          "MPI_Request_free before completion: %d frees", s.frees);
    CHECK(MPI_Grequest_complete(keep) == MPI_SUCCESS && s.frees == 1 && s.queries == 0,
          "MPI_Grequest_complete after MPI_Request_free: %d frees, %d queries", s.frees, s.queries);
    /* ... and after completion: free_fn at once. */
    r = start(&s);
    MPI_Grequest_complete(r);
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS && s.frees == 2 && s.queries == 0,
          "MPI_Request_free after completion: %d frees, %d queries", s.frees, s.queries);

    /* MPI_Cancel: cancel_fn learns whether it is complete; query_fn reports the cancellation. */
    init_state(&s, 1, 1, 0);
    r = start(&s);
    CHECK(MPI_Cancel(&r) == MPI_SUCCESS && s.cancels == 1 && s.cancel_complete == 0,
          "MPI_Cancel before completion: %d calls, complete %d", s.cancels, s.cancel_complete);
    s.cancelled = 1;
    MPI_Grequest_complete(r);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS, "MPI_Wait of a cancelled request");
    expect_status(&st, &s, __LINE__);
    init_state(&s, 1, 1, 0);
    r = start(&s);
    MPI_Grequest_complete(r);
    CHECK(MPI_Cancel(&r) == MPI_SUCCESS && s.cancels == 1 && s.cancel_complete != 0,
          "MPI_Cancel after completion: %d calls, complete %d", s.cancels, s.cancel_complete);
    MPI_Wait(&r, &st);
    CHECK(s.frees == 1, "%d frees", s.frees);
    /* cancel_fn's error is MPI_Cancel's. */
    init_state(&s, 0, 0, 0);
    s.cancel_rc = MPI_ERR_OTHER;
    r = start(&s);
    CHECK(MPI_Cancel(&r) == MPI_ERR_OTHER, "cancel_fn's error was not MPI_Cancel's");
    MPI_Grequest_complete(r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);

    /* The callbacks' errors: the completion call returns them; free_fn still runs once. */
    int uclass, ucode;
    MPI_Add_error_class(&uclass);
    MPI_Add_error_code(uclass, &ucode);
    init_state(&s, 6, 6, 6);
    s.query_rc = ucode;
    r = start(&s);
    MPI_Grequest_complete(r);
    int rc = MPI_Wait(&r, &st);
    CHECK(rc == ucode && r == MPI_REQUEST_NULL && s.queries == 1 && s.frees == 1,
          "query_fn's error: rc %d (expected %d), %d queries, %d frees", rc, ucode, s.queries,
          s.frees);
    expect_status(&st, &s, __LINE__);
    init_state(&s, 6, 6, 6);
    s.free_rc = MPI_ERR_INTERN;
    r = start(&s);
    MPI_Grequest_complete(r);
    rc = MPI_Test(&r, &flag, &st);
    CHECK(rc == MPI_ERR_INTERN && flag == 1 && r == MPI_REQUEST_NULL && s.frees == 1,
          "free_fn's error: rc %d, flag %d, %d frees", rc, flag, s.frees);
    init_state(&s, 6, 6, 6);
    s.query_rc = MPI_ERR_OTHER;
    r = start(&s);
    MPI_Grequest_complete(r);
    CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_ERR_OTHER && flag == 1 && s.frees == 0,
          "query_fn's error in MPI_Request_get_status");
    s.query_rc = MPI_SUCCESS;
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && s.frees == 1, "MPI_Wait after it");

    /* The calls' own errors. */
    CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, NULL) == MPI_ERR_ARG,
          "MPI_Grequest_start with a NULL request");
    CHECK(MPI_Grequest_complete(MPI_REQUEST_NULL) == MPI_ERR_REQUEST,
          "MPI_Grequest_complete(MPI_REQUEST_NULL)");
    init_state(&s, 0, 0, 0);
    r = start(&s);
    MPI_Grequest_complete(r);
    CHECK(MPI_Grequest_complete(r) == MPI_ERR_REQUEST, "a second MPI_Grequest_complete");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(s.frees == 1, "%d frees", s.frees);
}

/* A receive from the left neighbour, and the send to the right one. */
static MPI_Request ring_recv(int *in, int *out, int tag, int size)
{
    MPI_Request r;
    MPI_Irecv(in, 1, MPI_INT, (rank + size - 1) % size, tag, MPI_COMM_WORLD, &r);
    MPI_Send(out, 1, MPI_INT, (rank + 1) % size, tag, MPI_COMM_WORLD);
    return r;
}

static void many(int size)
{
    const int left = (rank + size - 1) % size;
    struct state s[3];
    MPI_Request r[3];
    MPI_Status st[3];
    int in = -1, out = rank, index, flag, count, indices[3];

    /* MPI_Waitall: a completed request, a receive, a second request. */
    init_state(&s[0], 10, 11, 12);
    init_state(&s[2], 20, 21, 22);
    r[0] = start(&s[0]);
    r[1] = ring_recv(&in, &out, 1, size);
    r[2] = start(&s[2]);
    MPI_Grequest_complete(r[0]);
    MPI_Grequest_complete(r[2]);
    CHECK(MPI_Waitall(3, r, st) == MPI_SUCCESS, "MPI_Waitall");
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL,
          "MPI_Waitall left requests");
    expect_status(&st[0], &s[0], __LINE__);
    expect_status(&st[2], &s[2], __LINE__);
    CHECK(in == left && st[1].MPI_SOURCE == left && st[1].MPI_TAG == 1, "the receive: %d from %d",
          in, st[1].MPI_SOURCE);
    CHECK(s[0].frees == 1 && s[2].frees == 1 && s[0].queries == 1 && s[2].queries == 1,
          "MPI_Waitall's callbacks");

    /* MPI_Waitany: the receive first (the request is not complete), then the request. */
    init_state(&s[0], 30, 31, 32);
    r[0] = start(&s[0]);
    in = -1;
    r[1] = ring_recv(&in, &out, 2, size);
    CHECK(MPI_Waitany(2, r, &index, &st[0]) == MPI_SUCCESS && index == 1 && in == left,
          "MPI_Waitany: index %d", index);
    MPI_Grequest_complete(r[0]);
    CHECK(MPI_Waitany(2, r, &index, &st[0]) == MPI_SUCCESS && index == 0 &&
              r[0] == MPI_REQUEST_NULL,
          "MPI_Waitany: index %d", index);
    expect_status(&st[0], &s[0], __LINE__);
    CHECK(MPI_Waitany(2, r, &index, &st[0]) == MPI_SUCCESS && index == MPI_UNDEFINED,
          "MPI_Waitany of nothing: index %d", index);

    /* MPI_Waitsome until every one is in: each index once. */
    init_state(&s[0], 40, 41, 42);
    init_state(&s[2], 50, 51, 52);
    r[0] = start(&s[0]);
    in = -1;
    r[1] = ring_recv(&in, &out, 3, size);
    r[2] = start(&s[2]);
    MPI_Grequest_complete(r[2]);
    int seen[3] = {0, 0, 0}, rounds = 0;
    for (;;) {
        CHECK(MPI_Waitsome(3, r, &count, indices, st) == MPI_SUCCESS, "MPI_Waitsome");
        if (count == MPI_UNDEFINED || ++rounds > 10)
            break;
        for (int i = 0; i < count; ++i) {
            ++seen[indices[i]];
            if (indices[i] != 1)
                expect_status(&st[i], &s[indices[i]], __LINE__);
        }
        if (r[0] != MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL)
            MPI_Grequest_complete(r[0]);
    }
    CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && in == left, "MPI_Waitsome: seen %d %d %d",
          seen[0], seen[1], seen[2]);

    /* MPI_Testall: false while one is not complete. */
    init_state(&s[0], 60, 61, 62);
    r[0] = start(&s[0]);
    in = -1;
    r[1] = ring_recv(&in, &out, 4, size);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    CHECK(MPI_Testall(2, r, &flag, st) == MPI_SUCCESS && flag == 0 && s[0].queries == 0,
          "MPI_Testall before completion: flag %d", flag);
    MPI_Grequest_complete(r[0]);
    CHECK(MPI_Testall(2, r, &flag, st) == MPI_SUCCESS && flag == 1 && r[0] == MPI_REQUEST_NULL,
          "MPI_Testall after completion: flag %d", flag);
    expect_status(&st[0], &s[0], __LINE__);

    /* MPI_Testany and MPI_Testsome. */
    init_state(&s[0], 70, 71, 72);
    init_state(&s[1], 80, 81, 82);
    r[0] = start(&s[0]);
    r[1] = start(&s[1]);
    CHECK(MPI_Testany(2, r, &index, &flag, &st[0]) == MPI_SUCCESS && flag == 0 &&
              index == MPI_UNDEFINED,
          "MPI_Testany before completion: flag %d index %d", flag, index);
    MPI_Grequest_complete(r[1]);
    CHECK(MPI_Testany(2, r, &index, &flag, &st[0]) == MPI_SUCCESS && flag == 1 && index == 1,
          "MPI_Testany: flag %d index %d", flag, index);
    expect_status(&st[0], &s[1], __LINE__);
    CHECK(MPI_Testsome(2, r, &count, indices, st) == MPI_SUCCESS && count == 0,
          "MPI_Testsome before completion: %d", count);
    MPI_Grequest_complete(r[0]);
    CHECK(MPI_Testsome(2, r, &count, indices, st) == MPI_SUCCESS && count == 1 && indices[0] == 0,
          "MPI_Testsome: %d", count);
    expect_status(&st[0], &s[0], __LINE__);
    CHECK(s[0].frees == 1 && s[1].frees == 1, "frees %d %d", s[0].frees, s[1].frees);

    /* An error from query_fn: MPI_ERR_IN_STATUS, and each status says its own. */
    init_state(&s[0], 1, 1, 1);
    init_state(&s[1], 2, 2, 2);
    s[1].query_rc = MPI_ERR_OTHER;
    r[0] = start(&s[0]);
    r[1] = start(&s[1]);
    MPI_Grequest_complete(r[0]);
    MPI_Grequest_complete(r[1]);
    CHECK(MPI_Waitall(2, r, st) == MPI_ERR_IN_STATUS, "MPI_Waitall with a failed query_fn");
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS && st[1].MPI_ERROR == MPI_ERR_OTHER,
          "MPI_Waitall's errors %d %d", st[0].MPI_ERROR, st[1].MPI_ERROR);
    CHECK(s[0].frees == 1 && s[1].frees == 1 && r[1] == MPI_REQUEST_NULL, "frees %d %d", s[0].frees,
          s[1].frees);
    init_state(&s[0], 1, 1, 1);
    s[0].free_rc = MPI_ERR_INTERN;
    r[0] = start(&s[0]);
    MPI_Grequest_complete(r[0]);
    CHECK(MPI_Testsome(1, r, &count, indices, st) == MPI_ERR_IN_STATUS && count == 1 &&
              st[0].MPI_ERROR == MPI_ERR_INTERN,
          "MPI_Testsome with a failed free_fn: count %d, error %d", count, st[0].MPI_ERROR);
}

/* Completed from another thread while MPI_Wait blocks. */
static void *completer(void *arg)
{
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    MPI_Grequest_complete(*(MPI_Request *)arg);
    return NULL;
}

static void threaded(void)
{
    struct state s;
    init_state(&s, 9, 9, 9);
    MPI_Request r = start(&s), copy = r;
    pthread_t t;
    if (pthread_create(&t, NULL, completer, &copy) != 0) {
        CHECK(0, "pthread_create");
        return;
    }
    MPI_Status st;
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL,
          "MPI_Wait on a request another thread completes");
    pthread_join(t, NULL);
    expect_status(&st, &s, __LINE__);
    CHECK(s.queries == 1 && s.frees == 1, "%d queries, %d frees", s.queries, s.frees);
}

int main(int argc, char **argv)
{
    alarm(60);
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    single();
    many(size);
    threaded();

    return finish(
        "generalized requests through every completion call, their callbacks and errors right");
}
