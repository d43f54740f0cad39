// The datatype functions that take or give MPI_Count (the _x forms), addresses, the status
// setters of layered libraries, MPI_Type_match_size and the Fortran 90 parameterized types.
#include "mpi_internal.h"

#include <cfloat>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

using namespace weft::mpi;

namespace {

// A query's common checks: MPI_SUCCESS, or the error raised.
int check_type(const char *fn, MPI_Datatype t, const void *out)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!live_datatype(t))
        return raise(nullptr, MPI_ERR_TYPE, fn, "invalid datatype");
    if (!out)
        return raise(nullptr, MPI_ERR_ARG, fn, "an output argument is NULL");
    return MPI_SUCCESS;
}

int set_elements(const char *fn, MPI_Status *status, MPI_Datatype type, MPI_Count count)
{
    if (int rc = check_type(fn, type, status); rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return raise(nullptr, MPI_ERR_COUNT, fn, "negative count " + std::to_string(count));
    // The bytes that many basic elements of the type take: MPI_Get_elements gives count back,
    // MPI_Get_count the whole elements of the type (or MPI_UNDEFINED).
    status->_ucount = weft::dt::bytes_of_elements(layout_of(type), size_t(count));
    return MPI_SUCCESS;
}

// The Fortran 90 types are predefined objects, one per (combiner, p, r), made on first use;
// each has the layout and the arithmetic of the type it stands for.
MPI_Datatype f90_type(int combiner, int p, int r, MPI_Datatype like)
{
    static std::mutex lock;
    static std::map<std::pair<int, std::pair<int, int>>, std::unique_ptr<weft_datatype>> made;
    std::lock_guard g(lock);
    auto &slot = made[{combiner, {p, r}}];
    if (!slot) {
        slot = std::make_unique<weft_datatype>(*like);
        slot->combiner = combiner;
        slot->ints =
            combiner == MPI_COMBINER_F90_INTEGER ? std::vector<int>{r} : std::vector<int>{p, r};
    }
    return slot.get();
}

// SELECTED_REAL_KIND(p, r) for real or complex: IEEE single, double, then the x87 extended
// type (gfortran's REAL(10)); MPI_UNDEFINED leaves p or r free.
int f90_real_or_complex(const char *fn, bool complex, int p, int r, MPI_Datatype *newtype)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!newtype)
        return raise(nullptr, MPI_ERR_ARG, fn, "newtype is NULL");
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return raise(nullptr, MPI_ERR_ARG, fn, "p and r are both MPI_UNDEFINED");
    const int pp = p == MPI_UNDEFINED ? 0 : p, rr = r == MPI_UNDEFINED ? 0 : r;
    MPI_Datatype like = MPI_DATATYPE_NULL;
    if (pp < 0 || rr < 0)
        like = MPI_DATATYPE_NULL;
    else if (pp <= 6 && rr <= 37)
        like = complex ? MPI_COMPLEX : MPI_REAL;
    else if (pp <= 15 && rr <= 307)
        like = complex ? MPI_DOUBLE_COMPLEX : MPI_DOUBLE_PRECISION;
    else if (LDBL_MANT_DIG >= 64 && pp <= 18 && rr <= 4931)
        like = complex ? MPI_C_LONG_DOUBLE_COMPLEX : MPI_LONG_DOUBLE;
    if (!like)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "no type has precision " + std::to_string(p) + " and range " +
                         std::to_string(r));
    *newtype = f90_type(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r, like);
    return MPI_SUCCESS;
}

// External32's checks: MPI_SUCCESS, or the error raised.
int check_external(const char *fn, const char *datarep, int count, MPI_Datatype type)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!datarep || std::strcmp(datarep, "external32") != 0)
        return raise(nullptr, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                     std::string("data representation '") + (datarep ? datarep : "(null)") +
                         "' (only \"external32\" is defined)");
    if (count < 0)
        return raise(nullptr, MPI_ERR_COUNT, fn, "negative count " + std::to_string(count));
    if (!valid_datatype(type))
        return raise(nullptr, MPI_ERR_TYPE, fn, datatype_problem(type));
    return MPI_SUCCESS;
}

int long_double_error(const char *fn)
{
    return raise(nullptr, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                 "this host's long double has no external32 conversion");
}

} // namespace

extern "C" {

WEFT_PROFILED(MPI_Pack_external_size)
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Pack_external_size";
    if (int rc = check_external(fn, datarep, incount, datatype); rc != MPI_SUCCESS)
        return rc;
    if (!size)
        return raise(nullptr, MPI_ERR_ARG, fn, "size is NULL");
    *size = MPI_Aint(size_t(incount) * weft::dt::external32_size(layout_of(datatype)));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Pack_external)
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Pack_external";
    if (int rc = check_external(fn, datarep, incount, datatype); rc != MPI_SUCCESS)
        return rc;
    if (!position || *position < 0 || outsize < 0)
        return raise(nullptr, MPI_ERR_ARG, fn, "position is NULL, or it or outsize is negative");
    const weft::dt::Layout &l = layout_of(datatype);
    const size_t ext = size_t(incount) * weft::dt::external32_size(l);
    if (*position > outsize || ext > size_t(outsize - *position))
        return raise(nullptr, MPI_ERR_TRUNCATE, fn,
                     "outbuf has " + std::to_string(outsize - *position) + " bytes left, " +
                         std::to_string(ext) + " needed");
    // Packed native bytes first (the layout's order), then each element converted.
    std::vector<unsigned char> native(size_t(incount) * l.size);
    weft::dt::pack(l, inbuf, size_t(incount), 0, native.data(), native.size());
    if (!weft::dt::to_external32(l, size_t(incount), native.data(),
                                 static_cast<unsigned char *>(outbuf) + *position))
        return long_double_error(fn);
    *position += MPI_Aint(ext);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Unpack_external)
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Unpack_external";
    if (int rc = check_external(fn, datarep, outcount, datatype); rc != MPI_SUCCESS)
        return rc;
    if (!position || *position < 0 || insize < 0)
        return raise(nullptr, MPI_ERR_ARG, fn, "position is NULL, or it or insize is negative");
    const weft::dt::Layout &l = layout_of(datatype);
    const size_t ext = size_t(outcount) * weft::dt::external32_size(l);
    if (*position > insize || ext > size_t(insize - *position))
        return raise(nullptr, MPI_ERR_TRUNCATE, fn,
                     "inbuf has " + std::to_string(insize - *position) + " bytes left, " +
                         std::to_string(ext) + " needed");
    std::vector<unsigned char> native(size_t(outcount) * l.size);
    if (!weft::dt::from_external32(l, size_t(outcount),
                                   static_cast<const unsigned char *>(inbuf) + *position,
                                   native.data()))
        return long_double_error(fn);
    weft::dt::unpack(l, outbuf, size_t(outcount), 0, native.data(), native.size());
    *position += MPI_Aint(ext);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    WEFT_API_GUARD;
    if (!address)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
    *address = reinterpret_cast<MPI_Aint>(location);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    WEFT_API_GUARD;
    // As char pointer arithmetic would, without overflow being undefined.
    return MPI_Aint(uintptr_t(base) + uintptr_t(disp));
}

WEFT_PROFILED(MPI_Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    WEFT_API_RETURN(MPI_Aint(uintptr_t(addr1) - uintptr_t(addr2)));
}

WEFT_PROFILED(MPI_Type_size_x)
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    WEFT_API_GUARD;
    if (int rc = check_type("MPI_Type_size_x", datatype, size); rc != MPI_SUCCESS)
        return rc;
    *size = MPI_Count(datatype->size);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_get_extent_x)
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    WEFT_API_GUARD;
    if (int rc = check_type("MPI_Type_get_extent_x", datatype, lb && extent ? lb : nullptr);
        rc != MPI_SUCCESS)
        return rc;
    const weft::dt::Layout &l = layout_of(datatype);
    *lb = l.lb;
    *extent = l.extent();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_get_true_extent_x)
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    WEFT_API_GUARD;
    if (int rc = check_type("MPI_Type_get_true_extent_x", datatype,
                            true_lb && true_extent ? true_lb : nullptr);
        rc != MPI_SUCCESS)
        return rc;
    const weft::dt::Layout &l = layout_of(datatype);
    *true_lb = l.true_lb;
    *true_extent = l.true_extent();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Get_elements_x)
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    WEFT_API_GUARD;
    if (!live_datatype(datatype))
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Get_elements_x", "invalid datatype");
    if (!status || !count)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Get_elements_x", "status or count is NULL");
    const long long n = weft::dt::elements_in(layout_of(datatype), status->_ucount);
    *count = n < 0 ? MPI_UNDEFINED : MPI_Count(n);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Status_set_elements)
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    WEFT_API_RETURN(set_elements("MPI_Status_set_elements", status, datatype, count));
}

WEFT_PROFILED(MPI_Status_set_elements_x)
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    WEFT_API_RETURN(set_elements("MPI_Status_set_elements_x", status, datatype, count));
}

WEFT_PROFILED(MPI_Status_set_cancelled)
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    WEFT_API_GUARD;
    if (!status)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL");
    status->_cancelled = flag != 0;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_match_size)
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_match_size";
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!datatype)
        return raise(nullptr, MPI_ERR_ARG, fn, "datatype is NULL");
    // The Fortran types where there is one of that size, else C's (as a Fortran compiler lays
    // out INTEGER*1, REAL*16 and so on).
    MPI_Datatype t = MPI_DATATYPE_NULL;
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        t = size == 1   ? MPI_INT8_T
            : size == 2 ? MPI_INT16_T
            : size == 4 ? MPI_INTEGER
            : size == 8 ? MPI_INT64_T
                        : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_REAL:
        t = size == 4                          ? MPI_REAL
            : size == 8                        ? MPI_DOUBLE_PRECISION
            : size == int(sizeof(long double)) ? MPI_LONG_DOUBLE
                                               : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_COMPLEX:
        t = size == 8                              ? MPI_COMPLEX
            : size == 16                           ? MPI_DOUBLE_COMPLEX
            : size == int(2 * sizeof(long double)) ? MPI_C_LONG_DOUBLE_COMPLEX
                                                   : MPI_DATATYPE_NULL;
        break;
    default:
        return raise(nullptr, MPI_ERR_ARG, fn, "unknown type class " + std::to_string(typeclass));
    }
    if (!t)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "no type of that class has " + std::to_string(size) + " bytes");
    *datatype = t;
    return MPI_SUCCESS;
}

// SELECTED_INT_KIND(r): the smallest integer holding every value of r decimal digits.
WEFT_PROFILED(MPI_Type_create_f90_integer)
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_create_f90_integer";
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!newtype)
        return raise(nullptr, MPI_ERR_ARG, fn, "newtype is NULL");
    MPI_Datatype like = r < 0     ? MPI_DATATYPE_NULL
                        : r <= 2  ? MPI_INT8_T
                        : r <= 4  ? MPI_INT16_T
                        : r <= 9  ? MPI_INTEGER
                        : r <= 18 ? MPI_INT64_T
                                  : MPI_DATATYPE_NULL;
    if (!like)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "no integer type has a decimal range of " + std::to_string(r));
    *newtype = f90_type(MPI_COMBINER_F90_INTEGER, 0, r, like);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_create_f90_real)
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    WEFT_API_RETURN(f90_real_or_complex("MPI_Type_create_f90_real", false, p, r, newtype));
}

WEFT_PROFILED(MPI_Type_create_f90_complex)
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    WEFT_API_RETURN(f90_real_or_complex("MPI_Type_create_f90_complex", true, p, r, newtype));
}

} // extern "C"
