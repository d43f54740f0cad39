// Handle conversions between C and Fortran (MPI-3.1 17.2.4): MPI_<Kind>_c2f / _f2c through the
// tables of mpi_handles.h, and MPI_Status_c2f / _f2c.
//
// The fixed indices, the same in every process (what Fortran's constants will be):
//   communicators  MPI_COMM_WORLD 0, MPI_COMM_SELF 1, MPI_COMM_NULL 2
//   datatypes      MPI_DATATYPE_NULL 0, then the predefined types from 1 in mpi.h's order
//                  (MPI_CHAR 1, ..., MPI_2INTEGER 46)
//   groups         MPI_GROUP_NULL 0, MPI_GROUP_EMPTY 1
//   requests       MPI_REQUEST_NULL 0
//   ops            MPI_OP_NULL 0, MPI_MAX 1, ..., MPI_NO_OP 14 (mpi.h's order)
//   info           MPI_INFO_NULL 0, MPI_INFO_ENV 1
//   errhandlers    MPI_ERRHANDLER_NULL 0, MPI_ERRORS_ARE_FATAL 1, MPI_ERRORS_RETURN 2
//   messages       MPI_MESSAGE_NULL 0, MPI_MESSAGE_NO_PROC 1
// The conversions return no error (as the standard has them): a handle that is not valid
// converts to the null handle's index, and an index that names no live object to the null
// handle.
#include "mpi_internal.h"

#include <cstring>
#include <mutex>

namespace {

using weft::mpi::HandleKind;

constexpr MPI_Fint comm_null_index = 2;

void fix_all(HandleKind kind, std::initializer_list<const void *> objects)
{
    int i = 0;
    for (const void *o : objects)
        weft::mpi::handle_fix(kind, i++, o);
}

void fix_predefined()
{
    fix_all(HandleKind::comm, {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL});
    fix_all(HandleKind::datatype, {MPI_DATATYPE_NULL,
                                   MPI_CHAR,
                                   MPI_SIGNED_CHAR,
                                   MPI_UNSIGNED_CHAR,
                                   MPI_BYTE,
                                   MPI_SHORT,
                                   MPI_UNSIGNED_SHORT,
                                   MPI_INT,
                                   MPI_UNSIGNED,
                                   MPI_LONG,
                                   MPI_UNSIGNED_LONG,
                                   MPI_LONG_LONG_INT,
                                   MPI_UNSIGNED_LONG_LONG,
                                   MPI_FLOAT,
                                   MPI_DOUBLE,
                                   MPI_LONG_DOUBLE,
                                   MPI_WCHAR,
                                   MPI_C_BOOL,
                                   MPI_INT8_T,
                                   MPI_INT16_T,
                                   MPI_INT32_T,
                                   MPI_INT64_T,
                                   MPI_UINT8_T,
                                   MPI_UINT16_T,
                                   MPI_UINT32_T,
                                   MPI_UINT64_T,
                                   MPI_AINT,
                                   MPI_OFFSET,
                                   MPI_COUNT,
                                   MPI_C_FLOAT_COMPLEX,
                                   MPI_C_DOUBLE_COMPLEX,
                                   MPI_C_LONG_DOUBLE_COMPLEX,
                                   MPI_PACKED,
                                   MPI_FLOAT_INT,
                                   MPI_DOUBLE_INT,
                                   MPI_LONG_INT,
                                   MPI_2INT,
                                   MPI_SHORT_INT,
                                   MPI_LONG_DOUBLE_INT,
                                   MPI_INTEGER,
                                   MPI_REAL,
                                   MPI_DOUBLE_PRECISION,
                                   MPI_LOGICAL,
                                   MPI_CHARACTER,
                                   MPI_COMPLEX,
                                   MPI_DOUBLE_COMPLEX,
                                   MPI_2INTEGER});
    fix_all(HandleKind::group, {MPI_GROUP_NULL, MPI_GROUP_EMPTY});
    fix_all(HandleKind::request, {MPI_REQUEST_NULL});
    fix_all(HandleKind::op,
            {MPI_OP_NULL, MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR,
             MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP});
    fix_all(HandleKind::info, {MPI_INFO_NULL, MPI_INFO_ENV});
    fix_all(HandleKind::errhandler, {MPI_ERRHANDLER_NULL, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN});
    fix_all(HandleKind::message, {MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC});
}

void ensure_fixed()
{
    static std::once_flag once;
    std::call_once(once, fix_predefined);
}

// The index of a handle that passed its kind's check; the null handle's (null_index) else.
MPI_Fint to_f(HandleKind kind, const void *handle, bool valid, MPI_Fint null_index = 0)
{
    ensure_fixed();
    if (!handle || !valid)
        return null_index;
    const int i = weft::mpi::handle_index(kind, handle);
    return i < 0 ? null_index : MPI_Fint(i);
}

template <class T> T *to_c(HandleKind kind, MPI_Fint index)
{
    ensure_fixed();
    return static_cast<T *>(weft::mpi::handle_object(kind, int(index)));
}

// The status conversions' argument errors: raised while MPI runs, returned otherwise.
int status_error(const char *fn, const char *what)
{
    if (!weft::mpi::initialized() || weft::mpi::finalized())
        return MPI_ERR_ARG;
    return weft::mpi::raise(nullptr, MPI_ERR_ARG, fn, what);
}

} // namespace

static_assert(sizeof(MPI_Status) == MPI_STATUS_SIZE * sizeof(MPI_Fint),
              "MPI_STATUS_SIZE must be the size of MPI_Status in MPI_Fint");

extern "C" {

WEFT_PROFILED(MPI_Comm_c2f)
MPI_Fint PMPI_Comm_c2f(MPI_Comm comm)
{
    WEFT_API_RETURN(to_f(HandleKind::comm, comm, weft::mpi::valid_comm(comm), comm_null_index));
}

WEFT_PROFILED(MPI_Comm_f2c)
MPI_Comm PMPI_Comm_f2c(MPI_Fint comm)
{
    WEFT_API_GUARD;
    // A communicator keeps its index until it is destroyed; a freed one that still lives (its
    // non-blocking operations hold it) is no longer a valid handle.
    MPI_Comm c = to_c<weft_comm>(HandleKind::comm, comm);
    return weft::mpi::valid_comm(c) ? c : MPI_COMM_NULL;
}

WEFT_PROFILED(MPI_Type_c2f)
MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype)
{
    WEFT_API_RETURN(to_f(HandleKind::datatype, datatype, weft::mpi::live_datatype(datatype)));
}

WEFT_PROFILED(MPI_Type_f2c)
MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype)
{
    WEFT_API_GUARD;
    MPI_Datatype t = to_c<weft_datatype>(HandleKind::datatype, datatype);
    return weft::mpi::live_datatype(t) ? t : MPI_DATATYPE_NULL;
}

WEFT_PROFILED(MPI_Group_c2f)
MPI_Fint PMPI_Group_c2f(MPI_Group group) { WEFT_API_RETURN(to_f(HandleKind::group, group, true)); }

WEFT_PROFILED(MPI_Group_f2c)
MPI_Group PMPI_Group_f2c(MPI_Fint group)
{
    WEFT_API_RETURN(to_c<weft_group>(HandleKind::group, group));
}

WEFT_PROFILED(MPI_Request_c2f)
MPI_Fint PMPI_Request_c2f(MPI_Request request)
{
    WEFT_API_RETURN(to_f(HandleKind::request, request, true));
}

WEFT_PROFILED(MPI_Request_f2c)
MPI_Request PMPI_Request_f2c(MPI_Fint request)
{
    WEFT_API_RETURN(to_c<weft_request_t>(HandleKind::request, request));
}

WEFT_PROFILED(MPI_Op_c2f)
MPI_Fint PMPI_Op_c2f(MPI_Op op)
{
    WEFT_API_RETURN(to_f(HandleKind::op, op, weft::mpi::valid_op(op)));
}

WEFT_PROFILED(MPI_Op_f2c)
MPI_Op PMPI_Op_f2c(MPI_Fint op)
{
    WEFT_API_GUARD;
    MPI_Op o = to_c<weft_op>(HandleKind::op, op);
    return weft::mpi::valid_op(o) ? o : MPI_OP_NULL;
}

WEFT_PROFILED(MPI_Info_c2f)
MPI_Fint PMPI_Info_c2f(MPI_Info info) { WEFT_API_RETURN(to_f(HandleKind::info, info, true)); }

WEFT_PROFILED(MPI_Info_f2c)
MPI_Info PMPI_Info_f2c(MPI_Fint info) { WEFT_API_RETURN(to_c<weft_info>(HandleKind::info, info)); }

WEFT_PROFILED(MPI_Errhandler_c2f)
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
    WEFT_API_RETURN(to_f(HandleKind::errhandler, errhandler, true));
}

WEFT_PROFILED(MPI_Errhandler_f2c)
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler)
{
    WEFT_API_RETURN(to_c<weft_errhandler>(HandleKind::errhandler, errhandler));
}

WEFT_PROFILED(MPI_Message_c2f)
MPI_Fint PMPI_Message_c2f(MPI_Message message)
{
    WEFT_API_RETURN(to_f(HandleKind::message, message, true));
}

WEFT_PROFILED(MPI_Message_f2c)
MPI_Message PMPI_Message_f2c(MPI_Fint message)
{
    WEFT_API_RETURN(to_c<weft_message_t>(HandleKind::message, message));
}

// The Fortran status is MPI_Status's memory as MPI_Fint: MPI_SOURCE, MPI_TAG and MPI_ERROR are
// its first three elements (Fortran's MPI_SOURCE 1, MPI_TAG 2, MPI_ERROR 3), the rest the
// library's.
WEFT_PROFILED(MPI_Status_c2f)
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    WEFT_API_GUARD;
    if (!c_status || !f_status)
        return status_error("MPI_Status_c2f",
                            !c_status ? "c_status is NULL (MPI_STATUS_IGNORE is not a status)"
                                      : "f_status is NULL");
    std::memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Status_f2c)
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    WEFT_API_GUARD;
    if (!c_status || !f_status)
        return status_error("MPI_Status_f2c", !f_status ? "f_status is NULL"
                                                        : "c_status is NULL (MPI_STATUS_IGNORE)");
    std::memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}

} // extern "C"
