/*
 * mpi_linger: ranks that stay busy in different ways until something ends them, for the test
 * that kills mpirun under a running job (mpirun_killed.sh).
 *
 * Usage: mpi_linger DIR MODE [MODE...]. Rank r takes MODE number r % (number of modes):
 *   recv      MPI_Init, then MPI_Recv from a rank that never sends
 *   compute   MPI_Init, then a busy loop that never calls MPI
 *   finalize  MPI_Init, then MPI_Finalize, where it waits for ranks that never come
 *   sleep     MPI_Init, then sleep (no MPI call, no CPU)
 *   late      sleep a minute before MPI_Init: the other ranks wait in MPI_Init for it
 * Each rank writes its pid to DIR/start.<rank> before MPI_Init (a rank in "late" before its
 * sleep), and again to DIR/ready.<rank> once it settles into its mode. The ranks print nothing: a
 * write to the dead mpirun's pipes would end them by SIGPIPE and hide what this test looks for.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void ready(const char *dir, const char *what, int rank)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s.%d", dir, what, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        exit(3);
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
    rename(tmp, path);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *env_rank = getenv("MPIRUN_RANK");
    int rank = env_rank ? atoi(env_rank) : 0;
    const char *mode = argv[2 + rank % (argc - 2)];
    ready(argv[1], "start", rank);
    if (strcmp(mode, "late") == 0)
        sleep(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ready(argv[1], "ready", rank);
    if (strcmp(mode, "recv") == 0) {
        int v;
        MPI_Recv(&v, 1, MPI_INT, (rank + 1) % size, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "compute") == 0) {
        volatile unsigned long x = 0;
        for (;;)
            x = x * 6364136223846793005ul + 1;
    } else if (strcmp(mode, "finalize") == 0) {
        MPI_Finalize();
    } else {
        for (;;)
            sleep(60);
    }
    return 0;
}
