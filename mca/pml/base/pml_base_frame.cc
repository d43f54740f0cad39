// The pml framework as the core sees it: name, ABI and how it picks; and the PML this process
// selected (pml/pml.h).
#include "mca_framework.h"

#include <pml/pml.h>

WEFT_MCA_FRAMEWORK(pml, PML, "point-to-point messaging layer, one per job", one)

namespace weft::pml::base {
weft_pml_module_t *selected = nullptr;
} // namespace weft::pml::base

extern "C" weft_pml_module_t *weft_pml_selected(void) { return weft::pml::base::selected; }

extern "C" void weft_pml_set_selected(weft_pml_module_t *module)
{
    weft::pml::base::selected = module;
}
