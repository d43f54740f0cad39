// coll/base: per-function selection. For one communicator every coll module
// that accepted it offers some operations at some priority; each operation is
// taken from the highest-priority module that provides it, so a module that
// implements only allreduce replaces only allreduce.
#ifndef WEFT_COLL_BASE_SELECT_H
#define WEFT_COLL_BASE_SELECT_H

#include <coll/coll.h>

#include <cstddef>
#include <span>

namespace weft::coll::base {

// Every operation slot of weft_coll_module_t (module_enable/disable are not
// operations: each module keeps its own).
#define WEFT_COLL_OPS(X)                                                                           \
    X(coll_barrier)                                                                                \
    X(coll_bcast)                                                                                  \
    X(coll_reduce)                                                                                 \
    X(coll_allreduce) X(coll_gather) X(coll_gatherv) X(coll_scatter) X(coll_scatterv)              \
        X(coll_allgather) X(coll_allgatherv) X(coll_alltoall) X(coll_alltoallv) X(coll_alltoallw)  \
            X(coll_reduce_scatter) X(coll_reduce_scatter_block) X(coll_scan) X(coll_exscan)        \
                X(coll_ibarrier) X(coll_ibcast) X(coll_ireduce) X(coll_iallreduce) X(coll_igather) \
                    X(coll_igatherv) X(coll_iscatter) X(coll_iscatterv) X(coll_iallgather)         \
                        X(coll_iallgatherv) X(coll_ialltoall) X(coll_ialltoallv)                   \
                            X(coll_ialltoallw) X(coll_ireduce_scatter)                             \
                                X(coll_ireduce_scatter_block) X(coll_iscan) X(coll_iexscan)        \
                                    X(coll_agree) X(coll_iagree) X(coll_iagree_group)              \
                                        X(coll_neighbor_allgather) X(coll_neighbor_allgatherv)     \
                                            X(coll_neighbor_alltoall) X(coll_neighbor_alltoallv)   \
                                                X(coll_neighbor_alltoallw)                         \
                                                    X(coll_ineighbor_allgather)                    \
                                                        X(coll_ineighbor_allgatherv)               \
                                                            X(coll_ineighbor_alltoall)             \
                                                                X(coll_ineighbor_alltoallv)        \
                                                                    X(coll_ineighbor_alltoallw)

enum class Op : size_t {
#define WEFT_COLL_ENUM(name) name,
    WEFT_COLL_OPS(WEFT_COLL_ENUM)
#undef WEFT_COLL_ENUM
        count
};

struct Offer {
    weft_coll_module_t *module;
    int priority;
    unsigned abi_minor = WEFT_COLL_ABI_MINOR; // of the coll ABI its component was built for
};

// The resolved functions of one communicator: for each operation, the
// function and the module to pass it (nullptr where no module offers it).
struct Table {
    weft_coll_module_t functions{};
    weft_coll_module_t *owner[size_t(Op::count)] = {};
};

// Resolve `offers` (any order) into `table`. Ties go to the earlier offer.
void resolve(std::span<const Offer> offers, Table &table);

} // namespace weft::coll::base

#endif
