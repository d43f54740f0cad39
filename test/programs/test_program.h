/* What the test programs share (the .c files of test/programs, which
 * test/integration/mpi_programs.sh runs). Define PROGRAM (the program's name, as a string)
 * before including this. CHECK(cond, format, ...) counts a check that failed in `failures` and
 * reports it (the first 20) with the program, the rank and the line; `rank` is the program's to
 * set. */
#ifndef WEFT_TEST_PROGRAM_H
#define WEFT_TEST_PROGRAM_H

#include <mpi.h>
#include <stdio.h>

static int rank, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond) && failures++ < 20) {                                                          \
            printf("%s: rank %d: line %d: ", PROGRAM, rank, __LINE__);                             \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
        }                                                                                          \
    } while (0)

/* The end of a program: the failures of every rank summed; when there are none, rank 0 prints
 * "PROGRAM: N ranks: what". Then MPI_Finalize. Returns the program's exit status. */
static inline int finish(const char *what)
{
    int size = 0, all = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("%s: %d ranks: %s\n", PROGRAM, size, what);
    MPI_Finalize();
    return all != 0;
}

#endif
