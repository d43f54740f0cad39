// The boot framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <boot/boot.h>

namespace weft::boot::base {

extern const mca::Framework framework;
const mca::Framework framework = {
    .name = "boot",
    .description = "bootstrap: rank, size and address exchange with the launcher",
    .abi_major = WEFT_BOOT_ABI_MAJOR,
    .abi_minor = WEFT_BOOT_ABI_MINOR,
    // Appending to the component struct must not raise this: freeze the
    // number of the 1.0 struct when that happens.
    .min_component_size = sizeof(weft_boot_component_t),
    .pick = mca::Pick::one,
};

} // namespace weft::boot::base
