// The objects behind mpi.h's predefined handles, and the handle checks that
// every MPI function shares.
#include "mpi_internal.h"

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <type_traits>

namespace {

// The layouts of the pair types (MPI_FLOAT_INT, ...) are those of these
// structs, padding included: MINLOC and MAXLOC read them as C does.
template <class T> struct value_int {
    T value;
    int index;
};

// The kernel element of a C type (by size and signedness: long is i64 here, as int64_t is).
template <class T> constexpr weft::mpi::Elem elem_of()
{
    using weft::mpi::Elem;
    if constexpr (std::is_same_v<T, bool>)
        return Elem::boolean;
    else if constexpr (std::is_integral_v<T>) {
        constexpr bool s = std::is_signed_v<T>;
        switch (sizeof(T)) {
        case 1: return s ? Elem::i8 : Elem::u8;
        case 2: return s ? Elem::i16 : Elem::u16;
        case 4: return s ? Elem::i32 : Elem::u32;
        default: return s ? Elem::i64 : Elem::u64;
        }
    } else if constexpr (std::is_same_v<T, float>)
        return Elem::f32;
    else if constexpr (std::is_same_v<T, double>)
        return Elem::f64;
    else if constexpr (std::is_same_v<T, long double>)
        return Elem::fld;
    else if constexpr (std::is_same_v<T, std::complex<float>>)
        return Elem::c32;
    else if constexpr (std::is_same_v<T, std::complex<double>>)
        return Elem::c64;
    else if constexpr (std::is_same_v<T, std::complex<long double>>)
        return Elem::cld;
    else if constexpr (std::is_same_v<T, value_int<float>>)
        return Elem::p_f32;
    else if constexpr (std::is_same_v<T, value_int<double>>)
        return Elem::p_f64;
    else if constexpr (std::is_same_v<T, value_int<long>>)
        return Elem::p_long;
    else if constexpr (std::is_same_v<T, value_int<int>> || std::is_same_v<T, value_int<int32_t>>)
        return Elem::p_i32;
    else if constexpr (std::is_same_v<T, value_int<short>>)
        return Elem::p_i16;
    else if constexpr (std::is_same_v<T, value_int<long double>>)
        return Elem::p_fld;
    else
        return Elem::none;
}

// The predefined pair type of value_int<T>: two basic elements (the value, then the index) at
// their offsets in the struct, whose size is the extent. Dense when the struct has no padding.
weft_datatype with_ext32(weft_datatype t, weft::dt::Ext32 ext)
{
    t.ext32 = ext;
    return t;
}

// How a pair's value is written in external32.
template <class T> constexpr weft::dt::Ext32 ext32_of()
{
    if constexpr (std::is_same_v<T, long>)
        return weft::dt::ext_long;
    else if constexpr (std::is_same_v<T, long double>)
        return weft::dt::ext_long_double;
    else
        return weft::dt::ext_plain;
}

template <class T> weft_datatype pair_datatype(const char *name)
{
    using P = value_int<T>;
    weft_datatype t = weft::mpi::basic_datatype(sizeof(T) + sizeof(int), name, elem_of<P>(),
                                                weft::mpi::class_pair, uint8_t(alignof(P)));
    auto layout = std::make_shared<weft::dt::Layout>(weft::dt::basic_parts(
        {{ptrdiff_t(offsetof(P, value)), sizeof(T), uint32_t(sizeof(T)), ext32_of<T>()},
         {ptrdiff_t(offsetof(P, index)), sizeof(int), uint32_t(sizeof(int))}},
        ptrdiff_t(sizeof(P))));
    t.dense = layout->contiguous;
    t.layout = std::move(layout);
    return t;
}

} // namespace

// mpi.h declares these with C linkage, so C programs link against them.
extern "C" {

weft_errhandler weft_mpi_errors_are_fatal{.kind = weft_errhandler::Kind::fatal, .predefined = true};
weft_errhandler weft_mpi_errors_return{.kind = weft_errhandler::Kind::ret, .predefined = true};

weft_group weft_mpi_group_empty{.ranks = {}, .my_rank = MPI_UNDEFINED, .predefined = true};

// A communicator starts with its C view (weft/comm.h), which designated initializers cannot
// name: the fields of its own are set here, the view's when MPI starts (setup_predefined).
weft_comm weft_mpi_comm_world = [] {
    weft_comm c;
    c.errhandler = &weft_mpi_errors_are_fatal;
    c.name = "MPI_COMM_WORLD";
    c.predefined = true;
    return c;
}();
weft_comm weft_mpi_comm_self = [] {
    weft_comm c;
    c.errhandler = &weft_mpi_errors_are_fatal;
    c.name = "MPI_COMM_SELF";
    c.predefined = true;
    return c;
}();

weft_message weft_mpi_message_no_proc{.source = MPI_PROC_NULL, .tag = MPI_ANY_TAG, .count = 0};

#define WEFT_DATATYPE(var, type, cls, mpi_name)                                                    \
    weft_datatype var = weft::mpi::basic_datatype(sizeof(type), mpi_name, elem_of<type>(),         \
                                                  weft::mpi::cls, uint8_t(alignof(type)))
// A value-index pair: its data is the value and the index, the padding of the C struct is not
// (MPI's size is their sum: MPI_DOUBLE_INT 12, where the struct is 16).
#define WEFT_PAIR_DATATYPE(var, value, mpi_name) weft_datatype var = pair_datatype<value>(mpi_name)
// One whose external32 form is not its bytes reversed (weft::dt::Ext32).
#define WEFT_EXT_DATATYPE(var, type, cls, mpi_name, ext)                                           \
    weft_datatype var =                                                                            \
        with_ext32(weft::mpi::basic_datatype(sizeof(type), mpi_name, elem_of<type>(),              \
                                             weft::mpi::cls, uint8_t(alignof(type))),              \
                   ext)

WEFT_DATATYPE(weft_mpi_char, char, class_none, "MPI_CHAR");
WEFT_DATATYPE(weft_mpi_signed_char, signed char, class_c_int, "MPI_SIGNED_CHAR");
WEFT_DATATYPE(weft_mpi_unsigned_char, unsigned char, class_c_int, "MPI_UNSIGNED_CHAR");
WEFT_DATATYPE(weft_mpi_byte, unsigned char, class_byte, "MPI_BYTE");
WEFT_DATATYPE(weft_mpi_short, short, class_c_int, "MPI_SHORT");
WEFT_DATATYPE(weft_mpi_unsigned_short, unsigned short, class_c_int, "MPI_UNSIGNED_SHORT");
WEFT_DATATYPE(weft_mpi_int, int, class_c_int, "MPI_INT");
WEFT_DATATYPE(weft_mpi_unsigned, unsigned, class_c_int, "MPI_UNSIGNED");
WEFT_EXT_DATATYPE(weft_mpi_long, long, class_c_int, "MPI_LONG", weft::dt::ext_long);
WEFT_EXT_DATATYPE(weft_mpi_unsigned_long, unsigned long, class_c_int, "MPI_UNSIGNED_LONG",
                  weft::dt::ext_ulong);
WEFT_DATATYPE(weft_mpi_long_long_int, long long, class_c_int, "MPI_LONG_LONG_INT");
WEFT_DATATYPE(weft_mpi_unsigned_long_long, unsigned long long, class_c_int,
              "MPI_UNSIGNED_LONG_LONG");
WEFT_DATATYPE(weft_mpi_float, float, class_float, "MPI_FLOAT");
WEFT_DATATYPE(weft_mpi_double, double, class_float, "MPI_DOUBLE");
WEFT_EXT_DATATYPE(weft_mpi_long_double, long double, class_float, "MPI_LONG_DOUBLE",
                  weft::dt::ext_long_double);
WEFT_EXT_DATATYPE(weft_mpi_wchar, wchar_t, class_none, "MPI_WCHAR", weft::dt::ext_wchar);
WEFT_DATATYPE(weft_mpi_c_bool, bool, class_logical,
              "MPI_C_BOOL"); // C's _Bool: one byte on every ABI we target
WEFT_DATATYPE(weft_mpi_int8_t, int8_t, class_c_int, "MPI_INT8_T");
WEFT_DATATYPE(weft_mpi_int16_t, int16_t, class_c_int, "MPI_INT16_T");
WEFT_DATATYPE(weft_mpi_int32_t, int32_t, class_c_int, "MPI_INT32_T");
WEFT_DATATYPE(weft_mpi_int64_t, int64_t, class_c_int, "MPI_INT64_T");
WEFT_DATATYPE(weft_mpi_uint8_t, uint8_t, class_c_int, "MPI_UINT8_T");
WEFT_DATATYPE(weft_mpi_uint16_t, uint16_t, class_c_int, "MPI_UINT16_T");
WEFT_DATATYPE(weft_mpi_uint32_t, uint32_t, class_c_int, "MPI_UINT32_T");
WEFT_DATATYPE(weft_mpi_uint64_t, uint64_t, class_c_int, "MPI_UINT64_T");
WEFT_DATATYPE(weft_mpi_aint, MPI_Aint, class_c_int, "MPI_AINT");
WEFT_DATATYPE(weft_mpi_offset, MPI_Offset, class_c_int, "MPI_OFFSET");
WEFT_DATATYPE(weft_mpi_count, MPI_Count, class_c_int, "MPI_COUNT");
// std::complex<T> has the layout of C's T _Complex (two T, real first).
WEFT_EXT_DATATYPE(weft_mpi_c_float_complex, std::complex<float>, class_complex,
                  "MPI_C_FLOAT_COMPLEX", weft::dt::ext_complex);
WEFT_EXT_DATATYPE(weft_mpi_c_double_complex, std::complex<double>, class_complex,
                  "MPI_C_DOUBLE_COMPLEX", weft::dt::ext_complex);
WEFT_EXT_DATATYPE(weft_mpi_c_long_double_complex, std::complex<long double>, class_complex,
                  "MPI_C_LONG_DOUBLE_COMPLEX", weft::dt::ext_complex_long_double);
WEFT_DATATYPE(weft_mpi_packed, unsigned char, class_none, "MPI_PACKED");
WEFT_PAIR_DATATYPE(weft_mpi_float_int, float, "MPI_FLOAT_INT");
WEFT_PAIR_DATATYPE(weft_mpi_double_int, double, "MPI_DOUBLE_INT");
WEFT_PAIR_DATATYPE(weft_mpi_long_int, long, "MPI_LONG_INT");
WEFT_PAIR_DATATYPE(weft_mpi_2int, int, "MPI_2INT");
WEFT_PAIR_DATATYPE(weft_mpi_short_int, short, "MPI_SHORT_INT");
WEFT_PAIR_DATATYPE(weft_mpi_long_double_int, long double, "MPI_LONG_DOUBLE_INT");
// Fortran's default kinds, as gfortran and ifort lay them out.
WEFT_DATATYPE(weft_mpi_integer, int32_t, class_f_int, "MPI_INTEGER");
WEFT_DATATYPE(weft_mpi_real, float, class_float, "MPI_REAL");
WEFT_DATATYPE(weft_mpi_double_precision, double, class_float, "MPI_DOUBLE_PRECISION");
WEFT_DATATYPE(weft_mpi_logical, int32_t, class_logical, "MPI_LOGICAL");
WEFT_DATATYPE(weft_mpi_character, char, class_none, "MPI_CHARACTER");
WEFT_EXT_DATATYPE(weft_mpi_complex, std::complex<float>, class_complex, "MPI_COMPLEX",
                  weft::dt::ext_complex);
WEFT_EXT_DATATYPE(weft_mpi_double_complex, std::complex<double>, class_complex,
                  "MPI_DOUBLE_COMPLEX", weft::dt::ext_complex);
WEFT_PAIR_DATATYPE(weft_mpi_2integer, int32_t, "MPI_2INTEGER");

#undef WEFT_DATATYPE
#undef WEFT_PAIR_DATATYPE
#undef WEFT_EXT_DATATYPE

} // extern "C"

static_assert(sizeof(std::complex<float>) == 2 * sizeof(float));
// mpi.h's constants are the ones components see (weft/types.h).
static_assert(MPI_ROOT == WEFT_ROOT && MPI_ANY_SOURCE == WEFT_ANY_SOURCE &&
              MPI_PROC_NULL == WEFT_PROC_NULL && MPI_ANY_TAG == WEFT_ANY_TAG);
static_assert(sizeof(value_int<int32_t>) == 8);

namespace weft::mpi {

void setup_predefined(int world_rank, int world_size)
{
    // group_new finds this process in a group through MPI_COMM_WORLD's rank,
    // so that comes first.
    weft_comm &world = weft_mpi_comm_world;
    world.cid = 0;
    world.rank = world_rank;
    world.size = world_size;
    world.freed = false;
    std::vector<int> all(size_t(std::max(world_size, 0)));
    std::iota(all.begin(), all.end(), 0);
    group_release(world.group);
    world.group = group_new(std::move(all));

    weft_comm &self = weft_mpi_comm_self;
    self.cid = 1;
    self.rank = 0;
    self.size = 1;
    self.freed = false;
    group_release(self.group);
    self.group = group_new({world_rank});
}

} // namespace weft::mpi

using weft::mpi::raise;

WEFT_PROFILED(MPI_Type_size)
extern "C" int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Type_size"); rc != MPI_SUCCESS)
        return rc;
    if (!weft::mpi::live_datatype(datatype))
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Type_size", "invalid datatype");
    if (!size)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_size", "size is NULL");
    *size = int(datatype->size);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_get_name)
extern "C" int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Type_get_name"); rc != MPI_SUCCESS)
        return rc;
    if (!weft::mpi::live_datatype(datatype))
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Type_get_name", "invalid datatype");
    if (!type_name || !resultlen)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_get_name",
                     !type_name ? "type_name is NULL" : "resultlen is NULL");
    const char *name = datatype->name ? datatype->name : "";
    size_t len = std::min(std::strlen(name), size_t(MPI_MAX_OBJECT_NAME - 1));
    std::memcpy(type_name, name, len);
    type_name[len] = '\0';
    *resultlen = int(len);
    return MPI_SUCCESS;
}
