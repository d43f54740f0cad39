/* What the test programs share (the .c files of test/programs, which
 * test/integration/mpi_programs.sh runs). Define PROGRAM (the program's name, as a string)
 * before including this. CHECK(cond, format, ...) counts a check that failed in `failures` and
 * reports it (the first 20) with the program, the rank and the line; `rank` is the program's to
 * set. */
#ifndef WEFT_TEST_PROGRAM_H
#define WEFT_TEST_PROGRAM_H

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

#endif
