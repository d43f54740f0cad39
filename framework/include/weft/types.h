/*
 * weft/types.h: objects that several frameworks pass across their ABI but none of them defines.
 *
 * Everything here is either opaque (a forward declaration; the owner named in the comment
 * defines it and provides the functions that look inside) or a small plain struct whose layout
 * is frozen: these are shared by every framework header, so changing one would change all of
 * their ABIs at once. A new shared object gets a new type, never a new field in an old one.
 */
#ifndef WEFT_TYPES_H
#define WEFT_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include <weft/status.h>

/* WEFT_CXX_DEFAULT(value) in a struct member's declaration: in C++, the member starts at value
 * (a default member initializer), so that a C++ object deriving from the struct starts valid; in
 * C, nothing: C code calls the struct's init function instead. It never changes the layout, and
 * the structs that use it stay standard-layout and trivially copyable (check_abi_headers.c and
 * check_abi_headers_cxx.cc check the same offsets in both languages). */
#ifdef __cplusplus
#define WEFT_CXX_DEFAULT(...) = __VA_ARGS__
#else
#define WEFT_CXX_DEFAULT(...)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A process of the job, alive or failed: one entry of the runtime's proc table. Owned by the
 * runtime; a pointer stays valid until MPI finalize, even after the process failed. */
typedef struct weft_proc weft_proc_t;

/* A communicator, owned by framework/mpi. It starts with a weft_comm_view_t (weft/comm.h). */
typedef struct weft_comm weft_comm_t;

/* A group of processes (MPI_Group), owned by framework/mpi and reference counted there; read
 * through weft/comm.h. */
typedef struct weft_group weft_group_t;

/* A request (MPI_Request): completion state, the error status the FT layer reads, and the kind
 * (point-to-point, collective, communicator creation). Defined in weft/request.h; PMLs and coll
 * components embed it at the start of their own requests. */
typedef struct weft_request weft_request_t;

/* A datatype, owned by framework/datatype. */
typedef struct weft_datatype weft_datatype_t;

/* A reduction operation (MPI_Op), owned by framework/mpi. */
typedef struct weft_op weft_op_t;

/* A message taken out of matching by mprobe/improbe (MPI_Message). Created by the PML,
 * consumed by mrecv/imrecv. Defined in weft/request.h. */
typedef struct weft_message weft_message_t;

/* A cursor over (buffer, count, datatype) that packs to or unpacks from contiguous bytes;
 * framework/datatype defines it and its pack/unpack functions. Transports receive one instead
 * of a user buffer so that they never need to understand datatypes. */
typedef struct weft_convertor weft_convertor_t;

typedef struct weft_iovec {
    void *base;
    size_t len;
} weft_iovec_t;

/* Wildcards and sentinels as every framework sees them; framework/mpi maps the MPI constants
 * onto these (or defines the MPI constants with the same values). */
#define WEFT_ANY_SOURCE (-1)
#define WEFT_PROC_NULL  (-2)
#define WEFT_ANY_TAG    (-1)
#define WEFT_IN_PLACE   ((void *)1)
/* Intercommunicator collectives: the root's own argument for root (MPI_ROOT). */
#define WEFT_ROOT (-4)

/* MPI send modes, for the PML and MTL send operations. */
typedef enum weft_send_mode {
    WEFT_SEND_STANDARD = 0,
    WEFT_SEND_BUFFERED = 1,
    WEFT_SEND_SYNCHRONOUS = 2,
    WEFT_SEND_READY = 3
} weft_send_mode_t;

/*
 * The outcome of a receive or probe, filled by the PML or MTL and turned into an MPI_Status by
 * framework/mpi. `error` is the internal status of the operation, which the FT layer reads; it
 * is WEFT_SUCCESS until something sets it.
 */
typedef struct weft_msg_status {
    int32_t source;      /* rank in the communicator that sent the message */
    int32_t tag;         /* tag of the message */
    weft_status_t error; /* WEFT_SUCCESS, WEFT_ERR_TRUNCATE, a process failure, revoked, ... */
    int32_t cancelled;   /* nonzero if the operation was cancelled instead of completed */
    uint64_t count;      /* bytes received (or, for a probe, bytes the message carries) */
} weft_msg_status_t;

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_iovec_t> && std::is_trivially_copyable_v<weft_iovec_t>,
              "weft_iovec_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_msg_status_t> &&
                  std::is_trivially_copyable_v<weft_msg_status_t>,
              "weft_msg_status_t must stay a plain C struct");
#endif

#endif /* WEFT_TYPES_H */
