// Reduction kernels for the predefined ops on every type they are defined for (MPI-3.1
// 5.9.2), user-op calls, and the datatype functions components use (element sizes,
// contiguity, references): the weft/op.h functions. In libweft, so that components (loadable
// or linked into libweft) can call them; the MPI_Op and MPI_Datatype objects and calls are
// framework/mpi's (mpi_op.cc, mpi_datatype.cc).
#include "mpi_handles.h"
#include "mpi_objects.h"

#include <weft/op.h>

#include <climits>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

namespace weft::mpi {

namespace {

// The type groups each predefined op (mpi_objects.h's Builtin) takes.
constexpr uint8_t kIntegers = class_c_int | class_f_int;
constexpr uint8_t kAllowed[builtin_count] = {
    /* max */ kIntegers | class_float,
    /* min */ kIntegers | class_float,
    /* sum */ kIntegers | class_float | class_complex,
    /* prod */ kIntegers | class_float | class_complex,
    /* land */ class_c_int | class_logical,
    /* band */ kIntegers | class_byte,
    /* lor */ class_c_int | class_logical,
    /* bor */ kIntegers | class_byte,
    /* lxor */ class_c_int | class_logical,
    /* bxor */ kIntegers | class_byte,
    /* minloc */ class_pair,
    /* maxloc */ class_pair,
    // Defined for one-sided accumulate only: no reduction takes them.
    /* replace */ 0,
    /* no_op */ 0,
};

template <class T> struct value_int {
    T value;
    int index;
};

using Kernel = void (*)(const void *in, void *inout, size_t n);

// inout[i] = f(in[i], inout[i]). The collectives' reductions are memory-bound loops that the
// compiler vectorizes fully only with its -O3 cost model (twice as fast at 64 KiB as -O2's),
// and only once it knows the two arrays do not overlap; arrays that overlap take the plain
// loop.
template <class T, class F>
__attribute__((optimize("O3"))) void apply_disjoint(const T *__restrict a, T *__restrict b,
                                                    size_t n)
{
    F f;
    for (size_t i = 0; i < n; ++i)
        b[i] = f(a[i], b[i]);
}

template <class T, class F> void apply(const void *in, void *inout, size_t n)
{
    const T *a = static_cast<const T *>(in);
    T *b = static_cast<T *>(inout);
    if (a + n <= b || b + n <= a) {
        apply_disjoint<T, F>(a, b, n);
        return;
    }
    F f;
    for (size_t i = 0; i < n; ++i)
        b[i] = f(a[i], b[i]);
}

struct Max {
    template <class T> T operator()(T a, T b) const { return a > b ? a : b; }
};
struct Min {
    template <class T> T operator()(T a, T b) const { return a < b ? a : b; }
};
// Integers wrap, as two's complement hardware does, without the undefined behaviour of signed
// overflow (or of the int promotion of small unsigned types): the arithmetic is unsigned.
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct Sum {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_integral_v<T>)
            return T(Wide<T>(a) + Wide<T>(b));
        else
            return T(a + b);
    }
};
struct Prod {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_integral_v<T>)
            return T(Wide<T>(a) * Wide<T>(b));
        else
            return T(a * b);
    }
};
struct Land {
    template <class T> T operator()(T a, T b) const { return T(a && b); }
};
struct Lor {
    template <class T> T operator()(T a, T b) const { return T(a || b); }
};
struct Lxor {
    template <class T> T operator()(T a, T b) const { return T(!a != !b); }
};
struct Band {
    template <class T> T operator()(T a, T b) const { return T(a & b); }
};
struct Bor {
    template <class T> T operator()(T a, T b) const { return T(a | b); }
};
struct Bxor {
    template <class T> T operator()(T a, T b) const { return T(a ^ b); }
};
// Ties keep the smaller index (MPI-3.1 5.9.4).
struct Minloc {
    template <class P> P operator()(P a, P b) const
    {
        if (a.value < b.value || (a.value == b.value && a.index < b.index))
            return a;
        return b;
    }
};
struct Maxloc {
    template <class P> P operator()(P a, P b) const
    {
        if (a.value > b.value || (a.value == b.value && a.index < b.index))
            return a;
        return b;
    }
};

template <class F> constexpr Kernel integer_kernel(Elem e)
{
    switch (e) {
    case Elem::i8: return apply<int8_t, F>;
    case Elem::u8: return apply<uint8_t, F>;
    case Elem::i16: return apply<int16_t, F>;
    case Elem::u16: return apply<uint16_t, F>;
    case Elem::i32: return apply<int32_t, F>;
    case Elem::u32: return apply<uint32_t, F>;
    case Elem::i64: return apply<int64_t, F>;
    case Elem::u64: return apply<uint64_t, F>;
    default: return nullptr;
    }
}

template <class F> constexpr Kernel logical_kernel(Elem e)
{
    return e == Elem::boolean ? apply<bool, F> : integer_kernel<F>(e);
}

template <class F> constexpr Kernel real_kernel(Elem e)
{
    switch (e) {
    case Elem::f32: return apply<float, F>;
    case Elem::f64: return apply<double, F>;
    case Elem::fld: return apply<long double, F>;
    default: return integer_kernel<F>(e);
    }
}

template <class F> constexpr Kernel arith_kernel(Elem e)
{
    switch (e) {
    case Elem::c32: return apply<std::complex<float>, F>;
    case Elem::c64: return apply<std::complex<double>, F>;
    case Elem::cld: return apply<std::complex<long double>, F>;
    default: return real_kernel<F>(e);
    }
}

template <class F> constexpr Kernel pair_kernel(Elem e)
{
    switch (e) {
    case Elem::p_f32: return apply<value_int<float>, F>;
    case Elem::p_f64: return apply<value_int<double>, F>;
    case Elem::p_long: return apply<value_int<long>, F>;
    case Elem::p_i32: return apply<value_int<int>, F>;
    case Elem::p_i16: return apply<value_int<short>, F>;
    case Elem::p_fld: return apply<value_int<long double>, F>;
    default: return nullptr;
    }
}

Kernel kernel(int op, Elem e)
{
    switch (op) {
    case op_max: return real_kernel<Max>(e);
    case op_min: return real_kernel<Min>(e);
    case op_sum: return arith_kernel<Sum>(e);
    case op_prod: return arith_kernel<Prod>(e);
    case op_land: return logical_kernel<Land>(e);
    case op_lor: return logical_kernel<Lor>(e);
    case op_lxor: return logical_kernel<Lxor>(e);
    case op_band: return integer_kernel<Band>(e);
    case op_bor: return integer_kernel<Bor>(e);
    case op_bxor: return integer_kernel<Bxor>(e);
    case op_minloc: return pair_kernel<Minloc>(e);
    case op_maxloc: return pair_kernel<Maxloc>(e);
    default: return nullptr;
    }
}

} // namespace

bool op_valid_for(const weft_op *op, const weft_datatype *type)
{
    if (!op || !type)
        return false;
    if (op->builtin < 0)
        return true;
    return (kAllowed[op->builtin] & type->type_class) != 0 &&
           kernel(op->builtin, type->elem) != nullptr;
}

weft_status_t op_reduce(weft_op *op, const void *in, void *inout, size_t count, weft_datatype *type)
{
    if (!op_valid_for(op, type))
        return WEFT_ERR_BAD_PARAM;
    if (count == 0)
        return WEFT_SUCCESS;
    if (op->builtin >= 0) {
        // A predefined op works on the basic elements: a derived type's are those of its base
        // (a predefined type), n of them in count elements.
        const weft_datatype *base = type->predefined || !type->base ? type : type->base;
        if (base->size == 0)
            return WEFT_SUCCESS;
        const size_t n = count * (type->size / base->size);
        const auto fn = kernel(op->builtin, type->elem);
        if (base == type || (type->dense && base->dense)) {
            fn(in, inout, n); // an array of the base type's elements as they lie in memory
            return WEFT_SUCCESS;
        }
        // Elsewhere (a strided type, pairs with padding inside a derived type): gather both
        // operands into arrays of base elements, reduce, and put the result back.
        const ptrdiff_t ext = weft_datatype_extent(base);
        std::vector<char> a(n * size_t(ext)), b(n * size_t(ext));
        auto *bt = const_cast<weft_datatype *>(base);
        weft_datatype_copy(a.data(), n, bt, in, count, type);
        weft_datatype_copy(b.data(), n, bt, inout, count, type);
        fn(a.data(), b.data(), n);
        weft_datatype_copy(inout, count, type, b.data(), n, bt);
        return WEFT_SUCCESS;
    }
    // The user function's count is an int: call it in pieces.
    const auto *a = static_cast<const char *>(in);
    auto *b = static_cast<char *>(inout);
    while (count > 0) {
        int len = count > size_t(INT_MAX) ? INT_MAX : int(count);
        weft_datatype *t = type;
        op->user(const_cast<char *>(a), b, &len, &t);
        // Elements lie extent apart (the size for a contiguous type).
        a += ptrdiff_t(len) * weft_datatype_extent(type);
        b += ptrdiff_t(len) * weft_datatype_extent(type);
        count -= size_t(len);
    }
    return WEFT_SUCCESS;
}

} // namespace weft::mpi

extern "C" {

weft_status_t weft_op_reduce(weft_op_t *op, const void *in, void *inout, size_t count,
                             weft_datatype_t *dtype)
{
    return weft::mpi::op_reduce(op, in, inout, count, dtype);
}

int weft_op_commutative(const weft_op_t *op) { return op && op->commutative; }

void weft_op_retain(weft_op_t *op)
{
    if (op && !op->predefined)
        ++op->refs;
}

void weft_op_release(weft_op_t *op)
{
    if (op && !op->predefined && --op->refs == 0) {
        weft::mpi::handle_forget(weft::mpi::HandleKind::op, op);
        delete op;
    }
}

int weft_op_valid_for(const weft_op_t *op, const weft_datatype_t *dtype)
{
    return weft::mpi::op_valid_for(op, dtype);
}

ptrdiff_t weft_datatype_extent(const weft_datatype_t *dtype)
{
    if (!dtype)
        return 0;
    return dtype->layout ? dtype->layout->extent() : ptrdiff_t(dtype->size);
}

void weft_datatype_retain(weft_datatype_t *dtype)
{
    if (dtype && !dtype->predefined)
        ++dtype->refs;
}

void weft_datatype_release(weft_datatype_t *dtype)
{
    if (!dtype || dtype->predefined || --dtype->refs > 0)
        return;
    // A derived type holds the types it was built from (MPI_Type_get_contents).
    for (weft_datatype *c : dtype->types)
        weft_datatype_release(c);
    weft::mpi::handle_forget(weft::mpi::HandleKind::datatype, dtype);
    delete dtype;
}

weft_datatype_t *weft_datatype_bytes(void)
{
    using namespace weft::mpi;
    static weft_datatype bytes = basic_datatype(1, "bytes", Elem::u8, class_byte);
    return &bytes;
}

} // extern "C"
