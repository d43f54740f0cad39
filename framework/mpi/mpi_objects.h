// The MPI objects behind the handles of mpi.h. An MPI handle is a pointer to
// one of these structs (MPI_Comm is weft_comm *, and so on); the predefined
// handles point at objects defined in mpi_predefined.cc.
#ifndef WEFT_MPI_OBJECTS_H
#define WEFT_MPI_OBJECTS_H

#include "layout.h"

#include <weft/types.h>

#include <memory>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct weft_errhandler;

// A group: world ranks in group order.
struct weft_group {
    std::vector<int> ranks;
    int my_rank = -1; // this process's rank in the group, or MPI_UNDEFINED (-32766)
    int refs = 1;
    bool predefined = false;
};

namespace weft::mpi {

// The element a predefined datatype holds, as the reduction kernels see it.
enum class Elem : uint8_t {
    none, // no arithmetic (MPI_CHAR, MPI_WCHAR, MPI_PACKED, ...)
    i8,
    u8,
    i16,
    u16,
    i32,
    u32,
    i64,
    u64,
    f32,
    f64,
    fld, // float, double, long double
    c32,
    c64,
    cld,     // their complex types
    boolean, // C's _Bool
    p_f32,
    p_f64,
    p_long,
    p_i32,
    p_i16,
    p_fld, // the value-index pairs of MINLOC/MAXLOC
    count
};

// The groups of MPI-3.1 section 5.9.2 that decide which predefined ops a type takes.
enum TypeClass : uint8_t {
    class_none = 0,
    class_c_int = 1,    // C integer
    class_f_int = 2,    // Fortran integer
    class_float = 4,    // floating point (C and Fortran)
    class_logical = 8,  // logical (MPI_C_BOOL, MPI_LOGICAL)
    class_complex = 16, // complex
    class_byte = 32,    // MPI_BYTE
    class_pair = 64,    // MINLOC/MAXLOC pairs
};

// The predefined reduction operations (weft_op::builtin).
enum Builtin : int {
    op_max,
    op_min,
    op_sum,
    op_prod,
    op_land,
    op_band,
    op_lor,
    op_bor,
    op_lxor,
    op_bxor,
    op_minloc,
    op_maxloc,
    op_replace,
    op_no_op,
    builtin_count
};

} // namespace weft::mpi

// A predefined (contiguous) datatype. Derived datatypes come with the
// datatype engine (issue 6); until then every type is `size` contiguous bytes.
struct weft_datatype {
    size_t size = 0;
    const char *name = "";
    int combiner = 0; // MPI_COMBINER_NAMED
    bool predefined = true;
    weft::mpi::Elem elem = weft::mpi::Elem::none;
    uint8_t type_class = weft::mpi::class_none;
    // Derived types (framework/mpi/mpi_datatype.cc): the datatype engine's layout, the
    // constructor's arguments (MPI_Type_get_contents; the types are retained), and state.
    // `dense`: count elements are the count * size bytes from the buffer pointer, which is
    // what the transports take without the datatype engine.
    bool dense = true;
    bool committed = true;
    int refs = 1;
    std::shared_ptr<const weft::dt::Layout> layout; // NULL: size contiguous bytes
    std::vector<int> ints;
    std::vector<ptrdiff_t> aints;
    std::vector<weft_datatype *> types;
    std::string user_name;
};

namespace weft::mpi {
// A predefined (contiguous) type of `size` bytes per element.
inline weft_datatype basic_datatype(size_t size, const char *name, Elem elem, uint8_t cls)
{
    weft_datatype t;
    t.size = size;
    t.name = name;
    t.elem = elem;
    t.type_class = cls;
    return t;
}
// Single bytes, for what the library itself moves as raw bytes (one per library or component).
inline weft_datatype *bytes_datatype()
{
    static weft_datatype bytes = basic_datatype(1, "bytes", Elem::u8, class_byte);
    return &bytes;
}
} // namespace weft::mpi

using weft_user_function = void(void *invec, void *inoutvec, int *len, weft_datatype **type);

// A reduction operation: predefined (builtin >= 0) or made by MPI_Op_create.
struct weft_op {
    int builtin = -1; // weft::mpi::Builtin, or -1 for a user function
    weft_user_function *user = nullptr;
    bool commutative = true;
    bool predefined = false;
    const char *name = "user op";
    int refs = 1; // the handle's, and one per pending non-blocking reduction (weft/op.h)
};

struct weft_comm {
    uint32_t cid = 0;            // context id, the same at every member
    weft_group *group = nullptr; // the local group
    int rank = -1;               // in the local group
    int size = 0;                // of the local group
    // Intercommunicators: the other group, which point-to-point ranks name, and a hidden
    // intracommunicator over the local group for the collectives' local steps.
    weft_group *remote_group = nullptr;
    weft_comm *local_comm = nullptr;
    weft_errhandler *errhandler = nullptr;
    std::string name;
    std::map<int, void *> attrs; // keyval -> value
    bool predefined = false;
    bool freed = false;
    // PML state: the sequence number of the next message to each peer and
    // the next expected from each peer (matching order); owned by the PML.
    void *pml_state = nullptr;
    // Collectives: the functions chosen for this communicator and the modules behind them
    // (framework/mpi's mpi_coll.cc), and how many collectives were started on it, which
    // coll components turn into tags of their own (coll_tag()).
    void *coll = nullptr;
    uint32_t coll_seq = 0;

    // References: the handle's, and one per pending non-blocking collective. The last one
    // takes the communicator down (destroy; NULL for the predefined ones).
    int refs = 1;
    void (*destroy)(weft_comm *comm) = nullptr;

    bool is_inter() const { return remote_group != nullptr; }
    // The group whose members point-to-point ranks name, and its size.
    const weft_group *peer_group() const { return remote_group ? remote_group : group; }
    int peer_size() const { return int(peer_group()->ranks.size()); }
};

namespace weft::mpi {
inline void comm_retain(weft_comm *c) { ++c->refs; }
inline void comm_release(weft_comm *c)
{
    if (--c->refs == 0 && c->destroy)
        c->destroy(c);
}

// Collective traffic travels on tags of its own: negative (MPI_ANY_TAG never matches them),
// below the library's other internal tags, one per collective started on the communicator
// (so the messages of two collectives in flight are never confused), repeating after 2^24.
inline int coll_tag(weft_comm *comm)
{
    return -(1 << 28) - int(comm->coll_seq++ & ((1u << 24) - 1));
}
} // namespace weft::mpi

using weft_errhandler_fn = void (*)(weft_comm **comm, int *error_code, ...);
struct weft_errhandler {
    enum class Kind { fatal, ret, user } kind = Kind::fatal;
    weft_errhandler_fn fn = nullptr;
    int refs = 1;
    bool predefined = false;
};

// A request. Completion is `complete`; the status fields are what MPI_Status
// reports. The PML fills the pml_* fields it needs.
struct weft_request {
    enum class Kind { pml_send, pml_recv, generalized, coll, null } kind = Kind::null;
    volatile bool complete = false;
    bool persistent = false;
    bool active = false; // persistent: started and not yet completed
    bool freed = false;  // MPI_Request_free called before completion
    bool cancelled = false;
    weft_msg_status_t status{};
    weft_comm *comm = nullptr;
    int peer = -1; // the peer rank in comm (FT uses it)
    int tag = 0;
    // Buffered sends: the attached-buffer copy to release at completion.
    void *bsend_block = nullptr;
    // Owned by the PML: its own request state.
    void *pml_data = nullptr;
    void (*pml_free)(weft_request *req) = nullptr;
    weft_status_t (*pml_start)(weft_request *req) = nullptr;
    weft_status_t (*pml_cancel)(weft_request *req) = nullptr;
};

struct weft_message {
    weft_comm *comm = nullptr;
    int source = -1;
    int tag = -1;
    size_t count = 0;
    void *pml_data = nullptr;
};

namespace weft::mpi {
// Reduction kernels (framework/datatype/op_reduce.cc, in libweft).
// Whether op is defined for type (MPI-3.1 5.9.2; a user op takes any type).
bool op_valid_for(const weft_op *op, const weft_datatype *type);
// inout = in op inout, count elements; WEFT_ERR_BAD_PARAM if op is not defined for type.
weft_status_t op_reduce(weft_op *op, const void *in, void *inout, size_t count,
                        weft_datatype *type);
} // namespace weft::mpi

#endif
