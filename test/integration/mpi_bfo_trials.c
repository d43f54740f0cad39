/*
 * Random traffic between ranks 0 and 1, every byte checked, for mpi_bfo_trials.sh (which
 * injects a fault somewhere into it): mpi_bfo_trials SEED [ROUNDS [SECONDS]].
 *
 * Both ranks derive the same plan from SEED: per round, 1-6 messages, each in either
 * direction, of a random size (empty, small, around the eager limit, or up to 1 MiB), tag,
 * communicator (MPI_COMM_WORLD or one of two duplicates) and send call (MPI_Send, MPI_Isend,
 * MPI_Ssend, MPI_Issend); the receiver posts every receive of the round first (MPI_Irecv,
 * naming the sender or MPI_ANY_SOURCE). Each message's bytes follow from SEED, the round and
 * its number. After each round, no message may be left (MPI_Iprobe on every communicator):
 * a copy delivered twice would be. Prints "mpi_bfo_trials: seed S: R rounds, N messages
 * intact" when all are, else what was wrong, and exits 1. With SECONDS, the ranks stop after
 * the first round that ends SECONDS or more after MPI_Init returned (rank 0's clock decides),
 * or after ROUNDS, whichever comes first: a job that must outlast a fault by a few seconds,
 * on a host of any speed and load. Rank 0 also prints each round that took more than 0.3 s,
 * with the wall-clock time it ended ("mpi_bfo_trials: round R stalled S s, until T"), so that
 * a test can tell when traffic flowed again after a fault.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static uint64_t rng_state;
static uint64_t next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static unsigned char byte_at(unsigned seed, int round, int msg, size_t i)
{
    return (unsigned char)((i * 131u) ^ (seed * 7u) ^ ((unsigned)round * 31u) ^
                           ((unsigned)msg * 17u));
}

typedef struct {
    int from, tag, comm, call, any;
    size_t size;
} Msg;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const unsigned seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1;
    const int rounds = argc > 2 ? atoi(argv[2]) : 20;
    const double seconds = argc > 3 ? atof(argv[3]) : 0;
    const double start = MPI_Wtime();
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_bfo_trials: needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm comms[3] = {MPI_COMM_WORLD, MPI_COMM_NULL, MPI_COMM_NULL};
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]);
    rng_state = 0x9e3779b97f4a7c15ull ^ seed;
    int bad = 0, messages = 0, done_rounds = 0, stop = 0;
    double round_start = MPI_Wtime();
    for (int round = 0; round < rounds && !stop; ++round) {
        Msg plan[6];
        const int n = 1 + (int)(next() % 6);
        for (int m = 0; m < n; ++m) {
            Msg *p = &plan[m];
            p->from = (int)(next() % 2);
            p->tag = (int)(next() % 100);
            p->comm = (int)(next() % 3);
            p->call = (int)(next() % 4);
            p->any = (int)(next() % 3 == 0);
            switch (next() % 4) {
            case 0: p->size = next() % 64; break;
            case 1: p->size = 60000 + next() % 10000; break; /* around tcp's eager limit */
            case 2: p->size = next() % 200000; break;
            default: p->size = next() % (1 << 20); break;
            }
        }
        unsigned char *bufs[6] = {0};
        MPI_Request reqs[12];
        int nreq = 0;
        for (int m = 0; m < n; ++m) {
            bufs[m] = malloc(plan[m].size ? plan[m].size : 1);
            if (plan[m].from == rank) {
                for (size_t i = 0; i < plan[m].size; ++i)
                    bufs[m][i] = byte_at(seed, round, m, i);
            } else {
                memset(bufs[m], 0xee, plan[m].size ? plan[m].size : 1);
                MPI_Irecv(bufs[m], (int)plan[m].size, MPI_BYTE,
                          plan[m].any ? MPI_ANY_SOURCE : 1 - rank, plan[m].tag, comms[plan[m].comm],
                          &reqs[nreq++]);
            }
        }
        for (int m = 0; m < n; ++m) {
            if (plan[m].from != rank)
                continue;
            MPI_Comm c = comms[plan[m].comm];
            const int to = 1 - rank, cnt = (int)plan[m].size;
            switch (plan[m].call) {
            case 0: MPI_Send(bufs[m], cnt, MPI_BYTE, to, plan[m].tag, c); break;
            case 1: MPI_Isend(bufs[m], cnt, MPI_BYTE, to, plan[m].tag, c, &reqs[nreq++]); break;
            case 2: MPI_Ssend(bufs[m], cnt, MPI_BYTE, to, plan[m].tag, c); break;
            default: MPI_Issend(bufs[m], cnt, MPI_BYTE, to, plan[m].tag, c, &reqs[nreq++]); break;
            }
        }
        MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        for (int m = 0; m < n && !bad; ++m) {
            if (plan[m].from == rank)
                continue;
            ++messages;
            for (size_t i = 0; i < plan[m].size; ++i)
                if (bufs[m][i] != byte_at(seed, round, m, i)) {
                    fprintf(stderr,
                            "mpi_bfo_trials: seed %u round %d message %d (%zu bytes, tag %d): "
                            "byte %zu is %u, expected %u\n",
                            seed, round, m, plan[m].size, plan[m].tag, i, bufs[m][i],
                            byte_at(seed, round, m, i));
                    bad = 1;
                    break;
                }
        }
        for (int m = 0; m < n; ++m)
            free(bufs[m]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < 3 && !bad; ++k) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[k], &flag, &st);
            if (flag) {
                fprintf(stderr,
                        "mpi_bfo_trials: seed %u round %d: a message left over (tag %d "
                        "on communicator %d): delivered twice?\n",
                        seed, round, st.MPI_TAG, k);
                bad = 1;
            }
        }
        /* Both ranks stop together: when either found a message wrong, or when rank 0's
         * clock says the time is up. */
        ++done_rounds;
        const double now = MPI_Wtime();
        if (rank == 0 && now - round_start > 0.3) {
            struct timeval tv;
            gettimeofday(&tv, NULL);
            printf("mpi_bfo_trials: round %d stalled %.2f s, until %ld.%06ld\n", round,
                   now - round_start, (long)tv.tv_sec, (long)tv.tv_usec);
            fflush(stdout);
        }
        round_start = now;
        if (rank == 0 && round == 0) {
            /* The eager rail's connection is up (the other rails connect when a pipeline
             * first stripes over them, which messages of one FRAG, up to tcp's 1 MiB
             * max_send_size, never do): a test that injects a real fault waits for this line,
             * so a slow start (a sanitizer build, a loaded host) cannot put the fault before
             * the traffic. */
            printf("mpi_bfo_trials: traffic flowing\n");
            fflush(stdout);
        }
        int my_stop = bad || (seconds > 0 && rank == 0 && MPI_Wtime() - start >= seconds);
        MPI_Allreduce(&my_stop, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    int all_bad = 0, all_messages = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&messages, &all_messages, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && !all_bad)
        printf("mpi_bfo_trials: seed %u: %d rounds, %d messages intact\n", seed, done_rounds,
               all_messages);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_Finalize();
    return all_bad;
}
