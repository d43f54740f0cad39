// bml/base: picking the one BML component and making its module, for the PMLs that run over
// the BML (bml.h: weft_bml_select, weft_bml_close).
#include "mca_framework.h"
#include "mca_output.h"
#include "mca_select.h"

#include <bml/bml.h>

extern "C" {

weft_status_t weft_bml_select(int enable_progress_threads, int enable_mpi_threads,
                              weft_bml_module_t **module)
{
    using namespace weft;
    *module = nullptr;
    mca::FrameworkBase *base = mca::framework_base("bml");
    if (weft_status_t rc = base->open(); rc != WEFT_SUCCESS)
        return rc;
    mca::Component *chosen = nullptr;
    if (weft_status_t rc = base->select_one(chosen); rc != WEFT_SUCCESS) {
        base->close();
        return rc;
    }
    auto *comp = reinterpret_cast<const weft_bml_component_t *>(chosen->desc);
    weft_bml_module_t *m =
        comp->init ? comp->init(enable_progress_threads, enable_mpi_threads) : nullptr;
    if (!m) {
        output::error("bml/" + chosen->name + ": could not make its module");
        base->close();
        return WEFT_ERR_NOT_AVAILABLE;
    }
    *module = m;
    return WEFT_SUCCESS;
}

void weft_bml_close(void) { weft::mca::framework_base("bml")->close(); }

} // extern "C"
