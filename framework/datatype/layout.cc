// The datatype engine's layouts: building (flattening constructed types into runs) and moving
// data between a typed buffer and packed bytes at any position. See layout.h.
#include "layout.h"

#include <algorithm>
#include <cstring>

namespace weft::dt {

namespace {

// Append a run, merged into the last one when they touch and hold elements of one size.
void append(Layout &l, ptrdiff_t disp, size_t len, uint32_t esize, uint8_t ext)
{
    if (len == 0)
        return;
    if (!l.runs.empty()) {
        Run &last = l.runs.back();
        if (last.esize == esize && last.ext == ext && last.disp + ptrdiff_t(last.len) == disp) {
            last.len += len;
            return;
        }
    }
    l.runs.push_back({disp, len, esize, ext});
}

// Sums, true bounds and the contiguity flag from the runs and bounds.
void finish(Layout &l)
{
    l.packed.resize(l.runs.size());
    l.size = 0;
    l.elements = 0;
    for (size_t i = 0; i < l.runs.size(); ++i) {
        l.packed[i] = l.size;
        l.size += l.runs[i].len;
        l.elements += l.runs[i].len / l.runs[i].esize;
    }
    if (l.runs.empty()) {
        l.true_lb = l.true_ub = 0;
    } else {
        l.true_lb = l.runs[0].disp;
        l.true_ub = l.runs[0].disp + ptrdiff_t(l.runs[0].len);
        for (const Run &r : l.runs) {
            l.true_lb = std::min(l.true_lb, r.disp);
            l.true_ub = std::max(l.true_ub, r.disp + ptrdiff_t(r.len));
        }
    }
    l.contiguous = l.runs.size() == 1 && ptrdiff_t(l.runs[0].len) == l.extent();
}

ptrdiff_t round_up(ptrdiff_t x, ptrdiff_t to) { return to > 1 ? (x + to - 1) / to * to : x; }

} // namespace

Layout basic(size_t size, size_t align, Ext32 ext)
{
    Layout l;
    append(l, 0, size, uint32_t(size), ext);
    l.lb = 0;
    l.ub = ptrdiff_t(size);
    l.align = align ? align : std::min<size_t>(size ? size : 1, 16);
    finish(l);
    return l;
}

Layout basic_parts(const std::vector<Run> &parts, ptrdiff_t extent)
{
    Layout l;
    for (const Run &p : parts) {
        append(l, p.disp, p.len, p.esize, p.ext);
        l.align = std::max<size_t>(l.align, std::min<size_t>(p.esize, 16));
    }
    l.lb = 0;
    l.ub = extent;
    finish(l);
    return l;
}

Layout combine(const std::vector<Block> &blocks, size_t align)
{
    Layout l;
    bool any = false;
    for (const Block &b : blocks) {
        if (b.count == 0)
            continue;
        const Layout &c = *b.child;
        const ptrdiff_t ext = c.extent();
        for (size_t i = 0; i < b.count; ++i) {
            const ptrdiff_t at = b.disp + ptrdiff_t(i) * ext;
            for (const Run &r : c.runs)
                append(l, at + r.disp, r.len, r.esize, r.ext);
        }
        // The instances' bounds: the first and the last (extent may be negative).
        const ptrdiff_t first = b.disp, last = b.disp + ptrdiff_t(b.count - 1) * ext;
        const ptrdiff_t lo = std::min(first, last) + c.lb, hi = std::max(first, last) + c.ub;
        l.lb = any ? std::min(l.lb, lo) : lo;
        l.ub = any ? std::max(l.ub, hi) : hi;
        l.align = std::max(l.align, c.align);
        any = true;
    }
    if (align > 0)
        l.ub = l.lb + round_up(l.ub - l.lb, ptrdiff_t(std::max(align, l.align)));
    finish(l);
    return l;
}

Layout resized(const Layout &child, ptrdiff_t lb, ptrdiff_t extent)
{
    Layout l = child;
    l.lb = lb;
    l.ub = lb + extent;
    finish(l);
    return l;
}

size_t alignment(const Layout &l) { return l.align; }

Layout grid(const std::vector<size_t> &sizes, const std::vector<std::vector<Range>> &ranges,
            bool fortran_order, const Layout &child)
{
    const size_t nd = sizes.size();
    // Dimension k from the fastest-varying one.
    auto dim = [&](size_t k) { return fortran_order ? k : nd - 1 - k; };
    // Each dimension's ranges are blocks of the layout of the dimensions inside it, made to
    // span one step of this dimension (the whole of the inner dimensions), so that a range is
    // one block of `count` instances.
    Layout cur = child;
    ptrdiff_t stride = child.extent(); // bytes per step of the current dimension
    for (size_t k = 0; k < nd; ++k) {
        const Layout inner = k == 0 ? cur : resized(cur, 0, stride);
        std::vector<Block> blocks;
        for (const Range &r : ranges[dim(k)])
            blocks.push_back({ptrdiff_t(r.start) * stride, r.count, &inner});
        cur = combine(blocks, 0);
        stride *= ptrdiff_t(sizes[dim(k)]);
    }
    // The bounds of the whole array.
    return resized(cur, 0, stride);
}

Layout subarray(const std::vector<size_t> &sizes, const std::vector<size_t> &subsizes,
                const std::vector<size_t> &starts, bool fortran_order, const Layout &child)
{
    std::vector<std::vector<Range>> ranges(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d)
        ranges[d].push_back({starts[d], subsizes[d]});
    return grid(sizes, ranges, fortran_order, child);
}

namespace {

// Walk the packed bytes [pos, pos + n) of (buf, count, l), calling move(memory, packed, len)
// for each piece; returns the bytes walked.
template <class Move>
size_t walk(const Layout &l, char *buf, size_t count, size_t pos, size_t n, Move move)
{
    const size_t total = l.size * count;
    if (pos >= total || n == 0)
        return 0;
    n = std::min(n, total - pos);
    if (l.contiguous) {
        move(buf + l.runs[0].disp + ptrdiff_t(pos), 0, n);
        return n;
    }
    size_t instance = pos / l.size, within = pos % l.size;
    size_t r =
        size_t(std::upper_bound(l.packed.begin(), l.packed.end(), within) - l.packed.begin()) - 1;
    size_t off = within - l.packed[r];
    const ptrdiff_t ext = l.extent();
    size_t done = 0;
    while (done < n) {
        const Run &run = l.runs[r];
        const size_t k = std::min(run.len - off, n - done);
        move(buf + ptrdiff_t(instance) * ext + run.disp + ptrdiff_t(off), done, k);
        done += k;
        off += k;
        if (off == run.len) {
            off = 0;
            if (++r == l.runs.size()) {
                r = 0;
                ++instance;
            }
        }
    }
    return n;
}

} // namespace

size_t pack(const Layout &l, const void *buf, size_t count, size_t pos, void *dst, size_t n)
{
    char *out = static_cast<char *>(dst);
    return walk(l, static_cast<char *>(const_cast<void *>(buf)), count, pos, n,
                [&](const char *mem, size_t at, size_t k) { std::memcpy(out + at, mem, k); });
}

size_t unpack(const Layout &l, void *buf, size_t count, size_t pos, const void *src, size_t n)
{
    const char *in = static_cast<const char *>(src);
    return walk(l, static_cast<char *>(buf), count, pos, n,
                [&](char *mem, size_t at, size_t k) { std::memcpy(mem, in + at, k); });
}

long long elements_in(const Layout &l, size_t bytes)
{
    if (l.size == 0)
        return 0;
    long long n = (long long)(bytes / l.size) * (long long)l.elements;
    size_t rem = bytes % l.size;
    for (const Run &r : l.runs) {
        if (rem == 0)
            break;
        if (rem >= r.len) {
            n += (long long)(r.len / r.esize);
            rem -= r.len;
            continue;
        }
        if (rem % r.esize)
            return -1;
        n += (long long)(rem / r.esize);
        rem = 0;
    }
    return n;
}

size_t bytes_of_elements(const Layout &l, size_t n)
{
    if (l.elements == 0)
        return 0;
    size_t bytes = n / l.elements * l.size, rem = n % l.elements;
    for (const Run &r : l.runs) {
        if (rem == 0)
            break;
        const size_t in_run = r.len / r.esize, take = rem < in_run ? rem : in_run;
        bytes += take * r.esize;
        rem -= take;
    }
    return bytes;
}

namespace {

size_t conv_pack(weft_convertor_t *c, void *dst, size_t max)
{
    auto *st = static_cast<ConvState *>(c->state);
    const size_t n = pack(*st->layout, st->buf, st->count, c->position, dst, max);
    c->position += n;
    return n;
}

size_t conv_unpack(weft_convertor_t *c, const void *src, size_t len)
{
    auto *st = static_cast<ConvState *>(c->state);
    const size_t n = unpack(*st->layout, st->buf, st->count, c->position, src, len);
    c->position += n;
    return n;
}

void conv_seek(weft_convertor_t *c, size_t pos) { c->position = pos; }

const weft_convertor_ops_t kWalker = {conv_pack, conv_unpack, conv_seek};

} // namespace

void convertor_init(weft_convertor_t *c, ConvState *state)
{
    c->base = reinterpret_cast<unsigned char *>(state->buf);
    c->size = state->layout->size * state->count;
    c->position = 0;
    c->flags = 0;
    c->reserved = 0;
    c->ops = &kWalker;
    c->state = state;
}

} // namespace weft::dt
