// weft_convertor_init_datatype (weft/convertor.h): a convertor over any committed datatype, for
// PMLs that see datatypes only through the public headers. In libweft: components may not
// depend on libmpi.
#include "layout.h"
#include "mpi_objects.h"

#include <weft/convertor.h>
#include <weft/op.h>

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
