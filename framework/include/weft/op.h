/*
 * weft/op.h: reductions and element sizes, for components that combine or move typed data
 * (coll components above all) without looking inside framework/mpi's objects.
 *
 * Defined in libweft (components are loaded into programs that do not link libmpi, such as
 * weft_info). Thread: any (the functions touch only their arguments).
 */
#ifndef WEFT_OP_H
#define WEFT_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* inout[i] = in[i] op inout[i] for count elements of dtype: `in` holds the contribution of the
 * lower ranks, which matters for a non-commutative user op (MPI's order is rank 0 op rank 1 op
 * ... op rank n-1). A user op is called with the count in pieces of at most INT_MAX.
 * Returns WEFT_SUCCESS, or WEFT_ERR_BAD_PARAM when op is not defined for dtype (nothing is
 * written then). */
weft_status_t weft_op_reduce(weft_op_t *op, const void *in, void *inout, size_t count,
                             weft_datatype_t *dtype);

/* Keep op alive while an operation that started before MPI_Op_free still uses it, and let it
 * go (a user op is deleted with its last reference; predefined ops are never deleted). */
void weft_op_retain(weft_op_t *op);
void weft_op_release(weft_op_t *op);

/* Nonzero when op is commutative (every predefined op is). */
int weft_op_commutative(const weft_op_t *op);

/* Nonzero when op may be applied to dtype (a predefined op on a type of its groups, MPI-3.1
 * 5.9.2; a user op on any type). */
int weft_op_valid_for(const weft_op_t *op, const weft_datatype_t *dtype);

/* What every component may read of a datatype without a call (a PML reads it for every
 * message): a frozen prefix of framework/mpi's datatype, read through the two functions
 * below. */
typedef struct weft_datatype_view {
    size_t size WEFT_CXX_DEFAULT(0); /* bytes of one element's data (MPI_Type_size) */
    /* count elements of the type are the count * size bytes from the buffer, for any count */
    bool dense WEFT_CXX_DEFAULT(true);
    uint8_t reserved[7] WEFT_CXX_DEFAULT({0, 0, 0, 0, 0, 0, 0}); /* zero */
} weft_datatype_view_t;

/* Bytes of one element of dtype's data (MPI_Type_size); 0 for NULL. */
static inline size_t weft_datatype_size(const weft_datatype_t *dtype)
{
    return dtype ? ((const weft_datatype_view_t *)dtype)->size : 0;
}

/* The distance from one element to the next in a buffer (its extent). Equal to the size for
 * the predefined types but the value-index pairs with padding (MPI_DOUBLE_INT: size 12,
 * extent 16). */
ptrdiff_t weft_datatype_extent(const weft_datatype_t *dtype);

/* The bytes of memory that count elements of dtype cover, from the lower of the first's lower
 * bound and true lower bound to the higher of the last's upper bounds (a reduction may write a
 * value-index pair whole, padding included), and in *true_lb (may be NULL) where that starts: a
 * scratch buffer of that many bytes at p holds the elements with the buffer pointer
 * p - *true_lb. 0 for count 0. Blocking: no. Thread: any. */
size_t weft_datatype_span(const weft_datatype_t *dtype, size_t count, ptrdiff_t *true_lb);

/* Copy the data of scount elements of stype at src into dcount elements of dtype at dst, as a
 * send and its matching receive would move them (the type signatures must agree): as many
 * bytes of data as the smaller of the two holds, through the datatype engine when either is
 * not contiguous. src and dst may be the same buffer only when both types are contiguous (the
 * copy is then a memmove). Returns the bytes of data copied. Blocking: no. Thread: any. */
size_t weft_datatype_copy(void *dst, size_t dcount, const weft_datatype_t *dtype, const void *src,
                          size_t scount, const weft_datatype_t *stype);

/* Nonzero when count elements of dtype at buf are the count * size bytes from buf, so they may
 * be copied (or sent in place) as they are; otherwise the datatype engine moves them
 * (weft_convertor_init_datatype, weft/convertor.h). */
static inline int weft_datatype_is_contiguous(const weft_datatype_t *dtype, size_t count)
{
    const weft_datatype_view_t *v = (const weft_datatype_view_t *)dtype;
    return v && (v->dense || count * v->size == 0);
}

/* Keep dtype alive while an operation that started before MPI_Type_free still uses it (a
 * pending message, a non-blocking collective), and let it go: a derived type is deleted with
 * its last reference (predefined types never are). Blocking: no. */
void weft_datatype_retain(weft_datatype_t *dtype);
void weft_datatype_release(weft_datatype_t *dtype);

/* A predefined type of single bytes, for what a component moves as raw bytes (its own set-up
 * messages, packed data). */
weft_datatype_t *weft_datatype_bytes(void);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_datatype_view_t> &&
                  std::is_trivially_copyable_v<weft_datatype_view_t>,
              "weft_datatype_view_t must stay a plain C struct");
#endif

#endif /* WEFT_OP_H */
