// The coll framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <coll/coll.h>

namespace weft::coll::base {

extern const mca::Framework framework;
const mca::Framework framework = {
    .name = "coll",
    .description = "collective operations, chosen per communicator and function",
    .abi_major = WEFT_COLL_ABI_MAJOR,
    .abi_minor = WEFT_COLL_ABI_MINOR,
    // Appending to the component struct must not raise this: freeze the
    // number of the 1.0 struct when that happens.
    .min_component_size = sizeof(weft_coll_component_t),
    .pick = mca::Pick::per_function,
};

} // namespace weft::coll::base
