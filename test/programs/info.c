/* test-args: envarg1 envarg2
 * info: every info call (MPI-3.1 chapter 9) with its limits and failures, MPI_INFO_ENV (8.8), and
 * the info hints of communicators (MPI_Comm_set_info, _get_info, MPI_Comm_dup_with_info).
 * Errors are returned (MPI_ERRORS_RETURN on MPI_COMM_WORLD, where info failures go) and their
 * classes checked. Run at any number of ranks; rank 0 prints the verdict; exit status 0 when
 * right. */
#include <mpi.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "info"
#include "test_program.h"

/* The error class of rc (MPI_SUCCESS stays). */
static int cls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* info has exactly the n (key, value) pairs, in this order. */
static void expect_entries(MPI_Info info, int n, const char *const *keys, const char *const *values,
                           int line)
{
    int nkeys = -1;
    CHECK(MPI_Info_get_nkeys(info, &nkeys) == MPI_SUCCESS && nkeys == n,
          "(from line %d) nkeys %d, expected %d", line, nkeys, n);
    for (int i = 0; i < n && i < nkeys; ++i) {
        char key[MPI_MAX_INFO_KEY + 1] = "";
        char value[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0, len = -1;
        CHECK(MPI_Info_get_nthkey(info, i, key) == MPI_SUCCESS && strcmp(key, keys[i]) == 0,
              "(from line %d) key %d is \"%s\", expected \"%s\"", line, i, key, keys[i]);
        CHECK(MPI_Info_get_valuelen(info, keys[i], &len, &flag) == MPI_SUCCESS && flag &&
                  len == (int)strlen(values[i]),
              "(from line %d) valuelen of %s: flag %d len %d", line, keys[i], flag, len);
        CHECK(MPI_Info_get(info, keys[i], MPI_MAX_INFO_VAL, value, &flag) == MPI_SUCCESS && flag &&
                  strcmp(value, values[i]) == 0,
              "(from line %d) %s = \"%s\", expected \"%s\"", line, keys[i], value, values[i]);
    }
}

static void basic_calls(void)
{
    MPI_Info info = MPI_INFO_NULL;
    CHECK(MPI_Info_create(&info) == MPI_SUCCESS && info != MPI_INFO_NULL, "create");
    expect_entries(info, 0, NULL, NULL, __LINE__);

    CHECK(MPI_Info_set(info, "zeta", "1") == MPI_SUCCESS, "set zeta");
    CHECK(MPI_Info_set(info, "alpha", "two") == MPI_SUCCESS, "set alpha");
    CHECK(MPI_Info_set(info, "mid", "") == MPI_SUCCESS, "set mid to the empty string");
    {
        const char *k[] = {"zeta", "alpha", "mid"}, *v[] = {"1", "two", ""};
        expect_entries(info, 3, k, v, __LINE__);
    }
    /* A new value for a key keeps the key's place; keys are case sensitive. */
    CHECK(MPI_Info_set(info, "zeta", "replaced") == MPI_SUCCESS, "replace zeta");
    CHECK(MPI_Info_set(info, "ZETA", "upper") == MPI_SUCCESS, "set ZETA");
    {
        const char *k[] = {"zeta", "alpha", "mid", "ZETA"}, *v[] = {"replaced", "two", "", "upper"};
        expect_entries(info, 4, k, v, __LINE__);
    }

    /* Missing keys: flag false, value and valuelen untouched. */
    char value[16] = "untouched";
    int flag = 7, len = 99;
    CHECK(MPI_Info_get(info, "nope", 15, value, &flag) == MPI_SUCCESS && flag == 0 &&
              strcmp(value, "untouched") == 0,
          "get of a missing key: flag %d value \"%s\"", flag, value);
    flag = 7;
    CHECK(MPI_Info_get_valuelen(info, "nope", &len, &flag) == MPI_SUCCESS && flag == 0 && len == 99,
          "valuelen of a missing key: flag %d len %d", flag, len);

    /* Truncation: at most valuelen characters and a terminating null. */
    memset(value, 'x', sizeof value);
    CHECK(MPI_Info_get(info, "zeta", 3, value, &flag) == MPI_SUCCESS && flag &&
              strcmp(value, "rep") == 0 && value[4] == 'x',
          "get with valuelen 3: \"%.8s\"", value);
    memset(value, 'x', sizeof value);
    CHECK(MPI_Info_get(info, "zeta", 0, value, &flag) == MPI_SUCCESS && flag && value[0] == 0 &&
              value[1] == 'x',
          "get with valuelen 0");
    memset(value, 'x', sizeof value);
    CHECK(MPI_Info_get(info, "zeta", 8, value, &flag) == MPI_SUCCESS && flag &&
              strcmp(value, "replaced") == 0,
          "get with valuelen = length: \"%.9s\"", value);

    /* Delete: the later keys move up one place. */
    CHECK(MPI_Info_delete(info, "alpha") == MPI_SUCCESS, "delete alpha");
    {
        const char *k[] = {"zeta", "mid", "ZETA"}, *v[] = {"replaced", "", "upper"};
        expect_entries(info, 3, k, v, __LINE__);
    }
    CHECK(cls(MPI_Info_delete(info, "alpha")) == MPI_ERR_INFO_NOKEY,
          "delete of a missing key is MPI_ERR_INFO_NOKEY");

    /* Dup: the same entries in the same order, and independent of the original. */
    MPI_Info copy = MPI_INFO_NULL;
    CHECK(MPI_Info_dup(info, &copy) == MPI_SUCCESS && copy != info, "dup");
    CHECK(MPI_Info_set(copy, "only_in_copy", "c") == MPI_SUCCESS, "set in the copy");
    CHECK(MPI_Info_set(info, "mid", "changed") == MPI_SUCCESS, "set in the original");
    {
        const char *k[] = {"zeta", "mid", "ZETA", "only_in_copy"},
                   *v[] = {"replaced", "", "upper", "c"};
        expect_entries(copy, 4, k, v, __LINE__);
        const char *k2[] = {"zeta", "mid", "ZETA"}, *v2[] = {"replaced", "changed", "upper"};
        expect_entries(info, 3, k2, v2, __LINE__);
    }

    /* nthkey out of range. */
    char key[MPI_MAX_INFO_KEY + 1];
    CHECK(cls(MPI_Info_get_nthkey(info, 3, key)) == MPI_ERR_ARG, "nthkey 3 of 3 keys");
    CHECK(cls(MPI_Info_get_nthkey(info, -1, key)) == MPI_ERR_ARG, "nthkey -1");
    CHECK(cls(MPI_Info_get(info, "zeta", -1, value, &flag)) == MPI_ERR_ARG,
          "get with a negative valuelen");

    CHECK(MPI_Info_free(&copy) == MPI_SUCCESS && copy == MPI_INFO_NULL, "free the copy");
    CHECK(MPI_Info_free(&info) == MPI_SUCCESS && info == MPI_INFO_NULL, "free");
    CHECK(cls(MPI_Info_get_nkeys(MPI_INFO_NULL, &len)) == MPI_ERR_INFO,
          "nkeys of MPI_INFO_NULL is MPI_ERR_INFO");
    CHECK(cls(MPI_Info_free(&info)) == MPI_ERR_INFO, "free of MPI_INFO_NULL is MPI_ERR_INFO");
}

static void limits(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char key[MPI_MAX_INFO_KEY + 2];
    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY] = '\0'; /* the longest key */
    static char value[MPI_MAX_INFO_VAL + 2];
    memset(value, 'v', sizeof value);
    value[MPI_MAX_INFO_VAL] = '\0'; /* the longest value */
    CHECK(MPI_Info_set(info, key, value) == MPI_SUCCESS, "a key of MPI_MAX_INFO_KEY characters "
                                                         "and a value of MPI_MAX_INFO_VAL");
    int flag = 0, len = 0;
    CHECK(MPI_Info_get_valuelen(info, key, &len, &flag) == MPI_SUCCESS && flag &&
              len == MPI_MAX_INFO_VAL,
          "valuelen of the longest value: %d", len);
    char back[MPI_MAX_INFO_KEY + 1] = "";
    CHECK(MPI_Info_get_nthkey(info, 0, back) == MPI_SUCCESS && strcmp(back, key) == 0,
          "nthkey of the longest key");
    static char got[MPI_MAX_INFO_VAL + 1];
    CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag) == MPI_SUCCESS && flag &&
              strcmp(got, value) == 0,
          "get of the longest value");

    key[MPI_MAX_INFO_KEY] = 'k';
    key[MPI_MAX_INFO_KEY + 1] = '\0'; /* one too long */
    value[MPI_MAX_INFO_VAL] = 'v';
    value[MPI_MAX_INFO_VAL + 1] = '\0';
    CHECK(cls(MPI_Info_set(info, key, "x")) == MPI_ERR_INFO_KEY, "set with a key too long");
    CHECK(cls(MPI_Info_set(info, "ok", value)) == MPI_ERR_INFO_VALUE, "set with a value too long");
    CHECK(cls(MPI_Info_get(info, key, 10, got, &flag)) == MPI_ERR_INFO_KEY,
          "get with a key too long");
    CHECK(cls(MPI_Info_get_valuelen(info, key, &len, &flag)) == MPI_ERR_INFO_KEY,
          "valuelen with a key too long");
    CHECK(cls(MPI_Info_delete(info, key)) == MPI_ERR_INFO_KEY, "delete with a key too long");
    CHECK(cls(MPI_Info_set(info, "", "x")) == MPI_ERR_INFO_KEY, "set with an empty key");
    int n = -1;
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 1, "the refused calls changed nothing: %d keys", n);
    MPI_Info_free(&info);
}

static void info_env(int size)
{
    int flag = 0, n = 0;
    char value[MPI_MAX_INFO_VAL + 1];
    CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n) == MPI_SUCCESS && n >= 6, "MPI_INFO_ENV has %d keys",
          n);

    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && atoi(value) == size, "maxprocs \"%s\", world size %d", value, size);

    char host[256] = "";
    gethostname(host, sizeof host - 1);
    MPI_Info_get(MPI_INFO_ENV, "host", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, host) == 0, "host \"%s\", expected \"%s\"", value, host);

    char cwd[PATH_MAX] = "";
    if (getcwd(cwd, sizeof cwd)) {
        MPI_Info_get(MPI_INFO_ENV, "wdir", MPI_MAX_INFO_VAL, value, &flag);
        CHECK(flag && strcmp(value, cwd) == 0, "wdir \"%s\", expected \"%s\"", value, cwd);
    }

    /* The program and its arguments: this program was started with "envarg1 envarg2". */
    MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, value, &flag);
    const char *base = strrchr(value, '/');
    CHECK(flag && strcmp(base ? base + 1 : value, "info") == 0, "command \"%s\"", value);
    MPI_Info_get(MPI_INFO_ENV, "argv", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "envarg1 envarg2") == 0, "argv \"%s\"", value);

    int provided = -1;
    MPI_Query_thread(&provided);
    const char *names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                           "MPI_THREAD_MULTIPLE"};
    MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && provided >= 0 && provided <= 3 && strcmp(value, names[provided]) == 0,
          "thread_level \"%s\", provided %d", value, provided);

    /* Readable and duplicable, not changeable or freeable. */
    MPI_Info env = MPI_INFO_ENV, copy = MPI_INFO_NULL;
    CHECK(cls(MPI_Info_free(&env)) == MPI_ERR_INFO && env == MPI_INFO_ENV,
          "MPI_Info_free(MPI_INFO_ENV) is MPI_ERR_INFO");
    CHECK(cls(MPI_Info_set(MPI_INFO_ENV, "host", "x")) == MPI_ERR_INFO,
          "MPI_Info_set on MPI_INFO_ENV is MPI_ERR_INFO");
    CHECK(MPI_Info_dup(MPI_INFO_ENV, &copy) == MPI_SUCCESS, "dup of MPI_INFO_ENV");
    int m = -1;
    MPI_Info_get_nkeys(copy, &m);
    CHECK(m == n, "the dup of MPI_INFO_ENV has %d keys, not %d", m, n);
    CHECK(MPI_Info_set(copy, "host", "x") == MPI_SUCCESS, "the dup may be changed");
    MPI_Info_free(&copy);
    MPI_Info_get(MPI_INFO_ENV, "host", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, host) == 0, "MPI_INFO_ENV's host after its dup changed: %s", value);
}

static void comm_hints(void)
{
    MPI_Info hints, got;
    MPI_Comm_get_info(MPI_COMM_WORLD, &got);
    int n = -1;
    MPI_Info_get_nkeys(got, &n);
    CHECK(n == 0, "MPI_COMM_WORLD starts with %d hints", n);
    MPI_Info_free(&got);

    MPI_Comm a;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "h1", "one");
    MPI_Info_set(hints, "h2", "two");
    CHECK(MPI_Comm_set_info(a, hints) == MPI_SUCCESS, "set_info");
    /* The hints were copied: changing the info object afterwards changes nothing. */
    MPI_Info_set(hints, "h1", "changed later");
    CHECK(MPI_Comm_get_info(a, &got) == MPI_SUCCESS && got != hints, "get_info");
    {
        const char *k[] = {"h1", "h2"}, *v[] = {"one", "two"};
        expect_entries(got, 2, k, v, __LINE__);
    }
    MPI_Info_free(&got);

    /* set_info again: new values for its keys, the others stay. */
    MPI_Info more;
    MPI_Info_create(&more);
    MPI_Info_set(more, "h2", "TWO");
    MPI_Info_set(more, "h3", "three");
    MPI_Comm_set_info(a, more);
    MPI_Comm_get_info(a, &got);
    {
        const char *k[] = {"h1", "h2", "h3"}, *v[] = {"one", "TWO", "three"};
        expect_entries(got, 3, k, v, __LINE__);
    }
    MPI_Info_free(&got);

    /* MPI_Comm_dup keeps the hints; MPI_Comm_dup_with_info takes the given ones instead. */
    MPI_Comm b, c, d;
    MPI_Comm_dup(a, &b);
    MPI_Comm_get_info(b, &got);
    {
        const char *k[] = {"h1", "h2", "h3"}, *v[] = {"one", "TWO", "three"};
        expect_entries(got, 3, k, v, __LINE__);
    }
    MPI_Info_free(&got);
    MPI_Info only;
    MPI_Info_create(&only);
    MPI_Info_set(only, "given", "yes");
    CHECK(MPI_Comm_dup_with_info(a, only, &c) == MPI_SUCCESS && c != MPI_COMM_NULL,
          "dup_with_info");
    MPI_Comm_get_info(c, &got);
    {
        const char *k[] = {"given"}, *v[] = {"yes"};
        expect_entries(got, 1, k, v, __LINE__);
    }
    MPI_Info_free(&got);
    CHECK(MPI_Comm_dup_with_info(a, MPI_INFO_NULL, &d) == MPI_SUCCESS, "dup_with_info NULL");
    MPI_Comm_get_info(d, &got);
    MPI_Info_get_nkeys(got, &n);
    CHECK(n == 0, "dup_with_info(MPI_INFO_NULL) gave %d hints", n);
    MPI_Info_free(&got);

    /* The new communicators work, and are distinct from their parent. */
    int sum = 0, result = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    int size;
    MPI_Comm_size(c, &size);
    CHECK(sum == size * (size - 1) / 2, "allreduce on the dup_with_info: %d", sum);
    MPI_Comm_compare(a, c, &result);
    CHECK(result == MPI_CONGRUENT, "compare(parent, dup_with_info) = %d", result);

    MPI_Info freed;
    MPI_Info_create(&freed);
    MPI_Info stale = freed;
    MPI_Info_free(&freed);
    CHECK(cls(MPI_Comm_set_info(a, stale)) == MPI_ERR_INFO, "set_info with a freed info");

    MPI_Comm_free(&d);
    MPI_Comm_free(&c);
    MPI_Comm_free(&b);
    MPI_Comm_free(&a);
    MPI_Info_free(&only);
    MPI_Info_free(&more);
    MPI_Info_free(&hints);
}

int main(int argc, char **argv)
{
    alarm(60);
    /* The test list starts this program with the arguments of its test-args line (above);
     * MPI_INFO_ENV's "argv" must be them. */
    if (argc != 3 || strcmp(argv[1], "envarg1") != 0 || strcmp(argv[2], "envarg2") != 0) {
        fprintf(stderr, "info: run as: info envarg1 envarg2\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    basic_calls();
    limits();
    info_env(size);
    comm_hints();

    return finish(
        "every info call, its limits and failures, MPI_INFO_ENV and communicator hints right");
}
