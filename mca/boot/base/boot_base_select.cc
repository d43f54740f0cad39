#include "boot_base.h"

#include "mca_output.h"
#include "mca_select.h"

namespace weft::boot::base {

weft_status_t select(weft_boot_module_t **module)
{
    *module = nullptr;
    mca::FrameworkBase *base = mca::framework_base("boot");
    if (weft_status_t rc = base->open(); rc != WEFT_SUCCESS)
        return rc;
    mca::Component *chosen = nullptr;
    if (weft_status_t rc = base->select_one(chosen); rc != WEFT_SUCCESS)
        return rc;
    auto *comp = reinterpret_cast<const weft_boot_component_t *>(chosen->desc);
    *module = comp->init ? comp->init() : nullptr;
    if (!*module) {
        output::error("boot/" + chosen->name + ": could not make its module");
        return WEFT_ERR_NOT_AVAILABLE;
    }
    return WEFT_SUCCESS;
}

void close() { mca::framework_base("boot")->close(); }

} // namespace weft::boot::base
