// The bml framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <bml/bml.h>

namespace weft::bml::base {

extern const mca::Framework framework;
const mca::Framework framework = {
    .name = "bml",
    .description = "per-peer BTL multiplexing",
    .abi_major = WEFT_BML_ABI_MAJOR,
    .abi_minor = WEFT_BML_ABI_MINOR,
    // Appending to the component struct must not raise this: freeze the
    // number of the 1.0 struct when that happens.
    .min_component_size = sizeof(weft_bml_component_t),
    .pick = mca::Pick::one,
};

} // namespace weft::bml::base
