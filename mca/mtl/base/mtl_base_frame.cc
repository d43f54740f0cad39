// The mtl framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <mtl/mtl.h>

namespace weft::mtl::base {

extern const mca::Framework framework;
const mca::Framework framework = {
    .name = "mtl",
    .description = "matching transport layers for the cm PML",
    .abi_major = WEFT_MTL_ABI_MAJOR,
    .abi_minor = WEFT_MTL_ABI_MINOR,
    // Appending to the component struct must not raise this: freeze the
    // number of the 1.0 struct when that happens.
    .min_component_size = sizeof(weft_mtl_component_t),
    .pick = mca::Pick::one,
};

} // namespace weft::mtl::base
