/*
 * pmgr_hello: every rank bootstraps through mpirun (PMGR_COLLECTIVE), the
 * ranks exchange their host names and a value, and rank 0 prints the whole
 * job in rank order.
 *
 *   mpirun -np 4 --oversubscribe examples/pmgr_hello
 */
#include <pmgr_collective_client.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int np, me, id;
    if (pmgr_init(&argc, &argv, &np, &me, &id) != PMGR_SUCCESS || pmgr_open() != PMGR_SUCCESS)
        return 1;
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    char **hosts = NULL, *buf = NULL;
    int square = me * me, *squares = malloc(sizeof(int) * (size_t)np);
    if (pmgr_allgatherstr(host, &hosts, &buf) != PMGR_SUCCESS ||
        pmgr_allgather(&square, sizeof square, squares) != PMGR_SUCCESS) {
        pmgr_abort(1, "rank %d: the exchange failed", me);
        return 1;
    }
    if (me == 0) {
        printf("job %d: %d ranks\n", id, np);
        for (int r = 0; r < np; ++r)
            printf("  hello from rank %d of %d on %s (rank squared: %d)\n", r, np, hosts[r],
                   squares[r]);
    }
    free(hosts);
    free(buf);
    free(squares);
    pmgr_close();
    pmgr_finalize();
    return 0;
}
