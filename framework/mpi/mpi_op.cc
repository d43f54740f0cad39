// MPI's reduction operations: the predefined MPI_Op objects, MPI_Op_create / free /
// commutative and MPI_Reduce_local. The kernels are in framework/datatype/op_reduce.cc.
#include "mpi_internal.h"

#include <weft/op.h>

using namespace weft::mpi;

extern "C" {

#define WEFT_OP(var, id, mpi_name)                                                                 \
    weft_op var                                                                                    \
    {                                                                                              \
        .builtin = id, .user = nullptr, .commutative = true, .predefined = true, .name = mpi_name, \
        .refs = 1                                                                                  \
    }

WEFT_OP(weft_mpi_op_max, op_max, "MPI_MAX");
WEFT_OP(weft_mpi_op_min, op_min, "MPI_MIN");
WEFT_OP(weft_mpi_op_sum, op_sum, "MPI_SUM");
WEFT_OP(weft_mpi_op_prod, op_prod, "MPI_PROD");
WEFT_OP(weft_mpi_op_land, op_land, "MPI_LAND");
WEFT_OP(weft_mpi_op_band, op_band, "MPI_BAND");
WEFT_OP(weft_mpi_op_lor, op_lor, "MPI_LOR");
WEFT_OP(weft_mpi_op_bor, op_bor, "MPI_BOR");
WEFT_OP(weft_mpi_op_lxor, op_lxor, "MPI_LXOR");
WEFT_OP(weft_mpi_op_bxor, op_bxor, "MPI_BXOR");
WEFT_OP(weft_mpi_op_minloc, op_minloc, "MPI_MINLOC");
WEFT_OP(weft_mpi_op_maxloc, op_maxloc, "MPI_MAXLOC");
WEFT_OP(weft_mpi_op_replace, op_replace, "MPI_REPLACE");
WEFT_OP(weft_mpi_op_no_op, op_no_op, "MPI_NO_OP");

#undef WEFT_OP

WEFT_PROFILED(MPI_Op_create)
int PMPI_Op_create(MPI_User_function *function, int commute, MPI_Op *op)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Op_create"); rc != MPI_SUCCESS)
        return rc;
    if (!function || !op)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Op_create", "function or op is NULL");
    auto *o = new weft_op;
    o->user = reinterpret_cast<weft_user_function *>(function);
    o->commutative = commute != 0;
    *op = o;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Op_free)
int PMPI_Op_free(MPI_Op *op)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Op_free"); rc != MPI_SUCCESS)
        return rc;
    if (!op || !valid_op(*op))
        return raise(nullptr, MPI_ERR_OP, "MPI_Op_free", "invalid op");
    if ((*op)->predefined)
        return raise(nullptr, MPI_ERR_OP, "MPI_Op_free", "a predefined op cannot be freed");
    // A pending non-blocking reduction holds a reference: the op goes when it completes.
    weft_op_release(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Op_commutative)
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Op_commutative"); rc != MPI_SUCCESS)
        return rc;
    if (!valid_op(op))
        return raise(nullptr, MPI_ERR_OP, "MPI_Op_commutative", "invalid op");
    if (!commute)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Op_commutative", "commute is NULL");
    *commute = op->commutative;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Reduce_local"); rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return raise(nullptr, MPI_ERR_COUNT, "MPI_Reduce_local", "negative count");
    if (!valid_datatype(datatype))
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Reduce_local", "invalid datatype");
    if (!valid_op(op) || !op_valid_for(op, datatype))
        return raise(nullptr, MPI_ERR_OP, "MPI_Reduce_local",
                     std::string(valid_op(op) ? op->name : "MPI_OP_NULL") + " is not defined for " +
                         datatype->name);
    if (count > 0 && (!inbuf || !inoutbuf))
        return raise(nullptr, MPI_ERR_BUFFER, "MPI_Reduce_local", "NULL buffer");
    op_reduce(op, inbuf, inoutbuf, size_t(count), datatype);
    return MPI_SUCCESS;
}

} // extern "C"
