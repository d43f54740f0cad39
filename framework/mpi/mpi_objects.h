// The MPI objects behind the handles of mpi.h. An MPI handle is a pointer to
// one of these structs (MPI_Comm is weft_comm *, and so on); the predefined
// handles point at objects defined in mpi_predefined.cc.
#ifndef WEFT_MPI_OBJECTS_H
#define WEFT_MPI_OBJECTS_H

#include "layout.h"

#include <weft/comm.h>
#include <weft/op.h>
#include <weft/request.h>
#include <weft/types.h>

#include <memory>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct weft_errhandler;
namespace weft::mpi {
struct Topology; // mpi_topo.h
}

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

// An attribute cached on a communicator or a datatype (mpi_attr.cc): its value, and when it was
// set (MPI_Finalize deletes MPI_COMM_SELF's in the reverse order of setting, MPI-3.1 8.7.1).
struct Attribute {
    void *value = nullptr;
    uint64_t set_order = 0;
};
using Attributes = std::map<int, Attribute>; // keyval -> attribute

// Info entries (key, value) in the order their keys were first set (MPI_Info_get_nthkey).
using InfoEntries = std::vector<std::pair<std::string, std::string>>;

} // namespace weft::mpi

// An info object (mpi_info.cc): MPI_INFO_ENV, or one the program made and frees.
struct weft_info {
    weft::mpi::InfoEntries entries;
    bool predefined = false;
};

// A predefined (contiguous) datatype. Derived datatypes come with the
// datatype engine (issue 6); until then every type is `size` contiguous bytes.
// A datatype. It starts with the C view components read inline (weft/op.h): `size`, and
// `dense`: count elements are the count * size bytes from the buffer pointer, which is what the
// transports take without the datatype engine (a predefined type, which has no layout, always
// is).
struct weft_datatype : weft_datatype_view_t {
    const char *name = "";
    int combiner = 0; // MPI_COMBINER_NAMED
    bool predefined = true;
    weft::mpi::Elem elem = weft::mpi::Elem::none;
    uint8_t type_class = weft::mpi::class_none;
    uint8_t align = 0; // a predefined type's C alignment (0: as its size, up to 16)
    uint8_t ext32 = 0; // a predefined type's external32 form (weft::dt::Ext32)
    // A derived type of one kind of basic element (elem set): the predefined type it is made of,
    // which reductions with a predefined op work on.
    const weft_datatype *base = nullptr;
    // Derived types (framework/mpi/mpi_datatype.cc): the datatype engine's layout, the
    // constructor's arguments (MPI_Type_get_contents; the types are retained), and state.
    bool committed = true;
    int refs = 1;
    std::shared_ptr<const weft::dt::Layout> layout; // NULL: size contiguous bytes
    std::vector<int> ints;
    std::vector<ptrdiff_t> aints;
    std::vector<weft_datatype *> types;
    std::string user_name;
    weft::mpi::Attributes attrs; // mpi_attr.cc
};

namespace weft::mpi {
// A predefined (contiguous) type of `size` bytes per element, aligned to `align` in a struct.
inline weft_datatype basic_datatype(size_t size, const char *name, Elem elem, uint8_t cls,
                                    uint8_t align = 0)
{
    weft_datatype t;
    t.size = size;
    t.name = name;
    t.elem = elem;
    t.type_class = cls;
    t.align = align;
    return t;
}
// Single bytes, for what the library itself moves as raw bytes (weft/op.h).
inline weft_datatype *bytes_datatype() { return weft_datatype_bytes(); }
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

// A communicator. What the PML and coll components read of it is the C view it starts with
// (weft/comm.h: context id, rank, size, the peers' world ranks, the groups, the PML's state,
// the reference count); comm_update_view() fills the derived view fields once the groups are
// set. The rest is framework/mpi's own.
struct weft_comm : weft_comm_view_t {
    weft_errhandler *errhandler = nullptr;
    std::string name;
    weft::mpi::Attributes attrs;  // mpi_attr.cc
    weft::mpi::InfoEntries hints; // MPI_Comm_set_info (mpi_info.cc)
    bool predefined = false;
    bool freed = false;
    // Collectives: coll/base's choice of functions for this communicator (weft_coll_choice_t).
    void *coll = nullptr;
    // Fault tolerance (mpi_ft.cc): the ranks (in the peer group) of the members known to have
    // failed, in the order learnt, as of runtime failure epoch ft_epoch; how many of them the
    // program acknowledged (MPIX_Comm_failure_ack, MPIX_Comm_ack_failed).
    std::vector<int> ft_failed;
    uint64_t ft_epoch = 0;
    size_t ft_acked = 0;
    // The process topology (mpi_topo.h), or NULL; MPI_Comm_dup shares it (it never changes).
    std::shared_ptr<const weft::mpi::Topology> topo;

    bool is_inter() const { return remote_group != nullptr; }
    // The group whose members point-to-point ranks name, and its size (from the groups, so
    // valid before comm_update_view fills the view's peer_size, which this name hides).
    const weft_group *peer_group() const { return remote_group ? remote_group : group; }
    int peer_size() const { return int(peer_group()->ranks.size()); }
};

namespace weft::mpi {
// The C view's references (weft/comm.h), under the names the library used before it.
inline void comm_retain(weft_comm *c) { weft_comm_retain(c); }
inline void comm_release(weft_comm *c) { weft_comm_release(c); }

// Collective traffic travels on tags of its own (weft/comm.h).
inline int coll_tag(weft_comm *comm) { return weft_comm_coll_tag(comm); }
} // namespace weft::mpi

using weft_errhandler_fn = void (*)(weft_comm **comm, int *error_code, ...);
struct weft_errhandler {
    enum class Kind { fatal, ret, user } kind = Kind::fatal;
    weft_errhandler_fn fn = nullptr;
    int refs = 1;
    bool predefined = false;
};

// Requests and mprobe's messages are the C structs of weft/request.h.

namespace weft::mpi {
// Reduction kernels (framework/datatype/op_reduce.cc, in libweft).
// Whether op is defined for type (MPI-3.1 5.9.2; a user op takes any type).
bool op_valid_for(const weft_op *op, const weft_datatype *type);
// inout = in op inout, count elements; WEFT_ERR_BAD_PARAM if op is not defined for type.
weft_status_t op_reduce(weft_op *op, const void *in, void *inout, size_t count,
                        weft_datatype *type);
} // namespace weft::mpi

#endif
