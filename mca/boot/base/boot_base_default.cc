// Typed defaults for the boot module's optional operations (boot.h), so
// that no component writes its own "not supported" function.
#include "mca_output.h"

#include <boot/boot.h>

#include <string>

extern "C" {

weft_status_t weft_boot_default_poll_event(weft_boot_module_t *, weft_boot_event_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}

weft_status_t weft_boot_default_abort(weft_boot_module_t *, int code, const char *msg)
{
    // The caller exits right after; without a launcher this is the only trace of why.
    weft::output::error("the job aborted with code " + std::to_string(code) +
                        (msg ? std::string(": ") + msg : std::string()));
    return WEFT_ERR_UNREACH;
}

} // extern "C"
