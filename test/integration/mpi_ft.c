/*
 * mpi_ft: processes that fail under fault tolerance (mpirun --with-ft ulfm), for mpi_ft.sh.
 *
 * Usage: mpi_ft HOW VICTIM [WHAT [SECONDS]]. Every rank reads the MPIX_FT attribute and prints
 * it. Rank VICTIM fails as HOW says:
 *   kill     it prints "rank V: dying" and sends itself SIGKILL
 *   exit     it prints "rank V: leaving" and exits with status 0 without MPI_Finalize
 *   abort    it calls MPI_Abort(MPI_COMM_WORLD, 7): the job ends, fault tolerance or not
 *   none     nobody fails
 * after SECONDS (default 0.3) when the others wait in MPI_Recv, at once otherwise. The others
 * (MPI_ERRORS_RETURN on MPI_COMM_WORLD) do WHAT:
 *   compute  compute for SECONDS (default 1) without calling MPI
 *   recv     MPI_Recv from the victim, which never sends: it must return MPIX_ERR_PROC_FAILED
 *   send     compute for SECONDS, then MPI_Send 64 KiB to the victim and MPI_Recv from it:
 *            both must return MPIX_ERR_PROC_FAILED
 * and print "rank R: <what> returned <error class name>", then call MPI_Finalize, which must
 * not wait for the failed rank, and print "rank R: finalized". Output is printf without fflush:
 * a line is not lost when the rank dies right after it (stdout is line-buffered under mpirun).
 */
#include <mpi-ext.h>
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void compute(double seconds)
{
    volatile double x = 0;
    const double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 100000; ++i)
            x += i * 1e-9;
}

static const char *class_name(int rc)
{
    int cls;
    static char text[MPI_MAX_ERROR_STRING];
    int len;
    if (rc == MPI_SUCCESS)
        return "MPI_SUCCESS";
    MPI_Error_class(rc, &cls);
    if (cls == MPIX_ERR_PROC_FAILED)
        return "MPIX_ERR_PROC_FAILED";
    MPI_Error_string(cls, text, &len);
    return text;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mpi_ft kill|exit|abort|none VICTIM [compute|recv|send [S]]\n");
        return 2;
    }
    const char *how = argv[1];
    const int victim = atoi(argv[2]);
    const char *what = argc > 3 ? argv[3] : "compute";
    const int waits = strcmp(what, "recv") == 0;
    const double seconds = argc > 4 ? atof(argv[4]) : waits ? 0.3 : 1.0;
    int rank, size, flag = 0, *ft = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &flag);
    printf("rank %d: MPIX_FT %s %d\n", rank, flag ? "set" : "unset", flag && ft ? *ft : -1);
    if (rank == victim) {
        if (waits)
            compute(seconds);
        if (strcmp(how, "kill") == 0) {
            printf("rank %d: dying\n", rank);
            raise(SIGKILL);
        } else if (strcmp(how, "exit") == 0) {
            printf("rank %d: leaving\n", rank);
            exit(0);
        } else if (strcmp(how, "abort") == 0) {
            MPI_Abort(MPI_COMM_WORLD, 7);
        }
    } else if (strcmp(what, "recv") == 0) {
        int v = 0;
        const int rc = MPI_Recv(&v, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d: recv returned %s\n", rank, class_name(rc));
    } else if (strcmp(what, "send") == 0) {
        static char buf[65536];
        compute(seconds);
        int rc = MPI_Send(buf, sizeof buf, MPI_BYTE, victim, 0, MPI_COMM_WORLD);
        printf("rank %d: send returned %s\n", rank, class_name(rc));
        rc = MPI_Recv(buf, sizeof buf, MPI_BYTE, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d: recv returned %s\n", rank, class_name(rc));
    } else {
        /* Compute without MPI calls: the failure must not need one to be learnt, nor declare
         * this rank dead. */
        compute(seconds);
    }
    MPI_Finalize();
    printf("rank %d: finalized\n", rank);
    return 0;
}
