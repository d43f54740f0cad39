/* neighbor_coll: the neighbourhood collectives (MPI-3.1 7.6), every one blocking and
 * non-blocking, on Cartesian grids (1-D periodic, where at 1 and 2 ranks a neighbour appears
 * twice; 2-D periodic x open; 3-D), a graph, and distributed graphs made both ways (one with an
 * edge named twice). What each rank receives is compared with a serial reference computed from
 * the rank numbers: block j comes from in-neighbour j, which sent it as the block of its
 * out-neighbour list that names this rank (the m-th time when this rank names it m times
 * before), and blocks of MPI_PROC_NULL neighbours stay untouched.
 * Runs at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "neighbor_coll"
#include "test_program.h"

static int size;

#define MAXN 16 /* neighbours per rank */
#define C    2  /* elements per block in the uniform collectives */
#define WBLK 64 /* bytes per block in alltoallw */

struct topo {
    const char *name;
    MPI_Comm comm;
    int indeg, outdeg, in[MAXN], out[MAXN];
    int outdeg_of[8], out_of[8][MAXN]; /* every rank's out-neighbours, in order */
};

/* The block index k under which rank s sent to this rank the message received in block j. */
static int sender_block(const struct topo *t, int j)
{
    const int s = t->in[j];
    int m = 0;
    for (int i = 0; i < j; ++i)
        m += t->in[i] == s;
    for (int k = 0; k < t->outdeg_of[s]; ++k)
        if (t->out_of[s][k] == rank && m-- == 0)
            return k;
    return -1;
}

static int value(int s, int k, int e) { return s * 1000 + k * 10 + e; }
/* Elements from s to r in the v- and w-forms (the same at both ends). */
static int vcount(int s, int r) { return 1 + (s + 2 * r) % 3; }
static MPI_Datatype wtype(int s, int r) { return (s + r) % 2 ? MPI_DOUBLE : MPI_INT; }

static void wait_if(int nb, MPI_Request *req)
{
    if (nb)
        MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void run(const struct topo *t, int nb)
{
    const char *mode = nb ? "non-blocking" : "blocking";
    const char *name = t->name;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request *rq = nb ? &req : NULL;
    int sbuf[MAXN * 4 + 4], rbuf[MAXN * 4 + 4];
    int scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN];

    /* allgather */
    for (int e = 0; e < C; ++e)
        sbuf[e] = value(rank, 0, e);
    memset(rbuf, 0xff, sizeof rbuf);
    if (nb)
        MPI_Ineighbor_allgather(sbuf, C, MPI_INT, rbuf, C, MPI_INT, t->comm, rq);
    else
        MPI_Neighbor_allgather(sbuf, C, MPI_INT, rbuf, C, MPI_INT, t->comm);
    wait_if(nb, &req);
    for (int j = 0; j < t->indeg; ++j)
        for (int e = 0; e < C; ++e) {
            const int want = t->in[j] == MPI_PROC_NULL ? -1 : value(t->in[j], 0, e);
            CHECK(rbuf[j * C + e] == want, "%s %s allgather: block %d[%d] = %d, want %d", name,
                  mode, j, e, rbuf[j * C + e], want);
        }

    /* allgatherv: blocks one element apart */
    memset(rbuf, 0xff, sizeof rbuf);
    for (int j = 0; j < t->indeg; ++j) {
        rcounts[j] = C;
        rdispls[j] = j * (C + 1);
    }
    if (nb)
        MPI_Ineighbor_allgatherv(sbuf, C, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, t->comm, rq);
    else
        MPI_Neighbor_allgatherv(sbuf, C, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, t->comm);
    wait_if(nb, &req);
    for (int i = 0; i < t->indeg * (C + 1); ++i) {
        const int j = i / (C + 1), e = i % (C + 1);
        const int want = e == C || t->in[j] == MPI_PROC_NULL ? -1 : value(t->in[j], 0, e);
        CHECK(rbuf[i] == want, "%s %s allgatherv: element %d = %d, want %d", name, mode, i, rbuf[i],
              want);
    }

    /* alltoall */
    for (int k = 0; k < t->outdeg; ++k)
        for (int e = 0; e < C; ++e)
            sbuf[k * C + e] = value(rank, k, e);
    memset(rbuf, 0xff, sizeof rbuf);
    if (nb)
        MPI_Ineighbor_alltoall(sbuf, C, MPI_INT, rbuf, C, MPI_INT, t->comm, rq);
    else
        MPI_Neighbor_alltoall(sbuf, C, MPI_INT, rbuf, C, MPI_INT, t->comm);
    wait_if(nb, &req);
    for (int j = 0; j < t->indeg; ++j)
        for (int e = 0; e < C; ++e) {
            const int want =
                t->in[j] == MPI_PROC_NULL ? -1 : value(t->in[j], sender_block(t, j), e);
            CHECK(rbuf[j * C + e] == want, "%s %s alltoall: block %d[%d] = %d, want %d", name, mode,
                  j, e, rbuf[j * C + e], want);
        }

    /* alltoallv: counts that depend on the pair, blocks 4 elements apart from element 1 */
    for (int k = 0; k < t->outdeg; ++k) {
        const int d = t->out[k];
        scounts[k] = d == MPI_PROC_NULL ? 1 : vcount(rank, d);
        sdispls[k] = 1 + 4 * k;
        for (int e = 0; e < scounts[k]; ++e)
            sbuf[sdispls[k] + e] = value(rank, k, e);
    }
    for (int j = 0; j < t->indeg; ++j) {
        const int s = t->in[j];
        rcounts[j] = s == MPI_PROC_NULL ? 1 : vcount(s, rank);
        rdispls[j] = 1 + 4 * j;
    }
    memset(rbuf, 0xff, sizeof rbuf);
    if (nb)
        MPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
                                t->comm, rq);
    else
        MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
                               t->comm);
    wait_if(nb, &req);
    for (int i = 0; i < 1 + 4 * t->indeg; ++i) {
        const int j = (i - 1) / 4, e = (i - 1) % 4;
        int want = -1;
        if (i > 0 && t->in[j] != MPI_PROC_NULL && e < rcounts[j])
            want = value(t->in[j], sender_block(t, j), e);
        CHECK(rbuf[i] == want, "%s %s alltoallv: element %d = %d, want %d", name, mode, i, rbuf[i],
              want);
    }

    /* alltoallw: int or double by pair, byte displacements */
    unsigned char sw[MAXN * WBLK], rw[MAXN * WBLK];
    MPI_Aint swd[MAXN], rwd[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    for (int k = 0; k < t->outdeg; ++k) {
        const int d = t->out[k];
        scounts[k] = d == MPI_PROC_NULL ? 1 : vcount(rank, d);
        st[k] = d == MPI_PROC_NULL ? MPI_INT : wtype(rank, d);
        swd[k] = (MPI_Aint)k * WBLK + 8;
        for (int e = 0; e < scounts[k]; ++e) {
            if (st[k] == MPI_INT) {
                const int v = value(rank, k, e);
                memcpy(sw + swd[k] + e * sizeof v, &v, sizeof v);
            } else {
                const double v = value(rank, k, e);
                memcpy(sw + swd[k] + e * sizeof v, &v, sizeof v);
            }
        }
    }
    for (int j = 0; j < t->indeg; ++j) {
        const int s = t->in[j];
        rcounts[j] = s == MPI_PROC_NULL ? 1 : vcount(s, rank);
        rt[j] = s == MPI_PROC_NULL ? MPI_INT : wtype(s, rank);
        rwd[j] = (MPI_Aint)j * WBLK + 8;
    }
    memset(rw, 0xab, sizeof rw);
    if (nb)
        MPI_Ineighbor_alltoallw(sw, scounts, swd, st, rw, rcounts, rwd, rt, t->comm, rq);
    else
        MPI_Neighbor_alltoallw(sw, scounts, swd, st, rw, rcounts, rwd, rt, t->comm);
    wait_if(nb, &req);
    for (int j = 0; j < t->indeg; ++j) {
        const int s = t->in[j];
        const unsigned char *b = rw + j * WBLK;
        if (s == MPI_PROC_NULL) {
            for (int i = 0; i < WBLK; ++i)
                CHECK(b[i] == 0xab, "%s %s alltoallw: block %d of MPI_PROC_NULL written", name,
                      mode, j);
            continue;
        }
        for (int e = 0; e < rcounts[j]; ++e) {
            const int want = value(s, sender_block(t, j), e);
            double got;
            if (rt[j] == MPI_INT) {
                int v;
                memcpy(&v, b + 8 + e * sizeof v, sizeof v);
                got = v;
            } else {
                memcpy(&got, b + 8 + e * sizeof got, sizeof got);
            }
            CHECK(got == want, "%s %s alltoallw: block %d[%d] = %g, want %d", name, mode, j, e, got,
                  want);
        }
        for (int i = 0; i < 8; ++i)
            CHECK(b[i] == 0xab, "%s %s alltoallw: byte %d before block %d written", name, mode, i,
                  j);
    }
}

/* A Cartesian grid's neighbours of rank r, as the standard orders them. */
static int cart_list(const int *dims, const int *periods, int ndims, int r, int *list)
{
    int c[3];
    for (int i = ndims - 1, q = r; i >= 0; --i) {
        c[i] = q % dims[i];
        q /= dims[i];
    }
    int n = 0;
    for (int i = 0; i < ndims; ++i)
        for (int dir = -1; dir <= 1; dir += 2) {
            int x = c[i] + dir;
            if (periods[i])
                x = (x + dims[i]) % dims[i];
            if (x < 0 || x >= dims[i]) {
                list[n++] = MPI_PROC_NULL;
                continue;
            }
            int q = 0;
            for (int k = 0; k < ndims; ++k)
                q = q * dims[k] + (k == i ? x : c[k]);
            list[n++] = q;
        }
    return n;
}

static void test_cart(int ndims, const int *periods, const char *name)
{
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(size, ndims, dims);
    struct topo t;
    t.name = name;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &t.comm);
    t.indeg = t.outdeg = cart_list(dims, periods, ndims, rank, t.in);
    memcpy(t.out, t.in, sizeof t.in);
    for (int s = 0; s < size; ++s)
        t.outdeg_of[s] = cart_list(dims, periods, ndims, s, t.out_of[s]);
    /* The library's own shifts agree with the lists. */
    for (int i = 0; i < ndims; ++i) {
        int src, dst;
        MPI_Cart_shift(t.comm, i, 1, &src, &dst);
        CHECK(src == t.in[2 * i] && dst == t.in[2 * i + 1], "%s: shift %d: %d %d, want %d %d", name,
              i, src, dst, t.in[2 * i], t.in[2 * i + 1]);
    }
    run(&t, 0);
    run(&t, 1);
    MPI_Comm cart = t.comm;
    MPI_Comm_dup(cart, &t.comm); /* the copy keeps the topology, and the neighbours */
    run(&t, 0);
    MPI_Comm_free(&t.comm);
    MPI_Comm_free(&cart);
}

/* A ring as a graph: node i is linked to i+1 and i-1. */
static void test_graph(void)
{
    int index[8], edges[16];
    for (int i = 0; i < size; ++i) {
        edges[2 * i] = (i + 1) % size;
        edges[2 * i + 1] = (i - 1 + size) % size;
        index[i] = 2 * i + 2;
    }
    struct topo t;
    t.name = "graph ring";
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &t.comm);
    t.indeg = t.outdeg = 2;
    t.in[0] = t.out[0] = edges[2 * rank];
    t.in[1] = t.out[1] = edges[2 * rank + 1];
    for (int s = 0; s < size; ++s) {
        t.outdeg_of[s] = 2;
        t.out_of[s][0] = edges[2 * s];
        t.out_of[s][1] = edges[2 * s + 1];
    }
    run(&t, 0);
    run(&t, 1);
    MPI_Comm_free(&t.comm);
}

/* Adjacent: rank i receives from i-1 and i+2, and sends to i+1 and i-2. */
static void test_adjacent(void)
{
    struct topo t;
    t.name = "dist graph adjacent";
    t.indeg = t.outdeg = 2;
    t.in[0] = (rank - 1 + size) % size;
    t.in[1] = (rank + 2) % size;
    t.out[0] = (rank + 1) % size;
    t.out[1] = (rank - 2 + 2 * size) % size;
    const int w[2] = {3, 4};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, t.in, w, 2, t.out, w, MPI_INFO_NULL, 0,
                                   &t.comm);
    for (int s = 0; s < size; ++s) {
        t.outdeg_of[s] = 2;
        t.out_of[s][0] = (s + 1) % size;
        t.out_of[s][1] = (s - 2 + 2 * size) % size;
    }
    run(&t, 0);
    run(&t, 1);
    MPI_Comm_free(&t.comm);
}

/* General: rank r names its edges to r+1 (twice), r+3 and r-1. The order of each rank's
 * neighbours is the library's: learnt with MPI_Dist_graph_neighbors, and every rank's
 * out-neighbours gathered for the reference. */
static void test_general(void)
{
    struct topo t;
    t.name = "dist graph";
    const int src[1] = {rank};
    const int deg[1] = {4};
    const int dst[4] = {(rank + 1) % size, (rank + 3) % size, (rank + 1) % size,
                        (rank - 1 + size) % size};
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                          &t.comm);
    int weighted;
    MPI_Dist_graph_neighbors_count(t.comm, &t.indeg, &t.outdeg, &weighted);
    CHECK(t.indeg == 4 && t.outdeg == 4 && !weighted, "dist graph: degrees %d %d weighted %d",
          t.indeg, t.outdeg, weighted);
    if (t.indeg != 4 || t.outdeg != 4)
        return;
    MPI_Dist_graph_neighbors(t.comm, 4, t.in, MPI_UNWEIGHTED, 4, t.out, MPI_UNWEIGHTED);
    int mine[MAXN + 1], all[8][MAXN + 1];
    mine[0] = t.outdeg;
    memcpy(mine + 1, t.out, sizeof t.out);
    MPI_Allgather(mine, MAXN + 1, MPI_INT, all, MAXN + 1, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < size; ++s) {
        t.outdeg_of[s] = all[s][0];
        memcpy(t.out_of[s], all[s] + 1, sizeof t.out_of[s]);
    }
    run(&t, 0);
    run(&t, 1);
    MPI_Comm_free(&t.comm);
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    test_cart(1, (const int[]){1}, "1-D periodic");
    test_cart(1, (const int[]){0}, "1-D open");
    test_cart(2, (const int[]){1, 0}, "2-D periodic x open");
    test_cart(3, (const int[]){0, 1, 1}, "3-D");
    test_graph();
    test_adjacent();
    test_general();

    /* Without a topology: MPI_ERR_TOPOLOGY. */
    int x = 0, y[8];
    CHECK(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_TOPOLOGY,
          "MPI_Neighbor_allgather on MPI_COMM_WORLD");
    MPI_Request r;
    CHECK(MPI_Ineighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &r) ==
              MPI_ERR_TOPOLOGY,
          "MPI_Ineighbor_alltoall on MPI_COMM_WORLD");

    return finish("every neighbourhood collective right");
}
