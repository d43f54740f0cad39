/*
 * The host's cross-core latency, the floor under every shared-memory figure: two processes
 * (a fork) pass a counter back and forth through one shared cache line, 200000 times; prints
 * the one-way time in ns. On a virtual machine it moves between levels while a job runs (a
 * Zen 5 VM: 33-62 ns, and 250 ns for minutes at a time, when the hypervisor places the two
 * vCPUs apart), and every shared-memory figure with it: contrib/bench-lib.sh (bench_group, for
 * bench-p2p.sh, bench-coll.sh and bench-sm-copy.sh) runs it before and after each group of
 * measurements and measures again a group that straddled a change of level.
 *   core_pingpong [ROUNDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const long rounds = argc > 1 ? atol(argv[1]) : 200000;
    volatile uint64_t *line =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (line == MAP_FAILED || rounds <= 0)
        return 1;
    volatile uint64_t *ping = line, *pong = line + 8; /* two lines' worth apart: 64 bytes */
    const pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        for (long i = 1; i <= rounds; ++i) {
            while (*ping != (uint64_t)i)
                ;
            *pong = (uint64_t)i;
        }
        _exit(0);
    }
    const double t0 = now();
    for (long i = 1; i <= rounds; ++i) {
        *ping = (uint64_t)i;
        while (*pong != (uint64_t)i)
            ;
    }
    const double t = now() - t0;
    waitpid(child, NULL, 0);
    printf("%.1f\n", t * 1e9 / (double)rounds / 2);
    return 0;
}
