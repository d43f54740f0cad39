/* attributes: attribute caching on communicators and datatypes (MPI-3.1 6.7). Every copy and
 * delete callback records its call in a log; each step compares the log with the calls it
 * expects, in order: copies at MPI_Comm_dup and MPI_Type_dup (one that declines, one that
 * fails), deletes at free, delete_attr and when set_attr replaces a value, a keyval freed while
 * in use, the predefined callbacks, the MPI-1 calls, the predefined attributes, and the deletes
 * of MPI_COMM_SELF's attributes at the start of MPI_Finalize (newest first, MPI-3.1 8.7.1),
 * checked after it. Run at any number of ranks; rank 0 prints the verdict; exit status 0 when
 * right. */
#include <mpi-ext.h>
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "attributes"
#include "test_program.h"

static int cls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* ---- the log of callback calls */

typedef struct {
    char what;      /* 'c' copy, 'd' delete */
    int keyval;     /* as the callback was given it */
    intptr_t value; /* the attribute value it was given */
} Event;

static Event events[256];
static int nevents;
/* Handles the callbacks were given, to check against the object copied or deleted from. */
static void *last_object;
static int finalized_in_callback = -1;

static void record(char what, int keyval, void *value, void *object)
{
    if (nevents < 256)
        events[nevents++] = (Event){what, keyval, (intptr_t)value};
    last_object = object;
}

/* The log holds exactly these events (what, keyval, value triples, n of them); it is cleared. */
static void expect(int line, int n, const Event *want)
{
    int ok = nevents == n;
    for (int i = 0; ok && i < n; ++i)
        ok = events[i].what == want[i].what && events[i].keyval == want[i].keyval &&
             events[i].value == want[i].value;
    if (!ok) {
        printf("attributes: rank %d: line %d: callbacks were", rank, line);
        for (int i = 0; i < nevents; ++i)
            printf(" %c(%d,%ld)", events[i].what, events[i].keyval, (long)events[i].value);
        printf("; expected");
        for (int i = 0; i < n; ++i)
            printf(" %c(%d,%ld)", want[i].what, want[i].keyval, (long)want[i].value);
        printf("\n");
        ++failures;
    }
    nevents = 0;
}
#define EXPECT(...)                                                                                \
    do {                                                                                           \
        const Event want_[] = {__VA_ARGS__};                                                       \
        expect(__LINE__, (int)(sizeof want_ / sizeof want_[0]), want_);                            \
    } while (0)
#define EXPECT_NONE() expect(__LINE__, 0, NULL)

/* What a copy callback does, chosen by its keyval's extra_state. */
enum { COPY_PLUS_ONE, COPY_DECLINE, COPY_FAIL };
static int copy_plus_one = COPY_PLUS_ONE, copy_decline = COPY_DECLINE, copy_fail = COPY_FAIL;
/* A delete callback fails on this value while delete_may_fail is set. */
#define FAILING_VALUE 666
static int delete_may_fail;

static int copy_behaviour(int mode, void *in, void *out, int *flag)
{
    switch (mode) {
    case COPY_PLUS_ONE:
        *(void **)out = (void *)((intptr_t)in + 1);
        *flag = 1;
        return MPI_SUCCESS;
    case COPY_DECLINE: *flag = 0; return MPI_SUCCESS;
    default: *flag = 1; return MPI_ERR_OTHER;
    }
}

static int comm_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    record('c', keyval, in, old);
    return copy_behaviour(*(int *)extra, in, out, flag);
}

static int comm_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)extra;
    record('d', keyval, value, comm);
    return delete_may_fail && (intptr_t)value == FAILING_VALUE ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int type_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    record('c', keyval, in, old);
    return copy_behaviour(*(int *)extra, in, out, flag);
}

static int type_delete(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)extra;
    record('d', keyval, value, type);
    return MPI_SUCCESS;
}

/* MPI_COMM_SELF's attributes: MPI is still fully there when they are deleted. */
static int self_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)extra;
    int flag = -1, size = -1;
    MPI_Finalized(&flag);
    if (MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS || size < 1)
        flag = 2;
    if (finalized_in_callback != 1)
        finalized_in_callback = flag;
    record('d', keyval, value, comm);
    return MPI_SUCCESS;
}

#define V(x) ((void *)(intptr_t)(x))
#define C(k, v)                                                                                    \
    {                                                                                              \
        'c', (k), (v)                                                                              \
    }
#define D(k, v)                                                                                    \
    {                                                                                              \
        'd', (k), (v)                                                                              \
    }

static int get_int(MPI_Comm comm, int keyval, int *flag)
{
    void *v = NULL;
    *flag = -1;
    if (MPI_Comm_get_attr(comm, keyval, &v, flag) != MPI_SUCCESS)
        return -1;
    return (int)(intptr_t)v;
}

static void predefined_attributes(MPI_Comm comm, int size)
{
    int *v = NULL, flag = 0;
    CHECK(MPI_Comm_get_attr(comm, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS && flag && v && *v >= 32767,
          "MPI_TAG_UB");
    CHECK(MPI_Comm_get_attr(comm, MPI_HOST, &v, &flag) == MPI_SUCCESS && flag && v &&
              (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)),
          "MPI_HOST");
    CHECK(MPI_Comm_get_attr(comm, MPI_IO, &v, &flag) == MPI_SUCCESS && flag && v &&
              (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < size)),
          "MPI_IO");
    CHECK(MPI_Comm_get_attr(comm, MPI_WTIME_IS_GLOBAL, &v, &flag) == MPI_SUCCESS && flag && v &&
              (*v == 0 || *v == 1),
          "MPI_WTIME_IS_GLOBAL");
    CHECK(MPI_Comm_get_attr(comm, MPI_APPNUM, &v, &flag) == MPI_SUCCESS && flag && v && *v == 0,
          "MPI_APPNUM");
    CHECK(MPI_Comm_get_attr(comm, MPI_UNIVERSE_SIZE, &v, &flag) == MPI_SUCCESS && flag && v &&
              *v >= size,
          "MPI_UNIVERSE_SIZE");
    CHECK(MPI_Comm_get_attr(comm, MPI_LASTUSEDCODE, &v, &flag) == MPI_SUCCESS && flag && v &&
              *v >= MPI_ERR_LASTCODE,
          "MPI_LASTUSEDCODE");
    CHECK(MPI_Comm_get_attr(comm, MPIX_FT, &v, &flag) == MPI_SUCCESS && flag && v &&
              (*v == 0 || *v == 1),
          "MPIX_FT");
    CHECK(MPI_Attr_get(comm, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS && flag && v && *v >= 32767,
          "MPI_Attr_get of MPI_TAG_UB");
}

static void comm_attributes(int size)
{
    int k_plus, k_decline, k_dup, k_null;
    CHECK(MPI_Comm_create_keyval(comm_copy, comm_delete, &k_plus, &copy_plus_one) == MPI_SUCCESS,
          "create_keyval");
    MPI_Comm_create_keyval(comm_copy, comm_delete, &k_decline, &copy_decline);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, comm_delete, &k_dup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k_null, NULL);
    const int mine[] = {k_plus, k_decline, k_dup, k_null};
    for (int i = 0; i < 4; ++i) {
        CHECK(mine[i] != MPI_KEYVAL_INVALID && mine[i] != MPI_TAG_UB && mine[i] != MPI_HOST &&
                  mine[i] != MPI_IO && mine[i] != MPI_WTIME_IS_GLOBAL && mine[i] != MPI_APPNUM &&
                  mine[i] != MPI_UNIVERSE_SIZE && mine[i] != MPI_LASTUSEDCODE && mine[i] != MPIX_FT,
              "keyval %d collides with a predefined one", mine[i]);
        for (int j = 0; j < i; ++j)
            CHECK(mine[i] != mine[j], "keyvals %d and %d are the same", i, j);
    }

    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    int flag;
    CHECK(get_int(a, k_plus, &flag) == 0 && flag == 0, "an attribute never set: flag %d", flag);
    MPI_Comm_set_attr(a, k_plus, V(10));
    MPI_Comm_set_attr(a, k_decline, V(20));
    MPI_Comm_set_attr(a, k_dup, V(30));
    MPI_Comm_set_attr(a, k_null, V(40));
    EXPECT_NONE();
    CHECK(get_int(a, k_plus, &flag) == 10 && flag == 1, "get k_plus");
    CHECK(get_int(a, k_null, &flag) == 40 && flag == 1, "get k_null");
    /* Attributes belong to their communicator. */
    CHECK(get_int(MPI_COMM_WORLD, k_plus, &flag) == 0 && flag == 0, "k_plus on world");

    /* Replacing a value deletes the old one. */
    MPI_Comm_set_attr(a, k_plus, V(11));
    EXPECT(D(k_plus, 10));
    CHECK(last_object == (void *)a, "the delete callback was given another communicator");
    CHECK(get_int(a, k_plus, &flag) == 11 && flag == 1, "get k_plus after replacing");

    /* Dup: copies in the order set (k_plus last: it was set again), each its own way. */
    CHECK(MPI_Comm_dup(a, &b) == MPI_SUCCESS, "dup");
    EXPECT(C(k_decline, 20), C(k_plus, 11));
    CHECK(last_object == (void *)a, "the copy callback was given another communicator");
    CHECK(get_int(b, k_plus, &flag) == 12 && flag == 1, "k_plus copied as 12");
    CHECK(get_int(b, k_decline, &flag) == 0 && flag == 0, "k_decline not copied");
    CHECK(get_int(b, k_dup, &flag) == 30 && flag == 1, "k_dup copied by MPI_COMM_DUP_FN");
    CHECK(get_int(b, k_null, &flag) == 0 && flag == 0, "k_null not copied");
    CHECK(get_int(a, k_plus, &flag) == 11 && flag == 1, "the parent's value unchanged");
    predefined_attributes(b, size);

    /* MPI_Comm_dup_with_info copies the same way. */
    MPI_Comm bi;
    CHECK(MPI_Comm_dup_with_info(a, MPI_INFO_NULL, &bi) == MPI_SUCCESS, "dup_with_info");
    EXPECT(C(k_decline, 20), C(k_plus, 11));
    CHECK(get_int(bi, k_plus, &flag) == 12 && flag == 1, "dup_with_info copied k_plus as 12");
    CHECK(get_int(bi, k_dup, &flag) == 30 && flag == 1, "dup_with_info copied k_dup");
    MPI_Comm_free(&bi);
    EXPECT(D(k_plus, 12), D(k_dup, 30));

    /* delete_attr runs the delete callback once; deleting again is no error and no call. */
    CHECK(MPI_Comm_delete_attr(b, k_plus) == MPI_SUCCESS, "delete_attr");
    EXPECT(D(k_plus, 12));
    CHECK(get_int(b, k_plus, &flag) == 0 && flag == 0, "k_plus gone from b");
    CHECK(MPI_Comm_delete_attr(b, k_plus) == MPI_SUCCESS, "delete_attr of nothing");
    EXPECT_NONE();

    /* Free: the delete callbacks of what is left, newest first. */
    MPI_Comm_free(&b);
    EXPECT(D(k_dup, 30));
    MPI_Comm_free(&a);
    EXPECT(D(k_plus, 11), D(k_dup, 30), D(k_decline, 20));

    /* A copy callback that fails: the dup fails with its error, and the attribute copied before
     * it is deleted again. */
    int k_fail;
    MPI_Comm_create_keyval(comm_copy, comm_delete, &k_fail, &copy_fail);
    MPI_Comm c, d = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_attr(c, k_plus, V(100));
    MPI_Comm_set_attr(c, k_fail, V(200));
    CHECK(cls(MPI_Comm_dup(c, &d)) == MPI_ERR_OTHER, "dup with a failing copy callback");
    CHECK(d == MPI_COMM_NULL, "the failed dup's newcomm is not MPI_COMM_NULL");
    EXPECT(C(k_plus, 100), C(k_fail, 200), D(k_plus, 101));
    /* c is unharmed. */
    CHECK(get_int(c, k_plus, &flag) == 100 && flag == 1, "c's k_plus after the failed dup");
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == size * (size - 1) / 2, "allreduce on c after the failed dup: %d", sum);

    /* A delete callback that fails: delete_attr, the replacing set_attr and free fail with its
     * error and the attribute stays. */
    delete_may_fail = 1;
    MPI_Comm_set_attr(c, k_plus, V(FAILING_VALUE));
    EXPECT(D(k_plus, 100));
    CHECK(cls(MPI_Comm_delete_attr(c, k_plus)) == MPI_ERR_OTHER, "failing delete_attr");
    EXPECT(D(k_plus, FAILING_VALUE));
    CHECK(cls(MPI_Comm_set_attr(c, k_plus, V(7))) == MPI_ERR_OTHER, "failing replace");
    EXPECT(D(k_plus, FAILING_VALUE));
    CHECK(get_int(c, k_plus, &flag) == FAILING_VALUE && flag == 1, "the value stayed");
    MPI_Comm c_handle = c;
    CHECK(cls(MPI_Comm_free(&c)) == MPI_ERR_OTHER && c == c_handle, "failing free");
    EXPECT(D(k_plus, FAILING_VALUE));
    delete_may_fail = 0;
    CHECK(MPI_Comm_free(&c) == MPI_SUCCESS && c == MPI_COMM_NULL, "free once deletes work");
    EXPECT(D(k_plus, FAILING_VALUE), D(k_fail, 200));

    /* A keyval freed while attributes use it keeps working for them. */
    int k_freed;
    MPI_Comm_create_keyval(comm_copy, comm_delete, &k_freed, &copy_plus_one);
    const int k_freed_id = k_freed;
    MPI_Comm e, f;
    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    MPI_Comm_set_attr(e, k_freed, V(5));
    CHECK(MPI_Comm_free_keyval(&k_freed) == MPI_SUCCESS && k_freed == MPI_KEYVAL_INVALID,
          "free_keyval");
    MPI_Comm_dup(e, &f);
    EXPECT(C(k_freed_id, 5));
    CHECK(get_int(f, k_freed_id, &flag) == 6 && flag == 1, "copied under a freed keyval");
    CHECK(cls(MPI_Comm_set_attr(e, k_freed_id, V(9))) == MPI_ERR_KEYVAL,
          "set_attr with a freed keyval");
    MPI_Comm_free(&e);
    EXPECT(D(k_freed_id, 5));
    MPI_Comm_free(&f);
    EXPECT(D(k_freed_id, 6));

    /* Errors. */
    MPI_Comm g;
    MPI_Comm_dup(MPI_COMM_WORLD, &g);
    int k_type;
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k_type, NULL);
    void *out;
    CHECK(cls(MPI_Comm_set_attr(g, MPI_KEYVAL_INVALID, V(1))) == MPI_ERR_KEYVAL,
          "set_attr with MPI_KEYVAL_INVALID");
    CHECK(cls(MPI_Comm_set_attr(g, MPI_TAG_UB, V(1))) == MPI_ERR_KEYVAL, "set_attr of MPI_TAG_UB");
    CHECK(cls(MPI_Comm_delete_attr(g, MPI_TAG_UB)) == MPI_ERR_KEYVAL, "delete_attr of MPI_TAG_UB");
    CHECK(cls(MPI_Comm_set_attr(g, k_type, V(1))) == MPI_ERR_KEYVAL,
          "set_attr with a datatype keyval");
    CHECK(cls(MPI_Comm_get_attr(g, k_type, &out, &flag)) == MPI_ERR_KEYVAL,
          "get_attr with a datatype keyval");
    CHECK(cls(MPI_Comm_get_attr(g, k_freed_id, &out, &flag)) == MPI_ERR_KEYVAL,
          "get_attr with a keyval freed and no longer used");
    int predefined = MPI_TAG_UB;
    CHECK(cls(MPI_Comm_free_keyval(&predefined)) == MPI_ERR_KEYVAL, "free_keyval(MPI_TAG_UB)");
    CHECK(cls(MPI_Comm_free_keyval(&k_type)) == MPI_ERR_KEYVAL, "free a type keyval as a comm's");
    MPI_Comm_free(&g);
    EXPECT_NONE();

    int *keys[] = {&k_plus, &k_decline, &k_dup, &k_null, &k_fail};
    for (int i = 0; i < 5; ++i)
        CHECK(MPI_Comm_free_keyval(keys[i]) == MPI_SUCCESS && *keys[i] == MPI_KEYVAL_INVALID,
              "free_keyval %d", i);
    int again = k_plus;
    CHECK(cls(MPI_Comm_free_keyval(&again)) == MPI_ERR_KEYVAL, "free_keyval twice");
    MPI_Type_free_keyval(&k_type);
}

static void deprecated_calls(void)
{
    int k, k_null;
    CHECK(MPI_Keyval_create(MPI_DUP_FN, comm_delete, &k, NULL) == MPI_SUCCESS, "Keyval_create");
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k_null, NULL);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    CHECK(MPI_Attr_put(a, k, V(77)) == MPI_SUCCESS, "Attr_put");
    MPI_Attr_put(a, k_null, V(78));
    void *v = NULL;
    int flag = 0;
    CHECK(MPI_Attr_get(a, k, &v, &flag) == MPI_SUCCESS && flag && v == V(77), "Attr_get");
    MPI_Comm_dup(a, &b);
    CHECK(MPI_Attr_get(b, k, &v, &flag) == MPI_SUCCESS && flag && v == V(77), "MPI_DUP_FN copied");
    CHECK(MPI_Attr_get(b, k_null, &v, &flag) == MPI_SUCCESS && !flag, "MPI_NULL_COPY_FN");
    CHECK(MPI_Attr_delete(b, k) == MPI_SUCCESS, "Attr_delete");
    EXPECT(D(k, 77));
    CHECK(MPI_Attr_get(b, k, &v, &flag) == MPI_SUCCESS && !flag, "gone after Attr_delete");
    CHECK(cls(MPI_Attr_put(b, MPI_TAG_UB, V(1))) == MPI_ERR_KEYVAL, "Attr_put of MPI_TAG_UB");
    MPI_Comm_free(&b);
    EXPECT_NONE();
    const int k_id = k;
    CHECK(MPI_Keyval_free(&k) == MPI_SUCCESS && k == MPI_KEYVAL_INVALID, "Keyval_free");
    MPI_Comm_free(&a); /* the freed keyval still deletes a's attribute */
    EXPECT(D(k_id, 77));
    MPI_Keyval_free(&k_null);
}

static void type_attributes(void)
{
    int t_plus, t_dup, t_null, t_fail;
    MPI_Type_create_keyval(type_copy, type_delete, &t_plus, &copy_plus_one);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &t_dup, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &t_null, NULL);
    MPI_Type_create_keyval(type_copy, type_delete, &t_fail, &copy_fail);

    MPI_Datatype t, t2 = MPI_DATATYPE_NULL, t3 = MPI_INT;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    void *v = NULL;
    int flag = -1;
    CHECK(MPI_Type_get_attr(t, t_plus, &v, &flag) == MPI_SUCCESS && flag == 0, "unset");
    CHECK(MPI_Type_set_attr(t, t_null, V(3)) == MPI_SUCCESS, "type set_attr");
    MPI_Type_set_attr(t, t_plus, V(1));
    MPI_Type_set_attr(t, t_dup, V(2));
    CHECK(MPI_Type_get_attr(t, t_plus, &v, &flag) == MPI_SUCCESS && flag && v == V(1), "get");
    MPI_Type_set_attr(t, t_dup, V(22));
    EXPECT(D(t_dup, 2));
    CHECK(last_object == (void *)t, "the type delete callback was given another type");

    CHECK(MPI_Type_dup(t, &t2) == MPI_SUCCESS, "Type_dup");
    EXPECT(C(t_plus, 1));
    CHECK(last_object == (void *)t, "the type copy callback was given another type");
    CHECK(MPI_Type_get_attr(t2, t_plus, &v, &flag) == MPI_SUCCESS && flag && v == V(2),
          "t_plus copied as 2");
    CHECK(MPI_Type_get_attr(t2, t_dup, &v, &flag) == MPI_SUCCESS && flag && v == V(22),
          "t_dup copied by MPI_TYPE_DUP_FN");
    CHECK(MPI_Type_get_attr(t2, t_null, &v, &flag) == MPI_SUCCESS && !flag, "t_null not copied");
    /* The dup is a working type. */
    int size = 0;
    MPI_Type_size(t2, &size);
    CHECK(size == 2 * (int)sizeof(int), "the dup's size %d", size);

    CHECK(MPI_Type_delete_attr(t2, t_plus) == MPI_SUCCESS, "type delete_attr");
    EXPECT(D(t_plus, 2));
    MPI_Type_free(&t2);
    EXPECT(D(t_dup, 22));

    /* A failing copy callback: the dup fails and the copies made are deleted again. */
    MPI_Type_set_attr(t, t_fail, V(50));
    t2 = MPI_INT;
    CHECK(cls(MPI_Type_dup(t, &t2)) == MPI_ERR_OTHER, "Type_dup with a failing copy callback");
    EXPECT(C(t_plus, 1), C(t_fail, 50), D(t_dup, 22), D(t_plus, 2));

    /* Attributes on a predefined type. */
    CHECK(MPI_Type_set_attr(t3, t_plus, V(9)) == MPI_SUCCESS, "set on MPI_INT");
    CHECK(MPI_Type_get_attr(MPI_INT, t_plus, &v, &flag) == MPI_SUCCESS && flag && v == V(9),
          "get on MPI_INT");
    CHECK(MPI_Type_get_attr(MPI_DOUBLE, t_plus, &v, &flag) == MPI_SUCCESS && !flag,
          "not on MPI_DOUBLE");
    CHECK(MPI_Type_delete_attr(MPI_INT, t_plus) == MPI_SUCCESS, "delete on MPI_INT");
    EXPECT(D(t_plus, 9));

    /* Errors. */
    int k_comm;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k_comm, NULL);
    CHECK(cls(MPI_Type_set_attr(t, k_comm, V(1))) == MPI_ERR_KEYVAL,
          "type set_attr with a communicator keyval");
    CHECK(cls(MPI_Type_get_attr(t, MPI_KEYVAL_INVALID, &v, &flag)) == MPI_ERR_KEYVAL,
          "type get_attr with MPI_KEYVAL_INVALID");
    CHECK(cls(MPI_Type_free_keyval(&k_comm)) == MPI_ERR_KEYVAL, "free a comm keyval as a type's");
    CHECK(cls(MPI_Type_set_attr(MPI_DATATYPE_NULL, t_plus, V(1))) == MPI_ERR_TYPE,
          "set_attr on MPI_DATATYPE_NULL");
    MPI_Comm_free_keyval(&k_comm);

    MPI_Type_free(&t);
    EXPECT(D(t_fail, 50), D(t_dup, 22), D(t_plus, 1));
    int *keys[] = {&t_plus, &t_dup, &t_null, &t_fail};
    for (int i = 0; i < 4; ++i)
        CHECK(MPI_Type_free_keyval(keys[i]) == MPI_SUCCESS && *keys[i] == MPI_KEYVAL_INVALID,
              "type free_keyval %d", i);
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    predefined_attributes(MPI_COMM_WORLD, size);
    comm_attributes(size);
    deprecated_calls();
    type_attributes();

    /* MPI_COMM_SELF's attributes go at the start of MPI_Finalize, newest first. */
    int s1, s2, s3;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &s1, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &s2, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &s3, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, s2, V(2));
    MPI_Comm_set_attr(MPI_COMM_SELF, s1, V(1));
    MPI_Comm_set_attr(MPI_COMM_SELF, s3, V(3));
    const int k1 = s1, k2 = s2, k3 = s3;
    MPI_Comm_free_keyval(&s1); /* still deletes its attribute at MPI_Finalize */
    EXPECT_NONE();

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize");
    EXPECT(D(k3, 3), D(k1, 1), D(k2, 2));
    CHECK(finalized_in_callback == 0, "MPI_COMM_SELF's delete callbacks saw MPI_Finalized %d",
          finalized_in_callback);
    if (rank == 0 && all == 0 && failures == 0)
        printf("attributes: %d ranks: communicator and datatype attributes, their callbacks, the "
               "MPI-1 calls and MPI_COMM_SELF at MPI_Finalize right\n",
               size);
    return all || failures ? 1 : 0;
}
