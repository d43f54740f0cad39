// The pml framework as the core sees it: name, ABI and how it picks.
#include "mca_framework.h"

#include <pml/pml.h>

namespace weft::pml::base {

extern const mca::Framework framework;
const mca::Framework framework = {
    .name = "pml",
    .description = "point-to-point messaging layer, one per job",
    .abi_major = WEFT_PML_ABI_MAJOR,
    .abi_minor = WEFT_PML_ABI_MINOR,
    // Appending to the component struct must not raise this: freeze the
    // number of the 1.0 struct when that happens.
    .min_component_size = sizeof(weft_pml_component_t),
    .pick = mca::Pick::one,
};

weft_pml_module_t *selected = nullptr;

} // namespace weft::pml::base

extern "C" weft_pml_module_t *weft_pml_selected(void) { return weft::pml::base::selected; }

extern "C" void weft_pml_set_selected(weft_pml_module_t *module)
{
    weft::pml::base::selected = module;
}
