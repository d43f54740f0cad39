// The boot framework as the core uses it (boot.h): pick the bootstrap
// component for this process (pmgr under Weft's mpirun, pmi under Slurm or
// hydra, singleton otherwise, or what --mca boot names) and hand out its
// module with no optional operation left NULL.
#include "mca_output.h"
#include "mca_select.h"

#include <boot/boot.h>

#include <cstddef>
#include <string>

namespace weft::boot::base {

namespace {

// The name of the first required operation module lacks, or nullptr. These have no default:
// without them there is no bootstrap at all.
const char *missing_required(const weft_boot_module_t *m)
{
    // 1.0 ends with boot_poll_event; a module of a later minor version is longer.
    constexpr size_t size_1_0 =
        offsetof(weft_boot_module_t, boot_poll_event) + sizeof(m->boot_poll_event);
    if (m->struct_size < size_1_0)
        return "the operations of boot 1.0 (its struct_size is too small)";
    if (!m->boot_init)
        return "boot_init";
    if (!m->boot_barrier)
        return "boot_barrier";
    if (!m->boot_allgather)
        return "boot_allgather";
    if (!m->boot_bcast)
        return "boot_bcast";
    if (!m->boot_finalize)
        return "boot_finalize";
    return nullptr;
}

} // namespace

} // namespace weft::boot::base

extern "C" {

weft_status_t weft_boot_select(weft_boot_module_t **module)
{
    using namespace weft;
    *module = nullptr;
    mca::FrameworkBase *base = mca::framework_base("boot");
    if (weft_status_t rc = base->open(); rc != WEFT_SUCCESS)
        return rc;
    mca::Component *chosen = nullptr;
    if (weft_status_t rc = base->select_one(chosen); rc != WEFT_SUCCESS)
        return rc;
    auto *comp = reinterpret_cast<const weft_boot_component_t *>(chosen->desc);
    weft_boot_module_t *m = comp->init ? comp->init() : nullptr;
    if (!m) {
        output::error("boot/" + chosen->name + ": could not make its module");
        return WEFT_ERR_NOT_AVAILABLE;
    }
    if (const char *what = boot::base::missing_required(m)) {
        output::error("boot/" + chosen->name + ": its module lacks " + what);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    if (!m->boot_abort)
        m->boot_abort = weft_boot_default_abort;
    if (!m->boot_poll_event)
        m->boot_poll_event = weft_boot_default_poll_event;
    *module = m;
    return WEFT_SUCCESS;
}

void weft_boot_close(void) { weft::mca::framework_base("boot")->close(); }

} // extern "C"
