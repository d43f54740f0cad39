/* datatype_extras: MPI_Get_address and MPI_Aint_add/_diff, the MPI_Count queries (_x), the status
 * setters (MPI_Status_set_elements(_x), MPI_Status_set_cancelled), MPI_Type_match_size, the
 * Fortran 90 parameterized types, MPI_Type_create_darray and external32 (MPI_Pack_external: the
 * standard's sizes and bytes), each against values computed by hand; a struct built from
 * MPI_Get_address and an MPI_Type_create_f90_real type carry data around a ring. Any number of
 * ranks; rank 0 prints the verdict. */
#include <mpi.h>

#include <complex.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#define PROGRAM "datatype_extras"
#include "test_program.h"

static int size;

struct particle {
    char tag;
    double pos[3];
    int id;
};

static void addresses(void)
{
    struct particle p[2];
    memset(p, 0, sizeof p);
    MPI_Aint base, a_pos, a_id, a_next;
    MPI_Get_address(&p[0], &base);
    MPI_Get_address(&p[0].pos[0], &a_pos);
    MPI_Get_address(&p[0].id, &a_id);
    MPI_Get_address(&p[1], &a_next);
    CHECK(MPI_Aint_diff(a_pos, base) == (MPI_Aint)offsetof(struct particle, pos),
          "MPI_Aint_diff of pos: %ld", (long)MPI_Aint_diff(a_pos, base));
    CHECK(MPI_Aint_diff(a_id, base) == (MPI_Aint)offsetof(struct particle, id),
          "MPI_Aint_diff of id");
    CHECK(MPI_Aint_add(base, (MPI_Aint)sizeof(struct particle)) == a_next, "MPI_Aint_add");

    /* The struct type from those addresses, around a ring. */
    int bl[3] = {1, 3, 1};
    MPI_Aint d[3] = {0, MPI_Aint_diff(a_pos, base), MPI_Aint_diff(a_id, base)};
    MPI_Datatype t[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, st, pt;
    MPI_Type_create_struct(3, bl, d, t, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct particle), &pt);
    MPI_Type_commit(&pt);
    MPI_Type_free(&st);
    MPI_Count sx = 0, lbx = -1, ex = 0, tlb = -1, tex = 0;
    MPI_Type_size_x(pt, &sx);
    MPI_Type_get_extent_x(pt, &lbx, &ex);
    MPI_Type_get_true_extent_x(pt, &tlb, &tex);
    CHECK(sx == 1 + 3 * 8 + 4, "MPI_Type_size_x of the particle: %lld", sx);
    CHECK(lbx == 0 && ex == (MPI_Count)sizeof(struct particle), "MPI_Type_get_extent_x: %lld %lld",
          lbx, ex);
    CHECK(tlb == 0 && tex == (MPI_Count)(offsetof(struct particle, id) + sizeof(int)),
          "MPI_Type_get_true_extent_x: %lld %lld", tlb, tex);
    for (int k = 0; k < 2; ++k) {
        p[k].tag = (char)('a' + rank % 26);
        p[k].pos[0] = rank, p[k].pos[1] = k, p[k].pos[2] = -rank;
        p[k].id = rank * 10 + k;
    }
    struct particle q[2];
    memset(q, 0, sizeof q);
    const int left = (rank + size - 1) % size;
    MPI_Sendrecv(p, 2, pt, (rank + 1) % size, 3, q, 2, pt, left, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int k = 0; k < 2; ++k)
        CHECK(q[k].tag == (char)('a' + left % 26) && q[k].pos[0] == left && q[k].pos[1] == k &&
                  q[k].pos[2] == -left && q[k].id == left * 10 + k,
              "particle %d from the left is wrong", k);
    MPI_Type_free(&pt);
}

static void status_setters(void)
{
    MPI_Status st;
    int count = -1, elements = -1, flag = -1;
    MPI_Count ex = -1;
    MPI_Status_set_elements(&st, MPI_INT, 5);
    MPI_Get_count(&st, MPI_INT, &count);
    MPI_Get_elements(&st, MPI_INT, &elements);
    CHECK(count == 5 && elements == 5, "set_elements(MPI_INT, 5): count %d elements %d", count,
          elements);
    MPI_Datatype c3;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_commit(&c3);
    MPI_Status_set_elements(&st, c3, 7); /* two whole elements and one int */
    MPI_Get_count(&st, c3, &count);
    MPI_Get_elements(&st, c3, &elements);
    MPI_Get_elements_x(&st, c3, &ex);
    CHECK(count == MPI_UNDEFINED && elements == 7 && ex == 7,
          "set_elements(contiguous(3, MPI_INT), 7): count %d elements %d (x %lld)", count, elements,
          ex);
    MPI_Status_set_elements_x(&st, c3, 9);
    MPI_Get_count(&st, c3, &count);
    CHECK(count == 3, "set_elements_x(contiguous(3, MPI_INT), 9): count %d", count);
    MPI_Type_free(&c3);
    /* A pair is two basic elements: 3 of them are one pair and a half. */
    MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 3);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &elements);
    CHECK(count == MPI_UNDEFINED && elements == 3, "set_elements(MPI_DOUBLE_INT, 3): %d %d", count,
          elements);
    MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 4);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
    CHECK(count == 2, "set_elements(MPI_DOUBLE_INT, 4): count %d", count);
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1, "set_cancelled(1): %d", flag);
    MPI_Status_set_cancelled(&st, 0);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 0, "set_cancelled(0): %d", flag);
    CHECK(MPI_Status_set_elements(&st, MPI_INT, -1) == MPI_ERR_COUNT,
          "a negative count is not MPI_ERR_COUNT");
}

static int type_size(MPI_Datatype t)
{
    int s = -1;
    MPI_Type_size(t, &s);
    return s;
}

static void matching(void)
{
    MPI_Datatype t;
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t) == MPI_SUCCESS && t == MPI_INTEGER,
          "match_size(INTEGER, 4)");
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t) == MPI_SUCCESS && type_size(t) == 8,
          "match_size(INTEGER, 8)");
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t) == MPI_SUCCESS &&
              t == MPI_DOUBLE_PRECISION,
          "match_size(REAL, 8)");
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t) == MPI_SUCCESS &&
              t == MPI_DOUBLE_COMPLEX,
          "match_size(COMPLEX, 16)");
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t) == MPI_ERR_ARG, "match_size(REAL, 3)");
    CHECK(MPI_Type_match_size(99, 4, &t) == MPI_ERR_ARG, "match_size(99, 4)");

    /* SELECTED_INT_KIND and SELECTED_REAL_KIND. */
    MPI_Datatype i2, i9, i18, r6, r15, rr, c15, again;
    MPI_Type_create_f90_integer(2, &i2);
    MPI_Type_create_f90_integer(9, &i9);
    MPI_Type_create_f90_integer(18, &i18);
    MPI_Type_create_f90_real(6, 30, &r6);
    MPI_Type_create_f90_real(15, MPI_UNDEFINED, &r15);
    MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &rr);
    MPI_Type_create_f90_complex(15, 300, &c15);
    MPI_Type_create_f90_real(6, 30, &again);
    CHECK(type_size(i2) == 1 && type_size(i9) == 4 && type_size(i18) == 8,
          "f90 integer sizes %d %d %d", type_size(i2), type_size(i9), type_size(i18));
    CHECK(type_size(r6) == 4 && type_size(r15) == 8 && type_size(rr) == 8 && type_size(c15) == 16,
          "f90 real/complex sizes %d %d %d %d", type_size(r6), type_size(r15), type_size(rr),
          type_size(c15));
    CHECK(again == r6, "the same (p, r) gave another handle");
    int ni, na, nt, comb, ints[2] = {0, 0};
    MPI_Type_get_envelope(r15, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nt == 0,
          "f90 real envelope: %d ints, combiner %d", ni, comb);
    MPI_Type_get_contents(r15, 2, 0, 0, ints, NULL, NULL);
    CHECK(ints[0] == 15 && ints[1] == MPI_UNDEFINED, "f90 real contents: %d %d", ints[0], ints[1]);
    MPI_Type_get_envelope(i9, &ni, &na, &nt, &comb);
    MPI_Type_get_contents(i9, 1, 0, 0, ints, NULL, NULL);
    CHECK(comb == MPI_COMBINER_F90_INTEGER && ni == 1 && ints[0] == 9,
          "f90 integer envelope and contents");
    CHECK(MPI_Type_create_f90_real(40, 30, &t) == MPI_ERR_ARG, "f90 real with p 40");
    CHECK(MPI_Type_create_f90_integer(40, &t) == MPI_ERR_ARG, "f90 integer with r 40");
    CHECK(MPI_Type_free(&r6) == MPI_ERR_TYPE, "an f90 type was freed");

    /* Data in an f90 type, reduced and passed on. */
    double v = rank + 0.5, sum = 0;
    MPI_Allreduce(&v, &sum, 1, r15, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2.0 + 0.5 * size, "allreduce in an f90 real: %g", sum);
}

/* external32: the standard's sizes, big-endian bytes, and round trips. */
static void external32(void)
{
    struct {
        MPI_Datatype t;
        const char *name;
        MPI_Aint size;
    } sizes[] = {{MPI_CHAR, "MPI_CHAR", 1},
                 {MPI_WCHAR, "MPI_WCHAR", 2},
                 {MPI_SHORT, "MPI_SHORT", 2},
                 {MPI_INT, "MPI_INT", 4},
                 {MPI_LONG, "MPI_LONG", 4},
                 {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 4},
                 {MPI_LONG_LONG, "MPI_LONG_LONG", 8},
                 {MPI_FLOAT, "MPI_FLOAT", 4},
                 {MPI_DOUBLE, "MPI_DOUBLE", 8},
                 {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16},
                 {MPI_C_BOOL, "MPI_C_BOOL", 1},
                 {MPI_AINT, "MPI_AINT", 8},
                 {MPI_COUNT, "MPI_COUNT", 8},
                 {MPI_OFFSET, "MPI_OFFSET", 8},
                 {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8},
                 {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16},
                 {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32},
                 {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12},
                 {MPI_LONG_INT, "MPI_LONG_INT", 8},
                 {MPI_SHORT_INT, "MPI_SHORT_INT", 6},
                 {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 20},
                 {MPI_2INT, "MPI_2INT", 8}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        MPI_Aint got = -1;
        MPI_Pack_external_size("external32", 3, sizes[k].t, &got);
        CHECK(got == 3 * sizes[k].size, "external32 size of 3 %s: %ld, expected %ld", sizes[k].name,
              (long)got, (long)(3 * sizes[k].size));
    }
    /* The bytes, as the standard writes them. */
    unsigned char buf[256];
    MPI_Aint pos = 0;
    long l = -2;
    int i = 0x01020304;
    long double ld = 1.5L;
    double d = 1.5;
    float complex fc = 1.0f + 2.0f * I;
    wchar_t w = 0x41;
    MPI_Pack_external("external32", &l, 1, MPI_LONG, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", &i, 1, MPI_INT, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", &fc, 1, MPI_C_FLOAT_COMPLEX, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", &w, 1, MPI_WCHAR, buf, sizeof buf, &pos);
    static const unsigned char want[] = {0xff, 0xff, 0xff, 0xfe, /* long -2 */
                                         0x01, 0x02, 0x03, 0x04, /* int */
                                         0x3f, 0xff, 0x80, 0,    0,    0, 0, 0, 0,
                                         0,    0,    0,    0,    0,    0, 0, /* 1.5L, binary128 */
                                         0x3f, 0xf8, 0,    0,    0,    0, 0, 0, /* 1.5 */
                                         0x3f, 0x80, 0,    0,    0x40, 0, 0, 0, /* 1 + 2i */
                                         0x00, 0x41};                           /* L'A' */
    CHECK(pos == (MPI_Aint)sizeof want, "external32 stream of %ld bytes, expected %zu", (long)pos,
          sizeof want);
    for (size_t k = 0; k < sizeof want && k < (size_t)pos; ++k)
        CHECK(buf[k] == want[k], "external32 byte %zu is %02x, expected %02x", k, buf[k], want[k]);
    /* Back again. */
    long l2 = 0;
    int i2 = 0;
    long double ld2 = 0;
    double d2 = 0;
    float complex fc2 = 0;
    wchar_t w2 = 0;
    pos = 0;
    MPI_Unpack_external("external32", buf, sizeof want, &pos, &l2, 1, MPI_LONG);
    MPI_Unpack_external("external32", buf, sizeof want, &pos, &i2, 1, MPI_INT);
    MPI_Unpack_external("external32", buf, sizeof want, &pos, &ld2, 1, MPI_LONG_DOUBLE);
    MPI_Unpack_external("external32", buf, sizeof want, &pos, &d2, 1, MPI_DOUBLE);
    MPI_Unpack_external("external32", buf, sizeof want, &pos, &fc2, 1, MPI_C_FLOAT_COMPLEX);
    MPI_Unpack_external("external32", buf, sizeof want, &pos, &w2, 1, MPI_WCHAR);
    CHECK(l2 == -2 && i2 == i && ld2 == 1.5L && d2 == 1.5 && fc2 == fc && w2 == w,
          "external32 round trip of the scalars");
    /* A long double with every significand bit, a strided struct type and pairs. */
    long double lds[3] = {-0.1L, 3.0e-4000L, 1.0e4000L}, lds2[3] = {0, 0, 0};
    pos = 0;
    MPI_Pack_external("external32", lds, 3, MPI_LONG_DOUBLE, buf, sizeof buf, &pos);
    pos = 0;
    MPI_Unpack_external("external32", buf, sizeof buf, &pos, lds2, 3, MPI_LONG_DOUBLE);
    CHECK(lds2[0] == lds[0] && lds2[1] == lds[1] && lds2[2] == lds[2],
          "external32 round trip of long doubles");
    struct {
        long v;
        int i;
    } li[2] = {{-123456, 7}, {99, -8}}, li2[2];
    memset(li2, 0, sizeof li2);
    pos = 0;
    MPI_Pack_external("external32", li, 2, MPI_LONG_INT, buf, sizeof buf, &pos);
    CHECK(pos == 16, "2 MPI_LONG_INT took %ld bytes", (long)pos);
    pos = 0;
    MPI_Unpack_external("external32", buf, 16, &pos, li2, 2, MPI_LONG_INT);
    CHECK(li2[0].v == -123456 && li2[0].i == 7 && li2[1].v == 99 && li2[1].i == -8,
          "external32 round trip of MPI_LONG_INT");
    /* Errors. */
    pos = 0;
    CHECK(MPI_Pack_external("native", &i, 1, MPI_INT, buf, sizeof buf, &pos) ==
              MPI_ERR_UNSUPPORTED_DATAREP,
          "datarep native accepted");
    pos = 0;
    CHECK(MPI_Pack_external("external32", lds, 3, MPI_LONG_DOUBLE, buf, 40, &pos) ==
              MPI_ERR_TRUNCATE,
          "48 bytes packed into 40");
    pos = 0;
    CHECK(MPI_Unpack_external("external32", buf, 8, &pos, lds2, 1, MPI_LONG_DOUBLE) ==
              MPI_ERR_TRUNCATE,
          "16 bytes unpacked from 8");
}

/* MPI_Type_create_darray: a 6 x 5 array of ints over a 2 x 2 process grid, rows by block, columns
 * by cyclic blocks of 2, in C and in Fortran order, for each of the four grid positions (the
 * function takes the rank as an argument): the ints the type selects, in order, against the
 * standard's rule; together the four cover every element once. */
static void darray(void)
{
    enum { R = 6, C = 5 };
    int global[R * C];
    for (int k = 0; k < R * C; ++k)
        global[k] = k;
    const int gsizes[2] = {R, C}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 2};
    for (int order = 0; order < 2; ++order) {
        int seen[R * C] = {0};
        for (int r = 0; r < 4; ++r) {
            MPI_Datatype t;
            MPI_Type_create_darray(4, r, 2, gsizes, distribs, dargs, psizes,
                                   order ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_INT, &t);
            MPI_Type_commit(&t);
            /* The standard's rule, by hand: grid coordinates in C order; rows [3 c0, 3 c0 + 3);
             * columns j with (j / 2) % 2 == c1. */
            const int c0 = r / 2, c1 = r % 2;
            int want[R * C], n = 0;
            if (order == 0) {
                for (int i = 3 * c0; i < 3 * c0 + 3; ++i)
                    for (int j = 0; j < C; ++j)
                        if ((j / 2) % 2 == c1)
                            want[n++] = i * C + j;
            } else {
                for (int j = 0; j < C; ++j)
                    for (int i = 3 * c0; i < 3 * c0 + 3; ++i)
                        if ((j / 2) % 2 == c1)
                            want[n++] = j * R + i; /* column-major */
            }
            int sz = -1;
            MPI_Aint lb = -1, ext = 0;
            MPI_Type_size(t, &sz);
            MPI_Type_get_extent(t, &lb, &ext);
            CHECK(sz == n * (int)sizeof(int) && lb == 0 && ext == (MPI_Aint)sizeof global,
                  "darray (order %d, rank %d): size %d extent %ld, expected %d and %zu", order, r,
                  sz, (long)ext, n * (int)sizeof(int), sizeof global);
            int packed[R * C], pos = 0;
            MPI_Pack(global, 1, t, packed, sizeof packed, &pos, MPI_COMM_SELF);
            for (int k = 0; k < n && k < pos / (int)sizeof(int); ++k) {
                CHECK(packed[k] == want[k], "darray (order %d, rank %d): int %d is %d, expected %d",
                      order, r, k, packed[k], want[k]);
                ++seen[packed[k]];
            }
            int ni, na, nt, comb;
            MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
            CHECK(comb == MPI_COMBINER_DARRAY && ni == 3 + 4 * 2 + 1 && nt == 1,
                  "darray envelope: combiner %d, %d ints", comb, ni);
            MPI_Type_free(&t);
        }
        for (int k = 0; k < R * C; ++k)
            CHECK(seen[k] == 1, "darray (order %d): element %d selected %d times", order, k,
                  seen[k]);
    }
    /* Not distributed: the whole array; a block too small to cover the dimension is refused. */
    MPI_Datatype t;
    const int none[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_NONE}, one[2] = {1, 1};
    MPI_Type_create_darray(1, 0, 2, gsizes, none, dargs, one, MPI_ORDER_C, MPI_INT, &t);
    int sz = 0;
    MPI_Type_size(t, &sz);
    CHECK(sz == (int)sizeof global, "darray of MPI_DISTRIBUTE_NONE: size %d", sz);
    MPI_Type_free(&t);
    const int small[2] = {2, 2};
    CHECK(MPI_Type_create_darray(4, 0, 2, gsizes, distribs, small, psizes, MPI_ORDER_C, MPI_INT,
                                 &t) == MPI_ERR_ARG,
          "a block of 2 over 2 processes accepted for 6 rows");
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    addresses();
    status_setters();
    matching();
    external32();
    darray();
    return finish("addresses, the _x queries, the status setters, MPI_Type_match_size, the f90 "
                  "types, darray and external32 right");
}
