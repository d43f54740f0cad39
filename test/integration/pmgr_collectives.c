/*
 * Every PMGR_COLLECTIVE call through Weft's client, with the bytes checked:
 * barrier, bcast / gather / scatter with root 0 and root N-1, allgather,
 * alltoall, allgatherstr, allreducemaxint, at several sizes. Run under an
 * mpirun (Weft's, or the test suite's minimal server). Rank 0 prints one
 * summary line; any wrong byte prints what and exits 1.
 */
#include <pmgr_collective_client.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;

static unsigned char pattern(int src, int dst, int k)
{
    return (unsigned char)(31 * src + 7 * dst + 3 * k + 1);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "pmgr_collectives rank %d: ", me);                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CALL(expr) CHECK((expr) == PMGR_SUCCESS, "%s failed", #expr)

/* The buffers of the call under way, held here so that a rank that exits on a failed call
 * (the fault tests make the survivors' calls fail) still reaches them: no leak report. */
static unsigned char *buf, *all, *mine;

static void run_root(int root, int size)
{
    buf = malloc((size_t)size * np + 1);
    all = malloc((size_t)size * np + 1);
    mine = malloc((size_t)size + 1);

    /* bcast */
    for (int k = 0; k < size; ++k)
        buf[k] = me == root ? pattern(root, 99, k) : 0;
    CALL(pmgr_bcast(buf, size, root));
    for (int k = 0; k < size; ++k)
        CHECK(buf[k] == pattern(root, 99, k), "bcast root %d size %d: byte %d wrong", root, size,
              k);

    /* gather */
    for (int k = 0; k < size; ++k)
        mine[k] = pattern(me, root, k);
    memset(all, 0, (size_t)size * np);
    CALL(pmgr_gather(mine, size, all, root));
    if (me == root)
        for (int s = 0; s < np; ++s)
            for (int k = 0; k < size; ++k)
                CHECK(all[s * size + k] == pattern(s, root, k),
                      "gather root %d size %d: block of rank %d byte %d wrong", root, size, s, k);

    /* scatter */
    if (me == root)
        for (int d = 0; d < np; ++d)
            for (int k = 0; k < size; ++k)
                all[d * size + k] = pattern(root, d, k);
    memset(mine, 0, (size_t)size);
    CALL(pmgr_scatter(all, size, mine, root));
    for (int k = 0; k < size; ++k)
        CHECK(mine[k] == pattern(root, me, k), "scatter root %d size %d: byte %d wrong", root, size,
              k);
    free(buf);
    free(all);
    free(mine);
    buf = all = mine = NULL;
}

static void run_all(int size)
{
    mine = malloc((size_t)size * np + 1);
    all = malloc((size_t)size * np + 1);
    for (int k = 0; k < size; ++k)
        mine[k] = pattern(me, 50, k);
    CALL(pmgr_allgather(mine, size, all));
    for (int s = 0; s < np; ++s)
        for (int k = 0; k < size; ++k)
            CHECK(all[s * size + k] == pattern(s, 50, k),
                  "allgather size %d: block of rank %d byte %d wrong", size, s, k);

    for (int d = 0; d < np; ++d)
        for (int k = 0; k < size; ++k)
            mine[d * size + k] = pattern(me, d, k);
    CALL(pmgr_alltoall(mine, size, all));
    for (int s = 0; s < np; ++s)
        for (int k = 0; k < size; ++k)
            CHECK(all[s * size + k] == pattern(s, me, k),
                  "alltoall size %d: block from rank %d byte %d wrong", size, s, k);
    free(mine);
    free(all);
    mine = all = NULL;
}

int main(int argc, char **argv)
{
    int id = 0;
    CALL(pmgr_init(&argc, &argv, &np, &me, &id));
    CHECK(id != 0, "job id is 0");
    CALL(pmgr_open());
    CALL(pmgr_barrier());
    /* Fault test: this rank dies in the middle, the others are in a
     * collective with it. */
    const char *die = getenv("PMGR_TEST_DIE_RANK");
    if (die && atoi(die) == me)
        raise(SIGKILL);
    const int sizes[] = {0, 1, 6, 13, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        run_root(0, sizes[i]);
        run_root(np - 1, sizes[i]);
        if (np > 2)
            run_root(np / 2, sizes[i]);
        run_all(sizes[i]);
    }

    int v = 1000 + me, max = -1;
    CALL(pmgr_allreducemaxint(&v, &max));
    CHECK(max == 1000 + np - 1, "allreducemaxint gave %d, expected %d", max, 1000 + np - 1);

    char str[64], **strs = NULL, *strbuf = NULL;
    snprintf(str, sizeof str, "rank-%d%.*s", me, me % 5, "xxxxx");
    CALL(pmgr_allgatherstr(str, &strs, &strbuf));
    for (int s = 0; s < np; ++s) {
        char want[64];
        snprintf(want, sizeof want, "rank-%d%.*s", s, s % 5, "xxxxx");
        CHECK(strcmp(strs[s], want) == 0, "allgatherstr: rank %d's string is '%s', expected '%s'",
              s, strs[s], want);
    }
    free(strs);
    free(strbuf);
    CALL(pmgr_barrier());
    CALL(pmgr_close());
    CALL(pmgr_finalize());
    if (me == 0) {
        const char *t = getenv("MPIRUN_USE_TREES");
        printf("pmgr collectives: %d ranks, every call right (trees %s)\n", np,
               t && atoi(t) == 0 ? "off" : "on");
    }
    return 0;
}
