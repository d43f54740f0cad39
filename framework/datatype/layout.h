// The datatype engine's description of a committed type: where its bytes lie in memory.
//
// A Layout lists the type map of ONE instance as contiguous byte runs, in type-map order
// (which is the order bytes travel in: packed order), with the size of the basic elements in
// each run (for MPI_Get_elements). Runs that touch in memory and hold elements of one size are
// merged, so a vector of contiguous blocks whose stride equals the block is one run. count
// instances of a type lie `extent` bytes apart.
//
// pack() and unpack() move the packed bytes [pos, pos + n) of (buf, count, layout) from or to
// a contiguous buffer, for any pos: a fragment may start or end inside a run or an element.
#ifndef WEFT_DATATYPE_LAYOUT_H
#define WEFT_DATATYPE_LAYOUT_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include <weft/convertor.h>

namespace weft::dt {

// How a basic element is written in MPI's portable representation, external32 (big-endian, the
// standard's sizes): as it is, byte-reversed on a little-endian host, unless it is one of these.
enum Ext32 : uint8_t {
    ext_plain = 0,   // esize bytes, reversed as one number
    ext_complex,     // two halves, each reversed (C and Fortran complex)
    ext_long,        // C long: 4 bytes in external32, sign-extended back
    ext_ulong,       // unsigned long: 4 bytes, zero-extended back
    ext_long_double, // long double: IEEE binary128 (16 bytes)
    ext_complex_long_double,
    ext_wchar, // wchar_t: 2 bytes
};

struct Run {
    ptrdiff_t disp;          // from the start of the instance (the buffer pointer), in bytes
    size_t len;              // bytes
    uint32_t esize;          // bytes per basic element in this run (len is a multiple of it)
    uint8_t ext = ext_plain; // Ext32: how its elements are written in external32
};

struct Layout {
    std::vector<Run> runs;
    std::vector<size_t> packed; // packed[i]: packed bytes before runs[i] (prefix sums)
    size_t size = 0;            // packed bytes of one instance
    size_t elements = 0;        // basic elements of one instance
    ptrdiff_t lb = 0, ub = 0;   // the bounds (MPI's lb and ub, markers included)
    ptrdiff_t true_lb = 0, true_ub = 0;
    bool contiguous = false; // one run whose length is the extent: instances tile memory
    size_t align = 1;        // as a C struct member (the largest basic element, <= 16)

    ptrdiff_t extent() const { return ub - lb; }
    ptrdiff_t true_extent() const { return true_ub - true_lb; }
};

// ---- building. Every builder returns a finished Layout (runs merged, sums computed).

// A basic type: one element of `size` bytes, aligned as a C struct member of it would be
// (`align`; 0: as its size, up to 16; a complex type is aligned as its parts are).
Layout basic(size_t size, size_t align = 0, Ext32 ext = ext_plain);
// Basic elements with holes, such as MPI_SHORT_INT's {short at 0, int at 4}: runs of one element
// each, bounds [0, extent).
Layout basic_parts(const std::vector<Run> &parts, ptrdiff_t extent);

// One block of a constructed type: `count` instances of `child` from displacement `disp`
// (bytes), each child's extent after the last.
struct Block {
    ptrdiff_t disp;
    size_t count;
    const Layout *child;
};
// The type made of these blocks, in order (MPI's general constructor: every other one reduces
// to it). `align` > 0: the upper bound is rounded up to a multiple of it, as C pads a struct
// (MPI_Type_create_struct); 0 leaves the bounds as the blocks give them.
Layout combine(const std::vector<Block> &blocks, size_t align);
// MPI_Type_create_resized: the same type map with new bounds.
Layout resized(const Layout &child, ptrdiff_t lb, ptrdiff_t extent);
// The alignment C would give a struct member of this layout (largest basic element, <= 16).
size_t alignment(const Layout &l);
// MPI_Type_create_subarray: the subsizes[] block starting at starts[] of an array of sizes[]
// elements of child (C order: the last dimension varies fastest; Fortran order: the first),
// with the bounds of the whole array.
Layout subarray(const std::vector<size_t> &sizes, const std::vector<size_t> &subsizes,
                const std::vector<size_t> &starts, bool fortran_order, const Layout &child);
// The general form of both subarray and MPI_Type_create_darray: of an array of sizes[] elements
// of child, those whose index in dimension d lies in one of ranges[d] (ascending, apart), in
// array order, with the bounds of the whole array.
struct Range {
    size_t start, count;
};
Layout grid(const std::vector<size_t> &sizes, const std::vector<std::vector<Range>> &ranges,
            bool fortran_order, const Layout &child);

// ---- moving data

// Copy the packed bytes [pos, pos + n) of (buf, count, layout) into dst. n is clamped to what
// the message holds; returns the bytes copied.
size_t pack(const Layout &l, const void *buf, size_t count, size_t pos, void *dst, size_t n);
// Copy n bytes from src into the packed positions [pos, pos + n) of (buf, count, layout).
size_t unpack(const Layout &l, void *buf, size_t count, size_t pos, const void *src, size_t n);
// A convertor (weft/convertor.h) over the packed bytes of (buf, count, layout), for layouts that
// are not one contiguous block: transports pack and unpack through it at any position, so a
// non-contiguous buffer is moved fragment by fragment without a packed copy of the whole.
// `state` holds what the walker needs and must outlive the convertor.
struct ConvState {
    const Layout *layout;
    char *buf;
    size_t count;
};
void convertor_init(weft_convertor_t *c, ConvState *state);

// Basic elements in the first `bytes` packed bytes of (count instances of) the layout; -1 if
// `bytes` ends inside a basic element.
long long elements_in(const Layout &l, size_t bytes);
// The packed bytes that the first n basic elements of (instances of) the layout take (the
// inverse of elements_in).
size_t bytes_of_elements(const Layout &l, size_t n);

// ---- external32 (external32.cc)
// The bytes one instance takes in external32.
size_t external32_size(const Layout &l);
// Convert count instances' packed bytes (pack()'s order) to external32 and back. False when the
// host's long double has no conversion to binary128 here.
bool to_external32(const Layout &l, size_t count, const unsigned char *packed, unsigned char *out);
bool from_external32(const Layout &l, size_t count, const unsigned char *in, unsigned char *packed);

} // namespace weft::dt

#endif
