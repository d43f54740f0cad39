// external32 (MPI-3.1 section 13.5.2): MPI's portable representation of typed data, big-endian,
// with the standard's sizes (a C long takes 4 bytes, a long double 16 as IEEE binary128, a
// wchar_t 2). A layout's runs say how each basic element is written (Ext32, layout.h); these
// functions convert packed native bytes (pack()'s order) to it and back.
#include "layout.h"

#include <bit>
#include <cfloat>
#include <cstring>

namespace weft::dt {

namespace {

// The bytes an element of esize native bytes takes in external32.
size_t ext_bytes(uint8_t ext, uint32_t esize)
{
    switch (ext) {
    case ext_long:
    case ext_ulong: return 4;
    case ext_long_double: return 16;
    case ext_complex_long_double: return 32;
    case ext_wchar: return 2;
    default: return esize;
    }
}

// n bytes from src to dst, most significant first (big-endian), from a host-order number.
void to_big(const unsigned char *src, unsigned char *dst, size_t n)
{
    if constexpr (std::endian::native == std::endian::little)
        for (size_t i = 0; i < n; ++i)
            dst[i] = src[n - 1 - i];
    else
        std::memcpy(dst, src, n);
}

// An unsigned number of n <= 8 bytes in host order, and back.
uint64_t load(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    unsigned char b[8] = {};
    if constexpr (std::endian::native == std::endian::little)
        std::memcpy(b, p, n);
    else
        std::memcpy(b + 8 - n, p, n);
    std::memcpy(&v, b, 8);
    return v;
}
void store(uint64_t v, unsigned char *p, size_t n)
{
    unsigned char b[8];
    std::memcpy(b, &v, 8);
    if constexpr (std::endian::native == std::endian::little)
        std::memcpy(p, b, n);
    else
        std::memcpy(p, b + 8 - n, n);
}

// A native long double to binary128, big-endian, and back. The x87 extended format (64-bit
// significand with an explicit integer bit, 15-bit exponent, the bias binary128's) maps field by
// field: the fraction is the significand without its integer bit, left-aligned in 112 bits. A
// host whose long double is binary128 already only reverses the bytes.
bool long_double_out(const unsigned char *in, unsigned char *out)
{
    if constexpr (LDBL_MANT_DIG == 113) {
        to_big(in, out, 16);
        return true;
    } else if constexpr (LDBL_MANT_DIG == 64 && std::endian::native == std::endian::little) {
        const uint64_t mant = load(in, 8);
        const uint64_t se = load(in + 8, 2); // sign and exponent
        // binary128: sign, 15-bit exponent, 112-bit fraction = 48 high bits + 64 low bits.
        const uint64_t frac = mant & 0x7fffffffffffffffull; // 63 bits
        const uint64_t hi = (se << 48) | (frac >> 15);
        const uint64_t lo = frac << 49;
        unsigned char h[8], l[8];
        store(hi, h, 8);
        store(lo, l, 8);
        to_big(h, out, 8);
        to_big(l, out + 8, 8);
        return true;
    } else {
        (void)in, (void)out;
        return false;
    }
}
bool long_double_in(const unsigned char *in, unsigned char *out)
{
    if constexpr (LDBL_MANT_DIG == 113) {
        to_big(in, out, 16);
        return true;
    } else if constexpr (LDBL_MANT_DIG == 64 && std::endian::native == std::endian::little) {
        unsigned char h[8], l[8];
        to_big(in, h, 8);
        to_big(in + 8, l, 8);
        const uint64_t hi = load(h, 8), lo = load(l, 8);
        const uint64_t se = hi >> 48, exp = se & 0x7fff;
        // The 63 fraction bits binary128 keeps first (the rest is beyond the x87 precision),
        // and the integer bit, which is 1 for every number but zeros and subnormals.
        const uint64_t frac = ((hi & 0xffffffffffffull) << 15) | (lo >> 49);
        const uint64_t mant = frac | (exp != 0 ? 0x8000000000000000ull : 0);
        std::memset(out, 0, 16); // the x87 value's 6 bytes of padding
        store(mant, out, 8);
        store(se, out + 8, 2);
        return true;
    } else {
        (void)in, (void)out;
        return false;
    }
}

// One element, native (in) to external32 (out) or back, by its run's kind.
bool convert(uint8_t ext, uint32_t esize, const unsigned char *in, unsigned char *out, bool to_ext)
{
    switch (ext) {
    case ext_complex:
        to_big(in, out, esize / 2);
        to_big(in + esize / 2, out + esize / 2, esize / 2);
        return true;
    case ext_long:
    case ext_ulong:
    case ext_wchar: {
        const size_t ext_n = ext_bytes(ext, esize);
        if (to_ext) {
            // The low bytes (a value outside the external range is cut, as C's conversion to a
            // narrower integer would).
            unsigned char b[8];
            store(load(in, esize), b, ext_n);
            to_big(b, out, ext_n);
        } else {
            unsigned char b[8];
            to_big(in, b, ext_n);
            uint64_t v = load(b, ext_n);
            if (ext == ext_long && (v >> (8 * ext_n - 1)) & 1)
                v |= ~uint64_t(0) << (8 * ext_n); // sign-extend
            store(v, out, esize);
        }
        return true;
    }
    case ext_long_double: return to_ext ? long_double_out(in, out) : long_double_in(in, out);
    case ext_complex_long_double:
        return to_ext ? long_double_out(in, out) && long_double_out(in + esize / 2, out + 16)
                      : long_double_in(in, out) && long_double_in(in + 16, out + esize / 2);
    default: to_big(in, out, esize); return true;
    }
}

// Walk count instances' elements in packed order, converting each.
bool walk(const Layout &l, size_t count, const unsigned char *in, unsigned char *out, bool to_ext)
{
    for (size_t i = 0; i < count; ++i)
        for (const Run &r : l.runs) {
            const size_t n = r.len / r.esize, eb = ext_bytes(r.ext, r.esize);
            const size_t in_step = to_ext ? r.esize : eb, out_step = to_ext ? eb : r.esize;
            for (size_t k = 0; k < n; ++k, in += in_step, out += out_step)
                if (!convert(r.ext, r.esize, in, out, to_ext))
                    return false;
        }
    return true;
}

} // namespace

size_t external32_size(const Layout &l)
{
    size_t n = 0;
    for (const Run &r : l.runs)
        n += r.len / r.esize * ext_bytes(r.ext, r.esize);
    return n;
}

bool to_external32(const Layout &l, size_t count, const unsigned char *packed, unsigned char *out)
{
    return walk(l, count, packed, out, true);
}

bool from_external32(const Layout &l, size_t count, const unsigned char *in, unsigned char *packed)
{
    return walk(l, count, in, packed, false);
}

} // namespace weft::dt
