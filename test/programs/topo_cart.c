/* topo_cart: Cartesian topologies (MPI-3.1 7.5.1-7.5.5). MPI_Dims_create against answers worked
 * out by hand; then 1-, 2- and 3-dimensional grids, periodic and not, made over MPI_COMM_WORLD,
 * each checked against a serial model of the grid (row-major ranks): MPI_Cart_get,
 * MPI_Cart_rank and MPI_Cart_coords both ways for every rank, MPI_Cart_shift at several
 * displacements, MPI_Cart_sub, MPI_Cart_map, MPI_Cartdim_get and MPI_Topo_test; a grid smaller
 * than the world (the ranks left out get MPI_COMM_NULL); MPI_Comm_dup keeps the topology and
 * MPI_Comm_split does not; and the error classes of wrong calls (MPI_ERRORS_RETURN).
 * Runs at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "topo_cart"
#include "test_program.h"

static int size;

/* The serial model of a grid. */
struct grid {
    int ndims, dims[4], periods[4];
};

static int grid_size(const struct grid *g)
{
    int n = 1;
    for (int i = 0; i < g->ndims; ++i)
        n *= g->dims[i];
    return n;
}

static void model_coords(const struct grid *g, int r, int *c)
{
    for (int i = g->ndims - 1; i >= 0; --i) {
        c[i] = r % g->dims[i];
        r /= g->dims[i];
    }
}

/* -1 when outside a non-periodic dimension. */
static int model_rank(const struct grid *g, const int *c)
{
    int r = 0;
    for (int i = 0; i < g->ndims; ++i) {
        int x = c[i];
        if (g->periods[i])
            x = ((x % g->dims[i]) + g->dims[i]) % g->dims[i];
        else if (x < 0 || x >= g->dims[i])
            return -1;
        r = r * g->dims[i] + x;
    }
    return r;
}

static int model_shift(const struct grid *g, int r, int dim, int disp)
{
    int c[4];
    model_coords(g, r, c);
    c[dim] += disp;
    const int s = model_rank(g, c);
    return s < 0 ? MPI_PROC_NULL : s;
}

static void check_dims(int nnodes, int ndims, const int *in, const int *want)
{
    int dims[4];
    memcpy(dims, in, sizeof(int) * (size_t)ndims);
    int rc = MPI_Dims_create(nnodes, ndims, dims);
    CHECK(rc == MPI_SUCCESS, "MPI_Dims_create(%d, %d) failed: %d", nnodes, ndims, rc);
    for (int i = 0; i < ndims; ++i)
        CHECK(dims[i] == want[i], "MPI_Dims_create(%d, %d): dims[%d] = %d, want %d", nnodes, ndims,
              i, dims[i], want[i]);
}

static void test_dims_create(void)
{
    check_dims(6, 2, (int[]){0, 0}, (int[]){3, 2});
    check_dims(8, 3, (int[]){0, 0, 0}, (int[]){2, 2, 2});
    check_dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
    check_dims(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    check_dims(24, 2, (int[]){0, 0}, (int[]){6, 4});
    check_dims(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    check_dims(30, 3, (int[]){0, 0, 0}, (int[]){5, 3, 2});
    check_dims(36, 2, (int[]){0, 0}, (int[]){6, 6});
    check_dims(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    check_dims(12, 2, (int[]){0, 2}, (int[]){6, 2});
    check_dims(5, 2, (int[]){5, 1}, (int[]){5, 1});
    check_dims(64, 4, (int[]){0, 0, 0, 0}, (int[]){4, 4, 2, 2});
    check_dims(9, 1, (int[]){0}, (int[]){9});
    /* Fixed entries that do not divide nnodes. */
    int dims[2] = {2, 0};
    CHECK(MPI_Dims_create(7, 2, dims) == MPI_ERR_DIMS, "MPI_Dims_create(7, {2, 0}) not ERR_DIMS");
    int full[2] = {2, 2};
    CHECK(MPI_Dims_create(6, 2, full) == MPI_ERR_DIMS, "MPI_Dims_create(6, {2, 2}) not ERR_DIMS");
    int neg[2] = {-1, 0};
    CHECK(MPI_Dims_create(6, 2, neg) == MPI_ERR_DIMS, "MPI_Dims_create(6, {-1, 0}) not ERR_DIMS");
}

/* Everything about one grid that covers the world or part of it. */
static void test_grid(struct grid g, const char *what)
{
    MPI_Comm cart;
    int rc = MPI_Cart_create(MPI_COMM_WORLD, g.ndims, g.dims, g.periods, 0, &cart);
    CHECK(rc == MPI_SUCCESS, "%s: MPI_Cart_create failed: %d", what, rc);
    const int n = grid_size(&g);
    int newrank = -5;
    MPI_Cart_map(MPI_COMM_WORLD, g.ndims, g.dims, g.periods, &newrank);
    CHECK(newrank == (rank < n ? rank : MPI_UNDEFINED), "%s: MPI_Cart_map gave %d", what, newrank);
    if (rank >= n) {
        CHECK(cart == MPI_COMM_NULL, "%s: rank outside the grid got a communicator", what);
        return;
    }
    CHECK(cart != MPI_COMM_NULL, "%s: rank inside the grid got MPI_COMM_NULL", what);
    if (cart == MPI_COMM_NULL)
        return;
    int r, s, status, nd;
    MPI_Comm_rank(cart, &r);
    MPI_Comm_size(cart, &s);
    CHECK(r == rank && s == n, "%s: rank %d size %d, want %d %d", what, r, s, rank, n);
    MPI_Topo_test(cart, &status);
    CHECK(status == MPI_CART, "%s: MPI_Topo_test gave %d", what, status);
    MPI_Cartdim_get(cart, &nd);
    CHECK(nd == g.ndims, "%s: MPI_Cartdim_get gave %d", what, nd);
    int dims[4], periods[4], coords[4], want[4];
    MPI_Cart_get(cart, 4, dims, periods, coords);
    model_coords(&g, r, want);
    for (int i = 0; i < g.ndims; ++i)
        CHECK(dims[i] == g.dims[i] && !periods[i] == !g.periods[i] && coords[i] == want[i],
              "%s: MPI_Cart_get dimension %d: %d %d %d, want %d %d %d", what, i, dims[i],
              periods[i], coords[i], g.dims[i], g.periods[i], want[i]);
    /* Every rank's coordinates, and back. */
    for (int q = 0; q < n; ++q) {
        int c[4], back = -1;
        MPI_Cart_coords(cart, q, 4, c);
        model_coords(&g, q, want);
        for (int i = 0; i < g.ndims; ++i)
            CHECK(c[i] == want[i], "%s: MPI_Cart_coords(%d)[%d] = %d, want %d", what, q, i, c[i],
                  want[i]);
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == q, "%s: MPI_Cart_rank(coords of %d) = %d", what, q, back);
    }
    /* A periodic dimension wraps around. */
    for (int i = 0; i < g.ndims; ++i) {
        if (!g.periods[i])
            continue;
        int c[4], back = -1;
        model_coords(&g, r, c);
        c[i] += 3 * g.dims[i];
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == r, "%s: MPI_Cart_rank wrapped in dimension %d gave %d", what, i, back);
        c[i] = -1;
        model_coords(&g, r, want);
        want[i] = g.dims[i] - 1;
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == model_rank(&g, want), "%s: MPI_Cart_rank at -1 gave %d", what, back);
    }
    for (int i = 0; i < g.ndims; ++i)
        for (int disp = -2; disp <= 2; ++disp) {
            int src = -7, dst = -7;
            MPI_Cart_shift(cart, i, disp, &src, &dst);
            CHECK(src == model_shift(&g, r, i, -disp) && dst == model_shift(&g, r, i, disp),
                  "%s: MPI_Cart_shift(%d, %d) = %d %d, want %d %d", what, i, disp, src, dst,
                  model_shift(&g, r, i, -disp), model_shift(&g, r, i, disp));
        }
    /* The copy keeps the topology; a split does not. */
    MPI_Comm dup, split;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &status);
    CHECK(status == MPI_CART, "%s: MPI_Comm_dup lost the topology (%d)", what, status);
    MPI_Cart_get(dup, 4, dims, periods, coords);
    for (int i = 0; i < g.ndims; ++i)
        CHECK(dims[i] == g.dims[i], "%s: the copy's dimension %d is %d", what, i, dims[i]);
    MPI_Comm_split(cart, 0, r, &split);
    MPI_Topo_test(split, &status);
    CHECK(status == MPI_UNDEFINED, "%s: MPI_Comm_split kept a topology (%d)", what, status);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);

    /* Subgrids: keep every other dimension, starting with the first. */
    int remain[4];
    struct grid sub = {0, {0}, {0}};
    int color_want = 0, key_want = 0;
    model_coords(&g, r, want);
    for (int i = 0; i < g.ndims; ++i) {
        remain[i] = i % 2 == 0;
        if (remain[i]) {
            sub.dims[sub.ndims] = g.dims[i];
            sub.periods[sub.ndims++] = g.periods[i];
            key_want = key_want * g.dims[i] + want[i];
        } else {
            color_want = color_want * g.dims[i] + want[i];
        }
    }
    MPI_Comm subcomm;
    rc = MPI_Cart_sub(cart, remain, &subcomm);
    CHECK(rc == MPI_SUCCESS && subcomm != MPI_COMM_NULL, "%s: MPI_Cart_sub failed", what);
    int sr, ss;
    MPI_Comm_rank(subcomm, &sr);
    MPI_Comm_size(subcomm, &ss);
    CHECK(sr == key_want && ss == grid_size(&sub), "%s: subgrid rank %d size %d, want %d %d", what,
          sr, ss, key_want, grid_size(&sub));
    MPI_Cartdim_get(subcomm, &nd);
    CHECK(nd == sub.ndims, "%s: subgrid has %d dimensions, want %d", what, nd, sub.ndims);
    MPI_Cart_get(subcomm, 4, dims, periods, coords);
    for (int i = 0; i < sub.ndims; ++i)
        CHECK(dims[i] == sub.dims[i] && !periods[i] == !sub.periods[i],
              "%s: subgrid dimension %d: %d %d", what, i, dims[i], periods[i]);
    /* Its members: the ranks with the same dropped coordinates (sum of their world ranks). */
    int sum = 0, want_sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, subcomm);
    for (int q = 0; q < n; ++q) {
        int c[4], color = 0;
        model_coords(&g, q, c);
        for (int i = 0; i < g.ndims; ++i)
            if (!remain[i])
                color = color * g.dims[i] + c[i];
        if (color == color_want)
            want_sum += q;
    }
    CHECK(sum == want_sum, "%s: subgrid members sum to %d, want %d", what, sum, want_sum);
    MPI_Comm_free(&subcomm);
    /* No dimension kept: a zero-dimensional grid of one process. */
    int none[4] = {0, 0, 0, 0};
    MPI_Cart_sub(cart, none, &subcomm);
    MPI_Comm_size(subcomm, &ss);
    MPI_Cartdim_get(subcomm, &nd);
    CHECK(ss == 1 && nd == 0, "%s: empty subgrid: size %d, %d dimensions", what, ss, nd);
    MPI_Comm_free(&subcomm);

    /* Errors. */
    int c[4] = {0, 0, 0, 0}, x;
    CHECK(MPI_Cart_coords(cart, n, 4, c) == MPI_ERR_RANK, "%s: coords of rank %d", what, n);
    CHECK(MPI_Cart_shift(cart, g.ndims, 1, &x, &x) == MPI_ERR_ARG, "%s: shift past ndims", what);
    for (int i = 0; i < g.ndims; ++i)
        if (!g.periods[i]) {
            c[i] = g.dims[i];
            CHECK(MPI_Cart_rank(cart, c, &x) == MPI_ERR_ARG, "%s: rank off the grid", what);
            c[i] = 0;
        }
    CHECK(MPI_Graphdims_get(cart, &x, &x) == MPI_ERR_TOPOLOGY, "%s: Graphdims_get on a grid", what);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    test_dims_create();

    struct grid g1 = {1, {size}, {1}};
    test_grid(g1, "1-D periodic");
    struct grid g1n = {1, {size}, {0}};
    test_grid(g1n, "1-D");
    struct grid g2 = {2, {0, 0}, {1, 0}};
    MPI_Dims_create(size, 2, g2.dims);
    test_grid(g2, "2-D periodic x open");
    struct grid g2n = {2, {0, 0}, {0, 0}};
    MPI_Dims_create(size, 2, g2n.dims);
    test_grid(g2n, "2-D");
    struct grid g3 = {3, {0, 0, 0}, {0, 1, 1}};
    MPI_Dims_create(size, 3, g3.dims);
    test_grid(g3, "3-D");
    struct grid g3p = {3, {0, 0, 0}, {1, 1, 1}};
    MPI_Dims_create(size, 3, g3p.dims);
    test_grid(g3p, "3-D periodic");
    /* Smaller than the world: the last rank (or the last two) left out. */
    if (size > 1) {
        struct grid part = {1, {size - 1}, {1}};
        test_grid(part, "1-D part");
    }
    if (size > 2) {
        struct grid part2 = {2, {0, 0}, {0, 1}};
        MPI_Dims_create(size - 2 > 0 ? size - 2 : 1, 2, part2.dims);
        test_grid(part2, "2-D part");
    }

    /* Errors on the world itself. */
    int status = -1, x;
    MPI_Topo_test(MPI_COMM_WORLD, &status);
    CHECK(status == MPI_UNDEFINED, "MPI_Topo_test(MPI_COMM_WORLD) = %d", status);
    CHECK(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &x, &x) == MPI_ERR_TOPOLOGY,
          "MPI_Cart_shift on MPI_COMM_WORLD");
    CHECK(MPI_Cartdim_get(MPI_COMM_WORLD, &x) == MPI_ERR_TOPOLOGY,
          "MPI_Cartdim_get on MPI_COMM_WORLD");
    MPI_Comm bad = MPI_COMM_NULL;
    int big[1] = {size + 1}, per[1] = {0};
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, big, per, 0, &bad) == MPI_ERR_DIMS,
          "a grid larger than the world");
    int zero[2] = {2, 0};
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, (int[]){0, 0}, 0, &bad) == MPI_ERR_DIMS,
          "a grid with a zero dimension");
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, -1, big, per, 0, &bad) == MPI_ERR_DIMS,
          "a grid of -1 dimensions");

    return finish("Cartesian topologies right");
}
