/*
 * weft/convertor.h: the cursor through which transports read and write message data.
 *
 * A convertor stands for the bytes of (buffer, count, datatype) in packed order: the order a
 * message travels in, whatever the layout in memory. The PML makes one per message and hands
 * it to the BTL (btl_sendi, btl_prepare_src), which packs the next bytes straight into its
 * send buffer; the receiving PML unpacks into the user's buffer the same way. Transports
 * therefore never need to understand datatypes, and a message is copied once on each side.
 *
 * `position` counts packed bytes already consumed (pack) or filled (unpack); a fragment may
 * end anywhere, even inside an element. The contiguous case is inline and costs one memcpy.
 * A layout that is not contiguous carries the datatype engine's walker in `ops` (the datatype
 * engine sets it, weft_convertor_init_datatype; transports only call the functions below).
 *
 * Thread: a convertor belongs to one message and is used by one thread at a time.
 */
#ifndef WEFT_CONVERTOR_H
#define WEFT_CONVERTOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_CONVERTOR_CONTIGUOUS 0x0001u /* the packed bytes are `base` .. `base + size` */

typedef struct weft_convertor_ops {
    /* Pack up to max bytes from the current position into dst; returns the bytes packed. */
    size_t (*pack)(weft_convertor_t *convertor, void *dst, size_t max);
    /* Unpack len bytes (at most what remains) from src at the current position; returns them. */
    size_t (*unpack)(weft_convertor_t *convertor, const void *src, size_t len);
    /* Move the position to pos (<= size). */
    void (*seek)(weft_convertor_t *convertor, size_t pos);
} weft_convertor_ops_t;

struct weft_convertor {
    unsigned char *base;             /* contiguous: the first byte of the data */
    size_t size;                     /* bytes of the whole message, packed */
    size_t position;                 /* packed bytes consumed or filled so far */
    uint32_t flags;                  /* WEFT_CONVERTOR_* */
    uint32_t reserved;               /* zero */
    const weft_convertor_ops_t *ops; /* not contiguous: the walker; NULL otherwise */
    void *state;                     /* the walker's */
};

/* memcpy, with the small sizes of eager headers and messages done inline (a call into the C
 * library's memcpy costs more than copying a few bytes). */
static inline void weft_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    if (n > 32) {
        memcpy(d, s, n);
    } else if (n >= 16) {
        uint64_t a, b, c, e;
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + n - 16, 8);
        memcpy(&e, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + 8, &b, 8);
        memcpy(d + n - 16, &c, 8);
        memcpy(d + n - 8, &e, 8);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; ++i)
            d[i] = s[i];
    }
}

/* A convertor over size contiguous bytes at buf. */
static inline void weft_convertor_init_contiguous(weft_convertor_t *c, const void *buf, size_t size)
{
    c->base = (unsigned char *)buf;
    c->size = size;
    c->position = 0;
    c->flags = WEFT_CONVERTOR_CONTIGUOUS;
    c->reserved = 0;
    c->ops = NULL;
    c->state = NULL;
}

/* Storage for the datatype engine's walker, kept by whoever keeps the convertor (a PML keeps
 * both in its request): the walker's state lives here, not on the heap. */
typedef struct weft_convertor_state {
    void *opaque[4];
} weft_convertor_state_t;

/* A convertor over the count elements of dtype (any committed datatype) at buf: contiguous
 * when the data is count * size bytes from buf (weft_datatype_is_contiguous, weft/op.h), else
 * the datatype engine's walker, which keeps its state in *state. Both state and dtype must
 * outlive the convertor: a PML that keeps one across calls holds a reference to dtype
 * (weft_datatype_retain), since the user may free the type while the message is pending.
 * Packs from or unpacks into buf at any position (weft_convertor_seek). Defined in libweft.
 * Returns WEFT_SUCCESS, or WEFT_ERR_BAD_PARAM when dtype is NULL. Blocking: no. Thread: any. */
weft_status_t weft_convertor_init_datatype(weft_convertor_t *convertor,
                                           weft_convertor_state_t *state, void *buf, size_t count,
                                           const weft_datatype_t *dtype);

/* Bytes not yet packed or unpacked. */
static inline size_t weft_convertor_remaining(const weft_convertor_t *c)
{
    return c->size - c->position;
}

/* The data at the current position if it is contiguous in memory (a transport may then send
 * from it in place), else NULL. */
static inline const void *weft_convertor_contiguous_data(const weft_convertor_t *c)
{
    return (c->flags & WEFT_CONVERTOR_CONTIGUOUS) ? c->base + c->position : NULL;
}

/* Pack up to max bytes into dst and advance; returns the bytes packed. */
static inline size_t weft_convertor_pack(weft_convertor_t *c, void *dst, size_t max)
{
    size_t n = c->size - c->position;
    if (n > max)
        n = max;
    if (!(c->flags & WEFT_CONVERTOR_CONTIGUOUS))
        return c->ops->pack(c, dst, n);
    weft_copy(dst, c->base + c->position, n);
    c->position += n;
    return n;
}

/* Unpack len bytes from src (bytes beyond what remains are ignored: the receive buffer is
 * full) and advance; returns the bytes unpacked. */
static inline size_t weft_convertor_unpack(weft_convertor_t *c, const void *src, size_t len)
{
    size_t n = c->size - c->position;
    if (n > len)
        n = len;
    if (!(c->flags & WEFT_CONVERTOR_CONTIGUOUS))
        return c->ops->unpack(c, src, n);
    weft_copy(c->base + c->position, src, n);
    c->position += n;
    return n;
}

/* Move the position to pos (clamped to size). */
static inline void weft_convertor_seek(weft_convertor_t *c, size_t pos)
{
    if (pos > c->size)
        pos = c->size;
    if (!(c->flags & WEFT_CONVERTOR_CONTIGUOUS))
        c->ops->seek(c, pos);
    else
        c->position = pos;
}

#ifdef __cplusplus
}
#endif

#endif
