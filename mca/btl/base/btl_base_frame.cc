// The btl framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <btl/btl.h>

namespace weft::btl::base {

extern const mca::Framework framework;
const mca::Framework framework = {
    .name = "btl",
    .description = "byte transfer layers, many at once, chosen per peer",
    .abi_major = WEFT_BTL_ABI_MAJOR,
    .abi_minor = WEFT_BTL_ABI_MINOR,
    // Appending to the component struct must not raise this: freeze the
    // number of the 1.0 struct when that happens.
    .min_component_size = sizeof(weft_btl_component_t),
    .pick = mca::Pick::all,
};

} // namespace weft::btl::base
