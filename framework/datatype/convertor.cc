// weft_convertor_init_datatype (weft/convertor.h): a convertor over any committed datatype, for
// PMLs that see datatypes only through the public headers. In libweft: components may not
// depend on libmpi.
#include "layout.h"
#include "mpi_objects.h"

#include <weft/convertor.h>
#include <weft/op.h>

#include <algorithm>
#include <cstring>
#include <new>

// The walker's state lives in the caller's storage.
static_assert(sizeof(weft::dt::ConvState) <= sizeof(weft_convertor_state_t) &&
                  alignof(weft::dt::ConvState) <= alignof(weft_convertor_state_t),
              "weft_convertor_state_t is too small for the datatype engine's walker");

extern "C" weft_status_t weft_convertor_init_datatype(weft_convertor_t *convertor,
                                                      weft_convertor_state_t *state, void *buf,
                                                      size_t count, const weft_datatype_t *dtype)
{
    if (!convertor || !dtype)
        return WEFT_ERR_BAD_PARAM;
    if (weft_datatype_is_contiguous(dtype, count)) {
        weft_convertor_init_contiguous(convertor, buf, count * dtype->size);
        return WEFT_SUCCESS;
    }
    if (!state)
        return WEFT_ERR_BAD_PARAM;
    auto *walker = new (state->opaque)
        weft::dt::ConvState{dtype->layout.get(), static_cast<char *>(buf), count};
    weft::dt::convertor_init(convertor, walker);
    return WEFT_SUCCESS;
}

extern "C" size_t weft_datatype_span(const weft_datatype_t *dtype, size_t count, ptrdiff_t *true_lb)
{
    if (true_lb)
        *true_lb = 0;
    if (!dtype || count == 0)
        return 0;
    if (!dtype->layout)
        return count * dtype->size;
    const weft::dt::Layout &l = *dtype->layout;
    // The elements lie extent apart; a negative extent puts the last one lowest. Each covers
    // its data and its bounds: a reduction writes a value-index pair whole, padding included
    // (MPI_DOUBLE_INT's 12 bytes of data in its 16).
    const ptrdiff_t far = ptrdiff_t(count - 1) * l.extent();
    const ptrdiff_t lo = std::min<ptrdiff_t>(0, far) + std::min(l.true_lb, l.lb);
    const ptrdiff_t hi = std::max<ptrdiff_t>(0, far) + std::max(l.true_ub, l.ub);
    if (true_lb)
        *true_lb = lo;
    return size_t(hi - lo);
}

extern "C" size_t weft_datatype_copy(void *dst, size_t dcount, const weft_datatype_t *dtype,
                                     const void *src, size_t scount, const weft_datatype_t *stype)
{
    // A NULL buffer is MPI_BOTTOM: the type's displacements are absolute addresses.
    if (!dtype || !stype)
        return 0;
    const size_t n = std::min(scount * stype->size, dcount * dtype->size);
    if (n == 0)
        return 0;
    if (weft_datatype_is_contiguous(stype, scount) && weft_datatype_is_contiguous(dtype, dcount)) {
        std::memmove(dst, src, n);
        return n;
    }
    weft_convertor_t in, out;
    weft_convertor_state_t in_state, out_state;
    weft_convertor_init_datatype(&in, &in_state, const_cast<void *>(src), scount, stype);
    weft_convertor_init_datatype(&out, &out_state, dst, dcount, dtype);
    // One side contiguous: the other one's convertor reads or writes it in place.
    if (const void *s = weft_convertor_contiguous_data(&in))
        return weft_convertor_unpack(&out, s, n);
    if (weft_convertor_contiguous_data(&out))
        return weft_convertor_pack(&in, static_cast<unsigned char *>(dst), n);
    unsigned char chunk[4096];
    size_t done = 0;
    while (done < n) {
        const size_t got = weft_convertor_pack(&in, chunk, std::min(sizeof chunk, n - done));
        if (got == 0)
            break;
        weft_convertor_unpack(&out, chunk, got);
        done += got;
    }
    return done;
}
