/*
 * memcpy bandwidth, the reference that point-to-point bandwidth is compared with: copies SIZE
 * bytes between two page-aligned buffers (each touched first) until about half a second has
 * passed; prints MB/s (10^6 bytes per second). contrib/bench-p2p.sh runs it in every round.
 *   memcpy_bench SIZE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const size_t size = argc > 1 ? (size_t)atol(argv[1]) : 1 << 20;
    char *a = NULL, *b = NULL;
    if (size == 0 || posix_memalign((void **)&a, 4096, size) != 0 ||
        posix_memalign((void **)&b, 4096, size) != 0)
        return 1;
    memset(a, 1, size);
    memset(b, 2, size);
    for (int i = 0; i < 10; ++i) /* warm */
        memcpy(i % 2 ? a : b, i % 2 ? b : a, size);
    size_t copies = 0;
    const double t0 = now();
    double t = t0;
    while (t - t0 < 0.5) {
        for (int i = 0; i < 16; ++i, ++copies)
            memcpy(copies % 2 ? a : b, copies % 2 ? b : a, size);
        t = now();
    }
    printf("%.3f\n", (double)size * (double)copies / (t - t0) / 1e6);
    free(a);
    free(b);
    return 0;
}
