/* topo_graph: graph and distributed-graph topologies (MPI-3.1 7.5.3, 7.5.4). A graph over all
 * the ranks and one over all but the last (which gets MPI_COMM_NULL), checked with
 * MPI_Graphdims_get, MPI_Graph_get, MPI_Graph_neighbors(_count) and MPI_Graph_map against the
 * arrays given; MPI_Dist_graph_create_adjacent with weights and with MPI_UNWEIGHTED; and
 * MPI_Dist_graph_create where ranks name edges of other ranks (and some none), each rank's in-
 * and out-neighbours with their weights compared, as multisets, with what a serial pass over
 * every rank's edges gives. Also MPI_Topo_test and the error classes of wrong calls.
 * Runs at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "topo_graph"
#include "test_program.h"

static int size;

#define MAXE 64

/* A graph over nnodes nodes: node i is linked to i+1 and i+2 (mod nnodes), and node 0 to
 * every node (so node 0 has a self loop and some edges appear twice). */
static int build_graph(int nnodes, int *index, int *edges)
{
    int e = 0;
    for (int i = 0; i < nnodes; ++i) {
        edges[e++] = (i + 1) % nnodes;
        edges[e++] = (i + 2) % nnodes;
        if (i == 0)
            for (int j = 0; j < nnodes; ++j)
                edges[e++] = j;
        index[i] = e;
    }
    return e;
}

static void test_graph(int nnodes)
{
    int index[16], edges[MAXE];
    const int nedges = build_graph(nnodes, index, edges);
    MPI_Comm g;
    int rc = MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 0, &g);
    CHECK(rc == MPI_SUCCESS, "MPI_Graph_create(%d nodes) failed: %d", nnodes, rc);
    int newrank = -5;
    MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &newrank);
    CHECK(newrank == (rank < nnodes ? rank : MPI_UNDEFINED), "MPI_Graph_map gave %d", newrank);
    if (rank >= nnodes) {
        CHECK(g == MPI_COMM_NULL, "rank outside the graph got a communicator");
        return;
    }
    CHECK(g != MPI_COMM_NULL, "rank inside the graph got MPI_COMM_NULL");
    if (g == MPI_COMM_NULL)
        return;
    int status, nn = -1, ne = -1;
    MPI_Topo_test(g, &status);
    CHECK(status == MPI_GRAPH, "MPI_Topo_test gave %d", status);
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK(nn == nnodes && ne == nedges, "MPI_Graphdims_get: %d %d, want %d %d", nn, ne, nnodes,
          nedges);
    int gi[16], ge[MAXE];
    MPI_Graph_get(g, 16, MAXE, gi, ge);
    CHECK(memcmp(gi, index, sizeof(int) * (size_t)nnodes) == 0, "MPI_Graph_get: index differs");
    CHECK(memcmp(ge, edges, sizeof(int) * (size_t)nedges) == 0, "MPI_Graph_get: edges differ");
    for (int q = 0; q < nnodes; ++q) {
        int count = -1, nb[MAXE];
        const int first = q ? index[q - 1] : 0;
        MPI_Graph_neighbors_count(g, q, &count);
        CHECK(count == index[q] - first, "MPI_Graph_neighbors_count(%d) = %d", q, count);
        MPI_Graph_neighbors(g, q, MAXE, nb);
        for (int j = 0; j < index[q] - first; ++j)
            CHECK(nb[j] == edges[first + j], "MPI_Graph_neighbors(%d)[%d] = %d, want %d", q, j,
                  nb[j], edges[first + j]);
    }
    MPI_Comm dup;
    MPI_Comm_dup(g, &dup);
    MPI_Topo_test(dup, &status);
    CHECK(status == MPI_GRAPH, "the copy's MPI_Topo_test gave %d", status);
    MPI_Comm_free(&dup);
    int x;
    CHECK(MPI_Graph_neighbors_count(g, nnodes, &x) == MPI_ERR_RANK, "neighbours of a non-node");
    CHECK(MPI_Cartdim_get(g, &x) == MPI_ERR_TOPOLOGY, "MPI_Cartdim_get on a graph");
    CHECK(MPI_Dist_graph_neighbors_count(g, &x, &x, &x) == MPI_ERR_TOPOLOGY,
          "MPI_Dist_graph_neighbors_count on a graph");
    MPI_Comm_free(&g);
}

/* Sort pairs (rank, weight) so that two lists compare as multisets. */
static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] - y[1];
}

static void compare(const char *what, int n, const int *ranks, const int *weights, int want_n,
                    int *want /* pairs */, int weighted)
{
    CHECK(n == want_n, "%s: %d neighbours, want %d", what, n, want_n);
    if (n != want_n)
        return;
    int got[2 * MAXE];
    for (int i = 0; i < n; ++i) {
        got[2 * i] = ranks[i];
        got[2 * i + 1] = weighted ? weights[i] : 0;
        if (!weighted)
            want[2 * i + 1] = 0;
    }
    qsort(got, (size_t)n, 2 * sizeof(int), cmp_pair);
    qsort(want, (size_t)n, 2 * sizeof(int), cmp_pair);
    for (int i = 0; i < 2 * n; ++i)
        CHECK(got[i] == want[i], "%s: neighbour %d is (%d, %d), want (%d, %d)", what, i / 2,
              got[i / 2 * 2], got[i / 2 * 2 + 1], want[i / 2 * 2], want[i / 2 * 2 + 1]);
}

static int weight_of(int s, int d) { return 100 * s + d; }

/* Each rank i receives from i-1 and i+2 and sends to i+1 and i-2 (mod size). */
static void test_adjacent(int weighted)
{
    const int src[2] = {(rank - 1 + size) % size, (rank + 2) % size};
    const int dst[2] = {(rank + 1) % size, (rank - 2 + 2 * size) % size};
    const int sw[2] = {weight_of(src[0], rank), weight_of(src[1], rank)};
    const int dw[2] = {weight_of(rank, dst[0]), weight_of(rank, dst[1])};
    MPI_Comm dg;
    int rc =
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, weighted ? sw : MPI_UNWEIGHTED, 2,
                                       dst, weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
    CHECK(rc == MPI_SUCCESS && dg != MPI_COMM_NULL, "MPI_Dist_graph_create_adjacent failed");
    int status, in = -1, out = -1, w = -1;
    MPI_Topo_test(dg, &status);
    CHECK(status == MPI_DIST_GRAPH, "MPI_Topo_test gave %d", status);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &w);
    CHECK(in == 2 && out == 2 && !w == !weighted, "neighbours_count: %d %d %d", in, out, w);
    int s[2], sws[2] = {-1, -1}, d[2], dws[2] = {-1, -1};
    MPI_Dist_graph_neighbors(dg, 2, s, sws, 2, d, dws);
    /* Adjacent: in the order given. */
    for (int j = 0; j < 2; ++j) {
        CHECK(s[j] == src[j] && d[j] == dst[j], "adjacent neighbour %d: %d %d, want %d %d", j, s[j],
              d[j], src[j], dst[j]);
        if (weighted)
            CHECK(sws[j] == sw[j] && dws[j] == dw[j], "adjacent weight %d: %d %d, want %d %d", j,
                  sws[j], dws[j], sw[j], dw[j]);
    }
    MPI_Comm_free(&dg);
}

/* Rank r names, for source (r+1) mod size, the destinations s+1 and s+3; for itself a self
 * loop; and rank 0 also names s -> s+2 for every s. Ranks above 3 name nothing, with
 * MPI_WEIGHTS_EMPTY. */
static int edges_of(int r, int *srcs, int *degs, int *dsts, int *wts)
{
    if (r > 3)
        return 0;
    int n = 0, e = 0;
    const int s = (r + 1) % size;
    srcs[n] = s;
    degs[n++] = 2;
    dsts[e++] = (s + 1) % size;
    dsts[e++] = (s + 3) % size;
    srcs[n] = r;
    degs[n++] = 1;
    dsts[e++] = r;
    if (r == 0)
        for (int q = 0; q < size; ++q) {
            srcs[n] = q;
            degs[n++] = 1;
            dsts[e++] = (q + 2) % size;
        }
    for (int k = 0, i = 0; i < n; ++i)
        for (int j = 0; j < degs[i]; ++j, ++k)
            wts[k] = weight_of(srcs[i], dsts[k]);
    return n;
}

static void test_general(int weighted)
{
    int srcs[16], degs[16], dsts[32], wts[32];
    const int n = edges_of(rank, srcs, degs, dsts, wts);
    const int *w = !weighted ? MPI_UNWEIGHTED : n == 0 ? MPI_WEIGHTS_EMPTY : wts;
    MPI_Comm dg;
    int rc = MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, w, MPI_INFO_NULL, 0, &dg);
    CHECK(rc == MPI_SUCCESS && dg != MPI_COMM_NULL, "MPI_Dist_graph_create failed");
    /* The serial reference: every rank's edges. */
    int want_in[2 * MAXE], want_out[2 * MAXE], nin = 0, nout = 0;
    for (int r = 0; r < size; ++r) {
        int rs[16], rd[16], rdst[32], rw[32];
        const int rn = edges_of(r, rs, rd, rdst, rw);
        for (int k = 0, i = 0; i < rn; ++i)
            for (int j = 0; j < rd[i]; ++j, ++k) {
                if (rs[i] == rank) {
                    want_out[2 * nout] = rdst[k];
                    want_out[2 * nout++ + 1] = rw[k];
                }
                if (rdst[k] == rank) {
                    want_in[2 * nin] = rs[i];
                    want_in[2 * nin++ + 1] = rw[k];
                }
            }
    }
    int in = -1, out = -1, wf = -1;
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &wf);
    CHECK(!wf == !weighted, "weighted is %d", wf);
    CHECK(in == nin && out == nout, "degrees %d %d, want %d %d", in, out, nin, nout);
    if (in == nin && out == nout && in <= MAXE && out <= MAXE) {
        int s[MAXE], sw[MAXE], d[MAXE], dw[MAXE];
        MPI_Dist_graph_neighbors(dg, in, s, sw, out, d, dw);
        compare("in-neighbours", in, s, sw, nin, want_in, weighted);
        compare("out-neighbours", out, d, dw, nout, want_out, weighted);
    }
    MPI_Comm_free(&dg);
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    test_graph(size);
    if (size > 1)
        test_graph(size - 1);
    test_adjacent(1);
    test_adjacent(0);
    test_general(1);
    test_general(0);

    /* Errors. */
    int x, index[2] = {1, 2}, edges[2] = {1, 5};
    MPI_Comm bad = MPI_COMM_NULL;
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &bad) == MPI_ERR_ARG,
          "a graph larger than the world");
    if (size >= 2)
        CHECK(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &bad) == MPI_ERR_RANK,
              "an edge to a non-node");
    CHECK(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &x) == MPI_ERR_TOPOLOGY,
          "MPI_Graph_neighbors_count on MPI_COMM_WORLD");
    CHECK(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &x, &x, &x) == MPI_ERR_TOPOLOGY,
          "MPI_Dist_graph_neighbors_count on MPI_COMM_WORLD");
    const int far[1] = {size};
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, far, MPI_UNWEIGHTED, 0, far,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad) == MPI_ERR_RANK,
          "a distributed graph with a source outside the world");
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, far, MPI_UNWEIGHTED, 0, far,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad) == MPI_ERR_ARG,
          "a negative indegree");
    CHECK(MPI_UNWEIGHTED != NULL && MPI_WEIGHTS_EMPTY != NULL &&
              MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY,
          "MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are not distinct sentinels");

    return finish("graph and distributed graph topologies right");
}
