/* coll_derived: collectives with datatypes whose data is not contiguous, and the predefined
 * types whose sizes MPI defines apart from C's.
 *
 * - The value-index pairs: MPI_Type_size is the sum of the parts (MPI_DOUBLE_INT 12, where the
 *   C struct is 16), the extent the struct's, MPI_Get_elements counts two basic elements per
 *   pair, and MINLOC/MAXLOC over them in reduce, allreduce and scan are right.
 * - A struct of {char, float complex} has C's extent (12: the complex is aligned as a float).
 * - A strided type (every other int, three of them, extent 6 ints) in bcast, gather, scatter,
 *   allgather (small and large: each algorithm coll/basic picks by size), alltoall, alltoallv,
 *   alltoallw, reduce, allreduce and reduce_scatter_block (a user op that walks the type), and
 *   their non-blocking forms, the other side often a plain MPI_INT array with the same type
 *   signature (bcast both ways: the root's plain ints into the others' strided type). The
 *   gaps between the strided ints must keep what the receive buffer held.
 * Every result is checked against values computed from the ranks. Any number of ranks. */
#include <mpi.h>

#include <complex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "coll_derived"
#include "test_program.h"

#define GAP (-777) /* what the gaps of a strided buffer hold, before and after */
#define PER 3      /* ints of data in one strided element */
#define EXT 6      /* ints one strided element spans (its extent) */

static int size;

/* The value the test puts in int j of element e of rank r's data. */
static int val(int r, int e, int j) { return r * 100000 + e * 10 + j; }

/* n strided elements: data ints at 0, 2, 4 of each 6, the rest GAP. */
static int *strided(int n)
{
    int *b = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1) * EXT);
    for (int i = 0; i < n * EXT; ++i)
        b[i] = GAP;
    return b;
}
static void fill_strided(int *b, int n, int r, int e0)
{
    for (int e = 0; e < n; ++e)
        for (int j = 0; j < PER; ++j)
            b[e * EXT + 2 * j] = val(r, e0 + e, j);
}
/* Element e of b holds rank r's element re, and its gaps are untouched. */
static void check_strided(const int *b, int e, int r, int re, const char *what)
{
    for (int k = 0; k < EXT; ++k) {
        const int want = k % 2 == 0 && k / 2 < PER ? val(r, re, k / 2) : GAP;
        CHECK(b[e * EXT + k] == want, "%s: element %d int %d is %d, expected %d", what, e, k,
              b[e * EXT + k], want);
    }
}

/* A user op on the strided type: inout = in + inout, int by int, walking the type's layout. */
static void strided_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(*type, &lb, &extent);
    for (int e = 0; e < *len; ++e) {
        const int *a = (const int *)((const char *)in + e * extent);
        int *b = (int *)((char *)inout + e * extent);
        for (int j = 0; j < PER; ++j)
            b[2 * j] += a[2 * j];
    }
}

static void pairs(void)
{
    struct {
        MPI_Datatype t;
        const char *name;
        int size;
        MPI_Aint extent;
    } want[] = {
        {MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float) + sizeof(int), sizeof(struct {
             float v;
             int i;
         })},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double) + sizeof(int), sizeof(struct {
             double v;
             int i;
         })},
        {MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + sizeof(int), sizeof(struct {
             long v;
             int i;
         })},
        {MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short) + sizeof(int), sizeof(struct {
             short v;
             int i;
         })},
        {MPI_2INT, "MPI_2INT", 2 * sizeof(int), 2 * sizeof(int)},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + sizeof(int),
         sizeof(struct {
             long double v;
             int i;
         })},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; ++k) {
        int s = 0;
        MPI_Aint lb = -1, ext = 0;
        MPI_Type_size(want[k].t, &s);
        MPI_Type_get_extent(want[k].t, &lb, &ext);
        CHECK(s == want[k].size && lb == 0 && ext == want[k].extent,
              "%s: size %d extent %ld, expected %d and %ld", want[k].name, s, (long)ext,
              want[k].size, (long)want[k].extent);
    }
    /* The numbers the issue names, on this ABI. */
    int s = 0;
    MPI_Type_size(MPI_DOUBLE_INT, &s);
    CHECK(s == 12, "MPI_DOUBLE_INT size %d, expected 12", s);
    MPI_Type_size(MPI_SHORT_INT, &s);
    CHECK(s == 6, "MPI_SHORT_INT size %d, expected 6", s);

    /* MINLOC and MAXLOC: rank r offers value (r * 7) % size (ties: the lowest index wins),
     * index r + 1000. */
    struct di {
        double v;
        int i;
    } mine[2], out[2], scanned[2];
    struct si {
        short v;
        int i;
    } smine, sout;
    memset(out, 0x5c, sizeof out);
    for (int k = 0; k < 2; ++k) {
        mine[k].v = (double)((rank * 7 + k) % size);
        mine[k].i = rank + 1000;
    }
    MPI_Allreduce(mine, out, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    MPI_Reduce(mine, scanned, 2, MPI_DOUBLE_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD);
    for (int k = 0; k < 2; ++k) {
        double best = 1e9, worst = -1;
        int at = -1, wat = -1;
        for (int r = 0; r < size; ++r) {
            const double v = (double)((r * 7 + k) % size);
            if (v < best)
                best = v, at = r + 1000;
            if (v > worst)
                worst = v, wat = r + 1000;
        }
        CHECK(out[k].v == best && out[k].i == at,
              "allreduce MINLOC on MPI_DOUBLE_INT: (%g, %d), "
              "expected (%g, %d)",
              out[k].v, out[k].i, best, at);
        if (rank == 0)
            CHECK(scanned[k].v == worst && scanned[k].i == wat,
                  "reduce MAXLOC on MPI_DOUBLE_INT: (%g, %d), expected (%g, %d)", scanned[k].v,
                  scanned[k].i, worst, wat);
    }
    MPI_Scan(mine, scanned, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    for (int k = 0; k < 2; ++k) {
        double best = 1e9;
        int at = -1;
        for (int r = 0; r <= rank; ++r)
            if ((double)((r * 7 + k) % size) < best)
                best = (double)((r * 7 + k) % size), at = r + 1000;
        CHECK(scanned[k].v == best && scanned[k].i == at,
              "scan MINLOC on MPI_DOUBLE_INT: (%g, %d), expected (%g, %d)", scanned[k].v,
              scanned[k].i, best, at);
    }
    smine.v = (short)(size - rank);
    smine.i = rank;
    MPI_Allreduce(&smine, &sout, 1, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(sout.v == size && sout.i == 0, "allreduce MAXLOC on MPI_SHORT_INT: (%d, %d)", sout.v,
          sout.i);

    /* Point-to-point: a pair is two basic elements; its padding is not sent. */
    struct di ring[3], got[3];
    memset(got, 0x5c, sizeof got);
    unsigned char pad[sizeof(struct di)];
    memcpy(pad, &got[0], sizeof pad);
    for (int k = 0; k < 3; ++k)
        ring[k].v = rank + k * 0.5, ring[k].i = rank;
    MPI_Status st;
    MPI_Sendrecv(ring, 3, MPI_DOUBLE_INT, (rank + 1) % size, 5, got, 3, MPI_DOUBLE_INT,
                 (rank + size - 1) % size, 5, MPI_COMM_WORLD, &st);
    int count = -1, elements = -1;
    MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &elements);
    CHECK(count == 3 && elements == 6,
          "MPI_DOUBLE_INT received: count %d elements %d, expected "
          "3 and 6",
          count, elements);
    const int left = (rank + size - 1) % size;
    for (int k = 0; k < 3; ++k) {
        CHECK(got[k].v == left + k * 0.5 && got[k].i == left, "MPI_DOUBLE_INT %d received wrong",
              k);
        /* The 4 bytes after the int are padding: the receiver's own. */
        CHECK(memcmp((unsigned char *)&got[k] + offsetof(struct di, i) + sizeof(int),
                     pad + offsetof(struct di, i) + sizeof(int),
                     sizeof(struct di) - offsetof(struct di, i) - sizeof(int)) == 0,
              "MPI_DOUBLE_INT %d: its padding was written", k);
    }
}

/* Predefined ops on derived types of one basic type: MPI_SUM on contiguous(3, MPI_INT) and on
 * every other double of six (strided), MINLOC on contiguous(2, MPI_DOUBLE_INT). */
static void predefined_ops_on_derived(void)
{
    MPI_Datatype c3, sv, v, cp;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_create_resized(v, 0, 6 * sizeof(double), &sv);
    MPI_Type_contiguous(2, MPI_DOUBLE_INT, &cp);
    MPI_Type_commit(&c3);
    MPI_Type_commit(&sv);
    MPI_Type_commit(&cp);
    MPI_Type_free(&v);
    int ci[2 * 3], co[2 * 3];
    for (int k = 0; k < 6; ++k)
        ci[k] = rank * 10 + k, co[k] = -1;
    MPI_Allreduce(ci, co, 2, c3, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 6; ++k)
        CHECK(co[k] == 10 * size * (size - 1) / 2 + size * k,
              "MPI_SUM on contiguous(3, "
              "MPI_INT): int %d is %d",
              k, co[k]);
    double di[2 * 6], dout[2 * 6];
    for (int k = 0; k < 12; ++k)
        di[k] = rank + 0.25 * k, dout[k] = -5.0;
    MPI_Allreduce(di, dout, 2, sv, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 12; ++k) {
        const int in_type = (k % 6) % 2 == 0 && (k % 6) / 2 < 3;
        const double want = in_type ? size * (size - 1) / 2.0 + size * 0.25 * k : -5.0;
        CHECK(dout[k] == want, "MPI_SUM on a strided double type: double %d is %g, expected %g", k,
              dout[k], want);
    }
    struct {
        double v;
        int i;
    } pin[4], pout[4];
    for (int k = 0; k < 4; ++k)
        pin[k].v = (double)((rank + k) % size), pin[k].i = rank;
    MPI_Allreduce(pin, pout, 2, cp, MPI_MINLOC, MPI_COMM_WORLD);
    for (int k = 0; k < 4; ++k)
        CHECK(pout[k].v == 0 && pout[k].i == (size - k % size) % size,
              "MINLOC on contiguous(2, MPI_DOUBLE_INT): pair %d is (%g, %d)", k, pout[k].v,
              pout[k].i);
    MPI_Type_free(&c3);
    MPI_Type_free(&sv);
    MPI_Type_free(&cp);
}

/* A non-blocking collective whose datatype the program frees before the wait (MPI-3.1 4.1.9
 * allows it; the operation completes as if it had not been), and a collective on MPI_BOTTOM with
 * a type of absolute addresses. */
static void freed_type_and_bottom(void)
{
    MPI_Datatype v, t;
    MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_create_resized(v, 0, 8 * sizeof(double), &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&v);
    double *s = malloc(sizeof(double) * 8 * (size_t)size),
           *r = malloc(sizeof(double) * 8 * (size_t)size);
    for (int i = 0; i < 8 * size; ++i)
        s[i] = rank * 1000 + i, r[i] = -1;
    MPI_Request req;
    MPI_Ialltoall(s, 1, t, r, 1, t, MPI_COMM_WORLD, &req);
    MPI_Type_free(&t);
    for (int i = 0; i < 50; ++i) { /* reuse the freed type's memory */
        MPI_Datatype x;
        MPI_Type_contiguous(i + 1, MPI_INT, &x);
        MPI_Type_commit(&x);
        MPI_Type_free(&x);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int src = 0; src < size; ++src)
        for (int k = 0; k < 8; ++k) {
            const double want = k % 2 ? -1 : src * 1000 + rank * 8 + k;
            CHECK(r[src * 8 + k] == want,
                  "ialltoall with its type freed: from %d double %d is %g, "
                  "expected %g",
                  src, k, r[src * 8 + k], want);
        }
    free(s);
    free(r);

    int mine = 7000 + rank, *all = malloc(sizeof(int) * (size_t)size);
    MPI_Aint addr;
    MPI_Get_address(&mine, &addr);
    int one = 1;
    MPI_Datatype abs_type;
    MPI_Type_create_hindexed(1, &one, &addr, MPI_INT, &abs_type);
    MPI_Type_commit(&abs_type);
    for (int i = 0; i < size; ++i)
        all[i] = -1;
    MPI_Allgather(MPI_BOTTOM, 1, abs_type, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i)
        CHECK(all[i] == 7000 + i, "allgather from MPI_BOTTOM: block %d is %d", i, all[i]);
    MPI_Type_free(&abs_type);
    free(all);
}

static void complex_alignment(void)
{
    struct cf {
        char c;
        float complex z;
    };
    struct cd {
        char c;
        double complex z;
    };
    int bl[2] = {1, 1};
    MPI_Aint d1[2] = {offsetof(struct cf, c), offsetof(struct cf, z)};
    MPI_Aint d2[2] = {offsetof(struct cd, c), offsetof(struct cd, z)};
    MPI_Datatype t1[2] = {MPI_CHAR, MPI_C_FLOAT_COMPLEX}, t2[2] = {MPI_CHAR, MPI_C_DOUBLE_COMPLEX};
    MPI_Datatype a, b;
    MPI_Type_create_struct(2, bl, d1, t1, &a);
    MPI_Type_create_struct(2, bl, d2, t2, &b);
    MPI_Aint lb, ea, eb;
    MPI_Type_get_extent(a, &lb, &ea);
    MPI_Type_get_extent(b, &lb, &eb);
    CHECK(ea == (MPI_Aint)sizeof(struct cf), "struct {char, float complex}: extent %ld, C's %zu",
          (long)ea, sizeof(struct cf));
    CHECK(eb == (MPI_Aint)sizeof(struct cd), "struct {char, double complex}: extent %ld, C's %zu",
          (long)eb, sizeof(struct cd));
    CHECK(ea == 12, "struct {char, float complex}: extent %ld, expected 12", (long)ea);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
}

static void strided_collectives(MPI_Datatype vec, MPI_Op sum, int n)
{
    char what[96];
    /* bcast: n strided elements from the last rank. */
    int *b = strided(n);
    const int root = size - 1;
    if (rank == root)
        fill_strided(b, n, root, 0);
    MPI_Bcast(b, n, vec, root, MPI_COMM_WORLD);
    for (int e = 0; e < n; ++e)
        check_strided(b, e, root, e, "bcast");
    free(b);
    /* The same with plain ints at the root (one type signature, other types): every rank must
     * choose the same way whatever its own type. */
    if (rank == root) {
        int *plain = malloc(sizeof(int) * (size_t)(n * PER));
        for (int e = 0; e < n; ++e)
            for (int j = 0; j < PER; ++j)
                plain[e * PER + j] = val(root, e, j);
        MPI_Bcast(plain, n * PER, MPI_INT, root, MPI_COMM_WORLD);
        free(plain);
    } else {
        b = strided(n);
        MPI_Bcast(b, n, vec, root, MPI_COMM_WORLD);
        for (int e = 0; e < n; ++e)
            check_strided(b, e, root, e, "bcast from plain ints");
        free(b);
    }

    /* gather: strided from everyone, plain ints at root 0 (and the reverse for scatter). */
    int *mine = strided(n);
    fill_strided(mine, n, rank, 0);
    int *flat = malloc(sizeof(int) * (size_t)size * (size_t)(n * PER + 1));
    MPI_Gather(mine, n, vec, flat, n * PER, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size; ++r)
            for (int e = 0; e < n; ++e)
                for (int j = 0; j < PER; ++j)
                    CHECK(flat[(r * n + e) * PER + j] == val(r, e, j),
                          "gather: rank %d element %d int %d", r, e, j);
    int *back = strided(n);
    MPI_Scatter(flat, n * PER, MPI_INT, back, n, vec, 0, MPI_COMM_WORLD);
    for (int e = 0; e < n; ++e)
        check_strided(back, e, rank, e, "scatter");
    free(back);

    /* allgather, blocking and not: strided on both sides. */
    for (int nb = 0; nb < 2; ++nb) {
        int *all = strided(n * size);
        if (nb) {
            MPI_Request req;
            MPI_Iallgather(mine, n, vec, all, n, vec, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Allgather(mine, n, vec, all, n, vec, MPI_COMM_WORLD);
        }
        snprintf(what, sizeof what, "%sallgather of %d", nb ? "i" : "", n);
        for (int r = 0; r < size; ++r)
            for (int e = 0; e < n; ++e)
                check_strided(all, r * n + e, r, e, what);
        free(all);
    }
    /* In place: each rank's block already in the receive buffer. */
    int *inpl = strided(n * size);
    fill_strided(inpl + rank * n * EXT, n, rank, 0);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inpl, n, vec, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
        for (int e = 0; e < n; ++e)
            check_strided(inpl, r * n + e, r, e, "allgather in place");
    free(inpl);

    /* alltoall: block for rank t is elements [t*n, t*n+n) holding val(rank, t*n+e, j); the
     * receiver gets plain ints. */
    int *sendall = strided(n * size);
    fill_strided(sendall, n * size, rank, 0);
    int *recvflat = malloc(sizeof(int) * (size_t)size * (size_t)(n * PER + 1));
    for (int nb = 0; nb < 2; ++nb) {
        memset(recvflat, 0, sizeof(int) * (size_t)size * (size_t)(n * PER + 1));
        if (nb) {
            MPI_Request req;
            MPI_Ialltoall(sendall, n, vec, recvflat, n * PER, MPI_INT, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Alltoall(sendall, n, vec, recvflat, n * PER, MPI_INT, MPI_COMM_WORLD);
        }
        for (int r = 0; r < size; ++r)
            for (int e = 0; e < n; ++e)
                for (int j = 0; j < PER; ++j)
                    CHECK(recvflat[(r * n + e) * PER + j] == val(r, rank * n + e, j),
                          "%salltoall: from rank %d element %d int %d", nb ? "i" : "", r, e, j);
    }
    /* alltoallv and alltoallw: the same exchange, strided on the receiving side too. */
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int *bytesd = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r) {
        sc[r] = n;
        sd[r] = r * n;
        st[r] = vec;
        rt[r] = r % 2 ? vec : MPI_INT;
        bytesd[r] = r * n * EXT * (int)sizeof(int);
    }
    int *recvs = strided(n * size);
    MPI_Alltoallv(sendall, sc, sd, vec, recvs, sc, sd, vec, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
        for (int e = 0; e < n; ++e)
            check_strided(recvs, r * n + e, r, rank * n + e, "alltoallv");
    free(recvs);
    /* alltoallw: from odd ranks strided, from even ones PER * n plain ints at the block. */
    recvs = strided(n * size);
    int *rc = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r)
        rc[r] = r % 2 ? n : n * PER;
    int *scw = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r)
        scw[r] = n;
    MPI_Alltoallw(sendall, scw, bytesd, st, recvs, rc, bytesd, rt, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
        for (int e = 0; e < n; ++e) {
            if (r % 2) {
                check_strided(recvs, r * n + e, r, rank * n + e, "alltoallw (strided)");
            } else {
                for (int j = 0; j < PER; ++j)
                    CHECK(recvs[r * n * EXT + e * PER + j] == val(r, rank * n + e, j),
                          "alltoallw (plain) from %d element %d int %d", r, e, j);
            }
        }
    free(recvs);
    free(rc);
    free(scw);

    /* Reductions with a user op on the strided type. */
    int *red = strided(n);
    for (int nb = 0; nb < 2; ++nb) {
        for (int i = 0; i < n * EXT; ++i)
            red[i] = GAP;
        if (nb) {
            MPI_Request req;
            MPI_Iallreduce(mine, red, n, vec, sum, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Allreduce(mine, red, n, vec, sum, MPI_COMM_WORLD);
        }
        for (int e = 0; e < n; ++e)
            for (int k = 0; k < EXT; ++k) {
                int want = GAP;
                if (k % 2 == 0 && k / 2 < PER) {
                    want = 0;
                    for (int r = 0; r < size; ++r)
                        want += val(r, e, k / 2);
                }
                CHECK(red[e * EXT + k] == want,
                      "%sallreduce of %d: element %d int %d is %d, "
                      "expected %d",
                      nb ? "i" : "", n, e, k, red[e * EXT + k], want);
            }
    }
    for (int i = 0; i < n * EXT; ++i)
        red[i] = GAP;
    MPI_Reduce(mine, red, n, vec, sum, size / 2, MPI_COMM_WORLD);
    if (rank == size / 2)
        for (int e = 0; e < n; ++e)
            for (int j = 0; j < PER; ++j) {
                int want = 0;
                for (int r = 0; r < size; ++r)
                    want += val(r, e, j);
                CHECK(red[e * EXT + 2 * j] == want, "reduce: element %d int %d", e, j);
            }
    free(red);
    /* reduce_scatter_block: n elements per rank, the sum over ranks of block rank. */
    int *rs = strided(n * size), *rsout = strided(n);
    fill_strided(rs, n * size, rank, 0);
    MPI_Reduce_scatter_block(rs, rsout, n, vec, sum, MPI_COMM_WORLD);
    for (int e = 0; e < n; ++e)
        for (int k = 0; k < EXT; ++k) {
            int want = GAP;
            if (k % 2 == 0 && k / 2 < PER) {
                want = 0;
                for (int r = 0; r < size; ++r)
                    want += val(r, rank * n + e, k / 2);
            }
            CHECK(rsout[e * EXT + k] == want, "reduce_scatter_block: element %d int %d", e, k);
        }
    free(rs);
    free(rsout);
    free(sendall);
    free(recvflat);
    free(sc);
    free(sd);
    free(st);
    free(rt);
    free(bytesd);
    free(flat);
    free(mine);
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    pairs();
    predefined_ops_on_derived();
    freed_type_and_bottom();
    complex_alignment();

    MPI_Datatype v, vec;
    MPI_Type_vector(PER, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, EXT * (MPI_Aint)sizeof(int), &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&v);
    MPI_Op sum;
    MPI_Op_create(strided_sum, 1, &sum);
    /* 1 element and 3000: both sides of coll/basic's size thresholds. */
    strided_collectives(vec, sum, 1);
    strided_collectives(vec, sum, 3000);
    MPI_Op_free(&sum);
    MPI_Type_free(&vec);

    return finish("pair types sized as MPI says and reduced right, C's alignment for complex "
                  "members, a strided type in every collective kind (blocking and not, 1 and 3000 "
                  "elements) with its gaps untouched");
}
