/* A rank that kills itself with SIGKILL at a chosen point of its life, for the
 * clean-up test (job_files_cleanup.sh). WEFT_TEST_KILL_RANK names the rank,
 * WEFT_TEST_KILL_AT the phase (init, traffic, finalize) and WEFT_TEST_KILL_US
 * a delay in microseconds from the start of that phase; a thread does the
 * killing, so the rank dies wherever it is at that moment. The phase
 * "segment" kills the rank the moment its btl/sm segment file appears (in
 * btl_sm_segment_dir, as the rank was given it): inside MPI_Init, with the
 * file that only the rank itself would remove. Rank 0 prints
 * MPIRUN_ID first, so that the test knows the job's file names. */
#include <mpi.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long delay_us;
static char segment[512];

static void *killer(void *arg)
{
    (void)arg;
    if (segment[0]) {
        struct stat st;
        /* At most 20 s: a rank that never makes its segment is not killed. */
        for (int i = 0; i < 200000 && stat(segment, &st) != 0; ++i)
            usleep(100);
    } else {
        usleep((useconds_t)delay_us);
    }
    raise(SIGKILL);
    return NULL;
}

static void arm(const char *phase, int rank)
{
    const char *at = getenv("WEFT_TEST_KILL_AT");
    const char *who = getenv("WEFT_TEST_KILL_RANK");
    const char *us = getenv("WEFT_TEST_KILL_US");
    if (!at || !who || strcmp(at, phase) != 0 || atoi(who) != rank)
        return;
    delay_us = us ? atol(us) : 0;
    if (strcmp(phase, "segment") == 0) {
        const char *dir = getenv("WEFT_MCA_btl_sm_segment_dir");
        const char *id = getenv("MPIRUN_ID");
        snprintf(segment, sizeof segment, "%s/weft-pmgr-%s-%d", dir ? dir : "/dev/shm",
                 id ? id : "", rank);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, killer, NULL) == 0)
        pthread_detach(t);
}

int main(int argc, char **argv)
{
    const char *env_rank = getenv("MPIRUN_RANK");
    const int boot_rank = env_rank ? atoi(env_rank) : 0;
    if (boot_rank == 0) {
        printf("job %s\n", getenv("MPIRUN_ID") ? getenv("MPIRUN_ID") : "?");
        fflush(stdout);
    }
    arm("init", boot_rank);
    arm("segment", boot_rank);
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    arm("traffic", rank);
    /* Messages over every path, and communicators made and freed (each with its own coll/sm
     * segment), for 0.4 s as rank 0 counts it. */
    static char buf[256 * 1024];
    const double start = MPI_Wtime();
    int more = 1;
    for (int round = 0; more; ++round) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        const int len = (round % 2) ? (int)sizeof buf : 64;
        const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Sendrecv_replace(buf, len, MPI_CHAR, next, round, prev, round, dup, MPI_STATUS_IGNORE);
        more = MPI_Wtime() - start < 0.4;
        MPI_Bcast(&more, 1, MPI_INT, 0, dup);
        MPI_Comm_free(&dup);
    }
    arm("finalize", rank);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_kill_points: %d ranks, no kill\n", size);
    return 0;
}
