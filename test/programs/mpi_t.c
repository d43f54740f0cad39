/* mpi_t: the tool information interface (MPI-3.1 14.3), as a tool uses it, before MPI_Init,
 * during the job and after MPI_Finalize:
 * - every call before MPI_T_init_thread fails with MPI_T_ERR_NOT_INITIALIZED; init and
 *   finalize nest;
 * - control variables: every one has a name that MPI_T_cvar_get_index finds again and is in
 *   exactly one category; string lengths follow 14.3.3 (a short buffer gets a cut name); the
 *   variable "btl" reads what mpirun --mca gave (WEFT_MCA_btl); enumerations list their items
 *   and the value is one of them; bad indexes, names and items are refused with their classes;
 * - a write before MPI_Init takes effect: mpi_ft_enable written to the opposite of its value,
 *   and MPI_Init's MPIX_FT attribute follows it; after MPI_Init a write is refused (SET_NOT_NOW)
 *   and an information variable is never writable (SET_NEVER);
 * - performance variables: the PML's "unexpected" level rises by the messages sent here and
 *   not received, and falls back when they are; "posted" counts a receive posted and not
 *   matched; a counter (mpi_ft_failures) counts from its start, takes a write, reads and
 *   resets at once; levels cannot be started, written or reset;
 * - after MPI_Finalize the interface still works: the PML's variables keep their last values.
 * Run at any number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi-ext.h>
#include <mpi.h>

#include <stdlib.h>
#include <string.h>

#define PROGRAM "mpi_t"
#include "test_program.h"

enum { NMSG = 5 };

/* The index of the control variable `name`, -1 if none. */
static int cvar(const char *name)
{
    int i = -1;
    return MPI_T_cvar_get_index(name, &i) == MPI_SUCCESS ? i : -1;
}

/* The index of the first performance variable of class cls whose name starts with prefix and
 * ends with suffix, -1 if none. */
static int pvar(const char *prefix, const char *suffix, int cls)
{
    int n = 0;
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n; ++i) {
        char name[256];
        int len = sizeof name, c = -1;
        MPI_T_pvar_get_info(i, name, &len, NULL, &c, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL);
        size_t l = strlen(name), s = strlen(suffix);
        if (c == cls && strncmp(name, prefix, strlen(prefix)) == 0 && l >= s &&
            strcmp(name + l - s, suffix) == 0)
            return i;
    }
    return -1;
}

static unsigned long long pread(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    int rc = MPI_T_pvar_read(s, h, &v);
    CHECK(rc == MPI_SUCCESS, "MPI_T_pvar_read returned %d", rc);
    return v;
}

/* Control variables, before MPI_Init: names, indexes, categories, lengths, enumerations. */
static void cvars_before_init(void)
{
    int n = 0, ncat = 0;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_SUCCESS && n > 20, "only %d control variables", n);
    CHECK(MPI_T_category_get_num(&ncat) == MPI_SUCCESS && ncat > 3, "only %d categories", ncat);
    int *seen = calloc((size_t)n, sizeof *seen);
    for (int c = 0; c < ncat; ++c) {
        int nc = 0, np = 0, nsub = 0;
        MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, &np, &nsub);
        int *idx = malloc(sizeof *idx * (size_t)(nc + 1));
        MPI_T_category_get_cvars(c, nc, idx);
        for (int k = 0; k < nc; ++k)
            if (idx[k] >= 0 && idx[k] < n)
                ++seen[idx[k]];
        free(idx);
    }
    int enums = 0;
    for (int i = 0; i < n; ++i) {
        int len = 0;
        CHECK(MPI_T_cvar_get_info(i, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
                  MPI_SUCCESS,
              "cvar %d: no info", i);
        char *name = malloc((size_t)len);
        int got = len, verbosity = 0, bind = -1, scope = -1;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        MPI_T_cvar_get_info(i, name, &got, &verbosity, &type, &e, NULL, NULL, &bind, &scope);
        CHECK(got == len && (int)strlen(name) == len - 1, "cvar %d: length %d then %d for '%s'", i,
              len, got, name);
        CHECK(cvar(name) == i, "cvar %s: index %d, MPI_T_cvar_get_index says %d", name, i,
              cvar(name));
        CHECK(seen[i] == 1, "cvar %s is in %d categories", name, seen[i]);
        CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL &&
                  bind == MPI_T_BIND_NO_OBJECT && scope >= MPI_T_SCOPE_CONSTANT &&
                  scope <= MPI_T_SCOPE_ALL_EQ,
              "cvar %s: verbosity %d, bind %d, scope %d", name, verbosity, bind, scope);
        if (e != MPI_T_ENUM_NULL) {
            /* The value is one of the items. */
            ++enums;
            int items = 0, value = -1, count = 0, found = 0;
            MPI_T_enum_get_info(e, &items, NULL, NULL);
            CHECK(type == MPI_INT && items > 0, "enum cvar %s: type or %d items", name, items);
            MPI_T_cvar_handle h;
            MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
            MPI_T_cvar_read(h, &value);
            MPI_T_cvar_handle_free(&h);
            for (int k = 0; k < items; ++k) {
                int v = -1;
                char item[128];
                int ilen = sizeof item;
                MPI_T_enum_get_item(e, k, &v, item, &ilen);
                found |= v == value;
            }
            CHECK(found, "enum cvar %s: value %d is none of its %d items", name, value, items);
            int v;
            CHECK(MPI_T_enum_get_item(e, items, &v, NULL, NULL) == MPI_T_ERR_INVALID_ITEM,
                  "enum cvar %s: item %d past the end accepted", name, items);
        }
        free(name);
    }
    CHECK(enums > 0, "no control variable is an enumeration");
    free(seen);

    /* A short buffer: cut, with its NUL, and the length says what was stored. */
    char small[3];
    int len = sizeof small;
    MPI_T_cvar_get_info(cvar("btl"), small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CHECK(len == 3 && strcmp(small, "bt") == 0, "a 3-byte buffer got '%s', length %d", small, len);

    /* The value mpirun gave. */
    const char *given = getenv("WEFT_MCA_btl");
    if (given) {
        MPI_T_cvar_handle h;
        int count = 0;
        MPI_T_cvar_handle_alloc(cvar("btl"), NULL, &h, &count);
        char *value = malloc((size_t)count);
        MPI_T_cvar_read(h, value);
        CHECK(strcmp(value, given) == 0, "cvar btl reads '%s', mpirun gave '%s'", value, given);
        free(value);
        MPI_T_cvar_handle_free(&h);
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "a freed cvar handle is not MPI_T_CVAR_HANDLE_NULL");
    }

    /* Bad input. */
    CHECK(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX,
          "cvar index %d (one past the last) accepted", n);
    int idx;
    CHECK(MPI_T_cvar_get_index("no_such_variable", &idx) == MPI_T_ERR_INVALID_NAME,
          "an unknown cvar name found");
    CHECK(MPI_T_category_get_index("no_such_category", &idx) == MPI_T_ERR_INVALID_NAME,
          "an unknown category found");
    CHECK(MPI_T_category_get_index("btl", &idx) == MPI_SUCCESS, "no category btl");
}

/* Information variables are never written. */
static void info_cvars_read_only(void)
{
    int n = 0, checked = 0;
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; ++i) {
        int scope = -1, count = 0;
        MPI_Datatype type;
        MPI_T_cvar_get_info(i, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL, &scope);
        if (scope != MPI_T_SCOPE_READONLY)
            continue;
        char buf[4096] = "";
        MPI_T_cvar_handle h;
        MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
        CHECK(count <= (int)sizeof buf, "count %d", count);
        MPI_T_cvar_read(h, buf);
        CHECK(MPI_T_cvar_write(h, buf) == MPI_T_ERR_CVAR_SET_NEVER,
              "an information variable (%d) was written", i);
        MPI_T_cvar_handle_free(&h);
        ++checked;
    }
    (void)checked; /* none when no component has information variables */
}

int main(int argc, char **argv)
{
    int provided = -1, n = -1;
    /* Not yet initialized. */
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "cvar_get_num before MPI_T_init");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "MPI_T_finalize before MPI_T_init");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS &&
              provided == MPI_THREAD_SINGLE,
          "MPI_T_init_thread: provided %d", provided);
    CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS &&
              provided == MPI_THREAD_MULTIPLE,
          "MPI_T_init_thread again: provided %d", provided);
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize of the inner init");

    cvars_before_init();
    info_cvars_read_only();

    /* A write before MPI_Init: fault tolerance turned the other way. */
    MPI_T_cvar_handle ft;
    int count = 0, ft_before = -1, ft_after = -1;
    CHECK(MPI_T_cvar_handle_alloc(cvar("mpi_ft_enable"), NULL, &ft, &count) == MPI_SUCCESS &&
              count == 1,
          "no handle for mpi_ft_enable");
    MPI_T_cvar_read(ft, &ft_before);
    const int ft_want = !ft_before;
    CHECK(MPI_T_cvar_write(ft, &ft_want) == MPI_SUCCESS, "writing mpi_ft_enable refused");
    MPI_T_cvar_read(ft, &ft_after);
    CHECK(ft_after == ft_want, "mpi_ft_enable reads %d after writing %d", ft_after, ft_want);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *ftattr = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ftattr, &flag);
    CHECK(flag && *ftattr == ft_want, "MPIX_FT is %d after mpi_ft_enable was written %d",
          flag ? *ftattr : -1, ft_want);
    const int ft_back = ft_before;
    CHECK(MPI_T_cvar_write(ft, &ft_back) == MPI_T_ERR_CVAR_SET_NOT_NOW,
          "mpi_ft_enable written after MPI_Init");
    MPI_T_cvar_handle_free(&ft);

    /* Performance variables. */
    int iu = pvar("pml_", "_unexpected", MPI_T_PVAR_CLASS_LEVEL);
    int ip = pvar("pml_", "_posted", MPI_T_PVAR_CLASS_LEVEL);
    int ifail = -1;
    CHECK(iu >= 0 && ip >= 0, "the PML has no unexpected or posted variable");
    CHECK(MPI_T_pvar_get_index("mpi_ft_failures", MPI_T_PVAR_CLASS_COUNTER, &ifail) == MPI_SUCCESS,
          "no counter mpi_ft_failures");
    int cls = -1, ro = -1, cont = -1, atomic = -1;
    MPI_Datatype type;
    MPI_T_pvar_get_info(iu, NULL, NULL, NULL, &cls, &type, NULL, NULL, NULL, NULL, &ro, &cont,
                        &atomic);
    CHECK(cls == MPI_T_PVAR_CLASS_LEVEL && type == MPI_UNSIGNED_LONG_LONG && ro && cont,
          "unexpected: class %d readonly %d continuous %d", cls, ro, cont);
    MPI_T_pvar_session s;
    MPI_T_pvar_handle hu, hp, hf;
    CHECK(MPI_T_pvar_session_create(&s) == MPI_SUCCESS, "no session");
    if (iu >= 0 && ip >= 0 && ifail >= 0) {
        MPI_T_pvar_handle_alloc(s, iu, NULL, &hu, &count);
        MPI_T_pvar_handle_alloc(s, ip, NULL, &hp, &count);
        MPI_T_pvar_handle_alloc(s, ifail, NULL, &hf, &count);
        CHECK(MPI_T_pvar_start(s, hu) == MPI_T_ERR_PVAR_NO_STARTSTOP, "a level was started");
        unsigned long long zero = 0;
        CHECK(MPI_T_pvar_write(s, hu, &zero) == MPI_T_ERR_PVAR_NO_WRITE, "a level was written");
        CHECK(MPI_T_pvar_reset(s, hu) == MPI_T_ERR_PVAR_NO_WRITE, "a level was reset");

        /* NMSG messages from the previous rank, not received yet, then received. */
        const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Barrier(MPI_COMM_WORLD);
        const unsigned long long before = pread(s, hu);
        MPI_Barrier(MPI_COMM_WORLD); /* every rank read its own before any sends */
        int v[NMSG];
        MPI_Request reqs[NMSG];
        for (int k = 0; k < NMSG; ++k) {
            v[k] = k;
            MPI_Isend(&v[k], 1, MPI_INT, next, 40, MPI_COMM_WORLD, &reqs[k]);
        }
        /* Until they are all here (the level counts them as they arrive), or 30 s: a bound in
         * time, not in calls, since oversubscribed ranks beside a loaded machine's other jobs
         * may wait long for the sender to run (100000 probes were not enough once). */
        unsigned long long during = before;
        for (const double t0 = MPI_Wtime(); during < before + NMSG && MPI_Wtime() - t0 < 30;) {
            int any;
            MPI_Iprobe(prev, 99, MPI_COMM_WORLD, &any, MPI_STATUS_IGNORE); /* progress */
            during = pread(s, hu);
        }
        CHECK(during == before + NMSG, "unexpected: %llu before, %llu with %d waiting", before,
              during, NMSG);
        for (int k = 0; k < NMSG; ++k) {
            int got = -1;
            MPI_Recv(&got, 1, MPI_INT, prev, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(got == k, "message %d carried %d", k, got);
        }
        MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
        CHECK(pread(s, hu) == before, "unexpected: %llu after receiving, %llu before", pread(s, hu),
              before);

        /* A receive nobody sends to. */
        const unsigned long long posted = pread(s, hp);
        int sink;
        MPI_Request r;
        MPI_Irecv(&sink, 1, MPI_INT, prev, 41, MPI_COMM_WORLD, &r);
        CHECK(pread(s, hp) == posted + 1, "posted: %llu, then %llu with one more", posted,
              pread(s, hp));
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(pread(s, hp) == posted, "posted: %llu after the cancel, %llu before", pread(s, hp),
              posted);

        /* A counter: from its start, written, read and reset at once. */
        MPI_T_pvar_get_info(ifail, NULL, NULL, NULL, &cls, NULL, NULL, NULL, NULL, NULL, &ro, &cont,
                            &atomic);
        CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && !ro && !cont && atomic,
              "mpi_ft_failures: class %d readonly %d continuous %d atomic %d", cls, ro, cont,
              atomic);
        CHECK(MPI_T_pvar_start(s, hf) == MPI_SUCCESS, "the counter did not start");
        CHECK(pread(s, hf) == 0, "mpi_ft_failures counts %llu with no failure", pread(s, hf));
        unsigned long long seven = 7, got = 0;
        CHECK(MPI_T_pvar_write(s, hf, &seven) == MPI_SUCCESS && pread(s, hf) == 7,
              "the counter reads %llu after writing 7", pread(s, hf));
        CHECK(MPI_T_pvar_readreset(s, hf, &got) == MPI_SUCCESS && got == 7 && pread(s, hf) == 0,
              "readreset gave %llu, then %llu", got, pread(s, hf));
        CHECK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS,
              "stopping every handle failed");
        CHECK(MPI_T_pvar_handle_free(s, &hp) == MPI_SUCCESS && hp == MPI_T_PVAR_HANDLE_NULL,
              "pvar handle free");
        CHECK(MPI_T_pvar_read(s, hp, &got) == MPI_T_ERR_INVALID_HANDLE,
              "a freed pvar handle was read");
    }
    CHECK(MPI_T_pvar_session_free(&s) == MPI_SUCCESS && s == MPI_T_PVAR_SESSION_NULL,
          "session free");
    CHECK(MPI_T_pvar_session_free(&s) == MPI_T_ERR_INVALID_SESSION, "a freed session freed");

    /* The end: failures summed, MPI finalized, and the interface still answers after it. */
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    int num = 0;
    CHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS && num > 0, "no pvar after MPI_Finalize");
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, iu, NULL, &hu, &count);
    unsigned long long left = ~0ull;
    CHECK(MPI_T_pvar_read(s, hu, &left) == MPI_SUCCESS && left == 0,
          "unexpected reads %llu after MPI_Finalize", left);
    MPI_T_pvar_session_free(&s);
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "MPI_T_finalize once too often");
    if (rank == 0 && all == 0 && failures == 0)
        printf("%s: %d ranks: control variables (written before MPI_Init, refused after), "
               "categories, enumerations, performance variables, after MPI_Finalize too\n",
               PROGRAM, size);
    return all != 0 || failures != 0;
}
