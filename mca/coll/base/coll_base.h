// coll/base's own: what its C entry points for the core (coll.h, weft_coll_*) are made of.
//
// framework/mpi opens the framework at MPI_Init (init), has coll/base choose each new
// communicator's functions (comm_enable: every component is asked, and each operation goes to
// the module of highest priority that provides it), calls a collective through call() (which
// falls back to the next module by priority when the chosen one declines), and lets go of the
// choice when the communicator goes (comm_disable) and of the framework at MPI_Finalize.
#ifndef WEFT_COLL_BASE_H
#define WEFT_COLL_BASE_H

#include <coll/coll.h>

#include <cstddef>
#include <type_traits>

namespace weft::coll::base {

// What framework/mpi lends coll/base for the agreement coll/base provides when no component
// does (an allreduce of the flags with bitwise AND, not fault tolerant): its int type, its
// bitwise-and op, and its empty group. They outlive the framework.
struct AgreeObjects {
    weft_datatype_t *int_type;
    weft_op_t *band;
    weft_group_t *empty_group;
};

// Open the framework and the components the selection allows; init_query each (one that
// refuses is left out with a warning). Errors (a bad --mca coll list) are printed.
weft_status_t init(const AgreeObjects &objects);
// Close every component (after every communicator's choice is gone).
void finalize();

// One communicator's choice: opaque to the core, which keeps it with the communicator.
struct CommColl;

// Choose comm's functions: comm_query on every component, then module_enable on each module
// that won an operation (one that fails is dropped and the choice made again). `label` names
// comm in the listing printed at coll_base_verbose >= 10. Blocking: yes (module_enable may
// communicate); every rank of comm must call it, in the same order of communicators.
weft_status_t comm_enable(weft_comm_t *comm, const char *label, CommColl **choice);
// module_disable every module comm_query returned, and free the choice. Blocking: local.
void comm_disable(weft_comm_t *comm, CommColl *choice);

// An operation of weft_coll_module_t, by place: WEFT_COLL_SLOT(coll_bcast).
struct Slot {
    size_t offset;
    size_t size;
};

// Call the operation at `slot` on comm: invoke(module) for the module chosen for it, then, as
// long as the module called declines (WEFT_ERR_NOT_SUPPORTED), for the next enabled module by
// priority whose struct reaches the slot. invoke calls the module's function (and returns
// WEFT_ERR_NOT_SUPPORTED if it is NULL). `found` is false when no module provides the
// operation on comm (then nothing was called). Modules of components built for a coll ABI
// older than 1.<min_minor> are passed over as if they declined. Returns what the last call
// returned.
weft_status_t call_slot(const CommColl *choice, Slot slot, unsigned min_minor,
                        weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                        void *context, bool &found);
// The same from the module after `module` by priority (weft_coll_call_below): for a module
// that hands a call down by its own choice. WEFT_ERR_NOT_SUPPORTED when module serves no
// communicator's choice or no module below provides the operation.
weft_status_t call_below(const weft_coll_module_t *module, Slot slot, unsigned min_minor,
                         weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                         void *context);

} // namespace weft::coll::base

#endif
