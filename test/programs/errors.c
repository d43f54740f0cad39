/* errors: the program's own error classes, codes and strings (MPI_Add_error_class, _code,
 * _string; MPI-3.1 8.5), MPI_LASTUSEDCODE following them, MPI_Error_class and _string answering
 * for them, and error handlers called by the program (MPI_Comm_call_errhandler) and by the
 * library, with MPI_Errhandler_free while a communicator still uses the handler. Errors are
 * returned (MPI_ERRORS_RETURN on MPI_COMM_WORLD) and their classes checked. Run at any number of
 * ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "errors"
#include "test_program.h"

/* The class of rc (MPI_SUCCESS stays). */
static int cls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static int last_used(void)
{
    int *v = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag);
    return flag && v ? *v : -1;
}

static void expect_string(int code, const char *want, int line)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = -1;
    memset(s, 'x', sizeof s);
    int rc = MPI_Error_string(code, s, &len);
    CHECK(rc == MPI_SUCCESS && len == (int)strlen(want) && strcmp(s, want) == 0,
          "(from line %d) MPI_Error_string(%d): rc %d, \"%.40s\" (%d), expected \"%.40s\"", line,
          code, rc, rc == MPI_SUCCESS ? s : "", len, want);
}

static void expect_class(int code, int want, int line)
{
    int c = -1;
    int rc = MPI_Error_class(code, &c);
    CHECK(rc == MPI_SUCCESS && c == want,
          "(from line %d) MPI_Error_class(%d): rc %d, class %d, expected %d", line, code, rc, c,
          want);
}

static void user_codes(void)
{
    int *attr = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &attr, &flag);
    CHECK(flag && attr && *attr == MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d before any was added",
          attr ? *attr : -1);

    /* A class: the first code after the predefined ones, its own class, no string yet. */
    int c1 = -1;
    CHECK(MPI_Add_error_class(&c1) == MPI_SUCCESS && c1 == MPI_ERR_LASTCODE + 1,
          "first user class %d, expected %d", c1, MPI_ERR_LASTCODE + 1);
    CHECK(c1 != MPIX_ERR_PROC_FAILED && c1 != MPIX_ERR_PROC_FAILED_PENDING &&
              c1 != MPIX_ERR_REVOKED && c1 > MPI_ERR_RMA_FLAVOR,
          "user class %d meets a predefined one", c1);
    CHECK(last_used() == c1, "MPI_LASTUSEDCODE %d after the class, expected %d", last_used(), c1);
    /* The attribute's value is live: the pointer taken before sees the new code. */
    CHECK(*attr == c1, "the MPI_LASTUSEDCODE value got before says %d, expected %d", *attr, c1);
    expect_class(c1, c1, __LINE__);
    expect_string(c1, "", __LINE__);

    /* Codes in it, and in a predefined class. */
    int e1 = -1, e2 = -1, c2 = -1;
    CHECK(MPI_Add_error_code(c1, &e1) == MPI_SUCCESS && e1 == c1 + 1, "code %d, expected %d", e1,
          c1 + 1);
    CHECK(MPI_Add_error_code(MPI_ERR_ARG, &e2) == MPI_SUCCESS && e2 == c1 + 2,
          "code %d, expected %d", e2, c1 + 2);
    CHECK(MPI_Add_error_class(&c2) == MPI_SUCCESS && c2 == c1 + 3, "class %d, expected %d", c2,
          c1 + 3);
    CHECK(last_used() == c2, "MPI_LASTUSEDCODE %d, expected %d", last_used(), c2);
    expect_class(e1, c1, __LINE__);
    expect_class(e2, MPI_ERR_ARG, __LINE__);
    expect_class(c2, c2, __LINE__);
    expect_class(MPI_ERR_RANK, MPI_ERR_RANK, __LINE__);

    /* Not classes: a user code, MPI_SUCCESS, a number nobody made. */
    int x = -7;
    CHECK(cls(MPI_Add_error_code(e1, &x)) == MPI_ERR_ARG && x == -7,
          "MPI_Add_error_code in a code (not a class) was taken");
    CHECK(cls(MPI_Add_error_code(MPI_SUCCESS, &x)) == MPI_ERR_ARG,
          "MPI_Add_error_code in MPI_SUCCESS was taken");
    CHECK(cls(MPI_Add_error_code(c2 + 50, &x)) == MPI_ERR_ARG,
          "MPI_Add_error_code in an unknown class was taken");
    CHECK(last_used() == c2, "a failed MPI_Add_error_code moved MPI_LASTUSEDCODE to %d",
          last_used());
    CHECK(cls(MPI_Error_class(c2 + 1, &x)) == MPI_ERR_ARG, "MPI_Error_class of an unknown code");

    /* Strings: set, replaced, up to MPI_MAX_ERROR_STRING - 1 characters. */
    CHECK(MPI_Add_error_string(c1, "the test's class") == MPI_SUCCESS, "string of the class");
    CHECK(MPI_Add_error_string(e1, "first code") == MPI_SUCCESS, "string of a code");
    expect_string(c1, "the test's class", __LINE__);
    expect_string(e1, "first code", __LINE__);
    expect_string(e2, "", __LINE__);
    CHECK(MPI_Add_error_string(e1, "first code, again") == MPI_SUCCESS, "replacing a string");
    expect_string(e1, "first code, again", __LINE__);
    char longest[MPI_MAX_ERROR_STRING + 1];
    memset(longest, 'a', sizeof longest);
    longest[MPI_MAX_ERROR_STRING - 1] = '\0';
    CHECK(MPI_Add_error_string(e2, longest) == MPI_SUCCESS, "a string of %d characters",
          MPI_MAX_ERROR_STRING - 1);
    expect_string(e2, longest, __LINE__);
    longest[MPI_MAX_ERROR_STRING - 1] = 'a';
    longest[MPI_MAX_ERROR_STRING] = '\0';
    CHECK(cls(MPI_Add_error_string(e2, longest)) == MPI_ERR_ARG, "a string of %d characters",
          MPI_MAX_ERROR_STRING);
    longest[MPI_MAX_ERROR_STRING - 1] = '\0';
    expect_string(e2, longest, __LINE__);

    /* Predefined codes keep theirs; unknown codes have none to set. */
    CHECK(cls(MPI_Add_error_string(MPI_ERR_ARG, "mine")) == MPI_ERR_ARG,
          "MPI_Add_error_string on MPI_ERR_ARG was taken");
    CHECK(cls(MPI_Add_error_string(MPIX_ERR_REVOKED, "mine")) == MPI_ERR_ARG,
          "MPI_Add_error_string on MPIX_ERR_REVOKED was taken");
    CHECK(cls(MPI_Add_error_string(MPI_ERR_LASTCODE, "mine")) == MPI_ERR_ARG,
          "MPI_Add_error_string on MPI_ERR_LASTCODE was taken");
    CHECK(cls(MPI_Add_error_string(c2 + 1, "mine")) == MPI_ERR_ARG,
          "MPI_Add_error_string on an unknown code was taken");
    CHECK(cls(MPI_Add_error_string(e1, NULL)) == MPI_ERR_ARG, "a NULL string was taken");
    char s[MPI_MAX_ERROR_STRING];
    int len;
    CHECK(MPI_Error_string(MPI_ERR_ARG, s, &len) == MPI_SUCCESS &&
              strncmp(s, "MPI_ERR_ARG", 11) == 0,
          "MPI_ERR_ARG's string is \"%s\"", s);

    /* Every rank made the same codes in the same order: the same values. */
    int mine[2] = {c1, last_used()}, lo[2], hi[2];
    MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo[0] == hi[0] && lo[1] == hi[1], "the ranks' codes differ");
}

/* What the program's handler saw. */
static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void record(MPI_Comm *comm, int *code, ...)
{
    ++handler_calls;
    handler_code = *code;
    handler_comm = *comm;
}

static void handlers(int size)
{
    int cl, code;
    MPI_Add_error_class(&cl);
    MPI_Add_error_code(cl, &code);
    MPI_Add_error_string(code, "raised by the program");

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK(MPI_Comm_create_errhandler(record, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL,
          "MPI_Comm_create_errhandler");
    CHECK(MPI_Comm_set_errhandler(dup, eh) == MPI_SUCCESS, "MPI_Comm_set_errhandler");
    /* The communicator keeps the handler: the program's handle may go at once. */
    CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL,
          "MPI_Errhandler_free");

    /* The program's code reaches its handler, and the call returns MPI_SUCCESS. */
    int rc = MPI_Comm_call_errhandler(dup, code);
    CHECK(rc == MPI_SUCCESS && handler_calls == 1 && handler_code == code && handler_comm == dup,
          "MPI_Comm_call_errhandler(user code %d): rc %d, %d calls, code %d", code, rc,
          handler_calls, handler_code);
    rc = MPI_Comm_call_errhandler(dup, cl);
    CHECK(rc == MPI_SUCCESS && handler_calls == 2 && handler_code == cl,
          "MPI_Comm_call_errhandler(user class): rc %d, %d calls, code %d", rc, handler_calls,
          handler_code);
    /* The library's errors too: the handler runs, and the call returns the class. */
    int v = 0;
    rc = MPI_Send(&v, 1, MPI_INT, size, 0, dup);
    CHECK(rc == MPI_ERR_RANK && handler_calls == 3 && handler_code == MPI_ERR_RANK,
          "MPI_Send to rank %d: rc %d, %d calls, code %d", size, rc, handler_calls, handler_code);

    /* MPI_Comm_get_errhandler gives a new reference to the same handler. */
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    CHECK(MPI_Comm_get_errhandler(dup, &got) == MPI_SUCCESS && got != MPI_ERRHANDLER_NULL,
          "MPI_Comm_get_errhandler");
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2); /* inherits the handler */
    rc = MPI_Comm_call_errhandler(dup2, code);
    CHECK(rc == MPI_SUCCESS && handler_calls == 4 && handler_comm == dup2,
          "the duplicate's handler: %d calls", handler_calls);
    CHECK(MPI_Errhandler_free(&got) == MPI_SUCCESS && got == MPI_ERRHANDLER_NULL,
          "MPI_Errhandler_free of MPI_Comm_get_errhandler's");
    MPI_Comm_free(&dup);
    rc = MPI_Comm_call_errhandler(dup2, code);
    CHECK(rc == MPI_SUCCESS && handler_calls == 5,
          "the handler after its first communicator went: %d calls", handler_calls);
    MPI_Comm_free(&dup2);

    /* Errors of the calls themselves. */
    CHECK(cls(MPI_Errhandler_free(&got)) == MPI_ERR_ARG, "MPI_Errhandler_free of the null handle");
    CHECK(cls(MPI_Errhandler_free(NULL)) == MPI_ERR_ARG, "MPI_Errhandler_free(NULL)");
    CHECK(cls(MPI_Comm_call_errhandler(MPI_COMM_NULL, code)) == MPI_ERR_COMM,
          "MPI_Comm_call_errhandler on MPI_COMM_NULL");
    /* MPI_ERRORS_RETURN's: nothing runs, and the call succeeds. */
    CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code) == MPI_SUCCESS && handler_calls == 5,
          "MPI_Comm_call_errhandler with MPI_ERRORS_RETURN");
    /* A predefined handler got from a communicator may be freed (it stays). */
    MPI_Errhandler world_eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh);
    CHECK(world_eh == MPI_ERRORS_RETURN, "MPI_COMM_WORLD's handler is not MPI_ERRORS_RETURN");
    CHECK(MPI_Errhandler_free(&world_eh) == MPI_SUCCESS && world_eh == MPI_ERRHANDLER_NULL,
          "MPI_Errhandler_free of MPI_ERRORS_RETURN got from a communicator");
    CHECK(cls(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK,
          "MPI_ERRORS_RETURN after freeing a handle of it");
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    user_codes();
    handlers(size);

    return finish("user error classes, codes and strings, MPI_LASTUSEDCODE, and error handlers "
                  "called by the program and the library right");
}
