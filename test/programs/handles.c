/* handles: the conversions of handles to Fortran integers and back (MPI-3.1 17.2.4) for every
 * kind: the fixed values of the predefined and null handles, round trips of objects the program
 * made, an object's integer naming the null handle once the object is freed, integers that name
 * nothing (out of range, negative) giving the null handle, and MPI_Status_c2f / _f2c. Run at any
 * number of ranks; rank 0 prints the verdict; exit status 0 when right. */
#include <mpi.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM "handles"
#include "test_program.h"

/* Integers that name no object of any kind. */
static const MPI_Fint nothing[] = {-1, -1000, 100000, INT_MAX, INT_MIN};
#define NOTHING (int)(sizeof nothing / sizeof nothing[0])

static void predefined(void)
{
    CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == 0 && MPI_Comm_c2f(MPI_COMM_SELF) == 1 &&
              MPI_Comm_c2f(MPI_COMM_NULL) == 2,
          "communicators: %d %d %d", MPI_Comm_c2f(MPI_COMM_WORLD), MPI_Comm_c2f(MPI_COMM_SELF),
          MPI_Comm_c2f(MPI_COMM_NULL));
    CHECK(MPI_Comm_f2c(0) == MPI_COMM_WORLD && MPI_Comm_f2c(1) == MPI_COMM_SELF &&
              MPI_Comm_f2c(2) == MPI_COMM_NULL,
          "communicators back");

    const MPI_Datatype types[] = {MPI_DATATYPE_NULL, MPI_CHAR,     MPI_INT,      MPI_DOUBLE,
                                  MPI_BYTE,          MPI_2INTEGER, MPI_LONG_LONG};
    const MPI_Fint type_f[] = {0, 1, 7, 14, 4, 46, 11};
    for (int i = 0; i < 7; ++i) {
        CHECK(MPI_Type_c2f(types[i]) == type_f[i], "datatype %d: %d, expected %d", i,
              MPI_Type_c2f(types[i]), type_f[i]);
        CHECK(MPI_Type_f2c(type_f[i]) == types[i], "datatype %d back", i);
    }
    CHECK(MPI_Group_c2f(MPI_GROUP_NULL) == 0 && MPI_Group_c2f(MPI_GROUP_EMPTY) == 1 &&
              MPI_Group_f2c(0) == MPI_GROUP_NULL && MPI_Group_f2c(1) == MPI_GROUP_EMPTY,
          "groups");
    CHECK(MPI_Request_c2f(MPI_REQUEST_NULL) == 0 && MPI_Request_f2c(0) == MPI_REQUEST_NULL,
          "requests");
    const MPI_Op ops[] = {MPI_OP_NULL, MPI_MAX, MPI_SUM, MPI_MAXLOC, MPI_NO_OP};
    const MPI_Fint op_f[] = {0, 1, 3, 12, 14};
    for (int i = 0; i < 5; ++i)
        CHECK(MPI_Op_c2f(ops[i]) == op_f[i] && MPI_Op_f2c(op_f[i]) == ops[i],
              "op %d: %d, expected %d", i, MPI_Op_c2f(ops[i]), op_f[i]);
    CHECK(MPI_Info_c2f(MPI_INFO_NULL) == 0 && MPI_Info_c2f(MPI_INFO_ENV) == 1 &&
              MPI_Info_f2c(0) == MPI_INFO_NULL && MPI_Info_f2c(1) == MPI_INFO_ENV,
          "info");
    CHECK(MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL) == 0 &&
              MPI_Errhandler_c2f(MPI_ERRORS_ARE_FATAL) == 1 &&
              MPI_Errhandler_c2f(MPI_ERRORS_RETURN) == 2 &&
              MPI_Errhandler_f2c(0) == MPI_ERRHANDLER_NULL &&
              MPI_Errhandler_f2c(1) == MPI_ERRORS_ARE_FATAL &&
              MPI_Errhandler_f2c(2) == MPI_ERRORS_RETURN,
          "error handlers");
    CHECK(MPI_Message_c2f(MPI_MESSAGE_NULL) == 0 && MPI_Message_c2f(MPI_MESSAGE_NO_PROC) == 1 &&
              MPI_Message_f2c(0) == MPI_MESSAGE_NULL && MPI_Message_f2c(1) == MPI_MESSAGE_NO_PROC,
          "messages");

    for (int i = 0; i < NOTHING; ++i) {
        const MPI_Fint f = nothing[i];
        CHECK(MPI_Comm_f2c(f) == MPI_COMM_NULL && MPI_Type_f2c(f) == MPI_DATATYPE_NULL &&
                  MPI_Group_f2c(f) == MPI_GROUP_NULL && MPI_Request_f2c(f) == MPI_REQUEST_NULL &&
                  MPI_Op_f2c(f) == MPI_OP_NULL && MPI_Info_f2c(f) == MPI_INFO_NULL &&
                  MPI_Errhandler_f2c(f) == MPI_ERRHANDLER_NULL &&
                  MPI_Message_f2c(f) == MPI_MESSAGE_NULL,
              "%d names an object", f);
    }
}

static void record(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static void noop_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)type;
}

/* Objects the program makes: a round trip, the same integer twice, none after the free. */
static void made(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Fint fc = MPI_Comm_c2f(dup);
    CHECK(fc > 2 && MPI_Comm_c2f(dup) == fc && MPI_Comm_f2c(fc) == dup, "communicator: %d", fc);

    MPI_Datatype t;
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Fint ft = MPI_Type_c2f(t); /* before the commit too */
    MPI_Type_commit(&t);
    CHECK(ft > 46 && MPI_Type_c2f(t) == ft && MPI_Type_f2c(ft) == t, "datatype: %d", ft);

    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int zero = 0;
    MPI_Group_incl(world, 1, &zero, &g);
    MPI_Fint fg = MPI_Group_c2f(g);
    CHECK(fg > 1 && MPI_Group_f2c(fg) == g && MPI_Group_f2c(MPI_Group_c2f(world)) == world,
          "group: %d", fg);

    MPI_Op op;
    MPI_Op_create(noop_op, 1, &op);
    MPI_Fint fo = MPI_Op_c2f(op);
    CHECK(fo > 14 && MPI_Op_f2c(fo) == op, "op: %d", fo);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Fint fi = MPI_Info_c2f(info);
    CHECK(fi > 1 && MPI_Info_f2c(fi) == info, "info: %d", fi);

    MPI_Errhandler eh, held;
    MPI_Comm_create_errhandler(record, &eh);
    MPI_Comm_create_errhandler(record, &held);
    MPI_Fint fe = MPI_Errhandler_c2f(eh), fh = MPI_Errhandler_c2f(held);
    CHECK(fe > 2 && fh > 2 && fe != fh && MPI_Errhandler_f2c(fe) == eh &&
              MPI_Errhandler_f2c(fh) == held,
          "error handlers: %d %d", fe, fh);

    /* Different objects, different integers (each kind has its own numbers). */
    MPI_Comm dup2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
    MPI_Fint fc2 = MPI_Comm_c2f(dup2);
    CHECK(fc2 != fc && MPI_Comm_f2c(fc2) == dup2, "a second communicator: %d", fc2);

    /* Freed: the integer names the null handle. The held handler lives while dup2 has it. */
    MPI_Comm_set_errhandler(dup2, held);
    MPI_Errhandler_free(&held);
    CHECK(MPI_Errhandler_f2c(fh) != MPI_ERRHANDLER_NULL, "a handler a communicator holds");
    MPI_Comm_free(&dup);
    MPI_Type_free(&t);
    MPI_Group_free(&g);
    MPI_Op_free(&op);
    MPI_Info_free(&info);
    MPI_Errhandler_free(&eh);
    CHECK(MPI_Comm_f2c(fc) == MPI_COMM_NULL, "a freed communicator");
    CHECK(MPI_Type_f2c(ft) == MPI_DATATYPE_NULL, "a freed datatype");
    CHECK(MPI_Group_f2c(fg) == MPI_GROUP_NULL, "a freed group");
    CHECK(MPI_Op_f2c(fo) == MPI_OP_NULL, "a freed op");
    CHECK(MPI_Info_f2c(fi) == MPI_INFO_NULL, "a freed info");
    CHECK(MPI_Errhandler_f2c(fe) == MPI_ERRHANDLER_NULL, "a freed error handler");
    MPI_Comm_free(&dup2);
    CHECK(MPI_Comm_f2c(fc2) == MPI_COMM_NULL, "a freed communicator");
    CHECK(MPI_Errhandler_f2c(fh) == MPI_ERRHANDLER_NULL, "a handler its communicator let go");
    MPI_Group_free(&world);

    /* A type a derived one is built on lives on after its free, as a handle it is gone only
     * when its last user is. */
    MPI_Datatype base, outer;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &base);
    MPI_Type_contiguous(2, base, &outer);
    MPI_Fint fb = MPI_Type_c2f(base), fouter = MPI_Type_c2f(outer);
    MPI_Type_free(&base);
    MPI_Type_free(&outer);
    CHECK(MPI_Type_f2c(fb) == MPI_DATATYPE_NULL && MPI_Type_f2c(fouter) == MPI_DATATYPE_NULL,
          "freed derived types");

    /* Many objects made, converted and freed: every old integer names nothing or a live type. */
    MPI_Fint old[200];
    for (int i = 0; i < 200; ++i) {
        MPI_Datatype x;
        MPI_Type_contiguous(i + 1, MPI_CHAR, &x);
        old[i] = MPI_Type_c2f(x);
        CHECK(MPI_Type_f2c(old[i]) == x, "type %d: %d", i, old[i]);
        MPI_Type_free(&x);
        CHECK(MPI_Type_f2c(old[i]) == MPI_DATATYPE_NULL, "freed type %d", i);
    }
}

/* Requests and messages: their integers go when the calls that end them do. */
static void requests(void)
{
    int out = 42, in = -1;
    MPI_Request r;
    MPI_Irecv(&in, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &r);
    MPI_Fint fr = MPI_Request_c2f(r);
    CHECK(fr > 0 && MPI_Request_f2c(fr) == r && MPI_Request_c2f(r) == fr, "request: %d", fr);
    MPI_Send(&out, 1, MPI_INT, rank, 5, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(in == 42 && MPI_Request_f2c(fr) == MPI_REQUEST_NULL, "a completed request");

    MPI_Send_init(&out, 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &r);
    fr = MPI_Request_c2f(r);
    MPI_Start(&r);
    MPI_Recv(&in, 1, MPI_INT, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(MPI_Request_f2c(fr) == r, "a persistent request that completed");
    MPI_Request_free(&r);
    CHECK(MPI_Request_f2c(fr) == MPI_REQUEST_NULL, "a freed persistent request");

    MPI_Message m;
    MPI_Request sr;
    MPI_Isend(&out, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &sr);
    MPI_Mprobe(rank, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
    MPI_Fint fm = MPI_Message_c2f(m);
    CHECK(fm > 1 && MPI_Message_f2c(fm) == m, "message: %d", fm);
    in = -1;
    MPI_Mrecv(&in, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    CHECK(in == 42 && MPI_Message_f2c(fm) == MPI_MESSAGE_NULL, "a received message");
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
}

static void statuses(void)
{
    CHECK(MPI_STATUS_SIZE * sizeof(MPI_Fint) == sizeof(MPI_Status), "MPI_STATUS_SIZE %d",
          MPI_STATUS_SIZE);
    MPI_Status c, back;
    memset(&c, 0, sizeof c);
    c.MPI_SOURCE = 3;
    c.MPI_TAG = 17;
    c.MPI_ERROR = MPI_ERR_TRUNCATE;
    MPI_Status_set_elements(&c, MPI_INT, 5);
    MPI_Status_set_cancelled(&c, 1);
    MPI_Fint f[MPI_STATUS_SIZE];
    CHECK(MPI_Status_c2f(&c, f) == MPI_SUCCESS, "MPI_Status_c2f");
    CHECK(f[0] == 3 && f[1] == 17 && f[2] == MPI_ERR_TRUNCATE, "Fortran status %d %d %d", f[0],
          f[1], f[2]);
    memset(&back, 0xff, sizeof back);
    CHECK(MPI_Status_f2c(f, &back) == MPI_SUCCESS, "MPI_Status_f2c");
    int count = -1, cancelled = -1;
    MPI_Get_count(&back, MPI_INT, &count);
    MPI_Test_cancelled(&back, &cancelled);
    CHECK(back.MPI_SOURCE == 3 && back.MPI_TAG == 17 && back.MPI_ERROR == MPI_ERR_TRUNCATE &&
              count == 5 && cancelled == 1,
          "status back: %d %d %d %d %d", back.MPI_SOURCE, back.MPI_TAG, back.MPI_ERROR, count,
          cancelled);
    /* A received message's status. */
    int out = 1, in;
    MPI_Status st, st2;
    MPI_Sendrecv(&out, 1, MPI_INT, rank, 9, &in, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &st);
    MPI_Status_c2f(&st, f);
    MPI_Status_f2c(f, &st2);
    MPI_Get_count(&st2, MPI_INT, &count);
    CHECK(st2.MPI_SOURCE == rank && st2.MPI_TAG == 9 && count == 1, "a receive's status");

    int rc = MPI_Status_c2f(MPI_STATUS_IGNORE, f), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "MPI_Status_c2f(MPI_STATUS_IGNORE): %d", rc);
    rc = MPI_Status_f2c(f, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "MPI_Status_f2c to MPI_STATUS_IGNORE: %d", rc);
}

int main(int argc, char **argv)
{
    alarm(60);
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    predefined();
    made();
    requests();
    statuses();

    /* The fixed values are the same everywhere; so are the first made ones here. */
    MPI_Fint mine = MPI_Type_c2f(MPI_DOUBLE_INT), lo, hi;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == 34 && hi == 34, "MPI_DOUBLE_INT: %d..%d", lo, hi);

    return finish(
        "handle conversions of every kind, fixed values, null and freed handles, statuses right");
}
