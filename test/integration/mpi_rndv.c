/*
 * The rendezvous protocols with data checks, for mpi_rndv.sh, which forces each protocol with
 * parameters and reads the protocol trace (--mca pml_ob1_verbose 20).
 *
 *   mpi_rndv [-b] [-S] size...
 *
 * For each size, rank 0 sends a message of that many bytes to rank 1 four times, one per tag:
 *   tag 0  contiguous -> contiguous
 *   tag 1  non-contiguous (every other byte: a vector) -> contiguous
 *   tag 2  contiguous -> non-contiguous
 *   tag 3  non-contiguous -> non-contiguous
 * -b sends with MPI_Bsend (buffered), -S with MPI_Ssend; otherwise MPI_Send. Rank 1 checks
 * every byte (and that the holes of a non-contiguous receive buffer are untouched) and the
 * received count. -x N adds, for a message of N bytes: a receive buffer too small
 * (MPI_ERR_TRUNCATE, the job goes on), MPI_Mprobe/MPI_Mrecv of a message that waited
 * unexpected, a persistent send started twice, MPI_ANY_SOURCE/MPI_ANY_TAG receives, and
 * messages to self (receive posted first; MPI_Issend of one byte), and MPI_Comm_free of the
 * communicator of a pending message. -w S: after a barrier, rank 0 prints "mpi_rndv: waiting S s"
 * and goes on while rank 1 sleeps S seconds before it receives (a test breaks a link then).
 * -s N: a stream: rank 0 starts four sends of N bytes at once (tags 20-23), all before rank 1
 * posts its receives, so that the first is alone and the other three follow a rendezvous
 * still under way to the same peer (btl_stream_min_rdma_size). -e N: exchanges: ten times,
 * both ranks send each other N bytes at once (sends started before the receives are posted,
 * so that each receiver is sending the peer a rendezvous message of its own meanwhile).
 * -W N: a long stream in windows, as bandwidth benchmarks send: 40 times, rank 0 starts 16
 * sends of N bytes (tags 40-55) and rank 1 16 receives, then both wait for all 16.
 * Prints "mpi_rndv: 2 ranks, N messages intact" when all are.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char pattern(size_t i, int size_seed)
{
    return (unsigned char)(i * 13 + size_seed * 7 + 1);
}

static int check_bytes(const unsigned char *b, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; ++i)
        if (b[i] != pattern(i, seed)) {
            fprintf(stderr, "mpi_rndv: %s: byte %zu is %u, expected %u\n", what, i, b[i],
                    pattern(i, seed));
            return 1;
        }
    return 0;
}

/* The extra cases of -x, for messages of n bytes; returns failures (rank 1 counts them). */
static int extras(int rank, size_t n, int *messages)
{
    int bad = 0;
    unsigned char *b = malloc(n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Truncation: the receive buffer holds half; the job goes on. */
    if (rank == 0) {
        for (size_t i = 0; i < n; ++i)
            b[i] = pattern(i, 10);
        MPI_Send(b, (int)n, MPI_BYTE, 1, 10, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        const int rc = MPI_Recv(b, (int)(n / 2), MPI_BYTE, 0, 10, MPI_COMM_WORLD, &st);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE) {
            fprintf(stderr, "mpi_rndv: truncated receive of %zu bytes: error class %d\n", n, cls);
            ++bad;
        }
        bad += check_bytes(b, n / 2, 10, "truncated receive");
        ++*messages;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Unexpected, then matched by MPI_Mprobe and received by MPI_Mrecv. */
    if (rank == 0) {
        for (size_t i = 0; i < n; ++i)
            b[i] = pattern(i, 11);
        MPI_Request r;
        MPI_Isend(b, (int)n, MPI_BYTE, 1, 11, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD); /* the message waits unexpected meanwhile */
        MPI_Message msg;
        MPI_Status st;
        MPI_Mprobe(0, 11, MPI_COMM_WORLD, &msg, &st);
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        memset(b, 0, n);
        MPI_Mrecv(b, (int)n, MPI_BYTE, &msg, &st);
        bad += count != (int)n || check_bytes(b, n, 11, "Mprobe/Mrecv");
        ++*messages;
    }
    /* A persistent send started twice, the data changed in between; wildcard receives. */
    if (rank == 0) {
        MPI_Request r;
        MPI_Send_init(b, (int)n, MPI_BYTE, 1, 12, MPI_COMM_WORLD, &r);
        for (int k = 0; k < 2; ++k) {
            for (size_t i = 0; i < n; ++i)
                b[i] = pattern(i, 12 + k);
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&r);
    } else {
        for (int k = 0; k < 2; ++k) {
            memset(b, 0, n);
            MPI_Status st;
            MPI_Recv(b, (int)n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            bad +=
                st.MPI_SOURCE != 0 || st.MPI_TAG != 12 || check_bytes(b, n, 12 + k, "persistent");
            ++*messages;
        }
    }
    /* To self, the receive posted first (btl/self runs the whole rendezvous inside the send),
     * then a synchronous send of one byte. */
    {
        unsigned char *in = malloc(n);
        for (size_t i = 0; i < n; ++i)
            b[i] = pattern(i, 13 + rank);
        MPI_Request r[2];
        MPI_Irecv(in, (int)n, MPI_BYTE, rank, 13, MPI_COMM_WORLD, &r[0]);
        MPI_Send(b, (int)n, MPI_BYTE, rank, 13, MPI_COMM_WORLD);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        if (rank == 1) {
            bad += check_bytes(in, n, 13 + rank, "to self");
            ++*messages;
        }
        MPI_Irecv(in, 1, MPI_BYTE, rank, 14, MPI_COMM_WORLD, &r[0]);
        MPI_Issend(b, 1, MPI_BYTE, rank, 14, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        free(in);
    }
    /* The communicator freed while the message is pending (MPI-3.1 6.4.3: it completes). */
    {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Request r;
        if (rank == 0) {
            for (size_t i = 0; i < n; ++i)
                b[i] = pattern(i, 15);
            MPI_Isend(b, (int)n, MPI_BYTE, 1, 15, dup, &r);
        } else {
            memset(b, 0, n);
            MPI_Irecv(b, (int)n, MPI_BYTE, 0, 15, dup, &r);
        }
        MPI_Comm_free(&dup);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rank == 1) {
            bad += check_bytes(b, n, 15, "communicator freed while pending");
            ++*messages;
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(b);
    MPI_Barrier(MPI_COMM_WORLD);
    return rank == 1 ? bad : 0;
}

/* count buffers of n bytes: rank 0's filled with the pattern of seed + k, the others' zero. */
static void buffers(unsigned char **b, int count, size_t n, int rank, int seed)
{
    for (int k = 0; k < count; ++k) {
        b[k] = malloc(n);
        for (size_t i = 0; i < n; ++i)
            b[k][i] = rank == 0 ? pattern(i, seed + k) : 0;
    }
}

/* -s: four messages of n bytes started at once; returns failures (rank 1 counts them). */
static int stream(int rank, size_t n, int *messages)
{
    enum { kStream = 4 };
    int bad = 0;
    unsigned char *b[kStream];
    MPI_Request r[kStream];
    buffers(b, kStream, n, rank, 20);
    if (rank == 0)
        for (int k = 0; k < kStream; ++k)
            MPI_Isend(b[k], (int)n, MPI_BYTE, 1, 20 + k, MPI_COMM_WORLD, &r[k]);
    /* Rank 1 posts its receives only after every send started: no FIN can come back before. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        for (int k = 0; k < kStream; ++k)
            MPI_Irecv(b[k], (int)n, MPI_BYTE, 0, 20 + k, MPI_COMM_WORLD, &r[k]);
    MPI_Waitall(kStream, r, MPI_STATUSES_IGNORE);
    for (int k = 0; k < kStream; ++k) {
        if (rank == 1) {
            bad += check_bytes(b[k], n, 20 + k, "stream");
            ++*messages;
        }
        free(b[k]);
    }
    return bad;
}

/* -W: 40 windows of 16 messages of n bytes; returns failures (rank 1 counts them). */
static int windows(int rank, size_t n, int *messages)
{
    enum { kWindow = 16, kWindows = 40 };
    int bad = 0;
    unsigned char *b[kWindow];
    MPI_Request r[kWindow];
    buffers(b, kWindow, n, rank, 40);
    for (int w = 0; w < kWindows; ++w) {
        for (int k = 0; k < kWindow && rank <= 1; ++k) {
            if (rank == 0)
                MPI_Isend(b[k], (int)n, MPI_BYTE, 1, 40 + k, MPI_COMM_WORLD, &r[k]);
            else
                MPI_Irecv(b[k], (int)n, MPI_BYTE, 0, 40 + k, MPI_COMM_WORLD, &r[k]);
        }
        if (rank <= 1)
            MPI_Waitall(kWindow, r, MPI_STATUSES_IGNORE);
        for (int k = 0; k < kWindow && rank == 1; ++k) {
            bad += check_bytes(b[k], n, 40 + k, "window");
            memset(b[k], 0, n);
            ++*messages;
        }
    }
    for (int k = 0; k < kWindow; ++k)
        free(b[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    return bad;
}

/* -e: ten exchanges of n bytes; returns failures (both ranks count theirs). */
static int exchange(int rank, size_t n, int *messages)
{
    int bad = 0;
    const int peer = 1 - rank;
    unsigned char *out = malloc(n), *in = malloc(n);
    for (size_t i = 0; i < n; ++i)
        out[i] = pattern(i, 30 + rank);
    for (int round = 0; round < 10; ++round) {
        MPI_Request r[2];
        memset(in, 0, n);
        MPI_Isend(out, (int)n, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(in, (int)n, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        bad += check_bytes(in, n, 30 + peer, "exchange");
        if (rank == 1)
            ++*messages;
    }
    free(out);
    free(in);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, nranks, mode = 0, failures = 0, messages = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_rndv: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    void *attached = NULL;
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "-b") == 0 || strcmp(argv[a], "-S") == 0) {
            mode = argv[a][1];
            continue;
        }
        if (strcmp(argv[a], "-x") == 0 && a + 1 < argc) {
            failures += extras(rank, (size_t)strtoull(argv[++a], NULL, 0), &messages);
            continue;
        }
        if (strcmp(argv[a], "-s") == 0 && a + 1 < argc) {
            failures += stream(rank, (size_t)strtoull(argv[++a], NULL, 0), &messages);
            continue;
        }
        if (strcmp(argv[a], "-W") == 0 && a + 1 < argc) {
            failures += windows(rank, (size_t)strtoull(argv[++a], NULL, 0), &messages);
            continue;
        }
        if (strcmp(argv[a], "-e") == 0 && a + 1 < argc) {
            failures += exchange(rank, (size_t)strtoull(argv[++a], NULL, 0), &messages);
            continue;
        }
        if (strcmp(argv[a], "-w") == 0 && a + 1 < argc) {
            const unsigned seconds = (unsigned)strtoul(argv[++a], NULL, 0);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                printf("mpi_rndv: waiting %u s\n", seconds);
                fflush(stdout);
            } else {
                sleep(seconds);
            }
            continue;
        }
        const size_t n = (size_t)strtoull(argv[a], NULL, 0);
        if (mode == 'b' && !attached) {
            int bytes = 0;
            MPI_Pack_size((int)n, MPI_BYTE, MPI_COMM_WORLD, &bytes);
            size_t len = 4 * ((size_t)bytes + MPI_BSEND_OVERHEAD) + (1 << 24);
            attached = malloc(len);
            MPI_Buffer_attach(attached, (int)len);
        }
        /* every other byte of a 2n-byte buffer */
        MPI_Datatype strided;
        MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &strided);
        MPI_Type_commit(&strided);
        unsigned char *contig = malloc(n + 1), *sparse = malloc(2 * n + 1);
        for (int tag = 0; tag < 4; ++tag) {
            const int send_sparse = tag & 1, recv_sparse = tag & 2;
            if (rank == 0) {
                for (size_t i = 0; i < n; ++i) {
                    contig[i] = pattern(i, tag);
                    sparse[2 * i] = pattern(i, tag);
                }
                void *buf = send_sparse ? (void *)sparse : (void *)contig;
                MPI_Datatype t = send_sparse ? strided : MPI_BYTE;
                const int count = send_sparse ? 1 : (int)n;
                if (mode == 'b')
                    MPI_Bsend(buf, count, t, 1, tag, MPI_COMM_WORLD);
                else if (mode == 'S')
                    MPI_Ssend(buf, count, t, 1, tag, MPI_COMM_WORLD);
                else
                    MPI_Send(buf, count, t, 1, tag, MPI_COMM_WORLD);
            } else {
                memset(contig, 0xee, n + 1);
                memset(sparse, 0xee, 2 * n + 1);
                MPI_Status st;
                void *buf = recv_sparse ? (void *)sparse : (void *)contig;
                MPI_Datatype t = recv_sparse ? strided : MPI_BYTE;
                const int count = recv_sparse ? 1 : (int)n;
                MPI_Recv(buf, count, t, 0, tag, MPI_COMM_WORLD, &st);
                int got = -1;
                MPI_Get_count(&st, MPI_BYTE, &got);
                int bad = got != (int)n;
                for (size_t i = 0; i < n && !bad; ++i) {
                    const unsigned char v = recv_sparse ? sparse[2 * i] : contig[i];
                    if (v != pattern(i, tag)) {
                        fprintf(stderr,
                                "mpi_rndv: %zu bytes, tag %d: byte %zu is %u, expected %u\n", n,
                                tag, i, v, pattern(i, tag));
                        bad = 1;
                    }
                    if (recv_sparse && i + 1 < n && sparse[2 * i + 1] != 0xee) {
                        fprintf(stderr, "mpi_rndv: %zu bytes, tag %d: hole %zu overwritten\n", n,
                                tag, 2 * i + 1);
                        bad = 1;
                    }
                }
                if (!recv_sparse && contig[n] != 0xee) {
                    fprintf(stderr, "mpi_rndv: %zu bytes, tag %d: written past the end\n", n, tag);
                    bad = 1;
                }
                if (got != (int)n)
                    fprintf(stderr, "mpi_rndv: %zu bytes, tag %d: count %d\n", n, tag, got);
                failures += bad;
                ++messages;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Type_free(&strided);
        free(contig);
        free(sparse);
    }
    if (attached) {
        int len;
        MPI_Buffer_detach(&attached, &len);
        free(attached);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 1 && all == 0)
        printf("mpi_rndv: 2 ranks, %d messages intact\n", messages);
    MPI_Finalize();
    return all != 0;
}
