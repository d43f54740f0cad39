/* pmpi_count: a profiling tool in miniature. It defines MPI functions of its own that count each
 * call and pass it on through the PMPI_ names (the profiling interface, MPI-3.1 section 14.2),
 * then runs a small program and checks that each call the program made was counted exactly
 * once, and none of the calls the library makes for itself (MPI_Sendrecv posting receives and
 * sends, MPI_Comm_dup agreeing on a context id, MPI_Finalize's barriers).
 * Run at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum {
    C_INIT,
    C_FINALIZE,
    C_RANK,
    C_SIZE,
    C_SEND,
    C_RECV,
    C_ISEND,
    C_IRECV,
    C_WAIT,
    C_WAITALL,
    C_SENDRECV,
    C_BARRIER,
    C_BCAST,
    C_ALLREDUCE,
    C_DUP,
    C_FREE,
    C_PCONTROL,
    C_COUNT
};
static const char *names[C_COUNT] = {
    "MPI_Init",  "MPI_Finalize",  "MPI_Comm_rank", "MPI_Comm_size", "MPI_Send",     "MPI_Recv",
    "MPI_Isend", "MPI_Irecv",     "MPI_Wait",      "MPI_Waitall",   "MPI_Sendrecv", "MPI_Barrier",
    "MPI_Bcast", "MPI_Allreduce", "MPI_Comm_dup",  "MPI_Comm_free", "MPI_Pcontrol"};
static int calls[C_COUNT];
static int pcontrol_level = -1;

int MPI_Init(int *argc, char ***argv)
{
    ++calls[C_INIT];
    return PMPI_Init(argc, argv);
}
int MPI_Finalize(void)
{
    ++calls[C_FINALIZE];
    return PMPI_Finalize();
}
int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    ++calls[C_RANK];
    return PMPI_Comm_rank(comm, rank);
}
int MPI_Comm_size(MPI_Comm comm, int *size)
{
    ++calls[C_SIZE];
    return PMPI_Comm_size(comm, size);
}
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    ++calls[C_SEND];
    return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    ++calls[C_RECV];
    return PMPI_Recv(buf, count, type, src, tag, comm, status);
}
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    ++calls[C_ISEND];
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    ++calls[C_IRECV];
    return PMPI_Irecv(buf, count, type, src, tag, comm, req);
}
int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    ++calls[C_WAIT];
    return PMPI_Wait(req, status);
}
int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    ++calls[C_WAITALL];
    return PMPI_Waitall(count, reqs, statuses);
}
int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    ++calls[C_SENDRECV];
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
                         status);
}
int MPI_Barrier(MPI_Comm comm)
{
    ++calls[C_BARRIER];
    return PMPI_Barrier(comm);
}
int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    ++calls[C_BCAST];
    return PMPI_Bcast(buf, count, type, root, comm);
}
int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    ++calls[C_ALLREDUCE];
    return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    ++calls[C_DUP];
    return PMPI_Comm_dup(comm, newcomm);
}
int MPI_Comm_free(MPI_Comm *comm)
{
    ++calls[C_FREE];
    return PMPI_Comm_free(comm);
}
int MPI_Pcontrol(const int level, ...)
{
    ++calls[C_PCONTROL];
    pcontrol_level = level;
    return PMPI_Pcontrol(level);
}

/* The calls the program below makes, in order. */
static const int expected[C_COUNT] = {
    [C_INIT] = 1,    [C_RANK] = 1,    [C_SIZE] = 1,     [C_SENDRECV] = 1, [C_ISEND] = 1,
    [C_RECV] = 1,    [C_WAIT] = 1,    [C_DUP] = 1,      [C_BCAST] = 1,    [C_ALLREDUCE] = 1,
    [C_FREE] = 1,    [C_BARRIER] = 1, [C_PCONTROL] = 1, [C_IRECV] = 0,    [C_SEND] = 0,
    [C_WAITALL] = 0, [C_FINALIZE] = 0};

/* 1 when every count is as expected (Finalize: as given), printing each difference. */
static int counts_right(int rank, int finalize_calls)
{
    int ok = 1;
    for (int c = 0; c < C_COUNT; ++c) {
        const int want = c == C_FINALIZE ? finalize_calls : expected[c];
        if (calls[c] != want) {
            printf("pmpi_count: rank %d: %s counted %d times, expected %d\n", rank, names[c],
                   calls[c], want);
            ok = 0;
        }
    }
    fflush(stdout);
    return ok;
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* A ring shift with MPI_Sendrecv (the library posts a receive and a send for it). */
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    bad |= got != left;
    /* The other way with MPI_Isend, MPI_Recv and MPI_Wait. */
    MPI_Request req;
    int back = -1;
    MPI_Isend(&rank, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &req);
    MPI_Recv(&back, 1, MPI_INT, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    bad |= back != right;
    /* A new communicator (its context id is agreed by the library's own collectives). */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int root_value = rank == 0 ? 4242 : 0;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, dup);
    bad |= root_value != 4242;
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    bad |= sum != size * (size - 1) / 2;
    MPI_Comm_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
    bad |= MPI_Pcontrol(2) != MPI_SUCCESS || pcontrol_level != 2;

    /* The verdict, agreed through PMPI_ (not counted), then the counts once more after
     * MPI_Finalize (whose own barriers must not count). */
    if (bad)
        printf("pmpi_count: rank %d: wrong data (ring %d/%d, bcast %d, sum %d)\n", rank, got, back,
               root_value, sum);
    int mine = bad || !counts_right(rank, 0), any = 0;
    PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    if (!counts_right(rank, 1))
        any = 1;
    if (rank == 0 && !any)
        printf("pmpi_count: %d ranks: %d MPI functions interposed through PMPI_, each of the "
               "program's calls counted once, none of the library's own\n",
               size, C_COUNT);
    return any;
}
